//! The acquisition μ_t(u) + β_t σ_t(u) maximised over the unit cube.
//!
//! **Method.** A pool of P quasi-random points of the cube (an Owen-scrambled Sobol sequence,
//! `sobol_burley`, scrambled from the learner's seed and the fit count) is drawn with its
//! features whenever the kernel is fitted; each round scores the next N of them in one batch
//! (cycling through the pool: every pool point is scored once every P/N rounds), with the
//! incumbent (the point of highest posterior mean among the last 128 told). The best few are
//! then refined by argmin's Nelder–Mead (a simplex of side 0.05 about each, the acquisition
//! read at the point clamped into the cube, a fixed number of iterations), and the best point
//! found is returned. Same seed, same reports: the same point. Scoring pooled candidates needs
//! no trigonometry (their features are kept): an N × m × m product a round.
//!
//! **What it can miss.** A maximum whose basin holds none of the round's N candidates nor the
//! incumbent, or whose basin's candidates all score below the best few elsewhere: Nelder–Mead
//! then climbs another peak. A peak of width w holds a pool point with probability about
//! 1 − (1 − w^d)^P, small for a narrow peak in many dimensions; a new pool at every fit gives it
//! a new chance. Nelder–Mead is local and may stop short of a flat maximum within its
//! iterations.

use argmin::core::{CostFunction, Error, Executor, State};
use argmin::solver::neldermead::NelderMead;

use nalgebra::DMatrix;

use super::feature_gp::FeatureGp;

/// How the acquisition is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Search {
    /// P, the pooled Sobol points (drawn afresh at every fit).
    pub pool: usize,
    /// N, the pooled candidates scored each round (at most P).
    pub candidates: usize,
    /// How many of the best candidates Nelder–Mead refines.
    pub starts: usize,
    /// Nelder–Mead's iterations for each.
    pub iterations: u64,
}

impl Default for Search {
    /// A pool of 4096, 512 candidates a round, the best 2 refined by 30 Nelder–Mead iterations.
    fn default() -> Self {
        Self { pool: 4096, candidates: 512, starts: 2, iterations: 30 }
    }
}

/// P Sobol points of the cube and their features under the kernel of the last fit.
#[derive(Clone, Debug)]
pub struct Pool {
    d: usize,
    points: Vec<f64>,
    features: DMatrix<f64>,
    next: usize,
}

impl Pool {
    /// `size` points of [0, 1]^d (d ≤ 256) scrambled by `seed`, with their features under `gp`'s
    /// kernel: O(size · m d).
    pub fn new(gp: &FeatureGp, d: usize, size: usize, seed: u32) -> Self {
        let mut points = Vec::with_capacity(size * d);
        for i in 0..size {
            for dim in 0..d {
                points.push(f64::from(sobol_burley::sample(i as u32, dim as u32, seed)));
            }
        }
        let features = gp.features_of(&points);
        Self { d, points, features, next: 0 }
    }

    /// Pool point `i` (wrapping).
    pub fn point(&self, i: usize) -> Vec<f64> {
        let k = i % (self.points.len() / self.d.max(1)).max(1);
        self.points[k * self.d..(k + 1) * self.d].to_vec()
    }

    /// The next `n` pool rows (wrapping to the start).
    fn take(&mut self, n: usize) -> std::ops::Range<usize> {
        let size = self.features.nrows();
        if self.next + n > size {
            self.next = 0;
        }
        let rows = self.next..(self.next + n).min(size);
        self.next = rows.end;
        rows
    }
}

/// The told points among the last this many whose posterior mean is highest join the candidates.
const INCUMBENT_WINDOW: usize = 128;

struct Ucb<'a> {
    gp: &'a FeatureGp,
    beta: f64,
}

impl Ucb<'_> {
    fn score(&self, u: &[f64]) -> f64 {
        let (mean, var) = self.gp.predict(u);
        mean + self.beta * var.sqrt()
    }
}

impl CostFunction for Ucb<'_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Self::Param) -> Result<f64, Error> {
        let u: Vec<f64> = p.iter().map(|v| v.clamp(0.0, 1.0)).collect();
        let s = self.score(&u);
        Ok(if s.is_finite() { -s } else { f64::INFINITY })
    }
}

/// The maximiser found of μ + β σ over [0, 1]^d, from the next candidates of `pool` (whose
/// features must be under `gp`'s current kernel).
pub fn maximise(gp: &FeatureGp, pool: &mut Pool, beta: f64, search: Search) -> Vec<f64> {
    let d = pool.d;
    let rows = pool.take(search.candidates.max(1));
    let (mut means, mut vars) = gp.predict_features(&pool.features, rows.clone());
    let mut points = pool.points[rows.start * d..rows.end * d].to_vec();
    // The incumbent: the told point of highest mean among the last INCUMBENT_WINDOW.
    let t = gp.num_reports();
    let told = &gp.points()[t.saturating_sub(INCUMBENT_WINDOW) * d..];
    if !told.is_empty() {
        let told_means = gp.means_many(told);
        let best = crate::bo::argmax(told_means.len(), |i| told_means[i]);
        let incumbent = &told[best * d..(best + 1) * d];
        let (m, v) = gp.predict(incumbent);
        points.extend_from_slice(incumbent);
        means.push(m);
        vars.push(v);
    }
    let scores: Vec<f64> = means.iter().zip(&vars).map(|(m, v)| m + beta * v.sqrt()).collect();
    let mut order: Vec<usize> = (0..scores.len()).collect();
    // Best first; NaN last; ties by index, so the order is a function of the scores.
    order.sort_by(|&i, &j| {
        let key = |k: usize| if scores[k].is_nan() { f64::NEG_INFINITY } else { scores[k] };
        key(j).total_cmp(&key(i)).then(i.cmp(&j))
    });
    let mut best = points[order[0] * d..(order[0] + 1) * d].to_vec();
    let mut best_score = scores[order[0]];
    let ucb = Ucb { gp, beta };
    for &k in order.iter().take(search.starts) {
        let start = points[k * d..(k + 1) * d].to_vec();
        let simplex: Vec<Vec<f64>> = std::iter::once(start.clone())
            .chain((0..d).map(|i| {
                let mut v = start.clone();
                v[i] += if v[i] + 0.05 <= 1.0 { 0.05 } else { -0.05 };
                v
            }))
            .collect();
        let Ok(solver) = NelderMead::new(simplex).with_sd_tolerance(1e-9) else { continue };
        let run = Executor::new(Ucb { gp, beta }, solver).configure(|s| s.max_iters(search.iterations)).run();
        if let Ok(result) = run
            && let Some(p) = result.state().get_best_param()
        {
            let u: Vec<f64> = p.iter().map(|v| v.clamp(0.0, 1.0)).collect();
            let s = ucb.score(&u);
            if s > best_score {
                best_score = s;
                best = u;
            }
        }
    }
    best
}
