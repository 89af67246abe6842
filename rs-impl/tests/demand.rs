//! Behaviour of the demand counter (`rs_impl::demand`): rules 3.8, 3.9, 3.17.
#![cfg(not(rs_loom))]
// Plain std threads drive the counter from several threads; the facade ban is for rs-impl/src.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::sync::{Arc, Barrier};

use rs_api::{SpecViolation, UNBOUNDED, UNBOUNDED_THRESHOLD};
use rs_impl::demand::Demand;
use rstest::rstest;

#[test]
fn new_counter_has_no_demand() {
    let d = Demand::new();
    assert_eq!(d.total(), 0);
    assert_eq!(d.outstanding(0), 0);
    assert!(!d.is_unbounded());
    assert_eq!(Demand::default().total(), 0);
}

#[test]
fn requests_add_up_and_return_the_previous_total() {
    let d = Demand::new();
    assert_eq!(d.request(1), Ok(0));
    assert_eq!(d.request(10), Ok(1));
    assert_eq!(d.request(100), Ok(11));
    assert_eq!(d.total(), 111);
    assert_eq!(d.outstanding(0), 111);
    assert_eq!(d.outstanding(11), 100);
    assert_eq!(d.outstanding(111), 0);
    // The drainer never emits more than requested, but `outstanding` must not wrap if asked.
    assert_eq!(d.outstanding(500), 0);
}

#[test]
fn request_zero_is_the_3_9_error_and_changes_nothing() {
    let d = Demand::new();
    d.request(5).unwrap();
    let err = d.request(0).unwrap_err();
    assert_eq!(err, SpecViolation::NonPositiveRequest);
    assert_eq!(err.rule(), "3.9");
    let msg = err.to_string();
    assert!(msg.contains("3.9"), "{msg}");
    assert!(msg.contains("non-positive subscription request"), "{msg}");
    assert_eq!(d.total(), 5);
    // Still usable afterwards (the publisher decides to cancel, not the counter).
    assert_eq!(d.request(1), Ok(5));
    assert_eq!(d.total(), 6);
}

#[test]
fn request_zero_on_unbounded_demand_is_still_an_error() {
    let d = Demand::new();
    d.request(UNBOUNDED).unwrap();
    assert_eq!(d.request(0), Err(SpecViolation::NonPositiveRequest));
    assert!(d.is_unbounded());
}

/// 3.17: a single request at or above the threshold is unbounded at once.
#[rstest]
#[case::unbounded(UNBOUNDED)]
#[case::jvm_long_max(UNBOUNDED_THRESHOLD)]
#[case::just_above_threshold(UNBOUNDED_THRESHOLD + 1)]
#[case::u64_max_minus_one(u64::MAX - 1)]
fn a_single_request_at_or_above_the_threshold_is_unbounded(#[case] n: u64) {
    let d = Demand::new();
    d.request(n).unwrap();
    assert!(d.is_unbounded());
    assert_eq!(d.total(), UNBOUNDED);
    assert_eq!(d.outstanding(0), UNBOUNDED);
    assert_eq!(
        d.outstanding(1_000_000),
        UNBOUNDED,
        "emitting never eats unbounded demand"
    );
}

#[test]
fn just_below_the_threshold_is_bounded() {
    let d = Demand::new();
    d.request(UNBOUNDED_THRESHOLD - 1).unwrap();
    assert!(!d.is_unbounded());
    assert_eq!(d.total(), UNBOUNDED_THRESHOLD - 1);
    assert_eq!(d.outstanding(1), UNBOUNDED_THRESHOLD - 2);
}

/// 3.17, the JVM TCK's cumulative case: `MAX/2 + MAX/2 + 1` reaches `Long.MAX_VALUE` and must
/// behave as unbounded, exactly like a single `request(Long.MAX_VALUE)`.
#[test]
fn cumulative_demand_reaching_the_threshold_is_unbounded() {
    let d = Demand::new();
    let half = UNBOUNDED_THRESHOLD / 2;
    d.request(half).unwrap();
    d.request(half).unwrap();
    assert!(!d.is_unbounded());
    d.request(1).unwrap();
    assert!(d.is_unbounded(), "total {} is at the threshold", d.total());
    assert!(rs_api::is_unbounded(d.total()));
    // Emitting elements must not make unbounded demand bounded again.
    assert!(rs_api::is_unbounded(d.outstanding(1_000)));
    assert_eq!(d.outstanding(1_000), UNBOUNDED);
}

/// 3.17: demand saturates; it never wraps and never errors, however often it overflows.
#[rstest]
#[case::u64_max_minus_one(u64::MAX - 1)]
#[case::i64_max_minus_one(i64::MAX as u64 - 1)]
#[case::u64_max(u64::MAX)]
#[case::half_u64(u64::MAX / 2 + 1)]
fn overflowing_demand_saturates(#[case] n: u64) {
    let d = Demand::new();
    d.request(3).unwrap();
    for _ in 0..1_000 {
        assert!(d.request(n).is_ok());
        assert!(d.total() >= 3, "wrapped to {}", d.total());
    }
    assert!(d.is_unbounded());
    assert_eq!(d.total(), UNBOUNDED);
    assert_eq!(d.outstanding(7), UNBOUNDED);
    // Small requests after saturation change nothing.
    d.request(1).unwrap();
    assert_eq!(d.total(), UNBOUNDED);
}

/// 3.8 under contention: concurrent requests from several threads sum exactly.
#[test]
fn concurrent_requests_sum_exactly() {
    const THREADS: u64 = 4;
    const PER_THREAD: u64 = 10_000;
    let d = Arc::new(Demand::new());
    let start = Arc::new(Barrier::new(THREADS as usize));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let d = d.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                for _ in 0..PER_THREAD {
                    d.request(t + 1).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    // 1 + 2 + 3 + 4 per round.
    let expected = PER_THREAD * (THREADS * (THREADS + 1) / 2);
    assert_eq!(d.total(), expected);
    assert_eq!(d.outstanding(expected - 1), 1);
}

/// Concurrent huge requests saturate at the unbounded value, never wrap, never error.
#[test]
fn concurrent_overflowing_requests_saturate() {
    const THREADS: usize = 4;
    let d = Arc::new(Demand::new());
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let d = d.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                let mut errors = 0;
                for i in 0..1_000u64 {
                    let n = if i % 2 == 0 {
                        i64::MAX as u64 - 1
                    } else {
                        1 + i
                    };
                    errors += usize::from(d.request(n).is_err());
                }
                errors
            })
        })
        .collect();
    let errors: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(errors, 0);
    assert_eq!(d.total(), UNBOUNDED);
}
