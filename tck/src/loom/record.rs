//! What the loom scenarios observe: the probe subscriber, its shared record, and a subscription
//! that records what a subscriber does with it. All built on [`rs_impl::loom`] types, so that
//! loom sees every synchronisation.

use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc as StdArc, Mutex as StdMutex, Once};
use std::time::{Duration, Instant};

use rs_api::{Error, Subscriber, Subscription, SubscriptionRef};
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use rs_impl::loom::sync::{Arc, Condvar, Mutex};
use rs_impl::loom::thread;

use super::DEADLOCKED;

/// A subscription that records what its subscriber did with it.
#[derive(Debug, Default)]
pub(super) struct Recording {
    requested: AtomicBool,
    cancelled: AtomicBool,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct RecordingState {
    pub(super) requested: bool,
    pub(super) cancelled: bool,
}

impl Recording {
    pub(super) fn state(&self) -> RecordingState {
        RecordingState {
            requested: self.requested.load(Ordering::Acquire),
            cancelled: self.cancelled.load(Ordering::Acquire),
        }
    }
}

impl Subscription for Recording {
    fn request(&self, _n: u64) {
        self.requested.store(true, Ordering::Release);
    }
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }
}

/// Spawns a thread that waits for the subscription and requests `n` (see [`Record::request`]).
pub(super) fn spawn_request(record: &Arc<Record>, n: u64) -> thread::JoinHandle<()> {
    let record = record.clone();
    thread::spawn(move || record.request(n))
}

/// How long a wait of a scenario lasts in the normal build (real threads, one run) before it
/// fails naming what did not happen. Under loom there is no time: a wait that can never end
/// is a deadlock, which loom reports (and [`explain`] names).
const STD_WAIT_LIMIT: Duration = Duration::from_secs(10);

/// What the scenarios are waiting for right now, each phrased as the failure if it never
/// comes: read by the panic hook when loom reports a deadlock (all model threads run on one
/// OS thread, so one list serves every scenario thread).
static WAITING: StdMutex<Vec<String>> = StdMutex::new(Vec::new());

/// The waits seen by the panic hook at the last deadlock loom reported.
static DEADLOCKED_WAITING: StdMutex<Option<String>> = StdMutex::new(None);

fn lock_std<T>(m: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Loom's words for a deadlock (the start of its panic message).
const LOOM_DEADLOCK: &str = "deadlock; threads =";

/// The OS thread every model thread runs on (loom runs them as coroutines of the thread that
/// called `model`): a signal from any other thread comes from a thread loom does not know.
static MODEL_THREAD: StdMutex<Option<std::thread::ThreadId>> = StdMutex::new(None);

/// The first signal that came from a thread loom does not know, phrased as the failure.
static FOREIGN: StdMutex<Option<String>> = StdMutex::new(None);

/// Prints `line` as a note the `cargo test` harness puts first in the failure of an aborted
/// scenario ([`crate::harness::NOTE_PREFIX`]).
///
/// The whole line goes out in one `write` (stderr is unbuffered, and `eprintln!` writes its
/// pieces one by one): the standard library's panic message does not take stderr's lock, so
/// a model thread's panic printed between the pieces of a note would tear it, leaving a
/// line with the prefix and nothing after it (a CI failure of 2026-12-03, where the first
/// note of an aborted scenario came out empty).
fn note(line: &str) {
    use std::io::Write as _;
    let text = format!("{}{line}\n", crate::harness::NOTE_PREFIX);
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Installs (once) a panic hook that, when loom reports a deadlock, prints what the scenario
/// was waiting for (then any panic of the implementation's code as the deadlock unwinds: a
/// destructor's, which aborts the process), and for a violation (a panic whose message names a
/// rule) prints that: each as a note that the harness puts first in the failure even when the
/// panic aborts the process (the hook runs before any unwinding). Call it before each model: it also forgets the waits
/// and the foreign signal of the last one (the stacks of threads blocked in a deadlock are not
/// unwound).
pub(super) fn note_deadlocks() {
    static ONCE: Once = Once::new();
    if !rs_impl::loom::IS_LOOM {
        return; // no deadlock detection without loom: waits time out instead
    }
    lock_std(&WAITING).clear();
    lock_std(&DEADLOCKED_WAITING).take();
    lock_std(&FOREIGN).take();
    *lock_std(&MODEL_THREAD) = Some(std::thread::current().id());
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            let message = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            if message.starts_with(LOOM_DEADLOCK) {
                let mut waits: Vec<String> = Vec::new();
                for w in lock_std(&WAITING).iter() {
                    if !waits.contains(w) {
                        waits.push(w.clone()); // one line for threads waiting alike
                    }
                }
                if waits.iter().any(|w| w == NO_ON_SUBSCRIBE) {
                    await_foreign_on_subscribe();
                }
                if let Some(foreign) = lock_std(&FOREIGN).clone() {
                    // The cause: what the scenario waits for then never comes because loom
                    // cannot see the thread that would bring it (`rule 1.9: the publisher
                    // never called on_subscribe`, when it did, from that thread): not noted.
                    note(&foreign);
                    return;
                }
                let waits = waits.join("; ");
                if !waits.is_empty() {
                    note(&format!(
                        "{DEADLOCKED}{waits} (loom found an interleaving in which this never \
                         happens)"
                    ));
                    *lock_std(&DEADLOCKED_WAITING) = Some(waits);
                }
            } else if message.starts_with("rule ") {
                note(message);
            } else if lock_std(&DEADLOCKED_WAITING).is_some() {
                // A panic while the deadlock unwinds (a destructor's, which aborts the
                // process): noted after what never happened. Loom's runtime and the standard
                // library panic then too (loom's objects dropped outside the model, "panic in
                // a destructor during cleanup"); those say nothing about the implementation.
                let at = info.location();
                let file = at.map_or("", |l| l.file());
                if !file.contains("/loom-") && !file.starts_with("/rustc/") {
                    note(&format!(
                        "then, as the deadlock unwound, a panic: {message}{}",
                        at.map(|l| format!(" (at {}:{})", l.file(), l.line()))
                            .unwrap_or_default()
                    ));
                }
            }
        }));
    });
}

/// The environment variable that sets how many seconds a model may go without beginning an
/// interleaving before the stall watchdog (see the [module docs](crate::loom)) ends the process (default
/// [`DEFAULT_STALL_SECS`]).
pub const STALL_SECS_VAR: &str = "RS_TCK_LOOM_STALL_SECS";

/// The default of [`STALL_SECS_VAR`]: an interleaving of a scenario takes milliseconds, so a
/// minute without a new one means a model thread is blocked where loom cannot see it.
pub const DEFAULT_STALL_SECS: u64 = 60;

/// How a stalled model's report opens (see [`watch_for_stalls`]).
pub(crate) const STALLED: &str = "stalled: ";

/// Interleavings begun in this process: the stall watchdog's sign of progress.
static INTERLEAVINGS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether a model is running (the watchdog counts only then).
static IN_MODEL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Marks the start of an interleaving (called first in every model run).
pub(super) fn interleaving_began() {
    INTERLEAVINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Marks a model as running or finished, starting the stall watchdog the first time.
///
/// Loom runs every model thread as a coroutine of one OS thread, and switches between them
/// only at the synchronisation it sees. A model thread that blocks on something loom cannot
/// see — a `std` mutex held by another model thread, a `std` condvar or channel, a sleep,
/// blocking I/O — blocks that OS thread and with it the whole model: loom can neither run
/// another thread nor report a deadlock, and the scenario would hang. The watchdog, a plain
/// thread outside the model, notices that no interleaving began for [`STALL_SECS_VAR`]
/// seconds while a model runs, notes the cause (a line the harness puts first in the
/// failure) and ends the process: a blocked coroutine cannot be unwound, and under the
/// harness the scenario runs in a child process of its own, which the parent then reports
/// as failed with that note.
pub(super) fn watch_for_stalls(running: bool) {
    use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
    static WATCHDOG: Once = Once::new();
    IN_MODEL.store(running, Release);
    if !running || !rs_impl::loom::IS_LOOM {
        return;
    }
    WATCHDOG.call_once(|| {
        let limit = std::env::var(STALL_SECS_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&s| s > 0)
            .unwrap_or(DEFAULT_STALL_SECS);
        let spawned = std::thread::Builder::new()
            .name("rs-tck loom stall watchdog".into())
            .spawn(move || {
                let mut seen = (u64::MAX, Instant::now());
                loop {
                    std::thread::sleep(Duration::from_millis(200));
                    let now = INTERLEAVINGS.load(Relaxed);
                    if !IN_MODEL.load(Acquire) || now != seen.0 {
                        seen = (now, Instant::now());
                        continue;
                    }
                    if seen.1.elapsed() >= Duration::from_secs(limit) {
                        note(&format!(
                            "{STALLED}no interleaving began for {limit} s: a model thread is \
                             blocked on something loom cannot see (a std mutex, condvar or \
                             channel, a sleep, blocking I/O), so loom can neither switch \
                             threads nor report a deadlock; build the publisher on \
                             rs_impl::loom's types (or loom's) under cfg(rs_loom) \
                             ({STALL_SECS_VAR} sets the limit)"
                        ));
                        std::process::exit(101);
                    }
                }
            });
        if let Err(e) = spawned {
            note(&format!("the loom stall watchdog could not start: {e}"));
        }
    });
}

/// What the scenario waits for until the publisher calls `on_subscribe`.
const NO_ON_SUBSCRIBE: &str = "rule 1.9: the publisher never called on_subscribe";

/// How long a deadlock's report waits for a publisher's `on_subscribe` from a thread loom does
/// not know, in polls of a millisecond (see [`await_foreign_on_subscribe`]).
const FOREIGN_GRACE_POLLS: u32 = 2000;

/// Called when loom found a deadlock while the scenario waits for `on_subscribe`: a publisher
/// on a std thread may be about to call it from there — loom, which cannot see that thread,
/// finds the deadlock as soon as the model's own threads all wait, often before the std thread
/// has even started. Waits (2 s at most, on the failure's path only) for that call, so that
/// the report names the std thread, the cause, rather than the wait it leaves unanswered.
fn await_foreign_on_subscribe() {
    for _ in 0..FOREIGN_GRACE_POLLS {
        if lock_std(&FOREIGN).is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The words a signal from a thread loom does not know is reported with (see [`foreign`]).
const FOREIGN_THREAD: &str = "from a thread loom does not know";

/// Whether `detail` opens with the report of a signal from a thread loom does not know.
pub(super) fn opens_with_a_foreign_thread(detail: &str) -> bool {
    detail.starts_with("the publisher called ")
        && detail
            .lines()
            .next()
            .is_some_and(|l| l.contains(FOREIGN_THREAD))
}

/// Whether the calling thread is one loom does not know (not the model's), in a loom build. The
/// first time a probe signal comes from one, `signal` is recorded and noted as the failure.
fn foreign(signal: &str) -> bool {
    if !rs_impl::loom::IS_LOOM {
        return false;
    }
    let model = *lock_std(&MODEL_THREAD);
    if model.is_none_or(|m| m == std::thread::current().id()) {
        return false;
    }
    let mut first = lock_std(&FOREIGN);
    if first.is_none() {
        let line = format!(
            "the publisher called {signal} {FOREIGN_THREAD} (a std::thread, or a thread \
             pool's): loom can neither see nor explore what it does. Spawn the \
             publisher's threads with rs_impl::loom::thread::spawn, and build its locks and \
             atomics on rs_impl::loom (or loom's types under cfg(rs_loom))"
        );
        note(&line);
        *first = Some(line);
    }
    true
}

/// A scenario's failure message for a panic with `message`: a signal from a thread loom does
/// not know is reported as that first (what loom then reports follows from it); a deadlock
/// found by loom is reported as what the scenario was waiting for (which names the rule),
/// after [`DEADLOCKED`], then loom's words.
pub(super) fn explain(message: String) -> String {
    let waits = lock_std(&DEADLOCKED_WAITING).take();
    if let Some(foreign) = lock_std(&FOREIGN).take() {
        return format!("{foreign} (then loom reported: {message})");
    }
    match waits {
        Some(waits) if message.starts_with(LOOM_DEADLOCK) => format!(
            "{DEADLOCKED}{waits} (loom found an interleaving in which it never happens: \
             {message})"
        ),
        _ => message,
    }
}

/// Removes a wait from [`WAITING`] when the wait ends (also by unwinding).
struct Waiting(String);

impl Waiting {
    fn new(what: String) -> Self {
        lock_std(&WAITING).push(what.clone());
        Waiting(what)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut waits = lock_std(&WAITING);
        if let Some(i) = waits.iter().position(|w| *w == self.0) {
            waits.remove(i);
        }
    }
}

/// What the probe saw, shared with the scenario's threads.
pub(super) struct Record {
    /// Set while a signal runs. Relaxed read-modify-writes on purpose: they see every overlap
    /// (an RMW reads the latest value) without adding happens-before edges, which would hide a
    /// publisher that forgets them.
    in_signal: AtomicBool,
    /// Elements received, updated with a Relaxed load and a separate store *outside* the lock
    /// below: if the publisher moves signalling to another thread without a happens-before
    /// edge, loom lets the load read a stale count, which shows as a mismatch with `progress`.
    shadow: AtomicU64,
    /// Everything else, under a lock, with a condition variable for the scenario to wait on.
    progress: Mutex<Progress>,
    changed: Condvar,
}

#[derive(Default)]
struct Progress {
    subscription: Option<SubscriptionRef>,
    /// Demand booked before each `request` is made (from every thread, the probe's own
    /// requests included), so `received` above it breaks rule 1.1 for certain.
    requested: u64,
    /// Demand of the requests the scenario makes after every cancel returned (rule 3.6: they
    /// must add nothing).
    requested_after_cancel: u64,
    received: u64,
    completes: usize,
    errors: usize,
    last_error: Option<String>,
    dropped: bool,
    violations: Vec<String>,
}

/// The totals of one interleaving.
pub(super) struct Totals {
    pub(super) received: u64,
    pub(super) completes: usize,
    pub(super) errors: usize,
    pub(super) last_error: Option<String>,
}

impl Record {
    pub(super) fn new() -> Arc<Record> {
        Arc::new(Record {
            in_signal: AtomicBool::new(false),
            shadow: AtomicU64::new(0),
            progress: Mutex::new(Progress::default()),
            changed: Condvar::new(),
        })
    }

    fn update(&self, f: impl FnOnce(&mut Progress)) {
        let mut p = self.progress.lock();
        f(&mut p);
        drop(p);
        self.changed.notify_all();
    }

    fn violation(&self, what: String) {
        self.update(|p| p.violations.push(what));
    }

    /// Waits until `until` holds (a blocking wait: loom reports a deadlock if it never does).
    /// `what` is the failure if it never holds; it names the rule.
    fn wait_for<R>(&self, what: &str, mut until: impl FnMut(&mut Progress) -> Option<R>) -> R {
        let _waiting = Waiting::new(what.to_owned());
        let deadline = Instant::now() + STD_WAIT_LIMIT;
        let mut p = self.progress.lock();
        loop {
            if let Some(r) = until(&mut p) {
                return r;
            }
            let now = Instant::now();
            assert!(
                now < deadline,
                "{what} (nothing within {} s)",
                STD_WAIT_LIMIT.as_secs()
            );
            p = self.changed.wait_timeout(p, deadline - now).0;
        }
    }

    /// The subscription, once `on_subscribe` came.
    pub(super) fn wait_subscription(&self) -> SubscriptionRef {
        self.wait_for(NO_ON_SUBSCRIBE, |p| p.subscription.clone())
    }

    /// Waits for the subscription, books `n` as requested (`request(0)` books nothing: it is
    /// no demand) and requests it.
    pub(super) fn request(&self, n: u64) {
        self.book_and_request(n, |p| &mut p.requested);
    }

    /// As [`request`](Self::request), for a request made after every cancel returned: rule
    /// 3.6 makes it a no-op, so its demand is booked apart.
    pub(super) fn request_after_cancel(&self, n: u64) {
        self.book_and_request(n, |p| &mut p.requested_after_cancel);
    }

    /// Waits for the subscription, adds `n` to the count `book` picks, then requests `n`.
    fn book_and_request(&self, n: u64, book: impl Fn(&mut Progress) -> &mut u64) {
        let s = self.wait_for(NO_ON_SUBSCRIBE, |p| {
            let s = p.subscription.clone()?;
            let booked = book(p);
            *booked = booked.saturating_add(n);
            Some(s)
        });
        s.request(n);
    }

    pub(super) fn await_received(&self, n: u64) {
        self.wait_for(
            &format!(
                "rule 3.8: only some of the {n} elements requested arrived (a request made \
                 while another thread was emitting was lost?)"
            ),
            |p| (p.received >= n || p.completes + p.errors > 0).then_some(()),
        );
    }

    /// Waits for `on_complete` or `on_error`; `what` says which rule expects it.
    pub(super) fn await_terminal(&self, what: &str) {
        self.wait_for(what, |p| (p.completes + p.errors > 0).then_some(()));
    }

    /// Cancels (3.13 is then due even without a terminal signal), waits for the publisher to drop
    /// the subscriber, and asserts every rule recorded.
    pub(super) fn finish(&self, token: std::sync::Weak<()>) -> Totals {
        let s = self.progress.lock().subscription.take();
        if let Some(s) = s {
            s.cancel();
        }
        self.wait_for(
            "rule 3.13: the publisher never dropped the subscriber after cancel (or after its \
             terminal signal)",
            |p| p.dropped.then_some(()),
        );
        assert!(
            token.upgrade().is_none(),
            "rule 3.13: the subscriber is still referenced"
        );
        let mut p = self.progress.lock();
        p.subscription = None;
        assert!(p.violations.is_empty(), "{}", p.violations.join("; "));
        assert!(
            p.completes + p.errors <= 1,
            "rule 1.7: {} terminal signals",
            p.completes + p.errors
        );
        Totals {
            received: p.received,
            completes: p.completes,
            errors: p.errors,
            last_error: p.last_error.take(),
        }
    }
}

/// The probe subscriber.
pub(super) struct Probe<T> {
    /// Always `Some` but in `drop`: taken there, and leaked when a thread loom does not know
    /// drops the probe (loom's types cannot be dropped from it).
    record: Option<Arc<Record>>,
    initial: u64,
    /// `Some((k, n))`: request `n` re-entrantly from inside the `k`-th `on_next` (1-based).
    reentrant: Option<(u64, u64)>,
    subscription: Option<SubscriptionRef>,
    subscribed: bool,
    terminated: bool,
    received: u64,
    /// A std `Arc` whose `Weak` the scenario keeps (loom has no `Weak`): the deterministic
    /// check of 3.13 at the end of each interleaving. Released in `drop` *before* the drop is
    /// recorded, so that a scenario that sees the drop recorded never finds the token alive.
    token: Option<StdArc<()>>,
    _marker: PhantomData<fn(T)>,
}

impl<T> fmt::Debug for Probe<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Probe")
            .field("received", &self.received)
            .finish_non_exhaustive()
    }
}

impl<T> Probe<T> {
    fn rec(&self) -> &Arc<Record> {
        self.record
            .as_ref()
            .expect("the record is taken only in drop")
    }

    pub(super) fn new(
        record: &Arc<Record>,
        initial: u64,
        reentrant: Option<(u64, u64)>,
    ) -> (Self, std::sync::Weak<()>) {
        let token = StdArc::new(());
        let weak = StdArc::downgrade(&token);
        let probe = Probe {
            record: Some(record.clone()),
            initial,
            reentrant,
            subscription: None,
            subscribed: false,
            terminated: false,
            received: 0,
            token: Some(token),
            _marker: PhantomData,
        };
        (probe, weak)
    }

    fn enter(&self, signal: &str) {
        if self.rec().in_signal.swap(true, Ordering::Relaxed) {
            self.rec().violation(format!(
                "rule 1.3: {signal} overlaps another signal (concurrent, or nested by recursion, 3.3)"
            ));
        }
        if self.terminated {
            self.rec()
                .violation(format!("rule 1.7: {signal} after the terminal signal"));
        }
        if !self.subscribed && signal != "on_subscribe" {
            self.rec()
                .violation(format!("rule 1.9: {signal} before on_subscribe"));
        }
    }

    fn exit(&self) {
        self.rec().in_signal.store(false, Ordering::Relaxed);
    }

    fn terminal(&mut self, error: Option<Error>) {
        self.terminated = true;
        self.subscription = None; // 2.3, 2.4: dropped without being called
        self.rec().update(|p| match error {
            Some(e) => {
                p.errors += 1;
                p.last_error = Some(e.to_string());
            }
            None => p.completes += 1,
        });
    }
}

impl<T: Send> Subscriber<T> for Probe<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        if foreign("on_subscribe") {
            return; // loom's types cannot be used from this thread
        }
        self.enter("on_subscribe");
        if self.subscribed {
            self.rec()
                .violation("rule 1.9/2.12: on_subscribe twice".to_owned());
        }
        self.subscribed = true;
        let s = subscription.clone();
        let initial = self.initial;
        self.rec().update(|p| {
            p.subscription = Some(s);
            p.requested = p.requested.saturating_add(initial);
        });
        self.subscription = Some(subscription.clone());
        if initial > 0 {
            subscription.request(initial);
        }
        self.exit();
    }

    fn on_next(&mut self, _item: T) {
        if foreign("on_next") {
            return;
        }
        self.enter("on_next");
        self.received += 1;
        let received = self.received;
        self.rec().update(|p| {
            p.received = received;
            // 1.1 against every request booked so far; within the demand of requests made
            // after cancel, the fault is that those added demand (3.6).
            if received > p.requested.saturating_add(p.requested_after_cancel) {
                p.violations.push(format!(
                    "rule 1.1: on_next #{received}, but only {} elements were requested",
                    p.requested.saturating_add(p.requested_after_cancel)
                ));
            } else if received > p.requested {
                p.violations.push(format!(
                    "rule 3.6: on_next #{received}, but only {} elements were requested before \
                     cancel: a request made after cancel added demand (it must be a no-op)",
                    p.requested
                ));
            }
        });
        // After the lock is released: see `Record::shadow`.
        let seen = self.rec().shadow.load(Ordering::Relaxed);
        if seen + 1 != received {
            self.rec().violation(format!(
                "rule 1.3: on_next #{received} does not happen-after on_next #{seen}+1 (signals handed between threads without synchronisation)"
            ));
        }
        self.rec().shadow.store(received, Ordering::Relaxed);
        if let Some((k, n)) = self.reentrant {
            if k == received {
                if let Some(s) = &self.subscription {
                    self.rec()
                        .update(|p| p.requested = p.requested.saturating_add(n));
                    s.request(n); // 3.2
                }
            }
        }
        self.exit();
    }

    fn on_error(&mut self, error: Error) {
        if foreign("on_error") {
            return;
        }
        self.enter("on_error");
        self.terminal(Some(error));
        self.exit();
    }

    fn on_complete(&mut self) {
        if foreign("on_complete") {
            return;
        }
        self.enter("on_complete");
        self.terminal(None);
        self.exit();
    }
}

impl<T> Drop for Probe<T> {
    fn drop(&mut self) {
        drop(self.token.take());
        let record = self.record.take();
        if foreign("drop (of the subscriber)") {
            // The loom types inside cannot be touched (not even dropped) from this thread.
            std::mem::forget(record);
            return;
        }
        if let Some(record) = record {
            record.update(|p| p.dropped = true);
        }
    }
}
