//! The test environment: timeouts, and the collection of errors found on other threads.
//!
//! This is the JVM TCK's `TestEnvironment`. Checks that run inside a publisher's signals (on
//! whatever thread the publisher uses) cannot fail the test by panicking there: they **flop**,
//! recording an [`AsyncError`] here, and the test thread reports the first one
//! ([`TestEnvironment::verify_no_async_errors`]). Nothing recorded is lost: every test ends
//! with a check of this list.
//!
//! # Timeouts
//!
//! | setting | default | environment variable | used for |
//! |---|---|---|---|
//! | [`Timeouts::default`] | 100 ms | `DEFAULT_TIMEOUT_MILLIS` | every wait for an expected signal |
//! | [`Timeouts::no_signals`] | = default | `DEFAULT_NO_SIGNALS_TIMEOUT_MILLIS` | "expect nothing" windows |
//! | [`Timeouts::poll`] | = default | `DEFAULT_POLL_TIMEOUT_MILLIS` | the polling step of waits for errors and dropped references |
//! | [`Timeouts::reference_drop`] | 300 ms | `PUBLISHER_REFERENCE_GC_TIMEOUT_MILLIS` | how long a publisher may keep a subscriber after cancel or a terminal signal (3.13, 1.6); the JVM's GC timeout |
//!
//! Unlike the JVM TCK 1.0.4 (issue #548), the poll variable is read by every constructor, and
//! under its documented name (the JVM code reads `DEFAULT_POLL_TIMEOUT_MILLIS_ENV`).
//!
//! Each test gets a fresh environment ([`TestEnvironment::new`]), so tests can run in
//! parallel without seeing each other's errors.
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//! use rs_tck::env::{TestEnvironment, Timeouts};
//!
//! let env = TestEnvironment::new(Timeouts::with_default(Duration::from_millis(50)));
//! assert!(env.verify_no_async_errors_no_delay().is_ok());
//! env.flop("rule 1.7: on_next after on_complete");
//! let err = env.verify_no_async_errors_no_delay().unwrap_err();
//! assert!(err.message().contains("1.7"));
//! ```

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rs_api::Error;

use crate::outcome::{Stop, TestResult};

/// The timeouts of a verification run. See the [module docs](self) for their meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// How long to wait for an expected signal.
    pub default: Duration,
    /// How long to watch for signals that must not come.
    pub no_signals: Duration,
    /// The polling step of waits that poll (errors, dropped references).
    pub poll: Duration,
    /// How long a publisher may keep a reference to a subscriber after cancel or a terminal
    /// signal (the JVM's `publisherReferenceGCTimeoutMillis`).
    pub reference_drop: Duration,
}

/// The JVM TCK's default timeout, 100 ms.
pub const DEFAULT_TIMEOUT_MILLIS: u64 = 100;
/// The JVM TCK's default reference-drop (GC) timeout, 300 ms.
pub const DEFAULT_REFERENCE_DROP_TIMEOUT_MILLIS: u64 = 300;

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts::with_default(Duration::from_millis(DEFAULT_TIMEOUT_MILLIS))
    }
}

impl Timeouts {
    /// All waits `default`; no-signals and poll equal to it, reference drop 300 ms.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let t = rs_tck::env::Timeouts::with_default(Duration::from_millis(20));
    /// assert_eq!(t.no_signals, Duration::from_millis(20));
    /// assert_eq!(t.reference_drop, Duration::from_millis(300));
    /// ```
    pub fn with_default(default: Duration) -> Self {
        Timeouts {
            default,
            no_signals: default,
            poll: default,
            reference_drop: Duration::from_millis(DEFAULT_REFERENCE_DROP_TIMEOUT_MILLIS),
        }
    }

    /// Reads the JVM TCK's environment variables (see the [module docs](self)); unset or
    /// unparsable variables keep their defaults.
    ///
    /// # Examples
    ///
    /// ```
    /// let t = rs_tck::env::Timeouts::from_env();
    /// assert!(t.default.as_millis() > 0);
    /// ```
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`from_env`](Self::from_env), with variables looked up by `lookup`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let t = rs_tck::env::Timeouts::from_lookup(|name| match name {
    ///     "DEFAULT_TIMEOUT_MILLIS" => Some("250".to_owned()),
    ///     "DEFAULT_POLL_TIMEOUT_MILLIS" => Some("10".to_owned()),
    ///     _ => None,
    /// });
    /// assert_eq!(t.default, Duration::from_millis(250));
    /// assert_eq!(t.no_signals, Duration::from_millis(250));
    /// assert_eq!(t.poll, Duration::from_millis(10));
    /// assert_eq!(t.reference_drop, Duration::from_millis(300));
    /// ```
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let ms = |name: &str| {
            lookup(name)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_millis)
        };
        let default =
            ms("DEFAULT_TIMEOUT_MILLIS").unwrap_or(Duration::from_millis(DEFAULT_TIMEOUT_MILLIS));
        Timeouts {
            default,
            no_signals: ms("DEFAULT_NO_SIGNALS_TIMEOUT_MILLIS").unwrap_or(default),
            poll: ms("DEFAULT_POLL_TIMEOUT_MILLIS").unwrap_or(default),
            reference_drop: ms("PUBLISHER_REFERENCE_GC_TIMEOUT_MILLIS")
                .unwrap_or(Duration::from_millis(DEFAULT_REFERENCE_DROP_TIMEOUT_MILLIS)),
        }
    }
}

/// An error recorded by a check that ran away from the test thread (a flop).
#[derive(Debug, Clone)]
pub struct AsyncError {
    /// What went wrong; names the rule where one applies.
    pub message: String,
    /// The probe that recorded it, if any (see [`crate::instruments`]).
    pub probe: Option<u64>,
    /// The error a subscriber received through `on_error`, when that is what was recorded.
    pub error: Option<Error>,
}

/// Timeouts plus the list of errors recorded during one test. Cheap to clone: clones share
/// the list.
#[derive(Debug, Clone)]
pub struct TestEnvironment {
    timeouts: Timeouts,
    errors: Arc<Mutex<Vec<AsyncError>>>,
}

impl Default for TestEnvironment {
    fn default() -> Self {
        TestEnvironment::from_env()
    }
}

impl TestEnvironment {
    /// A fresh environment with `timeouts` and no errors.
    ///
    /// # Examples
    ///
    /// ```
    /// let env = rs_tck::env::TestEnvironment::new(Default::default());
    /// assert!(env.async_errors().is_empty());
    /// ```
    pub fn new(timeouts: Timeouts) -> Self {
        TestEnvironment {
            timeouts,
            errors: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// A fresh environment with [`Timeouts::from_env`].
    ///
    /// # Examples
    ///
    /// ```
    /// let env = rs_tck::env::TestEnvironment::from_env();
    /// assert_eq!(*env.timeouts(), rs_tck::env::Timeouts::from_env());
    /// ```
    pub fn from_env() -> Self {
        TestEnvironment::new(Timeouts::from_env())
    }

    /// A fresh environment with the same timeouts and an empty error list.
    ///
    /// # Examples
    ///
    /// ```
    /// let env = rs_tck::env::TestEnvironment::new(Default::default());
    /// env.flop("x");
    /// assert!(env.fresh().async_errors().is_empty());
    /// ```
    pub fn fresh(&self) -> Self {
        TestEnvironment::new(self.timeouts)
    }

    /// The timeouts.
    pub fn timeouts(&self) -> &Timeouts {
        &self.timeouts
    }

    /// How long to wait for an expected signal.
    pub fn default_timeout(&self) -> Duration {
        self.timeouts.default
    }

    /// How long to watch for signals that must not come.
    pub fn no_signals_timeout(&self) -> Duration {
        self.timeouts.no_signals
    }

    /// Records a failure found away from the test thread, without panicking.
    ///
    /// # Examples
    ///
    /// ```
    /// let env = rs_tck::env::TestEnvironment::new(Default::default());
    /// env.flop("rule 1.9: on_next before on_subscribe");
    /// assert_eq!(env.async_errors().len(), 1);
    /// ```
    pub fn flop(&self, message: impl Into<String>) {
        self.record(AsyncError {
            message: message.into(),
            probe: None,
            error: None,
        });
    }

    /// Records an [`AsyncError`] as is.
    pub fn record(&self, error: AsyncError) {
        self.lock().push(error);
    }

    /// A copy of the errors recorded so far.
    pub fn async_errors(&self) -> Vec<AsyncError> {
        self.lock().clone()
    }

    /// Removes and returns the oldest recorded error (the JVM's `dropAsyncError`).
    ///
    /// # Examples
    ///
    /// ```
    /// let env = rs_tck::env::TestEnvironment::new(Default::default());
    /// env.flop("a");
    /// assert_eq!(env.drop_async_error().unwrap().message, "a");
    /// assert!(env.drop_async_error().is_none());
    /// ```
    pub fn drop_async_error(&self) -> Option<AsyncError> {
        let mut errors = self.lock();
        if errors.is_empty() {
            None
        } else {
            Some(errors.remove(0))
        }
    }

    /// Removes and returns the oldest error matching `pred`.
    pub fn take_async_error(&self, pred: impl Fn(&AsyncError) -> bool) -> Option<AsyncError> {
        let mut errors = self.lock();
        let i = errors.iter().position(pred)?;
        Some(errors.remove(i))
    }

    /// Removes every recorded error.
    pub fn clear_async_errors(&self) {
        self.lock().clear();
    }

    /// Fails with the first recorded error, if any, at once.
    ///
    /// # Errors
    ///
    /// A [`Stop::Failed`] carrying the first error's message (and the count of the others).
    pub fn verify_no_async_errors_no_delay(&self) -> TestResult {
        let errors = self.lock();
        match errors.first() {
            None => Ok(()),
            Some(first) if errors.len() == 1 => Err(Stop::failed(first.message.clone())),
            Some(first) => Err(Stop::failed(format!(
                "{} (and {} more async error(s): {})",
                first.message,
                errors.len() - 1,
                errors[1..]
                    .iter()
                    .map(|e| e.message.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ))),
        }
    }

    /// Checks, waits the no-signals timeout, and checks again (the JVM's
    /// `verifyNoAsyncErrors`).
    ///
    /// # Errors
    ///
    /// As [`verify_no_async_errors_no_delay`](Self::verify_no_async_errors_no_delay).
    pub fn verify_no_async_errors(&self) -> TestResult {
        self.verify_no_async_errors_no_delay()?;
        std::thread::sleep(self.timeouts.no_signals);
        self.verify_no_async_errors_no_delay()
    }

    /// Polls `cond` every poll step (capped at 10 ms) until it holds or `timeout` passes;
    /// returns whether it held.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let env = rs_tck::env::TestEnvironment::new(Default::default());
    /// assert!(env.poll_until(Duration::from_millis(5), || true));
    /// assert!(!env.poll_until(Duration::from_millis(5), || false));
    /// ```
    pub fn poll_until(&self, timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        let step = self.timeouts.poll.min(Duration::from_millis(10));
        loop {
            if cond() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            std::thread::sleep(step.min(deadline - now).max(Duration::from_micros(100)));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<AsyncError>> {
        // A panic while holding this lock cannot leave the Vec inconsistent.
        self.errors.lock().unwrap_or_else(|e| e.into_inner())
    }
}
