//! The three-version fixture through the generated conversions: every object in `objects.yaml` (custom
//! resources of `v1`, `v2` and `v3`) is converted to every other version the generated registry serves and
//! back, and along every chain of two conversions, and must come back unchanged. The test knows nothing of
//! the fixture's fields: the versions and kinds come from the generated `VERSIONS`.

use serde_json::{Value, json};
use versions_demo::{VERSIONS, convert_custom_resource};

const BAG: &str = armgen_runtime::hub::PROPERTY_BAG_ANNOTATION;

fn objects() -> Vec<Value> {
    let text = include_str!("objects.yaml");
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|doc| {
            let value: Value = serde::Deserialize::deserialize(doc).expect("objects.yaml is YAML");
            value
        })
        .collect()
}

fn convert(object: &Value, api_version: &str) -> Value {
    convert_custom_resource(object.clone(), api_version).unwrap_or_else(|e| {
        panic!(
            "{} {} → {api_version}: {e}",
            object["apiVersion"], object["metadata"]["name"]
        )
    })
}

/// The `group/version`s serving `kind`.
fn served(kind: &str) -> Vec<String> {
    VERSIONS
        .iter()
        .filter(|v| v.kinds.contains(&kind))
        .map(|v| format!("{}/{}", v.kube_group, v.version))
        .collect()
}

#[test]
fn three_versions_are_generated_with_the_newest_as_hub() {
    let versions: Vec<(&str, bool)> = VERSIONS.iter().map(|v| (v.version, v.storage)).collect();
    assert_eq!(versions, [("v1", false), ("v2", false), ("v3", true)]);
}

#[test]
fn every_object_round_trips_through_every_version_and_chain() {
    let mut checked = 0;
    for object in objects() {
        let from = object["apiVersion"].as_str().expect("apiVersion").to_string();
        let kind = object["kind"].as_str().expect("kind");
        // The object as the types write it (the fixture may spell values differently).
        let object = convert(&object, &from);
        let versions = served(kind);
        assert_eq!(versions.len(), 3, "{kind}");
        for b in versions.iter().filter(|b| **b != from) {
            let there = convert(&object, b);
            assert_eq!(there["apiVersion"], json!(b));
            assert_eq!(convert(&there, &from), object, "{from} → {b} → {from}");
            checked += 1;
            for c in versions.iter().filter(|c| **c != from && *c != b) {
                let further = convert(&there, c);
                assert_eq!(convert(&further, &from), object, "{from} → {b} → {c} → {from}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 12, "3 objects × (2 direct + 2 chains)");
}

/// What the configuration and the specs say, seen through the converted objects: the rename, the widening,
/// the enum extension and the removed and added properties.
#[test]
fn the_fixture_changes_convert_as_declared() {
    let objects = objects();
    let (old, middle, new) = (&objects[0], &objects[1], &objects[2]);

    let hub = convert(old, "orchard.azure.com/v3");
    assert_eq!(
        hub["spec"]["capacity"], 120,
        "v1 size is the hub's capacity (renames in armgen.yaml)"
    );
    assert!(hub["spec"].get("size").is_none());
    assert_eq!(hub["spec"]["variety"], "Pear");
    let bag: Value = serde_json::from_str(hub["metadata"]["annotations"][BAG].as_str().expect("bag")).expect("json");
    assert_eq!(bag, json!({"/spec/legacyMode": true, "/status/legacyMode": true}));
    assert_eq!(hub["metadata"]["annotations"]["owner-team"], "fruit");

    let v1 = convert(middle, "orchard.azure.com/v1");
    assert!(v1["spec"].get("variety").is_none(), "v1 has no Plum");
    assert_eq!(v1["spec"]["size"], 50);
    let bag: Value = serde_json::from_str(v1["metadata"]["annotations"][BAG].as_str().expect("bag")).expect("json");
    assert_eq!(
        bag,
        json!({"/spec/irrigation": {"enabled": true, "litersPerDay": 40}, "/spec/variety": "Plum"})
    );

    let v2 = convert(new, "orchard.azure.com/v2");
    assert_eq!(v2["spec"]["variety"], json!(null), "v2 has no Cherry");
    assert_eq!(
        v2["spec"]["trees"],
        json!([{"name": "big"}, {"name": "small", "count": 7}]),
        "a count beyond int32 is bagged, item by item"
    );
    let bag: Value = serde_json::from_str(v2["metadata"]["annotations"][BAG].as_str().expect("bag")).expect("json");
    assert_eq!(
        bag,
        json!({
            "/spec/capacity": 5_000_000_000_i64,
            "/spec/soil": "loam",
            "/spec/trees/0/count": 3_000_000_000_i64,
            "/spec/variety": "Cherry",
            "/status/capacity": 5_000_000_000_i64,
            "/status/soil": "loam",
            "/status/variety": "Cherry",
        })
    );
    assert_eq!(v2["spec"]["irrigation"], json!({"enabled": false}));
    let small = json!({"apiVersion": "orchard.azure.com/v3", "kind": "Orchard", "metadata": {"name": "s"}, "spec": {"capacity": 7}});
    assert_eq!(
        convert(&small, "orchard.azure.com/v1")["spec"]["size"],
        7,
        "a value that fits narrows"
    );
}
