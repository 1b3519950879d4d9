//! EXP3 (Agarwal & Singh Alg. 5, "EXP2 with exploration" on the simplex's vertices) and its private
//! version by the reduction of Agarwal & Singh Alg. 4 with the parameters of Theorem 4.1.

use rand_core::Rng;

use super::{ObserveError, ParamError, check_arms, check_eta, check_observation, sample_index};
use crate::mechanism::LaplaceMechanism;
use crate::mechanism::Preprocess;
use crate::params::{Epsilon, TruncationLevel};

/// EXP3's learning rate η and uniform-exploration rate γ.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Exp3Params {
    eta: f64,
    gamma: f64,
}

impl Exp3Params {
    /// Validates η (finite, > 0) and γ (in [0, 1]).
    ///
    /// ```
    /// use ldp_core::bandit::{Exp3Params};
    /// use ldp_core::ParamError;
    /// assert!(Exp3Params::new(0.01, 0.05).is_ok());
    /// assert_eq!(Exp3Params::new(0.01, 1.5), Err(ParamError::ExplorationInvalid));
    /// ```
    pub fn new(eta: f64, gamma: f64) -> Result<Self, ParamError> {
        let eta = check_eta(eta)?;
        if !(0.0..=1.0).contains(&gamma) {
            return Err(ParamError::ExplorationInvalid);
        }
        Ok(Self { eta, gamma })
    }

    /// The tuning of Agarwal & Singh Theorem 4.1 for N arms, horizon T and loss-noise scale λ
    /// (λ = 1/ε for the private reduction, λ = 0 for plain EXP3):
    ///
    /// ```text
    /// η = √( ln N / (2NT (1 + 2λ² ln(NT))) ),     γ = η N √(1 + 2λ² ln(NT))  (capped at 1).
    /// ```
    ///
    /// (γ = √(N ln N/(2T)) whatever λ is; the noise only lowers η.)
    ///
    /// ```
    /// use ldp_core::bandit::Exp3Params;
    /// let p = Exp3Params::theorem_4_1(5, 100_000, 1.0)?;
    /// let log_nt = (5.0f64 * 1e5).ln();
    /// let eta = (5f64.ln() / (2.0 * 5.0 * 1e5 * (1.0 + 2.0 * log_nt))).sqrt();
    /// assert!((p.eta() - eta).abs() < 1e-15);
    /// assert!((p.gamma() - (5.0 * 5f64.ln() / 2e5).sqrt()).abs() < 1e-12);
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn theorem_4_1(arms: usize, horizon: u64, lambda: f64) -> Result<Self, ParamError> {
        if arms < 2 {
            return Err(ParamError::TooFewArms);
        }
        if horizon == 0 {
            return Err(ParamError::HorizonZero);
        }
        if !(lambda.is_finite() && lambda >= 0.0) {
            return Err(ParamError::ConstantInvalid);
        }
        let (n, t) = (arms as f64, horizon as f64);
        let spread = 1.0 + 2.0 * lambda * lambda * libm::log(n * t);
        let eta = libm::sqrt(libm::log(n) / (2.0 * n * t * spread));
        let gamma = (eta * n * libm::sqrt(spread)).min(1.0);
        Self::new(eta, gamma)
    }

    /// η.
    pub const fn eta(&self) -> f64 {
        self.eta
    }

    /// γ.
    pub const fn gamma(&self) -> f64 {
        self.gamma
    }
}

/// EXP3 on K arms with losses in [0, 1]: Agarwal & Singh Alg. 5 with exploration μ(i) = 1/K.
///
/// ```text
/// p_t = (1 − γ) q_t + γ/K,   i_t ~ p_t,   l̃_t = l_t(i_t)/p_t(i_t) · e_{i_t},
/// q_{t+1}(i) ∝ q_t(i) exp(−η l̃_t(i))       (kept as q_t ∝ exp(−η L̂_t), L̂ = Σ l̃).
/// ```
///
/// The weights are computed from the cumulative loss estimates with the smallest one
/// subtracted, so nothing under- or overflows. Losses are taken as given (the private version
/// clamps them to [0, 1]; Theorem 4.1 assumes `‖l_t‖_∞ ≤ 1`). K is the capacity;
/// [`Exp3::with_arms`] plays only the first `arms ≤ K` (K in the formulas is then `arms`).
///
/// ```
/// use ldp_core::bandit::{Exp3, Exp3Params};
/// use rand_xoshiro::{Xoshiro256PlusPlus, rand_core::SeedableRng};
/// let mut exp3 = Exp3::<3>::new(Exp3Params::new(0.1, 0.3)?);
/// let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
/// let arm = exp3.select(&mut rng);
/// exp3.observe(arm, 1.0).map_err(|_| ldp_core::ParamError::HorizonZero)?;
/// assert!(exp3.probabilities()[arm] < 1.0 / 3.0); // a loss lowers the arm's weight
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exp3<const K: usize> {
    /// The arms played, `1 ≤ arms ≤ K`: only the first `arms` entries of `estimates` are used.
    arms: usize,
    params: Exp3Params,
    /// L̂: cumulative importance-weighted loss estimates.
    estimates: [f64; K],
    /// The arm of the last `select` and its probability, awaiting `observe`.
    pending: Option<(usize, f64)>,
    rounds: u64,
}

impl<const K: usize> Exp3<K> {
    /// EXP3 with the given η and γ.
    pub fn new(params: Exp3Params) -> Self {
        const { assert!(K >= 1, "a bandit needs at least one arm") };
        Self::on(K, params)
    }

    /// [`Exp3::new`] on the first `arms` of the K arms (`1 ≤ arms ≤ K`, else
    /// [`ParamError::TooFewArms`] or [`ParamError::ArmsAboveCapacity`]): the same
    /// probabilities and draws as `Exp3::<arms>::new`.
    ///
    /// ```
    /// use ldp_core::bandit::{Exp3, Exp3Params};
    /// use ldp_core::ParamError;
    /// let params = Exp3Params::new(0.1, 0.3)?;
    /// let exp3 = Exp3::<64>::with_arms(4, params)?;
    /// assert_eq!(exp3.probabilities()[..5], [0.25, 0.25, 0.25, 0.25, 0.0]);
    /// assert_eq!(Exp3::<4>::with_arms(5, params).err(), Some(ParamError::ArmsAboveCapacity));
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn with_arms(arms: usize, params: Exp3Params) -> Result<Self, ParamError> {
        const { assert!(K >= 1, "a bandit needs at least one arm") };
        Ok(Self::on(check_arms::<K>(arms)?, params))
    }

    fn on(arms: usize, params: Exp3Params) -> Self {
        Self { arms, params, estimates: [0.0; K], pending: None, rounds: 0 }
    }

    /// The sampling distribution p_t = (1 − γ) q_t + γ/K (0 for the arms past
    /// [`Exp3::arms`]).
    pub fn probabilities(&self) -> [f64; K] {
        let n = self.arms;
        let mut p = [0.0; K];
        super::hedge::exponential_weights_into(&self.estimates[..n], self.params.eta, &mut p[..n]);
        let gamma = self.params.gamma;
        for pi in &mut p[..n] {
            *pi = (1.0 - gamma) * *pi + gamma / n as f64;
        }
        p
    }

    /// Draws the arm i_t ~ p_t with `rng` (and remembers it for [`Exp3::observe`]).
    pub fn select<R: Rng + ?Sized>(&mut self, rng: &mut R) -> usize {
        let p = self.probabilities();
        let arm = sample_index(&p[..self.arms], rng);
        self.pending = Some((arm, p[arm]));
        arm
    }

    /// The loss of the arm just selected: `L̂(i_t) += l_t/p_t(i_t)`. Refused, changing nothing,
    /// for another arm, before any `select`, or for a non-finite loss.
    pub fn observe(&mut self, arm: usize, loss: f64) -> Result<(), ObserveError> {
        check_observation(arm, self.arms, loss)?;
        match self.pending {
            Some((expected, p)) if expected == arm && p > 0.0 => {
                self.estimates[arm] += loss / p;
                self.pending = None;
                self.rounds = self.rounds.saturating_add(1);
                Ok(())
            }
            Some((expected, _)) => Err(ObserveError::UnexpectedArm { expected, got: arm }),
            None => Err(ObserveError::UnexpectedArm { expected: usize::MAX, got: arm }),
        }
    }

    /// The parameters.
    pub fn params(&self) -> Exp3Params {
        self.params
    }

    /// The cumulative loss estimates L̂ (0 for the arms past [`Exp3::arms`]).
    pub fn estimates(&self) -> [f64; K] {
        self.estimates
    }

    /// The number of arms played (K unless built [`Exp3::with_arms`]).
    pub fn arms(&self) -> usize {
        self.arms
    }

    /// Rounds observed so far.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }
}

/// ε-DP EXP3 by the reduction of Agarwal & Singh Alg. 4: the observed loss is clamped to [0, 1],
/// `Lap(λ)` noise with λ = 1/ε is added, and the noisy loss is fed to [`Exp3`] tuned by
/// Theorem 4.1 with that λ.
///
/// The noise is the crate's float-safe [`LaplaceMechanism`] on `l − ½ ∈ [−½, ½]` (range
/// C = ½, so its scale 2C/ε is exactly the paper's λ = 1/ε for `‖l‖_∞ ≤ 1`); ½ is added back
/// after the release. Each loss enters one ε_eff-DP release and the arms chosen are
/// post-processing of the releases (Lemma 4.2), so the whole sequence of arms is ε-DP.
///
/// ```
/// use ldp_core::bandit::PrivateExp3;
/// use ldp_core::Epsilon;
/// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
/// let mut exp3 = PrivateExp3::<4>::new(Epsilon::new(1.0)?, 10_000).map_err(|_| ldp_core::ParamError::HorizonZero)?;
/// assert!((exp3.noise_scale() - 1.0).abs() < 1e-3); // λ = 1/ε
/// let mut rng = ChaCha20Rng::seed_from_u64(2);
/// let arm = exp3.select(&mut rng);
/// exp3.observe(arm, 0.3, &mut rng).map_err(|_| ldp_core::ParamError::HorizonZero)?;
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrivateExp3<const K: usize> {
    inner: Exp3<K>,
    mechanism: LaplaceMechanism,
}

impl<const K: usize> PrivateExp3<K> {
    /// Private EXP3 at ε for horizon T, with Theorem 4.1's η and γ for λ = 1/ε.
    pub fn new(epsilon: Epsilon, horizon: u64) -> Result<Self, ParamError> {
        Self::with_arms(K, epsilon, horizon)
    }

    /// [`PrivateExp3::new`] on the first `arms` of the K arms (`1 ≤ arms ≤ K`, else
    /// [`ParamError::TooFewArms`] or [`ParamError::ArmsAboveCapacity`]; Theorem 4.1's tuning
    /// needs 2): the same parameters, draws and noise as `PrivateExp3::<arms>::new`.
    ///
    /// ```
    /// use ldp_core::bandit::PrivateExp3;
    /// use ldp_core::{Epsilon, ParamError};
    /// let eps = Epsilon::new(1.0)?;
    /// let exp3 = PrivateExp3::<64>::with_arms(5, eps, 10_000)?;
    /// assert_eq!(exp3.inner().params(), PrivateExp3::<5>::new(eps, 10_000)?.inner().params());
    /// assert_eq!(PrivateExp3::<64>::with_arms(1, eps, 10_000).err(), Some(ParamError::TooFewArms));
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn with_arms(arms: usize, epsilon: Epsilon, horizon: u64) -> Result<Self, ParamError> {
        let arms = check_arms::<K>(arms)?;
        let params = Exp3Params::theorem_4_1(arms, horizon, 1.0 / epsilon.get())?;
        Self::with_arms_and_params(arms, epsilon, params)
    }

    /// Private EXP3 at ε with explicit η and γ.
    pub fn with_params(epsilon: Epsilon, params: Exp3Params) -> Result<Self, ParamError> {
        Self::with_arms_and_params(K, epsilon, params)
    }

    /// [`PrivateExp3::with_params`] on the first `arms` of the K arms (`1 ≤ arms ≤ K`, else
    /// [`ParamError::TooFewArms`] or [`ParamError::ArmsAboveCapacity`]).
    ///
    /// ```
    /// use ldp_core::bandit::{Exp3Params, PrivateExp3};
    /// use ldp_core::Epsilon;
    /// let exp3 = PrivateExp3::<8>::with_arms_and_params(2, Epsilon::new(1.0)?, Exp3Params::new(0.1, 0.2)?)?;
    /// assert_eq!(exp3.probabilities()[..3], [0.5, 0.5, 0.0]);
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn with_arms_and_params(
        arms: usize,
        epsilon: Epsilon,
        params: Exp3Params,
    ) -> Result<Self, ParamError> {
        let inner = Exp3::with_arms(arms, params)?;
        let half = TruncationLevel::new(0.5)?;
        let mechanism = LaplaceMechanism::new(half, epsilon, Preprocess::Clamp)?;
        Ok(Self { inner, mechanism })
    }

    /// The sampling distribution p_t.
    pub fn probabilities(&self) -> [f64; K] {
        self.inner.probabilities()
    }

    /// Draws the arm i_t ~ p_t.
    pub fn select<R: Rng + ?Sized>(&mut self, rng: &mut R) -> usize {
        self.inner.select(rng)
    }

    /// The raw loss of the arm just selected: clamped to [0, 1], privatised with noise from
    /// `rng`, and fed to EXP3. Refused, changing nothing, as [`Exp3::observe`].
    pub fn observe<R: Rng + ?Sized>(
        &mut self,
        arm: usize,
        loss: f64,
        rng: &mut R,
    ) -> Result<(), ObserveError> {
        check_observation(arm, self.inner.arms, loss)?;
        if !matches!(self.inner.pending, Some((expected, _)) if expected == arm) {
            return self.inner.observe(arm, loss); // the same refusal, before any noise is drawn
        }
        let release = self.mechanism.release(loss - 0.5, rng).map_err(|_| ObserveError::NonFiniteReward)?;
        self.inner.observe(arm, release.value() + 0.5)
    }

    /// The noise scale λ actually used (≈ 1/ε).
    pub fn noise_scale(&self) -> f64 {
        self.mechanism.noise_scale()
    }

    /// The ε each loss's release guarantees (< ε).
    pub fn epsilon_effective(&self) -> f64 {
        self.mechanism.epsilon_effective()
    }

    /// The inner EXP3 (parameters and noisy loss estimates).
    pub fn inner(&self) -> &Exp3<K> {
        &self.inner
    }
}
