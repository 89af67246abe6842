//! Counts for one RemotePingPong run (no timing): allocations per round trip, all threads.
//! Run it under `perf stat -e 'syscalls:sys_enter_*'` to count syscalls per round trip.
//!
//! `cargo run --release -p rs-benches --example pingpong_counts -- [clients] [round trips] [lanes]`

#[global_allocator]
static ALLOC: rs_benches::alloc::CountingAlloc = rs_benches::alloc::CountingAlloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let clients: u64 = args.next().map_or(30, |a| a.parse().expect("clients"));
    let n: u64 = args
        .next()
        .map_or(300_000, |a| a.parse().expect("round trips"));
    let which = args.next().unwrap_or_else(|| "1".into());
    let run = match which.as_str() {
        "1" => rs_benches::scenarios::rsocket::rsocket_ping_pong,
        "2" => rs_benches::scenarios::rsocket::rsocket_ping_pong_lanes2,
        "echo" => rs_benches::scenarios::rsocket::tcp_echo,
        other => panic!("unknown variant {other}: 1, 2 or echo"),
    };
    // Warm up (connections, buffers), then count.
    run(clients, n / 10);
    let before = rs_benches::alloc::snapshot();
    let sum = run(clients, n);
    let c = rs_benches::alloc::snapshot().since(before);
    println!(
        "variant {which} clients {clients} round_trips {n} checksum {sum}: {:.3} allocs / {:.1} B per round trip",
        c.allocs as f64 / n as f64,
        c.bytes as f64 / n as f64
    );
}
