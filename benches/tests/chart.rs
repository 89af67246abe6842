//! Charts and ratio tables work for every data shape the scenarios produce, including the
//! fanout (throughput against subscribers) and boundary (against boundaries) scenarios that
//! later issues add: those are drawn here from synthetic rows of the same shape.

use rs_benches::machine::Machine;
use rs_benches::report::{ImplementationInfo, Report, Row, RunInfo, ScenarioInfo};

fn imp(name: &str, ours: bool, per_param: bool) -> ImplementationInfo {
    ImplementationInfo {
        name: name.to_owned(),
        ours,
        per_param,
        what: format!("what {name} does"),
        lossy: name.contains("lossy"),
    }
}

fn row(scenario: &str, param: &str, implementation: &str, eps: f64) -> Row {
    Row {
        scenario: scenario.to_owned(),
        param: param.to_owned(),
        implementation: implementation.to_owned(),
        elements_per_sec: eps,
        bytes_per_element: Some(1.5),
        allocs_per_element: Some(0.01),
        min_elements_per_sec: eps * 0.9,
        max_elements_per_sec: eps * 1.1,
        elements: 1000,
        rounds: 3,
        delivered_fraction: implementation.contains("lossy").then_some(0.5),
    }
}

/// A report shaped like the fanout and boundary scenarios of the seeds (subscribers
/// 1/2/8/32/128; boundaries 0/1/3/10), with a parameter-free peer in the boundary one.
fn synthetic() -> Report {
    let fanout = ScenarioInfo {
        id: "fanout".to_owned(),
        title: "One source, N subscribers, continuous demand".to_owned(),
        param_name: "subscribers".to_owned(),
        params: ["1", "2", "8", "32", "128"].map(str::to_owned).to_vec(),
        implementations: vec![
            imp("rs-impl fanout", true, true),
            imp("async-broadcast", false, true),
            imp("bus", false, true),
            imp("tokio broadcast (lossy)", false, true),
        ],
        cross_thread: true,
        deliveries_per_element: vec![1, 2, 8, 32, 128],
        elements_per_op: Vec::new(),
        reference: String::new(),
        reference_ops: Vec::new(),
    };
    let boundary = ScenarioInfo {
        id: "boundary".to_owned(),
        title: "Source through K async boundaries".to_owned(),
        param_name: "boundaries".to_owned(),
        params: ["0", "1", "3", "10"].map(str::to_owned).to_vec(),
        implementations: vec![
            imp("rs-impl boundary", true, true),
            imp("crossbeam-channel chain", false, true),
            imp("iterator loop", false, false),
        ],
        cross_thread: true,
        deliveries_per_element: Vec::new(),
        elements_per_op: Vec::new(),
        reference: String::new(),
        reference_ops: Vec::new(),
    };
    let mut rows = Vec::new();
    for (i, k) in fanout.params.iter().enumerate() {
        let k_f = f64::from(1u32 << (2 * i));
        rows.push(row("fanout", k, "rs-impl fanout", 40e6 / k_f));
        rows.push(row("fanout", k, "async-broadcast", 10e6 / k_f / k_f.sqrt()));
        rows.push(row("fanout", k, "bus", 20e6 / k_f));
        rows.push(row("fanout", k, "tokio broadcast (lossy)", 30e6 / k_f));
    }
    for (i, k) in boundary.params.iter().enumerate() {
        let k_f = (i + 1) as f64;
        rows.push(row("boundary", k, "rs-impl boundary", 30e6 / k_f));
        rows.push(row("boundary", k, "crossbeam-channel chain", 12e6 / k_f));
    }
    rows.push(row("boundary", "any", "iterator loop", 900e6));
    Report {
        machine: Machine::detect(),
        run: RunInfo {
            mode: "tiny".to_owned(),
            rounds: 3,
            target_ms: 0,
            alloc_elements: 1000,
            alloc_counted: true,
            wall_seconds: 1.0,
            command: "bench-report --tiny".to_owned(),
        },
        scenarios: vec![fanout, boundary],
        rows,
    }
}

#[test]
fn fanout_and_boundary_charts_render_with_labels() {
    let report = synthetic();
    let dir = std::env::temp_dir().join(format!("rs-benches-chart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for s in &report.scenarios {
        let path = dir.join(Report::chart_file(s));
        rs_benches::chart::throughput_chart(&report, s, &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.contains("<text"), "labels are SVG text");
        assert!(svg.contains(&s.param_name), "x axis label {}", s.param_name);
        for p in &s.params {
            assert!(svg.contains(&format!(">\n{p}\n</text>")), "tick {p}");
        }
        for i in &s.implementations {
            assert!(svg.contains(&i.name), "legend entry {}", i.name);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ratios_pair_ours_with_each_peer_at_the_same_parameter_or_any() {
    let report = synthetic();
    let fanout = &report.scenarios[0];
    let ratios = report.ratios(fanout);
    assert_eq!(ratios.len(), 5 * 3, "5 subscriber counts × 3 peers");
    let at_8_vs_bus = ratios
        .iter()
        .find(|r| r.param == "8" && r.peer == "bus")
        .unwrap();
    assert!((at_8_vs_bus.ratio - 2.0).abs() < 1e-9);

    let boundary = &report.scenarios[1];
    let ratios = report.ratios(boundary);
    let vs_loop: Vec<_> = ratios
        .iter()
        .filter(|r| r.peer == "iterator loop")
        .collect();
    assert_eq!(
        vs_loop.len(),
        4,
        "a parameter-free peer is compared at every parameter"
    );
    assert!((vs_loop[0].ratio - 30.0 / 900.0).abs() < 1e-9);
}

#[test]
fn markdown_has_a_table_a_ratio_table_an_allocation_table_and_the_chart_per_scenario() {
    let report = synthetic();
    let md = report.to_markdown("bench/");
    for s in &report.scenarios {
        assert!(md.contains(&format!("![{} throughput](bench/{}.svg)", s.id, s.id)));
    }
    assert!(md.contains("| **rs-impl fanout** (ours) |"));
    assert!(md.contains("vs async-broadcast"));
    assert!(md.contains("| rs-impl fanout | 8 |"));
    assert!(md.contains("Allocation per element"));
    assert!(md.contains(&report.machine.date));

    let json = serde_json::to_string(&report).unwrap();
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back.scenarios, report.scenarios);
    assert_eq!(back.rows.len(), report.rows.len());
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    for key in [
        "scenario",
        "param",
        "implementation",
        "elements_per_sec",
        "bytes_per_element",
    ] {
        assert!(value["rows"][0].get(key).is_some(), "row field {key}");
    }
    for key in ["cores", "memory", "cpu_model", "os", "rustc", "date"] {
        assert!(value["machine"].get(key).is_some(), "machine field {key}");
    }
}
