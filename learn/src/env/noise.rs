//! Zero-mean observation noise η for the synthetic environments (SPEC §2.3).
//!
//! Seed 000/001 §5.1 uses U[−1, 1] noise for the LDP experiments (R = 1) and Student-t noise with
//! 3 degrees of freedom for the non-private heavy-tailed ones (E η² = 3, so v = B² + 3). This
//! module also offers a Gaussian and a centred Pareto noise for further experiments.

use std::fmt;

use rand::{Rng, RngExt};
use rand_distr::{Distribution, StandardNormal, StudentT};

use super::RewardBounds;

/// Degrees of freedom of the heavy-tailed noise of Zhou & Tan §5.1.
pub const DEFAULT_STUDENT_T_NU: f64 = 3.0;

/// A zero-mean noise distribution.
///
/// Build it with the checked constructors ([`Noise::uniform`], …) or use the paper constants
/// [`Noise::PAPER_LDP`] and [`Noise::PAPER_HEAVY_TAILED`]. A variant written by hand with invalid
/// parameters is rejected by [`Noise::validate`] (which every environment constructor calls);
/// [`Noise::sample`] returns NaN for it rather than panicking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Noise {
    /// η ~ U[−r, r], bounded by R = r. Needs r finite, r ≥ 0.
    Uniform {
        /// Half-width r = R.
        r: f64,
    },
    /// Student's t with ν degrees of freedom (unit scale). Needs ν > 1 (a finite mean);
    /// E η² = ν/(ν−2) for ν > 2, infinite otherwise.
    StudentT {
        /// Degrees of freedom ν.
        nu: f64,
    },
    /// Centred Pareto: η = X − E X where X ~ Pareto(scale λ, shape s), i.e.
    /// P(X > x) = (λ/x)^s for x ≥ λ, and E X = sλ/(s−1). Zero mean but right-skewed, with support
    /// [λ − sλ/(s−1), ∞). Needs s > 1 and λ > 0; E|η|^p < ∞ exactly when p < s.
    CentredPareto {
        /// Shape s (tail index).
        shape: f64,
        /// Scale λ (the minimum of X).
        scale: f64,
    },
    /// Gaussian N(0, σ²). Needs σ finite, σ ≥ 0.
    Gaussian {
        /// Standard deviation σ.
        sigma: f64,
    },
}

/// Why a noise model was rejected.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NoiseError {
    /// Uniform half-width that is negative or not finite.
    InvalidBound(f64),
    /// Student-t degrees of freedom that are not finite or ≤ 1 (no finite mean).
    InvalidDegreesOfFreedom(f64),
    /// Pareto shape ≤ 1 (no finite mean) or not finite.
    InvalidShape(f64),
    /// Pareto scale that is not finite and > 0.
    InvalidScale(f64),
    /// Gaussian standard deviation that is negative or not finite.
    InvalidSigma(f64),
    /// α outside (0, 1], or the noise has no finite (1+α)-th moment.
    NoMoment {
        /// The α asked for.
        alpha: f64,
    },
}

impl fmt::Display for NoiseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidBound(r) => write!(f, "uniform noise bound must be finite and >= 0, got {r}"),
            Self::InvalidDegreesOfFreedom(nu) => {
                write!(f, "Student-t degrees of freedom must be finite and > 1 (finite mean), got {nu}")
            }
            Self::InvalidShape(s) => {
                write!(f, "Pareto shape must be finite and > 1 (finite mean), got {s}")
            }
            Self::InvalidScale(l) => write!(f, "Pareto scale must be finite and > 0, got {l}"),
            Self::InvalidSigma(s) => write!(f, "Gaussian sigma must be finite and >= 0, got {s}"),
            Self::NoMoment { alpha } => write!(
                f,
                "alpha = {alpha}: need alpha in (0, 1] and a finite (1+alpha)-th noise moment; \
                 use a smaller alpha or a lighter-tailed noise"
            ),
        }
    }
}

impl std::error::Error for NoiseError {}

impl Noise {
    /// U[−1, 1], the LDP experiments' noise (Zhou & Tan §5.1, R = 1).
    pub const PAPER_LDP: Noise = Noise::Uniform { r: 1.0 };
    /// Student-t with 3 degrees of freedom, the heavy-tailed experiments' noise (Zhou & Tan
    /// §5.1, E η² = 3).
    pub const PAPER_HEAVY_TAILED: Noise = Noise::StudentT { nu: DEFAULT_STUDENT_T_NU };

    /// U[−r, r].
    pub fn uniform(r: f64) -> Result<Self, NoiseError> {
        Noise::Uniform { r }.validate()
    }

    /// Student-t with `nu` degrees of freedom.
    pub fn student_t(nu: f64) -> Result<Self, NoiseError> {
        Noise::StudentT { nu }.validate()
    }

    /// Centred Pareto with the given shape and scale (see [`Noise::CentredPareto`]).
    pub fn centred_pareto(shape: f64, scale: f64) -> Result<Self, NoiseError> {
        Noise::CentredPareto { shape, scale }.validate()
    }

    /// N(0, σ²).
    pub fn gaussian(sigma: f64) -> Result<Self, NoiseError> {
        Noise::Gaussian { sigma }.validate()
    }

    /// Checks the parameters; returns the noise unchanged when valid.
    pub fn validate(self) -> Result<Self, NoiseError> {
        match self {
            Noise::Uniform { r } if !(r.is_finite() && r >= 0.0) => Err(NoiseError::InvalidBound(r)),
            Noise::StudentT { nu } if !(nu.is_finite() && nu > 1.0) => {
                Err(NoiseError::InvalidDegreesOfFreedom(nu))
            }
            Noise::CentredPareto { shape, .. } if !(shape.is_finite() && shape > 1.0) => {
                Err(NoiseError::InvalidShape(shape))
            }
            Noise::CentredPareto { scale, .. } if !(scale.is_finite() && scale > 0.0) => {
                Err(NoiseError::InvalidScale(scale))
            }
            Noise::Gaussian { sigma } if !(sigma.is_finite() && sigma >= 0.0) => {
                Err(NoiseError::InvalidSigma(sigma))
            }
            valid => Ok(valid),
        }
    }

    /// One draw of η; NaN if the parameters are invalid (see [`Noise::validate`]).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        if self.validate().is_err() {
            return f64::NAN;
        }
        match *self {
            // random::<f64>() ∈ [0, 1), so η ∈ [−r, r).
            Noise::Uniform { r } => r * (2.0 * rng.random::<f64>() - 1.0),
            Noise::StudentT { nu } => StudentT::new(nu).map_or(f64::NAN, |d| d.sample(rng)),
            Noise::CentredPareto { shape, scale } => {
                // Inverse CDF with U ∈ (0, 1]: X = λ U^{−1/s}.
                let u = 1.0 - rng.random::<f64>();
                scale * u.powf(-1.0 / shape) - pareto_mean(shape, scale)
            }
            Noise::Gaussian { sigma } => {
                let z: f64 = StandardNormal.sample(rng);
                sigma * z
            }
        }
    }

    /// R: the almost-sure bound on |η| (`Some` only for uniform noise).
    pub fn bound(&self) -> Option<f64> {
        match *self {
            Noise::Uniform { r } => Some(r),
            _ => None,
        }
    }

    /// E|η|^p for p > 0, `None` when it is infinite (or p or the parameters are invalid).
    ///
    /// Exact for uniform (R^p/(p+1)), Gaussian (σ^p 2^{p/2} Γ((p+1)/2)/√π) and Student-t
    /// (ν^{p/2} Γ((p+1)/2) Γ((ν−p)/2) / (√π Γ(ν/2)), p < ν), and for every model at p = 2
    /// (the variance; ν/(ν−2) for Student-t, sλ²/((s−1)²(s−2)) for centred Pareto). For the
    /// centred Pareto at p ≠ 2 it is the upper bound E X^p + (E X)^p = sλ^p/(s−p) + (E X)^p
    /// (from |X − E X| ≤ max(X, E X)), which is what a moment constant v needs.
    pub fn abs_moment(&self, p: f64) -> Option<f64> {
        if !(p.is_finite() && p > 0.0) || self.validate().is_err() {
            return None;
        }
        // Orders within 1e-12 of 2 take the closed-form variance; the general formulas agree
        // with it there to a few ulp.
        let variance = (p - 2.0).abs() <= 1e-12;
        let value = match *self {
            Noise::Uniform { r } if variance => r * r / 3.0,
            Noise::Uniform { r } => r.powf(p) / (p + 1.0),
            Noise::Gaussian { sigma } if variance => sigma * sigma,
            Noise::Gaussian { sigma } => {
                sigma.powf(p) * 2f64.powf(p / 2.0) * libm::tgamma((p + 1.0) / 2.0)
                    / std::f64::consts::PI.sqrt()
            }
            Noise::StudentT { nu } if p >= nu => return None,
            Noise::StudentT { nu } if variance => nu / (nu - 2.0),
            Noise::StudentT { nu } => {
                nu.powf(p / 2.0) * libm::tgamma((p + 1.0) / 2.0) * libm::tgamma((nu - p) / 2.0)
                    / (std::f64::consts::PI.sqrt() * libm::tgamma(nu / 2.0))
            }
            Noise::CentredPareto { shape, .. } if p >= shape => return None,
            Noise::CentredPareto { shape, scale } if variance => {
                shape * scale * scale / ((shape - 1.0) * (shape - 1.0) * (shape - 2.0))
            }
            Noise::CentredPareto { shape, scale } => {
                shape * scale.powf(p) / (shape - p) + pareto_mean(shape, scale).powf(p)
            }
        };
        value.is_finite().then_some(value)
    }

    /// The α the environments report: 1 when E η² < ∞; otherwise (tail index − 1)/2, halfway
    /// into the range (0, tail index − 1) of orders 1+α with a finite moment.
    pub fn default_alpha(&self) -> f64 {
        match *self {
            Noise::StudentT { nu } if nu <= 2.0 => (nu - 1.0) / 2.0,
            Noise::CentredPareto { shape, .. } if shape <= 2.0 => (shape - 1.0) / 2.0,
            _ => 1.0,
        }
    }

    /// The reward constants for y = f(x) + η with |f| ≤ `b` and this noise.
    ///
    /// v bounds E|y|^{1+α}: for α = 1 it is B² + E η² (exact for the worst arm, as η has zero
    /// mean: Zhou & Tan §5.1 writes v = B² + 3 for Student-t(3)); for α < 1 it is
    /// 2^α (B^{1+α} + E|η|^{1+α}) by convexity of t ↦ t^{1+α}.
    pub fn reward_bounds(&self, b: f64, alpha: f64) -> Result<RewardBounds, NoiseError> {
        let noise = self.validate()?;
        if !(alpha > 0.0 && alpha <= 1.0) {
            return Err(NoiseError::NoMoment { alpha });
        }
        let moment = noise.abs_moment(1.0 + alpha).ok_or(NoiseError::NoMoment { alpha })?;
        // α ∈ (0, 1] was checked: `α ≥ 1` is α = 1, where the exact formula applies.
        let v = if alpha >= 1.0 {
            b * b + moment
        } else {
            2f64.powf(alpha) * (b.abs().powf(1.0 + alpha) + moment)
        };
        Ok(RewardBounds { b, r: noise.bound(), alpha, v, c: moment })
    }
}

/// E X = sλ/(s−1) for X ~ Pareto(λ, s), s > 1.
fn pareto_mean(shape: f64, scale: f64) -> f64 {
    shape * scale / (shape - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::SimRng;
    use rand_core::SeedableRng;

    const N: usize = 200_000;
    /// Two-sided normal quantile for a 1e-7 false-alarm rate.
    const Z: f64 = 5.33;

    fn draws(noise: Noise, seed: u64) -> Vec<f64> {
        let mut rng = SimRng::seed_from_u64(seed);
        (0..N).map(|_| noise.sample(&mut rng)).collect()
    }

    fn fraction_above(xs: &[f64], t: f64) -> f64 {
        xs.iter().filter(|x| x.abs() > t).count() as f64 / xs.len() as f64
    }

    /// |p̂ − p| within Z binomial standard errors.
    fn assert_proportion(p_hat: f64, p: f64) {
        let tol = Z * (p * (1.0 - p) / N as f64).sqrt();
        assert!((p_hat - p).abs() < tol, "p̂ = {p_hat}, p = {p}, tol = {tol}");
    }

    #[test]
    fn env_noise_rejects_invalid_parameters() {
        assert_eq!(Noise::uniform(-1.0), Err(NoiseError::InvalidBound(-1.0)));
        assert!(matches!(Noise::uniform(f64::NAN), Err(NoiseError::InvalidBound(_))));
        assert_eq!(Noise::student_t(1.0), Err(NoiseError::InvalidDegreesOfFreedom(1.0)));
        assert_eq!(Noise::centred_pareto(0.9, 1.0), Err(NoiseError::InvalidShape(0.9)));
        assert_eq!(Noise::centred_pareto(3.0, 0.0), Err(NoiseError::InvalidScale(0.0)));
        assert_eq!(Noise::gaussian(-0.1), Err(NoiseError::InvalidSigma(-0.1)));
        let mut rng = SimRng::seed_from_u64(1);
        assert!(Noise::StudentT { nu: 0.5 }.sample(&mut rng).is_nan());
        assert_eq!(Noise::PAPER_LDP.validate(), Ok(Noise::Uniform { r: 1.0 }));
        assert_eq!(Noise::PAPER_HEAVY_TAILED.validate(), Noise::student_t(3.0));
    }

    #[test]
    fn env_noise_uniform_never_exceeds_bound_and_has_variance_r2_over_3() {
        let noise = Noise::uniform(1.0).unwrap();
        let xs = draws(noise, 11);
        assert!(xs.iter().all(|x| x.abs() <= 1.0));
        assert_eq!(noise.bound(), Some(1.0));
        // Both halves of the interval are reached.
        assert!(xs.iter().any(|&x| x > 0.99) && xs.iter().any(|&x| x < -0.99));
        assert_eq!(noise.abs_moment(2.0), Some(1.0 / 3.0));
        // P(|η| > 0.5) = 0.5.
        assert_proportion(fraction_above(&xs, 0.5), 0.5);
    }

    #[test]
    fn env_noise_student_t3_tails_match_quantiles() {
        let noise = Noise::PAPER_HEAVY_TAILED;
        let xs = draws(noise, 12);
        // t(3): P(|T| > 3.182446) = 0.05, P(|T| > 0.764892) = 0.5, P(|T| > 5.840909) = 0.01.
        assert_proportion(fraction_above(&xs, 3.182_446), 0.05);
        assert_proportion(fraction_above(&xs, 0.764_892), 0.5);
        assert_proportion(fraction_above(&xs, 5.840_909), 0.01);
        assert_eq!(noise.bound(), None);
        assert_eq!(noise.abs_moment(2.0), Some(3.0));
        assert_eq!(noise.abs_moment(3.0), None);
        // E|T| = 2√3/π for ν = 3.
        let m1 = noise.abs_moment(1.0).unwrap();
        assert!((m1 - 2.0 * 3f64.sqrt() / std::f64::consts::PI).abs() < 1e-12);
        // The second moment only loosely (heavy tails): the sample variance is not far off 3.
        let var = xs.iter().map(|x| x * x).sum::<f64>() / N as f64;
        assert!(var > 2.0 && var < 6.0, "variance {var}");
    }

    #[test]
    fn env_noise_gaussian_tails_and_moments() {
        let noise = Noise::gaussian(2.0).unwrap();
        let xs = draws(noise, 13);
        assert_proportion(fraction_above(&xs, 2.0 * 1.959_964), 0.05);
        assert_eq!(noise.abs_moment(2.0), Some(4.0));
        let m1 = noise.abs_moment(1.0).unwrap();
        assert!((m1 - 2.0 * (2.0 / std::f64::consts::PI).sqrt()).abs() < 1e-12);
        // The p = 2 closed form agrees with the general formula.
        let m2 = noise.abs_moment(2.000_000_001).unwrap();
        assert!((m2 - 4.0).abs() < 1e-6);
    }

    #[test]
    fn env_noise_centred_pareto_has_zero_mean_and_support() {
        let (shape, scale) = (3.0, 1.0);
        let noise = Noise::centred_pareto(shape, scale).unwrap();
        let xs = draws(noise, 14);
        let lower = scale - shape * scale / (shape - 1.0);
        assert!(xs.iter().all(|&x| x >= lower - 1e-12));
        let mean = xs.iter().sum::<f64>() / N as f64;
        let var = noise.abs_moment(2.0).unwrap();
        assert!((var - 0.75).abs() < 1e-12);
        // CLT bound on the mean (finite variance at shape 3).
        assert!(mean.abs() < Z * (var / N as f64).sqrt(), "mean {mean}");
        // P(η > t) = (λ/(t + E X))^s.
        let t = 1.0;
        let p = (scale / (t + 1.5f64)).powf(shape);
        let p_hat = xs.iter().filter(|&&x| x > t).count() as f64 / N as f64;
        assert_proportion(p_hat, p);
        assert_eq!(noise.abs_moment(3.0), None);
    }

    #[test]
    fn env_noise_reward_bounds() {
        let b = Noise::PAPER_HEAVY_TAILED.reward_bounds(1.0, 1.0).unwrap();
        assert_eq!(b, RewardBounds { b: 1.0, r: None, alpha: 1.0, v: 4.0, c: 3.0 });
        let b = Noise::PAPER_LDP.reward_bounds(1.0, 1.0).unwrap();
        assert_eq!(b.r, Some(1.0));
        assert!((b.v - 4.0 / 3.0).abs() < 1e-15);
        // Student-t(1.5) has no second moment: α = 1 is refused, the default α works.
        let heavy = Noise::student_t(1.5).unwrap();
        assert_eq!(heavy.reward_bounds(1.0, 1.0), Err(NoiseError::NoMoment { alpha: 1.0 }));
        assert_eq!(heavy.default_alpha(), 0.25);
        let b = heavy.reward_bounds(1.0, heavy.default_alpha()).unwrap();
        assert!(b.v.is_finite() && b.v > 1.0);
        assert!(Noise::PAPER_LDP.reward_bounds(1.0, 0.0).is_err());
    }
}
