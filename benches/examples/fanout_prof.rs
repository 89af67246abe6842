//! Times the `fanout` scenario's ours and ceiling rows alternately, for quick A/B checks of the
//! group loop: `fanout_prof [K] [N] [ROUNDS] [MODE]`; prints ns per delivery for each and their
//! ratio (reference ÷ ours in deliveries/s terms: ours' share of the reference). MODE `bulk`
//! (the default): unbounded demand against the closure loop (the ceiling); `r1`: `request(1)`
//! from inside every `on_next` against `multiqueue2` on one thread (issue 24's peer for it); `burst`:
//! `blocking_send_all` with unbounded demand against `multiqueue2` on one thread (issue 24's peer for
//! the burst entry); `ours` / `ceil` / `burst-ours` / `r1-ours` / `mq2`: only the one side,
//! once per round; `ours-1024` / `burst-ours-1024` / `r1-ours-1024` / `ceil-1024`: the
//! `fanout-1024` scenario's rows (capacity 1024), one side only, once per round; `bulk-1024` /
//! `burst-1024`: that scenario's per-element and burst rows against its closure loop (the
//! ceiling), alternately, `r1-1024` its `request(1)` row against multiqueue2 on one thread; `isl` / `isl-burst` (ours) and
//! `isl-mq2` / `isl-bus` (the peers): the `fanout-islands` scenario's rows, one side only, once per
//! round (for counting
//! instructions with callgrind or `perf stat`: run two N and divide the difference by ΔN). Not a
//! benchmark of record (the report is); a profiler's and a developer's tool.
use std::time::Instant;

/// One side's run: `(k, n)` to its checksum.
type Side = fn(u64, u64) -> u64;

fn main() {
    let mut args = std::env::args().skip(1);
    let k: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(128);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(15);
    let mode = args.next().unwrap_or_default();
    use rs_benches::scenarios::fanout as f;
    let single: Option<Side> = match mode.as_str() {
        "ours" => Some(f::rs_impl_channel),
        "ceil" => Some(f::closure_loop),
        "burst-ours" => Some(f::rs_impl_channel_burst),
        "ours-1024" => Some(rs_benches::scenarios::fanout_islands::rs_impl_channel),
        "burst-ours-1024" => Some(rs_benches::scenarios::fanout_islands::rs_impl_channel_burst),
        "r1-ours-1024" => Some(rs_benches::scenarios::fanout_islands::rs_impl_channel_one_by_one),
        "ceil-1024" => Some(rs_benches::scenarios::fanout_islands::closure_loop),
        "r1-ours" => Some(f::rs_impl_channel_one_by_one),
        "mq2" => Some(f::multiqueue2_one_thread),
        "isl" => Some(rs_benches::scenarios::fanout_islands::rs_impl_islands),
        "isl-burst" => Some(rs_benches::scenarios::fanout_islands::rs_impl_islands_burst),
        "isl-mq2" => Some(rs_benches::scenarios::fanout_islands::multiqueue2_threads),
        "isl-bus" => Some(rs_benches::scenarios::fanout_islands::bus_threads),
        _ => None,
    };
    if let Some(run) = single {
        for _ in 0..rounds {
            std::hint::black_box(run(k, std::hint::black_box(n)));
        }
        return;
    }
    let against_mq2 = mode == "r1" || mode == "burst" || mode == "r1-1024";
    use rs_benches::scenarios::fanout_islands as c;
    let (ours_run, reference): (Side, Side) = match mode.as_str() {
        "r1" => (f::rs_impl_channel_one_by_one, f::multiqueue2_one_thread),
        "burst" => (f::rs_impl_channel_burst, f::multiqueue2_one_thread),
        "bulk-1024" => (c::rs_impl_channel, c::closure_loop),
        "burst-1024" => (c::rs_impl_channel_burst, c::closure_loop),
        "r1-1024" => (c::rs_impl_channel_one_by_one, c::multiqueue2_one_thread),
        _ => (f::rs_impl_channel, f::closure_loop),
    };
    let mut ours = Vec::new();
    let mut ceil = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        std::hint::black_box(ours_run(k, n));
        ours.push(t.elapsed().as_nanos() as f64 / (k * n) as f64);
        let t = Instant::now();
        std::hint::black_box(reference(k, n));
        ceil.push(t.elapsed().as_nanos() as f64 / (k * n) as f64);
    }
    ours.sort_by(f64::total_cmp);
    ceil.sort_by(f64::total_cmp);
    let (o, c) = (ours[rounds / 2], ceil[rounds / 2]);
    println!(
        "k={k} ours {o:.3} ns/delivery, {} {c:.3} ns/delivery, share {:.2}",
        if against_mq2 {
            "multiqueue2"
        } else {
            "ceiling"
        },
        c / o
    );
}
