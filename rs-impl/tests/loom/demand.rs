//! The demand counter under concurrent requests.

use rs_api::{UNBOUNDED, UNBOUNDED_THRESHOLD};
use rs_impl::demand::Demand;
use rs_impl::loom::sync::Arc;
use rs_impl::loom::thread;

use crate::broken::{BrokenLoadStoreDemand, BrokenWrappingDemand};

/// What the models need of a demand counter, so the broken twins can run the same models.
pub(crate) trait Counter: Send + Sync + 'static {
    fn new() -> Self;
    /// Adds `n`; returns the previous total.
    fn request(&self, n: u64) -> u64;
    fn total(&self) -> u64;
    fn outstanding(&self, emitted: u64) -> u64;
}

impl Counter for Demand {
    fn new() -> Self {
        Demand::new()
    }
    fn request(&self, n: u64) -> u64 {
        Demand::request(self, n).expect("n > 0")
    }
    fn total(&self) -> u64 {
        Demand::total(self)
    }
    fn outstanding(&self, emitted: u64) -> u64 {
        Demand::outstanding(self, emitted)
    }
}

/// Three threads request `amounts` at once; returns the final total and each previous total.
fn race<C: Counter>(amounts: [u64; 3]) -> (u64, [u64; 3]) {
    let d = Arc::new(C::new());
    let spawn = |n: u64| {
        let d = d.clone();
        thread::spawn(move || d.request(n))
    };
    let t1 = spawn(amounts[1]);
    let t2 = spawn(amounts[2]);
    let p0 = d.request(amounts[0]);
    let p1 = t1.join().unwrap();
    let p2 = t2.join().unwrap();
    (d.total(), [p0, p1, p2])
}

/// Rules 3.8 and 1.1. Interleaving: three threads `request` 1, 2 and 4 at once, each
/// read-modify-write interleaved with the others'. No request may be lost (the total is 7 in
/// every interleaving), each sees a distinct previous total (the requests are linearised), and
/// a drainer that emitted up to some previous total still has exactly the rest outstanding.
pub(crate) fn concurrent_requests_add_up<C: Counter>() {
    let (total, mut prev) = race::<C>([1, 2, 4]);
    assert_eq!(
        total, 7,
        "rule 3.8: concurrent requests lost demand (total {total}, expected 7)"
    );
    prev.sort_unstable();
    assert_eq!(
        prev[0], 0,
        "rule 3.8: no request saw the initial total 0: {prev:?}"
    );
    assert!(
        prev[0] < prev[1] && prev[1] < prev[2],
        "rule 3.8: requests not linearised: {prev:?}"
    );
    let d = C::new();
    d.request(7);
    assert_eq!(
        d.outstanding(prev[2]),
        7 - prev[2],
        "rule 1.1: outstanding demand is wrong"
    );
}

/// Rule 3.17. Interleaving: three threads request 2^63−2, 2^63−2 and 5 at once; whatever the
/// order, the sum passes `u64::MAX`, so the counter must saturate at [`UNBOUNDED`] and never
/// wrap to a small number (which would stop a publisher that was asked for everything).
pub(crate) fn concurrent_requests_saturate<C: Counter>() {
    let (total, _) = race::<C>([UNBOUNDED_THRESHOLD - 1, UNBOUNDED_THRESHOLD - 1, 5]);
    assert_eq!(
        total, UNBOUNDED,
        "rule 3.17: concurrent requests did not saturate (total {total})"
    );
    let d = C::new();
    d.request(UNBOUNDED);
    assert_eq!(
        d.outstanding(1_000),
        UNBOUNDED,
        "rule 3.17: unbounded demand ran out"
    );
}

#[test]
fn demand_concurrent_requests_add_up() {
    crate::exhaustive(concurrent_requests_add_up::<Demand>);
}

#[test]
fn demand_concurrent_requests_saturate() {
    crate::exhaustive(concurrent_requests_saturate::<Demand>);
}

crate::loom_rejects!(
    demand_model_rejects_broken_load_store_demand,
    "rule 3.8",
    concurrent_requests_add_up::<BrokenLoadStoreDemand>
);

crate::loom_rejects!(
    demand_model_rejects_broken_wrapping_demand,
    "rule 3.17",
    concurrent_requests_saturate::<BrokenWrappingDemand>
);
