//! What a run produces: per-learner rows of regret ([`AlgorithmResult`]), their aggregation
//! over trials, and the uniform-play reference row every result carries.

use serde::Serialize;

use crate::env::Environment;
use crate::settings::RunConfig;
use crate::settings::RunError;

/// Per-algorithm results of a run.
#[derive(Clone, Debug, Serialize)]
pub struct AlgorithmResult {
    /// The algorithm's label (with `LDP-` for private runs).
    pub label: String,
    /// Mean cumulative regret after each round.
    pub mean: Vec<f64>,
    /// Sample standard deviation across trials after each round.
    pub std: Vec<f64>,
    /// Final cumulative regret of each trial.
    pub finals: Vec<f64>,
    /// Wall-clock seconds spent in this algorithm's trials (summed over threads).
    pub seconds: f64,
    /// Final expected regret of uniform play in the same trials (same f, same order), empty
    /// when the run has no uniform reference.
    pub uniform_finals: Vec<f64>,
    /// `true` for the uniform-play reference row itself (drawn dashed, never judged).
    pub reference: bool,
    /// The constants the learner derived in trial 0 (the problem's B, R, v, c, λ, 𝓛 and the
    /// policy's own, see [`Policy::constants`](crate::bo::Policy::constants)), for `run.json`.
    pub constants: Vec<(String, f64)>,
}

impl AlgorithmResult {
    /// Mean final regret over the trials.
    pub fn final_mean(&self) -> f64 {
        mean(&self.finals)
    }

    /// Mean final regret divided by uniform play's over the same trials (`None` without a
    /// uniform reference or when uniform play has no regret).
    pub fn vs_uniform(&self) -> Option<f64> {
        let u = mean(&self.uniform_finals);
        (!self.uniform_finals.is_empty() && u > 0.0).then(|| self.final_mean() / u)
    }
}

fn mean(x: &[f64]) -> f64 {
    if x.is_empty() { 0.0 } else { x.iter().sum::<f64>() / x.len() as f64 }
}

/// Label of the uniform-play reference row.
pub const UNIFORM_LABEL: &str = "uniform play";

/// Expected cumulative regret of playing an arm uniformly at random every round, exactly:
/// t·(max f − mean f) after round t.
pub fn uniform_curve(env: &dyn Environment, horizon: usize) -> Vec<f64> {
    let n = env.num_arms().max(1);
    let average = (0..n).map(|a| env.mean(a)).sum::<f64>() / n as f64;
    let gap = env.best_mean() - average;
    (1..=horizon).map(|t| t as f64 * gap).collect()
}

/// Appends the uniform-play reference row, `uniform(trial)` being trial's exact curve, and
/// records its finals in every row.
pub fn with_uniform(
    config: &RunConfig,
    mut results: Vec<AlgorithmResult>,
    uniform: impl Fn(usize) -> Result<Vec<f64>, RunError>,
) -> Result<Vec<AlgorithmResult>, RunError> {
    let curves = (0..config.trials).map(uniform).collect::<Result<Vec<_>, _>>()?;
    let mut reference = aggregate(UNIFORM_LABEL.to_string(), &curves, 0.0);
    reference.reference = true;
    reference.uniform_finals = reference.finals.clone();
    for r in &mut results {
        r.uniform_finals = reference.finals.clone();
    }
    results.push(reference);
    Ok(results)
}

/// Aggregates equal-length regret curves (one per trial): mean and sample standard deviation
/// per round, and each trial's final value.
pub fn aggregate<C: AsRef<[f64]>>(label: String, curves: &[C], seconds: f64) -> AlgorithmResult {
    let curves: Vec<&[f64]> = curves.iter().map(AsRef::as_ref).collect();
    let n = curves.len() as f64;
    let horizon = curves.first().map_or(0, |c| c.len());
    let mut mean = Vec::with_capacity(horizon);
    let mut std = Vec::with_capacity(horizon);
    for t in 0..horizon {
        let m = curves.iter().map(|c| c[t]).sum::<f64>() / n;
        let var =
            if n > 1.0 { curves.iter().map(|c| (c[t] - m).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
        mean.push(m);
        std.push(var.sqrt());
    }
    let finals = curves.iter().filter_map(|c| c.last().copied()).collect();
    AlgorithmResult {
        label,
        mean,
        std,
        finals,
        seconds,
        uniform_finals: Vec::new(),
        reference: false,
        constants: Vec::new(),
    }
}
