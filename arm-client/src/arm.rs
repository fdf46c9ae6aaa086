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
//!   when absent); 5xx and connection errors back off exponentially with jitter ([`backon`]), capped at
//!   [`RetryPolicy::max_delay`]; both up to [`RetryPolicy::max_attempts`]. A `Retry-After` longer than
//!   [`RetryPolicy::max_delay`] is **not** shortened: the call returns at once and the error carries it
//!   ([`ArmError::retry_after`]), so the controller requeues the object after that long instead of holding a
//!   worker. Every `Retry-After` (429, 5xx, long-running operations) is honoured up to
//!   [`ArmClient::max_retry_after`] (default [`DEFAULT_MAX_RETRY_AFTER`], 10 minutes; `--max-retry-after`): ARM
//!   asks for longer waits for a reason, and the cap only guards against a broken or hostile value (a day, a
//!   year) stalling an object.
//! - **Retries across reconciles** ([`RequeueBackoff`]): a failure still transient after the in-call retries
//!   (5xx without `Retry-After`, connection errors, 429 without `Retry-After`, 409) requeues the object after an
//!   exponentially growing, jittered delay, per object, up to a cap; the `Ready` message says which attempt it
//!   was and when the next one is. See [`RequeueBackoff`] for why the count lives in memory.
//! - **Errors**: ARM's error body (`error.code`, `error.message`) is parsed into [`ArmError::Api`], which the
//!   reconciler surfaces in the `Ready` condition.
//! - Request and response bodies are never logged: PUT bodies carry secrets.
//! - **Bounded responses**: a response body is read up to [`DEFAULT_MAX_RESPONSE_BYTES`] (32 MiB;
//!   [`ArmClient::with_max_response_bytes`]) and refused beyond it ([`ArmError::Protocol`]), whatever its
//!   `Content-Length` says, so a broken or hostile endpoint cannot make the operator buffer without end. ARM's
//!   own bodies are far smaller (a ManagedCluster GET is tens of kB; list operations are paged).
//! - **Metrics**: with [`ArmClient::with_metrics`], every HTTP request (each retry included) is reported by verb
//!   and status code to a [`RequestMetrics`] hook (the reconciler's Prometheus metrics implement it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};
use reqwest::{Method, StatusCode, header::HeaderMap};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

/// Where [`ArmClient::with_metrics`] reports its requests: one call per HTTP request sent, each retry included.
///
/// A hook rather than a metrics type, so that this crate depends on no metrics library: the reconciler's
/// Prometheus registry (`aks_reconciler::metrics::Metrics`) implements it and owns the series' names and labels;
/// `armctl` reports nowhere. An implementation must be cheap and must not block: it runs on every request.
pub trait RequestMetrics: std::fmt::Debug + Send + Sync {
    /// One request was sent with `method` (`GET`, `PUT`, …) and answered with `status`, or not answered at all
    /// (`None`: the connection failed).
    fn arm_request(&self, method: &str, status: Option<u16>);
}

/// The longest `Retry-After` honoured by default (10 minutes); longer values are cut to it.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

/// The largest response body read by default (see the module docs, "Bounded responses").
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 32 << 20;

/// How one call retries throttling, server errors and connection errors.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The first backoff; doubled on each retry, with jitter (each wait is between the backoff and twice it).
    pub base_delay: Duration,
    /// The longest backoff, and the longest `Retry-After` waited inside one call (a longer one ends the call).
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
    /// The jittered backoffs of one call's retries (endless; the caller stops after
    /// [`max_attempts`](Self::max_attempts)): see [`jittered`].
    pub fn backoffs(&self) -> impl Iterator<Item = Duration> + use<> {
        jittered(self.base_delay, self.max_delay)
    }
}

/// Exponential backoff with jitter ([`backon`]): the n-th delay is drawn from `[d, 2d)` where
/// `d = min(base * 2^(n-1), max / 2)`, and is never above `max`. Doubling with "add up to 100%" jitter spreads
/// retries of many objects failing at once (an ARM outage) over time, while the lower bound keeps each object's
/// retries growing.
pub fn jittered(base: Duration, max: Duration) -> impl Iterator<Item = Duration> + use<> {
    Jittered {
        inner: builder(base, max).build(),
        max,
    }
}

fn builder(base: Duration, max: Duration) -> ExponentialBuilder {
    let half = max / 2;
    ExponentialBuilder::new()
        .with_min_delay(base.min(half))
        .with_max_delay(half)
        .with_factor(2.0)
        .with_jitter()
        .without_max_times()
}

/// [`ExponentialBackoff`] with jitter, clamped to `max` (backon's jitter is added on top of its cap).
#[derive(Debug)]
struct Jittered {
    inner: ExponentialBackoff,
    max: Duration,
}

impl Iterator for Jittered {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        Some(self.inner.next().unwrap_or(self.max).min(self.max))
    }
}

/// `12 s (at 2026-12-01T10:00:12Z)`: a requeue delay as the `Ready` message shows it.
pub fn next_try(delay: Duration) -> String {
    use jiff::{SignedDuration, Timestamp, Unit};
    let at = SignedDuration::try_from(delay)
        .ok()
        .and_then(|d| Timestamp::now().checked_add(d).ok())
        .map(|t| format!(" (at {})", t.round(Unit::Second).unwrap_or(t)))
        .unwrap_or_default();
    format!("{} s{at}", delay.as_secs())
}

/// Consecutive transient failures per object, across reconciles, and the delay before each next attempt.
///
/// A failure that is still transient after the in-call retries (the reconciler's `Retry::Backoff`) is
/// retried after a [`jittered`] exponential delay from `base` up to `max` (defaults 10 s and 10 minutes; the
/// binary's `--backoff-base` and `--backoff-max`), whole seconds, at least one. A successful reconcile
/// ([`succeeded`](Self::succeeded)) starts the count over.
///
/// **Why in memory** (keyed by kind and object UID, in the reconciler's `Settings`, shared by every
/// controller) and not in the status: the count only paces retries. Losing it on a restart means the first retry
/// after the restart comes early, which a restarted operator does anyway (it reconciles everything). In the status
/// it would be tenant-writable input (a tenant could reset it to hammer ARM, or inflate it), cost a status field and
/// survive in a replacement object of the same name; the UID key starts a new object over. Entries are dropped on
/// success and on deletion, and entries not touched for twice `max` are pruned, so the map is as large as the set
/// of objects failing right now.
#[derive(Clone)]
pub struct RequeueBackoff {
    base: Duration,
    max: Duration,
    state: Arc<Mutex<BackoffState>>,
}

struct BackoffState {
    entries: HashMap<String, Entry>,
    last_prune: tokio::time::Instant,
}

struct Entry {
    attempts: u32,
    delays: Jittered,
    last: tokio::time::Instant,
}

/// The outcome of [`RequeueBackoff::failed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextAttempt {
    /// How many consecutive attempts have failed so far (1 after the first failure).
    pub attempt: u32,
    /// How long to wait before the next attempt.
    pub delay: Duration,
}

impl Default for RequeueBackoff {
    fn default() -> Self {
        Self::new(Duration::from_secs(10), DEFAULT_MAX_RETRY_AFTER)
    }
}

impl std::fmt::Debug for RequeueBackoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequeueBackoff")
            .field("base", &self.base)
            .field("max", &self.max)
            .field("failing", &self.failing())
            .finish()
    }
}

impl RequeueBackoff {
    /// Delays from `base` doubling up to `max` (each at least one second; `max` at least `base`).
    pub fn new(base: Duration, max: Duration) -> Self {
        let base = base.max(Duration::from_secs(1));
        RequeueBackoff {
            base,
            max: max.max(base),
            state: Arc::new(Mutex::new(BackoffState {
                entries: HashMap::new(),
                last_prune: tokio::time::Instant::now(),
            })),
        }
    }

    /// The first delay's lower bound.
    pub fn base(&self) -> Duration {
        self.base
    }

    /// The longest delay.
    pub fn max(&self) -> Duration {
        self.max
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BackoffState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records one more consecutive failure of the object `key`: which attempt that was and how long to wait.
    pub fn failed(&self, key: &str) -> NextAttempt {
        let now = tokio::time::Instant::now();
        let mut state = self.lock();
        let stale = self.max.saturating_mul(2);
        if now.duration_since(state.last_prune) >= self.max {
            state.entries.retain(|_, e| now.duration_since(e.last) < stale);
            state.last_prune = now;
        }
        let (base, max) = (self.base, self.max);
        let entry = state.entries.entry(key.to_string()).or_insert_with(|| Entry {
            attempts: 0,
            delays: Jittered {
                inner: builder(base, max).build(),
                max,
            },
            last: now,
        });
        if now.duration_since(entry.last) >= stale {
            // Not seen failing for long: a new run of failures.
            entry.attempts = 0;
            entry.delays = Jittered {
                inner: builder(base, max).build(),
                max,
            };
        }
        entry.attempts = entry.attempts.saturating_add(1);
        entry.last = now;
        let delay = entry.delays.next().unwrap_or(max);
        NextAttempt {
            attempt: entry.attempts,
            delay: Duration::from_secs(delay.as_secs().max(1)),
        }
    }

    /// The object `key` succeeded (or is gone): its next failure is attempt 1 again.
    pub fn succeeded(&self, key: &str) {
        self.lock().entries.remove(key);
    }

    /// How many objects are currently failing.
    pub fn failing(&self) -> usize {
        self.lock().entries.len()
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
        /// ARM's `Retry-After` (capped at [`ArmClient::max_retry_after`]), when it sent one with a 5xx.
        retry_after: Option<Duration>,
    },
    /// Still throttled (429) after every attempt, or ARM asked to wait longer than one call waits.
    #[error("{request}: throttled (429) after {attempts} attempt(s){}", .retry_after.map(|d| format!("; ARM asks to retry after {} s", d.as_secs())).unwrap_or_default())]
    Throttled {
        request: String,
        attempts: u32,
        /// ARM's `Retry-After` (capped at [`ArmClient::max_retry_after`]); `None` when it sent none.
        retry_after: Option<Duration>,
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

    /// When the caller should try again, when ARM said (`Retry-After` on a 429 or a 5xx), capped at
    /// [`ArmClient::max_retry_after`].
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ArmError::Throttled { retry_after, .. } => *retry_after,
            ArmError::Api {
                status, retry_after, ..
            } if *status >= 500 => *retry_after,
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
    /// Where the result of a POST action is, once it succeeded, when that is not [`Poller::url`]: the
    /// `Location` of an operation followed through `Azure-AsyncOperation` (ARM's final state of a POST is its
    /// `Location`'s answer). Absent in pollers stored before actions existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_url: Option<String>,
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
    max_retry_after: Duration,
    max_response_bytes: usize,
    scope: Option<String>,
    metrics: Option<Arc<dyn RequestMetrics>>,
}

impl ArmClient {
    /// A client for the ARM endpoint `endpoint` (e.g. `https://management.azure.com`).
    pub fn new(http: reqwest::Client, endpoint: Url, retry: RetryPolicy) -> Self {
        ArmClient {
            http,
            endpoint,
            retry,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            scope: None,
            metrics: None,
        }
    }

    /// Refuses response bodies over `max` bytes (default [`DEFAULT_MAX_RESPONSE_BYTES`]).
    pub fn with_max_response_bytes(mut self, max: usize) -> Self {
        self.max_response_bytes = max;
        self
    }

    /// Honours `Retry-After` up to `max` (default [`DEFAULT_MAX_RETRY_AFTER`]); longer values are cut to it.
    pub fn with_max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }

    /// The longest `Retry-After` honoured.
    pub fn max_retry_after(&self) -> Duration {
        self.max_retry_after
    }

    /// Tokens for another scope than the endpoint's own (`{endpoint}/.default`), e.g. a simulator on a local URL
    /// that stands for `https://management.azure.com/.default`.
    pub fn with_token_scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// The same client, reporting each of its requests to `metrics`.
    pub fn with_metrics(mut self, metrics: impl RequestMetrics + 'static) -> Self {
        self.metrics = Some(Arc::new(metrics));
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

    /// The request URL of resource `id`. Every ID is checked segment by segment first ([`crate::names::check_arm_id`]:
    /// no empty, `.` or `..` segments, no `?`, `#`, `%` or `/` smuggled into a name), so whatever an ID was built
    /// from, the request cannot leave the resource it names.
    fn url(&self, id: &str, api_version: &str) -> Result<Url, ArmError> {
        let id = id.trim_end_matches('/');
        crate::names::check_arm_id("the resource ID", id).map_err(|message| ArmError::Protocol {
            request: id.to_string(),
            message,
        })?;
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

    /// GET the next page of a pageable list (`nextLink` of the page before, a page of `id`'s list): refused
    /// unless the URL is on the ARM endpoint's origin, so the bearer token never goes to a host the operator did
    /// not configure, whatever a response says.
    pub async fn get_next_page(&self, next_link: &str, id: &str, bearer: Option<&str>) -> Result<Value, ArmError> {
        let url = Url::parse(next_link).map_err(|e| ArmError::Protocol {
            request: format!("next page of {id}"),
            message: format!("nextLink is not a URL: {e}"),
        })?;
        if url.origin() != self.endpoint.origin() {
            return Err(ArmError::Protocol {
                request: format!("next page of {id}"),
                message: format!(
                    "nextLink's origin {} is not the ARM endpoint's {}",
                    url.origin().ascii_serialization(),
                    self.endpoint.origin().ascii_serialization()
                ),
            });
        }
        let response = self.send(Method::GET, url, None, bearer).await?;
        if !response.status.is_success() {
            return Err(response.error());
        }
        response.json()
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

    /// POST an ARM action that may change the resource (`stop`, `runCommand`, …) once, with its request `body`:
    /// never sent twice by this call, so only answers that say the request was not processed are retried (429,
    /// and 503 Service Unavailable); a dropped connection is an [`ArmError::Transport`] whose outcome is unknown.
    /// A long-running action comes back [`Started::Running`] (its poller's verb `POST`), with
    /// [`Poller::result_url`] where the result will be when it is not the poller's own URL.
    pub async fn action(
        &self,
        id: &str,
        action: &str,
        api_version: &str,
        body: Option<&Value>,
        bearer: Option<&str>,
    ) -> Result<Started, ArmError> {
        let url = self.url(&format!("{}/{action}", id.trim_end_matches('/')), api_version)?;
        let response = self.send_with(Method::POST, url, body, bearer, false).await?;
        if !response.status.is_success() {
            return Err(response.error());
        }
        let mut poller = self.poller_from(&response, "POST", id, api_version)?;
        if let Some(poller) = &mut poller
            && poller.via == PollVia::AsyncOperation
            && let Some(location) = response.headers.get("location").and_then(|v| v.to_str().ok())
        {
            let parsed = self.endpoint.join(location).map_err(|e| ArmError::Protocol {
                request: response.request.clone(),
                message: format!("the Location header is not a URL: {e}"),
            })?;
            self.check_origin(&parsed, id)?;
            poller.result_url = Some(parsed.to_string());
        }
        let body = response.json_opt()?;
        Ok(match poller {
            Some(poller) => Started::Running {
                poller,
                retry_after: response.retry_after,
                body,
            },
            None if response.status == StatusCode::ACCEPTED => {
                return Err(ArmError::Protocol {
                    request: response.request,
                    message: "202 Accepted without an Azure-AsyncOperation or Location header".into(),
                });
            }
            None => Started::Done(body),
        })
    }

    /// The result of a POST action whose operation succeeded: the answer of its [`Poller::result_url`], else of
    /// a `Location` poller's URL; `None` when there is none (an action without a result, or an operation followed
    /// through `Azure-AsyncOperation` alone).
    pub async fn action_result(&self, poller: &Poller, bearer: Option<&str>) -> Result<Option<Value>, ArmError> {
        let url = match (&poller.result_url, poller.via) {
            (Some(url), _) => url.as_str(),
            (None, PollVia::Location) => poller.url.as_str(),
            (None, PollVia::AsyncOperation) => return Ok(None),
        };
        let url = Url::parse(url).map_err(|e| ArmError::Protocol {
            request: format!("result of {}", poller.resource_id),
            message: format!("the result URL is not a URL: {e}"),
        })?;
        self.check_origin(&url, &poller.resource_id)?;
        let response = self.send(Method::GET, url, None, bearer).await?;
        if !response.status.is_success() {
            return Err(response.error());
        }
        response.json_opt()
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
            result_url: None,
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
        self.send_with(method, url, body, bearer, true).await
    }

    /// [`ArmClient::send`]; unless `idempotent`, only 429 and 503 (not processed) are retried, never a dropped
    /// connection or another server error.
    async fn send_with(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
        bearer: Option<&str>,
        idempotent: bool,
    ) -> Result<Response, ArmError> {
        let request = format!("{method} {}", url.path());
        let mut backoffs = self.retry.backoffs();
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
            let resp = match sent {
                Ok(resp) => resp,
                Err(e) => {
                    let message = format!("connection failed: {}", e.without_url());
                    tracing::debug!(%request, attempt, %message, "ARM call failed");
                    if last || !idempotent {
                        return Err(ArmError::Transport { request, message });
                    }
                    tokio::time::sleep(backoffs.next().unwrap_or(self.retry.max_delay)).await;
                    continue;
                }
            };
            let status = resp.status();
            let headers = resp.headers().clone();
            let retry_after = retry_after(&headers).map(|d| d.min(self.max_retry_after));
            tracing::debug!(%request, attempt, status = status.as_u16(), "ARM call");
            // ARM asks for a longer wait than one call waits: give the object back to the controller, which
            // requeues it after exactly that long.
            let too_long = retry_after.is_some_and(|d| d > self.retry.max_delay);
            if status == StatusCode::TOO_MANY_REQUESTS {
                if last || too_long {
                    return Err(ArmError::Throttled {
                        request,
                        attempts: attempt,
                        retry_after,
                    });
                }
                let wait = retry_after.unwrap_or_else(|| backoffs.next().unwrap_or(self.retry.max_delay));
                tokio::time::sleep(wait).await;
                continue;
            }
            let bytes = match read_bounded(resp, self.max_response_bytes).await {
                Ok(Some(b)) => b,
                Ok(None) => {
                    return Err(ArmError::Protocol {
                        request,
                        message: format!(
                            "the response body is larger than {} bytes; refused",
                            self.max_response_bytes
                        ),
                    });
                }
                Err(e) => {
                    let message = format!("reading the response failed: {}", e.without_url());
                    if last || !idempotent {
                        return Err(ArmError::Transport { request, message });
                    }
                    tokio::time::sleep(backoffs.next().unwrap_or(self.retry.max_delay)).await;
                    continue;
                }
            };
            let retried = idempotent || status == StatusCode::SERVICE_UNAVAILABLE;
            if status.is_server_error() && retried && !last && !too_long {
                let wait = retry_after.unwrap_or_else(|| backoffs.next().unwrap_or(self.retry.max_delay));
                tokio::time::sleep(wait).await;
                continue;
            }
            return Ok(Response {
                request,
                status,
                headers,
                retry_after,
                body: bytes,
            });
        }
    }
}

/// The body of `resp`, or `None` when it is longer than `max` bytes (said by `Content-Length` or found while
/// reading: a length header may be absent or wrong).
async fn read_bounded(mut resp: reqwest::Response, max: usize) -> Result<Option<Vec<u8>>, reqwest::Error> {
    if resp.content_length().is_some_and(|n| n > max as u64) {
        return Ok(None);
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        if body.len() + chunk.len() > max {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
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
            retry_after: self.retry_after,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The n-th delay's bounds: `[d, 2d)` with `d = min(base * 2^(n-1), max / 2)`, never above `max`.
    fn bounds(base: Duration, max: Duration, n: u32) -> (Duration, Duration) {
        let half = max / 2;
        let d = base.min(half).saturating_mul(2u32.saturating_pow(n - 1)).min(half);
        (d, (d * 2).min(max))
    }

    /// A one-request HTTP server answering 200 with `body`, with or without a `Content-Length` (chunked then).
    async fn serve_once(body: Vec<u8>, with_length: bool) -> Url {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        tokio::spawn(async move {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request).await;
            let head = if with_length {
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    body.len()
                )
            } else {
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n".to_string()
            };
            let _ = stream.write_all(head.as_bytes()).await;
            if with_length {
                let _ = stream.write_all(&body).await;
            } else {
                for chunk in body.chunks(1000) {
                    let _ = stream.write_all(format!("{:x}\r\n", chunk.len()).as_bytes()).await;
                    let _ = stream.write_all(chunk).await;
                    let _ = stream.write_all(b"\r\n").await;
                }
                let _ = stream.write_all(b"0\r\n\r\n").await;
            }
            let _ = stream.shutdown().await;
        });
        format!("http://127.0.0.1:{port}").parse().expect("endpoint")
    }

    #[tokio::test]
    async fn a_response_over_the_bound_is_refused_with_or_without_a_length() {
        let id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c";
        let body = format!("{{\"name\": \"{}\"}}", "x".repeat(5000)).into_bytes();
        let retry = RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        };
        for with_length in [true, false] {
            let endpoint = serve_once(body.clone(), with_length).await;
            let client = ArmClient::new(reqwest::Client::new(), endpoint, retry.clone()).with_max_response_bytes(4096);
            match client.get(id, "2025-10-01", None).await {
                Err(ArmError::Protocol { request, message }) => {
                    assert!(request.contains(id), "{request}");
                    assert!(message.contains("larger than 4096 bytes"), "{message}");
                }
                other => panic!("with_length={with_length}: expected a refusal, got {other:?}"),
            }
            // Within the bound, the same body is read whole.
            let endpoint = serve_once(body.clone(), with_length).await;
            let client = ArmClient::new(reqwest::Client::new(), endpoint, retry.clone());
            let got = client.get(id, "2025-10-01", None).await.expect("read");
            assert_eq!(got.and_then(|v| v["name"].as_str().map(str::len)), Some(5000));
        }
    }

    #[tokio::test]
    async fn a_next_page_is_read_only_from_the_arm_endpoint() {
        let id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c";
        let retry = RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        };
        let endpoint: Url = serve_once(br#"{"value": [1, 2]}"#.to_vec(), true).await;
        let client = ArmClient::new(reqwest::Client::new(), endpoint.clone(), retry);
        // Another origin (another host, or the same host on another port or scheme): refused before any request.
        for elsewhere in [
            "https://evil.example/page?$skipToken=2".to_string(),
            format!("https://127.0.0.1:{}/page", endpoint.port().unwrap_or(80)),
            "not a url".to_string(),
        ] {
            match client.get_next_page(&elsewhere, id, Some("token")).await {
                Err(ArmError::Protocol { request, message }) => {
                    assert!(request.contains(id), "{request}");
                    assert!(message.contains("nextLink"), "{message}");
                }
                other => panic!("{elsewhere}: expected a refusal, got {other:?}"),
            }
        }
        let next = endpoint.join("/page?$skipToken=2").expect("url");
        let page = client.get_next_page(next.as_str(), id, None).await.expect("page");
        assert_eq!(page["value"], serde_json::json!([1, 2]));
    }

    #[test]
    fn request_urls_never_leave_the_resource_they_name() {
        let client = ArmClient::new(
            reqwest::Client::new(),
            "https://management.azure.com".parse().unwrap(),
            RetryPolicy::default(),
        );
        let id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c";
        let url = client.url(&format!("{id}/"), "2025-10-01").unwrap();
        assert_eq!(url.path(), id);
        for bad in [
            "/subscriptions/s/resourceGroups/rg/../../providers/Microsoft.Authorization/roleAssignments/x",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c?x=1",
            "/subscriptions/s/resourceGroups//providers/Microsoft.ContainerService/managedClusters/c",
            "/providers/Microsoft.Authorization/roleAssignments/x",
        ] {
            let e = client.url(bad, "2025-10-01").unwrap_err();
            assert!(matches!(e, ArmError::Protocol { .. }), "{bad}: {e}");
        }
    }

    #[tokio::test]
    async fn a_connection_failure_names_the_request_not_the_url() {
        // A port nothing listens on: the connection is refused at once.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        drop(listener);
        let retry = RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        };
        let endpoint = format!("http://127.0.0.1:{port}").parse().expect("endpoint");
        let client = ArmClient::new(reqwest::Client::new(), endpoint, retry);
        let id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c";
        match client.get(id, "2025-10-01", None).await {
            Err(ArmError::Transport { request, message }) => {
                assert!(request.contains(id), "{request}");
                assert!(message.starts_with("connection failed"), "{message}");
                assert!(
                    !message.contains("127.0.0.1") && !message.contains("api-version"),
                    "{message}"
                );
            }
            other => panic!("expected a transport error, got {other:?}"),
        }
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let (base, max) = (Duration::from_millis(100), Duration::from_secs(2));
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..50 {
            for (i, d) in jittered(base, max).take(12).enumerate() {
                let (low, high) = bounds(base, max, i as u32 + 1);
                assert!(
                    d >= low && d <= high,
                    "delay {} = {d:?} not in [{low:?}, {high:?}]",
                    i + 1
                );
                if i == 0 {
                    seen.insert(d);
                }
            }
        }
        assert!(seen.len() > 10, "the first delay is jittered: {seen:?}");
        let policy = RetryPolicy::default();
        let first: Vec<Duration> = policy.backoffs().take(8).collect();
        assert!(first[0] >= Duration::from_millis(500) && first[0] < Duration::from_secs(1));
        assert!(first.iter().all(|d| *d <= policy.max_delay), "{first:?}");
        assert!(first[7] >= policy.max_delay / 2, "{first:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn requeue_backoff_grows_per_object_and_starts_over() {
        let backoff = RequeueBackoff::new(Duration::from_secs(4), Duration::from_secs(64));
        for n in 1..=8 {
            let next = backoff.failed("uid-a");
            assert_eq!(next.attempt, n);
            let (low, high) = bounds(Duration::from_secs(4), Duration::from_secs(64), n);
            assert!(
                next.delay.as_secs() >= low.as_secs() && next.delay <= high,
                "attempt {n}: {next:?} not in [{low:?}, {high:?}]"
            );
        }
        assert_eq!(backoff.failed("uid-b").attempt, 1, "per object");
        backoff.succeeded("uid-a");
        assert_eq!(backoff.failed("uid-a").attempt, 1, "success starts over");
        assert_eq!(backoff.failing(), 2);

        // Entries not touched for twice the maximum are pruned (a deleted object) or start over.
        tokio::time::advance(Duration::from_secs(129)).await;
        assert_eq!(backoff.failed("uid-a").attempt, 1);
        assert_eq!(backoff.failing(), 1, "uid-b was pruned");
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
            result_url: None,
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
            retry_after: Some(Duration::from_secs(20)),
        };
        assert_eq!(e.code(), "InternalServerError");
        assert!(e.is_transient());
        assert_eq!(e.retry_after(), Some(Duration::from_secs(20)));
        let e = ArmError::Api {
            request: "PUT /x".into(),
            status: 400,
            error: ArmErrorBody {
                code: "InvalidParameter".into(),
                message: "bad".into(),
            },
            retry_after: Some(Duration::from_secs(20)),
        };
        assert_eq!(e.code(), "InvalidParameter");
        assert!(!e.is_transient());
        assert_eq!(e.retry_after(), None, "a 4xx is not retried after a Retry-After");
        assert_eq!(e.to_string(), "PUT /x: 400 InvalidParameter: bad");
    }
}
