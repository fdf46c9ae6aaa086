//! The exact Kubernetes API calls of a reconcile, with kube-rs's mocked-client pattern: a `tower-test` mock
//! service behind a real `kube::Client`, and a verifier that answers each request in order and fails on any
//! other.

mod common;

use std::sync::Arc;
use std::time::Duration;

use aks_reconciler::arm::{ArmClient, RetryPolicy};
use aks_reconciler::claims::Claims;
use aks_reconciler::controller::served_kinds;
use aks_reconciler::reconcile::{Access, FINALIZER, KindContext, Settings, Shared, StaticAccess, reconcile};
use arm_simulator::Simulator;
use common::{NS, RG, SUB, cluster_spec, pool_spec, sim_config};
use http::{Request, Response};
use kube::api::DynamicObject;
use kube::client::Body;
use serde_json::{Value, json};

type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

fn shared(client: kube::Client, arm_url: &str) -> Arc<Shared> {
    Arc::new(Shared {
        client,
        arm: ArmClient::new(
            reqwest::Client::new(),
            arm_url.parse().expect("url"),
            RetryPolicy::default(),
        ),
        credentials: Arc::new(StaticAccess(Access {
            subscription_id: SUB.into(),
            bearer: None,
        })),
        settings: Settings::default(),
        recorder: None,
        metrics: aks_reconciler::metrics::Metrics::default(),
    })
}

fn ctx(shared: Arc<Shared>, kind: &str) -> Arc<KindContext> {
    let info = served_kinds(&[]).into_iter().find(|k| k.kind == kind).expect("served");
    Arc::new(KindContext::new(shared, info))
}

/// The `apiVersion` the reconciler serves `kind` at by default (its storage version in the registry).
fn served_api_version(kind: &str) -> String {
    served_kinds(&[])
        .into_iter()
        .find(|k| k.kind == kind)
        .map(|k| k.api_version())
        .expect("a served kind")
}

fn object(kind: &str, name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": served_api_version(kind),
        "kind": kind,
        "metadata": {"name": name, "namespace": NS, "resourceVersion": "7", "generation": 1, "uid": "u-1"},
        "spec": spec,
    }))
    .expect("object")
}

/// Answers the next request after checking its method, path (without query) and, when given, its JSON body.
async fn expect(handle: &mut Handle, method: &str, path: &str, check: impl FnOnce(&Value), reply: (u16, Value)) {
    let (request, send) = tokio::time::timeout(Duration::from_secs(10), handle.next_request())
        .await
        .unwrap_or_else(|_| panic!("no request came; expected {method} {path}"))
        .expect("the client is alive");
    assert_eq!(request.method().as_str(), method, "{}", request.uri());
    assert_eq!(request.uri().path(), path);
    let bytes = http_body_util::BodyExt::collect(request.into_body())
        .await
        .expect("body")
        .to_bytes();
    let body: Value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).expect("JSON body")
    };
    check(&body);
    let response = Response::builder()
        .status(reply.0)
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(&reply.1).expect("json")))
        .expect("response");
    send.send_response(response);
}

/// No request follows: the mock either waits in vain or sees the client gone.
async fn assert_no_more_calls(handle: &mut Handle) {
    if let Ok(Some((request, _))) = tokio::time::timeout(Duration::from_millis(100), handle.next_request()).await {
        panic!("an unexpected API call: {} {}", request.method(), request.uri());
    }
}

#[tokio::test]
async fn a_child_without_its_owner_reads_the_owner_once_and_writes_one_status_patch() {
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(service, NS);
    let ctx = ctx(shared(client, "http://127.0.0.1:9"), "AgentPool");
    let pool = object("AgentPool", "gpu", pool_spec("demo"));
    let verifier = tokio::spawn(async move {
        let base = format!("/apis/{}/namespaces/{NS}", served_api_version("AgentPool"));
        expect(
            &mut handle,
            "GET",
            &format!("{base}/managedclusters/demo"),
            |_| {},
            (404, json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": "not found"})),
        )
        .await;
        expect(
            &mut handle,
            "PATCH",
            &format!("{base}/agentpools/gpu/status"),
            |body| {
                let ready = &body["status"]["conditions"][0];
                assert_eq!(ready["type"], "Ready");
                assert_eq!(ready["status"], "False");
                assert_eq!(ready["reason"], "WaitingForOwner");
                assert_eq!(ready["observedGeneration"], 1);
            },
            (200, json!({"apiVersion": served_api_version("AgentPool"), "kind": "AgentPool", "metadata": {"name": "gpu", "namespace": NS}})),
        )
        .await;
        handle
    });
    let action = reconcile(Arc::new(pool), ctx).await.expect("reconcile");
    assert_eq!(
        action,
        kube::runtime::controller::Action::requeue(Settings::default().wait)
    );
    let mut handle = verifier.await.expect("verifier");
    assert_no_more_calls(&mut handle).await;
}

#[tokio::test]
async fn a_create_adds_the_finalizer_before_the_put_then_persists_the_operation() {
    let sim = Simulator::new(sim_config());
    let running = sim
        .serve("127.0.0.1:0".parse().expect("address"))
        .await
        .expect("simulator");
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(service, NS);
    let ctx = ctx(shared(client, &running.base_url), "ManagedCluster");
    let cluster = object("ManagedCluster", "demo", cluster_spec());
    let sim_in_verifier = sim.clone();
    let verifier = tokio::spawn(async move {
        let path = format!(
            "/apis/{}/namespaces/{NS}/managedclusters/demo",
            served_api_version("ManagedCluster")
        );
        // Not created yet: is its resource group an object of this namespace, to wait for? (No.)
        if let Some(rg) = aks_reconciler::reconcile::resource_group_kind() {
            expect(
                &mut handle,
                "GET",
                &format!("/apis/{}/{}/namespaces/{NS}/{}/{RG}", rg.kube_group, rg.version, rg.plural),
                |_| {},
                (404, json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": "not found"})),
            )
            .await;
        }
        // The claim of the ARM ID (aks_reconciler::claims), before anything reaches Azure: read, then created.
        let lease = Claims::lease_name(&common::cluster_id("demo"));
        let leases = format!(
            "/apis/coordination.k8s.io/v1/namespaces/{}/leases",
            Claims::default().namespace()
        );
        expect(
            &mut handle,
            "GET",
            &format!("{leases}/{lease}"),
            |_| assert_eq!(sim_in_verifier.traffic().len(), 0, "claimed before the first ARM call"),
            (404, json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": "not found"})),
        )
        .await;
        expect(
            &mut handle,
            "POST",
            &leases,
            |body| {
                assert_eq!(body["metadata"]["name"], lease.as_str());
                assert_eq!(body["metadata"]["annotations"]["armgen.dev/claimant-uid"], "u-1");
                assert_eq!(body["spec"]["holderIdentity"], format!("ManagedCluster {NS}/demo"));
            },
            (201, json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": lease, "namespace": "x"}})),
        )
        .await;
        expect(
            &mut handle,
            "PATCH",
            &path,
            |body| {
                assert_eq!(body["metadata"]["finalizers"], json!([FINALIZER]));
                assert_eq!(body["metadata"]["resourceVersion"], "7", "optimistic concurrency");
                assert_eq!(sim_in_verifier.count("PUT"), 0, "the finalizer comes before the first PUT");
            },
            (200, json!({"apiVersion": served_api_version("ManagedCluster"), "kind": "ManagedCluster", "metadata": {"name": "demo", "namespace": NS}})),
        )
        .await;
        expect(
            &mut handle,
            "PATCH",
            &format!("{path}/status"),
            |body| {
                let pending = body["status"]["operatorStatus"]["pendingOperation"].as_str().expect("pending");
                assert!(pending.contains("/operations/"), "{pending}");
                assert_eq!(body["status"]["conditions"][0]["reason"], "Reconciling");
            },
            (200, json!({"apiVersion": served_api_version("ManagedCluster"), "kind": "ManagedCluster", "metadata": {"name": "demo", "namespace": NS}})),
        )
        .await;
        handle
    });
    reconcile(Arc::new(cluster), ctx).await.expect("reconcile");
    let mut handle = verifier.await.expect("verifier");
    assert_no_more_calls(&mut handle).await;
    assert_eq!((sim.count("GET"), sim.count("PUT")), (1, 1));
}
