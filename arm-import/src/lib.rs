//! Adoption: existing Azure resources → custom resources that, applied, reconcile with zero differences
//! (`armctl import <ARM ID>...`).
//!
//! Each ID is matched against the generated registry ([`aks_api::KINDS`], every API group) by its resource type
//! chain, read with a GET, and turned into a custom resource by the generated ARM → custom resource conversion, so
//! it carries every writable property Azure reports. The owner is set from the ID, by the kind's scope
//! (`KindInfo::arm.scope`): `spec.owner.armId` (the resource group) for top-level kinds in a resource group,
//! `spec.owner.name` (the parent's custom resource name) for child kinds, `spec.owner.armId` (the scope's ID: a
//! subscription, a resource group or any resource) for extension resources (`<scope>/providers/…/roleAssignments/
//! <GUID>`), and no owner for kinds outside resource groups (a resource group itself,
//! `/subscriptions/{s}/resourceGroups/{name}`). With `children`, the child resources of every imported resource
//! (e.g. a cluster's agent pools) are listed and imported too.
//!
//! Names: `metadata.name` is the Azure name made a valid Kubernetes name (lowercase, other characters → `-`);
//! `spec.azureName` keeps the Azure name. Secrets are not readable from Azure: secret references stay unset
//! (not compared, so no difference) and the status is left out (the reconciler writes it).
//!
//! **Why a crate of its own.** Import needs the generated registry and conversions (`aks-api`) and the ARM client
//! (`arm-client`), nothing of the reconciler: in the reconciler it made `armctl` depend on the whole controller
//! (kube-runtime, the webhook server, leader election) to read a few resources, and in `arm-client` it would make
//! the HTTP client depend on the generated crate, which the client does not need. So it sits on top of both, and
//! `armctl` and the reconciler (which re-exports it as `aks_reconciler::import`) depend on it.
//!
//! It may depend on `arm-client`, `aks-api` and `armgen-runtime` only (and serde_json, thiserror): never on the
//! reconciler, `kube` or the generator.

use armgen_runtime::KindInfo;
use serde_json::Value;

use arm_client::arm::{ArmClient, ArmError};

/// Why an import failed; names the ID.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{id}: {message}")]
    Id { id: String, message: String },
    #[error(transparent)]
    Arm(#[from] ArmError),
}

/// The ARM type of resource groups, whose IDs have no `providers` segment.
const RESOURCE_GROUP_TYPE: &str = "Microsoft.Resources/resourceGroups";

/// A parsed ARM resource ID: `<scope>/providers/{namespace}/{type}/{name}[/{type}/{name}]…`, where the scope is
/// everything before the last `providers` segment (`/subscriptions/{s}/resourceGroups/{rg}` for a resource in a
/// resource group, `/subscriptions/{s}` for one in a subscription, any resource ID for an extension resource), or
/// a resource group's `/subscriptions/{s}/resourceGroups/{name}` (scope `/subscriptions/{s}`). Which of these the
/// ID must be follows from its kind ([`scope_error`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedId {
    pub subscription: String,
    /// The resource group the ID is in (a resource group's own name for a resource group ID), if any.
    pub resource_group: Option<String>,
    /// The ID before the last `providers` segment, as written (`/subscriptions/s1/resourceGroups/rg1`); for a
    /// resource group ID, `/subscriptions/{s}`.
    pub scope: String,
    /// `Microsoft.ContainerService/managedClusters/agentPools`.
    pub arm_type: String,
    /// The names along the chain after the scope, outermost first.
    pub names: Vec<String>,
}

impl ParsedId {
    pub fn parse(id: &str) -> Result<ParsedId, String> {
        let segments: Vec<&str> = id.trim_matches('/').split('/').collect();
        let bad = || {
            "not a resource ID of the form /subscriptions/{id}/resourceGroups/{group}[/providers/{namespace}/{type}/{name}[/{type}/{name}]…], /subscriptions/{id}/providers/{namespace}/{type}/{name}…, or <resource ID>/providers/{namespace}/{type}/{name} (an extension resource)".to_string()
        };
        if segments.len() < 4
            || !segments[0].eq_ignore_ascii_case("subscriptions")
            || segments.len() % 2 != 0
            || segments.iter().any(|s| s.is_empty())
        {
            return Err(bad());
        }
        let subscription = segments[1].to_string();
        let in_group = segments[2].eq_ignore_ascii_case("resourceGroups");
        let resource_group = in_group.then(|| segments[3].to_string());
        // A resource group itself.
        if segments.len() == 4 {
            if !in_group {
                return Err(bad());
            }
            return Ok(ParsedId {
                subscription: subscription.clone(),
                resource_group,
                scope: format!("/{}/{}", segments[0], segments[1]),
                arm_type: RESOURCE_GROUP_TYPE.to_string(),
                names: vec![segments[3].to_string()],
            });
        }
        // The last `providers` that starts a type/name chain: at an even index (what precedes it is an ID of
        // type/name pairs), followed by a namespace and at least one type/name pair.
        let Some(p) = (2..segments.len())
            .step_by(2)
            .rev()
            .find(|&i| segments[i].eq_ignore_ascii_case("providers") && segments.len() - i >= 4)
        else {
            return Err(bad());
        };
        let mut types = vec![segments[p + 1].to_string()];
        let mut names = Vec::new();
        for pair in segments[p + 2..].chunks(2) {
            types.push(pair[0].to_string());
            names.push(pair[1].to_string());
        }
        Ok(ParsedId {
            subscription,
            resource_group,
            scope: format!("/{}", segments[..p].join("/")),
            arm_type: types.join("/"),
            names,
        })
    }

    /// Whether the scope is exactly `/subscriptions/{s}/resourceGroups/{rg}`.
    fn scope_is_resource_group(&self) -> bool {
        self.scope.trim_matches('/').split('/').count() == 4 && self.resource_group.is_some()
    }

    /// Whether the scope is exactly `/subscriptions/{s}`.
    fn scope_is_subscription(&self) -> bool {
        self.scope.trim_matches('/').split('/').count() == 2
    }
}

/// Why the ID does not have the shape `info`'s scope gives its IDs, if it does not: a resource in a resource group
/// (or a child of one) right under `/subscriptions/{s}/resourceGroups/{rg}`, a subscription-level resource (and a
/// resource group) right under `/subscriptions/{s}`; an extension resource under any resource ID.
pub fn scope_error(info: &KindInfo, id: &ParsedId) -> Option<String> {
    use armgen_runtime::Scope;
    let ok = match info.arm.scope {
        Scope::ResourceGroup => id.scope_is_resource_group(),
        Scope::Subscription => id.scope_is_subscription(),
        Scope::Extension => true,
        Scope::Tenant => false,
    };
    (!ok).then(|| {
        format!(
            "{} is a {:?}-scoped kind ({}), but the ID's scope is {}",
            info.kind, info.arm.scope, info.arm.path, id.scope
        )
    })
}

/// The kind of `arm_type` (case-insensitive) at Kubernetes `version` of its group, or without one at the newest
/// served version that has it (`served: false` versions are never a default).
pub fn kind_for(arm_type: &str, version: Option<&str>) -> Option<&'static KindInfo> {
    armgen_runtime::newest(aks_api::KINDS, |k| {
        version.map_or(k.served, |v| k.version == v) && k.arm.arm_type.eq_ignore_ascii_case(arm_type)
    })
}

/// A valid Kubernetes object name (RFC 1123 subdomain) for an Azure name.
pub fn kube_name(azure_name: &str) -> String {
    let mut out: String = azure_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    out = out.trim_matches(|c| c == '-' || c == '.').to_string();
    out.truncate(253);
    if out.is_empty() { "imported".to_string() } else { out }
}

/// Imports the resources `ids` (and, with `children`, their child resources) as custom resources of Kubernetes
/// `version` (without one, each kind at the newest version that has it) in `namespace`, parents before children.
pub async fn import(
    arm: &ArmClient,
    bearer: Option<&str>,
    ids: &[String],
    version: Option<&str>,
    namespace: Option<&str>,
    children: bool,
) -> Result<Vec<Value>, ImportError> {
    let mut out = Vec::new();
    let mut queue: Vec<String> = ids.to_vec();
    let mut seen = std::collections::BTreeSet::new();
    while !queue.is_empty() {
        let id = queue.remove(0);
        if !seen.insert(id.to_ascii_lowercase()) {
            continue;
        }
        let parsed = ParsedId::parse(&id).map_err(|message| ImportError::Id {
            id: id.clone(),
            message,
        })?;
        let info = kind_for(&parsed.arm_type, version).ok_or_else(|| {
            let kinds: std::collections::BTreeSet<&str> = aks_api::KINDS
                .iter()
                .filter(|k| version.is_none_or(|v| k.version == v))
                .map(|k| k.kind)
                .collect();
            let kinds = kinds.into_iter().collect::<Vec<_>>().join(", ");
            ImportError::Id {
                id: id.clone(),
                message: match version {
                    Some(version) => format!(
                        "{} has no custom resource in {version}; kinds: {kinds}",
                        parsed.arm_type
                    ),
                    None => format!(
                        "{} has no custom resource in any version; kinds: {kinds}",
                        parsed.arm_type
                    ),
                },
            }
        })?;
        if let Some(message) = scope_error(info, &parsed) {
            return Err(ImportError::Id {
                id: id.clone(),
                message,
            });
        }
        let body = arm
            .get(&id, info.arm.api_version, bearer)
            .await?
            .ok_or_else(|| ImportError::Id {
                id: id.clone(),
                message: "not found".into(),
            })?;
        out.push(
            custom_resource(info, &parsed, &body, namespace).map_err(|message| ImportError::Id {
                id: id.clone(),
                message,
            })?,
        );
        if children {
            // Each child kind at the version asked for, or at its own newest version.
            let child_kinds: std::collections::BTreeSet<&str> = aks_api::KINDS
                .iter()
                .filter(|k| k.group == info.group && k.owner_kind == Some(info.kind))
                .map(|k| k.kind)
                .collect();
            let child_infos = child_kinds.into_iter().filter_map(|kind| {
                armgen_runtime::newest(aks_api::KINDS, |k| {
                    k.group == info.group
                        && k.kind == kind
                        && k.owner_kind == Some(info.kind)
                        && version.map_or(k.served, |v| k.version == v)
                })
            });
            for child in child_infos {
                let segment = child.arm.arm_type.rsplit('/').next().unwrap_or_default();
                let list_id = format!("{}/{segment}", id.trim_end_matches('/'));
                let Some(list) = arm.get(&list_id, child.arm.api_version, bearer).await? else {
                    continue;
                };
                for item in list.get("value").and_then(Value::as_array).into_iter().flatten() {
                    match item.get("id").and_then(Value::as_str) {
                        Some(child_id) => queue.push(child_id.to_string()),
                        None => {
                            if let Some(name) = item.get("name").and_then(Value::as_str) {
                                queue.push(format!("{list_id}/{name}"));
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

fn custom_resource(info: &KindInfo, id: &ParsedId, body: &Value, namespace: Option<&str>) -> Result<Value, String> {
    let azure_name = id.names.last().cloned().unwrap_or_default();
    let name = kube_name(&azure_name);
    let text = body.to_string();
    let mut cr = match aks_api::import_custom_resource(info.group, info.version, info.kind, &text, &name, namespace) {
        Some(Ok(cr)) => cr,
        Some(Err(e)) => return Err(format!("not a valid {} body: {e}", info.kind)),
        None => return Err(format!("{} is not compiled in", info.kind)),
    };
    let obj = cr.as_object_mut().ok_or("the custom resource is not an object")?;
    obj.remove("status");
    let spec = obj
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .ok_or("the custom resource has no spec")?;
    spec.insert("azureName".into(), Value::String(azure_name));
    use armgen_runtime::Scope;
    let owner = match (info.owner_kind, info.arm.scope) {
        (Some(_), _) => {
            let parent = id
                .names
                .len()
                .checked_sub(2)
                .and_then(|i| id.names.get(i))
                .ok_or("a child ID without a parent")?;
            Some(serde_json::json!({ "name": kube_name(parent) }))
        }
        (None, Scope::ResourceGroup) => {
            let group = id.resource_group.as_deref().ok_or("not in a resource group")?;
            Some(serde_json::json!({
                "armId": format!("/subscriptions/{}/resourceGroups/{group}", id.subscription)
            }))
        }
        // The resource this one extends, by its ID as written.
        (None, Scope::Extension) => Some(serde_json::json!({ "armId": id.scope })),
        // Not in a resource group: no spec.owner at all.
        (None, Scope::Subscription | Scope::Tenant) => None,
    };
    if let Some(owner) = owner {
        spec.insert("owner".into(), owner);
    }
    Ok(cr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_and_match_kinds() {
        let id = ParsedId::parse(
            "/subscriptions/s1/resourceGroups/RG/providers/Microsoft.ContainerService/managedClusters/Prod/agentPools/gpu",
        )
        .expect("parses");
        assert_eq!(id.arm_type, "Microsoft.ContainerService/managedClusters/agentPools");
        assert_eq!(id.names, ["Prod", "gpu"]);
        assert_eq!(
            kind_for(&id.arm_type.to_lowercase(), Some("v2alpha1")).map(|k| k.kind),
            Some("AgentPool")
        );
        // Without a version: the newest version that has the kind.
        let newest = kind_for(&id.arm_type, None).expect("a version has AgentPool");
        for other in aks_api::KINDS.iter().filter(|k| k.kind == "AgentPool") {
            assert!(
                other.arm.api_version <= newest.arm.api_version,
                "{} is newer",
                other.version
            );
        }
        assert_eq!(id.scope, "/subscriptions/s1/resourceGroups/RG");
        assert_eq!(id.resource_group.as_deref(), Some("RG"));
        for bad in [
            "",
            "/subscriptions/s",
            "/subscriptions/s/providers",
            "/subscriptions/s/resourceGroups/rg/providers/X/t",
            "/subscriptions/s/resourceGroups/rg/providers/X",
            "/resourceGroups/rg/subscriptions/s",
        ] {
            assert!(ParsedId::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ids_of_every_scope() {
        use armgen_runtime::Scope;
        // A resource group: no providers segment, scope the subscription.
        let id = ParsedId::parse("/subscriptions/s1/resourceGroups/Fleet-RG").expect("parses");
        assert_eq!(id.arm_type, RESOURCE_GROUP_TYPE);
        assert_eq!(id.names, ["Fleet-RG"]);
        assert_eq!(id.scope, "/subscriptions/s1");
        let info = kind_for(&id.arm_type, None).expect("a kind for resource groups");
        assert_eq!(info.arm.scope, Scope::Subscription);
        assert_eq!(scope_error(info, &id), None);
        // Extension resources at a subscription, a resource group, a resource and a child resource.
        for scope in [
            "/subscriptions/s1",
            "/subscriptions/s1/resourceGroups/rg1",
            "/subscriptions/s1/resourceGroups/rg1/providers/Microsoft.ContainerService/managedClusters/Prod",
            "/subscriptions/s1/resourceGroups/rg1/providers/Microsoft.Network/virtualNetworks/v/subnets/s",
        ] {
            let guid = "0b4c3e6d-1f9a-4d2e-9c1b-5a7e8f901234";
            let id = ParsedId::parse(&format!(
                "{scope}/providers/Microsoft.Authorization/roleAssignments/{guid}"
            ))
            .expect("parses");
            assert_eq!(id.arm_type, "Microsoft.Authorization/roleAssignments", "{scope}");
            assert_eq!(id.names, [guid]);
            assert_eq!(id.scope, scope);
            let info = kind_for(&id.arm_type, None).expect("a kind for role assignments");
            assert_eq!(info.arm.scope, Scope::Extension);
            assert_eq!(scope_error(info, &id), None);
        }
        // A kind of a resource group, at another scope, is refused.
        let id = ParsedId::parse("/subscriptions/s1/providers/Microsoft.ContainerService/managedClusters/x")
            .expect("parses");
        let info = kind_for(&id.arm_type, None).expect("ManagedCluster");
        assert!(scope_error(info, &id).is_some());
    }

    #[test]
    fn kube_names() {
        assert_eq!(kube_name("Prod_Cluster-1"), "prod-cluster-1");
        assert_eq!(kube_name("__"), "imported");
    }
}

#[cfg(test)]
mod architecture {
    //! What the crate docs say it may depend on, checked against its manifest.

    #[test]
    fn depends_on_the_client_and_the_generated_crate_only() {
        let manifest = include_str!("../Cargo.toml");
        let section = manifest.split("\n[dependencies]\n").nth(1).unwrap_or_default();
        let section = section.split("\n[").next().unwrap_or_default();
        let deps: Vec<&str> = section
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .filter_map(|line| line.split(['=', '.', ' ']).next())
            .collect();
        assert_eq!(
            deps,
            ["arm-client", "aks-api", "armgen-runtime", "serde_json", "thiserror"],
            "arm-import may depend on arm-client, aks-api and armgen-runtime (and serde_json, thiserror) only"
        );
    }
}
