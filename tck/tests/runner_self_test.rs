//! Self-tests of the runner's command line and its one-screen summary (issue 20, item 11): the
//! summary is the default on a terminal and the full table otherwise; the skips the types
//! decide and the untested rules have columns of their own, apart from the other skips; and no
//! line is wider than [`SUMMARY_WIDTH`], also when an implementation fails, with long names and
//! long messages.

use rs_tck::outcome::Outcome;
use rs_tck::report::{write_summary, Record, SUMMARY_WIDTH};
use rs_tck::runner::{CommandLine, Report};

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| (*s).to_owned()).collect()
}

fn report(a: &[&str], terminal: bool) -> Report {
    CommandLine::parse(args(a), terminal).unwrap().report
}

#[test]
fn the_summary_is_the_default_on_a_terminal_and_the_full_table_otherwise() {
    assert_eq!(report(&[], true), Report::Summary);
    assert_eq!(report(&[], false), Report::Full);
    // A flag wins over the default, either way; the last flag wins over an earlier one.
    assert_eq!(report(&["--full"], true), Report::Full);
    assert_eq!(report(&["--summary"], false), Report::Summary);
    assert_eq!(report(&["--summary", "--full"], true), Report::Full);
    assert_eq!(report(&["--full", "--summary"], false), Report::Summary);
    // The other settings do not change the choice.
    assert_eq!(
        report(&["--json", "r.json", "--threads", "3", "spec"], true),
        Report::Summary
    );
    let c =
        CommandLine::parse(args(&["--json", "r.json", "--threads", "3", "spec"]), false).unwrap();
    assert_eq!(c.report, Report::Full);
    assert_eq!(c.json.as_deref(), Some(std::path::Path::new("r.json")));
    assert_eq!(
        (c.threads, c.filter.as_deref(), c.help),
        (3, Some("spec"), false)
    );
    assert!(CommandLine::parse(args(&["--help"]), true).unwrap().help);
    for bad in [
        &["--json"][..],
        &["--threads", "x"],
        &["--fast"],
        &["a", "b"],
    ] {
        assert!(CommandLine::parse(args(bad), true).is_err(), "{bad:?}");
    }
}

fn record(implementation: &str, test: &str, outcome: Outcome, detail: &str) -> Record {
    Record {
        implementation: implementation.into(),
        verification: "publisher".into(),
        test: test.into(),
        rule: "1.1".into(),
        outcome,
        detail: detail.into(),
    }
}

fn summary(records: &[Record]) -> String {
    let mut out = Vec::new();
    write_summary(&mut out, records).unwrap();
    String::from_utf8(out).unwrap()
}

/// The numbers of `implementation`'s row, by the header's column names.
fn row(text: &str, implementation: &str) -> Vec<(String, String)> {
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    // The column names, as the header spells them (two spaces or more between columns).
    let names: Vec<String> = header
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let line = lines
        .find(|l| l.starts_with(implementation))
        .unwrap_or_else(|| panic!("no row for {implementation}:\n{text}"));
    let values: Vec<String> = line[implementation.len()..]
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    names[1..].iter().cloned().zip(values).collect()
}

#[test]
fn decided_by_the_types_and_untested_have_columns_apart_from_skipped() {
    let mut records = Vec::new();
    let mut add = |outcome, detail: &str, n: usize| {
        for i in 0..n {
            records.push(record(
                "a::mixed",
                &format!("t{}", records.len() + i),
                outcome,
                detail,
            ));
        }
    };
    add(Outcome::Passed, "", 5);
    add(Outcome::Skipped, "required elements nr: 3, max: 2", 1);
    add(
        Outcome::Skipped,
        "decided by the types: no null subscriber",
        2,
    );
    add(Outcome::Untested, "a matter of time", 3);
    records.push(record(
        "b::types_only",
        "t",
        Outcome::Skipped,
        "decided by the types: subscribe takes the subscriber by value",
    ));
    let text = summary(&records);
    let header = text.lines().next().unwrap();
    for column in ["passed", "failed", "skipped", "by types", "untested"] {
        assert!(header.contains(column), "{header}");
    }
    let expect = |implementation: &str, want: &[(&str, &str)]| {
        let got = row(&text, implementation);
        let got: Vec<(&str, &str)> = got.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, want, "{text}");
    };
    expect(
        "a::mixed",
        &[
            ("passed", "5"),
            ("failed", "0"),
            ("skipped", "1"),
            ("by types", "2"),
            ("untested", "3"),
        ],
    );
    // A skip the types decide is not counted as skipped.
    expect(
        "b::types_only",
        &[
            ("passed", "0"),
            ("failed", "0"),
            ("skipped", "0"),
            ("by types", "1"),
            ("untested", "0"),
        ],
    );
}

#[test]
fn every_summary_line_fits_the_width_also_with_failures() {
    let long_name = format!(
        "some::implementation::with::a::name::of::{}",
        "x".repeat(40)
    );
    let long_test = "required_spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_\
                     unwilling_to_serve_them_rejection_must_trigger_on_error_after_on_subscribe";
    let long_message = format!(
        "rule 1.9: the failed publisher called on_error {}",
        "and more ".repeat(60)
    );
    let mut records = vec![record(&long_name, "passes", Outcome::Passed, "")];
    for i in 0..12 {
        records.push(record(
            &long_name,
            &format!("{long_test}_{i}"),
            Outcome::Failed,
            &long_message,
        ));
    }
    records.push(record(
        &long_name,
        long_test,
        Outcome::Skipped,
        &format!("KNOWN FAILURE: {long_message}"),
    ));
    records.push(record(
        &long_name,
        "declaration_max_supported_subscribers",
        Outcome::Skipped,
        "undeclared",
    ));
    // A short failure stays whole.
    records.push(record(
        "short",
        "t",
        Outcome::Failed,
        "rule 1.1: one too many",
    ));
    let text = summary(&records);
    for line in text.lines() {
        assert!(
            line.chars().count() <= SUMMARY_WIDTH,
            "{} characters: {line}",
            line.chars().count()
        );
    }
    let first = text.lines().find(|l| l.contains("first failure")).unwrap();
    // The count, the verification, the start of the test's name and of the message, cut.
    assert!(
        first
            .starts_with("    first failure (and 11 more): publisher::required_spec109_may_reject"),
        "{first}"
    );
    assert!(
        first.contains(": rule 1.9: the failed publisher"),
        "{first}"
    );
    assert!(first.ends_with('…'), "{first}");
    assert!(
        text.contains("known failure: publisher::required_spec109"),
        "{text}"
    );
    assert!(
        text.contains("note: publisher: max_supported_subscribers undeclared"),
        "{text}"
    );
    assert!(
        text.contains("    first failure: publisher::t: rule 1.1: one too many\n"),
        "{text}"
    );
    // The implementation's row: its name cut, its counts whole.
    let row_line = text.lines().nth(1).unwrap();
    assert!(row_line.starts_with("some::implementation"), "{row_line}");
    assert!(row_line.contains('…'), "{row_line}");
}
