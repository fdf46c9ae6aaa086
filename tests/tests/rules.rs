//! The service rules are data: generating from a copy of `azure-arm.yaml` without a kind of rule gives exactly the
//! built-in rules document (`aks_api::rules()`) without those rules — the documents `reconciler/tests/aks_rules.rs`
//! runs the loop and the simulator with (`rules_without`), where the behaviour changes with no code edit (a pool
//! scale PUTs the cluster; an immutable change is sent and refused).

use crate::common;

use armgen_runtime::rules::Rules;
use serde_yaml_ng::Value;

/// The rules document generated from the workspace config after `edit`.
fn generated_without(edit: impl Fn(&mut Value)) -> Rules {
    let path = common::workspace().join("azure-arm.yaml");
    let text = std::fs::read_to_string(&path).expect("azure-arm.yaml");
    let mut yaml: Value = serde_yaml_ng::from_str(&text).expect("YAML");
    edit(&mut yaml);
    let copy = serde_yaml_ng::to_string(&yaml).expect("YAML");
    assert_ne!(
        copy,
        serde_yaml_ng::to_string(&serde_yaml_ng::from_str::<Value>(&text).expect("YAML")).expect("YAML")
    );
    let config = armgen::Config::parse(&copy, &path).expect("the edited copy is a valid config");
    let generation = armgen::Builder::from_config(config)
        .specs(common::spec_root())
        .generate()
        .expect("generate");
    let doc = generation
        .files
        .get(std::path::Path::new(armgen::emit::rules::FILE))
        .expect("rules.json");
    Rules::from_json(doc).expect("the generated document parses")
}

/// Every mapping at `groups.*.<path…>.*` (one `*` level per step after the first).
fn for_each_group(yaml: &mut Value, f: &impl Fn(&mut serde_yaml_ng::Mapping)) {
    if let Some(groups) = yaml.get_mut("groups").and_then(Value::as_mapping_mut) {
        for (_, group) in groups.iter_mut() {
            if let Some(g) = group.as_mapping_mut() {
                f(g);
            }
        }
    }
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn a_config_without_child_owned_generates_the_document_without_it() {
    let mut rules = generated_without(|yaml| {
        for_each_group(yaml, &|g| {
            if let Some(kinds) = g
                .get_mut("kubernetes")
                .and_then(|k| k.get_mut("resources"))
                .and_then(Value::as_mapping_mut)
            {
                for (_, kind) in kinds.iter_mut() {
                    if let Some(k) = kind.as_mapping_mut() {
                        k.remove("childOwned");
                    }
                }
            }
        })
    });
    let mut expected = aks_api::rules().expect("built-in rules");
    let mut owned = Vec::new();
    for g in &mut expected.groups {
        for k in &mut g.kinds {
            owned.extend(
                k.child_owned
                    .drain(..)
                    .map(|c| (k.kind.clone(), format!("spec.{}[]", c.spec_field))),
            );
        }
        // The document lists only kinds with rules: one whose only rule was childOwned (the network group's
        // VirtualNetwork, whose subnets Subnet objects own) is not in it any more.
        g.kinds
            .retain(|k| !k.child_owned.is_empty() || !k.immutable.is_empty() || k.owner_gate.is_some());
    }
    // What a child owns is never compared, so its immutable properties (a pool's vnetSubnetID) become rules of
    // the owner only once it no longer owns them: set those aside, then the documents agree exactly.
    let mut unowned = 0;
    for g in &mut rules.groups {
        for k in &mut g.kinds {
            let before = k.immutable.len();
            k.immutable.retain(|i| {
                !owned
                    .iter()
                    .any(|(kind, field)| *kind == k.kind && i.spec_path.starts_with(field))
            });
            unowned += before - k.immutable.len();
        }
    }
    assert!(
        unowned > 0,
        "the formerly child-owned pools have immutable properties of their own"
    );
    assert_eq!(rules.groups, expected.groups);
    assert!(
        aks_api::rules()
            .expect("rules")
            .groups
            .iter()
            .any(|g| g.kinds.iter().any(|k| !k.child_owned.is_empty()))
    );
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn a_config_without_immutable_overrides_keeps_only_the_specs_own() {
    let rules = generated_without(|yaml| {
        for_each_group(yaml, &|g| {
            if let Some(types) = g
                .get_mut("overrides")
                .and_then(|o| o.get_mut("types"))
                .and_then(Value::as_mapping_mut)
            {
                for (_, ty) in types.iter_mut() {
                    if let Some(props) = ty.get_mut("properties").and_then(Value::as_mapping_mut) {
                        for (_, p) in props.iter_mut() {
                            if let Some(p) = p.as_mapping_mut() {
                                p.remove("immutable");
                            }
                        }
                        // A property left with no override at all would be a stale entry.
                        props.retain(|_, p| p.as_mapping().is_none_or(|m| !m.is_empty()));
                    }
                }
            }
        })
    });
    let mut expected = aks_api::rules().expect("built-in rules");
    for g in &mut expected.groups {
        for k in &mut g.kinds {
            k.immutable.retain(|i| i.source == "x-ms-mutability");
        }
        g.kinds
            .retain(|k| !k.child_owned.is_empty() || !k.immutable.is_empty() || k.owner_gate.is_some());
    }
    assert_eq!(rules.groups, expected.groups);
}
