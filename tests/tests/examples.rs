//! Every example payload under the spec root, through the generated ARM types and back.
//!
//! For each API version in `azure-arm.yaml`, every operation's `x-ms-examples` is read. A request body whose
//! schema is a resource's payload type, and every response body that is a resource (or a list of them,
//! `value: [...]`), is deserialized into the generated type and serialized back; the result must equal the
//! original JSON.
//!
//! Normalizations applied before comparing, and why:
//! 1. Numbers compare by value (`-1` equals `-1.0`): JSON does not distinguish them, ARM neither, and a
//!    `type: number` property is an `f64`, which serializes `-1` as `-1.0`.
//! 2. A member whose value is `null` is the same as an absent member, *for properties that are not
//!    `x-nullable`*: no AKS property is nullable, so `null` there carries no meaning beyond "not set" (three
//!    examples send `"minCount": null` or `"adminGroupObjectIDs": null`). Nullable properties keep `null`
//!    (see the generator's fixture tests).
//!
//! The generated types keep properties they do not model (so the round trip alone cannot tell a modelled
//! property from an unmodelled one); the test therefore also lists what each payload carried that the types
//! do not model, and that list must be exactly [`EXPECTED_UNKNOWN`]: the `eTag` that the 2024-09-01 responses
//! of ManagedClusters_Get/List and AgentPools_Get/List carry although that spec does not define it (Azure's
//! own validator reports the same six places; see the spec root's README). Values of open enums that the
//! spec does not list are kept by design (`Other`); they must be exactly [`EXPECTED_UNKNOWN_ENUM_VALUES`]:
//! the ManagedCluster examples send `sku.name: "Basic"`, while `ManagedClusterSKUName` lists `Base` and
//! `Automatic` (an open enum, so Azure's validator accepts it, and so do the generated types).
//!
//! Every example file in each version's `examples/` folder must be referenced by the spec and parse as JSON.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use armgen::Config;
use armgen::discover::discover;
use armgen::load::{SpecSet, Target};
use openapiv3::ReferenceOr;
use serde_json::Value;

fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), normalize(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        Value::Number(n) => match n.as_f64() {
            Some(f) => serde_json::Number::from_f64(f)
                .map(Value::Number)
                .unwrap_or_else(|| v.clone()),
            None => v.clone(),
        },
        other => other.clone(),
    }
}

/// The first difference between two JSON values, as a JSON pointer and the two sides.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let p = format!("{path}/{k}");
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => {
                        if let Some(d) = first_difference(u, v, &p) {
                            return Some(d);
                        }
                    }
                    (u, v) => return Some(format!("{p}: {u:?} != {v:?}")),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| first_difference(u, v, &format!("{path}/{i}"))),
        _ if a == b => None,
        _ => Some(format!("{path}: {a} != {b}")),
    }
}

/// `(version, example file name, JSON pointer)` of every property the examples carry that the spec does not
/// define.
const EXPECTED_UNKNOWN: &[(&str, &str, &str)] = &[
    ("v1beta1", "AgentPoolsGet.json", "/properties/eTag"),
    ("v1beta1", "AgentPoolsList.json", "/properties/eTag"),
    ("v1beta1", "ManagedClustersGet.json", "/eTag"),
    (
        "v1beta1",
        "ManagedClustersGet.json",
        "/properties/agentPoolProfiles/0/eTag",
    ),
    ("v1beta1", "ManagedClustersList.json", "/eTag"),
    (
        "v1beta1",
        "ManagedClustersList.json",
        "/properties/agentPoolProfiles/0/eTag",
    ),
];

/// `(version, JSON pointer=value)` of every open-enum value the examples use that the spec does not list.
const EXPECTED_UNKNOWN_ENUM_VALUES: &[(&str, &str)] =
    &[("v1beta1", "/sku/name=Basic"), ("v2alpha1", "/sku/name=Basic")];

struct Payload {
    example: PathBuf,
    what: String,
    kind: String,
    json: Value,
}

#[test]
fn every_example_round_trips_through_the_arm_types() {
    let Some(root) = common::spec_root() else { return };
    let config = Config::load(&common::workspace().join("azure-arm.yaml")).expect("config");
    let mut failures = Vec::new();
    let mut total = 0;
    let mut unknown: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut unknown_values: BTreeSet<(String, String)> = BTreeSet::new();
    for (group_name, group) in &config.groups {
        for (kube, version) in &group.versions {
            let files: Vec<PathBuf> = version.spec_files.iter().map(|f| group.spec_folder.join(f)).collect();
            let specs = SpecSet::load(&root, &files).expect("specs load");
            let resources = discover(&specs).expect("discover");
            let kinds: BTreeMap<Target, String> =
                resources.iter().map(|r| (r.put_body.clone(), r.name.clone())).collect();
            let mut referenced: BTreeSet<PathBuf> = BTreeSet::new();
            let mut payloads = Vec::new();
            for spec_file in &specs.roots {
                let doc = specs.doc(spec_file).expect("root doc");
                let dir = spec_file.parent().expect("spec dir").to_path_buf();
                for (route, item) in doc.openapi.paths.iter() {
                    let ReferenceOr::Item(item) = item else { continue };
                    for (method, op) in item.iter() {
                        let Some(Value::Object(examples)) = op.extensions.get("x-ms-examples") else {
                            continue;
                        };
                        for example in examples.values() {
                            let Some(rel) = example.get("$ref").and_then(Value::as_str) else {
                                continue;
                            };
                            let path = armgen::load::normalize(&dir.join(rel));
                            if !path.exists() {
                                // Listed as absent in the spec root's README.
                                continue;
                            }
                            referenced.insert(path.clone());
                            let text = std::fs::read_to_string(&path).expect("read example");
                            let ex: Value = serde_json::from_str(&text)
                                .unwrap_or_else(|e| panic!("{}: invalid JSON: {e}", path.display()));
                            collect(&specs, spec_file, &kinds, route, method, op, &path, &ex, &mut payloads);
                        }
                    }
                }
            }
            // Every example file present must be referenced by the spec.
            for spec_file in &specs.roots {
                let examples_dir = spec_file.parent().expect("dir").join("examples");
                for entry in std::fs::read_dir(&examples_dir).expect("examples dir") {
                    let p = armgen::load::normalize(&entry.expect("entry").path());
                    assert!(
                        referenced.contains(&p),
                        "{} is not referenced by {}",
                        p.display(),
                        spec_file.display()
                    );
                }
            }
            assert!(
                !payloads.is_empty(),
                "{group_name}/{kube}: no resource payloads found in the examples"
            );
            for p in payloads {
                total += 1;
                let text = serde_json::to_string(&p.json).expect("serialize");
                match aks_api::arm_round_trip(group_name, kube, &p.kind, &text) {
                    None => failures.push(format!(
                        "{}: no generated type for kind {}",
                        p.example.display(),
                        p.kind
                    )),
                    Some(Err(e)) => failures.push(format!("{} {}: {}: {e}", p.example.display(), p.what, p.kind)),
                    Some(Ok(back)) => {
                        let file_name = p
                            .example
                            .file_name()
                            .map(|f| f.to_string_lossy().into_owned())
                            .unwrap_or_default();
                        for u in &back.unknown {
                            if u.contains('=') {
                                unknown_values.insert((kube.clone(), u.clone()));
                            } else {
                                unknown.insert((kube.clone(), file_name.clone(), u.clone()));
                            }
                        }
                        let back: Value = serde_json::from_str(&back.json).expect("generated JSON parses");
                        if let Some(d) = first_difference(&normalize(&p.json), &normalize(&back), "") {
                            failures.push(format!("{} {}: {}: {d}", p.example.display(), p.what, p.kind));
                        }
                    }
                }
            }
        }
    }
    eprintln!("{total} resource payloads round-tripped, {} failures", failures.len());
    assert!(
        total > 200,
        "expected more than 200 resource payloads in the examples, found {total}"
    );
    assert!(
        failures.is_empty(),
        "{} payloads did not round-trip:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let expected: BTreeSet<(String, String, String)> = EXPECTED_UNKNOWN
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(
        unknown, expected,
        "properties in the examples that the generated types do not model"
    );
    let expected_values: BTreeSet<(String, String)> = EXPECTED_UNKNOWN_ENUM_VALUES
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(
        unknown_values, expected_values,
        "open-enum values in the examples that the spec does not list"
    );
}

/// The kind of a schema (`$ref` into a resource's payload type), if any.
fn kind_of(
    specs: &SpecSet,
    file: &Path,
    schema: &ReferenceOr<openapiv3::Schema>,
    kinds: &BTreeMap<Target, String>,
) -> Option<String> {
    let ReferenceOr::Reference { reference } = schema else {
        return None;
    };
    let at = armgen::Location::new(file, "");
    let (target, _) = specs.resolve_schema(file, reference, &at).ok()?;
    kinds.get(&target).cloned()
}

/// The kind of the items of a list schema (`{value: [Kind]}`), if any.
fn list_kind_of(
    specs: &SpecSet,
    file: &Path,
    schema: &ReferenceOr<openapiv3::Schema>,
    kinds: &BTreeMap<Target, String>,
) -> Option<String> {
    let ReferenceOr::Reference { reference } = schema else {
        return None;
    };
    let at = armgen::Location::new(file, "");
    let (target, resolved) = specs.resolve_schema(file, reference, &at).ok()?;
    let raw = serde_json::to_value(&resolved).ok()?;
    let items = raw.pointer("/properties/value/items/$ref")?.as_str()?;
    let (item_target, _) = specs.resolve_schema(&target.file, items, &at).ok()?;
    kinds.get(&item_target).cloned()
}

#[allow(clippy::too_many_arguments)]
fn collect(
    specs: &SpecSet,
    file: &Path,
    kinds: &BTreeMap<Target, String>,
    route: &str,
    method: &str,
    op: &openapiv3::Operation,
    example: &Path,
    ex: &Value,
    out: &mut Vec<Payload>,
) {
    if let Some(ReferenceOr::Item(body)) = &op.request_body {
        let name = body
            .extensions
            .get("x-ms-requestBody-name")
            .and_then(Value::as_str)
            .unwrap_or("parameters");
        if let Some(schema) = body.content.get("application/json").and_then(|m| m.schema.as_ref())
            && let (Some(kind), Some(json)) = (
                kind_of(specs, file, schema, kinds),
                ex.pointer(&format!("/parameters/{name}")),
            )
        {
            out.push(Payload {
                example: example.to_path_buf(),
                what: format!("{method} {route} request"),
                kind,
                json: json.clone(),
            });
        }
    }
    let Some(Value::Object(responses)) = ex.get("responses") else {
        return;
    };
    for (code, resp) in responses {
        let Some(body) = resp.get("body") else { continue };
        let Ok(code_num) = code.parse::<u16>() else { continue };
        let Some(ReferenceOr::Item(r)) = op.responses.responses.get(&openapiv3::StatusCode::Code(code_num)) else {
            continue;
        };
        let Some(schema) = r.content.get("application/json").and_then(|m| m.schema.as_ref()) else {
            continue;
        };
        if let Some(kind) = kind_of(specs, file, schema, kinds) {
            out.push(Payload {
                example: example.to_path_buf(),
                what: format!("{method} {route} response {code}"),
                kind,
                json: body.clone(),
            });
        } else if let Some(kind) = list_kind_of(specs, file, schema, kinds) {
            for (i, item) in body
                .get("value")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                out.push(Payload {
                    example: example.to_path_buf(),
                    what: format!("{method} {route} response {code} value[{i}]"),
                    kind: kind.clone(),
                    json: item.clone(),
                });
            }
        }
    }
}
