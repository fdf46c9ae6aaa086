//! Validation of request bodies through the generated ARM types ([`aks_api::arm_round_trip`], or the
//! [`crate::RoundTripFn`] of [`crate::Simulator::with_kinds`]), with errors that name the JSON path of the
//! offending value.

use armgen_runtime::{ActionInfo, KindInfo, RoundTrip};
use serde_json::{Value, json};

use crate::RoundTripFn;
use crate::util::ArmError;

/// Reads `body` as the generated ARM type of `kind`. On error the message names the field, in ARM's
/// `Path 'properties.agentPoolProfiles[0].count'` style. `types` reads a body as a kind's type.
pub(crate) fn round_trip(types: RoundTripFn, kind: &KindInfo, body: &Value) -> Result<RoundTrip, ArmError> {
    let compact = body.to_string();
    match types(kind.group, kind.version, kind.kind, &compact) {
        None => Err(ArmError::new(
            500,
            "InternalServerError",
            format!(
                "the generated types have no kind {} in {}/{}",
                kind.kind, kind.group, kind.version
            ),
        )),
        Some(Ok(rt)) => Ok(rt),
        Some(Err(_)) => Err(explain(
            |json| types(kind.group, kind.version, kind.kind, json).map(|r| r.map(|_| ())),
            body,
            "",
            &format!("{} {}", kind.arm.arm_type, kind.arm.api_version),
        )),
    }
}

/// Reads the request body of an action as the generated type of its action kind: the body is that kind's
/// `parameters` (`{"parameters": body}`, read by [`aks_api::import_custom_resource`]). Errors name the path in the
/// body, as [`round_trip`]'s do.
pub(crate) fn action_body(action: &ActionInfo, body: &Value) -> Result<(), ArmError> {
    let kind = &action.kind;
    let read = |json: &str| {
        aks_api::import_custom_resource(kind.group, kind.version, kind.kind, json, "action", None)
            .map(|r| r.map(|_| ()))
    };
    let wrapped = json!({ "parameters": body });
    match read(&wrapped.to_string()) {
        None => Err(ArmError::new(
            500,
            "InternalServerError",
            format!(
                "the generated types have no action kind {} in {}/{}",
                kind.kind, kind.group, kind.version
            ),
        )),
        Some(Ok(())) => Ok(()),
        Some(Err(_)) => Err(explain(
            read,
            &wrapped,
            "parameters",
            &format!("{}/{} {}", kind.arm.arm_type, action.action, kind.arm.api_version),
        )),
    }
}

/// The 400 of a body `read` refuses: read again pretty-printed, the line of serde's error names the JSON path
/// (without the leading member `strip`, when the body read wraps the request's); `what` names the type.
fn explain(
    read: impl Fn(&str) -> Option<Result<(), serde_json::Error>>,
    body: &Value,
    strip: &str,
    what: &str,
) -> ArmError {
    // serde_json reports a line, and in pretty output every value is on the line of its key, so the line names
    // the path.
    let pretty = serde_json::to_string_pretty(body).unwrap_or_else(|_| body.to_string());
    let err = match read(&pretty) {
        Some(Err(e)) => e,
        _ => return ArmError::new(400, "InvalidRequestContent", "The request content was invalid."),
    };
    let text = err.to_string();
    let message = text.rsplit_once(" at line ").map(|(m, _)| m).unwrap_or(&text);
    let mut lines = vec![String::new()];
    line_paths(body, "", &mut lines);
    let path = lines.get(err.line().saturating_sub(1)).cloned().unwrap_or_default();
    let path = if strip.is_empty() {
        path.as_str()
    } else if path == strip {
        ""
    } else {
        path.strip_prefix(strip)
            .and_then(|p| p.strip_prefix('.'))
            .unwrap_or(path.as_str())
    };
    ArmError::new(
        400,
        "InvalidRequestContent",
        format!("The request content was invalid and cannot be deserialized as {what}: {message}. Path '{path}'."),
    )
}

/// Appends, for each line of `serde_json::to_string_pretty(v)` after the one that opens `v`, the path the line
/// belongs to (a member's line belongs to the member, a closing bracket to its container).
fn line_paths(v: &Value, path: &str, out: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match v {
        Value::Object(m) if !m.is_empty() => m
            .iter()
            .map(|(k, c)| {
                (
                    if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    },
                    c,
                )
            })
            .collect(),
        Value::Array(a) if !a.is_empty() => a.iter().enumerate().map(|(i, c)| (format!("{path}[{i}]"), c)).collect(),
        _ => return,
    };
    for (p, c) in children {
        out.push(p.clone());
        line_paths(c, &p, out);
    }
    out.push(path.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(k: &str) -> &'static KindInfo {
        aks_api::KINDS
            .iter()
            .find(|i| i.kind == k && i.arm.api_version == "2025-10-01")
            .expect("kind")
    }

    #[test]
    fn names_the_path_of_a_wrong_type() {
        let body = json!({"location": "westeurope", "properties": {"agentPoolProfiles": [{"name": "a"}, {"name": "b", "count": "three"}]}});
        let e = round_trip(aks_api::arm_round_trip, kind("ManagedCluster"), &body).unwrap_err();
        assert_eq!(e.status, 400);
        assert!(
            e.message.contains("Path 'properties.agentPoolProfiles[1].count'"),
            "{}",
            e.message
        );
    }

    #[test]
    fn names_the_object_missing_a_field() {
        let e = round_trip(
            aks_api::arm_round_trip,
            kind("ManagedCluster"),
            &json!({"properties": {}}),
        )
        .unwrap_err();
        assert!(
            e.message.contains("missing field `location`") && e.message.contains("Path ''"),
            "{}",
            e.message
        );
    }

    #[test]
    fn accepts_a_valid_body() {
        assert!(
            round_trip(
                aks_api::arm_round_trip,
                kind("ManagedCluster"),
                &json!({"location": "x"})
            )
            .is_ok()
        );
    }
}
