//! The three-version fixture through the generated conversions: every object in `objects.yaml` (custom
//! resources of `v1`, `v2` and `v3`) is converted to every other version the generated registry serves and
//! back, and along every chain of two conversions, and must come back unchanged. The test knows nothing of
//! the fixture's fields: the versions and kinds come from the generated `VERSIONS`.

use serde_json::{Value, json};
use versions_demo::{VERSIONS, convert_custom_resource, normalize_custom_resource};

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

/// The property bag of a converted object (`null` when it has none).
fn bag(object: &Value) -> Value {
    object["metadata"]["annotations"][BAG]
        .as_str()
        .map(|text| serde_json::from_str(text).expect("the bag is JSON"))
        .unwrap_or(Value::Null)
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
        let kind = object["kind"].as_str().expect("kind").to_string();
        let kind = kind.as_str();
        // The object as the types write it (the fixture may spell values differently).
        let object = normalize_custom_resource(object).expect("normalize");
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

    let hub = convert(old, "orchard.armgen.dev/v3");
    assert_eq!(
        hub["spec"]["capacity"], 120,
        "v1 size is the hub's capacity (renames in armgen.yaml)"
    );
    assert!(hub["spec"].get("size").is_none());
    assert_eq!(hub["spec"]["variety"], "Pear");
    assert_eq!(
        hub["spec"]["irrigation"],
        json!({"enabled": true, "litersPerDay": 20}),
        "v1 watering"
    );
    assert_eq!(
        bag(&hub),
        json!({
            "/spec/irrigation/nightOnly": true,
            "/spec/legacyMode": true,
            "/spec/notes": {"text": "north rows first", "author": "ana"},
            "/status/legacyMode": true,
        }),
        "keyed by the hub's names (irrigation, not v1's watering)"
    );
    assert_eq!(hub["metadata"]["annotations"]["owner-team"], "fruit");

    let v1 = convert(middle, "orchard.armgen.dev/v1");
    assert!(v1["spec"].get("variety").is_none(), "v1 has no Plum");
    assert_eq!(v1["spec"]["size"], 50);
    assert_eq!(
        v1["spec"]["watering"],
        json!({"enabled": true, "litersPerDay": 40, "nightOnly": false}),
        "v2's irrigation is v1's watering, nightOnly included although the hub lacks it"
    );
    assert_eq!(
        bag(&v1),
        json!({"/spec/pricePerKilo": 0.123456789012, "/spec/pruning": "winter", "/spec/variety": "Plum"})
    );

    let v2 = convert(new, "orchard.armgen.dev/v2");
    assert_eq!(v2["spec"]["variety"], json!(null), "v2 has no Cherry");
    assert_eq!(
        v2["spec"]["trees"],
        json!([{"name": "big"}, {"name": "small", "count": 7}]),
        "a count beyond int32 is bagged, item by item"
    );
    assert_eq!(
        bag(&v2),
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
    let small = json!({"apiVersion": "orchard.armgen.dev/v3", "kind": "Orchard", "metadata": {"name": "s"}, "spec": {"capacity": 7}});
    assert_eq!(
        convert(&small, "orchard.armgen.dev/v1")["spec"]["size"],
        7,
        "a value that fits narrows"
    );
}

/// Spoke to spoke (v1 ⇄ v2, through the hub v3 in memory, as the webhook runs it when objects stored at an old
/// version are read at another): what both spokes have arrives although the hub lacks it or holds it with
/// another type, and the way back restores the rest.
#[test]
fn spokes_convert_to_each_other_losing_nothing() {
    let objects = objects();
    let (old, middle) = (&objects[0], &objects[1]);

    let v2 = convert(old, "orchard.armgen.dev/v2");
    assert_eq!(
        v2["spec"]["pricePerKilo"],
        json!(0.1),
        "a float widens to the double with the same decimal, not 0.10000000149011612"
    );
    assert_eq!(
        v2["spec"]["notes"],
        json!({"text": "north rows first"}),
        "what v2's notes hold arrives from the bag the hub kept"
    );
    assert_eq!(
        v2["spec"]["irrigation"]["nightOnly"], true,
        "v1's watering.nightOnly is v2's irrigation.nightOnly (bag keys use the hub's names)"
    );
    assert_eq!(
        bag(&v2),
        json!({"/spec/legacyMode": true, "/spec/notes/author": "ana", "/status/legacyMode": true}),
        "the part of notes v2 lacks stays in the bag at its own place"
    );
    assert_eq!(convert(&v2, "orchard.armgen.dev/v1"), *old);

    let v1 = convert(middle, "orchard.armgen.dev/v1");
    assert!(
        v1["spec"].get("pricePerKilo").is_none(),
        "v1's float cannot hold 0.123456789012"
    );
    assert_eq!(v1["spec"]["notes"], json!({"text": "check the pears"}));
    let back = convert(&v1, "orchard.armgen.dev/v2");
    assert_eq!(back, normalize_custom_resource(middle.clone()).expect("normalize"));
    assert_eq!(back["spec"]["pricePerKilo"], json!(0.123456789012));
    assert_eq!(back["spec"]["pruning"], "winter", "the property only v2 has comes back");
}
