//! A bar chart of time per communicator and operation (summed over ranks), PNG or SVG by the
//! output's extension.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

use crate::model::Profile;

/// Errors drawing the chart.
#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot draw the chart: {why}")]
pub struct PlotError {
    /// The output.
    pub path: std::path::PathBuf,
    /// Why.
    pub why: String,
}

/// Draws one horizontal bar per (communicator, operation), the longest first (at most 40).
/// Text is drawn with plotters' `ab_glyph` backend: the caller registers a font named
/// `sans-serif` first (`plotters::style::register_font`).
///
/// # Errors
/// [`PlotError`] when the file cannot be written or the extension is neither `.svg` nor `.png`.
pub fn bars(p: &Profile, out: &Path) -> Result<(), PlotError> {
    let fail = |why: String| PlotError {
        path: out.to_path_buf(),
        why,
    };
    let mut acc: BTreeMap<(String, String), f64> = BTreeMap::new();
    for r in &p.rows {
        *acc.entry((r.comm.clone(), r.op.clone())).or_default() += r.stats.time_sum_secs;
    }
    let mut bars: Vec<(String, f64)> = acc
        .into_iter()
        .map(|((c, o), t)| (format!("{c} {o}"), t))
        .collect();
    bars.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    bars.truncate(40);
    let height = 120 + 22 * bars.len().max(1) as u32;
    let size = (1000, height);
    let title = format!(
        "time in MPI per communicator and operation ({})",
        p.meta.source.as_str()
    );
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "svg" => draw(
            SVGBackend::new(out, size).into_drawing_area(),
            &bars,
            &title,
        ),
        "png" => draw(
            BitMapBackend::new(out, size).into_drawing_area(),
            &bars,
            &title,
        ),
        other => Err(format!("unknown picture extension {other:?} (svg or png)")),
    }
    .map_err(fail)
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    bars: &[(String, f64)],
    title: &str,
) -> Result<(), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let max = bars.iter().map(|b| b.1).fold(0.0f64, f64::max).max(1e-12) * 1.1;
    let n = bars.len().max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(260)
        .build_cartesian_2d(0.0..max, (0..n).into_segmented())
        .map_err(|x| e(&x))?;
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    chart
        .configure_mesh()
        .x_desc("time summed over ranks (s)")
        .y_labels(n)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .draw()
        .map_err(|x| e(&x))?;
    chart
        .draw_series(bars.iter().enumerate().map(|(i, b)| {
            Rectangle::new(
                [
                    (0.0, SegmentValue::Exact(i)),
                    (b.1, SegmentValue::Exact(i + 1)),
                ],
                BLUE.mix(0.6).filled(),
            )
        }))
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))
}
