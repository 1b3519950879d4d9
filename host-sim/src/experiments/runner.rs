//! The bandit loop: ask the learner ([`Optimizer`]), query the device, tell the learner the
//! report — for every experiment over arms (Zhou & Tan's GP BO, Tao et al.'s K-armed bandits, the
//! device runs). [`LoopTask`] is that loop as a [`Task`] of the [`Executor`]; [`run`] runs one
//! directly.
//!
//! Seeds: trial `i` of a run with seed `s` uses `derive(s, i, ·)` for its environment instance
//! (shared by all algorithms of the trial, so comparisons are paired), its world noise, the
//! device's ChaCha20 and the policy's own randomness.

use std::path::Path;

use nalgebra::DMatrix;

use ldp_core::wire::Hello;
use ldp_core::{DeviceConfig, Epsilon};

use ldp_learn::env::{EnvError, EnvFactory, Environment, RewardBounds};
use ldp_learn::optimizer::{Optimizer, OptimizerError};
use ldp_learn::policy::Constants;
use ldp_learn::policy::{AlgorithmSpec, Problem};
use ldp_learn::rules::{self, ProblemError};
use ldp_link::client::LinkError;
use ldp_link::connect::keyed_client;
use ldp_link::device::{
    Device, DeviceError, FedWireDevice, InProcessDevice, MemberRecord, RawDevice, Submitted, WireDevice,
    device_config,
};
use ldp_link::fleet::{self, Fleet};
#[cfg(feature = "network")]
use ldp_link::transport::SerialLink;
use ldp_link::transport::{Link, QemuDevice, TcpLink};

use crate::run::checkpoint::Checkpoint;
use crate::run::executor::{Executor, Progress, Task};
use crate::run::output;
use ldp_link::fleet::record::QueryRecord;

pub use crate::run::results::{AlgorithmResult, UNIFORM_LABEL, aggregate, uniform_curve, with_uniform};
pub use crate::run::settings::{
    ConfigError, DeviceKind, RunConfig, RunError, default_firmware_elf, derive_seed, run_id,
};

/// A fleet over an MQTT broker as a run's device (with the `network` feature).
#[cfg(feature = "network")]
mod mqtt;

/// Builds trial environments from trial seeds.
pub type MakeEnv = dyn Fn(u64) -> Result<Box<dyn Environment>, EnvError> + Sync;

/// The learner's public problem for an environment, privatised at `epsilon` or not.
pub fn problem_for(env: &dyn Environment, config: &RunConfig) -> Result<Problem, RunError> {
    let prior = match config.prior {
        Some(choice) => choice.apply(env.prior_covariance()),
        None => env.prior_covariance().clone(),
    };
    problem_from(prior, env.bounds(), config)
}

/// The learner's public problem from what it knows: the prior covariance over the arms and the
/// reward constants (the environment's, or a device's B and R), by the constants rules of
/// [`ldp_learn::rules::problem`] on `config`'s public settings.
pub fn problem_from(
    prior: DMatrix<f64>,
    bounds: RewardBounds,
    config: &RunConfig,
) -> Result<Problem, RunError> {
    rules::problem(prior, bounds, &config.public()).map_err(|e| match e {
        ProblemError::Kernel(e) => RunError::Environment(EnvError::Kernel(e)),
        ProblemError::UnboundedNoise => RunError::Device(DeviceError::UnboundedNoise),
        ProblemError::Mechanism(e) => RunError::Device(DeviceError::Config(e)),
        other => RunError::Learner { label: "problem".to_string(), source: Box::new(other) },
    })
}

/// Cumulative regret after each round of one trial of one algorithm.
pub fn run_trial(
    env: &dyn Environment,
    algorithm: &AlgorithmSpec,
    config: &RunConfig,
    trial_seed: u64,
    algo_index: u64,
) -> Result<Vec<f64>, RunError> {
    run_trial_with_ledger(env, algorithm, config, trial_seed, algo_index).map(|(curve, _)| curve)
}

/// [`run_trial`], and, for a fleet or a device on the wire, what each device spent.
pub fn run_trial_with_ledger(
    env: &dyn Environment,
    algorithm: &AlgorithmSpec,
    config: &RunConfig,
    trial_seed: u64,
    algo_index: u64,
) -> Result<(Vec<f64>, Option<Vec<MemberRecord>>), RunError> {
    let trial = run_trial_recorded(env, algorithm, config, trial_seed, algo_index);
    trial.curve.map(|curve| (curve, trial.ledger))
}

/// One trial's outcome: its regret curve or its error, and what each device spent, also when
/// the trial failed after its devices were reached (a device's budget, once spent, stays spent
/// whether or not the run goes on; the ledger says so).
pub struct Trial {
    /// Cumulative regret after each round, or why the trial stopped.
    pub curve: Result<Vec<f64>, RunError>,
    /// A fleet's or a device's ledger, once the devices were reached.
    pub ledger: Option<Vec<MemberRecord>>,
    /// Seconds of the ask-query-tell loop (the learner and its devices built, the devices
    /// reached: set-up excluded).
    pub loop_seconds: f64,
}

/// [`run_trial_with_ledger`], keeping the ledger of a trial that failed.
pub fn run_trial_recorded(
    env: &dyn Environment,
    algorithm: &AlgorithmSpec,
    config: &RunConfig,
    trial_seed: u64,
    algo_index: u64,
) -> Trial {
    run_trial_with_record(env, algorithm, config, trial_seed, algo_index, None)
}

/// [`run_trial_recorded`], a fleet writing each query to `record` before it sends it, and its
/// settlement after (`ldp_link::fleet::record`); `record` is unused by any other device.
pub fn run_trial_with_record(
    env: &dyn Environment,
    algorithm: &AlgorithmSpec,
    config: &RunConfig,
    trial_seed: u64,
    algo_index: u64,
    record: Option<QueryRecord>,
) -> Trial {
    let (mut learner, mut device) = match trial_parts(env, algorithm, config, trial_seed, algo_index, record)
    {
        Ok(parts) => parts,
        Err(e) => return Trial { curve: Err(e), ledger: None, loop_seconds: 0.0 },
    };
    let start = std::time::Instant::now();
    let best = env.best_mean();
    let mut total = 0.0;
    let mut curve = Vec::with_capacity(config.horizon);
    let mut rounds = || {
        if config.in_flight > 1 {
            return in_flight_loop(&mut learner, device.as_mut(), config.horizon, config.in_flight, |arm| {
                total += best - env.mean(arm);
                curve.push(total);
            });
        }
        // q actions asked, then their q reports told (q = 1: ask, query, tell).
        let q = config.batch.max(1);
        let mut reports = Vec::with_capacity(q.min(config.horizon));
        while curve.len() < config.horizon {
            let asked = learner.ask_batch(q.min(config.horizon - curve.len()));
            reports.clear();
            for x in &asked {
                reports.push(device.query(x.action, x.device_level).map_err(RunError::Device)?);
            }
            for (x, &report) in asked.iter().zip(&reports) {
                learner.tell(x.action, report).map_err(learner_error)?;
                total += best - env.mean(x.action);
                curve.push(total);
            }
        }
        Ok(())
    };
    let outcome = rounds();
    // Queries still in flight when the loop stopped are waited for, so the ledger counts them.
    device.drain();
    let loop_seconds = start.elapsed().as_secs_f64();
    Trial { curve: outcome.map(|()| curve), ledger: device.ledger(), loop_seconds }
}

/// `rounds` reports told to `learner` with up to `in_flight` queries outstanding at `device`:
/// the oldest report is told before each ask, and `told(arm)` hears each. A device that can
/// have several queries outstanding (a fleet over MQTT) waits for them at once; any other
/// answers each on submission. Stops early only when the learner has nothing to ask (LDP-RSE's
/// epoch all outstanding and answered).
pub fn in_flight_loop(
    learner: &mut Optimizer,
    device: &mut dyn Device,
    rounds: usize,
    in_flight: usize,
    mut told: impl FnMut(usize),
) -> Result<(), RunError> {
    let mut flight = std::collections::VecDeque::with_capacity(in_flight);
    let mut done = 0;
    while done < rounds {
        while flight.len() < in_flight && done + flight.len() < rounds {
            // Empty only when LDP-RSE's epoch is all outstanding.
            let Some(x) = learner.ask_batch(1).pop() else { break };
            flight.push_back((x.action, device.submit(x.action, x.device_level).map_err(RunError::Device)?));
        }
        let Some((arm, submitted)) = flight.pop_front() else { break };
        let report = match submitted {
            Submitted::Answered(report) => report,
            Submitted::Pending(ticket) => device.collect(ticket).map_err(RunError::Device)?,
        };
        learner.tell(arm, report).map_err(learner_error)?;
        told(arm);
        done += 1;
    }
    Ok(())
}

/// A trial's learner and the device it queries (a fleet writing its queries to `record`).
fn trial_parts<'a>(
    env: &'a dyn Environment,
    algorithm: &AlgorithmSpec,
    config: &RunConfig,
    trial_seed: u64,
    algo_index: u64,
    record: Option<QueryRecord>,
) -> Result<(Optimizer, Box<dyn Device + 'a>), RunError> {
    let mut problem = problem_for(env, config)?;
    if config.constants == Constants::Calibrated {
        // One order per trial, shared by its learners (paired comparisons).
        problem.tie_order = Some(ldp_learn::bo::tie_order(problem.num_arms(), derive_seed(trial_seed, 0, 5)));
    }
    // The learner through ask/tell, as a user drives it: it sees the public problem and the
    // reports; only this loop knows f (for the regret).
    let learner = Optimizer::from_problem(
        *algorithm,
        &problem,
        config.constants,
        derive_seed(trial_seed, algo_index, 3),
    )
    .map_err(learner_error)?;
    let world_seed = derive_seed(trial_seed, algo_index, 1);
    let device_seed = derive_seed(trial_seed, algo_index, 2);
    let device: Box<dyn Device + '_> = match (config.local_epsilon(), &config.device) {
        (Some(eps), DeviceKind::InProcess) => Box::new(
            InProcessDevice::new(env, eps, config.horizon, world_seed, device_seed)
                .map_err(RunError::Device)?,
        ),
        (Some(eps), DeviceKind::Qemu { elf }) => {
            let qemu = QemuWire::start(env, elf, eps, config, trial_seed, algo_index)?;
            feed_if(config, qemu.device, env, world_seed, qemu.qemu)
        }
        #[cfg(feature = "network")]
        (Some(eps), DeviceKind::Serial { path }) => {
            let auth = single_device_auth()?;
            let link = SerialLink::open(path)
                .map_err(|source| DeviceError::Connect { target: path.clone(), source })?;
            let device = checked_wire_device(env, link, auth, eps, None, keys_origin(auth.device_id))?;
            feed_if(config, device, env, world_seed, ())
        }
        (Some(eps), DeviceKind::Tcp { addr }) => {
            let auth = single_device_auth()?;
            let link = TcpLink::connect(addr, std::time::Duration::from_secs(5))
                .map_err(|source| DeviceError::Connect { target: addr.clone(), source })?;
            let device = checked_wire_device(env, link, auth, eps, None, keys_origin(auth.device_id))?;
            feed_if(config, device, env, world_seed, ())
        }
        (Some(eps), &DeviceKind::Fleet { devices }) => {
            let spec = config.fleet.clone().unwrap_or_default();
            let budget = spec.user_budget.unwrap_or(eps.get() * config.horizon.div_ceil(devices) as f64);
            let members =
                fleet::in_process(env, trial_seed, devices, eps, budget).map_err(RunError::Device)?;
            let fleet = Fleet::new(members, eps, spec.routing, derive_seed(trial_seed, algo_index, 4));
            Box::new(match record {
                Some(record) => fleet.with_record(record),
                None => fleet,
            })
        }
        #[cfg(feature = "network")]
        (Some(eps), DeviceKind::Mqtt { url }) => {
            let (spec, seed) =
                (config.fleet.clone().unwrap_or_default(), derive_seed(trial_seed, algo_index, 4));
            Box::new(mqtt::MqttRun::connect(env, url, eps, spec.routing, seed, config.in_flight, record)?)
        }
        #[cfg(not(feature = "network"))]
        (Some(_), DeviceKind::Serial { .. }) => return Err(ConfigError::DeviceNotBuilt("serial port").into()),
        #[cfg(not(feature = "network"))]
        (Some(_), DeviceKind::Mqtt { .. }) => return Err(ConfigError::DeviceNotBuilt("MQTT client").into()),
        (None, DeviceKind::InProcess) => Box::new(RawDevice::new(env, world_seed)),
        (None, _) => return Err(ConfigError::DeviceWithoutPrivacy.into()),
    };
    Ok((learner, device))
}

/// A learner's error as the run's: what the policy refused as [`RunError::Policy`] (as before
/// the loop used ask/tell); the rest (a tell out of turn: a bug in the loop) as the learner's.
pub(crate) fn learner_error(e: OptimizerError) -> RunError {
    match e {
        OptimizerError::Report(e) => RunError::Policy(e),
        other => RunError::Learner { label: "ask/tell".to_string(), source: Box::new(other) },
    }
}

/// The bandit loop of `config`'s algorithms on the environments of `make_env`, as a task: one
/// learner per algorithm; the results carry each algorithm's derived constants and the
/// uniform-play reference row.
#[derive(Clone, Copy)]
pub struct LoopTask<'a> {
    /// The settings.
    pub config: &'a RunConfig,
    /// The trial environments.
    pub make_env: &'a MakeEnv,
    /// Where each learner's loop time and reports are summed (`reports_per_s`), if anywhere.
    pub clock: Option<&'a LoopClock>,
}

/// Each learner's reports told and seconds of its loops, summed over the jobs run in this
/// process (a resumed job's are not known): `run.json`'s `reports_per_s`.
#[derive(Default)]
pub struct LoopClock(std::sync::Mutex<Vec<(f64, u64)>>);

impl LoopClock {
    fn add(&self, learner: usize, seconds: f64, reports: usize) {
        let mut sums = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if sums.len() <= learner {
            sums.resize(learner + 1, (0.0, 0));
        }
        sums[learner].0 += seconds;
        sums[learner].1 += reports as u64;
    }

    /// Learner `learner`'s reports per second of its loops; `None` if none was timed.
    pub fn reports_per_s(&self, learner: usize) -> Option<f64> {
        let sums = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        sums.get(learner).filter(|(s, n)| *s > 0.0 && *n > 0).map(|(s, n)| *n as f64 / s)
    }
}

/// What job (`trial`, learner `recorded` of the run) leaves once its loop ended with `curve`:
/// its fleet's or device's `ledger` written in `ledger_dir`, labelled with what its record of
/// queries in flight in `record`'s directory says earlier attempts left unanswered; the record
/// removed once the job finished. The job's outcome, or why its results are not whole.
///
/// A record a write to which failed (`record`'s flag) may lack the `done` line of a query whose
/// reply reached the learner (a query whose `sent` line failed was not sent, and after a failed
/// write none is): such a record labels the ledger with what it carried from earlier attempts
/// alone, and is then removed, so that the attempt that runs the job again takes that from the
/// ledger and not the record's own lines. A finished job loses nothing by it: every query it
/// sent settled. A failed one (a record that cannot be written fails its job: the query is not
/// sent) loses the label of what it left in flight, rather than label answered queries.
fn keep_job(
    (trial, recorded): (usize, usize),
    ledger_dir: Option<&Path>,
    record: Option<(&Path, bool)>,
    ledger: Option<Vec<MemberRecord>>,
    curve: Result<Vec<f64>, RunError>,
) -> Result<Vec<f64>, RunError> {
    let (record_dir, record_failed) = (record.map(|(dir, _)| dir), record.is_some_and(|(_, failed)| failed));
    let labels = if record_failed { output::Labels::Carried } else { output::Labels::All };
    // Written whether or not the job finished: what a failed job spent is recorded too. A job
    // run again writes what its devices show then (for a device on the wire, the failed
    // attempt's spending as well), and keeps the earlier attempt's rows of devices it did not
    // reach. A label must never cost the ledger: if the record cannot be read, the ledger is
    // written without its label, and the record's error said after.
    let mut unlabelled = None;
    let written = ledger.is_some() && ledger_dir.is_some();
    if let (Some(ledger), Some(dir)) = (ledger, ledger_dir)
        && let Err(e) = output::with_earlier_attempt(dir, trial, recorded, ledger).and_then(|mut all| {
            if let Some(record_dir) = record_dir {
                unlabelled = output::with_unanswered(record_dir, trial, recorded, &mut all, labels).err();
            }
            output::write_ledger(dir, trial, recorded, &all)
        })
    {
        // A failed job's own error comes first; that its ledger is lost is said too.
        return Err(match curve {
            Ok(_) => RunError::Output(e),
            Err(job) => RunError::LedgerNotWritten { job: Box::new(job), ledger: e },
        });
    }
    if let Some(record) = unlabelled {
        let Err(job) = curve else {
            // Finished: its ledger holds what its devices spent, and failing it would run it
            // again and make them spend again. The record, which nothing can read, is set
            // aside (`.queries.damaged`, which nothing reads) and said.
            let aside = record_dir.map(|dir| {
                let path = output::queries_path(dir, trial, recorded);
                let to = path.with_extension("queries.damaged");
                std::fs::rename(&path, &to).map(|()| to)
            });
            let aside = match aside {
                Some(Ok(to)) => format!("; the record is set aside as {}", to.display()),
                Some(Err(e)) => format!("; it could not be set aside ({e})"),
                None => String::new(),
            };
            eprintln!(
                "warning: trial {trial}'s job finished and its ledger is written, but does not label the queries its killed attempts left unanswered: {record}{aside}"
            );
            return curve;
        };
        // A failed job keeps its record as it is, for its owner to see.
        return Err(RunError::Unlabelled { job: Box::new(job), record });
    }
    // Finished, or its record failed: its ledger holds what the record can say. A failed job
    // keeps its record, for the attempt that runs it again, unless it holds nothing to label
    // (the job queried no one).
    let ended = match (&curve, record_dir) {
        (_, Some(dir)) if written && (curve.is_ok() || record_failed) => {
            output::end_query_record(dir, trial, recorded)
        }
        (Err(_), Some(dir)) => output::end_empty_query_record(dir, trial, recorded),
        _ => Ok(()),
    };
    // A failed job's own error is the one returned; that its record could not be removed is
    // said beside it.
    match (curve, ended) {
        (curve, Ok(())) => curve,
        (Ok(_), Err(e)) => Err(RunError::Output(e)),
        (Err(job), Err(e)) => {
            eprintln!(
                "warning: trial {trial}'s failed job's record of queries in flight is left as it was: {e}"
            );
            Err(job)
        }
    }
}

impl LoopTask<'_> {
    /// The job of `learner` in `trial`, its fleet's ledger (if any) recorded as learner
    /// `recorded` of the run (a sweep's learners are numbered across its points).
    pub fn job_recorded_as(
        &self,
        trial: usize,
        learner: usize,
        recorded: usize,
    ) -> Result<Vec<f64>, RunError> {
        let config = self.config;
        let trial_seed = derive_seed(config.seed, trial as u64, 0);
        let env = (self.make_env)(trial_seed).map_err(RunError::Environment)?;
        // A fleet's queries are recorded beside its ledgers before they are sent, so that this
        // job, if killed with queries in flight, says in its ledger when run again what they
        // spent unanswered.
        let record_dir = config.fleet.as_ref().and_then(|f| f.ledger_dir.as_deref());
        let record = match record_dir {
            Some(dir) => Some(output::begin_query_record(dir, trial, recorded).map_err(RunError::Output)?),
            None => None,
        };
        let health = record.as_ref().map(QueryRecord::health);
        let Trial { curve, ledger, loop_seconds } = run_trial_with_record(
            env.as_ref(),
            &config.algorithms[learner],
            config,
            trial_seed,
            learner as u64,
            record,
        );
        if let (Some(clock), Ok(curve)) = (self.clock, &curve) {
            clock.add(learner, loop_seconds, curve.len());
        }
        let ledger_dir = match &config.fleet {
            Some(fleet) => fleet.ledger_dir.as_deref(),
            None => config.device_ledger_dir.as_deref(),
        };
        let record_failed = health.is_some_and(|h| h.failed());
        keep_job((trial, recorded), ledger_dir, record_dir.map(|dir| (dir, record_failed)), ledger, curve)
    }

    /// Whether every job queries a device that privatises (local DP), so that a fleet can
    /// answer it.
    pub fn local(&self) -> bool {
        self.config.local_epsilon().is_some()
    }
}

impl Task for LoopTask<'_> {
    fn fleet_ready(&self) -> bool {
        self.local()
    }

    fn labels(&self) -> Vec<String> {
        let private = self.config.epsilon.is_some();
        self.config.algorithms.iter().map(|a| a.label(private).to_string()).collect()
    }

    fn job(&self, trial: usize, learner: usize) -> Result<Vec<f64>, RunError> {
        self.job_recorded_as(trial, learner, learner)
    }

    fn finish(&self, mut rows: Vec<AlgorithmResult>) -> Result<Vec<AlgorithmResult>, RunError> {
        let config = self.config;
        for (a, r) in rows.iter_mut().enumerate() {
            r.constants = derived_constants(config, self.make_env, a)?;
            // Recorded where the throughput is the point: a device's, a fleet's, batches.
            if config.in_flight > 1 || config.batch > 1 || !matches!(config.device, DeviceKind::InProcess) {
                r.reports_per_s = self.clock.and_then(|c| c.reports_per_s(a));
            }
        }
        with_uniform(config, rows, |trial| {
            let env =
                (self.make_env)(derive_seed(config.seed, trial as u64, 0)).map_err(RunError::Environment)?;
            Ok(uniform_curve(env.as_ref(), config.horizon))
        })
    }
}

/// An owned [`LoopTask`]: the settings and the environment factory of an experiment's run.
pub struct Loop {
    /// The settings.
    pub config: RunConfig,
    /// The trial environments.
    pub factory: EnvFactory,
    /// Each learner's loop time.
    pub clock: LoopClock,
}

impl Loop {
    /// The loop of `config` over the environments of `factory`.
    pub fn new(config: RunConfig, factory: EnvFactory) -> Self {
        Self { config, factory, clock: LoopClock::default() }
    }

    /// The loop as a task.
    pub fn task(&self) -> LoopTask<'_> {
        LoopTask { config: &self.config, make_env: self.factory.as_ref(), clock: Some(&self.clock) }
    }
}

impl Task for Loop {
    fn fleet_ready(&self) -> bool {
        self.task().local()
    }
    fn labels(&self) -> Vec<String> {
        self.task().labels()
    }
    fn job(&self, trial: usize, learner: usize) -> Result<Vec<f64>, RunError> {
        self.task().job(trial, learner)
    }
    fn finish(&self, rows: Vec<AlgorithmResult>) -> Result<Vec<AlgorithmResult>, RunError> {
        self.task().finish(rows)
    }
}

/// Runs every (trial, algorithm) pair of the bandit loop with the [`Executor`], resuming from
/// and recording to `checkpoint` when given.
pub fn run(
    config: &RunConfig,
    make_env: &MakeEnv,
    progress: bool,
    checkpoint: Option<&Checkpoint>,
) -> Result<Vec<AlgorithmResult>, RunError> {
    let bar = Progress::new(progress);
    let mut executor = Executor::new(config).observe(&bar);
    if let Some(c) = checkpoint {
        executor = executor.checkpoint(c);
    }
    executor.results(&LoopTask { config, make_env, clock: None })
}

/// The problem's and algorithm `a`'s policy's constants in trial 0.
fn derived_constants(
    config: &RunConfig,
    make_env: &MakeEnv,
    a: usize,
) -> Result<Vec<(String, f64)>, RunError> {
    let trial_seed = derive_seed(config.seed, 0, 0);
    let env = make_env(trial_seed).map_err(RunError::Environment)?;
    let problem = problem_for(env.as_ref(), config)?;
    let policy =
        (config.algorithms[a].build)(&problem, config.constants, derive_seed(trial_seed, a as u64, 3))
            .map_err(RunError::Policy)?;
    let mut out = vec![
        ("B".to_string(), problem.b),
        ("R".to_string(), problem.noise_bound.unwrap_or(f64::NAN)),
        ("alpha".to_string(), problem.alpha),
        ("v".to_string(), problem.v),
        ("c".to_string(), problem.c),
    ];
    if let Some(p) = problem.privacy {
        out.push(("laplace_scale".to_string(), p.laplace_scale));
    }
    out.extend(policy.constants().into_iter().map(|(k, v)| (k.to_string(), v)));
    Ok(out)
}

/// The environment variable naming the learner's key file ([`ldp_link::keys::KEYS_VAR`]).
pub use ldp_link::keys::{KEYS_VAR, keys_origin};

/// The keys of [`KEYS_VAR`] ([`ldp_link::keys::learner_keys`]).
pub fn learner_keys() -> Result<ldp_link::keys::Keys, RunError> {
    ldp_link::keys::learner_keys().map_err(|e| RunError::Device(DeviceError::Link(LinkError::Io(e))))
}

/// The one device of [`KEYS_VAR`]'s key file (a board on a serial port or TCP).
pub fn single_device_auth() -> Result<ldp_core::wire::Auth, RunError> {
    ldp_link::keys::single_device_auth().map_err(|e| RunError::Device(DeviceError::Link(LinkError::Io(e))))
}

/// A wire device after the handshake, with its public configuration checked against what the
/// learner assumes (B and R of the environment) and, for a device this run provisioned, against
/// the whole configuration it was provisioned with (B, R, per-report limit, total ε).
fn checked_wire_device<L: Link>(
    env: &dyn Environment,
    link: L,
    auth: ldp_core::wire::Auth,
    epsilon: Epsilon,
    provisioned: Option<&DeviceConfig>,
    key_file: Option<std::path::PathBuf>,
) -> Result<WireDevice<L>, RunError> {
    // The highest boot number seen from the device, beside its key: across runs.
    let mut client = keyed_client(link, auth, key_file.as_deref());
    let hello = client.hello().map_err(|e| RunError::Device(DeviceError::Link(e)))?;
    check_bounds(env, &hello)?;
    if let Some(&provisioned) = provisioned
        && hello.config != provisioned
    {
        return Err(ConfigError::DeviceNotProvisioned { device: hello.config, provisioned }.into());
    }
    Ok(WireDevice::new(client, epsilon))
}

/// A device's public B and R must be the environment's (what the learner assumes).
fn check_bounds(env: &dyn Environment, hello: &Hello) -> Result<(), RunError> {
    let bounds = env.bounds();
    let (b, r) = (hello.config.b.get(), hello.config.r.get());
    // The wire carries f64 bits, so equal settings arrive equal; 1e-12 relative absorbs only a
    // device built from a decimal that rounds another way.
    let same = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(y.abs());
    if !same(b, bounds.b) || !bounds.r.is_some_and(|expected| same(r, expected)) {
        return Err(ConfigError::DeviceBounds { device_b: b, device_r: r, b: bounds.b, r: bounds.r }.into());
    }
    Ok(())
}

/// A wire device as the learner's device: fed with `env`'s rewards (hardware in the loop) when
/// `config` says so, else reading its own sensor. `keep` lives as long as the device (the
/// emulator behind it).
fn feed_if<'a, L: Link + 'a, K: 'a>(
    config: &RunConfig,
    device: WireDevice<L>,
    env: &'a dyn Environment,
    world_seed: u64,
    keep: K,
) -> Box<dyn Device + 'a> {
    if config.feed {
        Box::new(Keeping(FedWireDevice::new(device, env, world_seed), keep))
    } else {
        Box::new(Keeping(device, keep))
    }
}

/// A device and what must live as long as it (an emulator).
struct Keeping<D, K>(D, K);

impl<D: Device, K> Device for Keeping<D, K> {
    fn query(&mut self, arm: usize, level: Option<f64>) -> Result<f64, DeviceError> {
        self.0.query(arm, level)
    }

    fn ledger(&self) -> Option<Vec<MemberRecord>> {
        self.0.ledger()
    }

    fn submit(&mut self, arm: usize, level: Option<f64>) -> Result<Submitted, DeviceError> {
        self.0.submit(arm, level)
    }

    fn collect(&mut self, ticket: u64) -> Result<f64, DeviceError> {
        self.0.collect(ticket)
    }

    fn drain(&mut self) {
        self.0.drain()
    }
}

/// The firmware under QEMU for one trial: a new device in its own working directory, provisioned
/// and seeded from OS entropy (never from the trial seed: the learner must not know the noise,
/// so QEMU runs are not reproducible; the in-process device is). In a hardware-in-the-loop run
/// the new device is provisioned with the experiment's B and R, a per-report limit of ε and a
/// lifetime budget of T·ε (what the in-process device gets); the device experiment's keeps the
/// firmware's own configuration.
struct QemuWire {
    device: WireDevice<TcpLink>,
    qemu: Emulator,
}

/// One job's emulator: stopped, and its working directory (the device's files) removed, when
/// the job is done.
struct Emulator(QemuDevice);

impl Drop for Emulator {
    fn drop(&mut self) {
        self.0.kill();
        let _ = std::fs::remove_dir_all(self.0.workdir());
    }
}

impl QemuWire {
    fn start(
        env: &dyn Environment,
        elf: &Path,
        epsilon: Epsilon,
        config: &RunConfig,
        trial_seed: u64,
        algo: u64,
    ) -> Result<Self, RunError> {
        let link_err = |e: std::io::Error| RunError::Device(DeviceError::Link(LinkError::Io(e)));
        if !elf.exists() {
            return Err(ConfigError::NoFirmware(elf.to_path_buf()).into());
        }
        // One directory per device: a sweep's points share trial seeds and learner indices, and
        // their jobs may run at once.
        static DEVICES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = DEVICES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir()
            .join(format!("ldp-qemu-{}-{trial_seed:016x}-{algo}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let provision = if config.feed {
            let total = epsilon.get() * config.horizon.max(1) as f64;
            Some(device_config(env, epsilon, total).map_err(RunError::Device)?)
        } else {
            None
        };
        let mut qemu = Emulator(match &provision {
            Some(provision) => QemuDevice::start_provisioned(elf, &dir, provision).map_err(link_err)?,
            None => QemuDevice::start(elf, &dir).map_err(link_err)?,
        });
        let link = qemu.0.connect().map_err(link_err)?;
        let auth = qemu.0.auth().map_err(link_err)?;
        let key_file = qemu.0.workdir().join(ldp_link::keys::BOARD_KEY_FILE);
        let device = checked_wire_device(env, link, auth, epsilon, provision.as_ref(), Some(key_file))?;
        Ok(Self { device, qemu })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::device::{DeviceApp, SensorModel, SimulatedSensor};
    use ldp_core::{Bound, MemoryStore};
    use ldp_learn::env::SensorEnv;
    use ldp_link::transport::LoopbackLink;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    /// An in-process device (B = R = 1) provisioned with `total`.
    fn device(env: &SensorEnv, total: f64) -> LoopbackLink<MemoryStore, SimulatedSensor<ChaCha20Rng>> {
        let config = device_config(env, Epsilon::new(1.0).unwrap(), total).unwrap();
        let reporter = ldp_core::Reporter::open(config, MemoryStore::provisioned([3; 32]), [4; 32]).unwrap();
        let model = SensorModel::new(10, Bound::new(1.0).unwrap()).unwrap();
        let source = SimulatedSensor::new(model, ChaCha20Rng::seed_from_u64(5));
        LoopbackLink::new(DeviceApp::new(reporter, source, 7))
    }

    /// A record of queries in flight that cannot be read when a job ends (here a count past
    /// what a u64 holds, carried plus one query its failed attempt sent and never settled)
    /// costs the job's label, never its ledger: what the devices spent is written, without the
    /// label, and the record's error is said after the job's own; the record is kept.
    #[test]
    fn a_record_that_cannot_be_read_still_leaves_the_jobs_ledger() {
        let dir = std::env::temp_dir().join(format!("ldp-keep-job-{}", std::process::id()));
        let record = output::queries_path(&dir, 0, 0);
        let ledger = || Some(vec![MemberRecord { id: 1, spent: 2.0, reports: 2, ..Default::default() }]);
        let failed = || Err(RunError::NoSuchJob { trial: 9, learner: 9 });
        for curve in [Ok(vec![1.0]), failed()] {
            let finished = curve.is_ok();
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                &record,
                "ldp-queries-in-flight 1\ncarried 1 18446744073709551615 1\nsent 1 1 1\n",
            )
            .unwrap();
            let got = keep_job((0, 0), Some(&dir), Some((&dir, false)), ledger(), curve);
            let ledger = std::fs::read_to_string(dir.join("trial0-learner0.csv"));
            assert!(
                ledger.as_ref().is_ok_and(|l| l.lines().nth(1) == Some("1,2,2,0,0,0,0,0,0,0,0,0,0,0")),
                "{ledger:?}"
            );
            let aside = record.with_extension("queries.damaged");
            if finished {
                // Not run again (its devices would spend again): its curve, the record set aside.
                assert_eq!(got.ok(), Some(vec![1.0]));
                assert!(!record.exists() && aside.is_file(), "the damaged record is set aside");
                continue;
            }
            let Err(e) = got else { panic!("an unreadable record passed over in silence") };
            let message = e.to_string();
            assert!(
                message.contains(&record.display().to_string()) && message.contains("too many queries"),
                "{message}"
            );
            assert!(message.contains("trial 9"), "the job's own error first: {message}");
            assert!(record.is_file() && !aside.exists(), "a failed job's damaged record is kept");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A failed job whose record cannot be removed returns its own error, not the removal's.
    #[test]
    fn a_failed_jobs_error_is_not_replaced_by_its_records() {
        let dir = std::env::temp_dir().join(format!("ldp-keep-own-error-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(output::queries_path(&dir, 0, 0)).unwrap(); // cannot be removed as a file
        let row = MemberRecord { id: 1, spent: 2.0, reports: 2, ..Default::default() };
        let failed = Err(RunError::NoSuchJob { trial: 9, learner: 9 });
        let got = keep_job((0, 0), Some(&dir), Some((&dir, true)), Some(vec![row]), failed);
        let message = got.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("trial 9") && !message.contains(".queries"), "{message}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A record a write to which failed (here the `done` line of device 1's query) labels the
    /// job's ledger with what it carried from earlier attempts alone, finished or failed, and
    /// is removed: the attempt that runs the job again carries that from the ledger, and does
    /// not count the answered query as unanswered.
    #[test]
    fn a_record_whose_writing_failed_labels_only_what_it_carried() {
        let dir = std::env::temp_dir().join(format!("ldp-keep-failed-{}", std::process::id()));
        let record = output::queries_path(&dir, 0, 0);
        let row = |id| MemberRecord { id, spent: 2.0, reports: 2, ..Default::default() };
        for curve in [Ok(vec![1.0]), Err(RunError::NoSuchJob { trial: 9, learner: 9 })] {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&record, "ldp-queries-in-flight 1\ncarried 3 1 0.5\nsent 1 1 1\n").unwrap();
            let finished = curve.is_ok();
            let got = keep_job((0, 0), Some(&dir), Some((&dir, true)), Some(vec![row(1), row(3)]), curve);
            assert_eq!(got.is_ok(), finished, "{:?}", got.err().map(|e| e.to_string()));
            let ledger = std::fs::read_to_string(dir.join("trial0-learner0.csv")).unwrap();
            let labels: Vec<&str> =
                ledger.lines().skip(1).map(|l| l.rsplitn(3, ',').collect::<Vec<_>>()[1]).collect();
            assert_eq!(labels, ["0", "1"], "device 1's answered query labelled: {ledger}");
            assert!(!record.exists(), "the record whose writing failed is removed");
            drop(output::begin_query_record(&dir, 0, 0).unwrap());
            let again = std::fs::read_to_string(&record).unwrap();
            assert_eq!(again, "ldp-queries-in-flight 1\ncarried 3 1 0.5\n", "carried from the ledger");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A device this run provisioned must report the whole configuration it was given: one with
    /// the right B and R but another total (a device left from elsewhere) is refused, typed.
    #[test]
    fn a_provisioned_device_must_report_its_whole_configuration() {
        let env = SensorEnv::new(10, 1.0).unwrap();
        let eps = Epsilon::new(1.0).unwrap();
        let provisioned = device_config(&env, eps, 40.0).unwrap();
        let auth = device(&env, 40.0).auth();
        assert!(checked_wire_device(&env, device(&env, 40.0), auth, eps, Some(&provisioned), None).is_ok());
        assert!(checked_wire_device(&env, device(&env, 1e6), auth, eps, None, None).is_ok(), "B and R alone");
        let Err(err) = checked_wire_device(&env, device(&env, 1e6), auth, eps, Some(&provisioned), None)
        else {
            panic!("a device with another total was accepted");
        };
        let RunError::Config(ConfigError::DeviceNotProvisioned { device, provisioned: p }) = &err else {
            panic!("{err}");
        };
        assert_eq!((device.policy.total().get(), *p), (1e6, provisioned));
        assert!(err.to_string().contains("total 1000000 but was provisioned with"), "{err}");
    }
}
