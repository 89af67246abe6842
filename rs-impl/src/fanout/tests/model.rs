//! Randomized model-based test: the fanout (channel and processor) against a simple reference,
//! at least 10,000,000 operations in release mode (join, leave, request, cancel, publish,
//! complete, error, panic), with positions started just below the `u64` wrap point.
//!
//! The reference keeps the retained elements and, per subscriber, its next position and its
//! demand: a subscriber's queue is the retained elements from its next position on. Everything
//! in this test runs on one thread, so each operation ends with the fanout quiescent: every
//! subscriber with demand has received every element available to it. The recording
//! subscribers log every signal they get and every call they make from inside a signal; after
//! each operation the log is replayed against the reference, event by event, and then the
//! quiescent state (buffered elements, subscribers, closed producer, upstream demand) is
//! compared. Any divergence fails with the seed and the operation number.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rs_api::{
    is_unbounded, Error, Publisher, SpecViolation, Subscriber, Subscription, SubscriptionRef,
    UNBOUNDED,
};

use super::Rng;
use crate::fanout::{
    channel_with, FanoutConfig, FanoutError, FanoutProcessor, FanoutPublisher, FanoutSender,
    FanoutStats, LastSubscriberPolicy,
};
use crate::producer::{ProducerError, TrySendError};

/// Operations in all (release); a debug build runs fewer.
const TOTAL_OPS: u64 = if cfg!(debug_assertions) {
    300_000
} else {
    10_000_000
};

/// The panic message of the deliberate panics (silenced in the panic hook).
const DELIBERATE: &str = "model: deliberate subscriber panic";

#[derive(Debug, Clone, PartialEq)]
enum Ev {
    Subscribed,
    Next(u64),
    Complete,
    Error(String),
    /// A request the subscriber made from inside a signal.
    Request(u64),
    /// A cancel the subscriber made from inside `on_next`.
    Cancel,
    /// It is about to panic in `on_next`.
    Panic,
}

type Log = Arc<Mutex<Vec<(usize, Ev)>>>;

/// What the test keeps of a subscriber: its subscription (once subscribed) and its panic switch.
type Controls = (Arc<Mutex<Option<SubscriptionRef>>>, Arc<AtomicBool>);

/// What a recording subscriber does by itself.
#[derive(Debug, Clone, Copy)]
struct Behaviour {
    initial: u64,
    /// Requested from inside every `on_next`.
    per_next: u64,
    /// Cancels from inside the `n`-th `on_next`.
    cancel_at: Option<u64>,
}

struct Recorder {
    id: usize,
    log: Log,
    behaviour: Behaviour,
    armed: Arc<AtomicBool>,
    handle: Arc<Mutex<Option<SubscriptionRef>>>,
    sub: Option<SubscriptionRef>,
    seen: u64,
}

impl Recorder {
    fn push(&self, ev: Ev) {
        self.log.lock().unwrap().push((self.id, ev));
    }
}

impl Subscriber<u64> for Recorder {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        self.push(Ev::Subscribed);
        *self.handle.lock().unwrap() = Some(s.clone());
        if self.behaviour.initial > 0 {
            self.push(Ev::Request(self.behaviour.initial));
            s.request(self.behaviour.initial);
        }
        self.sub = Some(s);
    }

    fn on_next(&mut self, v: u64) {
        self.push(Ev::Next(v));
        self.seen += 1;
        if self.armed.load(Ordering::Relaxed) {
            self.push(Ev::Panic);
            std::panic::panic_any(DELIBERATE);
        }
        if self.behaviour.cancel_at == Some(self.seen) {
            self.push(Ev::Cancel);
            if let Some(s) = &self.sub {
                s.cancel();
            }
            return;
        }
        if self.behaviour.per_next > 0 {
            self.push(Ev::Request(self.behaviour.per_next));
            if let Some(s) = &self.sub {
                s.request(self.behaviour.per_next);
            }
        }
    }

    fn on_error(&mut self, e: Error) {
        self.sub = None;
        self.push(Ev::Error(error_kind(&e)));
    }

    fn on_complete(&mut self) {
        self.sub = None;
        self.push(Ev::Complete);
    }
}

fn error_kind(e: &Error) -> String {
    if let Some(v) = e.spec_violation() {
        return format!("spec {}", v.rule());
    }
    if let Some(f) = e.downcast_ref::<FanoutError>() {
        return format!("{f:?}");
    }
    if let Some(f) = e.downcast_ref::<ProducerError>() {
        return format!("{f:?}");
    }
    e.to_string()
}

const UPSTREAM_FAILURE: &str = "model: the producer failed";

/// The processor's upstream, driven by the test.
#[derive(Default)]
struct Upstream {
    requested: AtomicU64,
    cancelled: AtomicBool,
}

impl Subscription for Upstream {
    fn request(&self, n: u64) {
        self.requested.fetch_add(n, Ordering::Relaxed);
    }
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }
}

/// The fanout under test: a channel or a processor with a hand-driven upstream.
enum Subject {
    Channel(Option<FanoutSender<u64>>, FanoutPublisher<u64>),
    Processor(FanoutProcessor<u64>, Arc<Upstream>, u64),
}

impl Subject {
    fn publisher(&self) -> &dyn Publisher<u64> {
        match self {
            Subject::Channel(_, p) => p,
            Subject::Processor(p, _, _) => p,
        }
    }

    fn stats(&self) -> FanoutStats {
        match self {
            Subject::Channel(_, p) => p.stats(),
            Subject::Processor(p, _, _) => p.stats(),
        }
    }
}

/// One subscriber in the reference.
#[derive(Debug)]
struct RefSub {
    next: u64,
    demand: u64,
    emitted: u64,
    subscribed: bool,
    /// Must get no further signal (cancelled, panicked, ended).
    gone: bool,
    /// An error is due (request(0) made).
    bad_request: bool,
}

impl RefSub {
    fn outstanding(&self) -> u64 {
        if self.demand == UNBOUNDED {
            UNBOUNDED
        } else {
            self.demand - self.emitted
        }
    }
}

/// The reference.
struct Model {
    max: usize,
    policy: LastSubscriberPolicy,
    read: u64,
    write: u64,
    start: u64,
    retained: VecDeque<u64>,
    subs: BTreeMap<usize, RefSub>,
    completed: bool,
    failed: Option<String>,
    /// Whether the fanout shut down when its last subscriber left.
    shut_down: bool,
}

impl Model {
    fn alive(&self) -> usize {
        self.subs.values().filter(|s| !s.gone).count()
    }

    /// Drops the retained elements every current subscriber has passed.
    fn reclaim(&mut self) {
        let live: Vec<u64> = self
            .subs
            .values()
            .filter(|s| !s.gone)
            .map(|s| s.next)
            .collect();
        if live.is_empty() {
            return;
        }
        let min = live
            .iter()
            .map(|n| n.wrapping_sub(self.read))
            .min()
            .unwrap();
        for _ in 0..min {
            self.retained.pop_front();
            self.read = self.read.wrapping_add(1);
        }
    }

    /// A subscriber left by cancel, panic or `request(0)`.
    fn left(&mut self, id: usize) {
        self.subs.get_mut(&id).unwrap().gone = true;
        self.reclaim();
        if self.alive() == 0
            && !self.completed
            && self.failed.is_none()
            && self.policy == LastSubscriberPolicy::CancelUpstream
        {
            self.fail(format!("{:?}", FanoutError::ShutDown));
            self.shut_down = true;
        }
    }

    fn fail(&mut self, kind: String) {
        if self.completed || self.failed.is_some() {
            return;
        }
        for s in self.subs.values_mut() {
            if !s.gone {
                s.bad_request = false;
                s.demand = 0; // no element any more; the error is due
            }
        }
        self.failed = Some(kind);
        self.retained.clear();
        self.read = self.write;
    }

    fn add_demand(&mut self, id: usize, n: u64) {
        let s = self.subs.get_mut(&id).unwrap();
        if s.gone || s.bad_request || self.failed.is_some() {
            return;
        }
        if n == 0 {
            s.bad_request = true;
            return;
        }
        s.demand = if is_unbounded(n) || s.demand == UNBOUNDED {
            UNBOUNDED
        } else {
            let d = s.demand.saturating_add(n);
            if is_unbounded(d) {
                UNBOUNDED
            } else {
                d
            }
        };
    }
}

struct Run {
    seed: u64,
    op: u64,
    rng: Rng,
    log: Log,
    model: Model,
    subject: Subject,
    handles: BTreeMap<usize, Controls>,
    next_id: usize,
    published: u64,
    /// The last operations, for the failure message.
    trace: VecDeque<String>,
}

impl Run {
    fn fail(&self, what: String) -> ! {
        let trace: Vec<&String> = self.trace.iter().collect();
        panic!(
            "model divergence (seed {:#x}, operation {}): {what}\nlast operations: {trace:#?}\n\
             reference: read {} write {} retained {:?} completed {} failed {:?}\nsubscribers: {:#?}",
            self.seed,
            self.op,
            self.model.read.wrapping_sub(self.model.start),
            self.model.write.wrapping_sub(self.model.start),
            self.model.retained,
            self.model.completed,
            self.model.failed,
            self.model.subs,
        );
    }

    fn note(&mut self, what: String) {
        if self.trace.len() == 40 {
            self.trace.pop_front();
        }
        self.trace.push_back(what);
    }

    /// Replays the log against the reference.
    fn replay(&mut self) {
        let events = std::mem::take(&mut *self.log.lock().unwrap());
        for (id, ev) in events {
            self.note(format!("  event {id}: {ev:?}"));
            let m = &mut self.model;
            let Some(s) = m.subs.get_mut(&id) else {
                self.fail(format!("event {ev:?} from unknown subscriber {id}"));
            };
            if s.gone && !matches!(ev, Ev::Error(_) | Ev::Complete) {
                self.fail(format!("subscriber {id} got {ev:?} after it left"));
            }
            match ev {
                Ev::Subscribed => {
                    if s.subscribed {
                        self.fail(format!("subscriber {id}: on_subscribe twice"));
                    }
                    s.subscribed = true;
                }
                Ev::Request(n) => m.add_demand(id, n),
                Ev::Next(v) => {
                    let expected = s.next.wrapping_sub(m.start);
                    let available = s.next != m.write;
                    if !s.subscribed || s.outstanding() == 0 || !available || v != expected {
                        let msg = format!(
                            "subscriber {id} got element {v}; expected {expected}, demand {}, \
                             available {available}",
                            s.outstanding()
                        );
                        self.fail(msg);
                    }
                    s.emitted += 1;
                    s.next = s.next.wrapping_add(1);
                    m.reclaim();
                }
                Ev::Cancel | Ev::Panic => m.left(id),
                Ev::Complete => {
                    if s.gone || !m.completed || s.next != m.write {
                        let msg = format!(
                            "subscriber {id}: unexpected on_complete (completed {}, caught up {})",
                            m.completed,
                            s.next == m.write
                        );
                        self.fail(msg);
                    }
                    s.gone = true;
                    m.reclaim();
                }
                Ev::Error(kind) => {
                    if s.bad_request {
                        if kind != "spec 3.9" {
                            self.fail(format!("subscriber {id}: {kind} instead of the 3.9 error"));
                        }
                        s.bad_request = false;
                        m.left(id);
                    } else if m.failed.as_deref() == Some(kind.as_str()) && !s.gone {
                        s.gone = true;
                    } else {
                        let msg = format!(
                            "subscriber {id}: unexpected on_error({kind}) (failed {:?})",
                            m.failed
                        );
                        self.fail(msg);
                    }
                }
            }
        }
        self.check_quiescent();
    }

    /// After an operation: nothing the fanout owes anyone is left undone.
    fn check_quiescent(&self) {
        let m = &self.model;
        for (id, s) in &m.subs {
            if s.gone {
                continue;
            }
            if !s.subscribed {
                self.fail(format!("subscriber {id} never got on_subscribe"));
            }
            if s.bad_request {
                self.fail(format!(
                    "subscriber {id}: request(0) not answered with on_error"
                ));
            }
            if m.failed.is_some() {
                self.fail(format!("subscriber {id} not failed after the failure"));
            }
            if s.next != m.write && s.outstanding() > 0 {
                self.fail(format!(
                    "subscriber {id} has demand {} and {} elements available, but got nothing",
                    s.outstanding(),
                    m.write.wrapping_sub(s.next)
                ));
            }
            if m.completed && s.next == m.write {
                self.fail(format!(
                    "subscriber {id} caught up after completion, not completed"
                ));
            }
        }
        let stats = self.subject.stats();
        if stats.buffered != m.retained.len() {
            self.fail(format!(
                "{} elements buffered, the reference retains {}",
                stats.buffered,
                m.retained.len()
            ));
        }
        if stats.subscribers != m.alive() {
            self.fail(format!(
                "{} subscribers, the reference has {}",
                stats.subscribers,
                m.alive()
            ));
        }
        if stats.buffered > m.max || stats.capacity > m.max {
            self.fail(format!("memory beyond the maximum: {stats:?}"));
        }
        if let Subject::Processor(_, up, sent) = &self.subject {
            let requested = up.requested.load(Ordering::Relaxed);
            if requested < *sent {
                self.fail(format!("{sent} sent for {requested} requested"));
            }
            let outstanding = requested - sent;
            if !(m.completed || m.failed.is_some())
                && outstanding as usize > m.max - m.retained.len()
            {
                self.fail(format!(
                    "upstream demand {outstanding} exceeds the free space {}",
                    m.max - m.retained.len()
                ));
            }
            if up.cancelled.load(Ordering::Relaxed) != m.shut_down {
                self.fail(format!(
                    "upstream cancelled: {}, shut down in the reference: {}",
                    up.cancelled.load(Ordering::Relaxed),
                    m.shut_down
                ));
            }
        }
    }

    fn join(&mut self) {
        let id = self.next_id;
        self.next_id += 1;
        let r = &mut self.rng;
        let behaviour = Behaviour {
            initial: match r.below(6) {
                0 | 1 => 0,
                2 => 1,
                3 => 1 + r.below(4),
                4 => UNBOUNDED,
                _ => r.below(3),
            },
            per_next: match r.below(4) {
                0 => 1,
                1 => r.below(3),
                _ => 0,
            },
            cancel_at: (r.below(10) == 0).then(|| 1 + r.below(5)),
        };
        self.note(format!("join {id} {behaviour:?}"));
        let handle = Arc::new(Mutex::new(None));
        let armed = Arc::new(AtomicBool::new(false));
        self.handles.insert(id, (handle.clone(), armed.clone()));
        let m = &mut self.model;
        m.subs.insert(
            id,
            RefSub {
                next: m.read,
                demand: 0,
                emitted: 0,
                subscribed: false,
                gone: false,
                bad_request: false,
            },
        );
        let rec = Recorder {
            id,
            log: self.log.clone(),
            behaviour,
            armed,
            handle,
            sub: None,
            seen: 0,
        };
        self.subject.publisher().subscribe(Box::new(rec));
        self.replay_join(id);
    }

    /// Like `replay`, but a late subscriber after a failure expects on_subscribe then the
    /// error with no demand effects (its requests are no-ops).
    fn replay_join(&mut self, id: usize) {
        if self.model.failed.is_some() {
            let events = std::mem::take(&mut *self.log.lock().unwrap());
            let kinds: Vec<&Ev> = events
                .iter()
                .filter(|(i, _)| *i == id)
                .map(|(_, e)| e)
                .collect();
            let want = Ev::Error(self.model.failed.clone().unwrap());
            let ok = kinds.first() == Some(&&Ev::Subscribed)
                && kinds.last() == Some(&&want)
                && kinds[1..kinds.len() - 1]
                    .iter()
                    .all(|e| matches!(e, Ev::Request(_)));
            if !ok {
                self.fail(format!(
                    "late subscriber {id} after the failure got {kinds:?}"
                ));
            }
            self.model.subs.get_mut(&id).unwrap().gone = true;
            self.check_quiescent();
        } else {
            self.replay();
        }
    }

    fn pick(&mut self) -> Option<usize> {
        let alive: Vec<usize> = self
            .model
            .subs
            .iter()
            .filter(|(_, s)| !s.gone)
            .map(|(id, _)| *id)
            .collect();
        (!alive.is_empty()).then(|| alive[self.rng.below(alive.len() as u64) as usize])
    }

    fn request(&mut self) {
        let Some(id) = self.pick() else { return };
        let n = match self.rng.below(20) {
            0 => 0,
            1 => UNBOUNDED,
            2 => rs_api::UNBOUNDED_THRESHOLD - 1,
            _ => 1 + self.rng.below(4),
        };
        self.note(format!("request {id} {n}"));
        let handle = self.handles[&id].0.lock().unwrap().clone();
        self.model.add_demand(id, n);
        if let Some(h) = handle {
            h.request(n);
        }
        self.replay();
    }

    fn cancel(&mut self) {
        let Some(id) = self.pick() else { return };
        self.note(format!("cancel {id}"));
        let handle = self.handles[&id].0.lock().unwrap().clone();
        self.model.left(id);
        if let Some(h) = handle {
            h.cancel();
            if self.rng.below(4) == 0 {
                h.cancel(); // 3.7: idempotent
                h.request(1); // 3.6: a no-op
            }
        }
        self.replay();
    }

    fn arm_panic(&mut self) {
        let Some(id) = self.pick() else { return };
        self.note(format!("arm panic {id}"));
        self.handles[&id].1.store(true, Ordering::Relaxed);
    }

    fn publish(&mut self) {
        let m = &self.model;
        let v = m.write.wrapping_sub(m.start);
        let free = m.max - m.retained.len();
        let ended = m.completed || m.failed.is_some();
        match &mut self.subject {
            Subject::Channel(tx, _) => {
                let Some(tx) = tx.as_ref() else { return };
                let expect = if m.failed.is_some() {
                    "closed"
                } else if free == 0 {
                    "full"
                } else {
                    "sent"
                };
                let got = match tx.try_send(v) {
                    Ok(()) => "sent",
                    Err(TrySendError::Full(x)) => {
                        assert_eq!(x, v);
                        "full"
                    }
                    Err(TrySendError::Closed(x)) => {
                        assert_eq!(x, v);
                        "closed"
                    }
                };
                if got != expect {
                    self.fail(format!("try_send({v}): {got}, the reference says {expect}"));
                }
                if got != "sent" {
                    return;
                }
            }
            Subject::Processor(p, up, sent) => {
                if ended || up.requested.load(Ordering::Relaxed) == *sent {
                    return; // no upstream demand: an upstream may not send
                }
                *sent += 1;
                p.on_next(v);
            }
        }
        self.note(format!("published {v}"));
        let m = &mut self.model;
        m.retained.push_back(v);
        m.write = m.write.wrapping_add(1);
        self.published += 1;
        self.replay();
    }

    fn terminate(&mut self, error: bool) {
        self.note(format!("terminate (error: {error})"));
        let m = &mut self.model;
        if m.completed || m.failed.is_some() {
            return;
        }
        if error {
            m.fail(UPSTREAM_FAILURE.to_owned());
        } else {
            m.completed = true;
        }
        match &mut self.subject {
            Subject::Channel(tx, _) => {
                let tx = tx.take().expect("a sender until the end");
                if error {
                    tx.fail(Error::msg(UPSTREAM_FAILURE));
                } else {
                    tx.complete();
                }
            }
            Subject::Processor(p, _, _) => {
                if error {
                    p.on_error(Error::msg(UPSTREAM_FAILURE));
                } else {
                    p.on_complete();
                }
            }
        }
        self.replay();
    }
}

/// A round: one fanout with a random configuration, driven until it ended and a few late
/// subscribers came. Returns whether its positions crossed the `u64` wrap point.
fn round(seed: u64, ops_done: &mut u64) -> bool {
    let mut rng = Rng::new(seed);
    let max = 1usize << rng.below(5);
    let initial = 1usize << rng.below(u64::from(max.trailing_zeros()) + 1);
    let policy = if rng.below(2) == 0 {
        LastSubscriberPolicy::CancelUpstream
    } else {
        LastSubscriberPolicy::KeepBuffering
    };
    // Start just below the wrap point (sometimes at 0).
    let start = if rng.below(8) == 0 {
        0
    } else {
        u64::MAX - rng.below(64)
    };
    let mut config = FanoutConfig::new(max)
        .grow_from(initial)
        .last_subscriber(policy);
    config.start = start;
    let subject = if rng.below(2) == 0 {
        let (tx, p) = channel_with::<u64>(config);
        Subject::Channel(Some(tx), p)
    } else {
        let p = FanoutProcessor::<u64>::with_config(config);
        let up = Arc::new(Upstream::default());
        let mut handle = p.clone();
        handle.on_subscribe(up.clone());
        Subject::Processor(p, up, 0)
    };
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let mut run = Run {
        seed,
        op: *ops_done,
        rng,
        log,
        model: Model {
            max,
            policy,
            read: start,
            write: start,
            start,
            retained: VecDeque::new(),
            subs: BTreeMap::new(),
            completed: false,
            failed: None,
            shut_down: false,
        },
        subject,
        handles: BTreeMap::new(),
        next_id: 0,
        published: 0,
        trace: VecDeque::new(),
    };
    run.check_quiescent();
    let length = 50 + run.rng.below(1500);
    let mut after_end = 0;
    for _ in 0..length {
        run.op = *ops_done;
        *ops_done += 1;
        let ended = run.model.completed || run.model.failed.is_some();
        if ended {
            after_end += 1;
            if after_end > 30 {
                break;
            }
        }
        match run.rng.below(1000) {
            0..=69 => run.join(),
            70..=109 => run.cancel(),
            110..=289 => run.request(),
            290..=299 => run.arm_panic(),
            300..=996 => run.publish(),
            997 | 998 => run.terminate(false),
            _ => run.terminate(true),
        }
    }
    // Drop everything; a channel's sender dropped without complete fails the stream.
    if let Subject::Channel(tx, _) = &mut run.subject {
        if let Some(tx) = tx.take() {
            run.model.fail(format!("{:?}", ProducerError::Dropped));
            drop(tx);
            run.replay();
        }
    }
    run.model.start > run.model.write
}

#[test]
fn ten_million_operations_against_the_reference() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&DELIBERATE) {
            previous(info);
        }
    }));
    let mut ops = 0u64;
    let mut seed = 0x00fa_0000_u64;
    let (mut rounds, mut wrapped) = (0, 0);
    while ops < TOTAL_OPS {
        wrapped += u32::from(round(seed, &mut ops));
        seed += 1;
        rounds += 1;
    }
    eprintln!(
        "model: {ops} operations in {rounds} rounds ({wrapped} crossed the u64 wrap point), no \
         divergence"
    );
    assert!(
        wrapped * 4 > rounds,
        "too few rounds crossed the wrap point: {wrapped}"
    );
    let _ = SpecViolation::NonPositiveRequest; // (the 3.9 errors are compared by rule)
}
