//! HTTP: request parsing, routing, responses and watch streams.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body::Frame;
use http_body_util::{BodyExt, Full, StreamBody};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use crate::error::ApiError;
use crate::selector::{FieldSelector, LabelSelector};
use crate::store::{
    Change, ChangeType, Converter, DeleteOptions, Filter, ObjectKey, ResourceId, UpdateMode, join_api_version,
    meta_str, present_with,
};
use crate::{FakeApiServer, RecordedRequest, ResponseBody};

/// How often an open watch that asked for bookmarks gets one.
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(1);

/// What a URL names.
#[derive(Debug, Clone)]
struct Target {
    group: String,
    version: String,
    /// `None` for cluster-scoped paths (and cross-namespace lists).
    namespace: Option<String>,
    plural: String,
    name: Option<String>,
    status: bool,
    /// The `/scale` subresource.
    scale: bool,
}

impl Target {
    fn resource(&self) -> ResourceId {
        ResourceId {
            group: self.group.clone(),
            plural: self.plural.clone(),
        }
    }

    fn api_version(&self) -> String {
        join_api_version(&self.group, &self.version)
    }

    fn key(&self, name: &str) -> ObjectKey {
        ObjectKey {
            resource: self.resource(),
            namespace: self.namespace.clone().unwrap_or_default(),
            name: name.to_string(),
        }
    }

    /// Every resource outside the core group is treated as a custom resource with a status subresource.
    fn has_status_subresource(&self) -> bool {
        !self.group.is_empty()
    }
}

fn not_found_path(path: &str) -> ApiError {
    ApiError::new(
        404,
        format!("the server could not find the requested resource ({path})"),
    )
}

fn parse_path(path: &str) -> Result<Target, ApiError> {
    let segments: Vec<&str> = path.trim_start_matches('/').trim_end_matches('/').split('/').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(not_found_path(path));
    }
    let (group, version, rest) = match segments.as_slice() {
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return Err(not_found_path(path)),
    };
    let (namespace, plural, tail) = match rest {
        ["namespaces", namespace, plural, tail @ ..] => (Some(*namespace), *plural, tail),
        [plural, tail @ ..] => (None, *plural, tail),
        [] => return Err(not_found_path(path)),
    };
    let (name, status, scale) = match tail {
        [] => (None, false, false),
        [name] => (Some(*name), false, false),
        [name, "status"] => (Some(*name), true, false),
        // Custom resources only (the core group's Deployments and the like are not served).
        [name, "scale"] if !group.is_empty() => (Some(*name), false, true),
        _ => return Err(not_found_path(path)),
    };
    Ok(Target {
        group: group.to_string(),
        version: version.to_string(),
        namespace: namespace.map(str::to_string),
        plural: plural.to_string(),
        name: name.map(str::to_string),
        status,
        scale,
    })
}

/// Decoded query parameters.
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(query: Option<&str>) -> Self {
        Self(
            form_urlencoded::parse(query.unwrap_or_default().as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }

    fn number(&self, key: &str) -> Result<Option<u64>, ApiError> {
        match self.get(key).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| ApiError::bad_request(format!("invalid value for {key}: {v:?}"))),
        }
    }

    fn filter(&self, target: &Target) -> Result<Filter, ApiError> {
        let labels = LabelSelector::parse(self.get("labelSelector").unwrap_or_default())
            .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))?;
        let fields =
            FieldSelector::parse(self.get("fieldSelector").unwrap_or_default()).map_err(ApiError::bad_request)?;
        Ok(Filter {
            resource: target.resource(),
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            labels,
            fields,
        })
    }
}

fn full(bytes: impl Into<Bytes>) -> ResponseBody {
    Full::new(bytes.into()).map_err(|never| match never {}).boxed_unsync()
}

fn json_response(code: u16, value: &Value) -> Response<ResponseBody> {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut response = Response::new(full(body));
    *response.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

pub(crate) fn error_response(error: &ApiError) -> Response<ResponseBody> {
    json_response(error.code, &error.to_status())
}

/// Parses a request body: JSON, or YAML for server-side apply.
pub(crate) fn parse_body(bytes: &[u8], yaml_allowed: bool) -> Result<Option<Value>, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    match serde_json::from_slice(bytes) {
        Ok(value) => Ok(Some(value)),
        Err(json_error) if yaml_allowed => serde_yaml_ng::from_slice::<Value>(bytes)
            .map(Some)
            .map_err(|yaml_error| format!("the body is neither JSON ({json_error}) nor YAML ({yaml_error})")),
        Err(json_error) => Err(format!("the body is not valid JSON: {json_error}")),
    }
}

fn content_type(headers: &http::HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
        .unwrap_or_default()
}

const APPLY_PATCH: &str = "application/apply-patch+yaml";

/// Handles one request; never fails (errors are `Status` responses).
pub(crate) async fn handle(server: FakeApiServer, request: Request<kube::client::Body>) -> Response<ResponseBody> {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_string();
    let raw_query = parts.uri.query().map(str::to_string);
    let content_type = content_type(&parts.headers);
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => return error_response(&ApiError::bad_request(format!("cannot read the request body: {e}"))),
    };
    let parsed = parse_body(&bytes, content_type == APPLY_PATCH);
    server.record(RecordedRequest {
        method: parts.method.clone(),
        path: path.clone(),
        query: raw_query.clone(),
        body: parsed.as_ref().ok().cloned().flatten(),
    });
    if let Some(error) = server.take_fault(&parts.method, &path) {
        return error_response(&error);
    }
    let body = match parsed {
        Ok(body) => body,
        Err(message) => return error_response(&ApiError::bad_request(message)),
    };
    let query = Query::parse(raw_query.as_deref());
    let accept = parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if let Some(answer) = discovery(&server, &parts.method, &path, accept) {
        return answer.unwrap_or_else(|error| error_response(&error));
    }
    match route(&server, &parts.method, &path, &query, &content_type, body) {
        Ok(response) => response,
        Err(error) => error_response(&error),
    }
}

/// The answer to a discovery or OpenAPI path (see [`crate::discovery`]), `None` for other paths.
fn discovery(
    server: &FakeApiServer,
    method: &Method,
    path: &str,
    accept: &str,
) -> Option<Result<Response<ResponseBody>, ApiError>> {
    let document = crate::discovery::document(&server.state(), path, accept)?;
    if method != Method::GET {
        return Some(Err(ApiError::new(
            405,
            format!("the server does not allow this method on the requested resource ({method} {path})"),
        )));
    }
    Some(document.map(|document| match document {
        crate::discovery::Document::Json(value) => json_response(200, &value),
        crate::discovery::Document::Bytes(content_type, bytes) => {
            let mut response = Response::new(full(bytes));
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
            response
        }
    }))
}

fn route(
    server: &FakeApiServer,
    method: &Method,
    path: &str,
    query: &Query,
    content_type: &str,
    body: Option<Value>,
) -> Result<Response<ResponseBody>, ApiError> {
    if path == "/version" && method == Method::GET {
        return Ok(json_response(200, &version_info()));
    }
    let target = parse_path(path)?;
    if query.get("dryRun").is_some_and(|v| !v.is_empty()) {
        return Err(ApiError::bad_request("dryRun is not supported by the fake API server"));
    }
    let body_required = || {
        body.clone()
            .ok_or_else(|| ApiError::bad_request("the request needs a body"))
    };
    let api_version = target.api_version();
    let method_not_allowed = || {
        ApiError::new(
            405,
            format!("the server does not allow this method on the requested resource ({method} {path})"),
        )
    };
    if let (Some(name), true) = (&target.name, target.scale) {
        return match *method {
            Method::GET | Method::PUT | Method::PATCH => scale(server, &target, name, method, content_type, body),
            _ => Err(method_not_allowed()),
        };
    }
    match (&target.name, target.status, method.clone()) {
        (None, false, Method::GET) if query.flag("watch") => watch(server, &target, query),
        (None, false, Method::GET) => list(server, &target, query),
        (None, false, Method::POST) => {
            let object = body_required()?;
            let mut state = server.state();
            let namespace = target.namespace.clone().unwrap_or_default();
            let (_, created) = state.create(
                &target.resource(),
                &api_version,
                &namespace,
                object,
                target.has_status_subresource(),
            )?;
            Ok(json_response(201, &state.present(&created, &api_version)?))
        }
        (None, false, Method::DELETE) => delete_collection(server, &target, query, body),
        (Some(_), false, Method::GET) if query.flag("watch") => watch(server, &target, query),
        (Some(name), _, Method::GET) => {
            let state = server.state();
            let object = state
                .get(&target.key(name))
                .ok_or_else(|| target.key(name).not_found_error())?;
            Ok(json_response(200, &state.present(object, &api_version)?))
        }
        (Some(name), status, Method::PUT) => {
            let mode = if status {
                UpdateMode::Status
            } else {
                UpdateMode::Main {
                    keep_status: target.has_status_subresource(),
                }
            };
            let mut state = server.state();
            let object = state.update(&target.key(name), &api_version, body_required()?, mode)?;
            Ok(json_response(200, &state.present(&object, &api_version)?))
        }
        (Some(name), status, Method::PATCH) => {
            patch(server, &target, name, status, query, content_type, body_required()?)
        }
        (Some(name), false, Method::DELETE) => {
            let options = delete_options(query, body.as_ref())?;
            let mut state = server.state();
            let object = state.delete(&target.key(name), &options)?;
            Ok(json_response(200, &state.present(&object, &api_version)?))
        }
        _ => Err(method_not_allowed()),
    }
}

impl ObjectKey {
    fn not_found_error(&self) -> ApiError {
        ApiError::not_found(&self.resource.group, &self.resource.plural, &self.name)
    }
}

fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": "v1.33.0-fake",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.24",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

fn delete_options(query: &Query, body: Option<&Value>) -> Result<DeleteOptions, ApiError> {
    let body = body.filter(|b| !b.is_null());
    if let Some(body) = body
        && !body.is_object()
    {
        return Err(ApiError::bad_request("DeleteOptions must be a JSON object"));
    }
    let field = |name: &str| body.and_then(|b| b.get(name)).and_then(Value::as_str);
    let precondition = |name: &str| {
        body.and_then(|b| b.pointer(&format!("/preconditions/{name}")))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let policy = field("propagationPolicy").or(query.get("propagationPolicy"));
    let orphan_flag = body.and_then(|b| b.get("orphanDependents")).and_then(Value::as_bool);
    match policy {
        None | Some("Background" | "Foreground" | "Orphan") => {}
        Some(other) => return Err(ApiError::bad_request(format!("invalid propagationPolicy {other:?}"))),
    }
    Ok(DeleteOptions {
        precondition_uid: precondition("uid"),
        precondition_resource_version: precondition("resourceVersion"),
        orphan: policy == Some("Orphan") || orphan_flag == Some(true),
    })
}

fn list(server: &FakeApiServer, target: &Target, query: &Query) -> Result<Response<ResponseBody>, ApiError> {
    let filter = query.filter(target)?;
    let limit = query.number("limit")?.filter(|l| *l > 0);
    // A continue token is "<resourceVersion of the first page>:<namespace>/<name of the last item>".
    let continue_from = match query.get("continue").filter(|c| !c.is_empty()) {
        None => None,
        Some(token) => {
            let parsed = token.split_once(':').and_then(|(rv, rest)| {
                let (ns, name) = rest.split_once('/')?;
                Some((rv.parse::<u64>().ok()?, ns.to_string(), name.to_string()))
            });
            Some(parsed.ok_or_else(|| ApiError::bad_request(format!("invalid continue token {token:?}")))?)
        }
    };
    let state = server.state();
    let api_version = target.api_version();
    let list_resource_version = continue_from
        .as_ref()
        .map_or(state.resource_version(), |(rv, _, _)| *rv);
    let matching: Vec<(&ObjectKey, &Value)> = state
        .list(&filter)
        .filter(|(key, _)| match &continue_from {
            None => true,
            Some((_, ns, name)) => (key.namespace.as_str(), key.name.as_str()) > (ns.as_str(), name.as_str()),
        })
        .collect();
    let taken = limit.map_or(matching.len(), |l| {
        matching.len().min(usize::try_from(l).unwrap_or(usize::MAX))
    });
    let items: Vec<Value> = matching[..taken]
        .iter()
        .map(|(_, object)| state.present(object, &api_version))
        .collect::<Result<_, _>>()?;
    let mut metadata = json!({ "resourceVersion": list_resource_version.to_string() });
    if taken < matching.len()
        && let Some((key, _)) = taken.checked_sub(1).and_then(|i| matching.get(i))
    {
        metadata["continue"] = json!(format!("{list_resource_version}:{}/{}", key.namespace, key.name));
        metadata["remainingItemCount"] = json!(matching.len() - taken);
    }
    let list = json!({
        "kind": format!("{}List", state.kind_of(&target.resource())),
        "apiVersion": api_version,
        "metadata": metadata,
        "items": items,
    });
    Ok(json_response(200, &list))
}

fn delete_collection(
    server: &FakeApiServer,
    target: &Target,
    query: &Query,
    body: Option<Value>,
) -> Result<Response<ResponseBody>, ApiError> {
    let filter = query.filter(target)?;
    let options = delete_options(query, body.as_ref())?;
    let mut state = server.state();
    let keys: Vec<ObjectKey> = state.list(&filter).map(|(key, _)| key.clone()).collect();
    let api_version = target.api_version();
    let mut items = Vec::new();
    for key in keys {
        // An earlier deletion may have collected this object as a dependent.
        match state.delete(&key, &options) {
            Ok(object) => items.push(state.present(&object, &api_version)?),
            Err(error) if error.code == 404 => {}
            Err(error) => return Err(error),
        }
    }
    let list = json!({
        "kind": format!("{}List", state.kind_of(&target.resource())),
        "apiVersion": api_version,
        "metadata": { "resourceVersion": state.resource_version().to_string() },
        "items": items,
    });
    Ok(json_response(200, &list))
}

/// Applies a JSON patch (RFC 6902). A `test` for `null` at a missing path succeeds, as in the API server.
fn apply_json_patch(document: &mut Value, patch: Value) -> Result<(), String> {
    let patch: json_patch::Patch = serde_json::from_value(patch).map_err(|e| format!("invalid JSON patch: {e}"))?;
    let mut result = document.clone();
    for operation in patch.0 {
        if let json_patch::PatchOperation::Test(test) = &operation
            && test.value.is_null()
            && result.pointer(test.path.as_str()).is_none()
        {
            continue;
        }
        json_patch::patch(&mut result, std::slice::from_ref(&operation)).map_err(|e| e.to_string())?;
    }
    *document = result;
    Ok(())
}

fn patch(
    server: &FakeApiServer,
    target: &Target,
    name: &str,
    status: bool,
    query: &Query,
    content_type: &str,
    body: Value,
) -> Result<Response<ResponseBody>, ApiError> {
    let api_version = target.api_version();
    let key = target.key(name);
    let invalid = |why: String| ApiError::invalid(&target.group, &target.plural, name, &why);
    let mut state = server.state();
    let existing = state.get(&key).cloned();
    let mut document = match (existing, content_type) {
        (Some(existing), _) => state.present(&existing, &api_version)?,
        (None, APPLY_PATCH) if !status => {
            if query.get("fieldManager").is_none_or(str::is_empty) {
                return Err(invalid(
                    "fieldManager: Required value: is required for apply patch".into(),
                ));
            }
            if !body.is_object() {
                return Err(ApiError::bad_request("an apply patch must be an object"));
            }
            if meta_str(&body, "name").is_some_and(|n| n != name) {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({}) does not match the name on the URL ({name})",
                    meta_str(&body, "name").unwrap_or_default()
                )));
            }
            let mut object = body;
            if let Some(map) = object.as_object_mut() {
                let metadata = map.entry("metadata").or_insert_with(|| json!({}));
                if let Some(metadata) = metadata.as_object_mut() {
                    metadata.insert("name".into(), Value::String(name.to_string()));
                }
            }
            let namespace = target.namespace.clone().unwrap_or_default();
            let (_, created) = state.create(
                &target.resource(),
                &api_version,
                &namespace,
                object,
                target.has_status_subresource(),
            )?;
            return Ok(json_response(201, &state.present(&created, &api_version)?));
        }
        (None, _) => return Err(key.not_found_error()),
    };
    match content_type {
        "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
            json_patch::merge(&mut document, &body);
        }
        "application/json-patch+json" => apply_json_patch(&mut document, body).map_err(invalid)?,
        APPLY_PATCH => {
            if query.get("fieldManager").is_none_or(str::is_empty) {
                return Err(invalid(
                    "fieldManager: Required value: is required for apply patch".into(),
                ));
            }
            if !body.is_object() {
                return Err(ApiError::bad_request("an apply patch must be an object"));
            }
            json_patch::merge(&mut document, &body);
        }
        other => {
            return Err(ApiError::new(
                415,
                format!(
                    "the body of the request was in an unknown format ({other:?}) - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                ),
            ));
        }
    }
    let mode = if status {
        UpdateMode::Status
    } else {
        UpdateMode::Main {
            keep_status: target.has_status_subresource(),
        }
    };
    let object = state.update(&key, &api_version, document, mode)?;
    Ok(json_response(200, &state.present(&object, &api_version)?))
}

/// The `/scale` subresource of a custom resource: an `autoscaling/v1` `Scale` whose `spec.replicas` is the
/// object's `.spec.replicas` and `status.replicas` its `.status.replicas` (the paths of Cluster API's kinds and most
/// CRDs; a CRD's own `specReplicasPath` is not read). `GET` reads it; `PUT` and merge or JSON patches write
/// `.spec.replicas` of the object, as a write of the main resource.
fn scale(
    server: &FakeApiServer,
    target: &Target,
    name: &str,
    method: &Method,
    content_type: &str,
    body: Option<Value>,
) -> Result<Response<ResponseBody>, ApiError> {
    let api_version = target.api_version();
    let key = target.key(name);
    let invalid = |why: String| ApiError::invalid(&target.group, &target.plural, name, &why);
    let mut state = server.state();
    let object = state.get(&key).cloned().ok_or_else(|| key.not_found_error())?;
    let document = state.present(&object, &api_version)?;
    let as_scale = |o: &Value| {
        json!({
            "apiVersion": "autoscaling/v1",
            "kind": "Scale",
            "metadata": {
                "name": o.pointer("/metadata/name"),
                "namespace": o.pointer("/metadata/namespace"),
                "uid": o.pointer("/metadata/uid"),
                "resourceVersion": o.pointer("/metadata/resourceVersion"),
                "creationTimestamp": o.pointer("/metadata/creationTimestamp"),
            },
            "spec": {"replicas": o.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0)},
            "status": {"replicas": o.pointer("/status/replicas").and_then(Value::as_i64).unwrap_or(0)},
        })
    };
    let current = as_scale(&document);
    if *method == Method::GET {
        return Ok(json_response(200, &current));
    }
    let body = body.ok_or_else(|| ApiError::bad_request("the request needs a body"))?;
    let mut wanted = current.clone();
    match (method, content_type) {
        (&Method::PUT, _) => wanted = body,
        (_, "application/merge-patch+json" | "application/strategic-merge-patch+json") => {
            json_patch::merge(&mut wanted, &body)
        }
        (_, "application/json-patch+json") => apply_json_patch(&mut wanted, body).map_err(invalid)?,
        (_, other) => {
            return Err(ApiError::new(
                415,
                format!("the body of the request was in an unknown format ({other:?}) for a scale subresource"),
            ));
        }
    }
    let Some(replicas) = wanted
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .filter(|r| *r >= 0)
    else {
        return Err(invalid(
            "spec.replicas: Invalid value: must be a non-negative integer".into(),
        ));
    };
    let mut updated = document;
    if let Some(spec) = updated
        .as_object_mut()
        .map(|m| m.entry("spec").or_insert_with(|| json!({})))
    {
        if let Some(spec) = spec.as_object_mut() {
            spec.insert("replicas".into(), json!(replicas));
        } else {
            return Err(invalid("spec: Invalid value: not an object".into()));
        }
    }
    let mode = UpdateMode::Main {
        keep_status: target.has_status_subresource(),
    };
    let object = state.update(&key, &api_version, updated, mode)?;
    Ok(json_response(200, &as_scale(&state.present(&object, &api_version)?)))
}

fn watch_line(event_type: &str, object: Value) -> Bytes {
    let mut line = serde_json::to_vec(&json!({ "type": event_type, "object": object })).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

/// The watch event a change makes for a watch with `filter`, if any: an object that starts (stops) matching a
/// selector is ADDED (DELETED), as in the API server. An object that cannot be converted to the watch's version
/// is an `ERROR` event.
fn change_line(change: &Change, filter: &Filter, api_version: &str, converter: Option<&Converter>) -> Option<Bytes> {
    let now = filter.matches(&change.key, &change.object);
    let before = change.old.as_ref().is_some_and(|old| filter.matches(&change.key, old));
    let event_type = match change.change_type {
        ChangeType::Added if now => "ADDED",
        ChangeType::Modified if now && before => "MODIFIED",
        ChangeType::Modified if now => "ADDED",
        ChangeType::Modified if before => "DELETED",
        ChangeType::Deleted if now || before => "DELETED",
        _ => return None,
    };
    Some(match present_with(converter, change.object.clone(), api_version) {
        Ok(object) => watch_line(event_type, object),
        Err(error) => watch_line("ERROR", error.to_status()),
    })
}

fn bookmark_line(kind: &str, api_version: &str, resource_version: u64, initial_events_end: bool) -> Bytes {
    let mut metadata = json!({ "resourceVersion": resource_version.to_string() });
    if initial_events_end {
        metadata["annotations"] = json!({ "k8s.io/initial-events-end": "true" });
    }
    watch_line(
        "BOOKMARK",
        json!({ "kind": kind, "apiVersion": api_version, "metadata": metadata }),
    )
}

fn watch(server: &FakeApiServer, target: &Target, query: &Query) -> Result<Response<ResponseBody>, ApiError> {
    let filter = query.filter(target)?;
    let api_version = target.api_version();
    let bookmarks = query.flag("allowWatchBookmarks");
    let send_initial_events = query.flag("sendInitialEvents");
    let timeout = query.number("timeoutSeconds")?.filter(|t| *t > 0);
    let from = query.number("resourceVersion")?.filter(|rv| *rv > 0);

    let (initial, receiver, start, kind, expired, converter) = {
        let state = server.state();
        let converter = state.converter(&target.group);
        let kind = state.kind_of(&target.resource());
        let receiver = state.subscribe();
        let mut initial = Vec::new();
        let mut expired = false;
        match from {
            Some(rv) if !send_initial_events => {
                if rv < state.history_floor() {
                    expired = true;
                    let error = ApiError::new(
                        410,
                        format!("too old resource version: {rv} ({})", state.history_floor()),
                    );
                    initial.push(watch_line("ERROR", error.to_status()));
                } else {
                    initial.extend(
                        state
                            .changes_since(rv)
                            .filter_map(|c| change_line(c, &filter, &api_version, converter.as_ref())),
                    );
                }
            }
            _ => {
                initial.extend(
                    state
                        .list(&filter)
                        .map(|(_, object)| match state.present(object, &api_version) {
                            Ok(object) => watch_line("ADDED", object),
                            Err(error) => watch_line("ERROR", error.to_status()),
                        }),
                );
                if send_initial_events {
                    initial.push(bookmark_line(&kind, &api_version, state.resource_version(), true));
                }
            }
        }
        (initial, receiver, state.resource_version(), kind, expired, converter)
    };

    let (sender, lines) = mpsc::channel::<Bytes>(256);
    tokio::spawn(stream_watch(WatchTask {
        sender,
        receiver,
        initial,
        expired,
        filter,
        api_version,
        kind,
        bookmarks,
        timeout: timeout.map(Duration::from_secs),
        last_resource_version: start,
        converter,
    }));
    let stream = futures::stream::unfold(lines, |mut lines| async move {
        lines
            .recv()
            .await
            .map(|line| (Ok::<_, Infallible>(Frame::data(line)), lines))
    });
    let mut response = Response::new(StreamBody::new(stream).boxed_unsync());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

struct WatchTask {
    sender: mpsc::Sender<Bytes>,
    receiver: broadcast::Receiver<Arc<Change>>,
    initial: Vec<Bytes>,
    expired: bool,
    filter: Filter,
    api_version: String,
    kind: String,
    bookmarks: bool,
    timeout: Option<Duration>,
    last_resource_version: u64,
    converter: Option<Converter>,
}

/// Feeds one watch: the initial events, then live changes, bookmarks, until the timeout, the client going
/// away, or the watch falling behind (the client then resumes from its last resource version).
async fn stream_watch(mut task: WatchTask) {
    for line in std::mem::take(&mut task.initial) {
        if task.sender.send(line).await.is_err() {
            return;
        }
    }
    if task.expired {
        return;
    }
    let deadline = async {
        match task.timeout {
            Some(timeout) => tokio::time::sleep(timeout).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + BOOKMARK_INTERVAL, BOOKMARK_INTERVAL);
    loop {
        tokio::select! {
            _ = &mut deadline => return,
            _ = task.sender.closed() => return,
            _ = ticker.tick(), if task.bookmarks => {
                let line = bookmark_line(&task.kind, &task.api_version, task.last_resource_version, false);
                if task.sender.send(line).await.is_err() {
                    return;
                }
            }
            received = task.receiver.recv() => {
                let Ok(change) = received else {
                    return;
                };
                task.last_resource_version = change.resource_version;
                if let Some(line) = change_line(&change, &task.filter, &task.api_version, task.converter.as_ref())
                    && task.sender.send(line).await.is_err()
                {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let t = parse_path("/api/v1/namespaces/ns/configmaps/cm").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            (
                t.group.as_str(),
                t.version.as_str(),
                t.namespace.as_deref(),
                t.plural.as_str(),
                t.name.as_deref()
            ),
            ("", "v1", Some("ns"), "configmaps", Some("cm"))
        );
        let t = parse_path("/apis/example.com/v1/namespaces/ns/widgets/w/status").unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.status);
        assert_eq!(t.name.as_deref(), Some("w"));
        let t = parse_path("/apis/example.com/v1/widgets").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!((t.namespace, t.name), (None, None));
        let t = parse_path("/api/v1/namespaces/ns").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!((t.plural.as_str(), t.name.as_deref()), ("namespaces", Some("ns")));
        for bad in [
            "/",
            "/api",
            "/apis/g",
            "/apis/g/v1",
            "/healthz",
            "/api/v1/namespaces/ns/configmaps/cm/scale",
            "/api/v1/namespaces/ns/configmaps/cm/status/x",
            "/api/v1//configmaps",
        ] {
            let error = parse_path(bad).map(|_| ()).expect_err(bad);
            assert_eq!(error.code, 404, "{bad}");
        }
    }

    #[test]
    fn json_patch_null_test_on_missing_path() {
        let mut doc = json!({ "metadata": { "name": "a" } });
        let patch = json!([
            { "op": "test", "path": "/metadata/finalizers", "value": null },
            { "op": "add", "path": "/metadata/finalizers", "value": ["f"] }
        ]);
        assert_eq!(apply_json_patch(&mut doc, patch), Ok(()));
        assert_eq!(doc, json!({ "metadata": { "name": "a", "finalizers": ["f"] } }));
        let failing = json!([
            { "op": "add", "path": "/metadata/x", "value": 1 },
            { "op": "test", "path": "/metadata/name", "value": "b" }
        ]);
        assert!(apply_json_patch(&mut doc, failing).is_err());
        assert_eq!(
            doc,
            json!({ "metadata": { "name": "a", "finalizers": ["f"] } }),
            "atomic"
        );
    }

    #[test]
    fn bodies() {
        assert_eq!(parse_body(b"  ", false), Ok(None));
        assert_eq!(parse_body(br#"{"a":1}"#, false), Ok(Some(json!({ "a": 1 }))));
        assert!(parse_body(b"a: 1", false).is_err());
        assert_eq!(parse_body(b"a: 1", true), Ok(Some(json!({ "a": 1 }))));
        assert!(parse_body(b"{", true).is_err());
    }
}
