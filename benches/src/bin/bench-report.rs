//! `bench-report`: every scenario, ours and each peer side by side, into a JSON report, a
//! Markdown report with ratios, and SVG charts.
//!
//! ```text
//! cargo run --release -p rs-benches --bin bench-report -- --out DIR [--quick | --tiny]
//!     [--only ID[,ID..]] [--page PATH] [--from REPORT.json]
//! ```
//!
//! * `--out DIR` (required): writes `DIR/report.json`, `DIR/report.md`, `DIR/<scenario>.svg`.
//! * `--quick`: a short grid (under 3 minutes on a 2-core machine). Default: the full grid.
//! * `--tiny` (or `RS_BENCHES_TINY=1`): every scenario once on tiny sizes, for CI; the
//!   figures mean nothing, the files are complete.
//! * `--only ID,..`: only these scenarios.
//! * `--page PATH`: also write the Markdown report to PATH (e.g. `docs/benchmarks.md`) with
//!   chart links relative to it.
//! * `--from FILE`: measure nothing; re-render the Markdown and charts from a saved report.
//!
//! Progress goes to stderr when it is a terminal.

// Benchmarks use std atomics and threads directly (no loom here).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use rs_benches::alloc::CountingAlloc;
use rs_benches::harness::{run_scenario, Mode, Progress};
use rs_benches::machine::Machine;
use rs_benches::report::{Report, ScenarioInfo};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const USAGE: &str = "usage: bench-report --out DIR [--quick | --tiny] [--only ID[,ID..]] \
                     [--page PATH] [--from REPORT.json]";

#[derive(Debug)]
struct Args {
    out: PathBuf,
    mode: Mode,
    only: Vec<String>,
    page: Option<PathBuf>,
    from: Option<PathBuf>,
    raw: Vec<String>,
}

fn parse() -> Result<Args, String> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let mut out = None;
    let mut mode = Mode::Full;
    let mut only = Vec::new();
    let mut page = None;
    let mut from = None;
    let mut it = raw.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--quick" => mode = Mode::Quick,
            "--tiny" => mode = Mode::Tiny,
            "--full" => mode = Mode::Full,
            "--only" => only.extend(value("--only")?.split(',').map(str::to_owned)),
            "--page" => page = Some(PathBuf::from(value("--page")?)),
            "--from" => from = Some(PathBuf::from(value("--from")?)),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    if std::env::var("RS_BENCHES_TINY").is_ok_and(|v| !v.is_empty() && v != "0") {
        mode = Mode::Tiny;
    }
    let out = out.ok_or_else(|| format!("--out DIR is required\n{USAGE}"))?;
    Ok(Args {
        out,
        mode,
        only,
        page,
        from,
        raw,
    })
}

/// Measures every selected scenario.
fn measure(args: &Args) -> Result<Report, String> {
    let settings = args.mode.settings();
    let mut scenarios = rs_benches::scenarios::all();
    if !args.only.is_empty() {
        let known: Vec<_> = scenarios.iter().map(|s| s.id).collect();
        if let Some(bad) = args.only.iter().find(|id| !known.contains(&id.as_str())) {
            return Err(format!(
                "unknown scenario {bad:?}; known: {}",
                known.join(", ")
            ));
        }
        scenarios.retain(|s| args.only.iter().any(|id| id == s.id));
    }
    let machine = Machine::detect();
    let tty = std::io::stderr().is_terminal();
    let started = Instant::now();
    let mut rows = Vec::new();
    for (i, scenario) in scenarios.iter().enumerate() {
        let count = scenarios.len();
        let mut show = |p: &Progress<'_>| {
            if tty {
                let mut err = std::io::stderr().lock();
                let _ = write!(
                    err,
                    "\r\x1b[2K[{}/{count} {} {:>3}%] {:>6.1}s  {} · {} · {}",
                    i + 1,
                    p.scenario,
                    100 * p.step / p.steps.max(1),
                    started.elapsed().as_secs_f64(),
                    p.implementation,
                    p.param,
                    p.phase
                );
                let _ = err.flush();
            }
        };
        rows.extend(run_scenario(scenario, &settings, &mut show));
    }
    if tty {
        eprintln!(
            "\r\x1b[2Kmeasured {} rows in {:.1} s",
            rows.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(Report {
        machine,
        run: settings.run_info(
            format!(
                "cargo run --release -p rs-benches --bin bench-report -- {}",
                args.raw.join(" ")
            ),
            started.elapsed(),
        ),
        scenarios: scenarios.iter().map(ScenarioInfo::from).collect(),
        rows,
    })
}

/// The path from directory `from` to `to`, when `to` lies under `from`; else `to` absolute.
fn relative(from: &Path, to: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (from, to) = (abs(from), abs(to));
    let rel = to.strip_prefix(&from).map_or(to.clone(), Path::to_path_buf);
    let mut s = rel.to_string_lossy().into_owned();
    if !s.is_empty() && !s.ends_with('/') {
        s.push('/');
    }
    s
}

fn write(path: &Path, contents: &[u8]) -> Result<(), String> {
    std::fs::write(path, contents).map_err(|e| format!("writing {}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

fn run() -> Result<(), String> {
    let args = parse()?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("creating {}: {e}", args.out.display()))?;
    let report = match &args.from {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("reading {}: {e}", file.display()))?;
            serde_json::from_str(&text).map_err(|e| format!("parsing {}: {e}", file.display()))?
        }
        None => measure(&args)?,
    };
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    if args.from.is_none() {
        write(&args.out.join("report.json"), json.as_bytes())?;
    }
    write(
        &args.out.join("report.md"),
        report.to_markdown("").as_bytes(),
    )?;
    for s in &report.scenarios {
        let path = args.out.join(Report::chart_file(s));
        rs_benches::chart::throughput_chart(&report, s, &path)
            .map_err(|e| format!("chart {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    if let Some(page) = &args.page {
        let dir = page
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let prefix = relative(dir, &args.out);
        write(page, report.to_markdown(&prefix).as_bytes())?;
    }
    Ok(())
}

fn main() -> ExitCode {
    if std::env::args().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-report: {e}");
            ExitCode::FAILURE
        }
    }
}
