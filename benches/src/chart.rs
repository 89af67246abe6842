//! SVG charts: throughput of every implementation against a scenario's parameter axis.
//!
//! One chart per scenario: the x axis is the parameter (request size, capacity; the fanout
//! scenario's subscribers, the boundary scenario's boundaries), evenly spaced in axis order,
//! the y axis million elements per second on a log scale (so a ratio looks the same at every
//! height). Ours are thick solid lines, peers thin ones; an implementation that ignores the
//! parameter is a dashed flat line. Drawn with plotters' SVG backend: text is written as SVG
//! `<text>` (family `sans-serif`), so no system font is needed to make the file.

use std::error::Error;
use std::path::Path;

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

use crate::report::{Report, ScenarioInfo};
use crate::scenario::ANY_PARAM;

/// Chart size in pixels.
const SIZE: (u32, u32) = (960, 560);

const OURS: [RGBColor; 3] = [
    RGBColor(200, 30, 45),
    RGBColor(230, 120, 20),
    RGBColor(150, 40, 160),
];
const PEERS: [RGBColor; 6] = [
    RGBColor(30, 90, 200),
    RGBColor(20, 150, 80),
    RGBColor(90, 90, 90),
    RGBColor(0, 160, 190),
    RGBColor(120, 80, 30),
    RGBColor(100, 130, 30),
];

/// Draws the throughput chart of `scenario` from `report` into the SVG file `path`.
///
/// # Errors
///
/// Writing the file, or a scenario without any measured row.
///
/// # Examples
///
/// See `tests/chart.rs` and `bench-report`.
pub fn throughput_chart(
    report: &Report,
    scenario: &ScenarioInfo,
    path: &Path,
) -> Result<(), Box<dyn Error>> {
    let labels = &scenario.params;
    let rows: Vec<_> = report
        .rows
        .iter()
        .filter(|r| r.scenario == scenario.id)
        .collect();
    if rows.is_empty() || labels.is_empty() {
        return Err(format!("no rows for scenario {}", scenario.id).into());
    }
    let (lo, hi) = rows.iter().fold((f64::MAX, 0f64), |(lo, hi), r| {
        let low = r.min_elements_per_sec.min(r.elements_per_sec) / 1e6;
        let high = r.max_elements_per_sec.max(r.elements_per_sec) / 1e6;
        (lo.min(low), hi.max(high))
    });
    // Log axis from the power of ten below the slowest round (so ticks land on 1-2-5
    // values), with headroom above for the legend.
    let y_lo = 10f64.powf(lo.max(1e-6).log10().floor());
    // The legend takes about 17 px per entry of the ≈430 px plot height: keep that fraction
    // `f` of the (logarithmic) axis above the fastest round,
    // log(y_hi) = log(hi) + f (log(y_hi) - log(y_lo)).
    let f = (17.0 * scenario.implementations.len() as f64 + 30.0) / 430.0;
    let y_hi = 10f64.powf(((hi * 1.2).log10() - f * y_lo.log10()) / (1.0 - f));

    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let n = i32::try_from(labels.len()).expect("few parameters");
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{}: {}", scenario.id, scenario.title),
            ("sans-serif", 20),
        )
        .margin(16)
        .x_label_area_size(52)
        .y_label_area_size(72)
        .build_cartesian_2d((0..n - 1).into_segmented(), (y_lo..y_hi).log_scale())?;
    let label_of = |v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(i) => usize::try_from(*i)
            .ok()
            .and_then(|i| labels.get(i).cloned())
            .unwrap_or_default(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(labels.len())
        .x_label_formatter(&label_of)
        .y_labels(30)
        .bold_line_style(BLACK.mix(0.08))
        .light_line_style(TRANSPARENT)
        .y_label_formatter(&|v| format_melems(*v))
        .x_desc(scenario.param_name.as_str())
        .y_desc("million elements / s (log)")
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .draw()?;

    let (mut ours_i, mut peers_i) = (0, 0);
    for imp in &scenario.implementations {
        let color = if imp.ours {
            ours_i += 1;
            OURS[(ours_i - 1) % OURS.len()]
        } else {
            peers_i += 1;
            PEERS[(peers_i - 1) % PEERS.len()]
        };
        let width = if imp.ours { 3 } else { 2 };
        let style = color.stroke_width(width);
        let name = if imp.ours {
            format!("{} (ours)", imp.name)
        } else {
            imp.name.clone()
        };
        let any = rows
            .iter()
            .find(|r| r.implementation == imp.name && r.param == ANY_PARAM);
        if let Some(row) = any {
            let y = row.elements_per_sec / 1e6;
            let flat = [
                (SegmentValue::CenterOf(0), y),
                (SegmentValue::CenterOf(n - 1), y),
            ];
            chart
                .draw_series(DashedLineSeries::new(flat, 8, 6, style))?
                .label(format!("{name} (any {})", short_axis(&scenario.param_name)))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
            continue;
        }
        let found: Vec<_> = labels
            .iter()
            .enumerate()
            .filter_map(|(i, label)| {
                let row = rows
                    .iter()
                    .find(|r| r.implementation == imp.name && &r.param == label)?;
                Some((i32::try_from(i).ok()?, *row))
            })
            .collect();
        if found.is_empty() {
            continue;
        }
        // Whiskers: slowest to fastest round.
        chart.draw_series(found.iter().map(|(i, row)| {
            PathElement::new(
                vec![
                    (SegmentValue::CenterOf(*i), row.min_elements_per_sec / 1e6),
                    (SegmentValue::CenterOf(*i), row.max_elements_per_sec / 1e6),
                ],
                color.mix(0.6).stroke_width(2),
            )
        }))?;
        let points: Vec<_> = found
            .iter()
            .map(|(i, row)| (SegmentValue::CenterOf(*i), row.elements_per_sec / 1e6))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), style))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
        chart.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, if imp.ours { 4 } else { 3 }, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 13))
        .draw()?;
    root.present()?;
    Ok(())
}

/// The first words of an axis name, for the legend ("request size").
fn short_axis(name: &str) -> &str {
    name.split(['(', '/']).next().unwrap_or(name).trim()
}

/// Formats a tick of the log axis, keeping only 1, 2 and 5 × 10^k (`0.5`, `2`, `10`, `200`)
/// and leaving the others blank.
fn format_melems(v: f64) -> String {
    let mantissa = v / 10f64.powf(v.log10().floor());
    if ![1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6) {
        return String::new();
    }
    if v >= 10.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}
