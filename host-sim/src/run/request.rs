//! A named experiment's run as a front end asks for it: the settings of `host-sim run NAME`
//! (its flags) and of Python's `ldp_bo.run(NAME, ...)` (its keywords) are read here, once, so
//! the two cannot drift apart. Each front end keeps its own words for what it refuses (`--eps`
//! on the command line, `eps=` in Python): [`RequestError`] says what was wrong, the front end
//! how to say it.

use ldp_core::Epsilon;
use ldp_learn::env::Prior;
use ldp_learn::env::custom::ProblemFiles;
use ldp_learn::policy::{AlgorithmSpec, Constants};

use crate::experiments::definition::{EnvKind, Experiment};
use crate::experiments::noise_by_name;
use std::path::Path;

use ldp_link::fleet::Routing;

use crate::run::files::{DEVICE_LEDGER_DIR, LEDGER_DIR};
use crate::run::settings::{ConfigError, DeviceKind, FleetSpec, RunConfig};

/// What a front end asks for; `None`: the experiment's default.
#[derive(Clone, Debug)]
pub struct RunRequest<'a> {
    /// The experiment.
    pub experiment: &'static Experiment,
    /// ε of every report, in place of the experiment's (`None`: the experiment's, or no ε for
    /// `custom`).
    pub epsilon: Option<Epsilon>,
    /// Trials.
    pub trials: Option<usize>,
    /// T.
    pub horizon: Option<usize>,
    /// The master seed.
    pub seed: Option<u64>,
    /// Worker threads (the results do not depend on them).
    pub threads: Option<usize>,
    /// The constants mode.
    pub constants: Constants,
    /// Multiplies every learner's β_t.
    pub beta_scale: Option<f64>,
    /// q, the actions a learner asks at once (`None`: one at a time).
    pub batch: Option<usize>,
    /// N, the queries kept outstanding (`None`: one).
    pub in_flight: Option<usize>,
    /// The prior over a data table's arms.
    pub prior: Option<Prior>,
    /// Whether the arms' coordinates were given (`custom --coords`: the kernel over them is the
    /// prior).
    pub coords: bool,
    /// A synthetic experiment's noise, by name (`uniform`, `student-t`, `pareto`, `gaussian`).
    pub noise: Option<&'a str>,
    /// Only these learners (as the results name them).
    pub select: Vec<String>,
    /// The user's own problem (`custom`).
    pub problem: Option<ProblemFiles>,
    /// The learners, in place of the experiment's (`custom --family bandit`).
    pub algorithms: Option<Vec<AlgorithmSpec>>,
}

impl<'a> RunRequest<'a> {
    /// `experiment` with every setting its default (calibrated constants).
    pub fn new(experiment: &'static Experiment) -> Self {
        Self {
            experiment,
            epsilon: None,
            trials: None,
            horizon: None,
            seed: None,
            threads: None,
            constants: Constants::Calibrated,
            beta_scale: None,
            batch: None,
            in_flight: None,
            prior: None,
            coords: false,
            noise: None,
            select: Vec::new(),
            problem: None,
            algorithms: None,
        }
    }
}

/// A request read: the run's settings (in process; a front end with devices sets
/// [`RunConfig::device`] and what goes with it), its environment and its title.
#[derive(Clone, Debug)]
pub struct Settled {
    /// The settings.
    pub config: RunConfig,
    /// The environment, with the noise asked for.
    pub env: EnvKind,
    /// The title of its tables and plots.
    pub title: String,
}

/// What a request cannot be run with. The front ends word it (`--eps` or `eps=`).
#[derive(Clone, Debug, PartialEq)]
pub enum RequestError {
    /// ε was given to a non-private experiment.
    EpsNonPrivate(&'static str),
    /// No ε (`--eps none`) for a private experiment other than `custom` and the box experiments.
    EpsNone(&'static str),
    /// A prior for an experiment whose prior is its kernel.
    PriorNotTable(&'static str),
    /// A prior and the arms' coordinates both.
    PriorWithCoords,
    /// β's scale is not a finite number ≥ 0.
    BetaScale(f64),
    /// A batch of no actions, or no query in flight.
    BatchZero,
    /// Both a batch and queries in flight.
    BatchAndInFlight,
    /// A batch for an experiment that is not one learner loop over its environment (a sweep
    /// or full-information experts: its own task asks one action at a time).
    BatchOwnTask(&'static str),
    /// No noise has that name.
    UnknownNoise(String),
    /// A noise for an experiment that is not synthetic.
    NoiseNotSynthetic(&'static str),
    /// A private run with unbounded noise.
    UnboundedPrivate,
    /// Settings the run cannot use (no trials or no rounds).
    Config(ConfigError),
}

/// The run `request` asks for, refusing settings it cannot be run with. Its checks, in order:
/// ε, the prior, β's scale, the batch, the noise, trials and horizon.
pub fn settle(request: RunRequest<'_>) -> Result<Settled, RequestError> {
    let experiment = request.experiment;
    let name = experiment.name;
    let epsilon = match (experiment.epsilon, request.epsilon) {
        (None, Some(_)) => return Err(RequestError::EpsNonPrivate(name)),
        (Some(_), None) if request.problem.is_none() && !matches!(experiment.env, EnvKind::Box) => {
            // Python has no `none`: it always passes the experiment's own ε.
            return Err(RequestError::EpsNone(name));
        }
        (_, e) => e,
    };
    let defaults = experiment.default_config();
    let prior = match (defaults.prior, request.prior) {
        (None, Some(_)) => return Err(RequestError::PriorNotTable(name)),
        (Some(_), Some(_)) if request.coords => return Err(RequestError::PriorWithCoords),
        // With coordinates the kernel over them is the prior.
        (Some(_), None) if request.coords => None,
        (default, given) => given.or(default),
    };
    let config = RunConfig {
        prior,
        trials: request.trials.unwrap_or(defaults.trials),
        horizon: request.horizon.unwrap_or(defaults.horizon),
        seed: request.seed.unwrap_or(defaults.seed),
        threads: request.threads,
        epsilon,
        beta_scale: request.beta_scale.unwrap_or(defaults.beta_scale),
        batch: request.batch.unwrap_or(1),
        in_flight: request.in_flight.unwrap_or(1),
        constants: request.constants,
        device: DeviceKind::InProcess,
        algorithms: request.algorithms.unwrap_or_else(|| defaults.algorithms.clone()),
        select: request.select,
        problem: request.problem,
        ..defaults
    };
    if !(config.beta_scale.is_finite() && config.beta_scale >= 0.0) {
        return Err(RequestError::BetaScale(config.beta_scale));
    }
    match (config.batch, config.in_flight) {
        (0, _) | (_, 0) => return Err(RequestError::BatchZero),
        (1, 1) => {}
        (q, n) if q > 1 && n > 1 => return Err(RequestError::BatchAndInFlight),
        // A box's task takes batches; queries in flight only the learner loop.
        (_, 1) if matches!(experiment.env, EnvKind::Box) => {}
        _ if experiment.own_task.is_some() => return Err(RequestError::BatchOwnTask(name)),
        _ => {}
    }
    let mut env = experiment.env;
    if let Some(noise_name) = request.noise {
        let chosen =
            noise_by_name(noise_name).ok_or_else(|| RequestError::UnknownNoise(noise_name.to_string()))?;
        match &mut env {
            EnvKind::Synthetic { noise, .. } => *noise = chosen,
            _ => return Err(RequestError::NoiseNotSynthetic(name)),
        }
    }
    if let (Some(_), EnvKind::Synthetic { noise, .. }) = (epsilon, env)
        && noise.bound().is_none()
    {
        return Err(RequestError::UnboundedPrivate);
    }
    if config.trials == 0 || config.horizon == 0 {
        return Err(RequestError::Config(ConfigError::NothingToRun));
    }
    let privacy = experiment.privacy_note(epsilon);
    let noise = request.noise.map_or(String::new(), |n| format!(", {n} noise"));
    let title = match &config.problem {
        // The file's name, not its path: a title is no place for a home directory.
        Some(files) => format!("your data: {} ({privacy})", crate::run::files::shown_name(&files.arms)),
        None if privacy.is_empty() && noise.is_empty() => experiment.description.to_string(),
        None => format!("{} ({privacy}{noise})", experiment.description),
    };
    Ok(Settled { config, env, title })
}

/// Where a settled run's queries go, as a front end asks for it (`host-sim run --device`).
#[derive(Clone, Debug, Default)]
pub struct DeviceRequest {
    /// The device (`None`: in process).
    pub device: Option<DeviceKind>,
    /// A fleet's routing.
    pub routing: Option<Routing>,
    /// Each fleet member's lifetime budget.
    pub user_budget: Option<f64>,
    /// The run is one shard of several.
    pub sharded: bool,
}

/// What a run cannot do on the device asked for. The front ends word it.
#[derive(Clone, Debug, PartialEq)]
pub enum DeviceRefusal {
    /// A shard of a run over an MQTT fleet.
    ShardOverMqtt,
    /// A user budget for an MQTT fleet (its devices set their own).
    UserBudgetOverMqtt,
    /// A user budget that is not a finite number > 0.
    UserBudget(f64),
    /// A routing or a user budget without a fleet.
    FleetOnly,
    /// Settings the device cannot serve (an MQTT fleet and a new environment every trial).
    Config(ConfigError),
}

/// `config` (settled) with its queries sent where `request` asks: a fleet gets its routing and
/// budgets; an MQTT fleet, a serial board and a TCP device answer one conversation at a time
/// (one thread), and an MQTT fleet neither shards nor takes a user budget; a device on the
/// wire privatises the experiment's own rewards, sent with each query (the sensor experiment's
/// device reads its own sensor).
pub fn place(
    config: &mut RunConfig,
    experiment: &Experiment,
    request: DeviceRequest,
) -> Result<(), DeviceRefusal> {
    if let Some(device) = request.device {
        config.device = device;
    }
    if let DeviceKind::Fleet { .. } | DeviceKind::Mqtt { .. } = config.device {
        if let DeviceKind::Mqtt { .. } = config.device {
            if request.sharded {
                return Err(DeviceRefusal::ShardOverMqtt);
            }
            if request.user_budget.is_some() {
                return Err(DeviceRefusal::UserBudgetOverMqtt);
            }
            if matches!(experiment.env, EnvKind::Synthetic { .. }) && config.trials > 1 {
                return Err(DeviceRefusal::Config(ConfigError::FleetTrials));
            }
            config.threads = Some(1); // one fleet, one conversation at a time
        }
        if let Some(budget) = request.user_budget
            && !(budget.is_finite() && budget > 0.0)
        {
            return Err(DeviceRefusal::UserBudget(budget));
        }
        config.fleet = Some(FleetSpec {
            routing: request.routing.unwrap_or_default(),
            user_budget: request.user_budget,
            ledger_dir: None,
        });
    } else if request.routing.is_some() || request.user_budget.is_some() {
        return Err(DeviceRefusal::FleetOnly);
    } else if config.device != DeviceKind::InProcess {
        // Hardware in the loop: the device privatises the rewards of the experiment's own
        // environment, sent with each query; the device experiment's device reads its own sensor.
        // (Experiments whose jobs do not query a local-DP device are refused with the task.)
        config.feed = !matches!(experiment.env, EnvKind::Sensor);
    }
    if let DeviceKind::Serial { .. } | DeviceKind::Tcp { .. } = config.device {
        config.threads = Some(1); // one device, one conversation at a time
    }
    Ok(())
}

/// The ledger directories of `config`'s devices inside the output directory `out`: a fleet's
/// members, or the one device on the wire's (QEMU, serial, TCP).
pub fn keep_ledgers_in(config: &mut RunConfig, out: &Path) {
    if let Some(fleet) = config.fleet.as_mut() {
        fleet.ledger_dir = Some(out.join(LEDGER_DIR));
    }
    if let DeviceKind::Qemu { .. } | DeviceKind::Serial { .. } | DeviceKind::Tcp { .. } = config.device {
        config.device_ledger_dir = Some(out.join(DEVICE_LEDGER_DIR));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::find;

    fn experiment(name: &str) -> &'static Experiment {
        find(name).unwrap()
    }

    /// Nothing asked: the experiment's own settings, in process, under its title and ε.
    #[test]
    fn the_defaults_are_the_experiments() {
        let fig2a = experiment("fig2a");
        let settled = settle(RunRequest { epsilon: fig2a.epsilon, ..RunRequest::new(fig2a) }).unwrap();
        let json = |c: &RunConfig| serde_json::to_string(c).unwrap();
        assert_eq!(json(&settled.config), json(&fig2a.default_config()));
        assert_eq!(settled.title, format!("{} (eps = 1)", fig2a.description));
        let noisy =
            RunRequest { epsilon: None, noise: Some("pareto"), ..RunRequest::new(experiment("fig2d")) };
        assert_eq!(
            settle(noisy).unwrap().title,
            format!("{} (non-private, pareto noise)", experiment("fig2d").description)
        );
    }

    /// Each refusal, and the first of several in the documented order (ε, prior, β's scale,
    /// noise, trials and horizon).
    #[test]
    fn what_a_run_cannot_use_is_refused_in_order() {
        let eps = Epsilon::new(1.0).ok();
        let fig2a = || RunRequest { epsilon: eps, ..RunRequest::new(experiment("fig2a")) };
        let refused = |r: RunRequest<'_>| settle(r).err();
        assert_eq!(
            refused(RunRequest { epsilon: eps, ..RunRequest::new(experiment("fig2d")) }),
            Some(RequestError::EpsNonPrivate("fig2d"))
        );
        assert_eq!(refused(RunRequest { epsilon: None, ..fig2a() }), Some(RequestError::EpsNone("fig2a")));
        assert_eq!(
            refused(RunRequest { prior: Some(Prior::Shrunk), trials: Some(0), ..fig2a() }),
            Some(RequestError::PriorNotTable("fig2a"))
        );
        let fig2b = || RunRequest { epsilon: eps, ..RunRequest::new(experiment("fig2b")) };
        assert_eq!(
            refused(RunRequest { prior: Some(Prior::Shrunk), coords: true, ..fig2b() }),
            Some(RequestError::PriorWithCoords)
        );
        assert_eq!(
            refused(RunRequest { beta_scale: Some(-1.0), noise: Some("cauchy"), ..fig2a() }),
            Some(RequestError::BetaScale(-1.0))
        );
        assert_eq!(
            refused(RunRequest { noise: Some("cauchy"), trials: Some(0), ..fig2a() }),
            Some(RequestError::UnknownNoise("cauchy".into()))
        );
        assert_eq!(
            refused(RunRequest { noise: Some("uniform"), ..fig2b() }),
            Some(RequestError::NoiseNotSynthetic("fig2b"))
        );
        assert_eq!(
            refused(RunRequest { noise: Some("student-t"), ..fig2a() }),
            Some(RequestError::UnboundedPrivate)
        );
        assert_eq!(
            refused(RunRequest { horizon: Some(0), ..fig2a() }),
            Some(RequestError::Config(ConfigError::NothingToRun))
        );
    }
}
