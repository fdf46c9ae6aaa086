//! Pass **emit RBAC**: the `ClusterRole` a controller of the generated custom resources needs on them, from the
//! CRDs of the generation, so that a new kind (a new version of the specs, a new group) is granted as soon as it
//! is generated.
//!
//! Layout: `rbac/role.yaml` and `rbac/kustomization.yaml` in the generated crate's folder, beside `crds/`; a
//! deployment composes the folder with kustomize (`config/rbac` references it, as `config/crd` references
//! `crds/`). Why there and not `config/rbac/role.yaml` directly: the generator writes, and `armgen check`
//! compares, one output folder; a `build.rs` user gets the same files in its `OUT_DIR`; and what the deployment
//! adds by hand (the binding, the reconciler's own Secrets/ConfigMaps/events/Leases rules) stays in `config/`
//! beside what it is about.
//!
//! The role, `<crateName>-custom-resources`, grants per Kubernetes API group, for every kind with a status
//! subresource (the template kinds have none and are not reconciled):
//!
//! | resources | verbs |
//! | --- | --- |
//! | `<plural>` | `get`, `list`, `watch`, `patch`, `update` |
//! | `<plural>/status` | `get`, `patch`, `update` |
//! | `<plural>/finalizers` | `update` |
//!
//! No wildcards, no `create` or `delete` (the reconciler never creates or deletes custom resources).
//!
//! Beside it, `rbac/actions.yaml`: for users, one `ClusterRole` per action kind, `<crateName>-<plural>-runner`
//! (`create`, `get`, `list`, `watch`, `delete` on the action objects, `get` on their status), to bind in a tenant's
//! namespace with a `RoleBinding`: the right to stop a cluster or rotate its certificates is the right to create
//! that one kind, and needs no right on the cluster itself (the reconciler checks that the target is a custom
//! resource of the same namespace). Not aggregated into the built-in `edit`/`admin` roles: who may run which action
//! is the cluster administrator's choice.
//!
//! And `rbac/cluster-api.yaml`, when some kind implements a Cluster API contract: the role Cluster API's manager
//! aggregates to create, patch and delete those objects and read their templates.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::crd::Crd;

/// The folder of the RBAC manifests in the generated crate.
pub const RBAC_DIR: &str = "rbac";

/// The name of the generated `ClusterRole` for crate `crate_name`.
pub fn role_name(crate_name: &str) -> String {
    format!("{crate_name}-custom-resources")
}

/// `rbac/role.yaml` and `rbac/kustomization.yaml` for the CRDs of a generation; nothing when no CRD is
/// reconciled.
pub fn files(crate_name: &str, crds: &[Crd]) -> BTreeMap<PathBuf, String> {
    let mut plurals: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut sources = BTreeSet::new();
    for crd in crds.iter().filter(|c| reconciled(c)) {
        plurals
            .entry(crd.group.as_str())
            .or_default()
            .insert(crd.plural.as_str());
        sources.extend(crd.sources.iter().cloned());
    }
    let mut files = BTreeMap::new();
    if plurals.is_empty() {
        return files;
    }
    let sources: Vec<String> = sources.into_iter().collect();
    let head = super::output::header("#", &sources, None);
    let mut role = head.clone();
    role.push_str(&format!(
        "# What a controller of every reconciled custom resource kind of {crate_name} needs on them, and no more:\n\
         # read and watch them, write their spec (finalizers, annotations) and status. The template kinds are not\n\
         # reconciled and not granted. Generated from the CRDs (crds/).\n"
    ));
    role.push_str(&format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {}\nrules:\n",
        role_name(crate_name)
    ));
    for (group, plurals) in &plurals {
        let rule = |suffix: &str, verbs: &[&str]| {
            let mut out = format!("- apiGroups:\n  - {group}\n  resources:\n");
            for p in plurals {
                out.push_str(&format!("  - {p}{suffix}\n"));
            }
            out.push_str("  verbs:\n");
            for v in verbs {
                out.push_str(&format!("  - {v}\n"));
            }
            out
        };
        role.push_str(&rule("", &["get", "list", "watch", "patch", "update"]));
        role.push_str(&rule("/status", &["get", "patch", "update"]));
        role.push_str(&rule("/finalizers", &["update"]));
    }
    let mut kustomization = head.clone();
    kustomization
        .push_str("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- role.yaml\n");
    let runners = action_roles(crate_name, crds);
    if !runners.is_empty() {
        kustomization.push_str("- actions.yaml\n");
        let mut text = head;
        text.push_str(
            "# For users: per action kind, the right to run that action (create its objects) and read their outcome.\n\
             # Bind one in a namespace with a RoleBinding; it gives no right on the target resource itself.\n",
        );
        text.push_str(&runners);
        files.insert(PathBuf::from(RBAC_DIR).join("actions.yaml"), text);
    }
    files.insert(PathBuf::from(RBAC_DIR).join("role.yaml"), role);
    files.insert(PathBuf::from(RBAC_DIR).join("kustomization.yaml"), kustomization);
    if let Some(role) = cluster_api_role(crate_name, crds) {
        files.insert(PathBuf::from(RBAC_DIR).join("cluster-api.yaml"), role);
    }
    files
}

/// The contract label of a CRD whose kind implements a Cluster API contract (`crd::build_crd`).
const CONTRACT_LABEL: &str = "cluster.x-k8s.io/v1beta2";

/// `rbac/cluster-api.yaml`: what Cluster API's controllers need on the kinds implementing its contracts (and their
/// templates), as a `ClusterRole` its manager aggregates (`cluster.x-k8s.io/aggregate-to-manager`): the topology
/// controller creates, patches and deletes the objects and reads and owns the templates. Not in the folder's
/// kustomization: an installation with Cluster API adds it (`config/cluster-api`). `None` when no CRD has the label.
fn cluster_api_role(crate_name: &str, crds: &[Crd]) -> Option<String> {
    let mut objects: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut templates: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut sources = BTreeSet::new();
    for crd in crds {
        if crd
            .manifest
            .pointer("/metadata/labels")
            .and_then(|l| l.get(CONTRACT_LABEL))
            .is_none()
        {
            continue;
        }
        let into = if reconciled(crd) { &mut objects } else { &mut templates };
        into.entry(crd.group.as_str()).or_default().insert(crd.plural.as_str());
        sources.extend(crd.sources.iter().cloned());
    }
    if objects.is_empty() {
        return None;
    }
    let sources: Vec<String> = sources.into_iter().collect();
    let mut out = super::output::header("#", &sources, None);
    out.push_str(
        "# For an installation with Cluster API (config/cluster-api): what its controllers need on the kinds that\n\
         # implement its contracts (the CRDs labelled cluster.x-k8s.io/v1beta2) and on their templates. Its manager\n\
         # aggregates this role by its label. Generated from the CRDs (crds/).\n",
    );
    out.push_str(&format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {crate_name}-cluster-api\n  \
         labels:\n    cluster.x-k8s.io/aggregate-to-manager: \"true\"\nrules:\n"
    ));
    let rule = |group: &str, plurals: &BTreeSet<&str>, verbs: &[&str]| {
        let mut r = format!("- apiGroups:\n  - {group}\n  resources:\n");
        for p in plurals {
            r.push_str(&format!("  - {p}\n"));
        }
        r.push_str("  verbs:\n");
        for v in verbs {
            r.push_str(&format!("  - {v}\n"));
        }
        r
    };
    for (group, plurals) in &objects {
        out.push_str(&rule(
            group,
            plurals,
            &["get", "list", "watch", "create", "patch", "update", "delete"],
        ));
    }
    for (group, plurals) in &templates {
        out.push_str(&rule(group, plurals, &["get", "list", "watch", "patch", "update"]));
    }
    Some(out)
}

/// The runner roles of the action kinds among `crds`, as YAML documents (empty when there is none).
fn action_roles(crate_name: &str, crds: &[Crd]) -> String {
    let mut out = String::new();
    for crd in crds {
        let Some(target) = &crd.action_target else { continue };
        let (group, plural, kind) = (&crd.group, &crd.plural, &crd.kind);
        out.push_str(&format!(
            "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {crate_name}-{plural}-runner\n  \
             annotations:\n    armgen.dev/action-kind: {kind}\n    armgen.dev/target-kind: {target}\nrules:\n- apiGroups:\n  - {group}\n  resources:\n  - {plural}\n  \
             verbs:\n  - create\n  - get\n  - list\n  - watch\n  - delete\n- apiGroups:\n  - {group}\n  resources:\n  - {plural}/status\n  \
             verbs:\n  - get\n"
        ));
    }
    out
}

/// Whether the reconciler serves the CRD's kind: it has a status subresource (template kinds have none).
fn reconciled(crd: &Crd) -> bool {
    crd.manifest
        .pointer("/spec/versions")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|versions| versions.iter().any(|v| v.pointer("/subresources/status").is_some()))
}
