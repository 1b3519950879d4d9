//! Prediction with expert advice (full information): private Hedge on tree-aggregated noisy
//! cumulative losses (Agarwal & Singh Alg. 1 + 2, Corollary 3.2.1) against plain Hedge.
//!
//! Not a select/query/observe loop: one trial is [`experts_trial`]. Each trial draws one loss
//! sequence — N = [`EXPERTS`] experts, expert i's loss in round t is
//! Bernoulli([`EXPERT_MEAN_LOSSES`]`[i]`), independent — and every algorithm of the trial sees the
//! same sequence (paired comparisons). The regret after round t is the paper's:
//! `Σ_{s≤t} ⟨x_s, l_s⟩ − min_i Σ_{s≤t} l_{s,i}`, against the best expert in hindsight on the
//! realised losses.
//!
//! Both learners use the tuned rate `η = √(8 ln N / T)` ([`hedge_learning_rate`]); the private
//! one is [`PrivateHedge`] (noise `λ = N·depth/ε` per coordinate and node, each release padded to
//! `depth` noise terms). Seeds: a trial with seed s draws its losses from `derive_seed(s, 0, 1)`,
//! algorithm a's noise from `derive_seed(s, a, 3)`.

use ldp_core::Epsilon;
use ldp_core::bandit::{Hedge, PrivateHedge, hedge_learning_rate};
use rand::RngExt;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use super::policies::HOST_TREE_LEVELS;
use crate::env::SimRng;
use crate::rules::derive_seed;

/// Number of experts N.
pub const EXPERTS: usize = 10;
/// Expert i's mean loss: the best expert is 0.05 better than the nine others.
pub const EXPERT_MEAN_LOSSES: [f64; EXPERTS] = [0.45, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5];

/// One learner of the experts experiment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ExpertsAlgorithm {
    /// Exponential weights on the exact cumulative losses.
    Hedge,
    /// Equal weights every round: the expected loss of uniform play (the reference row).
    Uniform,
    /// Seed 002 Alg. 1 + 2 at the given ε.
    PrivateHedge {
        /// ε of the whole sequence of predictions.
        epsilon: Epsilon,
    },
}

impl ExpertsAlgorithm {
    /// The label in tables and plots.
    pub fn label(&self) -> String {
        match self {
            Self::Hedge => "Hedge".to_string(),
            // The label of the uniform-play rows in host-sim's results.
            Self::Uniform => "uniform play".to_string(),
            Self::PrivateHedge { epsilon } => format!("Private-Hedge eps={epsilon}"),
        }
    }
}

/// Why a trial of the experts could not run.
#[derive(Debug)]
#[non_exhaustive]
pub enum ExpertsError {
    /// Hedge's learning rate needs a horizon of at least 1.
    Horizon,
    /// A learner refused its parameters or an update.
    Learner {
        /// The learner's label.
        label: String,
        /// What it refused.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl std::fmt::Display for ExpertsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Horizon => f.write_str("the experts need a horizon of at least 1"),
            Self::Learner { label, source } => write!(f, "{label}: {source}"),
        }
    }
}

impl std::error::Error for ExpertsError {}

/// The loss vector of one round.
fn draw_losses(rng: &mut SimRng) -> [f64; EXPERTS] {
    EXPERT_MEAN_LOSSES.map(|p| f64::from(u8::from(rng.random::<f64>() < p)))
}

/// The regret curve of one algorithm on one trial's loss sequence.
pub fn experts_trial(
    algorithm: ExpertsAlgorithm,
    horizon: usize,
    trial_seed: u64,
    algo_index: u64,
) -> Result<Vec<f64>, ExpertsError> {
    let t = horizon as u64;
    let eta = hedge_learning_rate(EXPERTS, t).ok_or(ExpertsError::Horizon)?;
    let label = algorithm.label();
    let bad = |e: ldp_core::ParamError| ExpertsError::Learner { label: label.clone(), source: Box::new(e) };
    let mut losses_rng = SimRng::seed_from_u64(derive_seed(trial_seed, 0, 1));
    let mut noise_rng = ChaCha20Rng::seed_from_u64(derive_seed(trial_seed, algo_index, 3));
    enum Learner {
        Plain(Hedge<EXPERTS>),
        Uniform,
        Private(Box<PrivateHedge<EXPERTS, HOST_TREE_LEVELS>>),
    }
    let mut learner = match algorithm {
        ExpertsAlgorithm::Hedge => Learner::Plain(Hedge::new(eta).map_err(bad)?),
        ExpertsAlgorithm::Uniform => Learner::Uniform,
        ExpertsAlgorithm::PrivateHedge { epsilon } => {
            Learner::Private(Box::new(PrivateHedge::new(epsilon, t, eta, &mut noise_rng).map_err(bad)?))
        }
    };
    let mut cumulative = [0.0f64; EXPERTS];
    let mut suffered = 0.0;
    let mut curve = Vec::with_capacity(horizon);
    for _ in 0..horizon {
        let losses = draw_losses(&mut losses_rng);
        let x = match &learner {
            Learner::Plain(h) => h.weights(),
            Learner::Uniform => [1.0 / EXPERTS as f64; EXPERTS],
            Learner::Private(h) => h.weights(),
        };
        suffered += x.iter().zip(&losses).map(|(p, l)| p * l).sum::<f64>();
        for (c, l) in cumulative.iter_mut().zip(&losses) {
            *c += l;
        }
        let observed = match &mut learner {
            Learner::Plain(h) => h.observe(&losses),
            Learner::Uniform => Ok(()),
            Learner::Private(h) => h.observe(&losses, &mut noise_rng),
        };
        observed.map_err(|e| ExpertsError::Learner { label: label.clone(), source: Box::new(e) })?;
        let best = cumulative.iter().copied().fold(f64::INFINITY, f64::min);
        curve.push(suffered - best);
    }
    Ok(curve)
}
