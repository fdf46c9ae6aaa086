//! Property tests of the version conversions on generated values, for every kind and every ordered pair of the
//! versions that serve it, as the generated registry lists them (`KINDS`): custom resources drawn from the
//! kind's CRD schema at the first version (every property may appear, at any depth, with any value of its type:
//! strings, enum values of any version, integers over the whole int32/int64 range, doubles that `float` cannot
//! hold) must come back unchanged from the second version, and from every chain through a third.
//!
//! Run for every group of `aks_api` (kinds with one version have nothing to convert) and for the three-version
//! orchard fixture (`versions_demo`), whose two spokes differ from each other as well as from the hub (float and
//! double, properties only one spoke has), so that spoke-to-spoke conversions are exercised before AKS has a
//! third version.
//!
//! `ARMGEN_CONVERSION_CASES` sets the number of cases per kind and pair (default 48).

use crate::common;

use std::collections::BTreeSet;

use armgen_runtime::KindInfo;
use armgen_runtime::kube::ConversionError;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use serde_json::{Map, Value, json};

/// What a generated crate offers for these tests.
struct Api {
    name: &'static str,
    kinds: &'static [KindInfo],
    convert: fn(Value, &str) -> Result<Value, ConversionError>,
    normalize: fn(Value) -> Result<Value, ConversionError>,
    crd: fn(&str, &str) -> Option<Result<CustomResourceDefinition, serde_yaml_ng::Error>>,
}

const AKS: Api = Api {
    name: "aks-api",
    kinds: aks_api::KINDS,
    convert: aks_api::convert_custom_resource,
    normalize: aks_api::normalize_custom_resource,
    crd: aks_api::custom_resource_definition,
};

const ORCHARD: Api = Api {
    name: "versions-demo",
    kinds: versions_demo::KINDS,
    convert: versions_demo::convert_custom_resource,
    normalize: versions_demo::normalize_custom_resource,
    crd: versions_demo::custom_resource_definition,
};

/// The `openAPIV3Schema` of every version of a CRD, by version name.
fn schemas(crd: &CustomResourceDefinition) -> Vec<(String, Value)> {
    crd.spec
        .versions
        .iter()
        .map(|v| {
            let schema = v
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
                .map(|s| serde_json::to_value(s).expect("schema as JSON"))
                .unwrap_or(Value::Null);
            (v.name.clone(), schema)
        })
        .collect()
}

/// Every `enum` value in the schemas: drawn for strings, so open enums see their known values (in any
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
        // A `float` gets values it holds: short decimals and any finite float (as the double with its decimal).
        Some("number") if schema.get("format").and_then(Value::as_str) == Some("float") => prop_oneof![
            Just(0.1f64),
            Just(-1.0f64),
            any::<f32>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(armgen_runtime::hub::widen),
            any::<i16>().prop_map(f64::from),
        ]
        .prop_map(|f| json!(f))
        .boxed(),
        // A double gets decimals a `float` holds (0.1, 0.5, -1), doubles it cannot (0.123456789012, 1e300, any
        // double) and floats: whatever the property's type in another version, that type is then exercised on
        // values it can and cannot hold.
        Some("number") => prop_oneof![
            Just(0.1f64),
            Just(0.5f64),
            Just(-1.0f64),
            Just(0.123456789012f64),
            Just(1e300f64),
            (-1e6f64..1e6f64),
            any::<f32>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(armgen_runtime::hub::widen),
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

/// Custom resources of `kind` at `version` of `group`, drawn from `schema`.
fn custom_resource(group: &str, kind: &str, version: &str, schema: &Value, words: &[String]) -> BoxedStrategy<Value> {
    let spec = object(&schema["properties"]["spec"], 6, words);
    let status = proptest::option::of(object(&schema["properties"]["status"], 6, words));
    let (api_version, kind) = (format!("{group}/{version}"), kind.to_string());
    (spec, status)
        .prop_map(move |(spec, status)| {
            let mut cr = json!({
                "apiVersion": api_version,
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

fn cases() -> u32 {
    std::env::var("ARMGEN_CONVERSION_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

/// `cr` as its version's types write it; then `cr → to → cr's version` and `cr → to → third → cr's version`
/// must give it back, for every third version in `versions`.
fn round_trips(api: &Api, cr: &Value, to: &str, versions: &[String]) -> Result<(), TestCaseError> {
    let convert = |object: &Value, api_version: &str| {
        (api.convert)(object.clone(), api_version).map_err(|e| TestCaseError::fail(format!("to {api_version}: {e}")))
    };
    let normalized = (api.normalize)(cr.clone()).map_err(|e| TestCaseError::fail(format!("normalize: {e}")))?;
    let from = cr["apiVersion"].as_str().unwrap_or_default();
    let there = convert(&normalized, to)?;
    prop_assert_eq!(&convert(&there, from)?, &normalized, "{} → {} → {}", from, to, from);
    for third in versions.iter().filter(|v| *v != from && *v != to) {
        let further = convert(&there, third)?;
        prop_assert_eq!(
            &convert(&further, from)?,
            &normalized,
            "{} → {} → {} → {}",
            from,
            to,
            third,
            from
        );
    }
    Ok(())
}

/// Every kind of `api` with more than one version, every ordered pair of its versions.
fn every_ordered_pair(api: &Api) {
    let kinds: BTreeSet<(&str, &str)> = api.kinds.iter().map(|k| (k.kube_group, k.kind)).collect();
    let mut pairs = 0;
    for (group, kind) in kinds {
        let served: Vec<&KindInfo> = api
            .kinds
            .iter()
            .filter(|k| k.kube_group == group && k.kind == kind)
            .collect();
        if served.len() < 2 {
            continue;
        }
        let crd = (api.crd)(group, kind)
            .unwrap_or_else(|| panic!("{}: no CRD for {kind}", api.name))
            .expect("the CRD parses");
        let schemas = schemas(&crd);
        let mut words = BTreeSet::new();
        for (_, s) in &schemas {
            enum_values(s, &mut words);
        }
        let words: Vec<String> = words.into_iter().collect();
        let versions: Vec<String> = served.iter().map(|k| k.api_version()).collect();
        for from in &served {
            let schema = &schemas
                .iter()
                .find(|(v, _)| v == from.version)
                .unwrap_or_else(|| panic!("{}: the CRD of {kind} lacks {}", api.name, from.version))
                .1;
            let strategy = custom_resource(group, kind, from.version, schema, &words);
            for to in served.iter().filter(|to| to.version != from.version) {
                let mut runner = TestRunner::new(Config {
                    cases: cases(),
                    failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                        "tests/conversion_props.proptest-regressions",
                    ))),
                    ..Config::default()
                });
                let to = to.api_version();
                if let Err(e) = runner.run(&strategy, |cr| round_trips(api, &cr, &to, &versions)) {
                    panic!("{}: {kind} {} → {to}: {e}", api.name, from.version);
                }
                pairs += 1;
            }
        }
    }
    assert!(pairs > 0, "{}: no kind has two versions", api.name);
    eprintln!("{}: {pairs} ordered pairs × {} cases", api.name, cases());
}

#[test]
fn aks_every_kind_round_trips_between_every_ordered_pair_of_versions() {
    every_ordered_pair(&AKS);
}

#[test]
fn orchard_every_kind_round_trips_between_every_ordered_pair_of_versions() {
    every_ordered_pair(&ORCHARD);
}

/// Cases earlier runs of these properties shrank to (bugs fixed since): free-form and map-valued status
/// properties next to a spot price, and `outboundType: None` (an enum value other versions spell differently).
#[test]
fn cases_found_earlier_round_trip() {
    let aks = common::aks_group().kube_group;
    let group = aks.as_str();
    let object = |version: &str, kind: &str, spec: Value, status: Option<Value>| {
        let mut cr = json!({
            "apiVersion": format!("{group}/{version}"),
            "kind": kind,
            "metadata": {"name": "x", "namespace": "default", "uid": "0b6f5c1e-0000-4000-8000-000000000000"},
            "spec": spec,
        });
        if let Some(status) = status {
            cr["status"] = status;
        }
        cr
    };
    let cases = [
        object(
            "v2alpha1",
            "ManagedCluster",
            json!({"location": "False"}),
            Some(json!({
                "agentPoolProfiles": [{
                    "spotMaxPrice": 0.1,
                    "kubeletConfig": {"imageGcHighThreshold": -114955, "imageGcLowThreshold": -1931859503, "containerLogMaxFiles": 347466004},
                    "enableEncryptionAtHost": false, "enableUltraSSD": true, "enableFIPS": true,
                    "gpuInstanceProfile": "Unknown", "creationData": {"sourceResourceId": "8"},
                    "hostGroupID": "UserAssigned", "gpuProfile": {"driver": "xZb"}, "gatewayProfile": {},
                    "status": {"provisioningError": {"code": "hK3xTivQ3", "message": "UserAssigned", "details": [{}, {}]}},
                    "localDNSProfile": {"mode": "7Q26F3D9L", "vnetDNSOverrides": {}},
                }],
                "addonProfiles": {}, "enableRBAC": false, "aadProfile": {"adminGroupObjectIDs": ["Unknown"]},
                "privateLinkResources": [{"id": "y", "requiredMembers": []}], "disableLocalAccounts": true,
                "httpProxyConfig": {"trustedCa": "SystemAssigned"}, "publicNetworkAccess": "",
                "azureMonitorProfile": {"metrics": {}},
                "nodeProvisioningProfile": {"mode": "5G/-", "defaultNodePools": "Unknown"},
                "aiToolchainOperatorProfile": {},
                "identity": {"principalId": "True", "delegatedResources": {
                    "msdgix": {"resourceId": "M9dKN7", "referralResource": "Unknown"},
                    "nhagje": {"resourceId": "QBvVXeAx"},
                }},
                "operatorStatus": {},
            })),
        ),
        object(
            "v1beta1",
            "ManagedCluster",
            json!({"location": "False", "networkProfile": {"outboundType": "None"}}),
            None,
        ),
    ];
    for cr in cases {
        let kind = cr["kind"].as_str().expect("kind");
        let from = cr["apiVersion"].as_str().expect("apiVersion");
        let versions: Vec<String> = AKS
            .kinds
            .iter()
            .filter(|k| k.kube_group == group && k.kind == kind)
            .map(KindInfo::api_version)
            .collect();
        for to in versions.iter().filter(|v| *v != from) {
            if let Err(e) = round_trips(&AKS, &cr, to, &versions) {
                panic!("{kind} {from} → {to}: {e}");
            }
        }
    }
}
