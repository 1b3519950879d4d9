//! A learner against a user's own device (`host-sim live`): the device's means are unknown, so
//! there is no regret to compute. The learner chooses an action, the device releases its
//! privatised reading, and every round is kept, so that a stopped run (a killed process, a lost
//! link, an exhausted budget) resumes where it stopped and no release the device paid for is
//! thrown away.
//!
//! What the learner knows is public: the actions' points (`--actions N`: N evenly spaced points
//! of [0, 1]; `--coords FILE`: the user's points), a kernel prior over them, and the device's
//! hello (B, R, its per-report ε limit and remaining budget). Its constants follow the same
//! rule as every experiment's ([`crate::experiments::runner::problem_from`]).
//!
//! Files in the output directory:
//! - `live.json`: the settings, the device's hello and the learner's derived constants. A run
//!   started again on the same directory must have the same settings and device (only the
//!   horizon may change, e.g. to go on for more rounds), and the device no more budget left
//!   than the last recorded round says (a device never regains budget: one that has is a lost
//!   board made again, or another device); it replays the recorded rounds into the learner,
//!   checking that it chooses the recorded actions again, and continues.
//! - `live.csv`: one row per release, written and flushed as it arrives: `round, action,
//!   release, epsilon_effective, budget_remaining`.
//! - `live.svg`, `live.png`: the action played in each round.
//! - `actions.csv`: per action, the number of releases, their mean (an unbiased estimate of
//!   f(action) while readings lie within B + R) and its standard error.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use ldp_core::wire::{Hello, Refusal};
use ldp_core::{Epsilon, TruncationLevel};
use nalgebra::DMatrix;
use serde::Serialize;

use crate::experiments::runner::{RunConfig, RunError, problem_from};
use crate::run::checkpoint::{CheckpointError, OutLock};
use crate::run::files::{OutputError, write_whole};
use crate::run::plot::{LivePlot, write_live_plot};
use ldp_learn::env::RewardBounds;
use ldp_learn::env::custom::{KernelChoice, kernel_prior};
use ldp_learn::env::table::{TableError, TableProblem, fnv1a, read_points};
use ldp_learn::optimizer::{Optimizer, OptimizerError};
use ldp_learn::policy::Constants;
use ldp_learn::policy::{AlgorithmSpec, PolicyError};
use ldp_link::client::{LinkError, WireClient};
use ldp_link::transport::Link;

/// The file of every release.
pub const LIVE_CSV: &str = "live.csv";
/// The file of the settings and the device.
pub const LIVE_JSON: &str = "live.json";
/// The per-action summary.
pub const ACTIONS_CSV: &str = "actions.csv";
const CSV_HEADER: &str = "round,action,release,epsilon_effective,budget_remaining";

/// Where the actions are: `n` evenly spaced points of [0, 1], or a user's file of points.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Actions {
    /// Action a at a/(n − 1).
    Grid {
        /// Number of actions (≥ 2).
        count: usize,
    },
    /// One row per action, in action order (`env::table::read_points`).
    File {
        /// The file.
        path: PathBuf,
        /// FNV-1a of its bytes (another file is another run).
        fnv: String,
    },
}

impl Actions {
    /// The points of the actions.
    pub fn points(&self) -> Result<Vec<Vec<f64>>, LiveError> {
        let points = match self {
            Self::Grid { count } => ldp_learn::env::unit_grid(*count),
            Self::File { path, .. } => read_points(path, None).map_err(LiveError::Points)?,
        };
        if points.len() < 2 {
            return Err(LiveError::TooFewActions(points.len()));
        }
        Ok(points)
    }

    /// A user's file of points, fingerprinted now.
    pub fn file(path: PathBuf) -> Result<Self, LiveError> {
        let bytes = std::fs::read(&path).map_err(|e| {
            LiveError::Points(TableError {
                path: path.clone(),
                problem: TableProblem::Unreadable(e.to_string()),
            })
        })?;
        Ok(Self::File { fnv: fnv1a(&bytes), path })
    }
}

/// A live run's settings.
#[derive(Clone, Debug, Serialize)]
pub struct LiveSpec {
    /// The learner.
    pub learner: AlgorithmSpec,
    /// The actions.
    pub actions: Actions,
    /// The prior over the actions' points.
    pub kernel: KernelChoice,
    /// ε per report.
    #[serde(serialize_with = "epsilon_value")]
    pub epsilon: Epsilon,
    /// Rounds in all (a resumed run goes on up to this).
    pub horizon: usize,
    /// The learner's seed.
    pub seed: u64,
    /// The constants' rule.
    #[serde(serialize_with = "constants_name")]
    pub constants: Constants,
    /// Multiplies β_t.
    pub beta_scale: f64,
}

fn constants_name<S: serde::Serializer>(c: &Constants, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(c.name())
}

fn epsilon_value<S: serde::Serializer>(e: &Epsilon, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(e.get())
}

/// The public part of a device's hello that a live run depends on.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct DeviceRecord {
    /// The device's id.
    pub id: u64,
    /// B.
    pub b: f64,
    /// R.
    pub r: f64,
    /// The largest ε it releases at per report.
    pub per_report_limit: f64,
    /// Its lifetime budget.
    pub total: f64,
}

impl DeviceRecord {
    fn of(hello: &Hello) -> Self {
        let c = &hello.config;
        Self {
            id: hello.device_id,
            b: c.b.get(),
            r: c.r.get(),
            per_report_limit: c.policy.per_report_limit().get(),
            total: c.policy.total().get(),
        }
    }
}

/// One round of a live run, as `live.csv` keeps it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Round {
    /// 1-based.
    pub round: usize,
    /// The action played.
    pub action: usize,
    /// The device's release.
    pub release: f64,
    /// The ε the release actually cost (≤ ε).
    pub epsilon_effective: f64,
    /// The device's budget left after it.
    pub budget_remaining: f64,
}

/// How a live run ended.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveOutcome {
    /// Every round, the resumed ones first.
    pub rounds: Vec<Round>,
    /// Rounds replayed from an earlier session.
    pub resumed: usize,
    /// Whether it stopped early because the device's budget is exhausted.
    pub budget_exhausted: bool,
    /// The files written.
    pub files: Vec<PathBuf>,
}

impl LiveOutcome {
    /// The ε the device spent in this session (the resumed rounds' not counted): 0 without a
    /// new round (summed from +0, where an empty float sum gives −0).
    pub fn spent(&self) -> f64 {
        self.rounds[self.resumed.min(self.rounds.len())..].iter().fold(0.0, |s, r| s + r.epsilon_effective)
    }

    /// The line `host-sim live` ends with: rounds, resumed rounds, ε spent and budget left.
    pub fn summary(&self) -> String {
        format!(
            "{} rounds ({} resumed), {:.3} eps spent in this session, budget left {}",
            self.rounds.len(),
            self.resumed,
            self.spent(),
            self.rounds.last().map_or(f64::NAN, |r| r.budget_remaining)
        )
    }
}

/// Why a live run stopped with an error. Every round released before it is in `live.csv`.
#[derive(Debug)]
#[non_exhaustive]
pub enum LiveError {
    /// The link to the device failed.
    Link(LinkError),
    /// The device refused a query for a reason other than its budget.
    Refused {
        /// The round.
        round: usize,
        /// The action asked for.
        action: usize,
        /// The refusal.
        refusal: Refusal,
    },
    /// ε is above what the device releases at per report.
    AboveDeviceLimit {
        /// ε asked for.
        requested: f64,
        /// The device's limit.
        limit: f64,
    },
    /// The points file cannot be used.
    Points(TableError),
    /// Fewer than two actions.
    TooFewActions(usize),
    /// The learner's problem cannot be set up (prior, constants).
    Problem(RunError),
    /// The learner failed.
    Policy(PolicyError),
    /// The output directory holds a live run with other settings or another device.
    OtherRun {
        /// Its `live.json`.
        path: PathBuf,
        /// The first setting that differs.
        setting: &'static str,
    },
    /// The device has more budget left than `live.csv` recorded after the run's last round: a
    /// device never regains budget, so this is not the device (the state) the run used — a
    /// board whose lost state was provisioned again, or another device with its id.
    BudgetRegained {
        /// The last recorded round.
        round: usize,
        /// The budget left after it, as recorded.
        recorded: f64,
        /// The budget left that the device says it has now.
        now: f64,
    },
    /// The device's session (boot number) is below the highest one `live.json` recorded from
    /// it: boot numbers never go back, so this is a recorded hello or a device whose state was
    /// rolled back.
    SessionWentBack {
        /// The highest session recorded.
        recorded: u64,
        /// The session the device says it is in now.
        now: u64,
    },
    /// `live.csv` cannot be read back.
    Record {
        /// The file.
        path: PathBuf,
        /// Its line (1-based).
        line: usize,
    },
    /// Replaying the recorded rounds, the learner chose another action than it did then.
    Diverged {
        /// The round.
        round: usize,
        /// The recorded action.
        recorded: usize,
        /// The action chosen now.
        chosen: usize,
    },
    /// An action does not fit the wire's 32-bit action.
    ActionOutOfWire(usize),
    /// An output file could not be written.
    Output(OutputError),
    /// The output directory could not be locked: another run is writing there.
    OutDir(CheckpointError),
    /// A file could not be written or read.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

impl std::fmt::Display for LiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Link(e) => {
                write!(f, "{e} (every release so far is kept: run the same command again to resume)")
            }
            Self::Refused { round, action, refusal: Refusal::Malformed } => write!(
                f,
                "the device refused action {action} at round {round} as malformed: it is probably outside the device's actions (check --actions or --coords)"
            ),
            Self::Refused { round, action, refusal } => {
                write!(f, "the device refused action {action} at round {round}: {refusal}")
            }
            Self::AboveDeviceLimit { requested, limit } => write!(
                f,
                "the device releases at most eps = {limit} per report: give --eps {limit} or less (asked for {requested})"
            ),
            Self::Points(e) => write!(f, "{e}"),
            Self::TooFewActions(n) => write!(f, "a live run needs at least 2 actions, got {n}"),
            Self::Problem(e) => write!(f, "{e}"),
            Self::Policy(e) => write!(f, "{e}"),
            Self::OtherRun { path, setting } => write!(
                f,
                "{} records a live run with another {setting}: give another --out, or delete that directory to start afresh",
                path.display()
            ),
            Self::BudgetRegained { round, recorded, now } => write!(
                f,
                "the device says it has {now} eps left, but {recorded} was left after round {round} of the recorded run: a device never regains budget, so this is not the device (or the state) that run used; releasing to it would spend a budget the record says is gone: give another --out"
            ),
            Self::SessionWentBack { recorded, now } => write!(
                f,
                "the device says it is in boot {now}, but this run already talked to it in boot {recorded}: a device's boot number never goes back, so this is a recorded hello or a device whose state was rolled back; not releasing to it: give another --out"
            ),
            Self::Record { path, line } => write!(
                f,
                "{} line {line} is not a round of a live run: restore the file, or give another --out",
                path.display()
            ),
            Self::Diverged { round, recorded, chosen } => write!(
                f,
                "replaying the recorded rounds, the learner chose action {chosen} at round {round} where it had chosen {recorded}: the settings or the program changed; give another --out"
            ),
            Self::ActionOutOfWire(a) => write!(f, "action {a} does not fit the wire's 32-bit action"),
            Self::Output(e) => write!(f, "{e}"),
            Self::OutDir(e) => write!(f, "{e}"),
            Self::Io { path, source } => write!(f, "cannot write {}: {source} (check --out)", path.display()),
        }
    }
}

impl std::error::Error for LiveError {}

/// What `live.json` holds.
#[derive(Serialize)]
struct Record<'a> {
    settings: &'a LiveSpec,
    device: DeviceRecord,
    learner_constants: Vec<(String, f64)>,
    /// Replies the learner dropped in this session, by reason (`ldp_link::client::Dropped`):
    /// written when the session ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    dropped_frames: Option<ldp_link::client::Dropped>,
    /// The highest session (boot number) the learner has seen from the device: a resumed run
    /// refuses a device in a lower one (`WireClient::sessions_from`).
    highest_session: u64,
}

/// What is compared when a run resumes: everything but the horizon.
#[derive(serde::Deserialize)]
struct Recorded {
    settings: serde_json::Value,
    device: DeviceRecord,
    /// Absent in a record written before wire format 4.
    #[serde(default)]
    highest_session: u64,
}

/// The learner for `spec`'s actions on a device with `hello`'s B and R.
fn learner(spec: &LiveSpec, prior: DMatrix<f64>, hello: &Hello) -> Result<Optimizer, LiveError> {
    let (b, r) = (hello.config.b.get(), hello.config.r.get());
    // v and c are derived from B, R and ε for privatised reports; these raw ones go unused.
    let bounds = RewardBounds { b, r: Some(r), alpha: 1.0, v: b * b + r * r, c: r * r };
    let config = RunConfig {
        horizon: spec.horizon,
        epsilon: Some(spec.epsilon),
        beta_scale: spec.beta_scale,
        constants: spec.constants,
        ..RunConfig::default()
    };
    let problem = problem_from(prior, bounds, &config).map_err(LiveError::Problem)?;
    Optimizer::from_problem(spec.learner, &problem, spec.constants, spec.seed).map_err(learner_error)
}

/// What the learner refused as [`LiveError::Policy`]; the rest (a tell out of turn: a bug in
/// this loop) as the problem's.
fn learner_error(e: OptimizerError) -> LiveError {
    match e {
        OptimizerError::Report(e) => LiveError::Policy(e),
        other => LiveError::Problem(crate::experiments::runner::learner_error(other)),
    }
}

/// Runs `spec` against the device behind `client`, into `out`, calling `progress` after each
/// round. Stops after the horizon or when the device's budget is exhausted.
pub fn run<L: Link>(
    client: &mut WireClient<L>,
    spec: &LiveSpec,
    out: &Path,
    mut progress: impl FnMut(&Round, usize),
) -> Result<LiveOutcome, LiveError> {
    // Before the device is asked anything: one run per output directory.
    let _lock = OutLock::acquire(out).map_err(LiveError::OutDir)?;
    let hello = client.hello().map_err(LiveError::Link)?;
    let limit = hello.config.policy.per_report_limit().get();
    if spec.epsilon.get() > limit {
        return Err(LiveError::AboveDeviceLimit { requested: spec.epsilon.get(), limit });
    }
    let points = spec.actions.points()?;
    let prior = kernel_prior(&points, spec.kernel).map_err(|problem| match &spec.actions {
        Actions::File { path, .. } => LiveError::Points(TableError { path: path.clone(), problem }),
        Actions::Grid { .. } => LiveError::Points(TableError { path: PathBuf::from("--actions"), problem }),
    })?;
    let mut opt = learner(spec, prior, &hello)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| LiveError::Io { path, source }
    };
    std::fs::create_dir_all(out).map_err(io(out))?;

    let json = out.join(LIVE_JSON);
    let csv = out.join(LIVE_CSV);
    let device = DeviceRecord::of(&hello);
    let rounds = match std::fs::read_to_string(&json) {
        Ok(text) => {
            check_same_run(&text, spec, device, &json)?;
            if let Ok(Recorded { highest_session, .. }) = serde_json::from_str::<Recorded>(&text) {
                client.raise_session_floor(highest_session);
                if hello.session < highest_session {
                    return Err(LiveError::SessionWentBack { recorded: highest_session, now: hello.session });
                }
            }
            let rounds = read_rounds(&csv)?;
            // The device's budget only goes down: more than the record left is another state.
            // (Half a nano-eps, the device's unit, absorbs nothing real: the row and the hello
            // carry the same f64.)
            if let Some(last) = rounds.last()
                && hello.budget_remaining > last.budget_remaining + 0.5e-9
            {
                return Err(LiveError::BudgetRegained {
                    round: last.round,
                    recorded: last.budget_remaining,
                    now: hello.budget_remaining,
                });
            }
            rounds
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(LiveError::Io { path: json, source: e }),
    };
    // Replay: the learner must choose what it chose then.
    for r in &rounds {
        let chosen = opt.ask();
        if chosen != r.action {
            return Err(LiveError::Diverged { round: r.round, recorded: r.action, chosen });
        }
        opt.tell(r.action, r.release).map_err(learner_error)?;
    }
    let mut record = Record {
        settings: spec,
        device,
        learner_constants: opt.constants().into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        dropped_frames: None,
        highest_session: client.highest_session(),
    };
    let text = serde_json::to_string_pretty(&record)
        .map_err(|e| LiveError::Io { path: json.clone(), source: std::io::Error::other(e) })?;
    write_whole(&json, text.as_bytes()).map_err(LiveError::Output)?;

    let mut file = open_csv(&csv, rounds.is_empty())?;
    let resumed = rounds.len();
    let mut outcome =
        LiveOutcome { rounds, resumed, budget_exhausted: false, files: vec![json.clone(), csv.clone()] };
    for round in resumed + 1..=spec.horizon {
        let action = opt.ask();
        let wire_action = u32::try_from(action).map_err(|_| LiveError::ActionOutOfWire(action))?;
        let wire_round = u32::try_from(round).unwrap_or(u32::MAX);
        let level = opt.device_level().map(TruncationLevel::new).transpose().map_err(|_| {
            LiveError::Policy(PolicyError::InvalidSetting("its truncation level is not finite and > 0"))
        })?;
        let report = match client.query(wire_round, wire_action, spec.epsilon, level) {
            Ok(Ok(report)) => report,
            Ok(Err(Refusal::BudgetExhausted { .. })) => {
                outcome.budget_exhausted = true;
                break;
            }
            Ok(Err(refusal)) => return Err(LiveError::Refused { round, action, refusal }),
            Err(e) => return Err(LiveError::Link(e)),
        };
        let r = Round {
            round,
            action,
            release: report.release.value(),
            epsilon_effective: report.epsilon_effective,
            budget_remaining: report.budget_remaining,
        };
        writeln!(
            file,
            "{},{},{},{},{}",
            r.round, r.action, r.release, r.epsilon_effective, r.budget_remaining
        )
        .and_then(|()| file.flush())
        .map_err(io(&csv))?;
        opt.tell(action, r.release).map_err(learner_error)?;
        outcome.rounds.push(r);
        progress(&r, spec.horizon);
    }
    record.dropped_frames = Some(client.dropped);
    record.highest_session = client.highest_session();
    let text = serde_json::to_string_pretty(&record)
        .map_err(|e| LiveError::Io { path: json.clone(), source: std::io::Error::other(e) })?;
    write_whole(&json, text.as_bytes()).map_err(LiveError::Output)?;
    let actions: Vec<usize> = outcome.rounds.iter().map(|r| r.action).collect();
    let title =
        format!("{} on device {:#x}, eps = {}", spec.learner.label(true), device.id, spec.epsilon.get());
    let plot = LivePlot { title: &title, actions: &actions, count: points.len() };
    outcome.files.extend(write_live_plot(out, &plot).map_err(LiveError::Output)?);
    let summary = out.join(ACTIONS_CSV);
    write_whole(&summary, action_table(&outcome.rounds, points.len()).as_bytes())
        .map_err(LiveError::Output)?;
    outcome.files.push(summary);
    Ok(outcome)
}

/// Refuses a directory whose `live.json` records other settings or another device.
fn check_same_run(text: &str, spec: &LiveSpec, device: DeviceRecord, path: &Path) -> Result<(), LiveError> {
    let other = |setting| LiveError::OtherRun { path: path.to_path_buf(), setting };
    let recorded: Recorded = serde_json::from_str(text).map_err(|_| other("format"))?;
    let mut now = serde_json::to_value(spec).map_err(|_| other("format"))?;
    let mut then = recorded.settings;
    for settings in [&mut now, &mut then] {
        if let Some(map) = settings.as_object_mut() {
            map.remove("horizon");
        }
    }
    if recorded.device.id != device.id {
        return Err(other("device"));
    }
    if recorded.device != device {
        return Err(other("device configuration (B, R or budget policy)"));
    }
    if let (Some(now), Some(then)) = (now.as_object(), then.as_object()) {
        for (key, value) in now {
            if then.get(key) != Some(value) {
                return Err(other(setting_name(key)));
            }
        }
        if then.len() != now.len() {
            return Err(other("set of settings"));
        }
    }
    Ok(())
}

fn setting_name(key: &str) -> &'static str {
    match key {
        "learner" => "learner",
        "actions" => "set of actions (--actions or --coords)",
        "kernel" => "kernel",
        "epsilon" => "eps",
        "seed" => "seed",
        "constants" => "constants",
        "beta_scale" => "beta scale",
        _ => "setting",
    }
}

/// The rounds recorded in `path` (none if it does not exist). A last line cut short by a kill
/// is dropped (its release was never given to the learner).
fn read_rounds(path: &Path) -> Result<Vec<Round>, LiveError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(LiveError::Io { path: path.to_path_buf(), source: e }),
    };
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    if complete.len() < text.len() {
        // Cut the partial line off, so the next row starts on a line of its own.
        let file = std::fs::OpenOptions::new().write(true).open(path);
        file.and_then(|f| f.set_len(complete.len() as u64 + 1))
            .map_err(|source| LiveError::Io { path: path.to_path_buf(), source })?;
    }
    let mut rounds = Vec::new();
    for (i, line) in complete.lines().enumerate().skip(1) {
        let bad = || LiveError::Record { path: path.to_path_buf(), line: i + 1 };
        let cells: Vec<&str> = line.split(',').collect();
        let [round, action, release, eff, left] = cells.as_slice() else { return Err(bad()) };
        let number = |cell: &str| cell.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(bad);
        let r = Round {
            round: round.parse().map_err(|_| bad())?,
            action: action.parse().map_err(|_| bad())?,
            release: number(release)?,
            epsilon_effective: number(eff)?,
            budget_remaining: number(left)?,
        };
        if r.round != rounds.len() + 1 {
            return Err(bad());
        }
        rounds.push(r);
    }
    Ok(rounds)
}

fn open_csv(path: &Path, fresh: bool) -> Result<std::fs::File, LiveError> {
    let io = |source| LiveError::Io { path: path.to_path_buf(), source };
    if fresh {
        let mut file = std::fs::File::create(path).map_err(io)?;
        writeln!(file, "{CSV_HEADER}").map_err(io)?;
        Ok(file)
    } else {
        std::fs::OpenOptions::new().append(true).open(path).map_err(io)
    }
}

/// Per action: releases, their mean and its standard error (empty cells for fewer than 2).
pub fn action_table(rounds: &[Round], actions: usize) -> String {
    let mut by_action: Vec<Vec<f64>> = vec![Vec::new(); actions];
    for r in rounds {
        if let Some(v) = by_action.get_mut(r.action) {
            v.push(r.release);
        }
    }
    let mut out = String::from("action,releases,mean_release,standard_error\n");
    for (a, v) in by_action.iter().enumerate() {
        let n = v.len() as f64;
        let (mean, se) = match v.len() {
            0 => (String::new(), String::new()),
            1 => (v[0].to_string(), String::new()),
            _ => {
                let mean = v.iter().sum::<f64>() / n;
                let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
                (mean.to_string(), (var / n).sqrt().to_string())
            }
        };
        out += &format!("{a},{},{mean},{se}\n", v.len());
    }
    out
}

/// The action played most often (the first on ties), and how often.
pub fn most_played(rounds: &[Round]) -> Option<(usize, usize)> {
    let mut counts: Vec<usize> = Vec::new();
    for r in rounds {
        if counts.len() <= r.action {
            counts.resize(r.action + 1, 0);
        }
        counts[r.action] += 1;
    }
    counts.iter().enumerate().fold(None, |best, (a, &n)| match best {
        Some((_, m)) if m >= n => best,
        _ if n > 0 => Some((a, n)),
        _ => best,
    })
}
