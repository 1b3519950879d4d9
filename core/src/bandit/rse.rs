//! Robust successive elimination: central DP (Tao et al. Alg. 3) and the learner of the local
//! model (Tao et al. Alg. 4), as state machines over epochs.
//!
//! ```text
//! epoch τ = 1, 2, …  with S the surviving arms and (R_τ, B_τ, err_τ, threshold) from
//!                    dp_rse_epoch_with / ldp_rse_epoch_with (crate::truncation):
//!   R_τ passes of round robin over S (pull a₁, a₂, …, a_|S|, a₁, …);
//!   each reward truncated to zero outside [−B_τ, B_τ]          (DP: here; LDP: on the device,
//!                                                              which also adds Lap(2B_τ/ε));
//!   μ̃_a = (Σ rewards)/R_τ  (+ Lap(2B_τ/(R_τ ε)) in the DP version);
//!   remove every a with  max_b μ̃_b − μ̃_a > threshold  (12·err_τ / 14·err_τ with the paper's κ);
//! until |S| = 1, then pull the survivor forever.
//! ```
//!
//! Memory: a few words per arm, fixed by the capacity K; a learner built `with_arms` plays only
//! the first `arms ≤ K` (the others are never active, released or drawn noise for).

use rand_core::Rng;

use super::{HeavyTail, ObserveError, ParamError, check_arms, check_constant, check_observation};
use crate::grid::pow2;
use crate::mechanism::{LaplaceMechanism, MAX_RANGE_LOG2, MIN_RANGE_LOG2};
use crate::mechanism::{Preprocess, Release};
use crate::params::{Epsilon, TruncationLevel};
use crate::truncation::{RseEpoch, dp_rse_epoch_with, ldp_rse_epoch_with};

/// Bits of grid resolution below an epoch's level: the sums of [`PrivateSum`] use the grid
/// `2^(⌊log₂ B_τ⌋ − 16)`.
const SUM_GRID_BITS: i32 = 16;
/// A level whose sum grid has the most steps any level can have: `M = ⌈B/2^k⌉` with
/// `k = ⌊log₂ B⌋ − 16` lies in `[2^16, 2^17]`, and `B = 2 − 2^-19` gives `M = 2^17`.
const WIDEST_SUM_LEVEL: f64 = 2.0 - pow2(-19);
/// Levels are kept inside the mechanism's range `[2^-40, 2^40]`, where the grid arithmetic is
/// exact.
const MIN_LEVEL: f64 = pow2(MIN_RANGE_LOG2);
const MAX_LEVEL: f64 = pow2(MAX_RANGE_LOG2);

/// The ε-DP release of a sum of values, each truncated to zero outside `[−B, B]`: Tao et al.
/// Alg. 3, lines 15–19 (`μ̃_a = μ̄_a + Lap(2B_τ/(R_τ ε))`, released here as the sum `R_τ·μ̃_a`).
///
/// Float-safe like [`LaplaceMechanism`], whose grid and noise it uses: each value is truncated,
/// rounded to the public grid `2^k` (`k = ⌊log₂ B⌋ − 16`) to an index in `[−M, M]`, the indices
/// are summed exactly in an `i64`, and the release adds one discrete Laplace draw of scale
/// `num/den > 2M/ε` steps to the integer sum. Changing one value moves the sum by at most 2M
/// steps, so the release is ε_eff-DP with `ε_eff = 2M·den/num < ε` — the same calibration as a
/// single [`LaplaceMechanism`] release, whose proof applies verbatim to the sum.
///
/// ```
/// use ldp_core::bandit::PrivateSum;
/// use ldp_core::{Epsilon, TruncationLevel};
/// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
/// let mut sum = PrivateSum::new(TruncationLevel::new(2.0)?, Epsilon::new(1.0)?)?;
/// sum.add(1.5).map_err(|_| ldp_core::ParamError::SensitivityZero)?;
/// sum.add(7.0).map_err(|_| ldp_core::ParamError::SensitivityZero)?; // above B: counts as 0
/// assert_eq!(sum.exact_value(), 1.5);
/// let noisy = sum.release(&mut ChaCha20Rng::seed_from_u64(1));
/// assert_eq!(noisy.grid_log2, sum.grid_log2());
/// assert!(sum.epsilon_effective() < 1.0);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Copy, PartialEq)]
pub struct PrivateSum {
    mechanism: LaplaceMechanism,
    sum: i64,
    count: u64,
}

impl PrivateSum {
    /// An empty sum for values truncated at `level`, released at `epsilon`.
    pub fn new(level: TruncationLevel, epsilon: Epsilon) -> Result<Self, ParamError> {
        let grid_log2 = libm::ilogb(level.get()) - SUM_GRID_BITS;
        let mechanism = LaplaceMechanism::with_grid(level, epsilon, Preprocess::TruncateToZero, grid_log2)?;
        Ok(Self { mechanism, sum: 0, count: 0 })
    }

    /// An empty sum for values clamped to `[−level, level]` (in place of truncation to zero),
    /// released at `epsilon`: the same sensitivity 2M and the same release. The calibrated
    /// DP-RSE clamps deviations from a centre, so that a centre off by more than the level
    /// still moves the estimate toward the data instead of discarding it.
    ///
    /// ```
    /// use ldp_core::bandit::PrivateSum;
    /// use ldp_core::{Epsilon, TruncationLevel};
    /// let mut sum = PrivateSum::clamped(TruncationLevel::new(2.0)?, Epsilon::new(1.0)?)?;
    /// sum.add(7.0).map_err(|_| ldp_core::ParamError::SensitivityZero)?; // above B: counts as B
    /// assert_eq!(sum.exact_value(), 2.0);
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn clamped(level: TruncationLevel, epsilon: Epsilon) -> Result<Self, ParamError> {
        let grid_log2 = libm::ilogb(level.get()) - SUM_GRID_BITS;
        let mechanism = LaplaceMechanism::with_grid(level, epsilon, Preprocess::Clamp, grid_log2)?;
        Ok(Self { mechanism, sum: 0, count: 0 })
    }

    /// Checks that ε is large enough for a sum at **every** level in the mechanism's range
    /// (the noise scale `2M/ε` of the widest grid, `M = 2^17`, must fit the sampler: ε > 2^-20
    /// ≈ 9.5·10⁻⁷). A learner whose later epochs choose their levels from released values calls
    /// this once before its first release, so that no epoch boundary can fail after releasing.
    ///
    /// ```
    /// use ldp_core::bandit::PrivateSum;
    /// use ldp_core::{Epsilon, ParamError};
    /// assert!(PrivateSum::check_epsilon(Epsilon::new(1e-6)?).is_ok());
    /// assert_eq!(PrivateSum::check_epsilon(Epsilon::new(7e-7)?), Err(ParamError::EpsilonTooSmall));
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn check_epsilon(epsilon: Epsilon) -> Result<(), ParamError> {
        Self::new(TruncationLevel::new(WIDEST_SUM_LEVEL)?, epsilon).map(|_| ())
    }

    /// Adds one value (truncated to zero outside `[−B, B]`, or clamped for [`PrivateSum::clamped`],
    /// rounded to the grid). NaN/±∞ is
    /// refused and changes nothing.
    pub fn add(&mut self, value: f64) -> Result<(), ObserveError> {
        let index = self.mechanism.grid_index(value).map_err(|_| ObserveError::NonFiniteReward)?;
        self.sum = self.sum.saturating_add(index);
        self.count = self.count.saturating_add(1);
        Ok(())
    }

    /// The ε_eff-DP release: the index sum plus one discrete Laplace draw (clamped to ±2^52,
    /// post-processing). Each call draws fresh noise; a caller that releases twice spends 2ε.
    pub fn release<R: Rng + ?Sized>(&self, rng: &mut R) -> Release {
        let noisy = self.sum.saturating_add(self.mechanism.noise().sample(rng));
        let limit = crate::mechanism::MAX_RELEASE_INDEX;
        Release { index: noisy.clamp(-limit, limit), grid_log2: self.mechanism.grid_log2() }
    }

    /// The exact (secret) sum of the truncated, rounded values. For tests and audits; never
    /// release it.
    pub fn exact_value(&self) -> f64 {
        libm::scalbn(self.sum as f64, self.mechanism.grid_log2())
    }

    /// The exact (secret) index sum. For tests and audits; never release it.
    pub fn exact_index(&self) -> i64 {
        self.sum
    }

    /// The number of values added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The truncation level B.
    pub fn level(&self) -> f64 {
        self.mechanism.range()
    }

    /// M: each value is an index in `[−M, M]`.
    pub fn max_index(&self) -> i64 {
        self.mechanism.max_index()
    }

    /// The grid exponent k.
    pub fn grid_log2(&self) -> i32 {
        self.mechanism.grid_log2()
    }

    /// The ε the release guarantees, `2M·den/num < ε`.
    pub fn epsilon_effective(&self) -> f64 {
        self.mechanism.epsilon_effective()
    }

    /// The noise scale of the release in value units, `≈ 2B/ε`.
    pub fn noise_scale(&self) -> f64 {
        self.mechanism.noise_scale()
    }

    /// The variance of the release's noise in value units, `≈ 2(2B/ε)²`.
    pub fn noise_variance(&self) -> f64 {
        self.mechanism.noise_variance()
    }
}

impl core::fmt::Debug for PrivateSum {
    /// The public configuration only: the sum is as secret as the values.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PrivateSum")
            .field("level", &self.level())
            .field("grid_log2", &self.grid_log2())
            .field("epsilon_effective", &self.epsilon_effective())
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

/// Checks a device report against the device's mechanism at the round's public level: its
/// magnitude must not exceed [`LaplaceMechanism::max_release`]. The check reads only the report
/// (the mechanism's output) and public values, so refusing reveals nothing more.
pub(crate) fn check_report(
    mechanism: Result<LaplaceMechanism, ParamError>,
    report: f64,
) -> Result<(), ObserveError> {
    let mechanism = mechanism.map_err(ObserveError::Mechanism)?;
    if report.abs() <= mechanism.max_release() { Ok(()) } else { Err(ObserveError::ReportOutOfRange) }
}

/// The parameters of robust successive elimination (Tao et al. Alg. 3 and 4, line 1).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RseParams {
    /// ε: of the released epoch means (DP) or of each device report (LDP).
    pub epsilon: Epsilon,
    /// u and v of the heavy-tail assumption.
    pub tail: HeavyTail,
    /// The confidence β ∈ (0, 1) (Theorems 4 and 7 take β = 1/T).
    pub beta: f64,
    /// κ: 24 (DP) or 28 (LDP) in the paper; see [`super::PRACTICAL_DP_RSE_KAPPA`].
    pub kappa: f64,
}

impl RseParams {
    /// Validates β ∈ (0, 1) and κ (finite, > 0).
    ///
    /// ```
    /// use ldp_core::bandit::{HeavyTail, RseParams};
    /// use ldp_core::ParamError;
    /// use ldp_core::Epsilon;
    /// let tail = HeavyTail::new(5.6, 0.5)?;
    /// let eps = Epsilon::new(1.0)?;
    /// assert!(RseParams::new(eps, tail, 1e-4, 24.0).is_ok());
    /// assert_eq!(RseParams::new(eps, tail, 1.0, 24.0), Err(ParamError::ConfidenceOutOfRange));
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn new(epsilon: Epsilon, tail: HeavyTail, beta: f64, kappa: f64) -> Result<Self, ParamError> {
        if !(beta > 0.0 && beta < 1.0) {
            return Err(ParamError::ConfidenceOutOfRange);
        }
        let kappa = check_constant(kappa)?;
        Ok(Self { epsilon, tail, beta, kappa })
    }

    /// β = 1/T as in Theorems 4 and 7 (for T ≥ 2; T = 1 gives β = 1/2).
    pub fn beta_for_horizon(horizon: u64) -> f64 {
        1.0 / horizon.max(2) as f64
    }
}

/// What an epoch ended with: the means compared and the arms removed.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EpochRelease<const K: usize> {
    /// The epoch τ.
    pub tau: u32,
    /// The epoch's schedule (R_τ, B_τ, err_τ, threshold).
    pub epoch: RseEpoch,
    /// The arms that took part (the surviving set S at the start of the epoch; never an arm
    /// past the learner's `arms`).
    pub active: [bool; K],
    /// μ̃_a for the arms that took part (private in both versions), 0 for the others.
    pub means: [f64; K],
    /// The arms removed at the end of the epoch.
    pub eliminated: [bool; K],
}

/// Which variant's schedule an [`Elimination`] follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Model {
    Central,
    Local,
}

/// The epoch bookkeeping shared by both variants: surviving set, schedule, round robin.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Elimination<const K: usize> {
    params: RseParams,
    model: Model,
    /// The arms played, `1 ≤ arms ≤ K`: an arm past them is never active.
    arms: usize,
    active: [bool; K],
    tau: u32,
    epoch: RseEpoch,
    /// Completed passes over S in this epoch (r of the paper, 0 ≤ r < R_τ).
    passes: u64,
    /// The next arm to pull in the current pass.
    cursor: usize,
    /// The survivor once |S| = 1.
    committed: Option<usize>,
    last: Option<EpochRelease<K>>,
}

impl<const K: usize> Elimination<K> {
    /// The machine over the first `arms` arms (`1 ≤ arms ≤ K`, checked by the caller).
    fn new(params: RseParams, model: Model, arms: usize) -> Self {
        let mut this = Self {
            params,
            model,
            arms,
            active: core::array::from_fn(|a| a < arms),
            tau: 0,
            epoch: RseEpoch { pulls: 1, level: 1.0, err: 0.0, threshold: 0.0 },
            passes: 0,
            cursor: 0,
            committed: if arms == 1 { Some(0) } else { None },
            last: None,
        };
        this.start_epoch();
        this
    }

    fn active_count(&self) -> u32 {
        self.active[..self.arms].iter().filter(|&&a| a).count() as u32
    }

    /// Begins epoch τ + 1 over the current S.
    fn start_epoch(&mut self) {
        self.tau = self.tau.saturating_add(1);
        let p = self.params;
        let (tail, active) = (p.tail, self.active_count());
        let schedule = match self.model {
            Model::Central => dp_rse_epoch_with,
            Model::Local => ldp_rse_epoch_with,
        };
        let mut epoch = schedule(p.kappa, self.tau, active, p.beta, p.epsilon, tail.u(), tail.v());
        epoch.level = if epoch.level.is_nan() { MAX_LEVEL } else { epoch.level.clamp(MIN_LEVEL, MAX_LEVEL) };
        self.epoch = epoch;
        self.passes = 0;
        self.cursor = self.first_active();
    }

    /// The lowest surviving arm (0 if none).
    fn first_active(&self) -> usize {
        self.active[..self.arms].iter().position(|&a| a).unwrap_or(0)
    }

    fn next_arm(&self) -> usize {
        self.committed.unwrap_or(self.cursor)
    }

    /// Checks that `arm` is the one selected.
    fn check_arm(&self, arm: usize) -> Result<(), ObserveError> {
        let expected = self.next_arm();
        if arm == expected { Ok(()) } else { Err(ObserveError::UnexpectedArm { expected, got: arm }) }
    }

    /// Moves the round robin on after a pull; true when the epoch's last pull was just made.
    fn advance(&mut self) -> bool {
        match (self.cursor + 1..self.arms).find(|&a| self.active[a]) {
            Some(next) => {
                self.cursor = next;
                false
            }
            None => {
                self.passes = self.passes.saturating_add(1);
                self.cursor = self.first_active();
                self.passes >= self.epoch.pulls
            }
        }
    }

    /// Lines 20–27: compares the epoch means and eliminates; commits to the survivor or starts
    /// the next epoch.
    fn finish_epoch(&mut self, means: [f64; K]) {
        let active = self.active;
        let best = (0..self.arms).filter(|&a| active[a]).map(|a| means[a]).fold(f64::NEG_INFINITY, f64::max);
        let mut eliminated = [false; K];
        for a in 0..self.arms {
            // NaN comparisons are false: nothing is removed on a NaN mean or threshold.
            if active[a] && best - means[a] > self.epoch.threshold {
                eliminated[a] = true;
                self.active[a] = false;
            }
        }
        self.last = Some(EpochRelease { tau: self.tau, epoch: self.epoch, active, means, eliminated });
        if self.active_count() == 1 {
            self.committed = self.active[..self.arms].iter().position(|&a| a);
        } else {
            self.start_epoch();
        }
    }
}

/// The public view of the elimination state machine that both learners share (`self.machine`):
/// epoch, schedule, survivors, passes and the last release (`$last` documents that one).
macro_rules! elimination_view {
    ($last:literal) => {
        /// The current epoch τ (≥ 1).
        pub fn tau(&self) -> u32 {
            self.machine.tau
        }

        /// The current epoch's schedule (R_τ, B_τ, err_τ, threshold).
        pub fn epoch(&self) -> RseEpoch {
            self.machine.epoch
        }

        /// The surviving arms S (never an arm past [`Self::arms`]).
        pub fn active(&self) -> [bool; K] {
            self.machine.active
        }

        /// The number of arms played (K unless built `with_arms`).
        pub fn arms(&self) -> usize {
            self.machine.arms
        }

        /// The survivor, once only one arm is left.
        pub fn committed(&self) -> Option<usize> {
            self.machine.committed
        }

        /// Completed passes over S in the current epoch.
        pub fn passes(&self) -> u64 {
            self.machine.passes
        }

        #[doc = $last]
        pub fn last_release(&self) -> Option<EpochRelease<K>> {
            self.machine.last
        }
    };
}

/// DP robust successive elimination, Tao et al. Alg. 3: ε-differentially private (event level)
/// for any horizon.
///
/// The epoch schedule is [`dp_rse_epoch_with`] with the given κ (24 in the paper). Each arm's
/// truncated rewards of an epoch are summed by a [`PrivateSum`] at level `B_τ`; at the end of
/// the epoch each surviving arm's sum is released once with ε_eff-DP noise and divided by `R_τ`
/// (line 19). Each reward enters exactly one released sum, so the releases together are ε-DP
/// (parallel composition, Tao et al. Theorem 3); B_τ, R_τ and S depend only on earlier releases,
/// and the arms pulled are post-processing.
///
/// ```
/// use ldp_core::bandit::{DpRobustSe, HeavyTail, RseParams};
/// use ldp_core::Epsilon;
/// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
/// let eps = Epsilon::new(1.0)?;
/// let params = RseParams::new(eps, HeavyTail::new(1.0, 1.0)?, 0.01, 24.0)?;
/// let mut se = DpRobustSe::<3>::new(params)?;
/// let mut rng = ChaCha20Rng::seed_from_u64(3);
/// // Round robin over the surviving arms.
/// for expected in [0, 1, 2, 0] {
///     let arm = se.select();
///     assert_eq!(arm, expected);
///     se.observe(arm, 0.5, &mut rng).map_err(|_| ldp_core::ParamError::HorizonZero)?;
/// }
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Debug)]
pub struct DpRobustSe<const K: usize> {
    machine: Elimination<K>,
    sums: [PrivateSum; K],
}

impl<const K: usize> DpRobustSe<K> {
    /// DP-RSE with the given parameters (epoch 1 starts with all K arms).
    ///
    /// Refused if ε is too small for the widest sum grid ([`PrivateSum::check_epsilon`]): every
    /// later epoch's level is then usable, so no epoch boundary can fail after its releases.
    pub fn new(params: RseParams) -> Result<Self, ParamError> {
        Self::with_arms(K, params)
    }

    /// [`DpRobustSe::new`] on the first `arms` of the K arms (`1 ≤ arms ≤ K`, else
    /// [`ParamError::TooFewArms`] or [`ParamError::ArmsAboveCapacity`]): the same choices and
    /// the same noise draws as `DpRobustSe::<arms>::new`.
    ///
    /// ```
    /// use ldp_core::bandit::{DpRobustSe, HeavyTail, RseParams};
    /// use ldp_core::{Epsilon, ParamError};
    /// let params = RseParams::new(Epsilon::new(1.0)?, HeavyTail::new(1.0, 1.0)?, 0.01, 24.0)?;
    /// let se = DpRobustSe::<64>::with_arms(3, params)?;
    /// assert_eq!(se.active().iter().filter(|&&a| a).count(), 3);
    /// assert_eq!(DpRobustSe::<64>::with_arms(65, params).err(), Some(ParamError::ArmsAboveCapacity));
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn with_arms(arms: usize, params: RseParams) -> Result<Self, ParamError> {
        const { assert!(K >= 1, "a bandit needs at least one arm") };
        let arms = check_arms::<K>(arms)?;
        PrivateSum::check_epsilon(params.epsilon)?;
        let machine = Elimination::new(params, Model::Central, arms);
        let sums = Self::empty_sums(&machine)?;
        Ok(Self { machine, sums })
    }

    fn empty_sums(machine: &Elimination<K>) -> Result<[PrivateSum; K], ParamError> {
        let level = TruncationLevel::new(machine.epoch.level)?;
        let empty = PrivateSum::new(level, machine.params.epsilon)?;
        Ok([empty; K])
    }

    /// The arm to pull: the next surviving arm of the round robin, or the survivor.
    pub fn select(&self) -> usize {
        self.machine.next_arm()
    }

    /// The raw reward of the selected arm. Refused, changing nothing, if `arm` is not the
    /// selected one, the reward is not finite, or (at an epoch boundary) the next epoch's level
    /// is outside the grid's range. At the end of an epoch the surviving arms' sums are released
    /// once each with noise drawn from `rng`.
    pub fn observe<R: Rng + ?Sized>(
        &mut self,
        arm: usize,
        reward: f64,
        rng: &mut R,
    ) -> Result<(), ObserveError> {
        check_observation(arm, self.machine.arms, reward)?;
        self.machine.check_arm(arm)?;
        if self.machine.committed.is_some() {
            return Ok(()); // line 28: nothing more is computed
        }
        let mut sum = self.sums[arm];
        sum.add(reward)?;
        let mut machine = self.machine;
        if !machine.advance() {
            self.sums[arm] = sum;
            self.machine = machine;
            return Ok(());
        }
        // Lines 18–19: one release per surviving arm.
        let pulls = machine.epoch.pulls as f64;
        let mut means = [0.0; K];
        for (a, mean) in means.iter_mut().enumerate().take(machine.arms) {
            if machine.active[a] {
                let s = if a == arm { &sum } else { &self.sums[a] };
                *mean = s.release(rng).value() / pulls;
            }
        }
        machine.finish_epoch(means);
        let sums = match machine.committed {
            None => Self::empty_sums(&machine).map_err(ObserveError::Mechanism)?,
            Some(_) => self.sums,
        };
        self.machine = machine;
        self.sums = sums;
        Ok(())
    }

    elimination_view!("The last finished epoch's private means and eliminations.");

    /// The ε each released mean guarantees in the current epoch (`< ε`).
    pub fn epsilon_effective(&self) -> f64 {
        self.sums[..self.machine.arms].iter().map(PrivateSum::epsilon_effective).fold(0.0, f64::max)
    }

    /// The current epoch's accumulator of `arm` (for audits: its exact sum is secret).
    pub fn sum(&self, arm: usize) -> Option<&PrivateSum> {
        self.sums[..self.machine.arms].get(arm)
    }
}

/// LDP robust successive elimination, Tao et al. Alg. 4: the learner's side of the local model.
///
/// Each reward is privatised on the device before the learner sees it: the learner publishes
/// the epoch's level `B_τ` ([`LdpRobustSe::device_level`]) and the device reports
/// `x·1{|x| ≤ B_τ} + Lap(2B_τ/ε)` (lines 15–16: [`LdpRobustSe::device_mechanism`], i.e.
/// [`LaplaceMechanism::truncated`]). Each report is ε-LDP on its own (Theorem 6); the learner
/// only averages reports (line 19) and eliminates at the threshold of [`ldp_rse_epoch_with`]
/// (`14·err_τ` with κ = 28; with the two corrections to Alg. 4 documented there).
///
/// Its regret is not the one Tao et al.'s Theorem 7 states (and calls optimal): that theorem does
/// not follow from its Lemma 13 (elimination needs `D_τ ≤ Δ`, the proof uses `D_τ² ≤ Δ`), so an
/// arm of gap Δ is scheduled `Δ^{−2(1+v)/v}` pulls before it is removed and the rate is
/// `Õ((K/ε²)^{v/(2(1+v))} T^{(2+v)/(2(1+v))})` (Zhou & Zhang, NeurIPS 2024, "Locally Private
/// and Robust Multi-Armed Bandits"; details at [`ldp_rse_epoch_with`]).
///
/// ```
/// use ldp_core::bandit::{HeavyTail, LdpRobustSe, RseParams};
/// use ldp_core::Epsilon;
/// let eps = Epsilon::new(10.0)?;
/// let mut se = LdpRobustSe::<2>::new(RseParams::new(eps, HeavyTail::new(1.0, 1.0)?, 0.01, 28.0)?);
/// let level = se.device_level(); // B_1, public: sent to the device with the query
/// let mechanism = se.device_mechanism()?;
/// assert_eq!(mechanism.range(), level);
/// let arm = se.select();
/// se.observe(arm, 0.25).map_err(|_| ldp_core::ParamError::HorizonZero)?; // a report
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LdpRobustSe<const K: usize> {
    machine: Elimination<K>,
    sums: [f64; K],
}

impl<const K: usize> LdpRobustSe<K> {
    /// LDP-RSE's learner with the given parameters (epoch 1 starts with all K arms).
    pub fn new(params: RseParams) -> Self {
        const { assert!(K >= 1, "a bandit needs at least one arm") };
        Self::on(K, params)
    }

    /// [`LdpRobustSe::new`] on the first `arms` of the K arms (`1 ≤ arms ≤ K`, else
    /// [`ParamError::TooFewArms`] or [`ParamError::ArmsAboveCapacity`]): the same choices and
    /// levels as `LdpRobustSe::<arms>::new`.
    ///
    /// ```
    /// use ldp_core::bandit::{HeavyTail, LdpRobustSe, RseParams};
    /// use ldp_core::{Epsilon, ParamError};
    /// let params = RseParams::new(Epsilon::new(10.0)?, HeavyTail::new(1.0, 1.0)?, 0.01, 28.0)?;
    /// let se = LdpRobustSe::<64>::with_arms(41, params)?;
    /// assert_eq!(se.device_level(), LdpRobustSe::<41>::new(params).device_level());
    /// assert_eq!(LdpRobustSe::<64>::with_arms(0, params).err(), Some(ParamError::TooFewArms));
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn with_arms(arms: usize, params: RseParams) -> Result<Self, ParamError> {
        const { assert!(K >= 1, "a bandit needs at least one arm") };
        Ok(Self::on(check_arms::<K>(arms)?, params))
    }

    fn on(arms: usize, params: RseParams) -> Self {
        Self { machine: Elimination::new(params, Model::Local, arms), sums: [0.0; K] }
    }

    /// The arm to pull: the next surviving arm of the round robin, or the survivor.
    pub fn select(&self) -> usize {
        self.machine.next_arm()
    }

    /// The public truncation level `B_τ` the device must apply to this round's reward before
    /// its noise (clamped to `[2^-40, 2^40]`, the mechanism's range).
    pub fn device_level(&self) -> f64 {
        self.machine.epoch.level
    }

    /// The device's report mechanism for this round, Tao et al. Alg. 4 lines 15–16:
    /// [`LaplaceMechanism::truncated`] at ε and `B_τ`.
    pub fn device_mechanism(&self) -> Result<LaplaceMechanism, ParamError> {
        LaplaceMechanism::truncated(self.machine.params.epsilon, TruncationLevel::new(self.device_level())?)
    }

    /// The device's report for the selected arm. Refused, changing nothing, if `arm` is not the
    /// selected one, the report is not finite, or it is larger than the device's mechanism can
    /// release at this round's level ([`ObserveError::ReportOutOfRange`]).
    pub fn observe(&mut self, arm: usize, report: f64) -> Result<(), ObserveError> {
        check_observation(arm, self.machine.arms, report)?;
        self.machine.check_arm(arm)?;
        check_report(self.device_mechanism(), report)?;
        if self.machine.committed.is_some() {
            return Ok(());
        }
        self.sums[arm] += report;
        if self.machine.advance() {
            let pulls = self.machine.epoch.pulls as f64;
            let active = self.machine.active;
            let means = core::array::from_fn(|a| if active[a] { self.sums[a] / pulls } else { 0.0 });
            self.machine.finish_epoch(means);
            self.sums = [0.0; K];
        }
        Ok(())
    }

    elimination_view!("The last finished epoch's means and eliminations.");
}
