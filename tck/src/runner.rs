//! The runner: every test of every suite, in parallel worker threads, with progress on a
//! terminal.
//!
//! Most tests spend their time waiting (for signals that must or must not come), so the
//! runner runs several at once; each test has its own environment, so they cannot see each
//! other's errors. Records come back in suite and test order, whatever order they ran in.
//!
//! # Examples
//!
//! ```
//! use rs_tck::runner::{run, RunOptions};
//! let suites = vec![rs_tck::publisher::verify(
//!     "range",
//!     rs_tck::publisher::PublisherFactory::new(|n| Box::new(rs_impl::source::range(0..n))),
//! )];
//! let records = run(&suites, &RunOptions { threads: 4, progress: false });
//! assert_eq!(records.len(), 38);
//! assert!(records.iter().all(|r| r.outcome != rs_tck::outcome::Outcome::Failed));
//! ```

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::report::Record;
use crate::suite::Suite;

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
