//! The limits of the conversion webhook router (`armgen_runtime::webhook`): what an unauthenticated caller can
//! make it spend. Each test reproduces one way to knock the webhook over and asserts the bounded outcome.
#![cfg(feature = "webhook")]

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use armgen_runtime::conversion::{ConversionError, Converter};
use armgen_runtime::webhook::{self, CONVERT_PATH, Limits};
use axum::Router;
use axum::body::{Body, Bytes, to_bytes};
use axum::http::{HeaderMap, Request, StatusCode, header};
use futures::channel::mpsc;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tower::ServiceExt;

/// Long enough never to fire on a working router, short enough to fail a hanging one.
const HANG: Duration = Duration::from_secs(20);

/// Sets `apiVersion`: a valid conversion for the API server's checks.
fn relabel() -> Arc<dyn Converter> {
    Arc::new(|mut object: Value, desired: &str| -> Result<Value, ConversionError> {
        object["apiVersion"] = desired.into();
        Ok(object)
    })
}

fn review(uid: &str, objects: usize) -> Vec<u8> {
    let objects: Vec<Value> = (0..objects)
        .map(|i| {
            json!({
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"name": format!("w{i}"), "namespace": "default", "uid": format!("uid-{i}")},
                "spec": {"colour": "blue"},
            })
        })
        .collect();
    serde_json::to_vec(&json!({
        "kind": "ConversionReview",
        "apiVersion": "apiextensions.k8s.io/v1",
        "request": {"uid": uid, "desiredAPIVersion": "example.com/v2", "objects": objects},
    }))
    .expect("serializable")
}

fn limits(max_body_bytes: usize, max_concurrent_reviews: usize) -> Limits {
    Limits {
        max_body_bytes,
        max_concurrent_reviews,
        ..Limits::default()
    }
}

fn post(body: Body, content_length: Option<usize>) -> Request<Body> {
    let mut request = Request::post(CONVERT_PATH).header(header::CONTENT_TYPE, "application/json");
    if let Some(length) = content_length {
        request = request.header(header::CONTENT_LENGTH, length);
    }
    request.body(body).expect("a request")
}

async fn call(router: &Router, request: Request<Body>) -> (StatusCode, HeaderMap, Value) {
    let response = tokio::time::timeout(HANG, router.clone().oneshot(request))
        .await
        .expect("the router answers instead of hanging")
        .expect("infallible");
    let (parts, body) = response.into_parts();
    let bytes = to_bytes(body, usize::MAX).await.expect("a body");
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: not JSON ({e})", parts.status));
    (parts.status, parts.headers, body)
}

/// A body fed through a channel, counting how many chunks the server pulled.
struct FedBody {
    sender: mpsc::Sender<Result<Bytes, Infallible>>,
    pulled: Arc<AtomicUsize>,
}

fn fed_body() -> (FedBody, Body) {
    let (sender, receiver) = mpsc::channel(0);
    let pulled = Arc::new(AtomicUsize::new(0));
    let counter = pulled.clone();
    let stream = receiver.inspect(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    (FedBody { sender, pulled }, Body::from_stream(stream))
}

/// A body that was never polled, or panics the test if it is.
fn untouchable_body(polled: Arc<AtomicBool>) -> Body {
    Body::from_stream(futures::stream::poll_fn(move |_| {
        polled.store(true, Ordering::SeqCst);
        std::task::Poll::<Option<Result<Bytes, Infallible>>>::Pending
    }))
}

#[tokio::test]
async fn a_declared_length_over_the_limit_is_refused_before_reading_the_body() {
    let router = webhook::router_with_limits(relabel(), limits(64 * 1024, 4));
    let polled = Arc::new(AtomicBool::new(false));
    // 50 MB announced, nothing sent: a router that reads before checking would hang here.
    let request = post(untouchable_body(polled.clone()), Some(50_000_000));
    let (status, _, body) = call(&router, request).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body["reason"], "RequestEntityTooLarge");
    assert_eq!(body["code"], 413);
    assert_eq!(
        body["message"],
        "the request body (50000000 bytes) is larger than the limit of 65536 bytes"
    );
    assert!(!polled.load(Ordering::SeqCst), "the body was read");

    // The default limit is the API server's own: 3 MiB.
    assert_eq!(Limits::default().max_body_bytes, 3 * 1024 * 1024);
    let router = webhook::router(relabel());
    let polled = Arc::new(AtomicBool::new(false));
    let request = post(untouchable_body(polled.clone()), Some(3 * 1024 * 1024 + 1));
    assert_eq!(call(&router, request).await.0, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(!polled.load(Ordering::SeqCst), "the body was read");
}

#[tokio::test]
async fn a_streamed_body_over_the_limit_stops_being_read_at_the_limit() {
    let limit = 64 * 1024;
    let router = webhook::router_with_limits(relabel(), limits(limit, 4));
    let (mut fed, body) = fed_body();
    // No Content-Length (chunked): an endless body of 4 KiB chunks.
    let feeder = tokio::spawn(async move {
        let chunk = Bytes::from(vec![b' '; 4096]);
        while fed.sender.send(Ok(chunk.clone())).await.is_ok() {}
        fed.pulled.load(Ordering::SeqCst)
    });
    let (status, _, body) = call(&router, post(body, None)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        body["message"],
        "the request body is larger than the limit of 65536 bytes"
    );
    let pulled = feeder.await.expect("the feeder");
    assert!(
        pulled <= limit / 4096 + 2,
        "{pulled} chunks of 4 KiB were read for a 64 KiB limit"
    );
}

#[tokio::test]
async fn reviews_over_the_concurrency_limit_are_refused_until_a_slot_frees() {
    let router = webhook::router_with_limits(relabel(), limits(1024 * 1024, 2));
    // Two reviews whose bodies are still arriving hold both slots.
    let mut held = Vec::new();
    for uid in ["a", "b"] {
        let (mut fed, body) = fed_body();
        let router = router.clone();
        let answer = tokio::spawn(async move { call(&router, post(body, None)).await });
        // A body is read only by a review that holds a slot: once its first chunk is pulled, it holds one.
        fed.sender.send(Ok(Bytes::from_static(b" "))).await.expect("sent");
        tokio::time::timeout(HANG, async {
            while fed.pulled.load(Ordering::SeqCst) == 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await
        .expect("the review reads its body");
        held.push((uid, fed, answer));
    }

    // A third is refused at once, without its body being read, with the API server's retry hint.
    let polled = Arc::new(AtomicBool::new(false));
    let (status, headers, body) = call(&router, post(untouchable_body(polled.clone()), Some(100))).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(headers.get(header::RETRY_AFTER).map(|v| v.as_bytes()), Some(&b"1"[..]));
    assert_eq!(body["reason"], "TooManyRequests");
    assert_eq!(body["details"]["retryAfterSeconds"], 1);
    assert!(!polled.load(Ordering::SeqCst), "the refused body was read");

    // The held reviews complete normally.
    for (uid, mut fed, answer) in held {
        fed.sender.send(Ok(Bytes::from(review(uid, 3)))).await.expect("sent");
        drop(fed);
        let (status, _, body) = answer.await.expect("the task");
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["response"]["uid"], uid);
        assert_eq!(body["response"]["result"]["status"], "Success");
        assert_eq!(body["response"]["convertedObjects"][2]["apiVersion"], "example.com/v2");
    }

    // Their slots are free again.
    for uid in ["c", "d"] {
        let body = review(uid, 1);
        let length = body.len();
        let (status, _, answer) = call(&router, post(Body::from(body), Some(length))).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }
}

#[tokio::test]
async fn a_body_that_does_not_arrive_in_time_frees_its_slot() {
    let limits = Limits {
        body_timeout: Duration::from_millis(200),
        ..limits(1024 * 1024, 1)
    };
    let router = webhook::router_with_limits(relabel(), limits);
    let (fed, body) = fed_body();
    let (status, _, body) = call(&router, post(body, Some(100))).await;
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
    assert_eq!(body["reason"], "Timeout");
    drop(fed);
    let body = review("after", 1);
    let (status, _, _) = call(&router, post(Body::from(body), None)).await;
    assert_eq!(status, StatusCode::OK, "the only slot was given back");
}

/// On a runtime with one thread, a conversion that waits for an async task can only finish if it does not run on
/// that thread.
#[tokio::test(flavor = "current_thread")]
async fn the_conversion_runs_off_the_async_runtime() {
    let started = Arc::new(AtomicBool::new(false));
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = std::sync::Mutex::new(released);
    let flag = started.clone();
    let converter: Arc<dyn Converter> = Arc::new(move |mut object: Value, desired: &str| {
        flag.store(true, Ordering::SeqCst);
        let waited = released
            .lock()
            .map_err(|_| ConversionError {
                path: String::new(),
                message: "poisoned".into(),
            })?
            .recv_timeout(Duration::from_secs(10));
        if waited.is_err() {
            return Err(ConversionError {
                path: String::new(),
                message: "the async runtime was blocked while converting".into(),
            });
        }
        object["apiVersion"] = desired.into();
        Ok(object)
    });
    let router = webhook::router(converter);
    let releaser = async {
        while !started.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        release.send(()).expect("the converter waits");
    };
    let ((status, _, body), ()) = tokio::join!(call(&router, post(Body::from(review("off", 1)), None)), releaser);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["response"]["result"]["status"], "Success", "{body}");
}
