//! The reconcile loop: one function for every generated kind.
//!
//! Per object, in order (each step's failure becomes the `Ready` condition's reason, see [`Failure`]):
//!
//! 1. The reconcile policy annotation ([`POLICY_ANNOTATION`]): `manage` (default), `skip` (observe only: GET and
//!    status, never a write to Azure, no finalizer), `detach-on-delete` (manage, but deleting the custom
//!    resource leaves the Azure resource).
//! 2. Deletion (a `deletionTimestamp`): DELETE through the finalizer, poll, 404 = gone, finalizer removed.
//! 3. Credentials ([`CredentialProvider`]) → subscription and bearer token.
//! 4. The ARM ID from the owner: a resource group (`spec.owner.name` or `.armId`) for top-level kinds, the parent
//!    custom resource's `status.id` for child kinds (absent → `WaitingForOwner`).
//! 5. A long-running operation recorded in `status.operatorStatus.pendingOperation` is polled first: after a
//!    restart the loop resumes polling and never sends the PUT again.
//! 6. GET. While `provisioningState` is not terminal, no PUT: requeue.
//! 7. Secrets and references resolved ([`crate::resolve`]), the PUT body built by the generated conversions.
//! 8. `DiffWith` between the resolved spec and the GET: PUT only for differences not in `knownDifferences`.
//!    Differences that remain right after a successful PUT at paths the PUT tried to fix become known
//!    differences (the service normalizes or ignores them), so a server default never causes a PUT loop.
//! 9. Status from the GET (the generated ARM → status conversion), `Ready` with reason and message.
//! 10. Once `Ready` is `True`: the exports of `spec.operatorSpec` ([`crate::exports`]).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use armgen_runtime::KindInfo;
use armgen_runtime::kube::{Condition, KnownDifference, OperatorStatus};
use armgen_runtime::rules::{ErrorClass, ErrorRules, KindRules, OwnerGate, compare_versions};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{DynamicObject, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType};
use kube::{Api, Resource, ResourceExt};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::arm::{ArmError, PollStatus, Poller, Started, next_try};
use crate::claims::{ClaimError, Claimant};
use crate::metrics::{Metrics, ReconcileResult};
use crate::names;
use crate::resolve;

pub use crate::context::{
    Access, CredentialProvider, DEFAULT_TERMINAL_RETRY, Error, FINALIZER, Failure, KindContext, POLICY_ANNOTATION,
    Policy, Retry, Settings, Shared, StaticAccess, builtin_rules,
};
pub use crate::kinds::{api_resource, find_kind, find_served_kind, resource_group_kind};

/// The operation recorded in `status.operatorStatus.pendingOperation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Pending {
    #[serde(flatten)]
    pub(crate) poller: Poller,
    /// The difference paths the PUT was sent for; `None` for a create (everything).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    differences: Option<Vec<String>>,
    /// When the operation started (RFC 3339), for the operation duration metric; absent in records of older
    /// versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    started: Option<String>,
}

impl Pending {
    pub(crate) fn new(poller: Poller, differences: Option<Vec<String>>) -> Self {
        Pending {
            poller,
            differences,
            started: Some(k8s_openapi::jiff::Timestamp::now().to_string()),
        }
    }

    /// Records the operation's duration, from its recorded start to now, in `metrics`.
    fn completed(&self, kind: &str, metrics: &Metrics) {
        let Some(started) = self
            .started
            .as_deref()
            .and_then(|s| s.parse::<k8s_openapi::jiff::Timestamp>().ok())
        else {
            return;
        };
        let elapsed = k8s_openapi::jiff::Timestamp::now().duration_since(started);
        let elapsed = Duration::try_from(elapsed).unwrap_or(Duration::ZERO);
        metrics.operation_completed(kind, &self.poller.verb, elapsed);
    }
}

/// The result of one reconcile step, before the status is written.
struct Outcome {
    /// The ARM GET body the status comes from (`None`: keep the status's ARM part).
    arm: Option<Value>,
    ready: Ready,
    action: Action,
}

struct Ready {
    status: &'static str,
    reason: String,
    message: String,
}

impl Ready {
    fn new(status: &'static str, reason: &str, message: impl Into<String>) -> Self {
        Ready {
            status,
            reason: reason.into(),
            message: message.into(),
        }
    }
}

/// Reconciles one object: see the module docs. Counts the result and the queue depth in
/// [`Shared::metrics`].
pub async fn reconcile(object: Arc<DynamicObject>, ctx: Arc<KindContext>) -> Result<Action, Error> {
    reconcile_resync(object, ctx).await.map(|(action, _)| action)
}

/// [`reconcile`], and when the object is in sync the time after which it is resynced (its action is then that
/// requeue: the controller keeps these deadlines itself, [`crate::controller`], rather than one kube-runtime
/// scheduler entry per object).
pub async fn reconcile_resync(
    object: Arc<DynamicObject>,
    ctx: Arc<KindContext>,
) -> Result<(Action, Option<Duration>), Error> {
    let metrics = &ctx.shared.metrics;
    let kind = ctx.info.kind;
    let key = format!("{}/{}", object.namespace().unwrap_or_default(), object.name_any());
    metrics.reconcile_started(kind, &key);
    // The cache keeps the spec as text (crate::cache): a tree again for this reconcile.
    let object = crate::cache::whole(&object);
    let result = reconcile_object(&object, &ctx).await;
    match &result {
        Ok((action, ready, _)) => {
            let result = if *ready {
                ReconcileResult::Ready
            } else {
                ReconcileResult::NotReady
            };
            metrics.reconcile_finished(kind, &key, result, *action != Action::await_change());
        }
        // `error_policy` requeues.
        Err(_) => metrics.reconcile_finished(kind, &key, ReconcileResult::Error, true),
    }
    result.map(|(action, _, resync)| (action, resync))
}

/// [`reconcile`] without the metrics: the action, whether the object is ready (or gone after a deletion), and
/// when it is in sync the time after which it is resynced ([`reconcile_resync`]).
async fn reconcile_object(
    object: &DynamicObject,
    ctx: &KindContext,
) -> Result<(Action, bool, Option<Duration>), Error> {
    let mut run = Run::new(object, ctx)?;
    let settings = &ctx.shared.settings;
    // Cluster API (crate::capi): a paused object is not written at all; what Cluster API asks of the spec is
    // applied to it first (the change it makes is reconciled as any spec change).
    if crate::capi::of_object(ctx.info, object).is_some() {
        let client = &ctx.shared.client;
        if let Some(why) = crate::capi::paused(client, object).await {
            tracing::debug!(kind = ctx.info.kind, namespace = %run.namespace, name = %run.name, "paused: {why}");
            return Ok((Action::requeue(settings.resync), false, None));
        }
        if let Some(patch) = crate::capi::inputs(client, ctx.info, object).await {
            crate::capi::patch_spec(&run.api, &run.name, patch)
                .await
                .map_err(|source| Error::Kube {
                    object: run.describe(),
                    action: "applying what Cluster API asks of the spec",
                    source,
                })?;
            return Ok((Action::requeue(Duration::from_secs(1)), false, None));
        }
    }
    // The consecutive-failure count of `Retry::Backoff` is per object: its UID (a new object of the same name
    // starts over).
    let backoff_key = match object.metadata.uid.as_deref() {
        Some(uid) => format!("{}/{uid}", ctx.info.kind),
        None => format!("{}/{}/{}", ctx.info.kind, run.namespace, run.name),
    };
    let mut failed = false;
    let mut outcome = match run.run().await {
        Ok(outcome) => outcome,
        Err(StepError::Failure(mut f)) => {
            failed = true;
            let action = failure_action(&mut f, settings, &backoff_key);
            tracing::info!(kind = ctx.info.kind, namespace = %run.namespace, name = %run.name, reason = %f.reason, "not ready: {}", f.message);
            Outcome {
                arm: None,
                ready: Ready::new("False", &f.reason, f.message),
                action,
            }
        }
        Err(StepError::Kube(e)) => return Err(e),
        Err(StepError::Gone) => {
            settings.backoff.succeeded(&backoff_key);
            settings.views.forget(&backoff_key);
            return Ok((Action::await_change(), true, None));
        }
    };
    // Ready with a GET body: the exports of spec.operatorSpec.
    if let (Some(arm), "True") = (&outcome.arm, outcome.ready.status) {
        let exporter = crate::exports::Exporter {
            shared: &ctx.shared,
            info: ctx.info,
            object,
            arm,
            bearer: run.bearer.as_deref(),
        };
        match exporter.write().await {
            Ok(()) => {}
            Err(crate::exports::ExportError::Failure(mut f)) => {
                failed = true;
                tracing::info!(kind = ctx.info.kind, namespace = %run.namespace, name = %run.name, reason = %f.reason, "exports: {}", f.message);
                outcome.action = failure_action(&mut f, settings, &backoff_key);
                outcome.ready = Ready::new("False", &f.reason, f.message);
            }
            Err(crate::exports::ExportError::Kube(e)) => return Err(e),
        }
    }
    if !failed {
        settings.backoff.succeeded(&backoff_key);
    }
    // In sync: resynced after the resync interval, or sooner when a view is due first (below).
    let mut resync = (outcome.ready.status == "True" && outcome.action == Action::requeue(settings.resync))
        .then_some(settings.resync);
    // In sync (or observed): the views that are due ([`crate::views`]), into the body the status comes from.
    if let (Some(arm), "True", Some(id)) = (&mut outcome.arm, outcome.ready.status, run.id.clone()) {
        let views = crate::views::refresh(
            &settings.views,
            crate::views::Request {
                arm: &ctx.shared.arm,
                info: ctx.info,
                key: &backoff_key,
                id: &id,
                bearer: run.bearer.as_deref(),
                force: run.changed,
                every: settings.view_refresh,
            },
        )
        .await;
        let mut failed = views.failed;
        for (field, value) in views.values {
            // A view the generated type cannot read would fail the whole status conversion: it fails alone.
            match crate::views::fits(ctx.info, arm, field, &value) {
                Ok(()) => {
                    if let Some(body) = arm.as_object_mut() {
                        body.insert(field.to_string(), value);
                    }
                }
                Err(message) => failed.push((field, message)),
            }
        }
        for (field, message) in &failed {
            tracing::warn!(kind = ctx.info.kind, namespace = %run.namespace, name = %run.name, "view {field}: {message}");
            run.event(
                EventType::Warning,
                "ViewFailed",
                "View",
                Some(format!("status.{field}: {message}")),
            )
            .await;
        }
        // The next view due before the resync: requeue then.
        if let Some(next) = views.next_due
            && outcome.action == Action::requeue(settings.resync)
            && next < settings.resync
        {
            outcome.action = Action::requeue(next.max(Duration::from_secs(1)));
            resync = resync.map(|_| next.max(Duration::from_secs(1)));
        }
    }
    run.write_status(outcome.arm.as_ref(), &outcome.ready).await?;
    // Cluster API: the spec fields the provider writes (endpoint, provider IDs), when they differ.
    if let (Some(arm), "True") = (&outcome.arm, outcome.ready.status)
        && let Some(patch) = crate::capi::provider_spec(ctx.info, object, arm)
    {
        crate::capi::patch_spec(&run.api, &run.name, patch)
            .await
            .map_err(|source| Error::Kube {
                object: run.describe(),
                action: "writing the Cluster API fields of the spec",
                source,
            })?;
    }
    Ok((outcome.action, outcome.ready.status == "True", resync))
}

/// When to retry after `f`, by its retry class; for ARM's `Retry-After` and the exponential backoff the message
/// also says which attempt failed and when the next one is.
pub(crate) fn failure_action(f: &mut Failure, settings: &Settings, backoff_key: &str) -> Action {
    match f.retry {
        Retry::OnChange => Action::await_change(),
        Retry::Wait => Action::requeue(settings.wait),
        Retry::Failed => Action::requeue(settings.failed),
        Retry::OwnerChange => Action::requeue(settings.resync),
        Retry::Terminal if settings.terminal_retry.is_zero() => {
            f.message = format!("{}; not retried until the spec changes", f.message);
            Action::await_change()
        }
        Retry::Terminal => {
            f.message = format!(
                "{}; not retried until the spec changes (or in {})",
                f.message,
                next_try(settings.terminal_retry)
            );
            Action::requeue(settings.terminal_retry)
        }
        Retry::After(d) => {
            // At least a second: a `Retry-After: 0` repeated by a broken endpoint must not become a hot loop.
            let d = d.max(Duration::from_secs(1));
            f.message = format!("{}; next try in {} as ARM's Retry-After asks", f.message, next_try(d));
            Action::requeue(d)
        }
        Retry::Backoff { at_least } => {
            let next = settings.backoff.failed(backoff_key);
            let delay = next.delay.max(at_least);
            f.message = format!(
                "{}; attempt {} failed, next try in {} (retries back off exponentially up to {} s)",
                f.message,
                next.attempt,
                next_try(delay),
                settings.backoff.max().as_secs()
            );
            Action::requeue(delay)
        }
    }
}

/// What the controller does after an error from [`reconcile`]: retry soon.
pub fn error_policy(object: Arc<DynamicObject>, error: &Error, ctx: Arc<KindContext>) -> Action {
    tracing::warn!(kind = ctx.info.kind, name = %object.name_any(), "reconcile failed: {error}");
    Action::requeue(Duration::from_secs(5))
}

pub(crate) enum StepError {
    Failure(Failure),
    Kube(Error),
    /// The object is gone (its finalizer removed): nothing more to write.
    Gone,
}

impl From<Failure> for StepError {
    fn from(f: Failure) -> Self {
        StepError::Failure(f)
    }
}

pub(crate) struct Run<'a> {
    ctx: &'a KindContext,
    object: &'a DynamicObject,
    pub(crate) api: Api<DynamicObject>,
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) operator: OperatorStatus,
    /// The bearer token of this reconcile's ARM calls (for the exports' POST actions).
    bearer: Option<String>,
    /// The resource's ARM ID, once known (for the views).
    id: Option<String>,
    /// Whether a PUT of this reconcile's (or the operation it resumed) succeeded: the views are read again.
    changed: bool,
    /// The object's resource version as this reconcile last saw or wrote it: its writes are conditional on it, so
    /// a reconcile that ran on a cached object older than the reconciler's own last write (the watch behind) fails
    /// with a conflict and is retried, instead of writing a status computed from stale state (e.g. clearing a
    /// pending operation it never saw).
    resource_version: std::sync::Mutex<Option<String>>,
}

impl<'a> Run<'a> {
    pub(crate) fn new(object: &'a DynamicObject, ctx: &'a KindContext) -> Result<Self, Error> {
        let what = format!("{} {}", ctx.info.kind, object.name_any());
        let namespace = object.namespace().ok_or_else(|| Error::Unaddressable(what.clone()))?;
        let name = object.meta().name.clone().ok_or(Error::Unaddressable(what))?;
        let api = Api::namespaced_with(ctx.shared.client.clone(), &namespace, &ctx.resource);
        let operator = object
            .data
            .pointer("/status/operatorStatus")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default();
        Ok(Run {
            ctx,
            object,
            api,
            namespace,
            name,
            operator,
            bearer: None,
            id: None,
            changed: false,
            resource_version: std::sync::Mutex::new(object.metadata.resource_version.clone()),
        })
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.ctx.shared
    }

    pub(crate) fn info(&self) -> &'static KindInfo {
        self.ctx.info
    }

    fn kube_error(&self, action: &'static str, source: kube::Error) -> StepError {
        StepError::Kube(Error::Kube {
            object: self.describe(),
            action,
            source,
        })
    }

    pub(crate) fn describe(&self) -> String {
        format!("{} {}/{}", self.info().kind, self.namespace, self.name)
    }

    /// The custom resource as JSON (what the generated dispatch functions read).
    /// The rules of this kind at this version ([`Settings::rules`]).
    pub(crate) fn kind_rules(&self) -> Option<&'a KindRules> {
        let ctx: &'a KindContext = self.ctx;
        let info = ctx.info;
        ctx.shared.settings.rules.kind(info.group, info.version, info.kind)
    }

    /// The error classes of this kind's group.
    pub(crate) fn errors(&self) -> &'a ErrorRules {
        let ctx: &'a KindContext = self.ctx;
        ctx.shared.settings.rules.errors(ctx.info.group)
    }

    /// The custom resource as the loop applies it. Once the Azure resource exists, a child-owned property
    /// (the rules' `childOwned`: a cluster's agent pools) is what Azure reports — the GET converted to spec
    /// shape — so it is neither compared nor changed by a PUT: its items are the child objects' to change.
    fn desired(&self, rules: Option<&KindRules>, actual: Option<&Value>) -> Result<Value, StepError> {
        let mut cr = self.custom_resource();
        let (Some(rules), Some(actual)) = (rules, actual) else {
            return Ok(cr);
        };
        if rules.child_owned.is_empty() {
            return Ok(cr);
        }
        let info = self.info();
        let imported = match aks_api::import_custom_resource(
            info.group,
            info.version,
            info.kind,
            &actual.to_string(),
            &self.name,
            Some(&self.namespace),
        ) {
            Some(Ok(v)) => v,
            Some(Err(e)) => {
                return Err(Failure::permanent(
                    "InvalidResource",
                    format!("the ARM GET body of {} is not a {}: {e}", self.describe(), info.kind),
                )
                .into());
            }
            None => return Err(Failure::permanent("UnsupportedKind", "no conversion for this kind").into()),
        };
        if let Some(spec) = cr.get_mut("spec").and_then(Value::as_object_mut) {
            for owned in &rules.child_owned {
                match imported.get("spec").and_then(|s| s.get(&owned.spec_field)) {
                    Some(v) => spec.insert(owned.spec_field.clone(), v.clone()),
                    None => spec.remove(&owned.spec_field),
                };
            }
        }
        Ok(cr)
    }

    /// The rules' `ownerGate`: `Err(WaitingForOwner)` while the owner is busy, or while a version field of the
    /// desired spec is newer than the owner's. Woken by the owner's change (see [`crate::controller`]).
    fn owner_gate(&self, gate: &OwnerGate, owner: &DynamicObject, desired: &Value) -> Result<(), StepError> {
        let owner_name = format!(
            "{} {}/{}",
            self.info().owner_kind.unwrap_or("owner"),
            self.namespace,
            owner.name_any()
        );
        let wait = |message: String| {
            Err(StepError::from(Failure {
                reason: "WaitingForOwner".into(),
                message,
                retry: Retry::OwnerChange,
            }))
        };
        if gate.settled
            && let Some(why) = owner_busy(owner)
        {
            return wait(format!(
                "the owner {owner_name} {why}; this change is sent once it settles"
            ));
        }
        for v in &gate.versions {
            let Some(want) = desired
                .pointer(&format!("/spec/{}", v.spec_field))
                .and_then(Value::as_str)
            else {
                continue;
            };
            let Some(have) = owner
                .data
                .pointer(&format!("/status/{}", v.owner_status_field))
                .and_then(Value::as_str)
            else {
                continue;
            };
            if compare_versions(want, have) == Some(std::cmp::Ordering::Greater) {
                return wait(format!(
                    "spec.{} {want} is newer than the owner {owner_name}'s status.{} {have}, which Azure refuses                      ({}); this change is sent once the owner reaches it",
                    v.spec_field, v.owner_status_field, v.error_code
                ));
            }
        }
        Ok(())
    }

    /// Records a terminal ARM error for this generation: the same spec is not sent again before
    /// [`Settings::terminal_retry`] (persisted in status, like a failed operation, so that a restart keeps it).
    fn record_terminal(&mut self) {
        self.operator.annotations.insert(
            TERMINAL_GENERATION.into(),
            self.object.meta().generation.unwrap_or_default().to_string(),
        );
        self.operator
            .annotations
            .insert(TERMINAL_AT.into(), k8s_openapi::jiff::Timestamp::now().to_string());
    }

    /// When a terminal error was recorded for this generation: how long until the same spec may be sent again
    /// (with a zero [`Settings::terminal_retry`]: never, so the resync interval).
    fn terminal_remaining(&self) -> Option<Duration> {
        let generation = self.object.meta().generation.unwrap_or_default().to_string();
        if self.operator.annotations.get(TERMINAL_GENERATION) != Some(&generation) {
            return None;
        }
        let interval = self.shared().settings.terminal_retry;
        if interval.is_zero() {
            return Some(self.shared().settings.resync);
        }
        let at = self
            .operator
            .annotations
            .get(TERMINAL_AT)
            .and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok())?;
        let elapsed =
            Duration::try_from(k8s_openapi::jiff::Timestamp::now().duration_since(at)).unwrap_or(Duration::ZERO);
        interval.checked_sub(elapsed).filter(|d| !d.is_zero())
    }

    /// The requeue after a terminal error.
    fn terminal_wait(&self) -> Duration {
        let settings = &self.shared().settings;
        if settings.terminal_retry.is_zero() {
            settings.resync
        } else {
            settings.terminal_retry
        }
    }

    pub(crate) fn custom_resource(&self) -> Value {
        let mut value = serde_json::to_value(self.object).unwrap_or(Value::Null);
        if let Some(map) = value.as_object_mut() {
            map.insert("apiVersion".into(), Value::String(self.info().api_version()));
            map.insert("kind".into(), Value::String(self.info().kind.into()));
        }
        value
    }

    pub(crate) fn pending(&self) -> Option<Pending> {
        self.operator
            .pending_operation
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok())
    }

    async fn run(&mut self) -> Result<Outcome, StepError> {
        let annotations = self.object.annotations().clone();
        let policy = Policy::of(&annotations)?;
        if self.object.meta().deletion_timestamp.is_some() {
            return self.delete(policy, &annotations).await;
        }
        let scope = self.shared().arm.token_scope();
        let access = self
            .shared()
            .credentials
            .access(&self.shared().client, &self.namespace, &annotations, &scope)
            .await?;
        self.bearer = access.bearer.clone();
        let (id, owner) = self.arm_id(&access).await?;
        self.claim(&id).await?;
        self.id = Some(id.clone());
        let api_version = self.info().arm.api_version;

        // A long-running operation in flight: poll it before anything else.
        let mut just_put: Option<Option<Vec<String>>> = None;
        if let Some(pending) = self.pending() {
            match self.shared().arm.poll(&pending.poller, access.bearer.as_deref()).await {
                Ok(PollStatus::InProgress { retry_after }) => {
                    return Ok(Outcome {
                        arm: None,
                        ready: Ready::new(
                            "Unknown",
                            "Reconciling",
                            format!("{} operation in progress", pending.poller.verb),
                        ),
                        action: Action::requeue(retry_after.unwrap_or(self.shared().settings.poll)),
                    });
                }
                Ok(PollStatus::Succeeded) => {
                    pending.completed(self.info().kind, &self.shared().metrics);
                    self.operator.pending_operation = None;
                    self.changed = true;
                    just_put = Some(pending.differences);
                }
                Ok(PollStatus::Failed(e)) | Ok(PollStatus::Canceled(e)) => {
                    pending.completed(self.info().kind, &self.shared().metrics);
                    self.operator.pending_operation = None;
                    let terminal = self.errors().classify(None, &e.code) == ErrorClass::Terminal;
                    let mut wait = self.record_failure();
                    if terminal {
                        self.record_terminal();
                        wait = self.terminal_wait();
                    }
                    let actual = self.get(&id, &access).await.unwrap_or(None);
                    self.event(
                        EventType::Warning,
                        &e.code,
                        "Reconcile",
                        Some(format!("{} failed: {}", pending.poller.verb, e.message)),
                    )
                    .await;
                    let next = if terminal {
                        "not retried until the spec changes (or after the terminal-error interval)".to_string()
                    } else {
                        format!("retrying in {}s", wait.as_secs())
                    };
                    return Ok(Outcome {
                        arm: actual,
                        ready: Ready::new(
                            "False",
                            &e.code,
                            format!("{} {id} failed: {}; {next}", pending.poller.verb, e.message),
                        ),
                        action: Action::requeue(wait),
                    });
                }
                Err(e) if e.is_transient() => return Err(Failure::arm(&e).into()),
                Err(e) => self.drop_unpollable(&pending, &e).await,
            }
        }

        let actual = self.get(&id, &access).await?;
        if policy == Policy::Skip {
            return Ok(match actual {
                Some(actual) => Outcome {
                    arm: Some(actual),
                    ready: Ready::new(
                        "True",
                        "Observed",
                        "reconcile policy skip: observed only, never written",
                    ),
                    action: Action::requeue(self.shared().settings.resync),
                },
                None => Outcome {
                    arm: None,
                    ready: Ready::new(
                        "False",
                        "NotFound",
                        format!("reconcile policy skip: {id} does not exist"),
                    ),
                    action: Action::requeue(self.shared().settings.resync),
                },
            });
        }
        self.ensure_finalizer().await?;
        if let Some(actual) = &actual
            && let Some(state) = provisioning_state(actual)
            && !is_terminal(state)
        {
            return Ok(Outcome {
                arm: Some(actual.clone()),
                ready: Ready::new(
                    "Unknown",
                    "Provisioning",
                    format!("provisioningState is {state}; waiting before any change"),
                ),
                action: Action::requeue(self.shared().settings.poll),
            });
        }

        // Azure reports the resource Failed (an operation failed, here or elsewhere) and no operation of ours just
        // succeeded: never Ready; the spec is PUT again (the retry), after a backoff.
        let retry_failed = just_put.is_none()
            && actual
                .as_ref()
                .and_then(provisioning_state)
                .is_some_and(|s| s.eq_ignore_ascii_case("failed"));
        if retry_failed {
            if let Some(wait) = self.failed_backoff_remaining() {
                let (reason, message) = self.previous_failure();
                return Ok(Outcome {
                    arm: actual,
                    ready: Ready::new("False", &reason, message),
                    action: Action::requeue(wait),
                });
            }
        }
        let rules = self.kind_rules();
        let desired = self.desired(rules, actual.as_ref())?;
        let resolved = self.resolve(desired).await?;
        let differences = match &actual {
            None => None,
            Some(actual) => Some(self.diff(&resolved.custom_resource, actual)?),
        };
        if let (Some(before), Some(after)) = (&just_put, &differences) {
            // Right after a successful PUT: what it could not fix is a known difference.
            self.operator.known_differences = after
                .iter()
                .filter(|d| before.as_ref().is_none_or(|paths| paths.contains(&d.path)))
                .map(KnownDifference::from)
                .collect();
        }
        // A change of a property fixed after creation can only fail: report it, send nothing.
        if let (Some(rules), Some(d)) = (rules, &differences) {
            let changed: Vec<String> = d
                .iter()
                .filter(|d| !armgen_runtime::diff::is_known(d, &self.operator.known_differences))
                .filter(|d| rules.immutable.iter().any(|i| i.matches(&d.path)))
                .map(ToString::to_string)
                .collect();
            if !changed.is_empty() {
                return Ok(Outcome {
                    arm: actual,
                    ready: Ready::new(
                        "False",
                        "ImmutablePropertyChanged",
                        format!(
                            "fixed after creation, so nothing is sent: {}; revert the change, or recreate the resource",
                            changed.join("; ")
                        ),
                    ),
                    action: Action::requeue(self.shared().settings.resync),
                });
            }
        }
        let put_for: Option<Option<Vec<String>>> = match &differences {
            None => Some(None),
            // A Failed resource is PUT again even when it matches the spec (the retry after the backoff).
            Some(d) if retry_failed => Some(Some(d.iter().map(|d| d.path.clone()).collect())),
            Some(d) if armgen_runtime::diff::needs_put(d, &self.operator.known_differences) => {
                Some(Some(d.iter().map(|d| d.path.clone()).collect()))
            }
            Some(d) => {
                armgen_runtime::diff::forget_resolved(&mut self.operator, d);
                None
            }
        };
        let Some(paths) = put_for else {
            for key in [
                FAILED_AT,
                FAILED_ATTEMPTS,
                FAILED_GENERATION,
                TERMINAL_AT,
                TERMINAL_GENERATION,
            ] {
                self.operator.annotations.remove(key);
            }
            return Ok(Outcome {
                arm: actual,
                ready: Ready::new("True", "Succeeded", "the Azure resource matches the spec"),
                action: Action::requeue(self.shared().settings.resync),
            });
        };

        // A terminal error for this generation: the same spec fails the same way.
        if let Some(wait) = self.terminal_remaining() {
            let (reason, message) = self.previous_failure();
            return Ok(Outcome {
                arm: actual,
                ready: Ready::new("False", &reason, message),
                action: Action::requeue(wait),
            });
        }
        // A child waits while its owner is busy or behind (the rules' ownerGate).
        if let (Some(gate), Some(owner)) = (rules.and_then(|r| r.owner_gate.as_ref()), &owner) {
            self.owner_gate(gate, owner, &resolved.custom_resource)?;
        }

        // PUT.
        let note = match &paths {
            None => format!("creating {id}"),
            Some(paths) => format!("updating {id}: {}", paths.join(", ")),
        };
        tracing::info!(kind = self.info().kind, namespace = %self.namespace, name = %self.name, "{note}");
        let started = match self
            .shared()
            .arm
            .put(&id, api_version, &resolved.body, access.bearer.as_deref())
            .await
        {
            Ok(s) => s,
            Err(e) => {
                self.event(EventType::Warning, e.code(), "Put", Some(e.to_string()))
                    .await;
                let f = Failure::classified(&e, self.errors());
                if f.retry == Retry::Terminal {
                    self.record_terminal();
                }
                return Err(f.into());
            }
        };
        self.event(
            EventType::Normal,
            if paths.is_none() { "Creating" } else { "Updating" },
            "Put",
            Some(note),
        )
        .await;
        match started {
            Started::Running {
                poller,
                retry_after,
                body,
            } => {
                let pending = Pending::new(poller, paths);
                self.operator.pending_operation = serde_json::to_string(&pending).ok();
                Ok(Outcome {
                    arm: body,
                    ready: Ready::new("Unknown", "Reconciling", "PUT accepted; operation in progress"),
                    action: Action::requeue(retry_after.unwrap_or(self.shared().settings.poll)),
                })
            }
            Started::Done(_) => {
                self.changed = true;
                let after = self.get(&id, &access).await?;
                if let Some(after_body) = &after {
                    let d = self.diff(&resolved.custom_resource, after_body)?;
                    self.operator.known_differences = d
                        .iter()
                        .filter(|d| paths.as_ref().is_none_or(|p| p.contains(&d.path)))
                        .map(KnownDifference::from)
                        .collect();
                }
                Ok(Outcome {
                    arm: after,
                    ready: Ready::new("True", "Succeeded", "the Azure resource matches the spec"),
                    action: Action::requeue(self.shared().settings.resync),
                })
            }
        }
    }

    /// Whether a deletion may DELETE `id` (this object's `status.id`): `Err` says why not.
    async fn may_delete(&self, id: &str, access: &Access) -> Result<Result<(), String>, StepError> {
        if let Err(e) = names::check_arm_id("status.id", id) {
            return Ok(Err(format!("{e}; nothing is deleted in Azure")));
        }
        let claims = &self.shared().settings.claims;
        let uid = self.object.metadata.uid.as_deref().unwrap_or_default();
        if claims
            .holds(&self.shared().client, id, uid)
            .await
            .map_err(|e| self.kube_error("reading the claim", e))?
        {
            return Ok(Ok(()));
        }
        match self.arm_id(access).await {
            Ok((derived, _)) if derived.eq_ignore_ascii_case(id) => match self.claim(id).await {
                Ok(()) => Ok(Ok(())),
                Err(StepError::Failure(f)) => Ok(Err(format!("{}; {id} is left in Azure", f.message))),
                Err(e) => Err(e),
            },
            _ => Ok(Err(format!(
                "status.id {id} is not an Azure resource this object manages (it holds no claim of it and its spec does not name it); it is left in Azure"
            ))),
        }
    }

    /// This object as a claimant of ARM IDs.
    fn claimant(&self) -> Claimant {
        Claimant {
            group: self.info().kube_group.to_string(),
            version: self.info().version.to_string(),
            kind: self.info().kind.to_string(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            uid: self.object.metadata.uid.clone().unwrap_or_default(),
        }
    }

    /// Claims `id` for this object ([`crate::claims`]): refused while another custom resource manages it.
    async fn claim(&self, id: &str) -> Result<(), StepError> {
        if self.object.metadata.uid.as_deref().is_none_or(str::is_empty) {
            return Err(Failure::waiting("Unaddressable", "the object has no metadata.uid yet").into());
        }
        match self
            .shared()
            .settings
            .claims
            .claim(&self.shared().client, id, &self.claimant())
            .await
        {
            Ok(()) => Ok(()),
            Err(e @ ClaimError::Taken { .. }) => Err(Failure {
                reason: "ClaimedByOther".into(),
                message: e.to_string(),
                retry: Retry::Failed,
            }
            .into()),
            Err(ClaimError::Kube { source, .. }) => Err(self.kube_error("claiming the Azure resource", source)),
        }
    }

    /// Releases this object's claim of `id` once its deletion is done; a failure only leaves a claim that the
    /// next claimant takes over (its claimant is gone).
    async fn release(&self, id: &str) {
        if let Err(e) = self
            .shared()
            .settings
            .claims
            .release(&self.shared().client, id, &self.claimant())
            .await
        {
            tracing::warn!(kind = self.info().kind, namespace = %self.namespace, name = %self.name, "releasing the claim of {id}: {e}");
        }
    }

    /// A pending operation whose status URL answers with a permanent error (404, another origin, not a URL, not
    /// an operation): it cannot be polled, so it is dropped and the loop goes on from a GET of the resource,
    /// which tells the truth (a non-terminal `provisioningState` still keeps it from writing).
    async fn drop_unpollable(&mut self, pending: &Pending, e: &ArmError) {
        tracing::warn!(kind = self.info().kind, namespace = %self.namespace, name = %self.name, "dropping the {} operation that cannot be polled: {e}", pending.poller.verb);
        self.operator.pending_operation = None;
        self.event(
            EventType::Warning,
            "OperationLost",
            "Reconcile",
            Some(format!(
                "the {} operation cannot be polled ({e}); continuing from a GET of the resource",
                pending.poller.verb
            )),
        )
        .await;
    }

    /// Records a failed operation in `operatorStatus.annotations` and returns the backoff before the next PUT:
    /// in status rather than in [`RequeueBackoff`]'s memory because the wait spans minutes to an hour and must
    /// hold across restarts (an AKS PUT is expensive); a tenant who edits it gains nothing a spec change would
    /// not give at once.
    /// [`Settings::failed`] doubled per consecutive failure, at most [`MAX_FAILED_BACKOFF`].
    fn record_failure(&mut self) -> Duration {
        let attempts = self
            .operator
            .annotations
            .get(FAILED_ATTEMPTS)
            .and_then(|a| a.parse::<u32>().ok())
            .unwrap_or(0)
            .saturating_add(1);
        self.operator
            .annotations
            .insert(FAILED_ATTEMPTS.into(), attempts.to_string());
        self.operator
            .annotations
            .insert(FAILED_AT.into(), k8s_openapi::jiff::Timestamp::now().to_string());
        self.operator.annotations.insert(
            FAILED_GENERATION.into(),
            self.object.meta().generation.unwrap_or_default().to_string(),
        );
        failed_backoff(self.shared().settings.failed, attempts)
    }

    /// How long the backoff after the last recorded failure still runs; `None` when it is over, when the spec
    /// changed since (a new generation is sent at once), or when none is recorded (a resource found Failed
    /// after a restart or by another tool is retried at once, once).
    fn failed_backoff_remaining(&mut self) -> Option<Duration> {
        let generation = self.object.meta().generation.unwrap_or_default().to_string();
        if self.operator.annotations.get(FAILED_GENERATION) != Some(&generation) {
            return None;
        }
        let attempts = self
            .operator
            .annotations
            .get(FAILED_ATTEMPTS)
            .and_then(|a| a.parse::<u32>().ok());
        let at = self
            .operator
            .annotations
            .get(FAILED_AT)
            .and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok());
        let (Some(attempts), Some(at)) = (attempts, at) else {
            return None;
        };
        let backoff = failed_backoff(self.shared().settings.failed, attempts);
        let elapsed =
            Duration::try_from(k8s_openapi::jiff::Timestamp::now().duration_since(at)).unwrap_or(Duration::ZERO);
        backoff.checked_sub(elapsed).filter(|d| !d.is_zero())
    }

    /// The reason and message of the `Ready=False` condition written last (ARM's error of the failed operation),
    /// or a generic one.
    fn previous_failure(&self) -> (String, String) {
        let previous = self
            .object
            .data
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready" && c["status"] == "False"));
        match previous {
            Some(c) => (
                c["reason"].as_str().unwrap_or("ProvisioningFailed").to_string(),
                c["message"].as_str().unwrap_or_default().to_string(),
            ),
            None => (
                "ProvisioningFailed".into(),
                "Azure reports provisioningState Failed; the spec is sent again after a backoff".into(),
            ),
        }
    }

    async fn get(&self, id: &str, access: &Access) -> Result<Option<Value>, StepError> {
        self.shared()
            .arm
            .get(id, self.info().arm.api_version, access.bearer.as_deref())
            .await
            .map_err(|e| Failure::arm(&e).into())
    }

    fn diff(&self, custom_resource: &Value, actual: &Value) -> Result<armgen_runtime::diff::Differences, StepError> {
        let info = self.info();
        let text = actual.to_string();
        match aks_api::diff_custom_resource(info.group, info.version, info.kind, custom_resource, &text) {
            Some(Ok(d)) => Ok(d),
            Some(Err(e)) => Err(Failure::permanent("InvalidResource", e.to_string()).into()),
            None => Err(Failure::permanent("UnsupportedKind", "no change detection for this kind").into()),
        }
    }

    /// The ARM ID: owner's ID + this resource's type segment + `azureName` (default: the object's name); and the
    /// owner custom resource of a child kind, as read.
    async fn arm_id(&self, access: &Access) -> Result<(String, Option<DynamicObject>), StepError> {
        let info = self.info();
        let azure_name = self
            .object
            .data
            .pointer("/spec/azureName")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| self.name.clone());
        let invalid = |message: String| StepError::from(Failure::permanent("InvalidName", message));
        // A name that must be a UUID: the given one must parse; none given, one derived from the object, so that
        // applying the object again (also after deleting it) names the same resource.
        let azure_name = match (info.name_format, self.object.data.pointer("/spec/azureName")) {
            (armgen_runtime::NameFormat::Uuid, Some(_)) => match uuid::Uuid::parse_str(&azure_name) {
                Ok(u) => u.hyphenated().to_string(),
                Err(_) => {
                    return Err(invalid(format!(
                        "spec.azureName {azure_name:?} is not a UUID, which {} names must be",
                        info.kind
                    )));
                }
            },
            (armgen_runtime::NameFormat::Uuid, None) => {
                armgen_runtime::derived_uuid_name(info.kube_group, info.kind, &self.namespace, &self.name)
            }
            (armgen_runtime::NameFormat::Any, _) => azure_name,
        };
        names::check_segment("spec.azureName", &azure_name).map_err(invalid)?;
        let owner = self.object.data.pointer("/spec/owner");
        let name_of = |key: &str| {
            owner
                .and_then(|o| o.get(key))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        match (info.owner_kind, info.arm.scope) {
            (None, armgen_runtime::Scope::Subscription) => {
                // In the credential's subscription: the path's only other parameter is the name.
                Ok((
                    subscription_scoped_id(info, &access.subscription_id, &azure_name).map_err(invalid)?,
                    None,
                ))
            }
            (None, armgen_runtime::Scope::Extension) => {
                let scope = match (name_of("armId"), name_of("kind"), name_of("name")) {
                    (Some(id), _, _) => {
                        names::check_arm_id("spec.owner.armId", id).map_err(invalid)?;
                        // The credential's subscription is the one this object may act in.
                        let subscription = id.trim_start_matches('/').split('/').nth(1).unwrap_or_default();
                        if !subscription.eq_ignore_ascii_case(&access.subscription_id) {
                            return Err(Failure::permanent(
                                "InvalidOwner",
                                format!(
                                    "spec.owner.armId {id:?} is in subscription {subscription}, not in this object's subscription {}",
                                    access.subscription_id
                                ),
                            )
                            .into());
                        }
                        let id = id.trim_end_matches('/');
                        // Tenants stay apart: a resource another namespace's object manages (holds the claim of)
                        // is not extended from here — checked until this object is created.
                        let created = self
                            .object
                            .data
                            .pointer("/status/id")
                            .and_then(Value::as_str)
                            .is_some_and(|i| !i.is_empty());
                        if !created {
                            let holder = self
                                .shared()
                                .settings
                                .claims
                                .holder(&self.shared().client, id)
                                .await
                                .map_err(|e| self.kube_error("reading the scope's claim", e))?;
                            if let Some(holder) = holder.filter(|h| h.namespace != self.namespace) {
                                return Err(Failure::permanent(
                                    "InvalidOwner",
                                    format!(
                                        "spec.owner.armId {id:?} is managed by {holder}, in another namespace; extend \
                                         resources of this namespace's objects (by group, kind and name) or unmanaged ones"
                                    ),
                                )
                                .into());
                            }
                        }
                        id.to_string()
                    }
                    (None, Some(kind), Some(name)) => {
                        names::check_object_name("spec.owner.name", name).map_err(invalid)?;
                        let group = name_of("group").unwrap_or(info.kube_group);
                        let Some(target) = find_served_kind(group, kind) else {
                            return Err(Failure::permanent(
                                "InvalidOwner",
                                format!("spec.owner: {kind}.{group} is not a kind this reconciler knows; use armId"),
                            )
                            .into());
                        };
                        self.owner_id(target, name).await?.0
                    }
                    _ => {
                        return Err(Failure::permanent(
                            "InvalidOwner",
                            "spec.owner needs the armId of the resource this one extends, or its custom resource's kind and name",
                        )
                        .into());
                    }
                };
                Ok((format!("{scope}/providers/{}/{azure_name}", info.arm.arm_type), None))
            }
            (None, armgen_runtime::Scope::Tenant) => Err(Failure::permanent(
                "UnsupportedScope",
                format!(
                    "{} resources are outside any subscription; the reconciler does not manage them",
                    info.kind
                ),
            )
            .into()),
            (None, armgen_runtime::Scope::ResourceGroup) => {
                let group = match (name_of("armId"), name_of("name")) {
                    (Some(id), _) => {
                        let (subscription, rg) =
                            names::parse_resource_group_id("spec.owner.armId", id).map_err(invalid)?;
                        // The credential's subscription is the one this object may act in.
                        if !subscription.eq_ignore_ascii_case(&access.subscription_id) {
                            return Err(Failure::permanent(
                                "InvalidOwner",
                                format!(
                                    "spec.owner.armId {id:?} is in subscription {subscription}, not in this object's subscription {}",
                                    access.subscription_id
                                ),
                            )
                            .into());
                        }
                        format!("/subscriptions/{}/resourceGroups/{rg}", access.subscription_id)
                    }
                    (None, Some(rg)) => {
                        names::check_resource_group("spec.owner.name", rg).map_err(invalid)?;
                        // A resource group made here (an object of the resource-group kind named so, in this
                        // namespace) is waited for, as an owner is; else the group is managed elsewhere. Only
                        // until the object is created: then its group exists, and a resync reads nothing more.
                        let created = self
                            .object
                            .data
                            .pointer("/status/id")
                            .and_then(Value::as_str)
                            .is_some_and(|id| !id.is_empty());
                        let made_here = match resource_group_kind().filter(|_| !created) {
                            Some(rg_info) => {
                                let api: Api<DynamicObject> = Api::namespaced_with(
                                    self.shared().client.clone(),
                                    &self.namespace,
                                    &api_resource(rg_info),
                                );
                                let found = api
                                    .get_opt(rg)
                                    .await
                                    .map_err(|e| self.kube_error("reading the resource group", e))?;
                                found.is_some().then_some(rg_info)
                            }
                            None => None,
                        };
                        match made_here {
                            Some(rg_info) => self.owner_id(rg_info, rg).await?.0,
                            None => format!("/subscriptions/{}/resourceGroups/{rg}", access.subscription_id),
                        }
                    }
                    (None, None) => {
                        return Err(Failure::permanent(
                            "InvalidOwner",
                            "spec.owner needs the resource group's name or armId",
                        )
                        .into());
                    }
                };
                Ok((format!("{group}/providers/{}/{azure_name}", info.arm.arm_type), None))
            }
            (Some(owner_kind), _) => {
                let Some(owner_name) = name_of("name") else {
                    return Err(Failure::permanent(
                        "InvalidOwner",
                        format!("spec.owner.name must name the {owner_kind}"),
                    )
                    .into());
                };
                names::check_object_name("spec.owner.name", owner_name).map_err(invalid)?;
                let Some(owner_info) = find_kind(info.kube_group, info.version, owner_kind) else {
                    return Err(Failure::permanent(
                        "InvalidOwner",
                        format!("{owner_kind} is not a kind of this reconciler"),
                    )
                    .into());
                };
                let (owner_id, owner) = self.owner_id(owner_info, owner_name).await?;
                let segment = info.arm.arm_type.rsplit('/').next().unwrap_or_default();
                Ok((format!("{owner_id}/{segment}/{azure_name}"), Some(owner)))
            }
        }
    }

    /// The ARM ID of the owner (or scope) custom resource `owner_name` of kind `owner_info`, in this namespace, once
    /// it exists in Azure and holds the claim of that ID; and the owner as read.
    pub(crate) async fn owner_id(
        &self,
        owner_info: &KindInfo,
        owner_name: &str,
    ) -> Result<(String, DynamicObject), StepError> {
        let owner_kind = owner_info.kind;
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.shared().client.clone(), &self.namespace, &api_resource(owner_info));
        let owner = api
            .get_opt(owner_name)
            .await
            .map_err(|e| self.kube_error("reading the owner", e))?;
        let Some(owner) = owner else {
            return Err(Failure::waiting(
                "WaitingForOwner",
                format!(
                    "the owner {owner_kind} {}/{owner_name} does not exist yet",
                    self.namespace
                ),
            )
            .into());
        };
        if owner.metadata.deletion_timestamp.is_some() {
            return Err(Failure::waiting(
                "WaitingForOwner",
                format!(
                    "the owner {owner_kind} {}/{owner_name} is being deleted",
                    self.namespace
                ),
            )
            .into());
        }
        match owner.data.pointer("/status/id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => {
                // The owner's status is tenant-writable: its ID counts only when the owner holds its claim.
                let uid = owner.metadata.uid.as_deref().unwrap_or_default();
                let held = self
                    .shared()
                    .settings
                    .claims
                    .holds(&self.shared().client, id, uid)
                    .await
                    .map_err(|e| self.kube_error("reading the owner's claim", e))?;
                if held {
                    Ok((id.to_string(), owner.clone()))
                } else {
                    Err(Failure::waiting(
                        "WaitingForOwner",
                        format!(
                            "the owner {owner_kind} {}/{owner_name} does not manage {id} (yet): it holds no claim of it",
                            self.namespace
                        ),
                    )
                    .into())
                }
            }
            _ => Err(Failure::waiting(
                "WaitingForOwner",
                format!(
                    "the owner {owner_kind} {}/{owner_name} is not created in Azure yet",
                    self.namespace
                ),
            )
            .into()),
        }
    }

    /// Reads the Secrets and referenced resources the spec of `cr` (the custom resource as [`Run::desired`]
    /// gives it) names, and builds the PUT body.
    pub(crate) async fn resolve(&self, cr: Value) -> Result<resolve::Resolved, StepError> {
        let info = self.info();
        let refs = resolve::references(info, &cr).map_err(|e| Failure::permanent("InvalidSpec", e.to_string()))?;
        let mut values = resolve::Values::default();
        let secrets: Api<Secret> = Api::namespaced(self.shared().client.clone(), &self.namespace);
        let invalid = |message: String| StepError::from(Failure::permanent("InvalidReference", message));
        for (path, reference) in &refs.secrets {
            names::check_object_name(&format!("{path}.name"), &reference.name).map_err(invalid)?;
            names::check_secret_key(&format!("{path}.key"), &reference.key).map_err(invalid)?;
            let key = (reference.name.clone(), reference.key.clone());
            if values.secrets.contains_key(&key) {
                continue;
            }
            let secret = secrets
                .get_opt(&reference.name)
                .await
                .map_err(|e| self.kube_error("reading a Secret", e))?;
            let Some(secret) = secret else {
                return Err(Failure::waiting(
                    "SecretNotFound",
                    format!(
                        "Secret {}/{} (for {path}) does not exist",
                        self.namespace, reference.name
                    ),
                )
                .into());
            };
            let value = secret
                .data
                .as_ref()
                .and_then(|d| d.get(&reference.key))
                .map(|b| String::from_utf8(b.0.clone()))
                .or_else(|| {
                    secret
                        .string_data
                        .as_ref()
                        .and_then(|d| d.get(&reference.key))
                        .map(|s| Ok(s.clone()))
                });
            match value {
                Some(Ok(v)) => {
                    values.secrets.insert(key, v);
                }
                Some(Err(_)) => {
                    return Err(Failure::permanent(
                        "SecretInvalid",
                        format!(
                            "Secret {}/{} key {} (for {path}) is not UTF-8",
                            self.namespace, reference.name, reference.key
                        ),
                    )
                    .into());
                }
                None => {
                    return Err(Failure::waiting(
                        "SecretKeyNotFound",
                        format!(
                            "Secret {}/{} has no key {} (for {path})",
                            self.namespace, reference.name, reference.key
                        ),
                    )
                    .into());
                }
            }
        }
        for (path, reference) in &refs.resources {
            if reference.arm_id.is_some() {
                continue;
            }
            let (Some(kind), Some(name)) = (reference.kind.as_deref(), reference.name.as_deref()) else {
                return Err(Failure::permanent(
                    "InvalidReference",
                    format!("{path}: a reference needs armId, or kind and name"),
                )
                .into());
            };
            let group = reference.group.as_deref().unwrap_or(info.kube_group);
            let namespace = reference.namespace.as_deref().unwrap_or(&self.namespace);
            // A reference reads another object's status.id: only within the tenant's own namespace.
            if namespace != self.namespace {
                return Err(Failure::permanent(
                    "InvalidReference",
                    format!(
                        "{path}: references to other namespaces ({namespace}) are not allowed; use armId, or an object in {}",
                        self.namespace
                    ),
                )
                .into());
            }
            names::check_object_name(&format!("{path}.name"), name).map_err(invalid)?;
            let Some(target) = find_served_kind(group, kind) else {
                return Err(Failure::permanent(
                    "InvalidReference",
                    format!("{path}: {kind}.{group} is not a kind this reconciler knows; use armId"),
                )
                .into());
            };
            let api: Api<DynamicObject> =
                Api::namespaced_with(self.shared().client.clone(), namespace, &api_resource(target));
            let found = api
                .get_opt(name)
                .await
                .map_err(|e| self.kube_error("reading a referenced resource", e))?;
            let id = found
                .as_ref()
                .and_then(|o| o.data.pointer("/status/id"))
                .and_then(Value::as_str);
            match id {
                Some(id) if !id.is_empty() => {
                    values.resources.insert(path.clone(), id.to_string());
                }
                _ => {
                    return Err(Failure::waiting(
                        "WaitingForReference",
                        format!("{path}: {kind} {namespace}/{name} does not exist or is not created in Azure yet"),
                    )
                    .into());
                }
            }
        }
        // Values from ConfigMaps (`<field>FromConfig`): typically another object's export, written once that object
        // is created; until then the object waits, woken when an exported ConfigMap changes (controller.rs).
        let config_maps: Api<ConfigMap> = Api::namespaced(self.shared().client.clone(), &self.namespace);
        let mut read: BTreeMap<String, Option<ConfigMap>> = BTreeMap::new();
        for (path, reference) in &refs.config_maps {
            let from = format!("{path}FromConfig");
            names::check_object_name(&format!("{from}.name"), &reference.name).map_err(invalid)?;
            names::check_secret_key(&format!("{from}.key"), &reference.key).map_err(invalid)?;
            if !read.contains_key(&reference.name) {
                let found = config_maps
                    .get_opt(&reference.name)
                    .await
                    .map_err(|e| self.kube_error("reading a ConfigMap", e))?;
                read.insert(reference.name.clone(), found);
            }
            let value = read
                .get(&reference.name)
                .and_then(Option::as_ref)
                .and_then(|cm| cm.data.as_ref())
                .and_then(|d| d.get(&reference.key))
                .filter(|v| !v.is_empty());
            match value {
                Some(v) => {
                    values.config_maps.insert(path.clone(), v.clone());
                }
                None => {
                    return Err(Failure::waiting(
                        "WaitingForReference",
                        format!(
                            "{from}: ConfigMap {}/{} has no value for key {} yet",
                            self.namespace, reference.name, reference.key
                        ),
                    )
                    .into());
                }
            }
        }
        resolve::export(info, &cr, &values).map_err(|e| Failure::permanent("InvalidSpec", e.to_string()).into())
    }

    /// The resource version this reconcile's next write is conditional on ([`Run::resource_version`]'s field).
    fn resource_version(&self) -> Option<String> {
        self.resource_version.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Notes the resource version of the object a write of this reconcile returned.
    fn wrote(&self, written: &DynamicObject) {
        if let Some(rv) = &written.metadata.resource_version {
            *self.resource_version.lock().unwrap_or_else(|e| e.into_inner()) = Some(rv.clone());
        }
    }

    async fn ensure_finalizer(&self) -> Result<(), StepError> {
        if self.object.finalizers().iter().any(|f| f == FINALIZER) {
            return Ok(());
        }
        let mut finalizers = self.object.finalizers().to_vec();
        finalizers.push(FINALIZER.to_string());
        let patch = json!({"metadata": {"finalizers": finalizers, "resourceVersion": self.resource_version()}});
        let written = self
            .api
            .patch(&self.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|e| self.kube_error("adding the finalizer", e))?;
        self.wrote(&written);
        Ok(())
    }

    async fn remove_finalizer(&self) -> Result<(), StepError> {
        let finalizers: Vec<&String> = self.object.finalizers().iter().filter(|f| *f != FINALIZER).collect();
        let patch = json!({"metadata": {"finalizers": finalizers, "resourceVersion": self.resource_version()}});
        match self
            .api
            .patch(&self.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(self.kube_error("removing the finalizer", e)),
        }
    }

    async fn delete(&mut self, policy: Policy, annotations: &BTreeMap<String, String>) -> Result<Outcome, StepError> {
        if !self.object.finalizers().iter().any(|f| f == FINALIZER) {
            return Err(StepError::Gone);
        }
        let id = self
            .object
            .data
            .pointer("/status/id")
            .and_then(Value::as_str)
            .map(str::to_string);
        if policy != Policy::Manage || id.is_none() {
            let why = match (policy, &id) {
                (Policy::Manage, _) => "never created in Azure".to_string(),
                (_, Some(id)) => format!("reconcile policy {policy:?}: {id} is left in Azure"),
                (_, None) => "never created in Azure".to_string(),
            };
            self.event(EventType::Normal, "Detached", "Delete", Some(why)).await;
            if let Some(id) = &id {
                self.release(id).await;
            }
            self.remove_finalizer().await?;
            return Err(StepError::Gone);
        }
        let id = id.unwrap_or_default();
        let scope = self.shared().arm.token_scope();
        let access = self
            .shared()
            .credentials
            .access(&self.shared().client, &self.namespace, annotations, &scope)
            .await?;
        // `status.id` is tenant-writable: DELETE only an ID this object holds the claim of, or (objects from
        // before claims) the ID its spec and owner derive, once claimed.
        if let Err(why) = self.may_delete(&id, &access).await? {
            tracing::warn!(kind = self.info().kind, namespace = %self.namespace, name = %self.name, "not deleting: {why}");
            self.event(EventType::Warning, "NotDeleted", "Delete", Some(why)).await;
            self.remove_finalizer().await?;
            return Err(StepError::Gone);
        }
        let api_version = self.info().arm.api_version;
        if let Some(pending) = self.pending().filter(|p| p.poller.verb == "DELETE") {
            match self.shared().arm.poll(&pending.poller, access.bearer.as_deref()).await {
                Ok(PollStatus::InProgress { retry_after }) => {
                    return Ok(Outcome {
                        arm: None,
                        ready: Ready::new("Unknown", "Deleting", format!("deleting {id}")),
                        action: Action::requeue(retry_after.unwrap_or(self.shared().settings.poll)),
                    });
                }
                Ok(PollStatus::Succeeded) => pending.completed(self.info().kind, &self.shared().metrics),
                Ok(PollStatus::Failed(e)) | Ok(PollStatus::Canceled(e)) => {
                    pending.completed(self.info().kind, &self.shared().metrics);
                    self.operator.pending_operation = None;
                    return Err(Failure {
                        reason: e.code.clone(),
                        message: format!("DELETE {id} failed: {}", e.message),
                        retry: Retry::Failed,
                    }
                    .into());
                }
                Err(e) if e.is_transient() => return Err(Failure::arm(&e).into()),
                Err(e) => self.drop_unpollable(&pending, &e).await,
            }
            // Confirm with a GET: 404 means gone.
            if self.get(&id, &access).await?.is_none() {
                self.event(EventType::Normal, "Deleted", "Delete", Some(format!("deleted {id}")))
                    .await;
                self.release(&id).await;
                self.remove_finalizer().await?;
                return Err(StepError::Gone);
            }
        }
        // An operation runs on the resource (a PUT of ours still in flight, or a DELETE this reconcile's cached
        // copy of the object does not know about yet): Azure refuses a DELETE meanwhile, so wait for it.
        match self.get(&id, &access).await? {
            None => {
                self.event(EventType::Normal, "Deleted", "Delete", Some(format!("deleted {id}")))
                    .await;
                self.release(&id).await;
                self.remove_finalizer().await?;
                return Err(StepError::Gone);
            }
            Some(actual) => {
                if let Some(state) = provisioning_state(&actual).filter(|s| !is_terminal(s)) {
                    return Ok(Outcome {
                        arm: None,
                        ready: Ready::new(
                            "Unknown",
                            "Deleting",
                            format!("{id} is {state}; deleting it once that operation ends"),
                        ),
                        action: Action::requeue(self.shared().settings.poll),
                    });
                }
            }
        }
        match self
            .shared()
            .arm
            .delete(&id, api_version, access.bearer.as_deref())
            .await
        {
            Ok(Started::Done(_)) => {
                self.event(EventType::Normal, "Deleted", "Delete", Some(format!("deleted {id}")))
                    .await;
                self.release(&id).await;
                self.remove_finalizer().await?;
                Err(StepError::Gone)
            }
            Ok(Started::Running {
                poller, retry_after, ..
            }) => {
                self.event(EventType::Normal, "Deleting", "Delete", Some(format!("deleting {id}")))
                    .await;
                self.operator.pending_operation = serde_json::to_string(&Pending::new(poller, None)).ok();
                Ok(Outcome {
                    arm: None,
                    ready: Ready::new("Unknown", "Deleting", format!("deleting {id}")),
                    action: Action::requeue(retry_after.unwrap_or(self.shared().settings.poll)),
                })
            }
            Err(e) => Err(Failure::arm(&e).into()),
        }
    }

    pub(crate) async fn event(&self, type_: EventType, reason: &str, action: &str, note: Option<String>) {
        let Some(recorder) = &self.shared().recorder else {
            return;
        };
        let reference = self.object.object_ref(&self.ctx.resource);
        let event = Event {
            type_,
            reason: reason.to_string(),
            note,
            action: action.to_string(),
            secondary: None,
        };
        if let Err(e) = recorder.publish(&event, &reference).await {
            tracing::debug!("publishing an event failed: {e}");
        }
    }

    /// Writes the status when it changed: the ARM part from `arm` (kept when `None`), `conditions` with `Ready`,
    /// and `operatorStatus`.
    async fn write_status(&self, arm: Option<&Value>, ready: &Ready) -> Result<(), Error> {
        let current = self.object.data.get("status").cloned().unwrap_or_else(|| json!({}));
        // Whether `status` is built from an ARM body (else it is the cached one, whose ARM part is kept).
        let mut arm_part = false;
        // The views kept without being read again whose values the cached object does not hold (crate::cache):
        // field and digest.
        let mut carried: Vec<(&str, u64)> = Vec::new();
        let mut status = match arm {
            Some(body) => {
                let info = self.info();
                match aks_api::import_custom_resource(
                    info.group,
                    info.version,
                    info.kind,
                    &body.to_string(),
                    &self.name,
                    Some(&self.namespace),
                ) {
                    Some(Ok(cr)) => {
                        arm_part = true;
                        let mut status = cr.get("status").cloned().unwrap_or_else(|| json!({}));
                        // Cluster API's status fields of the kind's contract (crate::capi).
                        if let Some(map) = status.as_object_mut() {
                            map.extend(crate::capi::status_fields(
                                info,
                                self.object,
                                body,
                                ready.status == "True",
                                &current,
                            ));
                        }
                        // The views not read in this reconcile keep their value (the body has no key for them).
                        let views = crate::views::fields(info);
                        let held = crate::cache::view_digests(self.object, &views);
                        if let Some(map) = status.as_object_mut() {
                            for field in views {
                                if body.get(field).is_some() {
                                    continue;
                                }
                                if let Some(kept) = current.get(field) {
                                    map.insert(field.to_string(), kept.clone());
                                } else if let Some(d) = held.iter().find(|(f, _)| *f == field) {
                                    carried.push(*d);
                                }
                            }
                        }
                        status
                    }
                    _ => current.clone(),
                }
            }
            None => current.clone(),
        };
        let Some(map) = status.as_object_mut() else {
            return Ok(());
        };
        let previous: Option<Condition> = current
            .get("conditions")
            .and_then(Value::as_array)
            .and_then(|c| {
                c.iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
            })
            .and_then(|c| serde_json::from_value(c.clone()).ok());
        let transition = match &previous {
            Some(p) if p.status == ready.status => p.last_transition_time.clone(),
            _ => Some(
                k8s_openapi::jiff::Timestamp::now()
                    .round(k8s_openapi::jiff::Unit::Second)
                    .map(|t| t.to_string())
                    .unwrap_or_default(),
            ),
        };
        let condition = Condition {
            type_: "Ready".into(),
            status: ready.status.into(),
            reason: Some(ready.reason.clone()),
            message: Some(ready.message.clone()),
            last_transition_time: transition,
            observed_generation: self.object.meta().generation,
        };
        // A control plane of Cluster API also reports `Available` (crate::capi::extra_conditions).
        let mut conditions = vec![serde_json::to_value(&condition).unwrap_or(Value::Null)];
        conditions.extend(crate::capi::extra_conditions(self.info(), self.object, &condition));
        map.insert("conditions".into(), Value::Array(conditions));
        if self.operator == OperatorStatus::default() {
            map.remove("operatorStatus");
        } else {
            map.insert(
                "operatorStatus".into(),
                serde_json::to_value(&self.operator).unwrap_or(Value::Null),
            );
        }
        // The cache may hold only part of the status (crate::cache): then the ARM part is compared by digest,
        // and a changed one replaces the status as a whole, as the fields it no longer holds cannot be diffed.
        let patch = match (crate::cache::cached_digest(self.object), arm_part) {
            (Some(cached), true) => {
                let entries = map.iter().map(|(k, v)| (k.as_str(), crate::cache::digest(v)));
                if crate::cache::digest_entries(entries.chain(carried.iter().copied())) == cached {
                    return Ok(());
                }
                // The views carried over: their values from the API server (only now, as the status changed).
                if !carried.is_empty() {
                    match self.api.get_status(&self.name).await {
                        Ok(now) => {
                            for (field, _) in &carried {
                                if let Some(value) = now.data.get("status").and_then(|s| s.get(*field)) {
                                    map.insert(field.to_string(), value.clone());
                                }
                            }
                        }
                        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
                        Err(source) => {
                            return Err(Error::Kube {
                                object: self.describe(),
                                action: "reading the status's views",
                                source,
                            });
                        }
                    }
                }
                // Conditional on the resource version, as the merge patch below (a JSON patch that sets it).
                let mut ops = Vec::new();
                if let Some(rv) = self.resource_version() {
                    ops.push(json_patch::PatchOperation::Add(json_patch::AddOperation {
                        path: json_patch::jsonptr::PointerBuf::from_tokens(["metadata", "resourceVersion"]),
                        value: Value::String(rv),
                    }));
                }
                ops.push(json_patch::PatchOperation::Add(json_patch::AddOperation {
                    path: json_patch::jsonptr::PointerBuf::from_tokens(["status"]),
                    value: status,
                }));
                Patch::<Value>::Json(json_patch::Patch(ops))
            }
            _ => {
                if status == current {
                    return Ok(());
                }
                let mut patch = json!({ "status": merge_diff(&current, &status) });
                if let Some(rv) = self.resource_version() {
                    patch["metadata"] = json!({ "resourceVersion": rv });
                }
                Patch::Merge(patch)
            }
        };
        match self.api.patch_status(&self.name, &PatchParams::default(), &patch).await {
            Ok(written) => {
                self.wrote(&written);
                Ok(())
            }
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(source) => Err(Error::Kube {
                object: self.describe(),
                action: "writing the status",
                source,
            }),
        }
    }
}

/// The JSON merge patch that turns `old` into `new` (removed keys become `null`).
pub fn merge_diff(old: &Value, new: &Value) -> Value {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let mut patch = serde_json::Map::new();
            for (k, v) in n {
                match o.get(k) {
                    Some(ov) if ov == v => {}
                    Some(ov) => {
                        patch.insert(k.clone(), merge_diff(ov, v));
                    }
                    None => {
                        patch.insert(k.clone(), v.clone());
                    }
                }
            }
            for k in o.keys() {
                if !n.contains_key(k) {
                    patch.insert(k.clone(), Value::Null);
                }
            }
            Value::Object(patch)
        }
        _ => new.clone(),
    }
}

/// `operatorStatus.annotations` key: when the last operation failed (RFC 3339).
/// `operatorStatus.annotations`: the generation a terminal ARM error was answered to, and when.
const TERMINAL_GENERATION: &str = "terminalGeneration";
const TERMINAL_AT: &str = "lastTerminalError";
const FAILED_AT: &str = "lastFailure";
/// `operatorStatus.annotations` key: consecutive failed operations.
const FAILED_ATTEMPTS: &str = "failedAttempts";
/// `operatorStatus.annotations` key: the generation whose operation failed (a newer one is sent at once).
const FAILED_GENERATION: &str = "failedGeneration";
/// The longest wait between PUTs of a resource Azure reports `Failed`.
pub const MAX_FAILED_BACKOFF: Duration = Duration::from_secs(3600);

/// The backoff after `attempts` consecutive failed operations: `base` doubled per failure, capped.
fn failed_backoff(base: Duration, attempts: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempts.saturating_sub(1).min(16));
    base.saturating_mul(factor).min(MAX_FAILED_BACKOFF.max(base))
}

/// `properties.provisioningState` of an ARM body.
/// Why an owner custom resource is busy (the `settled` gate), `None` when it is settled: an operation of ours in
/// flight on it, a non-terminal `provisioningState` in its status, no `Ready` condition for its current generation,
/// or a `Ready` of status `Unknown` (reconciling).
pub fn owner_busy(owner: &DynamicObject) -> Option<String> {
    let status = owner.data.get("status");
    if status
        .and_then(|s| s.pointer("/operatorStatus/pendingOperation"))
        .is_some_and(|p| !p.is_null())
    {
        return Some("has an operation in flight".into());
    }
    if let Some(state) = status.and_then(|s| s.get("provisioningState")).and_then(Value::as_str)
        && !is_terminal(state)
    {
        return Some(format!("is {state} in Azure"));
    }
    let ready = status
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"));
    let Some(ready) = ready else {
        return Some("has not been reconciled yet".into());
    };
    if ready.get("observedGeneration").and_then(Value::as_i64) != owner.metadata.generation {
        return Some("has a spec change that is not applied yet".into());
    }
    if ready["status"] == "Unknown" {
        return Some(format!(
            "is reconciling ({})",
            ready["reason"].as_str().unwrap_or("Unknown")
        ));
    }
    None
}

pub fn provisioning_state(body: &Value) -> Option<&str> {
    body.pointer("/properties/provisioningState").and_then(Value::as_str)
}

/// Whether a provisioning state is terminal (`Succeeded`, `Failed`, `Canceled`); AKS's others (`Creating`,
/// `Updating`, `Upgrading`, `Scaling`, `Deleting`, `Starting`, `Stopping`, …) are not.
pub fn is_terminal(state: &str) -> bool {
    ["succeeded", "failed", "canceled", "cancelled"].contains(&state.to_ascii_lowercase().as_str())
}

/// The ID of a subscription-scoped resource from its path template: `{subscriptionId}` is the credential's
/// subscription, the last parameter the name; any other parameter is an error (no such kind is generated).
fn subscription_scoped_id(info: &KindInfo, subscription: &str, name: &str) -> Result<String, String> {
    let segments: Vec<&str> = info.arm.path.trim_start_matches('/').split('/').collect();
    let last = segments.len().saturating_sub(1);
    let mut out = String::new();
    for (i, segment) in segments.iter().enumerate() {
        out.push('/');
        if !segment.starts_with('{') {
            // ARM's usual casing for the one literal that specs write in lowercase (`resourcegroups`).
            out.push_str(if segment.eq_ignore_ascii_case("resourcegroups") {
                "resourceGroups"
            } else {
                segment
            });
        } else if i == last {
            out.push_str(name);
        } else if segment.eq_ignore_ascii_case("{subscriptionId}") {
            out.push_str(subscription);
        } else {
            return Err(format!(
                "{} path {} has a parameter {segment} the reconciler cannot fill",
                info.kind, info.arm.path
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_annotation() {
        let mut a = BTreeMap::new();
        assert_eq!(Policy::of(&a), Ok(Policy::Manage));
        a.insert(POLICY_ANNOTATION.to_string(), "skip".to_string());
        assert_eq!(Policy::of(&a), Ok(Policy::Skip));
        a.insert(POLICY_ANNOTATION.to_string(), "detach-on-delete".to_string());
        assert_eq!(Policy::of(&a), Ok(Policy::DetachOnDelete));
        a.insert(POLICY_ANNOTATION.to_string(), "Skip!".to_string());
        let e = Policy::of(&a).unwrap_err();
        assert_eq!(e.reason, "InvalidReconcilePolicy");
        assert!(e.message.contains("\"Skip!\""), "{}", e.message);
    }

    #[test]
    fn merge_diff_nulls_removed_keys() {
        let old = json!({"a": 1, "b": {"c": 2, "d": 3}, "e": [1]});
        let new = json!({"a": 1, "b": {"c": 2}, "e": [1, 2], "f": true});
        assert_eq!(
            merge_diff(&old, &new),
            json!({"b": {"d": null}, "e": [1, 2], "f": true})
        );
    }

    #[test]
    fn pending_operations_measure_from_their_recorded_start() {
        let poller = Poller {
            result_url: None,
            verb: "PUT".into(),
            resource_id: "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c"
                .into(),
            api_version: "2025-10-01".into(),
            url: "https://management.azure.com/operations/1".into(),
            via: crate::arm::PollVia::AsyncOperation,
        };
        let fresh = Pending::new(poller.clone(), None);
        let stored: Pending = serde_json::from_str(&serde_json::to_string(&fresh).unwrap()).unwrap();
        assert_eq!(stored, fresh, "the start time survives the status");
        let started = k8s_openapi::jiff::Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_secs(90);
        let metrics = Metrics::new();
        let mut pending = Pending::new(poller.clone(), None);
        pending.started = Some(started.to_string());
        pending.completed("ManagedCluster", &metrics);
        // A record without a start time (an older version's) is not observed.
        let old: Pending = serde_json::from_value(serde_json::to_value(&poller).unwrap()).unwrap();
        assert_eq!(old.started, None);
        old.completed("ManagedCluster", &metrics);
        let text = metrics.encode().unwrap();
        let line = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.rsplit_once(' '))
                .and_then(|(_, v)| v.parse::<f64>().ok())
        };
        assert_eq!(
            line("aks_reconciler_arm_operation_duration_seconds_count"),
            Some(1.0),
            "{text}"
        );
        let sum = line("aks_reconciler_arm_operation_duration_seconds_sum").unwrap();
        assert!((90.0..100.0).contains(&sum), "{sum}");
    }

    #[test]
    fn terminal_states() {
        assert!(is_terminal("Succeeded") && is_terminal("failed") && is_terminal("Canceled"));
        assert!(!is_terminal("Updating") && !is_terminal("Creating") && !is_terminal("Upgrading"));
    }

    #[test]
    fn every_owner_kind_is_a_kind() {
        for k in aks_api::KINDS {
            if let Some(owner) = k.owner_kind {
                assert!(
                    find_kind(k.kube_group, k.version, owner).is_some(),
                    "{}: owner {owner}",
                    k.kind
                );
            }
        }
    }
}
