//! A GP on the unit cube [0, 1]^d in a space of m random Fourier features, whose cost per
//! report does not grow with the number of reports or with any domain size.
//!
//! # The model
//!
//! The kernel is the squared exponential with a lengthscale per coordinate and a signal scale,
//! `k(u, v) = s² exp(−Σ_i (u_i − v_i)² / 2ℓ_i²)`, approximated by `M = m/2` frequency pairs
//! (Rahimi & Recht 2007, the cos/sin form):
//!
//! ```text
//! φ(u) = (s/√M) (cos z_1, sin z_1, …, cos z_M, sin z_M),   z_j = Σ_i ω_ji u_i / ℓ_i,   ω_ji ~ N(0, 1),
//! ```
//!
//! so `φ(u)ᵀφ(v) = (s²/M) Σ_j cos(z_j(u) − z_j(v))`, whose mean over the draws is k(u, v). The base
//! draws ω are drawn once from the learner's seed; a new lengthscale rescales them, so fitting
//! the kernel never redraws them. The GP with kernel `k̂ = φᵀφ` and noise variance λ is the
//! Bayesian linear model `f(u) = m̂ + φ(u)ᵀw`, `w ~ N(0, I_m)`, with the constant prior mean m̂
//! the mean of the reports told (empirical Bayes; post-processing of the reports). Its
//! posterior after reports y at points U (features Φ, t × m) is, with `A = ΦᵀΦ + λI_m`,
//! `θ = A⁻¹Φᵀy` and `ψ = A⁻¹Φᵀ1` (both kept, so m̂ may change every report),
//!
//! ```text
//! μ_t(u) = m̂ + φ(u)ᵀ(θ − m̂ψ),        σ²_t(u) = λ φ(u)ᵀA⁻¹φ(u),
//! ```
//!
//! exactly the GP posterior `m̂ + k̂_t(u)ᵀ(K̂_t + λI)⁻¹(y − m̂1)` and
//! `k̂(u,u) − k̂_t(u)ᵀ(K̂_t + λI)⁻¹k̂_t(u)` (the push-through identity; tested against the naive
//! t × t solve). Without m̂ (a zero prior mean), reports that sit mostly below zero (f near
//! −0.6 over most of a box) were fitted by bowls between the measured points, whose floor fell
//! below −B, and the learner kept to the box's corners.
//!
//! # Cost
//!
//! - a report: `A⁻¹` and θ by the Sherman–Morrison (recursive least squares) step,
//!   **O(m² + m d)** time; **memory O(m² + M d + t d)** (A⁻¹, the frequencies, and the told
//!   points and reports, kept for re-fitting: 8(t(d + 1) + m² + Md) bytes);
//! - μ and σ² at one point: O(m d + m²); at N points: one N × m × m product;
//! - [`rebuild`](FeatureGp::rebuild) (after the kernel changes, and to shed the rounding of
//!   many rank-one steps): O(t m² + m³);
//! - the negative log marginal likelihood and its gradient in the kernel's d + 1
//!   hyperparameters at n reports: O(n m² + m³ + n M d) ([`FeatureGp::nll_and_gradient`]).
//!
//! Nothing depends on a domain size: a box has none.
//!
//! # Error against the exact GP
//!
//! The posterior is exact for k̂; k̂ differs from k by a Monte-Carlo error of sd about
//! `s²/√(2M)` an entry (Rahimi & Recht's rate). The tests measure it on small cases against
//! the naive solve with the exact kernel.

use nalgebra::{DMatrix, DVector};
use rand_distr::{Distribution, StandardNormal};

use crate::env::SimRng;

/// The kernel's hyperparameters, on the unit cube.
#[derive(Clone, Debug, PartialEq)]
pub struct Hyperparameters {
    /// ℓ_i, one per coordinate (each > 0), in units of the box's side in that coordinate.
    pub lengthscales: Vec<f64>,
    /// s: the prior standard deviation of f (k(u, u) = s²).
    pub signal: f64,
}

/// The numerical failure of a re-factorisation (A not positive definite: only for
/// non-finite inputs, since A ⪰ λI).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotPositiveDefinite;

/// The feature-space GP. See the [module documentation](self).
#[derive(Clone, Debug)]
pub struct FeatureGp {
    d: usize,
    /// M × d base frequencies ω ~ N(0, 1).
    omega: DMatrix<f64>,
    /// M × d: ω_ji / ℓ_i.
    scaled: DMatrix<f64>,
    hyper: Hyperparameters,
    lambda: f64,
    /// The told points (unit coordinates), t × d row by row.
    points: Vec<f64>,
    /// The reports as the learner uses them (after any truncation).
    reports: Vec<f64>,
    a_inv: DMatrix<f64>,
    theta: DVector<f64>,
    /// ψ = A⁻¹Φᵀ1, for the constant prior mean.
    psi: DVector<f64>,
    /// The sum of the reports.
    sum: f64,
}

impl FeatureGp {
    /// The prior over [0, 1]^`d` with `2·pairs` features, noise variance `lambda` (> 0) and the
    /// hyperparameters `hyper` (checked by the caller), frequencies drawn from `rng`.
    pub fn new(d: usize, pairs: usize, lambda: f64, hyper: Hyperparameters, rng: &mut SimRng) -> Self {
        let omega = DMatrix::from_fn(pairs, d, |_, _| StandardNormal.sample(rng));
        let m = 2 * pairs;
        let mut gp = Self {
            d,
            scaled: omega.clone(),
            omega,
            hyper,
            lambda,
            points: Vec::new(),
            reports: Vec::new(),
            a_inv: DMatrix::identity(m, m) / lambda,
            theta: DVector::zeros(m),
            psi: DVector::zeros(m),
            sum: 0.0,
        };
        gp.rescale();
        gp
    }

    fn rescale(&mut self) {
        let l = &self.hyper.lengthscales;
        self.scaled = DMatrix::from_fn(self.omega.nrows(), self.d, |j, i| self.omega[(j, i)] / l[i]);
    }

    /// m, the number of features.
    pub fn num_features(&self) -> usize {
        2 * self.omega.nrows()
    }

    /// t, the reports told.
    pub fn num_reports(&self) -> usize {
        self.reports.len()
    }

    /// λ, the noise variance.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The kernel's hyperparameters.
    pub fn hyperparameters(&self) -> &Hyperparameters {
        &self.hyper
    }

    /// The told points (unit coordinates), t × d row by row.
    pub fn points(&self) -> &[f64] {
        &self.points
    }

    /// The reports as used.
    pub fn reports(&self) -> &[f64] {
        &self.reports
    }

    /// φ(u) into `out` (length m) under the scaled frequencies `scaled` and signal `signal`.
    fn features_with(scaled: &DMatrix<f64>, signal: f64, u: &[f64], out: &mut [f64]) {
        let pairs = scaled.nrows();
        let c = signal / (pairs as f64).sqrt();
        for j in 0..pairs {
            let z: f64 = u.iter().enumerate().map(|(i, x)| scaled[(j, i)] * x).sum();
            let (sin, cos) = z.sin_cos();
            out[2 * j] = c * cos;
            out[2 * j + 1] = c * sin;
        }
    }

    /// The constant prior mean m̂: the mean of the reports told (0 before any).
    pub fn prior_mean(&self) -> f64 {
        if self.reports.is_empty() { 0.0 } else { self.sum / self.reports.len() as f64 }
    }

    /// A⁻¹Φᵀ(y − m̂1) = θ − m̂ψ: the posterior mean's weights.
    pub fn weights(&self) -> DVector<f64> {
        &self.theta - &self.psi * self.prior_mean()
    }

    /// φ(u).
    pub fn features(&self, u: &[f64]) -> DVector<f64> {
        let mut out = DVector::zeros(self.num_features());
        Self::features_with(&self.scaled, self.hyper.signal, u, out.as_mut_slice());
        out
    }

    /// The n × m feature matrix of `n` points (row by row in `points`).
    fn feature_matrix(scaled: &DMatrix<f64>, signal: f64, d: usize, points: &[f64]) -> DMatrix<f64> {
        let n = points.len() / d.max(1);
        let m = 2 * scaled.nrows();
        let mut phi = DMatrix::zeros(n, m);
        let mut row = vec![0.0; m];
        for (r, u) in points.chunks_exact(d.max(1)).enumerate() {
            Self::features_with(scaled, signal, u, &mut row);
            for (c, v) in row.iter().enumerate() {
                phi[(r, c)] = *v;
            }
        }
        phi
    }

    /// Conditions on report `y` at the unit point `u` (finite, of dimension d; checked by the
    /// caller): the Sherman–Morrison step, O(m² + m d).
    pub fn observe(&mut self, u: &[f64], y: f64) {
        let phi = self.features(u);
        let v = &self.a_inv * &phi;
        let denom = 1.0 + phi.dot(&v);
        let residual = y - phi.dot(&self.theta);
        self.theta.axpy(residual / denom, &v, 1.0);
        let residual = 1.0 - phi.dot(&self.psi);
        self.psi.axpy(residual / denom, &v, 1.0);
        self.sum += y;
        self.a_inv.ger(-1.0 / denom, &v, &v, 1.0);
        self.points.extend_from_slice(u);
        self.reports.push(y);
    }

    /// Sets the hyperparameters and re-factorises A from every report told: O(t m² + m³).
    pub fn set_hyperparameters(&mut self, hyper: Hyperparameters) -> Result<(), NotPositiveDefinite> {
        let old = std::mem::replace(&mut self.hyper, hyper);
        self.rescale();
        if let Err(e) = self.rebuild() {
            self.hyper = old;
            self.rescale();
            return Err(e);
        }
        Ok(())
    }

    /// A⁻¹ and θ afresh from every report: O(t m² + m³). Leaves the state unchanged on failure.
    pub fn rebuild(&mut self) -> Result<(), NotPositiveDefinite> {
        let phi = Self::feature_matrix(&self.scaled, self.hyper.signal, self.d, &self.points);
        let a = gram(&phi, self.lambda);
        let chol = a.cholesky().ok_or(NotPositiveDefinite)?;
        let b = phi.tr_mul(&DVector::from_column_slice(&self.reports));
        let a_inv = chol.inverse();
        if !a_inv.iter().all(|v| v.is_finite()) {
            return Err(NotPositiveDefinite);
        }
        self.theta = chol.solve(&b);
        self.psi = chol.solve(&phi.tr_mul(&DVector::from_element(phi.nrows(), 1.0)));
        self.a_inv = a_inv;
        Ok(())
    }

    /// (μ_t(u), σ²_t(u)), σ² clamped at 0. O(m d + m²).
    pub fn predict(&self, u: &[f64]) -> (f64, f64) {
        let phi = self.features(u);
        let mean = self.prior_mean() + phi.dot(&self.weights());
        let var = self.lambda * phi.dot(&(&self.a_inv * &phi));
        (mean, var.max(0.0))
    }

    /// μ_t alone at u: O(m d).
    pub fn mean(&self, u: &[f64]) -> f64 {
        self.prior_mean() + self.features(u).dot(&self.weights())
    }

    /// The n × m matrix of the features of n points given row by row: O(n m d).
    pub fn features_of(&self, points: &[f64]) -> DMatrix<f64> {
        Self::feature_matrix(&self.scaled, self.hyper.signal, self.d, points)
    }

    /// (μ_t, σ²_t) at the points whose features are the rows `rows` of `phi` (from
    /// [`features_of`](Self::features_of) under the current hyperparameters): an n × m × m
    /// product, no trigonometry.
    pub fn predict_features(&self, phi: &DMatrix<f64>, rows: std::ops::Range<usize>) -> (Vec<f64>, Vec<f64>) {
        let phi = phi.rows(rows.start, rows.len());
        let means = (phi * self.weights()).add_scalar(self.prior_mean());
        let p = phi * &self.a_inv;
        let vars = (0..phi.nrows()).map(|r| (self.lambda * p.row(r).dot(&phi.row(r))).max(0.0)).collect();
        (means.as_slice().to_vec(), vars)
    }

    /// μ_t at n points given row by row: O(n m d).
    pub fn means_many(&self, points: &[f64]) -> Vec<f64> {
        let phi = Self::feature_matrix(&self.scaled, self.hyper.signal, self.d, points);
        (&phi * self.weights()).add_scalar(self.prior_mean()).as_slice().to_vec()
    }

    /// (μ_t, σ²_t) at n points given row by row: one n × m × m product.
    pub fn predict_many(&self, points: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let phi = self.features_of(points);
        self.predict_features(&phi, 0..phi.nrows())
    }

    /// The negative log marginal likelihood of `reports` at unit `points` (row by row) under
    /// the hyperparameters `hyper`, and its gradient in (ln ℓ_1, …, ln ℓ_d, ln s):
    ///
    /// ```text
    /// −ln p(y) = (yᵀy − bᵀα)/2λ + ½ ln|A| + ½(n − m) ln λ + ½ n ln 2π,   b = Φᵀy, α = A⁻¹b,
    /// ∂/∂Φ = Φ A⁻¹ − (y − Φα) αᵀ / λ,
    /// ```
    ///
    /// chained through ∂Φ/∂ln ℓ_i and ∂Φ/∂ln s = Φ. O(n m² + m³ + n M d). `None` if A cannot
    /// be factorised (non-finite input).
    pub fn nll_and_gradient(
        &self,
        hyper: &Hyperparameters,
        points: &[f64],
        reports: &[f64],
    ) -> Option<(f64, Vec<f64>)> {
        let d = self.d;
        let scaled =
            DMatrix::from_fn(self.omega.nrows(), d, |j, i| self.omega[(j, i)] / hyper.lengthscales[i]);
        let phi = Self::feature_matrix(&scaled, hyper.signal, d, points);
        let (n, m) = phi.shape();
        let lambda = self.lambda;
        let centre = reports.iter().sum::<f64>() / reports.len().max(1) as f64;
        let y = DVector::from_iterator(reports.len(), reports.iter().map(|r| r - centre));
        let a = gram(&phi, lambda);
        let chol = a.cholesky()?;
        let b = phi.tr_mul(&y);
        let alpha = chol.solve(&b);
        let log_det: f64 = 2.0 * chol.l_dirty().diagonal().iter().map(|v| v.ln()).sum::<f64>();
        let nll = (y.dot(&y) - b.dot(&alpha)) / (2.0 * lambda)
            + 0.5 * log_det
            + 0.5 * (n as f64 - m as f64) * lambda.ln()
            + 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
        let residual = &y - &phi * &alpha;
        let mut g = &phi * chol.inverse();
        g.ger(-1.0 / lambda, &residual, &alpha, 1.0);
        // ∂Φ_{n,2j}/∂ln ℓ_i = Φ_{n,2j+1} ω_ji u_ni/ℓ_i; ∂Φ_{n,2j+1}/∂ln ℓ_i = −Φ_{n,2j} ω_ji u_ni/ℓ_i.
        let pairs = m / 2;
        let h = DMatrix::from_fn(n, pairs, |r, j| {
            g[(r, 2 * j)] * phi[(r, 2 * j + 1)] - g[(r, 2 * j + 1)] * phi[(r, 2 * j)]
        });
        let hw = &h * &scaled; // n × d
        let mut grad: Vec<f64> =
            (0..d).map(|i| (0..n).map(|r| points[r * d + i] * hw[(r, i)]).sum::<f64>()).collect();
        grad.push(g.dot(&phi));
        (nll.is_finite() && grad.iter().all(|v| v.is_finite())).then_some((nll, grad))
    }
}

/// ΦᵀΦ + λI by a blocked matrix product (nalgebra's `tr_mul` is a plain loop).
fn gram(phi: &DMatrix<f64>, lambda: f64) -> DMatrix<f64> {
    let m = phi.ncols();
    let mut a = DMatrix::identity(m, m) * lambda;
    a.gemm(1.0, &phi.transpose(), phi, 1.0);
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;
    use rand_core::SeedableRng;

    fn se(u: &[f64], v: &[f64], h: &Hyperparameters) -> f64 {
        let r2: f64 = u.iter().zip(v).zip(&h.lengthscales).map(|((a, b), l)| ((a - b) / l).powi(2)).sum();
        h.signal * h.signal * (-0.5 * r2).exp()
    }

    /// The naive GP posterior at `x` with kernel `k` and the constant prior mean m̂ = mean y:
    /// m̂ + k_tᵀ(K + λI)⁻¹(y − m̂1) and k(x,x) − k_tᵀ(K + λI)⁻¹k_t.
    fn naive(
        k: &dyn Fn(&[f64], &[f64]) -> f64,
        pts: &[Vec<f64>],
        ys: &[f64],
        lambda: f64,
        x: &[f64],
    ) -> (f64, f64) {
        let n = pts.len();
        let kk = DMatrix::from_fn(n, n, |i, j| k(&pts[i], &pts[j])) + DMatrix::identity(n, n) * lambda;
        let kx = DVector::from_fn(n, |i, _| k(&pts[i], x));
        let chol = kk.cholesky().unwrap();
        let m = ys.iter().sum::<f64>() / n as f64;
        let mean = m + kx.dot(&chol.solve(&DVector::from_iterator(n, ys.iter().map(|y| y - m))));
        let var = k(x, x) - kx.dot(&chol.solve(&kx));
        (mean, var)
    }

    fn data(d: usize, n: usize, seed: u64) -> (Vec<Vec<f64>>, Vec<f64>) {
        let mut rng = SimRng::seed_from_u64(seed);
        let pts: Vec<Vec<f64>> = (0..n).map(|_| (0..d).map(|_| rng.random::<f64>()).collect()).collect();
        let ys = pts.iter().map(|p| (3.0 * p[0]).sin() + rng.random_range(-0.5..0.5)).collect();
        (pts, ys)
    }

    /// The feature GP is the exact GP of its own kernel k̂ = φᵀφ: after Sherman–Morrison steps
    /// and after a rebuild, μ and σ² match the naive t × t solve within 1e-9 (1 + |value|).
    #[test]
    fn the_posterior_is_the_naive_solve_of_the_feature_kernel() {
        for (d, n, lambda) in [(1, 5, 0.5), (2, 30, 1.0), (3, 60, 33.0), (6, 40, 0.1)] {
            let hyper =
                Hyperparameters { lengthscales: (0..d).map(|i| 0.2 + 0.1 * i as f64).collect(), signal: 0.8 };
            let mut gp = FeatureGp::new(d, 24, lambda, hyper, &mut SimRng::seed_from_u64(3));
            let (pts, ys) = data(d, n, 11);
            for (p, y) in pts.iter().zip(&ys) {
                gp.observe(p, *y);
            }
            let kernel = |u: &[f64], v: &[f64]| gp.features(u).dot(&gp.features(v));
            let (test, _) = data(d, 10, 12);
            let mut rebuilt = gp.clone();
            rebuilt.rebuild().unwrap();
            let flat: Vec<f64> = test.concat();
            let (many_m, many_v) = rebuilt.predict_many(&flat);
            for (k, x) in test.iter().enumerate() {
                let (mean, var) = naive(&kernel, &pts, &ys, lambda, x);
                for (m, v) in [gp.predict(x), rebuilt.predict(x), (many_m[k], many_v[k])] {
                    assert!((m - mean).abs() <= 1e-9 * (1.0 + mean.abs()), "d {d}: mean {m} vs {mean}");
                    assert!((v - var.max(0.0)).abs() <= 1e-9 * (1.0 + var.abs()), "d {d}: var {v} vs {var}");
                }
            }
        }
    }

    /// Against the exact squared-exponential GP (the kernel it approximates), on small cases:
    /// with m = 2048 features the posterior mean is within 0.1 and the sd within 0.05 of the
    /// naive solve at 20 points (s = 1, 25 reports of sd ≈ 0.3 about sin 3x, λ = 0.25 or 1; measured
    /// 0.06 and 0.006 at worst). The Monte-Carlo error of k̂ is ≈ 1/√(2M) = 0.022 an entry, which
    /// (K + λI)⁻¹ amplifies in the mean; the error shrinks as m grows (checked against m = 64).
    #[test]
    fn the_posterior_approaches_the_exact_squared_exponential_posterior() {
        for (d, lambda) in [(1, 0.25), (2, 0.25), (3, 1.0)] {
            let hyper = Hyperparameters { lengthscales: vec![0.3; d], signal: 1.0 };
            let (pts, ys) = data(d, 25, 5);
            let (test, _) = data(d, 20, 6);
            let exact = |u: &[f64], v: &[f64]| se(u, v, &hyper);
            let error = |pairs: usize| {
                let mut gp = FeatureGp::new(d, pairs, lambda, hyper.clone(), &mut SimRng::seed_from_u64(9));
                for (p, y) in pts.iter().zip(&ys) {
                    gp.observe(p, *y);
                }
                test.iter()
                    .map(|x| {
                        let (mean, var) = naive(&exact, &pts, &ys, lambda, x);
                        let (m, v) = gp.predict(x);
                        ((m - mean).abs(), (v.sqrt() - var.max(0.0).sqrt()).abs())
                    })
                    .fold((0.0f64, 0.0f64), |(a, b), (m, s)| (a.max(m), b.max(s)))
            };
            let (mean_error, sd_error) = error(1024);
            assert!(mean_error < 0.1 && sd_error < 0.05, "d {d}: {mean_error} {sd_error}");
            let (coarse, _) = error(32);
            assert!(mean_error < coarse, "d {d}: m = 2048 {mean_error}, m = 64 {coarse}");
        }
    }

    /// The gradient of the negative log marginal likelihood is its derivative (central
    /// differences, step 1e-5, within 1e-4 relative), and the value is the exact GP's of k̂ on the
    /// centred reports.
    #[test]
    fn the_marginal_likelihood_gradient_is_its_derivative() {
        let d = 3;
        let (pts, ys) = data(d, 40, 2);
        let flat = pts.concat();
        let hyper = Hyperparameters { lengthscales: vec![0.3, 0.5, 0.8], signal: 0.7 };
        let gp = FeatureGp::new(d, 16, 0.4, hyper.clone(), &mut SimRng::seed_from_u64(1));
        let (nll, grad) = gp.nll_and_gradient(&hyper, &flat, &ys).unwrap();
        // The exact GP's −ln p(y) with kernel k̂ (features under `hyper`).
        let mut probe = gp.clone();
        probe.set_hyperparameters(hyper.clone()).unwrap();
        let n = pts.len();
        let k = DMatrix::from_fn(n, n, |i, j| probe.features(&pts[i]).dot(&probe.features(&pts[j])))
            + DMatrix::identity(n, n) * 0.4;
        let chol = k.clone().cholesky().unwrap();
        let centre = ys.iter().sum::<f64>() / n as f64;
        let y = DVector::from_iterator(n, ys.iter().map(|y| y - centre));
        let direct = 0.5 * y.dot(&chol.solve(&y))
            + chol.l().diagonal().iter().map(|v| v.ln()).sum::<f64>()
            + 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
        assert!((nll - direct).abs() < 1e-8 * direct.abs(), "{nll} vs {direct}");
        let shifted = |i: usize, h: f64| {
            let mut p = hyper.clone();
            if i < d {
                p.lengthscales[i] *= h.exp();
            } else {
                p.signal *= h.exp();
            }
            gp.nll_and_gradient(&p, &flat, &ys).unwrap().0
        };
        for (i, g) in grad.iter().enumerate() {
            let numeric = (shifted(i, 1e-5) - shifted(i, -1e-5)) / 2e-5;
            assert!((g - numeric).abs() <= 1e-4 * (1.0 + numeric.abs()), "coordinate {i}: {g} vs {numeric}");
        }
    }
}
