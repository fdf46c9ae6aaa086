//! The Prometheus series of `aks_reconciler::metrics`, read back from `/metrics` over HTTP and parsed line by line:
//! reconcile results (also from the real `reconcile` function), ARM requests counted by the real ARM client
//! against a local server, operation durations and the queue depth.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use aks_reconciler::arm::{ArmClient, RetryPolicy};
use aks_reconciler::controller::served_kinds;
use aks_reconciler::metrics::{self, Metrics, ReconcileResult};
use aks_reconciler::reconcile::{Access, KindContext, Settings, Shared, StaticAccess, reconcile};
use aks_reconciler::serve::{self, Readiness};
use axum::http::StatusCode;
use kube::api::DynamicObject;
use serde_json::json;

/// One sample: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

/// Parses the exposition text into samples (comments skipped).
fn samples(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (series, value) = line.rsplit_once(' ').expect("name and value");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("a number in {line:?}"));
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => {
                let body = rest.strip_suffix('}').expect("closing brace");
                let labels = body
                    .split(',')
                    .filter(|pair| !pair.is_empty())
                    .map(|pair| {
                        let (k, v) = pair.split_once('=').expect("label=value");
                        (k.to_string(), v.trim_matches('"').to_string())
                    })
                    .collect();
                (name.to_string(), labels)
            }
            None => (series.to_string(), BTreeMap::new()),
        };
        out.push((name, labels, value));
    }
    out
}

/// The value of the sample `name` with exactly `labels`.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let want: BTreeMap<String, String> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    samples
        .iter()
        .find(|(n, l, _)| n == name && *l == want)
        .map(|(_, _, v)| *v)
}

/// `/metrics` served by the probes server, parsed.
async fn scrape(metrics: &Metrics) -> (Vec<Sample>, String) {
    let server = serve::serve_probes("127.0.0.1:0".parse().expect("addr"), Readiness::new(), metrics.clone())
        .expect("probes server");
    let response = reqwest::get(format!("http://{}/metrics", server.local_addr()))
        .await
        .expect("scrape");
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().expect("ascii").to_string();
    assert_eq!(content_type, metrics::CONTENT_TYPE);
    let text = response.text().await.expect("body");
    server.shutdown().await.expect("shutdown");
    assert!(text.ends_with("# EOF\n"), "{text}");
    (samples(&text), text)
}

#[tokio::test]
async fn reconciles_queue_depth_and_operations_are_served() {
    let metrics = Metrics::new();
    metrics.reconcile_started("ManagedCluster", "team-a/prod");
    metrics.reconcile_started("ManagedCluster", "team-a/dev");
    metrics.reconcile_started("AgentPool", "team-a/gpu");
    let (s, _) = scrape(&metrics).await;
    assert_eq!(
        value(&s, "aks_reconciler_queue_depth", &[("kind", "ManagedCluster")]),
        Some(2.0)
    );
    assert_eq!(
        value(&s, "aks_reconciler_queue_depth", &[("kind", "AgentPool")]),
        Some(1.0)
    );

    // prod: in sync; dev: an operation in progress (retry scheduled); gpu: permanently invalid (waits for a change).
    metrics.reconcile_finished("ManagedCluster", "team-a/prod", ReconcileResult::Ready, true);
    metrics.reconcile_finished("ManagedCluster", "team-a/dev", ReconcileResult::NotReady, true);
    metrics.reconcile_finished("AgentPool", "team-a/gpu", ReconcileResult::NotReady, false);
    metrics.reconcile_started("ManagedCluster", "team-a/dev");
    metrics.reconcile_finished("ManagedCluster", "team-a/dev", ReconcileResult::Error, true);
    metrics.reconcile_started("ManagedCluster", "team-a/prod");
    metrics.reconcile_finished("ManagedCluster", "team-a/prod", ReconcileResult::Ready, true);
    metrics.operation_completed("ManagedCluster", "PUT", Duration::from_secs(420));
    metrics.operation_completed("ManagedCluster", "PUT", Duration::from_secs(3));
    metrics.operation_completed("AgentPool", "DELETE", Duration::from_secs(75));

    let (s, text) = scrape(&metrics).await;
    let reconciles = "aks_reconciler_reconciles_total";
    assert_eq!(
        value(&s, reconciles, &[("kind", "ManagedCluster"), ("result", "ready")]),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        value(&s, reconciles, &[("kind", "ManagedCluster"), ("result", "not_ready")]),
        Some(1.0)
    );
    assert_eq!(
        value(&s, reconciles, &[("kind", "ManagedCluster"), ("result", "error")]),
        Some(1.0)
    );
    assert_eq!(
        value(&s, reconciles, &[("kind", "AgentPool"), ("result", "not_ready")]),
        Some(1.0)
    );
    assert_eq!(
        value(&s, reconciles, &[("kind", "AgentPool"), ("result", "ready")]),
        None
    );
    assert!(text.contains("# TYPE aks_reconciler_reconciles counter"), "{text}");

    // dev waits for its retry; prod is in sync; gpu waits for a change only.
    assert_eq!(
        value(&s, "aks_reconciler_queue_depth", &[("kind", "ManagedCluster")]),
        Some(1.0)
    );
    assert_eq!(
        value(&s, "aks_reconciler_queue_depth", &[("kind", "AgentPool")]),
        Some(0.0)
    );
    assert!(text.contains("# TYPE aks_reconciler_queue_depth gauge"), "{text}");

    let histogram = "aks_reconciler_arm_operation_duration_seconds";
    let put = [("kind", "ManagedCluster"), ("verb", "PUT")];
    assert_eq!(value(&s, &format!("{histogram}_count"), &put), Some(2.0), "{text}");
    assert_eq!(value(&s, &format!("{histogram}_sum"), &put), Some(423.0));
    let bucket = |le: &str| {
        value(
            &s,
            &format!("{histogram}_bucket"),
            &[("kind", "ManagedCluster"), ("le", le), ("verb", "PUT")],
        )
    };
    assert_eq!(bucket("5.0"), Some(1.0), "{text}");
    assert_eq!(bucket("300.0"), Some(1.0));
    assert_eq!(bucket("600.0"), Some(2.0));
    assert_eq!(bucket("+Inf"), Some(2.0));
    let delete = [("kind", "AgentPool"), ("verb", "DELETE")];
    assert_eq!(value(&s, &format!("{histogram}_count"), &delete), Some(1.0));
    assert!(text.contains(&format!("# TYPE {histogram} histogram")), "{text}");

    // The controller found dev gone from its cache: it no longer waits.
    metrics.forget("ManagedCluster", "team-a/dev");
    assert_eq!(metrics.queue_depth("ManagedCluster"), 0);
    let (s, _) = scrape(&metrics).await;
    assert_eq!(
        value(&s, "aks_reconciler_queue_depth", &[("kind", "ManagedCluster")]),
        Some(0.0)
    );

    if std::path::Path::new("/proc/self/status").exists() {
        let rss = value(&s, "process_resident_memory_bytes", &[]).expect("resident memory");
        assert!(rss > 0.0);
        assert!(value(&s, "process_open_fds", &[]).expect("open fds") > 0.0);
    }
    let started = value(&s, "process_start_time_seconds", &[]).expect("start time");
    assert!(started > 1.7e9, "{started}");
}

/// The real ARM client counts every request, retries included, by verb and status code; `error` when no answer
/// came.
#[tokio::test]
async fn the_arm_client_counts_its_requests() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let app = axum::Router::new().fallback(move |method: axum::http::Method| {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        async move {
            match (method.as_str(), n) {
                // The first GET fails with 503 and is retried.
                ("GET", 0) => (StatusCode::SERVICE_UNAVAILABLE, "{}".to_string()),
                ("GET", _) => (StatusCode::OK, json!({"id": "/x", "properties": {}}).to_string()),
                ("PUT", _) => (
                    StatusCode::BAD_REQUEST,
                    json!({"error": {"code": "InvalidParameter", "message": "no"}}).to_string(),
                ),
                _ => (StatusCode::NOT_FOUND, String::new()),
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let metrics = Metrics::new();
    let policy = RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
    };
    let arm = ArmClient::new(
        reqwest::Client::new(),
        format!("http://{addr}").parse().expect("url"),
        policy.clone(),
    )
    .with_metrics(metrics.clone());
    let id = "/subscriptions/s/resourceGroups/rg";
    assert!(arm.get(id, "2024-01-01", None).await.expect("get").is_some());
    assert!(arm.put(id, "2024-01-01", &json!({}), None).await.is_err());
    assert!(matches!(
        arm.delete(id, "2024-01-01", None).await,
        Ok(aks_reconciler::arm::Started::Done(None))
    ));
    server.abort();

    // Nothing listens: three attempts without an answer.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let closed_addr = closed.local_addr().expect("addr");
    drop(closed);
    let unreachable = ArmClient::new(
        reqwest::Client::new(),
        format!("http://{closed_addr}").parse().expect("url"),
        policy,
    )
    .with_metrics(metrics.clone());
    assert!(unreachable.get(id, "2024-01-01", None).await.is_err());

    let (s, text) = scrape(&metrics).await;
    let requests = "aks_reconciler_arm_requests_total";
    assert_eq!(
        value(&s, requests, &[("code", "503"), ("verb", "GET")]),
        Some(1.0),
        "{text}"
    );
    assert_eq!(value(&s, requests, &[("code", "200"), ("verb", "GET")]), Some(1.0));
    assert_eq!(value(&s, requests, &[("code", "400"), ("verb", "PUT")]), Some(1.0));
    assert_eq!(value(&s, requests, &[("code", "404"), ("verb", "DELETE")]), Some(1.0));
    assert_eq!(value(&s, requests, &[("code", "error"), ("verb", "GET")]), Some(3.0));
    assert_eq!(s.iter().filter(|(n, _, _)| n == requests).count(), 5, "{text}");
}

/// The top-level `reconcile` counts its result: an object without a namespace is an error the controller retries,
/// so it also waits in the queue.
#[tokio::test]
async fn reconcile_counts_its_result() {
    // No request reaches the API server for this object; the mock only has to exist.
    let (service, _handle) =
        tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<kube::client::Body>>();
    let client = kube::Client::new(service, "default");
    let metrics = Metrics::new();
    let shared = Arc::new(Shared {
        client,
        arm: ArmClient::new(
            reqwest::Client::new(),
            "http://127.0.0.1:9".parse().expect("url"),
            RetryPolicy::default(),
        ),
        credentials: Arc::new(StaticAccess(Access {
            subscription_id: "s".into(),
            bearer: None,
        })),
        settings: Settings::default(),
        recorder: None,
        metrics: metrics.clone(),
    });
    let info = served_kinds(&[])
        .into_iter()
        .find(|k| k.kind == "ManagedCluster")
        .expect("served");
    let ctx = Arc::new(KindContext::new(shared, info));
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": info.api_version(),
        "kind": "ManagedCluster",
        "metadata": {"name": "orphan"},
        "spec": {},
    }))
    .expect("object");
    let e = reconcile(Arc::new(object), ctx).await.expect_err("no namespace");
    assert!(e.to_string().contains("no namespace"), "{e}");

    let (s, text) = scrape(&metrics).await;
    assert_eq!(
        value(
            &s,
            "aks_reconciler_reconciles_total",
            &[("kind", "ManagedCluster"), ("result", "error")]
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        value(&s, "aks_reconciler_queue_depth", &[("kind", "ManagedCluster")]),
        Some(1.0)
    );
}
