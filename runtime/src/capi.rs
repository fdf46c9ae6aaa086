//! The Cluster API provider contracts, as generated kinds implement them (docs/cluster-api.md): the contract
//! fields' types, what the registry says of each kind (`CLUSTER_API`, from `kubernetes.resources.<Kind>.clusterApi`
//! of the config), and the pure functions that compute the contract's fields from a resource's ARM body, so that
//! the reconciler needs no code per kind or per field.
//!
//! Sources, per rule: the Cluster API book's contract pages (control plane, infrastructure machine pool), cited in
//! docs/cluster-api.md section by section.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// `spec.controlPlaneEndpoint` of a control plane.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiEndpoint {
    #[serde(default)]
    pub host: String,
    #[serde(default)]
    pub port: i32,
}

/// `status.initialization`: the v1beta2 contract's "first ready" marks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Initialization {
    /// A control plane: true once it was first ready (never reset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_initialized: Option<bool>,
    /// An infrastructure machine pool: true once it was first ready (never reset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<bool>,
}

/// `spec.template.metadata` of a template kind: the labels and annotations the resources made from it get (the
/// contracts' template rules: Cluster API's topology controller copies them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateMetadata {
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub labels: std::collections::BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub annotations: std::collections::BTreeMap<String, String>,
}

/// Which contract a kind implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A control plane (`Cluster.spec.controlPlaneRef`).
    ControlPlane,
    /// An infrastructure machine pool (`MachinePool.spec.template.spec.infrastructureRef`).
    MachinePool,
    /// An infrastructure cluster (`Cluster.spec.infrastructureRef`): provisioned once first ready.
    InfrastructureCluster,
}

/// Where a kind's contract fields come from (one entry per kind and Kubernetes version of the registry's
/// `CLUSTER_API`). ARM paths are dotted JSON paths in the resource's ARM body; spec fields are JSON names of the
/// custom resource's spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContractInfo {
    /// The API group's module name (e.g. `containerservice`), as [`crate::KindInfo::group`].
    pub group: &'static str,
    /// The Kubernetes version, as [`crate::KindInfo::version`].
    pub version: &'static str,
    pub kind: &'static str,
    pub role: Role,
    /// The contract's page.
    pub source: &'static str,
    /// Control plane: ARM paths of the endpoint's host, the first with a value wins; and its port.
    pub endpoint_hosts: &'static [&'static str],
    pub endpoint_port: u16,
    /// Control plane: the ARM path `status.version` reads, and the spec field `spec.version` is copied into.
    pub version_status: Option<&'static str>,
    pub version_spec_field: Option<&'static str>,
    /// Control plane: the Secret export holding the kubeconfig.
    pub kubeconfig: Option<&'static str>,
    /// Machine pool: the ARM path of the pool's size, and the spec field it is set by.
    pub replicas: Option<&'static str>,
    pub replicas_spec_field: Option<&'static str>,
    /// Machine pool: the view listing the machines, the ARM path of each one's ID, and the provider ID's prefix.
    pub provider_ids_view: Option<&'static str>,
    pub provider_ids_id: Option<&'static str>,
    pub provider_ids_prefix: &'static str,
}

/// The annotation that pauses an object's reconciliation (the contracts' "Pausing" sections).
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";
/// The label naming the Cluster an object belongs to.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// The type of the Secrets Cluster API reads (the kubeconfig Secret).
pub const SECRET_TYPE: &str = "cluster.x-k8s.io/secret";
/// The data key of the kubeconfig in its Secret.
pub const KUBECONFIG_KEY: &str = "value";
/// The API group of Cluster API's own kinds (`Cluster`, `MachinePool`).
pub const GROUP: &str = "cluster.x-k8s.io";

/// The name of the kubeconfig Secret of cluster `cluster`.
pub fn kubeconfig_secret_name(cluster: &str) -> String {
    format!("{cluster}-kubeconfig")
}

fn at<'v>(body: &'v Value, path: &str) -> Option<&'v Value> {
    crate::dotted::get(body, path).ok().flatten()
}

/// The contract's status fields from the ARM `body`, given whether the resource is ready now and the current
/// `status` (the "first ready" marks never go back). Only the fields of `info`'s role.
pub fn status_fields(info: &ContractInfo, body: &Value, ready_now: bool, current: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    let was = |pointer: &str| current.pointer(pointer).and_then(Value::as_bool) == Some(true);
    match info.role {
        Role::ControlPlane => {
            let initialized = ready_now || was("/initialization/controlPlaneInitialized") || was("/initialized");
            if let Some(version) = info
                .version_status
                .and_then(|p| at(body, p))
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty())
            {
                out.insert("version".into(), json!(with_v(version)));
            }
            if initialized {
                out.insert("initialization".into(), json!({"controlPlaneInitialized": true}));
                out.insert("initialized".into(), json!(true));
                out.insert("ready".into(), json!(true));
            }
            out.insert("externalManagedControlPlane".into(), json!(true));
        }
        Role::MachinePool | Role::InfrastructureCluster => {
            let provisioned = ready_now || was("/initialization/provisioned") || was("/ready");
            if let Some(n) = info.replicas.and_then(|p| at(body, p)).and_then(Value::as_i64) {
                out.insert("replicas".into(), json!(n));
            }
            if provisioned {
                out.insert("initialization".into(), json!({"provisioned": true}));
                out.insert("ready".into(), json!(true));
            }
        }
    }
    out
}

/// `spec.controlPlaneEndpoint` from the ARM `body`: the first host path with a non-empty string, and the port.
pub fn endpoint(info: &ContractInfo, body: &Value) -> Option<Value> {
    let host = info
        .endpoint_hosts
        .iter()
        .find_map(|p| at(body, p).and_then(Value::as_str).filter(|h| !h.is_empty()))?;
    Some(json!({"host": host, "port": info.endpoint_port}))
}

/// `spec.providerIDList` from a complete read of the machines view (`items`, the view's list): the prefix and each
/// machine's ID, sorted, without duplicates. `None` when an item has no ID: a partial list would make Cluster API
/// delete the Nodes it lacks (docs/cluster-api.md, section 3), so the previous list stays.
pub fn provider_ids(info: &ContractInfo, items: &Value) -> Option<Vec<String>> {
    let id_path = info.provider_ids_id?;
    let mut ids = Vec::new();
    for item in items.as_array()? {
        let id = at(item, id_path).and_then(Value::as_str).filter(|s| !s.is_empty())?;
        ids.push(format!("{}{}", info.provider_ids_prefix, normalize_azure_id(id)));
    }
    ids.sort();
    ids.dedup();
    Some(ids)
}

/// An Azure resource ID as the Azure cloud provider writes it into a Node's `spec.providerID`: the resource group's
/// name lower-cased (ARM's IDs keep its case as created; the cloud provider lower-cases it), the rest as is.
pub fn normalize_azure_id(id: &str) -> String {
    let mut out = Vec::new();
    let mut lower_next = false;
    for segment in id.split('/') {
        if lower_next {
            out.push(segment.to_ascii_lowercase());
            lower_next = false;
        } else {
            lower_next = segment.eq_ignore_ascii_case("resourceGroups");
            out.push(segment.to_string());
        }
    }
    out.join("/")
}

/// `v1.30.1` from `1.30.1` (and as is when it has the `v`).
pub fn with_v(version: &str) -> String {
    if version.starts_with('v') {
        version.to_string()
    } else {
        format!("v{version}")
    }
}

/// `1.30.1` from `v1.30.1`: what the topology's `spec.version` is in Azure's spelling.
pub fn without_v(version: &str) -> &str {
    version.strip_prefix('v').unwrap_or(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLANE: ContractInfo = ContractInfo {
        group: "g",
        version: "v1",
        kind: "ManagedCluster",
        role: Role::ControlPlane,
        source: "https://example.org",
        endpoint_hosts: &["properties.fqdn", "properties.privateFQDN"],
        endpoint_port: 443,
        version_status: Some("properties.currentKubernetesVersion"),
        version_spec_field: Some("kubernetesVersion"),
        kubeconfig: Some("adminCredentials"),
        replicas: None,
        replicas_spec_field: None,
        provider_ids_view: None,
        provider_ids_id: None,
        provider_ids_prefix: "",
    };
    const POOL: ContractInfo = ContractInfo {
        kind: "AgentPool",
        role: Role::MachinePool,
        endpoint_hosts: &[],
        version_status: None,
        version_spec_field: None,
        kubeconfig: None,
        replicas: Some("properties.count"),
        replicas_spec_field: Some("count"),
        provider_ids_view: Some("machines"),
        provider_ids_id: Some("properties.resourceId"),
        provider_ids_prefix: "azure://",
        ..PLANE
    };

    #[test]
    fn a_control_plane_is_initialized_once_ready_and_stays_so() {
        let body = json!({"properties": {"currentKubernetesVersion": "1.30.1", "fqdn": "a.hcp.io"}});
        let before = status_fields(&PLANE, &body, false, &json!({}));
        assert_eq!(before["version"], "v1.30.1");
        assert_eq!(before["externalManagedControlPlane"], true);
        assert!(before.get("initialization").is_none() && before.get("ready").is_none());
        let ready = status_fields(&PLANE, &body, true, &json!({}));
        assert_eq!(ready["initialization"], json!({"controlPlaneInitialized": true}));
        assert_eq!((&ready["initialized"], &ready["ready"]), (&json!(true), &json!(true)));
        // Updating later (not ready now): still initialized.
        let later = status_fields(&PLANE, &body, false, &Value::Object(ready.clone()));
        assert_eq!(later, ready);
    }

    #[test]
    fn the_endpoint_is_the_first_host_with_a_value() {
        let public = json!({"properties": {"fqdn": "a.hcp.io", "privateFQDN": "a.private.io"}});
        assert_eq!(
            endpoint(&PLANE, &public),
            Some(json!({"host": "a.hcp.io", "port": 443}))
        );
        let private = json!({"properties": {"fqdn": "", "privateFQDN": "a.private.io"}});
        assert_eq!(
            endpoint(&PLANE, &private),
            Some(json!({"host": "a.private.io", "port": 443}))
        );
        assert_eq!(endpoint(&PLANE, &json!({"properties": {}})), None);
    }

    #[test]
    fn provider_ids_are_complete_or_none() {
        let vm = "/subscriptions/s/resourceGroups/MC_rg_c_westus/providers/Microsoft.Compute/virtualMachineScaleSets/aks-p-1-vmss/virtualMachines/";
        let items = json!([
            {"properties": {"resourceId": format!("{vm}1")}},
            {"properties": {"resourceId": format!("{vm}0")}},
        ]);
        let lower = vm.replace("MC_rg_c_westus", "mc_rg_c_westus");
        assert_eq!(
            provider_ids(&POOL, &items),
            Some(vec![format!("azure://{lower}0"), format!("azure://{lower}1")])
        );
        let partial = json!([{"properties": {"resourceId": format!("{vm}1")}}, {"properties": {}}]);
        assert_eq!(provider_ids(&POOL, &partial), None);
        assert_eq!(provider_ids(&POOL, &json!([])), Some(vec![]));
        assert_eq!(provider_ids(&POOL, &json!({"value": []})), None);
    }

    #[test]
    fn a_pool_reports_replicas_and_stays_provisioned() {
        let body = json!({"properties": {"count": 3}});
        let s = status_fields(&POOL, &body, true, &json!({}));
        assert_eq!(s["replicas"], 3);
        assert_eq!(s["initialization"], json!({"provisioned": true}));
        assert_eq!(s["ready"], true);
        let later = status_fields(&POOL, &json!({"properties": {"count": 4}}), false, &Value::Object(s));
        assert_eq!(
            (later["replicas"].clone(), later["ready"].clone()),
            (json!(4), json!(true))
        );
    }

    #[test]
    fn versions_gain_and_lose_their_v() {
        assert_eq!(with_v("1.30.1"), "v1.30.1");
        assert_eq!(with_v("v1.30.1"), "v1.30.1");
        assert_eq!(without_v("v1.30.1"), "1.30.1");
        assert_eq!(without_v("1.30.1"), "1.30.1");
    }
}
