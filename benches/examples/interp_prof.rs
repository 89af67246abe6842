//! Runs one implementation of the `interpreter` scenario (or the `boundary` scenario's, for `edge`) once, for profilers:
//! `interp_prof [interpreter|no-gate|flow|user-op|edge|edge-tokio] K N` (for example under
//! `valgrind --tool=callgrind`, for instruction counts per element that do not depend on the
//! machine's load).
fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "interpreter".to_owned());
    let k: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let s = match which.as_str() {
        "flow" => rs_benches::scenarios::interpreter::flow_fused(k, n),
        "user-op" => rs_benches::scenarios::interpreter::flow_user_op(k, n),
        "edge" => rs_benches::scenarios::boundary::batched_default(k, n),
        "edge-tokio" => rs_benches::scenarios::boundary::batched_tokio(k, n),
        "no-gate" => rs_benches::scenarios::interpreter::interpreter_no_gate(k, n),
        _ => rs_benches::scenarios::interpreter::interpreter(k, n),
    };
    println!("{s}");
}
