//! # Reactive Streams 1.0.4 for Rust: the contract
//!
//! Four traits — [`Publisher`], [`Subscriber`], [`Subscription`], [`Processor`] — the error
//! they carry ([`Error`]), and the typed spec violations this project reports
//! ([`SpecViolation`]). Nothing else: no runtime, no operators. Implementations live in
//! `rs-impl`; the verification kit (TCK) lives in `rs-tck`.
//!
//! ## The contract in one paragraph
//!
//! A [`Publisher`] is handed a [`Subscriber`] by value. It first calls
//! [`Subscriber::on_subscribe`] with a shared [`Subscription`]; the subscriber then signals
//! *demand* with [`Subscription::request`]. The publisher sends at most as many
//! [`Subscriber::on_next`] calls as were requested in total, serially, and ends with at most
//! one terminal signal, [`Subscriber::on_complete`] or [`Subscriber::on_error`]. Either side
//! may stop: the subscriber with [`Subscription::cancel`], the publisher with a terminal
//! signal. After either, the publisher drops its reference to the subscriber.
//!
//! ## How Rust types carry the rules
//!
//! * Signals are synchronous `&mut self` methods. A publisher owns its subscriber (a
//!   `Box<dyn Subscriber<T>>`), so it cannot call two signals at once without a lock it would
//!   have to take on purpose (rule 1.3), and there are no null arguments (1.9, 2.13).
//! * [`Publisher::subscribe`] takes the subscriber by value: the same subscriber value cannot be
//!   subscribed twice (1.10, 2.12).
//! * Demand is a `u64`. The one bad value left is `0`, which must reach the subscriber as
//!   `on_error` carrying [`SpecViolation::NonPositiveRequest`] (3.9). Demand adds with
//!   saturation; any request of at least [`UNBOUNDED_THRESHOLD`] (the JVM's `Long.MAX_VALUE`)
//!   means *unbounded* (3.17). [`UNBOUNDED`] is the canonical unbounded request.
//! * [`Subscription`] is `Send + Sync` and handed over as a [`SubscriptionRef`]
//!   (`Arc<dyn Subscription>`), so `request` and `cancel` may come from any thread and
//!   re-entrantly from inside `on_next` (3.2, 3.5).
//! * [`Error`] is cloneable and `Send + Sync + 'static`: one failure can reach many
//!   subscribers (1.4, 4.2).
//!
//! ## Example: the smallest correct publisher
//!
//! ```
//! use std::sync::Arc;
//! use rs_api::{Error, Publisher, PublisherExt, Subscriber, Subscription, SubscriptionRef};
//!
//! /// Completes every subscriber at once. After `on_complete` the subscription counts as
//! /// cancelled (1.6), so its methods are no-ops (3.6, 3.7), and the subscriber is dropped
//! /// when `subscribe` returns (3.13).
//! struct Empty;
//!
//! struct Done;
//! impl Subscription for Done {
//!     fn request(&self, _n: u64) {}
//!     fn cancel(&self) {}
//! }
//!
//! impl<T> Publisher<T> for Empty {
//!     fn subscribe(&self, mut subscriber: Box<dyn Subscriber<T>>) {
//!         subscriber.on_subscribe(Arc::new(Done)); // 1.9: first
//!         subscriber.on_complete(); // 1.5, 2.9: without waiting for demand
//!     }
//! }
//!
//! #[derive(Default)]
//! struct Count { completed: bool }
//! impl Subscriber<u8> for Count {
//!     fn on_subscribe(&mut self, s: SubscriptionRef) { s.request(1) }
//!     fn on_next(&mut self, _: u8) { unreachable!("nothing was published") }
//!     fn on_error(&mut self, e: Error) { panic!("{e}") }
//!     fn on_complete(&mut self) { self.completed = true; }
//! }
//! Empty.subscribe_with(Count::default());
//! ```
//!
//! Anything with elements must handle demand arriving re-entrantly from `on_next`,
//! concurrently from other threads, `request(0)`, and cancellation at any point. The `rs-impl`
//! crate's serial drain loop does all of that in one place; build on it, and check the result
//! with the `rs-tck` verification kit (which can also run its concurrency scenarios under loom).
//!
//! ## The 43 rules and who keeps them
//!
//! *Types*: the Rust signatures make a violation impossible or meaningless.
//! *Implementation*: the publisher or subscription must do it; `rs-impl`'s building blocks do
//! it for you. *Subscriber*: the subscriber's own duty. The TCK column names the `rs-tck`
//! check (the JVM TCK's name in snake case; W = subscriber whitebox, B = blackbox, IP =
//! identity processor, loom = the `rs-tck` loom harness).
//!
//! | Rule | Summary | Kept by | Checked in the TCK by |
//! |---|---|---|---|
//! | 1.1 | never more `on_next` than requested in total | implementation | `required_spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements`; loom |
//! | 1.2 | may send fewer than requested, then terminate | implementation | `required_spec102_may_signal_less_than_requested_and_terminate_subscription` |
//! | 1.3 | signals are serial, with happens-before | types (`&mut self`) + implementation | `stochastic_spec103_must_signal_on_methods_sequentially`; loom (in-signal flag) |
//! | 1.4 | a failing publisher signals `on_error` | implementation | `optional_spec104_must_signal_on_error_when_fails`; IP `required_spec104_…` |
//! | 1.5 | a finite stream signals `on_complete` | implementation | `required_spec105_must_signal_on_complete_when_finite_stream_terminates`, `optional_spec105_…` |
//! | 1.6 | after a terminal signal the subscription counts as cancelled | implementation | `untested_spec106_…` made real: the subscriber is dropped (`Weak`) |
//! | 1.7 | nothing after a terminal signal | implementation | `required_spec107_…_on_complete…`, `untested_spec107_…_on_error…` made real; loom |
//! | 1.8 | after cancel, signals stop eventually | implementation | `untested_spec108_…` made real; `required_spec312_…`; loom |
//! | 1.9 | `on_subscribe` first; `subscribe` returns normally; rejection is `on_error` after `on_subscribe` | types (no null) + implementation | `required_spec109_…` ×3; `untested_spec109_subscribe_should_not_throw…` made real (no panic escapes) |
//! | 1.10 | `subscribe` may be called many times with different subscribers | types (by-value subscriber) | `untested_spec110_…` (decided by the types) |
//! | 1.11 | multicast is optional | implementation's choice | `optional_spec111_…` ×5 |
//! | 2.1 | request to receive | subscriber | W/B `required_spec201_…` |
//! | 2.2 | dispatch asynchronously if processing is slow | subscriber (recommendation) | `untested_spec202_…` |
//! | 2.3 | no calls to the subscription from `on_complete`/`on_error` | subscriber | W/B `required_spec203_…` |
//! | 2.4 | after a terminal signal the subscription counts as cancelled | subscriber | W `untested_spec204_…` made real |
//! | 2.5 | cancel a second subscription | subscriber | W/B `required_spec205_…`; loom (racing `on_subscribe`) |
//! | 2.6 | cancel a subscription no longer needed | subscriber | `untested_spec206_…` made real where observable |
//! | 2.7 | own `request`/`cancel` calls are serial | subscriber | `untested_spec207_…` made real (overlap detector) |
//! | 2.8 | tolerate `on_next` after cancel | subscriber | W `required_spec208_…` |
//! | 2.9 | accept `on_complete` with or without a prior request | subscriber | W/B `required_spec209_…` ×2 |
//! | 2.10 | accept `on_error` with or without a prior request | subscriber | W/B `required_spec210_…` ×2 |
//! | 2.11 | signal calls happen-before processing | types (`Send` + ownership) | `untested_spec211_…` (decided by the types) |
//! | 2.12 | `on_subscribe` at most once per subscriber | types (by-value subscriber) | `untested_spec212_…` (decided by the types) |
//! | 2.13 | signals return normally; no null arguments | types (no null) + subscriber; a panic is treated as cancel | `required_spec213_…` (decided by the types); `untested_spec213_failing_on_signal_invocation` made real |
//! | 3.1 | `request`/`cancel` only from the subscriber's context | subscriber | `untested_spec301_…` |
//! | 3.2 | `request` may be called re-entrantly from `on_next`/`on_subscribe` | implementation | `required_spec302_must_allow_synchronous_request_calls_from_on_next_and_on_subscribe` |
//! | 3.3 | recursion between `request` and `on_next` is bounded | implementation | `required_spec303_must_not_allow_unbounded_recursion`; loom |
//! | 3.4 | `request` returns promptly | implementation | `untested_spec304_…` (timing: not a count) |
//! | 3.5 | `cancel` is prompt, idempotent, thread-safe | implementation | `untested_spec305_…`; idempotence and thread safety in loom |
//! | 3.6 | after cancel, `request` is a no-op | implementation | `required_spec306_after_subscription_is_cancelled_request_must_be_nops`; loom |
//! | 3.7 | after cancel, `cancel` is a no-op | implementation | `required_spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops`; loom |
//! | 3.8 | `request(n)` adds `n` to demand | implementation | W `required_spec308_…`; P `required_spec101_…`; loom |
//! | 3.9 | `request(0)` signals `on_error` naming 3.9 | types (`u64`: no negatives) + implementation | `required_spec309_request_zero_must_signal_illegal_argument_exception`, `optional_spec309_…_with_specific_message` |
//! | 3.10 | `request` may call `on_next` synchronously | implementation's choice | `untested_spec310_…` |
//! | 3.11 | `request` may call `on_complete`/`on_error` synchronously | implementation's choice | `untested_spec311_…` |
//! | 3.12 | cancel makes the publisher stop eventually | implementation | `required_spec312_cancel_must_make_the_publisher_to_eventually_stop_signaling`; loom |
//! | 3.13 | cancel makes the publisher drop the subscriber | implementation | `required_spec313_…` with `Weak` instead of a GC; loom |
//! | 3.14 | cancel may shut a stateful publisher down | implementation's choice | `untested_spec314_…` |
//! | 3.15 | `cancel` returns normally | types (no exceptions) + implementation (no panic) | `untested_spec315_…` made real |
//! | 3.16 | `request` returns normally | types + implementation (no panic) | `untested_spec316_…` made real |
//! | 3.17 | demand up to 2^63−1 and beyond; at or above it, unbounded | types (`u64`) + implementation (saturation) | `required_spec317_…` ×3 |
//! | 4.1 | a processor obeys both rule sets | implementation | IP: every P and W test through the processor |
//! | 4.2 | a processor recovers from `on_error` or forwards it | implementation | IP `must_immediately_pass_on_on_error_events_received_from_its_upstream_to_its_downstream` |
#![forbid(unsafe_code)]

mod error;

use std::sync::Arc;

pub use error::{Error, SpecViolation};

/// The canonical unbounded request: `request(UNBOUNDED)` asks for every element the publisher
/// will ever produce. Equal to `u64::MAX`.
///
/// # Examples
///
/// ```
/// assert!(rs_api::is_unbounded(rs_api::UNBOUNDED));
/// ```
pub const UNBOUNDED: u64 = u64::MAX;

/// Any request or accumulated demand at or above this value (2^63−1, the JVM's
/// `Long.MAX_VALUE`) is treated as unbounded (rule 3.17), so bridges to the JVM behave alike.
///
/// # Examples
///
/// ```
/// assert!(rs_api::is_unbounded(rs_api::UNBOUNDED_THRESHOLD));
/// assert!(!rs_api::is_unbounded(rs_api::UNBOUNDED_THRESHOLD - 1));
/// ```
pub const UNBOUNDED_THRESHOLD: u64 = i64::MAX as u64;

/// Whether `demand` means "unbounded" (at least [`UNBOUNDED_THRESHOLD`]).
///
/// # Examples
///
/// ```
/// assert!(rs_api::is_unbounded(u64::MAX));
/// assert!(!rs_api::is_unbounded(1_000_000));
/// ```
pub const fn is_unbounded(demand: u64) -> bool {
    demand >= UNBOUNDED_THRESHOLD
}

/// A shared handle to a [`Subscription`], as handed to [`Subscriber::on_subscribe`].
pub type SubscriptionRef = Arc<dyn Subscription>;

/// A boxed subscriber, as taken by [`Publisher::subscribe`]. `Send`, because [`Subscriber`]
/// is.
///
/// A `BoxSubscriber<T>` is itself a [`Subscriber<T>`].
pub type BoxSubscriber<T> = Box<dyn Subscriber<T>>;

/// A boxed publisher that can move to another thread: what a factory returns when the
/// publisher's type varies or cannot be named (the TCK's hooks accept one wherever they accept
/// `impl Publisher<T>`).
///
/// A `BoxPublisher<T>` is itself a [`Publisher<T>`].
///
/// # Examples
///
/// ```
/// use rs_api::{BoxPublisher, BoxSubscriber, Publisher};
///
/// struct Nothing;
/// impl Publisher<u8> for Nothing {
///     fn subscribe(&self, _subscriber: BoxSubscriber<u8>) {}
/// }
/// fn pick(nothing: bool) -> BoxPublisher<u8> {
///     if nothing { Box::new(Nothing) } else { Box::new(Nothing) }
/// }
/// fn takes_any<P: Publisher<u8>>(_p: P) {}
/// takes_any(pick(true));
/// ```
pub type BoxPublisher<T> = Box<dyn Publisher<T> + Send>;

/// A source of a potentially unbounded sequence of elements, published according to the
/// demand its subscribers signal.
///
/// # Rules
///
/// * 1.1: never more [`on_next`](Subscriber::on_next) calls than requested in total.
/// * 1.2–1.5: may send fewer and terminate; a failure is `on_error`, a finite end `on_complete`.
/// * 1.3: signals to one subscriber are serial (the `&mut self` receivers make overlapping calls
///   impossible without a deliberate lock).
/// * 1.6–1.8: a terminal signal or a cancel ends the subscription; nothing follows it.
/// * 1.9: `on_subscribe` comes first; `subscribe` returns normally and never panics; a refusal is
///   `on_error` after `on_subscribe`.
/// * 1.10, 1.11: may be called many times; serving several subscribers at once is optional.
///
/// The trait is object safe: registries such as the TCK runner hold `Arc<dyn Publisher<T>>`.
pub trait Publisher<T> {
    /// Starts a new subscription for `subscriber`.
    ///
    /// # Rules
    ///
    /// * 1.9: calls `subscriber.on_subscribe` before any other signal, and returns normally.
    /// * 1.10: each call gets its own subscription.
    /// * 3.13: the publisher drops `subscriber` after cancel or the terminal signal.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::{Error, Publisher, Subscriber, SpecViolation, SubscriptionRef};
    ///
    /// /// A publisher that refuses everyone, correctly: on_subscribe, then on_error (1.9).
    /// struct Closed;
    /// struct Noop;
    /// impl rs_api::Subscription for Noop {
    ///     fn request(&self, _n: u64) {}
    ///     fn cancel(&self) {}
    /// }
    /// impl<T> Publisher<T> for Closed {
    ///     fn subscribe(&self, mut s: Box<dyn Subscriber<T>>) {
    ///         s.on_subscribe(std::sync::Arc::new(Noop));
    ///         s.on_error(SpecViolation::Rejected { reason: "closed".into() }.into());
    ///     }
    /// }
    ///
    /// struct Print;
    /// impl Subscriber<u8> for Print {
    ///     fn on_subscribe(&mut self, _s: SubscriptionRef) {}
    ///     fn on_next(&mut self, _item: u8) {}
    ///     fn on_error(&mut self, e: Error) { assert!(e.to_string().contains("1.9")); }
    ///     fn on_complete(&mut self) {}
    /// }
    /// Closed.subscribe(Box::new(Print));
    /// ```
    fn subscribe(&self, subscriber: BoxSubscriber<T>);
}

/// Extension methods for every [`Publisher`].
pub trait PublisherExt<T>: Publisher<T> {
    /// Subscribes a subscriber given by value, boxing it.
    ///
    /// # Rules
    ///
    /// As [`Publisher::subscribe`].
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::{Error, Publisher, PublisherExt, Subscriber, SubscriptionRef};
    /// struct Nothing;
    /// impl Publisher<u8> for Nothing {
    ///     fn subscribe(&self, mut s: Box<dyn Subscriber<u8>>) {
    ///         struct Noop;
    ///         impl rs_api::Subscription for Noop { fn request(&self, _: u64) {} fn cancel(&self) {} }
    ///         s.on_subscribe(std::sync::Arc::new(Noop));
    ///         s.on_complete();
    ///     }
    /// }
    /// struct Sink;
    /// impl Subscriber<u8> for Sink {
    ///     fn on_subscribe(&mut self, _s: SubscriptionRef) {}
    ///     fn on_next(&mut self, _: u8) {}
    ///     fn on_error(&mut self, _: Error) {}
    ///     fn on_complete(&mut self) {}
    /// }
    /// Nothing.subscribe_with(Sink);
    /// ```
    fn subscribe_with<S>(&self, subscriber: S)
    where
        S: Subscriber<T> + 'static,
    {
        self.subscribe(Box::new(subscriber));
    }
}

impl<T, P: Publisher<T> + ?Sized> PublisherExt<T> for P {}

impl<T, P: Publisher<T> + ?Sized> Publisher<T> for Box<P> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        (**self).subscribe(subscriber)
    }
}

impl<T, P: Publisher<T> + ?Sized> Publisher<T> for Arc<P> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        (**self).subscribe(subscriber)
    }
}

/// The receiving end of a stream. A publisher owns its subscriber and calls these methods
/// serially.
///
/// # Rules
///
/// * 2.1: call [`Subscription::request`] to receive elements.
/// * 2.3: never call the subscription or the publisher from `on_complete` or `on_error`.
/// * 2.4: after a terminal signal, consider the subscription cancelled (drop it).
/// * 2.5: cancel any second subscription handed to `on_subscribe` while one is active.
/// * 2.6, 2.7: cancel a subscription no longer needed; make your own `request`/`cancel` calls
///   serial.
/// * 2.8–2.10: accept `on_next` after cancel, and terminal signals with or without a request.
/// * 2.13: return normally. A panic is treated by `rs-impl` publishers as a cancel (the other
///   subscribers are unaffected), but it is still a bug.
///
/// `Send` is a supertrait so a publisher may move its subscriber to another thread (2.11 is
/// then kept by the move's happens-before).
pub trait Subscriber<T>: Send {
    /// Receives the subscription; called exactly once, before any other signal.
    ///
    /// # Rules
    ///
    /// * 1.9: comes first. 2.5: if a subscription is already active, cancel `subscription`.
    /// * 3.2: may call `subscription.request` from inside this method.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::{Error, Subscriber, SubscriptionRef};
    /// struct OneAtATime { sub: Option<SubscriptionRef> }
    /// impl Subscriber<u8> for OneAtATime {
    ///     fn on_subscribe(&mut self, s: SubscriptionRef) {
    ///         if self.sub.is_some() {
    ///             s.cancel(); // 2.5
    ///             return;
    ///         }
    ///         s.request(1);
    ///         self.sub = Some(s);
    ///     }
    ///     fn on_next(&mut self, _: u8) {
    ///         self.sub.as_ref().unwrap().request(1);
    ///     }
    ///     fn on_error(&mut self, _: Error) { self.sub = None; }
    ///     fn on_complete(&mut self) { self.sub = None; }
    /// }
    /// # let _ = OneAtATime { sub: None };
    /// ```
    fn on_subscribe(&mut self, subscription: SubscriptionRef);

    /// Receives the next element, in response to demand.
    ///
    /// # Rules
    ///
    /// * 1.1: called at most as many times as requested in total.
    /// * 3.2, 3.3: may call `request` re-entrantly; the publisher bounds the recursion.
    /// * 2.8: may still be called after `cancel` for elements already in flight.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::{Error, Subscriber, SubscriptionRef};
    /// struct Sum(u64);
    /// impl Subscriber<u64> for Sum {
    ///     fn on_subscribe(&mut self, s: SubscriptionRef) { s.request(rs_api::UNBOUNDED); }
    ///     fn on_next(&mut self, item: u64) { self.0 += item; }
    ///     fn on_error(&mut self, _: Error) {}
    ///     fn on_complete(&mut self) {}
    /// }
    /// let mut s = Sum(0);
    /// s.on_next(2);
    /// s.on_next(3);
    /// assert_eq!(s.0, 5);
    /// ```
    fn on_next(&mut self, item: T);

    /// Receives the terminal failure. No other signal follows.
    ///
    /// # Rules
    ///
    /// * 1.7: last signal. 2.3: must not call the subscription. 2.4: drop the subscription.
    /// * 2.10: may arrive with or without a prior request. 3.9: `request(0)` arrives here.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::{Error, Subscriber, SubscriptionRef};
    /// #[derive(Default)]
    /// struct Failures { sub: Option<SubscriptionRef>, last: Option<Error> }
    /// impl Subscriber<u8> for Failures {
    ///     fn on_subscribe(&mut self, s: SubscriptionRef) { self.sub = Some(s); }
    ///     fn on_next(&mut self, _: u8) {}
    ///     fn on_error(&mut self, e: Error) {
    ///         self.sub = None; // 2.4, without calling it (2.3)
    ///         self.last = Some(e);
    ///     }
    ///     fn on_complete(&mut self) { self.sub = None; }
    /// }
    /// let mut f = Failures::default();
    /// f.on_error(Error::msg("boom"));
    /// assert_eq!(f.last.unwrap().to_string(), "boom");
    /// ```
    fn on_error(&mut self, error: Error);

    /// Receives successful completion. No other signal follows.
    ///
    /// # Rules
    ///
    /// * 1.7: last signal. 2.3: must not call the subscription. 2.4: drop the subscription.
    /// * 2.9: may arrive with or without a prior request.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::{Error, Subscriber, SubscriptionRef};
    /// #[derive(Default)]
    /// struct Done(bool);
    /// impl Subscriber<u8> for Done {
    ///     fn on_subscribe(&mut self, _: SubscriptionRef) {}
    ///     fn on_next(&mut self, _: u8) {}
    ///     fn on_error(&mut self, _: Error) {}
    ///     fn on_complete(&mut self) { self.0 = true; }
    /// }
    /// let mut d = Done::default();
    /// d.on_complete();
    /// assert!(d.0);
    /// ```
    fn on_complete(&mut self);
}

impl<T, S: Subscriber<T> + ?Sized> Subscriber<T> for Box<S> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        (**self).on_subscribe(subscription)
    }
    fn on_next(&mut self, item: T) {
        (**self).on_next(item)
    }
    fn on_error(&mut self, error: Error) {
        (**self).on_error(error)
    }
    fn on_complete(&mut self) {
        (**self).on_complete()
    }
}

/// The link between one publisher and one subscriber: demand flows up through `request`,
/// the end of interest through `cancel`.
///
/// `Send + Sync`: both methods may be called from any thread, concurrently, and re-entrantly
/// from inside the subscriber's signals.
///
/// # Rules
///
/// * 3.2, 3.3: `request` may be called from `on_next`/`on_subscribe`; recursion stays bounded.
/// * 3.4, 3.5, 3.15, 3.16: both methods return promptly and normally (never panic).
/// * 3.6, 3.7: after cancel, both are no-ops.
/// * 3.8, 3.17: `request(n)` adds `n` to the demand, saturating; at or above
///   [`UNBOUNDED_THRESHOLD`] demand is unbounded.
/// * 3.9: `request(0)` cancels and signals `on_error` with [`SpecViolation::NonPositiveRequest`].
/// * 3.12, 3.13: `cancel` stops signals eventually and makes the publisher drop the subscriber.
pub trait Subscription: Send + Sync {
    /// Adds `n` to the demand of this subscription.
    ///
    /// # Rules
    ///
    /// * 3.8: adds `n`. 3.17: saturates; `n ≥` [`UNBOUNDED_THRESHOLD`] is unbounded.
    /// * 3.9: `n == 0` is answered with `on_error(`[`SpecViolation::NonPositiveRequest`]`)`.
    /// * 3.6: a no-op after cancel or a terminal signal. 3.16: returns normally.
    /// * 3.10, 3.11: may deliver `on_next`/`on_complete`/`on_error` synchronously.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use rs_api::Subscription;
    /// /// Demand bookkeeping only: saturating, unbounded at the threshold.
    /// struct Counter(AtomicU64);
    /// impl Subscription for Counter {
    ///     fn request(&self, n: u64) {
    ///         let _ = self.0.fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| {
    ///             Some(d.saturating_add(n))
    ///         });
    ///     }
    ///     fn cancel(&self) {}
    /// }
    /// let c = Counter(AtomicU64::new(0));
    /// c.request(5);
    /// c.request(u64::MAX);
    /// assert!(rs_api::is_unbounded(c.0.load(Ordering::Acquire)));
    /// ```
    fn request(&self, n: u64);

    /// Asks the publisher to stop sending signals and to drop the subscriber.
    ///
    /// # Rules
    ///
    /// * 3.5, 3.7: idempotent and thread-safe. 3.15: returns normally.
    /// * 3.12, 1.8: signals stop eventually (elements already in flight may still arrive, 2.8).
    /// * 3.13: the publisher drops its reference to the subscriber eventually.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use rs_api::Subscription;
    /// struct Flag(AtomicBool);
    /// impl Subscription for Flag {
    ///     fn request(&self, _n: u64) {}
    ///     fn cancel(&self) { self.0.store(true, Ordering::Release); }
    /// }
    /// let f = Flag(AtomicBool::new(false));
    /// f.cancel();
    /// f.cancel(); // 3.7: a no-op the second time
    /// assert!(f.0.load(Ordering::Acquire));
    /// ```
    fn cancel(&self);
}

/// A processing stage: a [`Subscriber`] of `T` upstream and a [`Publisher`] of `R` downstream.
///
/// Implemented automatically for every type that is both. In practice a processor is a cheap
/// `Clone` handle over shared state: one clone is moved into the upstream's `subscribe`, the
/// other serves downstream subscribers.
///
/// # Rules
///
/// * 4.1: obeys both rule sets.
/// * 4.2: on an upstream `on_error`, either recovers (treating that subscription as cancelled)
///   or forwards the error to every downstream subscriber at once.
///
/// # Examples
///
/// ```
/// fn assert_processor<P: rs_api::Processor<u8, u8>>() {}
/// # struct P;
/// # impl rs_api::Subscriber<u8> for P {
/// #   fn on_subscribe(&mut self, _: rs_api::SubscriptionRef) {}
/// #   fn on_next(&mut self, _: u8) {}
/// #   fn on_error(&mut self, _: rs_api::Error) {}
/// #   fn on_complete(&mut self) {}
/// # }
/// # impl rs_api::Publisher<u8> for P { fn subscribe(&self, _: rs_api::BoxSubscriber<u8>) {} }
/// assert_processor::<P>();
/// ```
pub trait Processor<T, R>: Subscriber<T> + Publisher<R> {}

impl<T, R, P: Subscriber<T> + Publisher<R> + ?Sized> Processor<T, R> for P {}
