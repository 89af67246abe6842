//! Times the `fanout` scenario's ours and ceiling rows alternately, for quick A/B checks of the
//! group loop: `fanout_prof [K] [N] [ROUNDS]`; prints ns per delivery for each and their ratio
//! (ceiling ÷ ours in deliveries/s terms: ours' share of the ceiling). Not a benchmark of
//! record (the report is); a profiler's and a developer's tool.
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let k: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(128);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(15);
    let mut ours = Vec::new();
    let mut ceil = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        std::hint::black_box(rs_benches::scenarios::fanout::rs_impl_channel(k, n));
        ours.push(t.elapsed().as_nanos() as f64 / (k * n) as f64);
        let t = Instant::now();
        std::hint::black_box(rs_benches::scenarios::fanout::closure_loop(k, n));
        ceil.push(t.elapsed().as_nanos() as f64 / (k * n) as f64);
    }
    ours.sort_by(f64::total_cmp);
    ceil.sort_by(f64::total_cmp);
    let (o, c) = (ours[rounds / 2], ceil[rounds / 2]);
    println!(
        "k={k} ours {o:.3} ns/delivery, ceiling {c:.3} ns/delivery, share {:.2}",
        c / o
    );
}
