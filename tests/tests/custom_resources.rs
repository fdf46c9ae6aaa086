//! Every example payload through the custom resources, as `armctl import` / `export` and the reconciler use
//! them:
//!
//! - request bodies: ARM body → custom resource (import: spec and status) → ARM PUT body (export) gives the
//!   original JSON, *secrets and read-only properties aside*: an import cannot read a secret back (the spec
//!   holds a reference to a Kubernetes Secret instead, resolved at export — here by a resolver that writes a
//!   placeholder, so the value differs by design), and read-only properties belong to status, never to a
//!   PUT body;
//! - response bodies: ARM body → status loses no property except secrets (which never reach status) and the
//!   properties the spec does not define (the 2024-09-01 `eTag`s, listed exactly in `examples.rs`).
//!
//! Every example of every configured group; a payload is a kind's when its schema is the kind's PUT body or GET
//! response (`common::examples`).
//!
//! Normalizations, as in `examples.rs`: numbers by value, `null` members as absent; and an empty `properties`
//! envelope (`"properties": {}`) as absent, since a spec with no flattened field set sends none.

use crate::common;

use crate::common::examples::{
    Payload, all_payloads, drop_unknown, first_difference, normalize, strip, without_empty_envelope,
};
use armgen::ir::{Ir, TypeRef};
use armgen::shape::{KubeIr, Special};
use armgen_runtime::kube::ArmIdsOnly;
use serde_json::{Map, Value};

fn context(generation: &armgen::Generation, p: &Payload) -> (Ir, KubeIr, TypeRef) {
    let key = format!("{}/{}", p.group, p.version);
    let ir = generation.irs.get(&key).expect("ir").clone();
    let kube = generation.kubes.get(&key).expect("kube ir").clone();
    let body = ir
        .resources
        .iter()
        .find(|r| r.kind == p.kind)
        .expect("resource")
        .body_type
        .clone();
    (ir, kube, TypeRef::Named(body))
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn every_example_round_trips_through_the_custom_resources() {
    let root = common::spec_root();
    let generation = armgen::Builder::new(common::workspace().join("azure-arm.yaml"))
        .specs(&root)
        .generate()
        .expect("generate");
    let payloads = all_payloads(&root);
    let mut failures = Vec::new();
    let (mut requests, mut responses) = (0, 0);
    for p in &payloads {
        let (ir, kube, body) = context(&generation, p);
        let text = serde_json::to_string(&p.json).expect("serialize");
        let cr = match aks_api::import_custom_resource(&p.group, &p.version, &p.kind, &text, "example", Some("default"))
        {
            Some(Ok(cr)) => cr,
            Some(Err(e)) => {
                failures.push(format!("{}: import: {e}", p.describe()));
                continue;
            }
            None => {
                failures.push(format!("{}: no custom resource for the kind", p.describe()));
                continue;
            }
        };
        if p.request {
            requests += 1;
            let exported = match aks_api::export_custom_resource(&p.group, &p.version, &p.kind, &cr, &ArmIdsOnly) {
                Some(Ok(v)) => v,
                Some(Err(e)) => {
                    failures.push(format!("{}: export: {e}", p.describe()));
                    continue;
                }
                None => {
                    failures.push(format!("{}: no export for the kind", p.describe()));
                    continue;
                }
            };
            let expected = strip(&ir, &body, &p.json, &|q| q.read_only || q.secret);
            let expected = without_empty_envelope(normalize(&expected));
            let exported = without_empty_envelope(normalize(&strip(&ir, &body, &exported, &|q| q.secret)));
            if let Some(d) = first_difference(&expected, &exported, "") {
                failures.push(format!("{}: import → export: {d}", p.describe()));
            }
        } else {
            responses += 1;
            // Status back into ARM shape: root fields to their ARM paths; nested types keep their shape.
            let resource = kube.resources.iter().find(|r| r.kind == p.kind).expect("kube resource");
            let status = cr.get("status").and_then(Value::as_object).cloned().unwrap_or_default();
            let mut rebuilt = Map::new();
            for f in resource.status_fields.iter().filter(|f| f.special == Special::None) {
                let Some(v) = status.get(&f.json_name) else { continue };
                match f.arm_path.as_slice() {
                    [one] => {
                        rebuilt.insert(one.clone(), v.clone());
                    }
                    [env, name] => {
                        let e = rebuilt.entry(env.clone()).or_insert_with(|| Value::Object(Map::new()));
                        if let Some(e) = e.as_object_mut() {
                            e.insert(name.clone(), v.clone());
                        }
                    }
                    _ => {}
                }
            }
            let known = |q: &armgen::ir::Property| q.secret;
            let expected = strip(&ir, &body, &p.json, &known);
            // Properties the spec does not define cannot be in status (examples.rs lists them exactly).
            let expected = drop_unknown(&ir, &body, &expected);
            let expected = without_empty_envelope(normalize(&expected));
            let rebuilt = without_empty_envelope(normalize(&Value::Object(rebuilt)));
            if let Some(d) = first_difference(&expected, &rebuilt, "") {
                failures.push(format!("{}: ARM → status: {d}", p.describe()));
            }
        }
    }
    eprintln!(
        "{requests} request and {responses} response payloads through the custom resources, {} failures",
        failures.len()
    );
    assert!(
        requests > 50 && responses > 100,
        "too few payloads: {requests} requests, {responses} responses"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn no_secret_reaches_status_or_the_arm_to_status_conversion() {
    // A fixture: the 2025-10-01 types, where the spec marks these properties x-ms-secret.
    use aks_api::containerservice::v2alpha1::{ManagedClusterStatus, arm};
    let secret = "s3cr3t-value-that-must-not-leak";
    let body: arm::ManagedCluster = serde_json::from_value(serde_json::json!({
        "location": "westeurope",
        "properties": {
            "servicePrincipalProfile": {"clientId": "id", "secret": secret},
            "windowsProfile": {"adminUsername": "azureuser", "adminPassword": secret}
        }
    }))
    .expect("ARM body");
    let status = ManagedClusterStatus::from(&body);
    let text = serde_json::to_string(&status).expect("serialize");
    assert!(!text.contains(secret), "a secret reached status: {text}");
    assert!(text.contains("azureuser"), "non-secret siblings are kept: {text}");
    let cr = aks_api::containerservice::v2alpha1::ManagedCluster::from_arm("c", None, &body);
    let text = serde_json::to_string(&cr).expect("serialize");
    assert!(
        !text.contains(secret),
        "a secret reached the imported custom resource: {text}"
    );
}

/// Every example payload, imported as a custom resource (spec and status), validates against the
/// `openAPIV3Schema` of its kind's CRD in that version (with Kubernetes' semantics: unknown fields rejected).
/// Secrets cannot be imported (the spec would hold a reference), so the imported spec simply lacks them.
#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn custom_resources_from_every_example_validate_against_their_crd() {
    let root = common::spec_root();
    let generation = armgen::Builder::new(common::workspace().join("azure-arm.yaml"))
        .specs(&root)
        .generate()
        .expect("generate");
    let crds = armgen::emit::crd::crds_of(&generation);
    let mut failures = Vec::new();
    let mut validated = 0;
    for p in all_payloads(&root) {
        let text = serde_json::to_string(&p.json).expect("serialize");
        let Some(Ok(mut cr)) =
            aks_api::import_custom_resource(&p.group, &p.version, &p.kind, &text, "example", Some("default"))
        else {
            failures.push(format!("{}: import failed", p.describe()));
            continue;
        };
        // An import sets no owner; a custom resource in a cluster has one, unless its kind has none.
        if let Some(owner) = common::sample_owner(common::kind_info(&p.group, &p.version, &p.kind)) {
            cr["spec"]["owner"] = owner;
        }
        let Some(schema) = crds
            .iter()
            .find(|c| c.kind == p.kind)
            .and_then(|c| c.schema(&p.version))
        else {
            failures.push(format!("{}: no CRD schema", p.describe()));
            continue;
        };
        validated += 1;
        if let Err(errors) = common::validate(schema, &cr) {
            failures.push(format!("{}: {}", p.describe(), errors.join("; ")));
        }
    }
    eprintln!("{validated} custom resources validated, {} failures", failures.len());
    assert!(validated > 300, "too few custom resources validated: {validated}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
