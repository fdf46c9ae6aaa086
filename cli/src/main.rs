//! `armctl`: the command-line tool over the generated AKS custom resources (in the spirit of Azure Service
//! Operator's `asoctl`).
//!
//! - `armctl import ARM_ID... [--children]` GETs existing Azure resources and prints custom resources (YAML) that
//!   reconcile with zero differences; `armctl import --from-file ARM.json --kind KIND` does the same for a body;
//!   each kind at `--version`, by default at the newest version that has it;
//! - `armctl export -f CR.yaml` prints the ARM PUT body (JSON) the reconciler would send for a custom resource,
//!   with secret references left as `$secret:name/key` placeholders;
//! - `armctl convert --to VERSION -f OBJ.yaml` converts custom resources between the served versions, through
//!   the code the conversion webhook runs;
//! - `armctl crds` prints the CRD manifests;
//! - `armctl diff -f CR.yaml --actual ARM.json` prints the differences between a custom resource and an ARM GET
//!   body (exit code 1 when there are some; see `diff.rs`);
//! - `armctl migrate-storage [--namespace NS] [--kind KIND] [--dry-run]` rewrites every stored object of our CRDs at
//!   the current storage version and reduces each CRD's `status.storedVersions` to it (see `migrate.rs`).
//!
//! Errors (unknown kind or version, malformed or unreadable input) go to stderr with exit code 2.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use armgen_runtime::kube::{ArmIdsOnly, SECRET_PLACEHOLDER};
use clap::{Parser, Subcommand};
use serde_json::Value;

mod convert;
mod import_ids;
mod crds {
    include!(concat!(env!("OUT_DIR"), "/crds.rs"));
}
mod diff;
mod migrate;

/// The API group as `aks_api`'s dispatch functions name it.
const GROUP_KEY: &str = "containerservice";

/// The versions of `GROUP_KEY` that aks-api was built with: version, ARM API version, kinds. Taken from the
/// generated `aks_api::VERSIONS`, so a new version in `azure-arm.yaml` needs no change here.
fn versions() -> impl Iterator<Item = (&'static str, &'static str, &'static [&'static str])> {
    aks_api::VERSIONS
        .iter()
        .filter(|v| v.group == GROUP_KEY)
        .map(|v| (v.version, v.api_version, v.kinds))
}

/// The storage version of the group (in messages).
fn storage_version() -> &'static str {
    let mut group = aks_api::VERSIONS.iter().filter(|v| v.group == GROUP_KEY);
    group
        .clone()
        .find(|v| v.storage)
        .or_else(|| group.next_back())
        .map(|v| v.version)
        .unwrap_or_default()
}

/// The Kubernetes API group of the custom resources.
fn kube_group() -> &'static str {
    aks_api::VERSIONS
        .iter()
        .find(|v| v.group == GROUP_KEY)
        .map(|v| v.kube_group)
        .unwrap_or_default()
}

#[derive(Parser)]
#[command(
    name = "armctl",
    version,
    about = "Import, export and inspect the AKS custom resources"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print custom resources (YAML) for existing Azure resources, by ARM resource ID (read with a GET), or for
    /// an ARM GET or PUT body in a file. Applied, they reconcile with zero differences.
    Import {
        /// ARM resource IDs, e.g. `/subscriptions/…/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/prod`.
        #[arg(
            value_name = "ARM_ID",
            required_unless_present = "from_file",
            conflicts_with = "from_file"
        )]
        ids: Vec<String>,
        /// Also import the child resources of each ID (a cluster's agent pools, maintenance configurations, …).
        #[arg(long, requires = "ids")]
        children: bool,
        /// The ARM endpoint for IDs.
        #[arg(long, env = "ARM_ENDPOINT", default_value = "https://management.azure.com")]
        arm_endpoint: String,
        /// Send no bearer token (a local ARM simulator). Otherwise credentials come from the environment
        /// (AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_SECRET, or
        /// AZURE_USE_MANAGED_IDENTITY=true; AZURE_SUBSCRIPTION_ID is required but IDs carry their own).
        #[arg(long)]
        anonymous: bool,
        /// The ARM body (JSON); `-` reads stdin.
        #[arg(long = "from-file", short = 'f', value_name = "ARM.json", requires = "kind")]
        from_file: Option<PathBuf>,
        /// The kind of the body in --from-file, e.g. `ManagedCluster`.
        #[arg(long)]
        kind: Option<String>,
        /// The Kubernetes version of the custom resources; default: for each kind, the newest version that has
        /// it.
        #[arg(long)]
        version: Option<String>,
        /// `metadata.namespace` (omitted when not given).
        #[arg(long)]
        namespace: Option<String>,
        /// `metadata.name` (--from-file only); defaults to the ARM body's `name`.
        #[arg(long, requires = "from_file")]
        name: Option<String>,
        /// `spec.owner.name` (--from-file only): the resource group (top-level kinds) or the parent custom resource.
        #[arg(long, requires = "from_file")]
        owner: Option<String>,
    },
    /// Print the ARM PUT body (JSON) for a custom resource; secrets stay as `$secret:name/key` placeholders.
    Export {
        /// The custom resource: one YAML or JSON document; `-` reads stdin.
        #[arg(long = "file", short = 'f', value_name = "CR.yaml")]
        file: PathBuf,
    },
    /// Convert custom resources to another served version, as the conversion webhook does (like `kubectl
    /// convert`); what the target version cannot hold travels in the `armgen.dev/property-bag`
    /// annotation.
    Convert {
        /// The custom resources: YAML documents (or JSON), each an object or a `List`; `-` reads stdin.
        #[arg(long = "file", short = 'f', value_name = "OBJ.yaml")]
        file: PathBuf,
        /// The version to convert to: `v1beta1` or `containerservice.armgen.dev/v1beta1`.
        #[arg(long, value_name = "VERSION")]
        to: String,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value = "yaml")]
        output: convert::Output,
    },
    /// Print the differences between a custom resource and an ARM GET body; exit code 1 when there are some.
    Diff {
        /// The custom resource (desired state): one YAML or JSON document; `-` reads stdin.
        #[arg(long = "file", short = 'f', value_name = "CR.yaml")]
        file: PathBuf,
        /// The ARM GET body of the resource (actual state), JSON.
        #[arg(long, value_name = "ARM.json")]
        actual: PathBuf,
        /// `text`: one line per difference; `json`: an array of `{path, desired, actual}`.
        #[arg(long, short = 'o', value_enum, default_value = "text")]
        output: diff::Output,
    },
    /// Rewrite every stored object of our CRDs at the current storage version, then set each CRD's
    /// status.storedVersions to just that version (the cluster from KUBECONFIG or the in-cluster config).
    MigrateStorage {
        /// Only the objects of this namespace; status.storedVersions is then left as it is.
        #[arg(long)]
        namespace: Option<String>,
        /// Only the CRD of this kind (repeatable).
        #[arg(long = "kind", value_name = "KIND")]
        kinds: Vec<String>,
        /// Print what would be rewritten and patched; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Print the CRD manifests (multi-document YAML).
    Crds {
        /// Only the CRD of this kind.
        #[arg(long)]
        kind: Option<String>,
    },
}

/// A user-facing error: printed after `armctl: error: `, exit code 2.
struct Failure(String);

impl<T: Into<String>> From<T> for Failure {
    fn from(message: T) -> Self {
        Failure(message.into())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Diff { file, actual, output } => return diff::run(&file, &actual, output),
        Command::Import {
            ids,
            children,
            arm_endpoint,
            anonymous,
            from_file,
            kind,
            version,
            namespace,
            name,
            owner,
        } => match (from_file, kind) {
            (Some(from_file), Some(kind)) => import(
                &from_file,
                &kind,
                version.as_deref(),
                namespace.as_deref(),
                name.as_deref(),
                owner.as_deref(),
            ),
            _ => import_ids::run(
                &ids,
                children,
                &arm_endpoint,
                anonymous,
                version.as_deref(),
                namespace.as_deref(),
            ),
        },
        Command::Export { file } => export(&file),
        Command::Convert { file, to, output } => convert::convert(&file, &to, output),
        Command::Crds { kind } => crds(kind.as_deref()),
        Command::MigrateStorage {
            namespace,
            kinds,
            dry_run,
        } => migrate::run(&migrate::Options {
            namespace,
            kinds,
            dry_run,
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("armctl: error: {message}");
            ExitCode::from(2)
        }
    }
}

fn known_versions() -> String {
    versions().map(|(v, ..)| v).collect::<Vec<_>>().join(", ")
}

/// The version entry, or an error listing the known versions.
fn version_of(version: &str) -> Result<(&'static str, &'static str, &'static [&'static str]), Failure> {
    versions().find(|(v, ..)| *v == version).ok_or_else(|| {
        Failure(format!(
            "unknown version `{version}` of {}; known versions: {}",
            kube_group(),
            known_versions()
        ))
    })
}

/// The kind as spelled in `kinds` (matched case-insensitively), or an error listing the known kinds.
fn kind_of(kind: &str, version: &str, kinds: &[&'static str]) -> Result<&'static str, Failure> {
    kinds
        .iter()
        .find(|k| k.eq_ignore_ascii_case(kind))
        .copied()
        .ok_or_else(|| {
            Failure(format!(
                "unknown kind `{kind}` in {}/{version}; known kinds: {}",
                kube_group(),
                kinds.join(", ")
            ))
        })
}

fn display(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

fn read_input(path: &Path) -> Result<String, Failure> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read stdin: {e}"))?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))
    }
}

/// Writes to stdout; a closed pipe (`armctl crds | head`) is not an error.
fn emit(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure(format!("cannot write to stdout: {e}"))),
    }
}

/// The newest served version that has `kind` (matched case-insensitively): the default of `armctl import`; an error
/// listing the known kinds when no version has it.
fn default_version(kind: &str) -> Result<&'static str, Failure> {
    match armgen_runtime::newest(aks_api::KINDS, |k| {
        k.group == GROUP_KEY && k.served && k.kind.eq_ignore_ascii_case(kind)
    }) {
        Some(info) => Ok(info.version),
        None => {
            let kinds: std::collections::BTreeSet<&str> =
                versions().flat_map(|(_, _, kinds)| kinds.iter().copied()).collect();
            Err(Failure(format!(
                "unknown kind `{kind}` in {}; known kinds: {}",
                kube_group(),
                kinds.into_iter().collect::<Vec<_>>().join(", ")
            )))
        }
    }
}

fn import(
    file: &Path,
    kind: &str,
    version: Option<&str>,
    namespace: Option<&str>,
    name: Option<&str>,
    owner: Option<&str>,
) -> Result<(), Failure> {
    let version = match version {
        Some(version) => version,
        None => default_version(kind)?,
    };
    let (version, api_version, kinds) = version_of(version)?;
    let kind = kind_of(kind, version, kinds)?;
    let text = read_input(file)?;
    let shown = display(file);
    let body: Value = serde_json::from_str(&text).map_err(|e| format!("{shown}: not valid JSON: {e}"))?;
    if !body.is_object() {
        return Err(format!("{shown}: an ARM body must be a JSON object").into());
    }
    let name = match name {
        Some(n) => n.to_string(),
        None => match body.get("name").and_then(Value::as_str) {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => {
                return Err(format!(
                    "{shown}: the ARM body has no `name`; give the custom resource's name with --name"
                )
                .into());
            }
        },
    };
    let mut cr = match aks_api::import_custom_resource(GROUP_KEY, version, kind, &text, &name, namespace) {
        Some(Ok(cr)) => cr,
        Some(Err(e)) => {
            return Err(format!("{shown}: not a valid {kind} ARM body (API version {api_version}): {e}").into());
        }
        None => return Err(format!("{kind} has no custom resource in {}/{version}", kube_group()).into()),
    };
    if let Some(owner) = owner {
        let spec = cr
            .get_mut("spec")
            .and_then(Value::as_object_mut)
            .ok_or("the imported custom resource has no spec")?;
        spec.insert("owner".into(), serde_json::json!({ "name": owner }));
    }
    let yaml = serde_yaml_ng::to_string(&cr).map_err(|e| format!("cannot write the custom resource as YAML: {e}"))?;
    emit(&yaml)
}

fn export(file: &Path) -> Result<(), Failure> {
    let text = read_input(file)?;
    let shown = display(file);
    let cr: Value =
        serde_yaml_ng::from_str(&text).map_err(|e| format!("{shown}: not a valid YAML or JSON document: {e}"))?;
    if !cr.is_object() {
        return Err(format!("{shown}: a custom resource must be a YAML or JSON object").into());
    }
    let api_version = cr.get("apiVersion").and_then(Value::as_str).ok_or_else(|| {
        format!(
            "{shown}: no `apiVersion` (a string such as `{}/{}`)",
            kube_group(),
            storage_version()
        )
    })?;
    let known_api_versions = || {
        versions()
            .map(|(v, ..)| format!("{}/{v}", kube_group()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let version = match api_version.split_once('/') {
        Some((group, version)) if group == kube_group() => version,
        _ => {
            return Err(format!(
                "{shown}: unknown apiVersion `{api_version}`; known: {}",
                known_api_versions()
            )
            .into());
        }
    };
    let (version, _, kinds) = version_of(version).map_err(|_| {
        format!(
            "{shown}: unknown apiVersion `{api_version}`; known: {}",
            known_api_versions()
        )
    })?;
    let kind = cr
        .get("kind")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{shown}: no `kind` (a string such as `ManagedCluster`)"))?;
    let kind = match kinds.iter().find(|k| **k == kind) {
        Some(k) => *k,
        None => {
            return Err(format!(
                "{shown}: unknown kind `{kind}` in {api_version}; known kinds: {}",
                kinds.join(", ")
            )
            .into());
        }
    };
    let arm = match aks_api::export_custom_resource(GROUP_KEY, version, kind, &cr, &ArmIdsOnly) {
        Some(Ok(arm)) => arm,
        Some(Err(e)) if e.path.is_empty() => {
            return Err(format!("{shown}: not a valid {kind} custom resource: {}", e.message).into());
        }
        Some(Err(e)) => return Err(format!("{shown}: cannot build the ARM body: {}: {}", e.path, e.message).into()),
        None => return Err(format!("{kind} has no custom resource in {api_version}").into()),
    };
    let mut json = serde_json::to_string_pretty(&arm).map_err(|e| format!("cannot write the ARM body as JSON: {e}"))?;
    json.push('\n');
    emit(&json)?;
    let mut secrets = Vec::new();
    secret_placeholders(&arm, String::new(), &mut secrets);
    if !secrets.is_empty() {
        let mut note = format!(
            "armctl: note: {} secret(s) left as references, written as `{SECRET_PLACEHOLDER}<secret name>/<key>`; \
             the reconciler replaces them with the Secret's value:\n",
            secrets.len()
        );
        for (path, reference) in &secrets {
            note.push_str(&format!("  {path}: {SECRET_PLACEHOLDER}{reference}\n"));
        }
        eprint!("{note}");
    }
    Ok(())
}

/// The JSON pointers of the strings in `value` that are secret placeholders, with the `name/key` they name.
fn secret_placeholders(value: &Value, path: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) => {
            if let Some(reference) = s.strip_prefix(SECRET_PLACEHOLDER) {
                out.push((path, reference.to_string()));
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                secret_placeholders(v, format!("{path}/{i}"), out);
            }
        }
        Value::Object(m) => {
            for (k, v) in m {
                let k = k.replace('~', "~0").replace('/', "~1");
                secret_placeholders(v, format!("{path}/{k}"), out);
            }
        }
        _ => {}
    }
}

/// The `spec.names.kind` of a CRD manifest.
fn crd_kind(yaml: &str) -> Option<String> {
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(yaml).ok()?;
    doc.get("spec")?.get("names")?.get("kind")?.as_str().map(str::to_string)
}

fn crds(kind: Option<&str>) -> Result<(), Failure> {
    let selected: Vec<&str> = match kind {
        None => crds::CRDS.iter().map(|(_, yaml)| *yaml).collect(),
        Some(kind) => {
            let kinds: Vec<(String, &str)> = crds::CRDS
                .iter()
                .filter_map(|(_, yaml)| crd_kind(yaml).map(|k| (k, *yaml)))
                .collect();
            match kinds.iter().find(|(k, _)| k.eq_ignore_ascii_case(kind)) {
                Some((_, yaml)) => vec![*yaml],
                None => {
                    let known: Vec<&str> = kinds.iter().map(|(k, _)| k.as_str()).collect();
                    return Err(format!("unknown kind `{kind}`; known kinds: {}", known.join(", ")).into());
                }
            }
        }
    };
    let mut out = String::new();
    for (i, yaml) in selected.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(yaml);
        if !yaml.ends_with('\n') {
            out.push('\n');
        }
    }
    emit(&out)
}
