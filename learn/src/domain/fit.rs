//! The kernel's hyperparameters by maximum marginal likelihood, from the released reports.
//!
//! The lengthscale of every coordinate and the signal scale s maximise the marginal
//! likelihood of the reports as the learner uses them, under the feature-space GP
//! ([`FeatureGp::nll_and_gradient`]); the noise variance is not fitted: it is λ, known from ε,
//! B and R as for every learner (the calibrated rule). The search is argmin's L-BFGS (with a
//! Moré–Thuente line search) over bounded parameters, each mapped to its interval by a
//! logistic function of an unbounded one: `ln ℓ_i ∈ [ln 0.05, ln 5]` (in units of the box's
//! side) and `ln s ∈ [ln(B/10), ln 2B]`, started from the current values.
//!
//! The log marginal likelihood is penalised by a weak prior on each lengthscale, Gamma(3, 6)
//! (shape 3, rate 6: mode 1/3, mean 1/2 of the box's side; GPyTorch's and BoTorch's long-time
//! default for inputs scaled to the unit cube), so this is type-II maximum a posteriori: the
//! prior matters only while the reports barely inform ℓ. Without it, fits on the first few
//! dozen reports (nearly flat in ℓ, and at ε = 1 for far longer) drifted to the bounds, and a
//! learner whose lengthscale had gone to 5 boxes modelled f as a constant and stayed at the
//! box's corners.
//!
//! **Privacy**: the fit reads only what the device released (the reports) and public settings;
//! it is post-processing of ε-LDP reports and costs no privacy.
//!
//! **Cost**: at most [`FIT_POINTS`] reports enter (every ⌈t/FIT_POINTS⌉-th report when there are
//! more, so no randomness), each evaluation O(n m² + m³ + n M d), at most [`FIT_ITERATIONS`]
//! iterations.

use argmin::core::{CostFunction, Error, Executor, Gradient, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;

use super::feature_gp::{FeatureGp, Hyperparameters};

/// The most reports one fit reads.
pub const FIT_POINTS: usize = 1024;
/// The most L-BFGS iterations of one fit.
pub const FIT_ITERATIONS: u64 = 25;
/// ℓ's interval, in units of the box's side.
pub const LENGTHSCALE_RANGE: (f64, f64) = (0.05, 2.0);
/// s's interval, in units of B.
pub const SIGNAL_RANGE: (f64, f64) = (1.0 / 3.0, 2.0);

/// The bounded parameters: ln of each one's interval (d lengthscales, then s).
#[derive(Clone)]
struct Ranges(Vec<(f64, f64)>);

struct Problem<'a> {
    gp: &'a FeatureGp,
    points: Vec<f64>,
    reports: Vec<f64>,
    ranges: Ranges,
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

impl Ranges {
    fn hyper(&self, p: &[f64]) -> Hyperparameters {
        let value = |(k, &(lo, hi)): (usize, &(f64, f64))| (lo + (hi - lo) * sigmoid(p[k])).exp();
        let mut all: Vec<f64> = self.0.iter().enumerate().map(value).collect();
        let signal = all.pop().unwrap_or(1.0);
        Hyperparameters { lengthscales: all, signal }
    }

    fn unbounded(&self, h: &Hyperparameters) -> Vec<f64> {
        h.lengthscales
            .iter()
            .chain(std::iter::once(&h.signal))
            .zip(&self.0)
            .map(|(v, &(lo, hi))| {
                let q = ((v.ln() - lo) / (hi - lo)).clamp(1e-6, 1.0 - 1e-6);
                (q / (1.0 - q)).ln()
            })
            .collect()
    }
}

impl Problem<'_> {
    fn evaluate(&self, p: &[f64]) -> Result<(f64, Vec<f64>), Error> {
        let hyper = self.ranges.hyper(p);
        let (nll, grad) = self
            .gp
            .nll_and_gradient(&hyper, &self.points, &self.reports)
            .ok_or_else(|| Error::msg("the marginal likelihood is not finite here"))?;
        // The lengthscales' prior Gamma(3, 6) in ℓ: −ln p(ℓ) = −2 ln ℓ + 6ℓ + const, whose
        // derivative in ln ℓ is −2 + 6ℓ.
        let ls = &hyper.lengthscales;
        let penalty: f64 = ls.iter().map(|l| -2.0 * l.ln() + 6.0 * l).sum();
        let grad = grad.iter().enumerate().map(|(i, g)| ls.get(i).map_or(*g, |l| g - 2.0 + 6.0 * l));
        // d(ln θ)/dp = (hi − lo) σ(p)(1 − σ(p)).
        let chained = grad
            .zip(&self.ranges.0)
            .zip(p)
            .map(|((g, (lo, hi)), x)| g * (hi - lo) * sigmoid(*x) * sigmoid(-x));
        Ok((nll + penalty, chained.collect()))
    }
}

impl CostFunction for Problem<'_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Self::Param) -> Result<f64, Error> {
        Ok(self.evaluate(p)?.0)
    }
}

impl Gradient for Problem<'_> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, p: &Self::Param) -> Result<Vec<f64>, Error> {
        Ok(self.evaluate(p)?.1)
    }
}

/// The hyperparameters of largest marginal likelihood found from the current ones, for reports
/// bounded by `bound` (B); the current ones if the search fails or finds nothing better.
pub fn fit(gp: &FeatureGp, bound: f64) -> Hyperparameters {
    let d = gp.hyperparameters().lengthscales.len();
    let t = gp.num_reports();
    let stride = t.div_ceil(FIT_POINTS).max(1);
    let (mut points, mut reports) = (Vec::new(), Vec::new());
    for k in (0..t).step_by(stride) {
        points.extend_from_slice(&gp.points()[k * d..(k + 1) * d]);
        reports.push(gp.reports()[k]);
    }
    let ell = (LENGTHSCALE_RANGE.0.ln(), LENGTHSCALE_RANGE.1.ln());
    let signal = ((SIGNAL_RANGE.0 * bound).ln(), (SIGNAL_RANGE.1 * bound).ln());
    let mut ranges = vec![ell; d];
    ranges.push(signal);
    let ranges = Ranges(ranges);
    let problem = Problem { gp, points, reports, ranges: ranges.clone() };
    let current = gp.hyperparameters().clone();
    let start = ranges.unbounded(&current);
    let Ok((start_cost, _)) = problem.evaluate(&start) else {
        return current;
    };
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7);
    let run = Executor::new(problem, solver).configure(|s| s.param(start).max_iters(FIT_ITERATIONS)).run();
    match run {
        Ok(result) => {
            let state = result.state();
            match state.get_best_param() {
                Some(best) if state.get_best_cost() < start_cost => ranges.hyper(best),
                _ => current,
            }
        }
        Err(_) => current,
    }
}
