//! Views (reconciler/src/views.rs) against the ARM simulator: read-only ARM GETs under a resource, kept in its
//! status. Which views a kind has comes from the registry (`aks_api::VIEWS`); the test builds the objects of every
//! kind that has views in the served version (a kind it cannot build fails the test, naming the kind to add).

mod common;

use std::time::Duration;

use armgen_runtime::ViewInfo;
use common::*;
use serde_json::{Value, json};

const POOL: &str = "pool1";
const CLUSTER: &str = "prod";

/// The views of the served version of `kind`.
fn views_of(h: &Harness, kind: &str) -> Vec<&'static ViewInfo> {
    let info = h.ctx(kind).info;
    aks_api::VIEWS
        .iter()
        .filter(|v| v.group == info.group && v.version == info.version && v.kind == info.kind)
        .collect()
}

/// The served kinds that have views, with the name of their object in [`setup`].
fn kinds_with_views(h: &Harness) -> Vec<(&'static str, &'static str)> {
    let mut kinds: Vec<&'static str> = aks_api::VIEWS
        .iter()
        .filter(|v| {
            let info = h.ctx(v.kind).info;
            info.group == v.group && info.version == v.version
        })
        .map(|v| v.kind)
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert!(!kinds.is_empty(), "no served kind has views");
    kinds
        .into_iter()
        .map(|k| match k {
            "ManagedCluster" => (k, CLUSTER),
            "AgentPool" => (k, POOL),
            other => panic!("{other} has views: build one in tests/views.rs's setup"),
        })
        .collect()
}

/// A resource group, a cluster and a pool, created and Ready.
async fn setup(h: &Harness) {
    h.apply("ResourceGroup", RG, json!({"location": "westeurope"})).await;
    h.converge("ResourceGroup", RG).await;
    h.apply("ManagedCluster", CLUSTER, cluster_spec()).await;
    h.converge("ManagedCluster", CLUSTER).await;
    h.apply("AgentPool", POOL, pool_spec(CLUSTER)).await;
    h.converge("AgentPool", POOL).await;
    for kind in ["ManagedCluster", "AgentPool"] {
        let name = if kind == "AgentPool" { POOL } else { CLUSTER };
        let (status, reason, message) = h.ready(kind, name).await;
        assert_eq!(status, "True", "{kind} {name}: {reason}: {message}");
    }
}

/// The view GETs in the simulator's traffic since it was last cleared: `GET <id>/<view path>` of `views`.
fn view_gets(h: &Harness, views: &[&ViewInfo]) -> usize {
    h.sim
        .traffic()
        .iter()
        .filter(|e| e.request.method == "GET")
        .filter(|e| {
            let path = e.request.url.split('?').next().unwrap_or_default().to_ascii_lowercase();
            views
                .iter()
                .any(|v| path.ends_with(&format!("/{}", v.path.to_ascii_lowercase())))
        })
        .count()
}

async fn status(h: &Harness, kind: &str, name: &str) -> Value {
    h.object(kind, name)
        .await
        .map(|o| o.data["status"].clone())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn every_view_is_in_the_status_once_the_resource_is_in_sync() {
    let h = Harness::new().await;
    setup(&h).await;
    for (kind, name) in kinds_with_views(&h) {
        let status = status(&h, kind, name).await;
        for v in views_of(&h, kind) {
            let value = &status[v.field];
            assert!(
                value.is_object() || value.is_array(),
                "{kind} {name}: status.{} is {value}",
                v.field
            );
            if v.pageable {
                // Every page's items (a pool's machines: one per node).
                let items = value.as_array().map(Vec::len).unwrap_or_default();
                assert!(items > 0, "{kind} {name}: status.{} has no items", v.field);
            }
        }
    }
    // The cluster's upgrade profile names the version it runs (the simulator's, typed by the generated status).
    let cluster = status(&h, "ManagedCluster", CLUSTER).await;
    let running = cluster["currentKubernetesVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!running.is_empty(), "{cluster}");
    if views_of(&h, "ManagedCluster")
        .iter()
        .any(|v| v.field == "upgradeProfile")
    {
        assert_eq!(
            cluster
                .pointer("/upgradeProfile/properties/controlPlaneProfile/kubernetesVersion")
                .and_then(Value::as_str),
            Some(running.as_str()),
            "{}",
            cluster["upgradeProfile"]
        );
    }
}

#[tokio::test]
async fn an_object_in_sync_costs_its_gets_per_interval_and_no_write() {
    let mut h = Harness::new().await;
    setup(&h).await;
    for (kind, name) in kinds_with_views(&h) {
        let views = views_of(&h, kind);
        // Within the interval (the config's, at least a minute): one GET per resync, no view read, no write. (One
        // reconcile first: the cluster's status changed when the pool was made.)
        h.reconcile(kind, name).await;
        h.clear_traffic();
        h.api.clear_requests();
        for _ in 0..3 {
            h.reconcile(kind, name).await;
        }
        assert_eq!(view_gets(&h, &views), 0, "{kind}: no view is due yet");
        assert_eq!(
            (h.sim.count("GET"), h.sim.count("PUT")),
            (3, 0),
            "{kind}: 1 GET per resync"
        );
        assert_eq!(h.kube_writes(), Vec::<String>::new(), "{kind}: nothing written");
    }
    // Every reconcile a new interval (`--view-refresh-interval` shorter than the resync): each costs the
    // resource's GET and one GET per view (a pageable view one per page), and still writes nothing while the views
    // say the same.
    h.set_settings(|s| s.view_refresh = Some(Duration::ZERO));
    for (kind, name) in kinds_with_views(&h) {
        let views = views_of(&h, kind);
        h.reconcile(kind, name).await; // the restarted operator's first read of every view
        h.clear_traffic();
        h.api.clear_requests();
        for _ in 0..3 {
            h.reconcile(kind, name).await;
        }
        assert_eq!(
            view_gets(&h, &views),
            3 * views.len(),
            "{kind}: each view once per interval"
        );
        // (The simulator counts view GETs apart from the resource's own.)
        assert_eq!(h.sim.count_views(), 3 * views.len(), "{kind}: the documented view GETs");
        assert_eq!(h.sim.count("GET"), 3, "{kind}: the resource's GET per resync");
        assert_eq!(h.sim.count("PUT"), 0, "{kind}: never a PUT");
        assert_eq!(
            h.kube_writes(),
            Vec::<String>::new(),
            "{kind}: the same views write nothing"
        );
    }
}

#[tokio::test]
async fn a_restarted_reconciler_reads_each_view_once_then_keeps_the_interval() {
    let mut h = Harness::new().await;
    setup(&h).await;
    h.restart();
    for (kind, name) in kinds_with_views(&h) {
        let views = views_of(&h, kind);
        h.clear_traffic();
        h.reconcile(kind, name).await;
        assert_eq!(
            view_gets(&h, &views),
            views.len(),
            "{kind}: read once after the restart"
        );
        h.clear_traffic();
        h.reconcile(kind, name).await;
        assert_eq!(view_gets(&h, &views), 0, "{kind}: then not before the interval");
        // The status kept them all the while.
        let status = status(&h, kind, name).await;
        for v in &views {
            assert!(!status[v.field].is_null(), "{kind}: status.{} lost", v.field);
        }
    }
}

#[tokio::test]
async fn a_change_the_reconciler_makes_reads_the_views_again() {
    let h = Harness::new().await;
    setup(&h).await;
    let views = views_of(&h, "AgentPool");
    h.clear_traffic();
    h.patch_spec("AgentPool", POOL, json!({"count": 3})).await;
    h.converge("AgentPool", POOL).await;
    assert_eq!(h.sim.count("PUT"), 1, "the scale: one PUT");
    assert_eq!(
        view_gets(&h, &views),
        views.len(),
        "every view read again after the change"
    );
    let status = status(&h, "AgentPool", POOL).await;
    if let Some(machines) = views.iter().find(|v| v.path == "machines") {
        assert_eq!(
            status[machines.field].as_array().map(Vec::len),
            Some(3),
            "one machine per node after the scale: {}",
            status[machines.field]
        );
    }
}

#[tokio::test]
async fn a_failed_view_keeps_its_value_and_is_read_again_at_the_next_reconcile() {
    let mut h = Harness::new().await;
    setup(&h).await;
    h.set_settings(|s| s.view_refresh = Some(Duration::ZERO));
    let views = views_of(&h, "ManagedCluster");
    let view = views.first().expect("the cluster has views");
    let before = status(&h, "ManagedCluster", CLUSTER).await[view.field].clone();
    assert!(!before.is_null());
    // 500s until the client gives up: the view keeps its value, Ready stays True, an event says why.
    h.sim.inject(
        arm_simulator::FaultRule::new(arm_simulator::Fault::ServerError)
            .method("GET")
            .path_contains(view.path)
            .times(10),
    );
    h.reconcile("ManagedCluster", CLUSTER).await;
    let after = status(&h, "ManagedCluster", CLUSTER).await;
    assert_eq!(after[view.field], before, "kept");
    assert_eq!(h.ready("ManagedCluster", CLUSTER).await.0, "True");
    let events = h.api.list("events.k8s.io/v1", "events");
    assert!(
        events
            .iter()
            .any(|e| e["reason"] == "ViewFailed" && e["note"].as_str().is_some_and(|n| n.contains(view.field))),
        "a ViewFailed event: {events:?}"
    );
    h.sim.clear_faults();
    h.reconcile("ManagedCluster", CLUSTER).await;
    let healed = status(&h, "ManagedCluster", CLUSTER).await;
    assert!(!healed[view.field].is_null(), "read again at the next reconcile");
}

/// The object as the controller's watch cache holds it (crate::cache), after a reconcile: its status slimmed to
/// what the loop reads, with a digest of the rest and of each view.
async fn as_cached(h: &Harness, kind: &str, name: &str) -> kube::api::DynamicObject {
    h.reconcile(kind, name).await;
    let mut cached = h.object(kind, name).await.expect("exists");
    aks_reconciler::cache::slim_with(&mut cached, &[], &aks_reconciler::views::fields(h.ctx(kind).info));
    cached
}

/// Reconciles `object` as the controller would hand it over, the traffic and API requests counted from here.
async fn reconcile_counted(h: &Harness, kind: &str, object: kube::api::DynamicObject) {
    h.clear_traffic();
    h.api.clear_requests();
    aks_reconciler::reconcile::reconcile(std::sync::Arc::new(object), h.ctx(kind))
        .await
        .expect("reconcile");
}

#[tokio::test]
async fn a_status_written_from_the_watch_cache_keeps_the_views() {
    let h = Harness::new().await;
    setup(&h).await;
    for (kind, name) in kinds_with_views(&h) {
        let views = views_of(&h, kind);
        // The cached object with its digest made stale (as if Azure's side of the status had changed since), so the
        // status is written — whole, replacing what the API server has — without reading the views again from ARM.
        let cached = as_cached(&h, kind, name).await;
        assert!(
            aks_reconciler::cache::cached_digest(&cached).is_some(),
            "{kind}: slimmed"
        );
        let mut cached = aks_reconciler::cache::whole(&cached).into_owned();
        cached.data[aks_reconciler::cache::STATUS_DIGEST] = json!(0);
        reconcile_counted(&h, kind, cached).await;
        assert_eq!(view_gets(&h, &views), 0, "{kind}: no view was due");
        assert!(
            h.kube_writes().iter().any(|w| w.ends_with("/status")),
            "{kind}: the status was written"
        );
        let status = status(&h, kind, name).await;
        for v in &views {
            assert!(
                !status[v.field].is_null(),
                "{kind}: status.{} lost in the write",
                v.field
            );
        }
        assert!(status["conditions"].as_array().is_some_and(|c| !c.is_empty()));
    }
}

#[tokio::test]
async fn an_object_in_sync_in_the_watch_cache_costs_no_read_of_its_views_and_no_write() {
    let h = Harness::new().await;
    setup(&h).await;
    for (kind, name) in kinds_with_views(&h) {
        let views = views_of(&h, kind);
        // The views' values dropped, their digests kept.
        let cached = as_cached(&h, kind, name).await;
        assert_eq!(
            aks_reconciler::cache::view_digests(&cached, &aks_reconciler::views::fields(h.ctx(kind).info)).len(),
            views.len(),
            "{kind}: every view's digest is cached"
        );
        let status_text = aks_reconciler::cache::status(&cached).expect("status").to_string();
        for v in &views {
            assert!(
                !status_text.contains(&format!("\"{}\"", v.field)),
                "{kind}: {} is not cached",
                v.field
            );
        }
        reconcile_counted(&h, kind, cached).await;
        assert_eq!(view_gets(&h, &views), 0, "{kind}: no view was due");
        assert!(
            h.kube_writes().is_empty(),
            "{kind}: in sync, nothing written: {:?}",
            h.kube_writes()
        );
        let plural = &h.ctx(kind).resource.plural;
        assert_eq!(
            h.api.count("GET", &format!("/{plural}/{name}/status")),
            0,
            "{kind}: the views' values were not read back"
        );
    }
}

#[tokio::test]
async fn a_view_that_answers_not_found_is_removed_from_the_status() {
    let mut h = Harness::new().await;
    setup(&h).await;
    h.set_settings(|s| s.view_refresh = Some(Duration::ZERO));
    let views = views_of(&h, "AgentPool");
    let view = views.last().expect("the pool has views");
    assert!(!status(&h, "AgentPool", POOL).await[view.field].is_null());
    h.sim.inject(
        arm_simulator::FaultRule::new(arm_simulator::Fault::NotFound)
            .method("GET")
            .path_contains(&format!("/{}", view.path))
            .times(1),
    );
    h.reconcile("AgentPool", POOL).await;
    let gone = status(&h, "AgentPool", POOL).await;
    assert!(
        gone[view.field].is_null(),
        "status.{} removed: {}",
        view.field,
        gone[view.field]
    );
    assert_eq!(
        h.ready("AgentPool", POOL).await.0,
        "True",
        "a missing view is no failure"
    );
    for other in views.iter().filter(|v| v.field != view.field) {
        assert!(!gone[other.field].is_null(), "status.{} kept", other.field);
    }
    h.reconcile("AgentPool", POOL).await;
    assert!(
        !status(&h, "AgentPool", POOL).await[view.field].is_null(),
        "back once it answers"
    );
}
