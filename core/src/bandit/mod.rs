//! K-armed bandit and experts policies that fit on a device: fixed memory (K is a const
//! generic), no allocation, every random draw from a caller-supplied generator (SPEC §1.5).
//!
//! These are the "light policies" of the design card: a microcontroller in front of several
//! sensors can run them itself, and `host-sim` runs exactly this code in its experiments.
//!
//! | type | source | what it does |
//! |---|---|---|
//! | [`RobustUcb`] | Bubeck, Cesa-Bianchi & Lugosi (2013), truncated mean; Tao et al. §4 | non-private baseline |
//! | [`DpRobustUcb`] | Tao et al. Alg. 1 + Alg. 2 | truncation at `B_n`, one [`AdaptiveTree`](crate::tree::AdaptiveTree) per arm, ε-DP |
//! | [`DpRobustSe`] | Tao et al. Alg. 3 | epochs of `R_τ` pulls, private epoch means ([`PrivateSum`]), elimination at `12·err_τ` |
//! | [`LdpRobustSe`] | Tao et al. Alg. 4 | the learner of the local model: publishes `B_τ`, averages ε-LDP reports, eliminates at `14·err_τ` |
//! | [`CalibratedRobustUcb`], [`CalibratedDpRobustUcb`] | the calibrated [`Rule`] | Robust-UCB centred on each arm's own rewards (shift-invariant); DP-RUCB with levels `B + L_n` that cover the signal (Alg. 2's trees) |
//! | [`CalibratedDpRobustSe`], [`CalibratedLdpRobustSe`] | the calibrated [`Rule`] | successive elimination in doubling epochs from one pull, estimates combined across epochs, elimination when intervals `κ·z_t·s` separate (Alg. 3's sums, Alg. 4's device) |
//! | [`Exp3`], [`PrivateExp3`] | Agarwal & Singh Alg. 5, Alg. 4 + Thm 4.1 | exponential weights with uniform exploration; private by adding `Lap(1/ε)` to each observed loss |
//! | [`Hedge`], [`PrivateHedge`] | Agarwal & Singh Alg. 1 + Alg. 2, Cor. 3.2 | experts: exponential weights on exact or tree-aggregated noisy cumulative losses |
//!
//! # The state machines
//!
//! Every policy is a step function driven by its caller: `select` returns the arm to play,
//! `observe` takes the reward (or loss) of that arm. The successive-elimination machines dictate
//! the arm (round robin over the surviving arms); observing another arm is an error
//! ([`ObserveError::UnexpectedArm`]) and changes nothing. A refused `observe` never changes the
//! state. Nothing here panics on any input.
//!
//! # Capacity and arms
//!
//! K is a *capacity*: it sizes the fixed arrays. Each learner's `new` plays all K arms; its
//! `with_arms(arms, …)` plays the first `arms` (`1 ≤ arms ≤ K`, else
//! [`ParamError::TooFewArms`] or [`ParamError::ArmsAboveCapacity`]) and is the learner of K =
//! `arms` bit for bit: every loop, argmax, tie-break, elimination set, tree, noise release and
//! random draw ranges over those arms only, the others are never selected, accepted
//! ([`ObserveError::ArmOutOfRange`] names `arms`) or drawn noise for. The host instantiates each
//! learner once, at K = 64, for any arm count up to 64.
//!
//! # Privacy paths and index maths
//!
//! Every value that protects privacy is computed on the crate's float-safe path: the trees of
//! [`crate::tree`], the [`LaplaceMechanism`](crate::LaplaceMechanism) and the exact
//! [`DiscreteLaplace`](crate::sampler::DiscreteLaplace) sampler; no continuous Laplace is ever
//! drawn. Truncation levels (public, but they set the noise) use exact `libm`
//! ([`crate::truncation`]). Only the UCB *indices* (exploration bonuses, which are post-processing
//! of private values) use `micromath`'s fast `f32` approximations (relative error ≈ 2·10⁻³),
//! which are much cheaper than soft-float `f64` `pow` on an FPU-less Cortex-M0.
//!
//! # Constants
//!
//! The confidence constants of Tao et al. (18 in Alg. 1, κ = 24/28 in Alg. 3/4 with elimination at
//! 12/14·err_τ) make the algorithms explore for far longer than any simulated horizon on the
//! paper's own instances (DP-RSE's first epoch alone needs ≈ 5·10⁷ pulls per arm on S1 with
//! v = ½ and ε = 1).
//! Every constant is a parameter; the `PAPER_*` and `PRACTICAL_*` constants below give both
//! settings. The practical ones make each confidence width about three standard deviations of
//! the privacy noise it has to cover (derivations at each constant); they keep the papers'
//! epoch schedules, whose first epoch still outlasts practical horizons (K·R_1 > T).
//!
//! The `Calibrated*` learners take one [`Rule`] instead (`docs/constants.md`, "K-armed
//! learners"): noise sd of the estimator × one multiplier [`KAPPA`] × a union-bound log, levels
//! that truncate noise and not signal, and epochs that start at one pull and double.
//!
//! # What is not promised
//!
//! The central-DP policies ([`DpRobustUcb`], [`DpRobustSe`], [`PrivateExp3`], [`PrivateHedge`])
//! protect the *rewards* against an observer of their outputs (the arms chosen); their internal
//! state holds exact sums and is as secret as the rewards. Their guarantee assumes uniform
//! random bits: on a device pass a cryptographically secure generator seeded from a TRNG.

use core::fmt;

use rand_core::Rng;

use crate::error::ParamError;
use crate::tree::TreeInsertError;

mod centred;
mod exp3;
mod geometric;
mod hedge;
mod rse;
mod rule;
mod ucb;

pub use centred::{CalibratedDpRobustUcb, CalibratedRobustUcb};
pub use exp3::{Exp3, Exp3Params, PrivateExp3};
pub use geometric::{CalibratedDpRobustSe, CalibratedLdpRobustSe};
pub use hedge::{Hedge, PrivateHedge, exponential_weights, hedge_learning_rate};
pub use rse::{DpRobustSe, EpochRelease, LdpRobustSe, PrivateSum, RseParams};
pub use rule::{Combined, DELTA, Estimator, KAPPA, Noise, Rule};
pub use ucb::{DpRobustUcb, RobustUcb};

/// Bubeck et al.'s constant in the robust-UCB index `μ̂ + 4u^{1/(1+v)}(ln(1/δ)/n)^{v/(1+v)}`
/// (their Prop. 1 for the truncated mean).
pub const PAPER_ROBUST_UCB_CONSTANT: f64 = 4.0;
/// A practical constant for [`RobustUcb`]'s index. The truncated mean of n rewards has standard
/// deviation at most `√(u B_n^{1−v}/n)` (Bernstein's variance term, `E X²1{|X| ≤ B} ≤ uB^{1−v}`);
/// with `B_n = (un/L)^{1/(1+v)}`, `L = ln(T²)`, the index with constant c is `c·√L` of those
/// standard deviations, so 0.6 makes it ≈ 3 at L ≈ 23–28 (T = 10⁵–10⁶).
pub const PRACTICAL_ROBUST_UCB_CONSTANT: f64 = 0.6;
/// The constant of Tao et al. Alg. 1's index, `18u^{1/(1+v)}(…)^{v/(1+v)}` (from Lemma 11).
pub const PAPER_DP_UCB_CONSTANT: f64 = 18.0;
/// A practical constant for [`DpRobustUcb`]'s index. The noise of `Ŝ_a/n_a` is a sum of at most
/// `depth` node noises of scale `2B_n·depth/ε`, divided by n; on the seed-004 instances
/// (u ≈ 6–8, T = 10⁴–10⁶, v ∈ {½, 0.9}) the index with constant 1 is 5–6 standard deviations
/// of that noise, so ½ makes it ≈ 3 (the truncation bias and the sampling error are an order of
/// magnitude smaller).
pub const PRACTICAL_DP_UCB_CONSTANT: f64 = 0.5;
/// κ of Tao et al. Alg. 3 (`24^{(1+v)/v}` in R_τ, elimination at `12·err_τ`).
pub const PAPER_DP_RSE_KAPPA: f64 = crate::truncation::DP_RSE_PAPER_KAPPA;
/// A practical κ for [`DpRobustSe`]: elimination at `1·err_τ` (always ≈ D_τ/2). With
/// `B_τ = (uR_τε/ℓ)^{1/(1+v)}`, `err_τ = u/B_τ^v` exactly, and the Laplace noise of the epoch
/// mean has scale `2B_τ/(R_τε) = 2·err_τ/ℓ`; with ℓ ≈ 15 the difference of two arms' noise
/// exceeds err_τ with probability e^{−7.5}·(2 + 7.5)/4 ≈ 1.3·10⁻³ (≈ 0.8·10⁻³ at ℓ = 16), and on
/// Pareto rewards the truncation bias and sampling error are below 0.1·err_τ.
pub const PRACTICAL_DP_RSE_KAPPA: f64 = 2.0;
/// κ of Tao et al. Alg. 4 (`28^{2(1+v)/v}` in R_τ, elimination at `14·err_τ`).
pub const PAPER_LDP_RSE_KAPPA: f64 = crate::truncation::LDP_RSE_PAPER_KAPPA;
/// A practical κ for [`LdpRobustSe`]: elimination at `3·err_τ`. The average of R_τ reports with
/// Laplace noise of scale `2B_τ/ε` has standard deviation `2√2·err_τ/√ℓ` ≈ 0.74·err_τ at ℓ ≈ 15,
/// so the difference of two arms' means has sd ≈ 1.05·err_τ and the threshold is ≈ 3 of them.
pub const PRACTICAL_LDP_RSE_KAPPA: f64 = 6.0;

/// The heavy-tail assumption of Tao et al. §3.1, eq. (2): every arm's reward X has
/// `E|X|^{1+v} ≤ u` for a known `v ∈ (0, 1]` and `u > 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HeavyTail {
    u: f64,
    v: f64,
}

impl HeavyTail {
    /// Validates `u` (finite, > 0) and `v` (in (0, 1]).
    ///
    /// ```
    /// use ldp_core::bandit::{HeavyTail};
    /// use ldp_core::ParamError;
    /// assert!(HeavyTail::new(5.6, 0.5).is_ok());
    /// assert_eq!(HeavyTail::new(5.6, 1.5), Err(ParamError::MomentOrderInvalid));
    /// assert_eq!(HeavyTail::new(0.0, 0.5), Err(ParamError::MomentBoundInvalid));
    /// ```
    pub fn new(u: f64, v: f64) -> Result<Self, ParamError> {
        // `!(a < x && x <= b)` also rejects NaN.
        if !(v > 0.0 && v <= 1.0) {
            return Err(ParamError::MomentOrderInvalid);
        }
        if !(u.is_finite() && u > 0.0) {
            return Err(ParamError::MomentBoundInvalid);
        }
        Ok(Self { u, v })
    }

    /// The moment bound u.
    pub const fn u(&self) -> f64 {
        self.u
    }

    /// The moment order v (the (1+v)-th moment is finite).
    pub const fn v(&self) -> f64 {
        self.v
    }
}

/// An observation was refused. The policy's state is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ObserveError {
    /// The arm is not one of the policy's arms.
    ArmOutOfRange {
        /// The arm given.
        arm: usize,
        /// The number of arms (K, or the `arms` a policy was built `with_arms`).
        arms: usize,
    },
    /// The policy dictated another arm this round (successive elimination, EXP3), or none was
    /// selected yet.
    UnexpectedArm {
        /// The arm the policy selected (`usize::MAX` if none was selected).
        expected: usize,
        /// The arm given.
        got: usize,
    },
    /// The reward (or a loss) was NaN or ±∞. It is never clamped or passed through.
    NonFiniteReward,
    /// A privacy tree refused the value (e.g. more observations than the horizon).
    Tree(TreeInsertError),
    /// The mechanism for a new epoch's truncation level could not be built (a level outside
    /// the grid's range `[2^-40, 2^40]`).
    Mechanism(ParamError),
    /// A device report is larger in magnitude than anything the device's mechanism at this
    /// round's public level can release ([`crate::LaplaceMechanism::max_release`]): it did not
    /// come from the mechanism, so it is refused (a sum of such reports could overflow to ±∞).
    ReportOutOfRange,
}

impl fmt::Display for ObserveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ArmOutOfRange { arm, arms } => write!(f, "arm {arm} is out of range ({arms} arms)"),
            Self::UnexpectedArm { expected, got } => {
                write!(f, "arm {got} was observed but the policy selected arm {expected}")
            }
            Self::NonFiniteReward => f.write_str("the reward is NaN or infinite: nothing was observed"),
            Self::Tree(e) => write!(f, "privacy tree: {e}"),
            Self::Mechanism(e) => write!(f, "privacy mechanism: {e}"),
            Self::ReportOutOfRange => f.write_str(
                "the report is larger than the device's mechanism can release at this round's level: \
                 nothing was observed; send the device's own release unchanged",
            ),
        }
    }
}

impl core::error::Error for ObserveError {}

/// Checks an arm count for a policy of capacity K: `1 ≤ arms ≤ K`.
fn check_arms<const K: usize>(arms: usize) -> Result<usize, ParamError> {
    match arms {
        0 => Err(ParamError::TooFewArms),
        n if n > K => Err(ParamError::ArmsAboveCapacity),
        n => Ok(n),
    }
}

/// Checks `arm < arms` (the policy's active arms) and that `value` is finite.
fn check_observation(arm: usize, arms: usize, value: f64) -> Result<(), ObserveError> {
    if arm >= arms {
        return Err(ObserveError::ArmOutOfRange { arm, arms });
    }
    if !value.is_finite() {
        return Err(ObserveError::NonFiniteReward);
    }
    Ok(())
}

/// Checks a confidence constant (finite, > 0).
fn check_constant(c: f64) -> Result<f64, ParamError> {
    if c.is_finite() && c > 0.0 { Ok(c) } else { Err(ParamError::ConstantInvalid) }
}

/// Checks a learning rate η (finite, > 0).
fn check_eta(eta: f64) -> Result<f64, ParamError> {
    if eta.is_finite() && eta > 0.0 { Ok(eta) } else { Err(ParamError::LearningRateInvalid) }
}

/// Index of the largest `score(i)` for `i` in `0..n`, first on ties; NaN scores lose (0 if
/// every score is NaN or `n = 0`). The one argmax of the workspace: the host's learners use it
/// too.
///
/// ```
/// use ldp_core::bandit::argmax;
/// let s = [1.0, f64::NAN, 3.0, 3.0];
/// assert_eq!(argmax(4, |i| s[i]), 2);
/// assert_eq!(argmax(0, |_| 1.0), 0);
/// ```
pub fn argmax(n: usize, score: impl Fn(usize) -> f64) -> usize {
    let mut best = 0;
    let mut best_score = f64::NEG_INFINITY;
    for i in 0..n {
        let s = score(i);
        if s > best_score {
            best = i;
            best_score = s;
        }
    }
    best
}

/// A uniform double in [0, 1) from the top 53 bits of one draw.
fn unit_interval<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    libm::scalbn((rng.next_u64() >> 11) as f64, -53)
}

/// Draws `i` with probability `p[i] / Σp` (inverse CDF on one uniform). Non-finite or negative
/// entries count as 0; if nothing is left, the draw is uniform over `0..p.len()`.
fn sample_index<R: Rng + ?Sized>(p: &[f64], rng: &mut R) -> usize {
    let n = p.len();
    let weight = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
    let total: f64 = p.iter().map(|&x| weight(x)).sum();
    let u = unit_interval(rng);
    if !(total > 0.0 && total.is_finite()) {
        // ⌊u·n⌋ < n since u < 1.
        return ((u * n as f64) as usize).min(n.saturating_sub(1));
    }
    let target = u * total;
    let mut acc = 0.0;
    let mut last = 0;
    for (i, &x) in p.iter().enumerate() {
        let w = weight(x);
        if w > 0.0 {
            acc += w;
            last = i;
            if target < acc {
                return i;
            }
        }
    }
    last // rounding left the target just above the last partial sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn sample_index_follows_the_weights_and_skips_zero_weights() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let p = [0.0, 0.25, 0.0, 0.75];
        let n = 200_000;
        let mut counts = [0u32; 4];
        for _ in 0..n {
            counts[sample_index(&p, &mut rng)] += 1;
        }
        assert_eq!(counts[0] + counts[2], 0);
        let freq = f64::from(counts[3]) / f64::from(n);
        // sd = sqrt(0.75·0.25/n) ≈ 0.00097; 6 sd.
        assert!((freq - 0.75).abs() < 0.006, "{freq}");
        // Degenerate weights fall back to uniform, in range.
        for _ in 0..1000 {
            assert!(sample_index(&[f64::NAN, -1.0, 0.0], &mut rng) < 3);
        }
    }

    #[test]
    fn argmax_takes_the_first_of_ties_and_ignores_nan() {
        let s = [1.0, f64::NAN, 3.0, 3.0];
        assert_eq!(argmax(4, |i| s[i]), 2);
    }
}
