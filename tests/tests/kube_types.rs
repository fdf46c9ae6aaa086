//! The generated custom resources as Kubernetes objects: `kube_core::Resource`, `apiVersion`/`kind` on the
//! wire, and the collections rule of the spec → ARM conversion.

use aks_api::containerservice::v2alpha1::{AgentPool, AgentPoolSpec, ManagedCluster, ManagedClusterSpec, arm};
use armgen_runtime::kube::{ArmIdsOnly, KnownOwner, ResourceReference, SecretReference};
use kube_core::Resource;
use serde_json::json;

/// What `kube::Api::<K>` requires of `K`.
fn usable_with_kube_api<K>()
where
    K: Resource<DynamicType = (), Scope = kube_core::NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + serde::Serialize,
{
}

#[test]
fn custom_resources_are_kube_resources() {
    usable_with_kube_api::<ManagedCluster>();
    usable_with_kube_api::<AgentPool>();
    assert_eq!(ManagedCluster::kind(&()), "ManagedCluster");
    assert_eq!(ManagedCluster::group(&()), "containerservice.azure.com");
    assert_eq!(ManagedCluster::version(&()), "v2alpha1");
    assert_eq!(ManagedCluster::plural(&()), "managedclusters");
    assert_eq!(ManagedCluster::api_version(&()), "containerservice.azure.com/v2alpha1");
    assert_eq!(
        ManagedCluster::url_path(&(), Some("ns")),
        "/apis/containerservice.azure.com/v2alpha1/namespaces/ns/managedclusters"
    );
}

#[test]
fn api_version_and_kind_are_written_and_read() {
    let cr = ManagedCluster::new(
        "c1",
        ManagedClusterSpec {
            location: Some("westeurope".into()),
            ..Default::default()
        },
    );
    let value = serde_json::to_value(&cr).expect("serialize");
    assert_eq!(value["apiVersion"], "containerservice.azure.com/v2alpha1");
    assert_eq!(value["kind"], "ManagedCluster");
    assert_eq!(value["metadata"]["name"], "c1");
    assert_eq!(value["spec"], json!({"location": "westeurope"}));
    assert!(value.get("status").is_none());
    let back: ManagedCluster = serde_json::from_value(value).expect("deserialize");
    assert_eq!(back, cr);
}

#[test]
fn emptied_collections_are_sent_and_unset_ones_omitted() {
    let mut spec = ManagedClusterSpec {
        location: Some("westeurope".into()),
        ..Default::default()
    };
    let body = serde_json::to_value(spec.to_arm(&ArmIdsOnly).expect("to_arm")).expect("json");
    assert!(
        body.get("tags").is_none(),
        "unset tags are omitted (ARM leaves them unchanged): {body}"
    );
    spec.tags = Some(Default::default());
    let body = serde_json::to_value(spec.to_arm(&ArmIdsOnly).expect("to_arm")).expect("json");
    assert_eq!(body["tags"], json!({}), "emptied tags are sent as {{}}");

    let mut pool = AgentPoolSpec {
        owner: Some(KnownOwner { name: "c1".into() }),
        ..Default::default()
    };
    pool.node_taints = Some(Vec::new());
    let body = serde_json::to_value(pool.to_arm(&ArmIdsOnly).expect("to_arm")).expect("json");
    assert_eq!(
        body["properties"]["nodeTaints"],
        json!([]),
        "emptied taints are sent as []"
    );
    assert!(
        body["properties"].get("nodeLabels").is_none(),
        "unset labels are omitted"
    );
}

#[test]
fn references_resolve_through_the_resolver() {
    let mut spec = ManagedClusterSpec {
        location: Some("westeurope".into()),
        ..Default::default()
    };
    spec.disk_encryption_set_id = Some(ResourceReference::arm_id(
        "/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/diskEncryptionSets/d",
    ));
    spec.service_principal_profile = Some(
        aks_api::containerservice::v2alpha1::spec::ManagedClusterServicePrincipalProfile {
            client_id: Some("app".into()),
            secret: Some(SecretReference {
                name: "sp".into(),
                key: "password".into(),
            }),
        },
    );
    let body: arm::ManagedCluster = spec.to_arm(&ArmIdsOnly).expect("to_arm");
    let props = body.properties.expect("properties");
    assert_eq!(
        props.disk_encryption_set_id.as_deref(),
        Some("/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/diskEncryptionSets/d")
    );
    let sp = props.service_principal_profile.expect("service principal");
    assert_eq!(
        sp.secret.as_deref(),
        Some("$secret:sp/password"),
        "ArmIdsOnly marks unresolved secrets"
    );

    // A reference to another custom resource needs a cluster: a clear error naming the field.
    spec.disk_encryption_set_id = Some(ResourceReference {
        kind: Some("DiskEncryptionSet".into()),
        name: Some("d".into()),
        ..Default::default()
    });
    let err = spec.to_arm(&ArmIdsOnly).expect_err("unresolvable");
    assert_eq!(err.path, "spec.diskEncryptionSetID");

    // A required property left unset is an error naming it.
    let err = ManagedClusterSpec::default()
        .to_arm(&ArmIdsOnly)
        .expect_err("location is required");
    assert_eq!(err.path, "spec.location");
}
