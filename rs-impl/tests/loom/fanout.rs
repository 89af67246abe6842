//! The fanout under loom: capacity 1–2, two subscribers, 2–3 elements, `Arc` payloads (loom's:
//! any element not dropped by the end of an execution is reported as a leak). Each model runs
//! the real channel, and once more in a child process with one of its mechanisms switched off
//! (`rs_impl::loom::inject(Fault::…)`, loom builds only): the broken twin that loom must
//! reject.

use std::sync::{Arc as StdArc, Weak};
use std::task::{Context, Poll, Wake, Waker};

use rs_api::{Error, Publisher, Subscriber, SubscriptionRef, UNBOUNDED};
use rs_impl::fanout::{self, FanoutConfig};
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use rs_impl::loom::sync::{Arc, Condvar, Mutex};
use rs_impl::loom::thread;
use rs_impl::loom::Fault;

/// The element type: loom's `Arc`, so that a leaked element fails the model.
type Item = Arc<u64>;

/// What a recording subscriber saw, shared with the model's threads.
struct Seen {
    /// Set while a signal runs (Relaxed RMWs: they see overlaps without adding edges).
    in_signal: AtomicBool,
    got: Mutex<Vec<u64>>,
    completes: AtomicUsize,
    errors: AtomicUsize,
    violations: Mutex<Vec<String>>,
    subscription: Mutex<Option<SubscriptionRef>>,
    subscribed: Condvar,
}

impl Seen {
    fn new() -> Arc<Seen> {
        Arc::new(Seen {
            in_signal: AtomicBool::new(false),
            got: Mutex::new(Vec::new()),
            completes: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
            violations: Mutex::new(Vec::new()),
            subscription: Mutex::new(None),
            subscribed: Condvar::new(),
        })
    }

    fn wait_subscription(&self) -> SubscriptionRef {
        let mut slot = self.subscription.lock();
        loop {
            if let Some(s) = slot.clone() {
                return s;
            }
            slot = self.subscribed.wait(slot);
        }
    }

    fn got(&self) -> Vec<u64> {
        self.got.lock().clone()
    }

    /// Asserts no signal overlapped or followed the end; releases the subscription.
    fn finish(&self) {
        self.subscription.lock().take();
        let v = std::mem::take(&mut *self.violations.lock());
        assert!(v.is_empty(), "{}", v.join("; "));
        let ends = self.completes.load(Ordering::Acquire) + self.errors.load(Ordering::Acquire);
        assert!(ends <= 1, "rule 1.7: {ends} terminal signals");
    }
}

/// A recording subscriber with a `Weak`-able token (3.13).
struct Rec {
    seen: Arc<Seen>,
    initial: u64,
    ended: bool,
    _token: StdArc<()>,
}

impl Rec {
    fn new(initial: u64) -> (Rec, Arc<Seen>, Weak<()>) {
        let seen = Seen::new();
        let token = StdArc::new(());
        let weak = StdArc::downgrade(&token);
        (
            Rec {
                seen: seen.clone(),
                initial,
                ended: false,
                _token: token,
            },
            seen,
            weak,
        )
    }

    fn enter(&self, signal: &str) {
        if self.seen.in_signal.swap(true, Ordering::Relaxed) {
            self.seen
                .violations
                .lock()
                .push(format!("rule 1.3: {signal} overlaps another signal"));
        }
        if self.ended {
            self.seen
                .violations
                .lock()
                .push(format!("rule 1.7: {signal} after the terminal signal"));
        }
    }

    fn exit(&self) {
        self.seen.in_signal.store(false, Ordering::Relaxed);
    }
}

impl Subscriber<Item> for Rec {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        self.enter("on_subscribe");
        *self.seen.subscription.lock() = Some(s.clone());
        self.seen.subscribed.notify_all();
        if self.initial > 0 {
            s.request(self.initial);
        }
        self.exit();
    }
    fn on_next(&mut self, item: Item) {
        self.enter("on_next");
        self.seen.got.lock().push(*item);
        self.exit();
    }
    fn on_error(&mut self, _e: Error) {
        self.enter("on_error");
        self.ended = true;
        self.seen.errors.fetch_add(1, Ordering::AcqRel);
        self.exit();
    }
    fn on_complete(&mut self) {
        self.enter("on_complete");
        self.ended = true;
        self.seen.completes.fetch_add(1, Ordering::AcqRel);
        self.exit();
    }
}

fn config(initial: usize, max: usize) -> FanoutConfig {
    FanoutConfig::new(max).grow_from(initial)
}

/// Cancel frees the hold at once; join and cancel race publishing. Interleaving: subscriber A
/// (unbounded) is subscribed; thread P sends 3 elements with `try_send` (capacity 1 growing to
/// 2) while thread J subscribes B (demand 1) and then cancels it — B's join, its one delivery,
/// its cancel and each send interleave. In every interleaving: A gets exactly the elements
/// sent, in order; B gets at most one of them and no terminal signal; once everyone is done the
/// buffer holds nothing (A has read everything and B's hold is gone) and B is dropped (3.13);
/// `complete` completes A; every element is dropped (no leak).
pub(crate) fn join_and_cancel_racing_publish() {
    let (tx, p) = fanout::channel_with::<Item>(config(1, 2));
    let (a, a_seen, _) = Rec::new(UNBOUNDED);
    p.subscribe(Box::new(a));
    let (b, b_seen, b_token) = Rec::new(1);
    let producer = thread::spawn(move || {
        let mut sent = Vec::new();
        for i in 0..3 {
            if tx.try_send(Arc::new(i)).is_ok() {
                sent.push(i);
            }
        }
        (tx, sent)
    });
    let joiner = {
        let p = p.clone();
        let b_seen = b_seen.clone();
        thread::spawn(move || {
            p.subscribe(Box::new(b));
            b_seen.wait_subscription().cancel();
        })
    };
    let (tx, sent) = producer.join().unwrap();
    joiner.join().unwrap();
    assert_eq!(
        a_seen.got(),
        sent,
        "rule 1.1/1.3: A got something else than what was sent"
    );
    let b_got = b_seen.got();
    assert!(
        b_got.len() <= 1,
        "rule 1.1: B got {b_got:?} for a demand of 1"
    );
    assert!(b_got.iter().all(|x| sent.contains(x)));
    assert_eq!(
        p.stats().buffered,
        0,
        "cancel must free the subscriber's hold on the buffer at once"
    );
    assert!(
        b_token.upgrade().is_none(),
        "rule 3.13: B kept after cancel"
    );
    tx.complete();
    drop(tx);
    assert_eq!(
        a_seen.completes.load(Ordering::Acquire),
        1,
        "complete completes"
    );
    assert_eq!(
        b_seen.completes.load(Ordering::Acquire) + b_seen.errors.load(Ordering::Acquire),
        0
    );
    a_seen.finish();
    b_seen.finish();
}

/// No lost wake-up between requests and parking. Interleaving: subscribers S (no demand) and R
/// (unbounded); two elements are sent (R reads them, S holds them); then threads 1 and 2 each
/// request 1 for S, racing each other and the drainer, which parks S whenever its demand runs
/// out. In every interleaving: S gets both elements, in order, serially.
pub(crate) fn requests_from_two_threads() {
    let (tx, p) = fanout::channel_with::<Item>(config(2, 2));
    let (s, s_seen, _) = Rec::new(0);
    let (r, r_seen, _) = Rec::new(UNBOUNDED);
    p.subscribe(Box::new(s));
    p.subscribe(Box::new(r));
    tx.try_send(Arc::new(0)).unwrap();
    tx.try_send(Arc::new(1)).unwrap();
    let sub = s_seen.wait_subscription();
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let sub = sub.clone();
            thread::spawn(move || sub.request(1))
        })
        .collect();
    drop(sub);
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        s_seen.got(),
        vec![0, 1],
        "lost wake-up: S has demand 2 and 2 elements wait"
    );
    assert_eq!(r_seen.got(), vec![0, 1]);
    assert_eq!(p.stats().buffered, 0);
    tx.complete();
    s_seen.finish();
    r_seen.finish();
}

/// Completion racing a late join. One element waits in the buffer (nobody subscribed yet);
/// thread 1 completes the stream while thread 2 subscribes L with a demand of 1. In every
/// interleaving L gets the element and then exactly one `on_complete`, whether it joined before
/// the completion (then parked, out of demand, when it arrives) or after it (a late subscriber
/// of a completed stream gets the retained backlog, then completes).
pub(crate) fn completion_racing_a_late_join() {
    let (tx, p) = fanout::channel_with::<Item>(config(1, 1));
    tx.try_send(Arc::new(0)).unwrap();
    let (l, l_seen, l_token) = Rec::new(1);
    let completer = thread::spawn(move || tx.complete());
    let joiner = {
        let p = p.clone();
        thread::spawn(move || p.subscribe(Box::new(l)))
    };
    completer.join().unwrap();
    joiner.join().unwrap();
    assert_eq!(l_seen.got(), vec![0]);
    assert_eq!(
        l_seen.completes.load(Ordering::Acquire),
        1,
        "rule 1.5: the late subscriber must complete"
    );
    assert!(
        l_token.upgrade().is_none(),
        "rule 1.6: kept after on_complete"
    );
    l_seen.finish();
}

/// Records wakes.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: StdArc<Self>) {
        self.0.store(true, Ordering::Release);
    }
    fn wake_by_ref(self: &StdArc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// The producer's async send racing a subscriber's request: no lost wake-up. Capacity 1, held
/// by S (no demand); the main thread polls `send` while thread 1 requests 1 for S, which
/// delivers the held element on thread 1 and frees the slot (into the drainer's credit, handed
/// back to the senders because one waits). In every interleaving: if the first poll was
/// pending, the waker was woken; the next poll sends; S got its element.
pub(crate) fn async_send_racing_a_request() {
    let (tx, p) = fanout::channel_with::<Item>(config(1, 1));
    let (s, s_seen, _) = Rec::new(0);
    p.subscribe(Box::new(s));
    tx.try_send(Arc::new(0)).unwrap();
    let sub = s_seen.wait_subscription();
    let requester = thread::spawn(move || sub.request(1));
    let flag = StdArc::new(Flag(AtomicBool::new(false)));
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = Box::pin(tx.send(Arc::new(1)));
    let first = fut.as_mut().poll(&mut cx);
    requester.join().unwrap();
    if first.is_pending() {
        assert!(
            flag.0.load(Ordering::Acquire),
            "lost wake-up: the sender waits although the slot was freed"
        );
        assert!(
            matches!(fut.as_mut().poll(&mut cx), Poll::Ready(Ok(()))),
            "woken, but still no room"
        );
    } else {
        assert!(matches!(first, Poll::Ready(Ok(()))));
    }
    drop(fut);
    assert_eq!(s_seen.got(), vec![0]);
    // S has read what it asked for and holds the rest: its cancel lets everything go.
    s_seen.wait_subscription().cancel();
    drop(tx);
    s_seen.finish();
}

/// A blocked sender (a clone of the sender, on its own thread) racing a subscriber's request:
/// no lost wake-up when the freed space sits with the drainer. Capacity 1, held by S (no
/// demand); thread P blocks in `blocking_send(1)` (it finds no permit, marks itself waiting
/// and runs a pass of its own before sleeping) while the main thread requests 2 for S, whose
/// pass frees the slot into its credit and must hand it back to the waiting sender. In every
/// interleaving P's send returns, and S gets 0 then 1.
pub(crate) fn blocked_sender_racing_a_request() {
    let (tx, p) = fanout::channel_with::<Item>(config(1, 1));
    let (s, s_seen, _) = Rec::new(0);
    p.subscribe(Box::new(s));
    tx.try_send(Arc::new(0)).unwrap();
    let sub = s_seen.wait_subscription();
    let sender = {
        let tx = tx.clone();
        thread::spawn(move || tx.blocking_send(Arc::new(1)).is_ok())
    };
    sub.request(2);
    assert!(sender.join().unwrap(), "the blocked send failed");
    assert_eq!(
        s_seen.got(),
        vec![0, 1],
        "S has demand 2 and both were sent"
    );
    drop(sub);
    tx.complete();
    s_seen.finish();
}

/// A burst racing a request (issue 24: a burst's elements stay in the write's loop while
/// nothing needs the pass): a sender's `blocking_send_all` of four elements into a buffer of
/// 2, S with demand 1 asking for 3 more from the main thread. The element after the request
/// must go back to the pass (the request is posted), the permits stay exact (the first goes
/// through, the next two fill the buffer, the sender blocks on the fourth until the request
/// frees space, and is woken), and S gets all four in order.
pub(crate) fn burst_racing_a_request() {
    let (tx, p) = fanout::channel_with::<Item>(config(2, 2));
    let (s, s_seen, _) = Rec::new(1);
    p.subscribe(Box::new(s));
    let sub = s_seen.wait_subscription();
    let sender = {
        let tx = tx.clone();
        thread::spawn(move || tx.blocking_send_all((1..5).map(Arc::new)).is_ok())
    };
    sub.request(3);
    assert!(sender.join().unwrap(), "the burst failed");
    assert_eq!(
        s_seen.got(),
        vec![1, 2, 3, 4],
        "S has demand 4 and all four were sent"
    );
    drop(sub);
    tx.complete();
    s_seen.finish();
}

use std::future::Future;

#[test]
fn fanout_join_and_cancel_racing_publish() {
    loom::model(join_and_cancel_racing_publish);
}

crate::loom_rejects!(
    fanout_join_and_cancel_model_rejects_a_leave_that_keeps_its_hold,
    "cancel must free the subscriber's hold",
    fault Fault::LeaveKeepsHold,
    join_and_cancel_racing_publish
);

#[test]
fn fanout_requests_from_two_threads() {
    loom::model(requests_from_two_threads);
}

crate::loom_rejects!(
    fanout_requests_model_rejects_parking_without_a_recheck,
    "lost wake-up: S has demand 2",
    fault Fault::ParkWithoutRecheck,
    requests_from_two_threads
);

#[test]
fn fanout_completion_racing_a_late_join() {
    loom::model(completion_racing_a_late_join);
}

crate::loom_rejects!(
    fanout_completion_model_rejects_completion_that_skips_parked_subscribers,
    "rule 1.5: the late subscriber must complete",
    fault Fault::CompleteSkipsParked,
    completion_racing_a_late_join
);

#[test]
fn fanout_async_send_racing_a_request() {
    loom::model(async_send_racing_a_request);
}

crate::loom_rejects!(
    fanout_async_send_model_rejects_a_drain_that_does_not_wake_the_sender,
    "lost wake-up: the sender waits",
    fault Fault::NoWakeOnSpace,
    async_send_racing_a_request
);

#[test]
fn fanout_blocked_sender_racing_a_request() {
    loom::model(blocked_sender_racing_a_request);
}

crate::loom_rejects!(
    fanout_blocked_sender_model_rejects_a_drain_that_keeps_the_space,
    "deadlock",
    fault Fault::NoWakeOnSpace,
    blocked_sender_racing_a_request
);

#[test]
fn fanout_burst_racing_a_request() {
    loom::model(burst_racing_a_request);
}

crate::loom_rejects!(
    fanout_burst_model_rejects_a_drain_that_keeps_the_space,
    "deadlock",
    fault Fault::NoWakeOnSpace,
    burst_racing_a_request
);
