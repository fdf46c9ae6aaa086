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
//! | a body over [`MAX_BODY_BYTES`] | `413` |
//! | another method on `/convert` | `405` |
//!
//! Every error answer is a JSON `Status` (`apiVersion: v1`, `kind: Status`, `status: Failure`, `message`,
//! `reason`, `code`), which is what the API server's client decodes from a failed call to show its message.
//!
//! The conversion runs on the request's task: converting custom resources is plain CPU work of microseconds
//! per object, with no I/O.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use crate::conversion::{self, Converter};

/// The path the router serves.
pub const CONVERT_PATH: &str = "/convert";

/// The largest request body accepted: 64 MiB. The API server converts lists in one review (every object of a
/// `LIST` that is stored at another version), and one custom resource may be up to 1.5 MiB, so the 2 MB default
/// of axum is too small.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// The router: `POST /convert` with a JSON `ConversionReview` (see the [module documentation](self)).
pub fn router(converter: Arc<dyn Converter>) -> Router {
    Router::new()
        .route(CONVERT_PATH, post(convert))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(converter)
}

async fn convert(
    State(converter): State<Arc<dyn Converter>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    if !is_json(&headers) {
        let got = match headers.get(header::CONTENT_TYPE) {
            Some(value) => format!("{:?}", String::from_utf8_lossy(value.as_bytes())),
            None => "none".into(),
        };
        let message = format!("expected Content-Type application/json, got {got}");
        return error(StatusCode::UNSUPPORTED_MEDIA_TYPE, &message);
    }
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return error(rejection.status(), &rejection.body_text()),
    };
    let review = match conversion::parse_review(&body) {
        Ok(review) => review,
        Err(invalid) => return error(StatusCode::BAD_REQUEST, &invalid.to_string()),
    };
    let answer = conversion::review(converter.as_ref(), review);
    json(StatusCode::OK, conversion::to_json(&answer))
}

/// Whether the `Content-Type` is `application/json`, with any parameters (`; charset=utf-8`).
fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
}

/// A JSON `Status` of the failure, as the Kubernetes API conventions have it.
fn error(code: StatusCode, message: &str) -> Response {
    let reason = match code {
        StatusCode::BAD_REQUEST => "BadRequest",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "UnsupportedMediaType",
        StatusCode::PAYLOAD_TOO_LARGE => "RequestEntityTooLarge",
        _ => "InternalError",
    };
    let status = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code.as_u16(),
    });
    json(code, status.to_string().into_bytes())
}

fn json(code: StatusCode, body: Vec<u8>) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
    )
        .into_response()
}
