//! The service's rules (`simulator/src/rules.rs`), driven by the rules document: every kind and version that has
//! a rule in the generated document (`aks_api::rules()`) is tried, each rule accepted where it allows and refused
//! where it does not, and the same requests pass with an empty document. Values are fixtures; which kinds,
//! versions, properties and error codes are tried comes from the document and the registry.

mod common;

use arm_simulator::SimulatorConfig;
use armgen_runtime::KindInfo;
use armgen_runtime::rules::{KindRules, Rules};
use common::*;
use serde_json::{Value, json};

fn rules() -> Rules {
    aks_api::rules().expect("the generated rules document parses")
}

/// Every kind rule of the document with its registry entry. Rules of action kinds (`aks_api::ACTIONS`: an owner gate,
/// their spec's immutable `parameters`) are the reconciler's, about their custom resources: an action is no ARM
/// resource the simulator stores (tests/actions.rs covers its refusals while the target is busy).
fn kinds_with(rules: &Rules, has: impl Fn(&KindRules) -> bool) -> Vec<(&'static KindInfo, KindRules)> {
    let is_action = |group: &str, k: &KindRules| {
        aks_api::ACTIONS
            .iter()
            .any(|a| a.kind.group == group && a.kind.version == k.version && a.kind.kind == k.kind)
    };
    let found: Vec<_> = rules
        .groups
        .iter()
        .flat_map(|g| g.kinds.iter().map(move |k| (g.group.as_str(), k)))
        .filter(|(group, k)| has(k) && !is_action(group, k))
        .map(|(group, k)| {
            let info = aks_api::KINDS
                .iter()
                .find(|i| i.group == group && i.version == k.version && i.kind == k.kind)
                .unwrap_or_else(|| panic!("{group} {} {} is not in aks_api::KINDS", k.version, k.kind));
            (info, k.clone())
        })
        .collect();
    assert!(
        !found.is_empty(),
        "the rules document has no such rule: nothing would be tested"
    );
    found
}

fn owner_of(kind: &KindInfo) -> &'static KindInfo {
    let owner = kind.owner_kind.unwrap_or_else(|| panic!("{} has no owner", kind.kind));
    aks_api::KINDS
        .iter()
        .find(|i| i.group == kind.group && i.version == kind.version && i.kind == owner)
        .expect("the owner kind")
}

/// The resource ID of `kind` with the resource names `names` (outermost first).
fn id_of(kind: &KindInfo, names: &[&str]) -> String {
    let mut names = names.iter();
    kind.arm
        .path
        .split('/')
        .map(|s| match s {
            "{subscriptionId}" => SUB.to_string(),
            "{resourceGroupName}" => "rg".to_string(),
            s if s.starts_with('{') => names.next().expect("a name per parameter").to_string(),
            s => s.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The name of the child collection in `child`'s path (`agentPools`).
fn collection(child: &KindInfo) -> &'static str {
    child.arm.path.rsplit('/').nth(1).expect("a collection segment")
}

/// Sets the value at an ARM path; `[]` makes (or goes into) a one-item array.
fn set_at(body: &mut Value, path: &str, value: Value) {
    let mut cur = body;
    for segment in path.split('.') {
        let (name, items) = match segment.find('[') {
            Some(i) => (&segment[..i], segment[i..].matches("[]").count()),
            None => (segment, 0),
        };
        if !cur.is_object() {
            *cur = json!({});
        }
        cur = cur.as_object_mut().expect("object").entry(name).or_insert(Value::Null);
        for _ in 0..items {
            if !cur.is_array() {
                *cur = json!([{}]);
            }
            cur = &mut cur[0];
        }
    }
    *cur = value;
}

/// A value of the property at `spec_path` the kind's CRD schema accepts (`armgen_runtime::sample`; variants 0 and 1
/// differ), in ARM form: a resource reference (`{"armId": …}`) is the ARM ID it names.
fn sample_value(kind: &KindInfo, spec_path: &str, variant: u32) -> Value {
    fn arm_form(v: Value) -> Value {
        match v {
            Value::Object(m) if m.len() == 1 && m.get("armId").is_some_and(Value::is_string) => m["armId"].clone(),
            Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, arm_form(v))).collect()),
            Value::Array(a) => Value::Array(a.into_iter().map(arm_form).collect()),
            other => other,
        }
    }
    let crd = aks_api::custom_resource_definition(kind.kube_group, kind.kind)
        .expect("a CRD per kind")
        .expect("the CRD parses");
    let schema = armgen_runtime::sample::schema_of(&crd, kind.version).expect("the version has a schema");
    let v = armgen_runtime::sample::sample_at(&schema, spec_path, variant)
        .unwrap_or_else(|e| panic!("{} {}: {e}", kind.kind, kind.version));
    arm_form(v)
}

fn names_at(body: &Value, arm_path: &str, key: &str) -> Vec<String> {
    armgen_runtime::rules::values_at(body, arm_path)
        .into_iter()
        .flat_map(|(_, v)| v.as_array().cloned().unwrap_or_default())
        .filter_map(|item| item[key].as_str().map(str::to_string))
        .collect()
}

/// The last exchange of the traffic: its status and response body.
fn last_exchange(env: &Env) -> (u16, Value) {
    let traffic = env.sim.traffic();
    let last = traffic.last().expect("an exchange");
    (
        last.response.status_code,
        last.response.body.clone().unwrap_or_default(),
    )
}

/// A refusal: its status and code, recorded in the traffic as ARM's error shape.
fn assert_refused(env: &Env, r: &Reply, status: u16, code: &str) {
    assert_eq!((r.status, r.code()), (status, code), "{}", r.body);
    let error = r.body["error"].as_object().expect("{\"error\": {...}}");
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{}", r.body);
    assert!(
        error
            .keys()
            .all(|k| ["code", "message", "target"].contains(&k.as_str())),
        "CloudErrorBody members only: {}",
        r.body
    );
    assert_eq!(last_exchange(env), (status, r.body.clone()), "recorded as answered");
}

async fn wait_put(env: &Env, r: &Reply) {
    assert!(r.status == 200 || r.status == 201, "{} {}", r.status, r.body);
    if let Some(url) = r.header("azure-asyncoperation") {
        assert_eq!(env.wait(&url).await["status"], "Succeeded");
    }
}

/// A cluster-like owner created with one item, whose child resource it creates; child PUTs and DELETEs change
/// the items; a later owner PUT may not add items, keeps items it leaves out and changes those it sends.
#[tokio::test]
async fn child_owned_items_and_child_resources_are_one_set() {
    let rules = rules();
    for (owner, kr) in kinds_with(&rules, |k| !k.child_owned.is_empty()) {
        for co in &kr.child_owned {
            let env = Env::default().await;
            let v = owner.arm.api_version;
            let child = aks_api::KINDS
                .iter()
                .find(|i| i.group == owner.group && i.version == owner.version && i.kind == co.child_kind)
                .expect("the child kind");
            let owner_id = id_of(owner, &["c1"]);
            let child_id = |name: &str| format!("{owner_id}/{}/{name}", collection(child));
            let item = |name: &str, count: u32| json!({co.key.as_str(): name, "count": count});
            let mut body = json!({"location": "westeurope"});
            set_at(&mut body, &co.arm_path, json!([item("first", 1)]));
            let created = env.create(&owner_id, v, &body).await;
            assert_eq!(names_at(&created, &co.arm_path, &co.key), ["first"]);

            // The item is a child resource, its properties the item's.
            let first = env.get(&child_id("first"), v).await;
            assert_eq!(first.status, 200, "{}: {}", co.child_kind, first.body);
            assert_eq!(first.body["properties"]["count"], 1);
            assert_eq!(first.body["properties"]["provisioningState"], "Succeeded");
            assert!(first.body["properties"].get(&co.key).is_none(), "the key is the name");

            // A child created as a resource is an item; its update shows in the owner.
            env.create(&child_id("second"), v, &json!({"properties": {"count": 2}}))
                .await;
            let g = env.get(&owner_id, v).await.body;
            assert_eq!(names_at(&g, &co.arm_path, &co.key), ["first", "second"]);
            env.create(&child_id("second"), v, &json!({"properties": {"count": 5}}))
                .await;
            let g = env.get(&owner_id, v).await.body;
            let items = armgen_runtime::rules::values_at(&g, &co.arm_path)[0].1.clone();
            // Flattened (pools: `{name, count}`) or a sub-resource (subnets: `{id, name, type, properties}`), as
            // the owner's type models its items.
            let second = match items[1].get("properties") {
                Some(p) => {
                    assert_eq!(items[1]["id"], child_id("second").as_str(), "{items}");
                    p.clone()
                }
                None => items[1].clone(),
            };
            assert_eq!(second["count"], 5, "{items}");
            assert_eq!(second["provisioningState"], "Succeeded");

            // After creation, an owner PUT may not add an item.
            let mut add = g.clone();
            set_at(
                &mut add,
                &co.arm_path,
                json!([item("first", 1), item("second", 5), item("third", 1)]),
            );
            let r = env.put(&owner_id, v, &add).await;
            assert_refused(&env, &r, 400, "BadRequest");
            let target = co.arm_path.rsplit('.').next().expect("a name");
            assert_eq!(r.body["error"]["target"], target);
            assert!(env.get(&child_id("third"), v).await.status == 404);

            // The same items, as the owner's GET reports them, are accepted.
            wait_put(&env, &env.put(&owner_id, v, &g).await).await;
            // Items left out stay; items sent change their children.
            let mut fewer = g.clone();
            set_at(&mut fewer, &co.arm_path, json!([item("first", 4)]));
            wait_put(&env, &env.put(&owner_id, v, &fewer).await).await;
            assert_eq!(env.get(&child_id("first"), v).await.body["properties"]["count"], 4);
            assert_eq!(env.get(&child_id("second"), v).await.status, 200, "not removed");
            let g = env.get(&owner_id, v).await.body;
            assert_eq!(names_at(&g, &co.arm_path, &co.key), ["first", "second"]);

            // A child DELETE removes the item.
            let d = env.delete(&child_id("second"), v).await;
            assert!(d.status == 202 || d.status == 200, "{}", d.body);
            if let Some(url) = d.header("azure-asyncoperation") {
                assert_eq!(env.wait(&url).await["status"], "Succeeded");
            }
            assert_eq!(env.get(&child_id("second"), v).await.status, 404);
            let g = env.get(&owner_id, v).await.body;
            assert_eq!(names_at(&g, &co.arm_path, &co.key), ["first"]);

            // Deleting the owner deletes its children.
            let d = env.delete(&owner_id, v).await;
            let url = d.header("azure-asyncoperation").expect("Azure-AsyncOperation");
            assert_eq!(
                env.sim.resource(&child_id("first")).expect("stored")["properties"]["provisioningState"],
                "Deleting"
            );
            assert_eq!(env.wait(&url).await["status"], "Succeeded");
            assert_eq!(env.sim.resource_count(), 0);
        }
    }
}

/// A PUT on an existing resource that changes an immutable property is refused; the same value, or leaving it
/// out, is accepted.
#[tokio::test]
async fn immutable_properties_cannot_change() {
    let rules = rules();
    let env = Env::default().await;
    for (kind, kr) in kinds_with(&rules, |k| !k.immutable.is_empty()) {
        let v = kind.arm.api_version;
        for (n, rule) in kr.immutable.iter().enumerate() {
            let name = format!("imm{n}");
            let id = match kind.owner_kind {
                Some(_) => {
                    let owner = owner_of(kind);
                    let owner_id = id_of(owner, &[&format!("owner-{}-{v}", kind.kind.to_lowercase())]);
                    if env.sim.resource(&owner_id).is_none() {
                        env.sim
                            .seed(&owner_id, v, json!({"location": "westeurope"}))
                            .expect("seed the owner");
                    }
                    format!("{owner_id}/{}/{name}", collection(kind))
                }
                None => id_of(kind, &[&format!("{}-{v}-{name}", kind.kind.to_lowercase())]),
            };
            let mut body = json!({"location": "westeurope"});
            if kind.owner_kind.is_some() {
                body = json!({"properties": {}});
            }
            let (first, second) = (
                sample_value(kind, &rule.spec_path, 0),
                sample_value(kind, &rule.spec_path, 1),
            );
            assert_ne!(first, second, "{} {}: two values", kind.kind, rule.spec_path);
            set_at(&mut body, &rule.arm_path, first);
            let created = env.create(&id, v, &body).await;
            assert_eq!(created["id"], id);

            let same = env.put(&id, v, &body).await;
            wait_put(&env, &same).await;
            let mut changed = body.clone();
            set_at(&mut changed, &rule.arm_path, second);
            let r = env.put(&id, v, &changed).await;
            assert_refused(&env, &r, 400, "PropertyChangeNotAllowed");
            let property = rule.arm_path.rsplit('.').next().expect("a name");
            assert_eq!(
                r.body["error"]["message"],
                format!("Changing property '{property}' is not allowed."),
                "{} {v} {}",
                kind.kind,
                rule.arm_path
            );
            assert_eq!(r.body["error"]["target"], property);
        }
    }
}

/// While the owner's operation runs, a child PUT or DELETE is refused (409), and while a child's runs, the
/// owner's PUT is.
#[tokio::test]
async fn children_wait_for_a_settled_owner_and_the_owner_for_its_children() {
    let rules = rules();
    for (child, _) in kinds_with(&rules, |k| k.owner_gate.as_ref().is_some_and(|g| g.settled)) {
        let env = Env::default().await;
        let v = child.arm.api_version;
        let owner_id = id_of(owner_of(child), &["busy"]);
        let child_id = format!("{owner_id}/{}/c1", collection(child));
        let owner_body = json!({"location": "westeurope"});
        let child_body = json!({"properties": {}});

        let creating = env.put(&owner_id, v, &owner_body).await;
        assert_eq!(creating.status, 201);
        let r = env.put(&child_id, v, &child_body).await;
        assert_refused(&env, &r, 409, "OperationNotAllowed");
        assert!(
            r.body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("(Creating)"))
        );
        wait_put(&env, &creating).await;

        let child_creating = env.put(&child_id, v, &child_body).await;
        assert_eq!(child_creating.status, 201, "{}", child_creating.body);
        let r = env.put(&owner_id, v, &owner_body).await;
        assert_refused(&env, &r, 409, "OperationNotAllowed");
        assert!(
            r.body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("(c1 - ")),
            "names the child: {}",
            r.body
        );
        wait_put(&env, &child_creating).await;

        let updating = env.put(&owner_id, v, &owner_body).await;
        assert_eq!(updating.status, 200, "{}", updating.body);
        assert_refused(&env, &env.delete(&child_id, v).await, 409, "OperationNotAllowed");
        assert_refused(
            &env,
            &env.put(&child_id, v, &child_body).await,
            409,
            "OperationNotAllowed",
        );
        wait_put(&env, &updating).await;
        let d = env.delete(&child_id, v).await;
        assert!(d.status == 202 || d.status == 200, "{}", d.body);
    }
}

/// A child's version may not exceed its owner's: refused with the rule's error code, accepted up to it.
#[tokio::test]
async fn a_child_version_may_not_exceed_its_owners() {
    let rules = rules();
    for (child, kr) in kinds_with(&rules, |k| {
        k.owner_gate.as_ref().is_some_and(|g| !g.versions.is_empty())
    }) {
        let gate = kr.owner_gate.as_ref().expect("a gate");
        for version in &gate.versions {
            let env = Env::default().await;
            let v = child.arm.api_version;
            let owner_id = id_of(owner_of(child), &["versions"]);
            let mut owner_body = json!({"location": "westeurope"});
            set_at(&mut owner_body, &version.owner_arm_path, json!("1.30.5"));
            env.sim.seed(&owner_id, v, owner_body).expect("seed the owner");
            let child_id = format!("{owner_id}/{}/np", collection(child));
            let mut body = json!({"properties": {}});
            for (newer, equal_or_older) in [("1.31.0", "1.30"), ("1.30.6", "1.30.5"), ("2.0", "1.29.9")] {
                set_at(&mut body, &version.arm_path, json!(newer));
                let r = env.put(&child_id, v, &body).await;
                assert_refused(&env, &r, 400, &version.error_code);
                let message = r.body["error"]["message"].as_str().unwrap_or_default();
                assert!(message.contains(newer) && message.contains("1.30.5"), "{message}");
                set_at(&mut body, &version.arm_path, json!(equal_or_older));
                wait_put(&env, &env.put(&child_id, v, &body).await).await;
            }
        }
    }
}

/// The owner's version the gate compares is the one that runs: an upgrade raises it when its operation succeeds,
/// and a pool may follow then (fixture: AKS's cluster and pool versions).
#[tokio::test]
async fn a_pool_follows_its_cluster_once_the_upgrade_is_done() {
    let env = Env::default().await;
    let cluster = cluster_id("rg", "up");
    let pool = pool_id("rg", "up", "np");
    let body = |version: &str| {
        json!({"location": "westeurope", "properties": {"kubernetesVersion": version,
            "agentPoolProfiles": [{"name": "system", "count": 1}]}})
    };
    let created = env.create(&cluster, V2, &body("1.30")).await;
    assert_eq!(created["properties"]["currentKubernetesVersion"], "1.30.0");
    let r = env
        .put(&pool, V2, &json!({"properties": {"orchestratorVersion": "1.31"}}))
        .await;
    assert_refused(&env, &r, 400, "NodePoolMcVersionIncompatible");

    let upgrade = env.put(&cluster, V2, &body("1.31")).await;
    assert_eq!(upgrade.status, 200, "{}", upgrade.body);
    assert_eq!(
        upgrade.body["properties"]["currentKubernetesVersion"], "1.30.0",
        "still running 1.30 while the upgrade runs"
    );
    wait_put(&env, &upgrade).await;
    let g = env.get(&cluster, V2).await.body;
    assert_eq!(g["properties"]["currentKubernetesVersion"], "1.31.0");
    let system = env.get(&pool_id("rg", "up", "system"), V2).await.body;
    assert_eq!(
        system["properties"]["currentOrchestratorVersion"], "1.30.0",
        "the pool was not upgraded"
    );

    let created = env
        .create(&pool, V2, &json!({"properties": {"orchestratorVersion": "1.31"}}))
        .await;
    assert_eq!(created["properties"]["currentOrchestratorVersion"], "1.31.0");
    let up = env
        .put(
            &pool_id("rg", "up", "system"),
            V2,
            &json!({"properties": {"count": 1, "orchestratorVersion": "1.31"}}),
        )
        .await;
    assert_eq!(up.body["properties"]["currentOrchestratorVersion"], "1.30.0");
    wait_put(&env, &up).await;
    let g = env.get(&cluster, V2).await.body;
    let versions: Vec<&Value> = g["properties"]["agentPoolProfiles"]
        .as_array()
        .expect("pools")
        .iter()
        .map(|p| &p["currentOrchestratorVersion"])
        .collect();
    assert_eq!(versions, [&json!("1.31.0"), &json!("1.31.0")]);
}

/// The rules are data: with an empty document, every request the rules refuse above is accepted, and items are
/// not child resources.
#[tokio::test]
async fn an_empty_rules_document_refuses_none_of_it() {
    let rules = rules();
    let env = Env::start(SimulatorConfig {
        retry_after_secs: 0,
        rules: Some(Rules::default()),
        ..Default::default()
    })
    .await;
    for (owner, kr) in kinds_with(&rules, |k| !k.child_owned.is_empty()) {
        let v = owner.arm.api_version;
        for co in &kr.child_owned {
            let child = aks_api::KINDS
                .iter()
                .find(|i| i.group == owner.group && i.version == owner.version && i.kind == co.child_kind)
                .expect("the child kind");
            let owner_id = id_of(owner, &[&format!("free-{v}")]);
            let mut body = json!({"location": "westeurope"});
            set_at(&mut body, &co.arm_path, json!([{co.key.as_str(): "first"}]));
            env.create(&owner_id, v, &body).await;
            let first = format!("{owner_id}/{}/first", collection(child));
            assert_eq!(env.get(&first, v).await.status, 404, "no child resource");
            set_at(
                &mut body,
                &co.arm_path,
                json!([{co.key.as_str(): "first"}, {co.key.as_str(): "second"}]),
            );
            env.create(&owner_id, v, &body).await;
        }
    }
    for (kind, kr) in kinds_with(&rules, |k| !k.immutable.is_empty()) {
        let v = kind.arm.api_version;
        for rule in &kr.immutable {
            let id = match kind.owner_kind {
                Some(_) => {
                    let owner_id = id_of(owner_of(kind), &[&format!("free-{v}")]);
                    if env.sim.resource(&owner_id).is_none() {
                        env.sim
                            .seed(&owner_id, v, json!({"location": "westeurope"}))
                            .expect("seed");
                    }
                    format!("{owner_id}/{}/imm", collection(kind))
                }
                None => id_of(kind, &[&format!("free-{}-{v}", kind.kind.to_lowercase())]),
            };
            let mut body = match kind.owner_kind {
                Some(_) => json!({"properties": {}}),
                None => json!({"location": "westeurope"}),
            };
            set_at(&mut body, &rule.arm_path, sample_value(kind, &rule.spec_path, 0));
            env.create(&id, v, &body).await;
            set_at(&mut body, &rule.arm_path, sample_value(kind, &rule.spec_path, 1));
            env.create(&id, v, &body).await;
        }
    }
    for (child, kr) in kinds_with(&rules, |k| k.owner_gate.is_some()) {
        let v = child.arm.api_version;
        let owner_id = id_of(owner_of(child), &[&format!("gate-{v}")]);
        let gate = kr.owner_gate.expect("a gate");
        let mut owner_body = json!({"location": "westeurope"});
        for version in &gate.versions {
            set_at(&mut owner_body, &version.owner_arm_path, json!("1.30.5"));
        }
        env.sim.seed(&owner_id, v, owner_body.clone()).expect("seed");
        let creating = env.put(&owner_id, v, &owner_body).await;
        assert_eq!(creating.status, 200);
        let mut body = json!({"properties": {}});
        for version in &gate.versions {
            set_at(&mut body, &version.arm_path, json!("1.31.0"));
        }
        let child_id = format!("{owner_id}/{}/c1", collection(child));
        let r = env.put(&child_id, v, &body).await;
        assert_eq!(
            r.status, 201,
            "accepted while the owner updates, newer than it: {}",
            r.body
        );
    }
}
