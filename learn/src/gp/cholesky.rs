//! Exact GP posterior at arbitrary points, from a Cholesky factor grown one row per observation.
//!
//! For continuous or large domains. With L Lᵀ = K_t + λI (Zhou & Tan eq. 2, 3), appending
//! observation x_{t+1} adds one row to L (O(t²), no refactorisation):
//!
//! - l = L⁻¹ k_t(x_{t+1})  (forward substitution)
//! - d² = k(x_{t+1}, x_{t+1}) + λ − ‖l‖² = λ + σ²_t(x_{t+1}),  new row [lᵀ, d].
//!
//! With w = L⁻¹ y_{1:t} (grown as w_{t+1} = (y_{t+1} − lᵀw)/d) and v = L⁻¹ k_t(x):
//! μ_t(x) = vᵀ w, σ²_t(x) = k(x, x) − ‖v‖², both O(t²) (plus t kernel evaluations).
//! The information gain comes free from the diagonal: γ̂_t = ½ Σ ln(d_τ²/λ).

use nalgebra::DVector;

use super::kernel::Kernel;
use super::posterior::{PosteriorError, check_noise};

/// Exact GP posterior over points of ℝ^d with an incrementally grown Cholesky factor.
///
/// The factor is stored packed, row by row (row τ holds τ+1 entries). Variances are clamped to
/// ≥ 0; a pivot d² ≤ 0 (possible only for an indefinite kernel, since d² ≥ λ in exact
/// arithmetic) is rejected with [`PosteriorError::NotPositiveDefinite`] and leaves the state
/// unchanged.
#[derive(Debug, Clone)]
pub struct CholeskyPosterior<K> {
    kernel: K,
    lambda: f64,
    points: Vec<Vec<f64>>,
    /// Packed lower-triangular factor of K_t + λI.
    factor: Vec<f64>,
    /// w = L⁻¹ y_{1:t}.
    w: Vec<f64>,
    info_gain: f64,
}

impl<K: Kernel> CholeskyPosterior<K> {
    /// The prior GP(0, k) with noise / regulariser λ (finite, > 0).
    ///
    /// ```
    /// use ldp_learn::gp::{CholeskyPosterior, SquaredExponential};
    /// let k = SquaredExponential::new(0.5).unwrap();
    /// let mut gp = CholeskyPosterior::new(k, 1.0).unwrap();
    /// gp.observe(&[0.3], 1.0).unwrap();
    /// let (mean, var) = gp.predict(&[0.3]).unwrap();
    /// assert!((mean - 0.5).abs() < 1e-15 && (var - 0.5).abs() < 1e-15);
    /// ```
    pub fn new(kernel: K, lambda: f64) -> Result<Self, PosteriorError> {
        Ok(Self {
            kernel,
            lambda: check_noise(lambda)?,
            points: Vec::new(),
            factor: Vec::new(),
            w: Vec::new(),
            info_gain: 0.0,
        })
    }

    fn check_point(&self, x: &[f64]) -> Result<(), PosteriorError> {
        if let Some(first) = self.points.first()
            && first.len() != x.len()
        {
            return Err(PosteriorError::DimensionMismatch { expected: first.len(), found: x.len() });
        }
        if x.iter().any(|c| !c.is_finite()) {
            return Err(PosteriorError::NonFinitePoint);
        }
        Ok(())
    }

    /// (k_t(x), k(x, x)), checking the kernel values are finite.
    fn kernel_column(&self, x: &[f64]) -> Result<(Vec<f64>, f64), PosteriorError> {
        self.check_point(x)?;
        let kx: Vec<f64> = self.points.iter().map(|p| self.kernel.eval(p, x)).collect();
        let kxx = self.kernel.eval(x, x);
        if kxx.is_finite() && kx.iter().all(|v| v.is_finite()) {
            Ok((kx, kxx))
        } else {
            Err(PosteriorError::NonFiniteKernelValue)
        }
    }

    /// Solves L v = b in place (forward substitution over the packed factor).
    fn forward_substitute(&self, b: &mut [f64]) {
        for i in 0..b.len() {
            let row = &self.factor[i * (i + 1) / 2..(i + 1) * (i + 2) / 2];
            let s: f64 = row[..i].iter().zip(&b[..i]).map(|(a, v)| a * v).sum();
            b[i] = (b[i] - s) / row[i];
        }
    }

    /// Conditions on y observed at x: appends one row to the Cholesky factor (O(t²)).
    ///
    /// γ̂ ← γ̂ + ½ ln(1 + σ²_t(x)/λ), with σ²_t(x) = max(d² − λ, 0).
    pub fn observe(&mut self, x: &[f64], y: f64) -> Result<(), PosteriorError> {
        if !y.is_finite() {
            return Err(PosteriorError::NonFiniteObservation(y));
        }
        let (mut l, kxx) = self.kernel_column(x)?;
        self.forward_substitute(&mut l);
        let pivot = kxx + self.lambda - l.iter().map(|v| v * v).sum::<f64>();
        if !(pivot > 0.0 && pivot.is_finite()) {
            return Err(PosteriorError::NotPositiveDefinite { pivot });
        }
        let d = pivot.sqrt();
        let w_new = (y - l.iter().zip(&self.w).map(|(a, b)| a * b).sum::<f64>()) / d;
        self.info_gain += 0.5 * ((pivot - self.lambda).max(0.0) / self.lambda).ln_1p();
        self.factor.extend_from_slice(&l);
        self.factor.push(d);
        self.w.push(w_new);
        self.points.push(x.to_vec());
        Ok(())
    }

    /// (μ_t(x), σ²_t(x)) at any point x, σ² clamped to ≥ 0. O(t²).
    pub fn predict(&self, x: &[f64]) -> Result<(f64, f64), PosteriorError> {
        let (mut v, kxx) = self.kernel_column(x)?;
        self.forward_substitute(&mut v);
        let mean = v.iter().zip(&self.w).map(|(a, b)| a * b).sum();
        let var = kxx - v.iter().map(|a| a * a).sum::<f64>();
        Ok((mean, var.max(0.0)))
    }

    /// (μ_t, σ²_t) over a list of points, as two vectors.
    pub fn predict_many(&self, points: &[Vec<f64>]) -> Result<(DVector<f64>, DVector<f64>), PosteriorError> {
        let mut mean = DVector::zeros(points.len());
        let mut var = DVector::zeros(points.len());
        for (i, p) in points.iter().enumerate() {
            (mean[i], var[i]) = self.predict(p)?;
        }
        Ok((mean, var))
    }

    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The noise / regulariser λ.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The observed points x_1, …, x_t.
    pub fn points(&self) -> &[Vec<f64>] {
        &self.points
    }

    /// t, the number of observations so far.
    pub fn num_observations(&self) -> usize {
        self.points.len()
    }

    /// γ̂_t = ½ Σ_τ ln(1 + σ²_{τ−1}(x_τ)/λ) = ½ ln det(I + λ⁻¹ K_t) (SPEC §2.1).
    pub fn info_gain(&self) -> f64 {
        self.info_gain
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gp::posterior::tests::{
        close, kernel_and_gram, naive_info_gain, naive_posterior, posterior_case,
    };
    use crate::gp::{FiniteCovariance, FinitePosterior, SquaredExponential};
    use nalgebra::DMatrix;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn cholesky_matches_naive_and_rank_one(
            (kernel_id, l, lambda, pts, obs) in posterior_case(),
        ) {
            let (kernel, k) = kernel_and_gram(kernel_id, l, &pts);
            let n = pts.len();
            let idx: Vec<usize> = obs.iter().map(|(i, _)| i % n).collect();
            let ys: Vec<f64> = obs.iter().map(|(_, y)| *y).collect();
            let mut chol = CholeskyPosterior::new(kernel.as_ref(), lambda).unwrap();
            let mut finite = FinitePosterior::from_kernel(kernel.as_ref(), &pts, lambda).unwrap();
            for (&i, &y) in idx.iter().zip(&ys) {
                chol.observe(&pts[i], y).unwrap();
                finite.observe(i, y).unwrap();
            }
            let (mean, var) = naive_posterior(&k, &idx, &ys, lambda);
            let (cm, cv) = chol.predict_many(&pts).unwrap();
            // Tolerance: 1e-8 (1 + |reference|) against the naive solve and the rank-one form.
            for x in 0..n {
                prop_assert!(close(cm[x], mean[x], 1e-8));
                prop_assert!(close(cv[x], var[x].max(0.0), 1e-8));
                prop_assert!(close(cm[x], finite.mean(x).unwrap(), 1e-8));
                prop_assert!(close(cv[x], finite.variance(x).unwrap(), 1e-8));
            }
            prop_assert!(close(chol.info_gain(), naive_info_gain(&k, &idx, lambda), 1e-8));
            prop_assert_eq!(chol.num_observations(), idx.len());
        }
    }

    #[test]
    fn invalid_inputs_have_their_own_variants() {
        let se = SquaredExponential::new(1.0).unwrap();
        for bad in [0.0, -2.0, f64::NAN, f64::NEG_INFINITY] {
            assert!(matches!(CholeskyPosterior::new(se, bad), Err(PosteriorError::InvalidNoise(_))));
        }
        let mut gp = CholeskyPosterior::new(se, 1.0).unwrap();
        assert_eq!(gp.observe(&[f64::NAN], 1.0), Err(PosteriorError::NonFinitePoint));
        assert!(matches!(gp.observe(&[0.0], f64::INFINITY), Err(PosteriorError::NonFiniteObservation(_))));
        gp.observe(&[0.0], 1.0).unwrap();
        assert_eq!(
            gp.observe(&[0.0, 1.0], 1.0),
            Err(PosteriorError::DimensionMismatch { expected: 1, found: 2 })
        );
        assert_eq!(gp.predict(&[0.0, 1.0]), Err(PosteriorError::DimensionMismatch { expected: 1, found: 2 }));
        // A finite-domain kernel gives NaN for a non-index point.
        let fc = FiniteCovariance::new(DMatrix::identity(2, 2)).unwrap();
        let mut gp = CholeskyPosterior::new(&fc, 1.0).unwrap();
        assert_eq!(gp.observe(&[0.5], 1.0), Err(PosteriorError::NonFiniteKernelValue));
        // An indefinite "covariance" makes a pivot ≤ 0; the state is left unchanged.
        let bad = FiniteCovariance::new(DMatrix::from_row_slice(2, 2, &[1.0, 3.0, 3.0, 1.0])).unwrap();
        let mut gp = CholeskyPosterior::new(&bad, 0.1).unwrap();
        gp.observe(&[0.0], 1.0).unwrap();
        assert!(matches!(gp.observe(&[1.0], 1.0), Err(PosteriorError::NotPositiveDefinite { .. })));
        assert_eq!(gp.num_observations(), 1);
        assert!(gp.predict(&[1.0]).is_ok());
    }
}
