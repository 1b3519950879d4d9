//! How a run is set up and why it stops: the settings ([`RunConfig`], [`DeviceKind`]), the run's
//! identity ([`run_id`]), the seeds ([`derive_seed`], the learners' seed rule) and the one error
//! type of a run ([`RunError`]). Every layer above (the bandit loop, the executor, the families)
//! imports these; this module imports none of them, only the two below it: the checkpoint's
//! error and the files' ([`crate::run::files`]).

use std::path::{Path, PathBuf};

use ldp_core::{DeviceConfig, Epsilon};
use serde::Serialize;

use crate::run::checkpoint::CheckpointError;
pub use crate::run::files::OutputError;
use ldp_learn::env::EnvError;
use ldp_learn::policy::Constants;
use ldp_learn::policy::{AlgorithmSpec, PolicyError};
use ldp_learn::rules::Public;
pub use ldp_learn::rules::derive_seed;
use ldp_link::device::DeviceError;
use ldp_link::fleet::Routing;
#[cfg(feature = "network")]
use ldp_link::mqtt::MqttError;

/// Which device answers the learner's queries in a private run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum DeviceKind {
    /// `ldp-core`'s reporter in this process (the default).
    InProcess,
    /// The firmware image under QEMU (one emulator per trial and algorithm, fresh budget).
    Qemu {
        /// The firmware ELF.
        elf: PathBuf,
    },
    /// A real board on a serial port (runs sequentially; the board's budget is shared).
    Serial {
        /// The port, e.g. `/dev/ttyACM0`.
        path: String,
    },
    /// A device already listening on TCP, e.g. `cargo run` in `firmware-example/` (QEMU's
    /// USART1 on 127.0.0.1:4555). Runs sequentially; the device's budget is shared.
    Tcp {
        /// `host:port`.
        addr: String,
    },
    /// A fleet of simulated users in this process, each the device application with its own
    /// budget, one round's query routed to one of them (`ldp_link::fleet`).
    Fleet {
        /// Members.
        devices: usize,
    },
    /// A fleet of devices on an MQTT broker (`host-sim fleet devices`, bridged boards): every
    /// device whose retained hello is on the broker (`ldp_link::mqtt`). Runs sequentially; the
    /// devices' budgets are shared by every job of the run.
    Mqtt {
        /// `mqtt://HOST:PORT` (or `mqtts://` with the `mqtt-tls` feature); credentials come
        /// from `LDP_MQTT_USERNAME` / `LDP_MQTT_PASSWORD`, never from here (this is recorded).
        url: String,
    },
}

/// A fleet run's settings (`--device fleet:N` or `--device mqtt://…`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FleetSpec {
    /// How rounds are routed.
    pub routing: Routing,
    /// Each in-process member's lifetime budget (ε); `None`: ε·⌈T/N⌉, just enough for an even
    /// share of the rounds. An MQTT fleet's devices set their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_budget: Option<f64>,
    /// Where each job writes what every member spent (`fleet/trial<t>-learner<l>.csv` in the
    /// output directory); not part of the run's identity.
    #[serde(skip)]
    pub ledger_dir: Option<PathBuf>,
}

/// Where `cargo build --release` in `firmware-example/` puts the firmware (under
/// `$CARGO_TARGET_DIR` when that is set).
pub fn default_firmware_elf() -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../firmware-example/target"),
    };
    target.join("thumbv7em-none-eabihf/release/ldp-firmware-example")
}

impl DeviceKind {
    /// Parses `in-process`, `qemu`, `qemu:ELF`, `serial:PATH`, `tcp:HOST:PORT`, `fleet:N` or
    /// `mqtt://HOST:PORT`.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        if let Some(rest) = text.strip_prefix("mqtt://").or_else(|| text.strip_prefix("mqtts://")) {
            return match rest.split_once('@') {
                Some(_) => Err(ConfigError::CredentialsInUrl),
                None => Ok(Self::Mqtt { url: text.to_string() }),
            };
        }
        match text.split_once(':') {
            Some(("fleet", n)) => match n.parse::<usize>() {
                Ok(devices) if devices >= 1 => Ok(Self::Fleet { devices }),
                _ => Err(ConfigError::FleetSize(n.to_string())),
            },
            None if text == "in-process" => Ok(Self::InProcess),
            None if text == "qemu" => Ok(Self::Qemu { elf: default_firmware_elf() }),
            Some(("qemu", elf)) => Ok(Self::Qemu { elf: PathBuf::from(elf) }),
            Some(("serial", path)) if !path.is_empty() => Ok(Self::Serial { path: path.to_string() }),
            Some(("tcp", addr)) if addr.contains(':') => Ok(Self::Tcp { addr: addr.to_string() }),
            _ => Err(ConfigError::UnknownDevice(text.to_string())),
        }
    }
}

/// How a run is set up (everything the JSON record needs to reproduce it).
#[derive(Clone, Debug, Serialize)]
pub struct RunConfig {
    /// Number of independent trials.
    pub trials: usize,
    /// Horizon T.
    pub horizon: usize,
    /// Master seed.
    pub seed: u64,
    /// Worker threads (`None`: rayon's default).
    pub threads: Option<usize>,
    /// ε per report (local model) or of the learner's outputs (central model); `None` for a
    /// non-private run. Validated once, where the run is set up.
    #[serde(serialize_with = "ser_epsilon")]
    pub epsilon: Option<Epsilon>,
    /// Central DP: the device passes raw rewards and the learner privatises what it computes
    /// (Tao et al. Alg. 1, 3; Agarwal & Singh). Local DP (the default): the device privatises.
    pub central: bool,
    /// λ of the GP surrogate with practical or paper constants (calibrated constants set λ to
    /// the observed noise variance instead, see [`calibrated`](ldp_learn::bo::calibrated)).
    pub lambda: f64,
    /// δ of the β formulas.
    pub delta: f64,
    /// Multiplies every β_t (1 = the constants as given); see [`Problem::beta_scale`](ldp_learn::policy::Problem::beta_scale).
    pub beta_scale: f64,
    /// Calibrated (the default), practical or paper constants.
    #[serde(serialize_with = "ser_constants")]
    pub constants: Constants,
    /// q, the actions each learner asks at once before it is told their reports
    /// ([`Optimizer::ask_batch`](ldp_learn::optimizer::Optimizer::ask_batch)); 1 (the default,
    /// not recorded) asks one at a time.
    #[serde(skip_serializing_if = "is_one")]
    pub batch: usize,
    /// N, the queries kept outstanding (`--in-flight`): the learner asks whenever fewer than N
    /// are, and is told each report as it arrives, oldest first; 1 (the default, not
    /// recorded) asks one at a time.
    #[serde(skip_serializing_if = "is_one")]
    pub in_flight: usize,
    /// The algorithms to compare.
    pub algorithms: Vec<AlgorithmSpec>,
    /// The device for private runs.
    pub device: DeviceKind,
    /// Run only the learners with these names (`--algorithms`; empty: all). Each keeps the
    /// seeds it has in the full run, so its curves are the full run's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub select: Vec<String>,
    /// A fleet's routing and user budget (with `device` a fleet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetSpec>,
    /// The user's own problem (`custom`): its files and choices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<ldp_learn::env::custom::ProblemFiles>,
    /// Hardware in the loop: a device on the wire (QEMU, serial, TCP) gets each raw reward from
    /// the experiment's environment with the query ([`ldp_link::device::FedWireDevice`]) instead of
    /// reading its own sensor. Set for every wire run but the device experiment's.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub feed: bool,
    /// The prior over a data table's arms, for experiments whose prior is otherwise the
    /// table's own empirical covariance (Zhou & Tan's real-data figures, `custom` without
    /// coordinates); `None` elsewhere: the environment's prior is used as it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prior: Option<ldp_learn::env::Prior>,
    /// Where each job of a run on one device on the wire (QEMU, serial, TCP) writes what the
    /// device spent and the replies the learner dropped (`device-ledgers/` in the output
    /// directory, as a fleet's `fleet/`); not part of the run's identity.
    #[serde(skip)]
    pub device_ledger_dir: Option<PathBuf>,
}

impl Default for RunConfig {
    /// Seed 000's settings: 10 trials of T = 1000, seed 0, non-private, the calibrated
    /// constants (λ = 1 and δ = 0.1 for the modes that use them), GP-UCB, Zhou & Tan's three
    /// learners and UCB1, the in-process device, all cores.
    fn default() -> Self {
        RunConfig {
            trials: 10,
            horizon: 1000,
            seed: 0,
            threads: None,
            epsilon: None,
            central: false,
            lambda: 1.0,
            delta: 0.1,
            beta_scale: 1.0,
            constants: Constants::Calibrated,
            batch: 1,
            in_flight: 1,
            algorithms: ldp_learn::bo::GP_EXPERIMENT_ALGORITHMS.to_vec(),
            device: DeviceKind::InProcess,
            select: Vec::new(),
            fleet: None,
            problem: None,
            feed: false,
            prior: None,
            device_ledger_dir: None,
        }
    }
}

impl RunConfig {
    /// ε of the device's reports: `epsilon` in the local model, `None` in the central model
    /// (the device passes raw rewards) or a non-private run.
    pub fn local_epsilon(&self) -> Option<Epsilon> {
        if self.central { None } else { self.epsilon }
    }

    /// What the learners may know of these settings, for their constants
    /// ([`ldp_learn::rules::problem`]).
    pub fn public(&self) -> Public {
        let overrides = self.problem.as_ref().map(|p| p.overrides).unwrap_or_default();
        Public {
            horizon: self.horizon,
            report_epsilon: self.local_epsilon(),
            central_epsilon: if self.central { self.epsilon.map(Epsilon::get) } else { None },
            lambda: self.lambda,
            delta: self.delta,
            beta_scale: self.beta_scale,
            constants: self.constants,
            v: overrides.v,
            c: overrides.c,
        }
    }
}

fn is_one(q: &usize) -> bool {
    *q == 1
}

fn ser_constants<S: serde::Serializer>(c: &Constants, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(c.name())
}

/// ε as the number it is (`null` for none), as `run.json` has always recorded it.
fn ser_epsilon<S: serde::Serializer>(e: &Option<Epsilon>, s: S) -> Result<S::Ok, S::Error> {
    match e {
        Some(e) => s.serialize_some(&e.get()),
        None => s.serialize_none(),
    }
}

/// Why a run stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum RunError {
    /// The environment could not be built.
    Environment(EnvError),
    /// The device refused or could not be configured.
    Device(DeviceError),
    /// A fleet over MQTT could not be reached or assembled.
    #[cfg(feature = "network")]
    Mqtt(MqttError),
    /// A policy failed.
    Policy(PolicyError),
    /// A setting the run cannot use.
    Config(ConfigError),
    /// A learner of a family (the experts, Dubey's variants) failed.
    Learner {
        /// The learner's label.
        label: String,
        /// What failed.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A job the task does not have, or a finished job missing from the results (a bug).
    NoSuchJob {
        /// The trial.
        trial: usize,
        /// The learner's index.
        learner: usize,
    },
    /// A shard's run has no results of its own: `host-sim merge` makes them.
    ShardOnly {
        /// Jobs of this shard.
        jobs: usize,
        /// Jobs of the whole run.
        total: usize,
    },
    /// The checkpoint of a resumable run could not be read or written.
    Checkpoint(CheckpointError),
    /// A result file could not be written.
    Output(OutputError),
    /// A job failed after its devices spent, and its ledger (what they spent) could not be
    /// written either.
    LedgerNotWritten {
        /// Why the job failed.
        job: Box<RunError>,
        /// Why its ledger was not written.
        ledger: OutputError,
    },
    /// A job's ledger was written, but its record of queries in flight could not be read, so
    /// the ledger does not label what earlier attempts left unanswered.
    Unlabelled {
        /// Why the job failed.
        job: Box<RunError>,
        /// Why the record could not be read.
        record: OutputError,
    },
    /// `merge` found jobs that no shard finished.
    Incomplete {
        /// Jobs missing.
        missing: usize,
        /// Jobs of the whole run.
        total: usize,
        /// The first missing (trial, learner label).
        first: (usize, String),
    },
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Environment(e) => write!(f, "{e}"),
            Self::Device(e) => write!(f, "{e}"),
            #[cfg(feature = "network")]
            Self::Mqtt(e) => write!(f, "{e}"),
            Self::Policy(e) => write!(f, "learner: {e}"),
            Self::Config(e) => write!(f, "{e}"),
            Self::Learner { label, source } => write!(f, "{label}: {source}"),
            Self::NoSuchJob { trial, learner } => {
                write!(f, "no job for trial {trial} of learner {learner} (a bug: please report it)")
            }
            Self::ShardOnly { jobs, total } => write!(
                f,
                "this shard ran {jobs} of the run's {total} jobs and has no results of its own: merge the shards"
            ),
            Self::Checkpoint(e) => write!(f, "{e}"),
            Self::Output(e) => write!(f, "{e}"),
            Self::LedgerNotWritten { job, ledger } => write!(
                f,
                "{job}; the failed job's ledger (what its devices spent on it) could not be written either, so it is recorded nowhere: {ledger}"
            ),
            Self::Unlabelled { job, record } => write!(
                f,
                "{job}; the job's ledger (what its devices spent) is written, but does not label the queries its killed attempts left unanswered: {record}"
            ),
            Self::Incomplete { missing, total, first: (trial, label) } => write!(
                f,
                "{missing} of {total} jobs are in none of the shard directories (the first: trial {trial} of {label}): \
                 run the missing shards again (a shard resumes where it stopped), then merge"
            ),
        }
    }
}

impl std::error::Error for RunError {}

impl From<CheckpointError> for RunError {
    fn from(e: CheckpointError) -> Self {
        Self::Checkpoint(e)
    }
}

/// A setting the run cannot use, in the user's words.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ConfigError {
    /// Trials or horizon was zero.
    NothingToRun,
    /// The worker threads could not be started.
    Threads {
        /// The threads asked for.
        threads: Option<usize>,
        /// What the system said.
        message: String,
    },
    /// A non-private run was given a device.
    DeviceWithoutPrivacy,
    /// The family keeps its devices in process (`family` names its experiments, plural).
    DeviceInProcessOnly {
        /// The family.
        family: &'static str,
    },
    /// A wire device's public B and R are not the experiment's.
    DeviceBounds {
        /// B the device reports.
        device_b: f64,
        /// R the device reports.
        device_r: f64,
        /// B the experiment assumes.
        b: f64,
        /// R the experiment assumes.
        r: Option<f64>,
    },
    /// A device this run provisioned (QEMU, hardware in the loop) answered with another
    /// configuration than the one it was given.
    DeviceNotProvisioned {
        /// The configuration the device's hello reports.
        device: DeviceConfig,
        /// The configuration the run provisioned it with.
        provisioned: DeviceConfig,
    },
    /// No firmware image where one was expected.
    NoFirmware(PathBuf),
    /// A sweep's ε must be finite and > 0.
    SweepEpsilon,
    /// δ (ζ of Dubey) must be in (0, 1).
    DeltaOutOfRange(f64),
    /// `--shard` is not `i/n` with `0 ≤ i < n`.
    Shard(String),
    /// `--device` names no device kind.
    UnknownDevice(String),
    /// `fleet:N` with N not a whole number ≥ 1.
    FleetSize(String),
    /// A device this build has no code for (a board on a serial port, a fleet over MQTT):
    /// host-sim was built without its `network` feature, as the Python package builds it.
    DeviceNotBuilt(&'static str),
    /// A broker URL with a user or password in it.
    CredentialsInUrl,
    /// The experiment's jobs do not all query a device that privatises, so a fleet cannot
    /// answer them.
    FleetUnsupported(&'static str),
    /// A device on the wire (QEMU, serial, TCP) was asked for an experiment whose jobs do not
    /// all query a locally private device.
    WireUnsupported(&'static str),
    /// A fleet over MQTT serves one environment: a run whose trials each draw their own
    /// cannot use it with more than one trial.
    FleetTrials,
    /// The experts experiment needs a horizon of at least 1.
    ExpertsHorizon,
    /// `--algorithms` named learners the experiment does not have.
    UnknownAlgorithms {
        /// The names not found.
        unknown: Vec<String>,
        /// The experiment's learners.
        valid: Vec<String>,
    },
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NothingToRun => f.write_str("--trials and --horizon must be at least 1"),
            Self::Threads { threads, message } => write!(
                f,
                "cannot start {} worker threads: {message} (try a smaller --threads)",
                threads.map_or("the default number of".to_string(), |t| t.to_string())
            ),
            Self::DeviceWithoutPrivacy => f.write_str("a non-private run has no device: drop --device"),
            Self::DeviceInProcessOnly { family } => {
                write!(f, "{family} keep their devices in this process: drop --device")
            }
            Self::DeviceBounds { device_b, device_r, b, r } => write!(
                f,
                "the device reports B = {device_b}, R = {device_r} but the experiment assumes B = {b}, R = {}: run the device experiment",
                r.map_or("unbounded".to_string(), |r| r.to_string())
            ),
            Self::DeviceNotProvisioned { device, provisioned } => {
                let show = |c: &DeviceConfig| {
                    format!(
                        "B = {}, R = {}, per-report limit {}, total {}",
                        c.b.get(),
                        c.r.get(),
                        c.policy.per_report_limit().get(),
                        c.policy.total().get()
                    )
                };
                write!(
                    f,
                    "the emulated device reports {} but was provisioned with {}: its state directory held another device; delete it and run again",
                    show(device),
                    show(provisioned)
                )
            }
            Self::NoFirmware(path) => write!(
                f,
                "no firmware at {}: build it with (cd firmware-example && cargo build --release)",
                path.display()
            ),
            Self::SweepEpsilon => f.write_str("this sweep needs a finite --eps > 0"),
            Self::DeltaOutOfRange(d) => write!(f, "delta (zeta) must be in (0, 1), got {d}"),
            Self::Shard(text) => write!(
                f,
                "--shard '{text}': give i/n with 0 <= i < n, e.g. 0/3, 1/3 and 2/3 for three shards"
            ),
            Self::UnknownDevice(text) => write!(
                f,
                "unknown --device '{text}': use in-process, qemu, qemu:ELF, serial:PATH, tcp:HOST:PORT, fleet:N or mqtt://HOST:PORT"
            ),
            Self::DeviceNotBuilt(what) => write!(
                f,
                "this build has no {what}: it was built without host-sim's `network` feature (as the Python package is); run it with the host-sim command"
            ),
            Self::FleetSize(n) => {
                write!(
                    f,
                    "--device fleet:{n}: give the number of devices, a whole number >= 1, e.g. fleet:100"
                )
            }
            Self::WireUnsupported(name) => write!(
                f,
                "{name} does not query a locally private device in every job (it is central or non-private, or runs its own devices), so a device on the wire cannot answer it: drop --device, or pick a local-DP experiment (seed 000's private figures, custom, device, tao-ldp)"
            ),
            Self::FleetUnsupported(name) => write!(
                f,
                "{name} does not query a locally private device in every job (it is central or non-private, or runs its own devices), so a fleet cannot answer it: drop --device, or pick a local-DP experiment (seed 000's private figures, custom, device, tao-ldp)"
            ),
            Self::CredentialsInUrl => f.write_str(
                "--device: put the broker's user and password in LDP_MQTT_USERNAME and LDP_MQTT_PASSWORD, not in the URL (the URL is recorded in run.json)",
            ),
            Self::FleetTrials => f.write_str(
                "the devices of an MQTT fleet serve one environment, but this experiment draws a new one for every trial: run it with --trials 1 (and start the devices with the run's --seed)",
            ),
            Self::ExpertsHorizon => f.write_str("the experts experiment needs a --horizon of at least 1"),
            Self::UnknownAlgorithms { unknown, valid } => {
                write!(
                    f,
                    "--algorithms: no learner named {} in this experiment",
                    unknown.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", "),
                )?;
                let guesses: Vec<String> = unknown
                    .iter()
                    .filter_map(|n| closest(n, valid.iter().map(String::as_str)).map(|c| format!("'{c}'")))
                    .collect();
                if !guesses.is_empty() {
                    write!(f, " (did you mean {}?)", guesses.join(", "))?;
                }
                write!(f, "; its learners are: {} (any case)", valid.join(", "))
            }
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<DeviceError> for RunError {
    fn from(e: DeviceError) -> Self {
        Self::Device(e)
    }
}

impl From<OutputError> for RunError {
    fn from(e: OutputError) -> Self {
        Self::Output(e)
    }
}

impl From<ConfigError> for RunError {
    fn from(e: ConfigError) -> Self {
        Self::Config(e)
    }
}

/// An identity for a run's results: FNV-1a over the experiment, its description and every
/// setting that changes a job's result — not the thread count, and not the number of trials:
/// trial i's seeds depend on the master seed and i alone, so a run asked for more trials reuses
/// the finished ones and equals a run made with that many from the start.
pub fn run_id(experiment: &str, description: &str, config: &RunConfig) -> String {
    let mut c = config.clone();
    c.threads = None;
    c.trials = 0;
    let text = format!("{experiment}\n{description}\n{}", serde_json::to_string(&c).unwrap_or_default());
    ldp_learn::env::table::fnv1a(text.as_bytes())
}

/// The candidate nearest to `name` (any case) if it is near enough to be a typo of it: at most
/// two edits, or a third of the name's length, transpositions counting one.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name = name.to_lowercase();
    let limit = (name.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&name, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod closest_tests {
    #[test]
    fn closest_names_a_typo_and_nothing_else() {
        let names = ["fig2a", "fig2b", "custom", "tao-s1"];
        assert_eq!(super::closest("fgi2a", names), Some("fig2a"));
        assert_eq!(super::closest("FIG2B", names), Some("fig2b"));
        assert_eq!(super::closest("costum", names), Some("custom"));
        assert_eq!(super::closest("blah", names), None);
        assert_eq!(super::closest("tao", names), None);
    }
}
