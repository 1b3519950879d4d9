//! Environments: the private objective and noise that a device holds (SPEC §2.3).
//!
//! Every environment here has a finite set of arms (candidate points). The learner sees the
//! points and the prior covariance; only the device sees [`Environment::sample`]'s raw rewards.
//!
//! - [`noise`]: the zero-mean noise models ([`Noise`]) and their constants R, E|η|^{1+α}.
//! - [`synthetic`]: [`SyntheticRkhs`], random RKHS functions on a grid of [0, 1] (Zhou & Tan
//!   §5.1 "Synthetic data").
//! - [`real_data`]: [`RealData`], arms = columns of a sample matrix (Zhou & Tan §5.1 light
//!   sensor and stock data, `data/README.md`).
//! - [`table`]: the CSV reader of every data file (the papers' and the user's), with errors
//!   naming the file, line and column.
//! - [`custom`]: a user's own problem from files (`host-sim run custom`).
//! - [`objective`]: [`Objective`], a user's function over their own points.

pub mod custom;
pub mod data;
pub mod noise;
pub mod objective;
pub mod prior;
pub mod real_data;
pub mod sensor;
pub mod synthetic;
pub mod table;

pub use noise::{DEFAULT_STUDENT_T_NU, Noise, NoiseError};
pub use objective::{Objective, ObjectiveError};
pub use prior::Prior;
pub use real_data::{RealData, RealDataError};
pub use sensor::SensorEnv;
pub use synthetic::{SyntheticError, SyntheticKernel, SyntheticRkhs};

use nalgebra::DMatrix;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator every simulation uses for environment randomness (rewards, noise, instances).
pub type SimRng = Xoshiro256PlusPlus;

/// `n` evenly spaced points of [0, 1], `a/(n − 1)` for arm `a` (`[0]` for one arm): the domain of
/// the synthetic functions, the sensor, the papers' real-data arms and `live --actions N`.
pub fn unit_grid(n: usize) -> Vec<Vec<f64>> {
    (0..n).map(|a| vec![if n > 1 { a as f64 / (n - 1) as f64 } else { 0.0 }]).collect()
}

/// What the learner may know about the rewards' magnitudes (the paper's constants).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RewardBounds {
    /// B: bound on |f(x)| over the arms.
    pub b: f64,
    /// R: bound on |η| when the noise is bounded; `None` for unbounded (heavy-tailed) noise.
    pub r: Option<f64>,
    /// α ∈ (0, 1]: the rewards have a finite (1+α)-th moment.
    pub alpha: f64,
    /// v: a bound on E|y|^{1+α} (the heavy-tailed algorithms' moment constant).
    pub v: f64,
    /// c: a bound on E|η|^{1+α} (MoMA-GP-UCB's noise-moment constant, Zhou & Tan Thm 4).
    pub c: f64,
}

/// What every finite-armed environment describes, whatever family it comes from: a name, the
/// arms' points and true means, the best mean, the learner's prior covariance over the arms and
/// the reward constants. An environment builds one and adds only how a reward is drawn.
#[derive(Clone, Debug)]
pub struct Arms {
    name: String,
    points: Vec<Vec<f64>>,
    means: Vec<f64>,
    best: f64,
    covariance: DMatrix<f64>,
    bounds: RewardBounds,
}

impl Arms {
    /// Arm `a` at `points[a]` with mean `means[a]`, the prior `covariance` over the arms (one
    /// row and column per arm) and the reward constants `bounds`.
    pub fn new(
        name: impl Into<String>,
        points: Vec<Vec<f64>>,
        means: Vec<f64>,
        covariance: DMatrix<f64>,
        bounds: RewardBounds,
    ) -> Self {
        let best = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Self { name: name.into(), points, means, best, covariance, bounds }
    }

    /// Short name for tables and files.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of arms.
    pub fn len(&self) -> usize {
        self.means.len()
    }

    /// Whether there is no arm.
    pub fn is_empty(&self) -> bool {
        self.means.is_empty()
    }

    /// The arm's point in its input space; an empty slice for an arm out of range.
    pub fn point(&self, arm: usize) -> &[f64] {
        self.points.get(arm).map_or(&[], Vec::as_slice)
    }

    /// f(arm), the true mean; NaN for an arm out of range.
    pub fn mean(&self, arm: usize) -> f64 {
        self.means.get(arm).copied().unwrap_or(f64::NAN)
    }

    /// Every arm's mean.
    pub fn means(&self) -> &[f64] {
        &self.means
    }

    /// max over arms of f.
    pub fn best(&self) -> f64 {
        self.best
    }

    /// The learner's prior covariance over the arms.
    pub fn covariance(&self) -> &DMatrix<f64> {
        &self.covariance
    }

    /// The reward constants.
    pub fn bounds(&self) -> RewardBounds {
        self.bounds
    }

    /// The same arms with other reward constants (a user's own B, R, v, c).
    pub fn with_bounds(mut self, bounds: RewardBounds) -> Self {
        self.bounds = bounds;
        self
    }
}

/// A finite-armed problem: its [`Arms`] and how a reward is drawn.
///
/// Arms are also the points of a [`crate::gp::FiniteCovariance`] prior: index `a` is the
/// learner's point `[a]`; [`Environment::point`] is the arm's location for display and for
/// kernels over the input space.
pub trait Environment: Send + Sync {
    /// The arms: name, points, means, prior covariance and reward constants.
    fn arms(&self) -> &Arms;
    /// One raw reward f(arm) + η: the private value. Never shown to the learner directly in a
    /// private experiment. NaN for an arm out of range.
    fn sample(&self, arm: usize, rng: &mut SimRng) -> f64;

    /// Short name for tables and files.
    fn name(&self) -> &str {
        self.arms().name()
    }
    /// Number of arms.
    fn num_arms(&self) -> usize {
        self.arms().len()
    }
    /// The arm's point in its input space (for kernels), e.g. `[x]` on [0, 1].
    fn point(&self, arm: usize) -> &[f64] {
        self.arms().point(arm)
    }
    /// f(arm): the true mean reward.
    fn mean(&self, arm: usize) -> f64 {
        self.arms().mean(arm)
    }
    /// max over arms of f.
    fn best_mean(&self) -> f64 {
        self.arms().best()
    }
    /// The prior covariance over the arms that the learner uses (kernel Gram matrix or the
    /// empirical covariance of real data).
    fn prior_covariance(&self) -> &DMatrix<f64> {
        self.arms().covariance()
    }
    /// The reward constants.
    fn bounds(&self) -> RewardBounds {
        self.arms().bounds()
    }
}

/// Shared environments (e.g. a real data set loaded once for all trials) are environments.
impl<E: Environment + ?Sized> Environment for std::sync::Arc<E> {
    fn arms(&self) -> &Arms {
        (**self).arms()
    }
    fn sample(&self, arm: usize, rng: &mut SimRng) -> f64 {
        (**self).sample(arm, rng)
    }
}

/// A factory of per-trial environments: synthetic ones are drawn from the trial seed, real-data
/// ones are loaded once and shared.
pub type EnvFactory = Box<dyn Fn(u64) -> Result<Box<dyn Environment>, EnvError> + Sync>;

/// The factory of one environment shared by every trial (real data, K-armed arms, the
/// firmware's sensor model).
pub fn shared<E: Environment + 'static>(env: E) -> EnvFactory {
    let env = std::sync::Arc::new(env);
    Box::new(move |_| Ok(Box::new(env.clone()) as Box<dyn Environment>))
}

/// An environment could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum EnvError {
    /// The experiment reads real data and no data directory was given.
    NoDataDir {
        /// The file it needs.
        file: &'static str,
    },
    /// A real data set could not be read.
    RealData(RealDataError),
    /// A data file of the papers is not the one `data/SHA256SUMS` lists.
    Checksum(data::ChecksumMismatch),
    /// A synthetic RKHS function could not be drawn.
    Synthetic(SyntheticError),
    /// A noise model is invalid.
    Noise(NoiseError),
    /// The firmware's sensor model needs at least 2 arms and a finite noise bound R ≥ 0.
    Sensor {
        /// The arms given.
        arms: u32,
        /// The noise bound given.
        noise_bound: f64,
    },
    /// A kernel or its Gram matrix could not be built.
    Kernel(crate::gp::KernelError),
    /// The user's problem files (`custom`) cannot be used.
    Table(table::TableError),
    /// The `custom` experiment was run without its arms file.
    NoArmsFile,
    /// A user's objective function cannot be used.
    Objective(objective::ObjectiveError),
    /// An environment of a family (K-armed arms, Dubey's decision sets) could not be built.
    Family(Box<dyn std::error::Error + Send + Sync>),
}

impl std::fmt::Display for EnvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoDataDir { file } => write!(
                f,
                "this experiment needs the papers' data and the repository's data/ folder was not found: \
                 pass --data DIR, the folder holding {file}"
            ),
            Self::Checksum(e) => write!(f, "{e}"),
            Self::RealData(e) => write!(f, "{e}"),
            Self::Synthetic(e) => write!(f, "{e}"),
            Self::Noise(e) => write!(f, "{e}"),
            Self::Sensor { arms, noise_bound } => {
                write!(
                    f,
                    "the sensor model needs >= 2 arms and R >= 0, got {arms} arms and R = {noise_bound}"
                )
            }
            Self::Kernel(e) => write!(f, "{e}"),
            Self::Table(e) => write!(f, "{e}"),
            Self::NoArmsFile => f.write_str(
                "the custom experiment runs on your data: give --arms FILE.csv (one column per arm, one row per observation)",
            ),
            Self::Objective(e) => write!(f, "objective: {e}"),
            Self::Family(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for EnvError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::RealData(e) => Some(e),
            Self::Checksum(e) => Some(e),
            Self::Synthetic(e) => Some(e),
            Self::Noise(e) => Some(e),
            Self::Kernel(e) => Some(e),
            Self::Table(e) => Some(e),
            Self::Objective(e) => Some(e),
            Self::Family(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}
