//! A publisher that emits from a thread of its own, as demand arrives: the shape of every
//! publisher whose elements come from a blocking source (a socket, a file, a device, a timer).
//!
//! Run it with `cargo run --release -p rs-impl --example thread_publisher`. The TCK verifies it
//! (the publisher verification, and every loom scenario in the loom build): it is registered
//! with the runner in `tck/src/bin/rs-tck/registry/examples.rs`, which includes this file.
//!
//! # Contract
//!
//! * **Which thread signals.** Each subscription gets a thread of its own, started by
//!   `subscribe` (which returns at once). That thread makes *every* signal: `on_subscribe`
//!   first (rule 1.9), then `on_next` while there is demand, then at most one of `on_complete`
//!   and `on_error`. Nothing else ever calls the subscriber, so the signals are serial (1.3).
//! * **Who may call `request` and `cancel`, from where.** Anyone, from any thread, also from
//!   inside `on_subscribe` and `on_next` (3.2): both only record what changed (demand in a
//!   [`Demand`], a flag) and wake the thread; neither ever runs the subscriber, so a `request`
//!   from `on_next` cannot recurse (3.3) and returns at once (3.4, 3.5).
//! * **Demand.** The thread emits only against outstanding demand (1.1), which adds up and
//!   saturates (3.8, 3.17); `request(0)` ends the stream with `on_error` naming rule 3.9. With
//!   no demand the thread sleeps on a condition variable; a `request` wakes it, and a request
//!   made while it is busy is never lost (the wake-up flag stays set until the thread looks).
//! * **The end.** The source is read one element ahead, so a finite stream completes as soon as
//!   it is exhausted, without waiting for a request that would only find the end (1.2, 1.5).
//! * **On cancel** the thread stops before its next element, however large the demand (3.12),
//!   drops the subscriber (3.13) and ends; later `request` and `cancel` calls do nothing
//!   (3.6, 3.7). After the terminal signal it does the same (1.6).
//! * **Memory:** one thread, one element read ahead, and the subscription's counters.
//! * **Errors.** The source yields `Result`s, as reads do: the first `Err` ends the stream with
//!   `on_error` (1.4). A source that panics (opening or reading) ends it with `on_error` too.
//! * **A panicking subscriber** (2.13) is treated as cancelled: the thread drops it and ends; the
//!   panic is reported through [`rs_impl::panics`] and never reaches anyone else.
//! * **Many subscribers** may subscribe (1.11): each gets its own thread and its own run of the
//!   source from the start (a cold publisher).
//! * **Loom.** Every atomic, lock, condition variable and thread comes from [`rs_impl::loom`], so
//!   the TCK's loom mode checks this publisher in every interleaving. The subscription handle is
//!   a std `Arc` (an [`rs_api::SubscriptionRef`] is one in every build); its reference count is
//!   no part of the protocol.
//!
//! A subscriber that neither requests nor cancels keeps its subscription open, and so its
//! thread asleep, as it would keep any publisher's subscription open.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
// The handle is an `rs_api::SubscriptionRef`, which is a std `Arc` in every build (loom's `Arc`
// cannot become a `dyn` std `Arc`); everything inside it comes from the loom facade.
use std::sync::Arc;

use rs_api::{BoxSubscriber, Error, Publisher, SpecViolation, Subscription, SubscriptionRef};
use rs_impl::demand::Demand;
use rs_impl::loom::sync::atomic::{AtomicBool, Ordering};
use rs_impl::loom::sync::{Condvar, Mutex};
use rs_impl::loom::thread;
use rs_impl::panics::{drop_guarded, guard, panic_message};

/// A cold publisher of the items of `make()`'s iterator of `Result`s, emitted from a thread per
/// subscription (see the [module docs](self)). `make` stands for opening the blocking source,
/// and its iterator for reading it; both run on the subscription's thread, once per subscriber.
pub(crate) struct ThreadPublisher<F> {
    make: Arc<F>,
}

impl<F> fmt::Debug for ThreadPublisher<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPublisher").finish_non_exhaustive()
    }
}

impl<F> Clone for ThreadPublisher<F> {
    fn clone(&self) -> Self {
        ThreadPublisher {
            make: self.make.clone(),
        }
    }
}

impl<F, I, T> ThreadPublisher<F>
where
    F: Fn() -> I + Send + Sync + 'static,
    I: IntoIterator<Item = Result<T, Error>>,
    T: Send + 'static,
{
    /// A publisher whose every subscriber gets the items of a fresh `make()` on a thread of
    /// its own.
    pub(crate) fn new(make: F) -> Self {
        ThreadPublisher {
            make: Arc::new(make),
        }
    }
}

impl<F, I, T> Publisher<T> for ThreadPublisher<F>
where
    F: Fn() -> I + Send + Sync + 'static,
    I: IntoIterator<Item = Result<T, Error>>,
    T: Send + 'static,
{
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        let make = self.make.clone();
        let control = Arc::new(Control {
            demand: Demand::new(),
            cancelled: AtomicBool::new(false),
            bad_request: AtomicBool::new(false),
            changed: Mutex::new(false),
            wake: Condvar::new(),
        });
        // Returns at once: the subscription's thread makes every signal, `on_subscribe` first.
        thread::spawn(move || emit(&control, subscriber, &*make));
    }
}

/// What `request` and `cancel` record for the subscription's thread: the subscription itself.
struct Control {
    /// Cumulative, saturating demand (3.8, 3.17).
    demand: Demand,
    /// Set by `cancel` (3.5–3.7).
    cancelled: AtomicBool,
    /// Set by `request(0)` (3.9).
    bad_request: AtomicBool,
    /// Something changed since the thread last looked; the thread sleeps until it is set.
    changed: Mutex<bool>,
    wake: Condvar,
}

impl Control {
    /// Wakes the thread (or, if it is busy, makes its next wait return at once).
    fn notify(&self) {
        *self.changed.lock() = true;
        self.wake.notify_one();
    }

    /// Sleeps until [`notify`](Self::notify) was called since the last wait.
    fn wait(&self) {
        let mut changed = self.changed.lock();
        while !*changed {
            changed = self.wake.wait(changed);
        }
        *changed = false;
    }
}

impl Subscription for Control {
    fn request(&self, n: u64) {
        if self.demand.request(n).is_err() {
            self.bad_request.store(true, Ordering::Release);
        }
        self.notify();
    }

    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        self.notify();
    }
}

/// The subscription's thread: the only caller of `subscriber`, from `on_subscribe` to the
/// terminal signal or cancel; then it drops the subscriber and ends.
fn emit<F, I, T>(control: &Arc<Control>, mut subscriber: BoxSubscriber<T>, make: &F)
where
    F: Fn() -> I,
    I: IntoIterator<Item = Result<T, Error>>,
{
    let handle: SubscriptionRef = control.clone();
    // 1.9: on_subscribe first. 2.13: a panicking subscriber is a cancelled subscriber.
    if guard("on_subscribe", || subscriber.on_subscribe(handle)).is_err() {
        drop_guarded(subscriber);
        return;
    }
    let mut source = match catch_unwind(AssertUnwindSafe(|| make().into_iter())) {
        Ok(source) => source,
        Err(p) => {
            let e = Error::msg(format!("the source failed to open: {}", panic_message(&*p)));
            let _ = guard("on_error", || subscriber.on_error(e));
            drop_guarded(subscriber);
            return;
        }
    };
    let mut next = read(&mut source);
    let mut emitted = 0u64;
    loop {
        // Read what `request` writes *before* the cancelled flag: a request made after a
        // cancel then brings that cancel along (the Acquire reads see everything before the
        // request), so demand added after cancel never becomes an element (3.6), nor does a
        // request(0) after cancel become on_error. In the other order a stale `false` could
        // be read next to the new demand (the TCK's loom mode finds that interleaving).
        let outstanding = control.demand.outstanding(emitted);
        let bad_request = control.bad_request.load(Ordering::Acquire);
        if control.cancelled.load(Ordering::Acquire) {
            break; // 3.12: before the next element, whatever the demand
        }
        if bad_request {
            let _ = guard("on_error", || {
                subscriber.on_error(SpecViolation::NonPositiveRequest.into())
            });
            break;
        }
        let item = match next {
            Ok(Some(item)) => item,
            Ok(None) => {
                let _ = guard("on_complete", || subscriber.on_complete()); // 1.5
                break;
            }
            Err(e) => {
                let _ = guard("on_error", || subscriber.on_error(e)); // 1.4
                break;
            }
        };
        if outstanding == 0 {
            next = Ok(Some(item));
            control.wait(); // 1.1: until a request, cancel or request(0)
            continue;
        }
        emitted += 1;
        if guard("on_next", || subscriber.on_next(item)).is_err() {
            break;
        }
        next = read(&mut source);
    }
    drop_guarded(subscriber); // 1.6, 3.13
}

/// The next item of the source (`Ok(None)` at its end); a read error, or a panic, becomes an
/// error for the subscriber.
fn read<T, S: Iterator<Item = Result<T, Error>>>(source: &mut S) -> Result<Option<T>, Error> {
    match catch_unwind(AssertUnwindSafe(|| source.next())) {
        Ok(item) => item.transpose(),
        Err(p) => Err(Error::msg(format!(
            "the source failed while reading: {}",
            panic_message(&*p)
        ))),
    }
}

/// Subscribes a collecting subscriber that requests 4 at a time, and prints what it got.
#[allow(dead_code)] // the TCK's registry includes this file for the publisher alone
fn main() {
    use rs_impl::subscriber::{collect, RequestStrategy};

    let publisher = ThreadPublisher::new(|| (1..=10u64).map(|i| Ok(i * i)));
    let (subscriber, result) = collect(RequestStrategy::Prefetch(4));
    publisher.subscribe(Box::new(subscriber)); // returns at once; the thread emits
    let squares = result.wait().expect("the stream completes");
    assert_eq!(squares, (1..=10u64).map(|i| i * i).collect::<Vec<_>>());
    println!("{squares:?}");
}
