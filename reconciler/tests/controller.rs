//! The real kube-rs controllers (`controller::run`) against the fake API server and the simulator: watches,
//! the trigger filter (the reconciler's own status writes do not re-trigger it), and children woken by their
//! owner's changes rather than by the retry timer.

mod common;

use std::time::{Duration, Instant};

use aks_reconciler::controller::{RunOptions, run, served_kinds};
use common::*;
use futures::FutureExt;

async fn wait_ready(h: &Harness, kind: &str, name: &str, within: Duration) -> Duration {
    let start = Instant::now();
    while start.elapsed() < within {
        if h.object(kind, name).await.is_some() && h.ready(kind, name).await.0 == "True" {
            return start.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "{kind} {name} not ready within {within:?}: {:?}",
        h.ready(kind, name).await
    );
}

/// The real controllers of every served kind, watching the test namespace, until [`Controllers::stop`].
struct Controllers {
    stop: tokio::sync::oneshot::Sender<()>,
    running: tokio::task::JoinHandle<()>,
}

impl Controllers {
    fn start(h: &Harness) -> Self {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let options = RunOptions {
            namespace: Some(NS.into()),
            concurrency: 4,
            shutdown: Some(stopped.map(|_| ()).boxed()),
        };
        let running = tokio::spawn(run(h.shared.clone(), served_kinds(&[]), options));
        Controllers { stop, running }
    }

    /// Shuts the controllers down; they must stop within 10 s without a panic.
    async fn stop(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(10), self.running)
            .await
            .expect("controllers stop")
            .expect("no panic");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_reconcile_children_when_their_owner_appears_and_stay_quiet_when_in_sync() {
    let h = Harness::new().await;
    let controllers = Controllers::start(&h);

    h.apply("AgentPool", "gpu", pool_spec("demo")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(h.ready("AgentPool", "gpu").await.1, "WaitingForOwner");
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    wait_ready(&h, "ManagedCluster", "demo", Duration::from_secs(20)).await;
    // The retry timer is 30 s (Settings::wait): the pool is ready long before, woken by its owner's status.
    let waited = wait_ready(&h, "AgentPool", "gpu", Duration::from_secs(10)).await;
    assert!(waited < Duration::from_secs(10));
    assert_eq!(h.sim.count("PUT"), 2);

    // In sync: the status writes do not trigger more reconciles; nothing reaches ARM while idle.
    tokio::time::sleep(Duration::from_millis(500)).await;
    h.sim.clear_traffic();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(h.sim.traffic().len(), 0, "idle and in sync: no ARM call");

    // A spec change is picked up by the watch: one PUT.
    h.patch_spec("AgentPool", "gpu", serde_json::json!({"count": 5})).await;
    let start = Instant::now();
    while h.sim.count("PUT") == 0 && start.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    wait_ready(&h, "AgentPool", "gpu", Duration::from_secs(10)).await;
    assert_eq!(h.sim.count("PUT"), 1);

    // Deletion through the finalizer.
    h.delete("AgentPool", "gpu").await;
    let start = Instant::now();
    while h.object("AgentPool", "gpu").await.is_some() && start.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        h.object("AgentPool", "gpu").await.is_none(),
        "finalizer removed after the DELETE"
    );
    assert_eq!(h.sim.count("DELETE"), 1);

    controllers.stop().await;
}

/// Issue 13 item 9: an owner's deletion wakes its children, which report the owner gone instead of staying
/// `Ready=True` until their next resync (600 s here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_an_owner_wakes_its_children() {
    let h = Harness::new().await;
    let controllers = Controllers::start(&h);
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.apply("AgentPool", "gpu", pool_spec("demo")).await;
    wait_ready(&h, "ManagedCluster", "demo", Duration::from_secs(20)).await;
    wait_ready(&h, "AgentPool", "gpu", Duration::from_secs(20)).await;

    h.delete("ManagedCluster", "demo").await;
    let start = Instant::now();
    let mut ready = h.ready("AgentPool", "gpu").await;
    while ready.0 == "True" && start.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        ready = h.ready("AgentPool", "gpu").await;
    }
    assert_eq!(
        (ready.0.as_str(), ready.1.as_str()),
        ("False", "WaitingForOwner"),
        "{ready:?}"
    );
    assert!(
        ready.2.contains("being deleted") || ready.2.contains("does not exist"),
        "{ready:?}"
    );

    controllers.stop().await;
}

/// Issue 14 (upgrade order), with the real controllers: one apply gives a cluster and its pool a new version; the
/// cluster is PUT first, the pool only once the cluster reports the version, woken by the cluster's status — the
/// retry and resync timers are an hour here, so nothing else could start it. No request is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_starts_the_pools_when_the_cluster_settles() {
    let mut h = Harness::new().await;
    let hour = Duration::from_secs(3600);
    h.set_settings(|s| {
        s.wait = hour;
        s.resync = hour;
    });
    let controllers = Controllers::start(&h);
    let mut cluster = cluster_spec();
    cluster["kubernetesVersion"] = serde_json::json!("1.30.5");
    let mut pool = pool_spec("demo");
    pool["orchestratorVersion"] = serde_json::json!("1.30.5");
    h.apply("ManagedCluster", "demo", cluster).await;
    wait_ready(&h, "ManagedCluster", "demo", Duration::from_secs(20)).await;
    h.apply("AgentPool", "gpu", pool).await;
    wait_ready(&h, "AgentPool", "gpu", Duration::from_secs(20)).await;

    h.clear_traffic();
    h.patch_spec(
        "ManagedCluster",
        "demo",
        serde_json::json!({"kubernetesVersion": "1.31.2"}),
    )
    .await;
    h.patch_spec("AgentPool", "gpu", serde_json::json!({"orchestratorVersion": "1.31.2"}))
        .await;
    // The pool is done when its status reports the version.
    let start = Instant::now();
    loop {
        let version = h
            .object("AgentPool", "gpu")
            .await
            .and_then(|o| o.data.pointer("/status/orchestratorVersion").cloned());
        if version == Some(serde_json::json!("1.31.2")) && h.ready("AgentPool", "gpu").await.0 == "True" {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the pool did not upgrade: {:?}",
            h.ready("AgentPool", "gpu").await
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let traffic = h.sim.traffic();
    let refused: Vec<_> = traffic.iter().filter(|e| e.response.status_code >= 400).collect();
    assert!(refused.is_empty(), "no refused request: {refused:?}");
    let is = |e: &arm_simulator::Exchange, method: &str, suffix: &str| {
        e.request.method == method && e.request.url.split('?').next().is_some_and(|p| p.ends_with(suffix))
    };
    // The cluster settles with the first GET that reports the new control plane version.
    let settled = traffic
        .iter()
        .find(|e| {
            is(e, "GET", "/managedClusters/demo")
                && e.response
                    .body
                    .as_ref()
                    .and_then(|b| b.pointer("/properties/currentKubernetesVersion"))
                    == Some(&serde_json::json!("1.31.2"))
        })
        .expect("a cluster GET with the new version");
    let pool_puts: Vec<_> = traffic.iter().filter(|e| is(e, "PUT", "/agentPools/gpu")).collect();
    assert_eq!(pool_puts.len(), 1, "one pool PUT");
    let cluster_put = traffic
        .iter()
        .find(|e| is(e, "PUT", "/managedClusters/demo"))
        .expect("the cluster PUT");
    assert!(cluster_put.at_ms <= settled.at_ms && settled.at_ms <= pool_puts[0].at_ms);
    let delay = Duration::from_millis(pool_puts[0].at_ms - settled.at_ms);
    // Woken by the owner, not by a timer (both an hour): the delay is the wake-up's, a few milliseconds here.
    assert!(delay < hour, "{delay:?}");
    eprintln!("pool PUT {delay:?} after the cluster settled");
    controllers.stop().await;
}

/// Issue 18 item 3: an object waiting for a custom resource it references (here an extension resource scoped by a
/// ManagedCluster, `WaitingForOwner` until the cluster holds its ID) is woken by that object's change, not by its
/// retry timer (Settings::wait, 30 s here). The kinds come from the registry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_wakes_what_waits_for_it() {
    let h = Harness::new().await;
    let extension = aks_api::KINDS
        .iter()
        .find(|k| k.storage && k.arm.scope == armgen_runtime::Scope::Extension)
        .expect("azure-arm.yaml generates an extension kind");
    let crd = aks_api::custom_resource_definition(extension.kube_group, extension.kind)
        .expect("a CRD")
        .expect("CRD YAML");
    let mut spec = armgen_runtime::sample::sample_spec_of(&crd, extension.version, 0)
        .expect("the version")
        .expect("a sample");
    spec["owner"] =
        serde_json::json!({"group": "containerservice.armgen.dev", "kind": "ManagedCluster", "name": "demo"});
    let controllers = Controllers::start(&h);

    h.apply(extension.kind, "grant", spec).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(h.ready(extension.kind, "grant").await.1, "WaitingForOwner");
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    wait_ready(&h, "ManagedCluster", "demo", Duration::from_secs(20)).await;
    // Well before the 30 s retry: woken by the cluster's status write.
    wait_ready(&h, extension.kind, "grant", Duration::from_secs(10)).await;
    controllers.stop().await;
}

/// Issue 18 item 3: an object waiting for a ConfigMap key (`<field>FromConfig`, here a role assignment's principal
/// ID from a user-assigned identity's `principalId` export) is woken when the export writes it (the reconciler
/// watches the exported ConfigMaps by their label), not by its retry timer (30 s here). The kinds come from the
/// registry: the extension kind, and the kind of user-assigned identities.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exported_config_map_wakes_what_reads_it() {
    let h = Harness::new().await;
    let extension = aks_api::KINDS
        .iter()
        .find(|k| k.storage && k.arm.scope == armgen_runtime::Scope::Extension)
        .expect("azure-arm.yaml generates an extension kind");
    let identity = aks_api::KINDS
        .iter()
        .find(|k| {
            k.storage
                && k.arm
                    .arm_type
                    .eq_ignore_ascii_case("Microsoft.ManagedIdentity/userAssignedIdentities")
        })
        .expect("azure-arm.yaml generates user-assigned identities");
    let crd = aks_api::custom_resource_definition(extension.kube_group, extension.kind)
        .expect("a CRD")
        .expect("CRD YAML");
    let mut spec = armgen_runtime::sample::sample_spec_of(&crd, extension.version, 0)
        .expect("the version")
        .expect("a sample");
    spec["owner"] = serde_json::json!({"armId": format!("/subscriptions/{SUB}/resourceGroups/{RG}")});
    spec.as_object_mut().expect("spec").remove("principalId");
    spec["principalIdFromConfig"] = serde_json::json!({"name": "identity-ids", "key": "principalId"});
    let controllers = Controllers::start(&h);

    h.apply(extension.kind, "grant", spec).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(h.ready(extension.kind, "grant").await.1, "WaitingForReference");
    h.apply(
        identity.kind,
        "app",
        serde_json::json!({
            "owner": {"name": RG},
            "location": "westeurope",
            "operatorSpec": {"configMaps": {"principalId": {"name": "identity-ids", "key": "principalId"}}},
        }),
    )
    .await;
    wait_ready(&h, identity.kind, "app", Duration::from_secs(20)).await;
    // Well before the 30 s retry: woken by the export's ConfigMap.
    wait_ready(&h, extension.kind, "grant", Duration::from_secs(10)).await;
    let exported = h.core("configmaps", "identity-ids").expect("the export");
    assert_eq!(exported["metadata"]["labels"]["armgen.dev/export"], "true");
    let grant = h.object(extension.kind, "grant").await.expect("grant");
    let id = grant
        .data
        .pointer("/status/id")
        .and_then(|v| v.as_str())
        .expect("status.id");
    assert_eq!(
        h.sim.resource(id).expect("created")["properties"]["principalId"],
        exported["data"]["principalId"]
    );
    controllers.stop().await;
}

/// Objects in sync are resynced every `resync`, from the controllers' own deadlines (not a requeue per object in
/// kube-runtime's scheduler): one ARM GET per interval, no write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_in_sync_are_resynced_every_interval() {
    let mut h = Harness::new().await;
    h.set_settings(|s| s.resync = Duration::from_secs(2));
    let controllers = Controllers::start(&h);
    h.apply("ResourceGroup", RG, serde_json::json!({"location": "westeurope"}))
        .await;
    wait_ready(&h, "ResourceGroup", RG, Duration::from_secs(20)).await;
    // Settled: the first reconciles after Ready are over.
    tokio::time::sleep(Duration::from_millis(500)).await;
    h.clear_traffic();
    tokio::time::sleep(Duration::from_millis(6500)).await;
    let traffic = h.sim.traffic();
    let gets = traffic
        .iter()
        .filter(|e| e.request.method == "GET")
        .filter(|e| {
            let path = e.request.url.split('?').next().unwrap_or_default().to_ascii_lowercase();
            path.ends_with(&format!("/resourcegroups/{}", RG.to_ascii_lowercase()))
        })
        .count();
    assert!((2..=4).contains(&gets), "{gets} resync GETs in 6.5 s at a 2 s interval");
    assert!(traffic.iter().all(|e| e.request.method == "GET"), "in sync: no write");
    controllers.stop().await;
}
