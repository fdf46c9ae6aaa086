//! The CRD conversion webhook as an axum [`Router`]: `POST /convert` takes the API server's JSON
//! `ConversionReview` and answers with the `ConversionReview` of [`crate::conversion::review`].
//!
//! Only the routing is here: no TLS, no listener. The API server calls conversion webhooks over HTTPS only, so
//! whoever serves this router (the reconciler) terminates TLS with the certificate that the CRDs'
//! `spec.conversion.webhook.clientConfig.caBundle` trusts, and points `clientConfig.service.path` at
//! [`CONVERT_PATH`].
//!
//! | request | answer |
//! | --- | --- |
//! | `POST /convert`, `Content-Type: application/json`, a `ConversionReview` | `200` and the answering `ConversionReview`, which reports conversion failures and a review without `request` in `response.result` |
//! | a body that is not JSON, or JSON that is not a `ConversionReview` (`apiextensions.k8s.io/v1` or `v1beta1`) | `400` |
//! | a `Content-Type` other than `application/json` (parameters such as `charset` are allowed), or none | `415` |
//! | a `Content-Length` over [`Limits::max_body_bytes`] (answered before any of the body is read), or a body that grows over it | `413` |
//! | [`Limits::max_concurrent_reviews`] reviews already in progress | `429` with `Retry-After: 1` (the body is not read) |
//! | a body that does not arrive within [`Limits::body_timeout`] | `408` |
//! | another method on `/convert` | `405` |
//!
//! Every error answer is a JSON `Status` (`apiVersion: v1`, `kind: Status`, `status: Failure`, `message`,
//! `reason`, `code`), which is what the API server's client decodes from a failed call to show its message. The
//! API server retries a `429` (it honours `Retry-After`) with backoff.
//!
//! # Limits
//!
//! The endpoint is reachable by anything that can reach the webhook's port, unauthenticated, so it bounds what one
//! caller can make it spend ([`Limits`], configurable; the reconciler has a flag for each):
//!
//! - **Body size**: [`DEFAULT_MAX_BODY_BYTES`], 3 MiB — kube-apiserver's own limit on a request body
//!   (`MaxRequestBodyBytes`, 3 MiB) and twice etcd's limit on one stored object (`--max-request-bytes`, 1.5 MiB),
//!   so every review of one object fits. The API server also converts the items of a `LIST` in one review; those above the
//!   limit fail with `413`, so clients listing at a non-storage version should page (`limit`, as kubectl does by
//!   default with 500 items) or raise the limit.
//! - **Concurrency**: at most [`DEFAULT_MAX_CONCURRENT_REVIEWS`] (2) reviews are read and converted at once;
//!   more are refused with `429` before their body is read. A review holds its slot from before its body is read
//!   until its answer is built, also when the client went away meanwhile (the conversion cannot be interrupted),
//!   so the memory of the webhook is bounded by about `max_body_bytes × max_concurrent_reviews ×` the expansion
//!   of JSON into `serde_json::Value`s during conversion (about 33× for ManagedClusters: ~100 MiB per slot at the
//!   default body limit, measured in BENCHMARKS.md).
//! - **Time to send the body**: [`DEFAULT_BODY_TIMEOUT`], 10 s (the API server's default webhook timeout), so a
//!   slow sender cannot hold a slot forever.
//!
//! # Where the conversion runs
//!
//! Parsing the review, converting its objects and serializing the answer are CPU work proportional to the body
//! (up to hundreds of milliseconds for a maximal review), so they run on Tokio's blocking thread pool
//! ([`tokio::task::spawn_blocking`]), never on the async workers: probes, leader election and the controllers
//! that share the runtime keep running while reviews are converted. The concurrency limit also bounds how many
//! blocking threads conversions use.

use std::sync::Arc;
use std::time::Duration;

use axum::RequestExt;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use tokio::sync::Semaphore;

use crate::conversion::{self, Converter};

/// The path the router serves.
pub const CONVERT_PATH: &str = "/convert";

/// The default [`Limits::max_body_bytes`]: 3 MiB, kube-apiserver's limit on request bodies.
pub const DEFAULT_MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// The default [`Limits::max_concurrent_reviews`]: 2. Conversion is CPU work, and the reconciler's Deployment has a
/// CPU limit of one core: more concurrent conversions would not finish sooner, only hold more memory at once.
pub const DEFAULT_MAX_CONCURRENT_REVIEWS: usize = 2;

/// The default [`Limits::body_timeout`]: 10 s.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// What one review may cost the webhook (see the [module documentation](self#limits)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest request body accepted, in bytes; larger ones are answered `413`.
    pub max_body_bytes: usize,
    /// How many reviews are read and converted at once; more are answered `429`. `0` counts as `1`.
    pub max_concurrent_reviews: usize,
    /// How long the body of a review may take to arrive; slower ones are answered `408`.
    pub body_timeout: Duration,
}

impl Default for Limits {
    /// [`DEFAULT_MAX_BODY_BYTES`], [`DEFAULT_MAX_CONCURRENT_REVIEWS`], [`DEFAULT_BODY_TIMEOUT`].
    fn default() -> Self {
        Limits {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_concurrent_reviews: DEFAULT_MAX_CONCURRENT_REVIEWS,
            body_timeout: DEFAULT_BODY_TIMEOUT,
        }
    }
}

#[derive(Clone)]
struct Webhook {
    converter: Arc<dyn Converter>,
    slots: Arc<Semaphore>,
    limits: Limits,
}

/// The router with the default [`Limits`]: `POST /convert` with a JSON `ConversionReview` (see the
/// [module documentation](self)).
pub fn router(converter: Arc<dyn Converter>) -> Router {
    router_with_limits(converter, Limits::default())
}

/// The router with these [`Limits`]. Must be served within a Tokio runtime (conversions run on its blocking
/// pool).
pub fn router_with_limits(converter: Arc<dyn Converter>, limits: Limits) -> Router {
    let webhook = Webhook {
        converter,
        slots: Arc::new(Semaphore::new(
            limits.max_concurrent_reviews.clamp(1, Semaphore::MAX_PERMITS),
        )),
        limits,
    };
    Router::new()
        .route(CONVERT_PATH, post(convert))
        .layer(DefaultBodyLimit::max(limits.max_body_bytes))
        .with_state(webhook)
}

async fn convert(State(webhook): State<Webhook>, request: Request) -> Response {
    let headers = request.headers();
    if !is_json(headers) {
        let got = match headers.get(header::CONTENT_TYPE) {
            Some(value) => format!("{:?}", String::from_utf8_lossy(value.as_bytes())),
            None => "none".into(),
        };
        let message = format!("expected Content-Type application/json, got {got}");
        return error(StatusCode::UNSUPPORTED_MEDIA_TYPE, &message);
    }
    let limit = webhook.limits.max_body_bytes;
    if let Some(length) = content_length(headers)
        && length > limit as u64
    {
        let message = format!("the request body ({length} bytes) is larger than the limit of {limit} bytes");
        return error(StatusCode::PAYLOAD_TOO_LARGE, &message);
    }
    let Ok(slot) = webhook.slots.clone().try_acquire_owned() else {
        let message = format!(
            "{} conversion reviews are in progress, the most this webhook converts at once; retry later",
            webhook.limits.max_concurrent_reviews.max(1)
        );
        return error(StatusCode::TOO_MANY_REQUESTS, &message);
    };
    let read = request.extract::<Bytes, _>();
    let body = match tokio::time::timeout(webhook.limits.body_timeout, read).await {
        Ok(Ok(body)) => body,
        Ok(Err(BytesRejection::FailedToBufferBody(rejection)))
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE =>
        {
            let message = format!("the request body is larger than the limit of {limit} bytes");
            return error(StatusCode::PAYLOAD_TOO_LARGE, &message);
        }
        Ok(Err(rejection)) => return error(rejection.status(), &rejection.body_text()),
        Err(_) => {
            let message = format!(
                "the request body did not arrive within {} s",
                webhook.limits.body_timeout.as_secs_f64()
            );
            return error(StatusCode::REQUEST_TIMEOUT, &message);
        }
    };
    let converter = webhook.converter;
    // The slot moves into the blocking task: it is given back when the conversion ends, even if this request's
    // future was dropped meanwhile (the client went away), since the conversion itself cannot be interrupted.
    let converted = tokio::task::spawn_blocking(move || {
        let answer = answer(converter.as_ref(), body);
        drop(slot);
        answer
    });
    match converted.await {
        Ok((code, body)) => json(code, body),
        Err(e) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the conversion task failed: {e}"),
        ),
    }
}

/// Parses, converts and serializes: the answer's status code and JSON body. Runs on a blocking thread.
fn answer(converter: &dyn Converter, body: Bytes) -> (StatusCode, Vec<u8>) {
    let parsed = conversion::parse_review(&body);
    // The parsed review holds everything needed; the raw body is dropped before converting.
    drop(body);
    match parsed {
        Ok(review) => (
            StatusCode::OK,
            conversion::to_json(&conversion::review(converter, review)),
        ),
        Err(invalid) => (
            StatusCode::BAD_REQUEST,
            status_json(StatusCode::BAD_REQUEST, &invalid.to_string()),
        ),
    }
}

/// The `Content-Length`, when there is one that is a number.
fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse().ok())
}

/// Whether the `Content-Type` is `application/json`, with any parameters (`; charset=utf-8`).
fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
}

/// The answer to a failure: a JSON `Status`; `429` also carries `Retry-After`.
fn error(code: StatusCode, message: &str) -> Response {
    let mut response = json(code, status_json(code, message));
    if code == StatusCode::TOO_MANY_REQUESTS {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_SECONDS));
    }
    response
}

/// What a `429` asks the API server to wait, in seconds.
const RETRY_AFTER_SECONDS: &str = "1";

/// A JSON `Status` of the failure, as the Kubernetes API conventions have it (`details.retryAfterSeconds` on
/// `429`, as the API server's own throttling answers).
fn status_json(code: StatusCode, message: &str) -> Vec<u8> {
    let reason = match code {
        StatusCode::BAD_REQUEST => "BadRequest",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "UnsupportedMediaType",
        StatusCode::PAYLOAD_TOO_LARGE => "RequestEntityTooLarge",
        StatusCode::TOO_MANY_REQUESTS => "TooManyRequests",
        StatusCode::REQUEST_TIMEOUT => "Timeout",
        _ => "InternalError",
    };
    let mut status = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code.as_u16(),
    });
    if code == StatusCode::TOO_MANY_REQUESTS {
        status["details"] = serde_json::json!({ "retryAfterSeconds": 1 });
    }
    status.to_string().into_bytes()
}

fn json(code: StatusCode, body: Vec<u8>) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
    )
        .into_response()
}
