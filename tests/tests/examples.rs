//! Every example payload under the spec root, through the generated ARM types and back.
//!
//! For each API version of each group in `azure-arm.yaml`, every operation's `x-ms-examples` is read. A request
//! body whose schema is a generated resource's payload type (its PUT body or GET response), and every response
//! body that is one (or a list of them, `value: [...]`), is deserialized into the kind's generated ARM type and
//! serialized back; the result must equal the original JSON.
//!
//! Normalizations applied before comparing, and why:
//! 1. Numbers compare by value (`-1` equals `-1.0`): JSON does not distinguish them, ARM neither, and a
//!    `type: number` property is an `f64`, which serializes `-1` as `-1.0`.
//! 2. A member whose value is `null` is the same as an absent member, *for properties that are not
//!    `x-nullable`*: no AKS property is nullable, so `null` there carries no meaning beyond "not set" (three
//!    examples send `"minCount": null` or `"adminGroupObjectIDs": null`); the other providers' examples send no
//!    `null`. Nullable properties keep `null` (see the generator's fixture tests).
//!
//! The generated types keep properties they do not model (so the round trip alone cannot tell a modelled
//! property from an unmodelled one); the test therefore also lists, per configured version, what the payloads
//! carried that the types do not model, as a snapshot (`snapshots/examples__unknown-<group>-<version>.snap`, one
//! file per version: a new API version adds a file for review). Today: the `eTag` that the 2024-09-01 responses of
//! ManagedClusters_Get/List and AgentPools_Get/List carry although that spec does not define it (Azure's own
//! validator reports the same six places; see the spec root's README). Values of open enums that the spec does not
//! list are kept by design (`Other`) and listed there too: the ManagedCluster examples send `sku.name: "Basic"`,
//! while `ManagedClusterSKUName` lists `Base` and `Automatic` (an open enum, so Azure's validator accepts it, and
//! so do the generated types).
//!
//! Every example file in each version's `examples/` folder must be referenced by the spec and parse as JSON.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use crate::common::examples::{all_payloads, first_difference, normalize};
use serde_json::Value;

/// What one version's example payloads carry that its types do not model.
#[derive(Default, serde::Serialize)]
struct Unmodelled {
    /// `example file name: JSON pointer` of every property the spec does not define.
    properties: BTreeSet<String>,
    /// `JSON pointer=value` of every open-enum value the spec does not list.
    enum_values: BTreeSet<String>,
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn every_example_round_trips_through_the_arm_types() {
    let root = common::spec_root();
    let payloads = all_payloads(&root);
    let mut failures = Vec::new();
    let config = armgen::Config::load(&common::workspace().join("azure-arm.yaml")).expect("config");
    // group/version → what its payloads carry unmodelled; every configured version has an entry.
    let mut unmodelled: BTreeMap<(String, String), Unmodelled> = config
        .groups
        .iter()
        .flat_map(|(g, group)| {
            group
                .versions
                .keys()
                .map(move |v| ((g.clone(), v.clone()), Unmodelled::default()))
        })
        .collect();
    for p in &payloads {
        let text = serde_json::to_string(&p.json).expect("serialize");
        match aks_api::arm_round_trip(&p.group, &p.version, &p.kind, &text) {
            None => failures.push(format!("{}: no generated type", p.describe())),
            Some(Err(e)) => failures.push(format!("{}: {e}", p.describe())),
            Some(Ok(back)) => {
                let entry = unmodelled.entry((p.group.clone(), p.version.clone())).or_default();
                for u in &back.unknown {
                    if u.contains('=') {
                        entry.enum_values.insert(u.clone());
                    } else {
                        entry.properties.insert(format!("{}: {u}", p.file_name()));
                    }
                }
                let back: Value = serde_json::from_str(&back.json).expect("generated JSON parses");
                if let Some(d) = first_difference(&normalize(&p.json), &normalize(&back), "") {
                    failures.push(format!("{}: {d}", p.describe()));
                }
            }
        }
    }
    eprintln!(
        "{} resource payloads round-tripped, {} failures",
        payloads.len(),
        failures.len()
    );
    assert!(
        payloads.len() > 200,
        "expected more than 200 resource payloads in the examples, found {}",
        payloads.len()
    );
    assert!(
        failures.is_empty(),
        "{} payloads did not round-trip:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for ((group, version), u) in &unmodelled {
        insta::assert_yaml_snapshot!(format!("unknown-{group}-{version}"), u);
    }
}
