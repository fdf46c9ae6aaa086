//! Criterion: converting one full ManagedCluster between the versions, as the conversion webhook runs it
//! (`aks_api::convert_custom_resource`: decode, convert, encode). The object is the largest ManagedCluster example
//! response of the storage (hub) version's ARM API version, imported as a hub custom resource; it is converted to
//! every other version that has the kind (most properties bagged going down) and back. Versions come from the
//! registry (`aks_api::KINDS`), so a new version or a moved hub needs no edit here.
//!
//! Needs the spec root (`AZURE_REST_API_SPECS`). Run: `cargo bench -p armgen-tests --bench conversion`.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;

const KIND: &str = "ManagedCluster";

fn hub() -> &'static armgen_runtime::KindInfo {
    let aks = common::aks_group();
    aks_api::KINDS
        .iter()
        .find(|k| k.group == aks.name && k.kind == KIND && k.storage)
        .expect("a storage version of ManagedCluster")
}

/// The largest example response body of the hub's version, imported as a custom resource.
fn cluster(hub: &armgen_runtime::KindInfo) -> (String, Value) {
    let root = common::spec_root();
    let payloads = common::examples::all_payloads(&root);
    let largest = payloads
        .iter()
        .filter(|p| {
            !p.request
                && p.group == hub.group
                && p.kind == KIND
                && p.version == hub.version
                && p.what.starts_with("put ")
        })
        .max_by_key(|p| p.json.to_string().len())
        .unwrap_or_else(|| panic!("no {KIND} example response of {}", hub.version));
    let arm = serde_json::to_string(&largest.json).expect("body");
    match aks_api::import_custom_resource(hub.group, hub.version, KIND, &arm, "c1", Some("default")) {
        Some(Ok(cr)) => (largest.file_name(), cr),
        other => panic!("import: {other:?}"),
    }
}

fn bench(c: &mut Criterion) {
    let hub = hub();
    let (example, json) = cluster(hub);
    let hub_api = hub.api_version();
    eprintln!(
        "{KIND}: {example}, {} bytes as {} JSON",
        json.to_string().len(),
        hub.version
    );
    let mut g = c.benchmark_group("convert ManagedCluster");
    for other in aks_api::KINDS
        .iter()
        .filter(|k| k.group == hub.group && k.kind == KIND && !k.storage)
    {
        let api = other.api_version();
        let spoke = aks_api::convert_custom_resource(json.clone(), &api).expect("down");
        eprintln!(
            "  {} bytes as {} JSON (property bag included)",
            spoke.to_string().len(),
            other.version
        );
        g.bench_function(format!("webhook JSON {} -> {}", hub.version, other.version), |b| {
            b.iter(|| aks_api::convert_custom_resource(std::hint::black_box(json.clone()), &api))
        });
        g.bench_function(format!("webhook JSON {} -> {}", other.version, hub.version), |b| {
            b.iter(|| aks_api::convert_custom_resource(std::hint::black_box(spoke.clone()), &hub_api))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
