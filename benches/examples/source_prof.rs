//! Runs the `source` scenario's ours row once, for counting instructions per element:
//! `source_prof PARAM N` (PARAM 1 = one-by-one, `unbounded`, or a prefetch k). Run two N
//! under `perf stat -e instructions:u` (or callgrind) and divide the difference by ΔN. Not a
//! benchmark of record (the report is); a profiler's and a developer's tool.
fn main() {
    let mut args = std::env::args().skip(1);
    let param = match args.next().as_deref() {
        None | Some("unbounded") => rs_benches::scenario::UNBOUNDED,
        Some(p) => p.parse().expect("PARAM: 1, a prefetch k, or unbounded"),
    };
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let sum = rs_benches::scenarios::source::rs_impl(param, std::hint::black_box(n));
    assert_eq!(sum, rs_benches::scenario::sum_below(param, n));
}
