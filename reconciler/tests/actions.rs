//! Action kinds (reconciler/src/actions.rs) against the ARM simulator: each runs once, survives a restart
//! mid-operation without a second POST, records its outcome, and waits for a busy target. Kinds come from the
//! registry (`aks_api::ACTIONS`); the scenarios name the AKS actions the issue asks about (stop, start,
//! runCommand) by their ARM action name, looked up there.

mod common;

use aks_reconciler::actions::served_actions;
use armgen_runtime::ActionInfo;
use common::*;
use serde_json::{Value, json};

/// The served action kind of the ARM action `action` on target kind `target`.
fn action_kind(target: &str, action: &str) -> &'static ActionInfo {
    let served = served_actions(&[]);
    aks_api::ACTIONS
        .iter()
        .find(|a| {
            a.kind.owner_kind == Some(target)
                && a.action == action
                && served
                    .iter()
                    .any(|k| k.kube_group == a.kind.kube_group && k.version == a.kind.version && k.kind == a.kind.kind)
        })
        .unwrap_or_else(|| panic!("no served action kind for {target} {action}"))
}

/// A cluster created and Ready in the simulator; its ARM ID.
async fn ready_cluster(h: &Harness, name: &str) -> String {
    h.apply("ResourceGroup", RG, json!({"location": "westeurope"})).await;
    h.converge("ResourceGroup", RG).await;
    h.apply("ManagedCluster", name, cluster_spec()).await;
    let (status, reason, message) = {
        h.converge("ManagedCluster", name).await;
        h.ready("ManagedCluster", name).await
    };
    assert_eq!(status, "True", "{reason}: {message}");
    cluster_id(name)
}

/// `Succeeded`'s status and reason.
async fn succeeded(h: &Harness, kind: &str, name: &str) -> (String, String, String) {
    let object = h.object(kind, name).await.expect("the action object exists");
    let c = object
        .data
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| c["type"] == "Succeeded"))
        .cloned()
        .unwrap_or(Value::Null);
    let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    (s("status"), s("reason"), s("message"))
}

/// Reconciles the action until `Succeeded` is no longer `Unknown`; the steps taken.
async fn run_to_end(h: &Harness, kind: &str, name: &str) -> usize {
    for step in 1..=20 {
        h.reconcile(kind, name).await;
        if succeeded(h, kind, name).await.0 != "Unknown" && !succeeded(h, kind, name).await.0.is_empty() {
            return step;
        }
    }
    panic!("{kind} {name} did not end: {:?}", succeeded(h, kind, name).await);
}

fn power_state(h: &Harness, id: &str) -> String {
    h.sim
        .resource(id)
        .and_then(|r| {
            r.pointer("/properties/powerState/code")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn stop_then_start_change_the_power_state_with_one_post_each() {
    let h = Harness::new().await;
    let id = ready_cluster(&h, "prod").await;
    for (action, state) in [("stop", "Stopped"), ("start", "Running")] {
        let kind = action_kind("ManagedCluster", action).kind.kind;
        let name = format!("prod-{action}");
        h.clear_traffic();
        h.apply(kind, &name, json!({"owner": {"name": "prod"}})).await;
        run_to_end(&h, kind, &name).await;
        let (status, reason, message) = succeeded(&h, kind, &name).await;
        assert_eq!((status.as_str(), reason.as_str()), ("True", "Succeeded"), "{message}");
        assert_eq!(h.sim.count("POST"), 1, "{action}: exactly one POST");
        assert_eq!(power_state(&h, &id), state);
        let object = h.object(kind, &name).await.expect("exists");
        assert_eq!(
            object.data.pointer("/status/operatorStatus"),
            None,
            "{action}: no operation or sent mark left behind"
        );
        for field in ["startTime", "endTime"] {
            assert!(
                object
                    .data
                    .pointer(&format!("/status/{field}"))
                    .is_some_and(Value::is_string),
                "{action}: status.{field}: {:?}",
                object.data.get("status")
            );
        }
        // Run once: more reconciles (a resync, a restart) send nothing.
        h.clear_traffic();
        for _ in 0..3 {
            h.reconcile(kind, &name).await;
        }
        assert_eq!(h.sim.count("POST"), 0, "{action} ran again");
        assert_eq!(h.sim.count("GET"), 0, "an ended action reads nothing from Azure");
    }
}

#[tokio::test]
async fn a_restart_mid_operation_resumes_polling_without_a_second_post() {
    let mut h = Harness::new().await;
    ready_cluster(&h, "prod").await;
    let kind = action_kind("ManagedCluster", "stop").kind.kind;
    assert!(action_kind("ManagedCluster", "stop").long_running);
    h.clear_traffic();
    h.apply(kind, "night", json!({"owner": {"name": "prod"}})).await;
    h.reconcile(kind, "night").await;
    assert_eq!(h.sim.count("POST"), 1);
    assert_eq!(succeeded(&h, kind, "night").await.0, "Unknown", "the operation runs");
    h.restart();
    run_to_end(&h, kind, "night").await;
    assert_eq!(succeeded(&h, kind, "night").await.0, "True");
    assert_eq!(h.sim.count("POST"), 1, "no second POST after the restart");
}

#[tokio::test]
async fn run_command_records_its_typed_result_and_deleting_the_object_undoes_nothing() {
    let h = Harness::new().await;
    let id = ready_cluster(&h, "prod").await;
    let kind = action_kind("ManagedCluster", "runCommand").kind.kind;
    h.apply(
        kind,
        "pods",
        json!({"owner": {"name": "prod"}, "command": "kubectl get pods"}),
    )
    .await;
    run_to_end(&h, kind, "pods").await;
    let (status, _, message) = succeeded(&h, kind, "pods").await;
    assert_eq!(status, "True", "{message}");
    let object = h.object(kind, "pods").await.expect("exists");
    let result = object.data.pointer("/status/result").cloned().unwrap_or(Value::Null);
    assert_eq!(
        result.pointer("/properties/exitCode"),
        Some(&json!(0)),
        "{result} in {:?}",
        object.data.get("status")
    );
    assert!(
        result.pointer("/properties/logs").is_some_and(Value::is_string),
        "{result}"
    );

    h.clear_traffic();
    let before = h.sim.resource(&id);
    h.delete(kind, "pods").await;
    assert!(
        h.object(kind, "pods").await.is_none(),
        "no finalizer holds an action object"
    );
    h.reconcile(kind, "pods").await;
    assert_eq!(h.sim.count("POST") + h.sim.count("DELETE") + h.sim.count("PUT"), 0);
    assert_eq!(h.sim.resource(&id), before);
}

#[tokio::test]
async fn a_failed_operation_is_succeeded_false_with_arms_code_and_is_not_retried() {
    let h = Harness::new().await;
    ready_cluster(&h, "prod").await;
    let kind = action_kind("ManagedCluster", "rotateClusterCertificates").kind.kind;
    h.sim.inject(
        arm_simulator::FaultRule::new(arm_simulator::Fault::FailOperation {
            code: "CertificateRotationFailed".into(),
            message: "the rotation failed".into(),
        })
        .method("POST"),
    );
    h.clear_traffic();
    h.apply(kind, "rotate", json!({"owner": {"name": "prod"}})).await;
    run_to_end(&h, kind, "rotate").await;
    let (status, reason, _) = succeeded(&h, kind, "rotate").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "CertificateRotationFailed")
    );
    let object = h.object(kind, "rotate").await.expect("exists");
    assert_eq!(
        object.data.pointer("/status/error/code"),
        Some(&json!("CertificateRotationFailed"))
    );
    assert_eq!(h.ready(kind, "rotate").await.0, "False");
    for _ in 0..3 {
        h.reconcile(kind, "rotate").await;
    }
    assert_eq!(h.sim.count("POST"), 1, "a failed action is not run again");
}

#[tokio::test]
async fn an_action_waits_for_a_busy_target_and_for_a_target_that_does_not_exist() {
    let h = Harness::new().await;
    let kind = action_kind("ManagedCluster", "stop").kind.kind;
    h.apply(kind, "early", json!({"owner": {"name": "prod"}})).await;
    h.reconcile(kind, "early").await;
    assert_eq!(succeeded(&h, kind, "early").await.1, "WaitingForOwner");
    ready_cluster(&h, "prod").await;
    // The cluster is busy: an operation in flight.
    h.patch_spec("ManagedCluster", "prod", json!({"kubernetesVersion": "1.32"}))
        .await;
    h.reconcile("ManagedCluster", "prod").await;
    h.clear_traffic();
    h.reconcile(kind, "early").await;
    assert_eq!(succeeded(&h, kind, "early").await.1, "WaitingForOwner");
    assert_eq!(h.sim.count("POST"), 0, "nothing is sent to a busy cluster");
    h.converge("ManagedCluster", "prod").await;
    run_to_end(&h, kind, "early").await;
    assert_eq!(succeeded(&h, kind, "early").await.0, "True");
    assert_eq!(h.sim.count("POST"), 1);
}

#[tokio::test]
async fn every_served_action_kind_runs_against_its_target() {
    // Every action of ManagedCluster without parameters (from the registry), run once each on a fresh cluster.
    for info in served_actions(&[]) {
        let Some(action) = aks_api::ACTIONS.iter().find(|a| {
            a.kind.kube_group == info.kube_group && a.kind.version == info.version && a.kind.kind == info.kind
        }) else {
            continue;
        };
        if action.kind.owner_kind != Some("ManagedCluster") || action.body {
            continue;
        }
        let h = Harness::new().await;
        ready_cluster(&h, "c").await;
        h.apply(info.kind, "a", json!({"owner": {"name": "c"}})).await;
        run_to_end(&h, info.kind, "a").await;
        let (status, reason, message) = succeeded(&h, info.kind, "a").await;
        assert_eq!(status, "True", "{}: {reason}: {message}", info.kind);
    }
}

#[tokio::test]
async fn a_post_sent_without_a_recorded_answer_is_never_sent_again() {
    let h = Harness::new().await;
    ready_cluster(&h, "prod").await;
    let kind = action_kind("ManagedCluster", "stop").kind.kind;
    h.apply(kind, "lost", json!({"owner": {"name": "prod"}})).await;
    // The reconciler stopped after writing the sent mark, before recording ARM's answer.
    let api = h.api_in(kind, NS);
    api.patch_status(
        "lost",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"status": {"operatorStatus": {"annotations": {
            aks_reconciler::actions::SENT: "2026-12-01T00:00:00Z"
        }}}})),
    )
    .await
    .expect("status");
    h.clear_traffic();
    run_to_end(&h, kind, "lost").await;
    let (status, reason, message) = succeeded(&h, kind, "lost").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "OutcomeUnknown"),
        "{message}"
    );
    assert_eq!(h.sim.count("POST"), 0, "at most once");
}
