//! Discovery, so that `kubectl` and other discovery-driven clients work against the fake server: the legacy
//! discovery documents (`/api`, `/api/v1`, `/apis`, `/apis/{group}`, `/apis/{group}/{version}`) for the built-in
//! resources of [`BUILT_IN`] and for every CustomResourceDefinition stored in the server, and an empty OpenAPI v2
//! document (`/openapi/v2`).
//!
//! Decisions:
//!
//! - **Legacy discovery only.** kubectl asks `/api` and `/apis` for aggregated discovery
//!   (`apidiscovery.k8s.io/v2`) first and falls back to the legacy documents when the answer is a plain
//!   `APIVersions`/`APIGroupList`, which is what the server sends whatever the `Accept` header.
//! - **OpenAPI: an empty v2 document, no v3.** `kubectl apply` validates against the server's OpenAPI: it asks
//!   `/openapi/v3` (`404` here, as on servers before 1.27) and then `/openapi/v2` in protobuf. An empty document
//!   (zero bytes are a valid empty protobuf message; `{"swagger": "2.0", …}` for JSON clients) has no schemas, so
//!   kubectl validates nothing on the client side, sends `fieldValidation=Strict` (which the fake server ignores,
//!   like every unknown query parameter) and uses JSON merge patches for custom resources, as it does against a
//!   real server for them. `kubectl explain` has nothing to explain.
//! - **Custom resources are discovered from their CRDs**: every version with `served: true`, plural, singular,
//!   kind, short names, categories, scope and the status subresource as declared. A CRD is discoverable as soon as
//!   it is stored (the server marks it `Established` at once, see [`crd_status`]). Objects of a group that has no
//!   CRD are still served (the fake server is generic) but not discovered.
//! - Versions of a group are ordered as the API server orders them (`v2` before `v1` before `v1beta2` before
//!   `v1beta1` before `v1alpha1`, others last alphabetically); the first one is the preferred version.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::error::ApiError;
use crate::store::{ResourceId, State};

/// The API group of CustomResourceDefinitions.
pub(crate) const CRD_GROUP: &str = "apiextensions.k8s.io";
/// The plural of CustomResourceDefinitions.
pub(crate) const CRD_PLURAL: &str = "customresourcedefinitions";

/// What the server knows about a resource for discovery.
#[derive(Debug, Clone, PartialEq)]
struct Resource {
    group: String,
    version: String,
    plural: String,
    singular: String,
    kind: String,
    namespaced: bool,
    short_names: Vec<String>,
    categories: Vec<String>,
    status: bool,
}

/// A built-in resource: (group, version, plural, kind, namespaced, short names, status subresource).
type BuiltIn = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    &'static [&'static str],
    bool,
);

/// The built-in resources: discovered, and the kinds and plurals the store knows without having seen an object.
/// The fake server serves any resource; these are the ones it announces without a CRD.
const BUILT_IN: &[BuiltIn] = &[
    ("", "v1", "configmaps", "ConfigMap", true, &["cm"], false),
    ("", "v1", "endpoints", "Endpoints", true, &["ep"], false),
    ("", "v1", "events", "Event", true, &["ev"], false),
    ("", "v1", "namespaces", "Namespace", false, &["ns"], true),
    ("", "v1", "nodes", "Node", false, &["no"], true),
    (
        "",
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        true,
        &["pvc"],
        true,
    ),
    ("", "v1", "persistentvolumes", "PersistentVolume", false, &["pv"], true),
    ("", "v1", "pods", "Pod", true, &["po"], true),
    ("", "v1", "secrets", "Secret", true, &[], false),
    ("", "v1", "serviceaccounts", "ServiceAccount", true, &["sa"], false),
    ("", "v1", "services", "Service", true, &["svc"], true),
    ("apps", "v1", "daemonsets", "DaemonSet", true, &["ds"], true),
    ("apps", "v1", "deployments", "Deployment", true, &["deploy"], true),
    ("apps", "v1", "replicasets", "ReplicaSet", true, &["rs"], true),
    ("apps", "v1", "statefulsets", "StatefulSet", true, &["sts"], true),
    ("batch", "v1", "cronjobs", "CronJob", true, &["cj"], true),
    ("batch", "v1", "jobs", "Job", true, &[], true),
    ("coordination.k8s.io", "v1", "leases", "Lease", true, &[], false),
    ("events.k8s.io", "v1", "events", "Event", true, &["ev"], false),
    (
        CRD_GROUP,
        "v1",
        CRD_PLURAL,
        "CustomResourceDefinition",
        false,
        &["crd", "crds"],
        true,
    ),
];

/// The kind of a built-in resource.
pub(crate) fn built_in_kind(group: &str, plural: &str) -> Option<&'static str> {
    BUILT_IN
        .iter()
        .find(|(g, _, p, ..)| *g == group && *p == plural)
        .map(|(_, _, _, kind, ..)| *kind)
}

/// The plural of a built-in kind.
pub(crate) fn built_in_plural(group: &str, kind: &str) -> Option<&'static str> {
    BUILT_IN
        .iter()
        .find(|(g, _, _, k, ..)| *g == group && *k == kind)
        .map(|(_, _, plural, ..)| *plural)
}

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
const STATUS_VERBS: &[&str] = &["get", "patch", "update"];

fn built_in() -> impl Iterator<Item = Resource> {
    BUILT_IN.iter().map(
        |(group, version, plural, kind, namespaced, short_names, status)| Resource {
            group: group.to_string(),
            version: version.to_string(),
            plural: plural.to_string(),
            singular: kind.to_ascii_lowercase(),
            kind: kind.to_string(),
            namespaced: *namespaced,
            short_names: short_names.iter().map(|s| s.to_string()).collect(),
            categories: Vec::new(),
            status: *status,
        },
    )
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// The resources a stored CRD declares, one per served version. A CRD without a group, plural or kind declares
/// none (the server refuses to store such a CRD, see [`validate_crd`]; objects inserted directly may still lack
/// them).
fn from_crd(crd: &Value) -> Vec<Resource> {
    let spec = crd.get("spec");
    let field = |pointer: &str| {
        spec.and_then(|s| s.pointer(pointer))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let (group, plural, kind) = (field("/group"), field("/names/plural"), field("/names/kind"));
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return Vec::new();
    }
    let singular = match field("/names/singular") {
        "" => kind.to_ascii_lowercase(),
        singular => singular.to_string(),
    };
    let versions = spec.and_then(|s| s.get("versions")).and_then(Value::as_array);
    versions
        .into_iter()
        .flatten()
        .filter(|version| version.get("served").and_then(Value::as_bool) != Some(false))
        .filter_map(|version| {
            let name = version.get("name").and_then(Value::as_str).filter(|n| !n.is_empty())?;
            Some(Resource {
                group: group.to_string(),
                version: name.to_string(),
                plural: plural.to_string(),
                singular: singular.clone(),
                kind: kind.to_string(),
                namespaced: field("/scope") != "Cluster",
                short_names: strings(spec.and_then(|s| s.pointer("/names/shortNames"))),
                categories: strings(spec.and_then(|s| s.pointer("/names/categories"))),
                status: version.pointer("/subresources/status").is_some(),
            })
        })
        .collect()
}

/// Every discoverable resource: the built-in ones, then those of the stored CRDs.
fn resources(state: &State) -> Vec<Resource> {
    let crds = crate::store::Filter {
        resource: ResourceId {
            group: CRD_GROUP.to_string(),
            plural: CRD_PLURAL.to_string(),
        },
        namespace: None,
        name: None,
        labels: Default::default(),
        fields: Default::default(),
    };
    let mut all: Vec<Resource> = built_in().collect();
    for (_, crd) in state.list(&crds) {
        for resource in from_crd(crd) {
            // A CRD cannot redefine a built-in resource.
            if !all
                .iter()
                .any(|r| r.group == resource.group && r.version == resource.version && r.plural == resource.plural)
            {
                all.push(resource);
            }
        }
    }
    all
}

/// Kubernetes' version priority: GA before beta before alpha, higher numbers first; others last, alphabetically.
pub(crate) fn compare_versions(a: &str, b: &str) -> Ordering {
    fn key(version: &str) -> (u8, u64, u64, String) {
        let parsed = version.strip_prefix('v').and_then(|rest| {
            let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            let major: u64 = rest[..digits].parse().ok()?;
            match &rest[digits..] {
                "" => Some((0, major, 0)),
                tail => {
                    let (stage, minor) = if let Some(n) = tail.strip_prefix("beta") {
                        (1, n)
                    } else {
                        (2, tail.strip_prefix("alpha")?)
                    };
                    Some((stage, major, minor.parse().ok()?))
                }
            }
        });
        match parsed {
            // Higher numbers first: invert them.
            Some((stage, major, minor)) => (stage, u64::MAX - major, u64::MAX - minor, String::new()),
            None => (3, 0, 0, version.to_string()),
        }
    }
    key(a).cmp(&key(b))
}

/// The groups (core excluded) with their versions in priority order, built-in groups first.
fn groups(resources: &[Resource]) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    let mut custom: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for resource in resources.iter().filter(|r| !r.group.is_empty()) {
        let built_in = BUILT_IN.iter().any(|(group, ..)| *group == resource.group);
        let versions = if built_in {
            match groups.iter_mut().find(|(name, _)| *name == resource.group) {
                Some((_, versions)) => versions,
                None => {
                    groups.push((resource.group.clone(), Vec::new()));
                    match groups.last_mut() {
                        Some((_, versions)) => versions,
                        None => continue,
                    }
                }
            }
        } else {
            custom.entry(resource.group.clone()).or_default()
        };
        if !versions.contains(&resource.version) {
            versions.push(resource.version.clone());
        }
    }
    groups.extend(custom);
    for (_, versions) in &mut groups {
        versions.sort_by(|a, b| compare_versions(a, b));
    }
    groups
}

fn group_json(name: &str, versions: &[String]) -> Value {
    let version = |v: &String| json!({ "groupVersion": format!("{name}/{v}"), "version": v });
    let mut group = json!({
        "name": name,
        "versions": versions.iter().map(version).collect::<Vec<_>>(),
    });
    if let Some(preferred) = versions.first() {
        group["preferredVersion"] = version(preferred);
    }
    group
}

fn resource_list(group_version: &str, resources: &[&Resource]) -> Value {
    let mut entries = Vec::new();
    for resource in resources {
        let mut entry = json!({
            "name": resource.plural,
            "singularName": resource.singular,
            "namespaced": resource.namespaced,
            "kind": resource.kind,
            "verbs": VERBS,
        });
        if !resource.short_names.is_empty() {
            entry["shortNames"] = json!(resource.short_names);
        }
        if !resource.categories.is_empty() {
            entry["categories"] = json!(resource.categories);
        }
        entries.push(entry);
        if resource.status {
            entries.push(json!({
                "name": format!("{}/status", resource.plural),
                "singularName": "",
                "namespaced": resource.namespaced,
                "kind": resource.kind,
                "verbs": STATUS_VERBS,
            }));
        }
    }
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": entries,
    })
}

/// A discovery or OpenAPI answer: JSON, or raw bytes with a content type.
pub(crate) enum Document {
    Json(Value),
    Bytes(&'static str, Vec<u8>),
}

/// The discovery document of a `GET` on `path`, `None` when `path` is not a discovery path. `accept` is the
/// request's `Accept` header (for the OpenAPI v2 encoding).
pub(crate) fn document(state: &State, path: &str, accept: &str) -> Option<Result<Document, ApiError>> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let not_found = || {
        Err(ApiError::new(
            404,
            format!("the server could not find the requested resource ({path})"),
        ))
    };
    let answer = match segments.as_slice() {
        ["api"] => Ok(Document::Json(json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
        }))),
        ["api", "v1"] => {
            let all = resources(state);
            let core: Vec<&Resource> = all.iter().filter(|r| r.group.is_empty()).collect();
            Ok(Document::Json(resource_list("v1", &core)))
        }
        ["apis"] => {
            let groups: Vec<Value> = groups(&resources(state))
                .iter()
                .map(|(name, versions)| group_json(name, versions))
                .collect();
            Ok(Document::Json(json!({
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": groups,
            })))
        }
        ["apis", group] => match groups(&resources(state)).iter().find(|(name, _)| name == group) {
            Some((name, versions)) => {
                let mut document = group_json(name, versions);
                document["kind"] = json!("APIGroup");
                document["apiVersion"] = json!("v1");
                Ok(Document::Json(document))
            }
            None => not_found(),
        },
        ["apis", group, version] => {
            let all = resources(state);
            let matching: Vec<&Resource> = all
                .iter()
                .filter(|r| r.group == *group && r.version == *version)
                .collect();
            if matching.is_empty() {
                not_found()
            } else {
                Ok(Document::Json(resource_list(&format!("{group}/{version}"), &matching)))
            }
        }
        ["openapi", "v2"] => Ok(openapi_v2(accept)),
        ["openapi", ..] => not_found(),
        _ => return None,
    };
    Some(answer)
}

/// An OpenAPI v2 document without paths or definitions: in protobuf (an empty message: zero bytes) when the
/// client asks for it, as kubectl does, else in JSON.
fn openapi_v2(accept: &str) -> Document {
    if accept.contains("protobuf") {
        return Document::Bytes("application/octet-stream", Vec::new());
    }
    Document::Json(json!({
        "swagger": "2.0",
        "info": {"title": "fake-apiserver", "version": "v1.33.0-fake"},
        "paths": {},
        "definitions": {},
    }))
}

/// Refuses a CustomResourceDefinition the API server would refuse in ways that matter to discovery: it needs
/// `spec.group`, `spec.names.plural` and `spec.names.kind`, `spec.scope` `Namespaced` or `Cluster`, at least one
/// version with a name, exactly one `storage: true` version, and the name `<plural>.<group>`.
pub(crate) fn validate_crd(crd: &Value) -> Result<(), String> {
    let spec = crd.get("spec");
    let field = |pointer: &str| {
        spec.and_then(|s| s.pointer(pointer))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let mut problems = Vec::new();
    for (pointer, path) in [
        ("/group", "spec.group"),
        ("/names/plural", "spec.names.plural"),
        ("/names/kind", "spec.names.kind"),
    ] {
        if field(pointer).is_empty() {
            problems.push(format!("{path}: Required value"));
        }
    }
    if !matches!(field("/scope"), "Namespaced" | "Cluster") {
        problems.push(format!(
            "spec.scope: Unsupported value: {:?}: supported values: \"Cluster\", \"Namespaced\"",
            field("/scope")
        ));
    }
    let versions = spec.and_then(|s| s.get("versions")).and_then(Value::as_array);
    match versions {
        Some(versions) if !versions.is_empty() => {
            if versions
                .iter()
                .any(|v| v.get("name").and_then(Value::as_str).is_none_or(str::is_empty))
            {
                problems.push("spec.versions[].name: Required value".into());
            }
            let storage = versions
                .iter()
                .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                .count();
            if storage != 1 {
                problems.push(format!(
                    "spec.versions: Invalid value: must have exactly one version marked as storage version, \
                     found {storage}"
                ));
            }
        }
        _ => problems.push("spec.versions: Invalid value: must have at least one version".into()),
    }
    let expected = format!("{}.{}", field("/names/plural"), field("/group"));
    let name = crd
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name != expected {
        problems.push(format!(
            "metadata.name: Invalid value: {name:?}: must be spec.names.plural+\".\"+spec.group"
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join(", "))
    }
}

/// Checks `status.storedVersions` of a CRD as the API server does: at least one, each in `spec.versions`, and
/// the storage version among them. `storage_required` is false for spec writes (the status is recomputed there,
/// with the storage version added), true for status writes.
pub(crate) fn validate_stored_versions(crd: &Value, storage_required: bool) -> Result<(), String> {
    let stored = strings(crd.pointer("/status/storedVersions"));
    let versions: Vec<&str> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    let storage = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str);
    let mut problems = Vec::new();
    if stored.is_empty() && storage_required {
        problems.push("status.storedVersions: Invalid value: []: must have at least one stored version".to_string());
    }
    for (i, version) in stored.iter().enumerate() {
        if !versions.contains(&version.as_str()) {
            problems.push(format!(
                "status.storedVersions[{i}]: Invalid value: {version:?}: must appear in spec.versions"
            ));
        }
    }
    if storage_required
        && let Some(storage) = storage
        && !stored.iter().any(|v| v == storage)
    {
        problems.push(format!(
            "status.storedVersions: Invalid value: {stored:?}: must have the storage version {storage}"
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join(", "))
    }
}

/// The storage version a CRD declares (`spec.versions[].storage: true`).
pub(crate) fn storage_version(crd: &Value) -> Option<&str> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str)
}

/// The status the API server's CRD controllers give a valid CRD: names accepted, established, and the storage
/// version among the stored versions (keeping those already recorded).
pub(crate) fn crd_status(crd: &Value, previous: Option<&Value>) -> Value {
    let spec = crd.get("spec").cloned().unwrap_or(Value::Null);
    let now = crate::store::now_timestamp();
    let mut accepted = spec.get("names").cloned().unwrap_or_else(|| json!({}));
    if let Some(names) = accepted.as_object_mut() {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        names
            .entry("singular")
            .or_insert_with(|| Value::String(kind.to_ascii_lowercase()));
        names
            .entry("listKind")
            .or_insert_with(|| Value::String(format!("{kind}List")));
    }
    let mut stored = strings(previous.and_then(|status| status.get("storedVersions")));
    let storage = spec
        .get("versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str);
    if let Some(storage) = storage
        && !stored.iter().any(|s| s == storage)
    {
        stored.push(storage.to_string());
    }
    let condition = |kind: &str, reason: &str, message: &str| {
        // Keep the transition time of a condition that was already true.
        let since = previous
            .and_then(|status| status.get("conditions"))
            .and_then(Value::as_array)
            .and_then(|conditions| {
                conditions
                    .iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))
            })
            .filter(|c| c.get("status").and_then(Value::as_str) == Some("True"))
            .and_then(|c| c.get("lastTransitionTime").cloned())
            .unwrap_or_else(|| now.clone());
        json!({
            "type": kind,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastTransitionTime": since,
        })
    };
    json!({
        "acceptedNames": accepted,
        "conditions": [
            condition("NamesAccepted", "NoConflicts", "no conflicts found"),
            condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ],
        "storedVersions": stored,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_in_kubernetes_priority_order() {
        let mut versions = vec![
            "v1alpha1", "v1", "foo", "v2beta1", "v1beta2", "v2", "v1beta1", "v10", "bar",
        ];
        versions.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            versions,
            [
                "v10", "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "bar", "foo"
            ]
        );
    }

    #[test]
    fn crd_validation_names_each_problem() {
        let valid = json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": true, "storage": true}]},
        });
        assert_eq!(validate_crd(&valid), Ok(()));
        let message =
            validate_crd(&json!({"metadata": {"name": "x"}, "spec": {"scope": "Global"}})).expect_err("invalid");
        for expected in [
            "spec.group: Required value",
            "spec.names.plural: Required value",
            "spec.names.kind: Required value",
            "spec.scope: Unsupported value: \"Global\"",
            "spec.versions: Invalid value: must have at least one version",
            "metadata.name: Invalid value: \"x\"",
        ] {
            assert!(message.contains(expected), "{expected} in {message}");
        }
    }
}
