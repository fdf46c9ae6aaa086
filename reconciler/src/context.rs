//! What the reconcile loop shares with the modules it calls: the settings and shared handles of every controller
//! ([`Shared`], [`KindContext`], [`Settings`]), the credentials interface ([`CredentialProvider`]), the outcome
//! types ([`Failure`], [`Retry`], [`Error`]) and the annotations the loop reads ([`Policy`]).
//!
//! A leaf of the loop: [`crate::reconcile`], [`crate::exports`] and [`crate::sources`] depend on it, it depends on
//! none of them (only on the ARM client, the claims and the metrics), so the modules form no cycle.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::events::Recorder;
use armgen_runtime::KindInfo;
use armgen_runtime::rules::{ErrorClass, ErrorRules, Rules};
use futures::future::BoxFuture;
use kube::api::ApiResource;

use crate::arm::{ArmClient, ArmError, RequeueBackoff};
use crate::claims::Claims;
use crate::kinds::api_resource;
use crate::metrics::Metrics;

/// The finalizer the reconciler puts on every managed custom resource before its first PUT.
pub const FINALIZER: &str = "armgen.dev/finalizer";
/// The reconcile policy annotation: `manage` (default), `skip` or `detach-on-delete`.
pub const POLICY_ANNOTATION: &str = "armgen.dev/reconcile-policy";

/// What the reconciler may do to the Azure resource of one custom resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Create, update and delete.
    Manage,
    /// Observe only: GET and status; never PUT or DELETE, no finalizer.
    Skip,
    /// Create and update; deleting the custom resource leaves the Azure resource in place.
    DetachOnDelete,
}

impl Policy {
    /// The policy of an object from its annotations.
    pub fn of(annotations: &BTreeMap<String, String>) -> Result<Policy, Failure> {
        match annotations.get(POLICY_ANNOTATION).map(|s| s.trim()) {
            None | Some("manage") | Some("") => Ok(Policy::Manage),
            Some("skip") => Ok(Policy::Skip),
            Some("detach-on-delete") => Ok(Policy::DetachOnDelete),
            Some(other) => Err(Failure::permanent(
                "InvalidReconcilePolicy",
                format!("annotation {POLICY_ANNOTATION} is {other:?}; expected manage, skip or detach-on-delete"),
            )),
        }
    }
}

/// Intervals of the loop.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Resync of an object in sync (one GET each).
    pub resync: Duration,
    /// Retry while waiting for an owner, a referenced resource, a Secret or credentials.
    pub wait: Duration,
    /// Poll interval of long-running operations when ARM gives no `Retry-After`.
    pub poll: Duration,
    /// Retry after an operation failed or ARM rejected a request.
    pub failed: Duration,
    /// How old an exported Secret's values may get before the next reconcile fetches them again (each fetch is
    /// an ARM POST); see [`crate::exports`].
    pub export_refresh: Duration,
    /// Requeue delays after transient ARM failures ([`Retry::Backoff`]): exponential with jitter per object, reset
    /// by a success. Clones share the per-object counts.
    pub backoff: RequeueBackoff,
    /// Where claims live ([`crate::claims`]): one custom resource per Azure resource.
    pub claims: Claims,
    /// What the services do that their specs do not say ([`armgen_runtime::rules`]): by default the generated
    /// `aks_api::rules()`; `--rules` replaces it.
    pub rules: Arc<Rules>,
    /// How long a terminal ARM error (see the rules' error classes) keeps the same generation from being sent
    /// again; zero: until the spec changes.
    pub terminal_retry: Duration,
    /// Every view's refresh interval, instead of each view's own (`aks_api::VIEWS`, the config's
    /// `views.refreshSeconds`); see [`crate::views`].
    pub view_refresh: Option<Duration>,
    /// When each object's views were last read ([`crate::views`]). Clones share it.
    pub views: crate::views::ViewSchedule,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            resync: Duration::from_secs(600),
            wait: Duration::from_secs(30),
            poll: Duration::from_secs(10),
            failed: Duration::from_secs(300),
            export_refresh: Duration::from_secs(3600),
            backoff: RequeueBackoff::default(),
            claims: Claims::default(),
            rules: Arc::new(builtin_rules()),
            terminal_retry: DEFAULT_TERMINAL_RETRY,
            view_refresh: None,
            views: crate::views::ViewSchedule::default(),
        }
    }
}

/// The default of [`Settings::terminal_retry`]: 6 hours.
pub const DEFAULT_TERMINAL_RETRY: Duration = Duration::from_secs(6 * 3600);

/// The generated rules document (`aks_api::rules()`). A document that does not parse is a generator bug that
/// `tests/rules.rs` catches; should it happen anyway, the loop runs without rules and says so.
pub fn builtin_rules() -> Rules {
    aks_api::rules().unwrap_or_else(|e| {
        tracing::error!("the generated rules document does not parse ({e}); running without service rules");
        Rules::default()
    })
}

/// Subscription and bearer token for one object's ARM calls.
#[derive(Clone)]
pub struct Access {
    pub subscription_id: String,
    /// `None` for endpoints without authentication (a local simulator).
    pub bearer: Option<String>,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("subscription_id", &self.subscription_id)
            .field("bearer", &self.bearer.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Where an object's credentials come from.
pub trait CredentialProvider: Send + Sync {
    /// The access for an object in `namespace` with `annotations`; a [`Failure`] names what is missing.
    fn access<'a>(
        &'a self,
        client: &'a kube::Client,
        namespace: &'a str,
        annotations: &'a BTreeMap<String, String>,
        scope: &'a str,
    ) -> BoxFuture<'a, Result<Access, Failure>>;
}

/// The same access for every object: for endpoints without authentication and for tests.
#[derive(Debug, Clone)]
pub struct StaticAccess(pub Access);

impl CredentialProvider for StaticAccess {
    fn access<'a>(
        &'a self,
        _client: &'a kube::Client,
        _namespace: &'a str,
        _annotations: &'a BTreeMap<String, String>,
        _scope: &'a str,
    ) -> BoxFuture<'a, Result<Access, Failure>> {
        Box::pin(async move { Ok(self.0.clone()) })
    }
}

/// Why a reconcile stopped short: the `Ready=False` reason and message, and when to try again (`None`: when the
/// object changes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub reason: String,
    pub message: String,
    pub retry: Retry,
}

/// When to retry after a [`Failure`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Only when the object changes.
    OnChange,
    /// After [`Settings::wait`] (waiting for something else to appear).
    Wait,
    /// After [`Settings::failed`] (the request or operation failed).
    Failed,
    /// After this long (ARM said so in `Retry-After`, capped at [`ArmClient::max_retry_after`]).
    After(Duration),
    /// A terminal ARM error: after [`Settings::terminal_retry`] (never when zero), or when the spec changes.
    Terminal,
    /// Waiting for the owner: its controller's watch wakes the object when the owner changes; the resync
    /// interval is only a safety net.
    OwnerChange,
    /// After [`Settings::backoff`]'s next delay for this object, and at least `at_least` (a 5xx's `Retry-After`):
    /// a transient failure (5xx, connection error, 429 without `Retry-After`, 409) that persisted through the
    /// in-call retries.
    Backoff { at_least: Duration },
}

impl Failure {
    pub fn permanent(reason: &str, message: impl Into<String>) -> Self {
        Failure {
            reason: reason.into(),
            message: message.into(),
            retry: Retry::OnChange,
        }
    }

    pub fn waiting(reason: &str, message: impl Into<String>) -> Self {
        Failure {
            reason: reason.into(),
            message: message.into(),
            retry: Retry::Wait,
        }
    }

    /// [`Failure::arm`], with the retry class the rules' `errors` give ARM's status and code (429, 5xx and
    /// connection errors are always retried with backoff).
    pub(crate) fn classified(e: &ArmError, errors: &ErrorRules) -> Self {
        let mut f = Failure::arm(e);
        if let ArmError::Api { status, error, .. } = e
            && *status != 429
            && *status < 500
        {
            match errors.classify(Some(*status), &error.code) {
                ErrorClass::Retryable => {
                    f.retry = Retry::Backoff {
                        at_least: Duration::ZERO,
                    }
                }
                ErrorClass::Terminal => f.retry = Retry::Terminal,
                ErrorClass::Unclassified => {}
            }
        }
        f
    }

    pub(crate) fn arm(e: &ArmError) -> Self {
        // A 429's Retry-After is when ARM's quota refills: exactly that. A persistent 5xx backs off exponentially
        // even when ARM suggests a (short) Retry-After, which is then the minimum.
        let retry = match e {
            ArmError::Throttled {
                retry_after: Some(d), ..
            } => Retry::After(*d),
            _ if e.is_transient() => Retry::Backoff {
                at_least: e.retry_after().unwrap_or_default(),
            },
            _ => Retry::Failed,
        };
        Failure {
            reason: e.code().to_string(),
            message: e.to_string(),
            retry,
        }
    }
}

/// What every controller shares.
pub struct Shared {
    pub client: kube::Client,
    pub arm: ArmClient,
    pub credentials: Arc<dyn CredentialProvider>,
    pub settings: Settings,
    /// Events about the objects (none when `None`).
    pub recorder: Option<Recorder>,
    /// Reconcile results, queue depth and operation durations ([`Metrics::default`] when nobody scrapes them).
    /// ARM requests are counted by the [`ArmClient`] given the same handle ([`ArmClient::with_metrics`]).
    pub metrics: Metrics,
}

/// One kind's controller context.
pub struct KindContext {
    pub shared: Arc<Shared>,
    pub info: &'static KindInfo,
    pub resource: ApiResource,
}

impl KindContext {
    pub fn new(shared: Arc<Shared>, info: &'static KindInfo) -> Self {
        KindContext {
            shared,
            info,
            resource: api_resource(info),
        }
    }
}

/// An error the controller retries with backoff: the API server failed us.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{object}: {action}: {source}")]
    Kube {
        object: String,
        action: &'static str,
        #[source]
        source: kube::Error,
    },
    #[error("{0}: the object has no namespace or name")]
    Unaddressable(String),
}
