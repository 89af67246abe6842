//! Complexity regression: K lock-step subscribers (K = 1, 8, 32, 128) over a fixed number of
//! elements. Cursor reads and demand reads (the fanout's own counters, `FanoutStats`) must grow
//! linearly in K; the test-only quadratic variant (Pekko before #3730: every read of the oldest
//! element scans every cursor, and every dispatch rescans every subscription's demand) shows
//! that the same assertion catches O(K²).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rs_api::{Error, Publisher, Subscriber, SubscriptionRef, UNBOUNDED};

use crate::fanout::{channel_with, FanoutConfig, FanoutStats};

/// Elements per run.
const ELEMENTS: u64 = 1_000;
const KS: [u64; 4] = [1, 8, 32, 128];

/// Requests unbounded, or 1 from inside every `on_next`; counts what it gets.
struct LockStep {
    one_by_one: bool,
    got: Arc<AtomicU64>,
    sub: Option<SubscriptionRef>,
}

impl Subscriber<u64> for LockStep {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(if self.one_by_one { 1 } else { UNBOUNDED });
        self.sub = Some(s);
    }
    fn on_next(&mut self, _: u64) {
        self.got.fetch_add(1, Ordering::Relaxed);
        if self.one_by_one {
            if let Some(s) = &self.sub {
                s.request(1);
            }
        }
    }
    fn on_error(&mut self, e: Error) {
        panic!("{e}")
    }
    fn on_complete(&mut self) {}
}

/// Publishes `ELEMENTS` to `k` lock-step subscribers; returns the fanout's counters.
fn run(k: u64, one_by_one: bool, quadratic: bool) -> FanoutStats {
    let mut config = FanoutConfig::new(16);
    config.quadratic = quadratic;
    let (tx, p) = channel_with::<u64>(config);
    let got = Arc::new(AtomicU64::new(0));
    for _ in 0..k {
        p.subscribe(Box::new(LockStep {
            one_by_one,
            got: got.clone(),
            sub: None,
        }));
    }
    for i in 0..ELEMENTS {
        tx.try_send(i)
            .expect("lock-step subscribers keep the buffer empty");
    }
    let stats = p.stats();
    assert_eq!(
        got.load(Ordering::Relaxed),
        k * ELEMENTS,
        "every element to everyone"
    );
    assert_eq!(stats.deliveries, k * ELEMENTS);
    tx.complete();
    stats
}

/// The regression's assertion: both counters at most `4 K` per element, and growing from
/// K = 8 to K = 128 (16×) by at most 32× (linear: about 16×; quadratic: about 256×).
fn assert_linear(one_by_one: bool, quadratic: bool) -> Result<(), String> {
    let runs: Vec<(u64, FanoutStats)> = KS
        .iter()
        .map(|&k| (k, run(k, one_by_one, quadratic)))
        .collect();
    for (k, s) in &runs {
        for (what, n) in [
            ("cursor reads", s.cursor_reads),
            ("demand reads", s.demand_reads),
        ] {
            if n > 4 * k * ELEMENTS {
                return Err(format!(
                    "{what} with {k} subscribers: {n} for {ELEMENTS} elements, more than 4 per \
                     subscriber and element"
                ));
            }
        }
    }
    let (s8, s128) = (&runs[1].1, &runs[3].1);
    for (what, a, b) in [
        ("cursor reads", s8.cursor_reads, s128.cursor_reads),
        ("demand reads", s8.demand_reads, s128.demand_reads),
    ] {
        if b > 32 * a.max(ELEMENTS) {
            return Err(format!("{what} grew from {a} (8 subscribers) to {b} (128)"));
        }
    }
    Ok(())
}

#[test]
fn cursor_and_demand_reads_grow_linearly_with_continuous_demand() {
    assert_linear(false, false).unwrap();
    // And in fact do not grow with K at all: about one cursor read per element.
    let s = run(128, false, false);
    assert!(s.cursor_reads <= 2 * ELEMENTS, "{s:?}");
    assert_eq!(
        s.demand_reads, 128,
        "unbounded demand is read once per subscriber, never again: {s:?}"
    );
}

#[test]
fn cursor_and_demand_reads_grow_linearly_with_per_element_requests() {
    assert_linear(true, false).unwrap();
    let s = run(128, true, false);
    assert!(s.cursor_reads <= 2 * ELEMENTS, "{s:?}");
    assert!(
        s.demand_reads <= 128 * ELEMENTS + 2 * 128,
        "at most one demand read per delivery: {s:?}"
    );
}

#[test]
fn the_assertion_catches_the_quadratic_variant() {
    for one_by_one in [false, true] {
        let err = assert_linear(one_by_one, true).expect_err("the quadratic variant must fail");
        assert!(err.contains("reads"), "{err}");
        let s = run(32, one_by_one, true);
        // Pekko's figure for 32 readers was 1088 cursor reads on its benchmark; here, 32 per
        // read of the oldest element.
        assert!(s.cursor_reads >= 32 * 32 * ELEMENTS / 2, "{s:?}");
        assert!(s.demand_reads >= 32 * 32 * ELEMENTS / 2, "{s:?}");
    }
}
