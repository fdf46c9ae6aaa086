//! The Cluster API contracts (reconciler/src/capi.rs; docs/cluster-api.md), tested against the contract documents
//! only: Cluster API's own controllers cannot run here. The objects come from the example ClusterClass
//! (`examples/cluster-api`): [`topology`] does what the topology controller does with it (docs/cluster-api.md,
//! section 4: clone each template's `spec.template`, apply the class's patches with the Cluster's variables, label
//! and own the objects, write the control plane's `spec.version`), and the MachinePools are created as Cluster API
//! creates them. The reconciler then runs against the ARM simulator. Which kinds play which role comes from the
//! registry (`aks_api::CLUSTER_API`), never from this file.
//!
//! Each test cites the contract page and section (https://cluster-api.sigs.k8s.io/developer/providers/contracts/…).

mod common;

use std::path::Path;

use armgen_runtime::capi::{ContractInfo, Role};
use common::*;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const CAPI: &str = "cluster.x-k8s.io/v1beta2";

/// The served kind playing `role`, from the registry.
fn kind_of(h: &Harness, role: Role) -> &'static ContractInfo {
    let found: Vec<&ContractInfo> = aks_api::CLUSTER_API
        .iter()
        .filter(|c| c.role == role)
        .filter(|c| {
            let info = h.ctx(c.kind).info;
            info.group == c.group && info.version == c.version
        })
        .collect();
    assert_eq!(found.len(), 1, "one served kind plays {role:?}: {found:?}");
    found[0]
}

/// The documents of a YAML file of the example.
fn example(file: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/cluster-api")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|d| {
            let v: serde_yaml_ng::Value = serde::Deserialize::deserialize(d).expect("a YAML document");
            serde_json::to_value(v).expect("JSON")
        })
        .collect()
}

fn owner_reference(kind: &str, name: &str, uid: &str) -> Value {
    json!({"apiVersion": CAPI, "kind": kind, "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true})
}

/// What the example's Cluster is made of once the topology controller ran: the Cluster's name, the control plane's
/// name, and per machine pool (MachinePool name, agent pool object name, replicas).
struct Topology {
    cluster: String,
    plane: String,
    infra: String,
    pools: Vec<(String, String, i64)>,
}

/// A variable's value: the Cluster's (or a machine pool's override), else the class's default; `builtin.*` as the
/// topology controller defines them; a dotted path reads into an object variable.
fn variable(name: &str, values: &[(String, Value)], class: &Value, builtin: &Value) -> Value {
    if let Some(rest) = name.strip_prefix("builtin.") {
        let pointer = format!("/{}", rest.replace('.', "/"));
        return builtin
            .pointer(&pointer)
            .cloned()
            .unwrap_or_else(|| panic!("builtin {name}"));
    }
    let (head, tail) = name.split_once('.').map_or((name, None), |(h, t)| (h, Some(t)));
    let value = values
        .iter()
        .rev()
        .find(|(n, _)| n == head)
        .map(|(_, v)| v.clone())
        .or_else(|| {
            class["spec"]["variables"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|v| v["name"] == head)
                .and_then(|v| v.pointer("/schema/openAPIV3Schema/default").cloned())
        })
        .unwrap_or_else(|| panic!("variable {head}: no value and no default"));
    match tail {
        Some(t) => value
            .pointer(&format!("/{}", t.replace('.', "/")))
            .cloned()
            .unwrap_or(Value::Null),
        None => value,
    }
}

/// `spec.template` of `template` with the class's patches for `slot` applied (`slot`: `controlPlane`,
/// `infrastructureCluster`, or a machine pool class name).
fn patched(template: &Value, class: &Value, slot: &str, values: &[(String, Value)], builtin: &Value) -> Value {
    let mut doc = json!({"spec": {"template": template["spec"]["template"].clone()}});
    for patch in class["spec"]["patches"].as_array().into_iter().flatten() {
        for d in patch["definitions"].as_array().into_iter().flatten() {
            let selector = &d["selector"];
            let matches = selector["kind"] == template["kind"]
                && selector["apiVersion"] == template["apiVersion"]
                && (selector["matchResources"][slot] == true
                    || selector["matchResources"]["machinePoolClass"]["names"]
                        .as_array()
                        .is_some_and(|n| n.iter().any(|n| n == slot)));
            if !matches {
                continue;
            }
            for op in d["jsonPatches"].as_array().into_iter().flatten() {
                let value = if let Some(var) = op["valueFrom"]["variable"].as_str() {
                    variable(var, values, class, builtin)
                } else if let Some(t) = op["valueFrom"]["template"].as_str() {
                    // `{{ .name }}` of a variable (or builtin), the result read as YAML.
                    let mut text = t.to_string();
                    while let Some(open) = text.find("{{ .") {
                        let close = text[open..].find(" }}").map(|c| open + c).expect("a closed template");
                        let name = text[open + 4..close].to_string();
                        let v = variable(&name, values, class, builtin);
                        text.replace_range(open..close + 3, v.as_str().unwrap_or_default());
                    }
                    serde_yaml_ng::from_str(&text).expect("the template renders YAML")
                } else {
                    op["value"].clone()
                };
                let one = json!([{"op": op["op"], "path": op["path"], "value": value}]);
                let ops: json_patch::Patch = serde_json::from_value(one).expect("a JSON patch");
                json_patch::patch(&mut doc, &ops).unwrap_or_else(|e| panic!("{}: {e}", op["path"]));
            }
        }
    }
    doc["spec"]["template"].clone()
}

/// The example's Cluster, ClusterClass and templates, turned into objects as Cluster API's controllers do, created
/// in the fake API server and reconciled until Ready.
async fn setup(h: &Harness) -> Topology {
    // Cluster API's CRDs (written minimal: tests/data/cluster-api-crds.yaml), installed as `kubectl apply` would.
    let crds: Api<CustomResourceDefinition> = Api::all(h.api.client());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cluster-api-crds.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let crd: Option<CustomResourceDefinition> = serde::Deserialize::deserialize(document).expect("a CRD");
        if let Some(crd) = crd {
            crds.create(&PostParams::default(), &crd)
                .await
                .expect("the CRD is installed");
        }
    }
    let class = example("clusterclass.yaml").remove(0);
    let templates = example("templates.yaml");
    let mut cluster = example("cluster.yaml").remove(0);
    let name = cluster["metadata"]["name"].as_str().expect("a name").to_string();
    cluster["metadata"]["namespace"] = json!(NS);
    let template = |slot: &str| -> Value {
        let r = &class.pointer(slot).expect("a template ref")["templateRef"];
        templates
            .iter()
            .find(|t| {
                t["kind"] == r["kind"] && t["metadata"]["name"] == r["name"] && t["apiVersion"] == r["apiVersion"]
            })
            .cloned()
            .unwrap_or_else(|| panic!("template {r}"))
    };
    let plane_template = template("/spec/controlPlane");
    let infra_template = template("/spec/infrastructure");
    let plane = kind_of(h, Role::ControlPlane);
    let infra = kind_of(h, Role::InfrastructureCluster);
    let pool = kind_of(h, Role::MachinePool);
    // The templates are ours: the served kinds, of the versions the registry serves.
    for (t, c) in [(&plane_template, plane), (&infra_template, infra)] {
        assert_eq!(t["kind"], format!("{}Template", c.kind));
        assert_eq!(t["apiVersion"], h.ctx(c.kind).info.api_version());
    }
    let plane_name = name.clone(); // the class's naming template: `{{ .cluster.name }}`
    let infra_name = format!("{name}-infra");
    cluster["spec"]["controlPlaneRef"] =
        json!({"apiGroup": h.ctx(plane.kind).info.kube_group, "kind": plane.kind, "name": plane_name});
    cluster["spec"]["infrastructureRef"] =
        json!({"apiGroup": h.ctx(infra.kind).info.kube_group, "kind": infra.kind, "name": infra_name});
    let cluster = h.api.insert(cluster);
    let uid = cluster["metadata"]["uid"].as_str().unwrap_or_default().to_string();
    let values: Vec<(String, Value)> = cluster["spec"]["topology"]["variables"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| (v["name"].as_str().unwrap_or_default().to_string(), v["value"].clone()))
        .collect();
    let labels = |extra: &Value| {
        let mut l = json!({"cluster.x-k8s.io/cluster-name": name, "topology.cluster.x-k8s.io/owned": ""});
        if let (Some(l), Some(e)) = (l.as_object_mut(), extra.as_object()) {
            l.extend(e.clone());
        }
        l
    };
    let object = |c: &ContractInfo, object_name: &str, template: &Value, owner: Value| {
        json!({
            "apiVersion": h.ctx(c.kind).info.api_version(), "kind": c.kind,
            "metadata": {"name": object_name, "namespace": NS,
                         "labels": labels(&template["metadata"]["labels"]),
                         "annotations": template["metadata"]["annotations"].clone(),
                         "ownerReferences": [owner]},
            "spec": template["spec"].clone(),
        })
    };
    let builtin = json!({"cluster": {"name": name}});
    let infra_t = patched(&infra_template, &class, "infrastructureCluster", &values, &builtin);
    h.api.insert(object(
        infra,
        &infra_name,
        &infra_t,
        owner_reference("Cluster", &name, &uid),
    ));
    let mut plane_t = patched(&plane_template, &class, "controlPlane", &values, &builtin);
    // The topology's version (control-plane contract, "ControlPlane: version").
    plane_t["spec"]["version"] = cluster["spec"]["topology"]["version"].clone();
    h.api.insert(object(
        plane,
        &plane_name,
        &plane_t,
        owner_reference("Cluster", &name, &uid),
    ));
    let mut pools = Vec::new();
    for mp in cluster["spec"]["topology"]["workers"]["machinePools"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let topology_name = mp["name"].as_str().expect("a name");
        let class_name = mp["class"].as_str().expect("a class");
        let pool_class = class["spec"]["workers"]["machinePools"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["class"] == class_name)
            .expect("the class");
        let r = &pool_class["infrastructure"]["templateRef"];
        let pool_template = templates
            .iter()
            .find(|t| t["kind"] == r["kind"] && t["metadata"]["name"] == r["name"])
            .expect("the pool template");
        assert_eq!(pool_template["kind"], format!("{}Template", pool.kind));
        let mut pool_values = values.clone();
        pool_values.extend(
            mp["variables"]["overrides"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| (v["name"].as_str().unwrap_or_default().to_string(), v["value"].clone())),
        );
        let replicas = mp["replicas"].as_i64().expect("replicas");
        let builtin = json!({"cluster": {"name": name},
                             "machinePool": {"topologyName": topology_name, "class": class_name, "replicas": replicas}});
        let pool_t = patched(pool_template, &class, class_name, &pool_values, &builtin);
        let (mp_name, ap_name) = (
            format!("{name}-{topology_name}"),
            format!("{name}-{topology_name}-infra"),
        );
        let created = h.api.insert(json!({
            "apiVersion": CAPI, "kind": "MachinePool",
            "metadata": {"name": mp_name, "namespace": NS, "labels": labels(&json!({})),
                         "ownerReferences": [owner_reference("Cluster", &name, &uid)]},
            "spec": {"clusterName": name, "replicas": replicas, "template": {"spec": {
                "clusterName": name, "version": cluster["spec"]["topology"]["version"].clone(),
                "infrastructureRef": {"apiGroup": h.ctx(pool.kind).info.kube_group, "kind": pool.kind, "name": ap_name},
            }}},
        }));
        let mp_uid = created["metadata"]["uid"].as_str().unwrap_or_default().to_string();
        h.api.insert(object(
            pool,
            &ap_name,
            &pool_t,
            owner_reference("MachinePool", &mp_name, &mp_uid),
        ));
        pools.push((mp_name, ap_name, replicas));
    }
    let t = Topology {
        cluster: name,
        plane: plane_name,
        infra: infra_name,
        pools,
    };
    converge_all(h, &t).await;
    t
}

/// Reconciles the infrastructure cluster, the control plane and the pools until each is Ready with its contract
/// fields settled.
async fn converge_all(h: &Harness, t: &Topology) {
    let infra = kind_of(h, Role::InfrastructureCluster).kind;
    let plane = kind_of(h, Role::ControlPlane).kind;
    let pool = kind_of(h, Role::MachinePool).kind;
    for _ in 0..3 {
        h.converge(infra, &t.infra).await;
        h.converge(plane, &t.plane).await;
        for (_, agent_pool, _) in &t.pools {
            h.converge(pool, agent_pool).await;
        }
    }
}

async fn data(h: &Harness, kind: &str, name: &str) -> Value {
    h.object(kind, name).await.map(|o| o.data).unwrap_or(Value::Null)
}

/// Writes to Azure (everything but GET) since the simulator's traffic was last cleared.
fn arm_writes(h: &Harness) -> Vec<String> {
    h.sim
        .traffic()
        .iter()
        .filter(|e| e.request.method != "GET")
        .map(|e| format!("{} {}", e.request.method, e.request.url))
        .collect()
}

/// control-plane contract: "ControlPlane: endpoint", "ControlPlane: version", "ControlPlane: initialization
/// completed", "Cluster kubeconfig management"; infra-machinepool contract: "InfraMachinePool: providerIDList",
/// "InfraMachinePool: replicas", "InfraMachinePool: initialization completed"; and each contract's "APIVersion field
/// value" (the CRD labels).
#[tokio::test]
async fn a_cluster_of_one_control_plane_and_two_machine_pools_converges_with_every_contract_field() {
    let h = Harness::new().await;
    let t = setup(&h).await;
    let plane = kind_of(&h, Role::ControlPlane);
    let pool = kind_of(&h, Role::MachinePool);

    // infra-cluster contract, "InfraCluster: initialization completed": the resource group.
    let infra = kind_of(&h, Role::InfrastructureCluster);
    let rg = data(&h, infra.kind, &t.infra).await;
    assert_eq!(rg["status"]["initialization"], json!({"provisioned": true}), "{rg}");
    assert_eq!(rg["status"]["ready"], true);

    let cp = data(&h, plane.kind, &t.plane).await;
    // The class's variables reached AKS properties, among them one CAPZ's AzureManagedControlPlane does not
    // expose (nodeProvisioningProfile: node auto-provisioning); the template's labels reached the object.
    assert_eq!(cp["spec"]["nodeProvisioningProfile"]["mode"], "Auto", "{}", cp["spec"]);
    assert_eq!(cp["spec"]["networkProfile"]["networkPlugin"], "azure");
    assert_eq!(
        cp["status"]["nodeProvisioningProfile"]["mode"], "Auto",
        "{}",
        cp["status"]
    );
    let labels = h
        .object(plane.kind, &t.plane)
        .await
        .map(|o| o.metadata.labels.unwrap_or_default());
    assert_eq!(labels.and_then(|l| l.get("team").cloned()).as_deref(), Some("platform"));
    let fqdn = cp["status"]["fqdn"].as_str().expect("the cluster's FQDN in status");
    assert_eq!(
        cp["spec"]["controlPlaneEndpoint"],
        json!({"host": fqdn, "port": 443}),
        "{cp}"
    );
    // The topology's version, without its `v`, is what the cluster was created with.
    let field = plane.version_spec_field.expect("a version field");
    assert_eq!(cp["spec"][field], "1.31");
    let running = cp["status"]["currentKubernetesVersion"]
        .as_str()
        .expect("running version");
    assert_eq!(cp["status"]["version"], format!("v{running}"));
    assert_eq!(cp["status"]["initialization"], json!({"controlPlaneInitialized": true}));
    assert_eq!(
        (&cp["status"]["initialized"], &cp["status"]["ready"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(cp["status"]["externalManagedControlPlane"], true);
    // control-plane contract (v1beta2), "ControlPlane: conditions": `Available`, beside `Ready`.
    let available = cp["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Available"))
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(available["status"], "True", "{}", cp["status"]["conditions"]);

    // The kubeconfig Secret as Cluster API reads it.
    let secret = h
        .core("secrets", &format!("{}-kubeconfig", t.cluster))
        .expect("the kubeconfig Secret");
    assert_eq!(secret["type"], "cluster.x-k8s.io/secret");
    assert_eq!(
        secret["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"],
        t.cluster.as_str()
    );
    let value = secret["data"]["value"].as_str().expect("data.value");
    let text =
        String::from_utf8(base64::Engine::decode(&base64::engine::general_purpose::STANDARD, value).expect("base64"))
            .expect("utf-8");
    assert!(
        text.contains("apiVersion: v1") && text.contains("clusters:"),
        "a kubeconfig: {text}"
    );
    assert_eq!(secret["metadata"]["ownerReferences"][0]["name"], t.plane.as_str());

    for (_, agent_pool, replicas) in &t.pools {
        let (agent_pool, replicas) = (agent_pool.as_str(), *replicas);
        let ap = data(&h, pool.kind, agent_pool).await;
        assert_eq!(ap["status"]["replicas"], replicas, "{agent_pool}");
        assert_eq!(
            ap["spec"][pool.replicas_spec_field.expect("field")],
            replicas,
            "{agent_pool}"
        );
        let ids = ap["spec"]["providerIDList"].as_array().expect("providerIDList");
        let machines = ap["status"]["machines"].as_array().expect("machines view");
        assert_eq!(ids.len(), machines.len(), "{agent_pool}: one ID per machine");
        assert_eq!(ids.len() as i64, replicas, "{agent_pool}: complete");
        for id in ids {
            let id = id.as_str().unwrap_or_default();
            assert!(id.starts_with("azure:///subscriptions/"), "{id}");
            assert!(
                id.contains("/virtualMachines/") || id.contains("/virtualMachineScaleSets/"),
                "{id}"
            );
        }
        assert_eq!(ap["status"]["initialization"], json!({"provisioned": true}));
        assert_eq!(ap["status"]["ready"], true);
    }

    // The CRDs name the versions implementing the contracts, the storage version last.
    for c in [plane, pool] {
        let info = h.ctx(c.kind).info;
        let crd = aks_api::custom_resource_definition(info.kube_group, c.kind)
            .expect("the kind's CRD")
            .expect("parses");
        let labels = crd.metadata.labels.unwrap_or_default();
        let label = labels
            .get("cluster.x-k8s.io/v1beta2")
            .map(String::as_str)
            .unwrap_or_default();
        assert_eq!(labels.get("cluster.x-k8s.io/v1beta1").map(String::as_str), Some(label));
        let storage = aks_api::KINDS
            .iter()
            .find(|k| k.kind == c.kind && k.storage)
            .map(|k| k.version)
            .expect("a storage version");
        assert!(label.split('_').next_back() == Some(storage), "{}: {label}", c.kind);
        assert!(label.split('_').any(|v| v == info.version), "{}: {label}", c.kind);
    }
}

/// infra-machinepool contract, "InfraMachinePool: replicas": the MachinePool's `spec.replicas` (which its scale
/// subresource writes) is the pool's size. One pool PUT; nothing sent for the cluster.
#[tokio::test]
async fn scaling_a_machine_pool_is_one_pool_put_and_no_cluster_put() {
    let h = Harness::new().await;
    let t = setup(&h).await;
    let plane = kind_of(&h, Role::ControlPlane).kind;
    let pool = kind_of(&h, Role::MachinePool);
    let (machine_pool, agent_pool) = (t.pools[0].0.as_str(), t.pools[0].1.as_str());
    h.clear_traffic();
    // `kubectl scale machinepool … --replicas 4`: through the MachinePool's scale subresource.
    let api: Api<kube::api::DynamicObject> = Api::namespaced_with(
        h.api.client(),
        NS,
        &kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", "MachinePool"),
            "machinepools",
        ),
    );
    api.patch_scale(
        machine_pool,
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 4}})),
    )
    .await
    .expect("scale");
    let scale = api.get_scale(machine_pool).await.expect("the scale subresource");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(4));
    converge_all(&h, &t).await;
    let ap = data(&h, pool.kind, agent_pool).await;
    assert_eq!(ap["spec"][pool.replicas_spec_field.expect("field")], 4);
    assert_eq!(ap["status"]["replicas"], 4);
    assert_eq!(ap["spec"]["providerIDList"].as_array().map(Vec::len), Some(4), "{ap}");
    let puts: Vec<String> = arm_writes(&h).into_iter().filter(|w| w.starts_with("PUT ")).collect();
    let pool_puts = puts
        .iter()
        .filter(|w| w.to_ascii_lowercase().contains("/agentpools/"))
        .count();
    assert_eq!(pool_puts, 1, "{puts:?}");
    assert_eq!(puts.len(), 1, "no cluster PUT: {puts:?}");
    h.converge(plane, &t.plane).await;
}

/// The contracts' "Pausing" sections: the `cluster.x-k8s.io/paused` annotation (on the object or its Cluster) and
/// the Cluster's `spec.paused` stop every write for the cluster's objects; removing them resumes.
#[tokio::test]
async fn a_paused_cluster_is_not_written_until_it_is_resumed() {
    let h = Harness::new().await;
    let t = setup(&h).await;
    let plane = kind_of(&h, Role::ControlPlane).kind;
    let pool = kind_of(&h, Role::MachinePool);
    let clusters: Api<kube::api::DynamicObject> = Api::namespaced_with(
        h.api.client(),
        NS,
        &kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", "Cluster"),
            "clusters",
        ),
    );
    let pauses = [
        json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}}),
        json!({"spec": {"paused": true}}),
    ];
    let resumes = [
        json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": null}}}),
        json!({"spec": {"paused": false}}),
    ];
    let (machine_pool, agent_pool, replicas) = (t.pools[1].0.as_str(), t.pools[1].1.as_str(), t.pools[1].2);
    let machine_pools: Api<kube::api::DynamicObject> = Api::namespaced_with(
        h.api.client(),
        NS,
        &kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", "MachinePool"),
            "machinepools",
        ),
    );
    for (i, (pause, resume)) in pauses.iter().zip(&resumes).enumerate() {
        clusters
            .patch(&t.cluster, &PatchParams::default(), &Patch::Merge(pause))
            .await
            .expect("pause");
        // A change while paused: the MachinePool scaled.
        let wanted = replicas + 1 + i as i64;
        machine_pools
            .patch(
                machine_pool,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": wanted}})),
            )
            .await
            .expect("scale");
        h.clear_traffic();
        h.api.clear_requests();
        for _ in 0..3 {
            h.reconcile(plane, &t.plane).await;
            h.reconcile(pool.kind, agent_pool).await;
        }
        assert_eq!(arm_writes(&h), Vec::<String>::new(), "paused: nothing sent to Azure");
        assert_eq!(
            h.kube_writes(),
            Vec::<String>::new(),
            "paused: nothing written to the API server"
        );
        clusters
            .patch(&t.cluster, &PatchParams::default(), &Patch::Merge(resume))
            .await
            .expect("resume");
        converge_all(&h, &t).await;
        let puts: Vec<String> = arm_writes(&h).into_iter().filter(|w| w.starts_with("PUT ")).collect();
        assert_eq!(puts.len(), 1, "resumed: the pool's change is sent: {puts:?}");
        let ap = data(&h, pool.kind, agent_pool).await;
        assert_eq!(ap["status"]["replicas"], wanted);
        let (status, reason, message) = h.ready(pool.kind, agent_pool).await;
        assert_eq!(status, "True", "{reason}: {message}");
    }
    // The object's own annotation pauses it too.
    let pools: Api<kube::api::DynamicObject> = h.api_in(pool.kind, NS);
    pools
        .patch(
            agent_pool,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}})),
        )
        .await
        .expect("pause the pool");
    machine_pools
        .patch(
            machine_pool,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .expect("scale");
    h.clear_traffic();
    h.api.clear_requests();
    h.reconcile(pool.kind, agent_pool).await;
    assert_eq!(arm_writes(&h), Vec::<String>::new());
    assert_eq!(h.kube_writes(), Vec::<String>::new());
}
