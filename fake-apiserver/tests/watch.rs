//! Watches: raw `Api::watch`, kube-runtime's `watcher` (both initial list strategies) and a `reflector` store.

mod common;

use std::time::Duration;

use common::{widget, widgets};
use fake_apiserver::FakeApiServer;
use futures::{Stream, StreamExt};
use kube::ResourceExt;
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use serde_json::json;

async fn next<T>(stream: &mut (impl Stream<Item = T> + Unpin)) -> T {
    match tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
        Ok(Some(item)) => item,
        Ok(None) => panic!("the stream ended"),
        Err(_) => panic!("no event within five seconds"),
    }
}

fn describe(event: &WatchEvent<DynamicObject>) -> String {
    match event {
        WatchEvent::Added(o) => format!("ADDED {}", o.name_any()),
        WatchEvent::Modified(o) => format!("MODIFIED {}", o.name_any()),
        WatchEvent::Deleted(o) => format!("DELETED {}", o.name_any()),
        WatchEvent::Bookmark(b) => format!("BOOKMARK {}", b.metadata.resource_version),
        WatchEvent::Error(e) => format!("ERROR {}", e.code),
    }
}

#[tokio::test]
async fn raw_watch_from_a_resource_version_and_selectors() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    let a = api.create(&PostParams::default(), &widget("a", json!({}))).await?;
    let from = a.resource_version().unwrap_or_default();
    api.create(&PostParams::default(), &widget("b", json!({}))).await?;
    let patch = json!({ "metadata": { "labels": { "tier": "front" } } });
    api.patch("a", &PatchParams::default(), &Patch::Merge(&patch)).await?;

    // Changes since `from` are replayed, then live changes follow.
    let mut all = api.watch(&WatchParams::default(), &from).await?.boxed();
    assert_eq!(describe(&next(&mut all).await?), "ADDED b");
    assert_eq!(describe(&next(&mut all).await?), "MODIFIED a");
    api.delete("b", &DeleteParams::default()).await?;
    assert_eq!(describe(&next(&mut all).await?), "DELETED b");

    // "0": the current objects first. Leaving the selector is a DELETED event, entering it an ADDED one.
    let mut front = api
        .watch(&WatchParams::default().labels("tier=front"), "0")
        .await?
        .boxed();
    assert_eq!(describe(&next(&mut front).await?), "ADDED a");
    let leave = json!({ "metadata": { "labels": { "tier": "back" } } });
    api.patch("a", &PatchParams::default(), &Patch::Merge(&leave)).await?;
    assert_eq!(describe(&next(&mut front).await?), "DELETED a");
    api.patch("a", &PatchParams::default(), &Patch::Merge(&patch)).await?;
    assert_eq!(describe(&next(&mut front).await?), "ADDED a");
    assert_eq!(describe(&next(&mut all).await?), "MODIFIED a");
    assert_eq!(describe(&next(&mut all).await?), "MODIFIED a");

    // Other namespaces and resources are not seen; a no-op write sends nothing.
    widgets(server.client(), "elsewhere")
        .create(&PostParams::default(), &widget("x", json!({})))
        .await?;
    api.patch("a", &PatchParams::default(), &Patch::Merge(&patch)).await?;
    api.create(&PostParams::default(), &widget("c", json!({}))).await?;
    assert_eq!(describe(&next(&mut all).await?), "ADDED c");
    Ok(())
}

/// Tokio's clock is paused (the server's bookmark ticker and `timeoutSeconds` run on it), so the two seconds cost
/// no wall time and the end of the watch is exact.
#[tokio::test(start_paused = true)]
async fn bookmarks_and_timeout() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    api.create(&PostParams::default(), &widget("a", json!({}))).await?;
    let rv = server.resource_version().to_string();
    let mut stream = api.watch(&WatchParams::default().timeout(2), &rv).await?.boxed();
    let started = tokio::time::Instant::now();
    let mut bookmarks = 0;
    while let Some(event) = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .unwrap_or_else(|_| panic!("the watch did not end"))
    {
        match event? {
            WatchEvent::Bookmark(b) => {
                assert_eq!(b.metadata.resource_version, rv);
                assert_eq!(b.types.kind, "Widget");
                bookmarks += 1;
            }
            other => panic!("unexpected {}", describe(&other)),
        }
    }
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "the watch ended before its timeoutSeconds: {:?}",
        started.elapsed()
    );
    assert!(bookmarks >= 1);
    Ok(())
}

#[tokio::test]
async fn too_old_resource_version_is_expired() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    for i in 0..10_005 {
        server.insert(json!({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": format!("cm{i}"), "namespace": "default" }
        }));
    }
    let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> = kube::Api::default_namespaced(server.client());
    let mut stream = api.watch(&WatchParams::default(), "1").await?.boxed();
    match next(&mut stream).await? {
        WatchEvent::Error(status) => assert_eq!((status.code, status.reason.as_str()), (410, "Expired")),
        other => panic!("expected a 410, got {other:?}"),
    }
    assert!(stream.next().await.is_none(), "the watch ends after the error");
    Ok(())
}

/// Tokio's clock is paused: waiting out the watch's `timeoutSeconds` costs no wall time.
#[tokio::test(start_paused = true)]
async fn watcher_sees_creates_updates_and_deletes() -> Result<(), Box<dyn std::error::Error>> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    api.create(&PostParams::default(), &widget("before", json!({}))).await?;
    let mut events = watcher(api.clone(), watcher::Config::default().timeout(1)).boxed();
    assert!(matches!(next(&mut events).await?, watcher::Event::Init));
    assert!(matches!(next(&mut events).await?, watcher::Event::InitApply(o) if o.name_any() == "before"));
    assert!(matches!(next(&mut events).await?, watcher::Event::InitDone));

    api.create(&PostParams::default(), &widget("after", json!({ "n": 1 })))
        .await?;
    assert!(matches!(next(&mut events).await?, watcher::Event::Apply(o) if o.name_any() == "after"));
    // Survives the server ending the watch (timeoutSeconds=1): changes in between are not lost.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let patch = json!({ "spec": { "n": 2 } });
    api.patch("after", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    match next(&mut events).await? {
        watcher::Event::Apply(o) => assert_eq!(o.data["spec"]["n"], json!(2)),
        other => panic!("unexpected {other:?}"),
    }
    api.delete("before", &DeleteParams::default()).await?;
    assert!(matches!(next(&mut events).await?, watcher::Event::Delete(o) if o.name_any() == "before"));
    // The watcher listed once and watched from the list's resource version.
    assert_eq!(
        server.count("GET", "/widgets"),
        server
            .requests()
            .iter()
            .filter(|r| r.query_param("watch").is_some())
            .count()
            + 1
    );
    Ok(())
}

#[tokio::test]
async fn streaming_list_watcher() -> Result<(), Box<dyn std::error::Error>> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    api.create(&PostParams::default(), &widget("a", json!({}))).await?;
    api.create(&PostParams::default(), &widget("b", json!({}))).await?;
    let mut objects = watcher(api.clone(), watcher::Config::default().streaming_lists())
        .applied_objects()
        .boxed();
    let first = next(&mut objects).await?;
    let second = next(&mut objects).await?;
    assert_eq!(
        (first.name_any(), second.name_any()),
        ("a".to_string(), "b".to_string())
    );
    api.create(&PostParams::default(), &widget("c", json!({}))).await?;
    assert_eq!(next(&mut objects).await?.name_any(), "c");
    let watch = server.requests().into_iter().find(|r| r.query_param("watch").is_some());
    assert_eq!(
        watch.and_then(|r| r.query_param("sendInitialEvents")).as_deref(),
        Some("true")
    );
    assert_eq!(server.count("GET", "/widgets"), 1, "one watch, no list request");
    Ok(())
}

#[tokio::test]
async fn reflector_store_follows_the_server() -> Result<(), Box<dyn std::error::Error>> {
    let server = FakeApiServer::new();
    let api = widgets(server.client(), "default");
    api.create(&PostParams::default(), &widget("a", json!({ "n": 1 })))
        .await?;
    let writer = reflector::store::Writer::new(common::widget_resource("v1"));
    let reader = writer.as_reader();
    let stream = reflector(writer, watcher(api.clone(), watcher::Config::default()));
    let running = tokio::spawn(stream.for_each(|_| async {}));
    tokio::time::timeout(Duration::from_secs(5), reader.wait_until_ready())
        .await
        .unwrap_or_else(|_| panic!("the store was never ready"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reader.state().len(), 1);

    let names = |reader: &reflector::Store<DynamicObject>| {
        let mut names: Vec<(String, serde_json::Value)> = reader
            .state()
            .iter()
            .map(|o| (o.name_any(), o.data["spec"]["n"].clone()))
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        names
    };
    api.create(&PostParams::default(), &widget("b", json!({ "n": 1 })))
        .await?;
    let patch = json!({ "spec": { "n": 2 } });
    api.patch("a", &PatchParams::default(), &Patch::Merge(&patch)).await?;
    api.delete("b", &DeleteParams::default()).await?;
    api.create(&PostParams::default(), &widget("c", json!({ "n": 3 })))
        .await?;
    let expected = vec![("a".to_string(), json!(2)), ("c".to_string(), json!(3))];
    for _ in 0..500 {
        if names(&reader) == expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(names(&reader), expected);
    running.abort();
    Ok(())
}
