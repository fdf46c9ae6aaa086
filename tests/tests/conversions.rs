//! Version conversions through the hub, on every example payload, as the conversion webhook runs them
//! (`aks_api::convert_custom_resource`, JSON in and out):
//!
//! - every example (of every group) imported as a custom resource of the version of its spec converts to every
//!   other version of its group serving its kind (from the registry `aks_api::KINDS`) and back to exactly the
//!   object it was — e.g. the ~150 properties `v1beta1` lacks travel in the property bag — and through every third
//!   version and back (spoke to spoke); a group with one version has nothing to convert to;
//! - every intermediate object is valid against its version's CRD schema (what the API server stores or
//!   serves), and carries in the bag every spec property its version lacks.
//!
//! The other tests are fixtures of two AKS versions' differences (named there: a property only 2024-09-01 has, a
//! type that changed), which hold whichever version is the hub; the AKS group is the configured group of provider
//! `Microsoft.ContainerService`.

use crate::common;

use std::collections::BTreeMap;

use crate::common::examples::{all_payloads, first_difference};
use armgen_runtime::hub::PROPERTY_BAG_ANNOTATION;
use serde_json::{Value, json};

/// The Kubernetes API group of the AKS kinds, for the AKS fixtures.
fn aks() -> String {
    common::aks_group().kube_group
}

/// (Kubernetes API group, `kind`) → version → `openAPIV3Schema`, from the committed CRDs.
fn crd_schemas() -> BTreeMap<(String, String), BTreeMap<String, Value>> {
    let dir = common::workspace().join("generated/crds");
    let mut out: BTreeMap<(String, String), BTreeMap<String, Value>> = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("crds folder") {
        let path = entry.expect("entry").path();
        if path.ends_with("kustomization.yaml") {
            continue; // the list of manifests for kustomize (config/crd), not a CRD
        }
        let text = std::fs::read_to_string(&path).expect("read crd");
        let crd: Value = serde_yaml_ng::from_str(&text).expect("crd yaml");
        let group = crd["spec"]["group"].as_str().expect("group").to_string();
        let kind = crd["spec"]["names"]["kind"].as_str().expect("kind").to_string();
        for v in crd["spec"]["versions"].as_array().expect("versions") {
            let name = v["name"].as_str().expect("name").to_string();
            out.entry((group.clone(), kind.clone()))
                .or_default()
                .insert(name, v["schema"]["openAPIV3Schema"].clone());
        }
    }
    out
}

/// `object` converted to `version` of its own API group (the webhook converts within a group).
fn convert(object: &Value, version: &str) -> Result<Value, String> {
    let group = object["apiVersion"]
        .as_str()
        .and_then(|a| a.split_once('/'))
        .map(|(g, _)| g)
        .unwrap_or_default();
    aks_api::convert_custom_resource(object.clone(), &format!("{group}/{version}")).map_err(|e| e.to_string())
}

fn bag(object: &Value) -> Option<Value> {
    object["metadata"]["annotations"][PROPERTY_BAG_ANNOTATION]
        .as_str()
        .map(|text| serde_json::from_str(text).expect("the bag is JSON"))
}

/// The API versions (`group/version`) of group `group` (module name) serving `kind`, from the generated registry.
fn served(group: &str, kind: &str) -> Vec<String> {
    aks_api::KINDS
        .iter()
        .filter(|k| k.group == group && k.kind == kind)
        .map(|k| k.api_version())
        .collect()
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn every_example_round_trips_between_the_versions() {
    let root = common::spec_root();
    let schemas = crd_schemas();
    let mut failures = Vec::new();
    // (group, version) → round trips to another version and back.
    let mut counted: BTreeMap<(String, String), usize> = BTreeMap::new();
    // (group, version) → its payloads of kinds that another version of the group serves.
    let mut convertible: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut chains = 0;
    let mut bagged = 0;
    let payloads = all_payloads(&root);
    for p in &payloads {
        let info = common::kind_info(&p.group, &p.version, &p.kind);
        let from = info.api_version();
        let versions = served(&p.group, &p.kind);
        let key = (p.group.clone(), p.version.clone());
        if versions.iter().any(|v| *v != from) {
            *convertible.entry(key.clone()).or_default() += 1;
        }
        let text = serde_json::to_string(&p.json).expect("serialize");
        let cr = match aks_api::import_custom_resource(&p.group, &p.version, &p.kind, &text, "example", Some("default"))
        {
            Some(Ok(cr)) => cr,
            other => panic!("{}: import failed: {other:?}", p.describe()),
        };
        // A kind only one version has (ManagedNamespace, every kind of a group with one version) has nothing to
        // convert to.
        for other in versions.iter().filter(|v| **v != from) {
            let other_version = other.rsplit('/').next().unwrap_or_default();
            let there = match convert(&cr, other_version) {
                Ok(v) => v,
                Err(e) => {
                    failures.push(format!("{}: to {other}: {e}", p.describe()));
                    continue;
                }
            };
            assert_eq!(there["apiVersion"], json!(other));
            assert_eq!(there["kind"], cr["kind"]);
            let mut plain = there.clone();
            if let Some(a) = plain["metadata"].get_mut("annotations").and_then(Value::as_object_mut) {
                a.remove(PROPERTY_BAG_ANNOTATION);
            }
            if let Err(errors) = common::validate(
                &schemas[&(info.kube_group.to_string(), p.kind.clone())][other_version],
                &plain,
            ) {
                // 2025-10-01 requires `name` on Istio egress gateways, which 2024-09-01 did not have: a v1beta1
                // object without it converts to a newer object without it (conversion cannot invent a name; the
                // API server validates the object in the version it was written in). Every other difference is a
                // failure.
                let unexpected: Vec<&String> = errors
                    .iter()
                    .filter(|e| {
                        let gateway = e.split(": ").next().unwrap_or_default();
                        !(gateway.starts_with("/spec/serviceMeshProfile/istio/components/egressGateways/")
                            && e.ends_with("\"name\" is a required property")
                            && cr.pointer(gateway).is_some_and(|g| g.get("name").is_none()))
                    })
                    .collect();
                if !unexpected.is_empty() {
                    failures.push(format!(
                        "{}: the {other} object is invalid: {unexpected:?}",
                        p.describe()
                    ));
                }
            }
            if bag(&there).is_some() {
                bagged += 1;
            }
            match convert(&there, &p.version) {
                Ok(back) => match first_difference(&cr, &back, "") {
                    None => *counted.entry(key.clone()).or_default() += 1,
                    Some(d) => failures.push(format!("{}: {from} → {other} → {from}: {d}", p.describe())),
                },
                Err(e) => failures.push(format!("{}: back to {from}: {e}", p.describe())),
            }
            // Through a third version (spoke to spoke), and back.
            for third in versions.iter().filter(|v| **v != from && *v != other) {
                let third_version = third.rsplit('/').next().unwrap_or_default();
                let back = convert(&there, third_version).and_then(|further| convert(&further, &p.version));
                match back {
                    Ok(back) => match first_difference(&cr, &back, "") {
                        None => chains += 1,
                        Some(d) => failures.push(format!("{}: {from} → {other} → {third} → {from}: {d}", p.describe())),
                    },
                    Err(e) => failures.push(format!("{}: {from} → {other} → {third} → {from}: {e}", p.describe())),
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!(
        "round trips: {counted:?}; {chains} chains through a third version; {bagged} intermediate objects carry a \
         property bag"
    );
    // Every version's examples of the kinds another version of its group has went to every other version and
    // back: at least one round trip per such payload, and a version that shares a kind with another version of
    // its group has such examples. AKS has many (356 payloads with two versions, ManagedNamespace's aside).
    let aks_group = common::aks_group();
    for v in aks_api::VERSIONS {
        let key = (v.group.to_string(), v.version.to_string());
        let shares_a_kind = aks_api::KINDS
            .iter()
            .any(|k| k.group == v.group && k.version != v.version && v.kinds.contains(&k.kind));
        let payloads = convertible.get(&key).copied().unwrap_or_default();
        let round_trips = counted.get(&key).copied().unwrap_or_default();
        assert_eq!(
            shares_a_kind,
            payloads > 0,
            "{}/{}: {convertible:?}",
            v.group,
            v.version
        );
        assert!(round_trips >= payloads, "{}/{}: {counted:?}", v.group, v.version);
        if v.group == aks_group.name {
            assert!(round_trips > 100, "{}/{}: {counted:?}", v.group, v.version);
        }
    }
    assert!(
        bagged >= 90,
        "newer objects lose properties in older versions: they must be bagged"
    );
}

/// `enablePodSecurityPolicy` exists only in `v1beta1` (ARM 2024-09-01; a fixture of that version): the hub (the
/// registry's storage version) keeps it in the bag, and it comes back.
#[test]
fn a_property_only_the_spoke_has_survives_the_hub() {
    let hub_version = common::storage_version(&common::aks_group().name);
    let cr = json!({
        "apiVersion": format!("{}/v1beta1", aks()),
        "kind": "ManagedCluster",
        "metadata": {"name": "c1", "namespace": "default", "annotations": {"team": "a"}},
        "spec": {
            "location": "westus2",
            "owner": {"name": "rg1"},
            "enablePodSecurityPolicy": true,
            "agentPoolProfiles": [{"name": "pool1", "count": 3, "osSKU": "Ubuntu"}],
        },
    });
    let hub = convert(&cr, hub_version).expect("to the hub");
    assert!(
        hub["spec"].get("enablePodSecurityPolicy").is_none(),
        "the hub has no such property"
    );
    assert_eq!(bag(&hub), Some(json!({"/spec/enablePodSecurityPolicy": true})));
    assert_eq!(
        hub["metadata"]["annotations"]["team"], "a",
        "other annotations are kept"
    );
    assert_eq!(hub["spec"]["agentPoolProfiles"][0]["count"], 3);
    let back = convert(&hub, "v1beta1").expect("back");
    assert_eq!(back, cr, "the bag is restored and removed");
}

/// A property that `v2alpha1` (2025-10-01) has and `v1beta1` (2024-09-01) lacks survives a round trip through
/// `v1beta1`, also inside an array item. A fixture of those two versions, whichever version is the hub (with a
/// newer hub, each conversion goes through it).
#[test]
fn a_property_only_the_newer_version_has_survives_the_older() {
    let cr = json!({
        "apiVersion": format!("{}/v2alpha1", aks()),
        "kind": "ManagedCluster",
        "metadata": {"name": "c1", "namespace": "default"},
        "spec": {
            "location": "westus2",
            "kind": "Base",
            "nodeProvisioningProfile": {"mode": "Auto"},
            "agentPoolProfiles": [
                {"name": "pool1", "count": 3},
                {"name": "pool2", "count": 1, "messageOfTheDay": "aGVsbG8=", "osSKU": "AzureLinux3"},
            ],
        },
    });
    let spoke = convert(&cr, "v1beta1").expect("to v1beta1");
    assert_eq!(
        bag(&spoke),
        Some(json!({
            "/spec/agentPoolProfiles/1/messageOfTheDay": "aGVsbG8=",
            "/spec/kind": "Base",
            "/spec/nodeProvisioningProfile": {"mode": "Auto"},
        }))
    );
    assert_eq!(
        spoke["spec"]["agentPoolProfiles"][1]["osSKU"], "AzureLinux3",
        "an open enum keeps a value its version does not know"
    );
    assert_eq!(convert(&spoke, "v2alpha1").expect("back"), cr);

    // A user on v1beta1 changes a field both versions have: the change and the bagged properties both arrive.
    let mut edited = spoke.clone();
    edited["spec"]["agentPoolProfiles"][0]["count"] = json!(5);
    let newer = convert(&edited, "v2alpha1").expect("edited, to v2alpha1");
    assert_eq!(newer["spec"]["agentPoolProfiles"][0]["count"], 5);
    assert_eq!(newer["spec"]["agentPoolProfiles"][1]["messageOfTheDay"], "aGVsbG8=");
    assert_eq!(newer["spec"]["kind"], "Base");
    assert!(bag(&newer).is_none());
}

/// `spotMaxPrice` is a double in 2024-09-01 (v1beta1) and a float in 2025-10-01 (v2alpha1): a decimal both hold
/// (`0.1`) converts between every ordered pair of the versions serving AgentPool with its decimal unchanged — not
/// bagged, not `0.10000000149011612` — and a double a float cannot hold comes back from every version exactly.
#[test]
fn spot_max_price_keeps_its_decimal_in_every_version() {
    let pool = |version: &str, price: f64| {
        json!({
            "apiVersion": format!("{}/{version}", aks()),
            "kind": "AgentPool",
            "metadata": {"name": "p1", "namespace": "default"},
            "spec": {"owner": {"name": "c1"}, "spotMaxPrice": price, "count": 2},
        })
    };
    let versions = common::versions_of(&common::aks_group().name, "AgentPool");
    assert!(versions.len() >= 2, "{versions:?}");
    let (mut pairs, mut doubles) = (0, 0);
    for from in &versions {
        for to in versions.iter().filter(|v| *v != from) {
            for price in [0.1, -1.0, 0.5, 12.75] {
                let cr = pool(from, price);
                let there = convert(&cr, to).expect("convert");
                assert_eq!(there["spec"]["spotMaxPrice"], json!(price), "{from} → {to}: {there}");
                assert!(bag(&there).is_none(), "{from} → {to}: nothing to bag: {there}");
                assert_eq!(convert(&there, from).expect("back"), cr, "{from} → {to} → {from}");
            }
            pairs += 1;
            // A double that a float cannot hold, from a version that holds it: kept where the type holds it,
            // bagged where not, and back.
            let cr = pool(from, 0.123456789012);
            if aks_api::normalize_custom_resource(cr.clone()).expect("normalize") != cr {
                continue; // `from` has a float
            }
            let there = convert(&cr, to).expect("convert");
            match there["spec"].get("spotMaxPrice") {
                Some(price) => assert_eq!(*price, json!(0.123456789012), "{from} → {to}"),
                None => assert_eq!(
                    bag(&there),
                    Some(json!({"/spec/spotMaxPrice": 0.123456789012})),
                    "{from} → {to}"
                ),
            }
            assert_eq!(convert(&there, from).expect("back"), cr, "{from} → {to} → {from}");
            doubles += 1;
        }
    }
    assert!(pairs >= 2 && doubles >= 1, "{pairs} pairs, {doubles} from a double");
}

#[test]
fn errors_name_the_object_field() {
    let bad = json!({
        "apiVersion": format!("{}/v1beta1", aks()),
        "kind": "AgentPool",
        "metadata": {"name": "p1"},
        "spec": {"count": "three"},
    });
    let e = convert(&bad, "v2alpha1").unwrap_err();
    assert!(e.starts_with("spec.count:"), "{e}");
    let unknown = json!({"apiVersion": format!("{}/v1beta1", aks()), "kind": "Widget", "metadata": {}, "spec": {}});
    let e = convert(&unknown, "v2alpha1").unwrap_err();
    assert!(e.contains("Widget is not a kind"), "{e}");
    let mut good = bad.clone();
    good["spec"]["count"] = json!(3);
    let e = convert(&good, "v9").unwrap_err();
    assert!(e.contains("not served in version v9"), "{e}");
    let e = aks_api::convert_custom_resource(bad.clone(), "example.com/v1").unwrap_err();
    assert!(e.to_string().contains("not a version this crate converts"), "{e}");
    let mut broken_bag = bad.clone();
    broken_bag["spec"]["count"] = json!(3);
    broken_bag["metadata"]["annotations"] = json!({PROPERTY_BAG_ANNOTATION: "not json"});
    let e = convert(&broken_bag, "v2alpha1").unwrap_err();
    assert!(e.contains(PROPERTY_BAG_ANNOTATION), "{e}");
}

/// A ConversionReview as the API server sends it (several objects, full metadata), answered by the webhook's
/// handler with the generated converter; the answer is a golden snapshot. A fixture of `v1beta1` → `v2alpha1`
/// (the objects use properties of those versions), whichever version is the hub.
#[test]
fn conversion_review_golden() {
    let object = |kind: &str, name: &str, spec: Value| {
        json!({
            "apiVersion": format!("{}/v1beta1", aks()),
            "kind": kind,
            "metadata": {
                "name": name,
                "namespace": "team-a",
                "uid": format!("6f1d2a3b-0000-4000-8000-{:012}", name.len()),
                "resourceVersion": "48211",
                "generation": 3,
                "creationTimestamp": "2026-11-02T09:14:00Z",
                "labels": {"app.kubernetes.io/managed-by": "flux"},
                "managedFields": [{
                    "manager": "kubectl-client-side-apply",
                    "operation": "Update",
                    "apiVersion": format!("{}/v1beta1", aks()),
                    "time": "2026-11-02T09:14:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {".": {}}},
                }],
            },
            "spec": spec,
        })
    };
    let request = json!({
        "kind": "ConversionReview",
        "apiVersion": "apiextensions.k8s.io/v1",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "desiredAPIVersion": format!("{}/v2alpha1", aks()),
            "objects": [
                object("ManagedCluster", "prod", json!({
                    "location": "westeurope",
                    "owner": {"name": "rg-prod"},
                    "dnsPrefix": "prod",
                    "enablePodSecurityPolicy": false,
                    "networkProfile": {"outboundType": "loadBalancer", "networkPlugin": "azure"},
                    "agentPoolProfiles": [{"name": "system", "count": 3, "mode": "System", "vmSize": "Standard_D4s_v5"}],
                })),
                object("AgentPool", "gpu", json!({
                    "owner": {"name": "prod"},
                    "count": 2,
                    "vmSize": "Standard_NC6s_v3",
                    "spotMaxPrice": 0.1,
                    "scaleSetPriority": "Spot",
                })),
            ],
        },
    });
    let body = serde_json::to_vec(&request).expect("request");
    let response: Value =
        serde_json::from_slice(&armgen_runtime::conversion::review_json(&aks_api::Converter, &body)).expect("json");
    assert_eq!(response["response"]["result"]["status"], "Success", "{response}");
    insta::assert_yaml_snapshot!("conversion_review_v1beta1_to_v2alpha1", response);

    // Back down: the objects the API server would send from storage come back as they were written.
    let mut down = request.clone();
    down["request"]["desiredAPIVersion"] = json!(format!("{}/v1beta1", aks()));
    down["request"]["objects"] = response["response"]["convertedObjects"].clone();
    let back: Value = serde_json::from_slice(&armgen_runtime::conversion::review_json(
        &aks_api::Converter,
        &serde_json::to_vec(&down).expect("down"),
    ))
    .expect("json");
    let original = request["request"]["objects"].as_array().expect("objects").clone();
    let back_objects = back["response"]["convertedObjects"]
        .as_array()
        .expect("converted")
        .clone();
    for (a, b) in original.iter().zip(&back_objects) {
        assert_eq!(first_difference(a, b, ""), None);
    }

    // One bad object fails the whole review, naming it and the field.
    let mut bad = request.clone();
    bad["request"]["objects"][1]["spec"]["count"] = json!("two");
    let failed: Value = serde_json::from_slice(&armgen_runtime::conversion::review_json(
        &aks_api::Converter,
        &serde_json::to_vec(&bad).expect("bad"),
    ))
    .expect("json");
    assert_eq!(failed["response"]["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(failed["response"]["result"]["status"], "Failure");
    assert!(
        failed["response"]
            .get("convertedObjects")
            .is_none_or(|c| c.as_array().is_some_and(Vec::is_empty))
    );
    let message = failed["response"]["result"]["message"].as_str().expect("message");
    assert!(
        message.contains("request.objects[1] (AgentPool team-a/gpu)") && message.contains("spec.count"),
        "{message}"
    );
}
