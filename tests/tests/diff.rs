//! Change detection (`armgen_runtime::diff`, the generated `DiffWith` impls) on the real specs:
//!
//! - every example whose PUT request and response describe the same resource: desired = the request imported
//!   as a custom resource, actual = the response → no difference (read-only properties and server defaults
//!   are not compared);
//! - for every writable leaf field of every kind in every version of every group of the registry
//!   (`aks_api::KINDS`; an exhaustive walker over the Kubernetes IR builds a spec with every field set): changing
//!   only that field yields exactly one difference, at that field's path; changing a secret yields none; a
//!   proptest changes random sets of leaves;
//! - `x-ms-identifiers` matching of agent pool profiles, and the autoscaler rule of `azure-arm.yaml`, in every
//!   version of the AKS group (provider `Microsoft.ContainerService`) that has ManagedCluster / AgentPool.
//!
//! Specs are compared as the reconciler compares them: the desired custom resource against an ARM body,
//! through the registry's dispatch, so no test lists per-version types.

use crate::common;

use std::collections::BTreeMap;

use crate::common::examples::all_payloads;
use crate::common::full_spec::{Leaf, LeafKind, full_spec};
use armgen_runtime::diff::Differences;
use armgen_runtime::kube::ArmIdsOnly;
use proptest::prelude::*;
use serde_json::{Value, json};

fn generation(root: &std::path::Path) -> armgen::Generation {
    armgen::Builder::new(common::workspace().join("azure-arm.yaml"))
        .specs(root)
        .generate()
        .expect("generate")
}

/// The registry's API group (module name) of the AKS kinds, for the AKS fixtures.
fn aks() -> String {
    common::aks_group().name
}

/// `spec` as a custom resource (JSON) of `kind` in `version` of group `group` (module name).
fn custom_resource(group: &str, version: &str, kind: &str, spec: &Value) -> Value {
    let kube_group = aks_api::VERSIONS
        .iter()
        .find(|v| v.group == group && v.version == version)
        .unwrap_or_else(|| panic!("no version {group}/{version} in aks_api::VERSIONS"))
        .kube_group;
    json!({
        "apiVersion": format!("{kube_group}/{version}"),
        "kind": kind,
        "metadata": {"name": "x", "namespace": "default"},
        "spec": spec,
    })
}

/// `spec` as ARM sends it back: exported to an ARM body (secrets as placeholders) and checked to read back as
/// the same spec, the pointers in `secrets` aside (a secret is never read back), so that a field the types do
/// not know (a walker or test mistake) cannot go unnoticed.
fn as_arm(group: &str, version: &str, kind: &str, spec: &Value, secrets: &[&str]) -> String {
    let cr = custom_resource(group, version, kind, spec);
    let arm = aks_api::export_custom_resource(group, version, kind, &cr, &ArmIdsOnly)
        .unwrap_or_else(|| panic!("no {kind} in {group}/{version}"))
        .unwrap_or_else(|e| panic!("{group}/{version} {kind}: the spec does not export: {e}\n{spec}"));
    let arm = arm.to_string();
    let back = match aks_api::import_custom_resource(group, version, kind, &arm, "x", Some("default")) {
        Some(Ok(back)) => back,
        other => panic!("{group}/{version} {kind}: the ARM body does not import: {other:?}"),
    };
    let mut expected = spec.clone();
    for pointer in secrets {
        let (parent, name) = pointer.rsplit_once('/').expect("pointer");
        if let Some(Value::Object(m)) = expected.pointer_mut(parent) {
            m.remove(name);
        }
    }
    // Enum values are written in the spec's spelling: compare case-insensitively.
    assert_eq!(
        lowercase(&back["spec"]),
        lowercase(&expected),
        "{group}/{version} {kind}: the spec did not survive export and import"
    );
    arm
}

/// The differences between two specs (JSON) of an AKS `kind` in `version`, as the reconciler computes them: the
/// desired custom resource against the ARM body of the actual spec, through the registry's dispatch
/// (`aks_api::diff_custom_resource`) for whichever versions the registry has. Both specs are checked to read
/// without losing a field (see [`as_arm`]).
fn diff_specs(version: &str, kind: &str, desired: &Value, actual: &Value) -> Differences {
    let group = aks();
    as_arm(&group, version, kind, desired, &[]);
    diff_with_secrets(&group, version, kind, desired, actual, &[])
}

/// [`diff_specs`] in group `group` (module name), the leaves at `secrets` (pointers) of `actual` not read back,
/// and `desired` not checked.
fn diff_with_secrets(
    group: &str,
    version: &str,
    kind: &str,
    desired: &Value,
    actual: &Value,
    secrets: &[&str],
) -> Differences {
    let arm = as_arm(group, version, kind, actual, secrets);
    aks_api::diff_custom_resource(
        group,
        version,
        kind,
        &custom_resource(group, version, kind, desired),
        &arm,
    )
    .unwrap_or_else(|| panic!("no {kind} in {group}/{version}"))
    .unwrap_or_else(|e| panic!("{group}/{version} {kind}: {e}"))
}

/// The registry's versions of the AKS group that have `kind` (the kinds these tests name are fixtures: the
/// behaviour under test is theirs, e.g. `agentPoolProfiles` matched by name).
fn versions_of(kind: &str) -> Vec<&'static str> {
    let versions = common::versions_of(&aks(), kind);
    assert!(!versions.is_empty(), "no version has {kind}");
    versions
}

/// Where an example's response contradicts its own request, exactly: `tests/tests/data/example_inconsistencies.yaml`
/// (data: a new API version's examples add rows there, not code here).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Inconsistency {
    path: String,
    /// The request's value, JSON.
    desired: String,
    /// The response's value, JSON; absent = the response leaves it out, `*` = any value.
    actual: Option<String>,
    /// Why (printed when the row no longer occurs).
    because: String,
}

fn example_inconsistencies() -> Vec<Inconsistency> {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/example_inconsistencies.yaml");
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// `v` with every string lowercased (to compare enum spellings).
fn lowercase(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(s.to_lowercase()),
        Value::Array(a) => Value::Array(a.iter().map(lowercase).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), lowercase(v))).collect()),
        other => other.clone(),
    }
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn every_example_response_has_no_difference_with_its_request() {
    let root = common::spec_root();
    let payloads = all_payloads(&root);
    let mut failures = Vec::new();
    let (mut pairs, mut clean) = (0, 0);
    let inconsistencies = example_inconsistencies();
    let mut used = vec![0usize; inconsistencies.len()];
    for request in payloads.iter().filter(|p| p.request && p.what.starts_with("put ")) {
        let route = request.what.trim_end_matches(" request");
        // The PUT's own responses (200, 201) in the same example file.
        for response in payloads.iter().filter(|p| {
            !p.request
                && p.example == request.example
                && p.group == request.group
                && p.kind == request.kind
                && p.version == request.version
                && p.what.starts_with(&format!("{route} response"))
        }) {
            pairs += 1;
            let text = serde_json::to_string(&request.json).expect("serialize");
            let cr = aks_api::import_custom_resource(
                &request.group,
                &request.version,
                &request.kind,
                &text,
                "example",
                None,
            )
            .expect("kind")
            .expect("import");
            let actual = serde_json::to_string(&response.json).expect("serialize");
            let d = match aks_api::diff_custom_resource(&request.group, &request.version, &request.kind, &cr, &actual) {
                Some(Ok(d)) => d,
                Some(Err(e)) => {
                    failures.push(format!("{}: {e}", response.describe()));
                    continue;
                }
                None => {
                    failures.push(format!("{}: no diff for the kind", response.describe()));
                    continue;
                }
            };
            clean += usize::from(d.is_empty());
            for x in &d {
                let listed = inconsistencies.iter().position(|i| {
                    x.path == i.path
                        && x.desired.as_deref() == Some(i.desired.as_str())
                        && (i.actual.as_deref() == Some("*") && x.actual.is_some()
                            || x.actual.as_deref() == i.actual.as_deref())
                });
                match listed {
                    Some(i) => used[i] += 1,
                    None => failures.push(format!("{}: {x}", response.describe())),
                }
            }
        }
    }
    assert!(pairs >= 200, "only {pairs} request/response pairs found");
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for (entry, n) in inconsistencies.iter().zip(&used) {
        assert!(
            *n > 0,
            "{} ({}: {}) no longer occurs: remove it from example_inconsistencies.yaml",
            entry.path,
            entry.desired,
            entry.because
        );
    }
    // Every pair of the other kinds, and of ManagedCluster none (the `sku` shortcut): see the list.
    assert!(
        clean >= 30,
        "only {clean} of {pairs} pairs are free of listed inconsistencies"
    );
    eprintln!(
        "{pairs} request/response pairs: {clean} without any difference, the others only with listed example inconsistencies"
    );
}

fn changed(spec: &Value, leaf: &Leaf) -> Value {
    let mut out = spec.clone();
    *out.pointer_mut(&leaf.pointer).expect("leaf pointer") = leaf.changed.clone();
    out
}

/// Every (group, version, kind) of the registry.
fn every_kind() -> Vec<(&'static str, &'static str, &'static str)> {
    aks_api::KINDS.iter().map(|k| (k.group, k.version, k.kind)).collect()
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn changing_any_writable_leaf_is_exactly_one_difference_at_its_path() {
    let root = common::spec_root();
    let generation = generation(&root);
    let aks = aks();
    for (group, version, kind) in every_kind() {
        let (spec, leaves) = full_spec(&generation, group, version, kind);
        let secrets: Vec<&str> = leaves
            .iter()
            .filter(|l| l.what == LeafKind::Secret)
            .map(|l| l.pointer.as_str())
            .collect();
        let d = diff_with_secrets(group, version, kind, &spec, &spec, &secrets);
        assert!(d.is_empty(), "{group}/{version} {kind}: {d:?}");
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut failures = Vec::new();
        for leaf in &leaves {
            let desired = changed(&spec, leaf);
            let d = diff_with_secrets(group, version, kind, &desired, &spec, &secrets);
            let paths: Vec<&str> = d.iter().map(|x| x.path.as_str()).collect();
            let ok = match leaf.what {
                LeafKind::Compared => {
                    paths == [leaf.path.as_str()] && d.as_slice()[0].desired.as_deref() == Some(leaf.shown.as_str())
                }
                LeafKind::Secret => paths.is_empty(),
                // The item named by the changed key is missing from Azure, the original one is extra.
                LeafKind::Identifier => {
                    let item = &leaf.path[..leaf.path.rfind('.').expect("identifier path")];
                    paths.len() == 2 && paths.contains(&item.replace("=abc", "=abcx").as_str()) && paths.contains(&item)
                }
            };
            if !ok {
                failures.push(format!("{} ({:?}): {paths:?}", leaf.path, leaf.what));
            }
            *counts
                .entry(match leaf.what {
                    LeafKind::Compared => "compared",
                    LeafKind::Secret => "secret",
                    LeafKind::Identifier => "identifier",
                })
                .or_default() += 1;
        }
        assert!(
            failures.is_empty(),
            "{group}/{version} {kind}:\n{}",
            failures.join("\n")
        );
        // Every kind has writable fields; the two largest AKS kinds have many in every version (a walker check).
        let floor = match (group == aks, kind) {
            (true, "ManagedCluster") => 200,
            (true, "AgentPool") => 60,
            _ => 0,
        };
        assert!(
            counts.get("compared").is_some_and(|n| *n > floor),
            "{group}/{version} {kind}: only {counts:?} leaves"
        );
        if group == aks && kind == "ManagedCluster" {
            assert!(counts.get("secret").is_some_and(|n| *n >= 2), "{version}: {counts:?}");
            assert_eq!(
                counts.get("identifier"),
                Some(&1),
                "{version}: agentPoolProfiles[].name"
            );
        }
    }
}

/// A group, a version, a kind, its full spec, the leaves whose change is one difference, and the secret leaves.
type Case = (String, String, String, Value, Vec<Leaf>, Vec<String>);

fn cases() -> Vec<Case> {
    let generation = generation(&common::spec_root());
    every_kind()
        .into_iter()
        .map(|(g, v, k)| {
            let (spec, leaves) = full_spec(&generation, g, v, k);
            let secrets: Vec<String> = leaves
                .iter()
                .filter(|l| l.what == LeafKind::Secret)
                .map(|l| l.pointer.clone())
                .collect();
            let leaves = leaves.into_iter().filter(|l| l.what == LeafKind::Compared).collect();
            (g.to_string(), v.to_string(), k.to_string(), spec, leaves, secrets)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Changing a random set of leaves yields one difference per leaf, at its path; leaving random leaves unset
    /// in desired changes nothing (unset is not compared).
    #[test]
    #[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
    fn random_changes_are_reported_exactly(seed in any::<u64>(), picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..8), drops in proptest::collection::vec(any::<prop::sample::Index>(), 0..8)) {
        static CASES: std::sync::OnceLock<Vec<Case>> = std::sync::OnceLock::new();
        let cases = CASES.get_or_init(cases);
        let (group, version, kind, spec, leaves, secrets) = &cases[(seed % cases.len() as u64) as usize];
        let mut chosen: Vec<&Leaf> = picks.iter().map(|i| i.get(leaves)).collect();
        chosen.sort_by(|a, b| a.pointer.cmp(&b.pointer));
        chosen.dedup_by(|a, b| a.pointer == b.pointer);
        let mut desired = spec.clone();
        for leaf in &chosen {
            *desired.pointer_mut(&leaf.pointer).expect("pointer") = leaf.changed.clone();
        }
        // Unset leaves the change did not touch.
        let mut dropped = 0;
        for i in &drops {
            let leaf = i.get(leaves);
            if chosen.iter().any(|c| c.pointer == leaf.pointer) {
                continue;
            }
            let (parent, name) = leaf.pointer.rsplit_once('/').expect("pointer");
            if let Some(Value::Object(m)) = desired.pointer_mut(parent) {
                dropped += usize::from(m.remove(name).is_some());
            }
        }
        prop_assume!(drops.is_empty() || dropped > 0 || chosen.len() == leaves.len());
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        let d = diff_with_secrets(group, version, kind, &desired, spec, &secrets);
        let mut got: Vec<&str> = d.iter().map(|x| x.path.as_str()).collect();
        got.sort_unstable();
        let mut want: Vec<&str> = chosen.iter().map(|l| l.path.as_str()).collect();
        want.sort_unstable();
        prop_assert_eq!(got, want);
    }
}

/// A ManagedCluster spec with these agent pool profiles (and the location that an ARM body requires).
fn cluster(pools: Value) -> Value {
    json!({"location": "westeurope", "agentPoolProfiles": pools})
}

fn pool(name: &str, count: i32, autoscale: Option<bool>) -> Value {
    let mut p = json!({"name": name, "count": count, "vmSize": "Standard_DS2_v2", "mode": "System"});
    if let Some(a) = autoscale {
        p["enableAutoScaling"] = json!(a);
    }
    p
}

#[test]
fn agent_pool_profiles_are_matched_by_name() {
    for version in versions_of("ManagedCluster") {
        let actual = cluster(json!([
            pool("pool1", 3, None),
            pool("pool2", 2, None),
            pool("pool3", 1, None)
        ]));
        let reordered = cluster(json!([
            pool("pool3", 1, None),
            pool("pool1", 3, None),
            pool("pool2", 2, None)
        ]));
        assert!(
            diff_specs(version, "ManagedCluster", &reordered, &actual).is_empty(),
            "{version}"
        );

        let scaled = cluster(json!([
            pool("pool3", 1, None),
            pool("pool1", 3, None),
            pool("pool2", 5, None)
        ]));
        let d = diff_specs(version, "ManagedCluster", &scaled, &actual);
        assert_eq!(d.len(), 1, "{version}: {d:?}");
        let one = &d.as_slice()[0];
        assert_eq!(one.path, "spec.agentPoolProfiles[name=pool2].count");
        assert_eq!((one.desired.as_deref(), one.actual.as_deref()), (Some("5"), Some("2")));

        // A pool only one side has is named.
        let renamed = cluster(json!([
            pool("pool1", 3, None),
            pool("pool2", 2, None),
            pool("pool4", 1, None)
        ]));
        let paths: Vec<String> = diff_specs(version, "ManagedCluster", &renamed, &actual)
            .into_iter()
            .map(|d| format!("{} {:?} {:?}", d.path, d.desired.is_some(), d.actual.is_some()))
            .collect();
        assert_eq!(
            paths,
            [
                "spec.agentPoolProfiles[name=pool4] true false",
                "spec.agentPoolProfiles[name=pool3] false true"
            ],
            "{version}"
        );
    }
}

#[test]
fn the_autoscaler_owns_count_while_autoscaling_is_on() {
    for version in versions_of("ManagedCluster") {
        // ManagedCluster.agentPoolProfiles[]: count compared only while autoscaling is off (desired, else actual).
        let one_pool = |p: Value| cluster(json!([p]));
        let cases = [
            (pool("p", 3, Some(true)), pool("p", 5, Some(true)), Vec::<&str>::new()),
            (pool("p", 3, None), pool("p", 5, Some(true)), vec![]),
            (pool("p", 3, Some(false)), pool("p", 5, Some(false)), vec!["count"]),
            (pool("p", 3, None), pool("p", 5, None), vec!["count"]),
            // Turning autoscaling off: the count the user asks for matters again.
            (
                pool("p", 3, Some(false)),
                pool("p", 5, Some(true)),
                vec!["count", "enableAutoScaling"],
            ),
            // Turning it on: the autoscaler takes count over.
            (
                pool("p", 3, Some(true)),
                pool("p", 5, Some(false)),
                vec!["enableAutoScaling"],
            ),
        ];
        for (desired, actual, want) in &cases {
            let got: Vec<String> = diff_specs(
                version,
                "ManagedCluster",
                &one_pool(desired.clone()),
                &one_pool(actual.clone()),
            )
            .into_iter()
            .map(|d| d.path)
            .collect();
            let want_cluster: Vec<String> = want
                .iter()
                .map(|f| format!("spec.agentPoolProfiles[name=p].{f}"))
                .collect();
            assert_eq!(got, want_cluster, "{version} ManagedCluster {desired} vs {actual}");

            // The AgentPool resource: the same fields, flattened into its spec root.
            let strip_name = |v: &Value| {
                let mut v = v.clone();
                v.as_object_mut().expect("object").remove("name");
                v
            };
            let got: Vec<String> = diff_specs(version, "AgentPool", &strip_name(desired), &strip_name(actual))
                .into_iter()
                .map(|d| d.path)
                .collect();
            let want_pool: Vec<String> = want.iter().map(|f| format!("spec.{f}")).collect();
            assert_eq!(got, want_pool, "{version} AgentPool {desired} vs {actual}");
        }
    }
}

#[test]
fn enums_and_arm_ids_compare_case_insensitively_other_strings_exactly() {
    for version in versions_of("AgentPool") {
        let actual = json!({"osType": "Linux", "vnetSubnetID": {"armId": "/subscriptions/S/resourceGroups/RG/x"}, "vmSize": "Standard_DS2_v2"});
        let desired = json!({"osType": "linux", "vnetSubnetID": {"armId": "/subscriptions/s/resourcegroups/rg/X"}, "vmSize": "Standard_DS2_v2"});
        assert!(
            diff_specs(version, "AgentPool", &desired, &actual).is_empty(),
            "{version}"
        );
        let desired = json!({"vmSize": "standard_ds2_v2"});
        let d = diff_specs(version, "AgentPool", &desired, &actual);
        assert_eq!(d.len(), 1, "{version}: {d:?}");
        // An unresolved reference to another custom resource always differs.
        let desired = json!({"vnetSubnetID": {"kind": "VirtualNetworksSubnet", "name": "subnet1"}});
        // (Not exportable without a cluster to resolve it: compared without the export check.)
        let d = diff_with_secrets(&aks(), version, "AgentPool", &desired, &actual, &[]);
        assert_eq!(
            d.iter().map(|x| x.path.as_str()).collect::<Vec<_>>(),
            ["spec.vnetSubnetID"]
        );
    }
}

#[test]
fn maps_are_compared_per_desired_key_and_empty_collections_equal_absent_ones() {
    for version in versions_of("AgentPool") {
        let actual = json!({"tags": {"env": "prod", "team": "a"}, "nodeLabels": {"x": "1"}});
        assert!(diff_specs(version, "AgentPool", &json!({"tags": {"env": "prod"}}), &actual).is_empty());
        let d = diff_specs(
            version,
            "AgentPool",
            &json!({"tags": {"env": "dev", "new": "1"}}),
            &actual,
        );
        let paths: Vec<&str> = d.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(paths, ["spec.tags[env]", "spec.tags[new]"], "{version}");
        assert_eq!(d.as_slice()[1].actual, None);
        // `[]` / `{}` desired, absent in the GET: ARM leaves empty collections out.
        let empty = json!({"nodeTaints": [], "availabilityZones": []});
        assert!(
            diff_specs(version, "AgentPool", &empty, &json!({})).is_empty(),
            "{version}"
        );
        // Arrays without identifiers: by position.
        let d = diff_specs(
            version,
            "AgentPool",
            &json!({"availabilityZones": ["2", "1"]}),
            &json!({"availabilityZones": ["1", "2"]}),
        );
        assert_eq!(
            d.iter().map(|x| x.path.as_str()).collect::<Vec<_>>(),
            ["spec.availabilityZones[0]", "spec.availabilityZones[1]"]
        );
    }
}
