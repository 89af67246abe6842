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

/// Writes `records` as a JSON array to `path`.
///
/// # Errors
///
/// An I/O or serialisation error.
pub fn write_json(path: &Path, records: &[Record]) -> io::Result<()> {
    let text = serde_json::to_string_pretty(records).map_err(io::Error::other)?;
    std::fs::write(path, text + "\n")
}
