//! `armctl convert --to VERSION -f OBJ.yaml`: custom resources converted between the served versions, through
//! the same code the conversion webhook runs (`armgen_runtime::conversion::convert_objects` over
//! `aks_api::Converter`): the hub in between, the property bag in the `armgen.dev/property-bag`
//! annotation, the same checks on the result.
//!
//! `--to group/version` sends every object there; a bare `--to version` sends each object to that version of its own
//! API group (an error, naming the object, when its group has no such version).
//!
//! Input: one or more YAML documents (JSON is YAML), each a custom resource or a `List` of them (as
//! `kubectl get -o yaml` prints). Output: YAML documents in the input's order (`--output json`: the object, or
//! a `List` of all the objects when there are several).

use serde_json::{Value, json};

use crate::registry;
use crate::{Failure, display, read_input};

/// How `armctl convert` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    Yaml,
    Json,
}

/// What `--to` asks for.
enum Target {
    /// `group/version`: every object goes there.
    ApiVersion(String),
    /// A bare version: each object to that version of its own API group.
    Version(String),
}

/// `--to` checked against the registry: `group/version` must be a version of a group of ours; a bare version
/// must be a version of some group (each object's group is checked when it is converted).
fn target(to: &str) -> Result<Target, Failure> {
    match to.split_once('/') {
        Some((kube, version)) => {
            let Some(group) = registry::group_of_kube(kube) else {
                return Err(format!(
                    "--to {to}: not a version of an API group of ours; known versions: {}",
                    registry::known_api_versions()
                )
                .into());
            };
            let version = registry::version_of(group, version)?;
            Ok(Target::ApiVersion(format!(
                "{}/{}",
                version.kube_group, version.version
            )))
        }
        None => {
            if aks_api::VERSIONS.iter().any(|v| v.version == to) {
                Ok(Target::Version(to.to_string()))
            } else {
                Err(format!(
                    "unknown version `{to}`; known versions: {}",
                    registry::known_api_versions()
                )
                .into())
            }
        }
    }
}

/// The `apiVersion` one object goes to: with a bare version, that version of the object's own group; `Err` a
/// message when its group is not ours or lacks the version.
fn desired_for(target: &Target, object: &Value) -> Result<String, String> {
    match target {
        Target::ApiVersion(api_version) => Ok(api_version.clone()),
        Target::Version(version) => {
            let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
            let kube = api_version.split_once('/').map(|(g, _)| g).unwrap_or_default();
            let Some(group) = registry::group_of_kube(kube) else {
                return Err(format!(
                    "apiVersion {api_version:?} is not of an API group of ours, so --to {version} names no version \
                     for it; known versions: {}",
                    registry::known_api_versions()
                ));
            };
            registry::version_of(group, version)
                .map(|v| format!("{}/{}", v.kube_group, v.version))
                .map_err(|Failure(m)| m)
        }
    }
}

/// The objects of the input documents; `List`s are opened (and remembered, to print them back as lists).
fn documents(text: &str, shown: &str) -> Result<Vec<Value>, Failure> {
    let mut out = Vec::new();
    for (i, doc) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let value: Value = serde::Deserialize::deserialize(doc)
            .map_err(|e| format!("{shown}: document {}: not valid YAML or JSON: {e}", i + 1))?;
        match value {
            Value::Null => {} // an empty document (a trailing `---`)
            Value::Object(_) => out.push(value),
            _ => return Err(format!("{shown}: document {}: a custom resource must be an object", i + 1).into()),
        }
    }
    if out.is_empty() {
        return Err(format!("{shown}: no custom resource in the input").into());
    }
    Ok(out)
}

pub fn convert(file: &std::path::Path, to: &str, output: Output) -> Result<(), Failure> {
    let text = read_input(file)?;
    let target = target(to)?;
    let shown = display(file);
    let docs = documents(&text, &shown)?;
    // Flatten lists, remembering which document each object came from.
    let mut objects = Vec::new();
    let mut origin = Vec::new(); // (document, index in its list or None)
    for (d, doc) in docs.iter().enumerate() {
        if doc.get("kind").and_then(Value::as_str) == Some("List") {
            let items = doc.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
            for (i, item) in items.into_iter().enumerate() {
                objects.push(item);
                origin.push((d, Some(i)));
            }
        } else {
            objects.push(doc.clone());
            origin.push((d, None));
        }
    }
    let place = |index: usize| {
        let (d, item) = origin.get(index).copied().unwrap_or((index, None));
        match item {
            Some(i) => format!("document {}, items[{i}]", d + 1),
            None => format!("document {}", d + 1),
        }
    };
    // One object at a time: with a bare version, each goes to its own group's version.
    let mut converted = Vec::with_capacity(objects.len());
    for (index, object) in objects.into_iter().enumerate() {
        let desired = desired_for(&target, &object).map_err(|message| {
            let what = object
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("an object without kind");
            Failure(format!("{shown}: {} ({what}): cannot convert: {message}", place(index)))
        })?;
        let mut one = armgen_runtime::conversion::convert_objects(&aks_api::Converter, vec![object], &desired)
            .map_err(|e| {
                let what = match (&e.kind, &e.namespace, &e.name) {
                    (Some(k), Some(ns), Some(n)) => format!("{k} {ns}/{n}"),
                    (Some(k), None, Some(n)) => format!("{k} {n}"),
                    (Some(k), _, None) => k.clone(),
                    (None, ..) => "an object without kind".to_string(),
                };
                let from = e.api_version.as_deref().unwrap_or("no apiVersion");
                let at = if e.error.path.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", e.error.path)
                };
                Failure(format!(
                    "{shown}: {} ({what}, {from}): cannot convert to {desired}: {at}{}",
                    place(index),
                    e.error.message
                ))
            })?;
        converted.push(one.remove(0));
    }
    // Put the converted objects back into their documents.
    let mut out_docs = docs;
    for (value, (d, item)) in converted.into_iter().zip(origin) {
        match item {
            Some(i) => {
                if let Some(slot) = out_docs[d].get_mut("items").and_then(|v| v.get_mut(i)) {
                    *slot = value;
                }
            }
            None => out_docs[d] = value,
        }
    }
    let text = match output {
        Output::Yaml => {
            let mut text = String::new();
            for (i, doc) in out_docs.iter().enumerate() {
                if i > 0 {
                    text.push_str("---\n");
                }
                text.push_str(&serde_yaml_ng::to_string(doc).map_err(|e| format!("cannot write YAML: {e}"))?);
            }
            text
        }
        Output::Json => {
            let value = if out_docs.len() == 1 {
                out_docs.remove(0)
            } else {
                // One List of every object (the documents' lists opened), as kubectl prints several objects.
                let mut items = Vec::new();
                for doc in out_docs {
                    match doc.get("items").and_then(Value::as_array) {
                        Some(inner) if doc.get("kind").and_then(Value::as_str) == Some("List") => {
                            items.extend(inner.iter().cloned())
                        }
                        _ => items.push(doc),
                    }
                }
                json!({"apiVersion": "v1", "kind": "List", "items": items})
            };
            let mut text = serde_json::to_string_pretty(&value).map_err(|e| format!("cannot write JSON: {e}"))?;
            text.push('\n');
            text
        }
    };
    crate::emit(&text)
}
