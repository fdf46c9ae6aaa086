//! The Azure Resource Manager client: GET, PUT, DELETE and POST on resource IDs, long-running operations, and
//! retries.
//!
//! - **Endpoint**: any base URL ([`ArmClient::new`]): `https://management.azure.com` (public cloud, the default of
//!   the binary), `https://management.usgovcloudapi.net`, `https://management.chinacloudapi.cn`, or a simulator.
//! - **Long-running operations**: a PUT or DELETE answered with `Azure-AsyncOperation` or `Location` returns a
//!   [`Poller`]: a small serializable value the reconciler stores on the custom resource
//!   (`status.operatorStatus.pendingOperation`) before it polls, so that a restarted operator resumes polling
//!   instead of sending the PUT again. [`ArmClient::poll`] asks once and says when to ask again (`Retry-After`).
//! - **Retries** inside one call: 429 waits for `Retry-After` (seconds or an HTTP date; the policy's backoff
//!   when absent); 5xx and connection errors back off exponentially (capped); both up to
//!   [`RetryPolicy::max_attempts`]. What is still failing then is returned ([`ArmError::Throttled`] carries the
//!   last `Retry-After` so the controller requeues after it).
//! - **Errors**: ARM's error body (`error.code`, `error.message`) is parsed into [`ArmError::Api`], which the
//!   reconciler surfaces in the `Ready` condition.
//! - Request and response bodies are never logged: PUT bodies carry secrets.
//! - **Metrics**: with [`ArmClient::with_metrics`], every HTTP request (each retry included) is counted by verb
//!   and status code ([`Metrics::arm_request`]).

use std::time::Duration;

use reqwest::{Method, StatusCode, header::HeaderMap};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

use crate::metrics::Metrics;

/// How one call retries throttling, server errors and connection errors.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The first backoff; doubled on each retry.
    pub base_delay: Duration,
    /// The longest backoff, and the longest `Retry-After` waited inside one call.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The backoff before retry number `retry` (1 for the first retry), capped.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.saturating_sub(1));
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }
}

/// ARM's error body: `{"error": {"code", "message", "details"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ArmErrorBody {
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub message: String,
}

/// Why an ARM call failed. The `request` fields read like `PUT /subscriptions/…/managedClusters/c1`.
#[derive(Debug, thiserror::Error)]
pub enum ArmError {
    /// ARM answered with an error status and (usually) an error body.
    #[error("{request}: {status} {}: {}", .error.code, .error.message)]
    Api {
        request: String,
        status: u16,
        error: ArmErrorBody,
    },
    /// Still throttled (429) after every attempt.
    #[error("{request}: throttled (429) after {attempts} attempts; retry after {retry_after:?}")]
    Throttled {
        request: String,
        attempts: u32,
        retry_after: Duration,
    },
    /// The connection failed after every attempt.
    #[error("{request}: {message}")]
    Transport { request: String, message: String },
    /// ARM answered with something that is not what the protocol says.
    #[error("{request}: {message}")]
    Protocol { request: String, message: String },
}

impl ArmError {
    /// The ARM error code, or a code of ours for failures without one (`Throttled`, `ConnectionFailed`,
    /// `InvalidResponse`).
    pub fn code(&self) -> &str {
        match self {
            ArmError::Api { error, status, .. } if error.code.is_empty() => {
                if *status >= 500 {
                    "InternalServerError"
                } else {
                    "BadRequest"
                }
            }
            ArmError::Api { error, .. } => &error.code,
            ArmError::Throttled { .. } => "Throttled",
            ArmError::Transport { .. } => "ConnectionFailed",
            ArmError::Protocol { .. } => "InvalidResponse",
        }
    }

    /// When the caller should try again, when ARM said (429 `Retry-After`).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ArmError::Throttled { retry_after, .. } => Some(*retry_after),
            _ => None,
        }
    }

    /// Whether retrying later may succeed without a change (throttling, server and connection errors).
    pub fn is_transient(&self) -> bool {
        match self {
            ArmError::Api { status, .. } => *status >= 500 || *status == 409,
            ArmError::Throttled { .. } | ArmError::Transport { .. } => true,
            ArmError::Protocol { .. } => false,
        }
    }
}

/// Which header a [`Poller`] follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PollVia {
    /// `Azure-AsyncOperation`: the URL answers `{"status": …}`.
    AsyncOperation,
    /// `Location`: the URL answers 202 while running, then 200/204 (or an error status).
    Location,
}

/// A long-running operation in flight: everything needed to resume polling after a restart. Stored as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Poller {
    /// `PUT` or `DELETE`.
    pub verb: String,
    /// The resource the operation changes.
    pub resource_id: String,
    /// The API version of the operation.
    pub api_version: String,
    /// The status URL.
    pub url: String,
    pub via: PollVia,
}

impl Poller {
    /// The poller as stored in `status.operatorStatus.pendingOperation`.
    pub fn to_annotation(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a stored poller; `None` when the text is not one (a hand-edited status): the reconciler then starts
    /// over with a GET, which is safe.
    pub fn from_annotation(text: &str) -> Option<Poller> {
        serde_json::from_str(text).ok()
    }
}

/// How a PUT or DELETE was answered.
#[derive(Debug, Clone)]
pub enum Started {
    /// Done at once (200/201 without an operation header, or 204/404 for DELETE); the body when there was one.
    Done(Option<Value>),
    /// Running: poll it. The body (a PUT's resource with `provisioningState` Creating/Updating) when there was one.
    Running {
        poller: Poller,
        retry_after: Option<Duration>,
        body: Option<Value>,
    },
}

/// One poll's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PollStatus {
    /// Still running; ask again after this long (`Retry-After`, else the caller's default).
    InProgress {
        retry_after: Option<Duration>,
    },
    Succeeded,
    /// Failed, with ARM's error.
    Failed(ArmErrorBody),
    Canceled(ArmErrorBody),
}

/// The ARM client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ArmClient {
    http: reqwest::Client,
    endpoint: Url,
    retry: RetryPolicy,
    scope: Option<String>,
    metrics: Option<Metrics>,
}

impl ArmClient {
    /// A client for the ARM endpoint `endpoint` (e.g. `https://management.azure.com`).
    pub fn new(http: reqwest::Client, endpoint: Url, retry: RetryPolicy) -> Self {
        ArmClient {
            http,
            endpoint,
            retry,
            scope: None,
            metrics: None,
        }
    }

    /// Tokens for another scope than the endpoint's own (`{endpoint}/.default`), e.g. a simulator on a local URL
    /// that stands for `https://management.azure.com/.default`.
    pub fn with_token_scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// The same client, counting its requests in `metrics`.
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The ARM endpoint.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// The scope of tokens for this endpoint: the one given to [`ArmClient::with_token_scope`], else
    /// `{endpoint}/.default` (`https://management.azure.com/.default` for the public cloud).
    pub fn token_scope(&self) -> String {
        if let Some(scope) = &self.scope {
            return scope.clone();
        }
        format!("{}/.default", self.endpoint.as_str().trim_end_matches('/'))
    }

    fn url(&self, id: &str, api_version: &str) -> Result<Url, ArmError> {
        let mut url = self
            .endpoint
            .join(id.trim_start_matches('/'))
            .map_err(|e| ArmError::Protocol {
                request: id.to_string(),
                message: format!("{id:?} is not a resource ID: {e}"),
            })?;
        url.query_pairs_mut().append_pair("api-version", api_version);
        Ok(url)
    }

    /// GET a resource: its body, or `None` on 404.
    pub async fn get(&self, id: &str, api_version: &str, bearer: Option<&str>) -> Result<Option<Value>, ArmError> {
        let url = self.url(id, api_version)?;
        let response = self.send(Method::GET, url, None, bearer).await?;
        match response.status {
            StatusCode::NOT_FOUND => Ok(None),
            s if s.is_success() => Ok(Some(response.json()?)),
            _ => Err(response.error()),
        }
    }

    /// PUT a resource.
    pub async fn put(
        &self,
        id: &str,
        api_version: &str,
        body: &Value,
        bearer: Option<&str>,
    ) -> Result<Started, ArmError> {
        let url = self.url(id, api_version)?;
        let response = self.send(Method::PUT, url, Some(body), bearer).await?;
        if !response.status.is_success() {
            return Err(response.error());
        }
        let poller = self.poller_from(&response, "PUT", id, api_version)?;
        let body = response.json_opt()?;
        Ok(match poller {
            Some(poller) => Started::Running {
                poller,
                retry_after: response.retry_after,
                body,
            },
            None => Started::Done(body),
        })
    }

    /// DELETE a resource; 404 and 204 count as gone.
    pub async fn delete(&self, id: &str, api_version: &str, bearer: Option<&str>) -> Result<Started, ArmError> {
        let url = self.url(id, api_version)?;
        let response = self.send(Method::DELETE, url, None, bearer).await?;
        if response.status == StatusCode::NOT_FOUND {
            return Ok(Started::Done(None));
        }
        if !response.status.is_success() {
            return Err(response.error());
        }
        match self.poller_from(&response, "DELETE", id, api_version)? {
            Some(poller) => Ok(Started::Running {
                poller,
                retry_after: response.retry_after,
                body: None,
            }),
            None if response.status == StatusCode::ACCEPTED => Err(ArmError::Protocol {
                request: response.request,
                message: "202 Accepted without an Azure-AsyncOperation or Location header".into(),
            }),
            None => Ok(Started::Done(None)),
        }
    }

    /// POST an action on a resource (e.g. `listClusterAdminCredential`) and return the body.
    pub async fn post(
        &self,
        id: &str,
        action: &str,
        api_version: &str,
        bearer: Option<&str>,
    ) -> Result<Option<Value>, ArmError> {
        let url = self.url(&format!("{}/{action}", id.trim_end_matches('/')), api_version)?;
        let response = self.send(Method::POST, url, None, bearer).await?;
        if !response.status.is_success() {
            return Err(response.error());
        }
        response.json_opt()
    }

    /// Asks once how a long-running operation is doing.
    pub async fn poll(&self, poller: &Poller, bearer: Option<&str>) -> Result<PollStatus, ArmError> {
        let url = Url::parse(&poller.url).map_err(|e| ArmError::Protocol {
            request: format!("poll {}", poller.resource_id),
            message: format!("the operation URL is not a URL: {e}"),
        })?;
        self.check_origin(&url, &poller.resource_id)?;
        let response = self.send(Method::GET, url, None, bearer).await?;
        let retry_after = response.retry_after;
        match poller.via {
            PollVia::AsyncOperation => {
                if !response.status.is_success() {
                    return Err(response.error());
                }
                #[derive(Deserialize)]
                struct Operation {
                    #[serde(default)]
                    status: String,
                    #[serde(default)]
                    error: Option<ArmErrorBody>,
                }
                let op: Operation = serde_json::from_value(response.json()?).map_err(|e| ArmError::Protocol {
                    request: response.request.clone(),
                    message: format!("the operation status is not an ARM operation: {e}"),
                })?;
                Ok(match op.status.to_ascii_lowercase().as_str() {
                    "succeeded" => PollStatus::Succeeded,
                    "failed" => PollStatus::Failed(op.error.unwrap_or_else(|| ArmErrorBody {
                        code: "OperationFailed".into(),
                        message: "the operation failed without an error body".into(),
                    })),
                    "canceled" | "cancelled" => PollStatus::Canceled(op.error.unwrap_or_else(|| ArmErrorBody {
                        code: "OperationCanceled".into(),
                        message: "the operation was canceled".into(),
                    })),
                    _ => PollStatus::InProgress { retry_after },
                })
            }
            PollVia::Location => match response.status {
                StatusCode::ACCEPTED => Ok(PollStatus::InProgress { retry_after }),
                s if s.is_success() => Ok(PollStatus::Succeeded),
                StatusCode::NOT_FOUND if poller.verb == "DELETE" => Ok(PollStatus::Succeeded),
                _ => {
                    let error = response.error();
                    match error {
                        ArmError::Api { error, .. } => Ok(PollStatus::Failed(error)),
                        other => Err(other),
                    }
                }
            },
        }
    }

    /// Operation URLs must be on the ARM endpoint's origin: the bearer token goes nowhere else.
    fn check_origin(&self, url: &Url, id: &str) -> Result<(), ArmError> {
        if url.origin() == self.endpoint.origin() {
            Ok(())
        } else {
            Err(ArmError::Protocol {
                request: format!("poll {id}"),
                message: format!(
                    "the operation URL's origin {} is not the ARM endpoint's {}",
                    url.origin().ascii_serialization(),
                    self.endpoint.origin().ascii_serialization()
                ),
            })
        }
    }

    fn poller_from(
        &self,
        response: &Response,
        verb: &str,
        id: &str,
        api_version: &str,
    ) -> Result<Option<Poller>, ArmError> {
        let header = |name: &str| {
            response
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let (url, via) = match (header("azure-asyncoperation"), header("location")) {
            (Some(url), _) => (url, PollVia::AsyncOperation),
            (None, Some(url)) if verb == "DELETE" || response.status == StatusCode::ACCEPTED => {
                (url, PollVia::Location)
            }
            _ => return Ok(None),
        };
        let parsed = self.endpoint.join(&url).map_err(|e| ArmError::Protocol {
            request: response.request.clone(),
            message: format!("the operation URL is not a URL: {e}"),
        })?;
        self.check_origin(&parsed, id)?;
        Ok(Some(Poller {
            verb: verb.to_string(),
            resource_id: id.to_string(),
            api_version: api_version.to_string(),
            url: parsed.to_string(),
            via,
        }))
    }

    /// Sends one request with the retry policy.
    async fn send(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
        bearer: Option<&str>,
    ) -> Result<Response, ArmError> {
        let request = format!("{method} {}", url.path());
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let mut builder = self.http.request(method.clone(), url.clone());
            if let Some(token) = bearer {
                builder = builder.bearer_auth(token);
            }
            if let Some(body) = body {
                builder = builder.json(body);
            }
            let last = attempt >= self.retry.max_attempts.max(1);
            let sent = builder.send().await;
            if let Some(metrics) = &self.metrics {
                metrics.arm_request(method.as_str(), sent.as_ref().ok().map(|r| r.status().as_u16()));
            }
            match sent {
                Err(e) => {
                    let message = format!("connection failed: {}", without_url(&e));
                    tracing::debug!(%request, attempt, %message, "ARM call failed");
                    if last {
                        return Err(ArmError::Transport { request, message });
                    }
                    tokio::time::sleep(self.retry.backoff(attempt)).await;
                }
                Ok(resp) => {
                    let status = resp.status();
                    let headers = resp.headers().clone();
                    let retry_after = retry_after(&headers);
                    tracing::debug!(%request, attempt, status = status.as_u16(), "ARM call");
                    if status == StatusCode::TOO_MANY_REQUESTS {
                        let wait = retry_after.unwrap_or_else(|| self.retry.backoff(attempt));
                        if last {
                            return Err(ArmError::Throttled {
                                request,
                                attempts: attempt,
                                retry_after: wait,
                            });
                        }
                        tokio::time::sleep(wait.min(self.retry.max_delay)).await;
                        continue;
                    }
                    let bytes = match resp.bytes().await {
                        Ok(b) => b,
                        Err(e) => {
                            let message = format!("reading the response failed: {}", without_url(&e));
                            if last {
                                return Err(ArmError::Transport { request, message });
                            }
                            tokio::time::sleep(self.retry.backoff(attempt)).await;
                            continue;
                        }
                    };
                    if status.is_server_error() && !last {
                        tokio::time::sleep(retry_after.unwrap_or_else(|| self.retry.backoff(attempt))).await;
                        continue;
                    }
                    return Ok(Response {
                        request,
                        status,
                        headers,
                        retry_after,
                        body: bytes.to_vec(),
                    });
                }
            }
        }
    }
}

/// reqwest's error text without the URL (which is in `request` already).
fn without_url(e: &reqwest::Error) -> String {
    let mut e = e.to_string();
    if let Some(i) = e.find(" for url (") {
        e.truncate(i);
    }
    e
}

/// `Retry-After` in seconds or as an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(text).ok()?;
    let now = std::time::SystemTime::now();
    Some(when.duration_since(now).unwrap_or_default())
}

struct Response {
    request: String,
    status: StatusCode,
    headers: HeaderMap,
    retry_after: Option<Duration>,
    body: Vec<u8>,
}

impl Response {
    fn json(&self) -> Result<Value, ArmError> {
        serde_json::from_slice(&self.body).map_err(|e| ArmError::Protocol {
            request: self.request.clone(),
            message: format!("the response body is not JSON: {e}"),
        })
    }

    fn json_opt(&self) -> Result<Option<Value>, ArmError> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            Ok(None)
        } else {
            self.json().map(Some)
        }
    }

    fn error(&self) -> ArmError {
        #[derive(Deserialize)]
        struct Envelope {
            error: ArmErrorBody,
        }
        let error = serde_json::from_slice::<Envelope>(&self.body)
            .map(|e| e.error)
            .unwrap_or_else(|_| ArmErrorBody {
                code: String::new(),
                message: String::from_utf8_lossy(&self.body).chars().take(500).collect(),
            });
        ArmError::Api {
            request: self.request.clone(),
            status: self.status.as_u16(),
            error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
        };
        assert_eq!(p.backoff(1), Duration::from_millis(100));
        assert_eq!(p.backoff(2), Duration::from_millis(200));
        assert_eq!(p.backoff(4), Duration::from_millis(800));
        assert_eq!(p.backoff(5), Duration::from_secs(1));
        assert_eq!(p.backoff(60), Duration::from_secs(1));
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "7".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        h.insert("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::ZERO), "a date in the past means now");
        assert_eq!(
            httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").ok(),
            Some(std::time::UNIX_EPOCH + Duration::from_secs(784_111_777))
        );
        h.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn poller_survives_its_annotation() {
        let p = Poller {
            verb: "PUT".into(),
            resource_id: "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c".into(),
            api_version: "2025-10-01".into(),
            url: "https://management.azure.com/subscriptions/s/providers/Microsoft.ContainerService/locations/westeurope/operations/1?api-version=2025-10-01".into(),
            via: PollVia::AsyncOperation,
        };
        assert_eq!(Poller::from_annotation(&p.to_annotation()), Some(p));
        assert_eq!(Poller::from_annotation("not json"), None);
    }

    #[test]
    fn error_codes() {
        let e = ArmError::Api {
            request: "GET /x".into(),
            status: 503,
            error: ArmErrorBody::default(),
        };
        assert_eq!(e.code(), "InternalServerError");
        assert!(e.is_transient());
        let e = ArmError::Api {
            request: "PUT /x".into(),
            status: 400,
            error: ArmErrorBody {
                code: "InvalidParameter".into(),
                message: "bad".into(),
            },
        };
        assert_eq!(e.code(), "InvalidParameter");
        assert!(!e.is_transient());
        assert_eq!(e.to_string(), "PUT /x: 400 InvalidParameter: bad");
    }
}
