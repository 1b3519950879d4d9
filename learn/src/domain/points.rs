//! GP-UCB and (LDP-)TGP-UCB over a large finite set of points in ℝᵈ (more than
//! [`LARGE_SET`] points, up to 10⁶ and beyond), with no |D| × |D| matrix: the
//! [`Optimizer`](crate::optimizer::Optimizer) switches to it for such a set, and its `ask()`
//! still returns an index into the set.
//!
//! # The model and its cost
//!
//! - The points are mapped to the unit cube by their bounding box (a coordinate where every
//!   point agrees sits at ½), and the posterior is the box learner's GP in m = 128 random
//!   Fourier features ([`super::feature_gp`]): **O(m² + m d)** a report, memory
//!   **8|D| d + 20|D| + O(m² + t d)** bytes (the points, the learner's visiting order, and the
//!   optimiser's per-action counts). Nothing is |D| × |D| or |D| × m.
//! - The kernel (squared exponential, a lengthscale per coordinate, a signal scale) is fitted to
//!   the released reports by maximum marginal likelihood after 16 reports and at every doubling,
//!   as on a box (post-processing: no privacy cost); a lengthscale given
//!   (`KernelChoice::lengthscale`, in the points' own units) fixes it instead. The Matérn kernel
//!   is refused here: its random features are not these.
//! - The first max(8, 2(d + 1)) actions are points of the set in a random order (the opening
//!   design); then each round scores [`CANDIDATES`] points — the next ones of a random
//!   permutation of the set, so that every point is scored once every |D|/512 rounds — plus the
//!   [`ELITE`] best of the previous round and the told point of best mean among the last 128,
//!   and plays the best of μ + β σ: **O((C + E) (m² + m d))** a round, with β_t the
//!   calibrated finite-set schedule over |D| actions ([`crate::bo::calibrated::beta_with`]) and
//!   the large sets' own κ = [`POINT_SET_KAPPA`] = 0.15, chosen as the finite sets' 0.3 and the
//!   box's 0.075 were, on settings no reported run uses (`scripts/choose-box-kappa.sh
//!   --points`; `docs/your-problem.md`, "Many points").
//!
//! What the candidate search can miss: a point whose UCB is the largest but that is neither in
//! this round's slice of the permutation nor among the best of the last rounds. Its neighbours
//! share its mean and variance under the fitted kernel, so a region of high UCB is found through
//! any of its points; a lone spike narrower than the spacing of a slice (|D|/C points apart on
//! average) may wait up to |D|/C rounds to be scored.

use std::sync::Arc;

use rand::seq::SliceRandom;
use rand_core::SeedableRng;

use super::feature_gp::{FeatureGp, Hyperparameters};
use super::fit;
use crate::bo::gp_ucb::GpUcb;
use crate::env::SimRng;
use crate::policy::{Policy, PolicyError, check_report};

/// Point sets with more points than this are driven by [`PointSetGp`]; smaller ones keep the
/// exact posterior over the set (its |D| × |D| prior costs 8|D|² bytes: 134 MB at 4096).
pub const LARGE_SET: usize = 4096;

/// Points of the permutation scored each round.
pub const CANDIDATES: usize = 512;

/// The best candidates of a round scored again the next round.
pub const ELITE: usize = 16;

/// The told points among which each round's incumbent (best mean) is sought, as on a box.
const INCUMBENT_WINDOW: usize = 128;

/// The random features of the surrogate.
pub const FEATURES: usize = 128;

/// κ of the large point sets' β: the multiplier of smallest geometric-mean regret over
/// functions drawn from a GP prior on 10⁴ and 10⁵ uniform points of the unit cube, in settings
/// no reported run uses (`scripts/choose-box-kappa.sh --points`).
pub const POINT_SET_KAPPA: f64 = 0.15;

/// GP-UCB or (LDP-)TGP-UCB over a large point set. See the [module documentation](self).
#[derive(Clone, Debug)]
pub struct PointSetGp {
    /// The points in unit coordinates, |D| × d row by row (shared by the copies a batch makes).
    unit: Arc<[f64]>,
    d: usize,
    gp: FeatureGp,
    /// TGP-UCB's levels (the finite-set learner's); `None` for GP-UCB.
    levels: Option<GpUcb>,
    fitted: bool,
    bound: f64,
    delta: f64,
    beta_scale: f64,
    /// The visiting order of the candidate search.
    order: Arc<[u32]>,
    cursor: usize,
    elite: Vec<usize>,
    /// The actions told, in order.
    told: Vec<usize>,
    next_fit: usize,
}

/// What the set's points cannot be used for, in the user's words.
pub fn check_points(points: &[Vec<f64>]) -> Result<usize, String> {
    let d = points.first().map_or(0, Vec::len);
    if d == 0 {
        return Err("the domain's points have no coordinates: give each point one value a coordinate".into());
    }
    for (i, p) in points.iter().enumerate() {
        if p.len() != d {
            return Err(format!(
                "point {i} has {} coordinates but point 0 has {d}: give every point the same number",
                p.len()
            ));
        }
        if let Some(j) = p.iter().position(|v| !v.is_finite()) {
            return Err(format!("coordinate {j} of point {i} is NaN or infinite: give finite numbers"));
        }
    }
    if u32::try_from(points.len()).is_err() {
        return Err(format!("{} points are more than this learner indexes (2^32 − 1)", points.len()));
    }
    Ok(d)
}

impl PointSetGp {
    /// The learner over `points` (checked by [`check_points`]): noise variance `lambda`, δ,
    /// report bound B = `bound`, β multiplied by `beta_scale`, TGP-UCB's `levels` (or `None`),
    /// a fixed `lengthscale` in the points' units (or `None`: fitted), seeded by `seed`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        points: &[Vec<f64>],
        lambda: f64,
        delta: f64,
        bound: f64,
        beta_scale: f64,
        levels: Option<GpUcb>,
        lengthscale: Option<f64>,
        seed: u64,
    ) -> Self {
        let d = points.first().map_or(0, Vec::len);
        let mut lower = vec![f64::INFINITY; d];
        let mut upper = vec![f64::NEG_INFINITY; d];
        for p in points {
            for (i, v) in p.iter().enumerate() {
                lower[i] = lower[i].min(*v);
                upper[i] = upper[i].max(*v);
            }
        }
        let width: Vec<f64> = lower.iter().zip(&upper).map(|(lo, hi)| hi - lo).collect();
        let mut unit = Vec::with_capacity(points.len() * d);
        for p in points {
            for (i, v) in p.iter().enumerate() {
                let w = width[i];
                unit.push(if w > 0.0 && w.is_finite() { ((v - lower[i]) / w).clamp(0.0, 1.0) } else { 0.5 });
            }
        }
        let hyper = match lengthscale {
            None => Hyperparameters { lengthscales: vec![(d as f64 / 6.0).sqrt(); d], signal: bound },
            Some(l) => Hyperparameters {
                lengthscales: width
                    .iter()
                    .map(|&w| if w > 0.0 && w.is_finite() { l / w } else { 1.0 })
                    .collect(),
                signal: 1.0,
            },
        };
        let mut rng = SimRng::seed_from_u64(seed);
        let gp = FeatureGp::new(d, FEATURES / 2, lambda, hyper, &mut rng);
        let mut order: Vec<u32> = (0..points.len() as u32).collect();
        order.shuffle(&mut rng);
        Self {
            unit: unit.into(),
            d,
            gp,
            levels,
            fitted: lengthscale.is_none(),
            bound,
            delta,
            beta_scale,
            order: order.into(),
            cursor: 0,
            elite: Vec::new(),
            told: Vec::new(),
            next_fit: super::FIRST_FIT,
        }
    }

    fn len(&self) -> usize {
        self.order.len()
    }

    fn point(&self, a: usize) -> &[f64] {
        &self.unit[a * self.d..(a + 1) * self.d]
    }

    /// β_t: the calibrated finite-set schedule over |D| actions with κ = [`POINT_SET_KAPPA`]
    /// times the β multiplier.
    pub fn beta(&self, t: usize) -> f64 {
        crate::bo::calibrated::beta_with(POINT_SET_KAPPA * self.beta_scale, self.len(), t, self.delta)
    }

    /// The truncation level b_t of round t (∞ for GP-UCB).
    pub fn level(&self, t: usize) -> f64 {
        self.levels.as_ref().map_or(f64::INFINITY, |l| l.level(t))
    }

    /// The kernel's lengthscales on the unit cube of the bounding box, and its signal scale.
    pub fn hyperparameters(&self) -> &Hyperparameters {
        self.gp.hyperparameters()
    }

    /// The next `n` actions of the visiting order.
    fn next_slice(&mut self, n: usize) -> Vec<usize> {
        let n = n.min(self.len());
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(self.order[self.cursor] as usize);
            self.cursor = (self.cursor + 1) % self.len();
        }
        out
    }

    /// The told action of best posterior mean among the last `window` told (ties: the
    /// earliest): O(window · m d).
    fn best_told(&self, window: usize) -> Option<usize> {
        let recent = &self.told[self.told.len().saturating_sub(window)..];
        if recent.is_empty() {
            return None;
        }
        let mut points = Vec::with_capacity(recent.len() * self.d);
        for &a in recent {
            points.extend_from_slice(self.point(a));
        }
        let means = self.gp.means_many(&points);
        Some(recent[crate::bo::argmax(means.len(), |i| means[i])])
    }

    fn refit(&mut self) {
        let before = self.gp.clone();
        let result = if self.fitted {
            let hyper = fit::fit(&self.gp, self.bound);
            self.gp.set_hyperparameters(hyper)
        } else {
            self.gp.rebuild()
        };
        if result.is_err() {
            self.gp = before;
        }
    }
}

impl Policy for PointSetGp {
    fn select(&mut self) -> usize {
        let t = self.gp.num_reports() + 1;
        if t <= super::initial_design(self.d) {
            return self.next_slice(1)[0];
        }
        let mut candidates = self.next_slice(CANDIDATES);
        candidates.extend(self.elite.iter().copied());
        if let Some(best) = self.best_told(INCUMBENT_WINDOW) {
            candidates.push(best);
        }
        candidates.sort_unstable();
        candidates.dedup();
        let mut points = Vec::with_capacity(candidates.len() * self.d);
        for &a in &candidates {
            points.extend_from_slice(self.point(a));
        }
        let (means, vars) = self.gp.predict_many(&points);
        let beta = self.beta(t);
        let scores: Vec<f64> = means.iter().zip(&vars).map(|(m, v)| m + beta * v.sqrt()).collect();
        let mut rank: Vec<usize> = (0..candidates.len()).collect();
        // Best first; NaN last; ties by action, so the choice is a function of the scores.
        rank.sort_by(|&i, &j| {
            let key = |k: usize| if scores[k].is_nan() { f64::NEG_INFINITY } else { scores[k] };
            key(j).total_cmp(&key(i)).then(candidates[i].cmp(&candidates[j]))
        });
        self.elite = rank.iter().take(ELITE).map(|&k| candidates[k]).collect();
        candidates[rank[0]]
    }

    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError> {
        check_report(arm, self.len(), report)?;
        let t = self.gp.num_reports() + 1;
        let y = if report.abs() <= self.level(t) { report } else { 0.0 };
        let u = self.point(arm).to_vec();
        self.gp.observe(&u, y);
        self.told.push(arm);
        if t >= self.next_fit {
            self.refit();
            self.next_fit = self.next_fit.saturating_mul(2);
        }
        Ok(())
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("lambda", self.gp.lambda()),
            ("delta", self.delta),
            ("kappa", POINT_SET_KAPPA * self.beta_scale),
            ("beta_1", self.beta(1)),
            ("level_1", self.level(1)),
            ("features", self.gp.num_features() as f64),
            ("candidates", CANDIDATES as f64),
        ]
    }

    /// The told action of best posterior mean (ties: the earliest told): O(t m d).
    fn recommend(&self) -> Option<usize> {
        self.best_told(usize::MAX)
    }

    fn fork(&self) -> Option<Box<dyn Policy>> {
        Some(Box::new(self.clone()))
    }
}
