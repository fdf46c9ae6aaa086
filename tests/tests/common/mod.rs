//! Helpers shared by the workspace tests.

#![allow(dead_code)]

pub mod examples;
pub mod full_spec;

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The spec root, resolved as the generator does. A test that calls this is marked
/// `#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]`: the build script
/// (`tests/build.rs`) sets that `cfg` when the spec root is missing and `CI` is not set. So this runs only when
/// the build found the spec root or `CI` is set, and a missing spec root fails the test, naming the places tried.
pub fn spec_root() -> PathBuf {
    armgen::resolve_spec_root(None, &workspace()).unwrap_or_else(|e| {
        panic!("{e} (CI is set, or the spec root was there when this test was built; see tests/README.md)")
    })
}

/// Validates `instance` (a custom resource as JSON) against a CRD version's `openAPIV3Schema` with a JSON Schema
/// validator, as the API server would with strict field validation (kubectl's default): fields the schema does
/// not declare are errors, except under `x-kubernetes-preserve-unknown-fields`. `nullable: true` admits `null`.
/// CEL rules (`x-kubernetes-validations`) and list-type uniqueness are not checked. Each error names the field
/// as a JSON pointer: `/spec/agentPoolProfiles/0/name: "Pool" does not match "^[a-z][a-z0-9]{0,11}$"`.
pub fn validate(schema: &serde_json::Value, instance: &serde_json::Value) -> Result<(), Vec<String>> {
    let schema = strict_json_schema(schema);
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .build(&schema)
        .map_err(|e| vec![format!("the schema is not a valid JSON Schema: {e}")])?;
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// A CRD schema as a JSON Schema (draft 4) with Kubernetes' semantics: objects with `properties` and without
/// `x-kubernetes-preserve-unknown-fields` reject other fields; `nullable: true` adds `null` to the type.
pub fn strict_json_schema(schema: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match schema {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                let v = match k.as_str() {
                    "properties" => match v {
                        Value::Object(props) => Value::Object(
                            props
                                .iter()
                                .map(|(name, p)| (name.clone(), strict_json_schema(p)))
                                .collect(),
                        ),
                        other => other.clone(),
                    },
                    "items" | "additionalProperties" => strict_json_schema(v),
                    _ => v.clone(),
                };
                out.insert(k.clone(), v);
            }
            let preserve = m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
            if m.contains_key("properties") && !m.contains_key("additionalProperties") && !preserve {
                out.insert("additionalProperties".into(), Value::Bool(false));
            }
            if let (Some(Value::Bool(true)), Some(Value::String(t))) = (m.get("nullable"), m.get("type")) {
                out.insert("type".into(), serde_json::json!([t, "null"]));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// The project's configuration, `azure-arm.yaml`.
pub fn config() -> armgen::Config {
    armgen::Config::load(&workspace().join("azure-arm.yaml")).expect("azure-arm.yaml")
}

/// A configured API group: its name (the registry's `group`, the generated module) and its Kubernetes API group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    pub kube_group: String,
}

/// The one configured group of ARM provider `provider` (e.g. `Microsoft.ContainerService`): for tests of one
/// provider's rules (AKS fixtures), which must not assume that it is the only group.
pub fn group_of_provider(provider: &str) -> Group {
    let config = config();
    let mut groups = config.groups.iter().filter(|(_, g)| g.provider == provider);
    let (name, group) = groups
        .next()
        .unwrap_or_else(|| panic!("no group of provider {provider} in azure-arm.yaml"));
    assert!(groups.next().is_none(), "more than one group of provider {provider}");
    Group {
        name: name.clone(),
        kube_group: group.kube_group(name, &config.output.api_domain),
    }
}

/// The AKS group (provider `Microsoft.ContainerService`).
pub fn aks_group() -> Group {
    group_of_provider("Microsoft.ContainerService")
}

/// The generated registry's versions of `kind` in group `group` (module name, e.g. `containerservice`), in
/// registry order.
pub fn versions_of(group: &str, kind: &str) -> Vec<&'static str> {
    aks_api::KINDS
        .iter()
        .filter(|k| k.group == group && k.kind == kind)
        .map(|k| k.version)
        .collect()
}

/// The storage (hub) version of API group `group` (module name, e.g. `containerservice`), from the generated
/// registry.
pub fn storage_version(group: &str) -> &'static str {
    let mut storage = aks_api::VERSIONS.iter().filter(|v| v.group == group && v.storage);
    let hub = storage
        .next()
        .unwrap_or_else(|| panic!("no storage version of {group} in aks_api::VERSIONS"));
    assert!(storage.next().is_none(), "{group} has more than one storage version");
    hub.version
}

/// Every ordered pair of distinct registry versions of group `group` that both have `kind`.
pub fn version_pairs(group: &str, kind: &str) -> Vec<(&'static str, &'static str)> {
    let versions = versions_of(group, kind);
    versions
        .iter()
        .flat_map(|a| versions.iter().filter(move |b| *b != a).map(move |b| (*a, *b)))
        .collect()
}

/// The generated registry's entry of `kind` in version `version` of group `group` (module name).
pub fn kind_info(group: &str, version: &str, kind: &str) -> &'static armgen_runtime::KindInfo {
    aks_api::KINDS
        .iter()
        .find(|k| k.group == group && k.version == version && k.kind == kind)
        .unwrap_or_else(|| panic!("{group}/{version} {kind}: not in aks_api::KINDS"))
}

/// A `spec.owner` such as a custom resource of `info`'s kind has in a cluster, by where the registry says the kind
/// lives (docs/config.md, "Scopes and names"): a child kind names its parent, a resource-group kind its resource
/// group, an extension kind its scope by ARM ID; a subscription-scoped kind (resource groups) has no owner.
pub fn sample_owner(info: &armgen_runtime::KindInfo) -> Option<serde_json::Value> {
    use armgen_runtime::Scope;
    match (info.owner_kind, info.arm.scope) {
        (Some(_), _) | (None, Scope::ResourceGroup) => Some(serde_json::json!({"name": "parent"})),
        (None, Scope::Extension) => Some(serde_json::json!({
            "armId": "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/parent"
        })),
        (None, Scope::Subscription | Scope::Tenant) => None,
    }
}

/// A route as ARM matches it: without case, every `{parameter}` alike.
pub fn normalize_route(route: &str) -> String {
    route
        .split('/')
        .map(|s| {
            if s.starts_with('{') && s.ends_with('}') {
                "{}".to_string()
            } else {
                s.to_ascii_lowercase()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}
