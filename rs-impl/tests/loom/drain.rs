//! The serial drain loop: a concurrent `request` racing a re-entrant one.

use rs_impl::demand::Demand;
use rs_impl::loom::cell::UnsafeCell;
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use rs_impl::loom::sync::Arc;
use rs_impl::loom::thread;
use rs_impl::serial::DrainLoop;

use crate::broken::{BrokenNoSerialDrain, BrokenRelaxedDrain, BrokenStoreZeroDrain};

/// What the model needs of a drain loop, so that the broken twins run the same model.
pub(crate) trait Drain: Send + Sync + 'static {
    fn new() -> Self;
    fn drain(&self, pass: &mut dyn FnMut()) -> bool;
}

impl Drain for DrainLoop<()> {
    fn new() -> Self {
        DrainLoop::new(())
    }
    fn drain(&self, pass: &mut dyn FnMut()) -> bool {
        DrainLoop::drain(self, |_| pass())
    }
}

/// Elements the emitter has.
const COUNT: u64 = 3;

/// A minimal publisher on a drain loop and a [`Demand`]: it emits `0..COUNT` to an inline
/// "subscriber" (`on_next`) that checks the rules.
struct Emitter<D> {
    demand: Demand,
    drain: D,
    /// Drainer-only state in a loom cell: loom reports any access that is not ordered after the
    /// previous drainer's by happens-before (the drain loop must provide it, rule 1.3).
    emitted: UnsafeCell<u64>,
    /// Set while `on_next` runs (Relaxed RMWs: they see overlaps without adding edges).
    in_signal: AtomicBool,
    /// Bit `i` set when element `i` was delivered.
    delivered: AtomicU64,
}

// SAFETY: `emitted` is the only field that is not `Sync`; it is touched only from `pass`, which
// the drain loop runs for one drainer at a time, each ordered after the previous by
// happens-before. That claim is exactly what the model checks: loom panics on any access that is
// not ordered.
unsafe impl<D: Drain> Sync for Emitter<D> {}

impl<D: Drain> Emitter<D> {
    fn request(&self, n: u64) {
        self.demand.request(n).unwrap();
        self.drain.drain(&mut || self.pass());
    }

    /// One pass. Each step — look at the state, deliver one element, record it — runs inside
    /// the in-signal window, so an overlapping or nested pass is caught before it touches the
    /// state (otherwise loom's cell check would report it first, with a less telling message).
    fn pass(&self) {
        loop {
            if self.in_signal.swap(true, Ordering::Relaxed) {
                // Panicking here, with other loom threads suspended, aborts the process after
                // printing this message; only a broken drain loop gets here.
                panic!("rule 1.3 / 3.3: a pass started while another one (or on_next) runs");
            }
            // SAFETY: only the drainer runs `pass`, and the drain loop orders drainers by
            // happens-before; this is what the model checks (loom panics otherwise).
            let e = self.emitted.with(|p| unsafe { *p });
            if e == COUNT || self.demand.outstanding(e) == 0 {
                self.in_signal.store(false, Ordering::Relaxed);
                return;
            }
            self.on_next(e);
            // SAFETY: as above.
            self.emitted.with_mut(|p| unsafe { *p = e + 1 });
            self.in_signal.store(false, Ordering::Relaxed);
        }
    }

    fn on_next(&self, item: u64) {
        let before = self.delivered.fetch_or(1 << item, Ordering::Relaxed);
        assert!(
            before & (1 << item) == 0,
            "rule 1.3: element {item} delivered twice"
        );
        if item == 0 {
            // 3.2: a re-entrant request; with a correct loop it only records work (3.3).
            self.request(1);
        }
    }
}

/// Rules 1.3 and 3.3, and no lost wake-up. Interleaving: the main thread drains (requests 1,
/// then re-entrantly 1 more from inside `on_next(0)`) while a second thread requests 1
/// concurrently — before, during or after the drainer's passes, in particular between its last
/// look at the demand and its leaving the loop. In every interleaving: `on_next` never overlaps
/// or nests (in-signal flag), each pass sees the previous one's state (loom cell causality),
/// and all 3 elements are delivered (no request's wake-up is lost).
pub(crate) fn concurrent_request_racing_reentrant<D: Drain>() {
    let e = Arc::new(Emitter {
        demand: Demand::new(),
        drain: D::new(),
        emitted: UnsafeCell::new(0),
        in_signal: AtomicBool::new(false),
        delivered: AtomicU64::new(0),
    });
    let other = {
        let e = e.clone();
        thread::spawn(move || e.request(1))
    };
    e.request(1);
    other.join().unwrap();
    let delivered = e.delivered.load(Ordering::Acquire);
    assert_eq!(
        delivered, 0b111,
        "no lost wake-up: 3 requested, delivered set {delivered:#05b}"
    );
}

#[test]
fn drain_concurrent_request_racing_reentrant() {
    crate::exhaustive(concurrent_request_racing_reentrant::<DrainLoop<()>>);
}

crate::loom_rejects!(
    drain_model_rejects_broken_no_serial_drain,
    "rule 1.3 / 3.3",
    concurrent_request_racing_reentrant::<BrokenNoSerialDrain>
);

crate::loom_rejects!(
    drain_model_rejects_broken_store_zero_drain,
    "no lost wake-up",
    concurrent_request_racing_reentrant::<BrokenStoreZeroDrain>
);

crate::loom_rejects!(
    drain_model_rejects_broken_relaxed_drain,
    "Causality violation",
    concurrent_request_racing_reentrant::<BrokenRelaxedDrain>
);
