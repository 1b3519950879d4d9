//! Results on disk: `regret.csv` (per-round mean and std of cumulative regret per algorithm),
//! `finals.csv` (final regret of every trial and its ratio to uniform play's in that trial),
//! `run.json` (every parameter, seed and derived constant), `regret.svg` (mean ± one std, uniform
//! play dashed), and the summary table printed at the end.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use serde::Serialize;

use crate::executor::Observer;
use crate::results::AlgorithmResult;
pub use crate::settings::OutputError;
use crate::settings::{RunConfig, RunError};

/// The observer that writes a finished run's files ([`write_all`]) into its directory.
pub struct Writer<'a> {
    dir: &'a Path,
    experiment: &'a str,
    description: &'a str,
    config: &'a RunConfig,
    files: std::sync::Mutex<Vec<PathBuf>>,
}

impl<'a> Writer<'a> {
    /// Writes into `dir` the results of `experiment` (titled `description`) run with `config`.
    pub fn new(dir: &'a Path, experiment: &'a str, description: &'a str, config: &'a RunConfig) -> Self {
        Self { dir, experiment, description, config, files: std::sync::Mutex::new(Vec::new()) }
    }

    /// The files written (none before the run finished).
    pub fn files(&self) -> Vec<PathBuf> {
        self.files.lock().map(|f| f.clone()).unwrap_or_default()
    }
}

impl Observer for Writer<'_> {
    fn finished(&self, results: &[AlgorithmResult]) -> Result<(), RunError> {
        let files = write_all(self.dir, self.experiment, self.description, self.config, results)?;
        if let Ok(mut f) = self.files.lock() {
            *f = files;
        }
        Ok(())
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> OutputError + '_ {
    move |e| OutputError::write(path, e.to_string())
}

/// The JSON record of a run.
#[derive(Serialize)]
struct Record<'a> {
    experiment: &'a str,
    description: &'a str,
    config: &'a RunConfig,
    results: Vec<Summary<'a>>,
}

#[derive(Serialize)]
struct Summary<'a> {
    label: &'a str,
    final_mean: f64,
    final_std: f64,
    /// Mean final regret over uniform play's in the same trials.
    vs_uniform: Option<f64>,
    reference: bool,
    /// Constants derived in trial 0 (non-finite values are written as null).
    constants: serde_json::Map<String, serde_json::Value>,
    finals: &'a [f64],
    seconds: f64,
}

/// Writes all files into `dir` (created if needed) and returns their paths.
pub fn write_all(
    dir: &Path,
    experiment: &str,
    description: &str,
    config: &RunConfig,
    results: &[AlgorithmResult],
) -> Result<Vec<PathBuf>, OutputError> {
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let mut csv = String::from("t");
    for r in results {
        let _ = write!(csv, ",{0}_mean,{0}_std", r.label);
    }
    csv.push('\n');
    for t in 0..config.horizon {
        let _ = write!(csv, "{}", t + 1);
        for r in results {
            let _ = write!(csv, ",{},{}", r.mean[t], r.std[t]);
        }
        csv.push('\n');
    }
    let regret = dir.join("regret.csv");
    fs::write(&regret, csv).map_err(io_err(&regret))?;

    let mut finals = String::from("algorithm,trial,final_regret,vs_uniform\n");
    for r in results {
        for (i, f) in r.finals.iter().enumerate() {
            let ratio = match r.uniform_finals.get(i) {
                Some(&u) if u > 0.0 => (f / u).to_string(),
                _ => String::new(),
            };
            let _ = writeln!(finals, "{},{i},{f},{ratio}", r.label);
        }
    }
    let finals_path = dir.join("finals.csv");
    fs::write(&finals_path, finals).map_err(io_err(&finals_path))?;

    let record = Record {
        experiment,
        description,
        config,
        results: results
            .iter()
            .map(|r| Summary {
                label: &r.label,
                final_mean: r.mean[config.horizon - 1],
                final_std: r.std[config.horizon - 1],
                vs_uniform: r.vs_uniform(),
                reference: r.reference,
                constants: r.constants.iter().map(|(k, v)| (k.clone(), serde_json::json!(v))).collect(),
                finals: &r.finals,
                seconds: r.seconds,
            })
            .collect(),
    };
    let json_path = dir.join("run.json");
    let json =
        serde_json::to_string_pretty(&record).map_err(|e| OutputError::write(&json_path, e.to_string()))?;
    fs::write(&json_path, json).map_err(io_err(&json_path))?;

    let svg = dir.join("regret.svg");
    plot(&svg, &format!("{experiment}: {description}"), results)
        .map_err(|message| OutputError::write(&svg, message))?;
    Ok(vec![regret, finals_path, json_path, svg])
}

/// The most rounds a plotted curve is drawn through: the plot is 900 pixels wide, so more
/// points add file size (an SVG of T = 10⁵ rounds was 24 MB) and nothing one can see.
pub const MAX_PLOTTED_ROUNDS: usize = 600;

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

fn plot(path: &Path, title: &str, results: &[AlgorithmResult]) -> Result<(), String> {
    let horizon = results.first().map_or(0, |r| r.mean.len());
    let rounds = plotted_rounds(horizon);
    let top =
        results.iter().flat_map(|r| r.mean.iter().zip(&r.std).map(|(m, s)| m + s)).fold(1e-9_f64, f64::max);
    let root = SVGBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..horizon as f64, 0f64..top * 1.05)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("round t")
        .y_desc("cumulative regret (mean ± 1 sd)")
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, r) in results.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        if r.reference {
            // The exact uniform-play reference: dashed black, no band.
            let points = rounds.iter().map(|&t| ((t + 1) as f64, r.mean[t]));
            chart
                .draw_series(DashedLineSeries::new(points, 8, 6, BLACK.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(r.label.clone())
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(1)));
            continue;
        }
        let band: Vec<(f64, f64)> = rounds
            .iter()
            .map(|&t| ((t + 1) as f64, r.mean[t] + r.std[t]))
            .chain(rounds.iter().rev().map(|&t| ((t + 1) as f64, (r.mean[t] - r.std[t]).max(0.0))))
            .collect();
        chart
            .draw_series(std::iter::once(Polygon::new(band, colour.mix(0.15))))
            .map_err(|e| e.to_string())?;
        let points = rounds.iter().map(|&t| ((t + 1) as f64, r.mean[t]));
        chart
            .draw_series(LineSeries::new(points, colour.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(r.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

/// The summary table: final cumulative regret, mean ± sd and its standard error, the ratio of
/// the mean to uniform play's over the same trials, and the compute seconds per trial (summed
/// over threads, divided by the trials), per algorithm.
pub fn summary_table(results: &[AlgorithmResult], trials: usize) -> String {
    let width = results.iter().map(|r| r.label.len()).max().unwrap_or(0).max(18);
    let mut out = format!(
        "{:<width$} {:>12} {:>10} {:>10} {:>10} {:>9}\n",
        "algorithm", "final R_T", "sd", "s.e.", "vs uniform", "s/trial"
    );
    for r in results {
        let last = r.mean.len().saturating_sub(1);
        let (mean, sd) = (r.mean.get(last).copied().unwrap_or(0.0), r.std.get(last).copied().unwrap_or(0.0));
        let ratio = r.vs_uniform().map_or("-".to_string(), |x| format!("{x:.3}"));
        let _ = writeln!(
            out,
            "{:<width$} {:>12.2} {:>10.2} {:>10.2} {:>10} {:>9.3}",
            r.label,
            mean,
            sd,
            sd / (trials.max(1) as f64).sqrt(),
            ratio,
            r.seconds / trials.max(1) as f64
        );
    }
    out
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
}
