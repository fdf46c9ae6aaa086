//! A reconcile that runs on a cached object older than the reconciler's own last write (the watch behind the
//! writes, as under load) must not write a status computed from that stale state: its writes are conditional on the
//! resource version it read, so it fails with a conflict and the controller retries it on a fresh object.

mod common;

use std::sync::Arc;

use common::*;
use serde_json::json;

const CLUSTER: &str = "stale";

#[tokio::test]
async fn a_stale_cached_object_cannot_overwrite_a_pending_operation() {
    let h = Harness::new().await;
    h.apply("ResourceGroup", RG, json!({"location": "westeurope"})).await;
    h.converge("ResourceGroup", RG).await;
    h.apply("ManagedCluster", CLUSTER, cluster_spec()).await;
    let pending = |o: &kube::api::DynamicObject| {
        o.data
            .pointer("/status/operatorStatus/pendingOperation")
            .is_some_and(|p| !p.is_null())
    };
    // Reconcile until a PUT is in flight. The copy a watch cache behind the status write would hold: the object
    // with its finalizer (a write of its own, not the one missed) but the status and resource version from before
    // that reconcile.
    let mut stale = None;
    for _ in 0..10 {
        let before = h.object("ManagedCluster", CLUSTER).await.expect("exists");
        h.reconcile("ManagedCluster", CLUSTER).await;
        let after = h.object("ManagedCluster", CLUSTER).await.expect("exists");
        if pending(&after) {
            let mut copy = after.clone();
            copy.metadata.resource_version = before.metadata.resource_version.clone();
            match before.data.get("status") {
                Some(status) => copy.data["status"] = status.clone(),
                None => {
                    if let Some(map) = copy.data.as_object_mut() {
                        map.remove("status");
                    }
                }
            }
            stale = Some(copy);
            break;
        }
    }
    let stale = stale.expect("a PUT with a long-running operation was started");
    assert!(!pending(&stale), "the stale copy does not know of the operation");
    assert!(stale.metadata.finalizers.as_ref().is_some_and(|f| !f.is_empty()));
    h.clear_traffic();
    // The stale copy, as a watch cache behind the status write would hand it to the next reconcile.
    let result = aks_reconciler::reconcile::reconcile(Arc::new(stale), h.ctx("ManagedCluster")).await;
    assert!(result.is_err(), "a conflict, retried: {result:?}");
    let now = h.object("ManagedCluster", CLUSTER).await.expect("exists");
    assert!(
        pending(&now),
        "the pending operation is still recorded: {:?}",
        now.data["status"]
    );
    let puts = h.sim.traffic().iter().filter(|e| e.request.method == "PUT").count();
    assert_eq!(puts, 0, "no second PUT from the stale copy");
    // A fresh reconcile goes on from the recorded operation.
    h.converge("ManagedCluster", CLUSTER).await;
    let (status, reason, message) = h.ready("ManagedCluster", CLUSTER).await;
    assert_eq!(status, "True", "{reason}: {message}");
    let done = h.object("ManagedCluster", CLUSTER).await.expect("exists");
    assert!(!pending(&done), "the operation is cleared when it ends");
}
