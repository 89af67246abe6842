//! Outcomes: what one verification test concluded, and how a test body stops early.
//!
//! A test body returns a [`TestResult`]. `Ok` is a pass; `Err(`[`Stop`]`)` is a failure, a
//! skip (the configuration rules the test out, or an optional requirement is not met), or
//! *untested* (the rule cannot be observed; the reason says why). The suite turns that into a
//! [`TestOutcome`]: one of the four [`Outcome`]s plus a detail text, which is what the
//! `cargo test` harness, the runner's table and its JSON report show.
//!
//! # Examples
//!
//! ```
//! use rs_tck::outcome::{Outcome, Stop, TestOutcome, TestResult};
//!
//! fn body(max_elements: u64) -> TestResult {
//!     if max_elements < 3 {
//!         return Err(Stop::skipped("needs 3 elements"));
//!     }
//!     Err(Stop::failed("rule 1.1: too many elements"))
//! }
//! let o = TestOutcome::from_result(body(1), "");
//! assert_eq!(o.outcome, Outcome::Skipped);
//! assert_eq!(o.detail, "needs 3 elements");
//! assert_eq!(TestOutcome::from_result(body(5), "").outcome, Outcome::Failed);
//! assert_eq!(TestOutcome::from_result(Ok(()), "note").detail, "note");
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

/// What separates a failure's message from its hint in a reported detail:
/// `rule 1.5: … — hint: does the publisher …?`.
pub const HINT_SEPARATOR: &str = " — hint: ";

/// How every skip that the Rust types decide opens its reason (the runner's summary counts
/// them apart from the other skips).
pub const DECIDED_BY_THE_TYPES: &str = "decided by the types";

/// The verdict of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The implementation met the rule.
    Passed,
    /// The implementation broke the rule (or the test could not run for a reason the
    /// implementation controls, such as a panic in a factory).
    Failed,
    /// The test did not run, or an optional requirement is not met; the detail says why.
    Skipped,
    /// The rule is not observable by a test; the detail says why.
    Untested,
}

impl Outcome {
    /// The lower-case name used in reports: `passed`, `failed`, `skipped`, `untested`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_tck::outcome::Outcome::Untested.as_str(), "untested");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
            Outcome::Untested => "untested",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a test body stopped before passing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The rule was broken; the message names the rule and what was seen.
    Failed(String),
    /// The test was not run (configuration) or an optional requirement is not met.
    Skipped(String),
    /// The rule cannot be checked by a test; the message says why.
    Untested(String),
}

impl Stop {
    /// A failure with `message`.
    ///
    /// # Examples
    ///
    /// ```
    /// let s = rs_tck::outcome::Stop::failed("rule 1.7: on_next after on_complete");
    /// assert!(s.message().contains("1.7"));
    /// ```
    pub fn failed(message: impl Into<String>) -> Self {
        Stop::Failed(message.into())
    }

    /// A skip with `reason`.
    ///
    /// # Examples
    ///
    /// ```
    /// let s = rs_tck::outcome::Stop::skipped("no failed publisher");
    /// assert_eq!(s.message(), "no failed publisher");
    /// ```
    pub fn skipped(reason: impl Into<String>) -> Self {
        Stop::Skipped(reason.into())
    }

    /// An untested rule with `reason`.
    ///
    /// # Examples
    ///
    /// ```
    /// let s = rs_tck::outcome::Stop::untested("timing only");
    /// assert_eq!(s.message(), "timing only");
    /// ```
    pub fn untested(reason: impl Into<String>) -> Self {
        Stop::Untested(reason.into())
    }

    /// The message or reason.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_tck::outcome::Stop::failed("x").message(), "x");
    /// ```
    pub fn message(&self) -> &str {
        match self {
            Stop::Failed(m) | Stop::Skipped(m) | Stop::Untested(m) => m,
        }
    }

    /// Prefixes a failure's message with `context` (skips and untested stay as they are), unless
    /// the message already opens with it (no `rule 3.7: rule 3.7: …`).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_tck::outcome::Stop;
    /// let s = Stop::failed("cancel panicked").context("rule 3.7");
    /// assert_eq!(s.message(), "rule 3.7: cancel panicked");
    /// let s = Stop::failed("rule 3.7: cancel panicked").context("rule 3.7");
    /// assert_eq!(s.message(), "rule 3.7: cancel panicked");
    /// ```
    pub fn context(self, context: &str) -> Self {
        match self {
            Stop::Failed(m) if m.starts_with(context) => Stop::Failed(m),
            Stop::Failed(m) => Stop::Failed(format!("{context}: {m}")),
            other => other,
        }
    }

    /// Attaches `hint` — what to look at in the implementation for *this* failure — unless the
    /// failure carries a hint already: the first hint attached, the one closest to where the
    /// violation was seen, wins (a check's own hint is attached last, by the suite). Skips and
    /// untested stay as they are.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_tck::outcome::Stop;
    /// let s = Stop::failed("rule 1.6: no on_complete").with_hint("look one element ahead");
    /// let s = s.with_hint("the check's own hint").context("subscriber 1");
    /// assert_eq!(s.message(), "subscriber 1: rule 1.6: no on_complete — hint: look one element ahead");
    /// assert_eq!(s.hint(), Some("look one element ahead"));
    /// ```
    pub fn with_hint(self, hint: &str) -> Self {
        match self {
            Stop::Failed(m) if !m.contains(HINT_SEPARATOR) && !hint.is_empty() => {
                Stop::Failed(format!("{m}{HINT_SEPARATOR}{hint}"))
            }
            other => other,
        }
    }

    /// The hint a failure carries, if any (see [`with_hint`](Self::with_hint)).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_tck::outcome::Stop::failed("x").hint(), None);
    /// ```
    pub fn hint(&self) -> Option<&str> {
        match self {
            Stop::Failed(m) => m.split_once(HINT_SEPARATOR).map(|(_, h)| h),
            _ => None,
        }
    }

    /// Appends `more` to a failure's message, before its hint (which stays last).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_tck::outcome::Stop;
    /// let s = Stop::failed("no element").with_hint("request").append(" (async errors: x)");
    /// assert_eq!(s.message(), "no element (async errors: x) — hint: request");
    /// ```
    pub fn append(self, more: &str) -> Self {
        match self {
            Stop::Failed(m) => match m.split_once(HINT_SEPARATOR) {
                Some((msg, hint)) => Stop::Failed(format!("{msg}{more}{HINT_SEPARATOR}{hint}")),
                None => Stop::Failed(format!("{m}{more}")),
            },
            other => other,
        }
    }

    /// Whether this is a failure.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(rs_tck::outcome::Stop::failed("x").is_failure());
    /// ```
    pub fn is_failure(&self) -> bool {
        matches!(self, Stop::Failed(_))
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// What a test body returns: `Ok` passes, `Err` stops with a [`Stop`].
pub type TestResult<T = ()> = Result<T, Stop>;

/// The reported result of one test: the verdict and its detail text (the failure message, the
/// skip reason, or a note on a pass).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestOutcome {
    /// The verdict.
    pub outcome: Outcome,
    /// Why; empty for a plain pass.
    pub detail: String,
}

impl TestOutcome {
    /// Converts a body's result; `pass_note` becomes the detail of a pass.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_tck::outcome::{Outcome, Stop, TestOutcome};
    /// let o = TestOutcome::from_result(Err(Stop::untested("why")), "");
    /// assert_eq!((o.outcome, o.detail.as_str()), (Outcome::Untested, "why"));
    /// ```
    pub fn from_result(result: TestResult, pass_note: &str) -> Self {
        match result {
            Ok(()) => TestOutcome {
                outcome: Outcome::Passed,
                detail: pass_note.to_owned(),
            },
            Err(Stop::Failed(m)) => TestOutcome {
                outcome: Outcome::Failed,
                detail: m,
            },
            Err(Stop::Skipped(m)) => TestOutcome {
                outcome: Outcome::Skipped,
                detail: m,
            },
            Err(Stop::Untested(m)) => TestOutcome {
                outcome: Outcome::Untested,
                detail: m,
            },
        }
    }

    /// Whether the verdict is [`Outcome::Failed`].
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_tck::outcome::TestOutcome;
    /// assert!(!TestOutcome::from_result(Ok(()), "").is_failure());
    /// ```
    pub fn is_failure(&self) -> bool {
        self.outcome == Outcome::Failed
    }
}

/// Stops the test body with a failure: `fail!("rule {}: ...", x)`.
macro_rules! fail {
    ($($arg:tt)*) => {
        return ::std::result::Result::Err($crate::outcome::Stop::Failed(format!($($arg)*)))
    };
}

/// Fails the test body unless `cond` holds: `ensure!(cond, "rule {}: ...", x)`.
macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            $crate::outcome::fail!($($arg)*);
        }
    };
}

pub(crate) use {ensure, fail};
