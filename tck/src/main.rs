//! `cargo run --release -p rs-tck [-- --json FILE] [--threads N] [FILTER]`: runs every
//! verification over every built-in implementation (see `rs_tck::registry`).
// The runner uses std threads and I/O directly (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]
#![forbid(unsafe_code)]

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use rs_tck::report::{self, Totals};
use rs_tck::runner::{self, RunOptions};

const USAGE: &str = "usage: rs-tck [--json FILE] [--threads N] [FILTER]\n\
    Runs every verification over every built-in implementation.\n\
    FILTER keeps the tests whose `implementation::verification::test` name contains it.";

fn main() -> ExitCode {
    let mut json: Option<PathBuf> = None;
    let mut threads = 8usize;
    let mut filter: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => match args.next() {
                Some(f) => json = Some(PathBuf::from(f)),
                None => return usage("--json needs a file name"),
            },
            "--threads" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => threads = n,
                None => return usage("--threads needs a number"),
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            f if !f.starts_with('-') && filter.is_none() => filter = Some(f.to_owned()),
            other => return usage(&format!("unknown argument {other}")),
        }
    }

    let mut suites = rs_tck::registry::builtins();
    if let Some(f) = &filter {
        for s in &mut suites {
            let imp = s.implementation.clone();
            s.tests
                .retain(|t| format!("{imp}::{}", t.name).contains(f.as_str()));
        }
        suites.retain(|s| !s.tests.is_empty());
    }
    let options = RunOptions {
        threads,
        progress: std::io::stderr().is_terminal(),
    };
    let records = runner::run(&suites, &options);

    let mut out = std::io::stdout().lock();
    if let Err(e) = report::write_tables(&mut out, &records) {
        eprintln!("rs-tck: cannot write the report: {e}");
        return ExitCode::FAILURE;
    }
    if let Some(path) = &json {
        if let Err(e) = report::write_json(path, &records) {
            eprintln!("rs-tck: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    let totals = Totals::of(&records);
    use std::io::Write;
    let _ = writeln!(
        out,
        "\n{} implementation(s), {} test(s); untested ({}) are counted as skipped",
        suites.len(),
        records.len(),
        totals.untested
    );
    let _ = writeln!(out, "{}", totals.summary_line());
    if totals.failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("rs-tck: {problem}\n{USAGE}");
    ExitCode::from(2)
}
