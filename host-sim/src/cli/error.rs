//! Why a `host-sim` command failed: the command line's own refusals ([`Usage`]), the library's
//! typed errors, and files that could not be read or written. `main` prints one line,
//! `error: <this>`, and exits non-zero.

use std::io;
use std::path::PathBuf;

use host_sim::experiments::runner::{ConfigError, RunError};
use host_sim::fleet_bench::BenchError;
use host_sim::live::LiveError;
use host_sim::privatise::PrivatiseError;
use host_sim::run::output::OutputError;
use ldp_learn::env::table::TableError;
use ldp_link::bridge::BridgeError;
use ldp_link::mqtt::MqttError;
use ldp_link::transport::FirmwareError;

/// A command failed.
#[derive(Debug)]
pub enum CliError {
    /// The command line asks for something that cannot be done.
    Usage(Usage),
    /// A run setting the library refused.
    Config(ConfigError),
    /// A run stopped.
    Run(RunError),
    /// A data or coordinates file cannot be used.
    Table(TableError),
    /// A result file could not be written.
    Output(OutputError),
    /// A live run stopped.
    Live(LiveError),
    /// The broker or an MQTT fleet failed.
    Mqtt(MqttError),
    /// A bridge failed.
    Bridge(BridgeError),
    /// The fleet benchmark failed.
    Bench(BenchError),
    /// `privatise` failed.
    Privatise(PrivatiseError),
    /// The firmware could not be built.
    Firmware(FirmwareError),
    /// A file could not be read, written, created or copied.
    File {
        /// What was being done.
        op: FileOp,
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// A settings file is not TOML of run settings.
    Settings {
        /// The file.
        path: PathBuf,
        /// What the parser said (line, column, key).
        source: Box<toml::de::Error>,
    },
    /// A shard's settings could not be recorded.
    RecordSettings(toml::ser::Error),
    /// A JSON record could not be made.
    Json(serde_json::Error),
    /// A device could not be reached.
    Connect {
        /// The port or address.
        target: String,
        /// What the system said.
        source: io::Error,
    },
    /// The emulator could not be started or reached, or no OS entropy.
    System(io::Error),
}

/// What was being done to a file.
#[derive(Debug)]
pub enum FileOp {
    /// Reading a settings file.
    ReadConfig,
    /// Reading a shard's recorded settings.
    ReadShard,
    /// Writing (a result, the shard's settings, a marker).
    Write,
    /// Copying a plot to this destination.
    CopyTo(PathBuf),
    /// Locking a device's directory.
    Lock,
}

/// Whether a number must be > 0 or ≥ 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sign {
    /// Finite and > 0.
    Positive,
    /// Finite and ≥ 0.
    NonNegative,
}

/// What the command line asks for that cannot be done, in its own words.
#[derive(Debug, PartialEq)]
pub enum Usage {
    /// `run` without an experiment.
    NoExperiment,
    /// No experiment of this name.
    UnknownExperiment(String),
    /// An `--eps` value that is not an ε.
    NotAnEpsilon(String),
    /// A list of ε with `--shard` or `merge`.
    SweepSharded,
    /// A setting of `custom` given to another experiment.
    NotCustom {
        /// The flag.
        flag: &'static str,
        /// The experiment.
        experiment: &'static str,
    },
    /// `custom` without `--arms`.
    NoArms,
    /// `--kernel`/`--lengthscale` without `--coords`.
    KernelWithoutCoords,
    /// `--prior` for an experiment whose prior is not a data table's covariance.
    PriorNotTable(&'static str),
    /// `--prior` with `--coords` (the coordinates' kernel is the prior).
    PriorWithCoords,
    /// `privatise` with --columns or --out but no --input.
    PrivatiseWithoutInput,
    /// `privatise --input` without --bound.
    PrivatiseNeedsBound,
    /// `privatise --input` with --seed.
    PrivatiseSeeded,
    /// A `--delimiter` that is not one character.
    Delimiter(String),
    /// A `--long` that does not name two or three columns (the reason).
    Long(String),
    /// A number out of its range.
    Number {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: f64,
        /// What it must be.
        sign: Sign,
    },
    /// `--eps` for a non-private experiment.
    EpsNonPrivate(&'static str),
    /// `--eps none` for a private experiment other than `custom`.
    EpsNone(&'static str),
    /// `--family bandit` with too many arms.
    TooManyArms {
        /// The arms file.
        file: PathBuf,
        /// Its arms.
        arms: usize,
        /// The most the bandit learners take.
        max: usize,
    },
    /// `--shard` with an MQTT fleet.
    ShardOverMqtt,
    /// `--user-budget` with an MQTT fleet.
    UserBudgetOverMqtt,
    /// `--routing`/`--user-budget` without a fleet.
    FleetOnly,
    /// No noise of this name.
    UnknownNoise(String),
    /// `--noise` for a non-synthetic experiment.
    NoiseNotSynthetic(&'static str),
    /// `--batch 0` or `--in-flight 0`.
    BatchZero,
    /// `--batch` and `--in-flight` both above 1.
    BatchAndInFlight,
    /// `--batch` above 1 for an experiment with its own task.
    BatchOwnTask(&'static str),
    /// A private run with unbounded noise.
    UnboundedPrivate,
    /// Shards of different runs.
    ShardsDiffer {
        /// The first shard.
        first: PathBuf,
        /// The one that differs.
        other: PathBuf,
    },
    /// `merge` without directories.
    NoShards,
    /// `--report-copy` without a file name.
    ReportCopyName(PathBuf),
    /// `--decide-budget` negative or not finite.
    DecideBudget(f64),
    /// Too few audit samples.
    AuditSamples {
        /// `--samples`.
        samples: u64,
        /// `--qemu-samples`, with `--qemu`.
        qemu: Option<u64>,
    },
    /// The audit's verdicts are not what they should be (the mechanisms named).
    AuditContrary {
        /// Our mechanisms whose audit found a violation, and any device that failed during its
        /// audit (its verdict FAILED).
        failed: Vec<String>,
        /// Broken fixtures the audit did not catch.
        missed: Vec<String>,
        /// Draws per neighbour.
        samples: u64,
    },
    /// `fleet devices --count 0`.
    NoDevices,
    /// A board directory that may not be provisioned (why: the fleet's rule).
    Provision {
        /// The board's directory.
        dir: PathBuf,
        /// Why.
        why: ldp_link::fleet::NotProvisionable,
    },
    /// `live --device qemu` on an output directory that records a run whose board is gone.
    LiveBoardGone {
        /// The output directory.
        out: PathBuf,
    },
    /// `fleet bridge` without a board.
    NoBoard,
    /// `live --learner` names no learner.
    UnknownLearner {
        /// The name.
        name: String,
        /// The learners.
        valid: Vec<&'static str>,
    },
    /// `live` on a device that is not one board.
    LiveDevice,
}

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoExperiment => f.write_str("name an experiment: host-sim run <name> (see host-sim list)"),
            Self::UnknownExperiment(name) => {
                let names = host_sim::experiments::EXPERIMENTS.iter().map(|e| e.name);
                match host_sim::run::settings::closest(name, names) {
                    Some(guess) => write!(f, "unknown experiment '{name}': did you mean '{guess}'? (see host-sim list)"),
                    None => write!(f, "unknown experiment '{name}': see host-sim list (custom runs your own data)"),
                }
            }
            Self::NotAnEpsilon(text) => {
                write!(f, "--eps '{text}' is not an ε: give numbers > 0, e.g. 1 or 0.5,1,2 (or none)")
            }
            Self::SweepSharded => {
                f.write_str("an ε sweep cannot be sharded: shard each ε's run (--eps one value, --out its own)")
            }
            Self::NotCustom { flag, experiment } => write!(
                f,
                "{flag} describes your own problem: use it with `host-sim run custom --arms FILE.csv`, not {experiment}"
            ),
            Self::NoArms => f.write_str(
                "custom runs on your data: give --arms FILE.csv (one column per arm, one row per observation)",
            ),
            Self::KernelWithoutCoords => {
                f.write_str("--kernel and --lengthscale need --coords FILE.csv (the arms' coordinates)")
            }
            Self::PriorNotTable(experiment) => write!(
                f,
                "--prior chooses the prior over a data table's arms: use it with custom, fig2b, fig2c, fig2e, \
                 fig2f, fig3b or fig3c, not {experiment} (its prior is its kernel)"
            ),
            Self::PriorWithCoords => f.write_str(
                "--prior and --coords both set the prior: with --coords the prior is the kernel over the \
                 coordinates; drop one of them",
            ),
            Self::PrivatiseWithoutInput => {
                f.write_str("--columns and --out are for your own table: give it with --input FILE.csv")
            }
            Self::PrivatiseSeeded => f.write_str(
                "privatise --input takes no --seed: noise from a known seed can be recomputed and removed, and two \
                 tables privatised with one seed share their noise; the device's secret comes from the OS",
            ),
            Self::PrivatiseNeedsBound => f.write_str(
                "privatise --input needs --bound B (and --noise-bound R if your values are f + noise): the noise is \
                 scaled to the bound, which must be a public fact about your values (their range), never computed \
                 from the values themselves",
            ),
            Self::Delimiter(text) => write!(
                f,
                "--delimiter '{text}': give one character, e.g. --delimiter ';' or --delimiter '|', or --delimiter tab"
            ),
            Self::Long(why) => write!(f, "--long {why}"),
            Self::Number { flag, value, sign } => {
                let rule = match sign {
                    Sign::Positive => ">",
                    Sign::NonNegative => ">=",
                };
                write!(f, "{flag} must be a finite number {rule} 0, got {value}")
            }
            Self::EpsNonPrivate(name) => write!(f, "{name} is non-private: --eps does not apply"),
            Self::EpsNone(name) => {
                write!(f, "--eps none applies to custom; {name} is private (fig2d-f are non-private)")
            }
            Self::TooManyArms { file, arms, max } => write!(
                f,
                "--family bandit runs on at most {max} arms and {} has {arms}: use --family gp (its learners share what they learn between arms)",
                file.display()
            ),
            Self::ShardOverMqtt => {
                f.write_str("--shard: an MQTT fleet answers one learner at a time; run the whole run against it")
            }
            Self::UserBudgetOverMqtt => f.write_str(
                "--user-budget: the devices of an MQTT fleet set their own (host-sim fleet devices --user-budget)",
            ),
            Self::FleetOnly => f.write_str("--routing and --user-budget apply to a fleet: add --device fleet:N"),
            Self::UnknownNoise(name) => {
                write!(f, "unknown --noise '{name}': use uniform, student-t, pareto or gaussian")
            }
            Self::NoiseNotSynthetic(name) => {
                write!(f, "--noise applies to synthetic experiments only, not {name}")
            }
            Self::BatchZero => f.write_str(
                "--batch and --in-flight must be at least 1 (the actions a learner asks at once, the queries outstanding)",
            ),
            Self::BatchAndInFlight => f.write_str(
                "--batch and --in-flight are two ways to keep queries outstanding: give one of them",
            ),
            Self::BatchOwnTask(name) => write!(
                f,
                "--batch and --in-flight apply to experiments run as one learner loop (fig2a–fig3c, the device experiment, custom; --batch also the box experiments); {name} runs its own task, one action at a time"
            ),
            Self::UnboundedPrivate => {
                f.write_str("a private run needs bounded noise (CTL clamps to B + R): use --noise uniform")
            }
            Self::ShardsDiffer { first, other } => write!(
                f,
                "{} and {} are shards of runs with different settings: merge the shards of one run",
                first.display(),
                other.display()
            ),
            Self::NoShards => f.write_str("name the shard directories to merge"),
            Self::ReportCopyName(path) => {
                write!(f, "--report-copy {}: give a file name, e.g. docs/results.md", path.display())
            }
            Self::DecideBudget(b) => write!(
                f,
                "--decide-budget {b}: give the seconds of one core the second pass may spend (0 for none)"
            ),
            Self::AuditSamples { samples, qemu } => write!(
                f,
                "--samples and --qemu-samples must be at least 1000, got {samples} and {}",
                qemu.map_or("none".to_string(), |q| q.to_string())
            ),
            Self::AuditContrary { failed, missed, samples } => {
                if !failed.is_empty() {
                    write!(
                        f,
                        "the audit found a privacy violation in {}, or a device failed during its audit (verdict FAILED; a device's error is printed above): this is a bug; please report it with audit.json",
                        failed.join(", ")
                    )?;
                }
                if !missed.is_empty() {
                    let sep = if failed.is_empty() { "" } else { "; also, " };
                    write!(
                        f,
                        "{sep}the audit did not catch the deliberately broken {} at {samples} draws per neighbour: \
                         their violation is too small to see with so few; run with more, e.g. --samples {}",
                        missed.join(", "),
                        samples.saturating_mul(10)
                    )?;
                }
                Ok(())
            }
            Self::NoDevices => f.write_str("--count must be at least 1"),
            Self::Provision { dir, why } => write!(f, "the board in {} {why}", dir.display()),
            Self::LiveBoardGone { out } => write!(
                f,
                "{} records a live run, but its board ({}) is gone: a new board would come with a fresh budget that the record says is spent; restore the board's directory, or give another --out",
                out.display(),
                out.join("device").display()
            ),
            Self::NoBoard => f.write_str("give the board: --qemu [ELF], --serial PATH or --tcp HOST:PORT"),
            Self::UnknownLearner { name, valid } => {
                write!(f, "unknown --learner '{name}': use one of {}", valid.join(", "))
            }
            Self::LiveDevice => {
                f.write_str("live runs on one device: --device serial:PATH, tcp:HOST:PORT or qemu[:ELF]")
            }
        }
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(e) = self.wrapped() {
            return write!(f, "{e}");
        }
        match self {
            Self::File { op, path, source } => match op {
                FileOp::ReadConfig => write!(f, "cannot read config {}: {source}", path.display()),
                FileOp::ReadShard => write!(
                    f,
                    "cannot read {}: {source}: give the --out directories of `host-sim run ... --shard i/n`",
                    path.display()
                ),
                FileOp::Write => write!(f, "cannot write {}: {source} (check --out)", path.display()),
                FileOp::CopyTo(to) => {
                    write!(f, "cannot copy {} to {}: {source}", path.display(), to.display())
                }
                FileOp::Lock => write!(f, "{}: {source}", path.display()),
            },
            Self::Settings { path, source } => write!(f, "config {}: {source}", path.display()),
            Self::RecordSettings(e) => write!(f, "cannot record the shard's settings: {e}"),
            Self::Json(e) => write!(f, "cannot make the JSON record: {e}"),
            Self::Connect { target, source } => write!(f, "cannot connect to {target}: {source}"),
            _ => Ok(()), // every other variant wraps an error that says it all (`wrapped`)
        }
    }
}

impl std::error::Error for CliError {}

/// The variants that wrap another error whose message is the whole message: `From` for each,
/// and [`CliError::wrapped`].
macro_rules! wrapping {
    ($($t:ty => $v:ident),* $(,)?) => {
        $(impl From<$t> for CliError {
            fn from(e: $t) -> Self {
                Self::$v(e)
            }
        })*

        impl CliError {
            /// The wrapped error, for the variants that are one.
            fn wrapped(&self) -> Option<&dyn std::fmt::Display> {
                match self {
                    $(Self::$v(e) => Some(e),)*
                    _ => None,
                }
            }
        }
    };
}

wrapping! {
    Usage => Usage,
    ConfigError => Config,
    RunError => Run,
    TableError => Table,
    OutputError => Output,
    LiveError => Live,
    MqttError => Mqtt,
    BridgeError => Bridge,
    BenchError => Bench,
    PrivatiseError => Privatise,
    FirmwareError => Firmware,
    io::Error => System,
}

impl From<serde_json::Error> for CliError {
    fn from(e: serde_json::Error) -> Self {
        Self::Json(e)
    }
}

impl From<toml::ser::Error> for CliError {
    fn from(e: toml::ser::Error) -> Self {
        Self::RecordSettings(e)
    }
}

/// A file error: `file(op, path)` makes the `map_err` closure.
pub fn file(op: FileOp, path: &std::path::Path) -> impl FnOnce(io::Error) -> CliError {
    let path = path.to_path_buf();
    move |source| CliError::File { op, path, source }
}
