//! Behaviour of the serial drain loop (`rs_impl::serial::DrainLoop`): one drainer at a time
//! (1.3), bounded recursion (3.3), no lost wake-up, callers that never wait for a drainer.
//!
//! Everything is checked by counting passes, work items and overlaps; nothing measures time.
#![cfg(not(rs_loom))]
// Tests use plain std atomics, channels and threads; the facade ban is for rs-impl/src.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};

use rs_impl::serial::DrainLoop;
use rstest::rstest;

/// An owner in the shape of a publisher: callers record work in `pending` and call `run`;
/// the pass takes all pending work. The in-pass flag and depth counter detect overlapping or
/// nested passes.
struct Owner {
    drain: DrainLoop<State>,
    /// Work recorded by callers and not yet taken by a pass.
    pending: AtomicU64,
    in_pass: AtomicBool,
    overlaps: AtomicU64,
    depth: AtomicU64,
    max_depth: AtomicU64,
    /// Calls to `run` that became the drainer.
    drainers: AtomicU64,
    /// Re-entrant requests still to make from inside the pass (the `request(1)` from
    /// `on_next` pattern), and how many were made.
    reentrant_left: AtomicU64,
}

/// The drainer-only state: plain fields, no atomics; the loop guarantees exclusive access.
#[derive(Default)]
struct State {
    passes: u64,
    handled: u64,
}

impl Default for Owner {
    fn default() -> Self {
        Owner {
            drain: DrainLoop::new(State::default()),
            pending: AtomicU64::new(0),
            in_pass: AtomicBool::new(false),
            overlaps: AtomicU64::new(0),
            depth: AtomicU64::new(0),
            max_depth: AtomicU64::new(0),
            drainers: AtomicU64::new(0),
            reentrant_left: AtomicU64::new(0),
        }
    }
}

impl Owner {
    /// Records one unit of work and drains.
    fn request(&self) {
        self.pending.fetch_add(1, SeqCst);
        self.run();
    }

    fn run(&self) {
        if self.drain.drain(|st| self.pass(st)) {
            self.drainers.fetch_add(1, SeqCst);
        }
    }

    fn pass(&self, st: &mut State) {
        if self.in_pass.swap(true, SeqCst) {
            self.overlaps.fetch_add(1, SeqCst);
        }
        let depth = self.depth.fetch_add(1, SeqCst) + 1;
        self.max_depth.fetch_max(depth, SeqCst);
        st.passes += 1;
        // Like an `on_next` that requests one more each time: handle one item, then record the
        // next from inside the pass. The re-entrant call must only record it.
        loop {
            let n = self.pending.swap(0, SeqCst);
            if n == 0 {
                break;
            }
            st.handled += n;
            let left = self.reentrant_left.load(SeqCst);
            if left > 0 {
                self.reentrant_left.store(left - 1, SeqCst);
                assert!(self.drain.is_draining());
                self.request();
            }
        }
        // Widen the window between the pass's last look at `pending` and the loop's decrement:
        // a call recorded now must make the drainer run another pass (no lost wake-up).
        std::thread::yield_now();
        self.depth.fetch_sub(1, SeqCst);
        self.in_pass.store(false, SeqCst);
    }

    fn state<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let mut out = None;
        let mut f = Some(f);
        // A drain from outside, with no drainer active, runs exactly one pass of ours.
        assert!(self.drain.drain(|st| out = Some((f.take().unwrap())(st))));
        out.unwrap()
    }
}

#[test]
fn an_idle_loop_drains_on_the_callers_thread_in_one_pass() {
    let l = DrainLoop::new(0u32);
    assert!(!l.is_draining());
    let mut passes = 0;
    let mut saw_draining = false;
    assert!(l.drain(|n| {
        *n += 1;
        passes += 1;
        saw_draining = l.is_draining();
    }));
    assert_eq!(passes, 1);
    assert!(saw_draining, "is_draining while a pass runs");
    assert!(!l.is_draining(), "idle again after the drain");
    // The state persists between drains.
    let mut seen = 0;
    assert!(l.drain(|n| seen = *n));
    assert_eq!(seen, 1);
}

/// 3.3: calls made from inside a pass only record work (they return `false` without running
/// their pass), and the drainer runs exactly one more pass for all of them together.
#[rstest]
#[case::one(1)]
#[case::three(3)]
#[case::many(1_000)]
fn reentrant_calls_record_and_the_drainer_runs_one_more_pass(#[case] calls: usize) {
    let l = DrainLoop::new(Vec::<usize>::new());
    let mut nested_results = Vec::new();
    let mut passes = 0;
    let mut inner_ran = false;
    assert!(l.drain(|v| {
        passes += 1;
        v.push(passes);
        if passes == 1 {
            for _ in 0..calls {
                nested_results.push(l.drain(|_| inner_ran = true));
            }
        }
    }));
    assert_eq!(nested_results, vec![false; calls]);
    assert!(!inner_ran, "a nested call never runs its own pass");
    assert_eq!(passes, 2, "the recorded work is drained by one more pass");
    assert!(!l.is_draining());
}

/// 3.3 at length: one re-entrant request per item over 1,000,000 items never nests a pass
/// (depth 1, no stack overflow) and loses none.
#[test]
fn a_million_reentrant_requests_keep_depth_one() {
    const MILLION: u64 = 1_000_000;
    let owner = Owner::default();
    owner.reentrant_left.store(MILLION - 1, SeqCst);
    owner.request();
    assert_eq!(owner.max_depth.load(SeqCst), 1);
    assert_eq!(owner.overlaps.load(SeqCst), 0);
    assert_eq!(owner.reentrant_left.load(SeqCst), 0);
    assert_eq!(
        owner.drainers.load(SeqCst),
        1,
        "only the outer call drained"
    );
    let (handled, passes) = owner.state(|st| (st.handled, st.passes));
    assert_eq!(handled, MILLION);
    // The pass takes each re-entrant request within its own loop; the recorded wake-ups add
    // at most one extra pass.
    assert!((1..=2).contains(&passes), "{passes} passes");
    assert!(!owner.drain.is_draining());
}

/// 3.4, 1.3: a call made while another thread drains returns at once (it does not wait for the
/// drainer) and the drainer runs another pass for it. Deterministic: the drainer's pass waits
/// until the other call has returned.
#[test]
fn a_concurrent_call_returns_without_waiting_and_the_drainer_covers_it() {
    let l = Arc::new(DrainLoop::new(0u32));
    let (returned_tx, returned_rx) = mpsc::channel::<bool>();
    let (in_pass_tx, in_pass_rx) = mpsc::channel::<()>();
    let other = {
        let l = l.clone();
        std::thread::spawn(move || {
            in_pass_rx.recv().unwrap();
            let mut ran = false;
            let drained = l.drain(|_| ran = true);
            returned_tx.send(drained).unwrap();
            ran
        })
    };
    let mut passes = 0;
    let mut other_drained = None;
    assert!(l.drain(|n| {
        *n += 1;
        passes += 1;
        if passes == 1 {
            in_pass_tx.send(()).unwrap();
            // Blocks until the other thread's drain call has returned: if it waited for us,
            // this would never finish.
            other_drained = Some(returned_rx.recv().unwrap());
        }
    }));
    assert_eq!(
        other_drained,
        Some(false),
        "the other call only recorded work"
    );
    assert!(!other.join().unwrap(), "the other call's pass did not run");
    assert_eq!(
        passes, 2,
        "the drainer ran one more pass for the recorded work"
    );
    let mut total = 0;
    l.drain(|n| total = *n);
    assert_eq!(total, 2);
}

/// 1.3 and no lost wake-up under contention: several threads record work and drain at once.
/// Passes never overlap or nest, and once every caller has returned, every unit of work has
/// been handled by some pass.
#[rstest]
#[case::two_threads(2, 20_000)]
#[case::four_threads(4, 5_000)]
fn concurrent_callers_lose_no_work_and_never_overlap(
    #[case] threads: usize,
    #[case] per_thread: u64,
) {
    for _ in 0..5 {
        let owner = Arc::new(Owner::default());
        let start = Arc::new(Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let owner = owner.clone();
                let start = start.clone();
                std::thread::spawn(move || {
                    start.wait();
                    for _ in 0..per_thread {
                        owner.request();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let total = threads as u64 * per_thread;
        assert_eq!(owner.overlaps.load(SeqCst), 0, "overlapping passes");
        assert_eq!(owner.max_depth.load(SeqCst), 1);
        assert_eq!(owner.pending.load(SeqCst), 0, "a wake-up was lost");
        assert!(!owner.drain.is_draining());
        let (handled, passes) = owner.state(|st| (st.handled, st.passes));
        assert_eq!(handled, total);
        assert!(passes >= owner.drainers.load(SeqCst));
        assert!(passes <= total, "at most one pass per call");
    }
}

/// Many short races: two threads each make one call at the same moment. Whatever the
/// interleaving, the work of both is handled before both have returned.
#[test]
fn two_simultaneous_calls_never_lose_a_wake_up() {
    for _ in 0..500 {
        let owner = Arc::new(Owner::default());
        let start = Arc::new(Barrier::new(2));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let owner = owner.clone();
                let start = start.clone();
                std::thread::spawn(move || {
                    start.wait();
                    owner.request();
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(owner.overlaps.load(SeqCst), 0);
        assert_eq!(owner.pending.load(SeqCst), 0, "a wake-up was lost");
        let drainers = owner.drainers.load(SeqCst);
        assert!((1..=2).contains(&drainers), "{drainers} drainers");
        assert_eq!(owner.state(|st| st.handled), 2);
    }
}
