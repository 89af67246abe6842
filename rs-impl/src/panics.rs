//! Subscriber panics (rule 2.13): where they are reported, and the text of a panic.
//!
//! A publisher in `rs-impl` catches a subscriber's panic at the callback, treats the
//! subscription as cancelled, drops the subscriber and keeps serving everyone else. The panic
//! itself has already been printed by the process's panic hook when it happened; in addition,
//! the publisher hands a [`SpecViolation::SubscriberPanicked`] to the reporter installed with
//! [`set_reporter`] (none by default), for example to count or log such subscribers.
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

/// Reports that a subscriber panicked in `signal` to the installed reporter, if any.
pub(crate) fn subscriber_panicked(signal: &'static str, payload: Box<dyn Any + Send>) {
    if let Some(reporter) = REPORTER.get() {
        let violation = SpecViolation::SubscriberPanicked {
            signal,
            message: panic_message(&*payload),
        };
        // A panicking reporter must not escape into the publisher's caller either.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| reporter(&violation)));
    }
}

/// Drops `value`, catching a panic in its `Drop` (a subscriber's or a source's): no panic of
/// user code may escape into the caller of `subscribe`, `request` or `cancel`.
pub(crate) fn drop_guarded<V>(value: V) {
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
