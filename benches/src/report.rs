//! The report: `report.json` (machine, scenarios, rows) and `report.md` (tables with the ratio
//! of ours to each peer).
//!
//! The JSON carries everything the Markdown and the charts need (scenario titles, parameter
//! order, which implementation is ours), so both can be re-rendered from a saved report
//! (`bench-report --from DIR/report.json --out DIR`).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::machine::Machine;
use crate::scenario::{Scenario, ANY_PARAM};

/// One implementation of a scenario, as recorded in a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplementationInfo {
    /// Its name (the `implementation` of its rows).
    pub name: String,
    /// Ours (`true`) or a peer.
    pub ours: bool,
    /// `false`: measured once, rows carry the parameter `"any"`.
    pub per_param: bool,
    /// What it measures.
    pub what: String,
    /// A lossy peer: its rows carry the share it delivered.
    #[serde(default)]
    pub lossy: bool,
}

/// One scenario, as recorded in a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioInfo {
    /// Identifier (`scenario` of its rows; the chart is `<id>.svg`).
    pub id: String,
    /// One-line title.
    pub title: String,
    /// The parameter axis (the chart's x label).
    pub param_name: String,
    /// Parameter labels in axis order.
    pub params: Vec<String>,
    /// Ours first, then the peers.
    pub implementations: Vec<ImplementationInfo>,
    /// Whether the workload crosses threads.
    pub cross_thread: bool,
    /// Deliveries per input element at each parameter (same order as `params`); empty when each
    /// element is delivered once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deliveries_per_element: Vec<u64>,
    /// Elements per operation at each parameter (same order as `params`), for a workload
    /// counted in operations; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elements_per_op: Vec<u64>,
    /// Where `reference_ops` come from (another machine, another language).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reference: String,
    /// Reference rows: a name and ops per second at each parameter (same order as
    /// `params`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_ops: Vec<(String, Vec<Option<f64>>)>,
}

impl From<&Scenario> for ScenarioInfo {
    fn from(s: &Scenario) -> Self {
        ScenarioInfo {
            id: s.id.to_owned(),
            title: s.title.to_owned(),
            param_name: s.param_name.to_owned(),
            params: s.params.iter().map(|p| p.label.clone()).collect(),
            implementations: s
                .implementations
                .iter()
                .map(|i| ImplementationInfo {
                    name: i.name.to_owned(),
                    ours: i.ours,
                    per_param: i.per_param,
                    what: i.what.to_owned(),
                    lossy: i.lossy,
                })
                .collect(),
            cross_thread: s.cross_thread,
            deliveries_per_element: s
                .deliveries
                .map(|d| s.params.iter().map(|p| d(p.value)).collect())
                .unwrap_or_default(),
            elements_per_op: s
                .ops
                .map(|o| {
                    s.params
                        .iter()
                        .map(|p| (o.elements_per_op)(p.value))
                        .collect()
                })
                .unwrap_or_default(),
            reference: s.ops.map(|o| o.reference.to_owned()).unwrap_or_default(),
            reference_ops: s
                .ops
                .map(|o| {
                    o.reference_ops
                        .iter()
                        .map(|(row, figures)| {
                            let by_param = s
                                .params
                                .iter()
                                .map(|p| {
                                    figures.iter().find(|(v, _)| *v == p.value).map(|(_, f)| *f)
                                })
                                .collect();
                            ((*row).to_owned(), by_param)
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// One measured cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Scenario id.
    pub scenario: String,
    /// Parameter label, or `"any"`.
    pub param: String,
    /// Implementation name.
    pub implementation: String,
    /// Median over the rounds of elements / wall-clock second.
    pub elements_per_sec: f64,
    /// Bytes allocated per element, all threads, steady state; absent if not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_element: Option<f64>,
    /// Allocations per element, all threads, steady state; absent if not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocs_per_element: Option<f64>,
    /// Slowest round, elements / s.
    pub min_elements_per_sec: f64,
    /// Fastest round, elements / s.
    pub max_elements_per_sec: f64,
    /// Elements per timed run.
    pub elements: u64,
    /// Timed rounds behind the median.
    pub rounds: usize,
    /// A lossy implementation's share of the deliveries due, in its worst round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_fraction: Option<f64>,
}

/// How the figures were taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// `tiny`, `quick` or `full`.
    pub mode: String,
    /// Alternating rounds per cell.
    pub rounds: usize,
    /// Target duration of one timed run, milliseconds (0: fixed sizes).
    pub target_ms: u64,
    /// Elements of the allocation runs (n and 2n are run; the difference is divided by n).
    pub alloc_elements: u64,
    /// Whether the counting allocator was installed (else no allocation figures).
    pub alloc_counted: bool,
    /// Wall-clock time of the whole run, seconds.
    pub wall_seconds: f64,
    /// The command that made the report.
    #[serde(default)]
    pub command: String,
}

/// A whole report: `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The machine.
    pub machine: Machine,
    /// How the figures were taken.
    pub run: RunInfo,
    /// The scenarios, in order.
    pub scenarios: Vec<ScenarioInfo>,
    /// The measured cells.
    pub rows: Vec<Row>,
}

/// One ratio line: ours at one parameter against one peer.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    /// Our implementation.
    pub ours: String,
    /// The parameter label.
    pub param: String,
    /// The peer.
    pub peer: String,
    /// ours ÷ peer in elements per second (> 1: ours is faster).
    pub ratio: f64,
}

impl Report {
    /// The row of `implementation` at `param` in `scenario`, falling back to its `"any"` row.
    #[must_use]
    pub fn row(&self, scenario: &str, param: &str, implementation: &str) -> Option<&Row> {
        let find = |p: &str| {
            self.rows.iter().find(|r| {
                r.scenario == scenario && r.param == p && r.implementation == implementation
            })
        };
        find(param).or_else(|| find(ANY_PARAM))
    }

    /// Ours ÷ each peer, for every parameter of a scenario where both were measured.
    #[must_use]
    pub fn ratios(&self, scenario: &ScenarioInfo) -> Vec<Ratio> {
        let mut out = Vec::new();
        for ours in scenario.implementations.iter().filter(|i| i.ours) {
            for param in &scenario.params {
                let Some(mine) = self.row(&scenario.id, param, &ours.name) else {
                    continue;
                };
                for peer in scenario.implementations.iter().filter(|i| !i.ours) {
                    if let Some(theirs) = self.row(&scenario.id, param, &peer.name) {
                        out.push(Ratio {
                            ours: ours.name.clone(),
                            param: param.clone(),
                            peer: peer.name.clone(),
                            ratio: mine.elements_per_sec / theirs.elements_per_sec,
                        });
                    }
                }
            }
        }
        out
    }

    /// The chart file name of a scenario, relative to the output directory.
    #[must_use]
    pub fn chart_file(scenario: &ScenarioInfo) -> String {
        format!("{}.svg", scenario.id)
    }

    /// Renders `report.md`. Charts are linked as `<chart_prefix><id>.svg`.
    #[must_use]
    pub fn to_markdown(&self, chart_prefix: &str) -> String {
        let m = &self.machine;
        let r = &self.run;
        let command = &r.command;
        let mut md = String::new();
        let _ = writeln!(md, "# Benchmark report\n");
        let _ = writeln!(
            md,
            "Made with `{command}` on {} ({} mode, {:.0} s wall time).\n",
            m.date, r.mode, r.wall_seconds
        );
        let _ = writeln!(md, "| machine | |\n|---|---|");
        let _ = writeln!(
            md,
            "| CPU | {} ({} cores available) |",
            m.cpu_model, m.cores
        );
        let _ = writeln!(md, "| memory | {} |", m.memory);
        let _ = writeln!(md, "| OS | {}, kernel {} |", m.os, m.kernel);
        let _ = writeln!(md, "| compiler | {} |", m.rustc);
        let _ = writeln!(md, "| date (UTC) | {} |", m.date);
        let _ = writeln!(md, "| load average at start | {} |", m.load_average);
        let _ = writeln!(
            md,
            "| method | {} alternating rounds per cell (every implementation and parameter in \
             turn, start rotated each round), timed runs of ≈{} ms, median reported; \
             allocation: runs of n = {} and 2n elements, difference ÷ n, all threads |\n",
            r.rounds, r.target_ms, r.alloc_elements
        );
        let _ = writeln!(
            md,
            "Figures come from a shared, noisy machine. Compare implementations **within one \
             table** (same run, alternating rounds), not across runs or machines. Ratios are \
             ours ÷ peer in elements per second: above 1, ours is faster. Scenario and peer \
             definitions: `benches/README.md`.\n"
        );
        for s in &self.scenarios {
            self.scenario_markdown(&mut md, s, chart_prefix);
        }
        md
    }

    fn scenario_markdown(&self, md: &mut String, s: &ScenarioInfo, chart_prefix: &str) {
        let _ = writeln!(md, "## `{}`: {}\n", s.id, s.title);
        if s.cross_thread {
            let _ = writeln!(
                md,
                "Crosses threads: with {} cores available, figures include scheduling noise.\n",
                self.machine.cores
            );
        }
        let _ = writeln!(
            md,
            "![{} throughput]({chart_prefix}{})\n",
            s.id,
            Report::chart_file(s)
        );
        let has_any = s.implementations.iter().any(|i| !i.per_param);
        let mut columns: Vec<&str> = s.params.iter().map(String::as_str).collect();
        if has_any {
            columns.push(ANY_PARAM);
        }
        let header = |md: &mut String, first: &str| {
            let _ = write!(md, "| {first} |");
            for c in &columns {
                let _ = write!(md, " {c} |");
            }
            let _ = write!(md, "\n|---|");
            for _ in &columns {
                let _ = write!(md, "---:|");
            }
            md.push('\n');
        };
        let exact = |imp: &str, param: &str| {
            self.rows
                .iter()
                .find(|r| r.scenario == s.id && r.param == param && r.implementation == imp)
        };
        let name = |i: &ImplementationInfo| {
            if i.ours {
                format!("**{}** (ours)", i.name)
            } else if i.lossy {
                format!("{} (lossy)", i.name)
            } else {
                i.name.clone()
            }
        };

        let _ = writeln!(
            md,
            "Throughput, million elements per second: median <sub>slowest–fastest round</sub>, \
             by {}:\n",
            s.param_name
        );
        header(md, "implementation");
        for i in &s.implementations {
            let _ = write!(md, "| {} |", name(i));
            for c in &columns {
                match exact(&i.name, c) {
                    Some(r) => {
                        let _ = write!(
                            md,
                            " {} <sub>{}–{}</sub> |",
                            melems(r.elements_per_sec),
                            melems(r.min_elements_per_sec),
                            melems(r.max_elements_per_sec)
                        );
                    }
                    None => md.push_str(" |"),
                }
            }
            md.push('\n');
        }
        md.push('\n');

        if !s.deliveries_per_element.is_empty() {
            let _ = writeln!(
                md,
                "Deliveries, million `on_next` (or `recv`) per second: input elements per second \
                 × {}{}:\n",
                s.param_name,
                if s.implementations.iter().any(|i| i.lossy) {
                    "; a lossy peer's figure counts what it was due, with the share it delivered \
                     (worst round) after it"
                } else {
                    ""
                }
            );
            header(md, "implementation");
            for i in &s.implementations {
                let _ = write!(md, "| {} |", name(i));
                for c in &columns {
                    let k = s.params.iter().position(|p| p == c);
                    match (exact(&i.name, c), k.map(|k| s.deliveries_per_element[k])) {
                        (Some(r), Some(d)) => {
                            let _ = write!(md, " {}", melems(r.elements_per_sec * d as f64));
                            if let Some(f) = r.delivered_fraction {
                                let _ = write!(md, " ({:.1}% delivered)", f * 100.0);
                            }
                            md.push_str(" |");
                        }
                        _ => md.push_str(" |"),
                    }
                }
                md.push('\n');
            }
            md.push('\n');
        }

        if !s.elements_per_op.is_empty() {
            let _ = writeln!(
                md,
                "Operations per second (one op = one subscription run to completion; elements \
                 per op: {}){}:\n",
                s.params
                    .iter()
                    .zip(&s.elements_per_op)
                    .map(|(p, e)| format!("{p}: {e}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if s.reference_ops.is_empty() {
                    String::new()
                } else {
                    format!("; in italics: {}", s.reference)
                }
            );
            header(md, "implementation");
            let per_op = |c: &str| {
                s.params
                    .iter()
                    .position(|p| p == c)
                    .map(|k| s.elements_per_op[k])
            };
            for i in &s.implementations {
                let _ = write!(md, "| {} |", name(i));
                for c in &columns {
                    let e = if i.per_param { per_op(c) } else { None };
                    match (exact(&i.name, c), e) {
                        (Some(r), Some(e)) => {
                            let _ = write!(md, " {} |", ops_fmt(r.elements_per_sec / e as f64));
                        }
                        _ => md.push_str(" |"),
                    }
                }
                md.push('\n');
            }
            for (row, figures) in &s.reference_ops {
                let _ = write!(md, "| *{row}* |");
                for c in &columns {
                    match s
                        .params
                        .iter()
                        .position(|p| p == c)
                        .and_then(|k| figures[k])
                    {
                        Some(f) => {
                            let _ = write!(md, " *{}* |", ops_fmt(f));
                        }
                        None => md.push_str(" |"),
                    }
                }
                md.push('\n');
            }
            md.push('\n');
            let _ = writeln!(
                md,
                "Allocation per op (per subscription), all threads, steady state (bytes / \
                 allocations; per element × elements per op):\n"
            );
            header(md, "implementation");
            for i in &s.implementations {
                let _ = write!(md, "| {} |", name(i));
                for c in &columns {
                    let e = if i.per_param { per_op(c) } else { None };
                    match (
                        exact(&i.name, c)
                            .and_then(|r| r.bytes_per_element.zip(r.allocs_per_element)),
                        e,
                    ) {
                        (Some((b, a)), Some(e)) => {
                            let _ = write!(md, " {:.0} B / {:.1} |", b * e as f64, a * e as f64);
                        }
                        _ => md.push_str(" |"),
                    }
                }
                md.push('\n');
            }
            md.push('\n');
        }

        let peers: Vec<&ImplementationInfo> =
            s.implementations.iter().filter(|i| !i.ours).collect();
        let ratios = self.ratios(s);
        if !peers.is_empty() && !ratios.is_empty() {
            let _ = writeln!(
                md,
                "Ours ÷ peer (elements per second; > 1: ours is faster):\n"
            );
            let _ = write!(md, "| ours | {} |", s.param_name);
            for p in &peers {
                let _ = write!(md, " vs {} |", p.name);
            }
            let _ = write!(md, "\n|---|---|");
            for _ in &peers {
                md.push_str("---:|");
            }
            md.push('\n');
            for ours in s.implementations.iter().filter(|i| i.ours) {
                for param in &s.params {
                    let line: Vec<_> = peers
                        .iter()
                        .map(|p| {
                            ratios
                                .iter()
                                .find(|r| {
                                    r.ours == ours.name && &r.param == param && r.peer == p.name
                                })
                                .map_or(String::new(), |r| format!("{:.2}×", r.ratio))
                        })
                        .collect();
                    if line.iter().all(String::is_empty) {
                        continue;
                    }
                    let _ = write!(md, "| {} | {param} |", ours.name);
                    for cell in line {
                        let _ = write!(md, " {cell} |");
                    }
                    md.push('\n');
                }
            }
            md.push('\n');
        }

        let measured_alloc = self
            .rows
            .iter()
            .any(|r| r.scenario == s.id && r.bytes_per_element.is_some());
        if measured_alloc {
            let _ = writeln!(
                md,
                "Allocation per element, all threads (bytes / allocations):\n"
            );
            header(md, "implementation");
            for i in &s.implementations {
                let _ = write!(md, "| {} |", name(i));
                for c in &columns {
                    match exact(&i.name, c)
                        .and_then(|r| Some((r.bytes_per_element?, r.allocs_per_element?)))
                    {
                        Some((b, a)) => {
                            let _ = write!(md, " {b:.2} B / {a:.3} |");
                        }
                        None => md.push_str(" |"),
                    }
                }
                md.push('\n');
            }
            md.push('\n');
        }

        let _ = writeln!(md, "What each implementation runs:\n");
        for i in &s.implementations {
            let _ = writeln!(md, "- {}: {}", name(i), i.what);
        }
        md.push('\n');
    }
}

/// Million elements per second, with 3 significant digits at most (`0.61`, `6.1`, `61`).
/// Operations per second, three significant digits.
fn ops_fmt(ops: f64) -> String {
    if ops >= 100.0 {
        format!("{ops:.0}")
    } else if ops >= 10.0 {
        format!("{ops:.1}")
    } else {
        format!("{ops:.2}")
    }
}

fn melems(eps: f64) -> String {
    let v = eps / 1e6;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}
