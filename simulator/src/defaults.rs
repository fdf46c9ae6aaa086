//! What the service adds to or removes from a PUT body: a small per-type table.
//!
//! | ARM type | server-set when absent |
//! |---|---|
//! | `managedClusters` | `properties.kubernetesVersion` ([`DEFAULT_KUBERNETES_VERSION`]), `currentKubernetesVersion` (the version, `.0` appended to `major.minor`), `fqdn` (`{dnsPrefix}-{hash}.hcp.{location}.azmk8s.io`, when `dnsPrefix` is set), `nodeResourceGroup` (`MC_{rg}_{name}_{location}`), `powerState.code` `Running`, `agentPoolProfiles[*]`: `orchestratorVersion`, `currentOrchestratorVersion`, `nodeImageVersion`, `powerState`; `identity.principalId`/`tenantId` (type `SystemAssigned`), `identity.userAssignedIdentities[*].principalId`/`clientId`, `identityProfile.kubeletidentity` (with an identity), `oidcIssuerProfile.issuerURL` (when enabled) |
//! | `managedClusters/agentPools` | `orchestratorVersion` (the cluster's), `currentOrchestratorVersion`, `nodeImageVersion`, `powerState.code` `Running` |
//! | `Microsoft.ManagedIdentity/userAssignedIdentities` | `properties.principalId`, `clientId` (stable UUIDs of the ID, the same a cluster using the identity reports), `tenantId` |
//! | `Microsoft.Authorization/roleAssignments` | `properties.scope`: always the scope of the ID (read-only in the spec: "The role assignment scope"); the request's `roleDefinitionId`, `principalId`, `principalType` are kept |
//!
//! Every type whose generated type has `properties.provisioningState` gets it from the simulator (a synchronous
//! PUT, such as a resource group's, `Succeeded` at once), not from this table.
//!
//! Secrets (`x-ms-secret` in the spec) never come back: `managedClusters` `properties.servicePrincipalProfile.secret`,
//! `properties.windowsProfile.adminPassword`, `properties.aadProfile.serverAppSecret`.
//!
//! Server-set IDs are derived from the resource ID, so they stay the same across updates.
//!
//! Reported versions (`REPORTED`): a read-only field that reports what runs follows its writable field only
//! when an operation succeeds. While an update runs (and after it fails) it keeps the version that ran before,
//! as the spec describes `currentKubernetesVersion` ("The version of Kubernetes the Managed Cluster is running")
//! and `currentOrchestratorVersion` ("The version of Kubernetes the Agent Pool is running"), both "exactly equal"
//! to a full `major.minor.patch` request and the full version for a `major.minor` one (here `.0` appended).
//!
//! | ARM type | objects | writable | read-only |
//! |---|---|---|---|
//! | `managedClusters` | `properties` | `kubernetesVersion` | `currentKubernetesVersion` |
//! | `managedClusters` | `properties.agentPoolProfiles[]` | `orchestratorVersion` | `currentOrchestratorVersion` |
//! | `managedClusters/agentPools` | `properties` | `orchestratorVersion` | `currentOrchestratorVersion` |
//!
//! On a create the read-only field is set at once (the defaults above). Items of an array are paired by index
//! when an update keeps the earlier values; pools that the rules mirror as child resources are paired by name
//! instead, through their child resource ([`crate::rules`]).

use armgen_runtime::dotted;
use serde_json::{Map, Value, json};

use crate::registry::subscription_and_group;
use crate::util::stable_uuid;

/// The Kubernetes version a cluster gets when the PUT names none.
pub const DEFAULT_KUBERNETES_VERSION: &str = "1.32.7";
/// The tenant of server-assigned identities when no [`crate::AuthConfig`] names one.
pub const DEFAULT_TENANT_ID: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";

const MANAGED_CLUSTERS: &str = "microsoft.containerservice/managedclusters";
const AGENT_POOLS: &str = "microsoft.containerservice/managedclusters/agentpools";
const ROLE_ASSIGNMENTS: &str = "microsoft.authorization/roleassignments";
const USER_ASSIGNED_IDENTITIES: &str = "microsoft.managedidentity/userassignedidentities";

/// The secret (write-only) properties of each ARM type, as paths of object keys.
const SECRETS: &[(&str, &[&str])] = &[
    (MANAGED_CLUSTERS, &["properties", "servicePrincipalProfile", "secret"]),
    (MANAGED_CLUSTERS, &["properties", "windowsProfile", "adminPassword"]),
    (MANAGED_CLUSTERS, &["properties", "aadProfile", "serverAppSecret"]),
];

/// Read-only version fields that report a writable one once an operation has succeeded: `(ARM type, the objects
/// holding both (an ARM path, `[]` for every array item), writable field, read-only field)`. Source: the spec's
/// descriptions of `currentKubernetesVersion` and `currentOrchestratorVersion` (see the module docs).
pub(crate) const REPORTED: &[(&str, &str, &str, &str)] = &[
    (
        MANAGED_CLUSTERS,
        "properties",
        "kubernetesVersion",
        "currentKubernetesVersion",
    ),
    (
        MANAGED_CLUSTERS,
        "properties.agentPoolProfiles[]",
        "orchestratorVersion",
        "currentOrchestratorVersion",
    ),
    (
        AGENT_POOLS,
        "properties",
        "orchestratorVersion",
        "currentOrchestratorVersion",
    ),
];

/// An update's body keeps the reported versions of the stored one (the operation has not succeeded yet).
pub(crate) fn keep_reported(arm_type: &str, stored: &Value, body: &mut Value) {
    for (ty, objects, _, reported) in REPORTED {
        if !ty.eq_ignore_ascii_case(arm_type) {
            continue;
        }
        for (at, old) in dotted::select(stored, objects).unwrap_or_default() {
            let Some(value) = old.get(*reported) else { continue };
            if let Some(Value::Object(new)) = body.pointer_mut(&at.pointer()) {
                new.insert((*reported).to_string(), value.clone());
            }
        }
    }
}

/// An operation succeeded: every reported version reports its writable field.
pub(crate) fn settle_reported(arm_type: &str, body: &mut Value) {
    for (ty, objects, writable, reported) in REPORTED {
        if !ty.eq_ignore_ascii_case(arm_type) {
            continue;
        }
        let places: Vec<String> = dotted::select(body, objects)
            .unwrap_or_default()
            .into_iter()
            .map(|(at, _)| at.pointer())
            .collect();
        for at in places {
            if let Some(Value::Object(m)) = body.pointer_mut(&at)
                && let Some(version) = m.get(*writable).and_then(Value::as_str)
            {
                let version = full_version(version);
                m.insert((*reported).to_string(), json!(version));
            }
        }
    }
}

/// Facts the defaults need besides the body.
pub(crate) struct Context<'a> {
    pub arm_type: &'a str,
    pub id: &'a str,
    pub name: &'a str,
    pub location: &'a str,
    pub tenant_id: &'a str,
    /// The parent resource's stored body, if any.
    pub parent: Option<&'a Value>,
    /// The scope of an extension resource (the ID before its `/providers/...`); `None` for other resources.
    pub scope: Option<&'a str>,
}

/// Removes secret properties.
pub(crate) fn strip_secrets(arm_type: &str, body: &mut Value) {
    for (ty, path) in SECRETS {
        if !ty.eq_ignore_ascii_case(arm_type) {
            continue;
        }
        if let Some((last, parents)) = path.split_last() {
            let mut cur = Some(&mut *body);
            for p in parents {
                cur = cur.and_then(|v| v.get_mut(*p));
            }
            if let Some(Value::Object(m)) = cur {
                m.remove(*last);
            }
        }
    }
}

/// Applies the server defaults of the type.
pub(crate) fn apply(ctx: &Context<'_>, body: &mut Value) {
    if ctx.arm_type.eq_ignore_ascii_case(MANAGED_CLUSTERS) {
        managed_cluster(ctx, body);
    } else if ctx.arm_type.eq_ignore_ascii_case(AGENT_POOLS) {
        let cluster_version = ctx
            .parent
            .and_then(|p| p.pointer("/properties/currentKubernetesVersion"))
            .and_then(Value::as_str)
            .unwrap_or(DEFAULT_KUBERNETES_VERSION)
            .to_string();
        if let Some(props) = properties(body) {
            agent_pool(props, &cluster_version);
        }
    } else if ctx.arm_type.eq_ignore_ascii_case(USER_ASSIGNED_IDENTITIES) {
        let id = ctx.id.to_lowercase();
        if let Some(p) = properties(body) {
            set_default(p, "principalId", json!(stable_uuid(&format!("{id}/principal"))));
            set_default(p, "clientId", json!(stable_uuid(&format!("{id}/client"))));
            set_default(p, "tenantId", json!(ctx.tenant_id));
        }
    } else if ctx.arm_type.eq_ignore_ascii_case(ROLE_ASSIGNMENTS)
        && let Some(scope) = ctx.scope
        && let Some(props) = properties(body)
    {
        props.insert("scope".into(), json!(scope));
    }
}

/// `major.minor` → `major.minor.0`; a full version stays.
pub(crate) fn full_version(v: &str) -> String {
    if v.matches('.').count() >= 2 {
        v.to_string()
    } else {
        format!("{v}.0")
    }
}

fn properties(body: &mut Value) -> Option<&mut Map<String, Value>> {
    let obj = body.as_object_mut()?;
    obj.entry("properties").or_insert_with(|| json!({})).as_object_mut()
}

fn set_default(m: &mut Map<String, Value>, key: &str, value: Value) {
    if m.get(key).is_none_or(Value::is_null) {
        m.insert(key.to_string(), value);
    }
}

/// The node image a new pool of `os_type` and `os_sku` gets.
pub(crate) fn node_image(os_type: &str, os_sku: &str) -> &'static str {
    if os_type.eq_ignore_ascii_case("Windows") {
        "AKSWindows-2022-containerd-20348.3932.250705"
    } else if os_sku.eq_ignore_ascii_case("AzureLinux") {
        "AKSAzureLinux-V3gen2-202507.21.0"
    } else {
        "AKSUbuntu-2204gen2containerd-202507.21.0"
    }
}

fn agent_pool(p: &mut Map<String, Value>, cluster_version: &str) {
    set_default(p, "orchestratorVersion", json!(cluster_version));
    let version = full_version(
        p.get("orchestratorVersion")
            .and_then(Value::as_str)
            .unwrap_or(cluster_version),
    );
    set_default(p, "currentOrchestratorVersion", json!(version));
    let os_type = p.get("osType").and_then(Value::as_str).unwrap_or("Linux");
    let os_sku = p.get("osSKU").and_then(Value::as_str).unwrap_or("Ubuntu");
    let image = node_image(os_type, os_sku);
    set_default(p, "nodeImageVersion", json!(image));
    set_default(p, "powerState", json!({"code": "Running"}));
}

fn managed_cluster(ctx: &Context<'_>, body: &mut Value) {
    let (sub, rg) = subscription_and_group(ctx.id);
    let location = ctx.location.to_lowercase().replace(' ', "");
    let id_hash = stable_uuid(&ctx.id.to_lowercase());
    let has_identity = body
        .pointer("/identity/type")
        .and_then(Value::as_str)
        .is_some_and(|t| t != "None");
    if let Some(identity) = body.get_mut("identity").and_then(Value::as_object_mut) {
        let ty = identity
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if ty.contains("SystemAssigned") {
            set_default(
                identity,
                "principalId",
                json!(stable_uuid(&format!("{}/principal", ctx.id.to_lowercase()))),
            );
            set_default(identity, "tenantId", json!(ctx.tenant_id));
        }
        if let Some(Value::Object(uais)) = identity.get_mut("userAssignedIdentities") {
            for (uai_id, v) in uais.iter_mut() {
                if !v.is_object() {
                    *v = json!({});
                }
                if let Some(m) = v.as_object_mut() {
                    set_default(
                        m,
                        "principalId",
                        json!(stable_uuid(&format!("{}/principal", uai_id.to_lowercase()))),
                    );
                    set_default(
                        m,
                        "clientId",
                        json!(stable_uuid(&format!("{}/client", uai_id.to_lowercase()))),
                    );
                }
            }
        }
    }
    let Some(p) = properties(body) else { return };
    set_default(p, "kubernetesVersion", json!(DEFAULT_KUBERNETES_VERSION));
    let version = p
        .get("kubernetesVersion")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_KUBERNETES_VERSION);
    let version = full_version(version);
    set_default(p, "currentKubernetesVersion", json!(version));
    if let Some(prefix) = p.get("dnsPrefix").and_then(Value::as_str).map(str::to_string) {
        set_default(
            p,
            "fqdn",
            json!(format!("{prefix}-{}.hcp.{location}.azmk8s.io", &id_hash[..8])),
        );
        set_default(
            p,
            "azurePortalFQDN",
            json!(format!("{prefix}-{}.portal.hcp.{location}.azmk8s.io", &id_hash[..8])),
        );
    }
    let node_rg = format!("MC_{rg}_{}_{location}", ctx.name);
    set_default(p, "nodeResourceGroup", json!(node_rg));
    set_default(p, "powerState", json!({"code": "Running"}));
    set_default(p, "maxAgentPools", json!(100));
    if let Some(Value::Array(pools)) = p.get_mut("agentPoolProfiles") {
        for pool in pools.iter_mut().filter_map(Value::as_object_mut) {
            agent_pool(pool, &version);
        }
    }
    if has_identity && p.get("identityProfile").is_none_or(Value::is_null) {
        let node_rg = p
            .get("nodeResourceGroup")
            .and_then(Value::as_str)
            .unwrap_or(&node_rg)
            .to_string();
        let kubelet = format!(
            "/subscriptions/{sub}/resourcegroups/{node_rg}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{}-agentpool",
            ctx.name
        );
        p.insert(
            "identityProfile".into(),
            json!({"kubeletidentity": {
                "resourceId": kubelet,
                "clientId": stable_uuid(&format!("{}/client", kubelet.to_lowercase())),
                "objectId": stable_uuid(&format!("{}/principal", kubelet.to_lowercase())),
            }}),
        );
    }
    if let Some(Value::Object(oidc)) = p.get_mut("oidcIssuerProfile")
        && oidc.get("enabled").and_then(Value::as_bool) == Some(true)
    {
        set_default(
            oidc,
            "issuerURL",
            json!(format!(
                "https://{location}.oic.prod-aks.azure.com/{}/{id_hash}/",
                ctx.tenant_id
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_versions_wait_for_the_operation() {
        let stored = json!({"properties": {"kubernetesVersion": "1.30", "currentKubernetesVersion": "1.30.0",
            "agentPoolProfiles": [{"orchestratorVersion": "1.30", "currentOrchestratorVersion": "1.30.0"}]}});
        let mut body = json!({"properties": {"kubernetesVersion": "1.31", "currentKubernetesVersion": "1.31.0",
            "agentPoolProfiles": [{"orchestratorVersion": "1.31"}]}});
        keep_reported(MANAGED_CLUSTERS, &stored, &mut body);
        assert_eq!(body["properties"]["currentKubernetesVersion"], "1.30.0");
        assert_eq!(
            body["properties"]["agentPoolProfiles"][0]["currentOrchestratorVersion"],
            "1.30.0"
        );
        settle_reported(MANAGED_CLUSTERS, &mut body);
        assert_eq!(body["properties"]["currentKubernetesVersion"], "1.31.0");
        assert_eq!(
            body["properties"]["agentPoolProfiles"][0]["currentOrchestratorVersion"],
            "1.31.0"
        );
        let mut other = body.clone();
        settle_reported(AGENT_POOLS, &mut other);
        assert_eq!(other, body, "another type's table rows do not apply");
    }

    #[test]
    fn cluster_defaults_and_secrets() {
        let id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c1";
        let mut body = json!({
            "location": "westeurope",
            "identity": {"type": "SystemAssigned"},
            "properties": {
                "dnsPrefix": "c1",
                "kubernetesVersion": "1.30",
                "oidcIssuerProfile": {"enabled": true},
                "servicePrincipalProfile": {"clientId": "msi", "secret": "s3cret"},
                "agentPoolProfiles": [{"name": "system", "count": 1}]
            }
        });
        let ctx = Context {
            arm_type: "Microsoft.ContainerService/managedClusters",
            id,
            name: "c1",
            location: "westeurope",
            tenant_id: DEFAULT_TENANT_ID,
            parent: None,
            scope: None,
        };
        strip_secrets(ctx.arm_type, &mut body);
        apply(&ctx, &mut body);
        let p = &body["properties"];
        assert_eq!(p["servicePrincipalProfile"], json!({"clientId": "msi"}));
        assert_eq!(p["currentKubernetesVersion"], "1.30.0");
        assert_eq!(p["nodeResourceGroup"], "MC_rg_c1_westeurope");
        assert!(
            p["fqdn"]
                .as_str()
                .is_some_and(|f| f.starts_with("c1-") && f.ends_with(".hcp.westeurope.azmk8s.io"))
        );
        assert_eq!(p["agentPoolProfiles"][0]["currentOrchestratorVersion"], "1.30.0");
        assert!(
            p["oidcIssuerProfile"]["issuerURL"]
                .as_str()
                .is_some_and(|u| u.starts_with("https://westeurope.oic"))
        );
        assert_eq!(body["identity"]["tenantId"], DEFAULT_TENANT_ID);
        let again = {
            let mut b = json!({"location": "westeurope", "identity": {"type": "SystemAssigned"}});
            apply(&ctx, &mut b);
            b
        };
        assert_eq!(again["identity"]["principalId"], body["identity"]["principalId"]);
    }

    #[test]
    fn identities_report_the_ids_a_cluster_using_them_reports() {
        let id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/cp";
        let ctx = Context {
            arm_type: "Microsoft.ManagedIdentity/userAssignedIdentities",
            id,
            name: "cp",
            location: "westeurope",
            tenant_id: DEFAULT_TENANT_ID,
            parent: None,
            scope: None,
        };
        let mut identity = json!({"location": "westeurope"});
        apply(&ctx, &mut identity);
        assert_eq!(identity["properties"]["tenantId"], DEFAULT_TENANT_ID);
        let cluster_id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c";
        let ctx = Context {
            arm_type: "Microsoft.ContainerService/managedClusters",
            id: cluster_id,
            name: "c",
            ..ctx
        };
        let mut cluster =
            json!({"location": "westeurope", "identity": {"type": "UserAssigned", "userAssignedIdentities": {id: {}}}});
        apply(&ctx, &mut cluster);
        let reported = &cluster["identity"]["userAssignedIdentities"][id];
        assert_eq!(reported["principalId"], identity["properties"]["principalId"]);
        assert_eq!(reported["clientId"], identity["properties"]["clientId"]);
    }

    #[test]
    fn role_assignments_report_their_scope() {
        let scope = "/subscriptions/s/resourceGroups/rg";
        let id = format!("{scope}/providers/Microsoft.Authorization/roleAssignments/ra1");
        let ctx = Context {
            arm_type: "Microsoft.Authorization/roleAssignments",
            id: &id,
            name: "ra1",
            location: "westeurope",
            tenant_id: DEFAULT_TENANT_ID,
            parent: None,
            scope: Some(scope),
        };
        let mut body = json!({"properties": {"roleDefinitionId": "r", "principalId": "p", "scope": "/elsewhere"}});
        apply(&ctx, &mut body);
        assert_eq!(
            body,
            json!({"properties": {"roleDefinitionId": "r", "principalId": "p", "scope": scope}})
        );
    }
}
