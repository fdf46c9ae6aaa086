//! Criterion: converting one full ManagedCluster between the versions — the largest 2025-10-01 example
//! request (`ManagedClustersCreate_AzureServiceMesh.json`, merged with its 200 response for the status), imported as
//! a `v2alpha1` (hub) custom resource:
//!
//! - typed: `ConvertObject` hub → `v1beta1` (most properties bagged) and back;
//! - JSON, as the conversion webhook runs it (`aks_api::convert_custom_resource`: decode, convert, encode).
//!
//! Needs the spec root (`AZURE_REST_API_SPECS`). Run: `cargo bench -p armgen-tests --bench conversion`.

use aks_api::containerservice::{v1beta1, v2alpha1};
use armgen_runtime::hub::ConvertObject;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;

const EXAMPLE: &str = "specification/containerservice/resource-manager/Microsoft.ContainerService/aks/stable/2025-10-01/examples/ManagedClustersCreate_AzureServiceMesh.json";

fn cluster() -> Value {
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let root = armgen::resolve_spec_root(None, &workspace).unwrap_or_else(|e| panic!("{e}"));
    let path = root.join(EXAMPLE);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let example: Value = serde_json::from_str(&text).expect("example JSON");
    let body = &example["responses"]["200"]["body"];
    let arm = serde_json::to_string(body).expect("body");
    match aks_api::import_custom_resource(
        "containerservice",
        "v2alpha1",
        "ManagedCluster",
        &arm,
        "c1",
        Some("default"),
    ) {
        Some(Ok(cr)) => cr,
        other => panic!("import: {other:?}"),
    }
}

fn bench(c: &mut Criterion) {
    let json = cluster();
    let hub: v2alpha1::ManagedCluster = serde_json::from_value(json.clone()).expect("typed");
    let spoke: v1beta1::ManagedCluster = ConvertObject::convert_object(&hub).expect("down");
    let spoke_json = serde_json::to_value(&spoke).expect("spoke json");
    eprintln!(
        "ManagedCluster: {} bytes as v2alpha1 JSON, {} bytes as v1beta1 JSON (property bag included)",
        json.to_string().len(),
        spoke_json.to_string().len()
    );
    let mut g = c.benchmark_group("convert ManagedCluster");
    g.bench_function("typed v2alpha1 -> v1beta1", |b| {
        b.iter(|| ConvertObject::<v1beta1::ManagedCluster>::convert_object(std::hint::black_box(&hub)))
    });
    g.bench_function("typed v1beta1 -> v2alpha1", |b| {
        b.iter(|| ConvertObject::<v2alpha1::ManagedCluster>::convert_object(std::hint::black_box(&spoke)))
    });
    g.bench_function("webhook JSON v2alpha1 -> v1beta1", |b| {
        b.iter(|| aks_api::convert_custom_resource(json.clone(), "containerservice.azure.com/v1beta1"))
    });
    g.bench_function("webhook JSON v1beta1 -> v2alpha1", |b| {
        b.iter(|| aks_api::convert_custom_resource(spoke_json.clone(), "containerservice.azure.com/v2alpha1"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
