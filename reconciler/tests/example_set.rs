//! Issue 18 item 5: the example set `examples/aks-setup` (a resource group, a virtual network and subnet, identities,
//! a role assignment, a cluster with its pools and a federated identity credential) converges with the real
//! controllers against the simulator with `require_resource_groups`, with no manual step: every object is applied
//! at once, as `kubectl apply -k` does, and becomes `Ready` in dependency order. Then a resync costs one GET per
//! object and no write, and deleting the set leaves nothing in the simulator.
//!
//! What is applied comes from the example's `kustomization.yaml` (`resources:`), the kinds and versions from the
//! registry ([`aks_api::KINDS`]), and the dependencies from the objects themselves: owners (a parent object, an
//! extension's scope, a resource group by its Azure name), references (`{group, kind, name}` anywhere in a spec)
//! and ConfigMap values (`…FromConfig: {name, key}` written by another object's `operatorSpec.configMaps`). Only
//! [`expected_dependencies`] names kinds: the edges the example must have.
//!
//! The objects go into the test's namespace ([`NS`]), whatever the kustomization's `namespace:` says.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aks_reconciler::controller::{RunOptions, run, served_kinds};
use arm_simulator::{Exchange, SimulatorConfig};
use armgen_runtime::{KindInfo, Scope};
use common::*;
use futures::FutureExt;
use kube::api::{DeleteParams, DynamicObject, PostParams};
use serde_json::{Value, json};

/// How long the set may take to become `Ready`, and to be deleted (the simulator answers in milliseconds; the
/// reconciler's retry timers are 30 s and more, so only wake-ups make this bound).
const CONVERGE_WITHIN: Duration = Duration::from_secs(60);

/// The subscription ID the example's README asks to replace (in the role definition ID).
const PLACEHOLDER_SUBSCRIPTION: &str = "00000000-0000-0000-0000-000000000000";

fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/aks-setup")
}

/// One object of the example: its file, kind (from the registry), name and the object as applied.
#[derive(Debug, Clone)]
struct Object {
    file: String,
    info: &'static KindInfo,
    name: String,
    body: Value,
}

impl Object {
    fn label(&self) -> String {
        format!("{} {} ({})", self.info.kind, self.name, self.file)
    }

    fn spec(&self) -> &Value {
        &self.body["spec"]
    }

    /// The Azure name: `spec.azureName`, else `metadata.name`.
    fn azure_name(&self) -> &str {
        self.spec()
            .get("azureName")
            .and_then(Value::as_str)
            .unwrap_or(&self.name)
    }
}

/// The example's objects, in the order of its `kustomization.yaml`, with the README's replacement done (the
/// subscription ID) and the kind of each found in the registry at the version the reconciler serves.
fn example_objects() -> Vec<Object> {
    let dir = example_dir();
    let read = |file: &str| {
        std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(file).display()))
    };
    let kustomization: Value = serde_yaml_ng::from_str(&read("kustomization.yaml"))
        .unwrap_or_else(|e| panic!("{}/kustomization.yaml: {e}", dir.display()));
    let files: Vec<String> = kustomization["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{}/kustomization.yaml has no resources: list", dir.display()))
        .iter()
        .map(|f| f.as_str().expect("resources: are file names").to_string())
        .collect();
    let served = served_kinds(&[]);
    let mut objects = Vec::new();
    for file in files {
        let text = read(&file).replace(PLACEHOLDER_SUBSCRIPTION, SUB);
        for document in serde_yaml_ng::Deserializer::from_str(&text) {
            let body: Value = serde::Deserialize::deserialize(document).unwrap_or_else(|e| panic!("{file}: {e}"));
            if body.is_null() {
                continue;
            }
            let api_version = body["apiVersion"].as_str().unwrap_or_default();
            let kind = body["kind"].as_str().unwrap_or_default();
            let (group, version) = api_version
                .split_once('/')
                .unwrap_or_else(|| panic!("{file}: apiVersion {api_version:?} is not <group>/<version>"));
            let info = served
                .iter()
                .copied()
                .find(|k| k.kube_group == group && k.kind == kind)
                .unwrap_or_else(|| panic!("{file}: {kind}.{group} is not a kind the reconciler serves"));
            assert_eq!(
                info.version, version,
                "{file}: {kind} is served at {group}/{} (the storage version), not {api_version}",
                info.version
            );
            assert!(
                body.pointer("/metadata/namespace").is_none(),
                "{file}: the objects name no namespace (the kustomization or `kubectl -n` gives it)"
            );
            let name = body
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("{file}: no metadata.name"))
                .to_string();
            objects.push(Object {
                file: file.clone(),
                info,
                name,
                body,
            });
        }
    }
    assert!(!objects.is_empty(), "the example has no objects");
    objects
}

/// Why one object needs another.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Dependency {
    /// Index of the object that waits.
    dependent: usize,
    /// Index of the object it waits for.
    on: usize,
    why: String,
    /// The ConfigMap and key the value passes through, for a `…FromConfig` dependency.
    config_map: Option<(String, String)>,
}

/// The dependencies between the example's objects, read from their specs.
fn dependencies(objects: &[Object]) -> Vec<Dependency> {
    let find = |group: &str, kind: &str, name: &str| {
        objects
            .iter()
            .position(|o| o.info.kube_group == group && o.info.kind == kind && o.name == name)
    };
    let mut out = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        let owner = &o.spec()["owner"];
        let owner_name = owner["name"].as_str().unwrap_or_default();
        let on = match (o.info.owner_kind, o.info.arm.scope) {
            (Some(kind), _) => find(o.info.kube_group, kind, owner_name),
            (None, Scope::Extension) => find(
                owner["group"].as_str().unwrap_or_default(),
                owner["kind"].as_str().unwrap_or_default(),
                owner_name,
            ),
            // A resource group by its Azure name: the example's ResourceGroup object of that name, if any.
            (None, Scope::ResourceGroup) => objects.iter().position(|g| {
                g.info.arm.arm_type == "Microsoft.Resources/resourceGroups" && g.azure_name() == owner_name
            }),
            _ => None,
        };
        if let Some(on) = on {
            out.push(Dependency {
                dependent: i,
                on,
                why: "spec.owner".into(),
                config_map: None,
            });
        }
        let mut found = Vec::new();
        walk(o.spec(), "spec", &mut found);
        for (path, value) in found {
            if path == "spec.owner" {
                continue;
            }
            let s = |k: &str| value.get(k).and_then(Value::as_str);
            if let (Some(group), Some(kind), Some(name)) = (s("group"), s("kind"), s("name"))
                && let Some(on) = find(group, kind, name)
            {
                out.push(Dependency {
                    dependent: i,
                    on,
                    why: format!("{path} references it"),
                    config_map: None,
                });
            }
            if path.ends_with("FromConfig")
                && let (Some(map), Some(key)) = (s("name"), s("key"))
            {
                let writer = objects.iter().position(|w| {
                    w.spec()
                        .pointer("/operatorSpec/configMaps")
                        .and_then(Value::as_object)
                        .is_some_and(|exports| {
                            exports
                                .values()
                                .any(|d| d["name"].as_str() == Some(map) && d["key"].as_str() == Some(key))
                        })
                });
                let on = writer.unwrap_or_else(|| {
                    panic!(
                        "{}: {path} reads ConfigMap {map} key {key}, which no object of the example exports",
                        o.label()
                    )
                });
                out.push(Dependency {
                    dependent: i,
                    on,
                    why: format!("{path} reads the ConfigMap {map} key {key} it exports"),
                    config_map: Some((map.to_string(), key.to_string())),
                });
            }
        }
    }
    out.sort();
    out.dedup_by(|a, b| a.dependent == b.dependent && a.on == b.on);
    out
}

/// Whether `value` holds the string `s` anywhere.
fn contains_string(value: &Value, s: &str) -> bool {
    match value {
        Value::String(v) => v == s,
        Value::Array(items) => items.iter().any(|v| contains_string(v, s)),
        Value::Object(map) => map.values().any(|v| contains_string(v, s)),
        _ => false,
    }
}

/// Every JSON object in `value`, with its field path.
fn walk<'v>(value: &'v Value, path: &str, out: &mut Vec<(String, &'v Value)>) {
    match value {
        Value::Object(map) => {
            out.push((path.to_string(), value));
            for (k, v) in map {
                walk(v, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk(v, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// The edges the example must have (kinds named here only): (dependent kind, kind it waits for).
fn expected_dependencies() -> Vec<(&'static str, &'static str)> {
    vec![
        ("VirtualNetwork", "ResourceGroup"),
        ("UserAssignedIdentity", "ResourceGroup"),
        ("ManagedCluster", "ResourceGroup"),
        ("Subnet", "VirtualNetwork"),
        ("RoleAssignment", "Subnet"),
        ("RoleAssignment", "UserAssignedIdentity"),
        ("ManagedCluster", "Subnet"),
        ("ManagedCluster", "UserAssignedIdentity"),
        ("AgentPool", "ManagedCluster"),
        ("FederatedIdentityCredential", "UserAssignedIdentity"),
        ("FederatedIdentityCredential", "ManagedCluster"),
    ]
}

/// A CRD schema as a strict JSON Schema (draft 4), as the API server validates with kubectl's default strict
/// field validation: objects with `properties` (and without `x-kubernetes-preserve-unknown-fields`) refuse
/// other fields; `nullable: true` admits `null`. CEL rules are not checked. (As `tests/tests/common`.)
fn strict_json_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                let v = match (k.as_str(), v) {
                    ("properties", Value::Object(props)) => Value::Object(
                        props
                            .iter()
                            .map(|(name, p)| (name.clone(), strict_json_schema(p)))
                            .collect(),
                    ),
                    ("items" | "additionalProperties", v) => strict_json_schema(v),
                    _ => v.clone(),
                };
                out.insert(k.clone(), v);
            }
            let preserve = m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
            if m.contains_key("properties") && !m.contains_key("additionalProperties") && !preserve {
                out.insert("additionalProperties".into(), Value::Bool(false));
            }
            if let (Some(Value::Bool(true)), Some(Value::String(t))) = (m.get("nullable"), m.get("type")) {
                out.insert("type".into(), json!([t, "null"]));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// The errors of `object` against its kind's CRD schema at its version.
fn schema_errors(object: &Object) -> Vec<String> {
    let crd = aks_api::custom_resource_definition(object.info.kube_group, object.info.kind)
        .expect("a CRD for every kind")
        .expect("the CRD parses");
    let crd = serde_json::to_value(crd).expect("CRD as JSON");
    let schema = crd["spec"]["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["name"] == object.info.version))
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
        .expect("the CRD has the version");
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .build(&strict_json_schema(&schema))
        .expect("the CRD schema is a JSON Schema");
    let mut instance = object.body.clone();
    instance["metadata"]["namespace"] = json!(NS);
    validator
        .iter_errors(&instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// The real controllers of every served kind, watching the test namespace, until [`Controllers::stop`].
struct Controllers {
    stop: tokio::sync::oneshot::Sender<()>,
    running: tokio::task::JoinHandle<()>,
}

impl Controllers {
    fn start(h: &Harness) -> Self {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let options = RunOptions {
            namespace: Some(NS.into()),
            concurrency: 4,
            shutdown: Some(stopped.map(|_| ()).boxed()),
        };
        let running = tokio::spawn(run(h.shared.clone(), served_kinds(&[]), options));
        Controllers { stop, running }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(10), self.running)
            .await
            .expect("controllers stop")
            .expect("no panic");
    }
}

/// The path of an ARM URL, lower case (ARM IDs are case-insensitive).
fn path_of(url: &str) -> String {
    let path = url.split('?').next().unwrap_or_default();
    let path = path.find("/subscriptions/").map_or(path, |i| &path[i..]);
    path.to_ascii_lowercase()
}

/// Index in `traffic` of the first exchange at `id` matching `pick`.
fn first(traffic: &[Exchange], id: &str, pick: impl Fn(&Exchange) -> bool) -> Option<usize> {
    let id = id.to_ascii_lowercase();
    traffic.iter().position(|e| path_of(&e.request.url) == id && pick(e))
}

fn describe(e: &Exchange) -> String {
    format!(
        "{} ms {} {} → {}",
        e.at_ms,
        e.request.method,
        e.request.url.split('?').next().unwrap_or_default(),
        e.response.status_code
    )
}

/// One reconcile of every object (a resync, the controllers stopped): asserts one ARM GET per object and no other
/// ARM request; returns the API server writes (`METHOD path`).
async fn resync_pass(h: &Harness, objects: &[Object], ids: &[String]) -> Vec<String> {
    h.clear_traffic();
    h.api.clear_requests();
    for o in objects {
        h.reconcile_in(o.info.kind, NS, &o.name).await;
        let ready = h.ready_in(o.info.kind, NS, &o.name).await;
        assert_eq!(ready.0, "True", "{} after a resync: {ready:?}", o.label());
    }
    let traffic = h.sim.traffic();
    let at = |e: &Exchange, id: &str| path_of(&e.request.url) == id.to_ascii_lowercase();
    let mut costs = Vec::new();
    for (o, id) in objects.iter().zip(ids) {
        let gets = traffic
            .iter()
            .filter(|e| e.request.method == "GET" && at(e, id))
            .count();
        if gets != 1 {
            costs.push(format!("{}: {gets} GETs of {id}", o.label()));
        }
    }
    let other: Vec<String> = traffic
        .iter()
        .filter(|e| e.request.method != "GET" || !ids.iter().any(|id| at(e, id)))
        .map(describe)
        .collect();
    assert!(
        costs.is_empty() && other.is_empty(),
        "a resync is one GET per object ({} objects, {} requests):\n  {}\nother requests:\n  {}",
        objects.len(),
        traffic.len(),
        costs.join("\n  "),
        other.join("\n  ")
    );
    h.api
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_set_converges_in_dependency_order_stays_in_sync_and_deletes_cleanly() {
    let objects = example_objects();

    // Valid against the CRDs as the API server would check them (unknown fields refused, not pruned).
    let invalid: Vec<String> = objects
        .iter()
        .flat_map(|o| schema_errors(o).into_iter().map(move |e| format!("{}: {e}", o.label())))
        .collect();
    assert!(
        invalid.is_empty(),
        "the example does not match the CRDs:\n{}",
        invalid.join("\n")
    );

    let deps = dependencies(&objects);
    let has = |dependent: &str, on: &str| {
        deps.iter()
            .any(|d| objects[d.dependent].info.kind == dependent && objects[d.on].info.kind == on)
    };
    let missing: Vec<_> = expected_dependencies()
        .into_iter()
        .filter(|(a, b)| !has(a, b))
        .collect();
    assert!(
        missing.is_empty(),
        "the example lacks these dependencies (dependent, on): {missing:?}"
    );

    let h = Harness::with(
        SimulatorConfig {
            require_resource_groups: true,
            ..sim_config()
        },
        None,
    )
    .await;
    let controllers = Controllers::start(&h);

    // Everything at once, as `kubectl apply -k` does.
    let start = Instant::now();
    for o in &objects {
        let mut body = o.body.clone();
        body["metadata"]["namespace"] = json!(NS);
        let object: DynamicObject = serde_json::from_value(body).unwrap_or_else(|e| panic!("{}: {e}", o.label()));
        h.api_in(o.info.kind, NS)
            .create(&PostParams::default(), &object)
            .await
            .unwrap_or_else(|e| panic!("creating {}: {e}", o.label()));
    }

    // Every object Ready, each one's first time seen Ready recorded.
    let mut ready_at: Vec<Option<Duration>> = vec![None; objects.len()];
    loop {
        for (i, o) in objects.iter().enumerate() {
            if ready_at[i].is_none() && h.ready_in(o.info.kind, NS, &o.name).await.0 == "True" {
                ready_at[i] = Some(start.elapsed());
            }
        }
        if ready_at.iter().all(Option::is_some) {
            break;
        }
        if start.elapsed() > CONVERGE_WITHIN {
            let mut report = Vec::new();
            for (i, o) in objects.iter().enumerate() {
                if ready_at[i].is_none() {
                    let (status, reason, message) = h.ready_in(o.info.kind, NS, &o.name).await;
                    report.push(format!("  {}: Ready={status:?} {reason}: {message}", o.label()));
                }
            }
            let refused: Vec<String> = h
                .sim
                .traffic()
                .iter()
                .filter(|e| e.response.status_code >= 400)
                .map(describe)
                .collect();
            panic!(
                "not Ready within {CONVERGE_WITHIN:?}:\n{}\nrefused ARM requests:\n  {}",
                report.join("\n"),
                refused.join("\n  ")
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let converged = start.elapsed();
    let ids: Vec<String> = {
        let mut ids = Vec::new();
        for o in &objects {
            let object = h.object_in(o.info.kind, NS, &o.name).await.expect("exists");
            let id = object
                .data
                .pointer("/status/id")
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("{}: Ready without status.id", o.label()));
            assert!(
                h.sim.resource(id).is_some(),
                "{}: {id} is not in the simulator",
                o.label()
            );
            ids.push(id.to_string());
        }
        ids
    };
    let traffic = h.sim.traffic();
    eprintln!(
        "{} objects Ready in {converged:?}, {} ARM exchanges",
        objects.len(),
        traffic.len()
    );
    for (i, o) in objects.iter().enumerate() {
        eprintln!("  {:>6} ms  {}", ready_at[i].unwrap_or_default().as_millis(), o.label());
    }

    // Dependency order, in the simulator's traffic: nothing is written for an object before what it needs exists
    // in Azure (its first successful PUT); an object that is never PUT (the system pool, created with the
    // cluster) is not even read before. (Ready times, seen by polling, are printed above; exports are written
    // just before their writer's Ready status, so they are no exact order.)
    let mut out_of_order = Vec::new();
    for d in &deps {
        let (a, b) = (&objects[d.dependent], &objects[d.on]);
        let created = first(&traffic, &ids[d.on], |e| {
            e.request.method == "PUT" && (200..300).contains(&e.response.status_code)
        })
        .unwrap_or_else(|| panic!("{}: no successful PUT of {}", b.label(), ids[d.on]));
        let touched = first(&traffic, &ids[d.dependent], |e| e.request.method == "PUT")
            .or_else(|| first(&traffic, &ids[d.dependent], |_| true));
        match touched {
            Some(t) if t < created => out_of_order.push(format!(
                "{} ({}) before {} was created ({}): {}",
                describe(&traffic[t]),
                a.label(),
                b.label(),
                describe(&traffic[created]),
                d.why
            )),
            None => out_of_order.push(format!("{}: no request at {}", a.label(), ids[d.dependent])),
            _ => {}
        }
        // A value from a ConfigMap export is there only once its writer is Ready, which needs the writer's Azure
        // resource to have succeeded: the reader's first write comes after a GET that saw that.
        if d.config_map.is_some() {
            let succeeded = first(&traffic, &ids[d.on], |e| {
                e.request.method == "GET"
                    && e.response.status_code == 200
                    && e.response.body.as_ref().is_some_and(|b| {
                        b.pointer("/properties/provisioningState")
                            .is_none_or(|s| s == "Succeeded")
                    })
            });
            let written = first(&traffic, &ids[d.dependent], |e| e.request.method == "PUT");
            if !matches!((succeeded, written), (Some(s), Some(w)) if s < w) {
                out_of_order.push(format!(
                    "{} written ({:?}) before a GET of {} saw it succeeded ({:?}): {}",
                    a.label(),
                    written.map(|i| describe(&traffic[i])),
                    b.label(),
                    succeeded.map(|i| describe(&traffic[i])),
                    d.why
                ));
            }
        }
    }
    assert!(
        out_of_order.is_empty(),
        "out of dependency order:\n  {}",
        out_of_order.join("\n  ")
    );
    let refused: Vec<String> = traffic
        .iter()
        .filter(|e| e.response.status_code >= 400 && !(e.request.method == "GET" && e.response.status_code == 404))
        .map(describe)
        .collect();
    assert!(
        refused.is_empty(),
        "no request refused while converging:\n  {}",
        refused.join("\n  ")
    );

    // The values passed through ConfigMaps reached Azure: the exported value is in the reader's resource.
    for d in &deps {
        let Some((map, key)) = &d.config_map else {
            continue;
        };
        let value = h
            .core("configmaps", map)
            .and_then(|c| {
                c.pointer(&format!("/data/{key}"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_else(|| panic!("ConfigMap {map} has no key {key}"));
        assert!(!value.is_empty(), "ConfigMap {map} key {key} is empty");
        let stored = h.sim.resource(&ids[d.dependent]).expect("stored");
        assert!(
            contains_string(&stored, &value),
            "{}: {} ({value:?}) is not in its Azure resource: {stored}",
            objects[d.dependent].label(),
            d.why
        );
    }

    // Idle and in sync: the controllers send nothing.
    tokio::time::sleep(Duration::from_millis(500)).await;
    h.clear_traffic();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle: Vec<String> = h.sim.traffic().iter().map(describe).collect();
    assert!(idle.is_empty(), "idle and in sync, yet:\n  {}", idle.join("\n  "));
    controllers.stop().await;

    // A resync pass: one GET per object and no write to Azure. The first may bring a status up to date (the
    // cluster's status lists the pools as its last reconcile saw them, before the AgentPool objects added theirs;
    // nothing wakes it for that); the second writes nothing to the API server either.
    let writes = resync_pass(&h, &objects, &ids).await;
    let not_status: Vec<_> = writes.iter().filter(|w| !w.ends_with("/status")).collect();
    assert!(
        not_status.is_empty(),
        "a resync writes no more than a status: {writes:?}"
    );
    if !writes.is_empty() {
        eprintln!("the first resync brought statuses up to date: {writes:?}");
    }
    let writes = resync_pass(&h, &objects, &ids).await;
    assert!(
        writes.is_empty(),
        "a second resync writes nothing to the API server: {writes:?}"
    );

    // Deleting the set (everything at once, as `kubectl delete -k`) leaves nothing in Azure.
    let controllers = Controllers::start(&h);
    let start = Instant::now();
    for o in &objects {
        h.api_in(o.info.kind, NS)
            .delete(&o.name, &DeleteParams::default())
            .await
            .unwrap_or_else(|e| panic!("deleting {}: {e}", o.label()));
    }
    loop {
        let mut left = Vec::new();
        for o in &objects {
            if h.object_in(o.info.kind, NS, &o.name).await.is_some() {
                left.push(o);
            }
        }
        if left.is_empty() {
            break;
        }
        if start.elapsed() > CONVERGE_WITHIN {
            let mut report = Vec::new();
            for o in left {
                let (status, reason, message) = h.ready_in(o.info.kind, NS, &o.name).await;
                report.push(format!("  {}: Ready={status:?} {reason}: {message}", o.label()));
            }
            panic!("not deleted within {CONVERGE_WITHIN:?}:\n{}", report.join("\n"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!("deleted in {:?}", start.elapsed());
    controllers.stop().await;
    let left: Vec<String> = h
        .sim
        .resources()
        .iter()
        .map(|r| r["id"].as_str().unwrap_or("?").to_string())
        .collect();
    assert!(left.is_empty(), "the simulator still holds:\n  {}", left.join("\n  "));
    let config_maps: BTreeMap<String, Value> = h
        .api
        .list("v1", "configmaps")
        .into_iter()
        .filter(|c| c.pointer("/metadata/namespace") == Some(&json!(NS)))
        .map(|c| (c["metadata"]["name"].as_str().unwrap_or_default().to_string(), c))
        .collect();
    assert!(
        config_maps.is_empty(),
        "the exported ConfigMaps go with their objects: {:?}",
        config_maps.keys().collect::<Vec<_>>()
    );
}
