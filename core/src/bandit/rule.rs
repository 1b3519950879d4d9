//! The calibrated constants of the K-armed learners: one rule, from public quantities only
//! (B, the noise's bound R or moment bound c, ε, T, K, δ), with one multiplier [`KAPPA`].
//! `docs/constants.md` ("K-armed learners") states it and how κ was chosen.
//!
//! 1. **Noise term.** An estimate's standard deviation `s` is computed from the variance of
//!    what enters it: per raw reward `c·b^{1−v}` (the Bernstein variance term of a value
//!    clamped at b with `E|η|^{1+v} ≤ c`; `c`, the noise variance, for bounded noise), plus the
//!    privacy noise at its actual scale (per report, per released sum, per tree node).
//! 2. **Confidence radius.** `w = κ·z_t·s` with `z_t = √(2 ln(K t² π²/(6δ)))` (the union over
//!    arms and rounds of GP-UCB's finite-domain schedule, Srinivas et al. 2010); t counts the
//!    rewards observed so far.
//! 3. **Truncate noise, not signal.** Rewards are clamped around a centre at level `A + L`:
//!    A covers the signal's distance from the centre (B around 0, the public range's centre;
//!    or the radius of a centre estimated from released values), L the noise: R when the noise
//!    is bounded (nothing is cut), else the level at which the bias bound `c/L^v` equals `z`
//!    times the noise it causes ([`Rule::noise_level`]), the papers' levels (Bubeck et al.
//!    2013; Tao et al. Alg. 1, 3, 4) with the noise's moment for theirs. The bias is then of the
//!    order of the radius's noise term and is not added to it (κ covers both).

use super::{ParamError, check_constant};

/// κ, the one multiplier of the K-armed learners' confidence radii (see the module docs and
/// `docs/constants.md`: chosen once by `scripts/choose-kappa-karmed.sh`).
pub const KAPPA: f64 = 0.5;

/// δ of the union bound in [`Rule::log_term`] (as the GP learners' δ).
pub const DELTA: f64 = 0.1;

/// What the learner knows about the noise `η = y − f` of a raw reward (`|f| ≤ B`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Noise {
    /// `|η| ≤ r` and `E η² ≤ c` (a data table: R the largest |y − f|, c the mean squared noise).
    Bounded {
        /// R.
        r: f64,
        /// c ≤ R².
        c: f64,
    },
    /// `E|η|^{1+v} ≤ c` for a known `v ∈ (0, 1]`, and no known bound (heavy tails).
    Moment {
        /// c.
        c: f64,
        /// v.
        v: f64,
    },
}

/// How an estimate is privatised: what the noise level L of a heavy-tailed clamp balances.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Estimator {
    /// The mean of n raw rewards (non-private).
    Raw,
    /// The mean of n reports, each with Laplace noise of scale `2b/ε` (local DP, Tao et al. Alg. 4).
    Local {
        /// ε per report.
        epsilon: f64,
    },
    /// One release of a sum of n values with Laplace noise `2b/ε` (central DP, Tao et al. Alg. 3).
    Sum {
        /// ε of the release.
        epsilon: f64,
    },
    /// A tree's prefix sum of n values: at most `depth` nodes, each with noise `2b·depth/ε`
    /// (central DP, Tao et al. Alg. 1 + 2).
    Tree {
        /// ε of the tree.
        epsilon: f64,
        /// The tree's depth ⌊log₂ T⌋ + 1.
        depth: u32,
    },
}

impl Estimator {
    /// ρ: the standard deviation of the privacy noise of a mean of n values per unit of level
    /// (`2√2/(ε√n)`, `2√2/(εn)`, `2√2·depth^{3/2}/(εn)`); 0 for raw rewards.
    pub fn noise_per_level(&self, n: u64) -> f64 {
        let n = n.max(1) as f64;
        let k = 2.0 * core::f64::consts::SQRT_2;
        match *self {
            Self::Raw => 0.0,
            Self::Local { epsilon } => k / (epsilon * libm::sqrt(n)),
            Self::Sum { epsilon } => k / (epsilon * n),
            Self::Tree { epsilon, depth } => {
                let d = f64::from(depth.max(1));
                k * d * libm::sqrt(d) / (epsilon * n)
            }
        }
    }
}

/// The rule for one problem: B, the noise, K, δ and κ.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Rule {
    b: f64,
    noise: Noise,
    arms: u32,
    kappa: f64,
}

impl Rule {
    /// The rule for signal bound `b` (|f| ≤ B), `noise`, `arms` arms and multiplier `kappa`
    /// ([`KAPPA`] times any scale a study applies). Refused: B, R or c negative or not finite,
    /// c = 0 with heavy tails, v outside (0, 1], κ not finite and > 0, no arms.
    ///
    /// ```
    /// use ldp_core::bandit::{Noise, Rule, KAPPA};
    /// let rule = Rule::new(1.0, Noise::Bounded { r: 0.5, c: 0.04 }, 5, KAPPA)?;
    /// // z_1 = √(2 ln(5·π²/(6·0.1))).
    /// let z = (2.0 * (5.0 * std::f64::consts::PI.powi(2) / 0.6).ln()).sqrt();
    /// assert!((rule.z(1) - z).abs() < 1e-12);
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn new(b: f64, noise: Noise, arms: u32, kappa: f64) -> Result<Self, ParamError> {
        let non_negative = |x: f64| x.is_finite() && x >= 0.0;
        if !non_negative(b) {
            return Err(ParamError::BoundNotFinite);
        }
        match noise {
            Noise::Bounded { r, c } if !(non_negative(r) && non_negative(c)) => {
                return Err(ParamError::BoundNotFinite);
            }
            Noise::Moment { v, .. } if !(v > 0.0 && v <= 1.0) => return Err(ParamError::MomentOrderInvalid),
            Noise::Moment { c, .. } if !(c.is_finite() && c > 0.0) => {
                return Err(ParamError::MomentBoundInvalid);
            }
            _ => {}
        }
        if arms == 0 {
            return Err(ParamError::TooFewArms);
        }
        Ok(Self { b, noise, arms, kappa: check_constant(kappa)? })
    }

    /// B.
    pub fn signal_bound(&self) -> f64 {
        self.b
    }

    /// The noise.
    pub fn noise(&self) -> Noise {
        self.noise
    }

    /// κ.
    pub fn kappa(&self) -> f64 {
        self.kappa
    }

    /// `ln(K m² π²/(6δ))` for `m ≥ 1` (m = 0 counts as 1).
    pub fn log_term(&self, m: u64) -> f64 {
        let m = m.max(1) as f64;
        let pi2 = core::f64::consts::PI * core::f64::consts::PI;
        libm::log(f64::from(self.arms) * m * m * pi2 / (6.0 * DELTA))
    }

    /// `z_m = √(2·ln(K m² π²/(6δ)))`.
    pub fn z(&self, m: u64) -> f64 {
        libm::sqrt(2.0 * self.log_term(m))
    }

    /// L, the part of a level that covers the noise, for an estimate of `n` values made by
    /// `estimator` at confidence `z`: R for bounded noise; for heavy tails the level at which
    /// the bias bound `c/L^v` equals z times the noise the level causes,
    /// `L = (c/(z·ρ))^{1/(1+v)}` with ρ of [`Estimator::noise_per_level`], and for raw rewards
    /// (whose noise at level L is the sampling sd `√(c L^{1−v}/n)`) `L = (c n/z²)^{1/(1+v)}`
    /// (Bubeck et al.'s level with `z² = 2 ln(1/δ)`).
    ///
    /// ```
    /// use ldp_core::bandit::{Estimator, Noise, Rule};
    /// let rule = Rule::new(1.0, Noise::Moment { c: 8.0, v: 1.0 }, 5, 1.0)?;
    /// // Raw: (c n / z²)^{1/2} = (8·100/4)^{1/2}.
    /// assert!((rule.noise_level(Estimator::Raw, 100, 2.0) - 200f64.sqrt()).abs() < 1e-12);
    /// // One release of a sum at ε = 1: ρ = 2√2/n, L = (c/(zρ))^{1/2}.
    /// let rho = 2.0 * 2f64.sqrt() / 100.0;
    /// let l = rule.noise_level(Estimator::Sum { epsilon: 1.0 }, 100, 2.0);
    /// assert!((l - (8.0 / (2.0 * rho)).sqrt()).abs() < 1e-9);
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn noise_level(&self, estimator: Estimator, n: u64, z: f64) -> f64 {
        match self.noise {
            Noise::Bounded { r, .. } => r,
            Noise::Moment { c, v } => {
                let base = match estimator {
                    Estimator::Raw => c * n.max(1) as f64 / (z * z),
                    private => c / (z * private.noise_per_level(n)),
                };
                libm::pow(base, 1.0 / (1.0 + v))
            }
        }
    }

    /// The bias bound of a clamp whose noise part is L (`c/L^v`; 0 for bounded noise, which
    /// L = R never cuts): what [`Rule::noise_level`] balances.
    pub fn bias(&self, noise_level: f64) -> f64 {
        match self.noise {
            Noise::Bounded { .. } => 0.0,
            Noise::Moment { c, v } => c / libm::pow(noise_level, v),
        }
    }

    /// The variance bound of one raw reward clamped at `level`: c (bounded noise), `c·b^{1−v}`
    /// (heavy tails: `E min(|η|, b)² ≤ c b^{1−v}`).
    pub fn sample_variance(&self, level: f64) -> f64 {
        match self.noise {
            Noise::Bounded { c, .. } => c,
            Noise::Moment { c, v } => c * libm::pow(level, 1.0 - v),
        }
    }

    /// The confidence radius `κ·z·s`.
    pub fn radius(&self, z: f64, sd: f64) -> f64 {
        self.kappa * z * sd
    }

    /// The radius at κ = 1 (`z·s`): the allowance of a centre estimated from released values,
    /// which must hold whatever κ is.
    pub fn allowance(z: f64, sd: f64) -> f64 {
        z * sd
    }

    /// The allowance of a centre that is one raw reward: R for bounded noise, else the Markov
    /// radius `(c·K m² π²/(6δ))^{1/(1+v)}` at confidence m (`P(|η| > a) ≤ c/a^{1+v}`).
    pub fn single_reward_allowance(&self, m: u64) -> f64 {
        match self.noise {
            Noise::Bounded { r, .. } => r,
            Noise::Moment { c, v } => libm::pow(c * libm::exp(self.log_term(m)), 1.0 / (1.0 + v)),
        }
    }
}

/// A running inverse-variance combination of independent estimates of one arm's mean
/// (successive elimination's epochs). With heavy tails a later epoch has a larger level but both
/// a smaller variance and a smaller bias bound (both ∝ n^{−v/(1+v)} at the balanced level), so
/// the weights favour the less biased estimates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Combined {
    weighted_sum: f64,
    weight: f64,
    /// Estimates with variance 0 (noiseless rewards, or a variance bound that underflowed):
    /// their sum and number. Their weight is infinite, so once there is one they are the
    /// combination, averaged among themselves.
    exact_sum: f64,
    exact: u32,
}

impl Combined {
    /// No estimate yet (as [`Combined::default`], usable in constants).
    pub const ZERO: Self = Self { weighted_sum: 0.0, weight: 0.0, exact_sum: 0.0, exact: 0 };

    /// Adds an estimate `mean` with `variance` (≥ 0); one with a non-finite mean or a
    /// negative or NaN variance is ignored.
    pub fn add(&mut self, mean: f64, variance: f64) {
        if !mean.is_finite() || variance.is_nan() || variance < 0.0 {
            return;
        }
        let w = 1.0 / variance;
        if w.is_finite() {
            self.weighted_sum += w * mean;
            self.weight += w;
        } else {
            // Variance 0 (or so small that its inverse overflows): an exact estimate.
            self.exact_sum += mean;
            self.exact = self.exact.saturating_add(1);
        }
    }

    /// The combined mean (0 before any estimate).
    pub fn mean(&self) -> f64 {
        if self.exact > 0 {
            self.exact_sum / f64::from(self.exact)
        } else if self.weight > 0.0 {
            self.weighted_sum / self.weight
        } else {
            0.0
        }
    }

    /// Its standard deviation `1/√Σw` (0 once an exact estimate came, +∞ before any estimate).
    pub fn sd(&self) -> f64 {
        if self.exact > 0 {
            0.0
        } else if self.weight > 0.0 {
            1.0 / libm::sqrt(self.weight)
        } else {
            f64::INFINITY
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn combined_estimates_with_no_variance_are_exact_not_ignored() {
        // Noiseless rewards (c = 0) gave variance-0 blocks, which used to be dropped: the mean
        // stayed 0 and the sd ∞, and calibrated Robust-UCB played the worst arm (review).
        let mut c = Combined::ZERO;
        c.add(0.9, 0.0);
        assert_eq!((c.mean(), c.sd()), (0.9, 0.0));
        c.add(0.1, 1.0); // a noisy estimate beside an exact one changes nothing
        c.add(0.7, 1e-320); // 1/variance overflows: exact too
        assert_eq!((c.mean(), c.sd()), (0.8, 0.0));
        let mut noisy = Combined::ZERO;
        noisy.add(1.0, 1.0);
        noisy.add(3.0, 1.0);
        noisy.add(f64::NAN, 1.0);
        noisy.add(5.0, -1.0);
        assert_eq!((noisy.mean(), noisy.sd()), (2.0, 1.0 / 2f64.sqrt()));
    }

    #[test]
    fn the_rule_matches_hand_computation() {
        // K = 5, δ = 0.1, m = 3: ln(5·9·π²/0.6) = ln(740.22…) = 6.6069…
        let rule = Rule::new(0.9, Noise::Moment { c: 9.0, v: 0.5 }, 5, 0.5).unwrap();
        let log = (5.0 * 9.0 * core::f64::consts::PI.powi(2) / 0.6_f64).ln();
        assert!(close(rule.log_term(3), log));
        assert!((rule.log_term(3) - 6.6069).abs() < 1e-4);
        assert!(close(rule.z(3), (2.0 * log).sqrt()));
        // Heavy tails, LDP: n = 64, ε = 2, z = 4: ρ = 2√2/(2·8), L = (9/(4ρ))^{2/3}.
        let rho = 2.0 * 2f64.sqrt() / 16.0;
        let l = rule.noise_level(Estimator::Local { epsilon: 2.0 }, 64, 4.0);
        assert!(close(l, (9.0 / (4.0 * rho)).powf(2.0 / 3.0)));
        assert!((l - 5.4522).abs() < 1e-3); // (12.728)^{2/3}
        // The level balances: bias = z·ρ·L.
        assert!(close(rule.bias(l), 4.0 * rho * l));
        // Tree: depth 17, ε = 1, n = 1000.
        let t = Estimator::Tree { epsilon: 1.0, depth: 17 };
        assert!(close(t.noise_per_level(1000), 2.0 * 2f64.sqrt() * 17f64.powf(1.5) / 1000.0));
        // Variance of a clamp at b = 16: c·16^{1/2} = 36.
        assert!(close(rule.sample_variance(16.0), 36.0));
        // Radius κ z s = 0.5·2·0.1.
        assert!(close(rule.radius(2.0, 0.1), 0.1));
        // A single reward's Markov radius at m = 1: (c·5π²/0.6)^{2/3}.
        let a = (9.0 * 5.0 * core::f64::consts::PI.powi(2) / 0.6).powf(2.0 / 3.0);
        assert!(close(rule.single_reward_allowance(1), a));
    }

    #[test]
    fn bounded_noise_is_never_cut_and_has_no_bias() {
        let rule = Rule::new(1.0, Noise::Bounded { r: 0.3, c: 0.01 }, 10, 1.0).unwrap();
        for est in [Estimator::Raw, Estimator::Local { epsilon: 1.0 }, Estimator::Sum { epsilon: 0.5 }] {
            assert!(close(rule.noise_level(est, 1000, 3.0), 0.3));
        }
        assert!(close(rule.bias(0.3), 0.0));
        assert!(close(rule.sample_variance(5.0), 0.01));
        assert!(close(rule.single_reward_allowance(7), 0.3));
    }

    #[test]
    fn invalid_rules_are_refused() {
        let ok = Noise::Bounded { r: 1.0, c: 1.0 };
        assert_eq!(Rule::new(f64::NAN, ok, 2, 1.0), Err(ParamError::BoundNotFinite));
        assert_eq!(
            Rule::new(1.0, Noise::Bounded { r: -1.0, c: 1.0 }, 2, 1.0),
            Err(ParamError::BoundNotFinite)
        );
        assert_eq!(
            Rule::new(1.0, Noise::Moment { c: 1.0, v: 1.5 }, 2, 1.0),
            Err(ParamError::MomentOrderInvalid)
        );
        assert_eq!(
            Rule::new(1.0, Noise::Moment { c: 0.0, v: 0.5 }, 2, 1.0),
            Err(ParamError::MomentBoundInvalid)
        );
        assert_eq!(Rule::new(1.0, ok, 0, 1.0), Err(ParamError::TooFewArms));
        assert_eq!(Rule::new(1.0, ok, 2, 0.0), Err(ParamError::ConstantInvalid));
    }

    #[test]
    fn combined_estimates_weigh_by_inverse_variance() {
        let mut c = Combined::default();
        assert!(c.sd().is_infinite());
        c.add(1.0, 1.0);
        c.add(4.0, 0.5);
        // Weights 1 and 2: mean (1 + 8)/3 = 3, sd 1/√3.
        assert!(close(c.mean(), 3.0));
        assert!(close(c.sd(), 1.0 / 3f64.sqrt()));
        c.add(f64::NAN, 1.0); // ignored
        assert!(close(c.mean(), 3.0));
        c.add(5.0, 0.0); // exact: infinite weight
        assert_eq!((c.mean(), c.sd()), (5.0, 0.0));
    }
}
