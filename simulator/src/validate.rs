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
    match types(kind.group, kind.version, kind.kind, &body.to_string()) {
        None => Err(ArmError::new(
            500,
            "InternalServerError",
            format!(
                "the generated types have no kind {} in {}/{}",
                kind.kind, kind.group, kind.version
            ),
        )),
        Some(Ok(rt)) => Ok(rt),
        Some(Err(e)) => Err(explain(
            &e,
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
    let wrapped = json!({ "parameters": body });
    match aks_api::import_custom_resource(
        kind.group,
        kind.version,
        kind.kind,
        &wrapped.to_string(),
        "action",
        None,
    ) {
        None => Err(ArmError::new(
            500,
            "InternalServerError",
            format!(
                "the generated types have no action kind {} in {}/{}",
                kind.kind, kind.group, kind.version
            ),
        )),
        Some(Ok(_)) => Ok(()),
        Some(Err(e)) => Err(explain(
            &e,
            "parameters",
            &format!("{}/{} {}", kind.arm.arm_type, action.action, kind.arm.api_version),
        )),
    }
}

/// The 400 of a body the generated types refuse: the error names the JSON path (without the leading member `strip`,
/// when the body read wraps the request's); `what` names the type.
fn explain(err: &armgen_runtime::json::Error, strip: &str, what: &str) -> ArmError {
    let path = err.path.as_str();
    let path = if strip.is_empty() {
        path
    } else if path == strip {
        ""
    } else {
        path.strip_prefix(strip)
            .and_then(|p| p.strip_prefix('.'))
            .unwrap_or(path)
    };
    ArmError::new(
        400,
        "InvalidRequestContent",
        format!(
            "The request content was invalid and cannot be deserialized as {what}: {}. Path '{path}'.",
            err.message
        ),
    )
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
