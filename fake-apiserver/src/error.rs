//! Kubernetes `Status` errors.

use serde_json::{Value, json};

/// An API error, answered as a Kubernetes `Status` object with the same shape the real API server uses.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    pub(crate) code: u16,
    pub(crate) reason: &'static str,
    pub(crate) message: String,
    pub(crate) details: Option<Value>,
}

/// The `reason` the API server gives for an HTTP status code.
pub(crate) fn reason_for_code(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        409 => "Conflict",
        410 => "Expired",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "Unknown",
    }
}

impl ApiError {
    pub(crate) fn new(code: u16, message: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason_for_code(code),
            message: message.into(),
            details: None,
        }
    }

    pub(crate) fn with_reason(mut self, reason: &'static str) -> Self {
        self.reason = reason;
        self
    }

    /// Adds `details` naming the object: `{"name", "group", "kind": <plural>}` as the API server does.
    pub(crate) fn with_details(mut self, group: &str, plural: &str, name: &str) -> Self {
        self.details = Some(json!({ "name": name, "group": group, "kind": plural }));
        self
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, message)
    }

    pub(crate) fn not_found(group: &str, plural: &str, name: &str) -> Self {
        Self::new(404, format!("{} \"{name}\" not found", resource_display(group, plural)))
            .with_details(group, plural, name)
    }

    pub(crate) fn already_exists(group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            409,
            format!("{} \"{name}\" already exists", resource_display(group, plural)),
        )
        .with_reason("AlreadyExists")
        .with_details(group, plural, name)
    }

    pub(crate) fn conflict(group: &str, plural: &str, name: &str, why: &str) -> Self {
        Self::new(
            409,
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                resource_display(group, plural)
            ),
        )
        .with_details(group, plural, name)
    }

    pub(crate) fn invalid(group: &str, plural: &str, name: &str, why: &str) -> Self {
        Self::new(
            422,
            format!("{} \"{name}\" is invalid: {why}", resource_display(group, plural)),
        )
        .with_details(group, plural, name)
    }

    /// The `Status` object.
    pub(crate) fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let (Some(details), Some(map)) = (&self.details, status.as_object_mut()) {
            map.insert("details".into(), details.clone());
        }
        status
    }
}

/// `configmaps` for the core group, `widgets.example.com` otherwise, as in the API server's messages.
pub(crate) fn resource_display(group: &str, plural: &str) -> String {
    if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    }
}
