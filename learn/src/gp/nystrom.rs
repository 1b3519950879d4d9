//! Nyström embedding with posterior-variance sampling (Zhou & Tan Appendix D, Algorithm 4).
//!
//! Given points x_1, …, x_t and estimates σ̃²(x_i) of their posterior variances, each x_i joins
//! the dictionary 𝒟 independently with probability p_i = min(q σ̃²(x_i), 1) (Alg. 4 lines 3–6).
//! The embedding is (Alg. 4 line 7)
//!
//! φ̃(x) = (K_𝒟^{1/2})⁺ k_𝒟(x) ∈ ℝ^m,  m = |𝒟|,
//!
//! with K_𝒟 = [k(u, v)]_{u,v ∈ 𝒟} and k_𝒟(x) = [k(u, x)]_{u ∈ 𝒟}. So φ̃(x)ᵀφ̃(y) =
//! k_𝒟(x)ᵀ K_𝒟⁺ k_𝒟(y), which equals k(x, y) whenever k(·, x) lies in the span of the dictionary.
//!
//! The pseudo-inverse square root is taken from the eigen-decomposition K_𝒟 = U Λ Uᵀ:
//! (K_𝒟^{1/2})⁺ = U diag(λ_j^{−1/2} if λ_j > [`PINV_RTOL`] · λ_max, else 0) Uᵀ. Dropping the
//! small eigenvalues changes φ̃ᵀφ̃ by at most `PINV_RTOL` · λ_max on dictionary points, and is what
//! makes repeated points (a singular K_𝒟) harmless.
//!
//! Seed 000 sets q = 6ρ ln(4T/δ)/ε², which at small T puts every point in the dictionary
//! (SPEC §2.2); the choice of q belongs to the caller.

use std::fmt;

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::RngExt;
use rand_core::Rng;

use super::kernel::{Kernel, KernelError, check_points, gram_matrix};

/// Eigenvalues of K_𝒟 at or below `PINV_RTOL` · λ_max are treated as zero in the pseudo-inverse.
pub const PINV_RTOL: f64 = 1e-10;

/// Why a Nyström embedding could not be built or evaluated.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum NystromError {
    /// q must be finite and > 0.
    InvalidQ(f64),
    /// `points` and `variances` have different lengths.
    LengthMismatch {
        /// Number of points.
        points: usize,
        /// Number of variance estimates.
        variances: usize,
    },
    /// A variance estimate that is negative, NaN or infinite.
    InvalidVariance {
        /// Index of the offending estimate.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// A point or kernel value was rejected (dimension mismatch, non-finite value, …).
    Kernel(KernelError),
}

impl fmt::Display for NystromError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidQ(q) => write!(f, "q must be finite and > 0, got {q}"),
            Self::LengthMismatch { points, variances } => {
                write!(f, "{points} points but {variances} variance estimates")
            }
            Self::InvalidVariance { index, value } => {
                write!(f, "variance estimate {index} is {value}, expected finite and >= 0")
            }
            Self::Kernel(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for NystromError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Kernel(e) => Some(e),
            _ => None,
        }
    }
}

impl From<KernelError> for NystromError {
    fn from(e: KernelError) -> Self {
        Self::Kernel(e)
    }
}

/// A Nyström feature map φ̃(x) = (K_𝒟^{1/2})⁺ k_𝒟(x) over a sampled dictionary.
#[derive(Debug, Clone)]
pub struct NystromEmbedding<K> {
    kernel: K,
    indices: Vec<usize>,
    dictionary: Vec<Vec<f64>>,
    /// (K_𝒟^{1/2})⁺, m × m.
    projection: DMatrix<f64>,
    rank: usize,
}

impl<K: Kernel> NystromEmbedding<K> {
    /// Algorithm 4: samples the dictionary (x_i kept with probability min(q σ̃²(x_i), 1)) and
    /// builds the embedding.
    ///
    /// Exactly one uniform draw is taken from `rng` per point, in order, whatever p_i is, so a
    /// seed fixes the dictionary. Repeated points are allowed (they may all be kept). An empty
    /// dictionary is valid and gives 0-dimensional features.
    ///
    /// ```
    /// use ldp_learn::gp::{NystromEmbedding, SquaredExponential};
    /// use rand_core::SeedableRng;
    /// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
    /// let k = SquaredExponential::new(0.3).unwrap();
    /// let pts = vec![vec![0.0], vec![0.5], vec![1.0]];
    /// let emb = NystromEmbedding::sample(k, &pts, &[1.0, 1.0, 1.0], 1e9, &mut rng).unwrap();
    /// assert_eq!(emb.dictionary_indices(), &[0, 1, 2]);
    /// let (a, b) = (emb.features(&[0.0]).unwrap(), emb.features(&[0.5]).unwrap());
    /// assert!((a.dot(&b) - (-0.5f64 * (0.5f64 / 0.3).powi(2)).exp()).abs() < 1e-9);
    /// ```
    pub fn sample(
        kernel: K,
        points: &[Vec<f64>],
        variances: &[f64],
        q: f64,
        rng: &mut impl Rng,
    ) -> Result<Self, NystromError> {
        if !(q.is_finite() && q > 0.0) {
            return Err(NystromError::InvalidQ(q));
        }
        if points.len() != variances.len() {
            return Err(NystromError::LengthMismatch { points: points.len(), variances: variances.len() });
        }
        if let Some((index, &value)) =
            variances.iter().enumerate().find(|(_, v)| !(v.is_finite() && **v >= 0.0))
        {
            return Err(NystromError::InvalidVariance { index, value });
        }
        check_points(points)?;
        let indices: Vec<usize> = variances
            .iter()
            .enumerate()
            .filter_map(|(i, &v)| {
                let p = (q * v).min(1.0);
                let u: f64 = rng.random();
                (u < p).then_some(i)
            })
            .collect();
        let dictionary = indices.iter().map(|&i| points[i].clone()).collect();
        Self::build(kernel, indices, dictionary)
    }

    /// The embedding for a given dictionary (Alg. 4 line 7 only, no sampling);
    /// `dictionary_indices()` is then 0..m.
    pub fn from_dictionary(kernel: K, dictionary: Vec<Vec<f64>>) -> Result<Self, NystromError> {
        check_points(&dictionary)?;
        let indices = (0..dictionary.len()).collect();
        Self::build(kernel, indices, dictionary)
    }

    fn build(kernel: K, indices: Vec<usize>, dictionary: Vec<Vec<f64>>) -> Result<Self, NystromError> {
        let m = dictionary.len();
        let gram = gram_matrix(&kernel, &dictionary)?;
        let (projection, rank) = if m == 0 {
            (DMatrix::zeros(0, 0), 0)
        } else {
            let eig = SymmetricEigen::try_new(gram, f64::EPSILON, 1000 + 100 * m)
                .ok_or(KernelError::EigenDecompositionFailed)?;
            let cutoff = PINV_RTOL * eig.eigenvalues.max().max(0.0);
            let inv_sqrt = eig.eigenvalues.map(|l| if l > cutoff { 1.0 / l.sqrt() } else { 0.0 });
            let rank = inv_sqrt.iter().filter(|&&v| v > 0.0).count();
            let u = &eig.eigenvectors;
            (u * DMatrix::from_diagonal(&inv_sqrt) * u.transpose(), rank)
        };
        Ok(Self { kernel, indices, dictionary, projection, rank })
    }

    /// m = |𝒟|, the feature dimension.
    pub fn dim(&self) -> usize {
        self.dictionary.len()
    }

    /// The number of eigenvalues of K_𝒟 kept by the pseudo-inverse (≤ m).
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Indices into the sampled `points` of the dictionary members, increasing.
    pub fn dictionary_indices(&self) -> &[usize] {
        &self.indices
    }

    /// The dictionary points.
    pub fn dictionary(&self) -> &[Vec<f64>] {
        &self.dictionary
    }

    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// φ̃(x) = (K_𝒟^{1/2})⁺ k_𝒟(x), an m-vector.
    pub fn features(&self, x: &[f64]) -> Result<DVector<f64>, NystromError> {
        if let Some(first) = self.dictionary.first()
            && first.len() != x.len()
        {
            return Err(KernelError::DimensionMismatch { expected: first.len(), found: x.len() }.into());
        }
        if x.iter().any(|c| !c.is_finite()) {
            return Err(KernelError::NonFinitePoint { index: 0 }.into());
        }
        let mut kx = DVector::zeros(self.dim());
        for (row, u) in self.dictionary.iter().enumerate() {
            let v = self.kernel.eval(u, x);
            if !v.is_finite() {
                return Err(KernelError::NonFiniteValue { row, col: 0 }.into());
            }
            kx[row] = v;
        }
        Ok(&self.projection * kx)
    }

    /// The feature matrix Φ̃ with row i = φ̃(x_i)ᵀ (points.len() × m).
    pub fn feature_matrix(&self, points: &[Vec<f64>]) -> Result<DMatrix<f64>, NystromError> {
        let mut phi = DMatrix::zeros(points.len(), self.dim());
        for (i, p) in points.iter().enumerate() {
            let f = self.features(p).map_err(|e| match e {
                NystromError::Kernel(KernelError::NonFinitePoint { .. }) => {
                    KernelError::NonFinitePoint { index: i }.into()
                }
                NystromError::Kernel(KernelError::NonFiniteValue { row, .. }) => {
                    KernelError::NonFiniteValue { row, col: i }.into()
                }
                other => other,
            })?;
            phi.set_row(i, &f.transpose());
        }
        Ok(phi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gp::posterior::tests::kernel_by_id;
    use crate::gp::{FinitePosterior, Matern, MaternNu, SquaredExponential};
    use proptest::prelude::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Seed 000 Alg. 1 lines 8, 13 with θ̃ = Ṽ⁻¹Φ̃ᵀy: the ridge posterior in feature space,
    /// μ̃(x) = φ̃(x)ᵀ Ṽ⁻¹ Φ̃ᵀ y, σ̃²(x) = k(x,x) − φ̃(x)ᵀφ̃(x) + λ φ̃(x)ᵀ Ṽ⁻¹ φ̃(x),
    /// Ṽ = Φ̃ᵀΦ̃ + λI.
    fn feature_posterior<K: Kernel>(
        emb: &NystromEmbedding<K>,
        train: &[Vec<f64>],
        y: &[f64],
        lambda: f64,
        x: &[f64],
    ) -> (f64, f64) {
        let phi = emb.feature_matrix(train).unwrap();
        let m = emb.dim();
        let v = phi.transpose() * &phi + DMatrix::identity(m, m) * lambda;
        let chol = v.cholesky().unwrap();
        let theta = chol.solve(&(phi.transpose() * DVector::from_column_slice(y)));
        let f = emb.features(x).unwrap();
        let mean = f.dot(&theta);
        let var = emb.kernel().eval(x, x) - f.dot(&f) + lambda * f.dot(&chol.solve(&f));
        (mean, var)
    }

    proptest! {
        #[test]
        fn full_dictionary_reproduces_exact_gp(
            kernel_id in 0u8..4,
            l in 0.1f64..1.0,
            lambda in 0.1f64..2.0,
            n in 2usize..10,
            extra in prop::collection::vec((0usize..100, -2.0f64..2.0), 0..15),
            first_ys in prop::collection::vec(-2.0f64..2.0, 10),
            seed in any::<u64>(),
        ) {
            // Domain: n evenly spaced points of [0,1]; the training sequence visits every domain
            // point once, then repeats some, so the dictionary (q huge) spans the domain.
            let kernel = kernel_by_id(kernel_id, l);
            let domain: Vec<Vec<f64>> = (0..n).map(|i| vec![i as f64 / (n - 1) as f64]).collect();
            let mut idx: Vec<usize> = (0..n).collect();
            let mut ys: Vec<f64> = first_ys[..n].to_vec();
            for (i, y) in &extra {
                idx.push(i % n);
                ys.push(*y);
            }
            let train: Vec<Vec<f64>> = idx.iter().map(|&i| domain[i].clone()).collect();
            let variances = vec![0.5; train.len()];
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let emb = NystromEmbedding::sample(kernel.as_ref(), &train, &variances, 1e12, &mut rng).unwrap();
            prop_assert_eq!(emb.dim(), train.len());

            // φ̃(x)ᵀφ̃(y) = k(x, y) on the domain, tolerance 1e-7 absolute (entries ≤ 1; the
            // pseudo-inverse cut is 1e-10 · λ_max ≤ 1e-10 · 25).
            let phi = emb.feature_matrix(&domain).unwrap();
            let k = gram_matrix(kernel.as_ref(), &domain).unwrap();
            let rec = &phi * phi.transpose();
            prop_assert!((rec - &k).amax() < 1e-7);

            let mut gp = FinitePosterior::from_kernel(kernel.as_ref(), &domain, lambda).unwrap();
            for (&i, &y) in idx.iter().zip(&ys) {
                gp.observe(i, y).unwrap();
            }
            // Feature-space posterior = exact GP posterior, tolerance 1e-6 (1 + |exact|).
            for (x, point) in domain.iter().enumerate() {
                let (mean, var) = feature_posterior(&emb, &train, &ys, lambda, point);
                let (em, ev) = (gp.mean(x).unwrap(), gp.variance(x).unwrap());
                prop_assert!((mean - em).abs() <= 1e-6 * (1.0 + em.abs()), "mean {} vs {}", mean, em);
                prop_assert!((var - ev).abs() <= 1e-6 * (1.0 + ev.abs()), "var {} vs {}", var, ev);
            }
        }
    }

    #[test]
    fn inclusion_frequency_matches_probability() {
        // p_i = min(q σ̃², 1) = 0.3 for 1600 of 2000 points: that part of the dictionary has
        // Binomial(1600, 0.3) size, mean 480, sd ≈ 18.3; accept within 6 sd (false alarm
        // < 1e-8). Points with σ̃² = 0 are never kept, points with q σ̃² ≥ 1 always are.
        let k = Matern::new(MaternNu::Half, 0.2).unwrap();
        let t = 2000;
        let pts: Vec<Vec<f64>> = (0..t).map(|i| vec![(i % 7) as f64]).collect();
        let variances: Vec<f64> = (0..t)
            .map(|i| match i % 10 {
                0 => 0.0,
                1 => 5.0,
                _ => 0.03,
            })
            .collect();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
        let emb = NystromEmbedding::sample(&k, &pts, &variances, 10.0, &mut rng).unwrap();
        let kept = emb.dictionary_indices();
        assert!(kept.iter().all(|i| i % 10 != 0));
        assert_eq!(kept.iter().filter(|&&i| i % 10 == 1).count(), t / 10);
        let middle = kept.iter().filter(|&&i| i % 10 >= 2).count() as f64;
        let (n, p) = (0.8 * t as f64, 0.3);
        let sd = (n * p * (1.0 - p)).sqrt();
        assert!((middle - n * p).abs() < 6.0 * sd, "{middle}");
        // Same seed, same dictionary.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
        let again = NystromEmbedding::sample(&k, &pts, &variances, 10.0, &mut rng).unwrap();
        assert_eq!(again.dictionary_indices(), kept);
        // Many repeats of 7 distinct points: K_𝒟 has rank 7.
        assert_eq!(emb.rank(), 7);
    }

    #[test]
    fn empty_dictionary_gives_zero_dimensional_features() {
        let k = SquaredExponential::new(1.0).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let emb = NystromEmbedding::sample(k, &[vec![0.0]], &[0.0], 1.0, &mut rng).unwrap();
        assert_eq!(emb.dim(), 0);
        assert_eq!(emb.features(&[3.0]).unwrap().len(), 0);
        assert_eq!(emb.feature_matrix(&[vec![1.0]]).unwrap().shape(), (1, 0));
    }

    #[test]
    fn invalid_inputs_have_their_own_variants() {
        let k = SquaredExponential::new(1.0).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let pts = vec![vec![0.0], vec![1.0]];
        for q in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                NystromEmbedding::sample(k, &pts, &[1.0, 1.0], q, &mut rng),
                Err(NystromError::InvalidQ(_))
            ));
        }
        assert_eq!(
            NystromEmbedding::sample(k, &pts, &[1.0], 1.0, &mut rng).err(),
            Some(NystromError::LengthMismatch { points: 2, variances: 1 })
        );
        for bad in [-1e-3, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                NystromEmbedding::sample(k, &pts, &[1.0, bad], 1.0, &mut rng),
                Err(NystromError::InvalidVariance { index: 1, .. })
            ));
        }
        assert_eq!(
            NystromEmbedding::sample(k, &[vec![0.0], vec![0.0, 1.0]], &[1.0, 1.0], 1.0, &mut rng).err(),
            Some(NystromError::Kernel(KernelError::DimensionMismatch { expected: 1, found: 2 }))
        );
        let emb = NystromEmbedding::from_dictionary(k, pts).unwrap();
        assert_eq!(
            emb.features(&[0.0, 0.0]).err(),
            Some(NystromError::Kernel(KernelError::DimensionMismatch { expected: 1, found: 2 }))
        );
        assert_eq!(
            emb.feature_matrix(&[vec![0.0], vec![f64::NAN]]).err(),
            Some(NystromError::Kernel(KernelError::NonFinitePoint { index: 1 }))
        );
    }
}
