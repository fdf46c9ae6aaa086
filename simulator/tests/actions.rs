//! The ARM actions of the registry (`aks_api::ACTIONS`: `POST <resource ID>/<action>`) through the simulator: every
//! one on a target created over HTTP, and the behaviours of `arm_simulator`'s action table.

mod common;

use armgen_runtime::ActionInfo;
use common::*;
use serde_json::{Value, json};

/// The ID of a target of `info` named after `tag`, its parents seeded.
fn target_id(env: &Env, info: &ActionInfo, tag: &str) -> String {
    let arm = &info.kind.arm;
    let last = arm.path.rsplit('/').next().unwrap_or_default().to_string();
    let id = fill(arm.path, |p| match p {
        "subscriptionId" => SUB.to_string(),
        "resourceGroupName" => "actions".to_string(),
        "scope" => format!("subscriptions/{SUB}/resourceGroups/actions"),
        // Names every type's pattern allows (an agent pool's is `^[a-z][a-z0-9]{0,11}$`).
        p if format!("{{{p}}}") == last => format!("t{tag}"),
        _ => format!("parent{tag}"),
    })
    .replace("/resourcegroups/", "/resourceGroups/");
    if !arm.parents.is_empty() {
        let parent = id.rsplitn(3, '/').nth(2).expect("parent").to_string();
        if env.sim.resource(&parent).is_none() {
            env.sim
                .seed(&parent, arm.api_version, json!({"location": "westeurope"}))
                .expect("seed the parent");
        }
    }
    id
}

/// Creates a target of `info` over HTTP (a minimal body, its operation polled to the end); returns its ID.
async fn create_target(env: &Env, info: &ActionInfo, tag: &str) -> String {
    let id = target_id(env, info, tag);
    let v = info.kind.arm.api_version;
    let (body, r) = put_minimal(env, &id, v).await;
    assert!(r.status == 200 || r.status == 201, "{id}: {} with {body}", r.body);
    if let Some(url) = r.header("azure-asyncoperation") {
        assert_eq!(env.wait(&url).await["status"], "Succeeded");
    }
    id
}

/// POSTs the action with a minimal body (when it takes one); returns the body sent and the reply.
async fn post_minimal(env: &Env, info: &ActionInfo, id: &str) -> (Option<Value>, Reply) {
    let v = info.kind.arm.api_version;
    if !info.body {
        return (None, env.post(id, info.action, v, None).await);
    }
    let what = format!("{id}/{}", info.action);
    let (body, r) = minimal(&what, v, async |body: &Value| {
        env.post(id, info.action, v, Some(body)).await
    })
    .await;
    (Some(body), r)
}

/// The action of the registry on `arm_type` named `action`, at `api_version`.
fn info(arm_type: &str, action: &str, api_version: &str) -> &'static ActionInfo {
    aks_api::ACTIONS
        .iter()
        .find(|a| a.kind.arm.arm_type == arm_type && a.action == action && a.kind.arm.api_version == api_version)
        .unwrap_or_else(|| panic!("{arm_type} {action} {api_version} in aks_api::ACTIONS"))
}

const CLUSTERS: &str = "Microsoft.ContainerService/managedClusters";
const POOLS: &str = "Microsoft.ContainerService/managedClusters/agentPools";

/// Runs a 202's operation to its end: polls `Azure-AsyncOperation` (returns its final status body) and then GETs
/// `Location` (returns that reply).
async fn finish(env: &Env, accepted: &Reply) -> (Value, Reply) {
    let status_url = accepted.header("azure-asyncoperation").expect("Azure-AsyncOperation");
    let location = accepted.header("location").expect("Location");
    let end = env.wait(&status_url).await;
    (end, env.get_url(&location).await)
}

#[tokio::test]
async fn every_action_of_the_registry_runs_with_declared_statuses() {
    let env = Env::default().await;
    assert!(!aks_api::ACTIONS.is_empty());
    for (i, info) in aks_api::ACTIONS.iter().enumerate() {
        let what = format!(
            "{} {} {}",
            info.kind.arm.arm_type, info.action, info.kind.arm.api_version
        );
        let id = create_target(&env, info, &i.to_string()).await;
        let seen = env.sim.traffic().len();
        let (body, r) = post_minimal(&env, info, &id).await;
        assert!(
            info.statuses.contains(&r.status),
            "{what}: {} not among {:?}: {}",
            r.status,
            info.statuses,
            r.body
        );
        let result = if r.status == 202 {
            assert!(info.long_running, "{what}: 202 of an action that is not long-running");
            // The Location URL answers 202 while the operation runs.
            let location = r.header("location").expect("Location");
            let early = env.get_url(&location).await;
            assert_eq!(early.status, 202, "{what}: {}", early.body);
            let (end, last) = finish(&env, &r).await;
            assert_eq!(end["status"], "Succeeded", "{what}: {end}");
            assert_eq!(
                last.status,
                if info.result { 200 } else { 204 },
                "{what}: {}",
                last.body
            );
            last.body
        } else {
            r.body.clone()
        };
        if info.result {
            assert!(result.is_object(), "{what}: no result: {result}");
            // The result reads as the action kind's `status.result` type.
            let mut arm = json!({ "result": result });
            if let Some(body) = &body {
                arm["parameters"] = body.clone();
            }
            let k = &info.kind;
            match aks_api::import_custom_resource(k.group, k.version, k.kind, &arm.to_string(), "a", None) {
                Some(Ok(_)) => {}
                other => panic!("{what}: the result does not read as {}: {other:?}\n{result:#}", k.kind),
            }
        } else {
            assert!(
                result.is_null() || r.status == 202,
                "{what}: a result for an action without one: {result}"
            );
        }
        let target = env.get(&id, info.kind.arm.api_version).await;
        assert_eq!(target.status, 200, "{what}: {}", target.body);
        if let Some(state) = target.body["properties"]["provisioningState"].as_str() {
            assert_eq!(state, "Succeeded", "{what}");
        }
        assert!(
            env.sim.actions_run(&id).iter().any(|a| a == info.action),
            "{what}: not in the action log {:?}",
            env.sim.actions_run(&id)
        );
        // The traffic log has the POST with the status it was answered with.
        let traffic = env.sim.traffic();
        let posts: Vec<_> = traffic[seen..].iter().filter(|e| e.request.method == "POST").collect();
        assert!(!posts.is_empty(), "{what}: no POST in the traffic");
        for e in posts {
            assert!(
                e.request.url.contains(&format!("/{}?api-version=", info.action)),
                "{}",
                e.request.url
            );
            assert!(info.statuses.contains(&e.response.status_code) || e.response.status_code == 400);
        }
    }
    // For Azure's validator (as .ci/oav.sh records the reconciler's): `ARMGEN_TRAFFIC_DIR` set, the exchanges go there.
    // The 400s of the minimal-body derivation are left out: their requests are invalid on purpose.
    if let Some(dir) = std::env::var_os("ARMGEN_TRAFFIC_DIR") {
        let dir = std::path::Path::new(&dir).join("actions");
        std::fs::create_dir_all(&dir).expect("traffic folder");
        for (i, e) in env
            .sim
            .traffic()
            .iter()
            .filter(|e| e.response.status_code != 400)
            .enumerate()
        {
            let file = dir.join(format!(
                "{:05}-{}-{}.json",
                i + 1,
                e.request.method,
                e.response.status_code
            ));
            std::fs::write(file, e.to_live_traffic().to_string()).expect("write an exchange");
        }
    }
}

#[tokio::test]
async fn stop_and_start_change_the_power_state() {
    let env = Env::default().await;
    let id = cluster_id("rg", "power");
    let body = env.create(&id, V2, &json!({"location": "westeurope"})).await;
    assert_eq!(body["properties"]["powerState"]["code"], "Running");
    let stop = env.post(&id, "stop", V2, None).await;
    assert_eq!(stop.status, 202, "{}", stop.body);
    assert!(stop.body.is_null());
    let during = env.sim.resource(&id).expect("cluster");
    assert_eq!(during["properties"]["provisioningState"], "Stopping");
    // Busy: another action, a PUT and a pool's action are refused while it stops.
    let start = env.post(&id, "start", V2, None).await;
    assert_eq!(
        (start.status, start.code()),
        (409, "OperationNotAllowed"),
        "{}",
        start.body
    );
    let (end, last) = finish(&env, &stop).await;
    assert_eq!(end["status"], "Succeeded");
    assert_eq!(last.status, 204);
    let stopped = env.get(&id, V2).await.body;
    assert_eq!(stopped["properties"]["powerState"]["code"], "Stopped");
    assert_eq!(stopped["properties"]["provisioningState"], "Succeeded");
    let start = env.post(&id, "start", V2, None).await;
    assert_eq!(start.status, 202);
    assert_eq!(
        env.sim.resource(&id).expect("cluster")["properties"]["provisioningState"],
        "Starting"
    );
    finish(&env, &start).await;
    let running = env.get(&id, V2).await.body;
    assert_eq!(running["properties"]["powerState"]["code"], "Running");
    assert_eq!(env.sim.actions_run(&id), ["stop", "start"]);
}

#[tokio::test]
async fn a_pool_action_waits_for_its_cluster() {
    let env = Env::default().await;
    let id = cluster_id("rg", "owner");
    env.create(&id, V2, &json!({"location": "westeurope"})).await;
    let pool = pool_id("rg", "owner", "np1");
    env.create(&pool, V2, &json!({"properties": {"count": 3}})).await;
    let stop = env.post(&id, "stop", V2, None).await;
    assert_eq!(stop.status, 202);
    let upgrade = env.post(&pool, "upgradeNodeImageVersion", V2, None).await;
    assert_eq!(
        (upgrade.status, upgrade.code()),
        (409, "OperationNotAllowed"),
        "{}",
        upgrade.body
    );
    finish(&env, &stop).await;
    // And the cluster's action waits for a busy pool.
    let upgrade = env.post(&pool, "upgradeNodeImageVersion", V2, None).await;
    assert_eq!(upgrade.status, 202, "{}", upgrade.body);
    let start = env.post(&id, "start", V2, None).await;
    assert_eq!(
        (start.status, start.code()),
        (409, "OperationNotAllowed"),
        "{}",
        start.body
    );
}

#[tokio::test]
async fn node_image_upgrade_reports_a_newer_image() {
    let env = Env::default().await;
    env.create(&cluster_id("rg", "img"), V2, &json!({"location": "westeurope"}))
        .await;
    let pool = pool_id("rg", "img", "np1");
    let before = env.create(&pool, V2, &json!({"properties": {"count": 3}})).await;
    let old = before["properties"]["nodeImageVersion"]
        .as_str()
        .expect("nodeImageVersion")
        .to_string();
    let r = env.post(&pool, "upgradeNodeImageVersion", V2, None).await;
    assert_eq!(r.status, 202);
    // The spec's 202 is the AgentPool.
    assert_eq!(r.body["id"], pool);
    assert_eq!(r.body["properties"]["provisioningState"], "UpgradingNodeImageVersion");
    let (_, last) = finish(&env, &r).await;
    assert_eq!(last.status, 200);
    let new = last.body["properties"]["nodeImageVersion"]
        .as_str()
        .expect("nodeImageVersion")
        .to_string();
    assert_ne!(new, old);
    assert!(new > old, "{new} is not newer than {old}");
    assert_eq!(env.get(&pool, V2).await.body, last.body);
}

#[tokio::test]
async fn run_command_returns_exit_code_and_logs() {
    let env = Env::default().await;
    let id = cluster_id("rg", "cmd");
    env.create(&id, V2, &json!({"location": "westeurope"})).await;
    let r = env
        .post(&id, "runCommand", V2, Some(&json!({"command": "echo hello"})))
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    // The cluster does not change state while the command runs.
    assert_eq!(
        env.sim.resource(&id).expect("cluster")["properties"]["provisioningState"],
        "Succeeded"
    );
    let (end, last) = finish(&env, &r).await;
    assert_eq!(end["status"], "Succeeded");
    assert_eq!(last.status, 200);
    let p = &last.body["properties"];
    assert_eq!(
        (p["provisioningState"].as_str(), p["exitCode"].as_i64()),
        (Some("Succeeded"), Some(0))
    );
    assert_eq!(p["logs"], "hello\n");
    assert!(p["startedAt"].is_string() && p["finishedAt"].is_string());
    assert!(last.body["id"].is_string());
    // A failing command: the operation succeeds, the exit code is the command's.
    let r = env
        .post(&id, "runCommand", V2, Some(&json!({"command": "exit 3"})))
        .await;
    let (end, last) = finish(&env, &r).await;
    assert_eq!(end["status"], "Succeeded");
    assert_eq!(last.body["properties"]["exitCode"], 3);
    assert_eq!(last.body["properties"]["provisioningState"], "Succeeded");
}

#[tokio::test]
async fn an_injected_fault_fails_the_action() {
    let env = Env::default().await;
    let id = cluster_id("rg", "fault");
    env.create(&id, V2, &json!({"location": "westeurope"})).await;
    env.sim.inject(
        arm_simulator::FaultRule::new(arm_simulator::Fault::FailOperation {
            code: "CommandExecutionFailed".into(),
            message: "the command pod did not start".into(),
        })
        .method("POST")
        .path_contains("/runCommand"),
    );
    let r = env
        .post(&id, "runCommand", V2, Some(&json!({"command": "kubectl get pods"})))
        .await;
    assert_eq!(r.status, 202);
    let (end, last) = finish(&env, &r).await;
    assert_eq!(end["status"], "Failed");
    assert_eq!(end["error"]["code"], "CommandExecutionFailed");
    assert_eq!(
        (last.status, last.code()),
        (400, "CommandExecutionFailed"),
        "{}",
        last.body
    );
    assert!(env.sim.actions_run(&id).is_empty());
    // A failed stop leaves the cluster Failed, as a failed PUT does.
    env.sim.inject(
        arm_simulator::FaultRule::new(arm_simulator::Fault::FailOperation {
            code: "InternalOperationError".into(),
            message: "stop failed".into(),
        })
        .method("POST")
        .path_contains("/stop"),
    );
    let r = env.post(&id, "stop", V2, None).await;
    let (end, _) = finish(&env, &r).await;
    assert_eq!(end["status"], "Failed");
    let got = env.get(&id, V2).await.body;
    assert_eq!(got["properties"]["provisioningState"], "Failed");
    assert_eq!(got["properties"]["powerState"]["code"], "Running");
}

#[tokio::test]
async fn refusals_are_worded_as_arm_words_them() {
    let env = Env::default().await;
    let missing = cluster_id("rg", "missing");
    let r = env.post(&missing, "stop", V2, None).await;
    assert_eq!((r.status, r.code()), (404, "ResourceNotFound"), "{}", r.body);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("managedClusters/missing")
    );
    let id = cluster_id("rg", "words");
    env.create(&id, V2, &json!({"location": "westeurope"})).await;
    // A body required but missing, not JSON, or not of the type.
    for body in [None, Some("not json"), Some(r#"{"command": 5}"#), Some("{}")] {
        let mut req = env.client.post(env.url(&format!("{id}/runCommand"), V2));
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b.to_string());
        }
        let r = Reply::of(req.send().await.expect("POST")).await;
        assert_eq!(
            (r.status, r.code()),
            (400, "InvalidRequestContent"),
            "{body:?}: {}",
            r.body
        );
    }
    let r = env.post(&id, "runCommand", V2, Some(&json!({"command": 5}))).await;
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("Path 'command'"),
        "{}",
        r.body
    );
    let r = env.post(&id, "runCommand", V2, Some(&json!({}))).await;
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("missing field `command`"),
        "{}",
        r.body
    );
    // An API version the action lacks, an action the type lacks.
    let r = env.post(&id, "stop", "2019-01-01", None).await;
    assert_eq!((r.status, r.code()), (400, "InvalidApiVersionParameter"), "{}", r.body);
    let r = env.post(&id, "explode", V2, None).await;
    assert_eq!((r.status, r.code()), (404, "InvalidResourceType"), "{}", r.body);
    assert!(env.sim.actions_run(&id).is_empty());
}

#[tokio::test]
async fn abort_cancels_the_running_operation() {
    let env = Env::default().await;
    let id = cluster_id("rg", "abort");
    env.create(&id, V2, &json!({"location": "westeurope"})).await;
    // Nothing to abort: 204 at once (the spec's).
    let idle = env.post(&id, "abort", V2, None).await;
    assert_eq!(idle.status, 204, "{}", idle.body);
    let update = env
        .put(&id, V2, &json!({"location": "westeurope", "tags": {"a": "b"}}))
        .await;
    let update_url = update.header("azure-asyncoperation").expect("an update in flight");
    let abort = env.post(&id, "abort", V2, None).await;
    assert_eq!(abort.status, 202, "{}", abort.body);
    assert_eq!(
        env.sim.resource(&id).expect("cluster")["properties"]["provisioningState"],
        "Canceling"
    );
    let updated = env.wait(&update_url).await;
    assert_eq!(updated["status"], "Canceled");
    let (end, last) = finish(&env, &abort).await;
    assert_eq!(end["status"], "Succeeded");
    assert_eq!(last.status, 204);
    assert_eq!(
        env.get(&id, V2).await.body["properties"]["provisioningState"],
        "Canceled"
    );
}

#[tokio::test]
async fn the_other_actions_have_spec_shaped_effects() {
    let env = Env::default().await;
    let id = cluster_id("rg", "misc");
    env.create(&id, V2, &json!({"location": "westeurope"})).await;
    let pool = pool_id("rg", "misc", "np1");
    env.create(&pool, V2, &json!({"properties": {"count": 3}})).await;
    // deleteMachines: the pool's count goes down by the machines named.
    let r = env
        .post(
            &pool,
            "deleteMachines",
            V2,
            Some(&json!({"machineNames": ["m1", "m2"]})),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    finish(&env, &r).await;
    assert_eq!(env.get(&pool, V2).await.body["properties"]["count"], 1);
    // resolvePrivateLinkServiceId: synchronous, the body with its privateLinkServiceID.
    let info = info(CLUSTERS, "resolvePrivateLinkServiceId", V2);
    let r = env
        .post(
            &id,
            info.action,
            V2,
            Some(&json!({"name": "management", "groupId": "management"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], "management");
    assert!(
        r.body["privateLinkServiceID"]
            .as_str()
            .unwrap_or_default()
            .ends_with("/privateLinkServices/management")
    );
    // resetServicePrincipalProfile: the profile is the one given, without its secret.
    let r = env
        .post(
            &id,
            "resetServicePrincipalProfile",
            V2,
            Some(&json!({"clientId": "app", "secret": "s3cret"})),
        )
        .await;
    finish(&env, &r).await;
    let got = env.get(&id, V2).await.body;
    assert_eq!(got["properties"]["servicePrincipalProfile"], json!({"clientId": "app"}));
    // Certificate and signing-key rotations change nothing a GET shows: the action log has them.
    for action in ["rotateClusterCertificates", "rotateServiceAccountSigningKeys"] {
        let r = env.post(&id, action, V2, None).await;
        assert_eq!(r.status, 202);
        finish(&env, &r).await;
    }
    let log = env.sim.actions_run(&id);
    assert!(
        log.ends_with(&[
            "rotateClusterCertificates".to_string(),
            "rotateServiceAccountSigningKeys".to_string()
        ]),
        "{log:?}"
    );
    // exportTemplate of the resource group lists its resources.
    let export = aks_api::ACTIONS
        .iter()
        .find(|a| a.action == "exportTemplate")
        .expect("exportTemplate");
    let rg = format!("/subscriptions/{SUB}/resourceGroups/rg");
    let v = export.kind.arm.api_version;
    env.create(&rg, v, &json!({"location": "westeurope"})).await;
    let r = env
        .post(&rg, "exportTemplate", v, Some(&json!({"resources": ["*"]})))
        .await;
    let body = if r.status == 202 {
        finish(&env, &r).await.1.body
    } else {
        r.body
    };
    let resources = body["template"]["resources"].as_array().expect("template resources");
    assert!(
        resources.iter().any(|r| r["type"] == CLUSTERS && r["name"] == "misc"),
        "{body:#}"
    );
    assert!(
        resources.iter().any(|r| r["type"] == POOLS && r["name"] == "misc/np1"),
        "{body:#}"
    );
}
