//! Reports: one [`Record`] per test and implementation, the runner's table and totals, and
//! the JSON file.
//!
//! The last line of the runner's output is [`Totals::summary_line`]:
//! `N passed, N failed, N skipped`, where **skipped counts both `skipped` and `untested`**
//! outcomes (neither is a pass; the table and the JSON tell them apart).
//!
//! # Examples
//!
//! ```
//! use rs_tck::outcome::Outcome;
//! use rs_tck::report::{Record, Totals};
//!
//! let r = Record {
//!     implementation: "source::range".into(),
//!     verification: "publisher".into(),
//!     test: "untested_spec304_request_should_not_perform_heavy_computations".into(),
//!     rule: "3.4".into(),
//!     outcome: Outcome::Untested,
//!     detail: "time".into(),
//! };
//! let totals = Totals::of(std::slice::from_ref(&r));
//! assert_eq!(totals.summary_line(), "0 passed, 0 failed, 1 skipped");
//! let json = serde_json::to_string(&[r]).unwrap();
//! assert!(json.contains(r#""outcome":"untested""#));
//! ```

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use crate::outcome::{Outcome, TestOutcome};
use crate::suite::{Suite, Test};

/// One row of the report (and one object of the JSON array).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Record {
    /// The implementation's registered name.
    pub implementation: String,
    /// The verification: `publisher`, ...
    pub verification: String,
    /// The test's name.
    pub test: String,
    /// The rule, or empty for setup tests.
    pub rule: String,
    /// The verdict.
    pub outcome: Outcome,
    /// The failure message, skip reason, or pass note.
    pub detail: String,
}

impl Record {
    /// Whether this is a skip that the Rust types decide (the reason opens with
    /// [`DECIDED_BY_THE_TYPES`](crate::outcome::DECIDED_BY_THE_TYPES)): reported apart from the
    /// other skips, which configuration or an unmet optional requirement cause.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_tck::outcome::Outcome;
    /// use rs_tck::report::Record;
    /// let r = Record {
    ///     implementation: "x".into(),
    ///     verification: "publisher".into(),
    ///     test: "required_spec109_subscribe_throw_npe_on_null_subscriber".into(),
    ///     rule: "1.9".into(),
    ///     outcome: Outcome::Skipped,
    ///     detail: "decided by the types: no null".into(),
    /// };
    /// assert!(r.is_decided_by_the_types());
    /// ```
    pub fn is_decided_by_the_types(&self) -> bool {
        self.outcome == Outcome::Skipped
            && self
                .detail
                .starts_with(crate::outcome::DECIDED_BY_THE_TYPES)
    }

    /// The record of `test` of `suite` with `outcome`.
    pub fn new(suite: &Suite, test: &Test, outcome: TestOutcome) -> Self {
        Record {
            implementation: suite.implementation.clone(),
            verification: suite.verification.to_owned(),
            test: test.name.to_owned(),
            rule: test.rule.to_owned(),
            outcome: outcome.outcome,
            detail: outcome.detail,
        }
    }
}

/// Counts of outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Passed tests.
    pub passed: usize,
    /// Failed tests.
    pub failed: usize,
    /// Skipped tests (not counting untested ones).
    pub skipped: usize,
    /// Untested tests.
    pub untested: usize,
}

impl Totals {
    /// The totals of `records`.
    pub fn of(records: &[Record]) -> Self {
        let mut t = Totals::default();
        for r in records {
            match r.outcome {
                Outcome::Passed => t.passed += 1,
                Outcome::Failed => t.failed += 1,
                Outcome::Skipped => t.skipped += 1,
                Outcome::Untested => t.untested += 1,
            }
        }
        t
    }

    /// `N passed, N failed, N skipped`, with untested counted as skipped.
    pub fn summary_line(&self) -> String {
        format!(
            "{} passed, {} failed, {} skipped",
            self.passed,
            self.failed,
            self.skipped + self.untested
        )
    }
}

/// Writes, per implementation and verification, a table of test, rule, outcome and reason,
/// then its totals.
///
/// # Errors
///
/// An I/O error of `out`.
pub fn write_tables(out: &mut dyn Write, records: &[Record]) -> io::Result<()> {
    let mut start = 0;
    while start < records.len() {
        let (imp, ver) = (&records[start].implementation, &records[start].verification);
        let end = records[start..]
            .iter()
            .position(|r| (&r.implementation, &r.verification) != (imp, ver))
            .map_or(records.len(), |p| start + p);
        let group = &records[start..end];
        writeln!(out, "\n== {imp} ({ver} verification) ==")?;
        let width = group.iter().map(|r| r.test.len()).max().unwrap_or(4).max(4);
        writeln!(
            out,
            "{:<width$}  {:<5}  {:<8}  reason",
            "test", "rule", "outcome"
        )?;
        for r in group {
            let rule = if r.rule.is_empty() { "-" } else { &r.rule };
            writeln!(
                out,
                "{:<width$}  {:<5}  {:<8}  {}",
                r.test,
                rule,
                r.outcome.as_str(),
                r.detail
            )?;
        }
        let t = Totals::of(group);
        writeln!(
            out,
            "{imp}: {} passed, {} failed, {} skipped, {} untested",
            t.passed, t.failed, t.skipped, t.untested
        )?;
        start = end;
    }
    Ok(())
}

/// The widest a line of the summary ([`write_summary`]) is, in characters: longer names and
/// messages are cut (with `…`) to fit.
pub const SUMMARY_WIDTH: usize = 120;

/// The widest an implementation's name is shown in the summary (longer names are cut, with
/// `…`).
const SUMMARY_NAME_WIDTH: usize = 44;

/// The widest a failing test's name is shown in the summary, so that the start of its message
/// fits on the line too (test names run to 150 characters).
const SUMMARY_TEST_WIDTH: usize = 48;

fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_owned()
    } else {
        let mut t: String = text.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// `head` then `name: message`, within [`SUMMARY_WIDTH`]: the name cut to
/// [`SUMMARY_TEST_WIDTH`] when the whole does not fit, the message to what is left.
fn fit(head: &str, name: &str, message: &str) -> String {
    let line = format!("{head}{name}: {message}");
    if line.chars().count() <= SUMMARY_WIDTH {
        return line;
    }
    let name = cut(name, SUMMARY_TEST_WIDTH);
    cut(&format!("{head}{name}: {message}"), SUMMARY_WIDTH)
}

/// Writes the one-screen summary: a line per implementation (over all its verifications) with
/// its passed, failed and skipped tests — the skips the types decide and the untested rules in
/// columns of their own, apart from the skips that configuration or an unmet optional
/// requirement cause — and under it, indented, its first failure (verification, test and the
/// start of the message), its known failures, and the note that its multicast checks were
/// skipped for want of a declaration. No line is wider than [`SUMMARY_WIDTH`]: a long name or
/// message is cut, with `…`. The runner's default on a terminal; the full table is
/// [`write_tables`].
///
/// # Errors
///
/// An I/O error of `out`.
///
/// # Examples
///
/// ```
/// use rs_tck::outcome::Outcome;
/// use rs_tck::report::{write_summary, Record};
///
/// let record = |test: &str, outcome, detail: &str| Record {
///     implementation: "my::publisher".into(),
///     verification: "publisher".into(),
///     test: test.into(),
///     rule: "1.1".into(),
///     outcome,
///     detail: detail.into(),
/// };
/// let records = [
///     record("a", Outcome::Passed, ""),
///     record("b", Outcome::Failed, "rule 1.1: too many"),
///     record("c", Outcome::Skipped, "decided by the types: no null"),
///     record("d", Outcome::Untested, "time"),
/// ];
/// let mut out = Vec::new();
/// write_summary(&mut out, &records).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains("my::publisher"));
/// assert!(text.contains("first failure: publisher::b: rule 1.1: too many"));
/// ```
pub fn write_summary(out: &mut dyn Write, records: &[Record]) -> io::Result<()> {
    let mut order: Vec<&str> = Vec::new();
    for r in records {
        if !order.contains(&r.implementation.as_str()) {
            order.push(&r.implementation);
        }
    }
    let width = order
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(14)
        .clamp(14, SUMMARY_NAME_WIDTH);
    writeln!(
        out,
        "{:<width$}  {:>6}  {:>6}  {:>7}  {:>8}  {:>8}",
        "implementation", "passed", "failed", "skipped", "by types", "untested"
    )?;
    for name in order {
        let mine: Vec<&Record> = records
            .iter()
            .filter(|r| r.implementation == name)
            .collect();
        let count = |f: &dyn Fn(&Record) -> bool| mine.iter().filter(|r| f(r)).count();
        let passed = count(&|r| r.outcome == Outcome::Passed);
        let failed = count(&|r| r.outcome == Outcome::Failed);
        let by_types = count(&|r| r.is_decided_by_the_types());
        let skipped = count(&|r| r.outcome == Outcome::Skipped) - by_types;
        let untested = count(&|r| r.outcome == Outcome::Untested);
        writeln!(
            out,
            "{:<width$}  {passed:>6}  {failed:>6}  {skipped:>7}  {by_types:>8}  {untested:>8}",
            cut(name, width)
        )?;
        if let Some(f) = mine.iter().find(|r| r.outcome == Outcome::Failed) {
            let more = if failed > 1 {
                format!(" (and {} more)", failed - 1)
            } else {
                String::new()
            };
            writeln!(
                out,
                "{}",
                fit(
                    &format!("    first failure{more}: "),
                    &format!("{}::{}", f.verification, f.test),
                    &f.detail
                )
            )?;
        }
        for k in mine
            .iter()
            .filter(|r| r.outcome == Outcome::Skipped && r.detail.starts_with("KNOWN FAILURE"))
        {
            writeln!(
                out,
                "{}",
                cut(
                    &format!("    known failure: {}::{}", k.verification, k.test),
                    SUMMARY_WIDTH
                )
            )?;
        }
        for d in mine.iter().filter(|r| {
            r.test == "declaration_max_supported_subscribers" && r.outcome == Outcome::Skipped
        }) {
            writeln!(
                out,
                "{}",
                cut(
                    &format!(
                        "    note: {}: max_supported_subscribers undeclared, its multicast \
                         checks skipped",
                        d.verification
                    ),
                    SUMMARY_WIDTH
                )
            )?;
        }
    }
    Ok(())
}

/// Writes `records` as a JSON array to `path`.
///
/// # Errors
///
/// An I/O or serialisation error.
pub fn write_json(path: &Path, records: &[Record]) -> io::Result<()> {
    let text = serde_json::to_string_pretty(records).map_err(io::Error::other)?;
    std::fs::write(path, text + "\n")
}
