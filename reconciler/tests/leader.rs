//! Leader election against the fake API server, with short durations (lease 1 s, renew deadline 600 ms, retry
//! 100 ms).
//!
//! Most tests run on Tokio's paused clock (`start_paused = true`): time moves only when every task waits, so the
//! timing assertions are exact instead of loose bounds that a loaded machine may still break, and a scenario takes
//! milliseconds. The elector's monotonic clock is Tokio's, so the lease-duration rule works on the paused clock;
//! the wall-clock rule (`renewTime + leaseDurationSeconds` in the past) sees almost no time pass, so takeovers there
//! come from the monotonic rule alone, except for Leases written an hour ago. The tests with a dedicated elector
//! (its own thread and runtime, whose clock is not paused) and the one comparing `renewTime`s written a few
//! microseconds apart keep the real clock.

use std::future::Future;
use std::time::Duration;

use aks_reconciler::leader::{LeaderElection, LeaderElector, LeaderHandle, Termination, identity_from};
use fake_apiserver::FakeApiServer;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use tokio::time::{Instant, sleep, timeout};

const NAMESPACE: &str = "aks-system";
const LEASE: &str = "aks-reconciler";
const LEASE_API: &str = "coordination.k8s.io/v1";
const LEASE_PATH: &str = "/leases/aks-reconciler";
const LEASE_DURATION: Duration = Duration::from_millis(1000);
const RENEW_DEADLINE: Duration = Duration::from_millis(600);
const RETRY_PERIOD: Duration = Duration::from_millis(100);

fn config(identity: &str) -> LeaderElection {
    LeaderElection::new(LEASE, NAMESPACE, identity).with_durations(LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD)
}

fn spawn(server: &FakeApiServer, identity: &str) -> LeaderHandle {
    LeaderElector::new(server.client(), config(identity))
        .expect("valid configuration")
        .spawn()
}

fn lease(server: &FakeApiServer) -> Value {
    server
        .get(LEASE_API, "leases", Some(NAMESPACE), LEASE)
        .expect("the lease exists")
}

fn holder(server: &FakeApiServer) -> Option<String> {
    lease(server)
        .pointer("/spec/holderIdentity")
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn time_field(lease: &Value, field: &str) -> Timestamp {
    lease
        .pointer(&format!("/spec/{field}"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{field} in {lease}"))
        .parse()
        .unwrap_or_else(|e| panic!("{field} is a timestamp: {e}"))
}

fn transitions(lease: &Value) -> Option<i64> {
    lease.pointer("/spec/leaseTransitions").and_then(Value::as_i64)
}

/// A MicroTime as the API server writes it, `ago` before now.
fn micro_time_ago(ago: Duration) -> String {
    let at = Timestamp::now() - SignedDuration::try_from(ago).expect("small duration");
    at.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

fn insert_lease(server: &FakeApiServer, spec: Value) -> Value {
    server.insert(json!({
        "apiVersion": LEASE_API,
        "kind": "Lease",
        "metadata": {"name": LEASE, "namespace": NAMESPACE},
        "spec": spec,
    }))
}

async fn acquired_within(handle: &LeaderHandle, limit: Duration) -> bool {
    timeout(limit, handle.acquired()).await == Ok(true)
}

/// Polls `condition` every 5 ms; whether it held within `limit`.
async fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if condition() {
            return true;
        }
        sleep(Duration::from_millis(5)).await;
    }
    condition()
}

#[tokio::test]
async fn a_single_elector_creates_the_lease_and_renews_it() {
    let server = FakeApiServer::new();
    let a = spawn(&server, "pod-a");
    assert!(
        acquired_within(&a, Duration::from_secs(2)).await,
        "acquires a free lease"
    );
    assert!(a.is_leader());
    assert_eq!(server.count("POST", "/leases"), 1, "created");

    let first = lease(&server);
    assert_eq!(first.pointer("/spec/holderIdentity"), Some(&json!("pod-a")));
    assert_eq!(first.pointer("/spec/leaseDurationSeconds"), Some(&json!(1)));
    assert_eq!(transitions(&first), Some(0));
    let acquired = time_field(&first, "acquireTime");
    let renewed = time_field(&first, "renewTime");
    assert_eq!(acquired, renewed, "acquired and renewed at creation");

    sleep(RETRY_PERIOD * 4).await;
    let later = lease(&server);
    assert!(a.is_leader(), "still leading");
    assert!(time_field(&later, "renewTime") > renewed, "renewTime advances: {later}");
    assert_eq!(time_field(&later, "acquireTime"), acquired, "acquireTime stays");
    assert_eq!(transitions(&later), Some(0));
    assert!(server.count("PUT", LEASE_PATH) >= 2, "renewed by replace");
    assert_eq!(
        server.count("GET", LEASE_PATH),
        1,
        "the leader renews the lease it last wrote without reading it again"
    );

    assert_eq!(a.shutdown().await, Termination::Released);
    let released = lease(&server);
    assert_eq!(released.pointer("/spec/holderIdentity"), None, "released: {released}");
    assert_eq!(transitions(&released), Some(0));
}

#[tokio::test(start_paused = true)]
async fn of_two_electors_exactly_one_leads_at_any_time() {
    let server = FakeApiServer::new();
    let a = spawn(&server, "pod-a");
    let b = spawn(&server, "pod-b");
    let mut first_leader = None;
    let end = Instant::now() + Duration::from_secs(3);
    while Instant::now() < end {
        let (a_leads, b_leads) = (a.is_leader(), b.is_leader());
        assert!(!(a_leads && b_leads), "both lead at once");
        match (first_leader, a_leads, b_leads) {
            (None, true, _) => first_leader = Some("pod-a"),
            (None, _, true) => first_leader = Some("pod-b"),
            (Some(leader), _, _) => assert_eq!(
                (a_leads, b_leads),
                (leader == "pod-a", leader == "pod-b"),
                "leadership stays with {leader} while it renews"
            ),
            (None, false, false) => {}
        }
        sleep(Duration::from_millis(10)).await;
    }
    let leader = first_leader.expect("one of them leads");
    assert_eq!(holder(&server).as_deref(), Some(leader), "the lease names the leader");
    assert_eq!(transitions(&lease(&server)), Some(0));

    let (a_end, b_end) = (a.shutdown().await, b.shutdown().await);
    let (leader_end, other_end) = if leader == "pod-a" {
        (a_end, b_end)
    } else {
        (b_end, a_end)
    };
    assert_eq!(leader_end, Termination::Released);
    assert!(
        matches!(other_end, Termination::Stopped | Termination::Released),
        "the other stops without having lost anything: {other_end:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_graceful_shutdown_releases_and_the_other_leads_promptly() {
    let server = FakeApiServer::new();
    let a = spawn(&server, "pod-a");
    assert!(acquired_within(&a, Duration::from_secs(2)).await);
    let b = spawn(&server, "pod-b");
    sleep(RETRY_PERIOD * 3).await;
    assert!(!b.is_leader(), "the lease is held");
    let acquired_by_a = time_field(&lease(&server), "acquireTime");

    let b_status = b.status();
    let released_at = Instant::now();
    assert_eq!(a.shutdown().await, Termination::Released);
    assert!(
        !b_status.is_leader(),
        "pod-a reports not-leader before the other can lead"
    );
    assert!(acquired_within(&b, LEASE_DURATION).await, "pod-b takes over");
    let handover = released_at.elapsed();
    // pod-b tries again within one jittered retry period (at most 2.2 × 100 ms), and the released Lease is free.
    assert!(
        handover < LEASE_DURATION / 2 && handover <= RETRY_PERIOD * 22 / 10,
        "handover after a release takes one retry, well under the lease duration: {handover:?}"
    );

    let taken = lease(&server);
    assert_eq!(taken.pointer("/spec/holderIdentity"), Some(&json!("pod-b")));
    assert_eq!(transitions(&taken), Some(1), "a transition");
    assert!(time_field(&taken, "acquireTime") > acquired_by_a, "a new acquireTime");
    assert_eq!(b.shutdown().await, Termination::Released);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_handle_releases_the_lease() {
    let server = FakeApiServer::new();
    let a = spawn(&server, "pod-a");
    assert!(acquired_within(&a, Duration::from_secs(2)).await);
    let b = spawn(&server, "pod-b");
    sleep(RETRY_PERIOD * 2).await;
    let dropped_at = Instant::now();
    drop(a);
    assert!(acquired_within(&b, LEASE_DURATION).await);
    let handover = dropped_at.elapsed();
    assert!(
        handover < LEASE_DURATION / 2 && handover <= RETRY_PERIOD * 22 / 10,
        "{handover:?}"
    );
    assert_eq!(b.shutdown().await, Termination::Released);
}

#[tokio::test(start_paused = true)]
async fn a_leader_that_stops_renewing_is_taken_over_only_after_the_lease_duration() {
    let server = FakeApiServer::new();
    let a = LeaderElector::new(server.client(), config("pod-a")).expect("valid");
    let a_status = a.status();
    let a_task = tokio::spawn(a.run(std::future::pending()));
    assert!(timeout(Duration::from_secs(2), a_status.acquired()).await == Ok(true));
    let b = spawn(&server, "pod-b");
    sleep(RETRY_PERIOD * 3).await;
    assert!(!b.is_leader());

    let crashed_at = Instant::now();
    a_task.abort();
    assert!(a_task.await.is_err_and(|e| e.is_cancelled()));
    assert!(!a_status.is_leader(), "an aborted elector does not report leading");
    assert_eq!(holder(&server).as_deref(), Some("pod-a"), "not released");

    assert!(
        acquired_within(&b, LEASE_DURATION * 3).await,
        "pod-b takes over an expired lease"
    );
    let takeover = crashed_at.elapsed();
    // pod-a's last renewal began at most one retry period before the abort (exactly, on the paused clock).
    assert!(
        takeover >= LEASE_DURATION - RETRY_PERIOD,
        "not before the lease expired: {takeover:?}"
    );
    let taken = lease(&server);
    assert_eq!(taken.pointer("/spec/holderIdentity"), Some(&json!("pod-b")));
    assert_eq!(transitions(&taken), Some(1));
    assert_eq!(b.shutdown().await, Termination::Released);
}

#[tokio::test(start_paused = true)]
async fn failing_renewals_make_the_leader_step_down_after_the_renew_deadline() {
    let server = FakeApiServer::new();
    let a = spawn(&server, "pod-a");
    assert!(acquired_within(&a, Duration::from_secs(2)).await);
    let b = spawn(&server, "pod-b");
    sleep(RETRY_PERIOD * 2).await;

    let failing_from = Instant::now();
    server.fail_next("PUT", "/leases/", 500, 1000);
    assert!(
        timeout(Duration::from_secs(3), a.lost()).await.is_ok(),
        "pod-a reports the loss"
    );
    let stepped_down = failing_from.elapsed();
    let b_led_meanwhile = b.is_leader();
    server.clear_faults();
    assert!(!a.is_leader());
    assert!(!b_led_meanwhile, "pod-b could not write the lease either");
    // The last successful renewal began at most one retry period before the failures (on the paused clock,
    // exactly), and the loss is reported at the renew deadline after it.
    assert!(
        stepped_down >= RENEW_DEADLINE - RETRY_PERIOD && stepped_down <= RENEW_DEADLINE,
        "steps down at the renew deadline: {stepped_down:?}"
    );
    assert_eq!(
        holder(&server).as_deref(),
        Some("pod-a"),
        "a lost leader does not release"
    );
    assert_eq!(a.shutdown().await, Termination::Lost);

    assert!(
        acquired_within(&b, LEASE_DURATION * 3).await,
        "pod-b takes over once the lease expired"
    );
    assert!(failing_from.elapsed() >= LEASE_DURATION - RETRY_PERIOD);
    assert_eq!(b.shutdown().await, Termination::Released);
}

/// The leader steps down at the renew deadline itself, not at the first retry after it. Here the retry period
/// (700 ms) does not divide the renew deadline (950 ms): after the renewal at 700 ms fails, the next one would be due
/// at 1.4 s, past the lease duration (1 s), when another replica may already have taken the Lease over. The elector
/// used to sleep until that retry before noticing its deadline had passed, so it kept reporting leadership for up
/// to one retry period past the deadline.
#[tokio::test(start_paused = true)]
async fn the_leader_steps_down_at_the_renew_deadline_not_at_the_next_retry() {
    let renew_deadline = Duration::from_millis(950);
    let retry_period = Duration::from_millis(700);
    let server = FakeApiServer::new();
    let slow = config("pod-a").with_durations(LEASE_DURATION, renew_deadline, retry_period);
    let a = LeaderElector::new(server.client(), slow).expect("valid").spawn();
    assert!(acquired_within(&a, Duration::from_secs(2)).await);
    // On the paused clock the acquiring attempt took no time: it began now.
    let acquired_at = Instant::now();
    server.fail_next("PUT", "/leases/", 500, 1000);
    assert!(
        timeout(Duration::from_secs(3), a.lost()).await.is_ok(),
        "pod-a reports the loss"
    );
    let stepped_down = acquired_at.elapsed();
    assert!(
        stepped_down >= retry_period && stepped_down <= renew_deadline,
        "steps down by the renew deadline after its last successful renewal began: {stepped_down:?}"
    );
    assert!(server.count("PUT", LEASE_PATH) >= 2, "the renewal was tried and failed");
    assert_eq!(a.shutdown().await, Termination::Lost);
}

#[tokio::test(start_paused = true)]
async fn short_renewal_errors_are_retried_within_the_renew_deadline() {
    let server = FakeApiServer::new();
    let a = spawn(&server, "pod-a");
    assert!(acquired_within(&a, Duration::from_secs(2)).await);
    let puts_before = server.count("PUT", LEASE_PATH);
    // The first retry fails twice (optimistic replace, then read-and-replace), the second once.
    server.fail_next("PUT", "/leases/", 500, 3);
    let before = time_field(&lease(&server), "renewTime");
    let end = Instant::now() + RENEW_DEADLINE + RETRY_PERIOD * 2;
    while Instant::now() < end {
        assert!(a.is_leader(), "errors shorter than the renew deadline are tolerated");
        sleep(Duration::from_millis(10)).await;
    }
    assert!(
        server.count("PUT", LEASE_PATH) >= puts_before + 4,
        "the failed writes were retried"
    );
    assert!(
        time_field(&lease(&server), "renewTime") > before,
        "renewed after the errors"
    );
    assert_eq!(a.shutdown().await, Termination::Released);
}

#[tokio::test(start_paused = true)]
async fn a_conflict_while_acquiring_makes_the_loser_keep_waiting() {
    let server = FakeApiServer::new();
    insert_lease(
        &server,
        json!({
            "holderIdentity": "pod-ghost",
            "leaseDurationSeconds": 1,
            "acquireTime": micro_time_ago(Duration::from_secs(3600)),
            "renewTime": micro_time_ago(Duration::from_secs(3600)),
            "leaseTransitions": 3,
        }),
    );
    // pod-b tries to take the expired lease over, but pod-winner's write comes first.
    server.fail_next("PUT", "/leases/", 409, 1);
    let b = spawn(&server, "pod-b");
    assert!(
        eventually(Duration::from_secs(2), || server.count("PUT", LEASE_PATH) >= 1).await,
        "pod-b tried to take over"
    );
    let winner = {
        let server = server.clone();
        tokio::spawn(async move {
            let acquired = micro_time_ago(Duration::ZERO);
            loop {
                insert_lease(
                    &server,
                    json!({
                        "holderIdentity": "pod-winner",
                        "leaseDurationSeconds": 1,
                        "acquireTime": acquired,
                        "renewTime": micro_time_ago(Duration::ZERO),
                        "leaseTransitions": 4,
                    }),
                );
                sleep(RETRY_PERIOD).await;
            }
        })
    };
    let end = Instant::now() + LEASE_DURATION * 2;
    while Instant::now() < end {
        assert!(
            !b.is_leader(),
            "the loser of the conflict waits while the winner renews"
        );
        sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(holder(&server).as_deref(), Some("pod-winner"));

    winner.abort();
    let _ = winner.await;
    assert!(
        acquired_within(&b, LEASE_DURATION * 3).await,
        "takes over once the winner stops renewing"
    );
    let taken = lease(&server);
    assert_eq!(taken.pointer("/spec/holderIdentity"), Some(&json!("pod-b")));
    assert_eq!(transitions(&taken), Some(5));
    assert_eq!(b.shutdown().await, Termination::Released);
}

#[tokio::test(start_paused = true)]
async fn a_lease_without_spec_is_free() {
    let server = FakeApiServer::new();
    server.insert(json!({
        "apiVersion": LEASE_API,
        "kind": "Lease",
        "metadata": {"name": LEASE, "namespace": NAMESPACE},
    }));
    let b = spawn(&server, "pod-b");
    assert!(acquired_within(&b, LEASE_DURATION / 2).await, "nobody holds it");
    let taken = lease(&server);
    assert_eq!(taken.pointer("/spec/holderIdentity"), Some(&json!("pod-b")));
    assert_eq!(transitions(&taken), Some(1));
    assert_eq!(b.shutdown().await, Termination::Released);
}

#[tokio::test(start_paused = true)]
async fn a_held_lease_without_times_or_duration_expires_after_the_own_lease_duration() {
    let server = FakeApiServer::new();
    insert_lease(&server, json!({"holderIdentity": "pod-ghost"}));
    let started = Instant::now();
    let b = spawn(&server, "pod-b");
    assert!(
        acquired_within(&b, LEASE_DURATION * 3).await,
        "the ghost's lease expires"
    );
    assert!(
        started.elapsed() >= LEASE_DURATION,
        "waited for the lease to stay unchanged for the lease duration: {:?}",
        started.elapsed()
    );
    let taken = lease(&server);
    assert_eq!(taken.pointer("/spec/holderIdentity"), Some(&json!("pod-b")));
    assert_eq!(transitions(&taken), Some(1));
    assert_eq!(
        b.shutdown().await,
        Termination::Released,
        "no panic in the elector task"
    );
}

#[tokio::test(start_paused = true)]
async fn an_unreadable_lease_keeps_the_elector_waiting_without_panicking() {
    let server = FakeApiServer::new();
    insert_lease(
        &server,
        json!({"holderIdentity": 42, "renewTime": "yesterday", "leaseDurationSeconds": "long"}),
    );
    let b = spawn(&server, "pod-b");
    sleep(LEASE_DURATION * 2).await;
    assert!(!b.is_leader(), "cannot take over what it cannot read");
    assert!(server.count("GET", LEASE_PATH) >= 3, "kept trying");
    assert_eq!(server.count("PUT", LEASE_PATH), 0);

    server.delete(LEASE_API, "leases", Some(NAMESPACE), LEASE);
    assert!(
        acquired_within(&b, LEASE_DURATION).await,
        "recovers once the lease is gone"
    );
    assert_eq!(
        b.shutdown().await,
        Termination::Released,
        "no panic in the elector task"
    );
}

#[tokio::test(start_paused = true)]
async fn a_candidate_shut_down_before_leading_stops_and_writes_nothing() {
    let server = FakeApiServer::new();
    insert_lease(
        &server,
        json!({
            "holderIdentity": "pod-other",
            "leaseDurationSeconds": 3600,
            "renewTime": micro_time_ago(Duration::ZERO),
        }),
    );
    let b = spawn(&server, "pod-b");
    let status = b.status();
    sleep(RETRY_PERIOD * 3).await;
    assert_eq!(b.shutdown().await, Termination::Stopped);
    assert!(
        !status.acquired().await,
        "acquired() answers false once the elector ended"
    );
    status.lost().await;
    assert_eq!(server.count("PUT", LEASE_PATH), 0);
    assert_eq!(holder(&server).as_deref(), Some("pod-other"));
}

#[tokio::test]
async fn an_invalid_configuration_is_refused() {
    let server = FakeApiServer::new();
    let config = config("pod-a").with_durations(RENEW_DEADLINE, LEASE_DURATION, RETRY_PERIOD);
    assert!(LeaderElector::new(server.client(), config).is_err());
}

fn spawn_dedicated(server: &FakeApiServer, identity: &str) -> impl Future<Output = LeaderHandle> {
    let server = server.clone();
    let config = config(identity);
    async move {
        LeaderElector::spawn_dedicated(config, move || Ok(server.client()))
            .await
            .expect("starts")
    }
}

/// Two processes on one host without `POD_NAME` used to share the host name as identity, so both believed they
/// held the Lease. Now each gets `<host>_<uuid>`, and exactly one leads.
#[tokio::test]
async fn two_electors_without_pod_name_on_one_host_get_distinct_identities_and_one_leads() {
    let server = FakeApiServer::new();
    let first = identity_from(None, Some("shared-host"));
    let second = identity_from(None, Some("shared-host"));
    assert_ne!(first, second, "identities are unique per process");
    assert!(first.starts_with("shared-host_") && second.starts_with("shared-host_"));

    // One on the caller's runtime, one on its own thread (as the binary runs it).
    let a = spawn(&server, &first);
    let b = spawn_dedicated(&server, &second).await;
    let end = Instant::now() + LEASE_DURATION * 3;
    let mut leader = None;
    while Instant::now() < end {
        let (a_leads, b_leads) = (a.is_leader(), b.is_leader());
        assert!(!(a_leads && b_leads), "both lead at once");
        if a_leads || b_leads {
            let now = if a_leads { &first } else { &second };
            assert!(leader.is_none_or(|l| l == now), "leadership changed hands");
            leader = Some(now);
        }
        sleep(Duration::from_millis(10)).await;
    }
    let leader = leader.expect("one of them leads");
    assert_eq!(holder(&server).as_ref(), Some(leader), "the lease names the leader");
    assert_eq!(transitions(&lease(&server)), Some(0), "no takeover happened");
    let (a_end, b_end) = (a.shutdown().await, b.shutdown().await);
    assert!(
        a_end == Termination::Released || b_end == Termination::Released,
        "{a_end:?} {b_end:?}"
    );
    assert!(!matches!(a_end, Termination::Lost) && !matches!(b_end, Termination::Lost));
}

#[tokio::test]
async fn a_dedicated_elector_renews_releases_and_can_be_aborted() {
    let server = FakeApiServer::new();
    let a = spawn_dedicated(&server, "pod-a").await;
    assert!(acquired_within(&a, Duration::from_secs(2)).await);
    let renewed = time_field(&lease(&server), "renewTime");
    assert!(
        eventually(LEASE_DURATION, || time_field(&lease(&server), "renewTime") > renewed).await,
        "renews from its own thread"
    );
    assert_eq!(a.shutdown().await, Termination::Released);
    assert_eq!(holder(&server), None, "released");

    // Aborted: stops at once without releasing, as if the process died.
    let b = spawn_dedicated(&server, "pod-b").await;
    assert!(acquired_within(&b, Duration::from_secs(2)).await);
    let status = b.status();
    b.abort();
    assert!(eventually(Duration::from_secs(2), || !status.is_leader()).await);
    sleep(RETRY_PERIOD * 3).await;
    assert_eq!(holder(&server).as_deref(), Some("pod-b"), "not released");

    // A configuration that cannot work is refused before a thread starts.
    let invalid = config("pod-c").with_durations(LEASE_DURATION, LEASE_DURATION, RETRY_PERIOD);
    let server = server.clone();
    let e = LeaderElector::spawn_dedicated(invalid, move || Ok(server.client()))
        .await
        .expect_err("invalid durations");
    assert!(e.to_string().contains("renew deadline"), "{e}");
}
