//! Robust successive elimination under the calibrated rule ([`super::rule`]): epochs that
//! start at one pull per arm and double, estimates combined across epochs, elimination when
//! confidence intervals separate. Central DP (Tao et al. Alg. 3's privacy) and the learner of
//! the local model (Alg. 4's device).
//!
//! ```text
//! epoch τ = 1, 2, …  over the surviving arms S, n_τ = 2^{τ−1} pulls of each (round robin);
//!   each arm's epoch estimate m_{τ,a} (a private release) with variance V from the rule;
//!   combined over the epochs so far by inverse variance: μ̂_a, s_a;
//!   w_a = κ·z_t·s_a at the round t of the check;
//!   remove a if μ̂_a + w_a < max_b (μ̂_b − w_b);
//! until |S| = 1, then pull the survivor forever.
//! ```
//!
//! The paper's schedules ([`super::DpRobustSe`], [`super::LdpRobustSe`]) size epoch 1 for the
//! smallest gap they can resolve (D_1 = 1/2 at κ = 24 or 28), so with any constant that keeps
//! their guarantee the first epoch alone outlasts practical horizons (K·R_1 > T). Here the
//! first check comes after K pulls and the τ-th after about K·2^τ; an arm is removed as soon as
//! the released values say so, whatever the gap.

use rand_core::Rng;

use super::rse::check_report;
use super::rule::{Combined, Estimator, Rule};
use super::{ObserveError, ParamError, PrivateSum, check_arms, check_observation};
use crate::grid::pow2;
use crate::mechanism::{LaplaceMechanism, MAX_RANGE_LOG2, MIN_RANGE_LOG2};
use crate::params::{Epsilon, TruncationLevel};

/// Levels are kept inside the mechanism's range `[2^-40, 2^40]`.
const MIN_LEVEL: f64 = pow2(MIN_RANGE_LOG2);
const MAX_LEVEL: f64 = pow2(MAX_RANGE_LOG2);

fn clamp_level(level: f64) -> f64 {
    if level.is_nan() { MAX_LEVEL } else { level.clamp(MIN_LEVEL, MAX_LEVEL) }
}

/// The epoch bookkeeping both learners share: surviving set, geometric epochs, round robin,
/// combined estimates and elimination.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Schedule<const K: usize> {
    rule: Rule,
    /// The arms played, `1 ≤ arms ≤ K`: an arm past them is never active.
    arms: usize,
    active: [bool; K],
    tau: u32,
    /// n_τ = 2^{τ−1}.
    pulls: u64,
    /// Completed passes over S in this epoch.
    passes: u64,
    cursor: usize,
    committed: Option<usize>,
    /// Rewards observed so far (t of z_t).
    rounds: u64,
    estimates: [Combined; K],
}

impl<const K: usize> Schedule<K> {
    /// The schedule over the first `arms` arms (`1 ≤ arms ≤ K`, checked by the caller).
    fn new(rule: Rule, arms: usize) -> Self {
        Self {
            rule,
            arms,
            active: core::array::from_fn(|a| a < arms),
            tau: 1,
            pulls: 1,
            passes: 0,
            cursor: 0,
            committed: if arms == 1 { Some(0) } else { None },
            rounds: 0,
            estimates: [Combined::default(); K],
        }
    }

    fn next_arm(&self) -> usize {
        self.committed.unwrap_or(self.cursor)
    }

    fn check_arm(&self, arm: usize) -> Result<(), ObserveError> {
        let expected = self.next_arm();
        if arm == expected { Ok(()) } else { Err(ObserveError::UnexpectedArm { expected, got: arm }) }
    }

    /// z_t at the current round.
    fn z(&self) -> f64 {
        self.rule.z(self.rounds.max(1))
    }

    /// Arm a's combined estimate (mean, sd).
    fn estimate(&self, a: usize) -> (f64, f64) {
        (self.estimates[a].mean(), self.estimates[a].sd())
    }

    /// Moves the round robin on after a pull; true when the epoch's last pull was just made.
    fn advance(&mut self) -> bool {
        self.rounds = self.rounds.saturating_add(1);
        match (self.cursor + 1..self.arms).find(|&a| self.active[a]) {
            Some(next) => {
                self.cursor = next;
                false
            }
            None => {
                self.passes = self.passes.saturating_add(1);
                self.cursor = self.first_active();
                self.passes >= self.pulls
            }
        }
    }

    /// The lowest surviving arm (0 if none).
    fn first_active(&self) -> usize {
        self.active[..self.arms].iter().position(|&a| a).unwrap_or(0)
    }

    /// Arm a's estimate and its radius `κ·z_t·s_a`.
    fn interval(&self, a: usize) -> (f64, f64) {
        let (mean, sd) = self.estimate(a);
        (mean, self.rule.radius(self.z(), sd))
    }

    /// Adds each surviving arm's epoch estimate (mean, variance), removes the arms whose
    /// interval lies below another's, and commits or starts the next epoch.
    fn finish_epoch(&mut self, epoch: &[(f64, f64); K]) {
        let arms = self.arms;
        for (a, &(mean, variance)) in epoch.iter().enumerate().take(arms) {
            if self.active[a] {
                self.estimates[a].add(mean, variance);
            }
        }
        let intervals: [(f64, f64); K] =
            core::array::from_fn(|a| if self.active[a] { self.interval(a) } else { (0.0, 0.0) });
        let best_lower = (0..arms)
            .filter(|&a| self.active[a])
            .map(|a| intervals[a].0 - intervals[a].1)
            .fold(f64::NEG_INFINITY, f64::max);
        let removed: [bool; K] = core::array::from_fn(|a| {
            // NaN comparisons are false: nothing is removed on a NaN estimate.
            self.active[a] && intervals[a].0 + intervals[a].1 < best_lower
        });
        for (a, gone) in removed.iter().enumerate().take(arms) {
            if *gone {
                self.active[a] = false;
            }
        }
        if self.active[..arms].iter().filter(|&&a| a).count() == 1 {
            self.committed = self.active[..arms].iter().position(|&a| a);
            return;
        }
        self.tau = self.tau.saturating_add(1);
        self.pulls = self.pulls.saturating_mul(2);
        self.passes = 0;
        self.cursor = self.first_active();
    }
}

/// The public view both learners share (`self.schedule`).
macro_rules! schedule_view {
    () => {
        /// The current epoch τ (≥ 1).
        pub fn tau(&self) -> u32 {
            self.schedule.tau
        }

        /// n_τ: pulls of each surviving arm in the current epoch (`2^{τ−1}`).
        pub fn epoch_pulls(&self) -> u64 {
            self.schedule.pulls
        }

        /// The surviving arms S (never an arm past [`Self::arms`]).
        pub fn active(&self) -> [bool; K] {
            self.schedule.active
        }

        /// The number of arms played (K unless built `with_arms`).
        pub fn arms(&self) -> usize {
            self.schedule.arms
        }

        /// The survivor, once only one arm is left.
        pub fn committed(&self) -> Option<usize> {
            self.schedule.committed
        }

        /// Arm `arm`'s combined estimate (mean, sd) over the finished epochs it took part in
        /// (`None` out of range or before its first epoch ended). Private in both versions:
        /// post-processing of released values.
        pub fn estimate(&self, arm: usize) -> Option<(f64, f64)> {
            let played = &self.schedule.estimates[..self.schedule.arms];
            let known = played.get(arm).is_some_and(|e| e.sd().is_finite());
            known.then(|| self.schedule.estimate(arm))
        }

        /// The rule.
        pub fn rule(&self) -> Rule {
            self.schedule.rule
        }
    };
}

/// DP robust successive elimination under the calibrated rule: ε-DP (event level) for any
/// horizon, with the privacy of Tao et al. Alg. 3.
///
/// ```text
/// epoch τ, arm a:  centre ĉ_a = 0, A_a = B while the radius of μ̂_a at κ = 1 (z_t·s_a)
///                  is ≥ B, else ĉ_a = μ̂_a, A_a = that radius;
///                  level b_a = A_a + L_τ,  L_τ = R or (c/(z_t·2√2/(ε n_τ)))^{1/(1+v)};
///                  PrivateSum of clamp(x − ĉ_a, b_a) over the n_τ rewards, released once:
///                  m = ĉ_a + S̃/n_τ,  V = c·b_a^{1−v}/n_τ + Var(noise)/n_τ²
/// ```
///
/// **Privacy is Alg. 3's, unchanged:** each reward enters exactly one epoch's [`PrivateSum`]
/// (its arm's, in the epoch it was pulled), whose single release carries the noise of that
/// sum's level (clamping x − ĉ to [−b, b] moves the sum by at most 2b when one reward changes,
/// as truncation does); every level, centre and epoch length is a function of public
/// constants and of earlier releases only (post-processing), so the releases are ε-DP by
/// parallel composition whatever the schedule, and the arms pulled are post-processing.
///
/// **Shift:** the centre follows the released means, so once it is estimated the clamp cuts
/// only noise wherever the rewards sit; before that, it is the public range's centre 0 with
/// A = B. A shift of every reward that keeps the means within [−B, B] changes no choice (a
/// central-DP learner needs a public range: no ε-DP release locates unbounded data).
///
/// ```
/// use ldp_core::bandit::{CalibratedDpRobustSe, Noise, Rule};
/// use ldp_core::Epsilon;
/// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
/// let rule = Rule::new(1.0, Noise::Bounded { r: 0.1, c: 0.01 }, 3, 0.5)?;
/// let mut se = CalibratedDpRobustSe::<3>::new(rule, Epsilon::new(1.0)?)?;
/// let mut rng = ChaCha20Rng::seed_from_u64(3);
/// assert_eq!(se.level(0), 1.1); // B + R
/// for expected in [0, 1, 2, 0, 1, 2, 0, 1, 2] {
///     let arm = se.select();
///     assert_eq!(arm, expected); // epochs of 1, then 2 passes of round robin
///     se.observe(arm, 0.5, &mut rng).map_err(|_| ldp_core::ParamError::HorizonZero)?;
/// }
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Debug)]
pub struct CalibratedDpRobustSe<const K: usize> {
    schedule: Schedule<K>,
    epsilon: Epsilon,
    estimator: Estimator,
    centres: [f64; K],
    sums: [PrivateSum; K],
}

impl<const K: usize> CalibratedDpRobustSe<K> {
    /// The learner at ε under `rule` (epoch 1 starts with all K arms). Fails if ε is too small
    /// for the sampler at the widest sum grid any level can have ([`PrivateSum::check_epsilon`]),
    /// so that no later epoch boundary can fail after its releases.
    pub fn new(rule: Rule, epsilon: Epsilon) -> Result<Self, ParamError> {
        Self::with_arms(K, rule, epsilon)
    }

    /// [`CalibratedDpRobustSe::new`] on the first `arms` of the K arms (`1 ≤ arms ≤ K`, else
    /// [`ParamError::TooFewArms`] or [`ParamError::ArmsAboveCapacity`]): the same choices and
    /// the same noise draws as `CalibratedDpRobustSe::<arms>::new`.
    ///
    /// ```
    /// use ldp_core::bandit::{CalibratedDpRobustSe, Noise, Rule};
    /// use ldp_core::{Epsilon, ParamError};
    /// let rule = Rule::new(1.0, Noise::Bounded { r: 0.1, c: 0.01 }, 3, 0.5)?;
    /// let se = CalibratedDpRobustSe::<64>::with_arms(3, rule, Epsilon::new(1.0)?)?;
    /// assert_eq!((se.arms(), se.level(0), se.level(3)), (3, 1.1, 0.0)); // arm 3 is not played
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn with_arms(arms: usize, rule: Rule, epsilon: Epsilon) -> Result<Self, ParamError> {
        const { assert!(K >= 1, "a bandit needs at least one arm") };
        let arms = check_arms::<K>(arms)?;
        PrivateSum::check_epsilon(epsilon)?;
        let empty = PrivateSum::clamped(TruncationLevel::new(1.0)?, epsilon)?;
        let mut this = Self {
            schedule: Schedule::new(rule, arms),
            epsilon,
            estimator: Estimator::Sum { epsilon: epsilon.get() },
            centres: [0.0; K],
            sums: [empty; K],
        };
        this.start_epoch()?;
        Ok(this)
    }

    /// Sets each surviving arm's centre, level and empty sum for the current epoch.
    fn start_epoch(&mut self) -> Result<(), ParamError> {
        let s = &self.schedule;
        let (rule, z) = (s.rule, s.z());
        let noise = rule.noise_level(self.estimator, s.pulls, z);
        let mut centres = self.centres;
        let mut sums = self.sums;
        for a in (0..s.arms).filter(|&a| s.active[a]) {
            let (mean, sd) = s.estimate(a);
            let radius = Rule::allowance(z, sd);
            let b = rule.signal_bound();
            let (centre, allowance) = if radius < b { (mean, radius) } else { (0.0, b) };
            centres[a] = centre;
            sums[a] =
                PrivateSum::clamped(TruncationLevel::new(clamp_level(allowance + noise))?, self.epsilon)?;
        }
        self.centres = centres;
        self.sums = sums;
        Ok(())
    }

    /// The arm to pull: the next surviving arm of the round robin, or the survivor.
    pub fn select(&self) -> usize {
        self.schedule.next_arm()
    }

    /// The level `arm`'s rewards are clamped at in the current epoch (public; 0 for an arm out
    /// of range).
    pub fn level(&self, arm: usize) -> f64 {
        self.sums[..self.schedule.arms].get(arm).map_or(0.0, PrivateSum::level)
    }

    /// The centre `arm`'s rewards are clamped around in the current epoch (public).
    pub fn centre(&self, arm: usize) -> f64 {
        self.centres[..self.schedule.arms].get(arm).copied().unwrap_or(0.0)
    }

    /// The raw reward of the selected arm. Refused, changing nothing, if `arm` is not the
    /// selected one, the reward is not finite, or (at an epoch boundary) a next level is
    /// outside the grid's range. At the end of an epoch each surviving arm's sum is released
    /// once with noise drawn from `rng`.
    pub fn observe<R: Rng + ?Sized>(
        &mut self,
        arm: usize,
        reward: f64,
        rng: &mut R,
    ) -> Result<(), ObserveError> {
        check_observation(arm, self.schedule.arms, reward)?;
        self.schedule.check_arm(arm)?;
        if self.schedule.committed.is_some() {
            return Ok(());
        }
        let mut sum = self.sums[arm];
        sum.add(reward - self.centres[arm])?;
        let mut schedule = self.schedule;
        if !schedule.advance() {
            self.sums[arm] = sum;
            self.schedule = schedule;
            return Ok(());
        }
        // The epoch's last pull: one release per surviving arm, on a copy (a refused next
        // level changes nothing).
        let mut next = self.clone();
        next.sums[arm] = sum;
        next.schedule = schedule;
        let n = schedule.pulls as f64;
        let rule = schedule.rule;
        let epoch: [(f64, f64); K] = core::array::from_fn(|a| {
            if !schedule.active[a] {
                return (0.0, f64::INFINITY);
            }
            let s = &next.sums[a];
            let mean = next.centres[a] + s.release(rng).value() / n;
            let variance = rule.sample_variance(s.level()) / n + s.noise_variance() / (n * n);
            (mean, variance)
        });
        next.schedule.finish_epoch(&epoch);
        if next.schedule.committed.is_none() {
            next.start_epoch().map_err(ObserveError::Mechanism)?;
        }
        *self = next;
        Ok(())
    }

    schedule_view!();

    /// The ε each released sum guarantees in the current epoch (`< ε`).
    pub fn epsilon_effective(&self) -> f64 {
        self.sums[..self.schedule.arms].iter().map(PrivateSum::epsilon_effective).fold(0.0, f64::max)
    }
}

/// LDP robust successive elimination under the calibrated rule: the learner's side of the
/// local model (Tao et al. Alg. 4's device, unchanged).
///
/// ```text
/// epoch τ:  level b_τ = B + L_τ sent with every query,  L_τ = R or (c/(z_t·2√2/(ε√n_τ)))^{1/(1+v)};
///           the device reports x·1{|x| ≤ b_τ} + Lap(2b_τ/ε);
///           m = mean of the n_τ reports,  V = (c·b_τ^{1−v} + Var(Lap))/n_τ
/// ```
///
/// **Privacy is the device's:** each report is ε-LDP on its own for any public level
/// ([`LaplaceMechanism::truncated`]); the level depends only on public constants, the epoch's
/// length and the round it starts at (a function of earlier eliminations). The
/// learner only averages reports (post-processing).
///
/// **Shift:** the device truncates around 0, the only centre it knows; the level covers the
/// signal (|x| ≤ B + |η|), so it cuts only noise beyond L_τ — nothing when the noise is within
/// R. A shift of every reward that keeps the means within [−B, B] changes no choice; a larger
/// one needs a larger public B (the device's noise grows with B + R: that is the price of
/// privatising the signal itself).
///
/// ```
/// use ldp_core::bandit::{CalibratedLdpRobustSe, Noise, Rule};
/// use ldp_core::Epsilon;
/// let rule = Rule::new(1.0, Noise::Bounded { r: 0.5, c: 0.25 }, 2, 0.5)?;
/// let mut se = CalibratedLdpRobustSe::<2>::new(rule, Epsilon::new(1.0)?);
/// assert_eq!(se.device_level(), 1.5); // B + R: cuts nothing
/// let arm = se.select();
/// se.observe(arm, 0.25).map_err(|_| ldp_core::ParamError::HorizonZero)?; // a report
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct CalibratedLdpRobustSe<const K: usize> {
    schedule: Schedule<K>,
    epsilon: Epsilon,
    /// b_τ of the current epoch.
    level: f64,
    sums: [f64; K],
}

impl<const K: usize> CalibratedLdpRobustSe<K> {
    /// The learner at ε under `rule` (epoch 1 starts with all K arms).
    pub fn new(rule: Rule, epsilon: Epsilon) -> Self {
        const { assert!(K >= 1, "a bandit needs at least one arm") };
        Self::on(K, rule, epsilon)
    }

    /// [`CalibratedLdpRobustSe::new`] on the first `arms` of the K arms (`1 ≤ arms ≤ K`, else
    /// [`ParamError::TooFewArms`] or [`ParamError::ArmsAboveCapacity`]): the same choices and
    /// levels as `CalibratedLdpRobustSe::<arms>::new`.
    ///
    /// ```
    /// use ldp_core::bandit::{CalibratedLdpRobustSe, Noise, Rule};
    /// use ldp_core::{Epsilon, ParamError};
    /// let rule = Rule::new(1.0, Noise::Bounded { r: 0.5, c: 0.25 }, 2, 0.5)?;
    /// let se = CalibratedLdpRobustSe::<64>::with_arms(2, rule, Epsilon::new(1.0)?)?;
    /// assert_eq!(se.active().iter().filter(|&&a| a).count(), 2);
    /// let none = CalibratedLdpRobustSe::<64>::with_arms(0, rule, Epsilon::new(1.0)?);
    /// assert_eq!(none.err(), Some(ParamError::TooFewArms));
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn with_arms(arms: usize, rule: Rule, epsilon: Epsilon) -> Result<Self, ParamError> {
        const { assert!(K >= 1, "a bandit needs at least one arm") };
        Ok(Self::on(check_arms::<K>(arms)?, rule, epsilon))
    }

    fn on(arms: usize, rule: Rule, epsilon: Epsilon) -> Self {
        let mut this = Self { schedule: Schedule::new(rule, arms), epsilon, level: 1.0, sums: [0.0; K] };
        this.start_epoch();
        this
    }

    fn start_epoch(&mut self) {
        let s = &self.schedule;
        let estimator = Estimator::Local { epsilon: self.epsilon.get() };
        self.level = clamp_level(s.rule.signal_bound() + s.rule.noise_level(estimator, s.pulls, s.z()));
        self.sums = [0.0; K];
    }

    /// The arm to pull: the next surviving arm of the round robin, or the survivor.
    pub fn select(&self) -> usize {
        self.schedule.next_arm()
    }

    /// The public level `b_τ` the device truncates this round's reward at before its noise
    /// (in `[2^-40, 2^40]`, the mechanism's range).
    pub fn device_level(&self) -> f64 {
        self.level
    }

    /// The device's report mechanism for this round ([`LaplaceMechanism::truncated`] at ε and
    /// `b_τ`).
    pub fn device_mechanism(&self) -> Result<LaplaceMechanism, ParamError> {
        LaplaceMechanism::truncated(self.epsilon, TruncationLevel::new(self.level)?)
    }

    /// The device's report for the selected arm. Refused, changing nothing, if `arm` is not the
    /// selected one, the report is not finite, or it is larger than the device's mechanism can
    /// release at this round's level ([`ObserveError::ReportOutOfRange`]).
    pub fn observe(&mut self, arm: usize, report: f64) -> Result<(), ObserveError> {
        check_observation(arm, self.schedule.arms, report)?;
        self.schedule.check_arm(arm)?;
        check_report(self.device_mechanism(), report)?;
        if self.schedule.committed.is_some() {
            return Ok(());
        }
        self.sums[arm] += report;
        if self.schedule.advance() {
            let n = self.schedule.pulls as f64;
            let rule = self.schedule.rule;
            // The device's actual noise variance (its grid's discrete Laplace) at this level;
            // 2(2b/ε)² if the level were refused (it is not: it is in the mechanism's range).
            let e = self.epsilon.get();
            let noise = self
                .device_mechanism()
                .map_or(8.0 * self.level * self.level / (e * e), |m| m.noise_variance());
            let variance = (rule.sample_variance(self.level) + noise) / n;
            let epoch: [(f64, f64); K] = core::array::from_fn(|a| (self.sums[a] / n, variance));
            self.schedule.finish_epoch(&epoch);
            if self.schedule.committed.is_none() {
                self.start_epoch();
            }
        }
        Ok(())
    }

    schedule_view!();
}
