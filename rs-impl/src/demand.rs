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
    #[inline]
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

/// Demand added re-entrantly, from inside `on_next`, on the thread that is delivering: the
/// trampoline of one-by-one demand (see [`Reentrant`]).
///
/// # The cost this removes
///
/// A subscriber that calls `request(1)` from inside each `on_next` (the JVM TCK's favourite,
/// [`RequestStrategy::OneByOne`](crate::subscriber::RequestStrategy::OneByOne)) used to pay,
/// per element and on top of the bulk path, the [`Demand`] counter's compare-and-swap and the
/// drain loop's increment (which the drainer then owes a pass for): two atomic
/// read-modify-writes, about 20 ns of the 34 ns such an element cost on the machines measured
/// (`docs/benchmarks.md`, `source` at parameter 1). Since the drainer is the one calling
/// `on_next`, a request made on its thread while it delivers cannot race anything: it is
/// recorded here with a plain load and store, and the running emission loop, which looks
/// here when its count of emitted elements reaches the demand it knows, keeps going. No pass
/// is owed, no atomic is touched per element, recursion stays at depth 1 (rule 3.3).
///
/// A request from any other thread, or from this thread while the drainer is not inside
/// its emission loop (`on_subscribe`, a terminal signal, another subscription's loop nested
/// inside `on_next`), takes the ordinary path: the shared counter and the drain loop.
#[derive(Debug, Default)]
pub(crate) struct Reentrant {
    /// Demand recorded by the drainer's own thread and not yet taken by the emission loop.
    /// Written and read only on that thread (relaxed load and store: no read-modify-write);
    /// an atomic only so that the owner stays `Sync` without `unsafe`.
    added: AtomicU64,
}

#[cfg(not(rs_loom))]
std::thread_local! {
    /// The address of the [`Reentrant`] whose owner is delivering on this thread right now
    /// (0: none).
    static DELIVERING: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Marks this thread as delivering for a [`Reentrant`] until dropped (restores the mark it
/// found, so that nested emission loops of other subscriptions unwind correctly).
#[derive(Debug)]
pub(crate) struct Delivering {
    #[cfg(not(rs_loom))]
    prev: usize,
}

impl Drop for Delivering {
    fn drop(&mut self) {
        #[cfg(not(rs_loom))]
        DELIVERING.with(|d| d.set(self.prev));
    }
}

impl Reentrant {
    /// No demand recorded.
    pub(crate) fn new() -> Self {
        Reentrant {
            added: AtomicU64::new(0),
        }
    }

    #[cfg(not(rs_loom))]
    #[inline]
    fn key(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// The emission loop of this counter's owner starts delivering on this thread: until the
    /// guard is dropped, [`try_add`](Self::try_add) on this thread records locally. Under
    /// loom (whose threads may share one OS thread) nothing is marked: every request takes
    /// the ordinary path, which the models check.
    #[inline]
    pub(crate) fn deliver(&self) -> Delivering {
        #[cfg(not(rs_loom))]
        {
            let prev = DELIVERING.with(|d| d.replace(self.key()));
            Delivering { prev }
        }
        #[cfg(rs_loom)]
        {
            Delivering {}
        }
    }

    /// Records `n` (at least 1) if this thread is delivering for this counter's owner right
    /// now; `false` otherwise (the caller takes the ordinary path).
    #[inline]
    pub(crate) fn try_add(&self, n: u64) -> bool {
        #[cfg(not(rs_loom))]
        {
            if DELIVERING.with(std::cell::Cell::get) != self.key() || n == 0 {
                return false;
            }
            // Saturating, and not mapped to UNBOUNDED here: whoever takes it sums it with
            // [`combined`], which makes anything at the threshold unbounded (3.17). Two
            // instructions fewer on the path one-by-one demand takes per element.
            let before = self.added.load(Ordering::Relaxed);
            self.added
                .store(before.saturating_add(n), Ordering::Relaxed);
            true
        }
        #[cfg(rs_loom)]
        {
            let _ = n;
            false
        }
    }

    /// Takes what was recorded (0 if nothing); called by the emission loop, on its thread.
    /// Sum it into the demand with [`combined`] (a request at the threshold is recorded as
    /// it came, not as [`UNBOUNDED`]).
    #[inline]
    pub(crate) fn take(&self) -> u64 {
        let n = self.added.load(Ordering::Relaxed);
        if n != 0 {
            self.added.store(0, Ordering::Relaxed);
        }
        n
    }
}

/// A subscription of this crate whose `request` and `cancel` may be called concurrently
/// (each only records, with atomics, and hands the rest to a drain loop or a mailbox), and
/// which ignores a request after a cancel (rule 3.6).
///
/// Its publisher marks it while it calls `on_subscribe` ([`concurrent_calls`]); a ready-made
/// subscriber that finds the mark ([`takes_concurrent_calls`]) makes its requests without the
/// rule-2.7 gate (two atomic read-modify-writes per request, which with `request(1)` per
/// element were most of what one-by-one demand cost over bulk demand: issue 24). The gate
/// exists so that a subscription never sees `request` and `cancel` at once; one that is built
/// for that does not need it. Any other subscription (every foreign one) keeps the gate.
#[derive(Debug)]
pub(crate) struct ConcurrentCalls(#[cfg(not(rs_loom))] usize);

#[cfg(not(rs_loom))]
std::thread_local! {
    /// The subscription (its address) being handed to `on_subscribe` by a publisher of this
    /// crate that takes concurrent calls (0: none).
    static CONCURRENT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Marks `subscription` as taking concurrent calls while the guard lives (see
/// [`ConcurrentCalls`]); nothing under loom, where every subscriber keeps its gate (the path
/// the models check).
pub(crate) fn concurrent_calls(subscription: &rs_api::SubscriptionRef) -> ConcurrentCalls {
    #[cfg(not(rs_loom))]
    {
        let key = std::sync::Arc::as_ptr(subscription).cast::<()>() as usize;
        ConcurrentCalls(CONCURRENT.with(|c| c.replace(key)))
    }
    #[cfg(rs_loom)]
    {
        let _ = subscription;
        ConcurrentCalls()
    }
}

impl Drop for ConcurrentCalls {
    fn drop(&mut self) {
        #[cfg(not(rs_loom))]
        CONCURRENT.with(|c| c.set(self.0));
    }
}

/// Whether `subscription` is marked as taking concurrent calls right now (called from
/// `on_subscribe`).
pub(crate) fn takes_concurrent_calls(subscription: &rs_api::SubscriptionRef) -> bool {
    #[cfg(not(rs_loom))]
    {
        let key = std::sync::Arc::as_ptr(subscription).cast::<()>() as usize;
        CONCURRENT.with(std::cell::Cell::get) == key
    }
    #[cfg(rs_loom)]
    {
        let _ = subscription;
        false
    }
}

/// The demand a drainer may serve: the shared counter's `total` plus `local`, the demand it
/// took from its [`Reentrant`] so far (saturating; a sum that reaches the threshold is
/// unbounded, rule 3.17).
#[inline]
pub(crate) fn combined(total: u64, local: u64) -> u64 {
    if total == UNBOUNDED || local == 0 {
        return total;
    }
    let sum = total.saturating_add(local);
    if is_unbounded(sum) {
        UNBOUNDED
    } else {
        sum
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
    fn reentrant_demand_is_recorded_only_while_delivering_on_this_thread() {
        let r = Reentrant::new();
        assert!(!r.try_add(1), "nobody delivers: the ordinary path");
        {
            let _d = r.deliver();
            assert!(r.try_add(1));
            assert!(r.try_add(2));
            assert!(
                !r.try_add(0),
                "request(0) always takes the ordinary path (3.9)"
            );
            // Another counter's loop nested inside: its mark, then ours again.
            let other = Reentrant::new();
            {
                let _o = other.deliver();
                assert!(!r.try_add(1));
                assert!(other.try_add(1));
            }
            assert!(r.try_add(1));
            let r2 = &r;
            std::thread::scope(|s| {
                s.spawn(|| assert!(!r2.try_add(1), "another thread: the ordinary path"));
            });
        }
        assert!(!r.try_add(1), "the mark is gone with the guard");
        assert_eq!(r.take(), 4);
        assert_eq!(r.take(), 0);
        assert_eq!(combined(5, 0), 5);
        assert_eq!(combined(5, 4), 9);
        assert_eq!(combined(UNBOUNDED, 4), UNBOUNDED);
        assert_eq!(combined(rs_api::UNBOUNDED_THRESHOLD - 1, 1), UNBOUNDED);
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
