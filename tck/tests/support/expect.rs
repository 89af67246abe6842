//! How a deliberately broken implementation must show up in a check's outcome, and the one
//! assertion every `…_should_fail_by_…` self-test makes.

use rs_tck::outcome::{Outcome, TestOutcome, HINT_SEPARATOR};
use rs_tck::suite::Suite;

/// What the check must report for the broken implementation.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Expect {
    /// The check fails.
    Fail,
    /// An optional check: skipped as an unmet optional requirement.
    Unmet,
}

/// Runs `check` of `suite` and asserts the expected outcome, with every needle (the rule and
/// the specific reason) in its detail, and the check's own hint at its end.
pub(crate) fn assert_case(suite: &Suite, check: &str, expect: Expect, needles: &[&str]) {
    assert_case_with_hint(suite, check, expect, needles, None);
}

/// As [`assert_case`], with the hint the detail must end with: `None` for the check's own, or
/// the hint of the violation the broken implementation commits on the way (issue 20, item 7:
/// the hint matches the violation detected, not the check's name).
pub(crate) fn assert_case_with_hint(
    suite: &Suite,
    check: &str,
    expect: Expect,
    needles: &[&str],
    hint: Option<&str>,
) {
    let test = suite
        .test(check)
        .unwrap_or_else(|| panic!("no check named {check}"));
    let o = test.run();
    eprintln!("{check}: {:?}: {}", o.outcome, o.detail);
    match expect {
        Expect::Fail => assert_eq!(o.outcome, Outcome::Failed, "{check} should fail: {o:?}"),
        Expect::Unmet => {
            assert_eq!(
                o.outcome,
                Outcome::Skipped,
                "{check} should be unmet: {o:?}"
            );
            assert!(
                o.detail
                    .contains("does NOT implement this OPTIONAL requirement"),
                "{check}: {o:?}"
            );
        }
    }
    // Item 6 of issue #10: the failure points at the cause; issue 20, item 7: the cause seen.
    assert!(!test.hint.is_empty(), "{check} has no hint");
    let hint = hint.unwrap_or(test.hint);
    assert!(
        o.detail.ends_with(&format!("{HINT_SEPARATOR}{hint}")),
        "{check}: the detail should end with the hint {hint:?}: {}",
        o.detail
    );
    assert_eq!(
        o.detail.matches(HINT_SEPARATOR).count(),
        1,
        "{check}: one hint: {}",
        o.detail
    );
    for n in needles {
        assert!(
            o.detail.contains(n),
            "{check}: the detail should mention {n:?}: {}",
            o.detail
        );
    }
}

/// Asserts that every test of `suite` has a hint, and that each hint reads as one (a question
/// or an instruction about the implementation, not an empty or placeholder text).
pub(crate) fn assert_every_check_has_a_hint(suite: &Suite) {
    for t in &suite.tests {
        assert!(
            t.hint.len() > 30,
            "{}::{}: the hint is missing or too short: {:?}",
            suite.verification,
            t.name,
            t.hint
        );
    }
}

/// Runs every test of `suite` and returns the ones that did not pass, with their outcome.
pub(crate) fn not_passed(suite: &Suite) -> Vec<(String, TestOutcome)> {
    suite
        .tests
        .iter()
        .map(|t| (t.name.to_owned(), t.run()))
        .filter(|(_, o)| o.outcome != Outcome::Passed)
        .collect()
}

/// Asserts that every check in `names` has a should-fail case in `cases` (self-test name,
/// check name) or is listed in `cannot_fail`, never both, and that every case is named
/// `…_should_fail_by_…`.
pub(crate) fn assert_coverage(names: &[&str], cases: &[(&str, &str)], cannot_fail: &[&str]) {
    for name in names {
        let covered = cases.iter().any(|(_, check)| check == name);
        assert!(
            covered || cannot_fail.contains(name),
            "no should-fail case for {name}"
        );
        assert!(
            !(covered && cannot_fail.contains(name)),
            "{name} is listed as unable to fail"
        );
    }
    assert!(cases
        .iter()
        .all(|(case, _)| case.contains("_should_fail_by_")));
}
