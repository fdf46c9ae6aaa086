//! Exports (`spec.operatorSpec`) against the ARM simulator and the fake API server: Secrets from the POST
//! actions, ConfigMaps from the GET body, CEL expressions, refresh, ownership and garbage collection.

mod common;

use std::sync::Arc;
use std::time::Duration;

use aks_reconciler::exports::EXPORTED_AT;
use base64::Engine;
use common::*;
use serde_json::{Value, json};

/// A cluster with OIDC and a system-assigned identity (the simulator fills issuerURL and principalId), whose
/// operatorSpec is `operator_spec`.
fn spec_with(operator_spec: Value) -> Value {
    let mut spec = cluster_spec();
    spec["oidcIssuerProfile"] = json!({"enabled": true});
    spec["operatorSpec"] = operator_spec;
    spec
}

/// Every declared export: both kubeconfigs into one Secret, both values into one ConfigMap.
fn all_exports() -> Value {
    json!({
        "secrets": {
            "adminCredentials": {"name": "demo-kubeconfig", "key": "admin"},
            "userCredentials": {"name": "demo-kubeconfig", "key": "user"},
        },
        "configMaps": {
            "oidcIssuerUrl": {"name": "demo-info", "key": "issuer"},
            "principalId": {"name": "demo-info", "key": "principalId"},
        },
    })
}

/// The decoded value of `key` in Secret `name`.
fn secret_value(h: &Harness, name: &str, key: &str) -> String {
    let secret = h
        .core("secrets", name)
        .unwrap_or_else(|| panic!("Secret {name} exists"));
    let encoded = secret["data"][key]
        .as_str()
        .unwrap_or_else(|| panic!("{name} has {key}: {secret}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .expect("base64");
    String::from_utf8(bytes).expect("UTF-8")
}

fn config_map_value(h: &Harness, name: &str, key: &str) -> String {
    let cm = h
        .core("configmaps", name)
        .unwrap_or_else(|| panic!("ConfigMap {name} exists"));
    cm["data"][key]
        .as_str()
        .unwrap_or_else(|| panic!("{name} has {key}: {cm}"))
        .to_string()
}

async fn status(h: &Harness, name: &str) -> Value {
    h.object("ManagedCluster", name).await.expect("exists").data["status"].clone()
}

/// The ownerReference of an exported object, and the custom resource's uid.
async fn owner_of(h: &Harness, object: &Value, name: &str) -> (Value, String) {
    let cr = h.object("ManagedCluster", name).await.expect("exists");
    let uid = cr.metadata.uid.clone().expect("uid");
    let refs = object["metadata"]["ownerReferences"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(refs.len(), 1, "{object}");
    (refs[0].clone(), uid)
}

#[tokio::test]
async fn kubeconfigs_and_values_are_exported_once_ready_owned_by_the_custom_resource() {
    let h = Harness::new().await;
    h.apply("ManagedCluster", "demo", spec_with(all_exports())).await;
    h.converge("ManagedCluster", "demo").await;
    let (ready, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!((ready.as_str(), reason.as_str()), ("True", "Succeeded"), "{message}");
    assert_eq!(h.sim.count("POST"), 2, "one POST per Secret export");

    let st = status(&h, "demo").await;
    let fqdn = st["fqdn"].as_str().expect("fqdn").to_string();
    let admin = secret_value(&h, "demo-kubeconfig", "admin");
    let user = secret_value(&h, "demo-kubeconfig", "user");
    assert!(admin.starts_with("apiVersion: v1\nkind: Config\n"), "{admin}");
    assert!(admin.contains(&format!("server: https://{fqdn}:443")), "{admin}");
    assert!(admin.contains(&format!("name: clusterAdmin_{RG}_demo")), "{admin}");
    assert!(user.contains(&format!("name: clusterUser_{RG}_demo")), "{user}");

    let issuer = st["oidcIssuerProfile"]["issuerURL"]
        .as_str()
        .expect("issuer URL in status");
    let principal = st["identity"]["principalId"].as_str().expect("principalId in status");
    assert_eq!(config_map_value(&h, "demo-info", "issuer"), issuer);
    assert_eq!(config_map_value(&h, "demo-info", "principalId"), principal);

    for (plural, name) in [("secrets", "demo-kubeconfig"), ("configmaps", "demo-info")] {
        let object = h.core(plural, name).expect("exists");
        let (owner, uid) = owner_of(&h, &object, "demo").await;
        assert_eq!(
            owner,
            json!({
                "apiVersion": h.ctx("ManagedCluster").info.api_version(),
                "kind": "ManagedCluster",
                "name": "demo",
                "uid": uid,
                "controller": true,
                "blockOwnerDeletion": true,
            }),
            "{plural}/{name}"
        );
    }
    let secret = h.core("secrets", "demo-kubeconfig").expect("exists");
    assert!(secret["metadata"]["annotations"][EXPORTED_AT].is_string(), "{secret}");

    // The kubeconfig's token is nowhere but in the Secret: not in the status, not in events.
    let token = admin
        .lines()
        .find_map(|l| l.trim().strip_prefix("token: "))
        .expect("a token")
        .to_string();
    let cr = h.object("ManagedCluster", "demo").await.expect("exists");
    assert!(!serde_json::to_string(&cr.data).expect("json").contains(&token));
    for api_version in ["v1", "events.k8s.io/v1"] {
        for event in h.api.list(api_version, "events") {
            assert!(!event.to_string().contains(&token), "{event}");
        }
    }
}

#[tokio::test]
async fn config_maps_follow_every_get_and_secrets_their_refresh_interval() {
    let mut h = Harness::new().await;
    h.apply("ManagedCluster", "demo", spec_with(all_exports())).await;
    h.converge("ManagedCluster", "demo").await;
    let first_admin = secret_value(&h, "demo-kubeconfig", "admin");

    // In sync, within the refresh interval: GET only, nothing written.
    h.sim.clear_traffic();
    h.api.clear_requests();
    for _ in 0..3 {
        h.reconcile("ManagedCluster", "demo").await;
    }
    assert_eq!((h.sim.count("GET"), h.sim.count("POST")), (3, 0));
    let writes: Vec<_> = h.api.requests().into_iter().filter(|r| r.method != "GET").collect();
    assert!(writes.is_empty(), "{writes:?}");

    // Azure changes the issuer URL and the FQDN (so the kubeconfigs' server).
    h.sim.set_normalizer(
        "Microsoft.ContainerService/managedClusters",
        Arc::new(|body: &mut Value| {
            body["properties"]["oidcIssuerProfile"]["issuerURL"] = json!("https://issuer.example/rotated/");
            body["properties"]["fqdn"] = json!("demo-rotated.hcp.westeurope.azmk8s.io");
        }),
    );
    let stored = h.sim.resource(&cluster_id("demo")).expect("stored");
    let api_version = h.ctx("ManagedCluster").info.arm.api_version;
    h.sim.seed(&cluster_id("demo"), api_version, stored).expect("reseed");
    h.sim.clear_traffic();
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(
        config_map_value(&h, "demo-info", "issuer"),
        "https://issuer.example/rotated/",
        "the ConfigMap follows the GET"
    );
    assert_eq!(h.sim.count("POST"), 0, "the Secret waits for its interval");
    assert_eq!(secret_value(&h, "demo-kubeconfig", "admin"), first_admin);

    // Once the interval passed: fetched again, and rewritten because it changed.
    h.set_export_refresh(Duration::from_millis(50));
    tokio::time::sleep(Duration::from_millis(100)).await;
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(h.sim.count("POST"), 2, "both kubeconfigs fetched again");
    let admin = secret_value(&h, "demo-kubeconfig", "admin");
    assert!(
        admin.contains("server: https://demo-rotated.hcp.westeurope.azmk8s.io:443"),
        "{admin}"
    );
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");

    // Right after a PUT completed: fetched again, whatever the interval.
    h.set_export_refresh(Duration::from_secs(3600));
    h.sim.clear_traffic();
    h.patch_spec("ManagedCluster", "demo", json!({"tags": {"team": "a"}}))
        .await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!((h.sim.count("PUT"), h.sim.count("POST")), (1, 2));
    h.sim.clear_traffic();
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(h.sim.count("POST"), 0, "then GET-only again");
}

#[tokio::test]
async fn deleting_the_custom_resource_collects_its_exports() {
    let h = Harness::new().await;
    h.apply("ManagedCluster", "demo", spec_with(all_exports())).await;
    h.converge("ManagedCluster", "demo").await;
    assert!(h.core("secrets", "demo-kubeconfig").is_some() && h.core("configmaps", "demo-info").is_some());

    h.delete("ManagedCluster", "demo").await;
    h.reconcile_until_gone("ManagedCluster", "demo").await;
    assert!(h.core("secrets", "demo-kubeconfig").is_none(), "Secret collected");
    assert!(h.core("configmaps", "demo-info").is_none(), "ConfigMap collected");
}

#[tokio::test]
async fn cel_expressions_compute_config_map_and_secret_values() {
    let h = Harness::new().await;
    let operator_spec = json!({
        "configMapExpressions": [
            {"name": "demo-info", "key": "endpoint", "value": "self.status.fqdn + \":443\""},
            {"name": "demo-info", "key": "location", "value": "self.spec.location"},
        ],
        "secretExpressions": [
            {"name": "demo-kubeconfig", "key": "admin-labelled", "value": "\"# \" + self.metadata.name + \"\\n\" + secret.adminCredentials"},
        ],
    });
    h.apply("ManagedCluster", "demo", spec_with(operator_spec)).await;
    h.converge("ManagedCluster", "demo").await;
    let (ready, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!((ready.as_str(), reason.as_str()), ("True", "Succeeded"), "{message}");

    let fqdn = status(&h, "demo").await["fqdn"].as_str().expect("fqdn").to_string();
    assert_eq!(config_map_value(&h, "demo-info", "endpoint"), format!("{fqdn}:443"));
    assert_eq!(config_map_value(&h, "demo-info", "location"), "westeurope");
    let labelled = secret_value(&h, "demo-kubeconfig", "admin-labelled");
    assert!(
        labelled.starts_with("# demo\napiVersion: v1\nkind: Config\n"),
        "{labelled}"
    );
    assert!(labelled.contains(&format!("clusterAdmin_{RG}_demo")), "{labelled}");
}

#[tokio::test]
async fn an_invalid_expression_is_named_in_the_condition() {
    let h = Harness::new().await;
    let operator_spec = json!({
        "configMapExpressions": [
            {"name": "demo-info", "key": "endpoint", "value": "self.status.fqdn + \":443\""},
            {"name": "demo-info", "key": "nodes", "value": "self.spec.agentPoolProfiles[0].count"},
        ],
    });
    h.apply("ManagedCluster", "demo", spec_with(operator_spec)).await;
    h.converge("ManagedCluster", "demo").await;
    let (ready, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!((ready.as_str(), reason.as_str()), ("False", "ExportExpressionInvalid"));
    assert!(
        message.starts_with(
            "spec.operatorSpec.configMapExpressions[1] (\"self.spec.agentPoolProfiles[0].count\") gives an int, not a \
             string"
        ),
        "{message}"
    );
    assert!(h.core("configmaps", "demo-info").is_none(), "nothing half-written");

    // Fixed: exported and ready.
    h.patch_spec(
        "ManagedCluster",
        "demo",
        json!({"operatorSpec": {"configMapExpressions": [
            {"name": "demo-info", "key": "nodes", "value": "string(self.spec.agentPoolProfiles[0].count)"},
        ]}}),
    )
    .await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
    assert_eq!(config_map_value(&h, "demo-info", "nodes"), "3");
}

#[tokio::test]
async fn a_secret_owned_by_something_else_is_not_overwritten() {
    let h = Harness::new().await;
    let foreign = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "demo-kubeconfig",
            "namespace": NS,
            "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "Deployment", "name": "someone-else",
                "uid": "11111111-2222-3333-4444-555555555555", "controller": true,
            }],
        },
        "data": {"admin": "b3JpZ2luYWw="},
    });
    h.api.insert(foreign);
    h.apply("ManagedCluster", "demo", spec_with(all_exports())).await;
    h.converge("ManagedCluster", "demo").await;
    let (ready, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (ready.as_str(), reason.as_str()),
        ("False", "ExportConflict"),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "Secret {NS}/demo-kubeconfig exists and is not owned by ManagedCluster {NS}/demo"
        )) && message.contains("controlled by Deployment someone-else"),
        "{message}"
    );
    assert_eq!(
        secret_value(&h, "demo-kubeconfig", "admin"),
        "original",
        "left as it was"
    );
    // The status still reflects Azure.
    assert!(status(&h, "demo").await["fqdn"].is_string());
}
