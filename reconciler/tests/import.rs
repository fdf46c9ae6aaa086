//! Adoption: `armctl import`'s library path GETs existing resources (a cluster and its agent pools, found as
//! children), and the custom resources it prints reconcile with zero differences: one GET each, no PUT.

mod common;

use aks_reconciler::import::import;
use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn imported_resources_reconcile_with_zero_differences() {
    let h = Harness::new().await;
    let cluster = json!({
        "location": "westeurope",
        "tags": {"env": "prod"},
        "identity": {"type": "SystemAssigned"},
        "properties": {
            "dnsPrefix": "prod", "kubernetesVersion": "1.31.2", "enableRBAC": true,
            "networkProfile": {"networkPlugin": "azure", "networkPolicy": "calico"},
            "agentPoolProfiles": [{"name": "system", "count": 3, "vmSize": "Standard_D4s_v5", "mode": "System", "osType": "Linux"}],
        },
    });
    // The version the harness serves (the registry's storage version) and its ARM API version.
    let served = h.ctx("ManagedCluster").info;
    let id = cluster_id("Prod_Cluster");
    h.sim.seed(&id, served.arm.api_version, cluster).expect("seed cluster");
    for (name, count) in [("system", 3), ("gpu", 2)] {
        let pool = json!({"properties": {"count": count, "vmSize": "Standard_NC6s_v3", "mode": if name == "system" {"System"} else {"User"}, "osType": "Linux"}});
        h.sim
            .seed(&format!("{id}/agentPools/{name}"), served.arm.api_version, pool)
            .expect("seed pool");
    }

    let arm = h.shared.arm.clone();
    let objects = import(
        &arm,
        None,
        std::slice::from_ref(&id),
        Some(served.version),
        Some(NS),
        true,
    )
    .await
    .expect("import");
    let kinds: Vec<(&str, &str)> = objects
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("ManagedCluster", "prod-cluster"),
            ("AgentPool", "gpu"),
            ("AgentPool", "system")
        ]
    );
    assert_eq!(objects[0]["spec"]["azureName"], json!("Prod_Cluster"));
    assert_eq!(objects[1]["spec"]["owner"], json!({"name": "prod-cluster"}));
    assert!(objects.iter().all(|o| o.get("status").is_none()));

    h.clear_traffic();
    for object in &objects {
        let mut object = object.clone();
        object["metadata"]["namespace"] = Value::String(NS.into());
        h.api.insert(object);
    }
    for (kind, name) in &kinds {
        h.reconcile(kind, name).await;
        let (status, reason, message) = h.ready(kind, name).await;
        assert_eq!(status, "True", "{kind} {name}: {reason}: {message}");
    }
    assert_eq!(h.sim.count("PUT"), 0, "zero differences: no PUT");
    assert_eq!(h.sim.count("GET"), 3, "one GET per resource");
}
