//! `aks_reconciler::events::Recorder` against the fake API server: a repeat is a merge patch of its series, a new
//! reason or object is a new Event, and a series whose Event object is gone starts again.

use aks_reconciler::events::{Event, EventType, Recorder, Reporter};
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::ObjectReference;
use serde_json::json;

fn reference(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("containerservice.armgen.dev/v2alpha1".into()),
        kind: Some("ManagedCluster".into()),
        name: Some(name.into()),
        namespace: Some("team-a".into()),
        uid: Some(format!("uid-{name}")),
        ..Default::default()
    }
}

fn event(reason: &str) -> Event {
    Event {
        type_: EventType::Normal,
        reason: reason.into(),
        note: Some("a note".into()),
        action: "Reconcile".into(),
        secondary: None,
    }
}

const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/team-a/events";

#[tokio::test]
async fn repeats_are_one_series_and_a_gone_event_starts_again() -> Result<(), kube::Error> {
    let server = FakeApiServer::new();
    let reporter = Reporter {
        controller: "aks-reconciler".into(),
        instance: Some("pod-1".into()),
    };
    let recorder = Recorder::new(server.client(), reporter);
    for _ in 0..3 {
        recorder.publish(&event("Created"), &reference("c1")).await?;
    }
    let events = server.list("events.k8s.io/v1", "events");
    assert_eq!(events.len(), 1, "{events:?}");
    let first = &events[0];
    assert_eq!(first["series"]["count"], json!(3));
    assert_eq!(first["reason"], json!("Created"));
    assert_eq!(first["note"], json!("a note"));
    assert_eq!(first["type"], json!("Normal"));
    assert_eq!(first["regarding"]["name"], json!("c1"));
    assert_eq!(first["reportingController"], json!("aks-reconciler"));
    assert_eq!(first["reportingInstance"], json!("pod-1"));
    assert_eq!(server.count("POST", EVENTS), 1);
    assert_eq!(server.count("PATCH", &format!("{EVENTS}/")), 2);
    assert_eq!(recorder.remembered(), 1);

    // Another reason, another object: new series.
    recorder.publish(&event("Updated"), &reference("c1")).await?;
    recorder.publish(&event("Created"), &reference("c2")).await?;
    assert_eq!(server.list("events.k8s.io/v1", "events").len(), 3);
    assert_eq!(recorder.remembered(), 3);

    // The API server dropped the first Event (its TTL): the next repeat creates a new one.
    let name = first["metadata"]["name"].as_str().unwrap_or_default().to_string();
    assert!(
        server
            .delete("events.k8s.io/v1", "events", Some("team-a"), &name)
            .is_some()
    );
    recorder.publish(&event("Created"), &reference("c1")).await?;
    let events = server.list("events.k8s.io/v1", "events");
    assert_eq!(events.len(), 3);
    let again = events
        .iter()
        .find(|e| e["reason"] == json!("Created") && e["regarding"]["name"] == json!("c1"))
        .map(|e| e["series"].clone());
    assert_eq!(again, Some(serde_json::Value::Null), "a new series, no count yet");
    recorder.publish(&event("Created"), &reference("c1")).await?;
    let counts: Vec<_> = server
        .list("events.k8s.io/v1", "events")
        .iter()
        .filter(|e| e["regarding"]["name"] == json!("c1") && e["reason"] == json!("Created"))
        .map(|e| e["series"]["count"].clone())
        .collect();
    assert_eq!(counts, [json!(2)]);
    Ok(())
}
