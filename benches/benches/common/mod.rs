//! Shared by the bench files: one criterion group per implementation of a scenario (ours and
//! each peer, in the same file), one benchmark per parameter, element throughput.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};
use rs_benches::scenario::Scenario;

/// Registers every cell of `scenario` with `n` elements per iteration.
///
/// Group names are `<scenario>/<implementation>`; benchmark ids are the parameter labels
/// (`any` for an implementation that ignores the parameter). Each iteration checks the
/// checksum, so a benchmark that loses elements fails instead of looking fast.
pub(crate) fn bench_scenario(c: &mut Criterion, scenario: &Scenario, n: u64) {
    for (i, imp) in scenario.implementations.iter().enumerate() {
        let mut group = c.benchmark_group(format!("{}/{}", scenario.id, imp.name));
        group.throughput(Throughput::Elements(n));
        for cell in scenario
            .cells()
            .into_iter()
            .filter(|c| c.implementation == i)
        {
            let (imp, param, label) = scenario.resolve(cell);
            let expected = (scenario.expected)(param, n);
            group.bench_with_input(BenchmarkId::from_parameter(label), &param, |b, &p| {
                b.iter(|| {
                    let sum = (imp.run)(black_box(p), black_box(n));
                    // A lossy peer returns its deliveries, not a checksum.
                    assert!(imp.lossy || sum == expected, "{} lost elements", imp.name);
                    sum
                });
            });
        }
        group.finish();
    }
}
