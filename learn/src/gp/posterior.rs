//! Exact GP posterior over a finite candidate domain, updated by rank-one steps.
//!
//! Seed 001 eq. (2), (3) (the same as Zhou & Tan's): with observations (x_τ, y_τ), τ ≤ t,
//!
//! - μ_t(x) = k_t(x)ᵀ (K_t + λI)⁻¹ y_{1:t}
//! - k_t(x, x') = k(x, x') − k_t(x)ᵀ (K_t + λI)⁻¹ k_t(x'),  σ²_t(x) = k_t(x, x).
//!
//! Over a finite domain D (|D| = n) we keep the vector μ_t over D and the matrix Σ_t = [k_t(u, v)]
//! over D. Conditioning on one more observation (index i, value y) is exact Gaussian conditioning:
//! with s = Σ[:, i] and d = Σ[i, i] + λ,
//!
//! - μ ← μ + s (y − μ_i) / d
//! - Σ ← Σ − s sᵀ / d,
//!
//! O(n²) per round, never a refactorisation (SPEC §2.1; the rank-one update of Chowdhury &
//! Gopalan's code, SPEC §2.2).

use std::fmt;

use nalgebra::{DMatrix, DVector};

use super::covariance::FiniteCovariance;
use super::kernel::{Kernel, KernelError, gram_matrix};

/// Why a posterior could not be built or updated.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum PosteriorError {
    /// The noise / regulariser λ must be finite and > 0.
    InvalidNoise(f64),
    /// A domain index ≥ the domain size.
    IndexOutOfRange {
        /// The index given.
        index: usize,
        /// The domain size n.
        len: usize,
    },
    /// An observed value that is NaN or ±∞.
    NonFiniteObservation(f64),
    /// A point whose dimension differs from the first point's.
    DimensionMismatch {
        /// Dimension of the first point.
        expected: usize,
        /// Dimension of the offending point.
        found: usize,
    },
    /// A point with a NaN or infinite coordinate.
    NonFinitePoint,
    /// The kernel returned NaN or ±∞ at the given point.
    NonFiniteKernelValue,
    /// The new Cholesky pivot d² = k(x,x) + λ − ‖l‖² was not > 0 (an indefinite kernel).
    NotPositiveDefinite {
        /// The offending pivot d².
        pivot: f64,
    },
    /// The prior covariance was rejected.
    Kernel(KernelError),
}

impl fmt::Display for PosteriorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidNoise(l) => write!(f, "noise lambda must be finite and > 0, got {l}"),
            Self::IndexOutOfRange { index, len } => {
                write!(f, "index {index} outside a domain of {len} points")
            }
            Self::NonFiniteObservation(y) => write!(f, "observation {y} is not finite"),
            Self::DimensionMismatch { expected, found } => {
                write!(f, "point of dimension {found}, expected {expected}")
            }
            Self::NonFinitePoint => write!(f, "point has a non-finite coordinate"),
            Self::NonFiniteKernelValue => write!(f, "kernel value is not finite"),
            Self::NotPositiveDefinite { pivot } => {
                write!(f, "kernel matrix is not positive definite (pivot {pivot})")
            }
            Self::Kernel(e) => write!(f, "invalid prior covariance: {e}"),
        }
    }
}

impl std::error::Error for PosteriorError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Kernel(e) => Some(e),
            _ => None,
        }
    }
}

impl From<KernelError> for PosteriorError {
    fn from(e: KernelError) -> Self {
        Self::Kernel(e)
    }
}

pub(crate) fn check_noise(lambda: f64) -> Result<f64, PosteriorError> {
    if lambda.is_finite() && lambda > 0.0 { Ok(lambda) } else { Err(PosteriorError::InvalidNoise(lambda)) }
}

/// Exact GP posterior over a finite domain {0, …, n−1}, updated in O(n²) per observation.
///
/// Numerics: rounding can leave a posterior variance a few ulps below 0 (e.g. after many
/// observations of one point). [`FinitePosterior::variance`], [`FinitePosterior::variances`] and
/// the information gain clamp such values to 0, and the update uses d = max(Σ[i, i], 0) + λ ≥ λ,
/// so a division never blows up. The stored matrix itself is left unclamped.
#[derive(Debug, Clone, PartialEq)]
pub struct FinitePosterior {
    lambda: f64,
    mean: DVector<f64>,
    cov: DMatrix<f64>,
    observations: usize,
    info_gain: f64,
}

impl FinitePosterior {
    /// The prior GP(0, K_D) with noise / regulariser λ (finite, > 0).
    ///
    /// ```
    /// use ldp_learn::gp::{FiniteCovariance, FinitePosterior};
    /// use nalgebra::DMatrix;
    /// let k = FiniteCovariance::new(DMatrix::identity(3, 3)).unwrap();
    /// let mut gp = FinitePosterior::new(&k, 1.0).unwrap();
    /// gp.observe(1, 2.0).unwrap();
    /// assert_eq!(gp.mean(1), Some(1.0)); // 1·(1+1)⁻¹·2
    /// assert_eq!(gp.variance(1), Some(0.5));
    /// assert!(FinitePosterior::new(&k, 0.0).is_err());
    /// ```
    pub fn new(prior: &FiniteCovariance, lambda: f64) -> Result<Self, PosteriorError> {
        let lambda = check_noise(lambda)?;
        let n = prior.domain_size();
        Ok(Self {
            lambda,
            mean: DVector::zeros(n),
            cov: prior.matrix().clone(),
            observations: 0,
            info_gain: 0.0,
        })
    }

    /// The prior GP(0, k) over the given points (K_D = Gram matrix of `kernel` over `points`).
    ///
    /// ```
    /// use ldp_learn::gp::{FinitePosterior, SquaredExponential};
    /// let k = SquaredExponential::new(0.2).unwrap();
    /// let domain: Vec<Vec<f64>> = (0..100).map(|i| vec![i as f64 / 99.0]).collect();
    /// let gp = FinitePosterior::from_kernel(&k, &domain, 1.0).unwrap();
    /// assert_eq!(gp.len(), 100);
    /// ```
    pub fn from_kernel<K: Kernel + ?Sized>(
        kernel: &K,
        points: &[Vec<f64>],
        lambda: f64,
    ) -> Result<Self, PosteriorError> {
        let prior = FiniteCovariance::new(gram_matrix(kernel, points)?)?;
        Self::new(&prior, lambda)
    }

    /// Conditions on y observed at domain index i (rank-one update, O(n²)).
    ///
    /// With s = Σ[:, i], d = max(Σ[i, i], 0) + λ: μ ← μ + s (y − μ_i)/d, Σ ← Σ − s sᵀ/d, and
    /// γ̂ ← γ̂ + ½ ln(1 + max(Σ[i, i], 0)/λ) with the variance *before* the update.
    pub fn observe(&mut self, index: usize, y: f64) -> Result<(), PosteriorError> {
        let len = self.len();
        if index >= len {
            return Err(PosteriorError::IndexOutOfRange { index, len });
        }
        if !y.is_finite() {
            return Err(PosteriorError::NonFiniteObservation(y));
        }
        let var = self.cov[(index, index)].max(0.0);
        let denom = var + self.lambda;
        let s: DVector<f64> = self.cov.column(index).into_owned();
        let residual = y - self.mean[index];
        self.mean.axpy(residual / denom, &s, 1.0);
        self.cov.ger(-1.0 / denom, &s, &s, 1.0);
        self.info_gain += 0.5 * (var / self.lambda).ln_1p();
        self.observations += 1;
        Ok(())
    }

    /// n, the size of the domain.
    pub fn len(&self) -> usize {
        self.mean.len()
    }

    /// Always `false`: a [`FiniteCovariance`] has at least one point.
    pub fn is_empty(&self) -> bool {
        self.mean.is_empty()
    }

    /// The noise / regulariser λ.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// μ_t(x_i), or `None` if i is out of range.
    pub fn mean(&self, index: usize) -> Option<f64> {
        self.mean.get(index).copied()
    }

    /// σ²_t(x_i) clamped to ≥ 0, or `None` if i is out of range.
    pub fn variance(&self, index: usize) -> Option<f64> {
        (index < self.len()).then(|| self.cov[(index, index)].max(0.0))
    }

    /// σ_t(x_i) = √σ²_t(x_i), or `None` if i is out of range.
    pub fn std_dev(&self, index: usize) -> Option<f64> {
        self.variance(index).map(f64::sqrt)
    }

    /// The vector μ_t over D.
    pub fn means(&self) -> &DVector<f64> {
        &self.mean
    }

    /// The vector σ²_t over D, each entry clamped to ≥ 0.
    pub fn variances(&self) -> DVector<f64> {
        self.cov.diagonal().map(|v| v.max(0.0))
    }

    /// The posterior covariance Σ_t = [k_t(u, v)]_{u,v ∈ D} (unclamped).
    pub fn covariance(&self) -> &DMatrix<f64> {
        &self.cov
    }

    /// t, the number of observations so far.
    pub fn num_observations(&self) -> usize {
        self.observations
    }

    /// γ̂_t = ½ Σ_{τ≤t} ln(1 + σ²_{τ−1}(x_τ)/λ) = ½ ln det(I + λ⁻¹ K_t) (SPEC §2.1; Zhou & Tan's
    /// γ_t is the maximum of this over t-point sets).
    pub fn info_gain(&self) -> f64 {
        self.info_gain
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::gp::{Matern, MaternNu, SquaredExponential};
    use proptest::prelude::*;

    /// Posterior mean and variance over the whole domain, solved from scratch with an LU
    /// factorisation of K_t + λI (Zhou & Tan eq. 2, 3). `k` is the prior matrix over D.
    pub(crate) fn naive_posterior(
        k: &DMatrix<f64>,
        idx: &[usize],
        y: &[f64],
        lambda: f64,
    ) -> (DVector<f64>, DVector<f64>) {
        let n = k.nrows();
        let t = idx.len();
        let kt = DMatrix::from_fn(t, t, |a, b| k[(idx[a], idx[b])]) + DMatrix::identity(t, t) * lambda;
        let lu = kt.lu();
        let yv = DVector::from_column_slice(y);
        let mut mean = DVector::zeros(n);
        let mut var = DVector::zeros(n);
        for x in 0..n {
            let kx = DVector::from_fn(t, |a, _| k[(idx[a], x)]);
            let sol = lu.solve(&kx).unwrap();
            mean[x] = sol.dot(&yv);
            var[x] = k[(x, x)] - kx.dot(&sol);
        }
        (mean, var)
    }

    /// ½ ln det(I + λ⁻¹ K_t), computed naively.
    pub(crate) fn naive_info_gain(k: &DMatrix<f64>, idx: &[usize], lambda: f64) -> f64 {
        let t = idx.len();
        let m = DMatrix::identity(t, t) + DMatrix::from_fn(t, t, |a, b| k[(idx[a], idx[b])]) / lambda;
        0.5 * m.determinant().ln()
    }

    pub(crate) fn kernel_by_id(id: u8, l: f64) -> Box<dyn Kernel> {
        match id % 4 {
            0 => Box::new(SquaredExponential::new(l).unwrap()),
            1 => Box::new(Matern::new(MaternNu::Half, l).unwrap()),
            2 => Box::new(Matern::new(MaternNu::ThreeHalves, l).unwrap()),
            _ => Box::new(Matern::new(MaternNu::FiveHalves, l).unwrap()),
        }
    }

    /// A case of the posterior property tests: a kernel's id (see [`kernel_by_id`]) and
    /// lengthscale, λ, 2 to 8 points in [0, 1]², and 1 to 19 observations (a point's index,
    /// taken modulo the number of points, and a value).
    #[allow(clippy::type_complexity)]
    pub(crate) fn posterior_case() -> impl Strategy<Value = (u8, f64, f64, Vec<Vec<f64>>, Vec<(usize, f64)>)>
    {
        (
            0u8..4,
            0.1f64..2.0,
            0.05f64..2.0,
            prop::collection::vec(prop::collection::vec(0.0f64..1.0, 2), 2..9),
            prop::collection::vec((0usize..100, -3.0f64..3.0), 1..20),
        )
    }

    /// The kernel of `id` and lengthscale `l`, and its Gram matrix on `pts`.
    pub(crate) fn kernel_and_gram(id: u8, l: f64, pts: &[Vec<f64>]) -> (Box<dyn Kernel>, DMatrix<f64>) {
        let kernel = kernel_by_id(id, l);
        let k = gram_matrix(kernel.as_ref(), pts).unwrap();
        (kernel, k)
    }

    /// |a − b| ≤ tol · (1 + |b|).
    pub(crate) fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + b.abs())
    }

    proptest! {
        #[test]
        fn incremental_matches_naive_solve(
            (kernel_id, l, lambda, pts, obs) in posterior_case(),
        ) {
            let (kernel, k) = kernel_and_gram(kernel_id, l, &pts);
            let mut gp = FinitePosterior::from_kernel(kernel.as_ref(), &pts, lambda).unwrap();
            let n = pts.len();
            let idx: Vec<usize> = obs.iter().map(|(i, _)| i % n).collect();
            let ys: Vec<f64> = obs.iter().map(|(_, y)| *y).collect();
            for (&i, &y) in idx.iter().zip(&ys) {
                gp.observe(i, y).unwrap();
            }
            let (mean, var) = naive_posterior(&k, &idx, &ys, lambda);
            // Tolerance: |incremental − naive| ≤ 1e-8 (1 + |naive|).
            for x in 0..n {
                prop_assert!(close(gp.mean(x).unwrap(), mean[x], 1e-8), "mean {} vs {}", gp.mean(x).unwrap(), mean[x]);
                prop_assert!(close(gp.variance(x).unwrap(), var[x].max(0.0), 1e-8), "var {} vs {}", gp.variance(x).unwrap(), var[x]);
                prop_assert!(gp.variance(x).unwrap() >= 0.0);
            }
            prop_assert_eq!(gp.num_observations(), idx.len());
            // γ̂_t = ½ ln det(I + λ⁻¹K_t), relative tolerance 1e-8.
            prop_assert!(close(gp.info_gain(), naive_info_gain(&k, &idx, lambda), 1e-8));
        }
    }

    #[test]
    fn invalid_inputs_have_their_own_variants() {
        let k = FiniteCovariance::new(DMatrix::identity(2, 2)).unwrap();
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(FinitePosterior::new(&k, bad), Err(PosteriorError::InvalidNoise(_))));
        }
        let mut gp = FinitePosterior::new(&k, 1.0).unwrap();
        assert_eq!(gp.observe(2, 0.0), Err(PosteriorError::IndexOutOfRange { index: 2, len: 2 }));
        assert!(matches!(gp.observe(0, f64::NAN), Err(PosteriorError::NonFiniteObservation(_))));
        assert_eq!(gp.num_observations(), 0);
        assert_eq!(gp.mean(5), None);
        assert_eq!(gp.variance(5), None);
        let se = SquaredExponential::new(1.0).unwrap();
        assert_eq!(
            FinitePosterior::from_kernel(&se, &[vec![0.0], vec![]], 1.0),
            Err(PosteriorError::Kernel(KernelError::DimensionMismatch { expected: 1, found: 0 }))
        );
        assert_eq!(
            FinitePosterior::from_kernel(&se, &[], 1.0),
            Err(PosteriorError::Kernel(KernelError::EmptyMatrix))
        );
    }

    #[test]
    fn many_repeats_keep_variance_non_negative() {
        // 10 000 observations of one point of a nearly singular SE Gram matrix with tiny λ:
        // variances stay ≥ 0 and the repeated point's variance ≈ λ/t (exact value
        // λ k/(λ + t k) with k = 1), checked to 1e-6 relative.
        let k = SquaredExponential::new(1.0).unwrap();
        let pts: Vec<Vec<f64>> = (0..20).map(|i| vec![i as f64 / 19.0]).collect();
        let lambda = 1e-6;
        let mut gp = FinitePosterior::from_kernel(&k, &pts, lambda).unwrap();
        let t = 10_000;
        for _ in 0..t {
            gp.observe(7, 0.3).unwrap();
        }
        assert!(gp.variances().iter().all(|&v| v >= 0.0));
        let expected = lambda / (lambda + t as f64);
        assert!((gp.variance(7).unwrap() - expected).abs() <= 1e-6 * expected);
        assert!((gp.mean(7).unwrap() - 0.3 * t as f64 / (t as f64 + lambda)).abs() < 1e-9);
    }
}
