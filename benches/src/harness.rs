//! The side-by-side runner behind `bench-report`.
//!
//! For each scenario: calibrate `n` per cell so that one timed run lasts about the target
//! time; then run **rounds**, each round timing every cell once (ours and each peer, every
//! parameter), starting one cell later each round, so slow drift of the machine (other builds,
//! frequency changes) hits every implementation alike. The reported figure is the median
//! round. Then, with the counting allocator installed, count allocations over runs of `n` and
//! `2n` elements and divide the difference by `n`: the steady-state cost per element, with the
//! fixed setup (threads, channels, a tokio runtime) cancelled out.
//!
//! Every run's checksum is checked against the scenario's expected value: an implementation
//! that loses elements fails the report instead of looking fast.

use std::time::{Duration, Instant};

use crate::alloc::{is_counting, snapshot};
use crate::report::{Row, RunInfo};
use crate::scenario::{Cell, Scenario};

/// How long and how often to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every scenario once on tiny fixed sizes, for CI: seconds, figures meaningless.
    Tiny,
    /// A short grid for a developer: a few minutes on a 2-core machine (the fanout scenarios
    /// take most of it).
    Quick,
    /// Longer runs and more rounds.
    Full,
}

/// The numbers behind a [`Mode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// The mode.
    pub mode: Mode,
    /// Target duration of one timed run (ignored when `fixed_n` is set).
    pub target: Duration,
    /// Timed rounds per cell.
    pub rounds: usize,
    /// `n` of the allocation runs (`n` and `2n` are run).
    pub alloc_n: u64,
    /// A fixed `n` for every timed run, skipping calibration.
    pub fixed_n: Option<u64>,
    /// Upper bound on a calibrated `n` (bounds memory for unbounded buffers).
    pub max_n: u64,
}

impl Mode {
    /// The settings of this mode.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_benches::harness::Mode;
    /// assert!(Mode::Quick.settings().rounds > Mode::Tiny.settings().rounds);
    /// ```
    #[must_use]
    pub fn settings(self) -> Settings {
        match self {
            Mode::Tiny => Settings {
                mode: self,
                target: Duration::ZERO,
                rounds: 1,
                alloc_n: 2_000,
                fixed_n: Some(2_000),
                max_n: 2_000,
            },
            Mode::Quick => Settings {
                mode: self,
                target: Duration::from_millis(80),
                rounds: 15,
                alloc_n: 200_000,
                fixed_n: None,
                max_n: 64_000_000,
            },
            Mode::Full => Settings {
                mode: self,
                target: Duration::from_millis(250),
                rounds: 15,
                alloc_n: 1_000_000,
                fixed_n: None,
                max_n: 256_000_000,
            },
        }
    }

    /// `tiny`, `quick` or `full`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Mode::Tiny => "tiny",
            Mode::Quick => "quick",
            Mode::Full => "full",
        }
    }
}

impl Settings {
    /// The [`RunInfo`] of a run with these settings, made by `command`, that took `wall`.
    #[must_use]
    pub fn run_info(&self, command: String, wall: Duration) -> RunInfo {
        RunInfo {
            mode: self.mode.name().to_owned(),
            rounds: self.rounds,
            target_ms: u64::try_from(self.target.as_millis()).unwrap_or(u64::MAX),
            alloc_elements: self.alloc_n,
            alloc_counted: is_counting(),
            wall_seconds: wall.as_secs_f64(),
            command,
        }
    }
}

/// Where the runner is, for a progress display.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    /// Scenario id.
    pub scenario: &'a str,
    /// Implementation name.
    pub implementation: &'a str,
    /// Parameter label.
    pub param: &'a str,
    /// `calibrate`, `round i/k` or `alloc`.
    pub phase: String,
    /// Steps done in this scenario.
    pub step: usize,
    /// Steps in this scenario.
    pub steps: usize,
}

/// Runs one cell on `n` elements; returns the elapsed time, after checking the checksum.
///
/// # Panics
///
/// If the checksum is wrong (the implementation lost or duplicated elements).
fn timed(scenario: &Scenario, cell: Cell, n: u64) -> Duration {
    measured(scenario, cell, n).0
}

/// Runs one cell on `n` elements; returns the elapsed time and, for a lossy implementation,
/// the share of the deliveries it made (its run returns their number instead of a checksum).
fn measured(scenario: &Scenario, cell: Cell, n: u64) -> (Duration, Option<f64>) {
    let (imp, param, label) = scenario.resolve(cell);
    let start = Instant::now();
    let sum = std::hint::black_box((imp.run)(param, n));
    let elapsed = start.elapsed();
    if imp.lossy {
        let due = n
            .saturating_mul(scenario.deliveries.map_or(1, |d| d(param)))
            .max(1);
        return (elapsed, Some(sum as f64 / due as f64));
    }
    let expected = (scenario.expected)(param, n);
    assert_eq!(
        sum, expected,
        "{} / {} / {label}: wrong checksum for n = {n}",
        scenario.id, imp.name
    );
    (elapsed, None)
}

/// Picks `n` so that one run takes about `settings.target`.
fn calibrate(scenario: &Scenario, cell: Cell, settings: &Settings) -> u64 {
    if let Some(n) = settings.fixed_n {
        timed(scenario, cell, n);
        return n;
    }
    let target = settings.target.as_secs_f64();
    let mut n: u64 = 1_000;
    loop {
        let t = timed(scenario, cell, n).as_secs_f64().max(1e-7);
        let wanted = (n as f64 * target / t).min(settings.max_n as f64) as u64;
        if t >= target / 3.0 || n >= settings.max_n {
            return wanted.clamp(1_000, settings.max_n);
        }
        // Grow at most 20× per step: the first runs are the noisiest.
        n = wanted.clamp(n * 2, n * 20);
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let m = values.len() / 2;
    if values.len() % 2 == 1 {
        values[m]
    } else {
        (values[m - 1] + values[m]) / 2.0
    }
}

/// Measures every cell of `scenario`; calls `progress` before each step.
///
/// # Panics
///
/// If an implementation returns a wrong checksum.
pub fn run_scenario(
    scenario: &Scenario,
    settings: &Settings,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Vec<Row> {
    let cells = scenario.cells();
    let counting = is_counting();
    let steps = cells.len() * (settings.rounds + 1 + usize::from(counting));
    let mut step = 0;
    let mut report = |cell: Cell, phase: String, step: &mut usize| {
        let (imp, _, label) = scenario.resolve(cell);
        progress(&Progress {
            scenario: scenario.id,
            implementation: imp.name,
            param: label,
            phase,
            step: *step,
            steps,
        });
        *step += 1;
    };

    let mut sizes = Vec::with_capacity(cells.len());
    for &cell in &cells {
        report(cell, "calibrate".to_owned(), &mut step);
        sizes.push(calibrate(scenario, cell, settings));
    }

    let mut rates: Vec<Vec<f64>> = vec![Vec::with_capacity(settings.rounds); cells.len()];
    let mut delivered: Vec<Option<f64>> = vec![None; cells.len()];
    for round in 0..settings.rounds {
        for j in 0..cells.len() {
            let c = (j + round) % cells.len();
            report(
                cells[c],
                format!("round {}/{}", round + 1, settings.rounds),
                &mut step,
            );
            let (t, share) = measured(scenario, cells[c], sizes[c]);
            rates[c].push(sizes[c] as f64 / t.as_secs_f64().max(1e-9));
            if let Some(share) = share {
                // The worst round: a lossy peer is reported at its least complete.
                delivered[c] = Some(delivered[c].map_or(share, |d: f64| d.min(share)));
            }
        }
    }

    let mut allocs = vec![None; cells.len()];
    if counting {
        let n = settings.alloc_n;
        for (c, &cell) in cells.iter().enumerate() {
            report(cell, "alloc".to_owned(), &mut step);
            let a0 = snapshot();
            timed(scenario, cell, n);
            let once = snapshot().since(a0);
            let b0 = snapshot();
            timed(scenario, cell, 2 * n);
            let twice = snapshot().since(b0);
            let per = |x: u64, y: u64| y.saturating_sub(x) as f64 / n as f64;
            allocs[c] = Some((per(once.bytes, twice.bytes), per(once.allocs, twice.allocs)));
        }
    }

    cells
        .iter()
        .enumerate()
        .map(|(c, &cell)| {
            let (imp, _, label) = scenario.resolve(cell);
            let r = &mut rates[c];
            let min = r.iter().copied().fold(f64::MAX, f64::min);
            let max = r.iter().copied().fold(0f64, f64::max);
            Row {
                scenario: scenario.id.to_owned(),
                param: label.to_owned(),
                implementation: imp.name.to_owned(),
                elements_per_sec: median(r),
                bytes_per_element: allocs[c].map(|a| a.0),
                allocs_per_element: allocs[c].map(|a| a.1),
                min_elements_per_sec: min,
                max_elements_per_sec: max,
                elements: sizes[c],
                rounds: settings.rounds,
                delivered_fraction: delivered[c],
            }
        })
        .collect()
}
