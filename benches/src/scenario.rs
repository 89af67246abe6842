//! The scenario types: what `bench-report` and the criterion benches run. The list of
//! scenarios is [`crate::scenarios::all`].
//!
//! A [`Scenario`] is one workload (for example "a source drained into a subscriber on one
//! thread") with a parameter axis (request size, channel capacity; later: subscribers,
//! boundaries) and a list of [`Implementation`]s: ours and the peers. Every implementation
//! runs the same workload: `n` elements, the `u64`s `0..n`, each added to a [`Checksum`], and
//! returns the checksum so that the harness can check that every element arrived.
//!
//! A scenario's chart plots elements per second against [`Scenario::param_name`].

use std::fmt;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

/// The parameter value that means "unbounded" (request `u64::MAX`, an unbounded channel).
pub const UNBOUNDED: u64 = u64::MAX;

/// One point of a scenario's parameter axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// How it is written in reports and charts (`"16"`, `"unbounded"`).
    pub label: String,
    /// The value handed to [`Implementation::run`]; [`UNBOUNDED`] for "unbounded".
    pub value: u64,
}

impl Param {
    /// A numeric parameter, labelled with its decimal value ([`UNBOUNDED`] reads "unbounded").
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_benches::scenario::{Param, UNBOUNDED};
    /// assert_eq!(Param::new(16).label, "16");
    /// assert_eq!(Param::new(UNBOUNDED).label, "unbounded");
    /// ```
    #[must_use]
    pub fn new(value: u64) -> Param {
        let label = if value == UNBOUNDED {
            "unbounded".to_owned()
        } else {
            value.to_string()
        };
        Param { label, value }
    }
}

/// The label of the rows of an implementation that ignores the parameter.
pub const ANY_PARAM: &str = "any";

/// Runs `n` elements through one implementation with one parameter value; returns the checksum.
pub type RunFn = fn(param: u64, n: u64) -> u64;

/// One implementation of a scenario: ours or a peer.
#[derive(Clone)]
pub struct Implementation {
    /// Short name used in rows, tables and chart legends.
    pub name: &'static str,
    /// `true` for this project's implementation (the report divides ours by each peer).
    pub ours: bool,
    /// `false` when the implementation ignores the parameter: it is then measured once, with
    /// the parameter label [`ANY_PARAM`], and drawn as a flat line.
    pub per_param: bool,
    /// What exactly it measures, one sentence (shown in the report).
    pub what: &'static str,
    /// The workload.
    pub run: RunFn,
    /// A lossy peer (tokio's broadcast): its run returns the number of deliveries it made
    /// instead of a checksum, the harness does not check it, and the report shows the share
    /// delivered next to the speed.
    pub lossy: bool,
}

impl fmt::Debug for Implementation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Implementation")
            .field("name", &self.name)
            .field("ours", &self.ours)
            .field("per_param", &self.per_param)
            .field("lossy", &self.lossy)
            .finish_non_exhaustive()
    }
}

/// One workload, its parameter axis and its implementations.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Identifier used in rows and file names (`"source"`, `"pipeline"`).
    pub id: &'static str,
    /// One-line title for the report.
    pub title: &'static str,
    /// The parameter axis, as the chart's x label (`"request size"`, `"subscribers"`).
    pub param_name: &'static str,
    /// The parameter values, in chart order.
    pub params: Vec<Param>,
    /// Ours first, then the peers.
    pub implementations: Vec<Implementation>,
    /// The checksum a correct run of `n` elements returns for a parameter value.
    pub expected: fn(param: u64, n: u64) -> u64,
    /// Whether the workload crosses threads (the report says so next to the table).
    pub cross_thread: bool,
    /// Deliveries per input element at a parameter value (a fanout's subscribers); `None` when
    /// each element is delivered once. The report then also gives deliveries per second.
    pub deliveries: Option<fn(param: u64) -> u64>,
    /// For a workload measured in operations (seed 003's: one op = one subscription run to
    /// completion): its elements per op at a parameter value, and figures from elsewhere to
    /// print beside ours. `None`: a stream of elements. The report then also gives ops per
    /// second and allocation per op.
    pub ops: Option<Ops>,
}

/// A workload counted in operations (see [`Scenario::ops`]).
#[derive(Debug, Clone, Copy)]
pub struct Ops {
    /// Elements one op moves at a parameter value.
    pub elements_per_op: fn(param: u64) -> u64,
    /// Where the reference figures come from (another machine, another language), or `""`.
    pub reference: &'static str,
    /// Reference rows: a name, and ops per second by parameter value.
    pub reference_ops: &'static [(&'static str, &'static [(u64, f64)])],
}

/// One measured cell of a scenario: an implementation and a parameter (`None`: any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// Index into [`Scenario::implementations`].
    pub implementation: usize,
    /// Index into [`Scenario::params`]; `None` for an implementation that ignores it.
    pub param: Option<usize>,
}

impl Scenario {
    /// Every cell to measure: each per-parameter implementation at each parameter, and each
    /// parameter-free one once.
    ///
    /// # Examples
    ///
    /// ```
    /// let s = rs_benches::scenarios::source::scenario();
    /// let cells = s.cells();
    /// assert!(cells.iter().any(|c| c.param.is_none()));
    /// ```
    #[must_use]
    pub fn cells(&self) -> Vec<Cell> {
        let mut cells = Vec::new();
        for (i, imp) in self.implementations.iter().enumerate() {
            if imp.per_param {
                cells.extend((0..self.params.len()).map(|p| Cell {
                    implementation: i,
                    param: Some(p),
                }));
            } else {
                cells.push(Cell {
                    implementation: i,
                    param: None,
                });
            }
        }
        cells
    }

    /// The implementation and the parameter (value, label) of a cell.
    #[must_use]
    pub fn resolve(&self, cell: Cell) -> (&Implementation, u64, &str) {
        let imp = &self.implementations[cell.implementation];
        match cell.param {
            Some(p) => (imp, self.params[p].value, &self.params[p].label),
            // A parameter-free implementation still gets a value: the first one.
            None => (imp, self.params[0].value, ANY_PARAM),
        }
    }
}

/// The per-element work every implementation does: add the element to a running sum.
///
/// A relaxed atomic load and store (plain moves on x86-64 and AArch64) plus a
/// [`black_box`], the same for every implementation, so the optimiser can neither fold a
/// loop into a formula nor vectorise one implementation and not another. `Sync`, so a closure
/// that must be `Send` can hold it in an `Arc`.
#[derive(Debug, Default)]
pub struct Checksum(AtomicU64);

impl Checksum {
    /// Adds `x` (wrapping).
    #[inline]
    pub fn add(&self, x: u64) {
        let v = self.0.load(Ordering::Relaxed);
        self.0
            .store(v.wrapping_add(black_box(x)), Ordering::Relaxed);
    }

    /// The sum so far.
    #[must_use]
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The checksum of the elements `0..n`: `n (n - 1) / 2`, wrapping like [`Checksum::add`].
///
/// # Examples
///
/// ```
/// assert_eq!(rs_benches::scenario::sum_below(0, 5), 10);
/// ```
#[must_use]
pub fn sum_below(_param: u64, n: u64) -> u64 {
    let n = u128::from(n);
    (n * n.saturating_sub(1) / 2) as u64
}
