//! Behaviour tests of the island interpreter (seed 002, seed-designs.md §C.5): chasing with
//! its abort rules, lifecycle hooks, release of stage state, the stress shapes with counts
//! showing linear work, and the same scenarios in fuzzing mode.
#![cfg(not(rs_loom))]
#![allow(clippy::disallowed_types)]

use std::sync::{Arc, Mutex, Weak};

mod support;
use support::quiet_deliberate_panics;

use rs_api::Error;
use rs_impl::island::stages::{CollectSink, Collected, Identity, IterSource, Map, Skip, Take};
use rs_impl::island::{
    Ctx, GraphBuilder, Inlet, Interpreter, IslandError, Outlet, PortId, Ports, Stage, Stats,
};

/// How each scenario is run: normally, and fuzzed with a few seeds.
const MODES: [Option<u64>; 3] = [None, Some(1), Some(0xdead_beef)];

/// Builds source → `n` stages made by `make` → collecting sink, every stage its own
/// interpreter stage (fusion off: these tests are about the interpreter's events).
fn chain<I>(
    source: I,
    n: usize,
    make: impl FnMut(&mut GraphBuilder, usize, Inlet<u64>, Outlet<u64>),
) -> (Interpreter, Collected<u64>)
where
    I: IntoIterator<Item = u64>,
    I::IntoIter: Send + 'static,
{
    chain_with(false, source, n, make)
}

/// As [`chain`], with the builder's fusion on or off.
fn chain_with<I>(
    fusion: bool,
    source: I,
    n: usize,
    mut make: impl FnMut(&mut GraphBuilder, usize, Inlet<u64>, Outlet<u64>),
) -> (Interpreter, Collected<u64>)
where
    I: IntoIterator<Item = u64>,
    I::IntoIter: Send + 'static,
{
    let mut g = GraphBuilder::new();
    g.set_fusion(fusion);
    let (o, mut i) = g.connection::<u64>();
    g.add_stage(IterSource::new(o, source));
    for k in 0..n {
        let (o, next) = g.connection::<u64>();
        make(&mut g, k, i, o);
        i = next;
    }
    let (sink, seen) = CollectSink::new(i);
    g.add_stage(sink);
    (g.build().expect("a well-formed chain"), seen)
}

/// Runs to completion in `mode`; returns the counters.
fn run(mut interpreter: Interpreter, mode: Option<u64>) -> Stats {
    interpreter.set_fuzzing(mode);
    interpreter.execute(u64::MAX);
    assert!(
        interpreter.is_completed(),
        "the island did not finish: {interpreter:?}"
    );
    assert_eq!(interpreter.pending_finalisations(), 0);
    interpreter.stats()
}

// ---------------------------------------------------------------------------------------
// A recording stage for chasing and lifecycle tests
// ---------------------------------------------------------------------------------------

type Log = Arc<Mutex<Vec<String>>>;

fn log_of(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// What a `Probe` stage does in its handlers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Act {
    /// Pass elements through.
    Pass,
    /// In `on_pull`: pull, then cancel the in-port at once (a cancel after a chased pull).
    PullThenCancel,
    /// In `on_push`: push, then complete the out-port (a complete after a chased push).
    PushThenComplete,
    /// In `on_push`: push, then fail the out-port.
    PushThenFail,
    /// Panic in `pre_start`.
    PanicInPreStart,
    /// Panic in `post_stop`.
    PanicInPostStop,
    /// Panic in `on_push`.
    PanicInPush,
}

struct Probe {
    name: &'static str,
    inlet: Inlet<u64>,
    outlet: Outlet<u64>,
    act: Act,
    log: Log,
    _token: Arc<()>,
}

impl Probe {
    fn note(&self, what: impl AsRef<str>) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{}:{}", self.name, what.as_ref()));
    }
}

impl Stage for Probe {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet).outlet(self.outlet);
    }
    fn pre_start(&mut self, _: &mut Ctx<'_>) {
        self.note("pre_start");
        if self.act == Act::PanicInPreStart {
            panic!("pre_start failed");
        }
    }
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        self.note(format!("push {x}"));
        match self.act {
            Act::PushThenComplete => {
                ctx.push(self.outlet, x);
                ctx.complete(self.outlet);
                ctx.cancel(self.inlet);
            }
            Act::PushThenFail => {
                ctx.push(self.outlet, x);
                ctx.fail(self.outlet, Error::msg("failed after push"));
                ctx.cancel(self.inlet);
            }
            Act::PanicInPush => panic!("on_push failed"),
            _ => ctx.push(self.outlet, x),
        }
    }
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.note("pull");
        ctx.pull(self.inlet);
        if self.act == Act::PullThenCancel {
            ctx.cancel(self.inlet);
            ctx.complete(self.outlet);
        }
    }
    fn on_upstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.note("upstream_finish");
        ctx.complete_stage();
    }
    fn on_upstream_failure(&mut self, _: PortId, e: Error, ctx: &mut Ctx<'_>) {
        self.note(format!("upstream_failure {e}"));
        ctx.fail_stage(e);
    }
    fn on_downstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.note("downstream_finish");
        ctx.complete_stage();
    }
    fn post_stop(&mut self) {
        self.note("post_stop");
        if self.act == Act::PanicInPostStop {
            panic!("post_stop failed");
        }
    }
}

/// source(0..n) → a → b → c → sink, each a Probe with its act; returns the stages' Weak
/// tokens too (they upgrade while the stage's state is alive).
fn probes(n: u64, acts: [Act; 3], log: &Log) -> (Interpreter, Collected<u64>, Vec<Weak<()>>) {
    let mut tokens = Vec::new();
    let names = ["a", "b", "c"];
    let (interpreter, seen) = chain(0..n, 3, |g, k, i, o| {
        let token = Arc::new(());
        tokens.push(Arc::downgrade(&token));
        g.add_stage(Probe {
            name: names[k],
            inlet: i,
            outlet: o,
            act: acts[k],
            log: log.clone(),
            _token: token,
        });
    });
    (interpreter, seen, tokens)
}

/// Whether `a` and `b` both happened, `a` first.
fn order(log: &[String], a: &str, b: &str) -> bool {
    let pa = log.iter().position(|l| l == a);
    let pb = log.iter().position(|l| l == b);
    matches!((pa, pb), (Some(x), Some(y)) if x < y)
}

/// Runs `probes(n, acts)` to completion in `mode`: the log, what the sink saw, the stages'
/// state tokens.
fn run_probes(
    n: u64,
    acts: [Act; 3],
    mode: Option<u64>,
) -> (Vec<String>, Collected<u64>, Vec<Weak<()>>) {
    let log = Log::default();
    let (interpreter, seen, tokens) = probes(n, acts, &log);
    run(interpreter, mode);
    (log_of(&log), seen, tokens)
}

// ---------------------------------------------------------------------------------------
// Chasing (ChasingEventsSpec)
// ---------------------------------------------------------------------------------------

#[test]
fn cancel_right_after_a_chased_pull_still_propagates() {
    for mode in MODES {
        let (log, seen, _) = run_probes(10, [Act::Pass, Act::PullThenCancel, Act::Pass], mode);
        // The cancel reached a (upstream of b) even though b's pull had been chased…
        assert!(
            log.contains(&"a:downstream_finish".to_owned()),
            "{mode:?}: {log:?}"
        );
        // …and the chased pull was not processed as a pull after the cancel.
        assert!(!log.contains(&"a:pull".to_owned()), "{mode:?}: {log:?}");
        assert!(
            log.contains(&"c:upstream_finish".to_owned()),
            "{mode:?}: {log:?}"
        );
        assert_eq!(seen.take().unwrap().unwrap(), Vec::<u64>::new());
    }
}

#[test]
fn complete_right_after_a_chased_push_delivers_the_element_then_completes() {
    for mode in MODES {
        let (log, seen, _) = run_probes(10, [Act::Pass, Act::PushThenComplete, Act::Pass], mode);
        assert!(
            order(&log, "c:push 0", "c:upstream_finish"),
            "{mode:?}: {log:?}"
        );
        assert_eq!(seen.take().unwrap().unwrap(), vec![0]);
    }
}

#[test]
fn fail_right_after_a_chased_push_delivers_the_element_then_fails() {
    for mode in MODES {
        let (log, seen, _) = run_probes(10, [Act::Pass, Act::PushThenFail, Act::Pass], mode);
        assert!(
            order(&log, "c:push 0", "c:upstream_failure failed after push"),
            "{mode:?}: {log:?}"
        );
        let outcome = seen.take().unwrap();
        assert_eq!(outcome.unwrap_err().to_string(), "failed after push");
    }
}

#[test]
fn chasing_skips_the_queue_and_fuzzing_does_not_chase() {
    let (normal, _) = chain(0..1000u64, 10, |g, _, i, o| {
        g.add_stage(Identity::new(i, o));
    });
    let normal = run(normal, None);
    let (fuzzed, _) = chain(0..1000u64, 10, |g, _, i, o| {
        g.add_stage(Identity::new(i, o));
    });
    let fuzzed = run(fuzzed, Some(7));
    assert!(normal.chased > normal.dequeued * 5, "{normal:?}");
    assert_eq!(fuzzed.chased, 0, "{fuzzed:?}");
    // Every chased event of the normal run is a dequeued event of the fuzzed run: the totals
    // agree per element (2 × 11 events for 1,000 elements), up to the termination, whose
    // events depend on their order (a cancel that finds its connection closed already is
    // not enqueued): at most two per connection.
    let normal_total = normal.chased + normal.dequeued;
    assert!(normal_total > 22_000, "{normal:?}");
    assert!(
        normal_total.abs_diff(fuzzed.dequeued) <= 2 * 11,
        "{normal:?} {fuzzed:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Lifecycle (LifecycleInterpreterSpec)
// ---------------------------------------------------------------------------------------

#[test]
fn hooks_run_in_order_on_completion() {
    for mode in MODES {
        let (log, seen, tokens) = run_probes(3, [Act::Pass; 3], mode);
        // Every pre_start before any event; one post_stop per stage, after its last event.
        let first_event = log.iter().position(|l| !l.ends_with("pre_start")).unwrap();
        assert_eq!(
            log[..first_event],
            ["a:pre_start", "b:pre_start", "c:pre_start"].map(String::from)
        );
        for s in ["a", "b", "c"] {
            let stops = log
                .iter()
                .filter(|l| **l == format!("{s}:post_stop"))
                .count();
            assert_eq!(stops, 1, "{mode:?}: {log:?}");
            assert!(order(
                &log,
                &format!("{s}:upstream_finish"),
                &format!("{s}:post_stop")
            ));
        }
        assert!(
            order(&log, "a:post_stop", "b:post_stop") && order(&log, "b:post_stop", "c:post_stop")
        );
        assert!(
            tokens.iter().all(|t| t.upgrade().is_none()),
            "state not released"
        );
        assert_eq!(seen.take().unwrap().unwrap(), vec![0, 1, 2]);
    }
}

#[test]
fn hooks_run_in_order_on_error_and_a_panicking_handler_fails_its_stage() {
    for mode in MODES {
        let (log, seen, tokens) = run_probes(3, [Act::Pass, Act::PanicInPush, Act::Pass], mode);
        assert!(order(&log, "b:push 0", "b:post_stop"), "{log:?}");
        assert!(order(&log, "a:downstream_finish", "a:post_stop"), "{log:?}");
        assert!(
            log.iter().any(|l| l.starts_with("c:upstream_failure")),
            "{log:?}"
        );
        let e = seen.take().unwrap().unwrap_err();
        match e.downcast_ref::<IslandError>() {
            Some(IslandError::StagePanicked { message, .. }) => {
                assert_eq!(message, "on_push failed")
            }
            other => panic!("{other:?}"),
        }
        assert!(tokens.iter().all(|t| t.upgrade().is_none()));
    }
}

#[test]
fn hooks_run_in_order_on_cancel() {
    for mode in MODES {
        let log = Log::default();
        // take(1) after the probes cancels them from downstream.
        let mut tokens = Vec::new();
        let names = ["a", "b"];
        let (interpreter, seen) = chain(0..100u64, 3, |g, k, i, o| {
            if k == 2 {
                g.add_stage(Take::new(i, o, 1));
                return;
            }
            let token = Arc::new(());
            tokens.push(Arc::downgrade(&token));
            g.add_stage(Probe {
                name: names[k],
                inlet: i,
                outlet: o,
                act: Act::Pass,
                log: log.clone(),
                _token: token,
            });
        });
        run(interpreter, mode);
        let log = log_of(&log);
        assert!(order(&log, "b:downstream_finish", "b:post_stop"), "{log:?}");
        assert!(order(&log, "b:post_stop", "a:downstream_finish"), "{log:?}");
        assert!(order(&log, "a:downstream_finish", "a:post_stop"), "{log:?}");
        assert_eq!(seen.take().unwrap().unwrap(), vec![0]);
        assert!(tokens.iter().all(|t| t.upgrade().is_none()));
    }
}

#[test]
fn a_panicking_pre_start_fails_the_stage_and_post_stop_still_runs_once() {
    for mode in MODES {
        let (log, seen, _) = run_probes(3, [Act::Pass, Act::PanicInPreStart, Act::Pass], mode);
        assert_eq!(
            log.iter().filter(|l| *l == "b:post_stop").count(),
            1,
            "{log:?}"
        );
        assert!(!log.iter().any(|l| l.starts_with("b:push")), "{log:?}");
        assert!(seen.take().unwrap().is_err());
    }
}

#[test]
fn a_panicking_post_stop_is_contained_and_the_others_finish() {
    for mode in MODES {
        let (log, seen, tokens) = run_probes(3, [Act::Pass, Act::PanicInPostStop, Act::Pass], mode);
        assert_eq!(seen.take().unwrap().unwrap(), vec![0, 1, 2]);
        assert!(log.contains(&"c:post_stop".to_owned()));
        assert!(tokens.iter().all(|t| t.upgrade().is_none()));
    }
}

// ---------------------------------------------------------------------------------------
// Release of stage state (GraphInterpreterSpec) and the pushed-before-complete element
// ---------------------------------------------------------------------------------------

/// A map whose state is a token, to watch its release.
struct Tracked {
    inlet: Inlet<u64>,
    outlet: Outlet<u64>,
    _token: Arc<()>,
}

impl Stage for Tracked {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet).outlet(self.outlet);
    }
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        ctx.push(self.outlet, x);
    }
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        ctx.pull(self.inlet);
    }
}

#[test]
fn a_finished_stage_is_released_while_the_island_runs_and_the_rest_after_the_cascade() {
    // source → tracked ×3 → take(2) → tracked ×3 → sink, driven by a sink we control: the
    // island runs a budget at a time.
    let mut tokens = Vec::new();
    let (mut interpreter, seen) = chain(0..1_000u64, 7, |g, k, i, o| {
        if k == 3 {
            g.add_stage(Take::new(i, o, 2));
        } else {
            let t = Arc::new(());
            tokens.push(Arc::downgrade(&t));
            g.add_stage(Tracked {
                inlet: i,
                outlet: o,
                _token: t,
            });
        }
    });
    interpreter.init();
    assert!(tokens.iter().all(|t| t.upgrade().is_some()));
    interpreter.execute(u64::MAX);
    assert!(interpreter.is_completed());
    assert!(
        tokens.iter().all(|t| t.upgrade().is_none()),
        "state kept after the cascade"
    );
    assert_eq!(seen.take().unwrap().unwrap(), vec![0, 1]);
}

/// Pushes its first element and completes at once; the sink grabs only later.
struct PushAndFinish {
    outlet: Outlet<u64>,
}

impl Stage for PushAndFinish {
    fn ports(&self, ports: &mut Ports) {
        ports.outlet(self.outlet);
    }
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        ctx.push(self.outlet, 42);
        ctx.complete(self.outlet);
    }
}

/// Ignores on_push; grabs in on_upstream_finish.
struct LateGrab {
    inlet: Inlet<u64>,
    got: Arc<Mutex<Option<u64>>>,
}

impl Stage for LateGrab {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet);
    }
    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.pull(self.inlet);
    }
    fn on_push(&mut self, _: PortId, _: &mut Ctx<'_>) {}
    fn on_upstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        *self.got.lock().unwrap() = ctx.try_grab(self.inlet);
        ctx.complete_stage();
    }
}

#[test]
fn an_element_pushed_just_before_completion_stays_available_after_the_pusher_finished() {
    for mode in MODES {
        let mut g = GraphBuilder::new();
        let (o, i) = g.connection::<u64>();
        g.add_stage(PushAndFinish { outlet: o });
        let got = Arc::new(Mutex::new(None));
        g.add_stage(LateGrab {
            inlet: i,
            got: got.clone(),
        });
        let mut interpreter = g.build().unwrap();
        interpreter.set_fuzzing(mode);
        interpreter.execute(u64::MAX);
        assert!(interpreter.is_completed());
        assert_eq!(*got.lock().unwrap(), Some(42), "{mode:?}");
    }
}

/// A zero-port stage and a keep-going stage: finalised exactly once, at the right time.
struct Lonely {
    stopped: Arc<Mutex<u32>>,
}

impl Stage for Lonely {
    fn ports(&self, _: &mut Ports) {}
    fn post_stop(&mut self) {
        *self.stopped.lock().unwrap() += 1;
    }
}

#[test]
fn zero_port_stages_start_completed_and_are_finalised_once() {
    let stopped = Arc::new(Mutex::new(0));
    let mut g = GraphBuilder::new();
    g.add_stage(Lonely {
        stopped: stopped.clone(),
    });
    g.add_stage(Lonely {
        stopped: stopped.clone(),
    });
    let mut interpreter = g.build().unwrap();
    interpreter.init();
    interpreter.execute(u64::MAX);
    assert!(interpreter.is_completed());
    assert_eq!(*stopped.lock().unwrap(), 2);
    assert_eq!(interpreter.pending_finalisations(), 0);
}

/// Keeps going after its ports closed, until its pull of a second element… never comes: it
/// turns keep-going off in `on_upstream_finish` of the second stream. Here: on completion it
/// keeps going for one more async input, then stops.
struct KeepsGoing {
    inlet: Inlet<u64>,
    stopped: Arc<Mutex<u32>>,
}

impl Stage for KeepsGoing {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet);
    }
    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.set_keep_going(true);
        ctx.pull(self.inlet);
    }
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let _ = ctx.grab(self.inlet);
        ctx.pull(self.inlet);
    }
    fn on_upstream_finish(&mut self, _: PortId, _: &mut Ctx<'_>) {}
    fn on_async_input(&mut self, ctx: &mut Ctx<'_>) {
        ctx.set_keep_going(false);
    }
    fn post_stop(&mut self) {
        *self.stopped.lock().unwrap() += 1;
    }
}

#[test]
fn keep_going_holds_finalisation_until_turned_off() {
    let stopped = Arc::new(Mutex::new(0));
    let mut g = GraphBuilder::new();
    let (o, i) = g.connection::<u64>();
    g.add_stage(IterSource::new(o, 0..3u64));
    let sink = g.add_stage(KeepsGoing {
        inlet: i,
        stopped: stopped.clone(),
    });
    let mut interpreter = g.build().unwrap();
    interpreter.execute(u64::MAX);
    assert_eq!(
        interpreter.running_stages(),
        1,
        "the keep-going stage is alive"
    );
    assert_eq!(*stopped.lock().unwrap(), 0);
    interpreter.run_async_input(sink);
    assert!(interpreter.is_completed());
    assert_eq!(*stopped.lock().unwrap(), 1);
    assert_eq!(interpreter.pending_finalisations(), 0);
}

#[test]
fn port_misuse_fails_the_stage_with_a_typed_error() {
    struct PushTwice {
        inlet: Inlet<u64>,
        outlet: Outlet<u64>,
    }
    impl Stage for PushTwice {
        fn ports(&self, p: &mut Ports) {
            p.inlet(self.inlet).outlet(self.outlet);
        }
        fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
            let x = ctx.grab(self.inlet);
            ctx.push(self.outlet, x);
            ctx.push(self.outlet, x);
        }
        fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
            ctx.pull(self.inlet);
        }
    }
    let (interpreter, seen) = chain(0..3u64, 1, |g, _, i, o| {
        g.add_stage(PushTwice {
            inlet: i,
            outlet: o,
        });
    });
    run(interpreter, None);
    let e = seen.take().unwrap().unwrap_err();
    assert!(
        matches!(
            e.downcast_ref::<IslandError>(),
            Some(IslandError::PortMisuse { op: "push", .. })
        ),
        "{e}"
    );
}

#[test]
fn budget_is_returned_and_execute_resumes() {
    let (mut interpreter, seen) = chain(0..100u64, 3, |g, _, i, o| {
        g.add_stage(Identity::new(i, o));
    });
    let mut rounds = 0;
    loop {
        let left = interpreter.execute(5);
        rounds += 1;
        if interpreter.is_completed() {
            assert!(left > 0 || !interpreter.is_suspended());
            break;
        }
        assert_eq!(left, 0, "a partial run ends with the budget spent");
        assert!(interpreter.is_suspended());
    }
    assert!(rounds > 10, "{rounds}");
    assert_eq!(seen.take().unwrap().unwrap(), (0..100).collect::<Vec<_>>());
}

// ---------------------------------------------------------------------------------------
// Stress shapes (InterpreterStressSpec): counts, not timers, show linear work
// ---------------------------------------------------------------------------------------

/// Runs a chain of `len` stages made by `make` over `input`, in `mode`; checks the output.
fn stress(
    len: usize,
    input: std::ops::Range<u64>,
    expected: &[u64],
    mode: Option<u64>,
    make: impl FnMut(&mut GraphBuilder, usize, Inlet<u64>, Outlet<u64>),
) -> Stats {
    let (interpreter, seen) = chain(input, len, make);
    let stats = run(interpreter, mode);
    assert_eq!(seen.take().unwrap().unwrap(), expected);
    assert_eq!(stats.finalised, len as u64 + 2);
    stats
}

/// The work at length `4n` is at most `4.5×` the work at `n` (linear, with slack for the
/// constant part), and the finalisation logic visits each stage a bounded number of times.
fn assert_linear(small: Stats, large: Stats, n: usize, what: &str) {
    let n = n as u64;
    assert!(
        large.finalisation_visits <= small.finalisation_visits * 9 / 2,
        "{what}: finalisation visits {} at {n} stages, {} at {}: not linear",
        small.finalisation_visits,
        large.finalisation_visits,
        4 * n
    );
    assert!(
        large.finalisation_visits <= 4 * (4 * n + 2),
        "{what}: {} finalisation visits for {} stages",
        large.finalisation_visits,
        4 * n + 2
    );
    let (es, el) = (small.dequeued + small.chased, large.dequeued + large.chased);
    assert!(
        el <= es * 9 / 2,
        "{what}: {es} events at {n} stages, {el} at {}: not linear",
        4 * n
    );
}

#[test]
fn stress_a_million_chained_maps() {
    let n = 250_000;
    let make = |g: &mut GraphBuilder, _: usize, i, o| {
        g.add_stage(Map::new(i, o, |x: u64| x + 1));
    };
    let small = stress(n, 0..3, &[n as u64, n as u64 + 1, n as u64 + 2], None, make);
    let big = 4 * n;
    let large = stress(
        big,
        0..3,
        &[big as u64, big as u64 + 1, big as u64 + 2],
        None,
        make,
    );
    assert_linear(small, large, n, "1M maps");
    assert_eq!(
        large.finalisation_scans, 0,
        "no cascade scan on a normal finish"
    );
}

#[test]
fn stress_maps_with_a_take_in_the_middle() {
    let n = 250_000;
    let shape = |len: usize| {
        move |g: &mut GraphBuilder, k: usize, i, o| {
            if k == len / 2 {
                g.add_stage(Take::new(i, o, 2));
            } else {
                g.add_stage(Map::new(i, o, |x: u64| x + 1));
            }
        }
    };
    let out = |len: usize| [len as u64 - 1, len as u64];
    let small = stress(n, 0..1_000, &out(n), None, shape(n));
    let large = stress(4 * n, 0..1_000, &out(4 * n), None, shape(4 * n));
    assert_linear(small, large, n, "maps with a take in the middle");
}

#[test]
fn stress_100k_chained_take_1() {
    let n = 25_000;
    let make = |g: &mut GraphBuilder, _: usize, i, o| {
        g.add_stage(Take::new(i, o, 1));
    };
    let small = stress(n, 0..10, &[0], None, make);
    let large = stress(4 * n, 0..10, &[0], None, make);
    assert_linear(small, large, n, "100k take(1)");
}

#[test]
fn stress_1k_chained_drop_1() {
    let n = 250;
    let make = |g: &mut GraphBuilder, _: usize, i, o| {
        g.add_stage(Skip::new(i, o, 1));
    };
    let small = stress(
        n,
        0..2 * n as u64,
        &(n as u64..2 * n as u64).collect::<Vec<_>>(),
        None,
        make,
    );
    let big = 4 * n as u64;
    let large = stress(
        4 * n,
        0..2 * big,
        &(big..2 * big).collect::<Vec<_>>(),
        None,
        make,
    );
    // Skip does quadratic work by nature (element k passes k stages before it is dropped), so
    // only the finalisation work must be linear here.
    assert!(large.finalisation_visits <= small.finalisation_visits * 9 / 2);
    assert_eq!(large.finalisation_scans, 0);
}

#[test]
fn stress_shapes_pass_in_fuzzing_mode() {
    for seed in [3u64, 99] {
        let mode = Some(seed);
        let n = 100_000;
        stress(
            n,
            0..3,
            &[n as u64, n as u64 + 1, n as u64 + 2],
            mode,
            |g, _, i, o| {
                g.add_stage(Map::new(i, o, |x: u64| x + 1));
            },
        );
        stress(n, 0..100, &[n as u64 - 1, n as u64], mode, |g, k, i, o| {
            if k == n / 2 {
                g.add_stage(Take::new(i, o, 2));
            } else {
                g.add_stage(Map::new(i, o, |x: u64| x + 1));
            }
        });
        stress(10_000, 0..10, &[0], mode, |g, _, i, o| {
            g.add_stage(Take::new(i, o, 1));
        });
        stress(
            300,
            0..600,
            &(300..600).collect::<Vec<_>>(),
            mode,
            |g, _, i, o| {
                g.add_stage(Skip::new(i, o, 1));
            },
        );
    }
}

#[test]
fn the_gate_changes_the_work_not_the_result() {
    let build = || {
        chain(0..1_000u64, 10, |g, k, i, o| {
            if k == 5 {
                g.add_stage(Take::new(i, o, 500));
            } else {
                g.add_stage(Identity::new(i, o));
            }
        })
    };
    let (gated, a) = build();
    let gated = run(gated, None);
    let (mut ungated, b) = build();
    ungated.set_finalisation_gate(false);
    let ungated = run(ungated, None);
    assert_eq!(a.take().unwrap().unwrap(), b.take().unwrap().unwrap());
    assert_eq!(gated.finalised, ungated.finalised);
    // Gated: the finalisation logic ran only when a stage completed (12 stages, each at most
    // once on the fast path, plus init); ungated: after every event.
    assert!(gated.finalisation_visits <= 2 * 12 + 12, "{gated:?}");
    assert!(
        ungated.finalisation_visits >= ungated.dequeued + ungated.chased,
        "{ungated:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Fusion by the graph builder: the same behaviour at the run's ports, less work inside
// ---------------------------------------------------------------------------------------

use futures::StreamExt;
use rs_impl::island::stages::{Filter, Scan, StreamSource};

/// Stage `k` of a mixed chain: maps, filters, scans, skips and takes one after another.
fn mixed(g: &mut GraphBuilder, k: usize, i: Inlet<u64>, o: Outlet<u64>) {
    match k % 6 {
        0 => g.add_stage(Map::new(i, o, |x: u64| x.wrapping_mul(3).wrapping_add(1))),
        1 => g.add_stage(Filter::new(i, o, |x: &u64| x % 16 != 5)),
        2 => g.add_stage(Scan::new(i, o, 7u64, |a: &u64, x: u64| {
            a.wrapping_add(x) % 1_000_003
        })),
        3 => g.add_stage(Skip::new(i, o, 2)),
        4 => g.add_stage(Identity::new(i, o)),
        _ => g.add_stage(Take::new(i, o, 900 - k as u64)),
    };
}

#[test]
fn fusion_gives_the_same_elements_and_signals_as_the_stages_one_by_one() {
    for len in [1, 2, 5, 6, 13, 64, 65, 130, 200] {
        let (plain, want) = chain(0..1_000u64, len, mixed);
        let plain_stats = run(plain, None);
        let want = want.take().unwrap().unwrap();
        assert!(
            want.len() > 20,
            "len {len}: the shape lets elements through"
        );
        for mode in MODES {
            let (fused, got) = chain_with(true, 0..1_000u64, len, mixed);
            let stats = run(fused, mode);
            assert_eq!(got.take().unwrap().unwrap(), want, "len {len}, {mode:?}");
            // Every stage is finalised either way (fused-away ones count as finalised at
            // build, not as finalisations run).
            let runs = if len == 1 { 1 } else { len.div_ceil(64) };
            assert_eq!(stats.finalised, runs as u64 + 2, "len {len}");
            assert_eq!(plain_stats.finalised, len as u64 + 2);
            if len > 1 && mode.is_none() {
                // Inside a run nothing goes through the interpreter: fewer events.
                assert!(
                    stats.dequeued + stats.chased < plain_stats.dequeued + plain_stats.chased,
                    "len {len}: {stats:?} vs {plain_stats:?}"
                );
            }
        }
    }
}

/// A source that emits `0..n` and then fails.
fn failing_source(g: &mut GraphBuilder, n: u64) -> Inlet<u64> {
    let (o, i) = g.connection::<u64>();
    let items = futures::stream::iter(0..n)
        .map(Ok)
        .chain(futures::stream::once(async {
            Err(Error::msg("source failed"))
        }));
    g.add_stage(StreamSource::new(o, Box::pin(items)));
    i
}

#[test]
fn a_fused_run_passes_failure_on_and_a_panicking_operator_fails_it() {
    for fusion in [true, false] {
        // Upstream failure crosses the run.
        let mut g = GraphBuilder::new();
        g.set_fusion(fusion);
        let mut i = failing_source(&mut g, 5);
        for k in 0..4 {
            let (o, next) = g.connection::<u64>();
            if k % 2 == 0 {
                g.add_stage(Map::new(i, o, |x: u64| x * 2));
            } else {
                g.add_stage(Identity::new(i, o));
            }
            i = next;
        }
        let (sink, seen) = CollectSink::new(i);
        g.add_stage(sink);
        let mut interpreter = g.build().unwrap();
        futures::executor::block_on(async {
            interpreter.execute(u64::MAX);
        });
        let err = seen.take().unwrap().unwrap_err();
        assert!(err.to_string().contains("source failed"), "{err}");

        // An operator that panics fails its stage: the sink gets an error, the source is
        // cancelled, the island finishes.
        let (mut interpreter, seen) = chain_with(fusion, 0..100u64, 4, |g, k, i, o| {
            if k == 2 {
                g.add_stage(Map::new(i, o, |x: u64| {
                    assert!(x != 7, "deliberate: the operator fails at 7");
                    x
                }));
            } else {
                g.add_stage(Identity::new(i, o));
            }
        });
        quiet_deliberate_panics();
        interpreter.execute(u64::MAX);
        assert!(interpreter.is_completed(), "fusion {fusion}");
        assert!(seen.take().unwrap().is_err(), "fusion {fusion}");
    }
}

#[test]
fn a_fused_run_is_released_when_its_take_completes_while_the_source_goes_on() {
    let token = Arc::new(());
    let held = token.clone();
    let mut g = GraphBuilder::new();
    let (o, mut i) = g.connection::<u64>();
    g.add_stage(IterSource::new(o, 0..));
    let (o, next) = g.connection::<u64>();
    let map = g.add_stage(Map::new(i, o, move |x: u64| {
        let _ = &held;
        x + 1
    }));
    i = next;
    let (o, next) = g.connection::<u64>();
    let take = g.add_stage(Take::new(i, o, 3));
    i = next;
    let (sink, seen) = CollectSink::new(i);
    g.add_stage(sink);
    let mut interpreter = g.build().unwrap();
    // The take was fused into the map's stage: its index names a stage finalised at build.
    assert!(interpreter.is_finalised(take));
    assert!(!interpreter.is_finalised(map));
    assert_eq!(Arc::strong_count(&token), 2);
    interpreter.execute(u64::MAX);
    assert!(interpreter.is_completed());
    assert_eq!(seen.take().unwrap().unwrap(), vec![1, 2, 3]);
    assert!(interpreter.is_finalised(map));
    // The map's closure (and the token it holds) went with the fused stage.
    assert_eq!(Arc::strong_count(&token), 1);
}

/// Adds stage `k` of a chain between the given ports.
type MakeStage = dyn Fn(&mut GraphBuilder, usize, Inlet<u64>, Outlet<u64>);

#[test]
fn fused_stress_shapes_do_linear_work() {
    let maps = |g: &mut GraphBuilder, _: usize, i, o| {
        g.add_stage(Map::new(i, o, |x: u64| x + 1));
    };
    let run_fused = |len: usize, input: std::ops::Range<u64>, make: &MakeStage| {
        let (interpreter, seen) = chain_with(true, input, len, make);
        let stats = run(interpreter, None);
        (stats, seen.take().unwrap().unwrap())
    };
    let n = 250_000;
    let (small, out) = run_fused(n, 0..3, &maps);
    assert_eq!(out, vec![n as u64, n as u64 + 1, n as u64 + 2]);
    let (large, out) = run_fused(4 * n, 0..3, &maps);
    assert_eq!(out, vec![4 * n as u64, 4 * n as u64 + 1, 4 * n as u64 + 2]);
    assert_linear(small, large, n, "1M fused maps");
    assert_eq!(large.finalised, (4 * n).div_ceil(64) as u64 + 2);
    assert_eq!(large.finalisation_scans, 0);

    let takes = |g: &mut GraphBuilder, _: usize, i, o| {
        g.add_stage(Take::new(i, o, 1));
    };
    let n = 25_000;
    let (small, out) = run_fused(n, 0..10, &takes);
    assert_eq!(out, vec![0]);
    let (large, out) = run_fused(4 * n, 0..10, &takes);
    assert_eq!(out, vec![0]);
    assert_linear(small, large, n, "100k fused take(1)");

    let skips = |g: &mut GraphBuilder, _: usize, i, o| {
        g.add_stage(Skip::new(i, o, 1));
    };
    let (_, out) = run_fused(1_000, 0..2_000, &skips);
    assert_eq!(out, (1_000..2_000).collect::<Vec<_>>());
}
