//! The pull engine behind every cold source: a [`Pull`] source driven through the serial drain
//! loop, one fresh run per subscription.

use std::panic::{catch_unwind, AssertUnwindSafe};
// The subscription is handed out as an `rs_api::SubscriptionRef`, which is a std `Arc` in
// every build (loom's `Arc` cannot become a `dyn` std `Arc`). Its reference count is not
// part of any protocol here; the atomics and the lock inside it come from the facade.
use std::sync::Arc;
use std::task::{Wake, Waker};

use rs_api::{BoxSubscriber, Error, SpecViolation, Subscription, SubscriptionRef, UNBOUNDED};

use crate::demand::{combined, Demand, Reentrant};
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::panics;
use crate::serial::DrainLoop;

/// What a [`Pull`] source produced.
#[derive(Debug)]
pub enum Pulled<T> {
    /// The next element.
    Next(T),
    /// The source is exhausted: the subscriber gets `on_complete`.
    Complete,
    /// The source failed: the subscriber gets `on_error`.
    Error(Error),
    /// Nothing now, but maybe later: the engine stops pulling until the source wakes the
    /// [`Waker`] it was given in [`Pull::set_waker`] (or until the next `request`, which pulls
    /// again if there is demand). A source that answers this and never wakes stalls its
    /// subscription until it is cancelled.
    NotReady,
    /// Nothing now and nothing ever (a [`never`](super::never) source): the subscription stays
    /// open, silent, until cancelled. The engine does not pull again before the next `request`.
    Never,
}

/// A source of elements, pulled one at a time by the drainer.
///
/// The engine pulls **one element ahead** of demand, so that a finite source completes
/// without waiting for a request that would only find the end (rules 1.2, 1.5): after each
/// `on_next`, and right after `on_subscribe`, it pulls the next step and keeps an element
/// until demand arrives (the bound: one element held). A source that panics fails the
/// stream with an error that says so; the panic never reaches the caller of `subscribe` or
/// `request`.
///
/// **Not ready, wake me later.** A source that has nothing *now* (it is fed from a callback
/// or another thread) answers [`Pulled::NotReady`] and keeps the [`Waker`] the engine gave it
/// in [`set_waker`](Pull::set_waker); waking it makes the engine pull again, on the waking
/// thread (which then delivers the signals: the engine has no thread of its own). A wake while
/// the engine is running is never lost; a wake when nothing changed costs one empty pass.
/// (For a source fed by producers that should wait for demand, [`push`](super::push) is
/// the ready-made building block.)
///
/// # Examples
///
/// ```
/// use rs_impl::source::{from_pull, Pull, Pulled};
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// use rs_api::Publisher;
///
/// struct Countdown(u32);
/// impl Pull<u32> for Countdown {
///     fn pull(&mut self) -> Pulled<u32> {
///         if self.0 == 0 { return Pulled::Complete; }
///         self.0 -= 1;
///         Pulled::Next(self.0)
///     }
/// }
/// let p = from_pull(|| Countdown(3));
/// let (s, result) = collect(RequestStrategy::Unbounded);
/// p.subscribe(Box::new(s));
/// assert_eq!(result.wait().unwrap(), vec![2, 1, 0]);
/// ```
///
/// A source fed from another thread, through a slot and the waker:
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use std::task::Waker;
/// use rs_api::Publisher;
/// use rs_impl::source::{from_pull, Pull, Pulled};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// #[derive(Default)]
/// struct Slot { item: Option<Option<u32>>, waker: Option<Waker> } // Some(None): the end
/// struct Fed(Arc<Mutex<Slot>>);
/// impl Pull<u32> for Fed {
///     fn set_waker(&mut self, waker: Waker) { self.0.lock().unwrap().waker = Some(waker); }
///     fn pull(&mut self) -> Pulled<u32> {
///         match self.0.lock().unwrap().item.take() {
///             Some(Some(x)) => Pulled::Next(x),
///             Some(None) => Pulled::Complete,
///             None => Pulled::NotReady,
///         }
///     }
/// }
/// let slot = Arc::new(Mutex::new(Slot::default()));
/// let s2 = slot.clone();
/// let (s, result) = collect(RequestStrategy::Unbounded);
/// from_pull(move || Fed(s2.clone())).subscribe(Box::new(s));
/// let feed = move |item| {
///     let waker = {
///         let mut slot = slot.lock().unwrap();
///         slot.item = Some(item);
///         slot.waker.clone().unwrap()
///     };
///     waker.wake(); // the engine pulls again, on this thread (outside the lock)
/// };
/// std::thread::spawn(move || { feed(Some(7)); feed(None); }).join().unwrap();
/// assert_eq!(result.wait().unwrap(), vec![7]);
/// ```
pub trait Pull<T>: Send {
    /// Produces the next step of the stream.
    fn pull(&mut self) -> Pulled<T>;

    /// Called once, before the first pull, with the waker that makes the engine pull again.
    /// The default drops it (a source that never answers [`Pulled::NotReady`] needs none).
    fn set_waker(&mut self, waker: Waker) {
        drop(waker);
    }
}

/// Starts one subscription of `source` for `subscriber`, on the caller's thread.
pub(crate) fn subscribe_pull<T, P>(source: P, subscriber: BoxSubscriber<T>)
where
    T: Send + 'static,
    P: Pull<T> + 'static,
{
    let _ = start_pull(source, subscriber);
}

/// [`subscribe_pull`], giving back the subscription (for the unit tests' counts).
fn start_pull<T, P>(source: P, subscriber: BoxSubscriber<T>) -> Arc<PullSubscription<T, P>>
where
    T: Send + 'static,
    P: Pull<T> + 'static,
{
    let sub = Arc::new(PullSubscription {
        demand: Demand::new(),
        reentrant: Reentrant::new(),
        flags: AtomicUsize::new(0),
        drain: DrainLoop::new(State {
            subscriber: Some(subscriber),
            source: Some(source),
            lookahead: None,
            emitted: 0,
            limit: 0,
            seen: 0,
        }),
    });
    let handle: SubscriptionRef = sub.clone();
    // The waker holds the subscription; the source holds the waker until it is dropped (on
    // the terminal signal or cancel), which breaks the cycle.
    let waker = Waker::from(sub.clone());
    sub.run(Some((handle, waker)));
    sub
}

/// [`PullSubscription::flags`]: the subscription is over (cancelled or terminated).
const CANCELLED: usize = 1;
/// [`PullSubscription::flags`]: `request(0)` was called (rule 3.9).
const BAD_REQUEST: usize = 2;

/// Why the hot loop stopped.
enum Stop<T> {
    /// Cancelled or terminated: drop everything.
    Cancelled,
    /// `request(0)`: fail with the 3.9 error.
    BadRequest,
    /// An element is ready but there is no demand for it.
    NoDemand(T),
    /// The source has nothing now (or never will).
    Pending,
    /// The source ended.
    Complete,
    /// The source failed.
    Failed(Error),
    /// The subscriber panicked in `on_next`.
    Panicked(Box<dyn std::any::Any + Send>),
}

/// The drainer-only state of one subscription.
struct State<T, P> {
    /// The subscriber; `None` after the terminal signal or cancel (rules 1.6, 3.13).
    subscriber: Option<BoxSubscriber<T>>,
    /// The source; dropped together with the subscriber.
    source: Option<P>,
    /// The element pulled ahead of demand, if any.
    lookahead: Option<Pulled<T>>,
    /// Elements emitted so far (the drainer's local count; never an atomic per element).
    emitted: u64,
    /// The demand known to the drainer: the shared total as last read (`seen`) plus what it
    /// took from [`PullSubscription::reentrant`] (requests made from inside `on_next` on the
    /// drainer's thread, which never touch the shared counter), saturating
    /// ([`combined`]); looked at again only when `emitted` reaches it.
    limit: u64,
    /// The total of [`Demand`] when last read: a new read adds only what grew since.
    seen: u64,
}

impl<T, P> State<T, P> {
    /// Ends the subscription: drops the subscriber and the source.
    fn finish(&mut self) {
        panics::drop_guarded(self.lookahead.take());
        panics::drop_guarded(self.source.take());
        panics::drop_guarded(self.subscriber.take());
    }
}

/// One subscription of a pull source.
struct PullSubscription<T, P> {
    /// Cumulative demand (3.8, 3.17).
    demand: Demand,
    /// Demand requested from inside `on_next` on the drainer's own thread while the hot loop
    /// runs: recorded without an atomic read-modify-write and without entering the drain
    /// loop (the trampoline: see [`Reentrant`]).
    reentrant: Reentrant,
    /// [`CANCELLED`] — set by cancel (3.5–3.7), by the terminal signal (1.6) and by a panicking
    /// subscriber (2.13); once set, `request` and `cancel` are no-ops — and [`BAD_REQUEST`],
    /// set by `request(0)` (3.9), which the drainer answers with `on_error`. One word, so the
    /// hot loop reads one atomic per element.
    flags: AtomicUsize,
    /// The serial drain loop and the drainer-only state.
    drain: DrainLoop<State<T, P>>,
}

impl<T, P> PullSubscription<T, P>
where
    T: Send + 'static,
    P: Pull<T>,
{
    /// Runs the one pass through the drain loop. Only `subscribe` passes `first`, and its call
    /// is always the first drainer, so `on_subscribe` precedes every other signal (1.9).
    fn run(&self, mut first: Option<(SubscriptionRef, Waker)>) {
        self.drain.drain(|st| self.pass(st, &mut first));
    }

    fn pass(&self, st: &mut State<T, P>, first: &mut Option<(SubscriptionRef, Waker)>) {
        let Some(subscriber) = st.subscriber.as_mut() else {
            return;
        };
        if let Some((handle, waker)) = first.take() {
            if let Some(source) = st.source.as_mut() {
                if let Err(payload) = catch_unwind(AssertUnwindSafe(|| source.set_waker(waker))) {
                    self.flags.fetch_or(CANCELLED, Ordering::AcqRel);
                    st.finish();
                    panics::subscriber_panicked("Pull::set_waker", payload);
                    return;
                }
            }
            // request and cancel only record and drain: they take concurrent calls.
            let mark = crate::demand::concurrent_calls(&handle);
            let ok = catch_unwind(AssertUnwindSafe(|| subscriber.on_subscribe(handle)));
            drop(mark);
            if let Err(payload) = ok {
                self.subscriber_panicked(st, "on_subscribe", payload);
                return;
            }
        }
        match self.emit(st) {
            Stop::Cancelled => st.finish(),
            Stop::BadRequest => self.terminate(st, Some(SpecViolation::NonPositiveRequest.into())),
            // 1.1: no demand; keep the element for the next request.
            Stop::NoDemand(item) => st.lookahead = Some(Pulled::Next(item)),
            Stop::Pending => {}
            Stop::Complete => self.terminate(st, None),
            Stop::Failed(e) => self.terminate(st, Some(e)),
            Stop::Panicked(payload) => self.subscriber_panicked(st, "on_next", payload),
        }
    }

    /// The hot loop: emits while there is demand and nothing else to do. One atomic load per
    /// element (the flags); demand is re-read only when the local count reaches the last total
    /// seen. A `request` made from inside `on_next` on this thread only adds to
    /// [`reentrant`](Self::reentrant) and returns; the loop takes it when it runs out of the
    /// demand it knows (one-by-one demand: a plain load and store per element, no atomic
    /// read-modify-write, no drain-loop entry). Returns why it stopped; the caller does the
    /// rest.
    ///
    /// # Cost per element (issue 24, counted with callgrind on `benches/examples/source_prof`)
    ///
    /// `range → for_each` on the calling thread, the subscriber's work included, instructions
    /// per element (the difference between N = 1.1 M and 100 k, over 1 M):
    ///
    /// | demand | before | after |
    /// |---|---:|---:|
    /// | unbounded | 36 | 30 |
    /// | `Prefetch(16)` | 51 | 35 |
    /// | `request(1)` from inside `on_next` | 131 | 76 |
    ///
    /// Where one-by-one demand's extra went before: the subscriber's count up to its batch and
    /// an out-of-line replenish (20), the subscription's `request` (32: a flags load and four
    /// saved registers before it reached the trampoline's thread-local check), and here, for
    /// the demand the loop did not know, the trampoline's take, an out-of-line cross-crate
    /// read of the shared total and the saturating sum of the two (20). Now this loop takes
    /// what was trampolined **without** reading the shared total (that one is read only when
    /// the trampoline has nothing, and only what grew since the last read is added: demand
    /// from elsewhere is never lost, only noticed when the known demand runs out); its counts
    /// live in locals across `on_next` (written back once, when the loop stops); the element
    /// kept from the last pass is delivered before the loop instead of tested for per
    /// element; `request`'s trampolined path is a thread-local compare and a plain
    /// load-add-store (its other paths out of line and cold). What is left of the 46 over
    /// unbounded: the subscriber's countdown and its `dyn` call to `request` (about 14, with
    /// the `Arc<dyn>` data pointer's alignment arithmetic), `request` itself (17, of which 6
    /// are registers the compiler saves and restores although neither path needs them), and
    /// here the take and the saturating sum (about 14).
    fn emit(&self, st: &mut State<T, P>) -> Stop<T> {
        let State {
            subscriber,
            source,
            lookahead,
            emitted,
            limit,
            seen,
        } = st;
        let _delivering = self.reentrant.deliver();
        let (Some(subscriber), Some(source)) = (subscriber.as_mut(), source.as_mut()) else {
            return Stop::Cancelled;
        };
        // The counts, in locals (registers) across the calls out; written back when the loop
        // stops (the state is the drainer's alone: nothing reads them meanwhile).
        let (mut count, mut known, mut total) = (*emitted, *limit, *seen);
        // One step: the flags (looked at before the step is pulled), then the element, if
        // there is demand for it. A macro, so that the element kept from the last pass is
        // delivered before the loop, not tested for in it.
        macro_rules! step {
            ($out:lifetime, $step:expr) => {{
                let flags = self.flags.load(Ordering::Acquire);
                if flags != 0 {
                    break $out if flags & CANCELLED != 0 {
                        Stop::Cancelled
                    } else {
                        Stop::BadRequest
                    };
                }
                let item = match $step {
                    Pulled::Next(item) => item,
                    Pulled::NotReady | Pulled::Never => break $out Stop::Pending,
                    Pulled::Complete => break $out Stop::Complete,
                    Pulled::Error(e) => break $out Stop::Failed(e),
                };
                if count == known {
                    let more = self.reentrant.take();
                    if more != 0 {
                        // Trampolined from inside the last `on_next`: enough to go on with,
                        // without reading the shared total.
                        known = combined(known, more);
                    } else {
                        let now = self.demand.total();
                        if now != total {
                            // Only what grew since the last read (the total only grows).
                            known = if now == UNBOUNDED {
                                UNBOUNDED
                            } else {
                                combined(known, now - total)
                            };
                            total = now;
                        }
                        if count == known && known != UNBOUNDED {
                            break $out Stop::NoDemand(item);
                        }
                    }
                }
                count += 1;
                if let Err(payload) = catch_unwind(AssertUnwindSafe(|| subscriber.on_next(item))) {
                    break $out Stop::Panicked(payload);
                }
            }};
        }
        let first = lookahead.take();
        let stop = 'emit: {
            if let Some(kept) = first {
                step!('emit, kept);
            }
            loop {
                step!('emit, pull_guarded(source));
            }
        };
        (*emitted, *limit, *seen) = (count, known, total);
        stop
    }

    /// Delivers the terminal signal (`on_error` if `error` is set) and ends the subscription.
    fn terminate(&self, st: &mut State<T, P>, error: Option<Error>) {
        self.flags.fetch_or(CANCELLED, Ordering::AcqRel);
        let mut subscriber = st.subscriber.take().expect("active");
        st.finish();
        let (signal, ok) = match error {
            Some(e) => (
                "on_error",
                catch_unwind(AssertUnwindSafe(|| subscriber.on_error(e))),
            ),
            None => (
                "on_complete",
                catch_unwind(AssertUnwindSafe(|| subscriber.on_complete())),
            ),
        };
        if let Err(payload) = ok {
            panics::subscriber_panicked(signal, payload);
        }
        panics::drop_guarded(subscriber);
    }

    /// 2.13: a panicking subscriber is a cancelled subscriber.
    fn subscriber_panicked(
        &self,
        st: &mut State<T, P>,
        signal: &'static str,
        payload: Box<dyn std::any::Any + Send>,
    ) {
        self.flags.fetch_or(CANCELLED, Ordering::AcqRel);
        st.finish();
        panics::subscriber_panicked(signal, payload);
    }
}

/// Pulls, turning a panic in the source into an error for the subscriber.
fn pull_guarded<T, P: Pull<T>>(source: &mut P) -> Pulled<T> {
    match catch_unwind(AssertUnwindSafe(|| source.pull())) {
        Ok(step) => step,
        Err(payload) => Pulled::Error(Error::msg(format!(
            "the source panicked while producing an element: {}",
            panics::panic_message(&*payload)
        ))),
    }
}

impl<T, P> Subscription for PullSubscription<T, P>
where
    T: Send + 'static,
    P: Pull<T>,
{
    #[inline]
    fn request(&self, n: u64) {
        // From inside on_next, on the drainer's thread: the hot loop takes it (a cancel
        // meanwhile is seen by the loop before the next element, and the demand recorded
        // goes with the state: 3.6 holds). The only path one-by-one demand takes: kept to a
        // few instructions, the rest out of line.
        if self.reentrant.try_add(n) {
            return;
        }
        self.request_shared(n);
    }

    fn cancel(&self) {
        if self.flags.fetch_or(CANCELLED, Ordering::AcqRel) & CANCELLED != 0 {
            return; // 3.7
        }
        self.run(None);
    }
}

impl<T, P> PullSubscription<T, P>
where
    T: Send + 'static,
    P: Pull<T>,
{
    /// A `request` from anywhere but the hot loop: the shared counter and the drain loop.
    /// Cold: so that the trampolined path of [`request`](Subscription::request) saves no
    /// registers for it.
    #[cold]
    #[inline(never)]
    fn request_shared(&self, n: u64) {
        if self.flags.load(Ordering::Acquire) & CANCELLED != 0 {
            return; // 3.6
        }
        if self.demand.request(n).is_err() {
            self.flags.fetch_or(BAD_REQUEST, Ordering::AcqRel);
        }
        self.run(None);
    }
}

/// The waker handed to the source ([`Pull::set_waker`]): waking runs the drain loop on the
/// waking thread, like a `request` that adds no demand.
impl<T, P> Wake for PullSubscription<T, P>
where
    T: Send + 'static,
    P: Pull<T> + 'static,
{
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.flags.load(Ordering::Acquire) & CANCELLED != 0 {
            return;
        }
        self.run(None);
    }
}

#[cfg(all(test, not(rs_loom)))]
mod tests {
    use rs_api::{Subscriber, SubscriptionRef};

    use super::*;
    use crate::loom::sync::Mutex;

    /// `0..n`, pulled.
    struct Count(std::ops::Range<u64>);

    impl Pull<u64> for Count {
        fn pull(&mut self) -> Pulled<u64> {
            self.0.next().map_or(Pulled::Complete, Pulled::Next)
        }
    }

    /// What the probe saw; it requests `per` at a time from inside `on_next`.
    struct OneByOne {
        s: Option<SubscriptionRef>,
        per: u64,
        seen: u64,
        sum: u64,
        done: bool,
    }

    /// Shared view of the subscriber's outcome.
    struct Probe(Arc<Mutex<OneByOne>>);

    impl Subscriber<u64> for Probe {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            let per = self.0.lock().per;
            self.0.lock().s = Some(s.clone());
            s.request(per);
        }
        fn on_next(&mut self, x: u64) {
            let (per, s) = {
                let mut g = self.0.lock();
                g.seen += 1;
                g.sum += x;
                (g.per, (g.seen % g.per == 0).then(|| g.s.clone()).flatten())
            };
            if let Some(s) = s {
                s.request(per); // outside the lock: the next on_next may run inside it
            }
        }
        fn on_error(&mut self, e: Error) {
            panic!("{e}");
        }
        fn on_complete(&mut self) {
            self.0.lock().done = true;
        }
    }

    #[test]
    fn request_one_from_on_next_enters_neither_the_counter_nor_the_drain_loop() {
        for per in [1u64, 3] {
            let state = Arc::new(Mutex::new(OneByOne {
                s: None,
                per,
                seen: 0,
                sum: 0,
                done: false,
            }));
            let n = 10_000u64;
            let sub = start_pull(Count(0..n), Box::new(Probe(state.clone())));
            let st = state.lock();
            assert!(st.done);
            assert_eq!(st.seen, n);
            assert_eq!(st.sum, n * (n - 1) / 2);
            // Only the request made in on_subscribe (outside the hot loop) reached the shared
            // counter and the drain loop (with subscribe's own entry): every later one was
            // trampolined, however many elements.
            assert_eq!(sub.demand.total(), per, "per = {per}");
            assert_eq!(sub.drain.calls(), 2, "per = {per}");
        }
    }

    #[test]
    fn request_from_another_thread_takes_the_ordinary_path() {
        let state = Arc::new(Mutex::new(OneByOne {
            s: None,
            per: 1,
            seen: 0,
            sum: 0,
            done: false,
        }));
        // Demand 1 from on_subscribe, then nothing from on_next: 1 element, then a stop.
        struct Once(Arc<Mutex<OneByOne>>);
        impl Subscriber<u64> for Once {
            fn on_subscribe(&mut self, s: SubscriptionRef) {
                self.0.lock().s = Some(s.clone());
                s.request(1);
            }
            fn on_next(&mut self, _: u64) {
                self.0.lock().seen += 1;
            }
            fn on_error(&mut self, e: Error) {
                panic!("{e}");
            }
            fn on_complete(&mut self) {
                self.0.lock().done = true;
            }
        }
        let sub = start_pull(Count(0..5), Box::new(Once(state.clone())));
        assert_eq!(state.lock().seen, 1);
        let s = state.lock().s.clone().unwrap();
        std::thread::scope(|sc| {
            sc.spawn(|| s.request(10));
        });
        let st = state.lock();
        assert_eq!(st.seen, 5);
        assert!(st.done);
        assert_eq!(sub.demand.total(), 11);
    }
}
