//! `armgen generate` (the library's `Builder::generate` and `Generation::write`, what the binary runs) on a
//! chain of nested definitions 250, 500 and 1,000 deep (`tests/support/deep_chain.rs`). Before fitting CRDs
//! became linear (`emit::fit`) and the recursion pass used strongly connected components, 500 took 18–41 s and
//! 1,000 over 2 minutes. Run: `cargo bench -p armgen --bench deep_chain`; results in BENCHMARKS.md.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

#[path = "../tests/support/deep_chain.rs"]
mod deep_chain;

fn generate(c: &mut Criterion) {
    let mut group = c.benchmark_group("generate_deep_chain");
    group.sample_size(10).measurement_time(Duration::from_secs(15));
    for depth in [250, 500, 1000] {
        let dir = tempfile::tempdir().expect("temp dir");
        deep_chain::write(dir.path(), depth).expect("write fixture");
        let builder = armgen::Builder::new(dir.path().join("azure-arm.yaml")).specs(dir.path());
        group.bench_with_input(BenchmarkId::from_parameter(depth), &depth, |b, _| {
            b.iter(|| {
                let out = tempfile::tempdir().expect("out dir");
                let generation = builder.generate().expect("generate");
                generation.write(out.path()).expect("write");
                generation.files.len()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, generate);
criterion_main!(benches);
