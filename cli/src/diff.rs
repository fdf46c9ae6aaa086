//! `armctl diff -f CR.yaml --actual ARM.json [--output text|json]`: the differences between a custom resource's
//! `spec` and an ARM GET body of its kind, as the reconciler's change detection sees them
//! (`armgen_runtime::diff`: unset desired fields, read-only properties and secrets are not compared).
//!
//! Output: one line per difference, `<path>: desired <JSON>, actual <JSON>` (`(absent)` for a side that lacks
//! the value), or with `--output json` an array of `{path, desired, actual}` (a side that lacks the value has no
//! member). Exit code 0 when there is no difference, 1 when there are differences, 2 on error.
//!
//! References to other custom resources (`{kind, name}` without `armId`) cannot be resolved without a cluster:
//! they are compared as they are, and so always differ from the ARM ID in Azure.

use std::path::Path;
use std::process::ExitCode;

use serde_json::{Map, Value};

use super::{Failure, display, emit, read_input, version_and_kind};

/// The output format of `armctl diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// One line per difference.
    Text,
    /// A JSON array of `{path, desired, actual}`.
    Json,
}

/// Runs `armctl diff`; the exit code says whether there are differences.
pub fn run(file: &Path, actual: &Path, output: Output) -> ExitCode {
    match differences(file, actual).and_then(|d| print(&d, output).map(|()| d.is_empty())) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(Failure(message)) => {
            eprintln!("armctl: error: {message}");
            ExitCode::from(2)
        }
    }
}

fn differences(file: &Path, actual: &Path) -> Result<armgen_runtime::diff::Differences, Failure> {
    let shown = display(file);
    let text = read_input(file)?;
    let cr: Value =
        serde_yaml_ng::from_str(&text).map_err(|e| format!("{shown}: not a valid YAML or JSON document: {e}"))?;
    let (version, kind) = version_and_kind(&cr, &shown)?;
    let api_version = format!("{}/{}", version.kube_group, version.version);
    let arm_json = read_input(actual)?;
    let actual_shown = display(actual);
    match aks_api::diff_custom_resource(version.group, version.version, kind, &cr, &arm_json) {
        Some(Ok(d)) => Ok(d),
        Some(Err(e)) if e.input == "ARM body" => {
            Err(format!("{actual_shown}: not a {kind} ARM body: {}", e.message).into())
        }
        Some(Err(e)) => Err(format!("{shown}: not a {kind} custom resource: {}", e.message).into()),
        None => Err(format!("{kind} has no change detection in {api_version}").into()),
    }
}

fn print(d: &armgen_runtime::diff::Differences, output: Output) -> Result<(), Failure> {
    match output {
        Output::Text => {
            let mut text = String::new();
            for x in d {
                text.push_str(&x.to_string());
                text.push('\n');
            }
            emit(&text)
        }
        Output::Json => {
            let items: Vec<Value> = d
                .iter()
                .map(|x| {
                    let mut m = Map::new();
                    m.insert("path".into(), Value::String(x.path.clone()));
                    for (key, v) in [("desired", &x.desired), ("actual", &x.actual)] {
                        if let Some(v) = v {
                            // The value was rendered as JSON; shown as JSON again.
                            let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.clone()));
                            m.insert(key.into(), value);
                        }
                    }
                    Value::Object(m)
                })
                .collect();
            let text = serde_json::to_string_pretty(&items).map_err(|e| format!("cannot write JSON: {e}"))?;
            emit(&(text + "\n"))
        }
    }
}
