//! The registry of named experiments: Zhou & Tan's (Zhou & Tan, Figures 2 and 3) here, and every
//! other family's ([`crate::experiments::bandit`], [`crate::experiments::dubey`]) by import. The families describe their
//! experiments with [`crate::experiments::definition`]; they never import this registry.
//!
//! Seed 000's experiments:
//!
//! | name | setting |
//! |---|---|
//! | fig2a | LDP, ε = 1, synthetic, Matérn ν = 2.5 |
//! | fig2b | LDP, ε = 0.5, light sensor |
//! | fig2c | LDP, ε = 1, stocks |
//! | fig2d | non-private, synthetic, SE, Student-t(3) noise |
//! | fig2e | non-private, light sensor |
//! | fig2f | non-private, stocks |
//! | fig3a | LDP, ε = 1, synthetic, SE |
//! | fig3b | LDP, ε = 1, light sensor |
//! | fig3c | LDP, ε = 0.5, stocks |
//! | custom | the user's data (`--arms FILE.csv`, [`ldp_learn::env::table`]), LDP at ε = 1 by default |
//! | device | LDP, ε = 1, the firmware's sensor model |
//!
//! Private runs compare the three LDP algorithms and GP-UCB on the same privatised reports;
//! non-private runs compare the three heavy-tailed algorithms and GP-UCB on raw rewards.
//! Synthetic runs draw a new f for every trial (Zhou & Tan §5.2: hence the wide error bars).

pub mod bandit;
pub mod boxes;
pub mod definition;
pub mod dubey;
pub mod runner;

use std::path::{Path, PathBuf};

pub use crate::experiments::definition::{EnvFactory, EnvKind, Experiment, TaskBuilder, listed_epsilon};
use crate::experiments::runner::Loop;
use crate::run::executor::{Select, Task};
use crate::run::settings::{ConfigError, DeviceKind, RunConfig, RunError};
use ldp_learn::bo::GP_EXPERIMENT_ALGORITHMS;
use ldp_learn::env::{
    EnvError, Environment, Noise, RealData, SimRng, SyntheticKernel, SyntheticRkhs, shared,
};
#[cfg(feature = "network")]
use ldp_link::mqtt::MqttError;
use rand_core::SeedableRng;

const SE: SyntheticKernel = SyntheticKernel::PAPER_SE;
const MATERN: SyntheticKernel = SyntheticKernel::PAPER_MATERN;

/// A Zhou & Tan experiment: the four GP-UCB variants (private when `epsilon` is given, in the
/// local model) and the UCB1 baseline, 10 trials of T = 1000 by default.
const fn zhou_tan(
    name: &'static str,
    description: &'static str,
    env: EnvKind,
    epsilon: Option<f64>,
) -> Experiment {
    Experiment {
        name,
        description,
        env,
        epsilon: match epsilon {
            Some(e) => Some(listed_epsilon(e)),
            None => None,
        },
        central: false,
        algorithms: &GP_EXPERIMENT_ALGORITHMS,
        default_trials: 10,
        default_horizon: 1000,
        own_task: None,
    }
}

/// Every experiment, in the paper's order.
pub const EXPERIMENTS: [Experiment; 11] = [
    zhou_tan(
        "fig2a",
        "LDP, synthetic f, Matern-5/2 kernel (seed 000 Fig. 2a)",
        EnvKind::Synthetic { kernel: MATERN, noise: Noise::PAPER_LDP },
        Some(1.0),
    ),
    zhou_tan("fig2b", "LDP, light sensor data (seed 000 Fig. 2b)", EnvKind::LightSensor, Some(0.5)),
    zhou_tan("fig2c", "LDP, stock data (seed 000 Fig. 2c)", EnvKind::Stocks, Some(1.0)),
    zhou_tan(
        "fig2d",
        "non-private, synthetic f, SE kernel, Student-t(3) noise (seed 000 Fig. 2d)",
        EnvKind::Synthetic { kernel: SE, noise: Noise::PAPER_HEAVY_TAILED },
        None,
    ),
    zhou_tan("fig2e", "non-private, light sensor data (seed 000 Fig. 2e)", EnvKind::LightSensor, None),
    zhou_tan("fig2f", "non-private, stock data (seed 000 Fig. 2f)", EnvKind::Stocks, None),
    zhou_tan(
        "fig3a",
        "LDP, synthetic f, SE kernel (seed 000 Fig. 3a)",
        EnvKind::Synthetic { kernel: SE, noise: Noise::PAPER_LDP },
        Some(1.0),
    ),
    zhou_tan("fig3b", "LDP, light sensor data (seed 000 Fig. 3b)", EnvKind::LightSensor, Some(1.0)),
    zhou_tan("fig3c", "LDP, stock data (seed 000 Fig. 3c)", EnvKind::Stocks, Some(0.5)),
    zhou_tan(
        "custom",
        "your data: --arms FILE.csv, one column per arm (see host-sim run --help)",
        EnvKind::Table,
        Some(1.0),
    ),
    zhou_tan(
        "device",
        "LDP, the firmware's sensor model, 100 arms (try --device qemu)",
        EnvKind::Sensor,
        Some(1.0),
    ),
];

/// Arms of the firmware's sensor model (`firmware-example/src/main.rs`).
pub const SENSOR_ARMS: u32 = 100;
/// R of the firmware's sensor model.
pub const SENSOR_NOISE_BOUND: f64 = 1.0;

/// The `--noise` choices for synthetic experiments.
pub fn noise_by_name(name: &str) -> Option<Noise> {
    match name {
        "uniform" => Some(Noise::PAPER_LDP),
        "student-t" => Some(Noise::PAPER_HEAVY_TAILED),
        // Centred Pareto(scale 1, shape 3): finite variance, skewed heavy right tail.
        "pareto" => Noise::centred_pareto(3.0, 1.0).ok(),
        "gaussian" => Noise::gaussian(1.0).ok(),
        _ => None,
    }
}

/// Looks an experiment up by name.
pub fn find(name: &str) -> Option<&'static Experiment> {
    all().find(|e| e.name == name)
}

/// Every experiment of every family, in listing order. A new family appends its own array here.
pub fn all() -> impl Iterator<Item = &'static Experiment> {
    EXPERIMENTS
        .iter()
        .chain(crate::experiments::bandit::BANDIT_EXPERIMENTS.iter())
        .chain(crate::experiments::dubey::DUBEY_EXPERIMENTS.iter())
        .chain(crate::experiments::boxes::BOX_EXPERIMENTS.iter())
}

/// The task of a run of `experiment` on `env` (its own, or with another noise): the
/// experiment's own task, or the bandit loop of its algorithms.
pub fn task(
    experiment: &Experiment,
    env: EnvKind,
    config: &RunConfig,
    data: Option<&Path>,
) -> Result<Box<dyn Task>, RunError> {
    let task: Box<dyn Task> = match experiment.own_task {
        Some(build) => build(config)?,
        None => {
            let factory = match (env, &config.problem) {
                (EnvKind::Table, Some(files)) => files.factory(),
                _ => env_factory(env, data),
            };
            Box::new(Loop::new(config.clone(), factory.map_err(RunError::Environment)?))
        }
    };
    if matches!(config.device, DeviceKind::Fleet { .. } | DeviceKind::Mqtt { .. }) && !task.fleet_ready() {
        return Err(ConfigError::FleetUnsupported(experiment.name).into());
    }
    // A device on the wire answers exactly the jobs a fleet answers: the bandit loop's, locally
    // private (hardware in the loop feeds it the environment's rewards).
    if matches!(config.device, DeviceKind::Qemu { .. } | DeviceKind::Serial { .. } | DeviceKind::Tcp { .. })
        && !task.fleet_ready()
    {
        return Err(ConfigError::WireUnsupported(experiment.name).into());
    }
    if config.select.is_empty() {
        return Ok(task);
    }
    Ok(Box::new(Select::new(task, &config.select)?))
}

/// Why a box experiment has no finite-armed environment.
const NO_ARMS: &str = "its domain is a continuous box, with no arms for a device to serve";

/// Builds the environment factory; `data` is the directory of the real data sets.
pub fn env_factory(kind: EnvKind, data: Option<&Path>) -> Result<EnvFactory, EnvError> {
    let default = ldp_learn::env::data::default_dir();
    let need_data = |file: &'static str| -> Result<PathBuf, EnvError> {
        let dir = data.or(default.as_deref()).ok_or(EnvError::NoDataDir { file })?;
        let path = dir.join(file);
        ldp_learn::env::data::verify(&path).map_err(EnvError::Checksum)?;
        Ok(path)
    };
    Ok(match kind {
        EnvKind::Synthetic { kernel, noise } => {
            let noise = noise.validate().map_err(EnvError::Noise)?;
            Box::new(move |seed| {
                let mut rng = SimRng::seed_from_u64(seed);
                SyntheticRkhs::new(kernel, noise, &mut rng)
                    .map(|e| Box::new(e) as Box<dyn Environment>)
                    .map_err(EnvError::Synthetic)
            })
        }
        EnvKind::LightSensor => {
            let env = RealData::light_sensor(
                need_data("lightsensor_train.csv")?,
                need_data("lightsensor_test.csv")?,
            )
            .map_err(EnvError::RealData)?;
            shared(env)
        }
        EnvKind::Sensor => shared(ldp_learn::env::SensorEnv::new(SENSOR_ARMS, SENSOR_NOISE_BOUND)?),
        EnvKind::Custom(factory) => factory(data)?,
        EnvKind::Table => return Err(EnvError::NoArmsFile),
        EnvKind::Box => return Err(EnvError::Family(NO_ARMS.into())),
        EnvKind::Stocks => {
            let env = RealData::stocks(need_data("stocks_adjclose.csv")?).map_err(EnvError::RealData)?;
            shared(env)
        }
    })
}

/// The environment of trial `trial` of experiment `name` (seeded as a run seeded `seed` seeds
/// it), with the experiment's ε: what `host-sim fleet devices` serves. Refuses non-private
/// experiments and those whose environment is the user's table or another family's.
#[cfg(feature = "network")]
pub fn experiment_env(
    name: &str,
    seed: u64,
    trial: u64,
    data: Option<&Path>,
) -> Result<(std::sync::Arc<dyn Environment>, ldp_core::Epsilon), MqttError> {
    let bad = |reason| MqttError::Experiment { name: name.to_string(), reason };
    let experiment = all().find(|e| e.name == name).ok_or(bad("no such experiment (host-sim list)"))?;
    let epsilon = experiment.epsilon.ok_or(bad("it is non-private; pick a private (LDP) experiment"))?;
    if experiment.central {
        return Err(bad("it is central DP; a fleet's devices privatise locally"));
    }
    match experiment.env {
        EnvKind::Table => {
            return Err(bad("its environment is your own table (run custom), not a device's world"));
        }
        EnvKind::Custom(_) => return Err(bad("its environment belongs to another family")),
        EnvKind::Box => return Err(bad(NO_ARMS)),
        _ => {}
    }
    let factory = env_factory(experiment.env, data).map_err(MqttError::Environment)?;
    let env = factory(crate::run::settings::derive_seed(seed, trial, 0)).map_err(MqttError::Environment)?;
    Ok((std::sync::Arc::from(env), epsilon))
}
