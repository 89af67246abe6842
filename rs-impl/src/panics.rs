//! Subscriber panics (rule 2.13): the guard that catches them, where they are reported, and
//! the text of a panic.
//!
//! A publisher in `rs-impl` catches a subscriber's panic at the callback, treats the
//! subscription as cancelled, drops the subscriber and keeps serving everyone else. The panic
//! itself has already been printed by the process's panic hook when it happened; in addition,
//! the publisher hands a [`SpecViolation::SubscriberPanicked`] to the reporter installed with
//! [`set_reporter`] (none by default), for example to count or log such subscribers.
//!
//! Hand-written publishers use the same guard: call each subscriber signal through
//! [`guard`], and on `Err` treat the subscription as cancelled and drop the subscriber with
//! [`drop_guarded`]; nothing of the panic escapes into the caller of `subscribe`, `request` or
//! `cancel`, and the reporter hears of it.
//!
//! # Examples
//!
//! ```
//! rs_impl::panics::set_reporter(|v| eprintln!("dropped a subscriber: {v}")).ok();
//! ```

use std::any::Any;
use std::sync::OnceLock;

use rs_api::SpecViolation;

/// A boxed reporter of subscriber panics.
pub type Reporter = Box<dyn Fn(&SpecViolation) + Send + Sync>;

static REPORTER: OnceLock<Reporter> = OnceLock::new();

/// Installs the process-wide reporter of subscriber panics. It can be set once; a second call
/// returns the reporter it was given back as the error.
///
/// # Errors
///
/// The given reporter, when one is installed already.
///
/// # Examples
///
/// ```
/// let first = rs_impl::panics::set_reporter(|_| {});
/// let second = rs_impl::panics::set_reporter(|_| {});
/// assert!(first.is_ok() || second.is_err());
/// ```
pub fn set_reporter<F>(reporter: F) -> Result<(), Reporter>
where
    F: Fn(&SpecViolation) + Send + Sync + 'static,
{
    REPORTER.set(Box::new(reporter))
}

/// Calls one subscriber signal (`signal` names it: `"on_next"`, …) under the rule 2.13 guard.
/// A panic is caught at the call, reported to the [reporter](set_reporter), and returned as
/// [`SpecViolation::SubscriberPanicked`]: the caller must then treat the subscription as
/// cancelled (stop signalling, drop the subscriber with [`drop_guarded`]) and go on serving
/// everyone else. Costs nothing on the normal path.
///
/// # Errors
///
/// The violation, when the call panicked.
///
/// # Examples
///
/// A hand-written publisher's emission loop:
///
/// ```
/// use rs_api::{Error, Subscriber, SubscriptionRef};
/// use rs_impl::panics::{drop_guarded, guard};
///
/// struct Fragile;
/// impl Subscriber<u8> for Fragile {
///     fn on_subscribe(&mut self, _: SubscriptionRef) {}
///     fn on_next(&mut self, x: u8) { assert!(x < 3, "too big"); }
///     fn on_error(&mut self, _: Error) {}
///     fn on_complete(&mut self) {}
/// }
///
/// let mut s: Option<Box<dyn Subscriber<u8>>> = Some(Box::new(Fragile));
/// for x in 0..10u8 {
///     let Some(sub) = s.as_mut() else { break };
///     if let Err(violation) = guard("on_next", || sub.on_next(x)) {
///         assert!(violation.to_string().contains("too big"));
///         drop_guarded(s.take()); // 2.13: a panicking subscriber is a cancelled subscriber
///     }
/// }
/// assert!(s.is_none());
/// ```
#[inline]
pub fn guard<R>(signal: &'static str, call: impl FnOnce() -> R) -> Result<R, SpecViolation> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).map_err(|payload| {
        let violation = SpecViolation::SubscriberPanicked {
            signal,
            message: panic_message(&*payload),
        };
        report(&violation);
        violation
    })
}

/// Hands `violation` to the reporter, if one is installed; a panicking reporter is contained
/// (it must not escape into the publisher's caller either).
fn report(violation: &SpecViolation) {
    if let Some(reporter) = REPORTER.get() {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| reporter(violation)));
    }
}

/// Reports that a subscriber panicked in `signal` to the installed reporter, if any.
pub(crate) fn subscriber_panicked(signal: &'static str, payload: Box<dyn Any + Send>) {
    if REPORTER.get().is_some() {
        report(&SpecViolation::SubscriberPanicked {
            signal,
            message: panic_message(&*payload),
        });
    }
}

/// Drops `value`, catching (and reporting) a panic in its `Drop` (a subscriber's or a
/// source's): no panic of user code may escape into the caller of `subscribe`, `request` or
/// `cancel`.
///
/// # Examples
///
/// ```
/// struct Loud;
/// impl Drop for Loud {
///     fn drop(&mut self) { panic!("in drop"); }
/// }
/// rs_impl::panics::drop_guarded(Loud); // returns normally
/// ```
pub fn drop_guarded<V>(value: V) {
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(value))) {
        subscriber_panicked("drop", payload);
    }
}

/// The text of a panic payload: the message of a `panic!` with a string or a format, or
/// `"(non-string panic payload)"`.
///
/// # Examples
///
/// ```
/// let payload = std::panic::catch_unwind(|| panic!("boom {}", 1)).unwrap_err();
/// assert_eq!(rs_impl::panics::panic_message(&*payload), "boom 1");
/// ```
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_owned()
    }
}
