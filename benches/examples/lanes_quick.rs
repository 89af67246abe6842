//! A quick look at the `lanes` scenarios without the report: each implementation at each lane
//! count over `n` elements (default 1,000,000), three runs, the best printed with the CPU time
//! the whole process spent per element (all threads, from `/proc/self/stat`) and the
//! parallelism it reached (CPU time ÷ wall time). On a loaded machine the wall-clock figures
//! follow the load; the CPU time per element shows what the lanes cost, and so what free
//! cores would give (wall ≈ CPU ÷ cores, as far as the lanes are balanced).
//! `cargo run --release -p rs-benches --example lanes_quick [n] [filter] [trivial]`

#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::Instant;

/// CPU seconds of this process so far (user + system, all threads), in clock ticks of 10 ms.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // After the command name: state is field 0; utime 11, stime 12.
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let filter = args.next().unwrap_or_default();
    let trivial = args.next().is_some_and(|a| a == "trivial");
    let s = if trivial {
        rs_benches::scenarios::lanes::trivial_scenario()
    } else {
        rs_benches::scenarios::lanes::scenario()
    };
    println!("{} over {n} elements", s.id);
    for imp in &s.implementations {
        if !imp.name.contains(&filter) {
            continue;
        }
        let params: Vec<u64> = if imp.per_param {
            s.params.iter().map(|p| p.value).collect()
        } else {
            vec![1]
        };
        for k in params {
            let mut best = (f64::MAX, 0.0);
            for _ in 0..3 {
                let (t, c) = (Instant::now(), cpu_seconds());
                let sum = (imp.run)(k, n);
                let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
                assert_eq!(sum, (s.expected)(k, n), "{}", imp.name);
                if wall < best.0 {
                    best = (wall, cpu);
                }
            }
            let (wall, cpu) = best;
            println!(
                "{:<36} lanes {k:>2}: {:>7.2} M el/s  cpu {:>6.1} ns/el  parallelism {:.2}",
                imp.name,
                n as f64 / wall / 1e6,
                cpu * 1e9 / n as f64,
                cpu / wall
            );
        }
    }
}
