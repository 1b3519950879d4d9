//! (LDP-)MoMA-GP-UCB on a box: Zhou & Tan Alg. 3 with the box's random-feature GP
//! ([`super::feature_gp`]) in place of the Nyström embedding of a finite set.
//!
//! Epoch n plays one point x_n, the acquisition's maximiser of μ̃_{n−1} + β_n σ̃_{n−1} (the
//! first [`super::initial_design`] epochs: Sobol points), k times, and is told y_{n,1}, …,
//! y_{n,k}. Estimate j is the feature GP told the j-th report of every completed epoch (one
//! row an epoch, noise variance λ̃, constant prior mean m̂_j); all k share their points and so
//! their A = ΦᵀΦ + λ̃I and σ̃². As Alg. 3 lines 11–12, the estimate kept is
//! k* = argmin_j median_{s≠j} ‖θ̄_j − θ̄_s‖_V̄ ([`crate::bo::moma::median_of_means_index`]), with
//! θ̄_j = (m̂_j, w_j) (the prior mean and the weights of μ̃_j(u) = m̂_j + φ(u)ᵀw_j) and
//! V̄ = [[n, (Φᵀ1)ᵀ], [Φᵀ1, A]], so that ‖θ̄_j − θ̄_s‖²_V̄ = Σ_i (μ̃_j(x_i) − μ̃_s(x_i))² +
//! λ̃‖w_j − w_s‖², Alg. 3's norm with the prior mean as one more coordinate.
//!
//! Constants, as the finite sets' calibrated MoMA ([`crate::bo::calibrated`]): k =
//! [`epoch_length`](crate::bo::calibrated::epoch_length)(T, δ), λ̃ =
//! [`moma_noise_variance`](crate::bo::calibrated::moma_noise_variance)(σ²_obs, k), β over
//! epochs with the box's schedule and MoMA's own κ on a box, [`BOX_MOMA_KAPPA`]. No report is
//! truncated (MoMA's robustness is the median). The kernel is fitted, after 16 epochs and at
//! every doubling, to the completed epochs' mean reports at noise variance σ²_obs/k
//! (post-processing of released reports).
//!
//! Cost: a report O(1) within an epoch; an epoch's end O(k m² + m d) for the k estimates'
//! steps, O(k² m²) for the median, O(m² + n d) to copy the kept estimate into the learner's
//! posterior, one acquisition; memory k times the box GP's
//! (O(k (m² + n d)) for n epochs). Amortised over the epoch's k rounds, O(k m²) a round and one
//! acquisition every k rounds.

use nalgebra::{DMatrix, DVector};

use super::feature_gp::{FeatureGp, Hyperparameters};

/// κ of MoMA-GP-UCB's β on a box: the multiplier of smallest geometric-mean regret over
/// functions drawn from a GP prior, in settings no reported run uses, chosen as
/// [`BOX_KAPPA`](super::BOX_KAPPA) was (`scripts/choose-box-kappa.sh --moma`; `docs/boxes.md`,
/// "MoMA-GP-UCB on a box").
pub const BOX_MOMA_KAPPA: f64 = 0.0375;

/// MoMA's state on a box beyond the acquisition's GP.
#[derive(Clone, Debug)]
pub struct BoxMoma {
    /// k, the plays of an epoch.
    k: usize,
    /// Estimate j, told the j-th report of every completed epoch.
    estimates: Vec<FeatureGp>,
    /// Told each completed epoch's mean report at noise variance σ²_obs/k: what the kernel is
    /// fitted on (its points are the epochs' points).
    means: FeatureGp,
    /// V̄ over the completed epochs' points.
    norm: DMatrix<f64>,
    /// k* of the last completed epoch.
    pick: usize,
    /// The running epochs (asked or told, not yet k reports): their point in the box's
    /// coordinates and their reports so far, in the order started.
    open: Vec<(Vec<f64>, Vec<f64>)>,
}

impl BoxMoma {
    /// k estimates, each a copy of `prior` (the acquisition's GP before any report, noise λ̃),
    /// and the fit's GP over epoch means at noise variance `observed / k`.
    pub fn new(prior: &FeatureGp, k: usize, observed: f64, rng: &mut crate::env::SimRng) -> Self {
        let k = k.max(1);
        let h = prior.hyperparameters().clone();
        let d = h.lengthscales.len();
        // The fit's GP draws its own frequencies: it only ever gives hyperparameters.
        let means = FeatureGp::new(d, prior.num_features() / 2, observed / k as f64, h, rng);
        let mut moma = Self {
            k,
            estimates: vec![prior.clone(); k],
            means,
            norm: DMatrix::zeros(0, 0),
            pick: 0,
            open: Vec::new(),
        };
        moma.rebuild_norm();
        moma
    }

    /// k, the plays of an epoch.
    pub fn epoch_length(&self) -> usize {
        self.k
    }

    /// n, the completed epochs.
    pub fn epochs(&self) -> usize {
        self.means.num_reports()
    }

    /// Epochs started (completed and running).
    pub fn started(&self) -> usize {
        self.epochs() + self.open.len()
    }

    /// Reports told, in all: k a completed epoch and the running epochs'.
    pub fn reports(&self) -> usize {
        self.epochs() * self.k + self.open.iter().map(|(_, ys)| ys.len()).sum::<usize>()
    }

    /// The completed epochs' points (unit coordinates), n × d row by row.
    pub fn points(&self) -> &[f64] {
        self.means.points()
    }

    /// The running epochs: point (box coordinates) and reports so far.
    pub fn open(&self) -> &[(Vec<f64>, Vec<f64>)] {
        &self.open
    }

    /// The running epoch that still needs plays, given `in_flight(x)`, the asks of x pending.
    pub fn unfinished(&self, in_flight: impl Fn(&[f64]) -> usize) -> Option<Vec<f64>> {
        self.open.iter().find(|(x, ys)| ys.len() + in_flight(x) < self.k).map(|(x, _)| x.clone())
    }

    /// Starts an epoch at `x` (box coordinates).
    pub fn start(&mut self, x: Vec<f64>) {
        self.open.push((x, Vec::new()));
    }

    /// Adds `report` to the epoch at `x` (box coordinates; a new epoch if none runs there);
    /// at its k-th report the epoch ends: returns its point and reports.
    pub fn add(&mut self, x: &[f64], report: f64) -> Option<(Vec<f64>, Vec<f64>)> {
        let e = match self.open.iter().position(|(p, _)| p == x) {
            Some(e) => e,
            None => {
                self.open.push((x.to_vec(), Vec::new()));
                self.open.len() - 1
            }
        };
        self.open[e].1.push(report);
        (self.open[e].1.len() >= self.k).then(|| self.open.remove(e))
    }

    /// Alg. 3 lines 7–12 after an epoch at unit point `u` with reports `ys` (k of them): each
    /// estimate's step, V̄'s, the median's pick. Returns the estimate kept.
    pub fn complete(&mut self, u: &[f64], ys: &[f64]) -> &FeatureGp {
        for (gp, &y) in self.estimates.iter_mut().zip(ys) {
            gp.observe(u, y);
        }
        self.means.observe(u, ys.iter().sum::<f64>() / ys.len().max(1) as f64);
        let phi = self.estimates[0].features(u);
        self.add_to_norm(&phi);
        self.choose();
        &self.estimates[self.pick]
    }

    /// V̄ += (1, φ)(1, φ)ᵀ.
    fn add_to_norm(&mut self, phi: &DVector<f64>) {
        let row = DVector::from_iterator(phi.len() + 1, std::iter::once(1.0).chain(phi.iter().copied()));
        self.norm.ger(1.0, &row, &row, 1.0);
    }

    /// θ̄_j = (m̂_j, w_j) of each estimate.
    fn thetas(&self) -> Vec<DVector<f64>> {
        self.estimates
            .iter()
            .map(|gp| {
                let w = gp.weights();
                DVector::from_iterator(w.len() + 1, std::iter::once(gp.prior_mean()).chain(w.iter().copied()))
            })
            .collect()
    }

    fn choose(&mut self) {
        self.pick = crate::bo::moma::median_of_means_index(&self.thetas(), &self.norm);
    }

    /// The estimate kept.
    pub fn kept(&self) -> &FeatureGp {
        &self.estimates[self.pick]
    }

    /// The hyperparameters fitted to the epochs' means (B = `bound`).
    pub fn fitted(&self, bound: f64) -> Hyperparameters {
        super::fit::fit(&self.means, bound)
    }

    /// Sets `hyper` on every estimate and the fit's GP and rebuilds V̄; on a numerical failure
    /// (non-finite arithmetic only) keeps everything as it was.
    pub fn set_hyperparameters(&mut self, hyper: &Hyperparameters) {
        let before = self.clone();
        let mut ok = self.means.set_hyperparameters(hyper.clone()).is_ok();
        for gp in &mut self.estimates {
            ok = ok && gp.set_hyperparameters(hyper.clone()).is_ok();
        }
        if !ok {
            *self = before;
            return;
        }
        self.rebuild_norm();
        self.choose();
    }

    /// Rebuilds every estimate (shedding rounding) at unchanged hyperparameters.
    pub fn rebuild(&mut self) {
        let before = self.clone();
        if !self.estimates.iter_mut().all(|gp| gp.rebuild().is_ok()) {
            *self = before;
            return;
        }
        self.rebuild_norm();
        self.choose();
    }

    /// V̄ afresh: diag(0, λ̃, …, λ̃) plus (1, φ)(1, φ)ᵀ for each completed epoch's point.
    fn rebuild_norm(&mut self) {
        let m = self.estimates[0].num_features();
        let lambda = self.estimates[0].lambda();
        self.norm = DMatrix::zeros(m + 1, m + 1);
        for i in 1..=m {
            self.norm[(i, i)] = lambda;
        }
        let d = self.means.hyperparameters().lengthscales.len().max(1);
        let points = self.means.points().to_vec();
        for u in points.chunks_exact(d) {
            let phi = self.estimates[0].features(u);
            self.add_to_norm(&phi);
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::RngExt;
    use rand_core::SeedableRng;

    use super::*;
    use crate::env::SimRng;

    /// Alg. 3's r_j computed the long way: the median over s ≠ j of
    /// √(Σ_i (μ̃_j(x_i) − μ̃_s(x_i))² + λ̃‖w_j − w_s‖²) over the epochs' points x_i.
    fn naive_distances(moma: &BoxMoma) -> Vec<f64> {
        let d = moma.means.hyperparameters().lengthscales.len();
        let points: Vec<&[f64]> = moma.points().chunks_exact(d).collect();
        let k = moma.estimates.len();
        let dist = |j: usize, s: usize| {
            let (a, b) = (&moma.estimates[j], &moma.estimates[s]);
            let fit: f64 = points.iter().map(|u| (a.mean(u) - b.mean(u)).powi(2)).sum();
            (fit + a.lambda() * (a.weights() - b.weights()).norm_squared()).sqrt()
        };
        (0..k)
            .map(|j| {
                let mut others: Vec<f64> = (0..k).filter(|&s| s != j).map(|s| dist(j, s)).collect();
                others.sort_by(f64::total_cmp);
                let n = others.len();
                if n % 2 == 1 { others[n / 2] } else { 0.5 * (others[n / 2 - 1] + others[n / 2]) }
            })
            .collect()
    }

    /// The pick and its distances match the long way's (k* the first least r_j).
    fn assert_alg3(moma: &BoxMoma, when: &str) {
        let naive = naive_distances(moma);
        let kept = crate::bo::moma::median_distances(&moma.thetas(), &moma.norm);
        for (a, b) in naive.iter().zip(&kept) {
            assert!((a - b).abs() <= 1e-9 * a.abs().max(1.0), "{when}: {naive:?} {kept:?}");
        }
        let first_least = (0..naive.len()).fold(0, |best, j| if naive[j] < naive[best] { j } else { best });
        assert_eq!(moma.pick, first_least, "{when}");
    }

    /// The median-of-means pick over the box's features is Alg. 3's, computed the long way, after
    /// every epoch and after the kernel changes (V̄ rebuilt); each estimate is told its play
    /// index's report of every epoch, and the fit's GP each epoch's mean.
    #[test]
    fn the_kept_estimate_is_the_median_of_means_pick() {
        let mut rng = SimRng::seed_from_u64(3);
        let hyper = Hyperparameters { lengthscales: vec![0.3, 0.5], signal: 1.0 };
        let prior = FeatureGp::new(2, 16, 0.7, hyper, &mut rng);
        let k = 7;
        let mut moma = BoxMoma::new(&prior, k, 2.0, &mut rng);
        let mut picks = Vec::new();
        for n in 0..25 {
            let u: [f64; 2] = [rng.random_range(0.0..1.0), rng.random_range(0.0..1.0)];
            // Heavy-tailed reports: one play index in seven is far off.
            let ys: Vec<f64> = (0..k)
                .map(|j| {
                    (3.0 * u[0]).sin()
                        + rng.random_range(-1.0..1.0)
                        + if (n + j) % 7 == 0 { 40.0 } else { 0.0 }
                })
                .collect();
            for (j, &y) in ys.iter().enumerate() {
                let ended = moma.add(&u, y);
                assert_eq!(ended.is_some(), j == k - 1);
            }
            moma.complete(&u, &ys);
            assert_alg3(&moma, &format!("epoch {n}"));
            picks.push(moma.pick);
            for (j, gp) in moma.estimates.iter().enumerate() {
                assert_eq!(gp.reports().last(), Some(&ys[j]));
            }
            let mean = ys.iter().sum::<f64>() / k as f64;
            assert!((moma.means.reports()[n] - mean).abs() < 1e-12);
        }
        assert!(picks.iter().any(|&p| p != picks[0]), "the pick never moved: {picks:?}");
        assert_eq!((moma.epochs(), moma.reports()), (25, 25 * k));
        moma.set_hyperparameters(&Hyperparameters { lengthscales: vec![0.1, 0.9], signal: 2.0 });
        assert_alg3(&moma, "after the kernel changed");
    }
}
