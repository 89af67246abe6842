//! A quick look at the `boundary` scenario without the report: each implementation at each K,
//! a few timed runs of `n` elements, the best one printed (million elements per second).
//! `cargo run --release -p rs-benches --example boundary_quick [n] [filter]`

#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let filter = args.next().unwrap_or_default();
    let only_k: Option<u64> = args.next().and_then(|a| a.parse().ok());
    let s = rs_benches::scenarios::boundary::scenario();
    for imp in &s.implementations {
        if !imp.name.contains(&filter) {
            continue;
        }
        for p in &s.params {
            if only_k.is_some_and(|k| k != p.value) {
                continue;
            }
            let mut best = f64::MAX;
            for _ in 0..3 {
                let t = Instant::now();
                let sum = (imp.run)(p.value, n);
                let e = t.elapsed().as_secs_f64();
                assert_eq!(sum, (s.expected)(p.value, n), "{}", imp.name);
                best = best.min(e);
            }
            println!(
                "{:40} K={:>2}: {:8.2} M el/s",
                imp.name,
                p.label,
                n as f64 / best / 1e6
            );
        }
    }
}
