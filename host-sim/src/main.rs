//! `host-sim`: the learner's command line. With no arguments it runs the default experiment,
//! seed 000 Fig. 2(a) (LDP, ε = 1, synthetic Matérn, 10 trials, T = 1000).

/// Prints a line on stdout. A closed stdout (`host-sim ... | head`) is no reason to die: the
/// run goes on and writes its files (`println!` would panic).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use host_sim::experiments;
use host_sim::experiments::bandit;
use host_sim::experiments::runner;
use host_sim::privatise::{PrivatiseConfig, privatise};
use host_sim::reproduce;
use host_sim::run::checkpoint::OutLock;
use host_sim::run::executor::Shard;
use host_sim::run::output::{self, TableFormat};
use host_sim::run::pipeline::{self, Finished, Mode, Run, SHARD_SETTINGS};
use host_sim::run::plot::{PlotOptions, replot_to};
use host_sim::run::request::{self, DeviceRefusal, DeviceRequest, RequestError, RunRequest, Settled};
use host_sim::run::results::AlgorithmResult;
use ldp_learn::bo::gp_ucb::Constants;
use ldp_learn::env::Prior;
use ldp_learn::env::custom::{KernelChoice, KernelName, Overrides, ProblemFiles};
use ldp_learn::env::table::ReadOptions;
use serde::{Deserialize, Serialize};

mod cli_error;
use cli_error::{CliError, FileOp, Sign, Usage, file};

#[derive(Parser)]
#[command(
    version,
    about = "Locally private Bayesian optimisation and bandits: the learner and its experiments",
    after_help = "Examples:\n  \
        host-sim                                   # the default experiment (seed 000 Fig. 2a)\n  \
        host-sim list                              # every experiment and its learners\n  \
        host-sim run fig2b                         # a paper's figure on real data\n  \
        host-sim run custom --arms my.csv          # your own table of rewards, one column per arm\n  \
        host-sim run custom --arms my.csv --eps 0.5,1,2 --algorithms ldp-moma-gp-ucb,ucb1"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// List the experiments and algorithms.
    #[command(after_help = "Example:\n  host-sim list")]
    List,
    /// Run a named experiment (see `list`), writing CSV, JSON and SVG results. A killed run
    /// resumes where it stopped when started again with the same settings and --out.
    #[command(after_help = "Examples:\n  \
        host-sim run fig2a --trials 20 --horizon 2000\n  \
        host-sim run custom --arms rewards.csv                  # your data, LDP at eps = 1\n  \
        host-sim run custom --arms rewards.csv --eps none --family bandit\n  \
        host-sim run custom --arms rewards.csv --coords where.csv --kernel matern --eps 0.5,1,2\n  \
        host-sim run --config my-run.toml                       # any of the settings above, as TOML keys\n\n\
        rewards.csv holds one column per arm and one row per observation (a leading Date column is\n\
        ignored, an empty cell is a missing observation):\n  \
        Date,north,south,east\n  2024-01-01,1.0,2.0,0.5\n  2024-01-02,,4.0,0.7")]
    Run(Box<RunArgs>),
    /// Combine the output directories of `run ... --shard i/n` (every i of one n) into exactly
    /// what the run on one machine writes.
    #[command(after_help = "Example: three shards on one machine, then the merge:\n  \
        seq 0 2 | xargs -P 3 -I{} host-sim run fig2a --shard {}/3 --out results/fig2a-shard{} --quiet\n  \
        host-sim merge results/fig2a-shard0 results/fig2a-shard1 results/fig2a-shard2 --out results/fig2a")]
    Merge {
        /// The shards' output directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output directory [default: results/<experiment>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Directory of the real data sets, as given to the shards [default: the repository's data/ if
        /// it exists].
        #[arg(long)]
        data: Option<PathBuf>,
    },
    /// Redraw a run's regret.svg and regret.png from its regret.csv (and run.json), e.g. with
    /// log-log axes.
    #[command(
        after_help = "Examples:\n  host-sim plot results/fig2a --log-log --out results/fig2a/regret-loglog.svg\n  host-sim plot results/tao-s1 --out fig1 --title \"Seed 004 Fig. 1: S1\""
    )]
    Plot {
        /// The run's output directory.
        dir: PathBuf,
        /// Both axes logarithmic.
        #[arg(long)]
        log_log: bool,
        /// Write the figure here instead of the run's regret.svg and regret.png: FILE.svg or
        /// FILE.png writes that file, FILE without an extension both (an ε sweep's
        /// regret-versus-ε figure goes beside it as FILE_vs_eps).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// The figure's title [default: the run's experiment and description].
        #[arg(long)]
        title: Option<String>,
    },
    /// Run every experiment of the four seeds and write REPORT.md: each paper claim beside our
    /// figures, with a verdict by a stated rule.
    #[command(after_help = "Examples:\n  \
        host-sim reproduce --quick                  # minutes; killed, it resumes where it stopped\n  \
        host-sim reproduce --threads 2              # the full run (papers' trials and horizons)\n  \
        host-sim reproduce --shard 0/2 --out r0     # half of every run's jobs, on one machine ...\n  \
        host-sim reproduce --shard 1/2 --out r1     # ... the other half on another\n  \
        host-sim reproduce --merge r0 r1            # then the report from both")]
    Reproduce {
        /// Fewer trials and shorter horizons where a full run takes long (minutes, not hours).
        #[arg(long)]
        quick: bool,
        /// Directory of the real data sets [default: the repository's data/].
        #[arg(long)]
        data: Option<PathBuf>,
        /// Output directory [default: results/reproduce, results/quick with --quick].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also write the report to this file, with its plots copied beside it (for
        /// docs/results.md: into docs/results/<run>/regret.svg), so the copy stands alone.
        #[arg(long)]
        report_copy: Option<PathBuf>,
        /// Worker threads of every run [default: all cores]; results do not depend on it.
        #[arg(long)]
        threads: Option<usize>,
        /// Compute only share i of n of every run's jobs (0 ≤ i < n) into --out, for
        /// `reproduce --merge`; no report.
        #[arg(long, value_name = "i/n")]
        shard: Option<String>,
        /// Write the report from these `reproduce --shard` output directories (every i of one
        /// n, run with the same --quick), computing nothing.
        #[arg(long, num_args = 1.., value_name = "DIR", conflicts_with = "shard")]
        merge: Vec<PathBuf>,
    },
    /// Audit the privacy mechanisms: an empirical lower bound on ε per mechanism (ours must stay
    /// below their claim, the broken fixtures must not).
    #[command(after_help = "Example:\n  host-sim audit --samples 1000000 --seed 1")]
    Audit {
        /// Test draws per neighbouring input (plus a fifth as many for choosing the attack).
        #[arg(long, default_value_t = 1_000_000)]
        samples: u64,
        /// Seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Where to write audit.json [default: results/audit].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also audit the real firmware under QEMU (build it first: cd firmware-example &&
        /// cargo build --release), at --qemu-samples draws per neighbour.
        #[arg(long)]
        qemu: bool,
        /// Test draws per neighbour for the QEMU rows (each draw is a report over the emulated
        /// UART, about 150 a second).
        #[arg(long, default_value_t = 2_000)]
        qemu_samples: u64,
    },
    /// Privatise a stream of rewards on the in-process device and compare what was released
    /// with the raw data and the theory.
    #[command(after_help = "Example:\n  host-sim privatise --eps 0.5 --reports 100000")]
    Privatise {
        /// Per-report ε.
        #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
        eps: f64,
        /// Number of reports.
        #[arg(long, default_value_t = 100_000)]
        reports: u64,
        /// B, bound on |f| [default: 1 for the synthetic stream; required with --input: a
        /// public fact about your values, never computed from them].
        #[arg(long = "bound")]
        b: Option<f64>,
        /// R, bound on |η| [default: 1 for the synthetic stream, 0 with --input]; values beyond
        /// B + R are clipped before the noise.
        #[arg(long = "noise-bound")]
        r: Option<f64>,
        /// Seed of the synthetic stream and the device RNG [default: 0]; refused with --input,
        /// whose device secret always comes from the OS (noise from a known seed can be removed).
        #[arg(long)]
        seed: Option<u64>,
        /// Privatise your own table instead (read as `run custom --arms` reads one): every
        /// observation of its arm columns is released once at --eps; writes --out.
        #[arg(long)]
        input: Option<PathBuf>,
        /// With --input: the columns to privatise, by header name or 1-based number [default:
        /// all but the label column].
        #[arg(long, value_delimiter = ',')]
        columns: Option<Vec<String>>,
        /// With --input: the privatised table [default: <input stem>.private.csv beside it].
        #[arg(long)]
        out: Option<PathBuf>,
        /// With --input: copy the label (index, time) column into the output as it is — NOT
        /// privatised [default: dropped].
        #[arg(long)]
        keep_label: bool,
    },
    /// Learn on your own device: the learner chooses actions, the device releases privatised
    /// readings, every round is kept (live.csv) and a stopped run resumes. No regret: the
    /// device's means are unknown.
    #[command(after_help = "Examples:\n  \
        host-sim live --device serial:/dev/ttyACM0 --actions 6 --horizon 200\n  \
        host-sim live --device tcp:127.0.0.1:4555 --coords where.csv --learner ldp-tgp-ucb\n  \
        host-sim live --device qemu --actions 100 --horizon 300   # the emulated board, kept in <out>/device\n\n\
        where.csv holds one row per action (in action order), one column per dimension; a header\n\
        row and a leading label column are allowed:\n  \
        name,x,y\n  north,0.0,1.0\n  south,0.0,-1.0")]
    Live(Box<LiveArgs>),
    /// A fleet over an MQTT broker: run devices that answer a learner (`--device mqtt://HOST:PORT`),
    /// bridge a board into it, or measure it.
    #[command(after_help = "Example:\n  \
        scripts/broker.sh start\n  \
        host-sim fleet devices --broker mqtt://127.0.0.1:1883 --count 20 --dir fleet-state\n  \
        host-sim fleet bridge --broker mqtt://127.0.0.1:1883 --qemu --dir board-1 --provision\n  \
        host-sim fleet bench --broker mqtt://127.0.0.1:1883 --devices 1,10,100 --rounds 200")]
    Fleet {
        #[command(subcommand)]
        command: FleetCommand,
    },
}

/// `host-sim fleet ...`.
#[derive(Subcommand)]
enum FleetCommand {
    /// Run N private devices on one MQTT connection, each a user whose readings are the
    /// experiment's environment, with its own lifetime budget and its state in DIR/<id>/state.bin
    /// (a restart boots the same devices: their budget never comes back). Runs until stdin
    /// closes (Ctrl-D) or for --seconds; Ctrl-C is safe too (the state is written before any
    /// report leaves).
    #[command(after_help = "Examples:\n  \
        host-sim fleet devices --broker mqtt://127.0.0.1:1883 --count 20 --dir fleet-state --provision\n  \
        host-sim fleet devices --broker mqtt://127.0.0.1:1883 --count 20 --dir fleet-state\n  \
        host-sim fleet devices --broker mqtt://127.0.0.1:1883 --count 5 --dir sim --provision --simulation --seed 3 --seconds 600\n\n\
        A login is read from the URL (mqtt://user:pass@host:port) or from LDP_MQTT_USERNAME and\n\
        LDP_MQTT_PASSWORD. Topics: ldp/<id>/query, ldp/<id>/report, ldp/<id>/hello (retained).")]
    Devices(Box<DevicesArgs>),
    /// Bridge one board into the fleet: the QEMU firmware (--qemu), a board on a serial port
    /// (--serial) or a board's byte stream on TCP (--tcp). Asks the board for its hello,
    /// publishes it retained on ldp/<id>/hello, writes every frame of ldp/<id>/query to the
    /// board unchanged and publishes every frame the board sends on ldp/<id>/report. Runs until
    /// stdin closes (Ctrl-D) or for --seconds.
    #[command(after_help = "Examples:\n  \
        host-sim fleet bridge --broker mqtt://127.0.0.1:1883 --qemu --dir board-1 --provision\n  \
        host-sim fleet bridge --broker mqtt://127.0.0.1:1883 --qemu firmware.elf --dir board-1 --seconds 600\n  \
        host-sim fleet bridge --broker mqtt://127.0.0.1:1883 --serial /dev/ttyACM0\n\n\
        The same --dir boots the same emulated board again (its budget spent so far stays spent);\n\
        without --dir each run is a new board in a fresh temporary directory.")]
    #[command(group(clap::ArgGroup::new("board").required(true).args(["qemu", "serial", "tcp"])))]
    Bridge(Box<BridgeArgs>),
    /// Measure a fleet over a broker: for each size N, N simulated devices in this process,
    /// sequential rounds through a round-robin fleet (latency p50/p99/max, rounds/s), reports/s
    /// with --inflight queries in flight, and the learner's own time per round; --broker none
    /// (or --in-process as well) measures the same in memory, without a broker.
    #[command(after_help = "Examples:\n  \
        scripts/broker.sh start\n  \
        host-sim fleet bench --broker mqtt://127.0.0.1:1883 --devices 1,10,100,1000 --rounds 200 --in-process\n  \
        host-sim fleet bench --broker none --devices 1,100 --rounds 1000 --json bench.json")]
    Bench(Box<BenchArgs>),
}

/// `host-sim fleet bridge`.
#[derive(Args)]
struct BridgeArgs {
    /// The broker: mqtt://HOST:PORT.
    #[arg(long)]
    broker: String,
    /// Boot the firmware under QEMU, from ELF [default: build firmware-example].
    #[arg(long, value_name = "ELF", num_args = 0..=1)]
    qemu: Option<Option<PathBuf>>,
    /// With --qemu: the emulated board's directory (its state: the same directory is the same
    /// board) [default: a fresh temporary directory, a new board].
    #[arg(long, requires = "qemu")]
    dir: Option<PathBuf>,
    /// With --dir: create the board if the directory has none yet (a new board, with a fresh
    /// budget). Without it a directory without a board is refused; a board that lost its state
    /// is refused always.
    #[arg(long, requires = "dir")]
    provision: bool,
    /// A board on this serial port (115200 8N1), e.g. /dev/ttyACM0.
    #[arg(long)]
    serial: Option<String>,
    /// A board's byte stream on TCP, HOST:PORT (e.g. a QEMU started by hand).
    #[arg(long)]
    tcp: Option<String>,
    /// Stop after this many seconds instead of when stdin closes.
    #[arg(long)]
    seconds: Option<u64>,
}

/// `host-sim fleet bench`.
#[derive(Args)]
struct BenchArgs {
    /// The broker, mqtt://HOST:PORT, or `none` to measure in memory only.
    #[arg(long)]
    broker: String,
    /// Fleet sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,10,100")]
    devices: Vec<usize>,
    /// Sequential rounds measured per size.
    #[arg(long, default_value_t = 200)]
    rounds: usize,
    /// Sequential rounds before measuring.
    #[arg(long, default_value_t = 20)]
    warmup: usize,
    /// Queries in flight at once in the throughput phase (at most N).
    #[arg(long, default_value_t = 32)]
    inflight: usize,
    /// Queries in the throughput phase [default: max(4 x rounds, 2 x N)].
    #[arg(long)]
    queries: Option<usize>,
    /// Also measure in memory (no broker) for comparison.
    #[arg(long)]
    in_process: bool,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// `host-sim fleet devices`.
#[derive(Args)]
struct DevicesArgs {
    /// The broker: mqtt://HOST:PORT.
    #[arg(long)]
    broker: String,
    /// How many devices.
    #[arg(long)]
    count: usize,
    /// Directory of the devices' state (one subdirectory per device id).
    #[arg(long)]
    dir: PathBuf,
    /// The private experiment whose environment the devices read (its trial --trial).
    #[arg(long, default_value = "device")]
    experiment: String,
    /// Seed of the run the environment is taken from (and, with --simulation, of the keys).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Which trial's environment.
    #[arg(long, default_value_t = 0)]
    trial: u64,
    /// Per-report ε limit [default: the experiment's ε].
    #[arg(long, allow_negative_numbers = true)]
    eps: Option<f64>,
    /// Each device's lifetime budget [default: 100 × the per-report ε]. A restart loses what
    /// the device had reserved ahead (up to 16 reports' worth), so budgets of a few reports
    /// do not survive restarts.
    #[arg(long, allow_negative_numbers = true)]
    user_budget: Option<f64>,
    /// The first device's id (the others follow).
    #[arg(long, default_value_t = 1)]
    first_id: u64,
    /// Derive every key from --seed and --trial instead of the OS: reproducible, and no
    /// privacy against whoever knows the seed (a simulation, matching `--device fleet:N`).
    #[arg(long)]
    simulation: bool,
    /// Create the devices that have no state in --dir yet (new devices, each with a fresh
    /// budget). Without it a device without state is refused, so a lost state file never
    /// becomes a fresh budget unnoticed.
    #[arg(long)]
    provision: bool,
    /// Directory of the real data sets [default: the repository's data/].
    #[arg(long)]
    data: Option<PathBuf>,
    /// Stop after this many seconds instead of when stdin closes.
    #[arg(long)]
    seconds: Option<u64>,
}

/// Settings of `live`.
#[derive(Args)]
struct LiveArgs {
    /// The device: serial:PATH (a board), tcp:HOST:PORT (a device already listening), or
    /// qemu[:ELF] (the firmware under QEMU, its state kept in <out>/device so a resumed run
    /// meets the same emulated board; made for a new --out only, never again once lost).
    #[arg(long)]
    device: String,
    /// The device's actions are 0..N, at N evenly spaced points of [0, 1].
    #[arg(long, conflicts_with = "coords", required_unless_present = "coords")]
    actions: Option<usize>,
    /// The device's actions' points: one row per action, one column per dimension.
    #[arg(long)]
    coords: Option<PathBuf>,
    /// The learner, as `host-sim list` names it: GP-UCB, LDP-TGP-UCB, LDP-ATA-GP-UCB,
    /// LDP-MoMA-GP-UCB, UCB1, LDP-UCB, LDP-RSE or Robust-UCB (LDP-RSE and Robust-UCB: at most 64
    /// actions).
    #[arg(long, default_value = "GP-UCB")]
    learner: String,
    /// ε per report (at most the device's per-report limit).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    eps: f64,
    /// Rounds in all; a resumed run goes on up to this.
    #[arg(long, default_value_t = 100)]
    horizon: usize,
    /// The learner's seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The prior's kernel over the points, `se` or `matern` (ν = 5/2).
    #[arg(long, value_enum, default_value = "se")]
    kernel: KernelName,
    /// The kernel's lengthscale [default: 0.2 with --actions (the device experiment's prior),
    /// the median distance between two points with --coords].
    #[arg(long, allow_negative_numbers = true)]
    lengthscale: Option<f64>,
    /// Calibrated, practical or paper constants.
    #[arg(long, value_enum, default_value = "calibrated")]
    constants: ConstantsArg,
    /// Multiply the learner's β_t by this.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    beta_scale: f64,
    /// Output directory.
    #[arg(long, default_value = "results/live")]
    out: PathBuf,
    /// No progress lines.
    #[arg(short, long)]
    quiet: bool,
}

/// `--eps`: one ε, a comma-separated list, or `none`; in a TOML file a number, a list of
/// numbers or that text.
#[derive(Clone, Debug, PartialEq)]
struct EpsArg(String);

impl std::str::FromStr for EpsArg {
    type Err = std::convert::Infallible;
    /// Any text: it is checked with the other settings, by `EpsArg::values`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(EpsArg(text.to_string()))
    }
}

impl EpsArg {
    /// The values: `None` for `none`, else each ε (finite and > 0).
    fn values(&self) -> Result<Vec<Option<ldp_core::Epsilon>>, Usage> {
        if self.0.trim().eq_ignore_ascii_case("none") {
            return Ok(vec![None]);
        }
        self.0
            .split(',')
            .map(|v| {
                let e = v.trim().parse::<f64>().ok().and_then(|e| ldp_core::Epsilon::new(e).ok());
                e.map(Some).ok_or_else(|| Usage::NotAnEpsilon(v.trim().to_string()))
            })
            .collect()
    }
}

impl Serialize for EpsArg {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for EpsArg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            One(f64),
            Many(Vec<f64>),
            Text(String),
        }
        let text = match Form::deserialize(d)? {
            Form::One(e) => e.to_string(),
            Form::Many(v) => v.iter().map(f64::to_string).collect::<Vec<_>>().join(","),
            Form::Text(t) => t,
        };
        Ok(EpsArg(text))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
enum FamilyArg {
    Gp,
    Bandit,
}

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
enum ConstantsArg {
    Calibrated,
    Practical,
    Paper,
}

fn constants_of(arg: ConstantsArg) -> Constants {
    match arg {
        ConstantsArg::Calibrated => Constants::Calibrated,
        ConstantsArg::Practical => Constants::Practical,
        ConstantsArg::Paper => Constants::Paper,
    }
}

/// Settings of `run`; each may also come from a TOML file (`--config`), the command line wins.
#[derive(Args, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RunArgs {
    /// Experiment name (see `host-sim list`; `custom` for your own data).
    #[serde(default)]
    experiment: Option<String>,
    /// TOML file with any of these settings as keys (experiment, trials, horizon, eps, seed,
    /// threads, out, data, constants, noise, device, routing, user_budget, beta_scale,
    /// algorithms, arms, delimiter, label_column, columns, long, minimise, coords, kernel,
    /// lengthscale, prior, family, bound, noise_bound, moment, noise_moment); unknown keys are
    /// refused.
    #[arg(long)]
    #[serde(skip)]
    config: Option<PathBuf>,
    /// Number of trials [default: the experiment's, 10 for seed 000].
    #[arg(long)]
    trials: Option<usize>,
    /// Horizon T [default: the experiment's, 1000 for seed 000].
    #[arg(long)]
    horizon: Option<usize>,
    /// ε per report, overriding the experiment's: one value, a list for a sweep (`0.5,1,2`:
    /// one run per value, each in <out>/eps<value>, and a table across them), or `none` for a
    /// non-private run of `custom`.
    #[arg(long, allow_negative_numbers = true)]
    eps: Option<EpsArg>,
    /// Run only these learners (comma-separated, any case, as `host-sim list` prints them;
    /// `DP-RSE` names every grid point of a sweep's DP-RSE) [default: all].
    #[arg(long, value_delimiter = ',')]
    algorithms: Option<Vec<String>>,
    /// `custom`: your table of rewards, one column per arm and one row per observation (CSV,
    /// TSV, `;`- or `|`-separated, quoted or not); a leading index or time column (named e.g.
    /// year/date/index, holding text, or strictly increasing integers) labels the rows; empty,
    /// NA and NaN cells are missing observations. The arms read are listed before the run.
    #[arg(long)]
    arms: Option<PathBuf>,
    /// `custom`: the arms file's delimiter, one character or `tab` [default: sniffed among
    /// `,` tab `;` `|`].
    #[arg(long)]
    delimiter: Option<String>,
    /// `custom`: the column that labels the rows (a header name or a 1-based number), or `none`
    /// to make every column an arm [default: detected].
    #[arg(long)]
    label_column: Option<String>,
    /// `custom`: the arm columns, by header name or 1-based number [default: all but the label
    /// column].
    #[arg(long, value_delimiter = ',')]
    columns: Option<Vec<String>>,
    /// `custom`: a long-format table, one row per observation: ARM,VALUE[,TIME] name the column
    /// of the arm, of the value and optionally of the time that aligns the arms.
    #[arg(long, value_name = "ARM,VALUE[,TIME]")]
    long: Option<String>,
    /// `custom`: lower values are better (costs, losses, errors): every value is negated.
    #[arg(long, alias = "minimize")]
    #[serde(default)]
    minimise: bool,
    /// `custom`: a kernel prior over coordinates, one row per arm (in the arms file's column
    /// order, optionally led by the arm's name), one column per dimension [default: the
    /// empirical covariance of the arms' columns].
    #[arg(long)]
    coords: Option<PathBuf>,
    /// `custom` with --coords: the kernel, `se` or `matern` (ν = 5/2) [default: se].
    #[arg(long, value_enum)]
    kernel: Option<KernelName>,
    /// `custom` with --coords: the kernel's lengthscale [default: the median distance between
    /// two arms].
    #[arg(long, allow_negative_numbers = true)]
    lengthscale: Option<f64>,
    /// The prior over a data table's arms (custom without --coords and the real-data figures):
    /// `independent` (K = I), `shrunk` (the table's correlation shrunk halfway to independent)
    /// or `empirical` (the table's own correlation, seed 000's recipe; from the same table an
    /// oracle a deployed learner would not have) [default: independent].
    #[arg(long, value_enum)]
    prior: Option<Prior>,
    /// `custom`: the learners, `gp` (GP-UCB and seed 000's three, UCB1) or `bandit` (K-armed,
    /// at most 64 arms: Robust-UCB, or LDP-RSE when private, and UCB1) [default: gp].
    #[arg(long, value_enum)]
    family: Option<FamilyArg>,
    /// `custom`: B, the bound on |f|, in place of the derived max |f| = 1.
    #[arg(long = "bound", allow_negative_numbers = true)]
    #[serde(rename = "bound", alias = "b")]
    b: Option<f64>,
    /// `custom`: R, the bound on |noise|, in place of the largest one in the data.
    #[arg(long = "noise-bound", allow_negative_numbers = true)]
    #[serde(rename = "noise_bound", alias = "r")]
    r: Option<f64>,
    /// `custom`: v, the bound on E y² of what the learner sees, in place of the derived one.
    #[arg(long = "moment", allow_negative_numbers = true)]
    #[serde(rename = "moment", alias = "v")]
    v: Option<f64>,
    /// `custom`: c, the bound on E (y − f)² of what the learner sees, in place of the derived one.
    #[arg(long = "noise-moment", allow_negative_numbers = true)]
    #[serde(rename = "noise_moment", alias = "c")]
    c: Option<f64>,
    /// Master seed [default: 0].
    #[arg(long)]
    seed: Option<u64>,
    /// Worker threads [default: all cores]; results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Output directory [default: results/<experiment>].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Directory of the real data sets (light sensor, stocks) [default: the repository's data/].
    #[arg(long)]
    data: Option<PathBuf>,
    /// Calibrated constants (one documented rule for every experiment, docs/constants.md), the
    /// original authors' practical ones, or the theorems' [default: calibrated].
    #[arg(long, value_enum)]
    constants: Option<ConstantsArg>,
    /// Noise of a synthetic experiment: uniform (U[-1,1]), student-t (ν = 3), pareto (centred,
    /// shape 3, scale 1) or gaussian (σ = 1) [default: the paper's for that experiment].
    #[arg(long)]
    noise: Option<String>,
    /// The device answering a private run: in-process (default), qemu (the firmware under
    /// QEMU, one per trial), qemu:ELF, serial:PATH (a real board), tcp:HOST:PORT (a device
    /// already running, e.g. `cargo run` in firmware-example/), fleet:N (N simulated users in
    /// this process, each with its own budget; each round asks one of them), or
    /// mqtt://HOST:PORT (the devices on an MQTT broker: host-sim fleet devices, bridged boards).
    #[arg(long)]
    device: Option<String>,
    /// How a fleet's rounds are routed to its devices with budget left [default: round-robin].
    #[arg(long, value_enum)]
    routing: Option<ldp_link::fleet::Routing>,
    /// Lifetime budget (eps) of each device of an in-process fleet [default: eps * ceil(T/N),
    /// an even share of the rounds].
    #[arg(long)]
    user_budget: Option<f64>,
    /// Multiply every algorithm's β_t by this (exploration scale) [default: 1].
    #[arg(long, allow_negative_numbers = true)]
    beta_scale: Option<f64>,
    /// Run only shard i of n (0 <= i < n) of the (trial, learner) jobs, e.g. on n machines or as a
    /// Slurm job array (--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT with --array=0-(n-1));
    /// `host-sim merge` combines the shards' --out directories [default --out:
    /// results/<experiment>-shard<i>of<n>].
    #[arg(long)]
    #[serde(skip)]
    shard: Option<String>,
    /// The summary table printed at the end: text, markdown or json [default: text].
    #[arg(long, value_enum)]
    format: Option<TableFormat>,
    /// Draw the regret plots with both axes logarithmic.
    #[arg(long)]
    #[serde(default)]
    log_log: bool,
    /// Do not show a progress bar or the arms read.
    #[arg(short, long)]
    #[serde(skip)]
    quiet: bool,
    /// Replace the results of a run with other settings in --out (its jobs, settings and
    /// run.json) instead of refusing.
    #[arg(long)]
    #[serde(skip)]
    overwrite: bool,
    /// Also print the settings the run uses (constants, algorithms, device, …) before it
    /// starts, as run.json records them.
    #[arg(short, long, conflicts_with = "quiet")]
    #[serde(skip)]
    verbose: bool,
}

impl RunArgs {
    /// These settings, each filled from `file` where not given here (the flags `config`, `shard`
    /// and `quiet` come from the command line only).
    fn or(self, file: RunArgs) -> RunArgs {
        RunArgs {
            experiment: self.experiment.or(file.experiment),
            config: self.config,
            trials: self.trials.or(file.trials),
            horizon: self.horizon.or(file.horizon),
            eps: self.eps.or(file.eps),
            algorithms: self.algorithms.or(file.algorithms),
            arms: self.arms.or(file.arms),
            delimiter: self.delimiter.or(file.delimiter),
            label_column: self.label_column.or(file.label_column),
            columns: self.columns.or(file.columns),
            long: self.long.or(file.long),
            minimise: self.minimise || file.minimise,
            coords: self.coords.or(file.coords),
            kernel: self.kernel.or(file.kernel),
            lengthscale: self.lengthscale.or(file.lengthscale),
            prior: self.prior.or(file.prior),
            family: self.family.or(file.family),
            b: self.b.or(file.b),
            r: self.r.or(file.r),
            v: self.v.or(file.v),
            c: self.c.or(file.c),
            seed: self.seed.or(file.seed),
            threads: self.threads.or(file.threads),
            out: self.out.or(file.out),
            data: self.data.or(file.data),
            constants: self.constants.or(file.constants),
            noise: self.noise.or(file.noise),
            device: self.device.or(file.device),
            routing: self.routing.or(file.routing),
            user_budget: self.user_budget.or(file.user_budget),
            beta_scale: self.beta_scale.or(file.beta_scale),
            format: self.format.or(file.format),
            log_log: self.log_log || file.log_log,
            shard: self.shard,
            quiet: self.quiet,
            verbose: self.verbose,
            overwrite: self.overwrite,
        }
    }
}

/// The one-letter long flags of earlier versions and their names now: still accepted, but not
/// clap aliases, which clap would offer as the nearest match to any mistyped flag ("--bogus":
/// "did you mean --b").
const OLD_FLAGS: [(&str, &str); 4] =
    [("--b", "--bound"), ("--r", "--noise-bound"), ("--v", "--moment"), ("--c", "--noise-moment")];

/// The command line with [`OLD_FLAGS`] spelled as now (`--b 2` and `--b=2` alike).
fn modern_flags(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    args.map(|arg| {
        let Some(text) = arg.to_str() else { return arg };
        let (flag, value) = text.split_once('=').map_or((text, None), |(f, v)| (f, Some(v)));
        match (OLD_FLAGS.iter().find(|(old, _)| *old == flag), value) {
            (Some((_, new)), None) => (*new).into(),
            (Some((_, new)), Some(v)) => format!("{new}={v}").into(),
            (None, _) => arg,
        }
    })
    .collect()
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(modern_flags(std::env::args_os()));
    let result = match cli.command {
        None => run(RunArgs { experiment: Some("fig2a".into()), ..RunArgs::default() }, &[]),
        Some(Command::List) => {
            list();
            Ok(())
        }
        Some(Command::Run(args)) => run(*args, &[]),
        Some(Command::Merge { dirs, out, data }) => merge(dirs, out, data),
        Some(Command::Plot { dir, log_log, out, title }) => lock_out(&dir)
            .and_then(|_lock| {
                replot_to(&dir, &PlotOptions { log_log }, out.as_deref(), title.as_deref())
                    .map_err(CliError::from)
            })
            .map(|files| {
                let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
                say!("wrote {}", names.join(", "));
            }),
        Some(Command::Reproduce { quick, data, out, report_copy, threads, shard, merge }) => {
            reproduce_all(quick, data, out, report_copy, threads, shard.as_deref(), &merge)
        }
        Some(Command::Audit { samples, seed, out, qemu, qemu_samples }) => {
            audit(samples, seed, out, qemu.then_some(qemu_samples))
        }
        Some(Command::Fleet { command: FleetCommand::Devices(args) }) => fleet_devices(*args),
        Some(Command::Fleet { command: FleetCommand::Bridge(args) }) => fleet_bridge(*args),
        Some(Command::Fleet { command: FleetCommand::Bench(args) }) => fleet_bench(*args),
        Some(Command::Live(args)) => live(*args),
        Some(Command::Privatise {
            eps,
            reports,
            b,
            r,
            seed,
            input: None,
            columns: None,
            out: None,
            keep_label: false,
        }) => {
            let (b, r, seed) = (b.unwrap_or(1.0), r.unwrap_or(1.0), seed.unwrap_or(0));
            privatise(PrivatiseConfig { epsilon: eps, reports, b, r, seed })
                .map(|s| print!("{s}"))
                .map_err(CliError::from)
        }
        Some(Command::Privatise { input: None, .. }) => Err(Usage::PrivatiseWithoutInput.into()),
        Some(Command::Privatise { seed: Some(_), input: Some(_), .. }) => Err(Usage::PrivatiseSeeded.into()),
        Some(Command::Privatise { eps, b, r, input: Some(input), columns, out, keep_label, .. }) => {
            privatise_file(&input, columns, out, eps, b, r, keep_label)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `privatise --input FILE`: the user's table through the device's mechanism, cell by cell.
fn privatise_file(
    input: &Path,
    columns: Option<Vec<String>>,
    out: Option<PathBuf>,
    eps: f64,
    b: Option<f64>,
    r: Option<f64>,
    keep_label: bool,
) -> Result<(), CliError> {
    let b = b.ok_or(Usage::PrivatiseNeedsBound)?;
    let r = r.unwrap_or(0.0);
    let options = ReadOptions { columns, ..ReadOptions::default() };
    let (table, report) = ldp_learn::env::table::Table::read_with(input, &options)?;
    eprint!("{report}");
    let release = host_sim::privatise::privatise_table(&table, eps, b, r, None, keep_label)?;
    if let Some((name, _)) = table.labels.as_ref() {
        match keep_label {
            true => eprintln!("warning: column '{name}' is copied as it is, NOT privatised (--keep-label)"),
            false => eprintln!(
                "column '{name}' labels the rows and is left out (--keep-label copies it, unprivatised)"
            ),
        }
    }
    let out = out.unwrap_or_else(|| {
        let stem = input.file_stem().map_or("table".into(), |s| s.to_string_lossy().into_owned());
        input.with_file_name(format!("{stem}.private.csv"))
    });
    std::fs::write(&out, &release.csv).map_err(file(FileOp::Write, &out))?;
    eprintln!(
        "released {} observations at eps = {eps} each (effective {:.4}; a person behind k of them spent k·eps, \
         and privatising the table again spends it again; the header, rows and gaps are released as they are), \
         noise sd {:.4}, {} clipped to ±{}",
        release.reports,
        release.epsilon_effective,
        release.noise_sd,
        release.clipped,
        b + r
    );
    eprintln!("wrote {}", out.display());
    Ok(())
}

fn list() {
    say!("experiments (host-sim run <name>):");
    for e in experiments::all() {
        let privacy = match (e.epsilon, e.central) {
            (None, _) => "non-private".to_string(),
            (Some(eps), false) => format!("LDP, eps = {eps}"),
            (Some(eps), true) => format!("central DP, eps = {eps}"),
        };
        let mut names: Vec<String> =
            e.algorithms.iter().map(|a| a.label(e.epsilon.is_some()).to_string()).collect();
        if names.is_empty() {
            // The experiment's own task names its learners (e.g. a sweep's, once per name).
            let labels = experiments::task(e, e.env, &e.default_config(), None).map(|t| t.labels());
            for label in labels.unwrap_or_default() {
                if !names.contains(&label) {
                    names.push(label);
                }
            }
        }
        if e.name == "custom" {
            names.push("with --family bandit: Robust-UCB (LDP-UCB and LDP-RSE when private; LDP-RSE under paper and practical constants), UCB1".to_string());
        }
        say!("  {:<16} {} [{privacy}]\n  {:<16} algorithms: {}", e.name, e.description, "", names.join(", "));
    }
}

/// Holds the output directory `dir` for this command: another host-sim run writing there is
/// refused, and refuses this one.
fn lock_out(dir: &std::path::Path) -> Result<OutLock, CliError> {
    OutLock::acquire(dir).map_err(|e| runner::RunError::Checkpoint(e).into())
}

/// `run`, or with `merge_from` the merge of those shard directories (every job from their
/// checkpoints, none computed). A list of ε runs once per value (a sweep).
fn run(cli: RunArgs, merge_from: &[PathBuf]) -> Result<(), CliError> {
    let settings = match &cli.config {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(file(FileOp::ReadConfig, path))?;
            toml::from_str::<RunArgs>(&text)
                .map_err(|e| CliError::Settings { path: path.clone(), source: Box::new(e) })?
        }
        None => RunArgs::default(),
    };
    // The command line wins over the file, setting by setting.
    let args = cli.or(settings);
    let name = args.experiment.clone().ok_or(Usage::NoExperiment)?;
    let experiment = experiments::find(&name).ok_or(Usage::UnknownExperiment(name))?;
    // The arms read from the user's table, once for a sweep, for the user to check.
    if let Some(files) = problem_files(&args, experiment)?
        && !args.quiet
    {
        eprint!("{}", files.report);
    }
    let values = match &args.eps {
        Some(e) => e.values()?,
        None => vec![experiment.epsilon],
    };
    if values.len() == 1 {
        return run_one(&args, experiment, values[0], merge_from, true).map(|_| ());
    }
    if args.shard.is_some() || !merge_from.is_empty() {
        return Err(Usage::SweepSharded.into());
    }
    let base = args.out.clone().unwrap_or_else(|| PathBuf::from("results").join(experiment.name));
    let _lock = lock_out(&base)?; // each ε's run locks its own directory below it
    let json = args.format == Some(TableFormat::Json);
    let mut table =
        String::from("eps,algorithm,final_regret_mean,final_regret_std,final_regret_se,vs_uniform,vs_ucb1\n");
    let mut runs = Vec::new();
    for epsilon in values {
        let e = epsilon.map_or("none".to_string(), |e| e.to_string());
        let one =
            RunArgs { eps: Some(EpsArg(e.clone())), out: Some(base.join(format!("eps{e}"))), ..args.clone() };
        // A sweep's JSON is one document, printed at the end.
        let results = run_one(&one, experiment, epsilon, &[], !json)?;
        let trials = results.first().map_or(1, |r| r.finals.len());
        let number = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
        for row in output::table_rows(&results, trials).iter().filter(|r| !r.reference) {
            let (ratio, ucb1) = (number(row.vs_uniform), number(row.vs_ucb1));
            table +=
                &format!("{e},{},{},{},{},{ratio},{ucb1}\n", row.algorithm, row.final_mean, row.sd, row.se);
        }
        let horizon = args.horizon.unwrap_or(experiment.default_config().horizon);
        runs.push(output::run_json(&results, &heading(experiment, &one, epsilon, trials, horizon)));
    }
    let path = base.join("sweep.csv");
    std::fs::write(&path, &table).map_err(file(FileOp::Write, &path))?;
    if json {
        say!(
            "{}",
            output::to_json(&serde_json::json!({ "experiment": experiment.name, "sweep": runs })).trim_end()
        );
    }
    eprintln!("wrote {} (final regret per ε and learner)", path.display());
    Ok(())
}

/// What a printed table of `experiment` run with `args` at `epsilon` is of.
fn heading(
    experiment: &experiments::Experiment,
    args: &RunArgs,
    epsilon: Option<ldp_core::Epsilon>,
    trials: usize,
    horizon: usize,
) -> output::TableHeading {
    let title = match &args.arms {
        Some(arms) if matches!(experiment.env, experiments::EnvKind::Table) => {
            format!(
                "your data: {}",
                arms.file_name().map_or(arms.display().to_string(), |n| n.to_string_lossy().into())
            )
        }
        _ => experiment.description.to_string(),
    };
    output::TableHeading {
        experiment: experiment.name.to_string(),
        title,
        eps: epsilon.map(ldp_core::Epsilon::get),
        trials,
        horizon,
    }
}

/// The user's problem files of `custom`, or an error if any of their settings is given to
/// another experiment.
fn problem_files(
    args: &RunArgs,
    experiment: &experiments::Experiment,
) -> Result<Option<ProblemFiles>, CliError> {
    let custom = matches!(experiment.env, experiments::EnvKind::Table);
    let given = [
        ("--arms", args.arms.is_some()),
        ("--delimiter", args.delimiter.is_some()),
        ("--label-column", args.label_column.is_some()),
        ("--columns", args.columns.is_some()),
        ("--long", args.long.is_some()),
        ("--minimise", args.minimise),
        ("--coords", args.coords.is_some()),
        ("--kernel", args.kernel.is_some()),
        ("--lengthscale", args.lengthscale.is_some()),
        ("--family", args.family.is_some()),
        ("--bound", args.b.is_some()),
        ("--noise-bound", args.r.is_some()),
        ("--moment", args.v.is_some()),
        ("--noise-moment", args.c.is_some()),
    ];
    if !custom {
        return match given.iter().find(|(_, g)| *g) {
            Some((flag, _)) => Err(Usage::NotCustom { flag, experiment: experiment.name }.into()),
            None => Ok(None),
        };
    }
    let arms = args.arms.clone().ok_or(Usage::NoArms)?;
    let kernel = (args.kernel.is_some() || args.lengthscale.is_some())
        .then(|| KernelChoice { name: args.kernel.unwrap_or_default(), lengthscale: args.lengthscale });
    if kernel.is_some() && args.coords.is_none() {
        return Err(Usage::KernelWithoutCoords.into());
    }
    check("--bound", args.b, Sign::Positive)?;
    check("--noise-bound", args.r, Sign::NonNegative)?;
    check("--moment", args.v, Sign::Positive)?;
    check("--noise-moment", args.c, Sign::Positive)?;
    check("--lengthscale", args.lengthscale, Sign::Positive)?;
    let overrides = Overrides { b: args.b, r: args.r, v: args.v, c: args.c };
    let read = ReadOptions {
        delimiter: args.delimiter.as_deref().map(delimiter).transpose()?,
        label_column: args.label_column.clone(),
        columns: args.columns.clone(),
        long: args.long.as_deref().map(|l| l.parse().map_err(Usage::Long)).transpose()?,
        minimise: args.minimise,
    };
    Ok(Some(ProblemFiles::new(arms, args.coords.clone(), kernel, overrides, read)?))
}

/// The delimiter `--delimiter` names: one ASCII character, or `tab`.
fn delimiter(text: &str) -> Result<char, Usage> {
    let mut chars = text.chars();
    match (text, chars.next(), chars.next()) {
        ("tab" | "\\t" | "TAB", _, _) => Ok('\t'),
        (_, Some(c), None) if c.is_ascii() && c != '"' && c != '\n' && c != '\r' => Ok(c),
        _ => Err(Usage::Delimiter(text.to_string())),
    }
}

/// A number flag, if given, must be finite and of its sign.
fn check(flag: &'static str, value: Option<f64>, sign: Sign) -> Result<(), Usage> {
    match value {
        Some(x) if !(x.is_finite() && (x > 0.0 || (sign == Sign::NonNegative && x == 0.0))) => {
            Err(Usage::Number { flag, value: x, sign })
        }
        _ => Ok(()),
    }
}

/// What `run`'s flags ask for and the run cannot use, in the flags' words.
fn request_error(e: RequestError) -> CliError {
    match e {
        RequestError::EpsNonPrivate(name) => Usage::EpsNonPrivate(name).into(),
        RequestError::EpsNone(name) => Usage::EpsNone(name).into(),
        RequestError::PriorNotTable(name) => Usage::PriorNotTable(name).into(),
        RequestError::PriorWithCoords => Usage::PriorWithCoords.into(),
        RequestError::BetaScale(value) => {
            Usage::Number { flag: "--beta-scale", value, sign: Sign::NonNegative }.into()
        }
        RequestError::UnknownNoise(name) => Usage::UnknownNoise(name).into(),
        RequestError::NoiseNotSynthetic(name) => Usage::NoiseNotSynthetic(name).into(),
        RequestError::UnboundedPrivate => Usage::UnboundedPrivate.into(),
        RequestError::Config(e) => e.into(),
    }
}

/// What `run`'s device flags ask for and the device cannot do, in the flags' words.
fn device_refusal(e: DeviceRefusal) -> CliError {
    match e {
        DeviceRefusal::ShardOverMqtt => Usage::ShardOverMqtt.into(),
        DeviceRefusal::UserBudgetOverMqtt => Usage::UserBudgetOverMqtt.into(),
        DeviceRefusal::UserBudget(value) => {
            Usage::Number { flag: "--user-budget", value, sign: Sign::Positive }.into()
        }
        DeviceRefusal::FleetOnly => Usage::FleetOnly.into(),
        DeviceRefusal::Config(e) => e.into(),
    }
}

/// One run of `experiment` at `epsilon`; its results unless it was a shard.
fn run_one(
    args: &RunArgs,
    experiment: &'static experiments::Experiment,
    epsilon: Option<ldp_core::Epsilon>,
    merge_from: &[PathBuf],
    print_table: bool,
) -> Result<Vec<AlgorithmResult>, CliError> {
    let problem = problem_files(args, experiment)?;
    let constants = constants_of(args.constants.unwrap_or(ConstantsArg::Calibrated));
    let algorithms = match (&problem, args.family) {
        (Some(files), Some(FamilyArg::Bandit)) => {
            let arms = files.report.arms.len();
            let max = bandit::policies::MAX_ARMS;
            if arms > max {
                return Err(Usage::TooManyArms { file: files.arms.clone(), arms, max }.into());
            }
            // `custom` (the one experiment with files) takes the ε given as it is.
            Some(bandit::table_learners(epsilon.is_some(), constants))
        }
        _ => None,
    };
    let noise_name = args.noise.clone();
    let request = RunRequest {
        epsilon,
        trials: args.trials,
        horizon: args.horizon,
        seed: args.seed,
        threads: args.threads,
        constants,
        beta_scale: args.beta_scale,
        prior: args.prior,
        coords: args.coords.is_some(),
        noise: noise_name.as_deref(),
        select: args.algorithms.clone().unwrap_or_default(),
        problem,
        algorithms,
        ..RunRequest::new(experiment)
    };
    let Settled { mut config, env, title } = request::settle(request).map_err(request_error)?;
    let epsilon = config.epsilon;
    let device = args.device.as_deref().map(runner::DeviceKind::parse).transpose()?;
    let on = DeviceRequest {
        device,
        routing: args.routing,
        user_budget: args.user_budget,
        sharded: args.shard.is_some(),
    };
    request::place(&mut config, experiment, on).map_err(device_refusal)?;
    let shard = match &args.shard {
        Some(text) => Shard::parse(text)?,
        None => Shard::WHOLE,
    };
    // What a shard's directory records for `merge`: every setting that changes results.
    let settings = RunArgs {
        trials: Some(config.trials),
        horizon: Some(config.horizon),
        seed: Some(config.seed),
        config: None,
        threads: None,
        out: None,
        data: None,
        shard: None,
        quiet: false,
        ..args.clone()
    };
    let out = args.out.clone().unwrap_or_else(|| {
        let dir = if shard.is_whole() {
            experiment.name.to_string()
        } else {
            format!("{}-shard{}of{}", experiment.name, shard.index, shard.count)
        };
        PathBuf::from("results").join(dir)
    });
    request::keep_ledgers_in(&mut config, &out);
    let data = args.data.clone();
    if args.verbose {
        let settings = serde_json::to_string_pretty(&config).unwrap_or_default();
        eprintln!("settings of {} ({}):\n{settings}", experiment.name, out.display());
    }
    let start = Instant::now();
    let shard_settings = if shard.is_whole() { None } else { Some(toml::to_string(&settings)?) };
    let run = Run { experiment, env, title: &title, config: &config, data: data.as_deref(), out: &out };
    let plot = PlotOptions { log_log: args.log_log };
    let mode = Mode {
        progress: !args.quiet,
        announce: true,
        shard,
        merge_from,
        plot,
        shard_settings: shard_settings.as_deref(),
        overwrite: args.overwrite,
    };
    match pipeline::run_experiment_as(&run, mode)? {
        Finished::Complete(results, files) => {
            if print_table {
                let heading = heading(experiment, args, epsilon, config.trials, config.horizon);
                let table = output::render_run(&results, &heading, args.format.unwrap_or_default());
                say!("{}", table.trim_end());
            }
            if let Some(warning) = host_sim::run::results::worse_than_uniform_warning(&results) {
                eprintln!("{warning}");
            }
            eprintln!(
                "{:.1} s; wrote {}",
                start.elapsed().as_secs_f64(),
                files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            );
            Ok(results)
        }
        Finished::Shard { jobs, total } => {
            say!(
                "shard {}/{}: {jobs} of the run's {total} jobs done in {:.1} s, in {}; when every shard is done: host-sim merge DIR... --out DIR",
                shard.index,
                shard.count,
                start.elapsed().as_secs_f64(),
                out.display()
            );
            Ok(Vec::new())
        }
    }
}

/// `merge`: the settings every shard directory recorded must agree; the run with those
/// settings is then finished from the shards' jobs alone.
fn merge(dirs: Vec<PathBuf>, out: Option<PathBuf>, data: Option<PathBuf>) -> Result<(), CliError> {
    let mut settings: Option<(PathBuf, RunArgs)> = None;
    for dir in &dirs {
        let path = dir.join(SHARD_SETTINGS);
        let text = std::fs::read_to_string(&path).map_err(file(FileOp::ReadShard, &path))?;
        let these: RunArgs = toml::from_str(&text)
            .map_err(|e| CliError::Settings { path: path.clone(), source: Box::new(e) })?;
        match &settings {
            None => settings = Some((dir.clone(), these)),
            Some((first, s)) if *s != these => {
                return Err(Usage::ShardsDiffer { first: first.clone(), other: dir.clone() }.into());
            }
            Some(_) => {}
        }
    }
    let (_, mut args) = settings.ok_or(Usage::NoShards)?;
    args.out = out;
    args.quiet = true;
    // `--data` is not recorded: the shards' machines may keep the data in other places.
    args.data = data.or_else(ldp_learn::env::data::default_dir);
    run(args, &dirs)
}

fn reproduce_all(
    quick: bool,
    data: Option<PathBuf>,
    out: Option<PathBuf>,
    report_copy: Option<PathBuf>,
    threads: Option<usize>,
    shard: Option<&str>,
    merge: &[PathBuf],
) -> Result<(), CliError> {
    let shard = shard.map(Shard::parse).transpose()?.unwrap_or(Shard::WHOLE);
    let data = data.or_else(ldp_learn::env::data::default_dir);
    let out = out.unwrap_or_else(|| {
        let name = if quick { "quick" } else { "reproduce" };
        PathBuf::from("results").join(if shard.is_whole() {
            name.to_string()
        } else {
            format!("{name}-shard{}of{}", shard.index, shard.count)
        })
    });
    let _lock = lock_out(&out)?; // each experiment's run locks its own directory below it
    let start = Instant::now();
    let options = reproduce::Options { threads, shard, merge_from: merge };
    let plan = reproduce::plan(quick);
    let outcomes = reproduce::reproduce(&plan, data.as_deref(), &out, options);
    if !shard.is_whole() {
        say!(
            "shard {}/{} of {} runs done in {:.0} s, in {}; when every shard is done: host-sim reproduce{} --merge DIR... --out DIR",
            shard.index,
            shard.count,
            plan.len(),
            start.elapsed().as_secs_f64(),
            out.display(),
            if quick { " --quick" } else { "" }
        );
        return Ok(());
    }
    let verdicts = reproduce::claims(&outcomes);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let timing = reproduce::Timing { seconds: start.elapsed().as_secs_f64(), threads, cores };
    let write = |path: &std::path::Path, prefix: &str| {
        let text = reproduce::report(&outcomes, &verdicts, quick, prefix, timing);
        std::fs::write(path, text).map_err(file(FileOp::Write, path))
    };
    let report = out.join("REPORT.md");
    write(&report, "")?;
    if let Some(copy) = &report_copy {
        // The copy carries its plots: <dir>/<stem>/<run>/regret.svg beside <dir>/<stem>.md.
        let dir = copy.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        let stem = copy
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .ok_or_else(|| Usage::ReportCopyName(copy.clone()))?;
        for o in &outcomes {
            let plot = out.join(o.planned.key).join("regret.svg");
            if plot.is_file() {
                let to = dir.join(&stem).join(o.planned.key);
                std::fs::create_dir_all(&to)
                    .and_then(|()| std::fs::copy(&plot, to.join("regret.svg")))
                    .map_err(file(FileOp::CopyTo(to.clone()), &plot))?;
            }
        }
        write(copy, &format!("{stem}/"))?;
    }
    let failed = verdicts.iter().filter(|v| v.holds == Some(false)).count();
    say!(
        "{} claims: {} hold, {failed} do not, {} could not be decided; {:.0} s; wrote {}",
        verdicts.len(),
        verdicts.iter().filter(|v| v.holds == Some(true)).count(),
        verdicts.iter().filter(|v| v.holds.is_none()).count(),
        timing.seconds,
        report.display()
    );
    Ok(())
}

fn audit(samples: u64, seed: u64, out: Option<PathBuf>, qemu: Option<u64>) -> Result<(), CliError> {
    use host_sim::audit;
    if samples < 1000 || qemu.is_some_and(|q| q < 1000) {
        return Err(Usage::AuditSamples { samples, qemu }.into());
    }
    let dir = out.unwrap_or_else(|| PathBuf::from("results").join("audit"));
    let _lock = lock_out(&dir)?;
    let alpha = 1e-6;
    eprintln!("auditing with {samples} draws per neighbour, Clopper-Pearson at alpha = {alpha} ...");
    let mut verdicts = audit::audit_all(&audit::cases(), samples, alpha, seed);
    if let Some(qemu_samples) = qemu {
        let elf = host_sim::experiments::runner::default_firmware_elf();
        if !elf.is_file() {
            return Err(runner::ConfigError::NoFirmware(elf).into());
        }
        eprintln!("auditing the firmware under QEMU with {qemu_samples} draws per neighbour ...");
        verdicts.extend(audit::audit_all(&audit::firmware_cases(&elf), qemu_samples, alpha, seed));
    }
    print!("{}", audit::table(&verdicts));
    let path = dir.join("audit.json");
    let record = serde_json::json!({
        "samples_per_neighbour": samples,
        "qemu_samples_per_neighbour": qemu,
        "alpha": alpha,
        "seed": seed,
        "verdicts": verdicts,
    });
    let json = serde_json::to_string_pretty(&record)?;
    std::fs::write(&path, json).map_err(file(FileOp::Write, &path))?;
    say!("wrote {}", path.display());
    let names = |ours: bool| -> Vec<String> {
        verdicts.iter().filter(|v| v.ours == ours && v.passed != v.ours).map(|v| v.name.clone()).collect()
    };
    let (failed, missed) = (names(true), names(false));
    if failed.is_empty() && missed.is_empty() {
        Ok(())
    } else {
        Err(Usage::AuditContrary { failed, missed, samples }.into())
    }
}

/// `host-sim live`: the learner against the user's device, until the horizon or the device's
/// budget; prints the most played action and writes live.csv, live.json and actions.csv.
fn live(args: LiveArgs) -> Result<(), CliError> {
    use host_sim::live::{self, Actions, LiveSpec};
    use ldp_link::connect::keyed_client;
    use ldp_link::transport::{QemuDevice, SerialLink, TcpLink};

    let epsilon = ldp_core::Epsilon::new(args.eps).map_err(|_| Usage::NotAnEpsilon(args.eps.to_string()))?;
    let learners = ldp_learn::optimizer::learners();
    let learner = learners
        .iter()
        .find(|a| host_sim::run::executor::names_learner(&args.learner, a.label(true)))
        .copied()
        .ok_or_else(|| Usage::UnknownLearner {
            name: args.learner.clone(),
            valid: learners.iter().map(|a| a.label(true)).collect(),
        })?;
    let actions = match (&args.coords, args.actions) {
        (Some(path), _) => Actions::file(path.clone())?,
        // clap requires one of the two.
        (None, count) => Actions::Grid { count: count.unwrap_or(0) },
    };
    check("--lengthscale", args.lengthscale, Sign::Positive)?;
    let lengthscale = match (&actions, args.lengthscale) {
        (Actions::Grid { .. }, None) => Some(ldp_learn::env::sensor::SENSOR_PRIOR_LENGTHSCALE),
        (_, l) => l,
    };
    check("--beta-scale", Some(args.beta_scale), Sign::NonNegative)?;
    let spec = LiveSpec {
        learner,
        actions,
        kernel: KernelChoice { name: args.kernel, lengthscale },
        epsilon,
        horizon: args.horizon,
        seed: args.seed,
        constants: constants_of(args.constants),
        beta_scale: args.beta_scale,
    };
    let quiet = args.quiet;
    let every = (args.horizon / 20).max(1);
    let progress = |r: &live::Round, horizon: usize| {
        if !quiet && (r.round.is_multiple_of(every) || r.round == horizon) {
            eprintln!(
                "round {}/{horizon}: action {}, released {:.4}, budget left {}",
                r.round, r.action, r.release, r.budget_remaining
            );
        }
    };
    let device = runner::DeviceKind::parse(&args.device)?;
    let session = ldp_link::fleet::session_start().map_err(CliError::System)?;
    let outcome = match device {
        runner::DeviceKind::Serial { path } => {
            let auth = runner::single_device_auth()?;
            let link =
                SerialLink::open(&path).map_err(|source| CliError::Connect { target: path, source })?;
            let key_file = runner::keys_origin(auth.device_id);
            let mut client = keyed_client(link, auth, key_file.as_deref()).starting_after(session);
            live::run(&mut client, &spec, &args.out, progress)
        }
        runner::DeviceKind::Tcp { addr } => {
            let auth = runner::single_device_auth()?;
            let link = TcpLink::connect(&addr, std::time::Duration::from_secs(5))
                .map_err(|source| CliError::Connect { target: addr, source })?;
            let key_file = runner::keys_origin(auth.device_id);
            let mut client = keyed_client(link, auth, key_file.as_deref()).starting_after(session);
            live::run(&mut client, &spec, &args.out, progress)
        }
        runner::DeviceKind::Qemu { elf } => {
            // The board of `--out`: made for a new run only, and never again once lost.
            let dir = args.out.join("device");
            let recorded = args.out.join(live::LIVE_JSON).exists();
            let _lock = claim_board(&dir, &elf, !recorded, |why| match why {
                ldp_link::fleet::NotProvisionable::NotAsked => Usage::LiveBoardGone { out: args.out.clone() },
                why => Usage::Provision { dir: dir.clone(), why },
            })?;
            let mut qemu = QemuDevice::start(&elf, &dir).map_err(CliError::System)?;
            let link = qemu.connect().map_err(CliError::System)?;
            let auth = qemu.auth().map_err(CliError::System)?;
            let key_file = dir.join(ldp_link::keys::BOARD_KEY_FILE);
            let mut client = keyed_client(link, auth, Some(&key_file)).starting_after(session);
            live::run(&mut client, &spec, &args.out, progress)
        }
        _ => return Err(Usage::LiveDevice.into()),
    }?;
    if outcome.budget_exhausted {
        say!(
            "the device's budget is exhausted after round {}: nothing more can be learned from it",
            outcome.rounds.len()
        );
    }
    say!("{}", outcome.summary());
    if let Some((action, n)) = live::most_played(&outcome.rounds) {
        say!("most played: action {action} ({n} of {} rounds)", outcome.rounds.len());
    }
    say!("wrote {}", outcome.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
    Ok(())
}

/// `fleet devices`: a device's lifetime budget without --user-budget, in reports at the
/// per-report ε (several reservation chunks of 16, so a restart does not end a device).
const DEFAULT_USER_BUDGET_REPORTS: f64 = 100.0;

/// `host-sim fleet devices`: boots the devices, serves them until stdin closes or --seconds
/// pass, prints one line per device at the start and a summary at the end.
fn fleet_devices(args: DevicesArgs) -> Result<(), CliError> {
    use host_sim::experiments::experiment_env;
    use ldp_link::mqtt::{BrokerUrl, Devices, DevicesSpec, Seeds};

    let broker = BrokerUrl::parse(&args.broker)?;
    if args.count == 0 {
        return Err(Usage::NoDevices.into());
    }
    let data = args.data.or_else(ldp_learn::env::data::default_dir);
    let (env, experiment_eps) = experiment_env(&args.experiment, args.seed, args.trial, data.as_deref())?;
    let epsilon = match args.eps {
        Some(e) => ldp_core::Epsilon::new(e).map_err(|_| Usage::NotAnEpsilon(e.to_string()))?,
        None => experiment_eps,
    };
    let user_budget = args.user_budget.unwrap_or(DEFAULT_USER_BUDGET_REPORTS * epsilon.get());
    let mut spec = DevicesSpec::new(broker.clone(), &args.dir, args.count, env, epsilon, user_budget);
    spec.first_id = args.first_id;
    spec.provision = args.provision;
    if args.simulation {
        let trial_seed = host_sim::run::settings::derive_seed(args.seed, args.trial, 0);
        spec.seeds = Seeds::Simulated { trial_seed };
    }
    let devices = Devices::open(&spec)?;
    for d in devices.status() {
        say!(
            "device {}: boot {}, budget left {} (eps {epsilon} per report), state {}",
            d.id,
            d.boot,
            d.budget_remaining,
            d.state_file.display()
        );
    }
    let keys = if args.simulation { "simulated keys from the seed (no privacy)" } else { "keys from the OS" };
    match args.seconds {
        Some(s) => say!("serving {} devices on {broker} with {keys} for {s} s", args.count),
        None => {
            say!("serving {} devices on {broker} with {keys} until stdin closes (Ctrl-D)", args.count)
        }
    }
    let stop = stop_flag(args.seconds);
    let stats = devices.serve(&stop)?;
    say!(
        "stopped: {} replies ({} late), {} connection(s), {} publishes dropped",
        stats.replies,
        stats.late_replies,
        stats.connections,
        stats.dropped_publishes
    );
    for d in &stats.devices {
        say!("device {}: budget left {}", d.id, d.budget_remaining);
    }
    Ok(())
}

/// A flag set after `seconds`, or when stdin closes.
fn stop_flag(seconds: Option<u64>) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    std::thread::spawn(move || {
        match seconds {
            Some(s) => std::thread::sleep(std::time::Duration::from_secs(s)),
            None => {
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            }
        }
        flag.store(true, Ordering::Relaxed);
    });
    stop
}

/// Claims the emulated board in `dir` for this process, for `fleet bridge --qemu` and `live
/// --device qemu` alike: holds its lock (the returned file; one board, one process) and lets
/// QEMU make a new board only if `provision` and the directory has none yet. A board that has
/// lost its state is refused whatever `provision` says: QEMU would provision a fresh one, a
/// fresh budget. `refused` says why in the caller's words.
fn claim_board(
    dir: &Path,
    elf: &Path,
    provision: bool,
    refused: impl FnOnce(ldp_link::fleet::NotProvisionable) -> Usage,
) -> Result<std::fs::File, CliError> {
    let lock = ldp_link::fleet::lock_device_dir(dir).map_err(file(FileOp::Lock, dir))?;
    let marker = dir.join(ldp_link::transport::BOARD_MARKER);
    let state = dir.join(ldp_link::transport::STATE_FILE);
    if ldp_link::fleet::may_provision(&state, &marker, provision).map_err(refused)? {
        ldp_link::fleet::write_synced(&marker, &format!("firmware = {}\n", elf.display()))
            .map_err(file(FileOp::Write, &marker))?;
    }
    Ok(lock)
}

/// `host-sim fleet bridge`: connects to the board, prints its hello, bridges it until stdin
/// closes or --seconds pass, prints a summary.
fn fleet_bridge(args: BridgeArgs) -> Result<(), CliError> {
    use ldp_link::bridge::{Bridge, BridgeStats};
    use ldp_link::mqtt::BrokerUrl;
    use ldp_link::transport::{Link, QemuDevice, SerialLink, TcpLink, build_firmware};

    fn serve<L: Link>(
        link: L,
        auth: ldp_core::wire::Auth,
        broker: &BrokerUrl,
        seconds: Option<u64>,
    ) -> Result<BridgeStats, CliError> {
        let bridge = Bridge::new(link, auth)?;
        let hello = *bridge.hello();
        say!(
            "board {} (topics ldp/{}/...): B = {}, R = {}, eps {} per report, budget left {} of {}",
            hello.device_id,
            hello.device_id,
            hello.config.b.get(),
            hello.config.r.get(),
            hello.config.policy.per_report_limit().get(),
            hello.budget_remaining,
            hello.config.policy.total().get()
        );
        match seconds {
            Some(s) => say!("bridging it to {broker} for {s} s"),
            None => say!("bridging it to {broker} until stdin closes (Ctrl-D)"),
        }
        Ok(bridge.serve(broker, &stop_flag(seconds))?)
    }

    let broker = BrokerUrl::parse(&args.broker)?;
    let stats = if let Some(elf) = args.qemu {
        let elf = match elf {
            Some(elf) => elf,
            None => {
                say!("building the firmware ...");
                build_firmware(&[])?
            }
        };
        let fresh = args.dir.is_none();
        let dir = args.dir.unwrap_or_else(|| {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            std::env::temp_dir().join(format!("ldp-board-{}-{nanos}", std::process::id()))
        });
        let _lock = claim_board(&dir, &elf, fresh || args.provision, |why| Usage::Provision {
            dir: dir.clone(),
            why,
        })?;
        say!("booting {} under QEMU in {}", elf.display(), dir.display());
        let mut qemu = QemuDevice::start(&elf, &dir).map_err(CliError::System)?;
        let link = qemu.connect().map_err(CliError::System)?;
        let auth = qemu.auth().map_err(CliError::System)?;
        serve(link, auth, &broker, args.seconds)?
    } else if let Some(path) = args.serial {
        let auth = host_sim::experiments::runner::single_device_auth()?;
        let link = SerialLink::open(&path).map_err(|source| CliError::Connect { target: path, source })?;
        serve(link, auth, &broker, args.seconds)?
    } else if let Some(addr) = args.tcp {
        let auth = host_sim::experiments::runner::single_device_auth()?;
        let link = TcpLink::connect(&addr, std::time::Duration::from_secs(10))
            .map_err(|source| CliError::Connect { target: format!("the board at {addr}"), source })?;
        serve(link, auth, &broker, args.seconds)?
    } else {
        return Err(Usage::NoBoard.into());
    };
    say!(
        "stopped: {} queries to the board ({} dropped: retained, or not one frame), {} frames from it, {} hellos, \
         {} connection(s), {} publishes dropped; budget left {}",
        stats.queries,
        stats.dropped_queries,
        stats.reports,
        stats.hellos,
        stats.connections,
        stats.dropped_publishes,
        stats.budget_remaining
    );
    Ok(())
}

/// `host-sim fleet bench`: runs the benchmark, prints the table, writes --json.
fn fleet_bench(args: BenchArgs) -> Result<(), CliError> {
    use host_sim::fleet_bench::{BenchSpec, run_bench};
    use ldp_link::mqtt::BrokerUrl;

    let broker =
        if args.broker.eq_ignore_ascii_case("none") { None } else { Some(BrokerUrl::parse(&args.broker)?) };
    let spec = BenchSpec {
        broker,
        sizes: args.devices,
        rounds: args.rounds,
        warmup: args.warmup,
        inflight: args.inflight,
        queries: args.queries,
        in_process: args.in_process,
    };
    let report = run_bench(&spec, |what| eprintln!("{what}"))?;
    print!("{}", report.table());
    if let Some(path) = args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(&path, text + "\n").map_err(file(FileOp::Write, &path))?;
        say!("wrote {}", path.display());
    }
    Ok(())
}
