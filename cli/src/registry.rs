//! The generated registry as armctl reads it: every API group of `aks_api::VERSIONS` (one per group of
//! `azure-arm.yaml`), each with its own versions and storage version, and kinds looked up across the groups (a
//! `--group`, or the kind's only group; a kind in several groups without `--group` is an error naming them). Nothing
//! here names a group, version or kind: a new group or version in `azure-arm.yaml` needs no change.

use std::collections::BTreeMap;

use armgen_runtime::{KindInfo, VersionInfo};

use crate::Failure;

/// An API group of the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    /// The group's module name, as the dispatch functions of `aks_api` take it (`containerservice`).
    pub key: &'static str,
    /// Its Kubernetes API group (`containerservice.armgen.dev`).
    pub kube: &'static str,
}

/// Every API group of the registry, in registry order.
pub fn groups() -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for v in aks_api::VERSIONS {
        if !out.iter().any(|g| g.key == v.group) {
            out.push(Group {
                key: v.group,
                kube: v.kube_group,
            });
        }
    }
    out
}

fn known_groups() -> String {
    groups().iter().map(|g| g.kube).collect::<Vec<_>>().join(", ")
}

/// The group a `--group` names: its Kubernetes API group (`network.armgen.dev`) or its module name (`network`),
/// case-insensitively; an error lists the known groups.
pub fn group(name: &str) -> Result<Group, Failure> {
    groups()
        .into_iter()
        .find(|g| g.kube.eq_ignore_ascii_case(name) || g.key.eq_ignore_ascii_case(name))
        .ok_or_else(|| Failure(format!("unknown API group `{name}`; known groups: {}", known_groups())))
}

/// The group whose Kubernetes API group is `kube` (exactly, as in an `apiVersion`).
pub fn group_of_kube(kube: &str) -> Option<Group> {
    groups().into_iter().find(|g| g.kube == kube)
}

/// The versions of `group`.
pub fn versions(group: Group) -> impl Iterator<Item = &'static VersionInfo> {
    aks_api::VERSIONS.iter().filter(move |v| v.group == group.key)
}

/// The versions of `group`, comma-separated.
pub fn known_versions(group: Group) -> String {
    versions(group).map(|v| v.version).collect::<Vec<_>>().join(", ")
}

/// The version `version` of `group`, or an error listing the group's versions.
pub fn version_of(group: Group, version: &str) -> Result<&'static VersionInfo, Failure> {
    versions(group).find(|v| v.version == version).ok_or_else(|| {
        Failure(format!(
            "unknown version `{version}` of {}; known versions: {}",
            group.kube,
            known_versions(group)
        ))
    })
}

/// The version an `apiVersion` (`group/version`) names, if the registry has it.
pub fn api_version(api_version: &str) -> Option<&'static VersionInfo> {
    let (kube, version) = api_version.split_once('/')?;
    aks_api::VERSIONS
        .iter()
        .find(|v| v.kube_group == kube && v.version == version)
}

/// Every `apiVersion` of the registry, comma-separated.
pub fn known_api_versions() -> String {
    aks_api::VERSIONS
        .iter()
        .map(|v| format!("{}/{}", v.kube_group, v.version))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An `apiVersion` for messages (`… a string such as …`): the storage version of the registry's first group.
pub fn example_api_version() -> String {
    let first = groups().into_iter().next();
    first
        .and_then(|g| versions(g).find(|v| v.storage).or_else(|| versions(g).last()))
        .map(|v| format!("{}/{}", v.kube_group, v.version))
        .unwrap_or_default()
}

/// Every (Kubernetes API group, kind) of the registry, each once.
pub fn kinds() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    for v in aks_api::VERSIONS {
        for kind in v.kinds {
            if !out.contains(&(v.kube_group, kind)) {
                out.push((v.kube_group, kind));
            }
        }
    }
    out
}

/// The registry entry of `kind` in `version` of its group.
pub fn kind_info(version: &VersionInfo, kind: &str) -> Option<&'static KindInfo> {
    aks_api::KINDS
        .iter()
        .find(|k| k.group == version.group && k.version == version.version && k.kind == kind)
}

/// Looks `kind` up (case-insensitively) among `candidates`, (Kubernetes API group, kind) pairs: in `group` when
/// given (a Kubernetes API group), else in the one group that has the kind. Errors: an unknown kind (the known ones
/// are listed, by group), or a kind in several groups without a group (the groups are named, and `flag` is the
/// option that picks one).
pub fn find_kind<'a>(
    candidates: &[(&'a str, &'a str)],
    kind: &str,
    group: Option<&str>,
    flag: &str,
) -> Result<(&'a str, &'a str), Failure> {
    let mut matches: Vec<(&'a str, &'a str)> = Vec::new();
    for &(g, k) in candidates {
        if k.eq_ignore_ascii_case(kind) && group.is_none_or(|want| want == g) && !matches.contains(&(g, k)) {
            matches.push((g, k));
        }
    }
    match matches.as_slice() {
        [one] => Ok(*one),
        [] => {
            let mut by_group: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for &(g, k) in candidates {
                if group.is_none_or(|want| want == g) {
                    let kinds = by_group.entry(g).or_default();
                    if !kinds.contains(&k) {
                        kinds.push(k);
                    }
                }
            }
            let known = by_group
                .iter()
                .map(|(g, kinds)| {
                    let mut kinds = kinds.clone();
                    kinds.sort_unstable();
                    format!("{g}: {}", kinds.join(", "))
                })
                .collect::<Vec<_>>()
                .join("; ");
            Err(Failure(match group {
                Some(g) => format!("unknown kind `{kind}` in {g}; known kinds: {known}"),
                None => format!("unknown kind `{kind}`; known kinds: {known}"),
            }))
        }
        several => {
            let groups: Vec<&str> = several.iter().map(|(g, _)| *g).collect();
            Err(Failure(format!(
                "kind `{kind}` is in several API groups: {}; choose one with {flag}",
                groups.join(", ")
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANDIDATES: &[(&str, &str)] = &[
        ("a.example", "Widget"),
        ("a.example", "Gadget"),
        ("b.example", "Widget"),
        ("b.example", "Gizmo"),
        ("a.example", "Gadget"),
    ];

    fn message(r: Result<(&str, &str), Failure>) -> String {
        match r {
            Ok(found) => panic!("found {found:?}"),
            Err(Failure(m)) => m,
        }
    }

    #[test]
    fn a_kind_in_one_group_needs_no_group() {
        assert_eq!(
            find_kind(CANDIDATES, "gadget", None, "--group").ok(),
            Some(("a.example", "Gadget"))
        );
        assert_eq!(
            find_kind(CANDIDATES, "Gizmo", Some("b.example"), "--group").ok(),
            Some(("b.example", "Gizmo"))
        );
    }

    #[test]
    fn a_kind_in_several_groups_needs_one_and_names_them() {
        let m = message(find_kind(CANDIDATES, "widget", None, "--group"));
        assert!(
            m.contains("kind `widget` is in several API groups: a.example, b.example"),
            "{m}"
        );
        assert!(m.contains("--group"), "{m}");
        assert_eq!(
            find_kind(CANDIDATES, "Widget", Some("b.example"), "--group").ok(),
            Some(("b.example", "Widget"))
        );
    }

    #[test]
    fn an_unknown_kind_lists_the_known_ones_by_group() {
        let m = message(find_kind(CANDIDATES, "Thing", None, "--group"));
        assert_eq!(
            m,
            "unknown kind `Thing`; known kinds: a.example: Gadget, Widget; b.example: Gizmo, Widget"
        );
        let m = message(find_kind(CANDIDATES, "Gadget", Some("b.example"), "--group"));
        assert_eq!(
            m,
            "unknown kind `Gadget` in b.example; known kinds: b.example: Gizmo, Widget"
        );
    }

    /// The real registry: every group is found by either name, every kind of it in it, each version of a group
    /// only in that group.
    #[test]
    fn every_group_of_the_registry() {
        let groups = groups();
        assert!(!groups.is_empty());
        for g in &groups {
            assert_eq!(group(g.key).ok(), Some(*g));
            assert_eq!(group(g.kube).ok(), Some(*g));
            assert_eq!(group_of_kube(g.kube), Some(*g));
            for v in versions(*g) {
                assert_eq!(v.kube_group, g.kube);
                assert_eq!(version_of(*g, v.version).ok().map(|x| x.version), Some(v.version));
                assert_eq!(
                    api_version(&format!("{}/{}", g.kube, v.version)).map(|x| (x.group, x.version)),
                    Some((g.key, v.version))
                );
                for kind in v.kinds {
                    assert!(kind_info(v, kind).is_some(), "{}/{} {kind}", g.kube, v.version);
                    assert_eq!(
                        find_kind(&kinds(), kind, Some(g.kube), "--group").ok(),
                        Some((g.kube, *kind))
                    );
                }
            }
        }
        assert!(group("no-such-group").is_err());
    }
}
