//! End-to-end scenarios of the reconcile loop against the ARM simulator and the fake API server.

mod common;

use std::sync::Arc;

use aks_reconciler::reconcile::{FINALIZER, POLICY_ANNOTATION};
use arm_simulator::{Fault, FaultRule};
use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn create_puts_polls_and_becomes_ready_with_status_from_get() {
    let h = Harness::new().await;
    h.apply("ManagedCluster", "demo", cluster_spec()).await;

    h.reconcile("ManagedCluster", "demo").await;
    let object = h.object("ManagedCluster", "demo").await.expect("exists");
    assert!(
        object
            .metadata
            .finalizers
            .as_ref()
            .is_some_and(|f| f.iter().any(|f| f == FINALIZER)),
        "finalizer first"
    );
    assert_eq!(h.sim.count("PUT"), 1);
    let pending = object
        .data
        .pointer("/status/operatorStatus/pendingOperation")
        .and_then(Value::as_str);
    assert!(
        pending.is_some_and(|p| p.contains("\"verb\":\"PUT\"")),
        "the poller is persisted: {pending:?}"
    );
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "Unknown");

    let steps = h.converge("ManagedCluster", "demo").await;
    let (status, reason, _) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "Succeeded"),
        "after {steps} more steps"
    );
    assert_eq!(h.sim.count("PUT"), 1, "one PUT in all");
    assert!(h.sim.count_polls() >= 2, "the operation was polled");
    let object = h.object("ManagedCluster", "demo").await.expect("exists");
    let status = &object.data["status"];
    assert_eq!(status["id"], json!(cluster_id("demo")));
    assert_eq!(status["provisioningState"], json!("Succeeded"));
    assert!(
        status["fqdn"].as_str().is_some_and(|f| f.starts_with("demo")),
        "server-filled fields: {status}"
    );
    assert!(
        status.pointer("/operatorStatus/pendingOperation").is_none(),
        "operation cleared: {status}"
    );
}

#[tokio::test]
async fn in_sync_resync_costs_one_get_and_no_write_and_a_change_one_put() {
    let h = Harness::new().await;
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;

    h.clear_traffic();
    h.api.clear_requests();
    for _ in 0..3 {
        h.reconcile("ManagedCluster", "demo").await;
    }
    assert_eq!(
        (h.sim.count("GET"), h.sim.count("PUT")),
        (3, 0),
        "three resyncs: 1 GET and 0 PUT each"
    );
    let writes: Vec<_> = h.api.requests().into_iter().filter(|r| r.method != "GET").collect();
    assert!(
        writes.is_empty(),
        "nothing written to the API server either: {writes:?}"
    );

    h.patch_spec("ManagedCluster", "demo", json!({"tags": {"team": "a"}}))
        .await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.sim.count("PUT"), 1, "a spec change: exactly one PUT");
    let stored = h.sim.resource(&cluster_id("demo")).expect("stored");
    assert_eq!(stored["tags"], json!({"team": "a"}));
    h.clear_traffic();
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(h.sim.count("PUT"), 0);
}

#[tokio::test]
async fn a_server_side_normalization_becomes_a_known_difference_not_a_put_loop() {
    let h = Harness::new().await;
    h.sim.set_normalizer(
        "Microsoft.ContainerService/managedClusters",
        Arc::new(|body: &mut Value| {
            if let Some(v) = body.pointer_mut("/properties/kubernetesVersion")
                && v == "1.31"
            {
                *v = json!("1.31.2");
            }
        }),
    );
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.sim.count("PUT"), 1);
    let object = h.object("ManagedCluster", "demo").await.expect("exists");
    let known = &object.data["status"]["operatorStatus"]["knownDifferences"];
    assert_eq!(known[0]["path"], json!("spec.kubernetesVersion"), "{known}");

    for _ in 0..3 {
        h.reconcile("ManagedCluster", "demo").await;
    }
    assert_eq!(h.sim.count("PUT"), 1, "no PUT loop");
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");

    h.patch_spec("ManagedCluster", "demo", json!({"kubernetesVersion": "1.32"}))
        .await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.sim.count("PUT"), 2, "a user change of that field still PUTs");
}

#[tokio::test]
async fn a_restart_during_a_long_running_put_resumes_polling_without_a_second_put() {
    let mut h = Harness::with(
        arm_simulator::SimulatorConfig {
            operation_polls: 4,
            ..sim_config()
        },
        None,
    )
    .await;
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.reconcile("ManagedCluster", "demo").await;
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(h.sim.count("PUT"), 1);
    assert_eq!(h.ready("ManagedCluster", "demo").await.1, "Reconciling");

    h.restart();
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(
        h.sim.count("PUT"),
        1,
        "the restarted operator polled the recorded operation"
    );
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
}

#[tokio::test]
async fn throttling_is_spaced_by_retry_after_and_server_errors_are_bounded() {
    let h = Harness::new().await;
    h.sim.inject(
        FaultRule::new(Fault::Throttle { retry_after_secs: 1 })
            .method("GET")
            .times(2),
    );
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.reconcile("ManagedCluster", "demo").await;
    let gets: Vec<u64> = h
        .sim
        .traffic()
        .iter()
        .filter(|e| e.request.method == "GET" && !e.request.url.contains("/operations/"))
        .map(|e| e.at_ms)
        .collect();
    assert!(gets.len() >= 3, "two throttled GETs and the one that passed: {gets:?}");
    for pair in gets.windows(2).take(2) {
        assert!(pair[1] - pair[0] >= 1000, "requests spaced by Retry-After: {gets:?}");
    }
    assert_eq!(h.sim.count("PUT"), 1, "then the PUT went through");

    let h = Harness::new().await;
    h.sim
        .inject(FaultRule::new(Fault::ServerError).method("PUT").times(100));
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(h.sim.count("PUT"), 4, "bounded retries: max_attempts PUTs");
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "InternalServerError"),
        "{message}"
    );
}

#[tokio::test]
async fn a_failed_operation_sets_ready_false_with_the_arm_code_and_a_spec_fix_recovers() {
    let h = Harness::new().await;
    h.sim.inject(quota_exceeded_on_next_put());
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!((status.as_str(), reason.as_str()), ("False", "QuotaExceeded"));
    assert!(message.contains("exceeding approved quota"), "{message}");

    // The spec is fixed (any change: a new generation is sent at once, although the error is terminal). The
    // cluster exists (Failed), so its pools are its AgentPools' now and not the change to make.
    h.patch_spec("ManagedCluster", "demo", json!({"tags": {"quota": "raised"}}))
        .await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
    assert_eq!(h.sim.count("PUT"), 2);
}

#[tokio::test]
async fn a_child_created_before_its_owner_waits_then_succeeds() {
    let h = Harness::new().await;
    h.apply("AgentPool", "gpu", pool_spec("demo")).await;
    h.reconcile("AgentPool", "gpu").await;
    let (status, reason, message) = h.ready("AgentPool", "gpu").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "WaitingForOwner"),
        "{message}"
    );
    assert!(message.contains("ManagedCluster team-a/demo"), "{message}");
    assert_eq!(h.sim.traffic().len(), 0, "nothing sent to Azure");

    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.reconcile("AgentPool", "gpu").await;
    assert_eq!(
        h.ready("AgentPool", "gpu").await.1,
        "WaitingForOwner",
        "the owner is not in Azure yet"
    );
    h.converge("ManagedCluster", "demo").await;
    h.converge("AgentPool", "gpu").await;
    assert_eq!(h.ready("AgentPool", "gpu").await.0, "True");
    let pool = h
        .sim
        .resource(&format!("{}/agentPools/gpu", cluster_id("demo")))
        .expect("pool created");
    assert_eq!(pool["properties"]["count"], json!(2));
}

#[tokio::test]
async fn a_missing_secret_is_named_in_the_condition_and_its_value_never_leaks() {
    let h = Harness::new().await;
    let mut spec = cluster_spec();
    spec["windowsProfile"] =
        json!({"adminUsername": "azureuser", "adminPassword": {"name": "win-admin", "key": "password"}});
    h.apply("ManagedCluster", "demo", spec).await;
    h.reconcile("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!((status.as_str(), reason.as_str()), ("False", "SecretNotFound"));
    assert!(
        message.contains("team-a/win-admin") && message.contains("windowsProfile.adminPassword"),
        "{message}"
    );
    assert_eq!(h.sim.count("PUT"), 0);

    let value = "Pa55w0rd-never-in-status";
    h.api.insert(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "win-admin", "namespace": NS},
        "stringData": {},
        "data": {"password": base64(value)},
    }));
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
    let put = h
        .sim
        .traffic()
        .into_iter()
        .find(|e| e.request.method == "PUT")
        .expect("a PUT");
    assert_eq!(
        put.request
            .body
            .as_ref()
            .and_then(|b| b.pointer("/properties/windowsProfile/adminPassword")),
        Some(&json!(value))
    );
    let object = serde_json::to_string(&h.object("ManagedCluster", "demo").await.expect("exists")).expect("json");
    assert!(!object.contains(value), "the secret is not in the custom resource");
    let events = serde_json::to_string(&h.api.list("events.k8s.io/v1", "events")).expect("json");
    assert!(!events.contains(value), "nor in events");
}

fn base64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[tokio::test]
async fn delete_sends_delete_and_removes_the_finalizer() {
    let h = Harness::new().await;
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    h.delete("ManagedCluster", "demo").await;
    assert!(
        h.object("ManagedCluster", "demo").await.is_some(),
        "held by the finalizer"
    );
    h.reconcile_until_gone("ManagedCluster", "demo").await;
    assert_eq!(h.sim.count("DELETE"), 1);
    assert!(h.sim.resource(&cluster_id("demo")).is_none(), "gone from Azure");
    assert!(
        h.object("ManagedCluster", "demo").await.is_none(),
        "gone from the cluster"
    );
}

#[tokio::test]
async fn detach_on_delete_keeps_the_azure_resource() {
    let h = Harness::new().await;
    h.apply_with(
        "ManagedCluster",
        "demo",
        cluster_spec(),
        json!({POLICY_ANNOTATION: "detach-on-delete"}),
    )
    .await;
    h.converge("ManagedCluster", "demo").await;
    h.delete("ManagedCluster", "demo").await;
    h.reconcile_until_gone("ManagedCluster", "demo").await;
    assert_eq!(h.sim.count("DELETE"), 0);
    assert!(h.sim.resource(&cluster_id("demo")).is_some(), "still in Azure");
}

#[tokio::test]
async fn skip_observes_and_never_writes() {
    let h = Harness::new().await;
    let existing = json!({
        "location": "westeurope",
        "properties": {"dnsPrefix": "legacy", "kubernetesVersion": "1.30",
            "agentPoolProfiles": [{"name": "system", "count": 1, "vmSize": "Standard_D2s_v5", "mode": "System"}]},
    });
    let api_version = h.ctx("ManagedCluster").info.arm.api_version;
    h.sim
        .seed(&cluster_id("legacy"), api_version, existing)
        .expect("seeded");
    let mut spec = cluster_spec();
    spec["dnsPrefix"] = json!("different");
    h.apply_with("ManagedCluster", "legacy", spec, json!({POLICY_ANNOTATION: "skip"}))
        .await;
    h.clear_traffic();
    for _ in 0..2 {
        h.reconcile("ManagedCluster", "legacy").await;
    }
    assert_eq!(h.sim.count("PUT") + h.sim.count("DELETE"), 0, "no write of any kind");
    let (status, reason, _) = h.ready("ManagedCluster", "legacy").await;
    assert_eq!((status.as_str(), reason.as_str()), ("True", "Observed"));
    let object = h.object("ManagedCluster", "legacy").await.expect("exists");
    assert_eq!(
        object.data["status"]["dnsPrefix"],
        json!("legacy"),
        "status from the GET"
    );
    assert!(
        object.metadata.finalizers.unwrap_or_default().is_empty(),
        "no finalizer"
    );
    h.delete("ManagedCluster", "legacy").await;
    assert!(h.object("ManagedCluster", "legacy").await.is_none());
    assert_eq!(h.sim.count("DELETE"), 0);
}

#[tokio::test]
async fn dropped_connections_are_retried_and_a_canceled_operation_is_reported() {
    let h = Harness::new().await;
    h.sim
        .inject(FaultRule::new(Fault::DropConnection).method("GET").times(2));
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(
        h.sim.count("GET"),
        3,
        "two dropped connections, then the GET that passed"
    );
    assert_eq!(h.sim.count("PUT"), 1, "and the reconcile went on to the PUT");

    let h = Harness::new().await;
    h.sim.inject(FaultRule::new(Fault::CancelOperation).method("PUT"));
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(status, "False", "{reason}: {message}");
    assert!(
        message.contains("PUT") && message.contains(&cluster_id("demo")),
        "{message}"
    );
}

#[tokio::test]
async fn no_put_while_azure_reports_a_non_terminal_provisioning_state() {
    let h = Harness::with(
        arm_simulator::SimulatorConfig {
            operation_polls: 50,
            ..sim_config()
        },
        None,
    )
    .await;
    // Someone else (the portal, another tool) started an update the operator knows nothing about.
    let api_version = h.ctx("ManagedCluster").info.arm.api_version;
    let url = format!("{}{}?api-version={api_version}", h.running.base_url, cluster_id("demo"));
    let body = json!({"location": "westeurope", "properties": {"dnsPrefix": "demo",
        "agentPoolProfiles": [{"name": "system", "count": 1, "vmSize": "Standard_D2s_v5", "mode": "System"}]}});
    let response = reqwest::Client::new().put(&url).json(&body).send().await.expect("PUT");
    assert_eq!(response.status().as_u16(), 201);
    h.clear_traffic();

    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    for _ in 0..3 {
        h.reconcile("ManagedCluster", "demo").await;
    }
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("Unknown", "Provisioning"),
        "{message}"
    );
    assert!(message.contains("Creating"), "{message}");
    assert_eq!(h.sim.count("PUT"), 0, "requeued, never PUT over a running operation");
}
