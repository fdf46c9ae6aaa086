//! Create, read, list, replace, patch and delete through `kube::Api`.

mod common;

use common::{api_error, field, generation, resource_version, widget, widget_resource, widgets};
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn config_map(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.data = Some(data.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
    cm
}

#[tokio::test]
async fn typed_config_map_crud() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "ns1");

    let created = api
        .create(&PostParams::default(), &config_map("settings", &[("a", "1")]))
        .await?;
    assert_eq!(created.metadata.namespace.as_deref(), Some("ns1"));
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.creation_timestamp.is_some());
    assert_eq!(created.metadata.generation, Some(1));

    let again = api_error(api.create(&PostParams::default(), &config_map("settings", &[])).await);
    assert_eq!((again.code, again.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(again.message, "configmaps \"settings\" already exists");

    let fetched = api.get("settings").await?;
    assert_eq!(
        fetched.data.as_ref().and_then(|d| d.get("a")).map(String::as_str),
        Some("1")
    );

    let missing = api_error(api.get("nope").await);
    assert_eq!((missing.code, missing.reason.as_str()), (404, "NotFound"));
    assert_eq!(missing.message, "configmaps \"nope\" not found");
    assert_eq!(missing.status, Some(kube::core::response::StatusSummary::Failure));

    // Replace with the current resource version succeeds; with a stale one it conflicts.
    let mut replaced = fetched.clone();
    replaced.data = Some([("a".to_string(), "2".to_string())].into());
    let replaced = api.replace("settings", &PostParams::default(), &replaced).await?;
    assert_ne!(replaced.metadata.resource_version, fetched.metadata.resource_version);
    assert_eq!(replaced.metadata.uid, fetched.metadata.uid);
    let stale = api_error(api.replace("settings", &PostParams::default(), &fetched).await);
    assert_eq!((stale.code, stale.reason.as_str()), (409, "Conflict"));
    assert!(
        stale.message.contains("the object has been modified"),
        "{}",
        stale.message
    );

    // Typed secrets and leases are plain objects too.
    let secrets: Api<Secret> = Api::namespaced(server.client(), "ns1");
    let mut secret = Secret::default();
    secret.metadata.name = Some("token".into());
    secret.string_data = Some([("k".to_string(), "v".to_string())].into());
    secrets.create(&PostParams::default(), &secret).await?;
    assert!(secrets.get("token").await?.string_data.is_some());

    let leases: Api<Lease> = Api::namespaced(server.client(), "ns1");
    let mut lease = Lease::default();
    lease.metadata.name = Some("leader".into());
    lease.spec = Some(k8s_openapi::api::coordination::v1::LeaseSpec {
        holder_identity: Some("pod-a".into()),
        lease_duration_seconds: Some(15),
        ..Default::default()
    });
    leases.create(&PostParams::default(), &lease).await?;
    let patch = json!({ "spec": { "holderIdentity": "pod-b" } });
    let patched = leases
        .patch("leader", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    let spec = patched.spec.unwrap_or_default();
    assert_eq!(spec.holder_identity.as_deref(), Some("pod-b"));
    assert_eq!(spec.lease_duration_seconds, Some(15));

    // Delete without finalizers removes at once; a second delete is 404.
    api.delete("settings", &DeleteParams::default()).await?;
    assert_eq!(api_error(api.get("settings").await).code, 404);
    assert_eq!(
        api_error(api.delete("settings", &DeleteParams::default()).await).code,
        404
    );
    assert!(server.get("v1", "configmaps", Some("ns1"), "settings").is_none());
    Ok(())
}

#[tokio::test]
async fn generate_name_and_list_with_selectors() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let client = server.client();
    let api = widgets(client.clone(), "ns1");
    for (name, tier) in [("a", "front"), ("b", "back"), ("c", "front")] {
        let mut w = widget(name, json!({ "size": 1 }));
        w.metadata.labels = Some([("tier".to_string(), tier.to_string())].into());
        api.create(&PostParams::default(), &w).await?;
    }
    let mut generated = widget("", json!({}));
    generated.metadata.name = None;
    generated.metadata.generate_name = Some("gen-".into());
    let generated = api.create(&PostParams::default(), &generated).await?;
    let name = generated.metadata.name.unwrap_or_default();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    let other = widgets(client.clone(), "ns2");
    other.create(&PostParams::default(), &widget("a", json!({}))).await?;

    let names = |list: kube::core::ObjectList<DynamicObject>| {
        list.items
            .into_iter()
            .map(|o| o.metadata.name.unwrap_or_default())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(api.list(&ListParams::default()).await?),
        ["a", "b", "c", name.as_str()]
    );
    assert_eq!(
        names(api.list(&ListParams::default().labels("tier=front")).await?),
        ["a", "c"]
    );
    assert_eq!(
        names(api.list(&ListParams::default().labels("tier!=front")).await?),
        ["b", name.as_str()]
    );
    assert_eq!(
        names(api.list(&ListParams::default().labels("tier in (back,x)")).await?),
        ["b"]
    );
    assert_eq!(
        names(api.list(&ListParams::default().fields("metadata.name=c")).await?),
        ["c"]
    );

    let all: Api<DynamicObject> = Api::all_with(client.clone(), &widget_resource("v1"));
    let everywhere = all.list(&ListParams::default()).await?;
    assert_eq!(everywhere.items.len(), 5);
    assert_eq!(everywhere.types.kind, "WidgetList");
    assert_eq!(
        everywhere.metadata.resource_version,
        Some(server.resource_version().to_string())
    );

    // Paging: two at a time.
    let first = all.list(&ListParams::default().limit(2)).await?;
    assert_eq!(first.items.len(), 2);
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    let token = first.metadata.continue_.clone().unwrap_or_default();
    let second = all.list(&ListParams::default().limit(2).continue_token(&token)).await?;
    let third_token = second.metadata.continue_.clone().unwrap_or_default();
    let third = all
        .list(&ListParams::default().limit(2).continue_token(&third_token))
        .await?;
    assert_eq!((second.items.len(), third.items.len()), (2, 1));
    assert_eq!(third.metadata.continue_, None);
    assert_eq!(third.metadata.resource_version, first.metadata.resource_version);

    let bad = api_error(api.list(&ListParams::default().labels("tier in (front")).await);
    assert_eq!(bad.code, 400);
    Ok(())
}

#[tokio::test]
async fn merge_json_strategic_and_apply_patches() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    api.create(
        &PostParams::default(),
        &widget("w", json!({ "size": 1, "color": "red", "tags": ["a"] })),
    )
    .await?;

    let merge = json!({ "spec": { "size": 2, "color": null } });
    let w = api.patch("w", &PatchParams::default(), &Patch::Merge(&merge)).await?;
    assert_eq!(w.data["spec"], json!({ "size": 2, "tags": ["a"] }));

    let ops: json_patch::Patch = serde_json::from_value(json!([
        { "op": "test", "path": "/spec/size", "value": 2 },
        { "op": "add", "path": "/spec/tags/-", "value": "b" }
    ]))
    .unwrap_or_else(|e| panic!("{e}"));
    let w = api.patch("w", &PatchParams::default(), &Patch::Json::<()>(ops)).await?;
    assert_eq!(w.data["spec"]["tags"], json!(["a", "b"]));

    let failing: json_patch::Patch =
        serde_json::from_value(json!([{ "op": "test", "path": "/spec/size", "value": 99 }]))
            .unwrap_or_else(|e| panic!("{e}"));
    let error = api_error(
        api.patch("w", &PatchParams::default(), &Patch::Json::<()>(failing))
            .await,
    );
    assert_eq!((error.code, error.reason.as_str()), (422, "Invalid"));

    let strategic = json!({ "spec": { "tags": ["c"] } });
    let w = api
        .patch("w", &PatchParams::default(), &Patch::Strategic(&strategic))
        .await?;
    assert_eq!(
        w.data["spec"]["tags"],
        json!(["c"]),
        "treated as a merge patch: lists replaced"
    );

    let apply = json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": { "name": "w" }, "spec": { "color": "blue" }
    });
    let w = api
        .patch("w", &PatchParams::apply("tests").force(), &Patch::Apply(&apply))
        .await?;
    assert_eq!(w.data["spec"], json!({ "size": 2, "tags": ["c"], "color": "blue" }));
    assert_eq!(
        server
            .requests()
            .last()
            .and_then(|r| r.query_param("fieldManager"))
            .as_deref(),
        Some("tests")
    );

    // Apply creates a missing object.
    let apply_new = json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": { "name": "fresh" }, "spec": { "size": 7 }
    });
    let fresh = api
        .patch("fresh", &PatchParams::apply("tests"), &Patch::Apply(&apply_new))
        .await?;
    assert_eq!((field(&fresh, "/spec/size"), generation(&fresh)), (&json!(7), 1));

    // Merge patch on a missing object is 404.
    let missing = api_error(api.patch("nope", &PatchParams::default(), &Patch::Merge(&merge)).await);
    assert_eq!(missing.code, 404);

    // A patch carrying a stale resourceVersion conflicts.
    let stale = json!({ "metadata": { "resourceVersion": "1" }, "spec": { "size": 3 } });
    let conflict = api_error(api.patch("w", &PatchParams::default(), &Patch::Merge(&stale)).await);
    assert_eq!(conflict.code, 409);
    Ok(())
}

#[tokio::test]
async fn status_subresource_and_generation() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    let mut w = widget("w", json!({ "size": 1 }));
    w.data["status"] = json!({ "phase": "ignored on create" });
    let created = api.create(&PostParams::default(), &w).await?;
    assert_eq!(field(&created, "/status"), &json!(null));
    assert_eq!(generation(&created), 1);

    // Status writes change only status and keep the generation.
    let status = json!({ "status": { "phase": "Ready" }, "spec": { "size": 100 } });
    let w = api
        .patch_status("w", &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    assert_eq!(
        (field(&w, "/status/phase"), field(&w, "/spec/size")),
        (&json!("Ready"), &json!(1))
    );
    assert_eq!(generation(&w), 1);
    assert_eq!(field(&api.get_status("w").await?, "/status/phase"), &json!("Ready"));

    // Main-resource writes ignore status and bump the generation on spec changes only.
    let main = json!({ "status": { "phase": "Hacked" }, "spec": { "size": 2 } });
    let w = api.patch("w", &PatchParams::default(), &Patch::Merge(&main)).await?;
    assert_eq!(
        (field(&w, "/status/phase"), field(&w, "/spec/size")),
        (&json!("Ready"), &json!(2))
    );
    assert_eq!(generation(&w), 2);
    let labels = json!({ "metadata": { "labels": { "x": "y" } } });
    let w = api.patch("w", &PatchParams::default(), &Patch::Merge(&labels)).await?;
    assert_eq!(generation(&w), 2, "metadata changes keep the generation");

    // A no-op write keeps the resource version.
    let before = resource_version(&w);
    let w = api.patch("w", &PatchParams::default(), &Patch::Merge(&labels)).await?;
    assert_eq!(resource_version(&w), before);
    let w = api
        .patch_status("w", &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    assert_eq!(resource_version(&w), before);

    // replace_status takes only the status of the body.
    let mut body = w.clone();
    body.data["status"] = json!({ "phase": "Done" });
    body.data["spec"] = json!({ "size": 50 });
    let w = api.replace_status("w", &PostParams::default(), &body).await?;
    assert_eq!(
        (field(&w, "/status/phase"), field(&w, "/spec/size")),
        (&json!("Done"), &json!(2))
    );
    assert_eq!(generation(&w), 2);

    // Core resources have no status subresource: ConfigMap-like objects keep what is written.
    let pods: Api<DynamicObject> = Api::namespaced_with(
        server.client(),
        "default",
        &kube::api::ApiResource::from_gvk_with_plural(&kube::api::GroupVersionKind::gvk("", "v1", "Pod"), "pods"),
    );
    let mut pod = DynamicObject::new(
        "p",
        &kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&()),
    );
    pod.data = json!({ "spec": {}, "status": { "phase": "Running" } });
    let pod = pods.create(&PostParams::default(), &pod).await?;
    assert_eq!(field(&pod, "/status/phase"), &json!("Running"));
    Ok(())
}

/// The `/scale` subresource of a custom resource: a `Scale` over `.spec.replicas` and `.status.replicas`; writing
/// it writes the object's `.spec.replicas` (and bumps its generation); a negative count is refused.
#[tokio::test]
async fn scale_subresource() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    api.create(
        &PostParams::default(),
        &widget("w", json!({ "replicas": 2, "size": 1 })),
    )
    .await?;
    api.patch_status(
        "w",
        &PatchParams::default(),
        &Patch::Merge(&json!({"status": {"replicas": 2}})),
    )
    .await?;
    let scale = api.get_scale("w").await?;
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
    assert_eq!(scale.status.map(|s| s.replicas), Some(2));

    let scaled = api
        .patch_scale(
            "w",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"replicas": 5}})),
        )
        .await?;
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(5));
    let w = api.get("w").await?;
    assert_eq!(
        (field(&w, "/spec/replicas"), field(&w, "/spec/size")),
        (&json!(5), &json!(1))
    );
    assert_eq!(field(&w, "/status/replicas"), &json!(2), "status is the controller's");
    assert_eq!(generation(&w), 2);

    let refused = api_error(
        api.patch_scale(
            "w",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"replicas": -1}})),
        )
        .await,
    );
    assert_eq!(refused.code, 422, "{}", refused.message);
    let missing = api_error(api.get_scale("nope").await);
    assert_eq!(missing.code, 404);
    Ok(())
}

#[tokio::test]
async fn versions_share_one_resource() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let v1 = widgets(server.client(), "default");
    let v2: Api<DynamicObject> = Api::namespaced_with(server.client(), "default", &widget_resource("v2"));
    v1.create(&PostParams::default(), &widget("w", json!({ "size": 1 })))
        .await?;
    let through_v2 = v2.get("w").await?;
    assert_eq!(
        through_v2.types.as_ref().map(|t| t.api_version.as_str()),
        Some("example.com/v2")
    );
    assert_eq!(field(&through_v2, "/spec/size"), &json!(1), "no conversion");
    assert_eq!(
        server
            .get("example.com/v2", "widgets", Some("default"), "w")
            .map(|o| o["apiVersion"].clone()),
        Some(json!("example.com/v2"))
    );
    Ok(())
}
