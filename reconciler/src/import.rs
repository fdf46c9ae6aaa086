//! Adoption: existing Azure resources → custom resources that, applied, reconcile with zero differences
//! (`armctl import <ARM ID>...`).
//!
//! Each ID is matched against the generated registry ([`aks_api::KINDS`]) by its resource type chain, read with
//! a GET, and turned into a custom resource by the generated ARM → custom resource conversion, so it carries
//! every writable property Azure reports. The owner is set from the ID: `spec.owner.armId` (the resource group)
//! for top-level kinds, `spec.owner.name` (the parent's custom resource name) for child kinds. With `children`,
//! the child resources of every imported resource (e.g. a cluster's agent pools) are listed and imported too.
//!
//! Names: `metadata.name` is the Azure name made a valid Kubernetes name (lowercase, other characters → `-`);
//! `spec.azureName` keeps the Azure name. Secrets are not readable from Azure: secret references stay unset
//! (not compared, so no difference) and the status is left out (the reconciler writes it).

use armgen_runtime::KindInfo;
use serde_json::Value;

use crate::arm::{ArmClient, ArmError};

/// Why an import failed; names the ID.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{id}: {message}")]
    Id { id: String, message: String },
    #[error(transparent)]
    Arm(#[from] ArmError),
}

/// A parsed ARM resource ID: `/subscriptions/{s}/resourceGroups/{rg}/providers/{ns}/{type}/{name}[/{type}/{name}]…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedId {
    pub subscription: String,
    pub resource_group: String,
    /// `Microsoft.ContainerService/managedClusters/agentPools`.
    pub arm_type: String,
    /// The names along the chain, outermost first.
    pub names: Vec<String>,
}

impl ParsedId {
    pub fn parse(id: &str) -> Result<ParsedId, String> {
        let segments: Vec<&str> = id.trim_matches('/').split('/').collect();
        let bad = || {
            "not a resource ID of the form /subscriptions/{id}/resourceGroups/{group}/providers/{namespace}/{type}/{name}[/{type}/{name}]".to_string()
        };
        if segments.len() < 8
            || !segments[0].eq_ignore_ascii_case("subscriptions")
            || !segments[2].eq_ignore_ascii_case("resourceGroups")
            || !segments[4].eq_ignore_ascii_case("providers")
            || segments.len() % 2 != 0
            || segments.iter().any(|s| s.is_empty())
        {
            return Err(bad());
        }
        let mut types = vec![segments[5].to_string()];
        let mut names = Vec::new();
        for pair in segments[6..].chunks(2) {
            types.push(pair[0].to_string());
            names.push(pair[1].to_string());
        }
        Ok(ParsedId {
            subscription: segments[1].to_string(),
            resource_group: segments[3].to_string(),
            arm_type: types.join("/"),
            names,
        })
    }
}

/// The kind of `arm_type` (case-insensitive) at Kubernetes `version`, or without one at the newest version that
/// has it.
pub fn kind_for(arm_type: &str, version: Option<&str>) -> Option<&'static KindInfo> {
    armgen_runtime::newest(aks_api::KINDS, |k| {
        version.is_none_or(|v| k.version == v) && k.arm.arm_type.eq_ignore_ascii_case(arm_type)
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
                .filter(|k| k.owner_kind == Some(info.kind))
                .map(|k| k.kind)
                .collect();
            let child_infos = child_kinds.into_iter().filter_map(|kind| {
                armgen_runtime::newest(aks_api::KINDS, |k| {
                    k.kind == kind && k.owner_kind == Some(info.kind) && version.is_none_or(|v| k.version == v)
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
    let owner = match info.owner_kind {
        None => serde_json::json!({
            "armId": format!("/subscriptions/{}/resourceGroups/{}", id.subscription, id.resource_group)
        }),
        Some(_) => {
            let parent = id
                .names
                .len()
                .checked_sub(2)
                .and_then(|i| id.names.get(i))
                .ok_or("a child ID without a parent")?;
            serde_json::json!({ "name": kube_name(parent) })
        }
    };
    spec.insert("owner".into(), owner);
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
        for bad in [
            "",
            "/subscriptions/s",
            "/subscriptions/s/resourceGroups/rg",
            "/subscriptions/s/resourceGroups/rg/providers/X/t",
        ] {
            assert!(ParsedId::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn kube_names() {
        assert_eq!(kube_name("Prod_Cluster-1"), "prod-cluster-1");
        assert_eq!(kube_name("__"), "imported");
    }
}
