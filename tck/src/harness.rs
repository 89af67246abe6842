//! The `cargo test` harness: one test per rule and implementation, through `libtest-mimic`.
//!
//! Each [`Test`](crate::suite::Test) of each [`Suite`] becomes one trial named
//! `<implementation>::<verification>::<test name>` (the verification keeps apart tests that
//! two verifications share by name, such as the subscriber whitebox and blackbox ones), so
//! `cargo test -- spec101` filters as usual. Outcomes map
//! as follows:
//!
//! | outcome | shown by `cargo test` as |
//! |---|---|
//! | passed | `ok` |
//! | failed | `FAILED`, with the message |
//! | skipped | `ignored, <reason>` (decided at run time, with the reason) |
//! | untested | `ignored, untested: <reason>` |
//!
//! A skip is never shown as a pass. Use it from a test target with `harness = false`:
//!
//! ```toml
//! [[test]]
//! name = "tck"
//! harness = false
//! ```
//!
//! ```no_run
//! # use rs_tck::publisher::{PublisherVerification, BoxPublisher};
//! # struct MyVerification;
//! # impl PublisherVerification for MyVerification {
//! #     type Item = u64;
//! #     fn create_publisher(&self, n: u64) -> BoxPublisher<u64> { Box::new(rs_impl::source::range(0..n)) }
//! # }
//! // tests/tck.rs
//! rs_tck::tck_main!(rs_tck::publisher::verify("my-publisher", MyVerification));
//! ```

use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::outcome::Outcome;
use crate::suite::Suite;

/// The trials for `suites`, one per test.
pub fn trials(suites: Vec<Suite>) -> Vec<Trial> {
    suites
        .into_iter()
        .flat_map(|suite| {
            let prefix = format!("{}::{}", suite.implementation, suite.verification);
            suite.tests.into_iter().map(move |test| {
                let name = format!("{prefix}::{}", test.name);
                Trial::ignorable_test(name, move || {
                    let o = test.run();
                    match o.outcome {
                        Outcome::Passed => Ok(Completion::Completed),
                        Outcome::Failed => Err(Failed::from(format!(
                            "rule {}: {}",
                            if test.rule.is_empty() { "-" } else { test.rule },
                            o.detail
                        ))),
                        Outcome::Skipped => Ok(Completion::ignored_with(o.detail)),
                        Outcome::Untested => {
                            Ok(Completion::ignored_with(format!("untested: {}", o.detail)))
                        }
                    }
                })
            })
        })
        .collect()
}

/// Parses the command line like libtest and runs `suites`; exits the process with libtest's
/// status (101 if any test failed).
pub fn main(suites: Vec<Suite>) -> ! {
    let args = Arguments::from_args();
    libtest_mimic::run(&args, trials(suites)).exit()
}

/// Expands to a `fn main()` that runs the given suites under the `cargo test` harness (use in
/// a test target with `harness = false`). Each argument is an expression of type
/// [`Suite`](crate::suite::Suite), such as [`publisher::verify`](crate::publisher::verify).
///
/// ```no_run
/// # use rs_tck::publisher::{PublisherVerification, BoxPublisher};
/// # struct Range;
/// # impl PublisherVerification for Range {
/// #     type Item = u64;
/// #     fn create_publisher(&self, n: u64) -> BoxPublisher<u64> { Box::new(rs_impl::source::range(0..n)) }
/// # }
/// rs_tck::tck_main!(
///     rs_tck::publisher::verify("range", Range),
/// );
/// ```
#[macro_export]
macro_rules! tck_main {
    ($($suite:expr),+ $(,)?) => {
        fn main() {
            $crate::harness::main(::std::vec![$($suite),+])
        }
    };
}
