//! Action kinds ([`aks_api::ACTIONS`]): a custom resource that runs one ARM POST action (`stop`, `runCommand`,
//! `upgradeNodeImageVersion`, …) on the resource its `spec.owner.name` names, **once**, and records the outcome.
//!
//! Why one kind per action (`ManagedClusterStop`, `ManagedClusterRunCommand`, …) rather than one generic action
//! kind per resource kind: Kubernetes RBAC grants per resource type, so a role that may create
//! `managedclusterrotateclustercertificates` can rotate certificates and nothing else — it neither edits the
//! cluster nor runs commands on it. A generic `ManagedClusterAction` with the action as a field would let anyone
//! allowed to stop a cluster also run `runCommand` on it.
//!
//! Per object, in order:
//!
//! 1. Ended (`Succeeded` is `True` or `False`): nothing, ever again — not on resync, not after a restart; deleting
//!    the object neither runs nor undoes anything (action objects carry no finalizer).
//! 2. A long-running operation recorded in `status.operatorStatus.pendingOperation` is polled (after a restart
//!    too, so the POST is never sent twice); when it succeeds, the result is read from the operation's `Location`
//!    ([`ArmClient::action_result`](crate::arm::ArmClient::action_result)) into `status.result`.
//! 3. A POST recorded as sent (`operatorStatus.annotations["armgen.dev/action-sent"]`) without an operation to
//!    poll: the reconciler stopped between sending it and recording its answer, or the connection dropped after
//!    sending. Whether Azure received it is unknown, so it is not sent again (at most once): `Succeeded=False`,
//!    reason `OutcomeUnknown`. Create a new object to run the action again.
//! 4. The target: the owner custom resource in the same namespace, once it is created in Azure and holds the
//!    claim of its ID (`WaitingForOwner` until then) — so a tenant acts only on the resources its objects manage.
//!    The rules' `ownerGate` (`azure-arm.yaml`: `kubernetes.resources.<Kind>.actions.ownerGate`) makes an action
//!    wait while its target is busy, woken by the target's change.
//! 5. The request body from the spec (`parameters`, secrets resolved from their Secrets), the `startTime` and the
//!    sent mark written, then `POST <target ID>/<action>` — retried by the client only when ARM says the request
//!    was not processed (429, 503). ARM errors are classified as for PUTs: retryable ones (409 while the target
//!    is busy, 5xx) are retried later; terminal ones (400) end the action with `Succeeded=False` and ARM's code.
//! 6. The outcome in status: `Succeeded` and `Ready` (`True` on success, `False` with ARM's code on failure,
//!    `Unknown` while it runs), `startTime`, `endTime`, `error` (ARM's code and message), `result` (the typed
//!    response body, converted by the generated types: secrets never reach the status).

use std::sync::Arc;

use armgen_runtime::ActionInfo;
use armgen_runtime::kube::{Condition, OperatorStatus};
use armgen_runtime::rules::ErrorClass;
use kube::ResourceExt;
use kube::api::{DynamicObject, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use serde_json::{Value, json};

use crate::arm::{ArmError, ArmErrorBody, PollStatus, Started};
use crate::context::{Error, Failure, KindContext, Policy, Retry};
use crate::metrics::ReconcileResult;
use crate::reconcile::{Run, StepError, failure_action, owner_busy};

/// The operator annotation recording that the POST was sent (RFC 3339 time).
pub const SENT: &str = "armgen.dev/action-sent";

/// The action kind of `ctx`, if it is one.
pub fn action_of(ctx: &KindContext) -> Option<&'static ActionInfo> {
    let info = ctx.info;
    aks_api::ACTIONS
        .iter()
        .find(|a| a.kind.kube_group == info.kube_group && a.kind.version == info.version && a.kind.kind == info.kind)
}

/// The served action kinds: per action kind, its storage version (else the newest served version that has it);
/// `overrides` (`group=version` pairs) picks the version per API group, as [`crate::controller::served_kinds`]
/// does for resources.
pub fn served_actions(overrides: &[(String, String)]) -> Vec<&'static armgen_runtime::KindInfo> {
    let infos = || aks_api::ACTIONS.iter().map(|a| &a.kind);
    let mut out: Vec<&'static armgen_runtime::KindInfo> = Vec::new();
    for info in infos() {
        let same = |o: &armgen_runtime::KindInfo| o.kube_group == info.kube_group && o.kind == info.kind;
        let wanted = match overrides.iter().find(|(g, _)| g == info.kube_group || g == info.group) {
            Some((_, v)) => info.version == v,
            None => {
                info.storage
                    || (!infos().any(|o| o.storage && same(o))
                        && infos()
                            .filter(|o| o.served && same(o))
                            .max_by(|a, b| a.arm.api_version.cmp(b.arm.api_version))
                            .is_some_and(|n| n.version == info.version))
            }
        };
        if wanted && info.served && !out.iter().any(|o| same(o)) {
            out.push(info);
        }
    }
    out
}

/// Reconciles one action object (see the module docs). Counts the result in [`crate::metrics`].
pub async fn reconcile(object: Arc<DynamicObject>, ctx: Arc<KindContext>) -> Result<Action, Error> {
    let Some(action) = action_of(&ctx) else {
        return Err(Error::Unaddressable(format!("{} is not an action kind", ctx.info.kind)));
    };
    let metrics = &ctx.shared.metrics;
    let kind = ctx.info.kind;
    let key = format!("{}/{}", object.namespace().unwrap_or_default(), object.name_any());
    metrics.reconcile_started(kind, &key);
    let object = crate::cache::whole(&object);
    let result = run(&object, &ctx, action).await;
    match &result {
        Ok((action, ended)) => {
            let result = if *ended {
                ReconcileResult::Ready
            } else {
                ReconcileResult::NotReady
            };
            metrics.reconcile_finished(kind, &key, result, *action != Action::await_change());
        }
        Err(_) => metrics.reconcile_finished(kind, &key, ReconcileResult::Error, true),
    }
    result.map(|(action, _)| action)
}

/// What one step found: the status to merge, and when to look again.
struct Step {
    /// `Succeeded`'s status (`True`, `False`, `Unknown`), reason and message.
    succeeded: (&'static str, String, String),
    /// More of the status to merge (`startTime`, `endTime`, `error`, `result`).
    status: serde_json::Map<String, Value>,
    action: Action,
}

impl Step {
    fn running(reason: &str, message: impl Into<String>, action: Action) -> Self {
        Step {
            succeeded: ("Unknown", reason.to_string(), message.into()),
            status: serde_json::Map::new(),
            action,
        }
    }

    fn ended(ok: bool, reason: &str, message: impl Into<String>) -> Self {
        let mut status = serde_json::Map::new();
        status.insert("endTime".into(), json!(now()));
        Step {
            succeeded: (if ok { "True" } else { "False" }, reason.to_string(), message.into()),
            status,
            action: Action::await_change(),
        }
    }

    fn failed(error: &ArmErrorBody, message: impl Into<String>) -> Self {
        let mut step = Step::ended(false, &error.code, message);
        step.status
            .insert("error".into(), json!({"code": error.code, "message": error.message}));
        step
    }
}

/// The step, then the status write; the action and whether the action ended.
async fn run(object: &DynamicObject, ctx: &KindContext, action: &'static ActionInfo) -> Result<(Action, bool), Error> {
    let mut run = Run::new(object, ctx)?;
    let backoff_key = format!(
        "{}/{}",
        ctx.info.kind,
        object.metadata.uid.as_deref().unwrap_or_default()
    );
    if let Some(ended) = ended(object) {
        return Ok((Action::await_change(), ended));
    }
    // The status as last written (the sent mark is written before the POST).
    let mut current = object.data.get("status").cloned().unwrap_or_else(|| json!({}));
    let step = match step(&mut run, object, action, &mut current).await {
        Ok(step) => step,
        Err(StepError::Failure(mut f)) => {
            let next = failure_action(&mut f, &ctx.shared.settings, &backoff_key);
            tracing::info!(kind = ctx.info.kind, namespace = %run.namespace, name = %run.name, reason = %f.reason, "not run: {}", f.message);
            Step::running(&f.reason, f.message, next)
        }
        Err(StepError::Kube(e)) => return Err(e),
        Err(StepError::Gone) => return Ok((Action::await_change(), true)),
    };
    let ended = step.succeeded.0 != "Unknown";
    if ended {
        ctx.shared.settings.backoff.succeeded(&backoff_key);
    }
    write_status(&run, object, &mut current, &step).await?;
    Ok((step.action, ended))
}

/// `Some(succeeded)` when the action already ended (its `Succeeded` condition is `True` or `False`).
fn ended(object: &DynamicObject) -> Option<bool> {
    let conditions = object.data.pointer("/status/conditions")?.as_array()?;
    let succeeded = conditions
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Succeeded"))?;
    match succeeded.get("status").and_then(Value::as_str) {
        Some("True") => Some(true),
        Some("False") => Some(false),
        _ => None,
    }
}

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .round(k8s_openapi::jiff::Unit::Second)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

async fn step(
    run: &mut Run<'_>,
    object: &DynamicObject,
    action: &'static ActionInfo,
    current: &mut Value,
) -> Result<Step, StepError> {
    let annotations = object.annotations().clone();
    if object.metadata.deletion_timestamp.is_some() {
        return Err(StepError::Gone);
    }
    if Policy::of(&annotations)? == Policy::Skip {
        return Ok(Step::running(
            "Skipped",
            "reconcile policy skip: the action is not run",
            Action::await_change(),
        ));
    }
    let scope = run.shared().arm.token_scope();
    let access = run
        .shared()
        .credentials
        .access(&run.shared().client, &run.namespace, &annotations, &scope)
        .await?;
    let bearer = access.bearer.as_deref();

    if let Some(pending) = run.pending() {
        return poll(run, action, &pending.poller, bearer).await;
    }
    if let Some(sent) = run.operator.annotations.get(SENT) {
        return Ok(Step::ended(
            false,
            "OutcomeUnknown",
            format!(
                "the POST was sent at {sent}, but its answer was never recorded (the reconciler stopped, or the \
                 connection dropped): whether Azure ran the action is unknown, so it is not sent again; create a \
                 new object to run it again"
            ),
        ));
    }

    let target_kind = action.kind.owner_kind.unwrap_or_default();
    let target_info = crate::kinds::find_served_kind(action.kind.kube_group, target_kind).ok_or_else(|| {
        Failure::permanent(
            "UnsupportedKind",
            format!("no served kind {target_kind} in {}", action.kind.kube_group),
        )
    })?;
    let target_name = object
        .data
        .pointer("/spec/owner/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| Failure::permanent("InvalidSpec", "spec.owner.name is required: the object to act on"))?;
    let (id, target) = run.owner_id(target_info, target_name).await?;
    if let Some(gate) = run.kind_rules().and_then(|r| r.owner_gate.as_ref())
        && gate.settled
        && let Some(why) = owner_busy(&target)
    {
        return Err(Failure {
            reason: "WaitingForOwner".into(),
            message: format!(
                "the target {target_kind} {}/{target_name} {why}; the action runs once it settles",
                run.namespace
            ),
            retry: Retry::OwnerChange,
        }
        .into());
    }
    let resolved = run.resolve(run.custom_resource()).await?;
    let body = if action.body {
        Some(resolved.body.get("parameters").cloned().unwrap_or_else(|| json!({})))
    } else {
        None
    };

    // At most once: the mark goes to the API server before the request goes to Azure.
    let started = now();
    run.operator.annotations.insert(SENT.into(), started.clone());
    let mut mark = Step::running(
        "Running",
        format!("POST {id}/{} sent", action.action),
        Action::await_change(),
    );
    mark.status.insert("startTime".into(), json!(started));
    write_status(run, object, current, &mark)
        .await
        .map_err(StepError::Kube)?;

    tracing::info!(kind = action.kind.kind, namespace = %run.namespace, name = %run.name, "POST {id}/{}", action.action);
    let answer = run
        .shared()
        .arm
        .action(&id, action.action, action.kind.arm.api_version, body.as_ref(), bearer)
        .await;
    let mut step = match answer {
        Ok(Started::Done(result)) => {
            run.operator.annotations.remove(SENT);
            run.event(
                EventType::Normal,
                "Succeeded",
                action.action,
                Some(format!("POST {id}/{}", action.action)),
            )
            .await;
            succeeded(run, action, result.as_ref())
        }
        Ok(Started::Running {
            poller,
            retry_after,
            body: _,
        }) => {
            run.operator.annotations.remove(SENT);
            run.operator.pending_operation = serde_json::to_string(&crate::reconcile::Pending::new(poller, None)).ok();
            run.event(
                EventType::Normal,
                "Started",
                action.action,
                Some(format!("POST {id}/{}", action.action)),
            )
            .await;
            Step::running(
                "Running",
                format!("POST {id}/{} accepted; operation in progress", action.action),
                Action::requeue(retry_after.unwrap_or(run.shared().settings.poll)),
            )
        }
        Err(e) => refused(run, action, &id, &e).await,
    };
    step.status.insert("startTime".into(), json!(started));
    Ok(step)
}

/// An answer that is not a success: a retryable ARM error is retried later (the request was not processed: the
/// sent mark goes), a terminal one ends the action, a dropped connection leaves the outcome unknown.
async fn refused(run: &mut Run<'_>, action: &ActionInfo, id: &str, e: &ArmError) -> Step {
    run.event(EventType::Warning, e.code(), action.action, Some(e.to_string()))
        .await;
    match e {
        ArmError::Transport { .. } | ArmError::Protocol { .. } => Step::ended(
            false,
            "OutcomeUnknown",
            format!(
                "POST {id}/{}: {e}; whether Azure ran the action is unknown, so it is not sent again; create a new \
                 object to run it again",
                action.action
            ),
        ),
        ArmError::Api { status, error, .. } => {
            // As for PUTs (`kubernetes.errors`), but an unclassified 4xx other than 409 and 429 ends the action too:
            // the same request fails the same way, and an action is not retried on a spec change.
            let class = run.errors().classify(Some(*status), &error.code);
            let client = (400..500).contains(status) && !matches!(*status, 409 | 429);
            if class == ErrorClass::Terminal || (client && class == ErrorClass::Unclassified) {
                Step::failed(error, format!("POST {id}/{} failed: {}", action.action, error.message))
            } else {
                run.operator.annotations.remove(SENT);
                let mut f = Failure::classified(e, run.errors());
                let next = failure_action(&mut f, &run.shared().settings, &format!("{id}/{}", action.action));
                Step::running(&f.reason, f.message, next)
            }
        }
        _ => {
            run.operator.annotations.remove(SENT);
            let mut f = Failure::classified(e, run.errors());
            let next = failure_action(&mut f, &run.shared().settings, &format!("{id}/{}", action.action));
            Step::running(&f.reason, f.message, next)
        }
    }
}

/// Polls the recorded operation once.
async fn poll(
    run: &mut Run<'_>,
    action: &'static ActionInfo,
    poller: &crate::arm::Poller,
    bearer: Option<&str>,
) -> Result<Step, StepError> {
    let id = poller.resource_id.clone();
    match run.shared().arm.poll(poller, bearer).await {
        Ok(PollStatus::InProgress { retry_after }) => Ok(Step::running(
            "Running",
            format!("POST {id}/{}: operation in progress", action.action),
            Action::requeue(retry_after.unwrap_or(run.shared().settings.poll)),
        )),
        Ok(PollStatus::Succeeded) => {
            let result = if action.result {
                match run.shared().arm.action_result(poller, bearer).await {
                    Ok(result) => result,
                    Err(e) if e.is_transient() => return Err(Failure::arm(&e).into()),
                    Err(e) => {
                        run.operator.pending_operation = None;
                        return Ok(Step::ended(
                            false,
                            "ResultUnreadable",
                            format!(
                                "POST {id}/{} succeeded, but its result could not be read: {e}",
                                action.action
                            ),
                        ));
                    }
                }
            } else {
                None
            };
            run.operator.pending_operation = None;
            run.event(
                EventType::Normal,
                "Succeeded",
                action.action,
                Some(format!("POST {id}/{}", action.action)),
            )
            .await;
            Ok(succeeded(run, action, result.as_ref()))
        }
        Ok(PollStatus::Failed(e)) | Ok(PollStatus::Canceled(e)) => {
            run.operator.pending_operation = None;
            run.event(EventType::Warning, &e.code, action.action, Some(e.message.clone()))
                .await;
            Ok(Step::failed(
                &e,
                format!("POST {id}/{} failed: {}", action.action, e.message),
            ))
        }
        Err(e) if e.is_transient() => Err(Failure::arm(&e).into()),
        Err(e) => {
            run.operator.pending_operation = None;
            Ok(Step::ended(
                false,
                "OutcomeUnknown",
                format!("POST {id}/{}: its operation cannot be polled: {e}", action.action),
            ))
        }
    }
}

/// The success step, with the response `result` converted into `status.result` by the generated types.
fn succeeded(run: &Run<'_>, action: &ActionInfo, result: Option<&Value>) -> Step {
    let mut step = Step::ended(true, "Succeeded", format!("{} succeeded", action.action));
    let Some(result) = result.filter(|_| action.result) else {
        return step;
    };
    let info = run.info();
    let wrapped = json!({ "result": result }).to_string();
    match aks_api::import_custom_resource(
        info.group,
        info.version,
        info.kind,
        &wrapped,
        &run.name,
        Some(&run.namespace),
    ) {
        Some(Ok(cr)) => {
            if let Some(result) = cr.pointer("/status/result") {
                step.status.insert("result".into(), result.clone());
            }
        }
        Some(Err(e)) => {
            step.succeeded.2 = format!(
                "{} succeeded; its result is not a {} result: {e}",
                action.action, info.kind
            );
        }
        None => {}
    }
    step
}

/// Merges the step into the status (`current`, the status as last written, follows): `Succeeded` and `Ready`
/// (same status), the step's fields, `operatorStatus`.
async fn write_status(run: &Run<'_>, object: &DynamicObject, current: &mut Value, step: &Step) -> Result<(), Error> {
    let (status, reason, message) = &step.succeeded;
    let previous = |type_: &str| -> Option<Condition> {
        current
            .get("conditions")
            .and_then(Value::as_array)?
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
            .and_then(|c| serde_json::from_value(c.clone()).ok())
    };
    let condition = |type_: &str| {
        let transition = match previous(type_) {
            Some(p) if p.status == *status => p.last_transition_time,
            _ => Some(now()),
        };
        Condition {
            type_: type_.into(),
            status: (*status).into(),
            reason: Some(reason.clone()),
            message: Some(message.clone()),
            last_transition_time: transition,
            observed_generation: object.metadata.generation,
        }
    };
    let mut patch = step.status.clone();
    patch.insert("conditions".into(), json!([condition("Succeeded"), condition("Ready")]));
    // A merge patch keeps the keys it does not name: `operatorStatus` as the difference from what is there, so a
    // removed annotation or operation is removed.
    let operator = if run.operator == OperatorStatus::default() {
        Value::Null
    } else {
        let new = serde_json::to_value(&run.operator).unwrap_or(Value::Null);
        match current.get("operatorStatus") {
            Some(old) if old.is_object() => crate::reconcile::merge_diff(old, &new),
            _ => new,
        }
    };
    patch.insert("operatorStatus".into(), operator);
    let unchanged = patch.iter().all(|(k, v)| match (k.as_str(), v) {
        ("operatorStatus", Value::Object(diff)) => diff.is_empty(),
        (_, v) => current.get(k) == Some(v) || (v.is_null() && current.get(k).is_none()),
    });
    if unchanged {
        return Ok(());
    }
    let patch = Value::Object(patch);
    merge(current, &patch);
    let patch = Patch::Merge(json!({ "status": patch }));
    match run.api.patch_status(&run.name, &PatchParams::default(), &patch).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(source) => Err(Error::Kube {
            object: run.describe(),
            action: "writing the status",
            source,
        }),
    }
}

/// Applies a JSON merge patch (RFC 7386) to `target`.
fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    if let Value::Object(map) = target {
        for (k, v) in patch {
            if v.is_null() {
                map.remove(k);
            } else {
                merge(map.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_patches_follow_rfc_7386() {
        let mut v = json!({"a": 1, "o": {"x": 1, "y": 2}, "keep": true});
        merge(&mut v, &json!({"a": null, "o": {"x": null, "z": [1]}, "n": "new"}));
        assert_eq!(v, json!({"o": {"y": 2, "z": [1]}, "keep": true, "n": "new"}));
    }
}
