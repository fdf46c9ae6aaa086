//! Every POST operation of the configured spec files is accounted for: an action kind of the generated registry
//! (`aks_api::ACTIONS`), excluded by `azure-arm.yaml` (`kubernetes.resources.<Kind>.actions.exclude`, with a
//! reason), or under a resource the group does not generate (its `resources.include` narrows it). None is dropped
//! silently: a new POST in a new API version fails here until it is generated or excluded.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common::{config, normalize_route as normalize, spec_root};

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn every_post_of_the_specs_is_an_action_kind_or_excluded() {
    let root = spec_root();
    let config = config();
    let mut counted = (0, 0, 0);
    for (group_name, group) in &config.groups {
        for (version, v) in &group.versions {
            let kinds: Vec<&armgen_runtime::KindInfo> = aks_api::KINDS
                .iter()
                .filter(|k| k.group == group_name.as_str() && k.version == version.as_str())
                .collect();
            assert!(!kinds.is_empty(), "{group_name}/{version}: no kinds in the registry");
            let actions: BTreeSet<String> = aks_api::ACTIONS
                .iter()
                .filter(|a| a.kind.group == group_name.as_str() && a.kind.version == version.as_str())
                .map(|a| normalize(a.path))
                .collect();
            for file in &v.spec_files {
                let path = root.join(&group.spec_folder).join(file);
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let paths = doc.get("paths").and_then(Value::as_object).cloned().unwrap_or_default();
                for (route, item) in paths.iter().filter(|(_, i)| i.get("post").is_some()) {
                    let post = normalize(route);
                    let at = format!("{group_name}/{version}: POST {route} ({})", file.display());
                    if actions.contains(&post) {
                        counted.0 += 1;
                        continue;
                    }
                    // The deepest resource (PUT path) of the file it is under, if the registry generates it.
                    let under = paths
                        .iter()
                        .filter(|(r, i)| i.get("put").is_some() && post.starts_with(&format!("{}/", normalize(r))))
                        .map(|(r, _)| normalize(r))
                        .max_by_key(String::len);
                    let owner = under.and_then(|u| kinds.iter().find(|k| normalize(k.arm.path) == u));
                    match owner {
                        Some(k) => {
                            let name = route
                                .split('/')
                                .skip(k.arm.path.split('/').count())
                                .collect::<Vec<_>>()
                                .join("/");
                            let because = group
                                .kubernetes
                                .resources
                                .get(k.kind)
                                .and_then(|r| r.actions.exclude.get(&name));
                            assert!(
                                because.is_some_and(|b| !b.trim().is_empty()),
                                "{at}: under {} but neither an action kind nor in \
                                 kubernetes.resources.{}.actions.exclude ({:?})",
                                k.kind,
                                k.kind,
                                item.get("post").and_then(|p| p.get("operationId"))
                            );
                            counted.1 += 1;
                        }
                        None => {
                            assert!(
                                !group.resources.include.is_empty(),
                                "{at}: under no generated resource, though the group generates every resource of its \
                                 spec files"
                            );
                            counted.2 += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(counted.0 > 30, "action kinds found: {counted:?}");
    assert!(counted.1 > 0, "exclusions found: {counted:?}");
}

#[test]
fn action_kinds_are_not_resources_and_name_a_served_target() {
    assert!(!aks_api::ACTIONS.is_empty());
    for a in aks_api::ACTIONS {
        let kind = &a.kind;
        assert!(
            !aks_api::KINDS
                .iter()
                .any(|k| k.kube_group == kind.kube_group && k.kind == kind.kind),
            "{} is both a resource and an action kind",
            kind.kind
        );
        let target = kind.owner_kind.unwrap_or_else(|| panic!("{} has no target", kind.kind));
        let resource = aks_api::KINDS
            .iter()
            .find(|k| k.kube_group == kind.kube_group && k.version == kind.version && k.kind == target)
            .unwrap_or_else(|| panic!("{}: no target kind {target} at {}", kind.kind, kind.version));
        assert_eq!(kind.arm, resource.arm, "{}: its arm is the target's", kind.kind);
        assert!(
            normalize(a.path).starts_with(&normalize(resource.arm.path)),
            "{}: {} is not under {}",
            kind.kind,
            a.path,
            resource.arm.path
        );
        assert!(!a.statuses.is_empty(), "{}: no response status", kind.kind);
        // Its CRD is generated and has a status subresource (the outcome is written there).
        let crd = aks_api::custom_resource_definition(kind.kube_group, kind.kind)
            .unwrap_or_else(|| panic!("{}: no CRD", kind.kind))
            .unwrap_or_else(|e| panic!("{}: CRD: {e}", kind.kind));
        assert!(
            crd.spec
                .versions
                .iter()
                .any(|v| v.name == kind.version && v.subresources.as_ref().is_some_and(|s| s.status.is_some())),
            "{}: no status subresource at {}",
            kind.kind,
            kind.version
        );
    }
}
