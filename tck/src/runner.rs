//! The runner: every test of every suite, in parallel worker threads, with progress on a
//! terminal; and [`main`], the command line of a runner binary.
//!
//! Most tests spend their time waiting (for signals that must or must not come), so the
//! runner runs several at once; each test has its own environment, so they cannot see each
//! other's errors. Records come back in suite and test order, whatever order they ran in.
//!
//! # A runner of your own
//!
//! The `rs-tck` binary (`cargo run --release -p rs-tck`) is [`main`] over the registry of this
//! workspace's implementations, which lives in the binary (`tck/src/bin/rs-tck/registry/`).
//! A crate with implementations of its own gets the same table, JSON report and exit status
//! from a binary of its own:
//!
//! ```no_run
//! use rs_api::Publisher;
//! use rs_tck::publisher::PublisherVerification;
//!
//! struct Range;
//! impl PublisherVerification for Range {
//!     type Item = u64;
//!     fn create_publisher(&self, n: u64) -> impl Publisher<u64> + Send + 'static {
//!         rs_impl::source::range(0..n)
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     rs_tck::runner::main(vec![rs_tck::publisher::verify("range", Range)])
//! }
//! ```
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_tck::publisher::PublisherVerification;
//! use rs_tck::runner::{run, RunOptions};
//!
//! struct Range;
//! impl PublisherVerification for Range {
//!     type Item = u64;
//!     fn create_publisher(&self, n: u64) -> impl Publisher<u64> + Send + 'static {
//!         rs_impl::source::range(0..n)
//!     }
//! }
//! let suites = vec![rs_tck::publisher::verify("range", Range)];
//! let records = run(&suites, &RunOptions { threads: 4, progress: false });
//! assert_eq!(records.len(), 46);
//! assert!(records.iter().all(|r| r.outcome != rs_tck::outcome::Outcome::Failed));
//! ```

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::report::{self, Record, Totals};
use crate::suite::Suite;

/// The usage text of [`main`].
pub const USAGE: &str = "usage: [--full | --summary] [--json FILE] [--threads N] [FILTER]\n\
    Runs every verification over every registered implementation.\n\
    --full     a table per implementation: every test with its rule, outcome and reason \
    (the default when stdout is not a terminal)\n\
    --summary  one line per implementation, with its first failure (the default on a terminal)\n\
    FILTER keeps the tests whose `implementation::verification::test` name contains it.";

/// What the runner prints before its totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// Every test of every implementation ([`report::write_tables`]).
    Full,
    /// One line per implementation ([`report::write_summary`]).
    Summary,
}

impl Report {
    /// The report to print: the one a flag asked for (`--full`, `--summary`: `flag`), else
    /// the one-screen summary on a terminal and the full table otherwise (a file, a pipe, a
    /// CI log, where every reason should be kept).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_tck::runner::Report;
    /// assert_eq!(Report::choose(true, None), Report::Summary);
    /// assert_eq!(Report::choose(false, None), Report::Full);
    /// assert_eq!(Report::choose(true, Some(Report::Full)), Report::Full);
    /// ```
    pub fn choose(stdout_is_terminal: bool, flag: Option<Report>) -> Report {
        flag.unwrap_or(if stdout_is_terminal {
            Report::Summary
        } else {
            Report::Full
        })
    }
}

/// The runner's command line, parsed ([`CommandLine::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// What to print before the totals.
    pub report: Report,
    /// Where to write the JSON records, if anywhere.
    pub json: Option<PathBuf>,
    /// Worker threads.
    pub threads: usize,
    /// The part of `implementation::verification::test` names to keep.
    pub filter: Option<String>,
    /// `-h` or `--help`: print [`USAGE`] and run nothing.
    pub help: bool,
}

impl CommandLine {
    /// Parses `args` (without the program name) as [`USAGE`] says; `stdout_is_terminal`
    /// picks the default report ([`Report::choose`]). The last of `--full` and `--summary`
    /// wins.
    ///
    /// # Errors
    ///
    /// What is wrong with the command line.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_tck::runner::{CommandLine, Report};
    /// let c = CommandLine::parse(["--threads", "2", "spec101"].map(String::from), true).unwrap();
    /// assert_eq!((c.report, c.threads, c.filter.as_deref()), (Report::Summary, 2, Some("spec101")));
    /// assert!(CommandLine::parse(["--json".to_owned()], true).is_err());
    /// ```
    pub fn parse(
        args: impl IntoIterator<Item = String>,
        stdout_is_terminal: bool,
    ) -> Result<CommandLine, String> {
        let mut json: Option<PathBuf> = None;
        let mut threads = 8usize;
        let mut filter: Option<String> = None;
        let mut flag: Option<Report> = None;
        let mut help = false;
        let mut args = args.into_iter();
        while let Some(a) = args.next() {
            match a.as_str() {
                "--json" => match args.next() {
                    Some(f) => json = Some(PathBuf::from(f)),
                    None => return Err("--json needs a file name".to_owned()),
                },
                "--threads" => match args.next().and_then(|n| n.parse().ok()) {
                    Some(n) => threads = n,
                    None => return Err("--threads needs a number".to_owned()),
                },
                "--full" => flag = Some(Report::Full),
                "--summary" => flag = Some(Report::Summary),
                "-h" | "--help" => help = true,
                f if !f.starts_with('-') && filter.is_none() => filter = Some(f.to_owned()),
                other => return Err(format!("unknown argument {other}")),
            }
        }
        Ok(CommandLine {
            report: Report::choose(stdout_is_terminal, flag),
            json,
            threads,
            filter,
            help,
        })
    }
}

/// The command line of a runner binary: `[--full | --summary] [--json FILE] [--threads N]
/// [FILTER]` ([`CommandLine::parse`]). Runs `suites` (those whose
/// `implementation::verification::test` name contains FILTER) and prints the one-screen
/// summary (the default on a terminal) or a table per implementation (`--full`, the default
/// otherwise) and, last, `N passed, N failed, N skipped` (untested counted as skipped) in
/// both; writes the records as JSON to FILE if asked. Returns failure if any test failed, 2 on
/// a bad command line.
pub fn main(suites: Vec<Suite>) -> ExitCode {
    let CommandLine {
        report,
        json,
        threads,
        filter,
        help,
    } = match CommandLine::parse(std::env::args().skip(1), std::io::stdout().is_terminal()) {
        Ok(c) => c,
        Err(problem) => return usage(&problem),
    };
    if help {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }

    let mut suites = suites;
    if let Some(f) = &filter {
        for s in &mut suites {
            let prefix = format!("{}::{}", s.implementation, s.verification);
            s.tests
                .retain(|t| format!("{prefix}::{}", t.name).contains(f.as_str()));
        }
        suites.retain(|s| !s.tests.is_empty());
    }
    let options = RunOptions {
        threads,
        progress: std::io::stderr().is_terminal(),
    };
    let records = run(&suites, &options);

    let mut out = std::io::stdout().lock();
    let written = match report {
        Report::Full => report::write_tables(&mut out, &records),
        Report::Summary => report::write_summary(&mut out, &records),
    };
    if let Err(e) = written {
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
    let by_types = records
        .iter()
        .filter(|r| r.is_decided_by_the_types())
        .count();
    let _ = writeln!(
        out,
        "\n{} suite(s), {} test(s); skipped counts the {} decided by the types and the {} \
         untested",
        suites.len(),
        records.len(),
        by_types,
        totals.untested,
    );
    if report == Report::Summary {
        let _ = writeln!(out, "--full lists every test with its reason");
    }
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

/// How to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Whether to show progress on stderr.
    pub progress: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            threads: 8,
            progress: false,
        }
    }
}

/// Runs every test of `suites`; returns one record per test, in order.
pub fn run(suites: &[Suite], options: &RunOptions) -> Vec<Record> {
    let jobs: Vec<(usize, usize)> = suites
        .iter()
        .enumerate()
        .flat_map(|(s, suite)| (0..suite.tests.len()).map(move |t| (s, t)))
        .collect();
    let results: Mutex<Vec<Option<Record>>> = Mutex::new(vec![None; jobs.len()]);
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..options.threads.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(s, t)) = jobs.get(i) else { break };
                let (suite, test) = (&suites[s], &suites[s].tests[t]);
                let record = Record::new(suite, test, test.run());
                let done = finished.fetch_add(1, Ordering::Relaxed) + 1;
                if options.progress {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(
                        err,
                        "\r\x1b[2K[{done}/{}] {} {}: {}",
                        jobs.len(),
                        suite.implementation,
                        test.name,
                        record.outcome
                    );
                    let _ = err.flush();
                }
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(record);
            });
        }
    });
    if options.progress {
        eprintln!();
    }
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}
