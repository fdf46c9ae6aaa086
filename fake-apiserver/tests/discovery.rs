//! Discovery through kube-rs's own discovery client (`kube::Discovery`, which reads the legacy `/api` and `/apis`
//! documents), the status the server gives CustomResourceDefinitions, and the OpenAPI v2 document.

use fake_apiserver::FakeApiServer;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Discovery;
use kube::api::{Api, PostParams};
use kube::discovery::Scope;
use serde_json::{Value, json};

fn crd(group: &str, plural: &str, kind: &str, scope: &str, versions: Value) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "kind": kind, "shortNames": ["wd"], "categories": ["all"]},
            "versions": versions,
        },
    }))
    .expect("a CRD")
}

fn version(name: &str, served: bool, storage: bool) -> Value {
    json!({
        "name": name, "served": served, "storage": storage,
        "schema": {"openAPIV3Schema": {"type": "object"}},
        "subresources": {"status": {}},
    })
}

async fn get(server: &FakeApiServer, path: &str) -> Result<Value, kube::Error> {
    let request = http::Request::get(path).body(Vec::new()).expect("a request");
    server.client().request::<Value>(request).await
}

#[tokio::test]
async fn built_in_resources_and_installed_crds_are_discovered() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    let versions = json!([
        version("v1", true, true),
        version("v2beta1", true, false),
        version("v0", false, false)
    ]);
    let created = crds
        .create(
            &PostParams::default(),
            &crd("example.com", "widgets", "Widget", "Namespaced", versions),
        )
        .await?;
    crds.create(
        &PostParams::default(),
        &crd(
            "example.com",
            "gadgets",
            "Gadget",
            "Cluster",
            json!([version("v1", true, true)]),
        ),
    )
    .await?;

    // Established at once, with the names accepted and the storage version recorded.
    let status = serde_json::to_value(created.status).expect("JSON");
    let conditions: Vec<(&str, &str)> = status["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .map(|c| {
            (
                c["type"].as_str().unwrap_or_default(),
                c["status"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(conditions, [("NamesAccepted", "True"), ("Established", "True")]);
    assert_eq!(status["acceptedNames"]["listKind"], "WidgetList");
    assert_eq!(status["acceptedNames"]["singular"], "widget");
    assert_eq!(status["storedVersions"], json!(["v1"]));

    let discovery = Discovery::new(server.client()).run().await?;
    let group = discovery.get("example.com").expect("the CRD group");
    // Served versions only, in Kubernetes priority order: GA first.
    assert_eq!(group.versions().collect::<Vec<_>>(), ["v1", "v2beta1"]);
    assert_eq!(group.preferred_version_or_latest(), "v1");
    let (widgets, capabilities) = group
        .recommended_resources()
        .into_iter()
        .find(|(resource, _)| resource.plural == "widgets")
        .expect("widgets");
    assert_eq!((widgets.kind.as_str(), widgets.version.as_str()), ("Widget", "v1"));
    assert_eq!(capabilities.scope, Scope::Namespaced);
    assert!(capabilities.subresources.iter().any(|(r, _)| r.plural == "status"));
    let (_, gadget) = group
        .recommended_resources()
        .into_iter()
        .find(|(resource, _)| resource.plural == "gadgets")
        .expect("gadgets");
    assert_eq!(gadget.scope, Scope::Cluster);

    let apps = discovery.get("apps").expect("apps");
    assert!(
        apps.recommended_resources()
            .iter()
            .any(|(r, _)| r.plural == "deployments")
    );
    let core = discovery.get("").expect("the core group");
    let (_, namespaces) = core
        .recommended_resources()
        .into_iter()
        .find(|(r, _)| r.plural == "namespaces")
        .expect("namespaces");
    assert_eq!(namespaces.scope, Scope::Cluster);

    // The raw documents.
    let list = get(&server, "/apis/example.com/v2beta1").await?;
    assert_eq!(list["kind"], "APIResourceList");
    assert_eq!(list["groupVersion"], "example.com/v2beta1");
    assert_eq!(list["resources"][0]["shortNames"], json!(["wd"]));
    assert_eq!(list["resources"][0]["categories"], json!(["all"]));
    let group = get(&server, "/apis/example.com").await?;
    assert_eq!(group["kind"], "APIGroup");
    assert_eq!(group["preferredVersion"]["groupVersion"], "example.com/v1");
    for missing in [
        "/apis/example.com/v0",
        "/apis/nothing.example",
        "/apis/nothing.example/v1",
        "/openapi/v3",
    ] {
        match get(&server, missing).await {
            Err(kube::Error::Api(status)) => assert_eq!(status.code, 404, "{missing}"),
            other => panic!("{missing}: {other:?}"),
        }
    }
    let openapi = get(&server, "/openapi/v2").await?;
    assert_eq!(openapi["swagger"], "2.0");
    assert_eq!(openapi["paths"], json!({}));

    // Deleting the CRD removes it from discovery.
    crds.delete("widgets.example.com", &Default::default()).await?;
    let discovery = Discovery::new(server.client()).run().await?;
    let group = discovery.get("example.com").expect("gadgets remain");
    assert!(!group.recommended_resources().iter().any(|(r, _)| r.plural == "widgets"));
    Ok(())
}

#[tokio::test]
async fn an_invalid_crd_is_refused() {
    let server = FakeApiServer::new();
    let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    let mut invalid = crd(
        "example.com",
        "widgets",
        "Widget",
        "Namespaced",
        json!([version("v1", true, false)]),
    );
    invalid.metadata.name = Some("widgets".into());
    match crds.create(&PostParams::default(), &invalid).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422);
            assert!(
                status.message.contains("exactly one version marked as storage"),
                "{}",
                status.message
            );
            assert!(status.message.contains("metadata.name"), "{}", status.message);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        server
            .list("apiextensions.k8s.io/v1", "customresourcedefinitions")
            .is_empty()
    );
}
