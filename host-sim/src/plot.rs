//! The regret plot, `regret.svg` and `regret.png` side by side, drawn by one function from a
//! run's results ([`write_plots`]) or from the `regret.csv` it wrote ([`replot`]), so the two
//! agree to the byte.
//!
//! Each learner is its mean cumulative regret with a light band of ± one standard error of that
//! mean over the trials (s.e. = sd/√trials; ± one sample standard deviation when the number of
//! trials is unknown, and the y-axis says which). Colours are the Okabe–Ito colour-blind-safe
//! palette (learners past the seventh are dashed in the same colours), bands are drawn first and
//! every line over them. Uniform play, the reference row of
//! [`with_uniform`](crate::results::with_uniform), is a grey dashed line without a band. The
//! legend stands beside the plot area, so it covers no curve.
//!
//! Text is drawn with DejaVu Sans embedded in the binary (`host-sim/assets/fonts`), so neither
//! backend needs a system font.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, register_font};

use crate::results::{AlgorithmResult, UNIFORM_LABEL};
use crate::settings::OutputError;

/// The plot's vector file, in a run's directory.
pub const SVG_FILE: &str = "regret.svg";
/// The plot's bitmap file, beside [`SVG_FILE`].
pub const PNG_FILE: &str = "regret.png";
/// The per-round table [`replot`] reads.
pub const CSV_FILE: &str = "regret.csv";
/// The run's record [`replot`] takes the title, the trials and the reference rows from.
pub const JSON_FILE: &str = "run.json";

/// The most rounds a plotted curve is drawn through: the plot is 900 pixels wide, so more
/// points add file size (an SVG of T = 10⁵ rounds was 24 MB) and nothing one can see.
pub const MAX_PLOTTED_ROUNDS: usize = 600;

/// How a regret plot is drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlotOptions {
    /// Both axes logarithmic (rounds from t = 1, regret from half the smallest positive mean).
    /// Points whose mean regret is zero, negative or not finite have no place on a log axis and
    /// are left out of the lines and bands; a band's lower edge is cut at the axis' bottom.
    pub log_log: bool,
}

/// The family every text of the plot is drawn in (the embedded font is registered under it).
const FAMILY: &str = "sans-serif";
/// DejaVu Sans, cut to the glyphs plot text uses (`host-sim/assets/fonts/README.md`).
const FONT: &[u8] = include_bytes!("../assets/fonts/DejaVuSans-subset.ttf");
/// Width and height of the plot area; the legend's column is added to the width.
const PLOT_SIZE: (u32, u32) = (900, 600);
/// Opacity of the error bands.
const BAND_ALPHA: f64 = 0.15;
/// Okabe & Ito's colour-blind-safe palette (black left out: it is the axes' colour), in the
/// order learners take it.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(240, 228, 66),  // yellow
];
/// Greys of the reference lines, in turn.
const GREYS: [RGBColor; 3] = [RGBColor(110, 110, 110), RGBColor(160, 160, 160), RGBColor(60, 60, 60)];

/// One curve as plotted: per-round mean cumulative regret and its standard deviation.
#[derive(Clone)]
struct Curve<'a> {
    label: &'a str,
    mean: &'a [f64],
    std: &'a [f64],
    /// Uniform play: grey, dashed, no band.
    reference: bool,
}

/// Everything a plot shows.
struct Figure<'a> {
    title: &'a str,
    curves: Vec<Curve<'a>>,
    /// Trials behind each mean (bands are ± 1 s.e. when known, ± 1 sd otherwise).
    trials: Option<usize>,
}

/// Writes `regret.svg` and `regret.png` into `dir` (which must exist) for `results` of
/// `trials` trials each, titled `title`; returns their paths.
pub fn write_plots(
    dir: &Path,
    title: &str,
    results: &[AlgorithmResult],
    trials: usize,
    options: &PlotOptions,
) -> Result<Vec<PathBuf>, OutputError> {
    let curves = results
        .iter()
        .map(|r| Curve { label: &r.label, mean: &r.mean, std: &r.std, reference: r.reference })
        .collect();
    let figure = Figure { title, curves, trials: Some(trials) };
    write_figure(dir, (SVG_FILE, PNG_FILE), &Regret { figure: &figure, options })
}

/// Redraws `regret.svg` and `regret.png` in `dir` from its `regret.csv` alone, as the run drew
/// them (byte for byte, with the same `options`); returns their paths.
///
/// `run.json`, when present, gives the title, the number of trials (for the standard errors)
/// and which rows are the uniform-play reference; without it the title is the directory's
/// name, bands are ± 1 sd and rows labelled `uniform play…` are the reference. A missing or
/// malformed file is an error naming the file, the line and what was wrong.
pub fn replot(dir: &Path, options: &PlotOptions) -> Result<Vec<PathBuf>, OutputError> {
    let table = read_regret_csv(&dir.join(CSV_FILE))?;
    let record = read_record(&dir.join(JSON_FILE))?;
    let fallback_title = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string());
    let title = record.as_ref().and_then(|r| r.title.clone()).unwrap_or(fallback_title);
    let curves = table
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let recorded = record.as_ref().and_then(|r| r.references.get(i)).filter(|(l, _)| *l == c.label);
            Curve {
                label: &c.label,
                mean: &c.mean,
                std: &c.std,
                reference: recorded.map_or(c.label.starts_with(UNIFORM_LABEL), |&(_, reference)| reference),
            }
        })
        .collect();
    let trials = record.and_then(|r| r.trials);
    let figure = Figure { title: &title, curves, trials };
    write_figure(dir, (SVG_FILE, PNG_FILE), &Regret { figure: &figure, options })
}

/// The rounds (0-based indices) a curve of `horizon` rounds is drawn through: evenly spaced,
/// at most [`MAX_PLOTTED_ROUNDS`], always the first and the last.
pub fn plotted_rounds(horizon: usize) -> Vec<usize> {
    if horizon <= MAX_PLOTTED_ROUNDS {
        return (0..horizon).collect();
    }
    let last = horizon - 1;
    let gaps = MAX_PLOTTED_ROUNDS - 1;
    (0..=gaps).map(|i| i * last / gaps).collect()
}

/// [`plotted_rounds`] for a log axis: every round while rounds are sparser than the log
/// spacing, then spaced evenly in log t, so the early rounds are drawn as finely as the late
/// ones; at most [`MAX_PLOTTED_ROUNDS`], always the first and the last.
fn log_plotted_rounds(horizon: usize) -> Vec<usize> {
    if horizon <= MAX_PLOTTED_ROUNDS {
        return (0..horizon).collect();
    }
    let span = (horizon as f64).ln();
    let gaps = (MAX_PLOTTED_ROUNDS - 1) as f64;
    let mut rounds: Vec<usize> = Vec::with_capacity(MAX_PLOTTED_ROUNDS);
    for i in 0..MAX_PLOTTED_ROUNDS {
        let spaced = ((span * i as f64 / gaps).exp().round() as usize).saturating_sub(1);
        let round = rounds.last().map_or(0, |&r| r + 1).max(spaced).min(horizon - 1);
        rounds.push(round);
        if round == horizon - 1 {
            break;
        }
    }
    rounds
}

fn register_embedded_font() -> Result<(), String> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    if *REGISTERED.get_or_init(|| register_font(FAMILY, FontStyle::Normal, FONT).is_ok()) {
        Ok(())
    } else {
        Err("the plot font built into host-sim could not be read (a bug: please report it)".to_string())
    }
}

/// A picture drawn the same way into the SVG and into the PNG's bitmap.
trait Drawing {
    /// Width and height in pixels.
    fn size(&self) -> (u32, u32);
    /// Draws it on `root`.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// The regret figure with its options.
struct Regret<'a> {
    figure: &'a Figure<'a>,
    options: &'a PlotOptions,
}

impl Drawing for Regret<'_> {
    fn size(&self) -> (u32, u32) {
        (PLOT_SIZE.0 + legend_width(self.figure), PLOT_SIZE.1)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        draw(root, self.figure, self.options)
    }
}

/// Writes `drawing` into `dir` as the SVG and PNG files `names`; returns their paths.
fn write_figure(
    dir: &Path,
    names: (&str, &str),
    drawing: &impl Drawing,
) -> Result<Vec<PathBuf>, OutputError> {
    let svg_path = dir.join(names.0);
    let png_path = dir.join(names.1);
    register_embedded_font().map_err(|m| OutputError::write(&svg_path, m))?;
    let size = drawing.size();

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        drawing.draw(&root).and_then(|()| root.present().map_err(text))
    }
    .map_err(|m| OutputError::write(&svg_path, m))?;
    crate::settings::write_whole(&svg_path, svg.as_bytes())?;

    // Drawn into memory and encoded here, so the file is written whole (or not at all) and a
    // failure is reported as the file system's, not the drawing library's.
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        drawing.draw(&root).and_then(|()| root.present().map_err(text))
    }
    .map_err(|m| OutputError::write(&png_path, m))?;
    let png = encode_png(&rgb, size).map_err(|e| OutputError::write(&png_path, e.to_string()))?;
    crate::settings::write_whole(&png_path, &png)?;
    Ok(vec![svg_path, png_path])
}

/// The actions a live run played, round by round (`host-sim live`): a dot per round at its
/// action, so one sees where the learner settles.
pub struct LivePlot<'a> {
    /// The title.
    pub title: &'a str,
    /// The action of each round, in order.
    pub actions: &'a [usize],
    /// Number of actions.
    pub count: usize,
}

impl Drawing for LivePlot<'_> {
    fn size(&self) -> (u32, u32) {
        PLOT_SIZE
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(text)?;
        let area = root.titled(self.title, (FAMILY, 18)).map_err(text)?;
        let rounds = self.actions.len().max(1) as f64;
        let top = self.count.max(2) as f64 - 0.5;
        let mut chart = ChartBuilder::on(&area)
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.5f64..rounds + 0.5, -0.5f64..top)
            .map_err(text)?;
        chart
            .configure_mesh()
            .x_desc("round")
            .y_desc("action played")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style((FAMILY, 13))
            .axis_desc_style((FAMILY, 14))
            .draw()
            .map_err(text)?;
        let colour = PALETTE[0];
        let dots = self
            .actions
            .iter()
            .enumerate()
            .map(|(i, &a)| Circle::new(((i + 1) as f64, a as f64), 2, colour.filled()));
        chart.draw_series(dots).map_err(text)?;
        Ok(())
    }
}

/// Writes `live.svg` and `live.png` into `dir`; returns their paths.
pub fn write_live_plot(dir: &Path, plot: &LivePlot) -> Result<Vec<PathBuf>, OutputError> {
    write_figure(dir, ("live.svg", "live.png"), plot)
}

/// An 8-bit RGB image as PNG bytes.
fn encode_png(rgb: &[u8], (width, height): (u32, u32)) -> Result<Vec<u8>, png::EncodingError> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header()?.write_image_data(rgb)?;
    Ok(bytes)
}

fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The legend's column: wide enough for the longest label, line sample and margins.
fn legend_width(figure: &Figure) -> u32 {
    let font = FontDesc::new(FontFamily::Name(FAMILY), 13.0, FontStyle::Normal);
    let widest = figure.curves.iter().filter_map(|c| font.box_size(c.label).ok()).map(|(w, _)| w).max();
    (widest.unwrap_or(0) + 70).clamp(140, 600)
}

/// Half-width of curve `c`'s band at round index `t`.
fn band(figure: &Figure, c: &Curve, t: usize) -> f64 {
    let sd = c.std.get(t).copied().unwrap_or(0.0);
    match figure.trials {
        Some(n) => sd / (n.max(1) as f64).sqrt(),
        None => sd,
    }
}

/// How learner curve number `i` (references not counted) is drawn: colour and dashed or not.
fn learner_style(i: usize) -> (RGBColor, bool) {
    (PALETTE[i % PALETTE.len()], (i / PALETTE.len()) % 2 == 1)
}

/// The curves in drawing order with their styles: learners first, then the references.
fn styled<'f>(figure: &'f Figure) -> Vec<(&'f Curve<'f>, RGBColor, bool)> {
    let learners = figure.curves.iter().filter(|c| !c.reference).enumerate().map(|(i, c)| {
        let (colour, dashed) = learner_style(i);
        (c, colour, dashed)
    });
    let references = figure
        .curves
        .iter()
        .filter(|c| c.reference)
        .enumerate()
        .map(|(i, c)| (c, GREYS[i % GREYS.len()], true));
    learners.chain(references).collect()
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    figure: &Figure,
    options: &PlotOptions,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(text)?;
    let area = root.titled(figure.title, (FAMILY, 18)).map_err(text)?;
    let (plot_area, legend_area) = area.split_horizontally(PLOT_SIZE.0);
    let horizon = figure.curves.iter().map(|c| c.mean.len()).max().unwrap_or(0);
    let finite = |c: &Curve, t: usize| {
        let (m, b) = (c.mean[t], band(figure, c, t));
        (m.is_finite() && b.is_finite()).then_some((m, b))
    };
    let mut builder = ChartBuilder::on(&plot_area);
    builder.margin(15).x_label_area_size(40).y_label_area_size(70);
    if options.log_log {
        let rounds = log_plotted_rounds(horizon);
        let positive = |c: &Curve, t: usize| finite(c, t).filter(|&(m, _)| m > 0.0);
        let points = || figure.curves.iter().flat_map(|c| rounds.iter().filter_map(move |&t| positive(c, t)));
        let lowest = points().map(|(m, _)| m).fold(f64::INFINITY, f64::min);
        let highest = points().map(|(m, b)| m + b).fold(0.0, f64::max);
        let (bottom, top) = if lowest.is_finite() { (lowest / 2.0, highest * 1.5) } else { (0.01, 1.0) };
        let x_axis = (1f64..(horizon as f64).max(2.0)).log_scale();
        let mut chart = builder.build_cartesian_2d(x_axis, (bottom..top).log_scale()).map_err(text)?;
        draw_curves(&mut chart, figure, &rounds, |c, t| {
            positive(c, t).map(|(m, b)| ((t + 1) as f64, m, (m - b).max(bottom), m + b))
        })
    } else {
        let rounds = plotted_rounds(horizon);
        let top = figure
            .curves
            .iter()
            .flat_map(|c| rounds.iter().filter_map(move |&t| finite(c, t)))
            .map(|(m, b)| m + b)
            .fold(1e-9_f64, f64::max);
        let mut chart = builder.build_cartesian_2d(0f64..horizon as f64, 0f64..top * 1.05).map_err(text)?;
        draw_curves(&mut chart, figure, &rounds, |c, t| {
            finite(c, t).map(|(m, b)| ((t + 1) as f64, m, (m - b).max(0.0), m + b))
        })
    }?;
    draw_legend(&legend_area, figure)
}

/// Mesh, bands, then lines over them. `point(curve, t)` is round index t's (x, mean, band low,
/// band high), `None` to leave the round out.
fn draw_curves<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    figure: &Figure,
    rounds: &[usize],
    point: impl Fn(&Curve, usize) -> Option<(f64, f64, f64, f64)>,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let spread = match figure.trials {
        Some(n) => format!("mean ± 1 s.e. over {n} trials"),
        None => "mean ± 1 sd".to_string(),
    };
    chart
        .configure_mesh()
        .x_desc("round t")
        .y_desc(format!("cumulative regret ({spread})"))
        .label_style((FAMILY, 13))
        .axis_desc_style((FAMILY, 15))
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(210, 210, 210))
        .draw()
        .map_err(text)?;
    let styled = styled(figure);
    for &(c, colour, _) in styled.iter().filter(|(c, ..)| !c.reference) {
        let points: Vec<_> = rounds.iter().filter_map(|&t| point(c, t)).collect();
        let outline = points.iter().map(|p| (p.0, p.3)).chain(points.iter().rev().map(|p| (p.0, p.2)));
        chart
            .draw_series(std::iter::once(Polygon::new(outline.collect::<Vec<_>>(), colour.mix(BAND_ALPHA))))
            .map_err(text)?;
    }
    for &(c, colour, dashed) in &styled {
        let line: Vec<(f64, f64)> = rounds.iter().filter_map(|&t| point(c, t)).map(|p| (p.0, p.1)).collect();
        if dashed {
            chart.draw_series(DashedLineSeries::new(line, 8, 5, colour.stroke_width(2))).map_err(text)?;
        } else {
            chart.draw_series(LineSeries::new(line, colour.stroke_width(2))).map_err(text)?;
        }
    }
    Ok(())
}

/// A tick label: whole numbers without decimals, very large or small ones as `2e5`, others
/// with at most three decimals.
fn tick(v: f64) -> String {
    let size = v.abs();
    if size != 0.0 && !(1e-3..1e6).contains(&size) {
        format!("{v:e}")
    } else if (v - v.round()).abs() < 1e-9 * size.max(1.0) {
        format!("{v:.0}")
    } else {
        format!("{v:.3}").trim_end_matches('0').to_string()
    }
}

/// The legend, in its own column right of the plot area: a band swatch and line sample per
/// learner, a dashed grey sample per reference, each followed by its label.
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, figure: &Figure) -> Result<(), String> {
    let label_style = TextStyle::from((FAMILY, 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (row, &(c, colour, dashed)) in styled(figure).iter().enumerate() {
        let y = 30 + 22 * row as i32;
        let sample = [(4, y), (36, y)];
        if !c.reference {
            area.draw(&Rectangle::new([(4, y - 6), (36, y + 6)], colour.mix(BAND_ALPHA).filled()))
                .map_err(text)?;
        }
        if dashed {
            area.draw(&DashedPathElement::new(sample, 8, 5, colour.stroke_width(2))).map_err(text)?;
        } else {
            area.draw(&PathElement::new(sample, colour.stroke_width(2))).map_err(text)?;
        }
        area.draw(&Text::new(c.label, (44, y), label_style.clone())).map_err(text)?;
    }
    Ok(())
}

/// One learner's columns of `regret.csv`.
struct Column {
    label: String,
    mean: Vec<f64>,
    std: Vec<f64>,
}

/// `regret.csv` read back.
struct RegretTable {
    columns: Vec<Column>,
}

/// What `run.json` tells a redrawn plot.
struct Record {
    title: Option<String>,
    trials: Option<usize>,
    /// Each result row's label and whether it is the uniform-play reference, in order.
    references: Vec<(String, bool)>,
}

/// What a `regret.csv` looks like, for error messages.
const CSV_SHAPE: &str = "a header `t,<learner>_mean,<learner>_std,...` and one line per round";
/// What to do about a malformed file.
const FIX: &str = "fix the file, or rerun the experiment to write it again";

fn read_regret_csv(path: &Path) -> Result<RegretTable, OutputError> {
    let text = fs::read_to_string(path).map_err(|e| {
        let why = if e.kind() == std::io::ErrorKind::NotFound {
            "there is no such file: give the directory a run wrote its results into (with regret.csv)"
                .to_string()
        } else {
            e.to_string()
        };
        OutputError::read(path, why)
    })?;
    let bad = |line: usize, what: String| OutputError::read(path, format!("line {line}: {what} ({FIX})"));
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
    let Some((_, header)) = lines.next().filter(|(_, l)| !l.trim().is_empty()) else {
        return Err(OutputError::read(path, format!("the file is empty; expected {CSV_SHAPE} ({FIX})")));
    };
    let names: Vec<&str> = header.split(',').collect();
    if names.first() != Some(&"t") || names.len() < 3 || names.len().is_multiple_of(2) {
        return Err(bad(1, format!("expected {CSV_SHAPE}, found `{header}`")));
    }
    let mut columns = Vec::new();
    for (k, pair) in names[1..].chunks(2).enumerate() {
        let label = pair[0].strip_suffix("_mean").filter(|l| pair[1].strip_suffix("_std") == Some(*l));
        let Some(label) = label else {
            return Err(bad(
                1,
                format!(
                    "columns {} and {} should be `<learner>_mean,<learner>_std`, found `{},{}`",
                    2 * k + 2,
                    2 * k + 3,
                    pair[0],
                    pair[1]
                ),
            ));
        };
        columns.push(Column { label: label.to_string(), mean: Vec::new(), std: Vec::new() });
    }
    let mut rounds = 0;
    for (line, row) in lines {
        if row.trim().is_empty() {
            continue;
        }
        let cells: Vec<&str> = row.split(',').collect();
        if cells.len() != names.len() {
            return Err(bad(
                line,
                format!("{} values, but the header names {} columns", cells.len(), names.len()),
            ));
        }
        if cells[0].trim().parse::<usize>().ok() != Some(rounds + 1) {
            return Err(bad(line, format!("column t: expected round {}, found `{}`", rounds + 1, cells[0])));
        }
        rounds += 1;
        for (j, cell) in cells.iter().enumerate().skip(1) {
            let value = cell.trim().parse::<f64>().map_err(|_| {
                bad(line, format!("column {} ({}): `{cell}` is not a number", j + 1, names[j]))
            })?;
            let column = &mut columns[(j - 1) / 2];
            if j % 2 == 1 { column.mean.push(value) } else { column.std.push(value) }
        }
    }
    if rounds == 0 {
        return Err(bad(2, format!("no rounds after the header; expected {CSV_SHAPE}")));
    }
    Ok(RegretTable { columns })
}

/// Reads `run.json` (`None` when there is none).
fn read_record(path: &Path) -> Result<Option<Record>, OutputError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(OutputError::read(path, e.to_string())),
    };
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        OutputError::read(
            path,
            format!("not valid JSON: {e}; fix the file, or move it away to redraw without it"),
        )
    })?;
    let title = match (json["experiment"].as_str(), json["description"].as_str()) {
        (Some(experiment), Some(description)) => Some(format!("{experiment}: {description}")),
        _ => None,
    };
    let trials = json["config"]["trials"].as_u64().and_then(|n| usize::try_from(n).ok());
    let references = json["results"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    (
                        r["label"].as_str().unwrap_or_default().to_string(),
                        r["reference"].as_bool().unwrap_or(false),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(Record { title, trials, references }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plotted_rounds_are_at_most_the_cap_evenly_spread_first_and_last_kept() {
        assert_eq!(plotted_rounds(0), Vec::<usize>::new());
        assert_eq!(plotted_rounds(3), vec![0, 1, 2]);
        assert_eq!(plotted_rounds(MAX_PLOTTED_ROUNDS).len(), MAX_PLOTTED_ROUNDS);
        for horizon in [MAX_PLOTTED_ROUNDS + 1, 1000, 100_000] {
            let r = plotted_rounds(horizon);
            assert_eq!(r.len(), MAX_PLOTTED_ROUNDS);
            assert_eq!((r[0], r[r.len() - 1]), (0, horizon - 1));
            assert!(r.windows(2).all(|w| w[0] < w[1]), "increasing at T = {horizon}");
            let widest = r.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
            assert!(widest <= horizon.div_ceil(MAX_PLOTTED_ROUNDS - 1), "gap {widest} at T = {horizon}");
        }
    }

    #[test]
    fn log_plotted_rounds_keep_every_early_round_and_the_last() {
        assert_eq!(log_plotted_rounds(3), vec![0, 1, 2]);
        for horizon in [MAX_PLOTTED_ROUNDS + 1, 1000, 100_000] {
            let r = log_plotted_rounds(horizon);
            assert!(r.len() <= MAX_PLOTTED_ROUNDS, "{} at T = {horizon}", r.len());
            assert_eq!((r[0], r[r.len() - 1]), (0, horizon - 1));
            assert!(r.windows(2).all(|w| w[0] < w[1]), "increasing at T = {horizon}");
            assert_eq!(&r[..10], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], "t = 1..10 all drawn at T = {horizon}");
        }
    }

    #[test]
    fn tick_labels_are_short() {
        let labels: Vec<String> = [0.0, 1.0, 10.0, 250.0, 0.5, 0.125, 2.5, 1e6, 2e-4, -3.0].map(tick).into();
        assert_eq!(labels, ["0", "1", "10", "250", "0.5", "0.125", "2.5", "1e6", "2e-4", "-3"]);
    }

    #[test]
    fn curves_without_a_positive_or_finite_point_draw_on_either_axes() {
        let dir = std::env::temp_dir().join(format!("host-sim-plot-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let zeros = [0.0; 5];
        let odd = [f64::NAN, -1.0, f64::INFINITY, 0.0, 2.0];
        let curves = |reference| {
            vec![
                Curve { label: "zero", mean: &zeros, std: &zeros, reference },
                Curve { label: "odd", mean: &odd, std: &odd, reference: false },
            ]
        };
        for log_log in [false, true] {
            for reference in [false, true] {
                let figure = Figure { title: "t", curves: curves(reference), trials: Some(1) };
                let options = PlotOptions { log_log };
                let files =
                    write_figure(&dir, (SVG_FILE, PNG_FILE), &Regret { figure: &figure, options: &options })
                        .unwrap();
                let svg = std::fs::read_to_string(&files[0]).unwrap();
                assert!(!svg.contains("NaN") && !svg.contains("inf"), "log_log {log_log}");
            }
        }
        let only_zeros = Figure { title: "t", curves: curves(true)[..1].to_vec(), trials: None };
        let options = PlotOptions { log_log: true };
        write_figure(&dir, (SVG_FILE, PNG_FILE), &Regret { figure: &only_zeros, options: &options }).unwrap();
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_embedded_font_registers() {
        assert_eq!(register_embedded_font(), Ok(()));
        assert_eq!(register_embedded_font(), Ok(()), "twice is fine");
    }
}
