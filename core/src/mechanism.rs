//! The Laplace mechanism made safe for floating point, and CTL(ε) of Zhou & Tan (Curator 1).
//!
//! # Construction
//!
//! Given a clamping range `C` and a requested ε:
//!
//! 1. pick a public grid `g = 2^k`. By default `k = ⌊log₂ C⌋ − 12`
//!    ([`DEFAULT_GRID_BITS`]), so the range spans `M = ⌈C/g⌉ ∈ (2^12, 2^13]` grid steps;
//! 2. preprocess the raw reward into `[−C, C]` (clamp, or truncate to zero), then round it to the
//!    nearest grid index `i ∈ [−M, M]`. Any map into `[−M, M]` would do for privacy: rounding
//!    is simply the most accurate one;
//! 3. add discrete Laplace noise `Z` with scale `t = num/den` grid steps
//!    ([`DiscreteLaplace`], exact integer sampler), where `den = 1024` and
//!    `num = ⌊2M·den/ε⌋ + 1`;
//! 4. release the integer `i + Z` (clamped to ±2^52, which is post-processing) together with `k`;
//!    its value `(i + Z)·2^k` is exactly representable in `f64`.
//!
//! # Privacy
//!
//! Two inputs give indices at most `Δ = 2M` apart, and the discrete Laplace pmf ratio for a
//! shift of `Δ` is at most `exp(Δ·den/num)`. So the release is ε_eff-LDP with
//!
//! ```text
//! ε_eff = 2M·den/num < ε.
//! ```
//!
//! With the default grid, the noise is at most `(1 + 2^-12)` times the continuous Laplace
//! scale `2C/ε` of Zhou & Tan (the rounding of `C` up to `M·g` is the "rounding added to the
//! sensitivity" of OpenDP's float Laplace), and `num`'s rounding costs a relative
//! `1/num < ε·2^-23` of ε (since `2M·den ≥ 2^23`).
//! No floating-point operation touches the noise, and the set of values that can be released
//! (all multiples of `g` up to ±2^52·g) is the same for every input: the attack of Mironov
//! (CCS 2012) on `y + scale·ln(u)` has nothing to work with.

use rand_core::Rng;

use crate::error::{ParamError, ReleaseError};
use crate::grid::Grid;
use crate::params::{Bound, Delta, Epsilon, TruncationLevel};
use crate::sampler::DiscreteLaplace;

pub use crate::grid::{DEFAULT_GRID_BITS, MAX_GRID_STEPS, MAX_RANGE_LOG2, MIN_RANGE_LOG2};
/// Denominator of the noise scale in grid steps; sets the resolution of ε_eff.
pub const SCALE_DENOMINATOR: u64 = 1024;
/// Released indices are clamped to ±2^52 so that `index·2^k` is exact in `f64`.
pub const MAX_RELEASE_INDEX: i64 = 1 << 52;

/// How a raw reward is brought into `[−C, C]` before noise is added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Preprocess {
    /// Projection onto `[−C, C]` (CTL of Zhou & Tan).
    Clamp,
    /// `y·1{|y| ≤ C}`: out-of-range rewards become 0 (Tao et al. Alg. 4, line 15).
    TruncateToZero,
}

/// One privatised value: an integer on the public grid `2^grid_log2`.
///
/// This is what leaves the device. The wire format carries `index` and `grid_log2`; nothing
/// about the raw reward is in any other bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Release {
    /// Grid index `i + Z`, within ±2^52.
    pub index: i64,
    /// The public grid exponent k.
    pub grid_log2: i32,
}

impl Release {
    /// The released value `index·2^k` (exact).
    pub fn value(&self) -> f64 {
        libm::scalbn(self.index as f64, self.grid_log2)
    }
}

/// An ε-LDP Laplace mechanism on a public grid. Build it with [`LaplaceMechanism::ctl`],
/// [`LaplaceMechanism::ctl_sub_weibull`], [`LaplaceMechanism::truncated`] or
/// [`LaplaceMechanism::new`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LaplaceMechanism {
    grid: Grid,
    noise: DiscreteLaplace,
    epsilon: Epsilon,
    preprocess: Preprocess,
}

impl LaplaceMechanism {
    /// CTL(ε) of Zhou & Tan §4.1 (Curator 1, Lemma 1): clamp to `[−(B+R), B+R]` and add Laplace
    /// noise of scale `𝓛 = 2(B+R)/ε` (up to the grid rounding documented in the module).
    ///
    /// ```
    /// use ldp_core::{Bound, Epsilon, LaplaceMechanism};
    /// let ctl = LaplaceMechanism::ctl(Epsilon::new(1.0)?, Bound::new(1.0)?, Bound::new(1.0)?)?;
    /// assert!(ctl.epsilon_effective() <= 1.0);
    /// assert!((ctl.noise_scale() / 4.0 - 1.0).abs() < 1e-3); // 2(B+R)/ε = 4
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn ctl(epsilon: Epsilon, b: Bound, r: Bound) -> Result<Self, ParamError> {
        let range = b.get() + r.get();
        if range == 0.0 {
            return Err(ParamError::SensitivityZero);
        }
        let level = TruncationLevel::new(range).map_err(|_| ParamError::SensitivityOutOfRange)?;
        Self::new(level, epsilon, Preprocess::Clamp)
    }

    /// CTL(ε) for sub-Weibull noise (Zhou & Tan §4.5): the noise bound is replaced by
    /// `R = K₁ (ln(T/δ))^θ`, so that with probability ≥ 1 − δ no raw reward of the T rounds
    /// exceeds `B + R`.
    ///
    /// The paper calls the result (ε, δ)-LDP because it does not clamp. We clamp, so the
    /// release is **ε-LDP for every input**; δ only bounds the probability that some reward is
    /// clamped (a bias for the learner, not a privacy loss).
    ///
    /// ```
    /// use ldp_core::{Bound, Delta, Epsilon, LaplaceMechanism};
    /// let m = LaplaceMechanism::ctl_sub_weibull(
    ///     Epsilon::new(1.0)?, Bound::new(1.0)?, 0.5, 0.5, 1000, Delta::new(0.01)?)?;
    /// let r = 0.5 * (1000.0f64 / 0.01).ln().sqrt();
    /// assert!((m.range() - (1.0 + r)).abs() < 1e-12);
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn ctl_sub_weibull(
        epsilon: Epsilon,
        b: Bound,
        k1: f64,
        theta: f64,
        horizon: u64,
        delta: Delta,
    ) -> Result<Self, ParamError> {
        let r = sub_weibull_noise_bound(k1, theta, horizon, delta)?;
        Self::ctl(epsilon, b, r)
    }

    /// The device-side report of Tao et al. Alg. 4 (lines 15–16): `x·1{|x| ≤ B_τ}` plus Laplace
    /// noise of scale `2B_τ/ε`, with a public level `B_τ` sent by the learner.
    ///
    /// ```
    /// use ldp_core::{Epsilon, LaplaceMechanism, Preprocess, TruncationLevel};
    /// let m = LaplaceMechanism::truncated(Epsilon::new(0.5)?, TruncationLevel::new(3.0)?)?;
    /// assert_eq!(m.preprocess(), Preprocess::TruncateToZero);
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn truncated(epsilon: Epsilon, level: TruncationLevel) -> Result<Self, ParamError> {
        Self::new(level, epsilon, Preprocess::TruncateToZero)
    }

    /// A mechanism on `[−C, C]` with the default grid `2^(⌊log₂ C⌋ − 12)`.
    ///
    /// ```
    /// use ldp_core::{Epsilon, LaplaceMechanism, Preprocess, TruncationLevel};
    /// let m = LaplaceMechanism::new(TruncationLevel::new(2.0)?, Epsilon::new(1.0)?, Preprocess::Clamp)?;
    /// assert_eq!(m.grid_log2(), 1 - 12);
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn new(range: TruncationLevel, epsilon: Epsilon, preprocess: Preprocess) -> Result<Self, ParamError> {
        Self::on_grid(range, epsilon, preprocess, None)
    }

    /// A mechanism on `[−C, C]` with an explicit grid `2^grid_log2`, which must be no coarser
    /// than C and such that C spans at most [`MAX_GRID_STEPS`] grid steps.
    ///
    /// ```
    /// use ldp_core::{Epsilon, LaplaceMechanism, ParamError, Preprocess, TruncationLevel};
    /// let c = TruncationLevel::new(1.0)?;
    /// let e = Epsilon::new(1.0)?;
    /// assert!(LaplaceMechanism::with_grid(c, e, Preprocess::Clamp, -8).is_ok());
    /// assert_eq!(LaplaceMechanism::with_grid(c, e, Preprocess::Clamp, 1), Err(ParamError::GridOutOfRange));
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn with_grid(
        range: TruncationLevel,
        epsilon: Epsilon,
        preprocess: Preprocess,
        grid_log2: i32,
    ) -> Result<Self, ParamError> {
        Self::on_grid(range, epsilon, preprocess, Some(grid_log2))
    }

    fn on_grid(
        range: TruncationLevel,
        epsilon: Epsilon,
        preprocess: Preprocess,
        grid_log2: Option<i32>,
    ) -> Result<Self, ParamError> {
        let grid = Grid::new(range.get(), grid_log2).map_err(ParamError::of_range)?;
        let max_index = grid.max_index();
        // num = ⌊2M·den/ε⌋ + 1 > 2M·den/ε even after the division's rounding (module docs).
        let quotient = (2 * max_index) as f64 * SCALE_DENOMINATOR as f64 / epsilon.get();
        if quotient.is_nan() || quotient >= crate::sampler::MAX_SCALE_NUMERATOR as f64 {
            return Err(ParamError::EpsilonTooSmall);
        }
        let num = libm::floor(quotient) as u64 + 1;
        let noise = DiscreteLaplace::new(num, SCALE_DENOMINATOR).ok_or(ParamError::EpsilonTooSmall)?;
        Ok(Self { grid, noise, epsilon, preprocess })
    }

    /// Privatise one raw reward.
    ///
    /// NaN and ±∞ are refused ([`ReleaseError::NonFiniteReward`]): nothing is released.
    /// Finite rewards outside `[−C, C]` are clamped (or truncated to zero) first.
    ///
    /// ```
    /// use ldp_core::{Bound, Epsilon, LaplaceMechanism, ReleaseError};
    /// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
    /// let ctl = LaplaceMechanism::ctl(Epsilon::new(1.0)?, Bound::new(1.0)?, Bound::new(0.5)?)?;
    /// let mut rng = ChaCha20Rng::seed_from_u64(7);
    /// let r = ctl.release(0.3, &mut rng).map_err(|_| ldp_core::ParamError::SensitivityZero)?;
    /// assert_eq!(r.grid_log2, ctl.grid_log2());
    /// assert_eq!(ctl.release(f64::NAN, &mut rng), Err(ReleaseError::NonFiniteReward));
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn release<R: Rng + ?Sized>(&self, reward: f64, rng: &mut R) -> Result<Release, ReleaseError> {
        let index = self.grid_index(reward)?;
        let noisy = index.saturating_add(self.noise.sample(rng));
        Ok(Release { index: noisy.clamp(-MAX_RELEASE_INDEX, MAX_RELEASE_INDEX), grid_log2: self.grid.log2() })
    }

    /// The noiseless grid index `i ∈ [−M, M]` of a reward after preprocessing (what the noise is
    /// added to). Exposed for tests and audits; never release it.
    pub fn grid_index(&self, reward: f64) -> Result<i64, ReleaseError> {
        if !reward.is_finite() {
            return Err(ReleaseError::NonFiniteReward);
        }
        let c = self.grid.bound();
        let y = match self.preprocess {
            Preprocess::Clamp => reward.clamp(-c, c),
            Preprocess::TruncateToZero if reward.abs() <= c => reward,
            Preprocess::TruncateToZero => 0.0,
        };
        Ok(self.grid.index(y))
    }

    /// The ε asked for at construction (what a budget is charged).
    pub fn epsilon(&self) -> Epsilon {
        self.epsilon
    }

    /// The ε the mechanism actually guarantees, `2M·den/num` (≤ [`Self::epsilon`]).
    pub fn epsilon_effective(&self) -> f64 {
        let (num, den) = self.noise.scale_fraction();
        (2 * self.grid.max_index()) as f64 * den as f64 / num as f64
    }

    /// The clamping range C.
    pub fn range(&self) -> f64 {
        self.grid.bound()
    }

    /// The grid exponent k (the grid is 2^k).
    pub fn grid_log2(&self) -> i32 {
        self.grid.log2()
    }

    /// M: the clamped range spans grid indices `[−M, M]`.
    pub fn max_index(&self) -> i64 {
        self.grid.max_index()
    }

    /// The largest magnitude a release can have in value units, `2^52·2^k` ([`MAX_RELEASE_INDEX`]
    /// grid steps): a report larger than this did not come from this mechanism.
    ///
    /// ```
    /// use ldp_core::{Epsilon, LaplaceMechanism, TruncationLevel};
    /// let m = LaplaceMechanism::truncated(Epsilon::new(1.0)?, TruncationLevel::new(1.0)?)?;
    /// assert_eq!(m.max_release(), 2f64.powi(52 + m.grid_log2()));
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn max_release(&self) -> f64 {
        self.grid.value(MAX_RELEASE_INDEX)
    }

    /// How rewards are brought into range.
    pub fn preprocess(&self) -> Preprocess {
        self.preprocess
    }

    /// The noise distribution on grid indices.
    pub fn noise(&self) -> DiscreteLaplace {
        self.noise
    }

    /// The noise scale in reward units, `(num/den)·2^k ≈ 2C/ε` (the paper's 𝓛).
    pub fn noise_scale(&self) -> f64 {
        self.grid.scaled(self.noise.scale())
    }

    /// Variance of the added noise in reward units: `2q/(1−q)²·4^k` with `q = exp(−den/num)`
    /// (≈ 2𝓛², the continuous Laplace variance of Zhou & Tan §3).
    pub fn noise_variance(&self) -> f64 {
        let q = libm::exp(-1.0 / self.noise.scale());
        let steps = 2.0 * q / ((1.0 - q) * (1.0 - q));
        libm::scalbn(steps, 2 * self.grid.log2())
    }
}

/// The sub-Weibull noise bound `R = K₁ (ln(T/δ))^θ` of Zhou & Tan §4.5.
///
/// ```
/// use ldp_core::{mechanism::sub_weibull_noise_bound, Delta, ParamError};
/// let d = Delta::new(0.1)?;
/// assert_eq!(sub_weibull_noise_bound(1.0, 1.0, 0, d), Err(ParamError::HorizonZero));
/// assert!((sub_weibull_noise_bound(2.0, 1.0, 10, d)?.get() - 2.0 * 100f64.ln()).abs() < 1e-12);
/// # Ok::<(), ParamError>(())
/// ```
pub fn sub_weibull_noise_bound(k1: f64, theta: f64, horizon: u64, delta: Delta) -> Result<Bound, ParamError> {
    if !k1.is_finite() || k1 < 0.0 {
        return Err(ParamError::TailConstantInvalid);
    }
    if !theta.is_finite() || theta <= 0.0 {
        return Err(ParamError::TailExponentInvalid);
    }
    if horizon == 0 {
        return Err(ParamError::HorizonZero);
    }
    // T ≥ 1 and δ < 1, so T/δ > 1 and the logarithm is positive.
    let log = libm::log(horizon as f64 / delta.get());
    Bound::new(k1 * libm::pow(log, theta))
}
