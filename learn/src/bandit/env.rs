//! K-armed environments (SPEC §2.3): Bernoulli and Gaussian arms, the heavy-tailed Pareto
//! instances S1–S3 of Tao et al. §6, and the two-point instance of Tao et al.'s lower-bound proof
//! (Theorem 5). The learner's prior covariance is the identity (bandit policies do not use it).

use nalgebra::DMatrix;
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

use crate::env::{Arms, Environment, RewardBounds, SimRng};

/// The probability with which the device's fallback clamp of a Pareto environment is exceeded
/// by the heaviest arm's reward (see [`KArmedEnv::pareto`]).
pub const PARETO_CLAMP_TAIL: f64 = 1e-6;

/// The reward distribution of one arm.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArmReward {
    /// 1 with probability p, else 0.
    Bernoulli {
        /// p = the mean.
        p: f64,
    },
    /// N(mean, σ²).
    Gaussian {
        /// The mean.
        mean: f64,
        /// σ.
        sigma: f64,
    },
    /// Pareto with density `αλ^α/x^{α+1}` on `x ≥ λ` (Tao et al. §6); mean `αλ/(α−1)`.
    Pareto {
        /// α, the shape.
        shape: f64,
        /// λ, the scale (the minimum reward).
        scale: f64,
    },
    /// `value` with probability p, else 0 (the lower-bound instance of Tao et al. Theorem 5).
    TwoPoint {
        /// The probability of `value`.
        p: f64,
        /// The non-zero reward.
        value: f64,
    },
}

impl ArmReward {
    /// The mean reward.
    pub fn mean(&self) -> f64 {
        match *self {
            Self::Bernoulli { p } => p,
            Self::Gaussian { mean, .. } => mean,
            Self::Pareto { shape, scale } => shape * scale / (shape - 1.0),
            Self::TwoPoint { p, value } => p * value,
        }
    }

    /// One reward.
    pub fn sample(&self, rng: &mut SimRng) -> f64 {
        match *self {
            Self::Bernoulli { p } => f64::from(u8::from(rng.random::<f64>() < p)),
            Self::Gaussian { mean, sigma } => {
                let z: f64 = StandardNormal.sample(rng);
                mean + sigma * z
            }
            Self::Pareto { shape, scale } => {
                // Inverse CDF with U ∈ (0, 1]: X = λ U^{−1/α}.
                let u = 1.0 - rng.random::<f64>();
                scale * u.powf(-1.0 / shape)
            }
            Self::TwoPoint { p, value } => {
                if rng.random::<f64>() < p {
                    value
                } else {
                    0.0
                }
            }
        }
    }
}

/// The Pareto instances of Tao et al. §6: K = 5 arms, means in [0.1, 0.9].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParetoInstance {
    /// S1: gaps decreasing linearly, means {0.9, 0.7, 0.5, 0.3, 0.1}.
    S1,
    /// S2: `μ_a = 0.05(a−5)² + 0.1` (convex: most arms far from the best), {0.9, 0.55, 0.3, 0.15, 0.1}.
    S2,
    /// S3: `μ_a = −0.05(a−1)² + 0.9` (concave: most arms close to the best), {0.9, 0.85, 0.7, 0.45, 0.1}.
    S3,
}

impl ParetoInstance {
    /// The arms' means.
    pub const fn means(self) -> [f64; 5] {
        match self {
            Self::S1 => [0.9, 0.7, 0.5, 0.3, 0.1],
            Self::S2 => [0.9, 0.55, 0.3, 0.15, 0.1],
            Self::S3 => [0.9, 0.85, 0.7, 0.45, 0.1],
        }
    }

    /// Lower-case name (`s1`, `s2`, `s3`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::S1 => "s1",
            Self::S2 => "s2",
            Self::S3 => "s3",
        }
    }

    /// The shape `α = 1.05 + v` of Tao et al. §6, so that the (1+v)-th moment exists.
    pub fn shape(v: f64) -> f64 {
        1.05 + v
    }

    /// The paper's moment bound `u = max_a αλ_a^{1+v}/(α − (1+v))`, `λ_a = (α−1)μ_a/α`: the exact
    /// (1+v)-th moment of the arm with the largest mean.
    ///
    /// ```
    /// use ldp_learn::bandit::ParetoInstance;
    /// let u = ParetoInstance::S1.moment_bound(0.5);
    /// let (shape, scale) = (1.55, 0.55 * 0.9 / 1.55);
    /// assert!((u - shape * f64::powf(scale, 1.5) / 0.05).abs() < 1e-12);
    /// assert!((u - 5.595).abs() < 1e-3);
    /// ```
    pub fn moment_bound(self, v: f64) -> f64 {
        let shape = Self::shape(v);
        self.means()
            .iter()
            .map(|&mu| shape * ((shape - 1.0) * mu / shape).powf(1.0 + v) / (shape - (1.0 + v)))
            .fold(f64::NEG_INFINITY, f64::max)
    }
}

/// An invalid environment parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum KArmedError {
    /// Fewer than two arms.
    TooFewArms,
    /// A mean outside the family's range (Bernoulli: [0, 1]; two-point: [0, 2^{v/(1+v)−1}];
    /// Gaussian: finite).
    MeanOutOfRange(f64),
    /// σ not finite and ≥ 0.
    InvalidSigma(f64),
    /// v not in (0, 1].
    InvalidMomentOrder(f64),
}

impl std::fmt::Display for KArmedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooFewArms => f.write_str("a K-armed environment needs at least 2 arms"),
            Self::MeanOutOfRange(m) => write!(f, "arm mean {m} is outside the family's range"),
            Self::InvalidSigma(s) => write!(f, "sigma must be finite and >= 0, got {s}"),
            Self::InvalidMomentOrder(v) => write!(f, "the moment order v must be in (0, 1], got {v}"),
        }
    }
}

impl std::error::Error for KArmedError {}

/// A K-armed environment: independent arms, each with its own reward distribution.
#[derive(Clone, Debug)]
pub struct KArmedEnv {
    rewards: Vec<ArmReward>,
    arms: Arms,
}

impl KArmedEnv {
    fn build(name: String, arms: Vec<ArmReward>, bounds: RewardBounds) -> Result<Self, KArmedError> {
        if arms.len() < 2 {
            return Err(KArmedError::TooFewArms);
        }
        let means: Vec<f64> = arms.iter().map(ArmReward::mean).collect();
        let points = (0..arms.len()).map(|a| vec![a as f64]).collect();
        let covariance = DMatrix::identity(arms.len(), arms.len());
        Ok(Self { arms: Arms::new(name, points, means, covariance, bounds), rewards: arms })
    }

    /// Bernoulli arms with the given means (each in [0, 1]).
    ///
    /// Bounds: `B = max μ`, `R = max_a max(μ_a, 1 − μ_a)` (so rewards lie in [−(B+R), B+R]),
    /// α = 1, `v = max E y² = max μ`, `c = max μ(1−μ)`.
    pub fn bernoulli(means: &[f64]) -> Result<Self, KArmedError> {
        if let Some(&m) = means.iter().find(|m| !(0.0..=1.0).contains(*m)) {
            return Err(KArmedError::MeanOutOfRange(m));
        }
        let max = |f: &dyn Fn(f64) -> f64| means.iter().map(|&m| f(m)).fold(0.0, f64::max);
        let bounds = RewardBounds {
            b: max(&|m| m).max(f64::MIN_POSITIVE),
            r: Some(max(&|m| m.max(1.0 - m))),
            alpha: 1.0,
            v: max(&|m| m),
            c: max(&|m| m * (1.0 - m)),
        };
        let arms = means.iter().map(|&p| ArmReward::Bernoulli { p }).collect();
        Self::build(format!("bernoulli-{}", means.len()), arms, bounds)
    }

    /// Gaussian arms N(μ_a, σ²). Bounds: B = max |μ|, R = none, α = 1, `v = max μ² + σ²`, c = σ².
    pub fn gaussian(means: &[f64], sigma: f64) -> Result<Self, KArmedError> {
        if let Some(&m) = means.iter().find(|m| !m.is_finite()) {
            return Err(KArmedError::MeanOutOfRange(m));
        }
        if !(sigma.is_finite() && sigma >= 0.0) {
            return Err(KArmedError::InvalidSigma(sigma));
        }
        let b = means.iter().map(|m| m.abs()).fold(0.0, f64::max);
        let bounds = RewardBounds {
            b: b.max(f64::MIN_POSITIVE),
            r: None,
            alpha: 1.0,
            v: b * b + sigma * sigma,
            c: sigma * sigma,
        };
        let arms = means.iter().map(|&mean| ArmReward::Gaussian { mean, sigma }).collect();
        Self::build(format!("gaussian-{}", means.len()), arms, bounds)
    }

    /// The Pareto instance S1, S2 or S3 of Tao et al. §6 with moment order v ∈ (0, 1]: shape
    /// `α = 1.05 + v`, scales `λ_a = (α−1)μ_a/α` (so arm a has mean μ_a).
    ///
    /// Bounds: `B = max μ`, α (of [`RewardBounds`]) = v, `v` (of [`RewardBounds`]) = the paper's
    /// `u` ([`ParetoInstance::moment_bound`]), `c = 2^v(u + B^{1+v})` (bounds E|X − μ|^{1+v}).
    ///
    /// **R is a clamp, not a bound.** Pareto rewards are unbounded. `R` is set to the heaviest
    /// arm's `(1 − 10⁻⁶)`-quantile, `λ·10^{6/α}`, only because a private run's in-process device
    /// needs a clamping range for CTL queries that come without a truncation level; LDP-RSE
    /// always sends its own level B_τ, so R never touches its reports, and no bandit policy
    /// reads it.
    pub fn pareto(instance: ParetoInstance, v: f64) -> Result<Self, KArmedError> {
        if !(v > 0.0 && v <= 1.0) {
            return Err(KArmedError::InvalidMomentOrder(v));
        }
        let shape = ParetoInstance::shape(v);
        let arms: Vec<ArmReward> = instance
            .means()
            .iter()
            .map(|&mu| ArmReward::Pareto { shape, scale: (shape - 1.0) * mu / shape })
            .collect();
        let u = instance.moment_bound(v);
        let b = instance.means().iter().copied().fold(0.0, f64::max);
        // The heaviest arm is the one with the largest mean (λ grows with μ).
        let largest_scale = (shape - 1.0) * b / shape;
        let bounds = RewardBounds {
            b,
            r: Some(largest_scale * PARETO_CLAMP_TAIL.powf(-1.0 / shape)),
            alpha: v,
            v: u,
            c: 2f64.powf(v) * (u + b.powf(1.0 + v)),
        };
        Self::build(format!("pareto-{}-v{v}", instance.name()), arms, bounds)
    }

    /// The two-point instance of Tao et al.'s DP lower bound (Theorem 5): arm a pays `1/s_a` with
    /// probability `s_a^{1+v}/2` and 0 otherwise, `s_a = (2μ_a)^{1/v}`, so its mean is μ_a and
    /// `E|X|^{1+v} = ½` for every arm with μ_a > 0. Means must be in `[0, 2^{v/(1+v)−1}]` (a
    /// probability ≤ 1); Theorem 5 takes μ_a ≤ 1/6 and gaps below 1/12.
    ///
    /// Bounds: `B = max μ`, `R = max 1/s_a` (the rewards are bounded, but `R` grows like
    /// `μ^{−1/v}`), α = v, `v = ½`, `c = 2^v(½ + B^{1+v})`.
    pub fn two_point(means: &[f64], v: f64) -> Result<Self, KArmedError> {
        if !(v > 0.0 && v <= 1.0) {
            return Err(KArmedError::InvalidMomentOrder(v));
        }
        let max_mean = 2f64.powf(v / (1.0 + v) - 1.0);
        if let Some(&m) = means.iter().find(|m| !(0.0..=max_mean).contains(*m)) {
            return Err(KArmedError::MeanOutOfRange(m));
        }
        let arms: Vec<ArmReward> = means
            .iter()
            .map(|&mu| {
                let s = (2.0 * mu).powf(1.0 / v);
                if s > 0.0 {
                    ArmReward::TwoPoint { p: s.powf(1.0 + v) / 2.0, value: 1.0 / s }
                } else {
                    ArmReward::TwoPoint { p: 0.0, value: 0.0 }
                }
            })
            .collect();
        let b = means.iter().copied().fold(0.0, f64::max);
        let r = arms
            .iter()
            .map(|a| if let ArmReward::TwoPoint { value, .. } = a { *value } else { 0.0 })
            .fold(0.0, f64::max);
        let bounds = RewardBounds {
            b: b.max(f64::MIN_POSITIVE),
            r: Some(r),
            alpha: v,
            v: 0.5,
            c: 2f64.powf(v) * (0.5 + b.powf(1.0 + v)),
        };
        Self::build(format!("two-point-{}-v{v}", means.len()), arms, bounds)
    }

    /// The means of Theorem 5's hard instance used here: μ_1 = 1/6 and gaps 0.02, 0.04, 0.06,
    /// 0.08 (all in (0, 1/12)).
    pub fn two_point_hard_means() -> [f64; 5] {
        let top = 1.0 / 6.0;
        [top, top - 0.02, top - 0.04, top - 0.06, top - 0.08]
    }

    /// The arms' reward distributions.
    pub fn rewards(&self) -> &[ArmReward] {
        &self.rewards
    }
}

impl Environment for KArmedEnv {
    fn arms(&self) -> &Arms {
        &self.arms
    }
    fn sample(&self, arm: usize, rng: &mut SimRng) -> f64 {
        self.rewards.get(arm).map_or(f64::NAN, |a| a.sample(rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    /// Sample mean within 6 standard errors (sample sd) of the arm's mean.
    fn check_mean(arm: ArmReward, n: usize, seed: u64) {
        let mut rng = SimRng::seed_from_u64(seed);
        let xs: Vec<f64> = (0..n).map(|_| arm.sample(&mut rng)).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let sd = (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!((m - arm.mean()).abs() < 6.0 * sd / (n as f64).sqrt() + 1e-12, "{arm:?}: {m}");
    }

    #[test]
    fn the_pareto_instances_have_the_papers_means_and_moment_bound() {
        assert_eq!(ParetoInstance::S2.means(), [0.9, 0.55, 0.3, 0.15, 0.1]);
        for (i, a) in (1..=5).enumerate() {
            let a = a as f64;
            assert!((ParetoInstance::S2.means()[i] - (0.05 * (a - 5.0).powi(2) + 0.1)).abs() < 1e-12);
            assert!((ParetoInstance::S3.means()[i] - (-0.05 * (a - 1.0).powi(2) + 0.9)).abs() < 1e-12);
        }
        for instance in [ParetoInstance::S1, ParetoInstance::S2, ParetoInstance::S3] {
            for v in [0.5, 0.9] {
                let env = KArmedEnv::pareto(instance, v).unwrap();
                for (a, mu) in instance.means().iter().enumerate() {
                    assert!((env.mean(a) - mu).abs() < 1e-12);
                }
                assert_eq!(env.bounds().v, instance.moment_bound(v));
                assert_eq!(env.bounds().alpha, v);
                assert!((env.best_mean() - 0.9).abs() < 1e-12);
                // R is the clamp of the arm with the largest scale λ.
                let (shape, largest) = env.rewards().iter().fold((0.0, 0.0f64), |(_, m), a| match *a {
                    ArmReward::Pareto { shape, scale } => (shape, m.max(scale)),
                    _ => unreachable!(),
                });
                assert_eq!(env.bounds().r, Some(largest * PARETO_CLAMP_TAIL.powf(-1.0 / shape)));
            }
        }
        // The heaviest arm's tail: P(X > R) = 10⁻⁶.
        let env = KArmedEnv::pareto(ParetoInstance::S1, 0.5).unwrap();
        let ArmReward::Pareto { shape, scale } = env.rewards()[0] else { unreachable!() };
        let r = env.bounds().r.unwrap();
        assert!(((scale / r).powf(shape) - PARETO_CLAMP_TAIL).abs() < 1e-15);
    }

    #[test]
    fn the_two_point_instance_has_mean_mu_and_moment_one_half() {
        let v = 0.5;
        let env = KArmedEnv::two_point(&KArmedEnv::two_point_hard_means(), v).unwrap();
        for (a, arm) in env.rewards().iter().enumerate() {
            let ArmReward::TwoPoint { p, value } = *arm else { unreachable!() };
            assert!((p * value - env.mean(a)).abs() < 1e-15);
            assert!((p * value.powf(1.0 + v) - 0.5).abs() < 1e-12, "E|X|^(1+v) = 1/2");
            check_mean(*arm, 400_000, a as u64);
        }
        assert!(KArmedEnv::two_point(&[0.9, 0.1], 0.5).is_err());
    }

    #[test]
    fn samplers_have_the_right_means() {
        check_mean(ArmReward::Bernoulli { p: 0.3 }, 100_000, 1);
        check_mean(ArmReward::Gaussian { mean: -0.2, sigma: 2.0 }, 100_000, 2);
        // Pareto with α = 1.95: finite variance, the sample sd is a fair yardstick.
        let shape = 1.95;
        check_mean(ArmReward::Pareto { shape, scale: 0.95 * 0.5 / shape }, 400_000, 3);
        assert_eq!(KArmedEnv::bernoulli(&[0.5]).err(), Some(KArmedError::TooFewArms));
        assert!(KArmedEnv::bernoulli(&[0.5, 1.5]).is_err());
        assert!(KArmedEnv::gaussian(&[0.5, 0.1], -1.0).is_err());
        let env = KArmedEnv::bernoulli(&[0.2, 0.6]).unwrap();
        assert_eq!(env.prior_covariance(), &DMatrix::<f64>::identity(2, 2));
        assert_eq!(env.bounds().r, Some(0.8));
        assert!(env.sample(5, &mut SimRng::seed_from_u64(0)).is_nan());
    }
}
