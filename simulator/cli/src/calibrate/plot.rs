//! Plots of measured vs modelled times (PNG and SVG, plotters), log-log.
//!
//! Text needs a TrueType font: the first of a few usual system paths (DejaVu, Liberation) is
//! registered as `sans-serif`. Without one, no plot is drawn and the caller is told why.

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

/// One series of a plot.
pub struct Series<'a> {
    /// Legend label.
    pub label: &'a str,
    /// `(x, y)` points, both > 0 (log axes).
    pub points: &'a [(f64, f64)],
    /// Markers only (true) or a line (false).
    pub markers: bool,
    /// Colour.
    pub color: RGBColor,
    /// Filled markers (else hollow).
    pub filled: bool,
    /// Marker radius in pixels.
    pub size: u32,
}

/// A log-log chart.
pub struct Chart<'a> {
    /// Title.
    pub title: &'a str,
    /// X axis label.
    pub x_label: &'a str,
    /// Y axis label.
    pub y_label: &'a str,
    /// Series, drawn in order.
    pub series: Vec<Series<'a>>,
}

const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation/LiberationSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
];

/// Registers a system font once; `Err` names the paths tried.
pub(crate) fn font() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        for p in FONT_PATHS {
            if let Ok(bytes) = std::fs::read(p) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return Ok(());
                }
            }
        }
        Err(format!(
            "no TrueType font found (tried {}); install fonts-dejavu-core for plots",
            FONT_PATHS.join(", ")
        ))
    })
    .clone()
}

fn bounds(chart: &Chart) -> ((f64, f64), (f64, f64)) {
    let pts = chart.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, 0f64, f64::INFINITY, 0f64);
    for &(x, y) in pts.filter(|p| p.0 > 0.0 && p.1 > 0.0) {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        return ((1.0, 10.0), (1.0, 10.0));
    }
    ((x0 / 1.5, x1 * 1.5), (y0 / 1.5, y1 * 1.5))
}

/// A tick label: plain decimals between 0.01 and 1e5 (trailing zeros trimmed), else `1.5e-6`.
fn tick(v: f64) -> String {
    if (0.01..1e5).contains(&v.abs()) {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.1e}").replace(".0e", "e")
    }
}

fn draw<DB: DrawingBackend>(area: DrawingArea<DB, Shift>, chart: &Chart) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    area.fill(&WHITE).map_err(e)?;
    let ((x0, x1), (y0, y1)) = bounds(chart);
    let mut c = ChartBuilder::on(&area)
        .caption(chart.title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .map_err(e)?;
    c.configure_mesh()
        .x_desc(chart.x_label)
        .y_desc(chart.y_label)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .draw()
        .map_err(e)?;
    for s in &chart.series {
        let color = s.color;
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| p.0 > 0.0 && p.1 > 0.0)
            .collect();
        if s.markers {
            // The first marker series is filled, later ones hollow so overlaps stay visible.
            let style = if s.filled {
                color.filled()
            } else {
                color.stroke_width(2)
            };
            c.draw_series(pts.iter().map(|&p| Circle::new(p, s.size, style)))
                .map_err(e)?
                .label(s.label)
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, style));
        } else {
            c.draw_series(LineSeries::new(pts, color.stroke_width(2)))
                .map_err(e)?
                .label(s.label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(e)?;
    area.present().map_err(e)?;
    Ok(())
}

/// Draws `chart` to `png` and `svg` (1000×650).
///
/// # Errors
/// No font is available, or a file cannot be written.
pub fn write(chart: &Chart, png: &Path, svg: &Path) -> Result<(), String> {
    font()?;
    draw(
        BitMapBackend::new(png, (1000, 650)).into_drawing_area(),
        chart,
    )
    .map_err(|e| format!("{}: {e}", png.display()))?;
    draw(SVGBackend::new(svg, (1000, 650)).into_drawing_area(), chart)
        .map_err(|e| format!("{}: {e}", svg.display()))?;
    Ok(())
}
