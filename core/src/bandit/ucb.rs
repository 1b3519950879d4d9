//! Robust UCB (Bubeck et al. 2013, truncated mean) and its ε-DP version with one adaptive tree
//! per arm (Tao et al. Alg. 1 + Alg. 2).

use rand_core::Rng;

use super::{HeavyTail, ObserveError, ParamError, argmax, check_arms, check_constant, check_observation};
use crate::params::{Bound, Epsilon};
use crate::tree::AdaptiveTree;
use crate::truncation::{
    dp_robust_ucb_level, dp_robust_ucb_level_at, log_pow_1_5, log_t_squared, robust_ucb_level_at,
};

/// Bits of grid resolution below the trees' ceiling `B_T`: the grid is `2^(⌊log₂ B_T⌋ − 16)`,
/// so early, small `B_n` are still resolved (`B_T` spans < 2^17 steps; the default of
/// [`crate::tree`] is 12 bits).
const TREE_GRID_BITS: i32 = 16;

/// `x^y` for the indices (micromath, relative error ≈ 2·10⁻³); `x > 0`. Called through the
/// trait so that the host runs micromath too (a std build would otherwise pick `f32::powf`).
fn fast_pow(x: f64, y: f64) -> f64 {
    f64::from(micromath::F32Ext::powf(x as f32, y as f32))
}

/// `ln x` for the indices (micromath); `x > 0`.
fn fast_ln(x: f64) -> f64 {
    f64::from(micromath::F32Ext::ln(x as f32))
}

/// `e^x` for the indices (micromath).
fn fast_exp(x: f64) -> f64 {
    f64::from(micromath::F32Ext::exp(x as f32))
}

/// The non-private robust UCB of Bubeck, Cesa-Bianchi & Lugosi (2013) with the truncated
/// empirical mean, the baseline of Tao et al. §4.
///
/// The s-th reward of an arm is kept if `|x| ≤ B_s = (u s / ln(1/δ))^{1/(1+v)}` and replaced by
/// 0 otherwise ([`robust_ucb_level`](crate::truncation::robust_ucb_level)); the index is
///
/// ```text
/// μ̂_a + c · u^{1/(1+v)} (ln(1/δ) / n_a)^{v/(1+v)},     c = 4 (Bubeck et al., Prop. 1).
/// ```
///
/// See [`super::PRACTICAL_ROBUST_UCB_CONSTANT`] for a less conservative c.
///
/// **Known horizon.** Bubeck et al. use the anytime δ = t^{−2}, which changes every past
/// threshold at every round and needs all rewards kept. This fixed-memory version uses
/// δ = T^{−2}: each threshold depends only on the sample's rank, so the truncated sum is
/// updated online, and Lemma 1 of Bubeck et al. holds for every (arm, n) with probability
/// ≥ 1 − T^{−2} (a union bound over the ≤ KT pairs costs a factor K/T in the failure rate).
///
/// Arms are first pulled once each in order; ties go to the lowest arm.
///
/// K is the capacity; [`RobustUcb::with_arms`] plays only the first `arms ≤ K` of them.
///
/// ```
/// use ldp_core::bandit::{HeavyTail, RobustUcb, PAPER_ROBUST_UCB_CONSTANT};
/// let mut ucb = RobustUcb::<3>::new(HeavyTail::new(1.0, 1.0)?, 100, PAPER_ROBUST_UCB_CONSTANT)?;
/// for round in 0..3 {
///     let arm = ucb.select();
///     assert_eq!(arm, round); // each arm once, in order
///     ucb.observe(arm, 0.5).map_err(|_| ldp_core::ParamError::HorizonZero)?;
/// }
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Debug)]
pub struct RobustUcb<const K: usize> {
    /// The arms played, `1 ≤ arms ≤ K`: only the first `arms` entries of each array are used.
    arms: usize,
    tail: HeavyTail,
    horizon: u64,
    /// `c·u^{1/(1+v)}`.
    scale: f64,
    /// `ln(1/δ) = ln(T²)`.
    log_inv_delta: f64,
    counts: [u64; K],
    sums: [f64; K],
    /// Each arm's exploration bonus at its current count (it does not depend on t).
    bonuses: [f64; K],
}

impl<const K: usize> RobustUcb<K> {
    /// A robust UCB for horizon T with index constant `constant` (4 in the paper,
    /// [`super::PAPER_ROBUST_UCB_CONSTANT`]).
    pub fn new(tail: HeavyTail, horizon: u64, constant: f64) -> Result<Self, ParamError> {
        Self::with_arms(K, tail, horizon, constant)
    }

    /// [`RobustUcb::new`] on the first `arms` of the K arms (`1 ≤ arms ≤ K`, else
    /// [`ParamError::TooFewArms`] or [`ParamError::ArmsAboveCapacity`]): the same choices as
    /// `RobustUcb::<arms>::new`.
    ///
    /// ```
    /// use ldp_core::bandit::{HeavyTail, RobustUcb};
    /// use ldp_core::ParamError;
    /// let tail = HeavyTail::new(1.0, 1.0)?;
    /// let ucb = RobustUcb::<64>::with_arms(3, tail, 100, 4.0)?;
    /// assert_eq!(ucb.arms(), 3);
    /// assert_eq!(RobustUcb::<2>::with_arms(3, tail, 100, 4.0).err(), Some(ParamError::ArmsAboveCapacity));
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn with_arms(arms: usize, tail: HeavyTail, horizon: u64, constant: f64) -> Result<Self, ParamError> {
        const { assert!(K >= 1, "a bandit needs at least one arm") };
        let arms = check_arms::<K>(arms)?;
        if horizon == 0 {
            return Err(ParamError::HorizonZero);
        }
        let c = check_constant(constant)?;
        Ok(Self {
            arms,
            tail,
            horizon,
            scale: c * libm::pow(tail.u(), 1.0 / (1.0 + tail.v())),
            log_inv_delta: log_t_squared(horizon),
            counts: [0; K],
            sums: [0.0; K],
            bonuses: [f64::INFINITY; K],
        })
    }

    /// The arm to pull: an arm never pulled (lowest first), else the largest index.
    pub fn select(&self) -> usize {
        match self.counts[..self.arms].iter().position(|&n| n == 0) {
            Some(arm) => arm,
            None => argmax(self.arms, |a| self.index(a)),
        }
    }

    /// The reward of `arm`: truncated at `B_{n+1}` and added to its sum.
    pub fn observe(&mut self, arm: usize, reward: f64) -> Result<(), ObserveError> {
        check_observation(arm, self.arms, reward)?;
        let n = self.counts[arm].saturating_add(1);
        let (u, v) = (self.tail.u(), self.tail.v());
        let level = robust_ucb_level_at(u, n, self.log_inv_delta, v);
        self.sums[arm] += if reward.abs() <= level { reward } else { 0.0 };
        self.counts[arm] = n;
        self.bonuses[arm] = self.scale * fast_pow(self.log_inv_delta / n as f64, v / (1.0 + v));
        Ok(())
    }

    /// The index of `arm` (+∞ before its first pull, −∞ for an arm out of range).
    pub fn index(&self, arm: usize) -> f64 {
        match (self.counts[..self.arms].get(arm), self.sums.get(arm)) {
            (Some(0), _) => f64::INFINITY,
            (Some(&n), Some(&sum)) => sum / n as f64 + self.bonuses[arm],
            _ => f64::NEG_INFINITY,
        }
    }

    /// Pulls of each arm so far (0 for the arms past [`RobustUcb::arms`]).
    pub fn counts(&self) -> [u64; K] {
        self.counts
    }

    /// The number of arms played (K unless built [`RobustUcb::with_arms`]).
    pub fn arms(&self) -> usize {
        self.arms
    }

    /// The horizon T (δ = T^{−2}).
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    /// The truncated empirical mean of `arm` (`None` before its first pull or out of range).
    pub fn mean(&self, arm: usize) -> Option<f64> {
        match (self.counts[..self.arms].get(arm), self.sums.get(arm)) {
            (Some(&n), Some(&sum)) if n > 0 => Some(sum / n as f64),
            _ => None,
        }
    }
}

/// DP robust UCB, Tao et al. Alg. 1 with the adaptive tree of Alg. 2: ε-differentially private
/// (event level: the sequence of arms pulled hides any one reward) for a horizon T ≤ `2^L − 1`.
///
/// ```text
/// rounds 1..K:  pull each arm once;
/// round t > K:  a_t = argmax_a  Ŝ_a(t)/n_a + C·u^{1/(1+v)} (ln(2t⁴) · ln^{1.5+1/v} T / (n_a ε))^{v/(1+v)};
/// after a pull:  n_a += 1,  x̃ = x·1{|x| ≤ B_{n_a}},  insert x̃ into Tree_a with bound B_{n_a},
///               B_n = (ε u n / ln^{1.5} T)^{1/(1+v)}        (dp_robust_ucb_level)
/// ```
///
/// `Ŝ_a(t)` is Tree_a's latest release. Each Tree_a is an ε-DP
/// [`AdaptiveTree`] for horizon T (an arm can be pulled up to T times) built with the ceiling
/// `B_T`; B_n is non-decreasing in n and public. Each reward enters exactly one tree, so the
/// trees together are ε-DP (parallel composition, Tao et al. Lemma 1 and Theorem 1), and the
/// arms chosen are post-processing. The paper's constant is C = 18 (Lemma 11,
/// [`super::PAPER_DP_UCB_CONSTANT`]); see [`super::PRACTICAL_DP_UCB_CONSTANT`].
///
/// Memory: K adaptive trees of L levels (`16·L` bytes of p-sums each) plus `16·K` bytes of
/// counts and released sums; it does not depend on T. K is the capacity;
/// [`DpRobustUcb::with_arms`] plays only the first `arms ≤ K` (the others' trees are never
/// built, and no noise is drawn for them).
///
/// ```
/// use ldp_core::bandit::{DpRobustUcb, HeavyTail, PAPER_DP_UCB_CONSTANT};
/// use ldp_core::Epsilon;
/// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
/// let tail = HeavyTail::new(2.0, 0.5)?;
/// let mut ucb = DpRobustUcb::<2, 10>::new(Epsilon::new(1.0)?, tail, 1000, PAPER_DP_UCB_CONSTANT)?;
/// let mut rng = ChaCha20Rng::seed_from_u64(7);
/// let arm = ucb.select();
/// assert_eq!(arm, 0);
/// ucb.observe(arm, 0.7, &mut rng).map_err(|_| ldp_core::ParamError::HorizonZero)?;
/// assert_eq!(ucb.select(), 1);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub struct DpRobustUcb<const K: usize, const L: usize> {
    /// The arms played, `1 ≤ arms ≤ K`: only the first `arms` entries of each array are used.
    arms: usize,
    trees: [AdaptiveTree<L>; K],
    counts: [u64; K],
    released: [f64; K],
    rounds: u64,
    epsilon: Epsilon,
    tail: HeavyTail,
    horizon: u64,
    max_bound: f64,
    /// `C·u^{1/(1+v)}`.
    scale: f64,
    /// `ln^{1.5+1/v} T / ε`.
    log_term: f64,
    /// `ln^{1.5} T`, for the truncation levels.
    log_pow: f64,
    /// `ln n_a` (micromath), for the indices.
    log_counts: [f64; K],
}

impl<const K: usize, const L: usize> DpRobustUcb<K, L> {
    /// A placeholder for array construction; every tree in a built policy is replaced by a real
    /// one (all are built from the same, already validated, parameters).
    const PLACEHOLDER: AdaptiveTree<L> = match (Epsilon::new(1.0), Bound::new(1.0)) {
        (Ok(epsilon), Ok(bound)) => match AdaptiveTree::new(epsilon, bound, 1) {
            Ok(tree) => tree,
            Err(_) => panic!("constant parameters of a one-element tree are valid"),
        },
        _ => panic!("ε = 1 and B = 1 are valid"),
    };

    /// DP robust UCB at ε for horizon T (`1 ≤ T ≤ 2^L − 1`) with index constant `constant`.
    ///
    /// Fails if T is zero or above the tree capacity, the constant is invalid, or the trees
    /// cannot be built (`B_T` outside `[2^-40, 2^40]`, ε too small for the sampler).
    pub fn new(epsilon: Epsilon, tail: HeavyTail, horizon: u64, constant: f64) -> Result<Self, ParamError> {
        Self::with_arms(K, epsilon, tail, horizon, constant)
    }

    /// [`DpRobustUcb::new`] on the first `arms` of the K arms (`1 ≤ arms ≤ K`, else
    /// [`ParamError::TooFewArms`] or [`ParamError::ArmsAboveCapacity`]): the same choices and
    /// the same noise draws as `DpRobustUcb::<arms, L>::new`.
    ///
    /// ```
    /// use ldp_core::bandit::{DpRobustUcb, HeavyTail};
    /// use ldp_core::{Epsilon, ParamError};
    /// let (eps, tail) = (Epsilon::new(1.0)?, HeavyTail::new(2.0, 0.5)?);
    /// let ucb = DpRobustUcb::<64, 10>::with_arms(5, eps, tail, 1000, 0.5)?;
    /// assert_eq!(ucb.arms(), 5);
    /// assert_eq!(DpRobustUcb::<4, 10>::with_arms(0, eps, tail, 1000, 0.5).err(), Some(ParamError::TooFewArms));
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn with_arms(
        arms: usize,
        epsilon: Epsilon,
        tail: HeavyTail,
        horizon: u64,
        constant: f64,
    ) -> Result<Self, ParamError> {
        const { assert!(K >= 1, "a bandit needs at least one arm") };
        let arms = check_arms::<K>(arms)?;
        if horizon == 0 {
            return Err(ParamError::HorizonZero);
        }
        let c = check_constant(constant)?;
        let (u, v) = (tail.u(), tail.v());
        let max_bound = dp_robust_ucb_level(epsilon, u, horizon, horizon, v);
        let bound = Bound::new(max_bound)?;
        let grid_log2 = if max_bound > 0.0 {
            libm::ilogb(max_bound) - TREE_GRID_BITS
        } else {
            0 // the tree constructor reports the zero bound
        };
        let build = || AdaptiveTree::<L>::with_grid(epsilon, bound, horizon, grid_log2);
        build()?; // validates everything; the trees below are built from the same values
        let trees = core::array::from_fn(|a| {
            if a < arms { build().unwrap_or(Self::PLACEHOLDER) } else { Self::PLACEHOLDER }
        });
        let log_t = libm::log(horizon.max(2) as f64);
        Ok(Self {
            arms,
            trees,
            counts: [0; K],
            released: [0.0; K],
            rounds: 0,
            epsilon,
            tail,
            horizon,
            max_bound,
            scale: c * libm::pow(u, 1.0 / (1.0 + v)),
            log_term: libm::pow(log_t, 1.5 + 1.0 / v) / epsilon.get(),
            log_pow: log_pow_1_5(horizon),
            log_counts: [0.0; K],
        })
    }

    /// The arm to pull in round `t = rounds + 1`: an arm never pulled (lowest first, rounds
    /// 1..K), else the largest index.
    pub fn select(&self) -> usize {
        match self.counts[..self.arms].iter().position(|&n| n == 0) {
            Some(arm) => arm,
            None => {
                let log_common = self.log_common();
                argmax(self.arms, |a| self.index_with(a, log_common))
            }
        }
    }

    /// `ln(ln(2t⁴)·ln^{1.5+1/v} T/ε)` for the coming round t (micromath).
    fn log_common(&self) -> f64 {
        let t = self.rounds.saturating_add(1) as f64;
        fast_ln((core::f64::consts::LN_2 + 4.0 * fast_ln(t)) * self.log_term)
    }

    /// The index with the round's common logarithm computed once:
    /// `Ŝ/n + C u^{1/(1+v)} exp(v/(1+v)·(ln(ln(2t⁴) ln^{1.5+1/v}T/ε) − ln n))`.
    fn index_with(&self, arm: usize, log_common: f64) -> f64 {
        match (self.counts[..self.arms].get(arm), self.released.get(arm), self.log_counts.get(arm)) {
            (Some(0), _, _) => f64::INFINITY,
            (Some(&n), Some(&sum), Some(&log_n)) => {
                let v = self.tail.v();
                sum / n as f64 + self.scale * fast_exp(v / (1.0 + v) * (log_common - log_n))
            }
            _ => f64::NEG_INFINITY,
        }
    }

    /// `B_n` of [`dp_robust_ucb_level`], with `ln^{1.5} T` computed once.
    fn level_uncapped(&self, n: u64) -> f64 {
        dp_robust_ucb_level_at(self.epsilon, self.tail.u(), n, self.log_pow, self.tail.v())
    }

    /// The reward of `arm`: truncated at `B_{n+1}` and inserted into the arm's tree (which draws
    /// its node noise from `rng`). Refused, changing nothing, for an arm out of range, a
    /// non-finite reward, or more than T pulls of one arm.
    pub fn observe<R: Rng + ?Sized>(
        &mut self,
        arm: usize,
        reward: f64,
        rng: &mut R,
    ) -> Result<(), ObserveError> {
        check_observation(arm, self.arms, reward)?;
        let n = self.counts[arm].saturating_add(1);
        // B_n is non-decreasing in n and ≤ B_T; the max/min only guard floating-point ties.
        let previous = self.trees[arm].last_bound().unwrap_or(0.0);
        let level = self.level_uncapped(n).max(previous).min(self.max_bound);
        let truncated = if reward.abs() <= level { reward } else { 0.0 };
        let release = self.trees[arm].insert(truncated, level, rng).map_err(ObserveError::Tree)?;
        self.released[arm] = release.value();
        self.counts[arm] = n;
        self.log_counts[arm] = fast_ln(n as f64);
        self.rounds = self.rounds.saturating_add(1);
        Ok(())
    }

    /// The index of `arm` in the coming round (+∞ before its first pull, −∞ out of range).
    pub fn index(&self, arm: usize) -> f64 {
        self.index_with(arm, self.log_common())
    }

    /// Pulls of each arm so far (0 for the arms past [`DpRobustUcb::arms`]).
    pub fn counts(&self) -> [u64; K] {
        self.counts
    }

    /// The number of arms played (K unless built [`DpRobustUcb::with_arms`]).
    pub fn arms(&self) -> usize {
        self.arms
    }

    /// Rounds observed so far.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// Arm `arm`'s latest private sum Ŝ_a (0 before its first pull; `None` out of range).
    pub fn private_sum(&self, arm: usize) -> Option<f64> {
        self.released[..self.arms].get(arm).copied()
    }

    /// The trees' ceiling `B_T`.
    pub fn max_bound(&self) -> f64 {
        self.max_bound
    }

    /// The truncation level `B_n` for an arm's n-th pull.
    pub fn level(&self, n: u64) -> f64 {
        self.level_uncapped(n).min(self.max_bound)
    }

    /// The ε the release sequence guarantees so far: the largest `epsilon_effective` of the
    /// arms' trees (parallel composition; < ε).
    pub fn epsilon_effective(&self) -> f64 {
        self.trees[..self.arms].iter().map(AdaptiveTree::epsilon_effective).fold(0.0, f64::max)
    }
}

impl<const K: usize, const L: usize> core::fmt::Debug for DpRobustUcb<K, L> {
    /// The public configuration only: the trees' sums are as secret as the rewards.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DpRobustUcb")
            .field("arms", &self.arms)
            .field("levels", &L)
            .field("epsilon", &self.epsilon.get())
            .field("tail", &self.tail)
            .field("horizon", &self.horizon)
            .field("rounds", &self.rounds)
            .finish_non_exhaustive()
    }
}
