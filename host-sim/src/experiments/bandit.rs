//! The K-armed bandit and experts experiments of Tao et al. (Tao et al., heavy-tailed bandits
//! under central DP and LDP) and Agarwal & Singh (Agarwal & Singh, private online learning). The
//! learners and their environments are `ldp_learn::bandit`'s (re-exported here); the experts
//! experiment is its own task ([`ExpertsTask`]).
//!
//! # Experiments ([`BANDIT_EXPERIMENTS`])
//!
//! Each Tao experiment is **one experiment that sweeps the paper's grid**: a [`Sweep`] task
//! whose learners are the bandit loops ([`LoopTask`]) of every grid point (so every point is
//! an ordinary central-DP or LDP run, with its seeds and devices, and all points' jobs share
//! the executor's threads, checkpoint and shards), its curves labelled with the point, e.g.
//! `DP-RSE v=0.5 eps=1`. The moment order v changes the
//! environment (Pareto shape 1.05 + v), so it cannot be an algorithm parameter of one run.
//!
//! | name | runs | paper |
//! |---|---|---|
//! | `tao-s1`, `tao-s2`, `tao-s3` | central DP on S1/S2/S3: DP-RUCB and DP-RSE for v ∈ {0.5, 0.9} × ε ∈ {0.5, 1}, plus the non-private Robust-UCB for each v | Tao et al. Fig. 1, 3, 4 |
//! | `tao-ldp` | LDP-RSE on S3 (the device truncates at B_τ and adds Lap(2B_τ/ε)) for v ∈ {0.5, 0.9} × ε ∈ {5, 10, 20} | Tao et al. Fig. 2 |
//! | `agarwal-bandit` | EXP3 vs Private-EXP3 (ε ∈ {0.5, 1, 2}) on 5 Bernoulli arms with S1's means | Agarwal & Singh Thm 4.1 |
//! | `agarwal-experts` | Hedge vs Private-Hedge (ε ∈ {0.5, 1, 2, 5}), 10 experts | Agarwal & Singh Cor. 3.2.1 |
//!
//! `--eps` restricts a sweep to that single ε, except that the experiment's listed ε (1 for the
//! central sweeps and the Agarwal–Singh ones, 10 for `tao-ldp`) runs the whole grid.
//! `--constants paper` switches to the papers' confidence constants (see [`policies`]). Every
//! experiment defaults to 90 trials, as in Tao et al. §6; the default horizons are below.
//!
//! The paper does not state its horizon. The defaults keep every experiment well under a
//! minute on two cores with 90 trials (release build): `tao-s1`–`tao-s3` at T = 10⁵ ≈ 20 s
//! each, `tao-ldp` at T = 10⁵ ≈ 11 s, `agarwal-bandit` at T = 10⁵ ≈ 7 s, `agarwal-experts` at
//! T = 5000 ≈ 20 s (its private Hedge draws `depth` noise terms per expert and round). At these
//! horizons the algorithms with the papers' schedules are still exploring in some settings:
//! with the practical constants DP-RSE's first epoch on S1–S3 lasts ≈ 1.5·10⁵ rounds at v = 0.5
//! and ε = 1, and LDP-RSE's lasts ≈ 7·10⁵ rounds at v = 0.9 and ε = 20 (more at smaller ε or
//! v). Use `--horizon` (e.g. 10⁶, and 2·10⁶ for `tao-ldp`, with fewer `--trials`) to see them
//! past it; memory grows as trials × T.

use std::path::Path;

use ldp_core::Epsilon;

use crate::experiments::definition::{EnvKind, Experiment, listed_epsilon};
use crate::experiments::runner::{Loop, LoopTask};
use crate::run::executor::{Executor, Task};
use crate::run::results::{AlgorithmResult, UNIFORM_LABEL, with_uniform};
use crate::run::settings::{ConfigError, RunConfig, RunError, derive_seed};
use ldp_learn::env::{EnvError, EnvFactory, shared};
use ldp_learn::policy::AlgorithmSpec;

use ldp_learn::bandit::experts::{ExpertsError, experts_trial};
pub use ldp_learn::bandit::*;

/// Moment orders of Tao et al. §6.
pub const TAO_V: [f64; 2] = [0.5, 0.9];
/// Central-DP ε of Tao et al. Fig. 1, 3, 4.
pub const TAO_CENTRAL_EPSILONS: [f64; 2] = [0.5, 1.0];
/// LDP ε of Tao et al. Fig. 2.
pub const TAO_LOCAL_EPSILONS: [f64; 3] = [5.0, 10.0, 20.0];
/// ε of the Agarwal–Singh bandit sweep.
pub const AGARWAL_BANDIT_EPSILONS: [f64; 3] = [0.5, 1.0, 2.0];
/// ε of the Agarwal–Singh experts sweep.
pub const AGARWAL_EXPERTS_EPSILONS: [f64; 4] = [0.5, 1.0, 2.0, 5.0];
/// Trials of every bandit experiment (Tao et al. §6: 90 repetitions).
pub const DEFAULT_TRIALS: usize = 90;
/// Default horizon of the Tao experiments.
pub const TAO_DEFAULT_HORIZON: usize = 100_000;
/// Default horizon of `agarwal-bandit`.
pub const AGARWAL_BANDIT_DEFAULT_HORIZON: usize = 100_000;
/// Default horizon of `agarwal-experts`.
pub const AGARWAL_EXPERTS_DEFAULT_HORIZON: usize = 5_000;

fn s1_env(_: Option<&Path>) -> Result<EnvFactory, EnvError> {
    pareto_factory(ParetoInstance::S1, TAO_V[0])
}
fn s2_env(_: Option<&Path>) -> Result<EnvFactory, EnvError> {
    pareto_factory(ParetoInstance::S2, TAO_V[0])
}
fn s3_env(_: Option<&Path>) -> Result<EnvFactory, EnvError> {
    pareto_factory(ParetoInstance::S3, TAO_V[0])
}
fn bernoulli_env(_: Option<&Path>) -> Result<EnvFactory, EnvError> {
    Ok(shared(agarwal_bandit_env()?))
}

/// The ε values a sweep runs: the grid if the run's ε is the experiment's listed one, else
/// just the run's ε.
pub fn sweep_epsilons(config: &RunConfig, listed: f64, grid: &[f64]) -> Result<Vec<Epsilon>, RunError> {
    match config.epsilon {
        Some(e) if (e.get() - listed).abs() <= f64::EPSILON * listed => {
            grid.iter().map(|&g| Epsilon::new(g).map_err(|_| ConfigError::SweepEpsilon.into())).collect()
        }
        Some(e) => Ok(vec![e]),
        None => Err(ConfigError::SweepEpsilon.into()),
    }
}

/// One grid point of a sweep: a run of the ordinary runner.
pub struct SweepPoint {
    /// Appended to each algorithm's label after a space (nothing if empty).
    pub suffix: String,
    /// ε of the run (`None`: non-private).
    pub epsilon: Option<Epsilon>,
    /// Central DP (the learner privatises) or local (the device privatises).
    pub central: bool,
    /// The environments.
    pub factory: EnvFactory,
    /// The algorithms.
    pub algorithms: Vec<AlgorithmSpec>,
}

/// A sweep: the bandit loops of its points as one task. Learner `g` is algorithm `a` of point
/// `p` (points in order, each point's algorithms in order); its jobs use the seeds a run of
/// that point alone would (`a` is the algorithm's index within its point).
pub struct Sweep {
    points: Vec<(String, Loop)>,
}

impl Sweep {
    /// The sweep of `points` under `config`'s trials, horizon, seed, threads and constants.
    pub fn new(config: &RunConfig, points: Vec<SweepPoint>) -> Self {
        let points = points
            .into_iter()
            .map(|point| {
                let sub = RunConfig {
                    epsilon: point.epsilon,
                    central: point.central,
                    algorithms: point.algorithms,
                    ..config.clone()
                };
                (point.suffix, Loop::new(sub, point.factory))
            })
            .collect();
        Self { points }
    }

    /// The point of learner `g` and the algorithm's index within it.
    fn locate(&self, mut g: usize) -> Option<(LoopTask<'_>, usize)> {
        for (_, point) in &self.points {
            let n = point.config.algorithms.len();
            if g < n {
                return Some((point.task(), g));
            }
            g -= n;
        }
        None
    }
}

impl Task for Sweep {
    fn labels(&self) -> Vec<String> {
        self.points.iter().flat_map(|(_, p)| p.task().labels()).collect()
    }

    fn job(&self, trial: usize, learner: usize) -> Result<Vec<f64>, RunError> {
        let (task, a) = self.locate(learner).ok_or(RunError::NoSuchJob { trial, learner })?;
        task.job_recorded_as(trial, a, learner)
    }

    fn fleet_ready(&self) -> bool {
        self.points.iter().all(|(_, p)| p.task().local())
    }

    /// Each point's rows finished as its loop finishes them and relabelled with the point, then
    /// one uniform-play row per distinct uniform curve (labelled without ε).
    fn finish(&self, rows: Vec<AlgorithmResult>) -> Result<Vec<AlgorithmResult>, RunError> {
        let mut rows = rows.into_iter();
        let mut all: Vec<AlgorithmResult> = Vec::new();
        let mut references: Vec<AlgorithmResult> = Vec::new();
        for (suffix, point) in &self.points {
            let own = rows.by_ref().take(point.config.algorithms.len()).collect();
            for mut result in point.task().finish(own)? {
                let mut suffix = suffix.as_str();
                if result.reference {
                    // Uniform play depends on the arms' means only, not on ε (nor, for Pareto
                    // instances, on v): one row per distinct curve, labelled by what it depends on.
                    suffix = suffix.split(" eps=").next().unwrap_or_default();
                    suffix = suffix.strip_prefix("eps=").map_or(suffix, |_| "");
                    let label = if suffix.is_empty() {
                        UNIFORM_LABEL.to_string()
                    } else {
                        format!("{UNIFORM_LABEL} {suffix}")
                    };
                    if let Some(same) =
                        references.iter_mut().find(|r| r.finals == result.finals && r.mean == result.mean)
                    {
                        if same.label != label {
                            same.label = UNIFORM_LABEL.to_string();
                        }
                        continue;
                    }
                    result.label = label;
                    references.push(result);
                    continue;
                }
                if !suffix.is_empty() {
                    result.label = format!("{} {suffix}", result.label);
                }
                all.push(result);
            }
        }
        all.extend(references);
        Ok(all)
    }
}

/// Runs a sweep with the [`Executor`] (no checkpoint, no progress bar).
pub fn run_sweep(config: &RunConfig, points: Vec<SweepPoint>) -> Result<Vec<AlgorithmResult>, RunError> {
    Executor::new(config).results(&Sweep::new(config, points))
}

/// The grid of a central Tao experiment on `instance`.
pub fn tao_central_points(config: &RunConfig, instance: ParetoInstance) -> Result<Vec<SweepPoint>, RunError> {
    let epsilons = sweep_epsilons(config, 1.0, &TAO_CENTRAL_EPSILONS)?;
    let mut points = Vec::new();
    for v in TAO_V {
        let factory = || pareto_factory(instance, v).map_err(RunError::Environment);
        points.push(SweepPoint {
            suffix: format!("v={v}"),
            epsilon: None,
            central: false,
            factory: factory()?,
            algorithms: vec![ROBUST_UCB],
        });
        for &eps in &epsilons {
            points.push(SweepPoint {
                suffix: format!("v={v} eps={eps}"),
                epsilon: Some(eps),
                central: true,
                factory: factory()?,
                algorithms: vec![DP_RUCB, DP_RSE],
            });
        }
    }
    Ok(points)
}

fn tao_s1_task(config: &RunConfig) -> Result<Box<dyn Task>, RunError> {
    Ok(Box::new(Sweep::new(config, tao_central_points(config, ParetoInstance::S1)?)))
}
fn tao_s2_task(config: &RunConfig) -> Result<Box<dyn Task>, RunError> {
    Ok(Box::new(Sweep::new(config, tao_central_points(config, ParetoInstance::S2)?)))
}
fn tao_s3_task(config: &RunConfig) -> Result<Box<dyn Task>, RunError> {
    Ok(Box::new(Sweep::new(config, tao_central_points(config, ParetoInstance::S3)?)))
}

/// The grid of `tao-ldp`: LDP-RSE on S3.
pub fn tao_ldp_points(config: &RunConfig) -> Result<Vec<SweepPoint>, RunError> {
    let epsilons = sweep_epsilons(config, 10.0, &TAO_LOCAL_EPSILONS)?;
    let mut points = Vec::new();
    for v in TAO_V {
        for &eps in &epsilons {
            points.push(SweepPoint {
                suffix: format!("v={v} eps={eps}"),
                epsilon: Some(eps),
                central: false,
                factory: pareto_factory(ParetoInstance::S3, v).map_err(RunError::Environment)?,
                algorithms: vec![LDP_RSE_S3],
            });
        }
    }
    Ok(points)
}

fn tao_ldp_task(config: &RunConfig) -> Result<Box<dyn Task>, RunError> {
    Ok(Box::new(Sweep::new(config, tao_ldp_points(config)?)))
}

/// The grid of `agarwal-bandit`: EXP3 once, Private-EXP3 per ε.
pub fn agarwal_bandit_points(config: &RunConfig) -> Result<Vec<SweepPoint>, RunError> {
    let epsilons = sweep_epsilons(config, 1.0, &AGARWAL_BANDIT_EPSILONS)?;
    let factory = || agarwal_bandit_env().map(shared).map_err(RunError::Environment);
    let mut points = vec![SweepPoint {
        suffix: String::new(),
        epsilon: None,
        central: false,
        factory: factory()?,
        algorithms: vec![EXP3],
    }];
    for eps in epsilons {
        points.push(SweepPoint {
            suffix: format!("eps={eps}"),
            epsilon: Some(eps),
            central: true,
            factory: factory()?,
            algorithms: vec![PRIVATE_EXP3],
        });
    }
    Ok(points)
}

fn agarwal_bandit_task(config: &RunConfig) -> Result<Box<dyn Task>, RunError> {
    Ok(Box::new(Sweep::new(config, agarwal_bandit_points(config)?)))
}

fn agarwal_experts_task(config: &RunConfig) -> Result<Box<dyn Task>, RunError> {
    let epsilons = sweep_epsilons(config, 1.0, &AGARWAL_EXPERTS_EPSILONS)?;
    let algorithms: Vec<ExpertsAlgorithm> = std::iter::once(ExpertsAlgorithm::Hedge)
        .chain(epsilons.into_iter().map(|epsilon| ExpertsAlgorithm::PrivateHedge { epsilon }))
        .collect();
    Ok(Box::new(ExpertsTask::new(config, algorithms)))
}

/// The Tao et al. and Agarwal & Singh experiments (see the module docs).
pub const BANDIT_EXPERIMENTS: [Experiment; 6] = [
    Experiment {
        name: "tao-s1",
        description: "central DP, Pareto S1: DP-RUCB vs DP-RSE over v in {0.5, 0.9}, eps in {0.5, 1} (seed 004 Fig. 1)",
        env: EnvKind::Custom(s1_env),
        epsilon: Some(listed_epsilon(1.0)),
        central: true,
        algorithms: &[DP_RUCB, DP_RSE, ROBUST_UCB],
        default_trials: DEFAULT_TRIALS,
        default_horizon: TAO_DEFAULT_HORIZON,
        own_task: Some(tao_s1_task),
    },
    Experiment {
        name: "tao-s2",
        description: "central DP, Pareto S2: DP-RUCB vs DP-RSE over v in {0.5, 0.9}, eps in {0.5, 1} (seed 004 Fig. 3)",
        env: EnvKind::Custom(s2_env),
        epsilon: Some(listed_epsilon(1.0)),
        central: true,
        algorithms: &[DP_RUCB, DP_RSE, ROBUST_UCB],
        default_trials: DEFAULT_TRIALS,
        default_horizon: TAO_DEFAULT_HORIZON,
        own_task: Some(tao_s2_task),
    },
    Experiment {
        name: "tao-s3",
        description: "central DP, Pareto S3: DP-RUCB vs DP-RSE over v in {0.5, 0.9}, eps in {0.5, 1} (seed 004 Fig. 4)",
        env: EnvKind::Custom(s3_env),
        epsilon: Some(listed_epsilon(1.0)),
        central: true,
        algorithms: &[DP_RUCB, DP_RSE, ROBUST_UCB],
        default_trials: DEFAULT_TRIALS,
        default_horizon: TAO_DEFAULT_HORIZON,
        own_task: Some(tao_s3_task),
    },
    Experiment {
        name: "tao-ldp",
        description: "LDP, Pareto S3: LDP-RSE over v in {0.5, 0.9}, eps in {5, 10, 20} (seed 004 Fig. 2)",
        env: EnvKind::Custom(s3_env),
        epsilon: Some(listed_epsilon(10.0)),
        central: false,
        algorithms: &[LDP_RSE_S3],
        default_trials: DEFAULT_TRIALS,
        default_horizon: TAO_DEFAULT_HORIZON,
        own_task: Some(tao_ldp_task),
    },
    Experiment {
        name: "agarwal-bandit",
        description: "central DP, 5 Bernoulli arms: EXP3 vs private EXP3, eps in {0.5, 1, 2} (seed 002 Thm 4.1)",
        env: EnvKind::Custom(bernoulli_env),
        epsilon: Some(listed_epsilon(1.0)),
        central: true,
        algorithms: &[EXP3, PRIVATE_EXP3],
        default_trials: DEFAULT_TRIALS,
        default_horizon: AGARWAL_BANDIT_DEFAULT_HORIZON,
        own_task: Some(agarwal_bandit_task),
    },
    Experiment {
        name: "agarwal-experts",
        description: "central DP, 10 Bernoulli experts: Hedge vs private Hedge, eps in {0.5, 1, 2, 5} (seed 002 Cor. 3.2)",
        env: EnvKind::Custom(bernoulli_env),
        epsilon: Some(listed_epsilon(1.0)),
        central: true,
        algorithms: &[],
        default_trials: DEFAULT_TRIALS,
        default_horizon: AGARWAL_EXPERTS_DEFAULT_HORIZON,
        own_task: Some(agarwal_experts_task),
    },
];

/// An experts trial's error as the run's.
fn experts_error(e: ExpertsError) -> RunError {
    match e {
        ExpertsError::Horizon => RunError::Config(ConfigError::ExpertsHorizon),
        ExpertsError::Learner { label, source } => RunError::Learner { label, source },
        _ => RunError::Learner { label: "experts".to_string(), source: Box::new(e) },
    }
}

/// The experts experiment as a task: one learner per algorithm, plus the uniform-play row.
pub struct ExpertsTask {
    config: RunConfig,
    algorithms: Vec<ExpertsAlgorithm>,
}

impl ExpertsTask {
    /// `algorithms` under `config`'s trials, horizon and seed.
    pub fn new(config: &RunConfig, algorithms: Vec<ExpertsAlgorithm>) -> Self {
        Self { config: config.clone(), algorithms }
    }
}

impl Task for ExpertsTask {
    fn labels(&self) -> Vec<String> {
        self.algorithms.iter().map(ExpertsAlgorithm::label).collect()
    }

    fn job(&self, trial: usize, learner: usize) -> Result<Vec<f64>, RunError> {
        let trial_seed = derive_seed(self.config.seed, trial as u64, 0);
        experts_trial(self.algorithms[learner], self.config.horizon, trial_seed, learner as u64)
            .map_err(experts_error)
    }

    fn finish(&self, rows: Vec<AlgorithmResult>) -> Result<Vec<AlgorithmResult>, RunError> {
        let config = &self.config;
        with_uniform(config, rows, |trial| {
            experts_trial(
                ExpertsAlgorithm::Uniform,
                config.horizon,
                derive_seed(config.seed, trial as u64, 0),
                0,
            )
            .map_err(experts_error)
        })
    }
}

/// Runs every (trial, algorithm) pair of the experts experiment with the [`Executor`].
pub fn run_experts_with(
    config: &RunConfig,
    algorithms: &[ExpertsAlgorithm],
) -> Result<Vec<AlgorithmResult>, RunError> {
    Executor::new(config).results(&ExpertsTask::new(config, algorithms.to_vec()))
}

#[cfg(test)]
mod tests {
    /// The experts' uniform learner is labelled as every other uniform-play row.
    #[test]
    fn the_experts_uniform_row_is_labelled_as_every_uniform_row() {
        assert_eq!(super::ExpertsAlgorithm::Uniform.label(), crate::run::results::UNIFORM_LABEL);
    }
}
