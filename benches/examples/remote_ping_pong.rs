//! Seed 004's RemotePingPong at its exact shape, outside the calibrated harness: for 1, 5,
//! 10, 15, 20, 25 and 30 clients, each with 50 request_responses in flight and 100,000 round
//! trips, ours (RSocket over loopback) and the raw tokio TCP echo with the same window, in
//! alternating order; messages per second. Also the request-stream of 1,000,000 payloads.
//!
//! `cargo run --release -p rs-benches --example remote_ping_pong [-- ROUND_TRIPS_PER_CLIENT [CLIENTS...]]`
//! (take the shared benchmark lock: `flock /work/notes/bench.lock ...`).

use std::time::Instant;

use rs_benches::scenario::sum_below;
use rs_benches::scenarios::rsocket::{
    rsocket_ping_pong, rsocket_ping_pong_lanes2, rsocket_request_stream, tcp_echo,
};

fn main() {
    let mut args = std::env::args().skip(1);
    let per_client: u64 = args
        .next()
        .map_or(100_000, |a| a.parse().expect("a number"));
    let clients: Vec<u64> = {
        let given: Vec<u64> = args.map(|a| a.parse().expect("a number")).collect();
        if given.is_empty() {
            vec![1, 5, 10, 15, 20, 25, 30]
        } else {
            given
        }
    };
    println!(
        "| clients | rsocket msgs/s | tcp echo msgs/s | ratio | rsocket lanes = 2 msgs/s | ratio |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    for c in clients {
        let n = per_client * c;
        let mut rates = [0.0f64; 3];
        for (i, run) in [
            rsocket_ping_pong as fn(u64, u64) -> u64,
            tcp_echo,
            rsocket_ping_pong_lanes2,
        ]
        .into_iter()
        .enumerate()
        {
            let start = Instant::now();
            let sum = run(c, n);
            let secs = start.elapsed().as_secs_f64();
            assert_eq!(sum, sum_below(c, n), "a lost or duplicated message");
            rates[i] = n as f64 / secs;
        }
        println!(
            "| {c} | {:.0} | {:.0} | {:.2} | {:.0} | {:.2} |",
            rates[0],
            rates[1],
            rates[0] / rates[1],
            rates[2],
            rates[2] / rates[1]
        );
    }
    let n = 1_000_000;
    let start = Instant::now();
    let sum = rsocket_request_stream(256, n);
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(sum, sum_below(0, n));
    println!(
        "request-stream, 1,000,000 payloads, Prefetch(256): {:.0} payloads/s",
        n as f64 / secs
    );
}
