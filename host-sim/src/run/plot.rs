//! The regret plot, `regret.svg` and `regret.png` side by side, drawn by one function from a
//! run's results ([`write_plots`]) or from the `regret.csv` it wrote ([`replot`]), so the two
//! agree to the byte.
//!
//! Each learner is its mean cumulative regret with a light band of ± one standard error of that
//! mean over the trials (s.e. = sd/√trials; ± one sample standard deviation when the number of
//! trials is unknown, and the y-axis says which). Colours are the Okabe–Ito colour-blind-safe
//! palette (learners past the seventh are dashed in the same colours), bands are drawn first and
//! every line over them. Uniform play, the reference row of
//! [`with_uniform`](crate::run::results::with_uniform), is a grey dashed line without a band. The
//! legend stands beside the plot area, so it covers no curve. The regret axis is logarithmic
//! when the curves' final values span more than a decade (uniform play far above the learners
//! would flatten them on a linear axis), from a decade below the lowest final value.
//!
//! Text is drawn with DejaVu Sans embedded in the binary (`host-sim/assets/fonts`), so neither
//! backend needs a system font.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, register_font};

use crate::run::results::{AlgorithmResult, UNIFORM_LABEL};
use crate::run::settings::OutputError;

/// The plot's vector file, in a run's directory.
pub const SVG_FILE: &str = "regret.svg";
/// The plot's bitmap file, beside [`SVG_FILE`].
pub const PNG_FILE: &str = "regret.png";
/// The stem of the regret-versus-ε figure of an ε sweep (`regret_vs_eps.svg`, `.png`).
pub const VS_EPS_STEM: &str = "regret_vs_eps";
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
const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-subset.ttf");
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
    write_regret_figures(&Targets::in_dir(dir), &figure, options)
}

/// Redraws `regret.svg` and `regret.png` in `dir` from its `regret.csv` alone, as the run drew
/// them (byte for byte, with the same `options`); returns their paths.
///
/// `run.json`, when present, gives the title, the number of trials (for the standard errors)
/// and which rows are the uniform-play reference; without it the title is the directory's
/// name, bands are ± 1 sd and rows labelled `uniform play…` are the reference. A missing or
/// malformed file is an error naming the file, the line and what was wrong.
pub fn replot(dir: &Path, options: &PlotOptions) -> Result<Vec<PathBuf>, OutputError> {
    replot_to(dir, options, None, None)
}

/// [`replot`], drawn into `out` instead of the run's own files when given (a name ending in
/// `.svg` or `.png` writes that file only, a name without an extension both; a regret-versus-ε
/// figure goes beside it as `<stem>_vs_eps.<ext>`), titled `title` when given. A file name
/// with another extension is refused, naming it.
pub fn replot_to(
    dir: &Path,
    options: &PlotOptions,
    out: Option<&Path>,
    title: Option<&str>,
) -> Result<Vec<PathBuf>, OutputError> {
    let targets = match out {
        Some(file) => {
            if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
                fs::create_dir_all(parent).map_err(|e| OutputError::write(parent, e.to_string()))?;
            }
            Targets::file(file)?
        }
        None => Targets::in_dir(dir),
    };
    let table = read_regret_csv(&dir.join(CSV_FILE))?;
    let record = read_record(&dir.join(JSON_FILE))?;
    let fallback_title = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string());
    let title = title
        .map(str::to_string)
        .or_else(|| record.as_ref().and_then(|r| r.title.clone()))
        .unwrap_or(fallback_title);
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
    write_regret_figures(&targets, &figure, options)
}

/// Where the figures of a run go: the regret figure's SVG and PNG (either may be left out)
/// and the stem of the regret-versus-ε figure's files beside them.
struct Targets {
    svg: Option<PathBuf>,
    png: Option<PathBuf>,
    /// `<dir>/regret_vs_eps` for a run's directory.
    vs_eps: PathBuf,
}

impl Targets {
    /// A run's own files: `regret.svg`, `regret.png` and `regret_vs_eps.*` in `dir`.
    fn in_dir(dir: &Path) -> Self {
        Self { svg: Some(dir.join(SVG_FILE)), png: Some(dir.join(PNG_FILE)), vs_eps: dir.join(VS_EPS_STEM) }
    }

    /// `plot --out FILE`.
    fn file(file: &Path) -> Result<Self, OutputError> {
        let extension = file.extension().map(|e| e.to_string_lossy().to_lowercase());
        let stem = file.with_extension("");
        let name = stem.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.is_empty() {
            return Err(OutputError::write(file, "give --out a file name, e.g. fig1.svg".to_string()));
        }
        let vs_eps = stem.with_file_name(format!("{name}_vs_eps"));
        match extension.as_deref() {
            None => Ok(Self {
                svg: Some(stem.with_extension("svg")),
                png: Some(stem.with_extension("png")),
                vs_eps,
            }),
            Some("svg") => Ok(Self { svg: Some(file.to_path_buf()), png: None, vs_eps }),
            Some("png") => Ok(Self { svg: None, png: Some(file.to_path_buf()), vs_eps }),
            Some(other) => Err(OutputError::write(
                file,
                format!(
                    "plots are written as .svg or .png, not .{other}: end --out in .svg or .png, or leave the extension off for both"
                ),
            )),
        }
    }
}

/// Writes the regret figure (one panel per setting for a sweep) and, for an ε sweep, the
/// regret-versus-ε figure; returns the paths written.
fn write_regret_figures(
    targets: &Targets,
    figure: &Figure,
    options: &PlotOptions,
) -> Result<Vec<PathBuf>, OutputError> {
    let sweep = Sweep::of(figure);
    let mut files = match &sweep {
        Some(sweep) => write_figure_files(
            targets.svg.as_deref(),
            targets.png.as_deref(),
            &Panels { figure, sweep, options },
        )?,
        None => {
            write_figure_files(targets.svg.as_deref(), targets.png.as_deref(), &Regret { figure, options })?
        }
    };
    if let Some(vs) = sweep.as_ref().and_then(|s| VsEpsilon::of(figure, s)) {
        let with = |on: bool, ext: &str| on.then(|| targets.vs_eps.with_extension(ext));
        let (svg, png) = (with(targets.svg.is_some(), "svg"), with(targets.png.is_some(), "png"));
        files.extend(write_figure_files(svg.as_deref(), png.as_deref(), &vs)?);
    }
    Ok(files)
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
    write_figure_files(Some(&dir.join(names.0)), Some(&dir.join(names.1)), drawing)
}

/// Writes `drawing` as the SVG file `svg_path` and the PNG file `png_path` (each if given);
/// returns the paths written.
fn write_figure_files(
    svg_path: Option<&Path>,
    png_path: Option<&Path>,
    drawing: &impl Drawing,
) -> Result<Vec<PathBuf>, OutputError> {
    let mut written = Vec::new();
    // Before the size: the legend's width is measured in the embedded font.
    if let Some(first) = svg_path.or(png_path) {
        register_embedded_font().map_err(|m| OutputError::write(first, m))?;
    }
    let size = drawing.size();
    if let Some(svg_path) = svg_path {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            drawing.draw(&root).and_then(|()| root.present().map_err(text))
        }
        .map_err(|m| OutputError::write(svg_path, m))?;
        crate::run::files::write_whole(svg_path, svg.as_bytes())?;
        written.push(svg_path.to_path_buf());
    }
    if let Some(png_path) = png_path {
        // Drawn into memory and encoded here, so the file is written whole (or not at all) and
        // a failure is reported as the file system's, not the drawing library's.
        let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
            drawing.draw(&root).and_then(|()| root.present().map_err(text))
        }
        .map_err(|m| OutputError::write(png_path, m))?;
        let png = encode_png(&rgb, size).map_err(|e| OutputError::write(png_path, e.to_string()))?;
        crate::run::files::write_whole(png_path, &png)?;
        written.push(png_path.to_path_buf());
    }
    Ok(written)
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
        let area = root.titled(self.title, (FAMILY, title_size(root, self.title))).map_err(text)?;
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
    labels_width(figure.curves.iter().map(|c| c.label))
}

/// [`legend_width`] for these labels.
fn labels_width<'a>(labels: impl Iterator<Item = &'a str>) -> u32 {
    let font = FontDesc::new(FontFamily::Name(FAMILY), 13.0, FontStyle::Normal);
    let widest = labels.filter_map(|l| font.box_size(l).ok()).map(|(w, _)| w).max();
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

/// A line's dash: `None` solid, `Some((dash, gap))` in pixels.
type Dash = Option<(u32, u32)>;
/// The dash of the reference lines and of learners past the palette.
const DASHED: Dash = Some((8, 5));
/// The dashes of a sweep's budgets, smallest budget first (a learner without a budget is
/// solid): dotted, short, long, dash-dot-like.
const BUDGET_DASHES: [(u32, u32); 5] = [(2, 4), (6, 4), (12, 4), (20, 5), (3, 9)];

/// A curve with the colour and dash it is drawn in.
type Styled<'f> = (&'f Curve<'f>, RGBColor, Dash);

/// How learner curve number `i` (references not counted) is drawn: colour and dashed or not.
fn learner_style(i: usize) -> (RGBColor, Dash) {
    (PALETTE[i % PALETTE.len()], if (i / PALETTE.len()) % 2 == 1 { DASHED } else { None })
}

/// The curves in drawing order with their styles: learners first, then the references.
fn styled<'f>(figure: &'f Figure) -> Vec<Styled<'f>> {
    let learners = figure.curves.iter().filter(|c| !c.reference).enumerate().map(|(i, c)| {
        let (colour, dash) = learner_style(i);
        (c, colour, dash)
    });
    let references = figure
        .curves
        .iter()
        .filter(|c| c.reference)
        .enumerate()
        .map(|(i, c)| (c, GREYS[i % GREYS.len()], DASHED));
    learners.chain(references).collect()
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    figure: &Figure,
    options: &PlotOptions,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(text)?;
    let area = root.titled(figure.title, (FAMILY, title_size(root, figure.title))).map_err(text)?;
    let (plot_area, legend_area) = area.split_horizontally(PLOT_SIZE.0);
    let styles = styled(figure);
    draw_panel(&plot_area, figure, &styles, options)?;
    draw_legend(&legend_area, &styles)
}

/// One chart of regret curves on `plot_area`: the curves of `styles`, bands ± 1 s.e.
fn draw_panel<DB: DrawingBackend>(
    plot_area: &DrawingArea<DB, Shift>,
    figure: &Figure,
    styles: &[Styled],
    options: &PlotOptions,
) -> Result<(), String> {
    let curves = || styles.iter().map(|&(c, ..)| c);
    let horizon = curves().map(|c| c.mean.len()).max().unwrap_or(0);
    let finite = |c: &Curve, t: usize| {
        let (m, b) = (c.mean[t], band(figure, c, t));
        (m.is_finite() && b.is_finite()).then_some((m, b))
    };
    let mut builder = ChartBuilder::on(plot_area);
    builder.margin(15).x_label_area_size(40).y_label_area_size(70);
    if options.log_log || spans_a_decade(styles) {
        // Log-log, or a log regret axis over linear rounds where the final values span more
        // than a decade (uniform play far above the learners would flatten them): the
        // learners' curves from a decade below the lowest final value.
        let rounds = if options.log_log { log_plotted_rounds(horizon) } else { plotted_rounds(horizon) };
        let floor = if options.log_log { 0.0 } else { lowest_final(styles) / 10.0 };
        let positive = |c: &Curve, t: usize| finite(c, t).filter(|&(m, _)| m > 0.0 && m > floor);
        let points = || curves().flat_map(|c| rounds.iter().filter_map(move |&t| positive(c, t)));
        let lowest = points().map(|(m, _)| m).fold(f64::INFINITY, f64::min);
        let highest = points().map(|(m, b)| m + b).fold(0.0, f64::max);
        let (bottom, top) = if lowest.is_finite() { (lowest / 2.0, highest * 1.5) } else { (0.01, 1.0) };
        let point = |c: &Curve, t: usize| {
            positive(c, t).map(|(m, b)| ((t + 1) as f64, m, (m - b).max(bottom), m + b))
        };
        if options.log_log {
            let x_axis = (1f64..(horizon as f64).max(2.0)).log_scale();
            let mut chart = builder.build_cartesian_2d(x_axis, (bottom..top).log_scale()).map_err(text)?;
            draw_curves(&mut chart, figure, styles, &rounds, point)
        } else {
            let x_axis = 0f64..horizon as f64;
            let mut chart = builder.build_cartesian_2d(x_axis, (bottom..top).log_scale()).map_err(text)?;
            draw_curves(&mut chart, figure, styles, &rounds, point)
        }
    } else {
        let rounds = plotted_rounds(horizon);
        let top = curves()
            .flat_map(|c| rounds.iter().filter_map(move |&t| finite(c, t)))
            .map(|(m, b)| m + b)
            .fold(1e-9_f64, f64::max);
        let mut chart = builder.build_cartesian_2d(0f64..horizon as f64, 0f64..top * 1.05).map_err(text)?;
        draw_curves(&mut chart, figure, styles, &rounds, |c, t| {
            finite(c, t).map(|(m, b)| ((t + 1) as f64, m, (m - b).max(0.0), m + b))
        })
    }
}

/// The curves' final mean values, each the last finite one.
fn finals<'f>(styles: &'f [Styled]) -> impl Iterator<Item = f64> + Clone + 'f {
    styles.iter().filter_map(|(c, ..)| c.mean.iter().rev().copied().find(|m| m.is_finite()))
}

/// Whether the curves' final values are all positive and span more than a decade: then the
/// regret axis is logarithmic.
fn spans_a_decade(styles: &[Styled]) -> bool {
    a_decade_apart(finals(styles))
}

/// Whether `values` are all positive and the largest is more than ten times the smallest.
fn a_decade_apart(values: impl Iterator<Item = f64> + Clone) -> bool {
    let lowest = values.clone().fold(f64::INFINITY, f64::min);
    lowest > 0.0 && values.fold(0.0, f64::max) > 10.0 * lowest
}

/// The smallest final value of the curves (infinite without curves).
fn lowest_final(styles: &[Styled]) -> f64 {
    finals(styles).fold(f64::INFINITY, f64::min)
}

/// Mesh, bands, then lines over them. `point(curve, t)` is round index t's (x, mean, band low,
/// band high), `None` to leave the round out.
fn draw_curves<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    figure: &Figure,
    styled: &[Styled],
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
    for &(c, colour, _) in styled.iter().filter(|(c, ..)| !c.reference) {
        let points: Vec<_> = rounds.iter().filter_map(|&t| point(c, t)).collect();
        let outline = points.iter().map(|p| (p.0, p.3)).chain(points.iter().rev().map(|p| (p.0, p.2)));
        chart
            .draw_series(std::iter::once(Polygon::new(outline.collect::<Vec<_>>(), colour.mix(BAND_ALPHA))))
            .map_err(text)?;
    }
    for &(c, colour, dash) in styled {
        let line: Vec<(f64, f64)> = rounds.iter().filter_map(|&t| point(c, t)).map(|p| (p.0, p.1)).collect();
        if let Some((size, gap)) = dash {
            chart
                .draw_series(DashedLineSeries::new(line, size, gap, colour.stroke_width(2)))
                .map_err(text)?;
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
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, styles: &[Styled]) -> Result<(), String> {
    let entries: Vec<Entry> =
        styles.iter().map(|&(c, colour, dash)| (c.label, colour, dash, !c.reference)).collect();
    draw_entries(area, &entries)
}

/// A legend row: label, colour, dash and whether it has a band swatch.
type Entry<'a> = (&'a str, RGBColor, Dash, bool);

/// [`draw_legend`] for any rows.
fn draw_entries<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[Entry]) -> Result<(), String> {
    let label_style = TextStyle::from((FAMILY, 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (row, &(label, colour, dash, band)) in entries.iter().enumerate() {
        let y = 30 + 22 * row as i32;
        let sample = [(4, y), (36, y)];
        if band {
            area.draw(&Rectangle::new([(4, y - 6), (36, y + 6)], colour.mix(BAND_ALPHA).filled()))
                .map_err(text)?;
        }
        if let Some((size, gap)) = dash {
            area.draw(&DashedPathElement::new(sample, size, gap, colour.stroke_width(2))).map_err(text)?;
        } else {
            area.draw(&PathElement::new(sample, colour.stroke_width(2))).map_err(text)?;
        }
        area.draw(&Text::new(label, (44, y), label_style.clone())).map_err(text)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Sweeps: one panel per setting, a colour per learner and budget, a dash per budget.

/// The budget keys of a sweep's labels (`eps=0.5`; Dubey's `alpha=1`, `beta=0.1`).
const BUDGET_KEYS: [&str; 3] = ["eps", "alpha", "beta"];
/// The budget keys that are an ε (Dubey's α is its ε): a sweep over one of them also gets
/// the regret-versus-ε figure.
const EPSILON_KEYS: [&str; 2] = ["eps", "alpha"];
/// Size of one panel of a sweep.
const PANEL_SIZE: (u32, u32) = (620, 440);
/// Room added to a sweep legend's column (the measured text width runs short of the drawn one).
const SWEEP_LEGEND_EXTRA: u32 = 30;
/// The font size of a figure's title: 18, or smaller so that a long title (a variant's key
/// and constants added to its experiment's description) fits the figure's width with 10 pixels
/// either side instead of running off both edges.
fn title_size<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> f64 {
    let width = root.dim_in_pixel().0;
    match root.estimate_text_size(title, &TextStyle::from((FAMILY, 18.0).into_font())) {
        Ok((w, _)) if w + 20 > width => (18.0 * f64::from(width.saturating_sub(20)) / f64::from(w)).max(9.0),
        _ => 18.0,
    }
}

/// Height of a figure's title line.
const TITLE_HEIGHT: u32 = 40;

/// A learner's label read as a sweep's: `[setting] learner [key=value]…`, e.g.
/// `DP-RSE v=0.5 eps=1` (learner `DP-RSE`, setting `v=0.5`, budget ε = 1) or
/// `camel JDP alpha=10` (setting `camel`, one of the environments named by the reference rows
/// `uniform play camel`, …).
#[derive(Clone, Debug, PartialEq)]
struct SweepLabel {
    /// The learner without setting and budget.
    learner: String,
    /// The budget's key and value.
    budget: Option<(String, f64)>,
    /// The setting (`v=0.5`, `camel`; empty when the run has one).
    setting: String,
}

impl SweepLabel {
    fn parse(label: &str, envs: &[&str]) -> Self {
        let (mut learner, mut setting, mut budget) = (Vec::new(), Vec::new(), None);
        for token in label.split_whitespace() {
            match token.split_once('=') {
                Some((key, value)) if BUDGET_KEYS.contains(&key) && value.parse::<f64>().is_ok() => {
                    budget = value.parse::<f64>().ok().map(|v| (key.to_string(), v));
                }
                Some(_) => setting.push(token),
                None if envs.contains(&token) => setting.push(token),
                None => learner.push(token),
            }
        }
        Self { learner: learner.join(" "), budget, setting: setting.join(" ") }
    }

    /// The learner and budget, as the legend names them (`DP-RSE eps=1`).
    fn key(&self) -> String {
        match &self.budget {
            Some((key, value)) => format!("{} {} = {value}", self.learner, budget_symbol(key)),
            None => self.learner.clone(),
        }
    }
}

/// A setting's name as a panel title: `v=0.5` → `v = 0.5`.
fn setting_title(setting: &str) -> String {
    setting.replace('=', " = ")
}

/// The greek letter of a budget key.
fn budget_symbol(key: &str) -> &str {
    match key {
        "eps" => "ε",
        "alpha" => "α",
        "beta" => "β",
        other => other,
    }
}

/// A sweep figure's layout: panels, each with its curves styled, and one legend.
struct Sweep<'f> {
    /// Each setting's title (empty for a run with one) and curves, learners then references.
    panels: Vec<(String, Vec<Styled<'f>>)>,
    /// One row per learner-and-budget, then one for uniform play.
    legend: Vec<(String, RGBColor, Dash, bool)>,
    /// The parsed label of every learner curve, by curve index.
    labels: Vec<Option<SweepLabel>>,
}

impl<'f> Sweep<'f> {
    /// The layout of `figure`, or `None` if it is not a sweep (no learner label carries a
    /// budget and there is one setting): it is then drawn as one plot.
    fn of(figure: &'f Figure<'f>) -> Option<Self> {
        let env_of = |c: &Curve| c.label.strip_prefix(UNIFORM_LABEL).map(str::trim).unwrap_or("").to_string();
        let envs: Vec<String> =
            figure.curves.iter().filter(|c| c.reference).map(env_of).filter(|e| !e.is_empty()).collect();
        let env_refs: Vec<&str> = envs.iter().map(String::as_str).collect();
        let labels: Vec<Option<SweepLabel>> = figure
            .curves
            .iter()
            .map(|c| (!c.reference).then(|| SweepLabel::parse(c.label, &env_refs)))
            .collect();
        let parsed = || labels.iter().flatten();
        let mut settings: Vec<&str> = Vec::new();
        for l in parsed() {
            if !settings.contains(&l.setting.as_str()) {
                settings.push(&l.setting);
            }
        }
        if settings.len() < 2 && parsed().all(|l| l.budget.is_none()) {
            return None;
        }
        // A colour per learner-and-budget (the same in every panel), a dash per budget value.
        let mut keys: Vec<String> = Vec::new();
        let mut budgets: Vec<f64> = Vec::new();
        for l in parsed() {
            if !keys.contains(&l.key()) {
                keys.push(l.key());
            }
            if let Some((_, v)) = l.budget
                && !budgets.contains(&v)
            {
                budgets.push(v);
            }
        }
        budgets.sort_by(f64::total_cmp);
        let dash = |l: &SweepLabel| {
            let i = l
                .budget
                .as_ref()
                .and_then(|(_, v)| budgets.iter().position(|b| b.to_bits() == v.to_bits()))?;
            Some(BUDGET_DASHES[i % BUDGET_DASHES.len()])
        };
        let colour = |key: &str| PALETTE[keys.iter().position(|k| k == key).unwrap_or(0) % PALETTE.len()];
        let mut legend: Vec<(String, RGBColor, Dash, bool)> = Vec::new();
        for l in parsed() {
            if !legend.iter().any(|(k, ..)| *k == l.key()) {
                legend.push((l.key(), colour(&l.key()), dash(l), true));
            }
        }
        if figure.curves.iter().any(|c| c.reference) {
            legend.push((UNIFORM_LABEL.to_string(), GREYS[0], DASHED, false));
        }
        let panels = settings
            .iter()
            .map(|&setting| {
                let mut styled: Vec<Styled<'f>> = Vec::new();
                for (c, l) in figure.curves.iter().zip(&labels) {
                    if let Some(l) = l.as_ref().filter(|l| l.setting == setting) {
                        styled.push((c, colour(&l.key()), dash(l)));
                    }
                }
                // Uniform play of this setting's environment, or the run's only one.
                let tokens: Vec<&str> = setting.split_whitespace().collect();
                for c in figure.curves.iter().filter(|c| c.reference) {
                    let env = env_of(c);
                    if env.is_empty() || tokens.contains(&env.as_str()) {
                        styled.push((c, GREYS[0], DASHED));
                    }
                }
                (setting_title(setting), styled)
            })
            .collect();
        Some(Self { panels, legend, labels })
    }

    /// Rows and columns of the panel grid: up to three side by side.
    fn grid(&self) -> (u32, u32) {
        grid_of(self.panels.len())
    }

    fn legend_entries(&self) -> Vec<Entry<'_>> {
        self.legend.iter().map(|(l, c, d, b)| (l.as_str(), *c, *d, *b)).collect()
    }
}

/// The regret curves of a sweep, a panel per setting.
struct Panels<'a> {
    figure: &'a Figure<'a>,
    sweep: &'a Sweep<'a>,
    options: &'a PlotOptions,
}

impl Drawing for Panels<'_> {
    fn size(&self) -> (u32, u32) {
        let (rows, columns) = self.sweep.grid();
        let panel = panel_size((rows, columns));
        let legend = labels_width(self.sweep.legend.iter().map(|(l, ..)| l.as_str())) + SWEEP_LEGEND_EXTRA;
        (columns * panel.0 + legend, rows * panel.1 + TITLE_HEIGHT)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(text)?;
        let area =
            root.titled(self.figure.title, (FAMILY, title_size(root, self.figure.title))).map_err(text)?;
        let (rows, columns) = self.sweep.grid();
        let (grid, legend) = area.split_horizontally(columns * panel_size((rows, columns)).0);
        let cells = grid.split_evenly((rows as usize, columns as usize));
        for ((title, styles), cell) in self.sweep.panels.iter().zip(&cells) {
            if title.is_empty() {
                draw_panel(cell, self.figure, styles, self.options)?;
            } else {
                let inner = cell.titled(title, (FAMILY, 15)).map_err(text)?;
                draw_panel(&inner, self.figure, styles, self.options)?;
            }
        }
        draw_entries(&legend, &self.sweep.legend_entries())
    }
}

/// One learner's final regret against the budget in a panel of the regret-versus-ε figure.
struct Series {
    label: String,
    colour: RGBColor,
    /// (budget, mean, half-width of the ± 1 s.e. bar), by increasing budget; one point with
    /// budget `None` for a learner without one (drawn across as a level line).
    points: Vec<(Option<f64>, f64, f64)>,
    reference: bool,
}

/// Final regret against ε, a panel per setting, for a sweep over ε (or Dubey's α): each
/// private learner a line through its budgets with ± 1 s.e. bars, each learner without a
/// budget (non-private, or a learner the sweep does not privatise) and uniform play a level
/// line.
struct VsEpsilon<'a> {
    title: String,
    symbol: &'a str,
    /// Each setting's title and series.
    panels: Vec<(String, Vec<Series>)>,
    legend: Vec<(String, RGBColor, Dash, bool)>,
    trials: Option<usize>,
    horizon: usize,
    /// The sweep's budgets, increasing: the x axis has one place per budget.
    budgets: Vec<f64>,
}

impl<'a> VsEpsilon<'a> {
    /// The figure of `sweep`, or `None` unless its labels carry at least two values of one ε key.
    fn of(figure: &'a Figure<'a>, sweep: &'a Sweep<'a>) -> Option<Self> {
        let parsed = || sweep.labels.iter().flatten();
        let key = EPSILON_KEYS.into_iter().find(|k| {
            let mut values: Vec<f64> = parsed()
                .filter_map(|l| l.budget.as_ref().filter(|(bk, _)| bk == k).map(|(_, v)| *v))
                .collect();
            values.sort_by(f64::total_cmp);
            values.dedup();
            values.len() >= 2
        })?;
        let horizon = figure.curves.iter().map(|c| c.mean.len()).max().unwrap_or(0);
        let last = |c: &Curve| {
            let t = c.mean.len().checked_sub(1)?;
            let (m, b) = (c.mean[t], band(figure, c, t));
            (m.is_finite() && b.is_finite()).then_some((m, b))
        };
        let mut learners: Vec<String> = Vec::new();
        for l in parsed() {
            if !learners.contains(&l.learner) {
                learners.push(l.learner.clone());
            }
        }
        let colour =
            |name: &str| PALETTE[learners.iter().position(|n| n == name).unwrap_or(0) % PALETTE.len()];
        let mut budgets: Vec<f64> = Vec::new();
        let mut panels = Vec::new();
        for (title, styles) in &sweep.panels {
            let mut series: Vec<Series> = Vec::new();
            for &(c, ..) in styles {
                let Some((mean, bar)) = last(c) else { continue };
                if c.reference {
                    series.push(Series {
                        label: UNIFORM_LABEL.to_string(),
                        colour: GREYS[0],
                        points: vec![(None, mean, 0.0)],
                        reference: true,
                    });
                    continue;
                }
                let index = figure.curves.iter().position(|x| std::ptr::eq(x, c))?;
                let Some(l) = sweep.labels.get(index).and_then(Option::as_ref) else { continue };
                let budget = l.budget.as_ref().filter(|(k, _)| k == key).map(|(_, v)| *v);
                if let Some(b) = budget
                    && !budgets.contains(&b)
                {
                    budgets.push(b);
                }
                match series.iter_mut().find(|s| s.label == l.learner && !s.reference) {
                    Some(s) => s.points.push((budget, mean, bar)),
                    None => series.push(Series {
                        label: l.learner.clone(),
                        colour: colour(&l.learner),
                        points: vec![(budget, mean, bar)],
                        reference: false,
                    }),
                }
            }
            for s in &mut series {
                s.points.sort_by(|a, b| a.0.unwrap_or(0.0).total_cmp(&b.0.unwrap_or(0.0)));
            }
            panels.push((title.clone(), series));
        }
        if budgets.len() < 2 {
            return None;
        }
        budgets.sort_by(f64::total_cmp);
        let mut legend: Vec<(String, RGBColor, Dash, bool)> =
            learners.iter().map(|n| (n.clone(), colour(n), None, false)).collect();
        if figure.curves.iter().any(|c| c.reference) {
            legend.push((UNIFORM_LABEL.to_string(), GREYS[0], DASHED, false));
        }
        let symbol = budget_symbol(key);
        Some(Self {
            // The experiment's name: the description is on the regret figure beside it.
            title: format!(
                "{}: final regret against {symbol}",
                figure.title.split(':').next().unwrap_or_default()
            ),
            symbol,
            panels,
            legend,
            trials: figure.trials,
            horizon,
            budgets,
        })
    }

    fn grid(&self) -> (u32, u32) {
        grid_of(self.panels.len())
    }
}

/// Rows and columns of a grid of `n` panels: up to three side by side, else two.
fn grid_of(n: usize) -> (u32, u32) {
    let n = n.max(1) as u32;
    let columns = if n <= 3 { n } else { 2 };
    (n.div_ceil(columns), columns)
}

/// The size of each panel of a grid: one panel as large as a plain plot.
fn panel_size(grid: (u32, u32)) -> (u32, u32) {
    if grid == (1, 1) { PLOT_SIZE } else { PANEL_SIZE }
}

/// Copies a run's figures in `run_dir` beside a report in `out` as `<key>.svg`, `<key>.png`
/// (and `<key>_vs_eps.*` for an ε sweep), so the report's directory holds one figure per
/// paper figure; returns the files written. Figures the run did not draw are skipped.
pub fn copy_figures_beside(run_dir: &Path, out: &Path, key: &str) -> Result<Vec<PathBuf>, OutputError> {
    let mut written = Vec::new();
    for (from, to) in [
        (SVG_FILE.to_string(), format!("{key}.svg")),
        (PNG_FILE.to_string(), format!("{key}.png")),
        (format!("{VS_EPS_STEM}.svg"), format!("{key}_vs_eps.svg")),
        (format!("{VS_EPS_STEM}.png"), format!("{key}_vs_eps.png")),
    ] {
        let source = run_dir.join(from);
        let bytes = match fs::read(&source) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(OutputError::read(&source, e.to_string())),
        };
        let target = out.join(to);
        crate::run::files::write_whole(&target, &bytes)?;
        written.push(target);
    }
    Ok(written)
}

impl Drawing for VsEpsilon<'_> {
    fn size(&self) -> (u32, u32) {
        let (rows, columns) = self.grid();
        let panel = panel_size((rows, columns));
        let legend = labels_width(self.legend.iter().map(|(l, ..)| l.as_str())) + SWEEP_LEGEND_EXTRA;
        (columns * panel.0 + legend, rows * panel.1 + TITLE_HEIGHT)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(text)?;
        let area = root.titled(&self.title, (FAMILY, title_size(root, &self.title))).map_err(text)?;
        let (rows, columns) = self.grid();
        let (grid, legend) = area.split_horizontally(columns * panel_size((rows, columns)).0);
        let cells = grid.split_evenly((rows as usize, columns as usize));
        let log = self.log_axis();
        for ((title, series), cell) in self.panels.iter().zip(&cells) {
            if title.is_empty() {
                self.draw_panel(cell, series, log)?;
            } else {
                self.draw_panel(&cell.titled(title, (FAMILY, 15)).map_err(text)?, series, log)?;
            }
        }
        let entries: Vec<Entry> = self.legend.iter().map(|(l, c, d, b)| (l.as_str(), *c, *d, *b)).collect();
        draw_entries(&legend, &entries)
    }
}

impl VsEpsilon<'_> {
    /// The regret axis is logarithmic where the points' means, over every panel, are all
    /// positive and span more than a decade (as the regret figure's, [`spans_a_decade`]).
    fn log_axis(&self) -> bool {
        a_decade_apart(
            self.panels.iter().flat_map(|(_, s)| s.iter().flat_map(|s| s.points.iter().map(|p| p.1))),
        )
    }

    /// A panel, its regret axis logarithmic if `log` ([`Self::log_axis`]).
    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        series: &[Series],
        log: bool,
    ) -> Result<(), String> {
        // One place per budget, evenly spaced (the budgets are a sweep's grid, e.g. 0.5, 1, 2).
        let n = self.budgets.len();
        let (low, high) = (-0.5, n as f64 - 0.5);
        let highest = series.iter().flat_map(|s| s.points.iter().map(|p| p.1 + p.2)).fold(1e-9_f64, f64::max);
        let mut builder = ChartBuilder::on(area);
        builder.margin(15).x_label_area_size(40).y_label_area_size(70);
        if log {
            let lowest =
                series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(f64::INFINITY, f64::min);
            let bottom = if lowest.is_finite() { lowest / 2.0 } else { 0.01 };
            let mut chart =
                builder.build_cartesian_2d(low..high, (bottom..highest * 1.5).log_scale()).map_err(text)?;
            self.draw_series(&mut chart, series, bottom)
        } else {
            let mut chart = builder.build_cartesian_2d(low..high, 0f64..highest * 1.1).map_err(text)?;
            self.draw_series(&mut chart, series, 0.0)
        }
    }

    /// The mesh, then each series: a level line, or points with ± bars cut at `floor`.
    fn draw_series<DB, Y>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, Y>>,
        series: &[Series],
        floor: f64,
    ) -> Result<(), String>
    where
        DB: DrawingBackend,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let n = self.budgets.len();
        let place = |b: f64| self.budgets.iter().position(|x| x.to_bits() == b.to_bits()).unwrap_or(0) as f64;
        let (low, high) = (-0.5, n as f64 - 0.5);
        let budget_at = |v: &f64| {
            let i = v.round();
            let on_place = (v - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < n;
            if on_place { tick(self.budgets[i as usize]) } else { String::new() }
        };
        let spread = match self.trials {
            Some(n) => format!("± 1 s.e. over {n} trials"),
            None => "± 1 sd".to_string(),
        };
        chart
            .configure_mesh()
            .x_desc(format!("{} (the sweep's values)", self.symbol))
            .y_desc(format!("regret at T = {} ({spread})", self.horizon))
            .label_style((FAMILY, 13))
            .axis_desc_style((FAMILY, 15))
            .x_labels(4 * n + 1)
            .x_label_formatter(&budget_at)
            .y_label_formatter(&|v| tick(*v))
            .light_line_style(RGBColor(235, 235, 235))
            .bold_line_style(RGBColor(210, 210, 210))
            .draw()
            .map_err(text)?;
        for s in series {
            let style = s.colour.stroke_width(2);
            let level: Vec<f64> = s.points.iter().filter(|p| p.0.is_none()).map(|p| p.1).collect();
            for y in level {
                let line = vec![(low, y), (high, y)];
                if s.reference {
                    chart.draw_series(DashedLineSeries::new(line, 8, 5, style)).map_err(text)?;
                } else {
                    chart.draw_series(LineSeries::new(line, style)).map_err(text)?;
                }
            }
            let points: Vec<(f64, f64, f64)> =
                s.points.iter().filter_map(|p| p.0.map(|b| (place(b), p.1, p.2))).collect();
            chart.draw_series(LineSeries::new(points.iter().map(|p| (p.0, p.1)), style)).map_err(text)?;
            chart
                .draw_series(points.iter().map(|p| Circle::new((p.0, p.1), 4, s.colour.filled())))
                .map_err(text)?;
            chart
                .draw_series(
                    points.iter().map(|p| {
                        PathElement::new(vec![(p.0, (p.1 - p.2).max(floor)), (p.0, p.1 + p.2)], style)
                    }),
                )
                .map_err(text)?;
        }
        Ok(())
    }
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
