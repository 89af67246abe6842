//! The demand counter: how many elements a subscriber has asked for (rules 3.8, 3.9, 3.17).
//!
//! # Contract
//!
//! * [`Demand::request`] adds `n` to the *cumulative* total requested (3.8). The addition
//!   saturates at [`UNBOUNDED`]; a single request of at least
//!   [`UNBOUNDED_THRESHOLD`](rs_api::UNBOUNDED_THRESHOLD) (the JVM's `Long.MAX_VALUE`) makes the
//!   demand unbounded at once, and so does a total that reaches it cumulatively; either way
//!   the total becomes exactly `UNBOUNDED` (3.17). Overflow is impossible: demand never wraps.
//! * `request(0)` changes nothing and returns [`SpecViolation::NonPositiveRequest`] (3.9); the
//!   caller turns it into `on_error` for its subscriber.
//! * The counter is only ever *added to*. The single drainer keeps a plain local count of what
//!   it emitted and asks [`Demand::outstanding`] only when that count catches up with the total
//!   it last saw, so the hot path has no atomic read-modify-write per element (the shape used by
//!   RxJava 2+ and Reactor).
//!
//! # Examples
//!
//! ```
//! use rs_impl::demand::Demand;
//! use rs_api::{SpecViolation, UNBOUNDED};
//!
//! let d = Demand::new();
//! d.request(2).unwrap();
//! d.request(3).unwrap();
//! assert_eq!(d.outstanding(0), 5);
//! assert_eq!(d.outstanding(4), 1); // the drainer emitted 4
//!
//! assert_eq!(d.request(0), Err(SpecViolation::NonPositiveRequest));
//!
//! d.request(u64::MAX - 1).unwrap(); // saturates instead of wrapping
//! assert_eq!(d.outstanding(4), UNBOUNDED);
//! ```

use crate::loom::sync::atomic::{AtomicU64, Ordering};
use rs_api::{is_unbounded, SpecViolation, UNBOUNDED};

/// A saturating, monotonic counter of the total demand requested by one subscriber.
#[derive(Debug, Default)]
pub struct Demand {
    /// Total requested since the subscription started; [`UNBOUNDED`] once unbounded.
    requested: AtomicU64,
}

impl Demand {
    /// A counter with no demand yet.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::demand::Demand::new().total(), 0);
    /// ```
    pub fn new() -> Self {
        Demand {
            requested: AtomicU64::new(0),
        }
    }

    /// Adds `n` to the total, saturating; returns the previous total.
    ///
    /// # Errors
    ///
    /// [`SpecViolation::NonPositiveRequest`] for `n == 0` (rule 3.9); the total is unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// let d = rs_impl::demand::Demand::new();
    /// assert_eq!(d.request(7), Ok(0));
    /// assert_eq!(d.request(1), Ok(7));
    /// assert!(d.request(0).is_err());
    /// ```
    #[inline]
    pub fn request(&self, n: u64) -> Result<u64, SpecViolation> {
        if n == 0 {
            return Err(SpecViolation::NonPositiveRequest);
        }
        let add = if is_unbounded(n) { UNBOUNDED } else { n };
        let prev = self
            .requested
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |total| {
                if total == UNBOUNDED {
                    None
                } else {
                    // 3.17: a total that *reaches* the threshold cumulatively (the JVM TCK's
                    // MAX/2 + MAX/2 + 1) is as unbounded as a single request of it, so it is
                    // stored as UNBOUNDED: `is_unbounded`/`outstanding` and every drainer that
                    // compares with UNBOUNDED then see one value for "unbounded".
                    let next = total.saturating_add(add);
                    Some(if is_unbounded(next) { UNBOUNDED } else { next })
                }
            })
            .unwrap_or(UNBOUNDED);
        Ok(prev)
    }

    /// The total requested so far ([`UNBOUNDED`] once unbounded).
    ///
    /// # Examples
    ///
    /// ```
    /// let d = rs_impl::demand::Demand::new();
    /// d.request(rs_api::UNBOUNDED_THRESHOLD).unwrap();
    /// assert_eq!(d.total(), rs_api::UNBOUNDED);
    /// ```
    pub fn total(&self) -> u64 {
        self.requested.load(Ordering::Acquire)
    }

    /// Whether the demand is unbounded.
    ///
    /// # Examples
    ///
    /// ```
    /// let d = rs_impl::demand::Demand::new();
    /// assert!(!d.is_unbounded());
    /// d.request(u64::MAX).unwrap();
    /// assert!(d.is_unbounded());
    /// ```
    pub fn is_unbounded(&self) -> bool {
        self.total() == UNBOUNDED
    }

    /// The demand not yet served when `emitted` elements have been emitted:
    /// [`UNBOUNDED`] if the demand is unbounded, otherwise `total - emitted` (never below 0).
    ///
    /// # Examples
    ///
    /// ```
    /// let d = rs_impl::demand::Demand::new();
    /// d.request(3).unwrap();
    /// assert_eq!(d.outstanding(1), 2);
    /// assert_eq!(d.outstanding(5), 0);
    /// ```
    pub fn outstanding(&self, emitted: u64) -> u64 {
        let total = self.total();
        if total == UNBOUNDED {
            UNBOUNDED
        } else {
            total.saturating_sub(emitted)
        }
    }
}

#[cfg(all(test, not(rs_loom)))]
mod tests {
    use super::*;

    #[test]
    fn exact_threshold_is_unbounded_and_below_is_not() {
        let d = Demand::new();
        d.request(rs_api::UNBOUNDED_THRESHOLD - 1).unwrap();
        assert_eq!(d.total(), rs_api::UNBOUNDED_THRESHOLD - 1);
        // The JVM TCK's cumulative case: MAX/2 + MAX/2 + 1 == MAX, which is unbounded.
        let d = Demand::new();
        let half = rs_api::UNBOUNDED_THRESHOLD / 2;
        d.request(half).unwrap();
        d.request(half).unwrap();
        d.request(1).unwrap();
        assert_eq!(d.total(), UNBOUNDED);
        assert!(rs_api::is_unbounded(d.outstanding(0)));
    }

    #[test]
    fn many_large_requests_saturate() {
        let d = Demand::new();
        for _ in 0..10 {
            d.request(rs_api::UNBOUNDED_THRESHOLD - 1).unwrap();
        }
        assert_eq!(d.total(), UNBOUNDED);
        assert_eq!(d.outstanding(123), UNBOUNDED);
    }
}
