//! SVG plots of a sweep: predicted time against each axis, one line per trace.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::{Summary, SweepError};

/// Draws `plot-AXIS.svg` in `dir` for each axis of the summary: the simulated time of each
/// trace's points along that axis, the other axes at the trace's first point's values (the
/// series of [`crate::Sensitivity`]). Numeric axes are drawn to scale, others as categories in
/// point order. Text is drawn with plotters' `ab_glyph` backend: the caller registers a font
/// named `sans-serif` first (`plotters::style::register_font`). Returns the files written.
///
/// # Errors
/// [`SweepError::Plot`] when a plot cannot be drawn or written.
pub fn plot(summary: &Summary, dir: &Path) -> Result<Vec<PathBuf>, SweepError> {
    let mut axes: Vec<&str> = Vec::new();
    for s in &summary.sensitivity {
        if !axes.contains(&s.axis.as_str()) {
            axes.push(&s.axis);
        }
    }
    let mut out = Vec::new();
    for axis in axes {
        let series: Vec<(&str, &[(String, f64)])> = summary
            .sensitivity
            .iter()
            .filter(|s| s.axis == axis && !s.series.is_empty())
            .map(|s| (s.trace.as_str(), s.series.as_slice()))
            .collect();
        if series.is_empty() {
            continue;
        }
        let name: String = axis
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("plot-{name}.svg"));
        draw(
            SVGBackend::new(&path, (900, 560)).into_drawing_area(),
            axis,
            &series,
        )
        .map_err(|why| SweepError::Plot {
            path: path.clone(),
            why,
        })?;
        out.push(path);
    }
    Ok(out)
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    axis: &str,
    series: &[(&str, &[(String, f64)])],
) -> Result<(), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    // The axis's values in order of first appearance.
    let mut labels: Vec<&str> = Vec::new();
    for (_, s) in series {
        for (v, _) in s.iter() {
            if !labels.contains(&v.as_str()) {
                labels.push(v);
            }
        }
    }
    let numeric = labels.iter().all(|l| l.parse::<f64>().is_ok());
    let x_of = |v: &str| -> f64 {
        if numeric {
            v.parse().unwrap_or(0.0)
        } else {
            labels.iter().position(|l| *l == v).unwrap_or(0) as f64
        }
    };
    let xs: Vec<f64> = labels.iter().map(|l| x_of(l)).collect();
    let (mut x0, mut x1) = (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let pad = ((x1 - x0) * 0.05).max(if numeric { 1e-9 } else { 0.5 });
    x0 -= pad;
    x1 += pad;
    // Traces' times may differ by orders of magnitude: a log scale keeps each line readable.
    let ys = || {
        series
            .iter()
            .flat_map(|(_, s)| s.iter().map(|p| p.1))
            .filter(|y| *y > 0.0)
    };
    let y1 = ys().fold(0.0f64, f64::max).max(1e-12) * 1.3;
    let y0 = ys().fold(f64::INFINITY, f64::min).min(y1 / 1.3) / 1.3;
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("predicted time vs {axis}"), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
        .map_err(|x| e(&x))?;
    let fmt_x = |x: &f64| {
        if numeric {
            let t = format!("{x:.4}");
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                labels
                    .get(i as usize)
                    .map(|l| l.to_string())
                    .unwrap_or_default()
            } else {
                String::new()
            }
        }
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(axis)
        .y_desc("simulated time (s, log scale)")
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&|y: &f64| secs_label(*y));
    if !numeric {
        mesh.x_labels(labels.len() * 2 + 1);
    }
    mesh.draw().map_err(|x| e(&x))?;
    for (i, (trace, s)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let mut pts: Vec<(f64, f64)> = s
            .iter()
            .filter(|p| p.1 > 0.0)
            .map(|(v, t)| (x_of(v), *t))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|x| e(&x))?
            .label(*trace)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().map(|p| Circle::new(*p, 4, color.filled())))
            .map_err(|x| e(&x))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))
}

/// A time tick label with 3 significant digits, no float noise: `0.3`, `0.125`, `2.5e-5`.
fn secs_label(y: f64) -> String {
    if !(y.is_finite() && y > 0.0) {
        return format!("{y}");
    }
    let mag = y.log10().floor() as i32;
    if (-3..4).contains(&mag) {
        let t = format!("{y:.prec$}", prec = (2 - mag).max(0) as usize);
        if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            t
        }
    } else {
        format!("{y:.2e}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn secs_labels_have_no_float_noise() {
        let l = super::secs_label;
        assert_eq!(l(0.30000000000000004), "0.3");
        assert_eq!(l(0.6000000000000001), "0.6");
        assert_eq!(l(0.125), "0.125");
        assert_eq!(l(0.0125), "0.0125");
        assert_eq!(l(12.5), "12.5");
        assert_eq!(l(250.0), "250");
        assert_eq!(l(2.5e-5), "2.50e-5");
    }
}
