//! The plot of `timeless validate`: one panel per program, the rank counts along x; the
//! measured median with a min–max bar, the prediction, and the prediction with the other speed
//! source (PNG and SVG, plotters).

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use timeless_validate::report::{Row, SpeedSource};

const MEASURED: RGBColor = RGBColor(0, 0, 0);
const PREDICTED: RGBColor = RGBColor(214, 39, 40);
const OTHER: RGBColor = RGBColor(31, 119, 180);

/// Programs in order of first appearance, each with its rows.
fn panels(rows: &[Row]) -> Vec<(&str, Vec<&Row>)> {
    let mut out: Vec<(&str, Vec<&Row>)> = Vec::new();
    for r in rows {
        match out.iter_mut().find(|(l, _)| *l == r.label) {
            Some((_, v)) => v.push(r),
            None => out.push((&r.label, vec![r])),
        }
    }
    out
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    label: &str,
    rows: &[&Row],
    source: SpeedSource,
    legend: bool,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let mut nps: Vec<usize> = rows.iter().map(|r| r.np).collect();
    nps.sort_unstable();
    nps.dedup();
    let other = |r: &Row| match source {
        SpeedSource::Trace => Some(r.predicted.kernel_secs),
        SpeedSource::Kernel => r.predicted.trace_secs,
    };
    let top = rows
        .iter()
        .flat_map(|r| {
            let hi = r.measured_stats().map_or(0.0, |s| s.2);
            [hi, r.predicted.secs, other(r).unwrap_or(0.0)]
        })
        .fold(0.0f64, f64::max)
        .max(1e-3)
        * 1.15;
    let n = nps.len() as f64;
    let mut c = ChartBuilder::on(area)
        .caption(label, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(55)
        .build_cartesian_2d(0f64..n, 0f64..top)
        .map_err(e)?;
    let labels = nps.clone();
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(nps.len() * 2 + 1)
        .x_label_formatter(&|v| {
            let i = v.floor() as usize;
            if (v - v.floor() - 0.5).abs() < 1e-6 && i < labels.len() {
                format!("{} ranks", labels[i])
            } else {
                String::new()
            }
        })
        .y_desc("seconds")
        .draw()
        .map_err(e)?;
    // Several rows at one rank count (acquisition modes) sit side by side.
    let mut placed: Vec<(f64, &Row)> = Vec::new();
    for (i, np) in nps.iter().enumerate() {
        let here: Vec<&&Row> = rows.iter().filter(|r| r.np == *np).collect();
        let k = here.len() as f64;
        for (j, r) in here.into_iter().enumerate() {
            placed.push((i as f64 + 0.5 + 0.25 * (j as f64 - (k - 1.0) / 2.0) / k, r));
        }
    }
    let cap = 0.06;
    let mut bars = Vec::new();
    for &(x, r) in &placed {
        if let Some((_, lo, hi)) = r.measured_stats() {
            bars.push(PathElement::new(
                vec![(x, lo), (x, hi)],
                MEASURED.stroke_width(2),
            ));
            bars.push(PathElement::new(
                vec![(x - cap, lo), (x + cap, lo)],
                MEASURED.stroke_width(2),
            ));
            bars.push(PathElement::new(
                vec![(x - cap, hi), (x + cap, hi)],
                MEASURED.stroke_width(2),
            ));
        }
    }
    c.draw_series(bars).map_err(e)?;
    let medians: Vec<(f64, f64)> = placed
        .iter()
        .filter_map(|&(x, r)| r.measured_stats().map(|s| (x, s.0)))
        .collect();
    let s = c
        .draw_series(
            medians
                .iter()
                .map(|&p| Circle::new(p, 5, MEASURED.filled())),
        )
        .map_err(e)?;
    if legend {
        s.label("measured median (bar: min-max)")
            .legend(|(x, y)| Circle::new((x + 10, y), 5, MEASURED.filled()));
    }
    let predicted: Vec<(f64, f64)> = placed.iter().map(|&(x, r)| (x, r.predicted.secs)).collect();
    let s = c
        .draw_series(
            predicted
                .iter()
                .map(|&p| Cross::new(p, 7, PREDICTED.stroke_width(3))),
        )
        .map_err(e)?;
    if legend {
        s.label(format!("predicted ({} speed)", source.name()))
            .legend(|(x, y)| Cross::new((x + 10, y), 6, PREDICTED.stroke_width(3)));
    }
    let others: Vec<(f64, f64)> = placed
        .iter()
        .filter_map(|&(x, r)| other(r).map(|v| (x, v)))
        .collect();
    let other_name = match source {
        SpeedSource::Trace => "kernel",
        SpeedSource::Kernel => "trace",
    };
    let s = c
        .draw_series(
            others
                .iter()
                .map(|&p| Circle::new(p, 6, OTHER.stroke_width(2))),
        )
        .map_err(e)?;
    if legend {
        s.label(format!("predicted ({other_name} speed)"))
            .legend(|(x, y)| Circle::new((x + 10, y), 5, OTHER.stroke_width(2)));
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    rows: &[Row],
    source: SpeedSource,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    area.fill(&WHITE).map_err(e)?;
    let area = area
        .titled(
            "timeless validate: measured vs predicted run time",
            ("sans-serif", 24),
        )
        .map_err(e)?;
    let p = panels(rows);
    let (cols, nrows) = grid(p.len());
    let cells = area.split_evenly((nrows, cols));
    for (i, (label, rows)) in p.iter().enumerate() {
        draw_panel(&cells[i], label, rows, source, i == 0)?;
    }
    area.present().map_err(e)?;
    Ok(())
}

/// Columns and rows of the panel grid for `n` panels (at most 3 columns).
fn grid(n: usize) -> (usize, usize) {
    let cols = n.clamp(1, 3);
    (cols, n.div_ceil(cols).max(1))
}

/// Draws the rows to `png` and `svg`.
///
/// # Errors
/// No font is available, or a file cannot be written.
pub fn write(rows: &[Row], source: SpeedSource, png: &Path, svg: &Path) -> Result<(), String> {
    crate::calibrate::plot::font()?;
    let (cols, nrows) = grid(panels(rows).len());
    let size = (420 * cols as u32, 340 * nrows as u32 + 40);
    draw(
        BitMapBackend::new(png, size).into_drawing_area(),
        rows,
        source,
    )
    .map_err(|e| format!("{}: {e}", png.display()))?;
    draw(SVGBackend::new(svg, size).into_drawing_area(), rows, source)
        .map_err(|e| format!("{}: {e}", svg.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panel_grid_has_at_most_three_columns() {
        assert_eq!(grid(1), (1, 1));
        assert_eq!(grid(3), (3, 1));
        assert_eq!(grid(7), (3, 3));
    }
}
