//! Retries against the ARM simulator: `Retry-After` is honoured (up to a documented maximum), and failures that
//! stay transient back off exponentially with jitter across reconciles, with `Ready` saying which attempt failed
//! and when the next one is. Tokio's clock is paused, so in-call waits cost no wall time (and a wait that should
//! not happen would still be visible in the request counts).

mod common;

use std::sync::Arc;
use std::time::Duration;

use aks_reconciler::arm::{ArmClient, RequeueBackoff, RetryPolicy};
use arm_simulator::{Fault, FaultRule};
use common::*;
use kube::runtime::controller::Action;

/// Replaces the harness's ARM client and backoff (a fresh `Shared`, nothing else is shared yet).
fn configure(h: &mut Harness, retry: RetryPolicy, max_retry_after: Option<Duration>, backoff: RequeueBackoff) {
    let mut shared = Harness::shared(&h.api, &h.running.base_url, h.shared.credentials.clone());
    let s = Arc::get_mut(&mut shared).expect("a fresh Shared");
    let arm = ArmClient::new(reqwest::Client::new(), h.running.base_url.parse().expect("URL"), retry)
        .with_token_scope(aks_reconciler::credentials::ARM_SCOPE);
    s.arm = match max_retry_after {
        Some(max) => arm.with_max_retry_after(max),
        None => arm,
    };
    s.settings.backoff = backoff;
    h.shared = shared;
}

/// ARM GETs of resources (not operation polls).
fn resource_gets(h: &Harness) -> usize {
    h.sim
        .traffic()
        .iter()
        .filter(|e| e.request.method == "GET" && !e.request.url.contains("/operations/"))
        .count()
}

/// The number after `prefix` in `message`.
fn number_after(message: &str, prefix: &str) -> u64 {
    let start = message
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix:?} in {message:?}"))
        + prefix.len();
    message[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("a number after {prefix:?} in {message:?}"))
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_of_two_minutes_is_honoured_not_cut_to_30_seconds() {
    let mut h = Harness::new().await;
    // The binary's defaults: 30 s is the longest wait inside one call.
    configure(&mut h, RetryPolicy::default(), None, RequeueBackoff::default());
    h.sim.inject(
        FaultRule::new(Fault::Throttle { retry_after_secs: 120 })
            .method("GET")
            .times(1),
    );
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    let action = h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(action, Some(Action::requeue(Duration::from_secs(120))));
    assert_eq!(resource_gets(&h), 1, "no retry inside the call after 30 s");
    assert_eq!(h.sim.count("PUT"), 0);
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!((status.as_str(), reason.as_str()), ("False", "Throttled"), "{message}");
    assert!(message.contains("ARM asks to retry after 120 s"), "{message}");
    assert!(message.contains("next try in 120 s (at "), "{message}");

    // The next reconcile (after the 120 s) goes through.
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_above_the_maximum_is_capped_at_the_maximum() {
    let mut h = Harness::new().await;
    configure(&mut h, RetryPolicy::default(), None, RequeueBackoff::default());
    h.sim.inject(
        FaultRule::new(Fault::Throttle {
            retry_after_secs: 86_400,
        })
        .method("GET")
        .times(2),
    );
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    let action = h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(
        action,
        Some(Action::requeue(Duration::from_secs(600))),
        "a day is cut to the default maximum of 10 minutes"
    );
    let message = h.ready("ManagedCluster", "demo").await.2;
    assert!(message.contains("ARM asks to retry after 600 s"), "{message}");

    // Configurable (`--max-retry-after`).
    configure(
        &mut h,
        RetryPolicy::default(),
        Some(Duration::from_secs(180)),
        RequeueBackoff::default(),
    );
    let action = h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(action, Some(Action::requeue(Duration::from_secs(180))));
}

#[tokio::test(start_paused = true)]
async fn a_short_retry_after_is_waited_inside_the_call() {
    let mut h = Harness::new().await;
    configure(&mut h, RetryPolicy::default(), None, RequeueBackoff::default());
    h.sim.inject(
        FaultRule::new(Fault::Throttle { retry_after_secs: 20 })
            .method("GET")
            .times(1),
    );
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    let started = tokio::time::Instant::now();
    h.reconcile("ManagedCluster", "demo").await;
    assert!(
        started.elapsed() >= Duration::from_secs(20),
        "waited the full Retry-After: {:?}",
        started.elapsed()
    );
    assert_eq!(resource_gets(&h), 2, "throttled once, then retried in the same call");
    assert_eq!(h.sim.count("PUT"), 1);
}

#[tokio::test(start_paused = true)]
async fn persistent_server_errors_back_off_exponentially_to_a_cap_and_success_resets() {
    let mut h = Harness::new().await;
    let (base, max) = (Duration::from_secs(4), Duration::from_secs(64));
    let retry = RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_secs(2),
    };
    configure(&mut h, retry.clone(), None, RequeueBackoff::new(base, max));
    h.sim
        .inject(FaultRule::new(Fault::ServerError).method("GET").times(10_000));
    h.apply("ManagedCluster", "demo", cluster_spec()).await;

    let mut delays = Vec::new();
    for attempt in 1..=9u32 {
        let action = h.reconcile("ManagedCluster", "demo").await;
        let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("False", "InternalServerError"),
            "{message}"
        );
        assert_eq!(number_after(&message, "attempt "), u64::from(attempt), "{message}");
        assert!(message.contains("up to 64 s"), "{message}");
        let delay = number_after(&message, "next try in ");
        assert_eq!(action, Some(Action::requeue(Duration::from_secs(delay))), "{message}");
        // Attempt n waits in [d, 2d) with d = min(4 s * 2^(n-1), 32 s): exponential with jitter, never above 64 s.
        let d = (4u64 << (attempt - 1)).min(32);
        assert!(
            (d..=(2 * d).min(64)).contains(&delay),
            "attempt {attempt}: {delay} s not in [{d}, {}]",
            2 * d
        );
        delays.push(delay);
    }
    assert!(delays[4] > delays[0], "delays grow: {delays:?}");
    assert!(delays[5..].iter().all(|d| *d >= 32), "and stay at the cap: {delays:?}");
    assert_eq!(
        resource_gets(&h),
        9 * retry.max_attempts as usize,
        "each reconcile: the in-call attempts, no more"
    );

    // ARM recovers: Ready, and the count starts over.
    h.sim.clear_faults();
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
    h.sim
        .inject(FaultRule::new(Fault::ServerError).method("GET").times(10_000));
    h.reconcile("ManagedCluster", "demo").await;
    let message = h.ready("ManagedCluster", "demo").await.2;
    assert_eq!(number_after(&message, "attempt "), 1, "{message}");
    assert!((4..=8).contains(&number_after(&message, "next try in ")), "{message}");
}

#[tokio::test(start_paused = true)]
async fn connection_errors_back_off_per_object() {
    let mut h = Harness::new().await;
    let retry = RetryPolicy {
        max_attempts: 1,
        ..RetryPolicy::default()
    };
    configure(
        &mut h,
        retry,
        None,
        RequeueBackoff::new(Duration::from_secs(4), Duration::from_secs(64)),
    );
    h.sim.inject(
        FaultRule::new(Fault::DropConnection)
            .method("GET")
            .path_contains("managedClusters/a")
            .times(100),
    );
    h.apply("ManagedCluster", "a", cluster_spec()).await;
    h.apply("ManagedCluster", "b", cluster_spec()).await;
    for attempt in 1..=3 {
        h.reconcile("ManagedCluster", "a").await;
        let (_, reason, message) = h.ready("ManagedCluster", "a").await;
        assert_eq!(reason, "ConnectionFailed", "{message}");
        assert_eq!(number_after(&message, "attempt "), attempt, "{message}");
    }
    // Another object's count is its own.
    h.reconcile("ManagedCluster", "b").await;
    let (_, reason, message) = h.ready("ManagedCluster", "b").await;
    assert_eq!(reason, "Reconciling", "{message}");
    assert_eq!(h.shared.settings.backoff.failing(), 1);
}

/// A stand-in for ARM that answers every request `503` with `Retry-After: {secs}`; counts requests.
async fn unavailable(secs: u64) -> (url::Url, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    let app = axum::Router::new().fallback(move || {
        let seen = seen.clone();
        async move {
            seen.fetch_add(1, Ordering::SeqCst);
            (
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                [("Retry-After", secs.to_string())],
                r#"{"error": {"code": "ServiceUnavailable", "message": "try later"}}"#,
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/").parse().expect("URL"), count)
}

#[tokio::test(start_paused = true)]
async fn a_5xx_retry_after_is_honoured_in_the_call_or_handed_to_the_controller() {
    use std::sync::atomic::Ordering;
    let id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c";

    // Longer than one call waits (30 s): one request, and the error carries ARM's 90 s.
    let (url, count) = unavailable(90).await;
    let arm = ArmClient::new(reqwest::Client::new(), url, RetryPolicy::default());
    let started = tokio::time::Instant::now();
    let error = arm.get(id, "2025-10-01", None).await.expect_err("503");
    assert_eq!(count.load(Ordering::SeqCst), 1);
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert_eq!(error.retry_after(), Some(Duration::from_secs(90)));
    assert_eq!(error.code(), "ServiceUnavailable");

    // Within it: waited inside the call, every attempt.
    let (url, count) = unavailable(3).await;
    let arm = ArmClient::new(reqwest::Client::new(), url, RetryPolicy::default());
    let started = tokio::time::Instant::now();
    let error = arm.get(id, "2025-10-01", None).await.expect_err("503");
    assert_eq!(count.load(Ordering::SeqCst), 4, "max_attempts");
    assert!(
        started.elapsed() >= Duration::from_secs(9),
        "3 waits of 3 s: {:?}",
        started.elapsed()
    );
    assert_eq!(error.retry_after(), Some(Duration::from_secs(3)));
}
