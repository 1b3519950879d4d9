//! The runner's [`Policy`] adapters over `ldp_core::bandit`: the learners of the bandit
//! experiments *are* the core state machines (the code a device would run); these wrappers only
//! own the seeded generator, convert rewards to losses where needed and map errors.
//!
//! | spec | core type | privacy | reads from the [`Problem`] |
//! |---|---|---|---|
//! | [`ROBUST_UCB`] "Robust-UCB" | [`RobustUcb`] | none (raw rewards) | u = `v`, v = `alpha`, T |
//! | [`DP_RUCB`] "DP-RUCB" | [`DpRobustUcb`] | central ε (`central_epsilon`) | u, v, T, ε |
//! | [`DP_RSE`] "DP-RSE" | [`DpRobustSe`] | central ε | u, v, T (β = 1/T), ε |
//! | [`LDP_RSE_S3`] "LDP-RSE" | [`LdpRobustSe`] | local ε (`privacy`), device level B_τ | v, T, ε; u of S3 |
//! | [`EXP3`] "EXP3" | [`Exp3`] (Thm 4.1, λ = 0) | none | T |
//! | [`PRIVATE_EXP3`] "Private-EXP3" | [`PrivateExp3`] (Thm 4.1, λ = 1/ε) | central ε | T, ε |
//!
//! `Constants::Paper` selects the papers' confidence constants (Bubeck et al.'s 4; 18; κ = 24,
//! 28), `Constants::Practical` the practical ones of `ldp_core::bandit` (0.6; ½; κ = 2, 6).
//!
//! In an LDP run the runner replaces the Problem's moment bound by that of CTL-privatised
//! rewards, so LDP-RSE cannot read u from it; [`LDP_RSE_S3`] uses S3's u
//! ([`ParetoInstance::moment_bound`]) at the Problem's v — the paper's assumption that u and v
//! are known.
//!
//! Errors: a spec built in the wrong privacy mode (e.g. DP-RUCB without a central ε) or with
//! parameters the core refuses fails with [`PolicyError::InvalidSetting`] saying which; an arm
//! count outside `2..=`[`MAX_ARMS`] with [`PolicyError::ArmOutOfRange`].
//! Rewards are losses `1 − reward` (clamped to [0, 1]) for EXP3.

use ldp_core::Epsilon;
use ldp_core::ParamError;
use ldp_core::bandit::{
    DpRobustSe, DpRobustUcb, Exp3, Exp3Params, HeavyTail, LdpRobustSe, ObserveError, PAPER_DP_RSE_KAPPA,
    PAPER_DP_UCB_CONSTANT, PAPER_LDP_RSE_KAPPA, PAPER_ROBUST_UCB_CONSTANT, PRACTICAL_DP_RSE_KAPPA,
    PRACTICAL_DP_UCB_CONSTANT, PRACTICAL_LDP_RSE_KAPPA, PRACTICAL_ROBUST_UCB_CONSTANT, PrivateExp3,
    RobustUcb, RseParams,
};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use super::env::ParetoInstance;
use crate::bo::gp_ucb::Constants;
use crate::bo::{AlgorithmSpec, Policy, PolicyError, Problem};

/// Levels of the host's privacy trees: horizons up to 2^32 − 1 (the noise follows T, not L).
pub const HOST_TREE_LEVELS: usize = 32;
/// The largest number of arms the adapters instantiate (K is a const generic in the core).
pub const MAX_ARMS: usize = 10;

/// Evaluates `$body` with the const `$k` bound to the arm count (2..=MAX_ARMS), else the
/// arm-count error.
macro_rules! for_arms {
    ($arms:expr, $k:ident => $body:expr) => {
        match $arms {
            2 => {
                const $k: usize = 2;
                $body
            }
            3 => {
                const $k: usize = 3;
                $body
            }
            4 => {
                const $k: usize = 4;
                $body
            }
            5 => {
                const $k: usize = 5;
                $body
            }
            6 => {
                const $k: usize = 6;
                $body
            }
            7 => {
                const $k: usize = 7;
                $body
            }
            8 => {
                const $k: usize = 8;
                $body
            }
            9 => {
                const $k: usize = 9;
                $body
            }
            10 => {
                const $k: usize = 10;
                $body
            }
            n => Err(PolicyError::ArmOutOfRange { arm: n, arms: MAX_ARMS }),
        }
    };
}

fn config_error(_: ParamError) -> PolicyError {
    PolicyError::InvalidSetting("the bandit policy's parameters (epsilon, moments, horizon) are out of range")
}

fn observe_error(e: ObserveError) -> PolicyError {
    match e {
        ObserveError::ArmOutOfRange { arm, arms } => PolicyError::ArmOutOfRange { arm, arms },
        ObserveError::UnexpectedArm { got, .. } => PolicyError::ArmOutOfRange { arm: got, arms: usize::MAX },
        ObserveError::NonFiniteReward => PolicyError::NonFiniteReport,
        _ => PolicyError::Numerical,
    }
}

/// u = the Problem's moment bound `v`, v = its `alpha` (raw-reward runs).
fn raw_tail(problem: &Problem) -> Result<HeavyTail, PolicyError> {
    HeavyTail::new(problem.v, problem.alpha).map_err(config_error)
}

fn central_epsilon(problem: &Problem) -> Result<Epsilon, PolicyError> {
    problem.central_epsilon.and_then(|e| Epsilon::new(e).ok()).ok_or(PolicyError::InvalidSetting(
        "a central-DP learner needs a central-DP run with a valid epsilon",
    ))
}

fn horizon(problem: &Problem) -> u64 {
    problem.horizon as u64
}

/// The loss of a reward, for EXP3: `1 − r` clamped to [0, 1].
fn loss(reward: f64) -> f64 {
    (1.0 - reward).clamp(0.0, 1.0)
}

struct RobustUcbPolicy<const K: usize>(RobustUcb<K>);

impl<const K: usize> Policy for RobustUcbPolicy<K> {
    fn select(&mut self) -> usize {
        self.0.select()
    }
    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError> {
        self.0.observe(arm, report).map_err(observe_error)
    }
}

struct DpRucbPolicy<const K: usize> {
    inner: DpRobustUcb<K, HOST_TREE_LEVELS>,
    rng: ChaCha20Rng,
}

impl<const K: usize> Policy for DpRucbPolicy<K> {
    fn select(&mut self) -> usize {
        self.inner.select()
    }
    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError> {
        self.inner.observe(arm, report, &mut self.rng).map_err(observe_error)
    }
}

struct DpRsePolicy<const K: usize> {
    inner: DpRobustSe<K>,
    rng: ChaCha20Rng,
}

impl<const K: usize> Policy for DpRsePolicy<K> {
    fn select(&mut self) -> usize {
        self.inner.select()
    }
    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError> {
        self.inner.observe(arm, report, &mut self.rng).map_err(observe_error)
    }
}

struct LdpRsePolicy<const K: usize>(LdpRobustSe<K>);

impl<const K: usize> Policy for LdpRsePolicy<K> {
    fn select(&mut self) -> usize {
        self.0.select()
    }
    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError> {
        self.0.observe(arm, report).map_err(observe_error)
    }
    /// B_τ: the device truncates to zero outside [−B_τ, B_τ] and adds Lap(2B_τ/ε).
    fn device_level(&self) -> Option<f64> {
        Some(self.0.device_level())
    }
}

struct Exp3Policy<const K: usize> {
    inner: Exp3<K>,
    rng: ChaCha20Rng,
}

impl<const K: usize> Policy for Exp3Policy<K> {
    fn select(&mut self) -> usize {
        self.inner.select(&mut self.rng)
    }
    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError> {
        if !report.is_finite() {
            return Err(PolicyError::NonFiniteReport);
        }
        self.inner.observe(arm, loss(report)).map_err(observe_error)
    }
}

struct PrivateExp3Policy<const K: usize> {
    inner: PrivateExp3<K>,
    rng: ChaCha20Rng,
}

impl<const K: usize> Policy for PrivateExp3Policy<K> {
    fn select(&mut self) -> usize {
        self.inner.select(&mut self.rng)
    }
    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError> {
        if !report.is_finite() {
            return Err(PolicyError::NonFiniteReport);
        }
        self.inner.observe(arm, loss(report), &mut self.rng).map_err(observe_error)
    }
}

fn boxed(policy: impl Policy + 'static) -> Result<Box<dyn Policy>, PolicyError> {
    Ok(Box::new(policy))
}

/// Bubeck et al.'s robust UCB (non-private; ignores any ε) on raw rewards.
pub fn build_robust_ucb(
    problem: &Problem,
    constants: Constants,
    _seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    let (tail, t) = (raw_tail(problem)?, horizon(problem));
    let c = match constants {
        Constants::Paper => PAPER_ROBUST_UCB_CONSTANT,
        Constants::Practical | Constants::Calibrated => PRACTICAL_ROBUST_UCB_CONSTANT,
    };
    for_arms!(problem.num_arms(), K => {
        boxed(RobustUcbPolicy(RobustUcb::<K>::new(tail, t, c).map_err(config_error)?))
    })
}

/// Seed 004 Alg. 1 at the Problem's central ε.
pub fn build_dp_rucb(
    problem: &Problem,
    constants: Constants,
    seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    let (tail, eps, t) = (raw_tail(problem)?, central_epsilon(problem)?, horizon(problem));
    let c = match constants {
        Constants::Paper => PAPER_DP_UCB_CONSTANT,
        Constants::Practical | Constants::Calibrated => PRACTICAL_DP_UCB_CONSTANT,
    };
    for_arms!(problem.num_arms(), K => {
        let inner = DpRobustUcb::<K, HOST_TREE_LEVELS>::new(eps, tail, t, c).map_err(config_error)?;
        boxed(DpRucbPolicy { inner, rng: ChaCha20Rng::seed_from_u64(seed) })
    })
}

/// Seed 004 Alg. 3 at the Problem's central ε, β = 1/T.
pub fn build_dp_rse(
    problem: &Problem,
    constants: Constants,
    seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    let (tail, eps, t) = (raw_tail(problem)?, central_epsilon(problem)?, horizon(problem));
    let kappa = match constants {
        Constants::Paper => PAPER_DP_RSE_KAPPA,
        Constants::Practical | Constants::Calibrated => PRACTICAL_DP_RSE_KAPPA,
    };
    let params = RseParams::new(eps, tail, RseParams::beta_for_horizon(t), kappa).map_err(config_error)?;
    for_arms!(problem.num_arms(), K => {
        let inner = DpRobustSe::<K>::new(params).map_err(config_error)?;
        boxed(DpRsePolicy { inner, rng: ChaCha20Rng::seed_from_u64(seed) })
    })
}

/// Seed 004 Alg. 4's learner at the Problem's local ε, β = 1/T, u of `instance` at the
/// Problem's v.
pub fn build_ldp_rse(
    problem: &Problem,
    constants: Constants,
    instance: ParetoInstance,
) -> Result<Box<dyn Policy>, PolicyError> {
    ldp_rse(problem, constants, instance.moment_bound(problem.alpha))
}

/// Seed 004 Alg. 4 with moment bound `u` (E|X|^{1+α} ≤ u).
fn ldp_rse(problem: &Problem, constants: Constants, u: f64) -> Result<Box<dyn Policy>, PolicyError> {
    let eps = problem
        .privacy
        .and_then(|p| Epsilon::new(p.epsilon).ok())
        .ok_or(PolicyError::InvalidSetting("an LDP learner needs a local-DP run with a valid epsilon"))?;
    let tail = HeavyTail::new(u, problem.alpha).map_err(config_error)?;
    let kappa = match constants {
        Constants::Paper => PAPER_LDP_RSE_KAPPA,
        Constants::Practical | Constants::Calibrated => PRACTICAL_LDP_RSE_KAPPA,
    };
    let t = horizon(problem);
    let params = RseParams::new(eps, tail, RseParams::beta_for_horizon(t), kappa).map_err(config_error)?;
    for_arms!(problem.num_arms(), K => boxed(LdpRsePolicy(LdpRobustSe::<K>::new(params))))
}

/// [`LDP_RSE`]'s constructor: seed 004 Alg. 4 with u = (B + R)^{1+α}.
pub fn build_ldp_rse_bounded(
    problem: &Problem,
    constants: Constants,
    _seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    let r =
        problem.noise_bound.ok_or(PolicyError::InvalidSetting("LDP-RSE needs bounded noise (a bound R)"))?;
    let u = (problem.b + r).powf(1.0 + problem.alpha);
    ldp_rse(problem, constants, u)
}

/// EXP3 with Theorem 4.1's tuning at λ = 0 (non-private; ignores any ε).
pub fn build_exp3(problem: &Problem, _: Constants, seed: u64) -> Result<Box<dyn Policy>, PolicyError> {
    let t = horizon(problem);
    let params = Exp3Params::theorem_4_1(problem.num_arms(), t, 0.0).map_err(config_error)?;
    for_arms!(problem.num_arms(), K => {
        boxed(Exp3Policy { inner: Exp3::<K>::new(params), rng: ChaCha20Rng::seed_from_u64(seed) })
    })
}

/// Seed 002 Alg. 4 + 5 with Theorem 4.1's parameters at the Problem's central ε.
pub fn build_private_exp3(
    problem: &Problem,
    _: Constants,
    seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    let (eps, t) = (central_epsilon(problem)?, horizon(problem));
    for_arms!(problem.num_arms(), K => {
        let inner = PrivateExp3::<K>::new(eps, t).map_err(config_error)?;
        boxed(PrivateExp3Policy { inner, rng: ChaCha20Rng::seed_from_u64(seed) })
    })
}

/// Bubeck et al.'s robust UCB, the non-private baseline of seed 004.
pub const ROBUST_UCB: AlgorithmSpec =
    AlgorithmSpec { name: "Robust-UCB", private_name: "Robust-UCB", build: build_robust_ucb };
/// DP robust UCB (seed 004 Alg. 1); needs a central-DP run.
pub const DP_RUCB: AlgorithmSpec =
    AlgorithmSpec { name: "DP-RUCB", private_name: "DP-RUCB", build: build_dp_rucb };
/// DP robust successive elimination (seed 004 Alg. 3); needs a central-DP run.
pub const DP_RSE: AlgorithmSpec =
    AlgorithmSpec { name: "DP-RSE", private_name: "DP-RSE", build: build_dp_rse };
/// LDP robust successive elimination (seed 004 Alg. 4) with S3's moment bound; needs an LDP run.
pub const LDP_RSE_S3: AlgorithmSpec = AlgorithmSpec {
    name: "LDP-RSE",
    private_name: "LDP-RSE",
    build: |p, c, _| build_ldp_rse(p, c, ParetoInstance::S3),
};
/// LDP robust successive elimination (seed 004 Alg. 4) for any bounded problem: the moment
/// bound is u = (B + R)^{1+α}, which every reward |f + η| ≤ B + R meets (a user's own data).
pub const LDP_RSE: AlgorithmSpec =
    AlgorithmSpec { name: "LDP-RSE", private_name: "LDP-RSE", build: build_ldp_rse_bounded };
/// EXP3 (seed 002 Alg. 5, Theorem 4.1 tuning with λ = 0).
pub const EXP3: AlgorithmSpec = AlgorithmSpec { name: "EXP3", private_name: "EXP3", build: build_exp3 };
/// Private EXP3 by the reduction of seed 002 Alg. 4; needs a central-DP run.
pub const PRIVATE_EXP3: AlgorithmSpec =
    AlgorithmSpec { name: "Private-EXP3", private_name: "Private-EXP3", build: build_private_exp3 };
