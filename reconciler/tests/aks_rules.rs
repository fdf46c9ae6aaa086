//! AKS's own rules in the one generic loop (issue: "AKS rules as data"), against the simulator, which refuses what
//! AKS refuses: pools in and out of the cluster (`childOwned`), upgrade order (`ownerGate`), properties fixed after
//! creation (`immutable`, and the CRD's CEL rule), terminal and retryable ARM errors (`errors`), and that all of it
//! is data — the loop run with a rules document generated without them behaves differently, with no code edit.

mod common;

use std::sync::Arc;

use armgen_runtime::rules::Rules;
use common::*;
use serde_json::{Value, json};

/// The path of a recorded request (no scheme, host or query).
fn path_of(url: &str) -> &str {
    let path = url.split('?').next().unwrap_or(url);
    path.find("/subscriptions/").map(|i| &path[i..]).unwrap_or(path)
}

/// ARM writes (PUT, DELETE, POST) whose path is exactly `id` (case-insensitive).
fn writes_to(h: &Harness, id: &str) -> usize {
    h.sim
        .traffic()
        .iter()
        .filter(|e| e.request.method != "GET" && path_of(&e.request.url).eq_ignore_ascii_case(id))
        .count()
}

/// Every ARM write (PUT, DELETE, POST) recorded.
fn all_writes(h: &Harness) -> usize {
    h.sim.traffic().iter().filter(|e| e.request.method != "GET").count()
}

fn pool_id(cluster: &str, pool: &str) -> String {
    format!("{}/agentPools/{pool}", cluster_id(cluster))
}

/// The built-in rules with `edit` applied: what a config without some of them generates.
fn rules_without(edit: impl FnOnce(&mut Rules)) -> Arc<Rules> {
    let mut rules = aks_api::rules().expect("the generated rules parse");
    edit(&mut rules);
    Arc::new(rules)
}

/// A cluster with one inline system pool plus two AgentPool objects, all Ready.
async fn cluster_with_pools(h: &Harness) {
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
    for pool in ["pool-a", "pool-b"] {
        h.apply("AgentPool", pool, pool_spec("demo")).await;
        h.converge("AgentPool", pool).await;
        assert_eq!(h.ready("AgentPool", pool).await.0, "True", "{pool}");
    }
    // The cluster's next resync sees the pools in its agentPoolProfiles (Azure lists every pool there).
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
}

#[tokio::test]
async fn pool_changes_never_put_the_cluster() {
    let h = Harness::new().await;
    cluster_with_pools(&h).await;
    let cluster = cluster_id("demo");

    // Scale one pool.
    h.clear_traffic();
    h.patch_spec("AgentPool", "pool-a", json!({"count": 5})).await;
    h.converge("AgentPool", "pool-a").await;
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(writes_to(&h, &cluster), 0, "no cluster PUT for a pool scale");
    assert_eq!(writes_to(&h, &pool_id("demo", "pool-a")), 1);
    assert_eq!(all_writes(&h), 1, "{:?}", h.sim.traffic());
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");

    // Add a third pool.
    h.clear_traffic();
    h.apply("AgentPool", "pool-c", pool_spec("demo")).await;
    h.converge("AgentPool", "pool-c").await;
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(writes_to(&h, &cluster), 0, "no cluster PUT for a new pool");
    assert_eq!(writes_to(&h, &pool_id("demo", "pool-c")), 1);
    assert_eq!(all_writes(&h), 1);

    // Delete one.
    h.clear_traffic();
    h.delete("AgentPool", "pool-b").await;
    h.reconcile_until_gone("AgentPool", "pool-b").await;
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(writes_to(&h, &cluster), 0, "no cluster PUT for a deleted pool");
    assert_eq!(writes_to(&h, &pool_id("demo", "pool-b")), 1, "one DELETE");
    assert_eq!(all_writes(&h), 1);
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");

    // A resync pass of the whole set: one GET per object, no write anywhere.
    h.clear_traffic();
    h.api.clear_requests();
    let objects = [
        ("ManagedCluster", "demo"),
        ("AgentPool", "pool-a"),
        ("AgentPool", "pool-c"),
    ];
    for (kind, name) in objects {
        h.reconcile(kind, name).await;
        assert_eq!(h.ready(kind, name).await.0, "True", "{kind} {name}");
    }
    assert_eq!(h.sim.count("GET"), objects.len(), "{:?}", h.sim.traffic());
    assert_eq!(all_writes(&h), 0);
    let api_writes: Vec<_> = h.api.requests().into_iter().filter(|r| r.method != "GET").collect();
    assert!(api_writes.is_empty(), "{api_writes:?}");
}

#[tokio::test]
async fn an_upgrade_puts_the_cluster_first_and_the_pools_once_it_reports_the_version() {
    let h = Harness::new().await;
    let mut cluster = cluster_spec();
    cluster["kubernetesVersion"] = json!("1.30.5");
    h.apply("ManagedCluster", "demo", cluster).await;
    h.converge("ManagedCluster", "demo").await;
    let mut pool = pool_spec("demo");
    pool["orchestratorVersion"] = json!("1.30.5");
    h.apply("AgentPool", "pool-a", pool).await;
    h.converge("AgentPool", "pool-a").await;
    assert_eq!(h.ready("AgentPool", "pool-a").await.0, "True");

    // One apply: the cluster and its pool get the new version.
    h.clear_traffic();
    h.patch_spec("ManagedCluster", "demo", json!({"kubernetesVersion": "1.31.2"}))
        .await;
    h.patch_spec("AgentPool", "pool-a", json!({"orchestratorVersion": "1.31.2"}))
        .await;

    // The pool first (the controllers run in any order): its owner has a spec change not applied yet.
    h.reconcile("AgentPool", "pool-a").await;
    let (status, reason, message) = h.ready("AgentPool", "pool-a").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "WaitingForOwner"),
        "{message}"
    );
    assert_eq!(all_writes(&h), 0);
    // The cluster's PUT starts its operation; the pool still waits while it runs.
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(writes_to(&h, &cluster_id("demo")), 1);
    // (AKS runs the cluster's pools with its operation, so the pool may also report its own Updating state.)
    h.reconcile("AgentPool", "pool-a").await;
    let reason = h.ready("AgentPool", "pool-a").await.1;
    assert!(
        ["WaitingForOwner", "Provisioning"].contains(&reason.as_str()),
        "{reason}"
    );
    assert_eq!(writes_to(&h, &pool_id("demo", "pool-a")), 0);
    // Once the cluster settles, the pool goes.
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
    h.converge("AgentPool", "pool-a").await;
    assert_eq!(h.ready("AgentPool", "pool-a").await.0, "True");
    assert_eq!(writes_to(&h, &pool_id("demo", "pool-a")), 1);
    let refused: Vec<_> = h
        .sim
        .traffic()
        .into_iter()
        .filter(|e| e.response.status_code >= 400)
        .map(|e| (e.request.method, e.request.url, e.response.body))
        .collect();
    assert!(refused.is_empty(), "no refused request: {refused:?}");
    // Order: the pool's PUT comes after every exchange of the cluster's operation.
    let traffic = h.sim.traffic();
    let pool_put = traffic
        .iter()
        .position(|e| e.request.method == "PUT" && path_of(&e.request.url).ends_with("/agentPools/pool-a"))
        .expect("the pool PUT");
    let cluster_put = traffic
        .iter()
        .position(|e| e.request.method == "PUT" && path_of(&e.request.url).ends_with("/managedClusters/demo"))
        .expect("the cluster PUT");
    assert!(cluster_put < pool_put);
}

#[tokio::test]
async fn a_pool_newer_than_its_cluster_waits_without_a_put() {
    let h = Harness::new().await;
    let mut cluster = cluster_spec();
    cluster["kubernetesVersion"] = json!("1.30.5");
    h.apply("ManagedCluster", "demo", cluster).await;
    h.converge("ManagedCluster", "demo").await;
    let current = h
        .object("ManagedCluster", "demo")
        .await
        .and_then(|o| o.data.pointer("/status/currentKubernetesVersion").cloned());
    assert_eq!(
        current,
        Some(json!("1.30.5")),
        "the simulator reports the control plane's version"
    );
    let mut pool = pool_spec("demo");
    pool["orchestratorVersion"] = json!("1.31.0");
    h.apply("AgentPool", "pool-a", pool).await;
    h.clear_traffic();
    h.reconcile("AgentPool", "pool-a").await;
    let (status, reason, message) = h.ready("AgentPool", "pool-a").await;
    assert_eq!((status.as_str(), reason.as_str()), ("False", "WaitingForOwner"));
    assert!(
        message.contains("1.31.0") && message.contains("NodePoolMcVersionIncompatible"),
        "{message}"
    );
    assert_eq!(all_writes(&h), 0, "no PUT that can only be refused");
    // The cluster reaches the version: the pool goes.
    h.patch_spec("ManagedCluster", "demo", json!({"kubernetesVersion": "1.31.0"}))
        .await;
    h.converge("ManagedCluster", "demo").await;
    h.converge("AgentPool", "pool-a").await;
    assert_eq!(h.ready("AgentPool", "pool-a").await.0, "True");
}

#[tokio::test]
async fn an_immutable_change_is_reported_and_never_sent() {
    let h = Harness::new().await;
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    h.clear_traffic();
    h.patch_spec(
        "ManagedCluster",
        "demo",
        json!({"dnsPrefix": "other", "tags": {"team": "a"}}),
    )
    .await;
    h.reconcile("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "ImmutablePropertyChanged")
    );
    assert!(message.contains("spec.dnsPrefix"), "names the path: {message}");
    assert_eq!(all_writes(&h), 0);
    // Reverting it applies the rest.
    h.patch_spec("ManagedCluster", "demo", json!({"dnsPrefix": "demo"}))
        .await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
    assert_eq!(writes_to(&h, &cluster_id("demo")), 1, "the tags change");
}

#[tokio::test]
async fn a_terminal_operation_error_is_not_retried_for_the_same_generation() {
    let h = Harness::new().await;
    h.sim.inject(quota_exceeded_on_next_put());
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    let (status, reason, _) = h.ready("ManagedCluster", "demo").await;
    assert_eq!((status.as_str(), reason.as_str()), ("False", "QuotaExceeded"));
    for _ in 0..3 {
        h.reconcile("ManagedCluster", "demo").await;
    }
    assert_eq!(h.sim.count("PUT"), 1, "exactly one PUT for that generation");
    assert_eq!(h.ready("ManagedCluster", "demo").await.1, "QuotaExceeded");
    // A spec change is sent at once.
    h.patch_spec(
        "ManagedCluster",
        "demo",
        json!({"agentPoolProfiles": [
            {"name": "system", "count": 1, "vmSize": "Standard_D2s_v5", "mode": "System", "osType": "Linux"}
        ]}),
    )
    .await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.sim.count("PUT"), 2);
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
}

#[tokio::test]
async fn without_the_child_owned_rule_a_pool_scale_puts_the_cluster() {
    // The same steps with the rules document a config without `childOwned` generates: the loop compares the
    // cluster's pools with Azure's (which lists every pool) and PUTs the cluster — the write storm the rule ends.
    let mut h = Harness::new().await;
    h.set_rules(rules_without(|r| {
        for g in &mut r.groups {
            for k in &mut g.kinds {
                k.child_owned.clear();
            }
        }
    }));
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    h.apply("AgentPool", "pool-a", pool_spec("demo")).await;
    h.converge("AgentPool", "pool-a").await;
    h.clear_traffic();
    h.reconcile("ManagedCluster", "demo").await;
    assert!(
        writes_to(&h, &cluster_id("demo")) >= 1,
        "without the rule, the pool the cluster spec lacks is a difference: {:?}",
        h.sim
            .traffic()
            .iter()
            .map(|e| (&e.request.method, e.response.status_code))
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn without_the_immutable_rule_the_change_is_sent_once_and_refused_as_terminal() {
    // A rules document without `immutable`: the loop sends the change; the simulator refuses it as AKS does
    // (400 PropertyChangeNotAllowed), a terminal error class: exactly one PUT for the generation, however often
    // the object is reconciled, and a spec change is sent at once.
    let mut h = Harness::new().await;
    h.set_rules(rules_without(|r| {
        for g in &mut r.groups {
            for k in &mut g.kinds {
                k.immutable.clear();
            }
        }
    }));
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    h.clear_traffic();
    h.patch_spec("ManagedCluster", "demo", json!({"dnsPrefix": "other"}))
        .await;
    for _ in 0..3 {
        h.reconcile("ManagedCluster", "demo").await;
    }
    let (status, reason, _) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "PropertyChangeNotAllowed")
    );
    assert_eq!(writes_to(&h, &cluster_id("demo")), 1, "one PUT for that generation");
    // A restarted operator keeps it (the record is in status).
    let mut h = h;
    h.restart();
    h.set_rules(rules_without(|r| {
        for g in &mut r.groups {
            for k in &mut g.kinds {
                k.immutable.clear();
            }
        }
    }));
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(writes_to(&h, &cluster_id("demo")), 1, "still one after a restart");
    // The next generation goes at once.
    h.patch_spec(
        "ManagedCluster",
        "demo",
        json!({"dnsPrefix": "demo", "tags": {"team": "a"}}),
    )
    .await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
    assert_eq!(writes_to(&h, &cluster_id("demo")), 2);
}

#[tokio::test]
async fn a_conflict_is_retried_until_the_conflicting_operation_ends() {
    let h = Harness::new().await;
    cluster_with_pools(&h).await;
    // A pool operation in flight...
    h.patch_spec("AgentPool", "pool-a", json!({"count": 4})).await;
    h.reconcile("AgentPool", "pool-a").await;
    assert_eq!(h.ready("AgentPool", "pool-a").await.1, "Reconciling");
    // ...and a cluster change meanwhile: AKS answers 409 OperationNotAllowed, which is retried.
    h.clear_traffic();
    h.patch_spec("ManagedCluster", "demo", json!({"tags": {"team": "a"}}))
        .await;
    let action = h.reconcile("ManagedCluster", "demo").await.expect("exists");
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "OperationNotAllowed"),
        "{message}"
    );
    assert_ne!(action, kube::runtime::controller::Action::await_change(), "retried");
    let refused = h.sim.traffic().iter().filter(|e| e.response.status_code == 409).count();
    assert_eq!(refused, 1);
    // The pool's operation ends; the cluster's retry goes through with one more PUT.
    h.converge("AgentPool", "pool-a").await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
    let accepted = h
        .sim
        .traffic()
        .iter()
        .filter(|e| {
            e.request.method == "PUT"
                && path_of(&e.request.url).eq_ignore_ascii_case(&cluster_id("demo"))
                && e.response.status_code < 300
        })
        .count();
    assert_eq!(accepted, 1);
}

/// JSON as CEL sees it (strings, numbers, booleans, lists, maps).
fn cel_value(value: &Value) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => cel::Value::Int(i),
            None => cel::Value::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => cel::Value::from(s.as_str()),
        Value::Array(items) => cel::Value::from(items.iter().map(cel_value).collect::<Vec<_>>()),
        Value::Object(map) => {
            let map: std::collections::HashMap<String, cel::Value> =
                map.iter().map(|(k, v)| (k.clone(), cel_value(v))).collect();
            cel::Value::from(map)
        }
    }
}

/// The schema of `spec.<a>.<b>…` in a CRD version's schema.
fn schema_at<'a>(version: &'a Value, spec_path: &str) -> Option<&'a Value> {
    let mut at = version.pointer("/schema/openAPIV3Schema/properties/spec")?;
    for segment in spec_path.strip_prefix("spec.")?.split('.') {
        at = at.get("properties")?.get(segment)?;
    }
    Some(at)
}

#[test]
fn the_crd_refuses_what_the_rules_call_immutable() {
    // There is no real API server here: the CRD's rule for every immutable property outside arrays (where the
    // API server can correlate old and new) is evaluated with the `cel` crate, as the API server would, over an
    // old and a new value — and the loop's rules and the CRD's rules are the same list.
    let rules = aks_api::rules().expect("rules");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/crds");
    let mut checked = 0;
    for info in aks_api::KINDS {
        let Some(kind_rules) = rules.kind(info.group, info.version, info.kind) else {
            continue;
        };
        let file = root.join(format!("{}.{}.yaml", info.plural, info.kube_group));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let crd: Value = serde_yaml_ng::from_str(&text).expect("CRD YAML");
        let version = crd["spec"]["versions"]
            .as_array()
            .and_then(|v| v.iter().find(|v| v["name"] == info.version))
            .unwrap_or_else(|| panic!("{} has version {}", file.display(), info.version));
        for rule in kind_rules.immutable.iter().filter(|i| !i.spec_path.contains("[]")) {
            let schema = schema_at(version, &rule.spec_path)
                .unwrap_or_else(|| panic!("{} {}: {} in the CRD", info.kind, info.version, rule.spec_path));
            let cel_rule = schema["x-kubernetes-validations"]
                .as_array()
                .and_then(|v| v.iter().find_map(|r| r["rule"].as_str()))
                .unwrap_or_else(|| panic!("{} {}: {} has a CEL rule", info.kind, info.version, rule.spec_path));
            let sample = |tag: &str| -> Value {
                if schema["type"] == "object" {
                    json!({"armId": format!("/subscriptions/x/resourceGroups/{tag}")})
                } else {
                    json!(tag)
                }
            };
            let evaluate = |old: &Value, new: &Value| -> bool {
                let program = cel::Program::compile(cel_rule).expect("the rule compiles");
                let mut context = cel::Context::default();
                context.add_variable_from_value("self", cel_value(new));
                context.add_variable_from_value("oldSelf", cel_value(old));
                matches!(program.execute(&context), Ok(cel::Value::Bool(true)))
            };
            let (a, b) = (sample("a"), sample("b"));
            assert!(evaluate(&a, &a), "{}: an unchanged value passes", rule.spec_path);
            assert!(!evaluate(&a, &b), "{}: a changed value is refused", rule.spec_path);
            checked += 1;
        }
    }
    assert!(checked > 0, "the rules name immutable properties outside arrays");
}

#[test]
fn the_rules_document_matches_the_registry() {
    let rules = aks_api::rules().expect("the generated rules document parses");
    for g in &rules.groups {
        for k in &g.kinds {
            let info = aks_api::every_kind().find(|i| i.group == g.group && i.version == k.version && i.kind == k.kind);
            let Some(info) = info else {
                panic!("{}/{} {}: not a registered kind", g.group, k.version, k.kind)
            };
            for owned in &k.child_owned {
                assert!(
                    aks_api::KINDS.iter().any(|c| c.group == info.group
                        && c.version == info.version
                        && c.kind == owned.child_kind
                        && c.owner_kind == Some(info.kind)),
                    "{} owns {} items",
                    info.kind,
                    owned.child_kind
                );
            }
            if k.owner_gate.is_some() {
                assert!(info.owner_kind.is_some(), "{} has an owner to wait for", info.kind);
            }
            for i in &k.immutable {
                assert!(i.spec_path.starts_with("spec.") && !i.source.is_empty(), "{i:?}");
            }
        }
    }
}
