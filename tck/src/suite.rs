//! Suites: the tests of one verification bound to one implementation, ready to run.
//!
//! A verification (publisher, subscriber whitebox and blackbox, identity processor, and the loom
//! mode's) describes its tests as a table of [`TestSpec`]s over its own trait `V`. [`Suite::new`] binds that
//! table to one implementation and erases `V`, so that the `cargo test` harness
//! ([`crate::harness`]) and the runner ([`crate::runner`]) handle every verification alike.
//!
//! Running a [`Test`] gives it a fresh [`TestEnvironment`], catches a panic of the test body
//! (for example one from a user's factory) as a failure, and, after a body that passed, checks
//! that no error was flopped meanwhile: nothing found on another thread is lost.
//!
//! # Examples
//!
//! A one-test verification over a trait of your own:
//!
//! ```
//! use rs_tck::env::{TestEnvironment, Timeouts};
//! use rs_tck::outcome::{Outcome, Stop};
//! use rs_tck::suite::{Suite, TestSpec};
//!
//! trait Answer: Send + Sync + 'static {
//!     fn answer(&self) -> u32;
//! }
//! struct FortyTwo;
//! impl Answer for FortyTwo {
//!     fn answer(&self) -> u32 { 42 }
//! }
//! fn check<V: Answer>(v: &V, _env: &TestEnvironment) -> Result<(), Stop> {
//!     if v.answer() == 42 { Ok(()) } else { Err(Stop::failed("wrong answer")) }
//! }
//! let specs = vec![TestSpec::new("required_answer", "required_answer", "0.0", check::<FortyTwo>)];
//! let suite = Suite::new("forty-two", "answer", Timeouts::default(), FortyTwo, specs);
//! assert_eq!(suite.tests[0].run().outcome, Outcome::Passed);
//! ```

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::env::{TestEnvironment, Timeouts};
use crate::outcome::{Stop, TestOutcome, TestResult};
use rs_impl::panics::panic_message;

/// The JVM TCK's classes of tests, from the test name's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `required_`: must pass.
    Required,
    /// `optional_`: an unmet optional requirement is reported as skipped.
    Optional,
    /// `stochastic_`: repeated; can be switched off.
    Stochastic,
    /// `untested_`: the JVM TCK checks nothing; this TCK checks what Rust makes observable.
    Untested,
    /// Any other name.
    Other,
}

impl Kind {
    /// The kind of a test named `name`.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_tck::suite::Kind;
    /// assert_eq!(Kind::of("optional_spec111_may_support_multi_subscribe"), Kind::Optional);
    /// ```
    pub fn of(name: &str) -> Kind {
        if name.starts_with("required_") {
            Kind::Required
        } else if name.starts_with("optional_") {
            Kind::Optional
        } else if name.starts_with("stochastic_") {
            Kind::Stochastic
        } else if name.starts_with("untested_") {
            Kind::Untested
        } else {
            Kind::Other
        }
    }
}

/// The body of a test over verification `V`.
pub type TestFn<V> = fn(&V, &TestEnvironment) -> TestResult;

/// One test of a verification over the trait `V`: its names, its rule and its body.
pub struct TestSpec<V: ?Sized> {
    /// Our name: the JVM name in snake case.
    pub name: &'static str,
    /// The JVM TCK's method name.
    pub jvm_name: &'static str,
    /// The rule it checks (`"1.1"`); empty for setup tests.
    pub rule: &'static str,
    /// The test body.
    pub run: TestFn<V>,
    /// The detail reported when the test passes (empty normally; used to say how a test
    /// departs from the JVM's, as the 3.9 negative-number test does).
    pub pass_note: &'static str,
    /// What to look at in the implementation when the check fails (the JVM TCK's
    /// `PublisherVerificationRules` messages do the same); appended to a failure's detail as
    /// `hint: …`. Every check of this crate's verifications has one. It is the hint of the
    /// violation the check is about: a failure that a check finds on the way (the stream did not
    /// end, an element too many) carries the hint of what was seen instead
    /// ([`Stop::with_hint`], [`crate::hints`]).
    pub hint: &'static str,
}

impl<V: ?Sized> TestSpec<V> {
    /// A spec with no pass note.
    pub fn new(
        name: &'static str,
        jvm_name: &'static str,
        rule: &'static str,
        run: TestFn<V>,
    ) -> Self {
        TestSpec {
            name,
            jvm_name,
            rule,
            run,
            pass_note: "",
            hint: "",
        }
    }

    /// Sets the detail reported on a pass.
    pub fn with_pass_note(mut self, note: &'static str) -> Self {
        self.pass_note = note;
        self
    }

    /// Sets the hint appended to a failure: what to look at in the implementation.
    pub fn with_hint(mut self, hint: &'static str) -> Self {
        self.hint = hint;
        self
    }

    /// The kind, from the name's prefix.
    pub fn kind(&self) -> Kind {
        Kind::of(self.name)
    }
}

impl<V: ?Sized> fmt::Debug for TestSpec<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestSpec")
            .field("name", &self.name)
            .field("rule", &self.rule)
            .finish_non_exhaustive()
    }
}

/// The one way every verification writes its table of tests:
/// `specs![V, module: check_name, "jvmCheckName", "1.1", "hint"; ...]` makes a
/// `Vec<TestSpec<V>>` whose bodies are `module::check_name::<V>`, each with its hint (what to
/// look at in the implementation when the check fails).
macro_rules! specs {
    ($v:ty, $m:ident: $($name:ident, $jvm:literal, $rule:literal, $hint:expr;)*) => {
        ::std::vec![$(
            $crate::suite::TestSpec::new(::std::stringify!($name), $jvm, $rule, $m::$name::<$v>)
                .with_hint($hint)
        ),*]
    };
}
pub(crate) use specs;

type Runner = Arc<dyn Fn() -> TestOutcome + Send + Sync>;

/// One runnable test of one implementation.
#[derive(Clone)]
pub struct Test {
    /// Our name (snake case JVM name).
    pub name: &'static str,
    /// The JVM TCK's method name.
    pub jvm_name: &'static str,
    /// The rule; empty for setup tests.
    pub rule: &'static str,
    /// The JVM kind.
    pub kind: Kind,
    /// What to look at in the implementation when it fails (see [`TestSpec::hint`]).
    pub hint: &'static str,
    /// Whether the `cargo test` harness runs it in a child process of its own (see
    /// [`Suite::isolated`]).
    pub isolated: bool,
    runner: Runner,
}

impl fmt::Debug for Test {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Test")
            .field("name", &self.name)
            .field("rule", &self.rule)
            .finish_non_exhaustive()
    }
}

impl Test {
    /// Runs the test in a fresh environment.
    pub fn run(&self) -> TestOutcome {
        (self.runner)()
    }
}

/// The tests of one verification over one implementation.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The implementation's name, as shown in reports (`"source::range"`).
    pub implementation: String,
    /// The verification's name: `"publisher"`, `"subscriber_whitebox"`, `"subscriber_blackbox"`,
    /// `"identity_processor"`, `"loom_publisher"`, ...
    pub verification: &'static str,
    /// The tests, in the verification's order.
    pub tests: Vec<Test>,
}

impl Suite {
    /// Binds `specs` to the implementation `subject`; each test runs with `timeouts`. (Every
    /// verification's `verify` is this call: `Suite::new(implementation, VERIFICATION,
    /// v.timeouts(), v, specs::<V>())`.)
    pub fn new<V>(
        implementation: impl Into<String>,
        verification: &'static str,
        timeouts: Timeouts,
        subject: V,
        specs: Vec<TestSpec<V>>,
    ) -> Suite
    where
        V: Send + Sync + 'static,
    {
        let subject = Arc::new(subject);
        let tests = specs
            .into_iter()
            .map(|spec| {
                let subject = subject.clone();
                let (run, note, hint) = (spec.run, spec.pass_note, spec.hint);
                let runner: Runner = Arc::new(move || {
                    let env = TestEnvironment::new(timeouts);
                    with_hint(run_body(&env, note, || run(&subject, &env)), hint)
                });
                Test {
                    name: spec.name,
                    jvm_name: spec.jvm_name,
                    rule: spec.rule,
                    kind: Kind::of(spec.name),
                    hint: spec.hint,
                    isolated: false,
                    runner,
                }
            })
            .collect();
        Suite {
            implementation: implementation.into(),
            verification,
            tests,
        }
    }

    /// The test named `name`, if any.
    pub fn test(&self, name: &str) -> Option<&Test> {
        self.tests.iter().find(|t| t.name == name)
    }

    /// Marks the test named `test` as a known failure of this implementation, for a registry of
    /// implementations that is not to be weakened while a bug is being fixed: while the test
    /// fails, it is reported as **skipped**, with `reason` and the failure's own detail (never as
    /// a pass); once it passes, it is reported as **failed**, saying the mark is stale. Other
    /// outcomes are reported as they are. The check itself is unchanged.
    ///
    /// # Panics
    ///
    /// When the suite has no test named `test` (a mark must not silently miss).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_tck::outcome::Outcome;
    /// # use rs_tck::publisher::PublisherVerification;
    /// # struct Range;
    /// # impl PublisherVerification for Range {
    /// #     type Item = u64;
    /// #     fn create_publisher(&self, n: u64) -> impl rs_api::Publisher<u64> + Send + 'static {
    /// #         rs_impl::source::range(0..n)
    /// #     }
    /// # }
    /// let name = "required_spec102_may_signal_less_than_requested_and_terminate_subscription";
    /// let suite = rs_tck::publisher::verify("range", Range).known_failure(name, "bug #1");
    /// let o = suite.test(name).unwrap().run();
    /// assert_eq!(o.outcome, Outcome::Failed); // range passes: the mark is stale
    /// assert!(o.detail.contains("bug #1"));
    /// ```
    pub fn known_failure(mut self, test: &str, reason: &'static str) -> Suite {
        let t = self
            .tests
            .iter_mut()
            .find(|t| t.name == test)
            .unwrap_or_else(|| panic!("no test named {test} to mark as a known failure"));
        let inner = t.runner.clone();
        t.runner = Arc::new(move || {
            let o = inner();
            match o.outcome {
                crate::outcome::Outcome::Failed => TestOutcome {
                    outcome: crate::outcome::Outcome::Skipped,
                    detail: format!("KNOWN FAILURE ({reason}): {}", o.detail),
                },
                crate::outcome::Outcome::Passed => TestOutcome {
                    outcome: crate::outcome::Outcome::Failed,
                    detail: format!(
                        "marked as a known failure ({reason}), but it passes now: remove the mark"
                    ),
                },
                _ => o,
            }
        });
        self
    }

    /// Marks every test to run in a child process of its own under the `cargo test` harness
    /// ([`crate::harness`]), so that a test that aborts the process (as a failure found by loom
    /// can) is reported as failed with its output and leaves the other tests' results intact.
    /// [`Test::run`] itself (the runner, self-tests) still runs in-process.
    ///
    /// # Examples
    ///
    /// ```
    /// # use rs_tck::publisher::PublisherVerification;
    /// # struct Range;
    /// # impl PublisherVerification for Range {
    /// #     type Item = u64;
    /// #     fn create_publisher(&self, n: u64) -> impl rs_api::Publisher<u64> + Send + 'static {
    /// #         rs_impl::source::range(0..n)
    /// #     }
    /// # }
    /// let suite = rs_tck::publisher::verify("range", Range).isolated();
    /// assert!(suite.tests.iter().all(|t| t.isolated));
    /// ```
    pub fn isolated(mut self) -> Suite {
        for t in &mut self.tests {
            t.isolated = true;
        }
        self
    }
}

/// The words of an optional requirement that is not met (a skip, as in the JVM TCK).
pub(crate) const UNMET_OPTIONAL: &str = "does NOT implement this OPTIONAL requirement";

/// A failure's detail, or an unmet optional requirement's, with the check's hint appended
/// (`… — hint: does the publisher emit only while demand is left …?`), unless the failure
/// carries a hint of its own already: the hint that names the violation seen
/// ([`Stop::with_hint`]) wins over the check's general one.
fn with_hint(mut outcome: TestOutcome, hint: &str) -> TestOutcome {
    let unmet = outcome.outcome == crate::outcome::Outcome::Skipped
        && outcome.detail.contains(UNMET_OPTIONAL);
    if (outcome.is_failure() || unmet)
        && !hint.is_empty()
        && !outcome.detail.contains(crate::outcome::HINT_SEPARATOR)
    {
        outcome.detail = format!("{}{}{hint}", outcome.detail, crate::outcome::HINT_SEPARATOR);
    }
    outcome
}

/// Runs a body: catches its panic, and after a pass checks the environment for flops.
fn run_body(env: &TestEnvironment, note: &str, body: impl FnOnce() -> TestResult) -> TestOutcome {
    let result = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => env.verify_no_async_errors_no_delay(),
        Ok(Err(stop)) => Err(stop),
        Err(p) => Err(Stop::failed(format!(
            "the test panicked (in the implementation's factory or a probe): {}",
            panic_message(&*p)
        ))),
    };
    TestOutcome::from_result(result, note)
}
