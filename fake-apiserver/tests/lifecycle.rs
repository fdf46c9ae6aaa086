//! Finalizers, deletion, garbage collection, a real `Controller`, and direct store access.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{api_error, field, generation, widget, widget_resource, widgets};
use fake_apiserver::FakeApiServer;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams, Preconditions};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{Event as FinalizerEvent, finalizer};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use serde_json::json;

const FINALIZER: &str = "example.com/cleanup";

#[derive(Debug)]
struct TestError;

impl std::fmt::Display for TestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("test error")
    }
}

impl std::error::Error for TestError {}

/// Polls `check` every 10 ms for up to five seconds.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn finalizer_helper_lifecycle() -> Result<(), Box<dyn std::error::Error>> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    api.create(&PostParams::default(), &widget("w", json!({ "size": 1 })))
        .await?;
    let cleanups = AtomicUsize::new(0);
    let applies = AtomicUsize::new(0);
    let reconcile = |event: FinalizerEvent<DynamicObject>| {
        match event {
            FinalizerEvent::Apply(_) => applies.fetch_add(1, Ordering::SeqCst),
            FinalizerEvent::Cleanup(_) => cleanups.fetch_add(1, Ordering::SeqCst),
        };
        async { Ok::<_, TestError>(Action::await_change()) }
    };

    // First pass adds the finalizer (JSON patch with a `test` of null on the missing list).
    finalizer(&api, FINALIZER, Arc::new(api.get("w").await?), reconcile).await?;
    let w = api.get("w").await?;
    assert_eq!(w.finalizers(), [FINALIZER]);
    assert_eq!(generation(&w), 1);
    // Second pass applies.
    finalizer(&api, FINALIZER, Arc::new(w), reconcile).await?;
    assert_eq!(applies.load(Ordering::SeqCst), 1);

    // Delete marks the object; it stays while the finalizer is there, and deleting again changes nothing.
    let marked = api
        .delete("w", &DeleteParams::default())
        .await?
        .left()
        .ok_or("expected the object")?;
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(0));
    let w = api.get("w").await?;
    assert!(w.metadata.deletion_timestamp.is_some());
    let again = api
        .delete("w", &DeleteParams::default())
        .await?
        .left()
        .ok_or("expected the object")?;
    assert_eq!(again.metadata.resource_version, w.metadata.resource_version);

    // Cleanup removes the finalizer, which removes the object.
    finalizer(&api, FINALIZER, Arc::new(w), reconcile).await?;
    assert_eq!(cleanups.load(Ordering::SeqCst), 1);
    assert_eq!(api_error(api.get("w").await).code, 404);
    Ok(())
}

#[tokio::test]
async fn removing_other_finalizers_keeps_the_object_until_the_last() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    let mut w = widget("w", json!({}));
    w.metadata.finalizers = Some(vec!["a".into(), "b".into()]);
    api.create(&PostParams::default(), &w).await?;
    api.delete("w", &DeleteParams::default()).await?;
    let drop_a = json!({ "metadata": { "finalizers": ["b"] } });
    let w = api.patch("w", &PatchParams::default(), &Patch::Merge(&drop_a)).await?;
    assert_eq!(w.finalizers(), ["b"]);
    // The deletion timestamp cannot be removed by a write.
    let undelete = json!({ "metadata": { "deletionTimestamp": null } });
    let w = api
        .patch("w", &PatchParams::default(), &Patch::Merge(&undelete))
        .await?;
    assert!(w.metadata.deletion_timestamp.is_some());
    let mut last = w.clone();
    last.metadata.finalizers = None;
    api.replace("w", &PostParams::default(), &last).await?;
    assert_eq!(api_error(api.get("w").await).code, 404);
    Ok(())
}

#[tokio::test]
async fn delete_preconditions() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    let w = api.create(&PostParams::default(), &widget("w", json!({}))).await?;
    let wrong = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("not-the-uid".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    assert_eq!(api_error(api.delete("w", &wrong).await).code, 409);
    let right = DeleteParams {
        preconditions: Some(Preconditions {
            uid: w.metadata.uid.clone(),
            resource_version: w.metadata.resource_version.clone(),
        }),
        ..Default::default()
    };
    api.delete("w", &right).await?;
    assert!(server.get("example.com/v1", "widgets", Some("default"), "w").is_none());
    Ok(())
}

fn owned_config_map(name: &str, owners: &[&DynamicObject]) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.metadata.owner_references = Some(
        owners
            .iter()
            .filter_map(|owner| owner.controller_owner_ref(&widget_resource("v1")))
            .collect(),
    );
    cm
}

#[tokio::test]
async fn owner_reference_garbage_collection() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let client = server.client();
    let api = widgets(client.clone(), "default");
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = api.create(&PostParams::default(), &widget("owner", json!({}))).await?;
    let other = api.create(&PostParams::default(), &widget("other", json!({}))).await?;
    config_maps
        .create(&PostParams::default(), &owned_config_map("only", &[&owner]))
        .await?;
    config_maps
        .create(&PostParams::default(), &owned_config_map("shared", &[&owner, &other]))
        .await?;
    config_maps
        .create(&PostParams::default(), &owned_config_map("unrelated", &[]))
        .await?;
    // A dependent of a dependent goes too.
    let only = config_maps.get("only").await?;
    let mut grandchild = ConfigMap::default();
    grandchild.metadata.name = Some("grandchild".into());
    grandchild.metadata.owner_references = only.controller_owner_ref(&()).map(|r| vec![r]);
    config_maps.create(&PostParams::default(), &grandchild).await?;

    api.delete("owner", &DeleteParams::default()).await?;
    let left: Vec<String> = server
        .list("v1", "configmaps")
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(left, ["shared", "unrelated"], "shared still has a live owner");

    // Orphan: the dependent stays, without the owner reference.
    api.delete("other", &DeleteParams::orphan()).await?;
    let shared = config_maps.get("shared").await?;
    assert_eq!(shared.metadata.owner_references.map(|r| r.len()).unwrap_or_default(), 1);

    // A finalizer delays the collection until the owner is really gone.
    let mut guarded = widget("guarded", json!({}));
    guarded.metadata.finalizers = Some(vec![FINALIZER.into()]);
    let guarded = api.create(&PostParams::default(), &guarded).await?;
    config_maps
        .create(&PostParams::default(), &owned_config_map("child", &[&guarded]))
        .await?;
    api.delete("guarded", &DeleteParams::background()).await?;
    assert!(config_maps.get("child").await.is_ok());
    let release = json!({ "metadata": { "finalizers": null } });
    api.patch("guarded", &PatchParams::default(), &Patch::Merge(&release))
        .await?;
    assert_eq!(api_error(config_maps.get("child").await).code, 404);
    Ok(())
}

#[tokio::test]
async fn delete_collection_by_label() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    for (name, tier) in [("a", "x"), ("b", "y"), ("c", "x")] {
        let mut w = widget(name, json!({}));
        w.metadata.labels = Some([("tier".to_string(), tier.to_string())].into());
        api.create(&PostParams::default(), &w).await?;
    }
    let deleted = api
        .delete_collection(
            &DeleteParams::default(),
            &kube::api::ListParams::default().labels("tier=x"),
        )
        .await?
        .left()
        .map(|list| list.items.len());
    assert_eq!(deleted, Some(2));
    assert_eq!(server.list("example.com/v1", "widgets").len(), 1);
    Ok(())
}

/// The real `Controller` with the finalizer helper: it adds its finalizer, writes status through the status
/// subresource, and cleans up on deletion.
#[tokio::test]
async fn controller_with_finalizer_and_status() -> Result<(), Box<dyn std::error::Error>> {
    struct Context {
        api: Api<DynamicObject>,
        cleanups: AtomicUsize,
    }
    async fn reconcile(
        obj: Arc<DynamicObject>,
        ctx: Arc<Context>,
    ) -> Result<Action, kube::runtime::finalizer::Error<kube::Error>> {
        let api = ctx.api.clone();
        let context = Arc::clone(&ctx);
        finalizer(&ctx.api, FINALIZER, obj, |event| async move {
            match event {
                FinalizerEvent::Apply(w) => {
                    let status = json!({ "status": { "observedGeneration": w.metadata.generation, "phase": "Ready" } });
                    api.patch_status(&w.name_any(), &PatchParams::default(), &Patch::Merge(&status))
                        .await?;
                }
                FinalizerEvent::Cleanup(_) => {
                    context.cleanups.fetch_add(1, Ordering::SeqCst);
                }
            }
            Ok(Action::await_change())
        })
        .await
    }
    fn error_policy(
        _: Arc<DynamicObject>,
        _: &kube::runtime::finalizer::Error<kube::Error>,
        _: Arc<Context>,
    ) -> Action {
        Action::requeue(Duration::from_millis(50))
    }

    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    let context = Arc::new(Context {
        api: api.clone(),
        cleanups: AtomicUsize::new(0),
    });
    let controller = Controller::new_with(api.clone(), watcher::Config::default(), widget_resource("v1"))
        .run(reconcile, error_policy, Arc::clone(&context))
        .for_each(|_| async {});
    let running = tokio::spawn(controller);

    api.create(&PostParams::default(), &widget("w", json!({ "size": 1 })))
        .await?;
    let observed = |generation: i64| {
        let server = server.clone();
        move || {
            server
                .get("example.com/v1", "widgets", Some("default"), "w")
                .is_some_and(|w| {
                    w["status"]["observedGeneration"] == json!(generation)
                        && w["metadata"]["finalizers"] == json!([FINALIZER])
                })
        }
    };
    eventually("the first reconcile", observed(1)).await;

    // A spec change bumps the generation and is reconciled again.
    let grow = json!({ "spec": { "size": 2 } });
    let w = api.patch("w", &PatchParams::default(), &Patch::Merge(&grow)).await?;
    assert_eq!(generation(&w), 2);
    eventually("the second reconcile", observed(2)).await;
    assert_eq!(field(&api.get("w").await?, "/status/phase"), &json!("Ready"));

    api.delete("w", &DeleteParams::default()).await?;
    eventually("the cleanup", || {
        server.get("example.com/v1", "widgets", Some("default"), "w").is_none()
    })
    .await;
    assert_eq!(context.cleanups.load(Ordering::SeqCst), 1);
    running.abort();
    Ok(())
}

#[tokio::test]
async fn direct_store_access() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let inserted = server.insert(json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": { "name": "w", "namespace": "default", "labels": { "a": "b" } },
        "spec": { "size": 1 }, "status": { "phase": "Seeded" }
    }));
    assert_eq!(inserted["metadata"]["generation"], json!(1));
    assert!(inserted["metadata"]["uid"].is_string());
    let api = widgets(server.client(), "default");
    let w = api.get("w").await?;
    assert_eq!(field(&w, "/status/phase"), &json!("Seeded"), "insert keeps status");

    // Inserting again replaces, keeping identity; a spec change bumps the generation.
    let replaced = server.insert(json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": { "name": "w", "namespace": "default" },
        "spec": { "size": 2 }, "status": { "phase": "Changed" }
    }));
    assert_eq!(replaced["metadata"]["uid"], inserted["metadata"]["uid"]);
    assert_eq!(replaced["metadata"]["generation"], json!(2));

    // Cluster-scoped, and a kind with an irregular plural.
    server.register_kind("example.com/v1", "Octopus", "octopi");
    server.insert(json!({ "apiVersion": "example.com/v1", "kind": "Octopus", "metadata": { "name": "o" } }));
    assert!(server.get("example.com/v1", "octopi", None, "o").is_some());
    let policy =
        server.insert(json!({ "apiVersion": "example.com/v1", "kind": "Policy", "metadata": { "name": "p" } }));
    assert_eq!(policy["metadata"]["name"], json!("p"));
    assert_eq!(server.list("example.com/v1", "policies").len(), 1);

    // Direct delete follows finalizer semantics.
    server.insert(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": "cm", "namespace": "default", "finalizers": ["x"] }
    }));
    let marked = server.delete("v1", "configmaps", Some("default"), "cm");
    assert!(marked.is_some_and(|m| m["metadata"]["deletionTimestamp"].is_string()));
    assert!(server.get("v1", "configmaps", Some("default"), "cm").is_some());
    assert!(server.delete("v1", "configmaps", Some("default"), "missing").is_none());
    assert!(
        server
            .delete("example.com/v1", "widgets", Some("default"), "w")
            .is_some()
    );
    assert!(server.get("example.com/v1", "widgets", Some("default"), "w").is_none());
    Ok(())
}
