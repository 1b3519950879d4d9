//! The box experiments (#36): GP-UCB, LDP-TGP-UCB and LDP-MoMA-GP-UCB ([`BoxOptimizer`]) on the standard test
//! functions of [`ldp_learn::domain::functions`], against uniform random search over the box.
//!
//! | name | function | box |
//! |---|---|---|
//! | `box-branin` | Branin | [−5, 10] × [0, 15] |
//! | `box-hartmann3` | Hartmann-3 | [0, 1]³ |
//! | `box-hartmann6` | Hartmann-6 | [0, 1]⁶ |
//! | `box-ackley2`, `box-ackley6` | Ackley, d = 2 and 6 | [−32.768, 32.768]^d |
//! | `box-rosenbrock4` | Rosenbrock, d = 4 | [−2, 2]⁴ |
//!
//! Each round the learner asks a point x, the device measures reward(x) + η with η ~ U[−1, 1]
//! (|reward| ≤ B = 1, R = 1) and releases it at ε through ldp-core's production reporter
//! (CTL(ε), as the in-process device of every finite-set LDP experiment,
//! [`ldp_link::device::InProcessDevice`]); `--eps none` tells the raw rewards instead. Regret is
//! measured against f* = the reward at the function's minimiser. The learners are GP-UCB,
//! (LDP-)TGP-UCB and (LDP-)MoMA-GP-UCB, told the same kind of reports (GP-UCB untruncated).
//!
//! The reference row, "uniform play", is uniform random search over the box: its expected
//! cumulative regret after round t is exactly t · (f* − E reward), E reward estimated once by
//! [`TestFunction::mean_reward`] (2²⁰ scrambled Sobol points).
//!
//! Seeds: trial i of a run seeded s has trial seed `derive_seed(s, i, 0)`; learner j of it draws
//! its world noise from `derive_seed(trial, j, 1)`, its device's ChaCha20 from
//! `derive_seed(trial, j, 2)` and is seeded `derive_seed(trial, j, 3)`, as the bandit loop's.
//!
//! Each row's constants (`run.json`) hold f*, E reward, the learner's derived constants of
//! trial 0, and the simple regret f* − reward(recommend()) at the end of each trial computed
//! or kept in the checkpoint (each job's line holds its simple regret as a `note`, so a resumed
//! or merged run has every trial's), as its mean and its count (`simple_regret_trials`; a
//! checkpoint written before notes were kept counts only the trials computed since).

use std::collections::BTreeMap;
use std::sync::Mutex;

use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use rand_core::SeedableRng;

use crate::experiments::definition::{EnvKind, Experiment, listed_epsilon};
use crate::run::executor::Task;
use crate::run::results::{AlgorithmResult, with_uniform};
use crate::run::settings::{ConfigError, DeviceKind, RunConfig, RunError, derive_seed};
use ldp_learn::bo::ZHOU_TAN_ALGORITHMS;
use ldp_learn::domain::functions::TestFunction;
use ldp_learn::domain::{BoxError, BoxOptimizer, BoxOptions};
use ldp_learn::env::{Noise, SimRng};
use ldp_learn::optimizer::Settings;
use ldp_learn::policy::AlgorithmSpec;
use ldp_link::device::{DeviceError, simulated_reporter};

/// The learners of a box experiment: GP-UCB, (LDP-)TGP-UCB and (LDP-)MoMA-GP-UCB.
pub const BOX_LEARNERS: [AlgorithmSpec; 3] =
    [ZHOU_TAN_ALGORITHMS[0], ZHOU_TAN_ALGORITHMS[1], ZHOU_TAN_ALGORITHMS[3]];

/// B of every box experiment: the rewards are rescaled to [−1, 1].
pub const BOX_BOUND: f64 = 1.0;

/// R of every box experiment.
pub const BOX_NOISE_BOUND: f64 = 1.0;

/// The reward noise: U[−R, R] = U[−1, 1], as the finite-set LDP experiments'.
pub const BOX_NOISE: Noise = Noise::Uniform { r: BOX_NOISE_BOUND };

const fn box_experiment(
    name: &'static str,
    description: &'static str,
    own_task: crate::experiments::definition::TaskBuilder,
) -> Experiment {
    Experiment {
        name,
        description,
        env: EnvKind::Box,
        epsilon: Some(listed_epsilon(1.0)),
        central: false,
        algorithms: &[],
        default_trials: 10,
        default_horizon: 10_000,
        own_task: Some(own_task),
    }
}

/// The box experiments (module documentation).
pub const BOX_EXPERIMENTS: [Experiment; 6] = [
    box_experiment(
        "box-branin",
        "box: Branin on [-5,10]x[0,15], U[-1,1] noise, vs uniform random search",
        branin_task,
    ),
    box_experiment(
        "box-hartmann3",
        "box: Hartmann-3 on [0,1]^3, U[-1,1] noise, vs uniform random search",
        hartmann3_task,
    ),
    box_experiment(
        "box-hartmann6",
        "box: Hartmann-6 on [0,1]^6, U[-1,1] noise, vs uniform random search",
        hartmann6_task,
    ),
    box_experiment(
        "box-ackley2",
        "box: Ackley on [-32.768,32.768]^2, U[-1,1] noise, vs uniform random search",
        ackley2_task,
    ),
    box_experiment(
        "box-ackley6",
        "box: Ackley on [-32.768,32.768]^6, U[-1,1] noise, vs uniform random search",
        ackley6_task,
    ),
    box_experiment(
        "box-rosenbrock4",
        "box: Rosenbrock on [-2,2]^4, U[-1,1] noise, vs uniform random search",
        rosenbrock4_task,
    ),
];

fn branin_task(config: &RunConfig) -> Result<Box<dyn Task>, RunError> {
    Ok(Box::new(BoxTask::new(config, TestFunction::Branin)?))
}
fn hartmann3_task(config: &RunConfig) -> Result<Box<dyn Task>, RunError> {
    Ok(Box::new(BoxTask::new(config, TestFunction::Hartmann3)?))
}
fn hartmann6_task(config: &RunConfig) -> Result<Box<dyn Task>, RunError> {
    Ok(Box::new(BoxTask::new(config, TestFunction::Hartmann6)?))
}
fn ackley2_task(config: &RunConfig) -> Result<Box<dyn Task>, RunError> {
    Ok(Box::new(BoxTask::new(config, TestFunction::Ackley(2))?))
}
fn ackley6_task(config: &RunConfig) -> Result<Box<dyn Task>, RunError> {
    Ok(Box::new(BoxTask::new(config, TestFunction::Ackley(6))?))
}
fn rosenbrock4_task(config: &RunConfig) -> Result<Box<dyn Task>, RunError> {
    Ok(Box::new(BoxTask::new(config, TestFunction::Rosenbrock(4))?))
}

/// One box experiment as a [`Task`]: the learners of [`BOX_LEARNERS`] on `function`.
pub struct BoxTask {
    config: RunConfig,
    function: TestFunction,
    /// f*, the largest reward.
    best: f64,
    /// E reward under uniform random search.
    mean: f64,
    /// f* − reward(recommend()) at the end of each (trial, learner) computed here or restored
    /// from the checkpoint.
    simple: Mutex<BTreeMap<(usize, usize), f64>>,
}

impl BoxTask {
    /// The task of `function` under `config` (in-process device, local DP or none, the
    /// calibrated constants; `--beta-scale` multiplies β).
    pub fn new(config: &RunConfig, function: TestFunction) -> Result<Self, RunError> {
        if config.device != DeviceKind::InProcess {
            return Err(ConfigError::DeviceInProcessOnly { family: "the box experiments" }.into());
        }
        let refuse = |why: &str| RunError::Learner {
            label: function.name(),
            source: Box::new(BoxError::Setting(why.to_string())),
        };
        if config.central {
            return Err(refuse(
                "the box experiments are locally private (the device privatises) or non-private",
            ));
        }
        Ok(Self {
            config: config.clone(),
            function,
            best: function.best_reward(),
            mean: function.mean_reward(),
            simple: Mutex::new(BTreeMap::new()),
        })
    }

    fn learner(&self, trial_seed: u64, learner: usize) -> Result<BoxOptimizer, RunError> {
        let settings = Settings {
            epsilon: self.config.epsilon.map(Epsilon::get),
            bound: BOX_BOUND,
            noise_bound: BOX_NOISE_BOUND,
            horizon: self.config.horizon,
            constants: self.config.constants,
            seed: derive_seed(trial_seed, learner as u64, 3),
        };
        let spec = BOX_LEARNERS.get(learner).ok_or(RunError::NoSuchJob { trial: 0, learner })?;
        let options = BoxOptions { beta_scale: self.config.beta_scale, ..BoxOptions::default() };
        BoxOptimizer::with_options(
            spec.label(self.config.epsilon.is_some()),
            self.function.domain(),
            settings,
            options,
        )
        .map_err(|e| self.error(learner, e))
    }

    fn label(&self, learner: usize) -> String {
        self.labels().get(learner).cloned().unwrap_or_default()
    }

    fn error(&self, learner: usize, e: BoxError) -> RunError {
        RunError::Learner { label: self.label(learner), source: Box::new(e) }
    }

    /// The device: the production reporter at ε with B = 1, R = 1 and a budget of T·ε, as
    /// [`ldp_link::device::InProcessDevice`] provisions it; `None` for a non-private run.
    fn device(&self, seed: u64) -> Result<Option<(Reporter<MemoryStore>, Epsilon)>, RunError> {
        let Some(eps) = self.config.local_epsilon() else { return Ok(None) };
        let c = |e| RunError::Device(DeviceError::Config(e));
        let total = Epsilon::new(eps.get() * self.config.horizon.max(1) as f64).map_err(c)?;
        let config = DeviceConfig {
            b: Bound::new(BOX_BOUND).map_err(c)?,
            r: Bound::new(BOX_NOISE_BOUND).map_err(c)?,
            policy: BudgetPolicy::new(eps, total).map_err(c)?,
        };
        let eps = config.policy.per_report_limit();
        let reporter = simulated_reporter(config, seed)
            .map_err(|e| RunError::Device(DeviceError::Refused(ldp_core::ReportError::Budget(e))))?;
        Ok(Some((reporter, eps)))
    }
}

impl Task for BoxTask {
    fn labels(&self) -> Vec<String> {
        let private = self.config.epsilon.is_some();
        BOX_LEARNERS.iter().map(|a| a.label(private).to_string()).collect()
    }

    fn job(&self, trial: usize, learner: usize) -> Result<Vec<f64>, RunError> {
        let trial_seed = derive_seed(self.config.seed, trial as u64, 0);
        let mut opt = self.learner(trial_seed, learner)?;
        let mut world = SimRng::seed_from_u64(derive_seed(trial_seed, learner as u64, 1));
        let mut device = self.device(derive_seed(trial_seed, learner as u64, 2))?;
        let f = &self.function;
        let mut total = 0.0;
        let mut curve = Vec::with_capacity(self.config.horizon);
        // q points asked, then their q reports told (q = 1: ask, release, tell).
        let q = self.config.batch.max(1);
        while curve.len() < self.config.horizon {
            let asked = opt.ask_batch(q.min(self.config.horizon - curve.len()));
            let mut told = Vec::with_capacity(asked.len());
            for x in asked {
                let reward = f.reward(&x);
                let raw = reward + BOX_NOISE.sample(&mut world);
                let report = match device.as_mut() {
                    Some((reporter, eps)) => reporter
                        .report(raw, *eps, None)
                        .map_err(|e| RunError::Device(DeviceError::Refused(e)))?
                        .release
                        .value(),
                    None => raw,
                };
                told.push((x, reward, report));
            }
            for (x, reward, report) in told {
                opt.tell(&x, report).map_err(|e| self.error(learner, e))?;
                total += self.best - reward;
                curve.push(total);
            }
        }
        let simple = self.best - f.reward(&opt.recommend());
        if let Ok(mut map) = self.simple.lock() {
            map.insert((trial, learner), simple);
        }
        Ok(curve)
    }

    /// The simple regret of the job's recommendation, kept in the checkpoint.
    fn job_note(&self, trial: usize, learner: usize) -> Option<f64> {
        self.simple.lock().ok()?.get(&(trial, learner)).copied()
    }

    fn restore_note(&self, trial: usize, learner: usize, note: f64) {
        if let Ok(mut map) = self.simple.lock() {
            map.insert((trial, learner), note);
        }
    }

    /// Adds each row's constants (f*, E reward, trial 0's learner constants, the simple regret
    /// of the trials computed here) and the uniform-random-search row; prints the simple regrets.
    fn finish(&self, mut rows: Vec<AlgorithmResult>) -> Result<Vec<AlgorithmResult>, RunError> {
        let simple = self.simple.lock().map(|m| m.clone()).unwrap_or_default();
        let trial0 = derive_seed(self.config.seed, 0, 0);
        for (learner, row) in rows.iter_mut().enumerate() {
            let values: Vec<f64> =
                simple.iter().filter(|((_, l), _)| *l == learner).map(|(_, v)| *v).collect();
            let mut constants = vec![
                ("f_star".to_string(), self.best),
                ("mean_reward_uniform".to_string(), self.mean),
                ("bound_B".to_string(), BOX_BOUND),
                ("noise_bound_R".to_string(), BOX_NOISE_BOUND),
            ];
            constants.extend(
                self.learner(trial0, learner)?.constants().into_iter().map(|(k, v)| (k.to_string(), v)),
            );
            if !values.is_empty() {
                let m = values.iter().sum::<f64>() / values.len() as f64;
                constants.push(("simple_regret_mean".to_string(), m));
                constants.push(("simple_regret_trials".to_string(), values.len() as f64));
                eprintln!(
                    "{}: simple regret of recommend() at T = {}, f* - reward: mean {m:.4} over {} trials",
                    row.label,
                    self.config.horizon,
                    values.len()
                );
            }
            row.constants = constants;
        }
        let gap = self.best - self.mean;
        with_uniform(&self.config, rows, |_| Ok((1..=self.config.horizon).map(|t| t as f64 * gap).collect()))
    }
}
