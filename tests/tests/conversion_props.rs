//! Property tests of the version conversions on generated values: ManagedCluster and AgentPool custom
//! resources drawn from their CRD schemas (every property may appear, at any depth, with any value of its
//! type: strings, enum values of either version, integers over the whole int32/int64 range, doubles that
//! `float` cannot hold), as `v1beta1` and as `v2alpha1`; each must come back unchanged from the other version.

mod common;

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

const GROUP: &str = "containerservice.azure.com";

fn crd(kind: &str) -> Value {
    let path = common::workspace().join(format!("generated/crds/{}s.{GROUP}.yaml", kind.to_ascii_lowercase()));
    let text = std::fs::read_to_string(&path).expect("read crd");
    serde_yaml_ng::from_str(&text).expect("crd yaml")
}

fn schema(crd: &Value, version: &str) -> Value {
    crd["spec"]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .find(|v| v["name"] == version)
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
        .expect("version")
}

/// Every `enum` value in the schemas: drawn for strings, so open enums see their known values (in either
/// version's set) as well as unknown ones.
fn enum_values(schema: &Value, out: &mut BTreeSet<String>) {
    match schema {
        Value::Object(m) => {
            if let Some(Value::Array(values)) = m.get("enum") {
                out.extend(values.iter().filter_map(Value::as_str).map(str::to_string));
            }
            m.values().for_each(|v| enum_values(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| enum_values(v, out)),
        _ => {}
    }
}

/// A strategy for JSON values valid for `schema` (types and enums; patterns and bounds aside, which
/// conversion does not look at).
fn value(schema: &Value, depth: usize, words: &[String]) -> BoxedStrategy<Value> {
    if let Some(Value::Array(values)) = schema.get("enum") {
        return proptest::sample::select(values.clone()).boxed();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => {
            let words = words.to_vec();
            prop_oneof![
                proptest::sample::select(words).prop_map(Value::from),
                "[a-zA-Z0-9./-]{0,10}".prop_map(Value::from),
            ]
            .boxed()
        }
        Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
        Some("integer") => match schema.get("format").and_then(Value::as_str) {
            Some("int32") => any::<i32>().prop_map(Value::from).boxed(),
            _ => prop_oneof![any::<i64>(), -1000i64..1000].prop_map(Value::from).boxed(),
        },
        // Doubles, several of which a `float` (2025-10-01's spotMaxPrice) cannot hold exactly; a `float` property
        // gets values in its range.
        Some("number") if schema.get("format").and_then(Value::as_str) == Some("float") => {
            prop_oneof![Just(0.5f32), Just(-1.0f32), any::<i16>().prop_map(f32::from)]
                .prop_map(|f| json!(f))
                .boxed()
        }
        Some("number") => prop_oneof![
            Just(0.1f64),
            Just(-1.0f64),
            Just(1e300f64),
            (-1e6f64..1e6f64),
            any::<i32>().prop_map(f64::from),
        ]
        .prop_map(|f| json!(f))
        .boxed(),
        Some("array") => {
            let items = schema.get("items").cloned().unwrap_or(json!({}));
            if depth == 0 {
                return Just(json!([])).boxed();
            }
            proptest::collection::vec(value(&items, depth - 1, words), 0..3)
                .prop_map(Value::Array)
                .boxed()
        }
        Some("object") => object(schema, depth, words),
        _ => Just(json!({})).boxed(),
    }
}

fn object(schema: &Value, depth: usize, words: &[String]) -> BoxedStrategy<Value> {
    if let Some(extra) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        if depth == 0 {
            return Just(json!({})).boxed();
        }
        return proptest::collection::btree_map("[a-z]{1,6}", value(extra, depth - 1, words), 0..3)
            .prop_map(|m| Value::Object(m.into_iter().collect()))
            .boxed();
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Just(json!({})).boxed();
    };
    if depth == 0 {
        return Just(json!({})).boxed();
    }
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
        .iter()
        .map(|(name, s)| {
            let name = name.clone();
            let v = value(s, depth - 1, words);
            if required.contains(name.as_str()) {
                v.prop_map(move |v| Some((name.clone(), v))).boxed()
            } else {
                proptest::option::weighted(0.35, v)
                    .prop_map(move |v| v.map(|v| (name.clone(), v)))
                    .boxed()
            }
        })
        .collect();
    fields
        .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect::<Map<String, Value>>()))
        .boxed()
}

fn custom_resource(kind: &'static str, version: &'static str) -> BoxedStrategy<Value> {
    let crd = crd(kind);
    let s = schema(&crd, version);
    let mut words = BTreeSet::new();
    for v in ["v1beta1", "v2alpha1"] {
        enum_values(&schema(&crd, v), &mut words);
    }
    let words: Vec<String> = words.into_iter().collect();
    let spec = object(&s["properties"]["spec"], 6, &words);
    let status = proptest::option::of(object(&s["properties"]["status"], 6, &words));
    (spec, status)
        .prop_map(move |(spec, status)| {
            let mut cr = json!({
                "apiVersion": format!("{GROUP}/{version}"),
                "kind": kind,
                "metadata": {"name": "x", "namespace": "default", "uid": "0b6f5c1e-0000-4000-8000-000000000000"},
                "spec": spec,
            });
            if let Some(status) = status {
                cr["status"] = status;
            }
            cr
        })
        .boxed()
}

fn convert(object: &Value, version: &str) -> Result<Value, TestCaseError> {
    aks_api::convert_custom_resource(object.clone(), &format!("{GROUP}/{version}"))
        .map_err(|e| TestCaseError::fail(format!("to {version}: {e}")))
}

/// `cr` as the generated types write it (numbers, enum spellings), then `cr → other → back` must be that.
fn round_trip(cr: &Value, version: &str, other: &str) -> Result<(), TestCaseError> {
    let normalized = match (cr["kind"].as_str(), version) {
        (Some("ManagedCluster"), "v1beta1") => normalize::<aks_api::containerservice::v1beta1::ManagedCluster>(cr),
        (Some("ManagedCluster"), _) => normalize::<aks_api::containerservice::v2alpha1::ManagedCluster>(cr),
        (_, "v1beta1") => normalize::<aks_api::containerservice::v1beta1::AgentPool>(cr),
        _ => normalize::<aks_api::containerservice::v2alpha1::AgentPool>(cr),
    }?;
    let there = convert(&normalized, other)?;
    let back = convert(&there, version)?;
    prop_assert_eq!(back, normalized);
    Ok(())
}

fn normalize<T: serde::de::DeserializeOwned + serde::Serialize>(cr: &Value) -> Result<Value, TestCaseError> {
    let typed: T = serde_json::from_value(cr.clone()).map_err(|e| TestCaseError::fail(format!("decode: {e}")))?;
    serde_json::to_value(&typed).map_err(|e| TestCaseError::fail(format!("encode: {e}")))
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("ARMGEN_CONVERSION_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(64),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn managed_cluster_v1beta1_through_the_hub(cr in custom_resource("ManagedCluster", "v1beta1")) {
        round_trip(&cr, "v1beta1", "v2alpha1")?;
    }

    #[test]
    fn managed_cluster_v2alpha1_through_v1beta1(cr in custom_resource("ManagedCluster", "v2alpha1")) {
        round_trip(&cr, "v2alpha1", "v1beta1")?;
    }

    #[test]
    fn agent_pool_v1beta1_through_the_hub(cr in custom_resource("AgentPool", "v1beta1")) {
        round_trip(&cr, "v1beta1", "v2alpha1")?;
    }

    #[test]
    fn agent_pool_v2alpha1_through_v1beta1(cr in custom_resource("AgentPool", "v2alpha1")) {
        round_trip(&cr, "v2alpha1", "v1beta1")?;
    }
}
