//! The `ConversionReview` contract of `armgen_runtime::conversion` (and, with the `webhook` feature, its HTTP
//! router), over a toy kind `Widget` of group `example.com` in two versions:
//!
//! - `v1`: `spec.colour` (string), `spec.size` (a quantity such as `"10Gi"`), `spec.replicas`;
//! - `v2`: `spec.color`, `spec.sizeGiB` (integer), `spec.replicas`.
//!
//! Requests in `fixtures/conversion/*.request.json` have the shape the API server sends (full objects with
//! `metadata.uid`, `resourceVersion`, `creationTimestamp`, `managedFields`, `status`); each is answered and
//! compared exactly with `*.response.json`.

use std::path::PathBuf;

use armgen_runtime::conversion::{
    self, ConversionError, Converter, ObjectConversionError, REVIEW_API_VERSION_V1, convert_objects,
};
use kube_core::conversion::ConversionReview;
use serde_json::{Map, Value, json};

const V1: &str = "example.com/v1";
const V2: &str = "example.com/v2";

fn error(path: &str, message: impl Into<String>) -> ConversionError {
    ConversionError {
        path: path.into(),
        message: message.into(),
    }
}

/// The test converter: renames `colour` ⇄ `color` and turns `size: "10Gi"` ⇄ `sizeGiB: 10`; keeps everything
/// else, metadata included.
struct Widgets;

impl Converter for Widgets {
    fn convert(&self, mut object: Value, desired_api_version: &str) -> Result<Value, ConversionError> {
        let from = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if from == desired_api_version {
            return Ok(object);
        }
        let spec = match object.get_mut("spec").and_then(Value::as_object_mut) {
            Some(spec) => std::mem::take(spec),
            None => Map::new(),
        };
        let mut converted = Map::new();
        for (key, value) in spec {
            match (from.as_str(), desired_api_version, key.as_str()) {
                (V1, V2, "colour") => {
                    converted.insert("color".into(), value);
                }
                (V1, V2, "size") => {
                    let gib = value
                        .as_str()
                        .and_then(|size| size.strip_suffix("Gi"))
                        .and_then(|number| number.parse::<u64>().ok())
                        .ok_or_else(|| {
                            error(
                                "spec.size",
                                format!("expected a quantity in Gi such as \"10Gi\", got {value}"),
                            )
                        })?;
                    converted.insert("sizeGiB".into(), gib.into());
                }
                (V2, V1, "color") => {
                    converted.insert("colour".into(), value);
                }
                (V2, V1, "sizeGiB") => {
                    let gib = value
                        .as_u64()
                        .ok_or_else(|| error("spec.sizeGiB", "expected an integer"))?;
                    converted.insert("size".into(), format!("{gib}Gi").into());
                }
                (V1, V2, _) | (V2, V1, _) => {
                    converted.insert(key, value);
                }
                _ => {
                    return Err(error(
                        "apiVersion",
                        format!("cannot convert {from} to {desired_api_version}"),
                    ));
                }
            }
        }
        object["spec"] = Value::Object(converted);
        object["apiVersion"] = desired_api_version.into();
        Ok(object)
    }
}

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/conversion")
        .join(name)
}

fn fixture_bytes(name: &str) -> Vec<u8> {
    let path = fixture_path(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn fixture(name: &str) -> Value {
    serde_json::from_slice(&fixture_bytes(name)).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"))
}

fn assert_json_eq(actual: &Value, expected: &Value, what: &str) {
    assert!(
        actual == expected,
        "{what} differs\n--- expected\n{}\n--- actual\n{}",
        serde_json::to_string_pretty(expected).unwrap_or_default(),
        serde_json::to_string_pretty(actual).unwrap_or_default()
    );
}

/// Answers `<case>.request.json` through both entry points (typed and bytes) and compares each with
/// `<case>.response.json`.
fn golden(case: &str, converter: &dyn Converter) {
    let expected = fixture(&format!("{case}.response.json"));
    let body = fixture_bytes(&format!("{case}.request.json"));

    let answer = conversion::review_json(converter, &body);
    let answer: Value = serde_json::from_slice(&answer).expect("review_json answers JSON");
    assert_json_eq(&answer, &expected, &format!("{case}: review_json"));

    let request: ConversionReview = serde_json::from_slice(&body).expect("the fixture is a ConversionReview");
    let answer = serde_json::to_value(conversion::review(converter, request)).expect("a review serializes");
    assert_json_eq(&answer, &expected, &format!("{case}: review"));
}

#[test]
fn several_objects_in_several_versions_are_converted_in_order() {
    golden("multi", &Widgets);
}

#[test]
fn down_conversion_to_the_older_version() {
    golden("down", &Widgets);
}

#[test]
fn one_failing_object_fails_the_whole_review_with_a_message_naming_it() {
    golden("failure", &Widgets);
}

#[test]
fn a_review_without_request_gets_a_failure_with_an_empty_uid() {
    golden("no-request", &Widgets);
}

#[test]
fn objects_at_the_desired_version_pass_through_unchanged() {
    golden("passthrough", &Widgets);
    // Without calling the converter at all.
    let refuses = |_: Value, _: &str| -> Result<Value, ConversionError> { Err(error("", "must not be called")) };
    golden("passthrough", &refuses);
}

#[test]
fn a_v1beta1_review_is_answered_in_v1beta1() {
    golden("v1beta1", &Widgets);
}

#[test]
fn the_fixtures_keep_metadata_as_the_api_server_requires() {
    // The golden responses themselves: every converted object keeps the original metadata (which the API server
    // checks), so the fixtures cannot encode a response the API server would reject.
    for case in ["multi", "down", "passthrough", "v1beta1"] {
        let request = fixture(&format!("{case}.request.json"));
        let response = fixture(&format!("{case}.response.json"));
        let objects = request["request"]["objects"].as_array().expect("objects");
        let converted = response["response"]["convertedObjects"]
            .as_array()
            .expect("convertedObjects");
        assert_eq!(objects.len(), converted.len(), "{case}");
        for (original, converted) in objects.iter().zip(converted) {
            assert_eq!(original["metadata"], converted["metadata"], "{case}");
            assert_eq!(original["kind"], converted["kind"], "{case}");
            assert_eq!(
                converted["apiVersion"], request["request"]["desiredAPIVersion"],
                "{case}"
            );
        }
        assert_eq!(request["request"]["uid"], response["response"]["uid"], "{case}");
    }
}

fn failure_message(converter: &dyn Converter, body: &[u8]) -> (String, String) {
    let answer: Value = serde_json::from_slice(&conversion::review_json(converter, body)).expect("JSON");
    let response = &answer["response"];
    assert_eq!(response["result"]["status"], "Failure", "{answer}");
    assert_eq!(response["convertedObjects"], json!([]), "{answer}");
    let message = response["result"]["message"].as_str().expect("a message").to_owned();
    let uid = response["uid"].as_str().expect("a uid").to_owned();
    (uid, message)
}

fn review_of(objects: Value) -> Vec<u8> {
    json!({
        "kind": "ConversionReview",
        "apiVersion": "apiextensions.k8s.io/v1",
        "request": { "uid": "u-1", "desiredAPIVersion": V2, "objects": objects }
    })
    .to_string()
    .into_bytes()
}

fn widget(api_version: &str, name: &str) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": "Widget",
        "metadata": { "name": name, "namespace": "default", "uid": "0000-1", "resourceVersion": "7" },
        "spec": { "colour": "blue", "size": "1Gi" }
    })
}

#[test]
fn converter_results_are_checked_as_the_api_server_checks_them() {
    let body = review_of(json!([widget(V1, "w")]));
    let cases: Vec<(Box<dyn Converter>, &str)> = vec![
        (
            Box::new(|mut o: Value, d: &str| {
                o["apiVersion"] = d.into();
                o["metadata"]["name"] = "renamed".into();
                Ok(o)
            }),
            "cannot convert request.objects[0] (Widget default/w) from example.com/v1 to example.com/v2: \
             metadata.name: the converter changed it from \"w\" to \"renamed\" (the API server rejects changes to \
             metadata other than labels and annotations)",
        ),
        (
            Box::new(|mut o: Value, d: &str| {
                o["apiVersion"] = d.into();
                if let Some(m) = o["metadata"].as_object_mut() {
                    m.remove("uid");
                }
                Ok(o)
            }),
            "cannot convert request.objects[0] (Widget default/w) from example.com/v1 to example.com/v2: \
             metadata.uid: the converter changed it from \"0000-1\" to nothing (the API server rejects changes to \
             metadata other than labels and annotations)",
        ),
        (
            Box::new(|o: Value, _: &str| Ok(o)),
            "cannot convert request.objects[0] (Widget default/w) from example.com/v1 to example.com/v2: \
             apiVersion: the converter returned \"example.com/v1\"",
        ),
        (
            Box::new(|mut o: Value, d: &str| {
                o["apiVersion"] = d.into();
                o["kind"] = "Gadget".into();
                Ok(o)
            }),
            "cannot convert request.objects[0] (Widget default/w) from example.com/v1 to example.com/v2: \
             kind: the converter changed the kind to \"Gadget\"",
        ),
        (
            Box::new(|mut o: Value, d: &str| {
                o["apiVersion"] = d.into();
                if let Some(o) = o.as_object_mut() {
                    o.remove("metadata");
                }
                Ok(o)
            }),
            "cannot convert request.objects[0] (Widget default/w) from example.com/v1 to example.com/v2: \
             metadata: the converter dropped the metadata object",
        ),
        (
            Box::new(|_: Value, _: &str| Ok(json!([1]))),
            "cannot convert request.objects[0] (Widget default/w) from example.com/v1 to example.com/v2: \
             the converter returned an array, not a JSON object",
        ),
        (
            Box::new(|_: Value, _: &str| -> Result<Value, ConversionError> { panic!("no arm for {}", "Widget") }),
            "cannot convert request.objects[0] (Widget default/w) from example.com/v1 to example.com/v2: \
             the converter panicked: no arm for Widget",
        ),
        (
            Box::new(|_: Value, _: &str| Err(error("", "Widget cannot be converted"))),
            "cannot convert request.objects[0] (Widget default/w) from example.com/v1 to example.com/v2: \
             Widget cannot be converted",
        ),
    ];
    for (converter, expected) in cases {
        let (uid, message) = failure_message(converter.as_ref(), &body);
        assert_eq!(uid, "u-1");
        assert_eq!(message, expected);
    }
}

#[test]
fn label_and_annotation_changes_are_allowed() {
    let annotate = |mut o: Value, d: &str| -> Result<Value, ConversionError> {
        o["apiVersion"] = d.into();
        o["metadata"]["annotations"] = json!({ "example.com/bag": "{}" });
        o["metadata"]["labels"] = json!({ "converted": "yes" });
        Ok(o)
    };
    let converted = convert_objects(&annotate, vec![widget(V1, "w")], V2).expect("converts");
    assert_eq!(converted[0]["metadata"]["annotations"]["example.com/bag"], "{}");
    assert_eq!(converted[0]["apiVersion"], V2);
}

#[test]
fn malformed_objects_fail_with_their_index() {
    let cases = [
        (
            json!([widget(V1, "a"), 42]),
            "cannot convert request.objects[1] (unknown kind without a name) to example.com/v2: \
             is not a JSON object but a number",
        ),
        (
            json!([{ "kind": "Widget", "metadata": { "name": "x" } }]),
            "cannot convert request.objects[0] (Widget x) to example.com/v2: apiVersion: missing or not a string",
        ),
        (
            json!([{ "apiVersion": V1, "metadata": { "name": "x", "namespace": "ns" } }]),
            "cannot convert request.objects[0] (unknown kind ns/x) from example.com/v1 to example.com/v2: \
             kind: missing or not a string",
        ),
    ];
    for (objects, expected) in cases {
        let (uid, message) = failure_message(&Widgets, &review_of(objects));
        assert_eq!(uid, "u-1");
        assert_eq!(message, expected);
    }
}

#[test]
fn an_empty_desired_version_fails() {
    let body = json!({
        "kind": "ConversionReview",
        "apiVersion": "apiextensions.k8s.io/v1",
        "request": { "uid": "u-2", "desiredAPIVersion": "", "objects": [widget(V1, "w")] }
    });
    let (uid, message) = failure_message(&Widgets, body.to_string().as_bytes());
    assert_eq!(
        (uid.as_str(), message.as_str()),
        ("u-2", "request.desiredAPIVersion is empty")
    );
}

#[test]
fn an_empty_object_list_succeeds() {
    let answer: Value = serde_json::from_slice(&conversion::review_json(&Widgets, &review_of(json!([])))).unwrap();
    let expected = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": { "uid": "u-1", "result": { "status": "Success" }, "convertedObjects": [] }
    });
    assert_json_eq(&answer, &expected, "empty list");
}

#[test]
fn garbage_never_panics_and_gets_a_failure_review() {
    let cases: Vec<(&[u8], &str, &str)> = vec![
        (
            b"",
            "",
            "invalid ConversionReview: malformed JSON: EOF while parsing a value at line 1 column 0",
        ),
        (
            b"\xff\xfe",
            "",
            "invalid ConversionReview: malformed JSON: expected value at line 1 column 1",
        ),
        (
            b"{\"kind\":",
            "",
            "invalid ConversionReview: malformed JSON: EOF while parsing a value at line 1 column 8",
        ),
        (
            b"[]",
            "",
            "invalid ConversionReview: expected a JSON object, got an array",
        ),
        (
            br#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"a-1"}}"#,
            "a-1",
            "invalid ConversionReview: expected kind ConversionReview of apiextensions.k8s.io/v1 (or v1beta1), \
             got kind \"AdmissionReview\" of \"admission.k8s.io/v1\"",
        ),
        (
            br#"{"apiVersion":"apiextensions.k8s.io/v1"}"#,
            "",
            "invalid ConversionReview: expected kind ConversionReview of apiextensions.k8s.io/v1 (or v1beta1), \
             got kind nothing of \"apiextensions.k8s.io/v1\"",
        ),
        (
            br#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1",
                "request":{"uid":"u-9","desiredAPIVersion":"example.com/v2","objects":{}}}"#,
            "u-9",
            "invalid ConversionReview: request.objects: invalid type: map, expected a sequence",
        ),
        (
            br#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1",
                "request":{"uid":"u-8","objects":[]}}"#,
            "u-8",
            "invalid ConversionReview: request: missing field `desiredAPIVersion`",
        ),
    ];
    for (body, expected_uid, expected_message) in cases {
        let answer: Value = serde_json::from_slice(&conversion::review_json(&Widgets, body)).expect("JSON");
        assert_eq!(answer["kind"], "ConversionReview");
        assert_eq!(answer["apiVersion"], REVIEW_API_VERSION_V1);
        let response = &answer["response"];
        assert_eq!(response["uid"], expected_uid, "{answer}");
        assert_eq!(response["result"]["status"], "Failure", "{answer}");
        assert_eq!(response["result"]["reason"], "BadRequest", "{answer}");
        assert_eq!(response["result"]["message"], expected_message, "{answer}");
        assert_eq!(response["convertedObjects"], json!([]), "{answer}");
    }
}

#[test]
fn object_conversion_error_display() {
    let mut failure = ObjectConversionError {
        index: 3,
        api_version: Some(V1.into()),
        kind: Some("Widget".into()),
        namespace: None,
        name: Some("cluster-wide".into()),
        desired_api_version: V2.into(),
        error: error("spec.size", "too big"),
    };
    assert_eq!(
        failure.to_string(),
        "cannot convert request.objects[3] (Widget cluster-wide) from example.com/v1 to example.com/v2: \
         spec.size: too big"
    );
    failure.name = None;
    failure.namespace = Some("ns".into());
    assert_eq!(
        failure.to_string(),
        "cannot convert request.objects[3] (Widget without a name in ns) from example.com/v1 to example.com/v2: \
         spec.size: too big"
    );
}

#[test]
fn convert_objects_reports_the_first_failure() {
    let mut bad = widget(V1, "b");
    bad["spec"]["size"] = "huge".into();
    let failure = convert_objects(&Widgets, vec![widget(V1, "a"), bad.clone(), bad], V2).expect_err("fails");
    assert_eq!(failure.index, 1);
    assert_eq!(failure.kind.as_deref(), Some("Widget"));
    assert_eq!(failure.namespace.as_deref(), Some("default"));
    assert_eq!(failure.name.as_deref(), Some("b"));
    assert_eq!(failure.api_version.as_deref(), Some(V1));
    assert_eq!(failure.error.path, "spec.size");
    assert_eq!(
        failure.error.message,
        "expected a quantity in Gi such as \"10Gi\", got \"huge\""
    );
}

#[cfg(feature = "webhook")]
mod router {
    use std::sync::Arc;

    use armgen_runtime::webhook::{self, CONVERT_PATH, DEFAULT_MAX_BODY_BYTES};
    use axum::body::{Body, to_bytes};
    use axum::http::{Method, Request, StatusCode, header};
    use serde_json::{Value, json};
    use tower::ServiceExt;

    use super::{Widgets, assert_json_eq, fixture, fixture_bytes};

    async fn call(method: Method, path: &str, content_type: Option<&str>, body: Vec<u8>) -> (StatusCode, Value) {
        let mut request = Request::builder().method(method).uri(path);
        if let Some(content_type) = content_type {
            request = request.header(header::CONTENT_TYPE, content_type);
        }
        let request = request.body(Body::from(body)).expect("a request");
        let response = webhook::router(Arc::new(Widgets))
            .oneshot(request)
            .await
            .expect("infallible");
        let status = response.status();
        let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
        let bytes = to_bytes(response.into_body(), usize::MAX).await.expect("a body");
        if status == StatusCode::METHOD_NOT_ALLOWED || status == StatusCode::NOT_FOUND {
            return (status, Value::Null);
        }
        assert_eq!(
            content_type.as_ref().and_then(|v| v.to_str().ok()),
            Some("application/json")
        );
        let body = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{status}: not JSON ({e})"));
        (status, body)
    }

    fn assert_status(body: &Value, code: u16, reason: &str, message: &str) {
        let expected = json!({
            "apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code,
        });
        assert_json_eq(body, &expected, "error body");
    }

    #[tokio::test]
    async fn converts_a_review() {
        for case in ["multi", "failure", "no-request", "passthrough", "v1beta1"] {
            let body = fixture_bytes(&format!("{case}.request.json"));
            let (status, answer) = call(Method::POST, CONVERT_PATH, Some("application/json"), body).await;
            assert_eq!(status, StatusCode::OK, "{case}");
            assert_json_eq(&answer, &fixture(&format!("{case}.response.json")), case);
        }
    }

    #[tokio::test]
    async fn accepts_a_charset_parameter() {
        let body = fixture_bytes("multi.request.json");
        let (status, answer) = call(
            Method::POST,
            CONVERT_PATH,
            Some("Application/JSON; charset=utf-8"),
            body,
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_json_eq(&answer, &fixture("multi.response.json"), "multi");
    }

    #[tokio::test]
    async fn malformed_json_is_a_bad_request() {
        let (status, body) = call(
            Method::POST,
            CONVERT_PATH,
            Some("application/json"),
            b"{\"kind\":".to_vec(),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let message = "invalid ConversionReview: malformed JSON: EOF while parsing a value at line 1 column 8";
        assert_status(&body, 400, "BadRequest", message);
    }

    #[tokio::test]
    async fn json_that_is_not_a_review_is_a_bad_request() {
        let review = br#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1","request":{"uid":"x"}}"#;
        let (status, body) = call(Method::POST, CONVERT_PATH, Some("application/json"), review.to_vec()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let message = "invalid ConversionReview: request: missing field `desiredAPIVersion`";
        assert_status(&body, 400, "BadRequest", message);
    }

    #[tokio::test]
    async fn another_content_type_is_unsupported() {
        let body = fixture_bytes("multi.request.json");
        let (status, answer) = call(Method::POST, CONVERT_PATH, Some("text/plain"), body.clone()).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let message = "expected Content-Type application/json, got \"text/plain\"";
        assert_status(&answer, 415, "UnsupportedMediaType", message);

        let (status, answer) = call(Method::POST, CONVERT_PATH, None, body).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let message = "expected Content-Type application/json, got none";
        assert_status(&answer, 415, "UnsupportedMediaType", message);
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_too_large() {
        let body = vec![b' '; DEFAULT_MAX_BODY_BYTES + 1];
        let (status, answer) = call(Method::POST, CONVERT_PATH, Some("application/json"), body).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(answer["reason"], "RequestEntityTooLarge");
        assert_eq!(answer["code"], 413);
    }

    #[tokio::test]
    async fn other_methods_and_paths_are_refused() {
        let body = fixture_bytes("multi.request.json");
        let (status, _) = call(Method::GET, CONVERT_PATH, None, Vec::new()).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        let (status, _) = call(Method::POST, "/", Some("application/json"), body).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
}
