//! The servers of `aks_reconciler::serve`, over real sockets: the conversion webhook over HTTPS (a real
//! `ConversionReview` through the generated converter, certificate reload without a restart, a bad new
//! certificate keeping the old one) and the probes.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use aks_reconciler::metrics::Metrics;
use aks_reconciler::serve::{self, Readiness, ServeError, WebhookOptions};
use serde_json::{Value, json};

const GROUP: &str = "containerservice.armgen.dev";
const RELOAD: Duration = Duration::from_millis(50);

/// A self-signed certificate for `localhost`: (certificate PEM, key PEM, certificate DER).
fn certificate() -> (String, String, Vec<u8>) {
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("rcgen");
    (cert.pem(), signing_key.serialize_pem(), cert.der().to_vec())
}

/// A client trusting only `trusted`, resolving `localhost` to `addr`, opening a new connection per request.
fn client(addr: SocketAddr, trusted: &[&str]) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .tls_info(true)
        .pool_max_idle_per_host(0)
        .resolve("localhost", addr)
        .timeout(Duration::from_secs(10));
    for pem in trusted {
        builder = builder.add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).expect("certificate"));
    }
    builder.build().expect("client")
}

fn review(uid: &str) -> Value {
    json!({
        "kind": "ConversionReview",
        "apiVersion": "apiextensions.k8s.io/v1",
        "request": {
            "uid": uid,
            "desiredAPIVersion": format!("{GROUP}/v2alpha1"),
            "objects": [{
                "apiVersion": format!("{GROUP}/v1beta1"),
                "kind": "ManagedCluster",
                "metadata": {
                    "name": "prod",
                    "namespace": "team-a",
                    "uid": "6f1d2a3b-0000-4000-8000-000000000004",
                    "resourceVersion": "48211",
                    "generation": 3,
                    "creationTimestamp": "2026-11-02T09:14:00Z",
                },
                "spec": {
                    "location": "westeurope",
                    "owner": {"name": "rg-prod"},
                    "dnsPrefix": "prod",
                    "enablePodSecurityPolicy": false,
                    "agentPoolProfiles": [{"name": "system", "count": 3, "mode": "System"}],
                },
            }],
        },
    })
}

/// Posts a review and returns the answer and the DER of the certificate the server presented.
async fn convert(client: &reqwest::Client, addr: SocketAddr, uid: &str) -> Result<(Value, Vec<u8>), reqwest::Error> {
    let response = client
        .post(format!("https://localhost:{}/convert", addr.port()))
        .json(&review(uid))
        .send()
        .await?;
    let peer = response
        .extensions()
        .get::<reqwest::tls::TlsInfo>()
        .and_then(|info| info.peer_certificate())
        .map(<[u8]>::to_vec)
        .expect("the TLS peer certificate");
    assert_eq!(response.status(), 200);
    Ok((response.json().await?, peer))
}

/// The certificate a new connection sees, once it is `want` (the reloader polls), within 10 s.
async fn wait_for_certificate(client: &reqwest::Client, addr: SocketAddr, want: &[u8]) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok((_, peer)) = convert(client, addr, "wait").await
            && peer == want
        {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server never presented the new certificate"
        );
        tokio::time::sleep(RELOAD).await;
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
}

#[tokio::test]
async fn webhook_converts_over_tls_and_reloads_its_certificate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert_file, key_file) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    let (cert1, key1, der1) = certificate();
    let (cert2, key2, der2) = certificate();
    let (cert3, key3, der3) = certificate();
    write(&cert_file, &cert1);
    write(&key_file, &key1);
    let options = WebhookOptions {
        cert_file: cert_file.clone(),
        key_file: key_file.clone(),
        reload_interval: RELOAD,
        ..WebhookOptions::new("127.0.0.1:0".parse().expect("addr"))
    };
    let server = serve::serve_webhook(&options, Arc::new(aks_api::Converter)).expect("webhook");
    let addr = server.local_addr();
    assert_ne!(addr.port(), 0);
    let trusting_all = client(addr, &[&cert1, &cert2, &cert3]);

    // A real review: v1beta1 → v2alpha1; the property v2alpha1 lacks goes into the property bag.
    let (answer, peer) = convert(&trusting_all, addr, "705ab4f5-6393-11e8-b7cc-42010a800002")
        .await
        .expect("convert");
    assert_eq!(peer, der1);
    assert_eq!(answer["kind"], "ConversionReview");
    assert_eq!(answer["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(answer["response"]["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(answer["response"]["result"]["status"], "Success", "{answer}");
    let converted = &answer["response"]["convertedObjects"][0];
    assert_eq!(converted["apiVersion"], format!("{GROUP}/v2alpha1"));
    assert_eq!(converted["kind"], "ManagedCluster");
    assert_eq!(converted["metadata"]["uid"], "6f1d2a3b-0000-4000-8000-000000000004");
    assert_eq!(converted["spec"]["dnsPrefix"], "prod");
    assert_eq!(converted["spec"]["agentPoolProfiles"][0]["count"], 3);
    assert!(
        converted["spec"].get("enablePodSecurityPolicy").is_none(),
        "{converted}"
    );
    let bag = converted["metadata"]["annotations"][armgen_runtime::hub::PROPERTY_BAG_ANNOTATION]
        .as_str()
        .expect("the property bag");
    assert_eq!(
        serde_json::from_str::<Value>(bag).expect("bag JSON"),
        json!({"/spec/enablePodSecurityPolicy": false})
    );

    // A client that trusts only the first certificate.
    let trusting_first = client(addr, &[&cert1]);
    convert(&trusting_first, addr, "first")
        .await
        .expect("first certificate");

    // New files: new connections see the new certificate, on the same listener.
    write(&cert_file, &cert2);
    write(&key_file, &key2);
    wait_for_certificate(&trusting_all, addr, &der2).await;
    assert_eq!(server.local_addr(), addr);
    assert!(
        convert(&trusting_first, addr, "first").await.is_err(),
        "the first certificate is no longer presented"
    );

    // A corrupt certificate file: the previous certificate keeps serving.
    write(
        &cert_file,
        "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n",
    );
    tokio::time::sleep(RELOAD * 6).await;
    let (_, peer) = convert(&trusting_all, addr, "corrupt").await.expect("still serving");
    assert_eq!(peer, der2);

    // Not PEM at all: the same.
    write(&cert_file, "not a certificate");
    tokio::time::sleep(RELOAD * 6).await;
    let (_, peer) = convert(&trusting_all, addr, "garbage").await.expect("still serving");
    assert_eq!(peer, der2);

    // A certificate with the key of another: refused, the previous certificate stays.
    write(&cert_file, &cert3);
    tokio::time::sleep(RELOAD * 6).await;
    let (_, peer) = convert(&trusting_all, addr, "mismatch").await.expect("still serving");
    assert_eq!(peer, der2);

    // Its key arrives: the pair loads.
    write(&key_file, &key3);
    wait_for_certificate(&trusting_all, addr, &der3).await;

    server.shutdown().await.expect("shutdown");
    assert!(
        convert(&trusting_all, addr, "after").await.is_err(),
        "nothing listens after the shutdown"
    );
}

#[tokio::test]
async fn webhook_start_fails_naming_what_is_wrong() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert_file, key_file) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    let mut options = WebhookOptions {
        cert_file: cert_file.clone(),
        key_file: key_file.clone(),
        ..WebhookOptions::new("127.0.0.1:0".parse().expect("addr"))
    };
    let e = serve::serve_webhook(&options, Arc::new(aks_api::Converter)).expect_err("no files");
    assert!(
        matches!(e, ServeError::Read { ref path, .. } if *path == cert_file),
        "{e}"
    );
    assert!(e.to_string().contains("tls.crt"), "{e}");

    let (cert, _, _) = certificate();
    let (_, other_key, _) = certificate();
    write(&cert_file, &cert);
    write(&key_file, &other_key);
    let e = serve::serve_webhook(&options, Arc::new(aks_api::Converter)).expect_err("mismatched key");
    assert!(matches!(e, ServeError::Tls { .. }), "{e}");
    assert!(e.to_string().contains("tls.key"), "{e}");

    write(&key_file, "nothing");
    let e = serve::load_tls_config(&cert_file, &key_file).expect_err("no key");
    assert!(e.to_string().contains("no private key"), "{e}");

    // The address is taken.
    let (cert, key, _) = certificate();
    write(&cert_file, &cert);
    write(&key_file, &key);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    options.listen = taken.local_addr().expect("addr");
    let e = serve::serve_webhook(&options, Arc::new(aks_api::Converter)).expect_err("address in use");
    assert!(
        matches!(e, ServeError::Bind { addr, .. } if addr == options.listen),
        "{e}"
    );
    assert!(e.to_string().contains(&options.listen.to_string()), "{e}");
}

#[tokio::test]
async fn probes_follow_the_readiness_flag() {
    let readiness = Readiness::new();
    let server =
        serve::serve_probes("127.0.0.1:0".parse().expect("addr"), readiness.clone(), Metrics::new()).expect("probes");
    let base = format!("http://{}", server.local_addr());
    let http = reqwest::Client::new();
    let get = |path: &str| {
        let request = http.get(format!("{base}{path}"));
        async move {
            let response = request.send().await.expect("request");
            let status = response.status().as_u16();
            (status, response.text().await.expect("body"))
        }
    };
    assert_eq!(get("/healthz").await, (200, "ok".to_string()));
    assert_eq!(get("/readyz").await, (503, "not ready".to_string()));
    readiness.set(true);
    assert_eq!(get("/readyz").await, (200, "ok".to_string()));
    assert_eq!(get("/healthz").await.0, 200);
    readiness.set(false);
    assert_eq!(get("/readyz").await.0, 503);
    assert_eq!(get("/healthz").await.0, 200, "alive while not ready");
    assert_eq!(get("/nothing").await.0, 404);
    server.shutdown().await.expect("shutdown");
}

/// A review of `ManagedCluster`s at v1beta1 to convert to v2alpha1, as large as fits in `max_bytes`.
fn maximal_review(uid: &str, max_bytes: usize) -> Vec<u8> {
    let mut template = review(uid);
    let object = template["request"]["objects"][0].take();
    let envelope = serde_json::to_vec(&template).expect("JSON").len();
    let per_object = serde_json::to_vec(&object).expect("JSON").len() + 16;
    let count = (max_bytes - envelope - 64) / per_object;
    let objects: Vec<Value> = (0..count)
        .map(|i| {
            let mut object = object.clone();
            object["metadata"]["name"] = format!("cluster-{i:06}").into();
            object["metadata"]["uid"] = format!("6f1d2a3b-0000-4000-8000-{i:012}").into();
            object
        })
        .collect();
    template["request"]["objects"] = objects.into();
    let body = serde_json::to_vec(&template).expect("JSON");
    assert!(body.len() <= max_bytes, "{} > {max_bytes}", body.len());
    body
}

/// The attack of the issue: a flood of maximal concurrent ConversionReviews used to occupy every async worker, so
/// `/healthz` stalled for tens of seconds and the leader missed its renewals, lost the Lease and exited. Now the
/// reviews are bounded (size, concurrency; conversions on the blocking pool) and the elector renews on its own
/// thread: while every webhook slot is busy and more reviews are refused, `/healthz` keeps answering and the Lease
/// keeps being renewed by the same leader.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_and_lease_renewals_survive_maximal_concurrent_reviews() {
    use aks_reconciler::leader::{LeaderElection, LeaderElector, Termination};
    use armgen_runtime::webhook::Limits;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    const MAX_BODY: usize = 1024 * 1024;
    const SLOTS: usize = 2;
    // Durations well above the scheduling noise of a busy 2-core machine; the webhook load lasts several
    // renew deadlines.
    let lease_duration = Duration::from_secs(3);
    let renew_deadline = Duration::from_secs(2);
    let retry_period = Duration::from_millis(200);

    let api = fake_apiserver::FakeApiServer::new();
    let election = LeaderElection::new("aks-reconciler", "aks-system", "replica-under-load").with_durations(
        lease_duration,
        renew_deadline,
        retry_period,
    );
    let client_of = api.clone();
    let leader = LeaderElector::spawn_dedicated(election, move || Ok(client_of.client()))
        .await
        .expect("elector");
    assert!(
        tokio::time::timeout(Duration::from_secs(10), leader.acquired()).await == Ok(true),
        "leads"
    );
    let renew_time = || {
        api.get("coordination.k8s.io/v1", "leases", Some("aks-system"), "aks-reconciler")
            .and_then(|lease| {
                lease
                    .pointer("/spec/renewTime")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .expect("the lease has a renewTime")
    };

    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key, _) = certificate();
    let options = WebhookOptions {
        cert_file: dir.path().join("tls.crt"),
        key_file: dir.path().join("tls.key"),
        limits: Limits {
            max_body_bytes: MAX_BODY,
            max_concurrent_reviews: SLOTS,
            ..Limits::default()
        },
        ..WebhookOptions::new("127.0.0.1:0".parse().expect("addr"))
    };
    write(&options.cert_file, &cert);
    write(&options.key_file, &key);
    let webhook = serve::serve_webhook(&options, Arc::new(aks_api::Converter)).expect("webhook");
    let probes =
        serve::serve_probes("127.0.0.1:0".parse().expect("addr"), Readiness::new(), Metrics::new()).expect("probes");
    let addr = webhook.local_addr();

    let body = maximal_review("flood", MAX_BODY);
    let stop = Arc::new(AtomicBool::new(false));
    let (converted, refused) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut flood = Vec::new();
    for _ in 0..SLOTS * 2 {
        let (body, stop, converted, refused) = (body.clone(), stop.clone(), converted.clone(), refused.clone());
        let http = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(cert.as_bytes()).expect("certificate"))
            .resolve("localhost", addr)
            .timeout(Duration::from_secs(300))
            .build()
            .expect("client");
        flood.push(tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                let sent = http
                    .post(format!("https://localhost:{}/convert", addr.port()))
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await;
                // Refused with 429 before its body was read, the HTTP/1.1 connection is closed while the client
                // still writes: hyper reports that as an error (Go's client, the API server's, gets the 429).
                let Ok(response) = sent else {
                    refused.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                };
                match response.status().as_u16() {
                    200 => {
                        let answer: Value = response.json().await.expect("JSON");
                        assert_eq!(answer["response"]["result"]["status"], "Success");
                        converted.fetch_add(1, Ordering::SeqCst);
                    }
                    429 => {
                        refused.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    other => panic!("unexpected {other}: {}", response.text().await.unwrap_or_default()),
                }
            }
        }));
    }

    // Under load: every probe answers, every renewal lands, and the load really saturates the webhook.
    let health = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");
    let healthz = format!("http://{}/healthz", probes.local_addr());
    // A small review (written at once, so its 429 arrives intact) shows when every slot is busy.
    let small = review("small");
    let small_client = client(addr, &[&cert]);
    let mut small_refused = 0;
    let mut renewals = vec![renew_time()];
    let mut probes_answered = 0;
    let mut slowest = Duration::ZERO;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    while renewals.len() < 16 || converted.load(Ordering::SeqCst) < 4 || small_refused < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the load test did not complete: {} renewals, {} reviews converted, {small_refused} small ones refused",
            renewals.len(),
            converted.load(Ordering::SeqCst),
        );
        let small_answer = small_client
            .post(format!("https://localhost:{}/convert", addr.port()))
            .json(&small)
            .send()
            .await
            .expect("a small review is answered");
        match small_answer.status().as_u16() {
            429 => small_refused += 1,
            200 => {}
            other => panic!("unexpected {other} for a small review"),
        }
        let asked = tokio::time::Instant::now();
        let response = health.get(&healthz).send().await.expect("/healthz answers under load");
        assert_eq!(response.status(), 200);
        slowest = slowest.max(asked.elapsed());
        probes_answered += 1;
        assert!(leader.is_leader(), "the leader stepped down under webhook load");
        let now = renew_time();
        if renewals.last() != Some(&now) {
            assert!(
                renewals.last().is_some_and(|last| *last < now),
                "renewTime goes forward"
            );
            renewals.push(now);
        }
        tokio::time::sleep(retry_period).await;
    }
    stop.store(true, Ordering::SeqCst);
    for task in flood {
        task.await.expect("a flood task");
    }
    eprintln!(
        "{} renewals, {probes_answered} probes (slowest {slowest:?}), {} reviews converted, {} refused, \
         {small_refused} small reviews refused",
        renewals.len(),
        converted.load(Ordering::SeqCst),
        refused.load(Ordering::SeqCst)
    );
    assert!(leader.is_leader());
    assert_eq!(
        leader.shutdown().await,
        Termination::Released,
        "led throughout, released at the end"
    );
    let lease = api
        .get("coordination.k8s.io/v1", "leases", Some("aks-system"), "aks-reconciler")
        .expect("lease");
    assert_eq!(
        lease.pointer("/spec/leaseTransitions"),
        Some(&json!(0)),
        "never changed hands"
    );
    webhook.shutdown().await.expect("shutdown");
    probes.shutdown().await.expect("shutdown");
}
