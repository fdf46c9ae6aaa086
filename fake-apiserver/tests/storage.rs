//! Storage versions of custom resources: the version each object is encoded at, re-encoding on a write that
//! changes nothing (what a storage version migration relies on), conversion through a converter, and the checks on
//! a CRD's `status.storedVersions`.
//!
//! The fixture CRD `widgets.example.com` has two versions that differ in one field name (`spec.colour` in v1,
//! `spec.color` in v2), so that a conversion shows.

mod common;

use common::{api_error, resource_version, widget_resource};
use fake_apiserver::FakeApiServer;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

fn crd(storage: &str, versions: &[&str]) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": versions.iter().map(|v| json!({
                "name": v, "served": true, "storage": *v == storage,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "subresources": {"status": {}},
            })).collect::<Vec<_>>(),
        },
    })
}

/// v1 `spec.colour` ↔ v2 `spec.color`.
fn convert(mut object: Value, to: &str) -> Result<Value, String> {
    let spec = object.get_mut("spec").and_then(Value::as_object_mut).ok_or("no spec")?;
    if spec.contains_key("broken") {
        return Err("cannot convert a broken widget".into());
    }
    let (from, into) = match to {
        "example.com/v1" => ("color", "colour"),
        "example.com/v2" => ("colour", "color"),
        other => return Err(format!("unknown version {other}")),
    };
    if let Some(value) = spec.remove(from) {
        spec.insert(into.to_string(), value);
    }
    object["apiVersion"] = json!(to);
    Ok(object)
}

fn crds(server: &FakeApiServer) -> Api<DynamicObject> {
    let resource = kube::api::ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        "customresourcedefinitions",
    );
    Api::all_with(server.client(), &resource)
}

fn widgets(server: &FakeApiServer, version: &str) -> Api<DynamicObject> {
    Api::namespaced_with(server.client(), "default", &widget_resource(version))
}

async fn install(server: &FakeApiServer, storage: &str) -> Result<DynamicObject, kube::Error> {
    let crds = crds(server);
    let mut object: DynamicObject = serde_json::from_value(crd(storage, &["v1", "v2"])).expect("CRD");
    match crds.get_opt("widgets.example.com").await? {
        None => crds.create(&PostParams::default(), &object).await,
        Some(existing) => {
            object.metadata.resource_version = existing.metadata.resource_version;
            crds.replace("widgets.example.com", &PostParams::default(), &object)
                .await
        }
    }
}

fn stored_versions(crd: &DynamicObject) -> Value {
    crd.data
        .pointer("/status/storedVersions")
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_write_that_changes_nothing_re_encodes_an_object_at_an_old_storage_version() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    server.set_converter("example.com", convert);
    install(&server, "v1").await?;
    let v1 = widgets(&server, "v1");
    let v2 = widgets(&server, "v2");
    let mut blue: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v2", "kind": "Widget",
        "metadata": {"name": "blue"}, "spec": {"color": "blue"},
    }))
    .expect("widget");
    // Written at v2, stored at the storage version v1, read at either.
    blue = v2.create(&PostParams::default(), &blue).await?;
    assert_eq!(blue.data["spec"], json!({"color": "blue"}));
    assert_eq!(
        server
            .stored_version("example.com/v1", "widgets", Some("default"), "blue")
            .as_deref(),
        Some("v1")
    );
    assert_eq!(v1.get("blue").await?.data["spec"], json!({"colour": "blue"}));

    // The storage version moves: the object stays at v1 until it is written.
    let crd = install(&server, "v2").await?;
    assert_eq!(stored_versions(&crd), json!(["v1", "v2"]));
    assert_eq!(
        server
            .stored_version("example.com/v1", "widgets", Some("default"), "blue")
            .as_deref(),
        Some("v1")
    );

    // A PUT of the object as read changes nothing but re-encodes it: a new resource version, stored at v2.
    let read = v1.get("blue").await?;
    let rewritten = v1.replace("blue", &PostParams::default(), &read).await?;
    assert!(
        resource_version(&rewritten) > resource_version(&read),
        "the re-encoding is a write"
    );
    assert_eq!(
        rewritten.metadata.generation, read.metadata.generation,
        "the spec did not change"
    );
    assert_eq!(
        server
            .stored_version("example.com/v1", "widgets", Some("default"), "blue")
            .as_deref(),
        Some("v2")
    );
    assert_eq!(v1.get("blue").await?.data["spec"], json!({"colour": "blue"}));
    assert_eq!(v2.get("blue").await?.data["spec"], json!({"color": "blue"}));

    // Now it is a no-op.
    let again = v1.replace("blue", &PostParams::default(), &rewritten).await?;
    assert_eq!(resource_version(&again), resource_version(&rewritten));

    // A failing conversion is a 500 naming it.
    let broken: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "broken"}, "spec": {"broken": true},
    }))
    .expect("widget");
    let status = api_error(v1.create(&PostParams::default(), &broken).await);
    assert_eq!(status.code, 500);
    assert!(
        status.message.contains("cannot convert a broken widget"),
        "{}",
        status.message
    );
    Ok(())
}

#[tokio::test]
async fn stored_versions_are_checked_as_the_api_server_checks_them() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    install(&server, "v1").await?;
    install(&server, "v2").await?;
    let crds = crds(&server);
    let params = PatchParams::default();
    let patch = |versions: Value| Patch::Merge(json!({"status": {"storedVersions": versions}}));

    for (versions, needle) in [
        (json!([]), "must have at least one stored version"),
        (json!(["v1"]), "must have the storage version v2"),
        (
            json!(["v2", "v3"]),
            "status.storedVersions[1]: Invalid value: \"v3\": must appear in spec.versions",
        ),
    ] {
        let status = api_error(
            crds.patch_status("widgets.example.com", &params, &patch(versions))
                .await,
        );
        assert_eq!(status.code, 422, "{}", status.message);
        assert!(status.message.contains(needle), "{}", status.message);
    }

    // v1 cannot leave spec.versions while it is a stored version…
    let mut only_v2: DynamicObject = serde_json::from_value(crd("v2", &["v2"])).expect("CRD");
    only_v2.metadata.resource_version = crds.get("widgets.example.com").await?.metadata.resource_version;
    let status = api_error(
        crds.replace("widgets.example.com", &PostParams::default(), &only_v2)
            .await,
    );
    assert_eq!(status.code, 422);
    assert!(
        status.message.contains("\"v1\": must appear in spec.versions"),
        "{}",
        status.message
    );

    // …and can once storedVersions was reduced to the storage version.
    let reduced = crds
        .patch_status("widgets.example.com", &params, &patch(json!(["v2"])))
        .await?;
    assert_eq!(stored_versions(&reduced), json!(["v2"]));
    only_v2.metadata.resource_version = reduced.metadata.resource_version;
    let replaced = crds
        .replace("widgets.example.com", &PostParams::default(), &only_v2)
        .await?;
    assert_eq!(stored_versions(&replaced), json!(["v2"]));
    Ok(())
}
