//! The command line's words: every command and flag (clap), the `--config` file's format (the
//! same settings as TOML) and the flags of earlier versions still accepted.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use host_sim::run::output::TableFormat;
use ldp_learn::env::Prior;
use ldp_learn::env::custom::KernelName;
use ldp_learn::policy::Constants;
use serde::{Deserialize, Serialize};

use crate::cli::error::Usage;

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
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
        /// Seconds of one core the second pass may spend giving more trials to the rows of the
        /// claims the trials could not separate (each to the count its evidence names,
        /// cheapest first, in up to two rounds); 0: no second pass. Not with --shard or --merge: run `reproduce
        /// --out DIR` on the merged directory for it [default: 600 with --quick, 10800].
        #[arg(long, value_name = "SECONDS")]
        decide_budget: Option<f64>,
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
pub(crate) enum FleetCommand {
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
        host-sim fleet bench --broker mqtt://127.0.0.1:1883 --devices 1000 --inflight 256 --queries 10000 --learn\n  \
        host-sim fleet bench --broker none --devices 1,100 --rounds 1000 --json bench.json")]
    Bench(Box<BenchArgs>),
}

/// `host-sim fleet bridge`.
#[derive(Args)]
pub(crate) struct BridgeArgs {
    /// The broker: mqtt://HOST:PORT.
    #[arg(long)]
    pub(crate) broker: String,
    /// Boot the firmware under QEMU, from ELF [default: build firmware-example].
    #[arg(long, value_name = "ELF", num_args = 0..=1)]
    pub(crate) qemu: Option<Option<PathBuf>>,
    /// With --qemu: the emulated board's directory (its state: the same directory is the same
    /// board) [default: a fresh temporary directory, a new board].
    #[arg(long, requires = "qemu")]
    pub(crate) dir: Option<PathBuf>,
    /// With --dir: create the board if the directory has none yet (a new board, with a fresh
    /// budget). Without it a directory without a board is refused; a board that lost its state
    /// is refused always.
    #[arg(long, requires = "dir")]
    pub(crate) provision: bool,
    /// A board on this serial port (115200 8N1), e.g. /dev/ttyACM0.
    #[arg(long)]
    pub(crate) serial: Option<String>,
    /// A board's byte stream on TCP, HOST:PORT (e.g. a QEMU started by hand).
    #[arg(long)]
    pub(crate) tcp: Option<String>,
    /// Stop after this many seconds instead of when stdin closes.
    #[arg(long)]
    pub(crate) seconds: Option<u64>,
}

/// `host-sim fleet bench`.
#[derive(Args)]
pub(crate) struct BenchArgs {
    /// The broker, mqtt://HOST:PORT, or `none` to measure in memory only.
    #[arg(long)]
    pub(crate) broker: String,
    /// Fleet sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,10,100")]
    pub(crate) devices: Vec<usize>,
    /// Sequential rounds measured per size.
    #[arg(long, default_value_t = 200)]
    pub(crate) rounds: usize,
    /// Sequential rounds before measuring.
    #[arg(long, default_value_t = 20)]
    pub(crate) warmup: usize,
    /// Queries in flight at once in the throughput phase (at most N).
    #[arg(long, default_value_t = 32)]
    pub(crate) inflight: usize,
    /// Queries in the throughput phase [default: max(4 x rounds, 2 x N)].
    #[arg(long)]
    pub(crate) queries: Option<usize>,
    /// Also measure in memory (no broker) for comparison.
    #[arg(long)]
    pub(crate) in_process: bool,
    /// Also measure learning: LDP-TGP-UCB asks, --inflight queries wait at distinct devices,
    /// and every report is told to it; prints the reports told per second and the learner's
    /// share of the time.
    #[arg(long)]
    pub(crate) learn: bool,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
}

/// `host-sim fleet devices`.
#[derive(Args)]
pub(crate) struct DevicesArgs {
    /// The broker: mqtt://HOST:PORT.
    #[arg(long)]
    pub(crate) broker: String,
    /// How many devices.
    #[arg(long)]
    pub(crate) count: usize,
    /// Directory of the devices' state (one subdirectory per device id).
    #[arg(long)]
    pub(crate) dir: PathBuf,
    /// The private experiment whose environment the devices read (its trial --trial).
    #[arg(long, default_value = "device")]
    pub(crate) experiment: String,
    /// Seed of the run the environment is taken from (and, with --simulation, of the keys).
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Which trial's environment.
    #[arg(long, default_value_t = 0)]
    pub(crate) trial: u64,
    /// Per-report ε limit [default: the experiment's ε].
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) eps: Option<f64>,
    /// Each device's lifetime budget [default: 100 × the per-report ε]. A restart loses what
    /// the device had reserved ahead (up to 16 reports' worth), so budgets of a few reports
    /// do not survive restarts.
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) user_budget: Option<f64>,
    /// The first device's id (the others follow).
    #[arg(long, default_value_t = 1)]
    pub(crate) first_id: u64,
    /// Derive every key from --seed and --trial instead of the OS: reproducible, and no
    /// privacy against whoever knows the seed (a simulation, matching `--device fleet:N`).
    #[arg(long)]
    pub(crate) simulation: bool,
    /// Create the devices that have no state in --dir yet (new devices, each with a fresh
    /// budget). Without it a device without state is refused, so a lost state file never
    /// becomes a fresh budget unnoticed.
    #[arg(long)]
    pub(crate) provision: bool,
    /// Directory of the real data sets [default: the repository's data/].
    #[arg(long)]
    pub(crate) data: Option<PathBuf>,
    /// Stop after this many seconds instead of when stdin closes.
    #[arg(long)]
    pub(crate) seconds: Option<u64>,
}

/// Settings of `live`.
#[derive(Args)]
pub(crate) struct LiveArgs {
    /// The device: serial:PATH (a board), tcp:HOST:PORT (a device already listening), or
    /// qemu[:ELF] (the firmware under QEMU, its state kept in <out>/device so a resumed run
    /// meets the same emulated board; made for a new --out only, never again once lost).
    #[arg(long)]
    pub(crate) device: String,
    /// The device's actions are 0..N, at N evenly spaced points of [0, 1].
    #[arg(long, conflicts_with = "coords", required_unless_present = "coords")]
    pub(crate) actions: Option<usize>,
    /// The device's actions' points: one row per action, one column per dimension.
    #[arg(long)]
    pub(crate) coords: Option<PathBuf>,
    /// The learner, as `host-sim list` names it: GP-UCB, LDP-TGP-UCB, LDP-ATA-GP-UCB,
    /// LDP-MoMA-GP-UCB, UCB1, LDP-UCB, LDP-RSE or Robust-UCB (LDP-RSE and Robust-UCB: at most 64
    /// actions).
    #[arg(long, default_value = "GP-UCB")]
    pub(crate) learner: String,
    /// ε per report (at most the device's per-report limit).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub(crate) eps: f64,
    /// Rounds in all; a resumed run goes on up to this.
    #[arg(long, default_value_t = 100)]
    pub(crate) horizon: usize,
    /// The learner's seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// The prior's kernel over the points, `se` or `matern` (ν = 5/2).
    #[arg(long, value_enum, default_value = "se")]
    pub(crate) kernel: KernelName,
    /// The kernel's lengthscale [default: 0.2 with --actions (the device experiment's prior),
    /// the median distance between two points with --coords].
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) lengthscale: Option<f64>,
    /// Calibrated, practical or paper constants.
    #[arg(long, value_enum, default_value = "calibrated")]
    pub(crate) constants: ConstantsArg,
    /// Multiply the learner's β_t by this.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub(crate) beta_scale: f64,
    /// Output directory.
    #[arg(long, default_value = "results/live")]
    pub(crate) out: PathBuf,
    /// No progress lines.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

/// `--eps`: one ε, a comma-separated list, or `none`; in a TOML file a number, a list of
/// numbers or that text.
///
/// Not a clap `value_parser`, and neither are `--device` and `--shard` (text checked in
/// `cli::run`): clap would check them while it reads the command line, in the order they are
/// written and before anything else, so a refused command would say another thing than it
/// does: `run nosuch --eps abc` names the unknown experiment, `run custom --eps abc` the missing
/// `--arms`, and `run fig2a --shard 3/2 --eps abc` (or `--device bogus`) the ε (the device),
/// whatever the order; clap's own wording and exit code 2 aside. A TOML file's values go the
/// same way as the command line's.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct EpsArg(pub(crate) String);

impl std::str::FromStr for EpsArg {
    type Err = std::convert::Infallible;
    /// Any text: it is checked with the other settings, by `EpsArg::values`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(EpsArg(text.to_string()))
    }
}

impl EpsArg {
    /// The values: `None` for `none`, else each ε (finite and > 0).
    pub(crate) fn values(&self) -> Result<Vec<Option<ldp_core::Epsilon>>, Usage> {
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
pub(crate) enum FamilyArg {
    Gp,
    Bandit,
}

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ConstantsArg {
    Calibrated,
    Practical,
    Paper,
}

pub(crate) fn constants_of(arg: ConstantsArg) -> Constants {
    match arg {
        ConstantsArg::Calibrated => Constants::Calibrated,
        ConstantsArg::Practical => Constants::Practical,
        ConstantsArg::Paper => Constants::Paper,
    }
}

/// Settings of `run`; each may also come from a TOML file (`--config`), the command line wins.
#[derive(Args, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunArgs {
    /// Experiment name (see `host-sim list`; `custom` for your own data).
    #[serde(default)]
    pub(crate) experiment: Option<String>,
    /// TOML file with any of these settings as keys (experiment, trials, horizon, eps, seed,
    /// threads, out, data, constants, noise, device, routing, user_budget, beta_scale,
    /// batch, in_flight, algorithms, arms, delimiter, label_column, columns, long, minimise, coords, kernel,
    /// lengthscale, prior, family, bound, noise_bound, moment, noise_moment); unknown keys are
    /// refused.
    #[arg(long)]
    #[serde(skip)]
    pub(crate) config: Option<PathBuf>,
    /// Number of trials [default: the experiment's, 10 for seed 000].
    #[arg(long)]
    pub(crate) trials: Option<usize>,
    /// Horizon T [default: the experiment's, 1000 for seed 000].
    #[arg(long)]
    pub(crate) horizon: Option<usize>,
    /// ε per report, overriding the experiment's: one value, a list for a sweep (`0.5,1,2`:
    /// one run per value, each in <out>/eps<value>, and a table across them), or `none` for a
    /// non-private run of `custom`.
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) eps: Option<EpsArg>,
    /// Run only these learners (comma-separated, any case, as `host-sim list` prints them;
    /// `DP-RSE` names every grid point of a sweep's DP-RSE) [default: all].
    #[arg(long, value_delimiter = ',')]
    pub(crate) algorithms: Option<Vec<String>>,
    /// `custom`: your table of rewards, one column per arm and one row per observation (CSV,
    /// TSV, `;`- or `|`-separated, quoted or not); a leading index or time column (named e.g.
    /// year/date/index, holding text, or strictly increasing integers) labels the rows; empty,
    /// NA and NaN cells are missing observations. The arms read are listed before the run.
    #[arg(long)]
    pub(crate) arms: Option<PathBuf>,
    /// `custom`: the arms file's delimiter, one character or `tab` [default: sniffed among
    /// `,` tab `;` `|`].
    #[arg(long)]
    pub(crate) delimiter: Option<String>,
    /// `custom`: the column that labels the rows (a header name or a 1-based number), or `none`
    /// to make every column an arm [default: detected].
    #[arg(long)]
    pub(crate) label_column: Option<String>,
    /// `custom`: the arm columns, by header name or 1-based number [default: all but the label
    /// column].
    #[arg(long, value_delimiter = ',')]
    pub(crate) columns: Option<Vec<String>>,
    /// `custom`: a long-format table, one row per observation: ARM,VALUE[,TIME] name the column
    /// of the arm, of the value and optionally of the time that aligns the arms.
    #[arg(long, value_name = "ARM,VALUE[,TIME]")]
    pub(crate) long: Option<String>,
    /// `custom`: lower values are better (costs, losses, errors): every value is negated.
    #[arg(long, alias = "minimize")]
    #[serde(default)]
    pub(crate) minimise: bool,
    /// `custom`: a kernel prior over coordinates, one row per arm (in the arms file's column
    /// order, optionally led by the arm's name), one column per dimension [default: the
    /// empirical covariance of the arms' columns].
    #[arg(long)]
    pub(crate) coords: Option<PathBuf>,
    /// `custom` with --coords: the kernel, `se` or `matern` (ν = 5/2) [default: se].
    #[arg(long, value_enum)]
    pub(crate) kernel: Option<KernelName>,
    /// `custom` with --coords: the kernel's lengthscale [default: the median distance between
    /// two arms].
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) lengthscale: Option<f64>,
    /// The prior over a data table's arms (custom without --coords and the real-data figures):
    /// `independent` (K = I), `shrunk` (the table's correlation shrunk halfway to independent)
    /// or `empirical` (the table's own correlation, seed 000's recipe; from the same table an
    /// oracle a deployed learner would not have) [default: independent].
    #[arg(long, value_enum)]
    pub(crate) prior: Option<Prior>,
    /// `custom`: the learners, `gp` (GP-UCB and seed 000's three, UCB1) or `bandit` (K-armed,
    /// at most 64 arms: Robust-UCB, or LDP-RSE when private, and UCB1) [default: gp].
    #[arg(long, value_enum)]
    pub(crate) family: Option<FamilyArg>,
    /// `custom`: B, the bound on |f|, in place of the derived max |f| = 1.
    #[arg(long = "bound", allow_negative_numbers = true)]
    #[serde(rename = "bound", alias = "b")]
    pub(crate) b: Option<f64>,
    /// `custom`: R, the bound on |noise|, in place of the largest one in the data.
    #[arg(long = "noise-bound", allow_negative_numbers = true)]
    #[serde(rename = "noise_bound", alias = "r")]
    pub(crate) r: Option<f64>,
    /// `custom`: v, the bound on E y² of what the learner sees, in place of the derived one.
    #[arg(long = "moment", allow_negative_numbers = true)]
    #[serde(rename = "moment", alias = "v")]
    pub(crate) v: Option<f64>,
    /// `custom`: c, the bound on E (y − f)² of what the learner sees, in place of the derived one.
    #[arg(long = "noise-moment", allow_negative_numbers = true)]
    #[serde(rename = "noise_moment", alias = "c")]
    pub(crate) c: Option<f64>,
    /// Master seed [default: 0].
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Worker threads [default: all cores]; results do not depend on it.
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    /// Output directory [default: results/<experiment>].
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Directory of the real data sets (light sensor, stocks) [default: the repository's data/].
    #[arg(long)]
    pub(crate) data: Option<PathBuf>,
    /// Calibrated constants (one documented rule for every experiment, docs/constants.md), the
    /// original authors' practical ones, or the theorems' [default: calibrated].
    #[arg(long, value_enum)]
    pub(crate) constants: Option<ConstantsArg>,
    /// Noise of a synthetic experiment: uniform (U[-1,1]), student-t (ν = 3), pareto (centred,
    /// shape 3, scale 1) or gaussian (σ = 1) [default: the paper's for that experiment].
    #[arg(long)]
    pub(crate) noise: Option<String>,
    /// The device answering a private run: in-process (default), qemu (the firmware under
    /// QEMU, one per trial), qemu:ELF, serial:PATH (a real board), tcp:HOST:PORT (a device
    /// already running, e.g. `cargo run` in firmware-example/), fleet:N (N simulated users in
    /// this process, each with its own budget; each round asks one of them), or
    /// mqtt://HOST:PORT (the devices on an MQTT broker: host-sim fleet devices, bridged boards).
    #[arg(long)]
    pub(crate) device: Option<String>,
    /// How a fleet's rounds are routed to its devices with budget left [default: round-robin].
    #[arg(long, value_enum)]
    pub(crate) routing: Option<ldp_link::fleet::Routing>,
    /// Lifetime budget (eps) of each device of an in-process fleet [default: eps * ceil(T/N),
    /// an even share of the rounds].
    #[arg(long)]
    pub(crate) user_budget: Option<f64>,
    /// Multiply every algorithm's β_t by this (exploration scale) [default: 1].
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) beta_scale: Option<f64>,
    /// Each learner asks this many actions at once and is told their reports only when all
    /// are in (GP-BUCB for the GP learners, pending counts for the K-armed ones) [default: 1].
    #[arg(long)]
    pub(crate) batch: Option<usize>,
    /// Keep this many queries outstanding: the learner asks whenever fewer are, and is told each
    /// report as it arrives, oldest first (each chosen as if the outstanding ones had been told
    /// their posterior mean) [default: 1].
    #[arg(long)]
    pub(crate) in_flight: Option<usize>,
    /// Run only shard i of n (0 <= i < n) of the (trial, learner) jobs, e.g. on n machines or as a
    /// Slurm job array (--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT with --array=0-(n-1));
    /// `host-sim merge` combines the shards' --out directories [default --out:
    /// results/<experiment>-shard<i>of<n>].
    #[arg(long)]
    #[serde(skip)]
    pub(crate) shard: Option<String>,
    /// The summary table printed at the end: text, markdown or json [default: text].
    #[arg(long, value_enum)]
    pub(crate) format: Option<TableFormat>,
    /// Draw the regret plots with both axes logarithmic.
    #[arg(long)]
    #[serde(default)]
    pub(crate) log_log: bool,
    /// Do not show a progress bar or the arms read.
    #[arg(short, long)]
    #[serde(skip)]
    pub(crate) quiet: bool,
    /// Replace the results of a run with other settings in --out (its jobs, settings and
    /// run.json) instead of refusing.
    #[arg(long)]
    #[serde(skip)]
    pub(crate) overwrite: bool,
    /// Also print the settings the run uses (constants, algorithms, device, …) before it
    /// starts, as run.json records them.
    #[arg(short, long, conflicts_with = "quiet")]
    #[serde(skip)]
    pub(crate) verbose: bool,
}

impl RunArgs {
    /// These settings, each filled from `file` where not given here (the flags `config`, `shard`
    /// and `quiet` come from the command line only).
    pub(crate) fn or(self, file: RunArgs) -> RunArgs {
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
            batch: self.batch.or(file.batch),
            in_flight: self.in_flight.or(file.in_flight),
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
pub(crate) const OLD_FLAGS: [(&str, &str); 4] =
    [("--b", "--bound"), ("--r", "--noise-bound"), ("--v", "--moment"), ("--c", "--noise-moment")];

/// The command line with [`OLD_FLAGS`] spelled as now (`--b 2` and `--b=2` alike).
pub(crate) fn modern_flags(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
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
