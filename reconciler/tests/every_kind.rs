//! Every served kind goes through the same reconcile code path: create, resync without a PUT, delete. The kinds
//! come from the generated registry. Kinds with a row in `spec_for` use that realistic spec; any other kind (one a
//! new API version brings) uses the smallest spec its CRD schema accepts (`armgen_runtime::sample`), owned by the
//! test's cluster or resource group, so a new kind is covered with no edit here.

mod common;

use aks_reconciler::controller::served_kinds;
use common::*;
use serde_json::{Value, json};

/// A realistic spec per kind where one is written here (test data; the loop has no per-kind code), else the
/// sample of the kind's CRD schema at `info.version`.
fn spec_for(info: &armgen_runtime::KindInfo) -> Option<Value> {
    written_spec_for(info.kind).or_else(|| sampled_spec_for(info))
}

fn sampled_spec_for(info: &armgen_runtime::KindInfo) -> Option<Value> {
    let crd = aks_api::custom_resource_definition(info.kube_group, info.kind)?.ok()?;
    let mut spec = armgen_runtime::sample::sample_spec_of(&crd, info.version, 0)?
        .unwrap_or_else(|e| panic!("{} {}: {e}", info.kind, info.version));
    // The owner by the kind's place (KindInfo::owner_kind and arm.scope): the test's cluster `demo`, the object the
    // test made of the owner kind (kinds are created parents first), the resource group, nothing for a
    // subscription-scoped kind, and the resource group's ID as the scope of an extension resource.
    match (info.owner_kind, info.arm.scope) {
        (Some("ManagedCluster"), _) => spec["owner"] = json!({ "name": "demo" }),
        (Some(owner), _) => {
            let owner = aks_api::KINDS
                .iter()
                .find(|k| k.kube_group == info.kube_group && k.kind == owner)?;
            spec["owner"] = json!({ "name": object_name(owner) });
        }
        (None, armgen_runtime::Scope::ResourceGroup) => spec["owner"] = json!({ "name": RG }),
        (None, armgen_runtime::Scope::Subscription) => {
            if let Some(spec) = spec.as_object_mut() {
                spec.remove("owner");
            }
        }
        (None, armgen_runtime::Scope::Extension) => {
            spec["owner"] = json!({ "armId": format!("/subscriptions/{SUB}/resourceGroups/{RG}") })
        }
        (None, armgen_runtime::Scope::Tenant) => return None,
    }
    Some(spec)
}

/// The name of the test's object of a kind: one every kind's ARM name rules accept (agent pools:
/// `^[a-z][a-z0-9]{0,11}$`; trusted access role bindings: at most 24 characters), as `oav validate-traffic` checks
/// (.ci/oav.sh).
fn object_name(info: &armgen_runtime::KindInfo) -> String {
    format!("x{}", info.plural).chars().take(12).collect()
}

/// The specs written by hand (closer to real use than samples).
fn written_spec_for(kind: &str) -> Option<Value> {
    let pool_id = format!("{}/agentPools/system", cluster_id("demo"));
    Some(match kind {
        "ManagedCluster" => cluster_spec(),
        "AgentPool" => pool_spec("demo"),
        "MaintenanceConfiguration" => {
            json!({"owner": {"name": "demo"}, "timeInWeek": [{"day": "Sunday", "hourSlots": [1, 2]}]})
        }
        "ManagedNamespace" => json!({"owner": {"name": "demo"}, "location": "westeurope", "labels": {"team": "a"}}),
        "PrivateEndpointConnection" => {
            json!({"owner": {"name": "demo"}, "privateLinkServiceConnectionState": {"status": "Approved"}})
        }
        "TrustedAccessRoleBinding" => json!({
            "owner": {"name": "demo"},
            "sourceResourceId": {"armId": format!("/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.MachineLearningServices/workspaces/ml")},
            "roles": ["Microsoft.MachineLearningServices/workspaces/mlworkload"],
        }),
        "Snapshot" => {
            json!({"owner": {"name": RG}, "location": "westeurope", "creationData": {"sourceResourceId": {"armId": pool_id}}})
        }
        _ => return None,
    })
}

#[tokio::test]
async fn every_served_kind_is_created_kept_in_sync_and_deleted_by_the_same_loop() {
    let h = Harness::new().await;
    let kinds = served_kinds(&[]);
    assert_eq!(
        kinds.len(),
        aks_api::KINDS.iter().filter(|k| k.storage).count(),
        "one version per kind"
    );
    every_kind(h, kinds).await;
}

/// The same at every other served version (`--kube-version containerservice=<version>`, e.g. `v1beta1`): the
/// reconciler speaks that version's ARM API version (2024-09-01 has no ManagedNamespace, so its kinds are fewer).
/// The versions come from the registry, so `.ci/oav.sh` records traffic of every served version.
#[tokio::test]
async fn every_kind_of_every_other_served_version_is_created_kept_in_sync_and_deleted() {
    let others: Vec<_> = aks_api::VERSIONS.iter().filter(|v| v.served && !v.storage).collect();
    for v in others {
        let h = Harness::new().await.serving(v.group, v.version);
        let kinds = served_kinds(&h.versions);
        // That group's kinds at that version; the other groups' at their storage versions.
        let of_group: Vec<_> = kinds.iter().filter(|k| k.group == v.group).collect();
        assert!(of_group.iter().all(|k| k.version == v.version), "{} only", v.version);
        assert!(of_group.iter().all(|k| k.arm.api_version == v.api_version));
        assert_eq!(
            of_group.len(),
            aks_api::KINDS
                .iter()
                .filter(|k| k.group == v.group && k.version == v.version)
                .count()
        );
        assert!(kinds.iter().filter(|k| k.group != v.group).all(|k| k.storage));
        every_kind(h, kinds).await;
    }
}

/// The schema samples alone (no written spec) are valid for every kind: what a new kind gets.
#[tokio::test]
async fn every_kind_works_from_the_sample_of_its_schema() {
    let h = Harness::new().await;
    let kinds = served_kinds(&[]);
    every_kind_with(h, kinds, sampled_spec_for).await;
}

async fn every_kind(h: Harness, kinds: Vec<&'static armgen_runtime::KindInfo>) {
    every_kind_with(h, kinds, spec_for).await;
}

async fn every_kind_with(
    h: Harness,
    kinds: Vec<&'static armgen_runtime::KindInfo>,
    spec_for: fn(&armgen_runtime::KindInfo) -> Option<Value>,
) {
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    let mut missing = Vec::new();
    // Parents before children (a child's owner is the test's object of the owner kind); deleted in reverse order.
    let mut kinds = kinds;
    kinds.sort_by_key(|k| k.arm.parents.len());
    let mut created = Vec::new();
    for info in &kinds {
        let Some(spec) = spec_for(info) else {
            missing.push(info.kind);
            continue;
        };
        let name = object_name(info);
        h.apply(info.kind, &name, spec).await;
        h.converge(info.kind, &name).await;
        let (status, reason, message) = h.ready(info.kind, &name).await;
        assert_eq!(status, "True", "{}: {reason}: {message}", info.kind);
        let id = h
            .object(info.kind, &name)
            .await
            .and_then(|o| o.data.pointer("/status/id").cloned());
        let id = id.and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        assert!(
            id.contains(&format!(
                "/{}/",
                info.arm.arm_type.rsplit('/').next().unwrap_or_default()
            )),
            "{id}"
        );
        assert!(h.sim.resource(&id).is_some(), "{}: {id} stored", info.kind);

        h.clear_traffic();
        h.reconcile(info.kind, &name).await;
        assert_eq!(
            (h.sim.count("GET"), h.sim.count("PUT")),
            (1, 0),
            "{}: in sync",
            info.kind
        );

        created.push((info.kind, name, id));
    }
    for (kind, name, id) in created.into_iter().rev() {
        h.delete(kind, &name).await;
        h.reconcile_until_gone(kind, &name).await;
        assert!(h.sim.resource(&id).is_none(), "{kind}: deleted");
    }
    assert!(missing.is_empty(), "kinds without a test spec: {missing:?}");
}
