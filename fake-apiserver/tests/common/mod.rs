//! Shared helpers of the integration tests.
#![allow(dead_code)]

use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use serde_json::Value;

/// `widgets.example.com`, served at v1 and v2.
pub fn widget_resource(version: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", version, "Widget"), "widgets")
}

pub fn widgets(client: Client, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client, namespace, &widget_resource("v1"))
}

pub fn widget(name: &str, spec: Value) -> DynamicObject {
    let mut object = DynamicObject::new(name, &widget_resource("v1"));
    object.data = serde_json::json!({ "spec": spec });
    object
}

pub fn field<'a>(object: &'a DynamicObject, pointer: &str) -> &'a Value {
    object.data.pointer(pointer).unwrap_or(&Value::Null)
}

pub fn generation(object: &DynamicObject) -> i64 {
    object.metadata.generation.unwrap_or_default()
}

pub fn resource_version(object: &DynamicObject) -> u64 {
    object
        .metadata
        .resource_version
        .as_deref()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or_default()
}

/// The `kube::Error::Api` status of a result that must have failed.
pub fn api_error<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> kube::core::Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        other => panic!("expected an API error, got {other:?}"),
    }
}
