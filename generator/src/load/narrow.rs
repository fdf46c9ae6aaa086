//! Finds the part of an OpenAPI 3.0 document that does not fit the `openapiv3` model.
//!
//! The model flattens extensions into path items, operations and schemas, and serde loses track of where it
//! is below a flattened struct: a bad `operationId` is reported at `/paths`, a bad `required` at the
//! schema. [`narrow`] walks down from the failing part to the innermost part that fails on its own, then
//! to the key whose removal makes that part fit.

use indexmap::IndexMap;
use openapiv3::{
    Components, Header, MediaType, OpenAPI, Operation, Parameter, PathItem, Paths, ReferenceOr, RequestBody, Response,
    Responses, Schema,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::escape_pointer;

/// A kind of part of an OpenAPI 3.0 document: what a value at some place must deserialize into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    Document,
    Paths,
    PathItem,
    Operation,
    ParameterList,
    Parameter,
    RequestBody,
    Responses,
    Response,
    ContentMap,
    MediaType,
    HeaderMap,
    Header,
    Components,
    SchemaMap,
    ParameterMap,
    RequestBodyMap,
    ResponseMap,
    Schema,
    SchemaList,
    AdditionalProperties,
}

/// Where the part of a failure is (relative to the value checked) and serde's message.
type Failure = (String, String);

fn check<T: DeserializeOwned>(v: &Value) -> Result<(), Failure> {
    serde_path_to_error::deserialize::<_, T>(v)
        .map(|_| ())
        .map_err(|e| (path_to_pointer(e.path()), e.inner().to_string()))
}

/// A `ReferenceOr<T>`: a `$ref` fits; anything else is checked as a `T`, whose message is clearer than the
/// untagged enum's.
fn check_ref<T: DeserializeOwned>(v: &Value) -> Result<(), Failure> {
    if v.get("$ref").is_some_and(Value::is_string) {
        return Ok(());
    }
    check::<T>(v)
}

impl Part {
    fn check(self, v: &Value) -> Result<(), Failure> {
        match self {
            Part::Document => check::<OpenAPI>(v),
            Part::Paths => check::<Paths>(v),
            Part::PathItem => check_ref::<PathItem>(v),
            Part::Operation => check::<Operation>(v),
            Part::ParameterList => check::<Vec<ReferenceOr<Parameter>>>(v),
            Part::Parameter => check_ref::<Parameter>(v),
            Part::RequestBody => check_ref::<RequestBody>(v),
            Part::Responses => check::<Responses>(v),
            Part::Response => check_ref::<Response>(v),
            Part::ContentMap => check::<IndexMap<String, MediaType>>(v),
            Part::MediaType => check::<MediaType>(v),
            Part::HeaderMap => check::<IndexMap<String, ReferenceOr<Header>>>(v),
            Part::Header => check_ref::<Header>(v),
            Part::Components => check::<Components>(v),
            Part::SchemaMap => check::<IndexMap<String, ReferenceOr<Schema>>>(v),
            Part::ParameterMap => check::<IndexMap<String, ReferenceOr<Parameter>>>(v),
            Part::RequestBodyMap => check::<IndexMap<String, ReferenceOr<RequestBody>>>(v),
            Part::ResponseMap => check::<IndexMap<String, ReferenceOr<Response>>>(v),
            Part::Schema => check_ref::<Schema>(v),
            Part::SchemaList => check::<Vec<ReferenceOr<Schema>>>(v),
            Part::AdditionalProperties if v.is_boolean() => Ok(()),
            Part::AdditionalProperties => check_ref::<Schema>(v),
        }
    }

    /// The kind of the value under `key`, when it is a part of its own.
    fn child(self, key: &str) -> Option<Part> {
        let extension = key.starts_with("x-");
        Some(match (self, key) {
            (Part::Document, "paths") => Part::Paths,
            (Part::Document, "components") => Part::Components,
            (Part::Paths, _) if !extension => Part::PathItem,
            (Part::PathItem, "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace") => {
                Part::Operation
            }
            (Part::PathItem | Part::Operation, "parameters") => Part::ParameterList,
            (Part::ParameterList, _) => Part::Parameter,
            (Part::Operation, "requestBody") => Part::RequestBody,
            (Part::Operation, "responses") => Part::Responses,
            (Part::Responses, _) if !extension => Part::Response,
            (Part::RequestBody | Part::Response | Part::Parameter | Part::Header, "content") => Part::ContentMap,
            (Part::ContentMap, _) => Part::MediaType,
            (Part::MediaType | Part::Parameter | Part::Header, "schema") => Part::Schema,
            (Part::Response, "headers") => Part::HeaderMap,
            (Part::HeaderMap, _) => Part::Header,
            (Part::Components, "schemas") => Part::SchemaMap,
            (Part::Components, "parameters") => Part::ParameterMap,
            (Part::Components, "requestBodies") => Part::RequestBodyMap,
            (Part::Components, "responses") => Part::ResponseMap,
            (Part::Components, "headers") => Part::HeaderMap,
            (Part::SchemaMap, _) => Part::Schema,
            (Part::ParameterMap, _) => Part::Parameter,
            (Part::RequestBodyMap, _) => Part::RequestBody,
            (Part::ResponseMap, _) => Part::Response,
            (Part::Schema | Part::AdditionalProperties, "properties") => Part::SchemaMap,
            (Part::Schema | Part::AdditionalProperties, "items" | "not") => Part::Schema,
            (Part::Schema | Part::AdditionalProperties, "additionalProperties") => Part::AdditionalProperties,
            (Part::Schema | Part::AdditionalProperties, "allOf" | "anyOf" | "oneOf") => Part::SchemaList,
            (Part::SchemaList, _) => Part::Schema,
            _ => return None,
        })
    }
}

fn entries(v: &Value) -> Vec<(String, &Value)> {
    match v {
        Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Value::Array(items) => items.iter().enumerate().map(|(i, v)| (i.to_string(), v)).collect(),
        _ => Vec::new(),
    }
}

/// Where `value` (a `start` part) fails to deserialize, relative to it, and why; `None` when it does not.
pub(super) fn narrow(value: &Value, start: Part) -> Option<(String, String)> {
    let (mut inner, mut message) = start.check(value).err()?;
    let mut part = start;
    let mut value = value;
    let mut pointer = String::new();
    'descend: loop {
        for (key, child) in entries(value) {
            let Some(child_part) = part.child(&key) else { continue };
            if let Err((child_inner, child_message)) = child_part.check(child) {
                pointer = format!("{pointer}/{}", escape_pointer(&key));
                (part, value, inner, message) = (child_part, child, child_inner, child_message);
                continue 'descend;
            }
        }
        break;
    }
    // No part below fails on its own. Unless serde knows better, find the key that does not fit.
    if inner.is_empty()
        && let Value::Object(map) = value
    {
        for key in map.keys() {
            let mut trial = map.clone();
            trial.shift_remove(key);
            if part.check(&Value::Object(trial)).is_ok() {
                inner = format!("/{}", escape_pointer(key));
                break;
            }
        }
    }
    Some((format!("{pointer}{inner}"), message))
}

/// A `serde_path_to_error` path as a JSON pointer.
pub(super) fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            serde_path_to_error::Segment::Seq { index } => out.push_str(&format!("/{index}")),
            serde_path_to_error::Segment::Map { key } => {
                out.push('/');
                out.push_str(&escape_pointer(key));
            }
            serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => {}
        }
    }
    out
}
