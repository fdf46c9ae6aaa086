//! Values from other objects (docs/config.md "Values from other objects"), through the one loop against the
//! simulator: a `<field>FromConfig` waits (`WaitingForReference`, no request for the object) until its ConfigMap
//! key exists, is sent as the value and compared by value (a resync is no PUT; a changed value is one PUT); a map
//! keyed by ARM IDs (`armIdKeys`) takes references to custom resources and waits for their IDs. The kinds come
//! from the registry and their CRDs.

mod common;

use armgen_runtime::{KindInfo, Scope};
use common::*;
use serde_json::{Value, json};

/// The storage version of each kind.
fn storage_kinds() -> impl Iterator<Item = &'static KindInfo> {
    aks_api::KINDS.iter().filter(|k| k.storage)
}

fn crd_spec(info: &KindInfo) -> Value {
    let crd = aks_api::custom_resource_definition(info.kube_group, info.kind)
        .expect("a CRD")
        .expect("CRD YAML");
    let crd = serde_json::to_value(&crd).expect("CRD as JSON");
    crd["spec"]["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["name"] == info.version))
        .map(|v| v["schema"]["openAPIV3Schema"]["properties"]["spec"].clone())
        .expect("the version's schema")
}

/// The spec fields (root level) that may come from a ConfigMap: `x` for each `xFromConfig`.
fn from_config_fields(info: &KindInfo) -> Vec<String> {
    crd_spec(info)["properties"]
        .as_object()
        .map(|props| {
            props
                .keys()
                .filter_map(|k| k.strip_suffix("FromConfig"))
                .filter(|x| props.contains_key(*x))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The sample spec of `info`'s CRD, owned by its owner kind's object `owner`, the test's resource group, or (an
/// extension) the resource group's ID.
fn sample_spec(info: &KindInfo, owner: &str) -> Value {
    let crd = aks_api::custom_resource_definition(info.kube_group, info.kind)
        .expect("a CRD")
        .expect("CRD YAML");
    let mut spec = armgen_runtime::sample::sample_spec_of(&crd, info.version, 0)
        .expect("the version")
        .expect("a sample");
    spec["owner"] = match (info.owner_kind, info.arm.scope) {
        (Some(_), _) => json!({ "name": owner }),
        (None, Scope::ResourceGroup) => json!({ "name": RG }),
        (None, Scope::Extension) => json!({ "armId": format!("/subscriptions/{SUB}/resourceGroups/{RG}") }),
        (None, _) => Value::Null,
    };
    if spec["owner"].is_null()
        && let Some(spec) = spec.as_object_mut()
    {
        spec.remove("owner");
    }
    spec
}

/// Creates and converges the owner chain of `info` (parents first); the name of its direct owner object.
async fn create_owners(h: &Harness, info: &KindInfo) -> String {
    let Some(owner_kind) = info.owner_kind else {
        return String::new();
    };
    let owner = aks_api::KINDS
        .iter()
        .find(|k| k.storage && k.kube_group == info.kube_group && k.kind == owner_kind)
        .expect("the owner kind is generated");
    let name = format!("owner-{}", owner.plural);
    if h.object(owner.kind, &name).await.is_none() {
        let grand = Box::pin(create_owners(h, owner)).await;
        h.apply(owner.kind, &name, sample_spec(owner, &grand)).await;
        h.converge(owner.kind, &name).await;
        assert_eq!(h.ready(owner.kind, &name).await.0, "True", "{} {name}", owner.kind);
    }
    name
}

fn put_count(h: &Harness) -> usize {
    h.sim.count("PUT")
}

async fn id_of(h: &Harness, kind: &str, name: &str) -> String {
    h.object(kind, name)
        .await
        .and_then(|o| o.data.pointer("/status/id").and_then(Value::as_str).map(str::to_string))
        .expect("status.id")
}

/// Test data beyond the CRD sample where the ARM type requires more than the CRD can say (a federated
/// credential's properties are optional as a whole, but `subject` and `audiences` are required within them).
fn written(kind: &str) -> Value {
    match kind {
        "FederatedIdentityCredential" => json!({
            "issuer": "https://oidc.example.org/issuer/",
            "subject": "system:serviceaccount:team-a:app",
            "audiences": ["api://AzureADTokenExchange"],
        }),
        _ => json!({}),
    }
}

fn merge(spec: &mut Value, extra: Value) {
    if let (Some(spec), Value::Object(extra)) = (spec.as_object_mut(), extra) {
        spec.extend(extra);
    }
}

#[tokio::test]
async fn a_value_from_a_config_map_waits_for_its_key_then_is_sent_and_compared_by_value() {
    let kinds: Vec<_> = storage_kinds().filter(|k| !from_config_fields(k).is_empty()).collect();
    assert!(
        !kinds.is_empty(),
        "azure-arm.yaml has fromConfig overrides on root spec fields"
    );
    for info in kinds {
        let h = Harness::new().await;
        let fields = from_config_fields(info);
        let owner = create_owners(&h, info).await;
        let mut spec = sample_spec(info, &owner);
        merge(&mut spec, written(info.kind));
        let mut wanted = serde_json::Map::new();
        for x in &fields {
            let value = spec.get(x).cloned().unwrap_or_else(|| json!(format!("value-of-{x}")));
            wanted.insert(x.clone(), value);
            spec.as_object_mut().expect("spec").remove(x);
            spec[format!("{x}FromConfig")] = json!({"name": "values", "key": x});
        }
        let name = "from-config";
        let before = put_count(&h);
        h.apply(info.kind, name, spec).await;
        h.reconcile(info.kind, name).await;
        let (status, reason, message) = h.ready(info.kind, name).await;
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("False", "WaitingForReference"),
            "{} waits for the ConfigMap: {message}",
            info.kind
        );
        assert!(message.contains("FromConfig"), "{message}");
        assert_eq!(put_count(&h), before, "{}: no request while waiting", info.kind);

        let data: serde_json::Map<String, Value> = wanted
            .iter()
            .map(|(k, v)| (k.clone(), json!(v.as_str().expect("a string value"))))
            .collect();
        h.api.insert(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "values", "namespace": NS},
            "data": data,
        }));
        h.converge(info.kind, name).await;
        assert_eq!(h.ready(info.kind, name).await.0, "True", "{}", info.kind);
        let id = id_of(&h, info.kind, name).await;
        let resource = h.sim.resource(&id).expect("created in the simulator");
        for (x, v) in &wanted {
            assert_eq!(
                &resource["properties"][x], v,
                "{} sent {x} from the ConfigMap",
                info.kind
            );
        }

        // In sync: compared by value, no PUT.
        h.clear_traffic();
        h.reconcile(info.kind, name).await;
        assert_eq!(put_count(&h), 0, "{}: a resync sends nothing", info.kind);

        // The ConfigMap's value changes: the next pass sends the new value.
        let (x, _) = wanted.iter().next().expect("a field");
        h.api.insert(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "values", "namespace": NS},
            "data": data.iter().map(|(k, v)| (k.clone(), if k == x { json!(format!("{}-2", v.as_str().unwrap_or_default())) } else { v.clone() })).collect::<serde_json::Map<_, _>>(),
        }));
        h.converge(info.kind, name).await;
        assert_eq!(put_count(&h), 1, "{}: the changed value is one PUT", info.kind);
        let resource = h.sim.resource(&id).expect("still there");
        assert!(
            resource["properties"][x].as_str().is_some_and(|v| v.ends_with("-2")),
            "{}: {resource}",
            info.kind
        );

        // Both the value and its ConfigMap: refused by the conversion (the CRD's rule refuses it at admission).
        let mut both = sample_spec(info, &owner);
        merge(&mut both, written(info.kind));
        both[format!("{x}FromConfig")] = json!({"name": "values", "key": x});
        h.apply(info.kind, "both", both).await;
        h.converge(info.kind, "both").await;
        let (status, reason, message) = h.ready(info.kind, "both").await;
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("False", "InvalidSpec"),
            "{message}"
        );
        assert!(message.contains("not both"), "{message}");
    }
}

/// The kinds with a spec list of references standing for a map keyed by ARM IDs, as `(kind, JSON pointer)`: the
/// CRD's arrays of `{armId, group, kind, name}` objects (a plain reference list would look the same to the CRD, so
/// the test checks what the PUT body holds: a map).
fn reference_lists(schema: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(props) = schema["properties"].as_object() {
        for (k, v) in props {
            if v["type"] == "array" && v["items"]["properties"]["armId"].is_object() {
                out.push(format!("{at}/{k}"));
            }
            reference_lists(v, &format!("{at}/{k}"), out);
        }
    }
}

#[tokio::test]
async fn identities_keyed_by_arm_id_take_references_and_wait_for_them() {
    let identity = storage_kinds()
        .find(|k| {
            k.arm
                .arm_type
                .eq_ignore_ascii_case("Microsoft.ManagedIdentity/userAssignedIdentities")
        })
        .expect("azure-arm.yaml generates user-assigned identities");
    let cluster = storage_kinds()
        .find(|k| k.kind == "ManagedCluster")
        .expect("ManagedCluster");
    let mut lists = Vec::new();
    reference_lists(&crd_spec(cluster), "", &mut lists);
    assert!(
        lists.iter().any(|p| p == "/identity/userAssignedIdentities"),
        "the cluster lists its identities as references: {lists:?}"
    );

    let h = Harness::new().await;
    let mut spec = cluster_spec();
    spec["identity"] = json!({
        "type": "UserAssigned",
        "userAssignedIdentities": [{"group": identity.kube_group, "kind": identity.kind, "name": "control-plane"}],
    });
    h.apply("ManagedCluster", "demo", spec).await;
    h.reconcile("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "WaitingForReference"),
        "{message}"
    );
    assert!(message.contains("spec.identity.userAssignedIdentities[0]"), "{message}");
    assert_eq!(put_count(&h), 0);

    h.apply(identity.kind, "control-plane", sample_spec(identity, "")).await;
    h.converge(identity.kind, "control-plane").await;
    let identity_id = id_of(&h, identity.kind, "control-plane").await;
    h.converge("ManagedCluster", "demo").await;
    assert_eq!(h.ready("ManagedCluster", "demo").await.0, "True");
    let cluster_id = id_of(&h, "ManagedCluster", "demo").await;
    let resource = h.sim.resource(&cluster_id).expect("the cluster");
    let keys: Vec<&String> = resource["identity"]["userAssignedIdentities"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        vec![&identity_id],
        "the PUT's map is keyed by the identity's ID: {resource}"
    );

    h.clear_traffic();
    h.reconcile("ManagedCluster", "demo").await;
    assert_eq!(
        put_count(&h),
        0,
        "in sync: the references compare by the IDs they stand for"
    );
}
