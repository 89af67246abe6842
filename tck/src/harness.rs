//! The `cargo test` harness: one test per rule and implementation, through `libtest-mimic`.
//!
//! Each [`Test`] of each [`Suite`] becomes one trial named
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
//! A skip is never shown as a pass.
//!
//! # Isolated tests
//!
//! A test of an [isolated](Suite::isolated) suite (the loom mode's) runs in a child process:
//! this test binary again, filtered to that one test (`--exact`), with the environment variable
//! [`CHILD`] set. The child runs the test in-process and prints its outcome on a line of its
//! own; the parent reports it. When the child dies without an outcome (an abort, a signal, a
//! stack overflow), the test fails with what the child noted before it died ([`NOTE_PREFIX`]
//! lines: in the loom mode, what a deadlocked scenario waited for, or the violation found),
//! then its exit status and the end of its output; every other test still runs and reports.
//!
//! Use it from a test target with `harness = false`:
//!
//! ```toml
//! [[test]]
//! name = "tck"
//! harness = false
//! ```
//!
//! ```no_run
//! # use rs_tck::publisher::PublisherVerification;
//! # struct MyVerification;
//! # impl PublisherVerification for MyVerification {
//! #     type Item = u64;
//! #     fn create_publisher(&self, n: u64) -> impl rs_api::Publisher<u64> + Send + 'static {
//! #         rs_impl::source::range(0..n)
//! #     }
//! # }
//! // tests/tck.rs
//! rs_tck::tck_main!(rs_tck::publisher::verify("my-publisher", MyVerification));
//! ```

use std::process::Command;

use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::outcome::{Outcome, TestOutcome};
use crate::suite::{Suite, Test};

/// The environment variable that marks the child process of an isolated test.
pub const CHILD: &str = "RS_TCK_ISOLATED_CHILD";

/// The prefix of the line on which an isolated test's child reports its outcome (JSON).
const OUTCOME_LINE: &str = "rs-tck-outcome: ";

/// How much of a dead child's output a failure quotes.
const OUTPUT_TAIL: usize = 4000;

/// The prefix of a line an isolated test prints (to stdout or stderr) to say what went wrong
/// before it may abort: the loom mode prints what a deadlocked scenario waited for, the
/// violation a model thread found, or a signal from a thread loom does not know. When the
/// child dies without an outcome, these lines open the failure — whatever the rest of its
/// output, which is quoted after them, only its end.
pub const NOTE_PREFIX: &str = "rs-tck loom: ";

/// The trials for `suites`, one per test.
pub fn trials(suites: impl IntoIterator<Item = Suite>) -> Vec<Trial> {
    let child = std::env::var_os(CHILD).is_some();
    suites
        .into_iter()
        .flat_map(|suite| {
            let prefix = format!("{}::{}", suite.implementation, suite.verification);
            suite.tests.into_iter().map(move |test| {
                let name = format!("{prefix}::{}", test.name);
                let trial_name = name.clone();
                Trial::ignorable_test(trial_name, move || {
                    let o = if test.isolated && !child {
                        run_in_child(&name)
                    } else {
                        let o = test.run();
                        if test.isolated {
                            report_to_parent(&o);
                        }
                        o
                    };
                    completion(&test, o)
                })
            })
        })
        .collect()
}

/// How `cargo test` shows an outcome.
fn completion(test: &Test, o: TestOutcome) -> Result<Completion, Failed> {
    match o.outcome {
        Outcome::Passed => Ok(Completion::Completed),
        Outcome::Failed => Err(Failed::from(failure_message(test.rule, &o.detail))),
        Outcome::Skipped => Ok(Completion::ignored_with(o.detail)),
        Outcome::Untested => Ok(Completion::ignored_with(format!("untested: {}", o.detail))),
    }
}

/// A failure as `cargo test` shows it: the detail, after the test's rule unless the detail
/// already opens with the rule it found broken (`rule 3.6: …` in a 3.12 scenario) or with a
/// loom scenario's cause (what a deadlock never brought, which names its rule:
/// [`DEADLOCKED`](crate::loom::DEADLOCKED); a publisher on a thread loom cannot see), or the
/// test has no rule (setup tests, bounded buffering): never `rule 1.3: rule 1.3: …`.
fn failure_message(rule: &str, detail: &str) -> String {
    if detail.starts_with("rule ") || crate::loom::opens_with_its_cause(detail) || rule.is_empty() {
        detail.to_owned()
    } else {
        format!(
            "rule {}: {detail}",
            if rule.is_empty() { "-" } else { rule }
        )
    }
}

/// In the child: the outcome, on a line of its own for the parent.
fn report_to_parent(o: &TestOutcome) {
    match serde_json::to_string(o) {
        Ok(json) => println!("\n{OUTCOME_LINE}{json}"),
        Err(e) => println!("\n{OUTCOME_LINE}(unserializable outcome: {e})"),
    }
}

/// In the parent: runs the test named `name` in a child process and reads its outcome.
fn run_in_child(name: &str) -> TestOutcome {
    let failed = |detail: String| TestOutcome {
        outcome: Outcome::Failed,
        detail,
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return failed(format!(
                "cannot find the test binary to isolate the test: {e}"
            ))
        }
    };
    let out = match Command::new(exe)
        .args([name, "--exact", "--test-threads=1"])
        .env(CHILD, "1")
        .env("RUST_BACKTRACE", "0")
        .output()
    {
        Ok(out) => out,
        Err(e) => return failed(format!("cannot start the isolated test's process: {e}")),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let reported = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(OUTCOME_LINE))
        .and_then(|json| serde_json::from_str::<TestOutcome>(json).ok());
    match reported {
        Some(o) => o,
        None => {
            let text = format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
            failed(aborted(&text, &out.status.to_string()))
        }
    }
}

/// The failure of a child that died without an outcome: its notes ([`NOTE_PREFIX`]) first, in
/// the order printed and without repeats, then the end of its output.
fn aborted(text: &str, status: &str) -> String {
    let mut notes: Vec<&str> = Vec::new();
    for line in text.lines() {
        // Anywhere in the line: the child's stdout may end mid-line where its stderr begins.
        if let Some(note) = line
            .find(NOTE_PREFIX)
            .map(|i| line[i + NOTE_PREFIX.len()..].trim_end())
        {
            // An empty note is a torn one (output of another thread written into the
            // middle of it): it says nothing, and its whole text follows elsewhere.
            if !note.is_empty() && !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    let start = text.len().saturating_sub(OUTPUT_TAIL);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    let tail = format!(
        "the test's process ended without an outcome ({status}), so it aborted or crashed; \
         the end of its output:\n{}",
        &text[start..]
    );
    if notes.is_empty() {
        tail
    } else {
        format!("{} ({tail})", notes.join("; "))
    }
}

/// Parses the command line like libtest and runs `suites`; exits the process with libtest's
/// status (101 if any test failed).
pub fn main(suites: impl IntoIterator<Item = Suite>) -> ! {
    let args = Arguments::from_args();
    libtest_mimic::run(&args, trials(suites)).exit()
}

/// Expands to a `fn main()` that runs the given suites under the `cargo test` harness (use in
/// a test target with `harness = false`). Each argument is an expression of type
/// [`Suite`](crate::suite::Suite), such as [`publisher::verify`](crate::publisher::verify).
///
/// ```no_run
/// # use rs_tck::publisher::PublisherVerification;
/// # struct Range;
/// # impl PublisherVerification for Range {
/// #     type Item = u64;
/// #     fn create_publisher(&self, n: u64) -> impl rs_api::Publisher<u64> + Send + 'static {
/// #         rs_impl::source::range(0..n)
/// #     }
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
