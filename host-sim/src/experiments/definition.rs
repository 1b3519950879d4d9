//! What an experiment is: its environment, learners, privacy model and default size. The
//! families ([`crate::experiments::bandit`], [`crate::experiments::dubey`]) describe their experiments with these types;
//! the registry of every named experiment is [`crate::experiments`], which imports the
//! families (never the reverse).

use std::path::Path;

use ldp_core::Epsilon;

use crate::run::executor::Task;
use crate::run::settings::{RunConfig, RunError};
pub use ldp_learn::env::EnvFactory;
use ldp_learn::env::{EnvError, Noise, SyntheticKernel};
use ldp_learn::policy::AlgorithmSpec;

/// ε of an experiment table, a literal: an invalid one fails the build (the tables are
/// `const`).
pub const fn listed_epsilon(epsilon: f64) -> Epsilon {
    match Epsilon::new(epsilon) {
        Ok(e) => e,
        Err(_) => panic!("an experiment table lists an invalid epsilon"),
    }
}

/// Where an experiment's environment comes from.
#[derive(Clone, Copy, Debug)]
pub enum EnvKind {
    /// Random RKHS function on 100 points of [0, 1] with the given kernel and noise (the paper:
    /// U[−1, 1] for LDP runs, Student-t(3) for the heavy-tailed ones).
    Synthetic {
        /// The kernel.
        kernel: SyntheticKernel,
        /// The noise.
        noise: Noise,
    },
    /// The light-sensor data (needs `--data DIR` with lightsensor_train.csv and _test.csv).
    LightSensor,
    /// The stock data (needs `--data DIR` with stocks_adjclose.csv).
    Stocks,
    /// The firmware's sensor model (100 arms, R = 1): the environment to run against the
    /// emulated or real device (`--device qemu`, `--device serial:PATH`).
    Sensor,
    /// The user's own problem from files (`custom`): the run's
    /// [`RunConfig::problem`](crate::run::settings::RunConfig::problem).
    Table,
    /// An environment family defined elsewhere: given the data directory, its per-trial factory.
    Custom(fn(Option<&Path>) -> Result<EnvFactory, EnvError>),
    /// A continuous box ([`crate::experiments::boxes`]): the experiment's own task holds its
    /// function; there are no arms. Runs private or, with `--eps none`, non-private.
    Box,
}

/// Builds the [`Task`] of an experiment that is not one bandit loop over its environment: a
/// sweep over a grid (Tao et al., Dubey) or full-information experts. The executor runs it
/// like any other, so it resumes, shards and reports the same way.
pub type TaskBuilder = fn(&RunConfig) -> Result<Box<dyn Task>, RunError>;

/// A named experiment.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// Name on the command line.
    pub name: &'static str,
    /// One line for tables and plots.
    pub description: &'static str,
    /// The environment.
    pub env: EnvKind,
    /// ε, or `None` for non-private.
    pub epsilon: Option<Epsilon>,
    /// Central DP (the learner privatises) rather than local DP (the device privatises).
    pub central: bool,
    /// The learners compared.
    pub algorithms: &'static [AlgorithmSpec],
    /// Trials when `--trials` is not given.
    pub default_trials: usize,
    /// Horizon when `--horizon` is not given.
    pub default_horizon: usize,
    /// The experiment's own task, instead of the bandit loop ([`crate::experiments::runner::LoopTask`]) of
    /// its algorithms over its environment.
    pub own_task: Option<TaskBuilder>,
}

impl Experiment {
    /// What a run's title says of its privacy after the description: `eps = 1`,
    /// `non-private`, or `eps = 0.5 only` for a sweep cut to one ε; empty for a sweep run over
    /// its whole grid (its own task with the listed ε), whose description names the grid.
    pub fn privacy_note(&self, epsilon: Option<Epsilon>) -> String {
        match epsilon {
            None => "non-private".to_string(),
            // A box experiment's own task is one run at one ε, not a sweep.
            Some(_) if self.sweeps() && epsilon == self.epsilon => String::new(),
            Some(e) if self.sweeps() => format!("eps = {e} only"),
            Some(e) => format!("eps = {e}"),
        }
    }

    /// Whether its own task sweeps a grid of privacy levels (every own task but a box's).
    fn sweeps(&self) -> bool {
        self.own_task.is_some() && !matches!(self.env, EnvKind::Box)
    }

    /// The settings of a plain `host-sim run <name>`: the experiment's trials, horizon, ε and
    /// learners, seed 0, the calibrated constants, λ = 1 and δ = 0.1 (for the modes that use
    /// them), the in-process device, all cores.
    pub fn default_config(&self) -> RunConfig {
        RunConfig {
            trials: self.default_trials,
            horizon: self.default_horizon,
            epsilon: self.epsilon,
            central: self.central,
            algorithms: self.algorithms.to_vec(),
            // The experiments whose prior is a data table's own covariance get the default
            // prior of a table (`--prior`, ldp_learn::env::prior).
            prior: matches!(self.env, EnvKind::LightSensor | EnvKind::Stocks | EnvKind::Table)
                .then(ldp_learn::env::Prior::default),
            ..RunConfig::default()
        }
    }
}
