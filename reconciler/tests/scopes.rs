//! Scopes and names beyond resource groups (docs/config.md "Scopes and names"), through the one loop against the
//! simulator: a subscription-scoped kind has no owner; an extension resource's scope is an ARM ID or a custom
//! resource whose `status.id` it waits for; UUID names are derived from the object (stable across delete and
//! apply) or must parse. The kinds are found in the registry by their scope and name format, not by name.

mod common;

use armgen_runtime::{NameFormat, Scope};
use common::*;
use serde_json::{Value, json};

fn kind_where(matches: impl Fn(&armgen_runtime::KindInfo) -> bool) -> &'static armgen_runtime::KindInfo {
    aks_api::KINDS
        .iter()
        .filter(|k| k.storage)
        .find(|k| matches(k))
        .expect("azure-arm.yaml generates such a kind")
}

/// The extension kind with UUID names (role assignments) and a spec it accepts, scoped by `owner`.
fn extension_spec(info: &armgen_runtime::KindInfo, owner: Value) -> Value {
    let crd = aks_api::custom_resource_definition(info.kube_group, info.kind)
        .expect("a CRD")
        .expect("CRD YAML");
    let mut spec = armgen_runtime::sample::sample_spec_of(&crd, info.version, 0)
        .expect("the version")
        .expect("a sample");
    spec["owner"] = owner;
    spec
}

async fn id_of(h: &Harness, kind: &str, name: &str) -> String {
    h.object(kind, name)
        .await
        .and_then(|o| o.data.pointer("/status/id").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default()
}

#[tokio::test]
async fn a_subscription_scoped_kind_lives_in_the_credentials_subscription_without_an_owner() {
    let h = Harness::new().await;
    let info = kind_where(|k| k.arm.scope == Scope::Subscription && k.owner_kind.is_none());
    h.apply(info.kind, "team-a-rg", json!({"location": "westeurope"})).await;
    h.converge(info.kind, "team-a-rg").await;
    assert_eq!(h.ready(info.kind, "team-a-rg").await.0, "True");
    assert_eq!(
        id_of(&h, info.kind, "team-a-rg").await.to_ascii_lowercase(),
        format!("/subscriptions/{SUB}/resourcegroups/team-a-rg")
    );
}

#[tokio::test]
async fn an_extension_names_its_scope_by_arm_id_and_its_uuid_name_is_derived_and_stable() {
    let h = Harness::new().await;
    let info = kind_where(|k| k.arm.scope == Scope::Extension && k.name_format == NameFormat::Uuid);
    let scope = format!("/subscriptions/{SUB}/resourceGroups/{RG}");
    h.apply(info.kind, "grant", extension_spec(info, json!({"armId": scope})))
        .await;
    h.converge(info.kind, "grant").await;
    assert_eq!(h.ready(info.kind, "grant").await.0, "True");
    let id = id_of(&h, info.kind, "grant").await;
    let name = armgen_runtime::derived_uuid_name(info.kube_group, info.kind, NS, "grant");
    assert_eq!(id, format!("{scope}/providers/{}/{name}", info.arm.arm_type));
    assert!(h.sim.resource(&id).is_some());

    // Deleted and applied again: the same name, so still one resource in Azure.
    h.delete(info.kind, "grant").await;
    h.reconcile_until_gone(info.kind, "grant").await;
    assert!(h.sim.resource(&id).is_none());
    h.apply(info.kind, "grant", extension_spec(info, json!({"armId": scope})))
        .await;
    h.converge(info.kind, "grant").await;
    assert_eq!(id_of(&h, info.kind, "grant").await, id);

    // A given name must be a UUID.
    let mut spec = extension_spec(info, json!({"armId": scope}));
    spec["azureName"] = json!("not-a-uuid");
    h.apply(info.kind, "named", spec).await;
    h.converge(info.kind, "named").await;
    let (status, reason, message) = h.ready(info.kind, "named").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "InvalidName"),
        "{message}"
    );
    // A scope outside the credential's subscription is refused before any request.
    h.clear_traffic();
    let spec = extension_spec(info, json!({"armId": "/subscriptions/someone-else/resourceGroups/rg"}));
    h.apply(info.kind, "elsewhere", spec).await;
    h.converge(info.kind, "elsewhere").await;
    let (status, reason, _) = h.ready(info.kind, "elsewhere").await;
    assert_eq!((status.as_str(), reason.as_str()), ("False", "InvalidOwner"));
    assert_eq!(h.sim.count("PUT"), 0);
}

#[tokio::test]
async fn an_extension_scoped_by_a_custom_resource_waits_for_it_then_uses_its_id() {
    let h = Harness::new().await;
    let info = kind_where(|k| k.arm.scope == Scope::Extension);
    // Scoped by the test's cluster, before it exists: it waits, with no request to Azure for itself.
    let owner = json!({"group": "containerservice.armgen.dev", "kind": "ManagedCluster", "name": "demo"});
    h.apply(info.kind, "on-cluster", extension_spec(info, owner)).await;
    h.reconcile(info.kind, "on-cluster").await;
    let (status, reason, message) = h.ready(info.kind, "on-cluster").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "WaitingForOwner"),
        "{message}"
    );
    assert_eq!(h.sim.count("PUT"), 0);

    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    h.converge(info.kind, "on-cluster").await;
    assert_eq!(h.ready(info.kind, "on-cluster").await.0, "True");
    let id = id_of(&h, info.kind, "on-cluster").await;
    assert!(
        id.starts_with(&format!("{}/providers/{}/", cluster_id("demo"), info.arm.arm_type)),
        "{id}"
    );

    // An unknown kind is refused, naming it.
    let owner = json!({"group": "example.org", "kind": "Thing", "name": "x"});
    h.apply(info.kind, "unknown", extension_spec(info, owner)).await;
    h.converge(info.kind, "unknown").await;
    let (status, reason, message) = h.ready(info.kind, "unknown").await;
    assert_eq!((status.as_str(), reason.as_str()), ("False", "InvalidOwner"));
    assert!(message.contains("Thing.example.org"), "{message}");
}

/// Tenants stay apart: an extension may not name by `armId` a resource that an object of another namespace
/// manages (holds its claim); a resource of its own namespace, or one armgen does not manage, it may.
#[tokio::test]
async fn an_extension_may_not_extend_another_namespaces_resource_by_arm_id() {
    let h = Harness::new().await;
    let info = kind_where(|k| k.arm.scope == Scope::Extension);
    let cluster = kind_where(|k| k.kind == "ManagedCluster");
    h.apply_in(cluster.kind, "team-b", "theirs", cluster_spec());
    for _ in 0..20 {
        h.reconcile_in(cluster.kind, "team-b", "theirs").await;
        if h.ready_in(cluster.kind, "team-b", "theirs").await.0 == "True" {
            break;
        }
    }
    let theirs = h
        .object_in(cluster.kind, "team-b", "theirs")
        .await
        .and_then(|o| o.data.pointer("/status/id").and_then(Value::as_str).map(str::to_string))
        .expect("team-b's cluster is created");
    h.clear_traffic();
    h.apply(info.kind, "on-theirs", extension_spec(info, json!({"armId": theirs})))
        .await;
    h.converge(info.kind, "on-theirs").await;
    let (status, reason, message) = h.ready(info.kind, "on-theirs").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "InvalidOwner"),
        "{message}"
    );
    assert!(message.contains("team-b/theirs"), "{message}");
    assert_eq!(h.sim.count("PUT"), 0);

    // Its own namespace's cluster, by ID, it may extend.
    h.apply(cluster.kind, "ours", cluster_spec()).await;
    h.converge(cluster.kind, "ours").await;
    let ours = id_of(&h, cluster.kind, "ours").await;
    h.apply(info.kind, "on-ours", extension_spec(info, json!({"armId": ours})))
        .await;
    h.converge(info.kind, "on-ours").await;
    assert_eq!(h.ready(info.kind, "on-ours").await.0, "True");
}
