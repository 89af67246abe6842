//! A quick look at any scenario without the report: each implementation whose name contains
//! the filter, at each parameter (or one), a few timed runs of `n` elements, the best printed
//! in million elements per second. A lossy peer's row counts the elements due, not the share
//! it delivered (the report prints that share).
//! `cargo run --release -p rs-benches --example scenario_quick -- SCENARIO [n] [filter] [param]`

#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let id = args.next().unwrap_or_else(|| "source".to_owned());
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let filter = args.next().unwrap_or_default();
    let only: Option<String> = args.next();
    let Some(s) = rs_benches::scenarios::all()
        .into_iter()
        .find(|s| s.id == id)
    else {
        eprintln!("unknown scenario {id}");
        std::process::exit(2);
    };
    for imp in &s.implementations {
        if !imp.name.contains(&filter) {
            continue;
        }
        for p in &s.params {
            if only.as_ref().is_some_and(|o| *o != p.label) {
                continue;
            }
            let mut best = f64::MAX;
            for _ in 0..3 {
                let t = Instant::now();
                let sum = (imp.run)(p.value, n);
                let e = t.elapsed().as_secs_f64();
                // A lossy peer (tokio's broadcast) delivers a share of the elements: its
                // checksum is the report's business (it prints the share), not an error here.
                if !imp.lossy {
                    assert_eq!(sum, (s.expected)(p.value, n), "{}", imp.name);
                }
                best = best.min(e);
            }
            println!(
                "{:48} {:>10}: {:9.2} M el/s",
                imp.name,
                p.label,
                n as f64 / best / 1e6
            );
        }
    }
}
