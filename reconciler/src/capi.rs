//! Cluster API: the provider contracts the generated kinds implement (the registry's `CLUSTER_API`, from
//! `kubernetes.resources.<Kind>.clusterApi` of `azure-arm.yaml`; docs/cluster-api.md). Nothing here names a kind or
//! an ARM field: the registry says where each contract field comes from, and [`armgen_runtime::capi`] computes it.
//!
//! What the reconciler does for an object of a kind with a contract that belongs to a Cluster (labelled
//! `cluster.x-k8s.io/cluster-name`, as Cluster API labels the objects it creates; other objects get none of this):
//!
//! - **Status**: the contract's status fields (`version`, `initialization`, `initialized`, `ready`,
//!   `externalManagedControlPlane`, `replicas`) with every status write ([`status_fields`]), and a control plane's
//!   `Available` condition beside `Ready` ([`extra_conditions`]).
//! - **Spec, written by the provider**: `controlPlaneEndpoint` from the resource, `providerIDList` from a complete
//!   read of the machines view ([`provider_spec`]); merge-patched only when they differ.
//! - **Spec, asked for by Cluster API**: a control plane's `spec.version` (the ClusterClass topology's, `v1.30.1`)
//!   is copied without its `v` into the spec field it maps to, and a machine pool's size follows its owning
//!   `MachinePool`'s `spec.replicas` (unless the MachinePool says an autoscaler manages replicas); both before
//!   anything is sent to Azure ([`inputs`]), so that the normal diff sends them.
//! - **Pausing**: an object with the `cluster.x-k8s.io/paused` annotation, or whose Cluster (by the
//!   `cluster.x-k8s.io/cluster-name` label) is paused (`spec.paused` or the annotation), is not written at all:
//!   no ARM write, no Kubernetes write ([`paused`]).
//! - **Kubeconfig**: a control plane labelled with its Cluster's name writes `<cluster>-kubeconfig` (key `value`,
//!   type `cluster.x-k8s.io/secret`, labelled) from the configured Secret export (`crate::exports`).

use armgen_runtime::KindInfo;
use armgen_runtime::capi::{self as contract, ContractInfo, Role};
use kube::ResourceExt;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::{Map, Value, json};

/// The status fields of a contract that the watch cache keeps (`crate::cache::slim_with`): the "first ready"
/// marks, which a status write carries over.
pub const KEPT_STATUS: [&str; 3] = ["initialization", "initialized", "ready"];

/// The contract `info`'s kind implements, if any.
pub fn of(info: &KindInfo) -> Option<&'static ContractInfo> {
    aks_api::CLUSTER_API
        .iter()
        .find(|c| c.group == info.group && c.version == info.version && c.kind == info.kind)
}

/// The contract `info`'s kind implements, for an object of a Cluster API Cluster (labelled with its name): objects
/// outside Cluster API get none of its fields or writes.
pub fn of_object(info: &KindInfo, object: &DynamicObject) -> Option<&'static ContractInfo> {
    cluster_name(object).and(of(info))
}

/// The Cluster `object` belongs to (its `cluster.x-k8s.io/cluster-name` label), when that is a valid name.
pub fn cluster_name(object: &DynamicObject) -> Option<&str> {
    let name = object.labels().get(contract::CLUSTER_NAME_LABEL)?.as_str();
    // An object name that leaves room for `-kubeconfig` in a Secret's name.
    let valid = crate::names::is_dns1123_subdomain(name) && name.len() <= 253 - "-kubeconfig".len();
    valid.then_some(name)
}

/// The kubeconfig Secret a control plane writes (its name, and the Secret export holding the value): only for an
/// object of a Cluster (labelled with its name) whose kind's contract names a kubeconfig export.
pub fn kubeconfig_secret(info: &KindInfo, object: &DynamicObject) -> Option<(String, &'static str)> {
    let c = of(info)?;
    let export = c.kubeconfig?;
    let cluster = cluster_name(object)?;
    Some((contract::kubeconfig_secret_name(cluster), export))
}

/// The contract's status fields, for a status built from the ARM `body` (with `ready_now` the Ready condition's
/// status and `current` the status before).
pub fn status_fields(
    info: &KindInfo,
    object: &DynamicObject,
    body: &Value,
    ready_now: bool,
    current: &Value,
) -> Map<String, Value> {
    match of_object(info, object) {
        Some(c) => contract::status_fields(c, body, ready_now, current),
        None => Map::new(),
    }
}

/// The conditions a contract asks for besides `Ready`, from `ready`: a control plane's `Available` (the v1beta2
/// control-plane contract, "ControlPlane: conditions": Cluster API mirrors it to the Cluster's
/// `ControlPlaneAvailable`), which an AKS control plane is exactly when it is in sync and running.
pub fn extra_conditions(
    info: &KindInfo,
    object: &DynamicObject,
    ready: &armgen_runtime::kube::Condition,
) -> Vec<Value> {
    match of_object(info, object).map(|c| c.role) {
        Some(Role::ControlPlane) => {
            let mut available = ready.clone();
            available.type_ = "Available".into();
            serde_json::to_value(&available).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// Why `object` is paused, if it is: its own annotation, or its Cluster's (`spec.paused` or the annotation). A
/// Cluster that cannot be read (not there, no Cluster API installed) does not pause it.
pub async fn paused(client: &kube::Client, object: &DynamicObject) -> Option<String> {
    if object.annotations().contains_key(contract::PAUSED_ANNOTATION) {
        return Some(format!("the object has the {} annotation", contract::PAUSED_ANNOTATION));
    }
    let cluster = cluster_name(object)?;
    let namespace = object.namespace()?;
    for version in ["v1beta2", "v1beta1"] {
        let resource =
            ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(contract::GROUP, version, "Cluster"), "clusters");
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &namespace, &resource);
        match api.get_opt(cluster).await {
            Ok(Some(c)) => {
                if c.data.pointer("/spec/paused").and_then(Value::as_bool) == Some(true) {
                    return Some(format!("its Cluster {cluster} is paused (spec.paused)"));
                }
                if c.annotations().contains_key(contract::PAUSED_ANNOTATION) {
                    return Some(format!(
                        "its Cluster {cluster} has the {} annotation",
                        contract::PAUSED_ANNOTATION
                    ));
                }
                return None;
            }
            Ok(None) | Err(_) => continue,
        }
    }
    None
}

/// The spec changes Cluster API asks for, before anything is sent to Azure: a control plane's `spec.version`
/// copied without its `v`, a machine pool's size from its owning MachinePool. A merge patch of `spec`, or `None`
/// when nothing differs.
pub async fn inputs(client: &kube::Client, info: &KindInfo, object: &DynamicObject) -> Option<Value> {
    let c = of_object(info, object)?;
    let spec = object.data.get("spec")?;
    let mut patch = Map::new();
    match c.role {
        Role::ControlPlane => {
            if let (Some(field), Some(version)) = (c.version_spec_field, spec.get("version").and_then(Value::as_str)) {
                let wanted = contract::without_v(version);
                if !wanted.is_empty() && spec.get(field).and_then(Value::as_str) != Some(wanted) {
                    patch.insert(field.to_string(), json!(wanted));
                }
            }
        }
        Role::InfrastructureCluster => {}
        Role::MachinePool => {
            if let Some(field) = c.replicas_spec_field
                && let Some(replicas) = machine_pool_replicas(client, object).await
                && spec.get(field).and_then(Value::as_i64) != Some(replicas)
            {
                patch.insert(field.to_string(), json!(replicas));
            }
        }
    }
    (!patch.is_empty()).then(|| Value::Object(patch))
}

/// The owning MachinePool's `spec.replicas` (the controller owner reference of kind `MachinePool` in Cluster API's
/// group), unless it says an autoscaler manages the replicas (`cluster.x-k8s.io/replicas-managed-by`).
async fn machine_pool_replicas(client: &kube::Client, object: &DynamicObject) -> Option<i64> {
    let owner = object
        .owner_references()
        .iter()
        .find(|r| r.kind == "MachinePool" && r.api_version.split('/').next() == Some(contract::GROUP))?;
    // Tenant-written: both reach the API server's URL, so they must be a version and an object name.
    let version = owner.api_version.split('/').nth(1)?;
    if !version.bytes().all(|b| b.is_ascii_alphanumeric()) || !crate::names::is_dns1123_subdomain(&owner.name) {
        return None;
    }
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(contract::GROUP, version, "MachinePool"),
        "machinepools",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &object.namespace()?, &resource);
    let pool = api.get_opt(&owner.name).await.ok().flatten()?;
    if pool.uid().as_deref() != Some(owner.uid.as_str()) {
        return None;
    }
    if pool.annotations().contains_key("cluster.x-k8s.io/replicas-managed-by") {
        return None;
    }
    pool.data.pointer("/spec/replicas").and_then(Value::as_i64)
}

/// The spec fields the provider writes, from the ARM `body` the resource is ready with (its views included when
/// they were read in this reconcile): a merge patch of `spec`, or `None` when nothing differs.
pub fn provider_spec(info: &KindInfo, object: &DynamicObject, body: &Value) -> Option<Value> {
    let c = of_object(info, object)?;
    let spec = object.data.get("spec").cloned().unwrap_or_else(|| json!({}));
    let mut patch = Map::new();
    match c.role {
        Role::ControlPlane => {
            if let Some(endpoint) = contract::endpoint(c, body)
                && spec.get("controlPlaneEndpoint") != Some(&endpoint)
            {
                patch.insert("controlPlaneEndpoint".into(), endpoint);
            }
        }
        Role::InfrastructureCluster => {}
        Role::MachinePool => {
            // Only from a read of the view in this reconcile: the body has the view's field then.
            if let Some(ids) = c
                .provider_ids_view
                .and_then(|view| body.get(view))
                .and_then(|items| contract::provider_ids(c, items))
            {
                let ids = json!(ids);
                if spec.get("providerIDList") != Some(&ids) {
                    patch.insert("providerIDList".into(), ids);
                }
            }
        }
    }
    (!patch.is_empty()).then(|| Value::Object(patch))
}

/// Merge-patches `spec` of object `name` (through `api`, the object's own) with `patch`; a deleted object is no
/// error.
pub async fn patch_spec(api: &Api<DynamicObject>, name: &str, patch: Value) -> Result<(), kube::Error> {
    match api
        .patch(name, &PatchParams::default(), &Patch::Merge(json!({"spec": patch})))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labelled(name: &str) -> DynamicObject {
        let resource = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("g", "v1", "K"), "ks");
        let mut o = DynamicObject::new("o", &resource);
        o.metadata.labels = Some([(contract::CLUSTER_NAME_LABEL.to_string(), name.to_string())].into());
        o
    }

    #[test]
    fn a_cluster_name_from_a_label_is_an_object_name_with_room_for_its_kubeconfig() {
        assert_eq!(cluster_name(&labelled("prod")), Some("prod"));
        assert_eq!(cluster_name(&labelled("a.b-c")), Some("a.b-c"));
        for bad in ["", "Prod", "../x", "a/b", "-a", "a..b", &"a".repeat(250)] {
            assert_eq!(cluster_name(&labelled(bad)), None, "{bad:?}");
        }
    }
}
