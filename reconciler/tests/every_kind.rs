//! Every served kind goes through the same reconcile code path: create, resync without a PUT, delete. The kinds
//! come from the generated registry; a new kind without a row in `spec_for` fails this test by name.

mod common;

use aks_reconciler::controller::served_kinds;
use common::*;
use serde_json::{Value, json};

/// A minimal valid spec per kind (test data; the loop has no per-kind code).
fn spec_for(kind: &str) -> Option<Value> {
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

/// The same at the older Kubernetes version (`--kube-version containerservice=v1beta1`): the reconciler speaks
/// its ARM API version (2024-09-01), which has no ManagedNamespace.
#[tokio::test]
async fn every_kind_of_the_older_version_is_created_kept_in_sync_and_deleted() {
    let h = Harness::new().await.serving("containerservice", "v1beta1");
    let kinds = served_kinds(&h.versions);
    assert!(kinds.iter().all(|k| k.version == "v1beta1"), "v1beta1 only");
    assert!(kinds.iter().any(|k| k.arm.api_version == "2024-09-01"));
    assert_eq!(
        kinds.len(),
        aks_api::KINDS.iter().filter(|k| k.version == "v1beta1").count()
    );
    every_kind(h, kinds).await;
}

async fn every_kind(h: Harness, kinds: Vec<&'static armgen_runtime::KindInfo>) {
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    let mut missing = Vec::new();
    for info in &kinds {
        let Some(spec) = spec_for(info.kind) else {
            missing.push(info.kind);
            continue;
        };
        // A name every kind's ARM name rules accept (agent pools: `^[a-z][a-z0-9]{0,11}$`; trusted access role
        // bindings: at most 24 characters), as `oav validate-traffic` checks (.ci/oav.sh).
        let name: String = format!("x{}", info.plural).chars().take(12).collect();
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

        h.delete(info.kind, &name).await;
        h.reconcile_until_gone(info.kind, &name).await;
        assert!(h.sim.resource(&id).is_none(), "{}: deleted", info.kind);
    }
    assert!(missing.is_empty(), "kinds without a test spec: {missing:?}");
}
