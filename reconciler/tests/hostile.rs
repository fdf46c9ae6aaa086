//! Regression tests for faults and attacks found by driving the real binaries as a hostile tenant, a flaky Azure
//! and a careless spec author would (issue 13): each reproduces the fault and asserts the safe outcome.

mod common;

use std::sync::Arc;
use std::time::Duration;

use arm_simulator::{Fault, FaultRule};
use common::*;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

/// A harness whose failed-operation backoff is `failed` (the default is minutes).
async fn harness_failing_after(failed: Duration) -> Harness {
    let mut h = Harness::new().await;
    let mut shared = Harness::shared(&h.api, &h.running.base_url, h.shared.credentials.clone());
    Arc::get_mut(&mut shared).expect("fresh").settings.failed = failed;
    h.shared = shared;
    h
}

/// Writes `status` into the object's status, as a tenant allowed to patch status could.
async fn patch_status(h: &Harness, kind: &str, namespace: &str, name: &str, status: Value) {
    h.api_in(kind, namespace)
        .patch_status(
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
    // An operation failing for a reason the rules do not call terminal (QuotaExceeded is: tests/aks_rules.rs).
    h.sim.inject(failed_operation_on_next_put("InternalOperationError"));
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "InternalOperationError"),
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
        ("False", "InternalOperationError"),
        "{message}"
    );
    assert!(message.contains("the operation failed"), "{message}");
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
        NS,
        "demo",
        json!({"operatorStatus": {"pendingOperation": poller.to_string()}}),
    )
    .await;
    h.clear_traffic();
    h.patch_spec("ManagedCluster", "demo", json!({"tags": {"team": "a"}}))
        .await;
    h.converge("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!((status.as_str(), reason.as_str()), ("True", "Succeeded"), "{message}");
    assert_eq!(h.sim.count("PUT"), 1, "the spec change is applied");
    let count = h
        .sim
        .resource(&cluster_id("demo"))
        .and_then(|b| b.pointer("/tags/team").cloned());
    assert_eq!(count, Some(json!("a")));
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
        "{}/subscriptions/{SUB}/providers/Microsoft.ContainerService/locations/westeurope/operations/gone?api-version={}",
        h.running.base_url,
        h.ctx("ManagedCluster").info.arm.api_version
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

const OTHER: &str = "other";

async fn team_a_cluster(h: &Harness) {
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
    h.clear_traffic();
}

/// Item 5: a custom resource in another namespace naming team-a's cluster (same resource group and azureName)
/// neither reads nor overwrites it, and deleting it deletes nothing.
#[tokio::test]
async fn a_second_claimant_in_another_namespace_is_refused() {
    let h = Harness::new().await;
    team_a_cluster(&h).await;
    let mut spec = cluster_spec();
    spec["azureName"] = json!("demo");
    spec["dnsPrefix"] = json!("evil");
    h.apply_in("ManagedCluster", OTHER, "copy", spec);
    h.reconcile_in("ManagedCluster", OTHER, "copy").await;
    let (status, reason, message) = h.ready_in("ManagedCluster", OTHER, "copy").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "ClaimedByOther"),
        "{message}"
    );
    assert!(
        message.contains("ManagedCluster team-a/demo"),
        "names the claimant: {message}"
    );
    assert_eq!(h.sim.traffic().len(), 0, "not even a GET of team-a's cluster");

    h.api_in("ManagedCluster", OTHER)
        .delete("copy", &Default::default())
        .await
        .expect("delete");
    for _ in 0..3 {
        if h.reconcile_in("ManagedCluster", OTHER, "copy").await.is_none() {
            break;
        }
    }
    assert_eq!(h.sim.count("DELETE"), 0);
    assert!(
        h.sim.resource(&cluster_id("demo")).is_some(),
        "team-a's cluster is intact"
    );
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
}

/// Item 5: `status.id` edited to another tenant's resource, then the object deleted: nothing is DELETEd.
#[tokio::test]
async fn an_edited_status_id_is_never_deleted() {
    let h = Harness::new().await;
    team_a_cluster(&h).await;
    let mut spec = cluster_spec();
    spec["dnsPrefix"] = json!("mine");
    h.apply_in("ManagedCluster", OTHER, "mine", spec);
    for _ in 0..10 {
        h.reconcile_in("ManagedCluster", OTHER, "mine").await;
        if h.ready_in("ManagedCluster", OTHER, "mine").await.0 == "True" {
            break;
        }
    }
    assert_eq!(h.ready_in("ManagedCluster", OTHER, "mine").await.0, "True");
    patch_status(&h, "ManagedCluster", OTHER, "mine", json!({"id": cluster_id("demo")})).await;
    h.api_in("ManagedCluster", OTHER)
        .delete("mine", &Default::default())
        .await
        .expect("delete");
    for _ in 0..3 {
        if h.reconcile_in("ManagedCluster", OTHER, "mine").await.is_none() {
            break;
        }
    }
    assert_eq!(h.sim.count("DELETE"), 0, "no DELETE of whatever status.id says");
    assert!(
        h.sim.resource(&cluster_id("demo")).is_some(),
        "team-a's cluster is intact"
    );
    let events = h.api.list("events.k8s.io/v1", "events");
    assert!(
        events
            .iter()
            .any(|e| e["reason"] == "NotDeleted" && e["note"].as_str().is_some_and(|n| n.contains("holds no claim"))),
        "an event says why"
    );
}

/// Item 5: an owner whose status.id was forged (it never claimed that ID) cannot aim a child at another
/// tenant's cluster.
#[tokio::test]
async fn a_forged_owner_status_does_not_aim_a_child_elsewhere() {
    let h = Harness::new().await;
    team_a_cluster(&h).await;
    h.apply_in("ManagedCluster", OTHER, "fake", cluster_spec());
    patch_status(&h, "ManagedCluster", OTHER, "fake", json!({"id": cluster_id("demo")})).await;
    h.apply_in("AgentPool", OTHER, "evil", pool_spec("fake"));
    h.reconcile_in("AgentPool", OTHER, "evil").await;
    let (status, reason, message) = h.ready_in("AgentPool", OTHER, "evil").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "WaitingForOwner"),
        "{message}"
    );
    assert!(message.contains("holds no claim"), "{message}");
    assert_eq!(h.sim.traffic().len(), 0);
}

/// Item 5: names that would leave the resource's path are refused before any request.
#[tokio::test]
async fn names_that_leave_the_path_are_refused() {
    let h = Harness::new().await;
    let mut spec = cluster_spec();
    spec["owner"] = json!({"name": "../../../providers/Microsoft.Authorization/roleAssignments"});
    h.apply("ManagedCluster", "traversal", spec).await;
    h.reconcile("ManagedCluster", "traversal").await;
    let (status, reason, message) = h.ready("ManagedCluster", "traversal").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "InvalidName"),
        "{message}"
    );
    assert!(message.contains("spec.owner.name"), "{message}");

    let mut spec = cluster_spec();
    spec["owner"] = json!({"armId": format!("/subscriptions/{SUB}/resourceGroups/{RG}/../../x")});
    h.apply("ManagedCluster", "dots", spec).await;
    h.reconcile("ManagedCluster", "dots").await;
    let (_, reason, message) = h.ready("ManagedCluster", "dots").await;
    assert_eq!(reason, "InvalidName", "{message}");

    let mut spec = cluster_spec();
    spec["owner"] =
        json!({"armId": format!("/subscriptions/00000000-0000-0000-0000-00000000ffff/resourceGroups/{RG}")});
    h.apply("ManagedCluster", "elsewhere", spec).await;
    h.reconcile("ManagedCluster", "elsewhere").await;
    let (_, reason, message) = h.ready("ManagedCluster", "elsewhere").await;
    assert_eq!(
        reason, "InvalidOwner",
        "another subscription than the credential's: {message}"
    );

    team_a_cluster(&h).await;
    let mut spec = pool_spec("demo");
    spec["azureName"] = json!("x/agentPools/evil");
    h.apply("AgentPool", "sneaky", spec).await;
    h.reconcile("AgentPool", "sneaky").await;
    let (status, reason, message) = h.ready("AgentPool", "sneaky").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "InvalidName"),
        "{message}"
    );
    assert!(
        message.contains("spec.azureName \"x/agentPools/evil\" contains '/'"),
        "{message}"
    );
    assert_eq!(h.sim.traffic().len(), 0, "nothing reached ARM");
}

/// Item 5: Secret references with `..` or `/`, and references into other namespaces, are refused.
#[tokio::test]
async fn secret_and_cross_namespace_references_are_checked() {
    let h = Harness::new().await;
    let mut spec = cluster_spec();
    spec["servicePrincipalProfile"] =
        json!({"clientId": "app", "secret": {"name": "../../secrets/x", "key": "password"}});
    h.apply("ManagedCluster", "sp", spec).await;
    h.reconcile("ManagedCluster", "sp").await;
    let (status, reason, message) = h.ready("ManagedCluster", "sp").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "InvalidReference"),
        "{message}"
    );
    assert!(
        message.contains("spec.servicePrincipalProfile.secret.name"),
        "{message}"
    );

    team_a_cluster(&h).await;
    let mut spec = pool_spec("demo");
    spec["vnetSubnetID"] =
        json!({"group": "containerservice.armgen.dev", "kind": "ManagedCluster", "name": "demo", "namespace": OTHER});
    h.apply("AgentPool", "crossns", spec).await;
    h.reconcile("AgentPool", "crossns").await;
    let (status, reason, message) = h.ready("AgentPool", "crossns").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "InvalidReference"),
        "{message}"
    );
    assert!(message.contains("other namespaces"), "{message}");
    assert_eq!(h.sim.count("PUT"), 0);
}
