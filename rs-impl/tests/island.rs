//! Behaviour tests of the island interpreter (Pekko PR #2986: Pekko's GraphInterpreterSpec shapes): chasing with
//! its abort rules, lifecycle hooks, release of stage state, the stress shapes with counts
//! showing linear work, and the same scenarios in fuzzing mode.
#![cfg(not(rs_loom))]
#![allow(clippy::disallowed_types)]

use std::sync::{Arc, Mutex, Weak};

mod support;
use support::quiet_deliberate_panics;

use rs_api::Error;
use rs_impl::flow::ops::{Identity, Map, Skip, Take};
use rs_impl::flow::{IterSource, OperatorStage};
use rs_impl::island::stages::{CollectSink, Collected};
use rs_impl::island::{
    Ctx, GraphBuilder, Inlet, Interpreter, IslandError, Outlet, PortId, Ports, Stage, Stats,
};

/// How each scenario is run: normally, and fuzzed with a few seeds.
const MODES: [Option<u64>; 3] = [None, Some(1), Some(0xdead_beef)];

/// Builds source → `n` stages made by `make` → collecting sink, every stage its own
/// interpreter stage (these tests are about the interpreter's events).
fn chain<I>(
    source: I,
    n: usize,
    mut make: impl FnMut(&mut GraphBuilder, usize, Inlet<u64>, Outlet<u64>),
) -> (Interpreter, Collected<u64>)
where
    I: IntoIterator<Item = u64>,
    I::IntoIter: Send + 'static,
{
    let mut g = GraphBuilder::new();
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
        g.add_stage(OperatorStage::new(i, o, Identity::new()));
    });
    let normal = run(normal, None);
    let (fuzzed, _) = chain(0..1000u64, 10, |g, _, i, o| {
        g.add_stage(OperatorStage::new(i, o, Identity::new()));
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
                g.add_stage(OperatorStage::new(i, o, Take::new(1)));
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
            g.add_stage(OperatorStage::new(i, o, Take::new(2)));
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
        g.add_stage(OperatorStage::new(i, o, Identity::new()));
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
        g.add_stage(OperatorStage::new(i, o, Map::new(|x: u64| x + 1)));
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
                g.add_stage(OperatorStage::new(i, o, Take::new(2)));
            } else {
                g.add_stage(OperatorStage::new(i, o, Map::new(|x: u64| x + 1)));
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
        g.add_stage(OperatorStage::new(i, o, Take::new(1)));
    };
    let small = stress(n, 0..10, &[0], None, make);
    let large = stress(4 * n, 0..10, &[0], None, make);
    assert_linear(small, large, n, "100k take(1)");
}

#[test]
fn stress_1k_chained_drop_1() {
    let n = 250;
    let make = |g: &mut GraphBuilder, _: usize, i, o| {
        g.add_stage(OperatorStage::new(i, o, Skip::new(1)));
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
                g.add_stage(OperatorStage::new(i, o, Map::new(|x: u64| x + 1)));
            },
        );
        stress(n, 0..100, &[n as u64 - 1, n as u64], mode, |g, k, i, o| {
            if k == n / 2 {
                g.add_stage(OperatorStage::new(i, o, Take::new(2)));
            } else {
                g.add_stage(OperatorStage::new(i, o, Map::new(|x: u64| x + 1)));
            }
        });
        stress(10_000, 0..10, &[0], mode, |g, _, i, o| {
            g.add_stage(OperatorStage::new(i, o, Take::new(1)));
        });
        stress(
            300,
            0..600,
            &(300..600).collect::<Vec<_>>(),
            mode,
            |g, _, i, o| {
                g.add_stage(OperatorStage::new(i, o, Skip::new(1)));
            },
        );
    }
}

#[test]
fn the_gate_changes_the_work_not_the_result() {
    let build = || {
        chain(0..1_000u64, 10, |g, k, i, o| {
            if k == 5 {
                g.add_stage(OperatorStage::new(i, o, Take::new(500)));
            } else {
                g.add_stage(OperatorStage::new(i, o, Identity::new()));
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
// One definition, two forms: the same operators fused by a Flow, and one stage per hop
// ---------------------------------------------------------------------------------------

use futures::StreamExt;
use rs_impl::flow::ops::{Filter, Scan};
use rs_impl::flow::{BoxFlow, Flow, StreamSource};
use rs_impl::subscriber::{collect, RequestStrategy};

/// Stage `k` of a mixed chain: maps, filters, scans, skips and takes one after another.
fn mixed(g: &mut GraphBuilder, k: usize, i: Inlet<u64>, o: Outlet<u64>) {
    match k % 6 {
        0 => g.add_stage(OperatorStage::new(
            i,
            o,
            Map::new(|x: u64| x.wrapping_mul(3).wrapping_add(1)),
        )),
        1 => g.add_stage(OperatorStage::new(i, o, Filter::new(|x: &u64| x % 16 != 5))),
        2 => g.add_stage(OperatorStage::new(
            i,
            o,
            Scan::new(7u64, |a: &u64, x: u64| a.wrapping_add(x) % 1_000_003),
        )),
        3 => g.add_stage(OperatorStage::new(i, o, Skip::new(2))),
        4 => g.add_stage(OperatorStage::new(i, o, Identity::new())),
        _ => g.add_stage(OperatorStage::new(i, o, Take::new(900 - k as u64))),
    };
}

/// Operator `k` of the same mixed chain, appended to a flow.
fn mixed_flow(f: BoxFlow<u64>, k: usize) -> BoxFlow<u64> {
    match k % 6 {
        0 => f.map(|x: u64| x.wrapping_mul(3).wrapping_add(1)).boxed(),
        1 => f.filter(|x: &u64| x % 16 != 5).boxed(),
        2 => f
            .scan(7u64, |a: &u64, x: u64| a.wrapping_add(x) % 1_000_003)
            .boxed(),
        3 => f.skip(2).boxed(),
        4 => f.identity().boxed(),
        _ => f.take(900 - k as u64).boxed(),
    }
}

/// Runs `flow` on one island to completion, fuzzed in `mode`: the elements (or the error)
/// and the island's counters.
fn run_flow(flow: &BoxFlow<u64>, mode: Option<u64>) -> (Result<Vec<u64>, Error>, Stats) {
    let (s, h) = collect(RequestStrategy::Unbounded);
    let mut island = flow.into_island(Box::new(s)).expect("one island");
    island.interpreter_mut().set_fuzzing(mode);
    futures::executor::block_on(&mut island);
    assert!(island.interpreter().is_completed());
    (h.wait(), island.interpreter().stats())
}

#[test]
fn fused_and_one_stage_per_hop_give_the_same_elements_and_signals() {
    for len in [1, 2, 5, 6, 13, 64, 65, 130, 200] {
        let (plain, want) = chain(0..1_000u64, len, mixed);
        let plain_stats = run(plain, None);
        let want = want.take().unwrap().unwrap();
        assert!(
            want.len() > 20,
            "len {len}: the shape lets elements through"
        );
        assert_eq!(plain_stats.finalised, len as u64 + 2);
        let mut flow: BoxFlow<u64> = Flow::from_iter(0..1_000u64).boxed();
        for k in 0..len {
            flow = mixed_flow(flow, k);
        }
        for mode in MODES {
            let (got, stats) = run_flow(&flow, mode);
            assert_eq!(got.unwrap(), want, "len {len}, {mode:?}");
            // Fused, the whole chain is one stage: no interpreter event per hop.
            assert_eq!(stats.finalised, 1, "len {len}");
            if mode.is_none() {
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
fn failure_crosses_the_operators_and_a_panicking_operator_fails_the_stream() {
    // One stage per hop: upstream failure crosses the chain.
    let mut g = GraphBuilder::new();
    let mut i = failing_source(&mut g, 5);
    for k in 0..4 {
        let (o, next) = g.connection::<u64>();
        if k % 2 == 0 {
            g.add_stage(OperatorStage::new(i, o, Map::new(|x: u64| x * 2)));
        } else {
            g.add_stage(OperatorStage::new(i, o, Identity::new()));
        }
        i = next;
    }
    let (sink, seen) = CollectSink::new(i);
    g.add_stage(sink);
    let mut interpreter = g.build().unwrap();
    interpreter.execute(u64::MAX);
    let err = seen.take().unwrap().unwrap_err();
    assert!(err.to_string().contains("source failed"), "{err}");

    // Fused: the same.
    let failing = || {
        futures::stream::iter(0..5u64)
            .map(Ok)
            .chain(futures::stream::once(async {
                Err(Error::msg("source failed"))
            }))
    };
    let flow = Flow::from_try_stream(failing)
        .map(|x| x * 2)
        .identity()
        .map(|x| x * 2)
        .boxed();
    let (got, _) = run_flow(&flow, None);
    assert!(got.unwrap_err().to_string().contains("source failed"));

    // An operator that panics fails the stream: the sink gets an error, the source is
    // cancelled, the island finishes; fused and one stage per hop.
    quiet_deliberate_panics();
    let (mut interpreter, seen) = chain(0..100u64, 4, |g, k, i, o| {
        if k == 2 {
            g.add_stage(OperatorStage::new(
                i,
                o,
                Map::new(|x: u64| {
                    assert!(x != 7, "deliberate: the operator fails at 7");
                    x
                }),
            ));
        } else {
            g.add_stage(OperatorStage::new(i, o, Identity::new()));
        }
    });
    interpreter.execute(u64::MAX);
    assert!(interpreter.is_completed());
    let err = seen.take().unwrap().unwrap_err();
    assert!(
        matches!(
            err.downcast_ref::<IslandError>(),
            Some(IslandError::StagePanicked { .. })
        ),
        "{err}"
    );

    let flow = Flow::from_iter(0..100u64)
        .identity()
        .map(|x: u64| {
            assert!(x != 7, "deliberate: the operator fails at 7");
            x
        })
        .identity()
        .boxed();
    let (got, _) = run_flow(&flow, None);
    let err = got.unwrap_err();
    assert!(
        matches!(
            err.downcast_ref::<IslandError>(),
            Some(IslandError::StagePanicked { .. })
        ),
        "{err}"
    );
}

#[test]
fn a_fused_chain_is_released_when_its_take_completes_while_the_source_goes_on() {
    let token = Arc::new(());
    let held = token.clone();
    let flow = Flow::from_iter(0u64..)
        .map(move |x: u64| {
            let _ = &held;
            x + 1
        })
        .take(3)
        .boxed();
    assert_eq!(Arc::strong_count(&token), 2);
    let (got, stats) = run_flow(&flow, None);
    assert_eq!(got.unwrap(), vec![1, 2, 3]);
    assert_eq!(stats.finalised, 1);
    // The blueprint still holds the closure (it can be materialised again); the island's
    // copy went with its stage.
    assert_eq!(Arc::strong_count(&token), 2);
    drop(flow);
    assert_eq!(Arc::strong_count(&token), 1);
}

/// An operator of a user's own, with state: the running maximum, emitted when it grows.
#[derive(Clone, Default)]
struct RisingMax {
    max: Option<u64>,
}

impl rs_impl::flow::Operator<u64> for RisingMax {
    type Out = u64;
    fn on_next<E: rs_impl::flow::Emit<u64> + ?Sized>(
        &mut self,
        x: u64,
        out: &mut E,
    ) -> rs_impl::flow::Signal {
        if self.max.is_some_and(|m| m >= x) {
            return rs_impl::flow::Signal::Continue;
        }
        self.max = Some(x);
        out.emit(x)
    }
}

#[test]
fn a_users_operator_runs_fused_and_as_a_stage_alike() {
    let input = [3u64, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9];
    let (plain, want) = chain(input, 1, |g, _, i, o| {
        g.add_stage(OperatorStage::new(i, o, RisingMax::default()));
    });
    run(plain, None);
    assert_eq!(want.take().unwrap().unwrap(), vec![3, 4, 5, 9]);
    let flow = Flow::from_iter(input).apply(RisingMax::default()).boxed();
    for mode in MODES {
        let (got, stats) = run_flow(&flow, mode);
        assert_eq!(got.unwrap(), vec![3, 4, 5, 9]);
        assert_eq!(stats.finalised, 1);
    }
}
