//! Self-test of the `cargo test` harness's isolation: a suite whose tests run in child
//! processes reports a test that aborts the process as failed, with its output, and every other
//! test's result stays intact (the shape the loom mode relies on).
//!
//! The test runs this binary again with [`INNER`] set; that inner run is the harness over
//! [`suite`] (a pass, a failure, an abort, a panic, another pass, a failure that names its
//! rule), and the test reads its report.
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::process::Command;

use libtest_mimic::{Arguments, Trial};
use rs_tck::env::{TestEnvironment, Timeouts};
use rs_tck::outcome::{Stop, TestResult};
use rs_tck::suite::{Suite, TestSpec};

/// Set in the inner run (and inherited by its isolated children).
const INNER: &str = "RS_TCK_HARNESS_SELF_TEST_INNER";

fn passes(_: &(), _: &TestEnvironment) -> TestResult {
    Ok(())
}

fn fails(_: &(), _: &TestEnvironment) -> TestResult {
    Err(Stop::failed("on purpose: the failure's message"))
}

fn aborts(_: &(), _: &TestEnvironment) -> TestResult {
    eprintln!("about to abort");
    std::process::abort()
}

fn panics(_: &(), _: &TestEnvironment) -> TestResult {
    panic!("on purpose: the panic's message")
}

/// Notes what went wrong, then floods its output (more than the failure quotes of it) and
/// aborts: the note must open the failure all the same (issue 20, item 8).
fn notes_then_aborts(_: &(), _: &TestEnvironment) -> TestResult {
    eprintln!(
        "{}rule 9.5: the thing the scenario waited for never happened",
        rs_tck::harness::NOTE_PREFIX
    );
    for i in 0..500 {
        eprintln!("noise line {i}: loom's thread dump, a backtrace, ...");
    }
    std::process::abort()
}

fn fails_naming_its_rule(_: &(), _: &TestEnvironment) -> TestResult {
    Err(Stop::failed("rule 9.4: the rule found broken, named once"))
}

/// The suite of the inner run.
fn suite() -> Suite {
    let specs = vec![
        TestSpec::new(
            "a_passes",
            "",
            "",
            passes as fn(&(), &TestEnvironment) -> TestResult,
        ),
        TestSpec::new("b_fails", "", "9.1", fails),
        TestSpec::new("c_aborts", "", "9.2", aborts),
        TestSpec::new("d_panics", "", "9.3", panics),
        TestSpec::new("e_passes", "", "", passes),
        TestSpec::new("f_fails_naming_its_rule", "", "9.4", fails_naming_its_rule),
        TestSpec::new("g_notes_then_aborts", "", "9.5", notes_then_aborts),
    ];
    Suite::new("harness", "self_test", Timeouts::default(), (), specs).isolated()
}

fn isolation_reports_an_abort_and_keeps_the_others() -> Result<(), libtest_mimic::Failed> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args(["--test-threads=1"])
        .env(INNER, "1")
        .output()
        .map_err(|e| e.to_string())?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("test harness::self_test::{name} ")))
            .unwrap_or_default()
            .to_owned()
    };
    let expect = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!("{what}:\n{text}"))
        }
    };
    expect(
        out.status.code() == Some(101),
        "the inner run must fail (exit 101)",
    )?;
    expect(line("a_passes").ends_with("ok"), "a_passes must pass")?;
    expect(
        line("e_passes").ends_with("ok"),
        "e_passes, after the abort, must pass",
    )?;
    for name in [
        "b_fails",
        "c_aborts",
        "d_panics",
        "f_fails_naming_its_rule",
        "g_notes_then_aborts",
    ] {
        expect(line(name).ends_with("FAILED"), &format!("{name} must fail"))?;
    }
    expect(
        text.contains("rule 9.1: on purpose: the failure's message"),
        "the failure's message, with its rule",
    )?;
    expect(
        text.contains("rule 9.2: the test's process ended without an outcome")
            && text.contains("about to abort"),
        "the abort, with the end of the child's output",
    )?;
    expect(
        text.contains("on purpose: the panic's message"),
        "the panic's message",
    )?;
    expect(
        text.contains("rule 9.4: the rule found broken, named once")
            && !text.contains("rule 9.4: rule 9.4"),
        "a failure that names its rule, without the prefix repeated (issue #9 item 10)",
    )?;
    expect(
        text.contains(
            "rule 9.5: the thing the scenario waited for never happened (the test's process \
             ended without an outcome",
        ),
        "an aborted test's note opens its failure, ahead of the output's end",
    )?;
    expect(
        text.contains("2 passed; 5 failed"),
        "the totals: 2 passed, 5 failed",
    )?;
    Ok(())
}

fn main() {
    if std::env::var_os(INNER).is_some() {
        rs_tck::harness::main([suite()]);
    }
    let args = Arguments::from_args();
    let trials = vec![Trial::test(
        "isolation_reports_an_abort_and_keeps_the_others",
        isolation_reports_an_abort_and_keeps_the_others,
    )];
    libtest_mimic::run(&args, trials).exit()
}
