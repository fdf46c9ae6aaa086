//! Property tests of the version conversions on generated values: custom resources of every kind that more than
//! one version has (`aks_api::KINDS`), drawn from their committed CRD schemas (every property may appear, at any
//! depth, with any value of its type: strings, enum values of any version, integers over the whole int32/int64
//! range, doubles that `float` cannot hold), in each of the kind's versions; converted to each other version and
//! back, each must come back unchanged.
//!
//! "Unchanged" without typed per-version normalization (which would need a list of types per version): the first
//! round trip `v → w → v` may only canonicalize — strings equal ignoring case (open enums take the spec's
//! spelling of a known value, as ARM compares them case-insensitively), numbers equal by value, and outside the
//! spec an empty list left out — and a second round trip of its result must give it back exactly.

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

fn custom_resource(kind: &str, version: &str) -> BoxedStrategy<Value> {
    let crd = crd(kind);
    let s = schema(&crd, version);
    let mut words = BTreeSet::new();
    for v in common::versions_of(kind) {
        enum_values(&schema(&crd, v), &mut words);
    }
    let words: Vec<String> = words.into_iter().collect();
    let spec = object(&s["properties"]["spec"], 6, &words);
    let status = proptest::option::of(object(&s["properties"]["status"], 6, &words));
    let (kind, version) = (kind.to_string(), version.to_string());
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

/// A custom resource of one of the kinds that several versions have, in one of its versions, and another of its
/// versions to convert it to: every (kind, version, other version) of the registry equally likely.
fn case() -> BoxedStrategy<(Value, &'static str, &'static str)> {
    let mut kinds: Vec<&str> = aks_api::KINDS.iter().map(|k| k.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let strategies: Vec<BoxedStrategy<(Value, &'static str, &'static str)>> = kinds
        .iter()
        .flat_map(|kind| common::version_pairs(kind).into_iter().map(move |pair| (*kind, pair)))
        .map(|(kind, (version, other))| {
            custom_resource(kind, version)
                .prop_map(move |cr| (cr, version, other))
                .boxed()
        })
        .collect();
    assert!(!strategies.is_empty(), "no kind has two versions in aks_api::KINDS");
    proptest::strategy::Union::new(strategies).boxed()
}

fn convert(object: &Value, version: &str) -> Result<Value, TestCaseError> {
    aks_api::convert_custom_resource(object.clone(), &format!("{GROUP}/{version}"))
        .map_err(|e| TestCaseError::fail(format!("to {version}: {e}")))
}

fn is_empty_collection(v: &Value) -> bool {
    v.as_array().is_some_and(Vec::is_empty) || v.as_object().is_some_and(Map::is_empty)
}

/// The first difference between `a` and `b` other than the case of a string, the spelling of a number, or (outside
/// the spec) an empty collection left out.
fn difference_beyond_canonical(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                let p = format!("{at}/{k}");
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => difference_beyond_canonical(u, v, &p),
                    // Outside the spec, the runtime's types leave empty lists out (`knownDifferences: []`); in the
                    // spec an emptied collection means "clear it" and must survive.
                    (Some(e), None) | (None, Some(e)) if !p.starts_with("/spec") && is_empty_collection(e) => None,
                    (u, v) => Some(format!("{p}: {u:?} != {v:?}")),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| difference_beyond_canonical(u, v, &format!("{at}/{i}"))),
        (Value::String(x), Value::String(y)) if x.eq_ignore_ascii_case(y) => None,
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => None,
        _ if a == b => None,
        _ => Some(format!("{at}: {a} != {b}")),
    }
}

/// `cr → other → back`: loses nothing and changes nothing but canonical spellings; and what comes back is a
/// fixed point (a second round trip gives it back exactly).
fn round_trip(cr: &Value, version: &str, other: &str) -> Result<(), TestCaseError> {
    let back = convert(&convert(cr, other)?, version)?;
    if let Some(d) = difference_beyond_canonical(cr, &back, "") {
        return Err(TestCaseError::fail(format!("{version} → {other} → {version}: {d}")));
    }
    let again = convert(&convert(&back, other)?, version)?;
    prop_assert_eq!(again, back, "a second round trip {} → {} → {}", version, other, version);
    Ok(())
}

/// `ARMGEN_CONVERSION_CASES` cases in all, default 16 per (kind, version, other version) of the registry.
fn config() -> ProptestConfig {
    let triples: usize = aks_api::VERSIONS
        .iter()
        .flat_map(|v| v.kinds.iter())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|kind| common::version_pairs(kind).len())
        .sum();
    ProptestConfig {
        cases: std::env::var("ARMGEN_CONVERSION_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(16 * u32::try_from(triples).unwrap_or(1).max(1)),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_kind_round_trips_between_every_pair_of_its_versions((cr, version, other) in case()) {
        round_trip(&cr, version, other)?;
    }
}
