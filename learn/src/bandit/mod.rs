//! The K-armed bandit and experts learners of Tao et al. (Tao et al., heavy-tailed bandits under
//! central DP and LDP) and Agarwal & Singh (Agarwal & Singh, private online learning), and LDP-UCB.
//!
//! - [`env`](mod@env): K-armed environments — Bernoulli, Gaussian, the Pareto instances S1–S3 and the
//!   two-point lower-bound instance;
//! - [`policies`]: the [`Policy`](crate::policy::Policy) adapters over `ldp_core::bandit` (the
//!   learners *are* the core state machines) and their [`AlgorithmSpec`]s;
//! - [`experts`]: full-information prediction with expert advice, Hedge and private Hedge, one
//!   trial at a time ([`experts::experts_trial`]);
//! - [`ldp_ucb`]: LDP-UCB, a UCB index on the device's CTL reports with a Bernstein width for
//!   their noise: the calibrated default of a private `custom --family bandit`
//!   ([`table_learners`]).
//!
//! The experiments that sweep these learners over the papers' grids are `host-sim`'s.

use crate::env::{EnvError, EnvFactory, shared};
use crate::policy::{AlgorithmSpec, Constants};

pub mod env;
pub mod experts;
pub mod ldp_ucb;
pub mod policies;

pub use env::{ArmReward, KArmedEnv, KArmedError, ParetoInstance};
pub use experts::{EXPERT_MEAN_LOSSES, EXPERTS, ExpertsAlgorithm};
pub use policies::{
    DP_RSE, DP_RUCB, EXP3, LDP_RSE, LDP_RSE_S3, LDP_UCB, PRIVATE_EXP3, ROBUST_UCB, ROBUST_UCB_TABLE,
};

/// The learners of `custom --family bandit` on a table: under LDP (`private`) with calibrated
/// constants [`LDP_UCB`] (the default: it learns at practical horizons), then Tao et al.'s
/// [`LDP_RSE`] and [`UCB1`](crate::bo::UCB1); under paper and practical constants LDP-RSE and
/// UCB1, as before. Without privacy Robust-UCB and UCB1 in every mode.
pub fn table_learners(private: bool, constants: Constants) -> Vec<AlgorithmSpec> {
    match (private, constants) {
        (true, Constants::Calibrated) => vec![LDP_UCB, LDP_RSE, crate::bo::UCB1],
        (true, _) => vec![LDP_RSE, crate::bo::UCB1],
        (false, _) => vec![ROBUST_UCB_TABLE, crate::bo::UCB1],
    }
}

/// The factory of a Pareto instance at moment order v.
pub fn pareto_factory(instance: ParetoInstance, v: f64) -> Result<EnvFactory, EnvError> {
    Ok(shared(KArmedEnv::pareto(instance, v).map_err(|e| EnvError::Family(Box::new(e)))?))
}

/// The Bernoulli arms of `agarwal-bandit` (S1's means).
pub fn agarwal_bandit_env() -> Result<KArmedEnv, EnvError> {
    KArmedEnv::bernoulli(&ParetoInstance::S1.means()).map_err(|e| EnvError::Family(Box::new(e)))
}
