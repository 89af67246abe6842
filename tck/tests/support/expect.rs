//! How a deliberately broken implementation must show up in a check's outcome, and the one
//! assertion every `…_should_fail_by_…` self-test makes.

use rs_tck::outcome::Outcome;
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
/// the specific reason) in its detail.
pub(crate) fn assert_case(suite: &Suite, check: &str, expect: Expect, needles: &[&str]) {
    let o = suite
        .test(check)
        .unwrap_or_else(|| panic!("no check named {check}"))
        .run();
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
    for n in needles {
        assert!(
            o.detail.contains(n),
            "{check}: the detail should mention {n:?}: {}",
            o.detail
        );
    }
}
