//! Conversion of custom resources between the Kubernetes versions of their CRD: the [`Converter`] that the
//! generated crate implements, and the handling of the API server's `ConversionReview`
//! (`apiextensions.k8s.io/v1`) that a conversion webhook answers.
//!
//! # The webhook contract
//!
//! When a CRD has `spec.conversion.strategy: Webhook`, the API server sends a `ConversionReview` whose
//! `request` carries a `uid`, a `desiredAPIVersion` (`group/version`) and a list of complete objects (with
//! `apiVersion`, `kind`, `metadata`, `spec`, `status`), possibly in several versions. The webhook answers with a
//! `ConversionReview` of the same `apiVersion` whose `response` carries:
//!
//! - the request's `uid`;
//! - `result.status: Success` and `convertedObjects`: every object at `desiredAPIVersion`, in the request's
//!   order; or
//! - `result.status: Failure`, a `result.message`, and no converted objects. One object that cannot be converted
//!   fails the whole review: the API server then fails the client's request with
//!   `conversion webhook for <gvk> failed: <message>`.
//!
//! [`review`] implements that contract over any [`Converter`]; [`review_json`] does the same on raw bytes and
//! never panics, whatever it is given. The HTTP side lives in `armgen_runtime::webhook` (cargo feature
//! `webhook`).
//!
//! # What the converter must keep
//!
//! The API server checks each converted object against the original: the `kind`, `metadata.name`,
//! `metadata.namespace` and `metadata.uid` must not change, and `apiVersion` must be the desired one. Of
//! `metadata`, only changes to `labels` and `annotations` are kept; everything else in `metadata` is restored from
//! the original. A [`Converter`] must therefore carry `metadata` over as it is (it may add annotations, for
//! example to keep fields that the target version cannot represent). [`convert_objects`] checks what the API
//! server checks and fails with a message naming the object, so a converter bug surfaces here with a clear
//! message rather than as an opaque error of the API server.
//!
//! Objects already at the desired version are passed through unchanged without calling the converter. A
//! converter that panics fails the review (the panic is reported in the message) instead of taking the webhook
//! down.

use std::panic::{AssertUnwindSafe, catch_unwind};

use kube_core::TypeMeta;
use kube_core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use kube_core::response::Status;
use serde_json::Value;

pub use crate::kube::ConversionError;

/// The `apiVersion` of the `ConversionReview` that Kubernetes 1.16+ sends.
pub const REVIEW_API_VERSION_V1: &str = "apiextensions.k8s.io/v1";
/// The `apiVersion` of the `ConversionReview` of the deprecated `apiextensions.k8s.io/v1beta1` CRDs.
pub const REVIEW_API_VERSION_V1BETA1: &str = "apiextensions.k8s.io/v1beta1";
/// The `kind` of a `ConversionReview`.
pub const REVIEW_KIND: &str = "ConversionReview";

/// `result.reason` of a failure response when an object could not be converted.
pub const REASON_INVALID: &str = "Invalid";
/// `result.reason` of a failure response when the review itself is unusable (no request, malformed body).
pub const REASON_BAD_REQUEST: &str = "BadRequest";

/// Converts custom resources between the Kubernetes versions of their group. The generated crate implements it
/// over every kind and version it knows; any `Fn(Value, &str) -> Result<Value, ConversionError>` implements it
/// too.
pub trait Converter: Send + Sync {
    /// Converts one custom resource (a JSON object with apiVersion/kind) to `desired_api_version`
    /// (`group/version`). Objects already at that version come back unchanged.
    ///
    /// The result must have `apiVersion: desired_api_version`, the same `kind`, and the same `metadata` (see the
    /// [module documentation](self)). An error names the field (`path`, e.g. `spec.networkProfile.podCidr`,
    /// empty for the whole object) and why it cannot be represented at the desired version.
    fn convert(&self, object: Value, desired_api_version: &str) -> Result<Value, ConversionError>;
}

impl<F> Converter for F
where
    F: Fn(Value, &str) -> Result<Value, ConversionError> + Send + Sync,
{
    fn convert(&self, object: Value, desired_api_version: &str) -> Result<Value, ConversionError> {
        self(object, desired_api_version)
    }
}

/// Why one object of a conversion request could not be converted: which object (its index in
/// `request.objects`, its type and its name) and the [`ConversionError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectConversionError {
    /// The object's index in `request.objects`, from 0.
    pub index: usize,
    /// The object's `apiVersion`, when it has one.
    pub api_version: Option<String>,
    /// The object's `kind`, when it has one.
    pub kind: Option<String>,
    /// The object's `metadata.namespace`, when it has one.
    pub namespace: Option<String>,
    /// The object's `metadata.name`, when it has one.
    pub name: Option<String>,
    /// The version it was to be converted to.
    pub desired_api_version: String,
    /// The field and the reason.
    pub error: ConversionError,
}

impl std::fmt::Display for ObjectConversionError {
    /// `cannot convert request.objects[1] (Widget default/beta) from example.com/v1 to example.com/v2:
    /// spec.size: unknown size "huge"`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot convert request.objects[{}] (", self.index)?;
        match &self.kind {
            Some(kind) => write!(f, "{kind}")?,
            None => write!(f, "unknown kind")?,
        }
        match (&self.namespace, &self.name) {
            (Some(namespace), Some(name)) => write!(f, " {namespace}/{name})")?,
            (None, Some(name)) => write!(f, " {name})")?,
            (Some(namespace), None) => write!(f, " without a name in {namespace})")?,
            (None, None) => write!(f, " without a name)")?,
        }
        if let Some(api_version) = &self.api_version {
            write!(f, " from {api_version}")?;
        }
        write!(f, " to {}: ", self.desired_api_version)?;
        if self.error.path.is_empty() {
            write!(f, "{}", self.error.message)
        } else {
            write!(f, "{}", self.error)
        }
    }
}

impl std::error::Error for ObjectConversionError {}

/// Converts every object to `desired_api_version`, in order, and checks each result as the API server does (see
/// the [module documentation](self)). Objects already at `desired_api_version` are returned unchanged without
/// calling the converter. Stops at the first object that fails.
pub fn convert_objects(
    converter: &dyn Converter,
    objects: Vec<Value>,
    desired_api_version: &str,
) -> Result<Vec<Value>, Box<ObjectConversionError>> {
    objects
        .into_iter()
        .enumerate()
        .map(|(index, object)| convert_object(converter, index, object, desired_api_version))
        .collect()
}

/// The identity of an object, as far as it has one, for messages and for the checks after conversion.
struct Identity {
    api_version: Option<String>,
    kind: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
    /// `metadata.name`, `metadata.namespace` and `metadata.uid` as they are, which the converter must keep.
    kept: [(&'static str, &'static str, Option<Value>); 3],
}

impl Identity {
    fn of(object: &Value) -> Self {
        let string = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
        let metadata = object.get("metadata").and_then(Value::as_object);
        let field = |name: &str| metadata.and_then(|m| m.get(name));
        Identity {
            api_version: string(object.get("apiVersion")),
            kind: string(object.get("kind")),
            namespace: string(field("namespace")),
            name: string(field("name")),
            kept: [
                ("name", "metadata.name", field("name").cloned()),
                ("namespace", "metadata.namespace", field("namespace").cloned()),
                ("uid", "metadata.uid", field("uid").cloned()),
            ],
        }
    }

    fn error(self, index: usize, desired_api_version: &str, path: &str, message: String) -> Box<ObjectConversionError> {
        Box::new(ObjectConversionError {
            index,
            api_version: self.api_version,
            kind: self.kind,
            namespace: self.namespace,
            name: self.name,
            desired_api_version: desired_api_version.to_owned(),
            error: ConversionError {
                path: path.to_owned(),
                message,
            },
        })
    }
}

fn convert_object(
    converter: &dyn Converter,
    index: usize,
    object: Value,
    desired_api_version: &str,
) -> Result<Value, Box<ObjectConversionError>> {
    let identity = Identity::of(&object);
    if !object.is_object() {
        let message = format!("is not a JSON object but {}", json_type(&object));
        return Err(identity.error(index, desired_api_version, "", message));
    }
    let Some(api_version) = identity.api_version.as_deref() else {
        return Err(identity.error(
            index,
            desired_api_version,
            "apiVersion",
            "missing or not a string".into(),
        ));
    };
    if identity.kind.is_none() {
        return Err(identity.error(index, desired_api_version, "kind", "missing or not a string".into()));
    }
    if api_version == desired_api_version {
        return Ok(object);
    }
    let converted = match catch_unwind(AssertUnwindSafe(|| converter.convert(object, desired_api_version))) {
        Ok(Ok(converted)) => converted,
        Ok(Err(error)) => {
            return Err(identity.error(index, desired_api_version, &error.path, error.message));
        }
        Err(payload) => {
            let message = format!("the converter panicked: {}", panic_message(payload.as_ref()));
            return Err(identity.error(index, desired_api_version, "", message));
        }
    };
    match check_converted(&identity, &converted, desired_api_version) {
        Ok(()) => Ok(converted),
        Err((path, message)) => Err(identity.error(index, desired_api_version, path, message)),
    }
}

/// What the API server checks of a converted object (`validateConvertedObject`, `restoreObjectMeta`).
fn check_converted(
    original: &Identity,
    converted: &Value,
    desired_api_version: &str,
) -> Result<(), (&'static str, String)> {
    let Some(object) = converted.as_object() else {
        return Err((
            "",
            format!("the converter returned {}, not a JSON object", json_type(converted)),
        ));
    };
    let api_version = object.get("apiVersion");
    if api_version.and_then(Value::as_str) != Some(desired_api_version) {
        return Err((
            "apiVersion",
            format!("the converter returned {}", describe(api_version)),
        ));
    }
    let kind = object.get("kind");
    if kind.and_then(Value::as_str) != original.kind.as_deref() {
        return Err(("kind", format!("the converter changed the kind to {}", describe(kind))));
    }
    let Some(metadata) = object.get("metadata").and_then(Value::as_object) else {
        return Err(("metadata", "the converter dropped the metadata object".into()));
    };
    for (field, path, before) in &original.kept {
        let after = metadata.get(*field);
        if before.as_ref() != after {
            let message = format!(
                "the converter changed it from {} to {} (the API server rejects changes to metadata other than \
                 labels and annotations)",
                describe(before.as_ref()),
                describe(after)
            );
            return Err((path, message));
        }
    }
    Ok(())
}

fn describe(value: Option<&Value>) -> String {
    match value {
        None => "nothing".into(),
        Some(value) => value.to_string(),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(message) = payload.downcast_ref::<&'static str>() {
        message
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message
    } else {
        "(no message)"
    }
}

/// Answers a `ConversionReview` from the API server: the response carries the request's `uid` and either every
/// object converted, in order, with `result.status: Success`, or — when any object fails — `result.status:
/// Failure`, a message naming the object (index, kind, namespace/name, versions) and the field, and no objects.
///
/// A review without a `request`, or with an empty `desiredAPIVersion`, gets a failure response (with an empty
/// `uid` when there is no request). The response has the review's own `apiVersion` and `kind`.
pub fn review(converter: &dyn Converter, review: ConversionReview) -> ConversionReview {
    let types = review.types.clone();
    let mut request = match ConversionRequest::from_review(review) {
        Ok(request) => request,
        Err(_) => {
            let status = Status::failure("the ConversionReview has no request", REASON_BAD_REQUEST);
            return failure_review(types, String::new(), status);
        }
    };
    let desired_api_version = request.desired_api_version.clone();
    let objects = std::mem::take(&mut request.objects);
    let response = ConversionResponse::for_request(request);
    let response = if desired_api_version.is_empty() {
        response.failure(Status::failure(
            "request.desiredAPIVersion is empty",
            REASON_BAD_REQUEST,
        ))
    } else {
        match convert_objects(converter, objects, &desired_api_version) {
            Ok(converted) => response.success(converted),
            Err(error) => response.failure(Status::failure(&error.to_string(), REASON_INVALID)),
        }
    };
    ConversionReview {
        types,
        request: None,
        response: Some(response),
    }
}

fn failure_review(types: TypeMeta, uid: String, status: Status) -> ConversionReview {
    ConversionReview {
        types,
        request: None,
        response: Some(ConversionResponse {
            types: None,
            uid,
            result: status,
            converted_objects: Vec::new(),
        }),
    }
}

/// A body that is not a `ConversionReview`: not JSON, not of the `ConversionReview` shape, or of another kind or
/// API version.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidReview {
    /// What is wrong, e.g. `malformed JSON: EOF while parsing an object at line 1 column 12`.
    pub message: String,
    /// `request.uid`, when the body has one, so that even a failure can be matched to its request.
    pub uid: String,
    /// The body's `apiVersion` when it is one of the `ConversionReview`'s, else `apiextensions.k8s.io/v1`.
    pub api_version: String,
}

impl InvalidReview {
    /// The failure `ConversionReview` that answers this body.
    pub fn into_review(self) -> ConversionReview {
        let types = TypeMeta {
            api_version: self.api_version,
            kind: REVIEW_KIND.into(),
        };
        let message = format!("invalid ConversionReview: {}", self.message);
        failure_review(types, self.uid, Status::failure(&message, REASON_BAD_REQUEST))
    }
}

impl std::fmt::Display for InvalidReview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid ConversionReview: {}", self.message)
    }
}

impl std::error::Error for InvalidReview {}

/// Parses a request body as a `ConversionReview` of `apiextensions.k8s.io/v1` (or `v1beta1`). A review without a
/// `request` parses: [`review`] answers it with a failure.
pub fn parse_review(body: &[u8]) -> Result<ConversionReview, InvalidReview> {
    let value: Value = serde_json::from_slice(body).map_err(|error| InvalidReview {
        message: format!("malformed JSON: {error}"),
        uid: String::new(),
        api_version: REVIEW_API_VERSION_V1.into(),
    })?;
    let uid = value
        .pointer("/request/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let api_version = value.get("apiVersion").and_then(Value::as_str);
    let kind = value.get("kind").and_then(Value::as_str);
    let invalid = |message: String| InvalidReview {
        message,
        uid: uid.clone(),
        api_version: match api_version {
            Some(v @ (REVIEW_API_VERSION_V1 | REVIEW_API_VERSION_V1BETA1)) => v.to_owned(),
            _ => REVIEW_API_VERSION_V1.into(),
        },
    };
    if !value.is_object() {
        return Err(invalid(format!("expected a JSON object, got {}", json_type(&value))));
    }
    if kind != Some(REVIEW_KIND) || !matches!(api_version, Some(REVIEW_API_VERSION_V1 | REVIEW_API_VERSION_V1BETA1)) {
        return Err(invalid(format!(
            "expected kind {REVIEW_KIND} of {REVIEW_API_VERSION_V1} (or v1beta1), got kind {} of {}",
            describe(value.get("kind")),
            describe(value.get("apiVersion"))
        )));
    }
    serde_path_to_error::deserialize::<_, ConversionReview>(&value).map_err(|error| {
        let path = error.path().to_string();
        let error = error.into_inner();
        invalid(if path == "." {
            error.to_string()
        } else {
            format!("{path}: {error}")
        })
    })
}

/// [`parse_review`] and [`review`] on bytes: the JSON `ConversionReview` that answers `body`. Never panics: a body
/// that is not a `ConversionReview` gets a failure review (with `request.uid` when the body has one).
pub fn review_json(converter: &dyn Converter, body: &[u8]) -> Vec<u8> {
    let answer = match parse_review(body) {
        Ok(parsed) => review(converter, parsed),
        Err(invalid) => invalid.into_review(),
    };
    to_json(&answer)
}

/// Serializes a review. Serializing a `ConversionReview` cannot fail (it holds only strings, numbers and JSON
/// values); should it ever, the answer is a fixed failure review rather than a panic.
pub(crate) fn to_json(review: &ConversionReview) -> Vec<u8> {
    serde_json::to_vec(review).unwrap_or_else(|_| {
        concat!(
            r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"","#,
            r#""result":{"status":"Failure","message":"cannot serialize the ConversionReview","#,
            r#""reason":"InternalError"},"convertedObjects":[]}}"#
        )
        .as_bytes()
        .to_vec()
    })
}
