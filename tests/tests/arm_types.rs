//! Behaviour of the generated AKS ARM types beyond the example round trips: open enums, unknown properties,
//! typed fields. These use the committed generated crate and need no spec root.

use crate::common;

use aks_api::containerservice::{v1beta1, v2alpha1};
use armgen_runtime::UnknownFields;
use serde_json::json;

#[test]
fn open_enums_match_case_insensitively_and_keep_unknown_values() {
    let sku: v2alpha1::arm::Ossku = serde_json::from_value(json!("ubuntu")).expect("known value, other case");
    assert_eq!(sku, v2alpha1::arm::Ossku::Ubuntu);
    assert_eq!(serde_json::to_value(&sku).expect("serialize"), json!("Ubuntu"));

    let future: v2alpha1::arm::Ossku = serde_json::from_value(json!("FutureLinux")).expect("unknown value");
    assert_eq!(future, v2alpha1::arm::Ossku::Other("FutureLinux".into()));
    assert_eq!(future.as_str(), "FutureLinux");
    assert_eq!(serde_json::to_value(&future).expect("serialize"), json!("FutureLinux"));
    assert_eq!(future.all_unknown_fields(), vec!["=FutureLinux".to_string()]);
}

#[test]
fn unknown_properties_survive_and_are_listed() {
    let body = json!({
        "location": "westeurope",
        "properties": {
            "kubernetesVersion": "1.31",
            "futureFeatureProfile": {"enabled": true},
            "agentPoolProfiles": [{"name": "np1", "count": 3, "osSKU": "AzureLinux", "nextGenFlag": 1}]
        },
        "newTopLevel": "x"
    });
    let cluster: v2alpha1::arm::ManagedCluster = serde_json::from_value(body.clone()).expect("deserialize");
    let props = cluster.properties.as_ref().expect("properties");
    assert_eq!(props.kubernetes_version.as_deref(), Some("1.31"));
    let pool = &props.agent_pool_profiles.as_ref().expect("pools")[0];
    assert_eq!(pool.count, Some(3_i32));
    assert_eq!(pool.os_sku, Some(v2alpha1::arm::Ossku::AzureLinux));
    let mut unknown = cluster.all_unknown_fields();
    unknown.sort();
    assert_eq!(
        unknown,
        vec![
            "/newTopLevel",
            "/properties/agentPoolProfiles/0/nextGenFlag",
            "/properties/futureFeatureProfile"
        ]
    );
    assert_eq!(serde_json::to_value(&cluster).expect("serialize"), body);
}

#[test]
fn read_only_and_required_shape_the_fields() {
    // `location` is required and writable: a plain String. `id` is read-only: optional.
    let cluster = v2alpha1::arm::ManagedCluster {
        location: "westeurope".into(),
        ..Default::default()
    };
    assert_eq!(
        serde_json::to_value(&cluster).expect("serialize"),
        json!({"location": "westeurope"})
    );
    assert!(cluster.id.is_none());
    // A missing required property is an error that names it.
    let err =
        serde_json::from_value::<v1beta1::arm::ManagedCluster>(json!({"properties": {}})).expect_err("no location");
    assert!(err.to_string().contains("location"), "{err}");
}

/// Each version module's `arm::RESOURCES` are the kinds the registry lists for it (two versions as a fixture: a
/// module is named by its version), and what differs between 2024-09-01 and 2025-10-01 shows.
#[test]
fn resources_are_listed_per_version() {
    let kinds = |r: &[armgen_runtime::ResourceInfo]| r.iter().map(|r| r.kind).collect::<Vec<_>>();
    let registry = |version: &str| {
        aks_api::VERSIONS
            .iter()
            .find(|v| v.group == common::aks_group().name && v.version == version)
            .map(|v| v.kinds.to_vec())
            .unwrap_or_else(|| panic!("{version} is not in aks_api::VERSIONS"))
    };
    assert_eq!(kinds(v1beta1::arm::RESOURCES), registry("v1beta1"));
    assert_eq!(kinds(v2alpha1::arm::RESOURCES), registry("v2alpha1"));
    assert!(kinds(v2alpha1::arm::RESOURCES).contains(&"ManagedNamespace"));
    assert!(!kinds(v1beta1::arm::RESOURCES).contains(&"ManagedNamespace"));
    let pool = v2alpha1::arm::RESOURCES
        .iter()
        .find(|r| r.kind == "AgentPool")
        .expect("AgentPool");
    assert_eq!(pool.arm_type, "Microsoft.ContainerService/managedClusters/agentPools");
    assert_eq!(pool.parents, &["Microsoft.ContainerService/managedClusters"]);
    assert!(pool.long_running);
    assert_eq!(pool.api_version, v2alpha1::API_VERSION);
    assert_eq!(v1beta1::API_VERSION, "2024-09-01");
}
