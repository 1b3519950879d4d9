//! What a run produces: per-learner rows of regret ([`AlgorithmResult`]), their aggregation
//! over trials, and the uniform-play reference row every result carries.

use std::borrow::Cow;

use serde::Serialize;

use crate::run::settings::RunConfig;
use crate::run::settings::RunError;
use ldp_learn::env::Environment;

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
    /// policy's own, see [`Policy::constants`](ldp_learn::policy::Policy::constants)), for `run.json`.
    pub constants: Vec<(String, f64)>,
    /// Reports told to the learner per second of its loops (set-up excluded), for runs on a
    /// device or fleet, in batches or with queries in flight; `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reports_per_s: Option<f64>,
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

impl AlgorithmResult {
    /// The guard every result carries: `true` when this learner's final regret is above uniform
    /// play's by more than two standard errors of the paired difference (trial i of the learner
    /// against uniform play's expected regret in the same trial i, which has the same f). Never
    /// for the reference row, a run without a uniform reference, or a single trial (no s.e.).
    ///
    /// The test is one-sided at about 2.3 % per learner under normal errors; it flags a learner
    /// the user would have done better without, not one that merely fails to beat uniform play.
    /// A difference within [`ROUNDING`] of uniform play's regret is a tie: a learner that plays
    /// round robin sums its T per-round gaps in another order than uniform play's closed form,
    /// and differs by rounding only (relative 10⁻¹⁴–10⁻¹¹, with a s.e. of the same order).
    pub fn worse_than_uniform(&self) -> bool {
        if self.reference || self.finals.len() < 2 || self.uniform_finals.len() != self.finals.len() {
            return false;
        }
        let Some((m, se)) = self.paired_vs_uniform() else { return false };
        m > 2.0 * se + ROUNDING * mean(&self.uniform_finals).abs()
    }

    /// The mean over trials of this learner's final regret minus uniform play's in the same
    /// trial (the same f), and its standard error; `None` without a reference of as many trials.
    pub fn paired_vs_uniform(&self) -> Option<(f64, f64)> {
        paired(&self.finals, &self.uniform_finals)
    }

    /// The median final regret over the trials (0 without trials).
    pub fn median_final(&self) -> f64 {
        let mut f = self.finals.clone();
        f.sort_by(f64::total_cmp);
        match f.len() {
            0 => 0.0,
            n if n % 2 == 1 => f[n / 2],
            n => (f[n / 2 - 1] + f[n / 2]) / 2.0,
        }
    }
}

/// The mean over trials of `x_i − y_i` and its standard error, when trial i of each is the
/// same trial (same seed); `None` unless they have as many trials.
pub fn paired(x: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    (x.len() == y.len()).then(|| mean_se(&x.iter().zip(y).map(|(a, b)| a - b).collect::<Vec<_>>()))
}

/// The mean of `x` and its standard error sd/√n (0 for one value; (0, 0) for none).
pub fn mean_se(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = mean(x);
    let sd = if n > 1.0 { (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() } else { 0.0 };
    (m, sd / n.max(1.0).sqrt())
}

/// The one line the CLI prints after a table when learners are flagged by
/// [`AlgorithmResult::worse_than_uniform`] (`None` if none is).
pub fn worse_than_uniform_warning(results: &[AlgorithmResult]) -> Option<String> {
    let flagged: Vec<String> = results
        .iter()
        .filter(|r| r.worse_than_uniform())
        .map(|r| match r.vs_uniform() {
            Some(x) => format!("{} ({x:.2}x)", r.label),
            None => r.label.clone(),
        })
        .collect();
    (!flagged.is_empty()).then(|| {
        format!(
            "warning: worse than choosing an arm at random (final regret above uniform play's by more than 2 s.e.): {}",
            flagged.join(", ")
        )
    })
}

/// The relative difference from uniform play's regret that [`AlgorithmResult::worse_than_uniform`]
/// counts as rounding: far above a sum of 10⁶ regrets' rounding (~10⁻¹⁰), far below any regret
/// difference a table reports (3 decimals).
pub const ROUNDING: f64 = 1e-9;

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
/// records its finals in every row. The curves are made one at a time, each twice
/// ([`aggregate_by`]): all of them at once were trials × T × 8 bytes (12 GB for 1,543 trials at
/// T = 10⁶).
pub fn with_uniform(
    config: &RunConfig,
    mut results: Vec<AlgorithmResult>,
    uniform: impl Fn(usize) -> Result<Vec<f64>, RunError>,
) -> Result<Vec<AlgorithmResult>, RunError> {
    let curve = |trial: usize| uniform(trial).map(Cow::Owned);
    let mut reference = aggregate_by(UNIFORM_LABEL.to_string(), config.trials, curve, 0.0)?;
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
    let curve = |i: usize| Ok::<_, std::convert::Infallible>(Cow::Borrowed(curves[i].as_ref()));
    match aggregate_by(label, curves.len(), curve, seconds) {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

/// [`aggregate`] of `n` curves that `curve(i)` gives one at a time, each asked for twice (the
/// sums, then the squared deviations from the mean): memory holds two rows of the horizon, not
/// `n` curves (a learner's 1,543 trials at T = 10⁶ were 12 GB). The same sums in the same order
/// as summing each round over the trials, so the same bits.
pub fn aggregate_by<'a, E>(
    label: String,
    n: usize,
    mut curve: impl FnMut(usize) -> Result<Cow<'a, [f64]>, E>,
    seconds: f64,
) -> Result<AlgorithmResult, E> {
    let mut sum: Vec<f64> = Vec::new();
    let mut finals = Vec::with_capacity(n);
    for i in 0..n {
        let c = curve(i)?;
        if i == 0 {
            // −0.0 is the empty sum of `Iterator::sum`, and −0.0 + x is x.
            sum = vec![-0.0; c.len()];
        }
        sum.iter_mut().zip(c.iter()).for_each(|(s, x)| *s += x);
        finals.extend(c.last().copied());
    }
    let count = n as f64;
    let mean: Vec<f64> = sum.iter().map(|s| s / count).collect();
    let mut deviation = vec![-0.0; mean.len()];
    if n > 1 {
        for i in 0..n {
            let c = curve(i)?;
            deviation.iter_mut().zip(c.iter().zip(&mean)).for_each(|(d, (x, m))| *d += (x - m).powi(2));
        }
    }
    let std = deviation.iter().map(|d| if n > 1 { (d / (count - 1.0)).sqrt() } else { 0.0 }).collect();
    Ok(AlgorithmResult {
        label,
        mean,
        std,
        finals,
        seconds,
        uniform_finals: Vec::new(),
        reference: false,
        constants: Vec::new(),
        reports_per_s: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learner(label: &str, finals: &[f64], uniform: &[f64]) -> AlgorithmResult {
        let mut r = aggregate(label.to_string(), &finals.iter().map(|f| vec![*f]).collect::<Vec<_>>(), 0.0);
        r.uniform_finals = uniform.to_vec();
        r
    }

    /// The mean and sd of every round, each computed the plain way (all trials of the round
    /// summed at once), against [`aggregate_by`]'s two passes over one curve at a time: the
    /// same bits, with each curve asked for at most twice.
    #[test]
    fn aggregating_one_curve_at_a_time_gives_the_same_bits_as_summing_each_round() {
        use rand_core::{Rng, SeedableRng};
        let mut rng = ldp_learn::env::SimRng::seed_from_u64(7);
        for (n, horizon) in [(1, 5), (2, 1), (7, 300), (40, 50)] {
            let curves: Vec<Vec<f64>> = (0..n)
                .map(|_| {
                    let mut total = 0.0;
                    (0..horizon)
                        .map(|_| {
                            total += f64::from(rng.next_u32()) / f64::from(u32::MAX) * 3.7;
                            total
                        })
                        .collect()
                })
                .collect();
            let mut asked = vec![0; n];
            let row = aggregate_by(
                "x".into(),
                n,
                |i| {
                    asked[i] += 1;
                    Ok::<_, ()>(Cow::Borrowed(curves[i].as_slice()))
                },
                1.5,
            );
            let Ok(row) = row else { panic!("no error was returned") };
            assert!(asked.iter().all(|&k| k <= 2), "{asked:?}");
            for t in 0..horizon {
                let m = curves.iter().map(|c| c[t]).sum::<f64>() / n as f64;
                let var = if n > 1 {
                    curves.iter().map(|c| (c[t] - m).powi(2)).sum::<f64>() / (n as f64 - 1.0)
                } else {
                    0.0
                };
                assert_eq!(row.mean[t].to_bits(), m.to_bits(), "n = {n}, t = {t}");
                assert_eq!(row.std[t].to_bits(), var.sqrt().to_bits(), "n = {n}, t = {t}");
            }
            let finals: Vec<f64> = curves.iter().map(|c| c[horizon - 1]).collect();
            assert_eq!((row.finals, row.seconds), (finals, 1.5));
        }
        // A curve that cannot be had stops the aggregation with its error.
        let failed =
            aggregate_by("x".into(), 3, |i| if i == 1 { Err(i) } else { Ok(Cow::Owned(vec![1.0])) }, 0.0);
        assert_eq!(failed.err(), Some(1));
    }

    #[test]
    fn the_guard_flags_a_learner_worse_than_uniform_by_more_than_two_paired_standard_errors() {
        let uniform = [100.0, 120.0, 80.0, 110.0];
        // Paired differences 10, 12, 8, 11: mean 10.25, sd 1.71, s.e. 0.85: flagged.
        let worse = learner("worse", &[110.0, 132.0, 88.0, 121.0], &uniform);
        assert!(worse.worse_than_uniform());
        // Differences 10, −10, 12, −8: mean 1, s.e. 5.7: not decided, not flagged.
        let tied = learner("tied", &[110.0, 110.0, 92.0, 102.0], &uniform);
        assert!(!tied.worse_than_uniform());
        // Better than uniform play: never flagged.
        assert!(!learner("better", &[50.0, 60.0, 40.0, 55.0], &uniform).worse_than_uniform());
        // Exactly uniform play's regret (a learner stuck in round robin): a tie, not flagged.
        assert!(!learner("equal", &uniform, &uniform).worse_than_uniform());
        // Round robin summed in another order: uniform play's regret up to rounding, with a
        // s.e. of rounding (measured: 13067.441860465455 against 13067.441860465113 in every
        // trial, clicks table, T = 3·10⁴). A tie, not flagged.
        let rounded: Vec<f64> =
            uniform.iter().enumerate().map(|(i, u)| u * (1.0 + 2.6e-14 * (1.0 + i as f64))).collect();
        assert!(!learner("rounded", &rounded, &uniform).worse_than_uniform());
        // 10⁻⁶ above in every trial (still far below any reported digit, but not rounding): flagged.
        let above: Vec<f64> = uniform.iter().map(|u| u * (1.0 + 1e-6)).collect();
        assert!(learner("above", &above, &uniform).worse_than_uniform());
        // One trial has no s.e.; the reference row is never judged.
        assert!(!learner("one", &[500.0], &[100.0]).worse_than_uniform());
        let mut reference = learner("uniform play", &uniform, &uniform);
        reference.reference = true;
        assert!(!reference.worse_than_uniform());

        let line = worse_than_uniform_warning(&[worse, tied]).unwrap();
        assert!(line.contains("worse (1.10x)") && !line.contains("tied"), "{line}");
        assert!(!line.contains('\n'));
        assert_eq!(worse_than_uniform_warning(&[reference]), None);
    }
}
