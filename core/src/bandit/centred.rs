//! The UCB learners under the calibrated rule ([`super::rule`]): Robust-UCB with rewards
//! clamped around a centre estimated from the arm's own rewards (shift-invariant), and DP-RUCB
//! with levels that cover the signal (one adaptive tree per arm, Tao et al. Alg. 1 + 2).

use rand_core::Rng;

use super::rule::{Combined, Estimator, Noise, Rule};
use super::{ObserveError, ParamError, argmax, check_arms, check_observation};
use crate::params::{Bound, Epsilon};
use crate::tree::{AdaptiveTree, levels_for};

/// Bits of grid resolution below the trees' ceiling (as [`super::DpRobustUcb`]'s).
const TREE_GRID_BITS: i32 = 16;

/// One arm of [`CalibratedRobustUcb`].
#[derive(Clone, Copy, Debug, PartialEq)]
struct CentredArm {
    /// Pulls so far (the first reward is the first centre and is not in the estimate).
    pulls: u64,
    /// m = pulls − 1: the rewards in the estimate.
    used: u64,
    /// The centre the next reward is clamped around.
    centre: f64,
    /// A: the distance of the centre from the arm's mean the level allows for.
    allowance: f64,
    /// The blocks of rewards closed so far (a block ends at m = 1, 2, 4, 8, …, where the
    /// centre is re-estimated), combined by inverse variance.
    closed: Combined,
    /// The open block: Σ (centre + clamp(x_i − centre, b_i)), Σ of the rewards' variance
    /// bounds, and its number of rewards.
    block_sum: f64,
    block_variance: f64,
    block_count: u64,
    /// The estimate (the closed blocks and the open one, combined) and its sd.
    mean: f64,
    sd: f64,
}

impl CentredArm {
    const NEW: Self = Self {
        pulls: 0,
        used: 0,
        centre: 0.0,
        allowance: 0.0,
        closed: Combined::ZERO,
        block_sum: 0.0,
        block_variance: 0.0,
        block_count: 0,
        mean: 0.0,
        sd: f64::INFINITY,
    };
}

/// Robust UCB under the calibrated rule: non-private, on raw rewards, **shift-invariant**
/// (adding a constant to every reward changes no choice).
///
/// ```text
/// arm a's 1st reward x₁:  centre ĉ = x₁, allowance A = R (bounded noise) or the Markov
///                          radius (c·e^{ln-term(T)})^{1/(1+v)} (heavy tails); not averaged;
/// its m-th reward after:  block-sum += ĉ + clamp(x − ĉ, b_m),  b_m = A + L_m,
///                          L_m = R or (c m/z_T²)^{1/(1+v)};  block-var += c·b_m^{1−v};
///                          μ̂_a, s_a: the blocks' means (variance block-var/n²) combined by
///                          inverse variance; at m = 1, 2, 4, 8, …: the block closes, ĉ = μ̂,
///                          A = R (bounded; nothing is ever cut) or z_T·s (heavy tails);
/// index (m ≥ 1):           μ̂_a + κ·z_t·s_a
/// ```
///
/// The blocks are combined by inverse variance (as successive elimination combines its
/// epochs) because the first rewards of a heavy-tailed arm are clamped at the huge allowance of
/// a one-reward centre (the Markov radius, ~10⁸ at v = ½, T = 10⁵), so their variance bounds
/// c·b^{1−v} would dominate a pooled sum's for thousands of rewards (its sd at m = 1000 was
/// 2.5× that of the last block alone on Tao et al.'s S1–S3, v = ½). With bounded noise every
/// bound is c and the combination is the pooled mean. The weights are public constants, so a
/// shift of every reward still shifts every μ̂ and nothing else.
///
/// Every quantity the choices depend on is a difference of rewards or a public constant, so a
/// shift of every reward shifts every μ̂ and every centre and nothing else. With bounded noise
/// the level A + L = 2R never cuts a reward (each centre is an average of rewards within R of
/// the mean), and this is UCB with the noise's sd √c. Arms are first pulled twice each, in
/// order. Fixed memory: ten words per arm of the capacity K; [`CalibratedRobustUcb::with_arms`]
/// plays only the first `arms ≤ K`.
///
/// ```
/// use ldp_core::bandit::{CalibratedRobustUcb, Noise, Rule};
/// let rule = Rule::new(1.0, Noise::Bounded { r: 0.5, c: 0.1 }, 2, 0.5)?;
/// let mut ucb = CalibratedRobustUcb::<2>::new(rule, 100)?;
/// for expected in [0, 1, 0, 1] {
///     let arm = ucb.select();
///     assert_eq!(arm, expected);
///     ucb.observe(arm, 10.0 + arm as f64).map_err(|_| ldp_core::ParamError::HorizonZero)?;
/// }
/// assert_eq!(ucb.mean(1), Some(11.0));
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Debug)]
pub struct CalibratedRobustUcb<const K: usize> {
    /// The arms played, `1 ≤ arms ≤ K`: only the first `arms` entries of `arms_state` are used.
    arms: usize,
    rule: Rule,
    horizon: u64,
    /// z_T: the levels' and allowances' confidence (fixed, so a level depends on m only).
    z_horizon: f64,
    rounds: u64,
    arms_state: [CentredArm; K],
}

impl<const K: usize> CalibratedRobustUcb<K> {
    /// The learner for horizon T under `rule`.
    pub fn new(rule: Rule, horizon: u64) -> Result<Self, ParamError> {
        Self::with_arms(K, rule, horizon)
    }

    /// [`CalibratedRobustUcb::new`] on the first `arms` of the K arms (`1 ≤ arms ≤ K`, else
    /// [`ParamError::TooFewArms`] or [`ParamError::ArmsAboveCapacity`]): the same choices as
    /// `CalibratedRobustUcb::<arms>::new`.
    ///
    /// ```
    /// use ldp_core::bandit::{CalibratedRobustUcb, Noise, Rule};
    /// let rule = Rule::new(1.0, Noise::Bounded { r: 0.5, c: 0.1 }, 3, 0.5)?;
    /// let ucb = CalibratedRobustUcb::<64>::with_arms(3, rule, 100)?;
    /// assert_eq!((ucb.arms(), ucb.select()), (3, 0));
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn with_arms(arms: usize, rule: Rule, horizon: u64) -> Result<Self, ParamError> {
        const { assert!(K >= 1, "a bandit needs at least one arm") };
        let arms = check_arms::<K>(arms)?;
        if horizon == 0 {
            return Err(ParamError::HorizonZero);
        }
        Ok(Self {
            arms,
            rule,
            horizon,
            z_horizon: rule.z(horizon),
            rounds: 0,
            arms_state: [CentredArm::NEW; K],
        })
    }

    /// The state of the arms played.
    fn played(&self) -> &[CentredArm] {
        &self.arms_state[..self.arms]
    }

    /// The arm to pull: an arm never pulled (lowest first), then an arm pulled once, else the
    /// largest index.
    pub fn select(&self) -> usize {
        for first in [0, 1] {
            if let Some(arm) = self.played().iter().position(|a| a.pulls == first) {
                return arm;
            }
        }
        let z = self.rule.z(self.rounds.saturating_add(1));
        argmax(self.arms, |a| self.index_with(a, z))
    }

    fn index_with(&self, arm: usize, z: f64) -> f64 {
        match self.played().get(arm) {
            Some(a) if a.used == 0 => f64::INFINITY,
            Some(a) => a.mean + self.rule.radius(z, a.sd),
            None => f64::NEG_INFINITY,
        }
    }

    /// The index of `arm` in the coming round (+∞ before its second pull, −∞ out of range).
    pub fn index(&self, arm: usize) -> f64 {
        self.index_with(arm, self.rule.z(self.rounds.saturating_add(1)))
    }

    /// The raw reward of `arm`. Refused, changing nothing, for an arm out of range or a
    /// non-finite reward.
    pub fn observe(&mut self, arm: usize, reward: f64) -> Result<(), ObserveError> {
        check_observation(arm, self.arms, reward)?;
        let (rule, z) = (self.rule, self.z_horizon);
        let a = &mut self.arms_state[arm];
        a.pulls = a.pulls.saturating_add(1);
        self.rounds = self.rounds.saturating_add(1);
        if a.pulls == 1 {
            a.centre = reward;
            a.allowance = rule.single_reward_allowance(self.horizon);
            return Ok(());
        }
        a.used = a.used.saturating_add(1);
        let noise = rule.noise_level(Estimator::Raw, a.used, z);
        let level = a.allowance + noise;
        a.block_sum += a.centre + (reward - a.centre).clamp(-level, level);
        a.block_variance += rule.sample_variance(level);
        a.block_count = a.block_count.saturating_add(1);
        let n = a.block_count as f64;
        let mut estimate = a.closed;
        estimate.add(a.block_sum / n, a.block_variance / (n * n));
        a.mean = estimate.mean();
        a.sd = estimate.sd();
        if a.used.is_power_of_two() {
            a.closed = estimate;
            (a.block_sum, a.block_variance, a.block_count) = (0.0, 0.0, 0);
            a.centre = a.mean;
            a.allowance = match rule.noise() {
                Noise::Bounded { r, .. } => r,
                Noise::Moment { .. } => Rule::allowance(z, a.sd),
            };
        }
        Ok(())
    }

    /// Pulls of each arm so far (0 for the arms past [`CalibratedRobustUcb::arms`]).
    pub fn counts(&self) -> [u64; K] {
        self.arms_state.map(|a| a.pulls)
    }

    /// The number of arms played (K unless built [`CalibratedRobustUcb::with_arms`]).
    pub fn arms(&self) -> usize {
        self.arms
    }

    /// The estimate of `arm`'s mean (`None` before its second pull or out of range).
    pub fn mean(&self, arm: usize) -> Option<f64> {
        self.played().get(arm).filter(|a| a.used > 0).map(|a| a.mean)
    }

    /// The centre `arm`'s next reward is clamped around (`None` before its first pull).
    pub fn centre(&self, arm: usize) -> Option<f64> {
        self.played().get(arm).filter(|a| a.pulls > 0).map(|a| a.centre)
    }

    /// The rule.
    pub fn rule(&self) -> Rule {
        self.rule
    }
}

/// DP robust UCB under the calibrated rule: Tao et al. Alg. 1 with the adaptive tree of Alg. 2,
/// ε-DP (event level) for a horizon T ≤ `2^L − 1`, with levels that cover the signal.
///
/// ```text
/// arm a's n-th reward:  insert clamp(x, b_n) into Tree_a with bound b_n = B + L_n,
///                        L_n = R (bounded noise) or (c/(z_T·ρ_n))^{1/(1+v)},  ρ_n = 2√2·depth^{3/2}/(εn);
/// index:                 Ŝ_a/n_a + κ·z_t·s_a,
///                        s_a² = (Σ_i c·b_i^{1−v} + popcount(n_a)·2·scale_n²)/n_a²
/// ```
///
/// **Privacy is Alg. 2's, unchanged:** each reward enters exactly one tree (its arm's), with a
/// public bound b_n that depends only on n and public constants and is non-decreasing in n
/// (L_n grows with n, or is the constant R), so each tree is ε-DP and the K trees together are
/// ε-DP by parallel composition; the index and the arm chosen are post-processing. The centre
/// of the clamp is 0, the centre of the public range [−B, B]: the tree's levels may not
/// decrease, so a centre estimated later could not lower them. |x| ≤ |f| + |η| ≤ B + |η|, so the
/// clamp at B + L_n cuts only noise beyond L_n (nothing when the noise is within R), and a shift
/// of every reward that keeps the means within [−B, B] (and the noise within R) changes no
/// choice.
///
/// ```
/// use ldp_core::bandit::{CalibratedDpRobustUcb, Noise, Rule};
/// use ldp_core::Epsilon;
/// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
/// let rule = Rule::new(1.0, Noise::Bounded { r: 0.5, c: 0.1 }, 2, 0.5)?;
/// let mut ucb = CalibratedDpRobustUcb::<2, 10>::new(rule, Epsilon::new(1.0)?, 1000)?;
/// assert_eq!(ucb.level(1), 1.5); // B + R
/// let mut rng = ChaCha20Rng::seed_from_u64(7);
/// let arm = ucb.select();
/// ucb.observe(arm, 0.7, &mut rng).map_err(|_| ldp_core::ParamError::HorizonZero)?;
/// assert_eq!(ucb.select(), 1);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub struct CalibratedDpRobustUcb<const K: usize, const L: usize> {
    /// The arms played, `1 ≤ arms ≤ K`: only the first `arms` entries of each array are used.
    arms: usize,
    rule: Rule,
    estimator: Estimator,
    trees: [AdaptiveTree<L>; K],
    counts: [u64; K],
    released: [f64; K],
    /// Σ of each arm's rewards' variance bounds.
    variance: [f64; K],
    /// Each arm's (Ŝ/n, s).
    estimates: [(f64, f64); K],
    rounds: u64,
    epsilon: Epsilon,
    z_horizon: f64,
    max_bound: f64,
}

impl<const K: usize, const L: usize> CalibratedDpRobustUcb<K, L> {
    /// A placeholder for array construction (see [`super::DpRobustUcb`]).
    const PLACEHOLDER: AdaptiveTree<L> = match (Epsilon::new(1.0), Bound::new(1.0)) {
        (Ok(epsilon), Ok(bound)) => match AdaptiveTree::new(epsilon, bound, 1) {
            Ok(tree) => tree,
            Err(_) => panic!("constant parameters of a one-element tree are valid"),
        },
        _ => panic!("ε = 1 and B = 1 are valid"),
    };

    /// The learner at ε for horizon T (`1 ≤ T ≤ 2^L − 1`) under `rule`. Fails if T is zero or
    /// above the tree capacity, or the trees cannot be built (`b_T` outside `[2^-40, 2^40]`,
    /// ε too small for the sampler).
    pub fn new(rule: Rule, epsilon: Epsilon, horizon: u64) -> Result<Self, ParamError> {
        Self::with_arms(K, rule, epsilon, horizon)
    }

    /// [`CalibratedDpRobustUcb::new`] on the first `arms` of the K arms (`1 ≤ arms ≤ K`, else
    /// [`ParamError::TooFewArms`] or [`ParamError::ArmsAboveCapacity`]): the same choices and
    /// the same noise draws as `CalibratedDpRobustUcb::<arms, L>::new` (the other arms' trees
    /// are never built).
    ///
    /// ```
    /// use ldp_core::bandit::{CalibratedDpRobustUcb, Noise, Rule};
    /// use ldp_core::{Epsilon, ParamError};
    /// let rule = Rule::new(1.0, Noise::Bounded { r: 0.5, c: 0.1 }, 2, 0.5)?;
    /// let ucb = CalibratedDpRobustUcb::<64, 10>::with_arms(2, rule, Epsilon::new(1.0)?, 1000)?;
    /// assert_eq!(ucb.arms(), 2);
    /// let too_many = CalibratedDpRobustUcb::<2, 10>::with_arms(3, rule, Epsilon::new(1.0)?, 1000);
    /// assert_eq!(too_many.err(), Some(ParamError::ArmsAboveCapacity));
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn with_arms(arms: usize, rule: Rule, epsilon: Epsilon, horizon: u64) -> Result<Self, ParamError> {
        const { assert!(K >= 1, "a bandit needs at least one arm") };
        let arms = check_arms::<K>(arms)?;
        if horizon == 0 {
            return Err(ParamError::HorizonZero);
        }
        let depth = levels_for(horizon) as u32;
        let estimator = Estimator::Tree { epsilon: epsilon.get(), depth };
        let z_horizon = rule.z(horizon);
        let level = |n| rule.signal_bound() + rule.noise_level(estimator, n, z_horizon);
        let max_bound = level(horizon);
        let bound = Bound::new(max_bound)?;
        let grid_log2 = if max_bound > 0.0 { libm::ilogb(max_bound) - TREE_GRID_BITS } else { 0 };
        let build = || AdaptiveTree::<L>::with_grid(epsilon, bound, horizon, grid_log2);
        build()?;
        let trees = core::array::from_fn(|a| {
            if a < arms { build().unwrap_or(Self::PLACEHOLDER) } else { Self::PLACEHOLDER }
        });
        Ok(Self {
            arms,
            rule,
            estimator,
            trees,
            counts: [0; K],
            released: [0.0; K],
            variance: [0.0; K],
            estimates: [(0.0, f64::INFINITY); K],
            rounds: 0,
            epsilon,
            z_horizon,
            max_bound,
        })
    }

    /// The bound `b_n` of an arm's n-th reward (≤ the trees' ceiling `b_T`).
    pub fn level(&self, n: u64) -> f64 {
        let l = self.rule.noise_level(self.estimator, n, self.z_horizon);
        (self.rule.signal_bound() + l).min(self.max_bound)
    }

    /// The arm to pull: an arm never pulled (lowest first), else the largest index.
    pub fn select(&self) -> usize {
        match self.counts[..self.arms].iter().position(|&n| n == 0) {
            Some(arm) => arm,
            None => {
                let z = self.rule.z(self.rounds.saturating_add(1));
                argmax(self.arms, |a| self.index_with(a, z))
            }
        }
    }

    fn index_with(&self, arm: usize, z: f64) -> f64 {
        match (self.counts[..self.arms].get(arm), self.estimates.get(arm)) {
            (Some(0), _) => f64::INFINITY,
            (Some(_), Some(&(mean, sd))) => mean + self.rule.radius(z, sd),
            _ => f64::NEG_INFINITY,
        }
    }

    /// The index of `arm` in the coming round (+∞ before its first pull, −∞ out of range).
    pub fn index(&self, arm: usize) -> f64 {
        self.index_with(arm, self.rule.z(self.rounds.saturating_add(1)))
    }

    /// The raw reward of `arm`: clamped at `b_n` and inserted into the arm's tree (noise from
    /// `rng`). Refused, changing nothing, for an arm out of range, a non-finite reward, or more
    /// than T pulls of one arm.
    pub fn observe<R: Rng + ?Sized>(
        &mut self,
        arm: usize,
        reward: f64,
        rng: &mut R,
    ) -> Result<(), ObserveError> {
        check_observation(arm, self.arms, reward)?;
        let n = self.counts[arm].saturating_add(1);
        let noise = self.rule.noise_level(self.estimator, n, self.z_horizon);
        // b_n is non-decreasing in n and ≤ b_T; the max/min only guard floating-point ties.
        let previous = self.trees[arm].last_bound().unwrap_or(0.0);
        let level = (self.rule.signal_bound() + noise).max(previous).min(self.max_bound);
        let release =
            self.trees[arm].insert(reward.clamp(-level, level), level, rng).map_err(ObserveError::Tree)?;
        self.released[arm] = release.value();
        self.counts[arm] = n;
        self.rounds = self.rounds.saturating_add(1);
        self.variance[arm] += self.rule.sample_variance(level);
        let nf = n as f64;
        let scale = self.trees[arm].node_noise_scale();
        let tree_variance = f64::from(n.count_ones()) * 2.0 * scale * scale;
        self.estimates[arm] = (self.released[arm] / nf, libm::sqrt(self.variance[arm] + tree_variance) / nf);
        Ok(())
    }

    /// Pulls of each arm so far (0 for the arms past [`CalibratedDpRobustUcb::arms`]).
    pub fn counts(&self) -> [u64; K] {
        self.counts
    }

    /// The number of arms played (K unless built [`CalibratedDpRobustUcb::with_arms`]).
    pub fn arms(&self) -> usize {
        self.arms
    }

    /// Arm `arm`'s latest private sum (0 before its first pull; `None` out of range).
    pub fn private_sum(&self, arm: usize) -> Option<f64> {
        self.released[..self.arms].get(arm).copied()
    }

    /// The trees' ceiling `b_T`.
    pub fn max_bound(&self) -> f64 {
        self.max_bound
    }

    /// The ε the releases guarantee so far (the largest of the arms' trees'; < ε).
    pub fn epsilon_effective(&self) -> f64 {
        self.trees[..self.arms].iter().map(AdaptiveTree::epsilon_effective).fold(0.0, f64::max)
    }

    /// The rule.
    pub fn rule(&self) -> Rule {
        self.rule
    }
}

impl<const K: usize, const L: usize> core::fmt::Debug for CalibratedDpRobustUcb<K, L> {
    /// The public configuration only: the trees' sums are as secret as the rewards.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CalibratedDpRobustUcb")
            .field("arms", &self.arms)
            .field("levels", &L)
            .field("epsilon", &self.epsilon.get())
            .field("rule", &self.rule)
            .field("rounds", &self.rounds)
            .finish_non_exhaustive()
    }
}
