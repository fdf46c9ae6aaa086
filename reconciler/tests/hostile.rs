//! Regression tests for faults and attacks found by driving the real binaries as a hostile tenant, a flaky Azure
//! and a careless spec author would (issue 13): each reproduces the fault and asserts the safe outcome.

mod common;

use std::sync::Arc;
use std::time::Duration;

use aks_reconciler::reconcile::api_resource;
use arm_simulator::{Fault, FaultRule};
use common::*;
use kube::Api;
use kube::api::{DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

/// A harness whose failed-operation backoff is `failed` (the default is minutes).
async fn harness_failing_after(failed: Duration) -> Harness {
    let mut h = Harness::new().await;
    let mut shared = Harness::shared(&h.api, &h.running.base_url, h.shared.credentials.clone());
    Arc::get_mut(&mut shared).expect("fresh").settings.failed = failed;
    h.shared = shared;
    h
}

async fn patch_status(h: &Harness, kind: &str, name: &str, status: Value) {
    let api: Api<DynamicObject> = Api::namespaced_with(h.api.client(), NS, &api_resource(h.ctx(kind).info));
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({ "status": status })),
    )
    .await
    .expect("status patch");
}

/// Item 2: a resource Azure reports `Failed` is never `Ready`; after the backoff the spec is PUT again, and the
/// condition keeps ARM's error until then.
#[tokio::test]
async fn a_failed_operation_is_never_ready_and_is_retried_after_the_backoff() {
    let h = harness_failing_after(Duration::from_millis(300)).await;
    h.sim.inject(
        FaultRule::new(Fault::FailOperation {
            code: "QuotaExceeded".into(),
            message: "Operation could not be completed as it results in exceeding approved quota".into(),
        })
        .method("PUT"),
    );
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "QuotaExceeded"),
        "{message}"
    );
    assert_eq!(
        h.sim
            .resource(&cluster_id("demo"))
            .and_then(|b| b.pointer("/properties/provisioningState").cloned()),
        Some(json!("Failed"))
    );
    assert_eq!(h.sim.count("PUT"), 1);

    // Within the backoff: no PUT, still not Ready, still ARM's error.
    h.reconcile("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "QuotaExceeded"),
        "{message}"
    );
    assert!(message.contains("exceeding approved quota"), "{message}");
    assert_eq!(h.sim.count("PUT"), 1, "no PUT within the backoff");

    // After it: the same spec is sent again, and this time the operation succeeds.
    tokio::time::sleep(Duration::from_millis(350)).await;
    h.converge("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!((status.as_str(), reason.as_str()), ("True", "Succeeded"), "{message}");
    assert_eq!(h.sim.count("PUT"), 2, "one retry PUT");
    let operator = h
        .object("ManagedCluster", "demo")
        .await
        .and_then(|o| o.data.pointer("/status/operatorStatus").cloned());
    assert_eq!(
        operator, None,
        "the failure record is cleared once in sync: {operator:?}"
    );
}

/// Item 2, backoff: consecutive failures double the wait.
#[tokio::test]
async fn consecutive_failures_back_off() {
    let h = harness_failing_after(Duration::from_secs(60)).await;
    h.sim.inject(
        FaultRule::new(Fault::FailOperation {
            code: "InternalOperationError".into(),
            message: "boom".into(),
        })
        .method("PUT")
        .times(1),
    );
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.reconcile("ManagedCluster", "demo").await;
    let mut last = None;
    for _ in 0..5 {
        last = h.reconcile("ManagedCluster", "demo").await;
        if h.ready("ManagedCluster", "demo").await.0 == "False" {
            break;
        }
    }
    assert_eq!(
        last,
        Some(kube::runtime::controller::Action::requeue(Duration::from_secs(60))),
        "first failure: the base interval"
    );
    let (_, _, message) = h.ready("ManagedCluster", "demo").await;
    assert!(message.contains("retrying in 60s"), "{message}");
}

async fn pending_operation_that_cannot_be_polled(url: &str) {
    let h = Harness::new().await;
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
    let poller = json!({
        "verb": "PUT",
        "resourceId": cluster_id("demo"),
        "apiVersion": h.ctx("ManagedCluster").info.arm.api_version,
        "url": url,
        "via": "asyncOperation",
    });
    patch_status(
        &h,
        "ManagedCluster",
        "demo",
        json!({"operatorStatus": {"pendingOperation": poller.to_string()}}),
    )
    .await;
    h.clear_traffic();
    let mut spec = cluster_spec();
    spec["agentPoolProfiles"][0]["count"] = json!(5);
    h.patch_spec(
        "ManagedCluster",
        "demo",
        json!({"agentPoolProfiles": spec["agentPoolProfiles"]}),
    )
    .await;
    h.converge("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!((status.as_str(), reason.as_str()), ("True", "Succeeded"), "{message}");
    assert_eq!(h.sim.count("PUT"), 1, "the spec change is applied");
    let count = h
        .sim
        .resource(&cluster_id("demo"))
        .and_then(|b| b.pointer("/properties/agentPoolProfiles/0/count").cloned());
    assert_eq!(count, Some(json!(5)));
    let events = h.api.list("events.k8s.io/v1", "events");
    assert!(
        events.iter().any(|e| e["reason"] == "OperationLost"),
        "an event says the operation was dropped"
    );
}

/// Item 4: a pending operation whose URL answers 404 is dropped after a GET; later spec changes apply.
#[tokio::test]
async fn a_pending_operation_answering_404_is_dropped() {
    let h = Harness::new().await;
    let url = format!(
        "{}/subscriptions/{SUB}/providers/Microsoft.ContainerService/locations/westeurope/operations/gone?api-version=2025-10-01",
        h.running.base_url
    );
    drop(h);
    pending_operation_that_cannot_be_polled(&url).await;
}

/// Item 4: a pending operation on another origin (a hand-written status) is dropped, and nothing is sent there.
#[tokio::test]
async fn a_pending_operation_on_another_origin_is_dropped() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let url = format!("http://{}/operations/x", listener.local_addr().expect("address"));
    pending_operation_that_cannot_be_polled(&url).await;
    assert!(listener.accept().is_err(), "no connection reached the other origin");
}

/// Item 8: a spec field of the wrong type names its field path.
#[tokio::test]
async fn a_spec_field_of_the_wrong_type_names_its_path() {
    let h = Harness::new().await;
    let mut spec = cluster_spec();
    spec["agentPoolProfiles"][0]["availabilityZones"] = json!("notalist");
    h.apply("ManagedCluster", "demo", spec).await;
    h.reconcile("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "InvalidSpec"),
        "{message}"
    );
    assert!(
        message.starts_with("spec.agentPoolProfiles[0].availabilityZones: invalid type: string \"notalist\""),
        "{message}"
    );
    assert_eq!(h.sim.count("PUT"), 0);
}
