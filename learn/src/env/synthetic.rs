//! Synthetic RKHS functions on a grid of [0, 1] (Zhou & Tan §5.1 "Synthetic data", SPEC §2.3).
//!
//! Domain D = 100 evenly spaced points x_j = j/99 of [0, 1]. The function is
//! f = Σ_{i=1}^{100} a_i k(·, x_i) with a_i ~ U[−1, 1] i.i.d. and the support points x_i = the
//! domain points, then divided by max_D |f|. The paper sets B = max_D |f|; like the original
//! authors' MATLAB code (SPEC §2.2) we normalise instead, so max_D |f| = 1 and B = 1.

use std::fmt;

use nalgebra::{DMatrix, DVector};
use rand::RngExt;

use super::noise::{Noise, NoiseError};
use super::{Arms, Environment, SimRng};
use crate::gp::{KernelError, Matern, MaternNu, SquaredExponential, gram_matrix};

/// Number of grid points (and support points) of Zhou & Tan §5.1.
pub const NUM_POINTS: usize = 100;

/// The kernel lengthscale of Zhou & Tan §5.1.
pub const PAPER_LENGTHSCALE: f64 = 0.2;

/// The kernels of Zhou & Tan §5.1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SyntheticKernel {
    /// Squared exponential with lengthscale l (paper: l = 0.2).
    SquaredExponential {
        /// Lengthscale l.
        lengthscale: f64,
    },
    /// Matérn ν = 5/2 with lengthscale l (paper: l = 0.2).
    Matern52 {
        /// Lengthscale l.
        lengthscale: f64,
    },
}

impl SyntheticKernel {
    /// SE with l = 0.2 (Zhou & Tan §5.1).
    pub const PAPER_SE: SyntheticKernel =
        SyntheticKernel::SquaredExponential { lengthscale: PAPER_LENGTHSCALE };
    /// Matérn ν = 2.5 with l = 0.2 (Zhou & Tan §5.1).
    pub const PAPER_MATERN: SyntheticKernel = SyntheticKernel::Matern52 { lengthscale: PAPER_LENGTHSCALE };

    /// The Gram matrix over `points`.
    fn gram(&self, points: &[Vec<f64>]) -> Result<DMatrix<f64>, KernelError> {
        match *self {
            SyntheticKernel::SquaredExponential { lengthscale } => {
                gram_matrix(&SquaredExponential::new(lengthscale)?, points)
            }
            SyntheticKernel::Matern52 { lengthscale } => {
                gram_matrix(&Matern::new(MaternNu::FiveHalves, lengthscale)?, points)
            }
        }
    }

    fn short_name(&self) -> &'static str {
        match self {
            SyntheticKernel::SquaredExponential { .. } => "se",
            SyntheticKernel::Matern52 { .. } => "matern52",
        }
    }
}

/// Why a synthetic environment could not be built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SyntheticError {
    /// The kernel parameters were rejected.
    Kernel(KernelError),
    /// The noise parameters were rejected, or it has no finite (1+α)-th moment.
    Noise(NoiseError),
    /// The drawn function is identically zero (or not finite) on the grid, so it cannot be
    /// normalised; draw again with another seed.
    DegenerateFunction,
}

impl fmt::Display for SyntheticError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Kernel(e) => write!(f, "synthetic environment kernel: {e}"),
            Self::Noise(e) => write!(f, "synthetic environment noise: {e}"),
            Self::DegenerateFunction => write!(
                f,
                "the drawn function is zero or not finite on the grid and cannot be normalised; \
                 use another seed"
            ),
        }
    }
}

impl std::error::Error for SyntheticError {}

impl From<KernelError> for SyntheticError {
    fn from(e: KernelError) -> Self {
        Self::Kernel(e)
    }
}

impl From<NoiseError> for SyntheticError {
    fn from(e: NoiseError) -> Self {
        Self::Noise(e)
    }
}

/// A synthetic RKHS-function environment (Zhou & Tan §5.1); one instance per trial seed.
#[derive(Clone, Debug)]
pub struct SyntheticRkhs {
    arms: Arms,
    coefficients: Vec<f64>,
    normaliser: f64,
    noise: Noise,
}

impl SyntheticRkhs {
    /// Draws a_1..a_100 ~ U[−1, 1] from `rng` (in order) and builds
    /// f = (Σ a_i k(·, x_i)) / max_D |Σ a_i k(·, x_i)|.
    ///
    /// The prior covariance is the kernel's Gram matrix over the grid. The bounds are B = 1,
    /// R = the noise bound, α = [`Noise::default_alpha`] (1 for the paper's noises) and v from
    /// [`Noise::reward_bounds`] (v = B² + E η², e.g. 1 + 3 for Student-t(3)).
    pub fn new(kernel: SyntheticKernel, noise: Noise, rng: &mut SimRng) -> Result<Self, SyntheticError> {
        let noise = noise.validate()?;
        let bounds = noise.reward_bounds(1.0, noise.default_alpha())?;
        let points = super::unit_grid(NUM_POINTS);
        let covariance = kernel.gram(&points)?;
        let coefficients: Vec<f64> = (0..NUM_POINTS).map(|_| rng.random_range(-1.0..=1.0)).collect();
        let raw = &covariance * DVector::from_column_slice(&coefficients);
        let normaliser = raw.amax();
        if !(normaliser.is_finite() && normaliser > 0.0) {
            return Err(SyntheticError::DegenerateFunction);
        }
        let means: Vec<f64> = raw.iter().map(|v| v / normaliser).collect();
        let name = format!("synthetic-{}", kernel.short_name());
        Ok(Self { arms: Arms::new(name, points, means, covariance, bounds), coefficients, normaliser, noise })
    }

    /// The drawn coefficients a_i (before normalisation).
    pub fn coefficients(&self) -> &[f64] {
        &self.coefficients
    }

    /// max_D |Σ a_i k(·, x_i)|, the factor f was divided by.
    pub fn normaliser(&self) -> f64 {
        self.normaliser
    }

    /// The noise model.
    pub fn noise(&self) -> Noise {
        self.noise
    }

    /// All means f(x_1..x_100).
    pub fn means(&self) -> &[f64] {
        self.arms.means()
    }
}

impl Environment for SyntheticRkhs {
    fn arms(&self) -> &Arms {
        &self.arms
    }

    /// f(x_arm) + η; NaN for an arm out of range.
    fn sample(&self, arm: usize, rng: &mut SimRng) -> f64 {
        self.arms.mean(arm) + self.noise.sample(rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gp::FiniteCovariance;
    use rand_core::SeedableRng;

    fn build(kernel: SyntheticKernel, noise: Noise, seed: u64) -> SyntheticRkhs {
        SyntheticRkhs::new(kernel, noise, &mut SimRng::seed_from_u64(seed)).unwrap()
    }

    #[test]
    fn env_synthetic_is_normalised_with_100_arms_on_the_grid() {
        for kernel in [SyntheticKernel::PAPER_SE, SyntheticKernel::PAPER_MATERN] {
            for seed in 0..5 {
                let env = build(kernel, Noise::PAPER_LDP, seed);
                assert_eq!(env.num_arms(), 100);
                let max_abs = env.means().iter().fold(0.0f64, |m, v| m.max(v.abs()));
                assert!((max_abs - 1.0).abs() < 1e-12, "max |f| = {max_abs}");
                let best = (0..100).map(|a| env.mean(a)).fold(f64::NEG_INFINITY, f64::max);
                assert_eq!(env.best_mean(), best);
                assert_eq!(env.point(0), &[0.0]);
                assert_eq!(env.point(99), &[1.0]);
                assert!((env.point(33)[0] - 1.0 / 3.0).abs() < 1e-15);
                assert!(env.coefficients().iter().all(|a| (-1.0..=1.0).contains(a)));
                // f is the normalised kernel combination.
                let k = env.prior_covariance();
                let f7: f64 = (0..100).map(|i| env.coefficients()[i] * k[(7, i)]).sum();
                assert!((f7 / env.normaliser() - env.mean(7)).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn env_synthetic_prior_covariance_is_symmetric_psd_unit_diagonal() {
        for kernel in [SyntheticKernel::PAPER_SE, SyntheticKernel::PAPER_MATERN] {
            let env = build(kernel, Noise::PAPER_LDP, 3);
            let k = env.prior_covariance();
            assert_eq!(k.shape(), (100, 100));
            assert_eq!(k, &k.transpose());
            assert!((0..100).all(|i| (k[(i, i)] - 1.0).abs() < 1e-15));
            let fc = FiniteCovariance::new(k.clone()).unwrap();
            fc.check_positive_semidefinite(1e-10).unwrap();
        }
    }

    #[test]
    fn env_synthetic_same_seed_same_instance_different_seed_differs() {
        let a = build(SyntheticKernel::PAPER_SE, Noise::PAPER_LDP, 42);
        let b = build(SyntheticKernel::PAPER_SE, Noise::PAPER_LDP, 42);
        let c = build(SyntheticKernel::PAPER_SE, Noise::PAPER_LDP, 43);
        assert_eq!(a.means(), b.means());
        assert_eq!(a.coefficients(), b.coefficients());
        assert_ne!(a.means(), c.means());
        // The reward stream is a function of the sampling RNG only.
        let mut r1 = SimRng::seed_from_u64(9);
        let mut r2 = SimRng::seed_from_u64(9);
        let s1: Vec<f64> = (0..50).map(|t| a.sample(t % 100, &mut r1)).collect();
        let s2: Vec<f64> = (0..50).map(|t| b.sample(t % 100, &mut r2)).collect();
        assert_eq!(s1, s2);
    }

    #[test]
    fn env_synthetic_sample_mean_matches_f_within_clt_bound() {
        // Uniform noise: Var η = 1/3; 5.33 standard errors ≈ 1e-7 two-sided false alarm.
        let env = build(SyntheticKernel::PAPER_MATERN, Noise::PAPER_LDP, 7);
        let mut rng = SimRng::seed_from_u64(70);
        let n = 100_000;
        for arm in [0, 50, 99] {
            let mean = (0..n).map(|_| env.sample(arm, &mut rng)).sum::<f64>() / n as f64;
            let tol = 5.33 * (1.0 / 3.0 / n as f64).sqrt();
            assert!((mean - env.mean(arm)).abs() < tol, "arm {arm}: {mean} vs {}", env.mean(arm));
        }
        // Every reward stays within B + R = 2.
        assert!((0..10_000).all(|t| env.sample(t % 100, &mut rng).abs() <= 2.0));
    }

    #[test]
    fn env_synthetic_bounds_follow_the_paper() {
        let env = build(SyntheticKernel::PAPER_SE, Noise::PAPER_HEAVY_TAILED, 1);
        assert_eq!(env.bounds(), crate::env::RewardBounds { b: 1.0, r: None, alpha: 1.0, v: 4.0, c: 3.0 });
        let env = build(SyntheticKernel::PAPER_SE, Noise::PAPER_LDP, 1);
        assert_eq!(env.bounds().r, Some(1.0));
        assert_eq!(env.bounds().alpha, 1.0);
        assert_eq!(env.name(), "synthetic-se");
        assert!(env.mean(100).is_nan() && env.point(100).is_empty());
    }

    #[test]
    fn env_synthetic_rejects_bad_parameters() {
        let mut rng = SimRng::seed_from_u64(0);
        let bad_l = SyntheticKernel::SquaredExponential { lengthscale: 0.0 };
        assert!(matches!(
            SyntheticRkhs::new(bad_l, Noise::PAPER_LDP, &mut rng),
            Err(SyntheticError::Kernel(KernelError::InvalidLengthscale(_)))
        ));
        let bad_noise = Noise::Uniform { r: -1.0 };
        assert!(matches!(
            SyntheticRkhs::new(SyntheticKernel::PAPER_SE, bad_noise, &mut rng),
            Err(SyntheticError::Noise(NoiseError::InvalidBound(_)))
        ));
    }
}
