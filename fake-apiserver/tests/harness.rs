//! Test support: request log, fault injection, events, leases, and malformed requests.

mod common;

use common::{api_error, widget, widgets};
use fake_apiserver::FakeApiServer;
use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use serde_json::{Value, json};

#[tokio::test]
async fn request_log() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "ns1");
    api.create(&PostParams::default(), &widget("w", json!({ "size": 1 })))
        .await?;
    let patch = json!({ "spec": { "size": 2 } });
    api.patch("w", &PatchParams::default(), &Patch::Merge(&patch)).await?;
    api.list(&ListParams::default().labels("a=b")).await?;

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].path, "/apis/example.com/v1/namespaces/ns1/widgets");
    assert_eq!(
        requests[0].body.as_ref().map(|b| b["spec"].clone()),
        Some(json!({ "size": 1 }))
    );
    assert_eq!(requests[1].method, "PATCH");
    assert_eq!(requests[1].path, "/apis/example.com/v1/namespaces/ns1/widgets/w");
    assert_eq!(requests[1].body, Some(patch));
    assert_eq!(requests[2].query_param("labelSelector").as_deref(), Some("a=b"));
    assert_eq!(requests[2].body, None);
    assert_eq!(server.count("patch", "/widgets/w"), 1);
    assert_eq!(server.count("*", "/widgets"), 3);
    assert_eq!(server.count("GET", "/configmaps"), 0);
    server.clear_requests();
    assert!(server.requests().is_empty());
    Ok(())
}

#[tokio::test]
async fn injected_failures() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    api.create(&PostParams::default(), &widget("w", json!({}))).await?;

    server.fail_next("PATCH", "/widgets/w", 409, 2);
    server.fail_next("*", "/widgets", 500, 1);
    let patch = json!({ "spec": { "size": 2 } });
    for _ in 0..2 {
        let error = api_error(api.patch("w", &PatchParams::default(), &Patch::Merge(&patch)).await);
        assert_eq!((error.code, error.reason.as_str()), (409, "Conflict"));
    }
    // The first fault is used up; the second matches any method.
    let error = api_error(api.patch("w", &PatchParams::default(), &Patch::Merge(&patch)).await);
    assert_eq!((error.code, error.reason.as_str()), (500, "InternalError"));
    assert!(error.message.contains("injected"), "{}", error.message);
    // Failed requests changed nothing and were recorded.
    assert_eq!(api.get("w").await?.data["spec"], json!({}));
    api.patch("w", &PatchParams::default(), &Patch::Merge(&patch)).await?;
    assert_eq!(server.count("PATCH", "/widgets/w"), 4);

    server.fail_next("GET", "/widgets/w", 503, 5);
    server.clear_faults();
    api.get("w").await?;
    Ok(())
}

#[tokio::test]
async fn recorder_events_and_core_events() -> Result<(), Box<dyn std::error::Error>> {
    let server = FakeApiServer::new();
    let client = server.client();
    let reporter = Reporter {
        controller: "armgen-tests".into(),
        instance: None,
    };
    let recorder = Recorder::new(client.clone(), reporter);
    let reference = ObjectReference {
        api_version: Some("example.com/v1".into()),
        kind: Some("Widget".into()),
        name: Some("w".into()),
        namespace: Some("ns1".into()),
        uid: Some("1234".into()),
        ..Default::default()
    };
    let event = Event {
        type_: EventType::Normal,
        reason: "Reconciled".into(),
        note: Some("all good".into()),
        action: "Reconcile".into(),
        secondary: None,
    };
    recorder.publish(&event, &reference).await?;
    recorder.publish(&event, &reference).await?;
    let events = server.list("events.k8s.io/v1", "events");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["reason"], json!("Reconciled"));
    assert_eq!(events[0]["regarding"]["name"], json!("w"));
    assert_eq!(events[0]["series"]["count"], json!(2), "the repeat was a merge patch");
    assert_eq!(server.count("POST", "/apis/events.k8s.io/v1/namespaces/ns1/events"), 1);
    assert_eq!(
        server.count("PATCH", "/apis/events.k8s.io/v1/namespaces/ns1/events/"),
        1
    );

    // Core v1 events are another resource.
    let core: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client, "ns1");
    let mut core_event = k8s_openapi::api::core::v1::Event::default();
    core_event.metadata.generate_name = Some("w.".into());
    core_event.involved_object = reference;
    core_event.reason = Some("Old".into());
    core.create(&PostParams::default(), &core_event).await?;
    let listed = core
        .list(&ListParams::default().fields("involvedObject.name=w"))
        .await?;
    assert_eq!(listed.items.len(), 1);
    assert_eq!(server.list("v1", "events").len(), 1);
    Ok(())
}

#[tokio::test]
async fn version_endpoint() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let info = server.client().apiserver_version().await?;
    assert_eq!((info.major.as_str(), info.minor.as_str()), ("1", "33"));
    Ok(())
}

/// Sends a raw request to the service and returns (status code, JSON body).
async fn raw(server: &FakeApiServer, method: &str, uri: &str, content_type: &str, body: &str) -> (u16, Value) {
    let request = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(kube::client::Body::from(body.as_bytes().to_vec()))
        .unwrap_or_else(|e| panic!("{e}"));
    let Ok(response) = tower::Service::call(&mut server.clone(), request).await;
    let code = response.status().as_u16();
    let bytes = match response.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    let value = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("not JSON ({e}): {bytes:?}"));
    (code, value)
}

#[tokio::test]
async fn malformed_and_unknown_requests_are_status_errors() {
    let server = FakeApiServer::new();
    let json_type = "application/json";
    let merge = "application/merge-patch+json";
    let ns = "/api/v1/namespaces/default/configmaps";
    server.insert(
        json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "cm", "namespace": "default" } }),
    );
    let cases: Vec<(&str, String, &str, &str, u16, &str)> = vec![
        ("GET", "/".into(), json_type, "", 404, "NotFound"),
        ("GET", "/healthz".into(), json_type, "", 404, "NotFound"),
        ("GET", "/apis/example.com".into(), json_type, "", 404, "NotFound"),
        ("GET", format!("{ns}/cm/scale"), json_type, "", 404, "NotFound"),
        ("GET", format!("{ns}/cm/status/extra"), json_type, "", 404, "NotFound"),
        ("POST", format!("{ns}/cm"), json_type, "{}", 405, "MethodNotAllowed"),
        (
            "DELETE",
            format!("{ns}/cm/status"),
            json_type,
            "",
            405,
            "MethodNotAllowed",
        ),
        ("OPTIONS", ns.to_string(), json_type, "", 405, "MethodNotAllowed"),
        ("POST", ns.to_string(), json_type, "{not json", 400, "BadRequest"),
        ("POST", ns.to_string(), json_type, "", 400, "BadRequest"),
        ("POST", ns.to_string(), json_type, "[1, 2]", 400, "BadRequest"),
        ("POST", ns.to_string(), json_type, r#"{"metadata": {}}"#, 422, "Invalid"),
        (
            "POST",
            ns.to_string(),
            json_type,
            r#"{"metadata": {"name": "x", "namespace": "other"}}"#,
            400,
            "BadRequest",
        ),
        (
            "PUT",
            format!("{ns}/cm"),
            json_type,
            r#"{"metadata": {"name": "other"}}"#,
            400,
            "BadRequest",
        ),
        ("PUT", format!("{ns}/cm"), json_type, "42", 400, "BadRequest"),
        (
            "PUT",
            format!("{ns}/missing"),
            json_type,
            r#"{"metadata": {}}"#,
            404,
            "NotFound",
        ),
        (
            "PATCH",
            format!("{ns}/cm"),
            "text/plain",
            "{}",
            415,
            "UnsupportedMediaType",
        ),
        (
            "PATCH",
            format!("{ns}/cm"),
            "application/json-patch+json",
            r#"{"op": "x"}"#,
            422,
            "Invalid",
        ),
        (
            "PATCH",
            format!("{ns}/cm"),
            "application/json-patch+json",
            r#"[{"op": "remove", "path": "/nope"}]"#,
            422,
            "Invalid",
        ),
        (
            "PATCH",
            format!("{ns}/cm"),
            "application/apply-patch+yaml",
            "data: {a: b}",
            422,
            "Invalid",
        ),
        (
            "PATCH",
            format!("{ns}/cm?fieldManager=t"),
            "application/apply-patch+yaml",
            "[1]",
            400,
            "BadRequest",
        ),
        (
            "PATCH",
            format!("{ns}/cm?fieldManager=t"),
            "application/apply-patch+yaml",
            "{a: [",
            400,
            "BadRequest",
        ),
        (
            "PATCH",
            format!("{ns}/cm"),
            merge,
            r#"{"metadata": {"name": "renamed"}}"#,
            400,
            "BadRequest",
        ),
        ("PATCH", format!("{ns}/cm"), merge, "[1]", 400, "BadRequest"),
        (
            "GET",
            format!("{ns}?labelSelector=a%20in%20(b"),
            json_type,
            "",
            400,
            "BadRequest",
        ),
        (
            "GET",
            format!("{ns}?fieldSelector=metadata.name"),
            json_type,
            "",
            400,
            "BadRequest",
        ),
        ("GET", format!("{ns}?limit=abc"), json_type, "", 400, "BadRequest"),
        (
            "GET",
            format!("{ns}?continue=garbage"),
            json_type,
            "",
            400,
            "BadRequest",
        ),
        (
            "GET",
            format!("{ns}?watch=true&resourceVersion=abc"),
            json_type,
            "",
            400,
            "BadRequest",
        ),
        (
            "GET",
            format!("{ns}?watch=true&timeoutSeconds=-1"),
            json_type,
            "",
            400,
            "BadRequest",
        ),
        (
            "POST",
            format!("{ns}?dryRun=All"),
            json_type,
            r#"{"metadata": {"name": "d"}}"#,
            400,
            "BadRequest",
        ),
        (
            "DELETE",
            format!("{ns}/cm"),
            json_type,
            r#"{"propagationPolicy": "Sometimes"}"#,
            400,
            "BadRequest",
        ),
        ("DELETE", format!("{ns}/cm"), json_type, "[]", 400, "BadRequest"),
    ];
    for (method, uri, content_type, body, code, reason) in cases {
        let (actual, status) = raw(&server, method, &uri, content_type, body).await;
        assert_eq!(
            (actual, status["reason"].as_str()),
            (code, Some(reason)),
            "{method} {uri} {body}: {status}"
        );
        assert_eq!(status["kind"], json!("Status"));
        assert_eq!(status["status"], json!("Failure"));
        assert_eq!(status["code"], json!(code));
    }
    // Nothing was changed by the failures.
    assert_eq!(server.list("v1", "configmaps").len(), 1);
    let cm = server
        .get("v1", "configmaps", Some("default"), "cm")
        .unwrap_or_default();
    assert_eq!(cm["metadata"]["resourceVersion"], json!("1"));

    // The not-found status carries details, as the API server's does.
    let (_, status) = raw(&server, "GET", &format!("{ns}/nope"), json_type, "").await;
    assert_eq!(
        status["details"],
        json!({ "name": "nope", "group": "", "kind": "configmaps" })
    );
    let api: Api<ConfigMap> = Api::default_namespaced(server.client());
    assert!(api.get_opt("nope").await.is_ok_and(|cm| cm.is_none()));

    // A YAML apply body works.
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n";
    let (code, applied) = raw(
        &server,
        "PATCH",
        &format!("{ns}/cm?fieldManager=t&force=true"),
        "application/apply-patch+yaml",
        yaml,
    )
    .await;
    assert_eq!((code, applied["data"].clone()), (200, json!({ "a": "b" })));
}

#[tokio::test]
async fn cluster_scoped_resources() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let resource = kube::api::ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("example.com", "v1", "Cluster"),
        "clusters",
    );
    let api: Api<DynamicObject> = Api::all_with(server.client(), &resource);
    let mut object = DynamicObject::new("c1", &resource);
    object.metadata.namespace = Some("ignored".into());
    let created = api.create(&PostParams::default(), &object).await?;
    assert_eq!(created.metadata.namespace, None);
    assert!(server.get("example.com/v1", "clusters", None, "c1").is_some());
    assert_eq!(api.list(&ListParams::default()).await?.items.len(), 1);
    assert_eq!(server.count("POST", "/apis/example.com/v1/clusters"), 1);
    Ok(())
}
