//! `DiffWith` on full ManagedCluster specs (every writable field set, v2alpha1 — a fixture: the benchmark needs one
//! concrete Rust type, and its figures in BENCHMARKS.md are for this one; built from the Kubernetes IR
//! like `tests/diff.rs` does), against a naive structural diff of the same objects as `serde_json::Value`s.
//! Prints the allocations of one run of each case before measuring (a global allocator that counts them).
//!
//! `cargo bench -p armgen-tests --bench diff` (needs the spec root, like the tests). Figures: BENCHMARKS.md.

#[path = "../tests/common/mod.rs"]
mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use aks_api::containerservice::v2alpha1::ManagedClusterSpec;
use armgen_runtime::diff::diff;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations<T>(f: impl FnOnce() -> T) -> usize {
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    black_box(f());
    ALLOCATIONS.load(Ordering::SeqCst) - before
}

/// The naive alternative: a structural diff of two JSON values, building each path as it goes (objects per
/// desired key, arrays by position, scalars by equality).
fn naive(desired: &Value, actual: &Value, path: &str, out: &mut Vec<(String, Value, Value)>) {
    match (desired, actual) {
        (Value::Object(d), Value::Object(a)) => {
            for (k, dv) in d {
                let p = format!("{path}.{k}");
                match a.get(k) {
                    Some(av) => naive(dv, av, &p, out),
                    None => out.push((p, dv.clone(), Value::Null)),
                }
            }
        }
        (Value::Array(d), Value::Array(a)) if d.len() == a.len() => {
            for (i, (dv, av)) in d.iter().zip(a).enumerate() {
                naive(dv, av, &format!("{path}[{i}]"), out);
            }
        }
        (d, a) if d == a => {}
        (d, a) => out.push((path.to_string(), d.clone(), a.clone())),
    }
}

fn naive_diff(desired: &Value, actual: &Value) -> Vec<(String, Value, Value)> {
    let mut out = Vec::new();
    naive(desired, actual, "spec", &mut out);
    out
}

fn bench(c: &mut Criterion) {
    let root = common::spec_root();
    let generation = armgen::Builder::new(common::workspace().join("azure-arm.yaml"))
        .specs(&root)
        .generate()
        .expect("generate");
    let aks = common::aks_group();
    let (json, leaves) = common::full_spec::full_spec(&generation, &aks.name, "v2alpha1", "ManagedCluster");
    let desired: ManagedClusterSpec = serde_json::from_value(json.clone()).expect("full spec");
    let same = desired.clone();
    let mut one = desired.clone();
    let pools = one.agent_pool_profiles.as_mut().expect("pools");
    pools[0].count = Some(pools[0].count.unwrap_or(0) + 1);
    let desired_json = serde_json::to_value(&desired).expect("json");
    let same_json = desired_json.clone();
    let one_json = serde_json::to_value(&one).expect("json");
    assert!(diff(&desired, &same).is_empty());
    assert_eq!(diff(&desired, &one).len(), 1);
    assert_eq!(naive_diff(&desired_json, &one_json).len(), 1);

    println!(
        "full ManagedCluster spec (v2alpha1): {} leaves, {} bytes of JSON",
        leaves.len(),
        json.to_string().len()
    );
    println!("allocations per run:");
    println!(
        "  DiffWith, identical:               {}",
        allocations(|| diff(&desired, &same))
    );
    println!(
        "  DiffWith, one difference:          {}",
        allocations(|| diff(&desired, &one))
    );
    println!(
        "  naive Value diff, identical:       {}",
        allocations(|| naive_diff(&desired_json, &same_json))
    );
    println!(
        "  naive Value diff, one difference:  {}",
        allocations(|| naive_diff(&desired_json, &one_json))
    );
    println!(
        "  to_value both + naive, identical:  {}",
        allocations(|| {
            let a = serde_json::to_value(&desired).expect("json");
            let b = serde_json::to_value(&same).expect("json");
            naive_diff(&a, &b)
        })
    );

    let mut g = c.benchmark_group("diff_full_managed_cluster");
    g.bench_function("DiffWith identical", |b| {
        b.iter(|| diff(black_box(&desired), black_box(&same)))
    });
    g.bench_function("DiffWith one difference", |b| {
        b.iter(|| diff(black_box(&desired), black_box(&one)))
    });
    g.bench_function("naive Value diff identical", |b| {
        b.iter(|| naive_diff(black_box(&desired_json), black_box(&same_json)))
    });
    g.bench_function("naive Value diff one difference", |b| {
        b.iter(|| naive_diff(black_box(&desired_json), black_box(&one_json)))
    });
    g.bench_function("to_value + naive Value diff identical", |b| {
        b.iter(|| {
            let a = serde_json::to_value(black_box(&desired)).expect("json");
            let b2 = serde_json::to_value(black_box(&same)).expect("json");
            naive_diff(&a, &b2)
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(std::time::Duration::from_secs(3)).warm_up_time(std::time::Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
