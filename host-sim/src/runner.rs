//! The experiment runner (argmin's `Executor`): owns the loop over rounds, trials and
//! algorithms, the seeds, the parallelism and the outputs.
//!
//! Seeds: trial `i` of a run with seed `s` uses `derive(s, i, ·)` for its environment instance
//! (shared by all algorithms of the trial, so comparisons are paired), its world noise, the
//! device's ChaCha20 and the policy's own randomness. Jobs (trial × algorithm) run in parallel
//! with rayon and are collected in order, so results are bit-identical for any thread count.

use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use ldp_core::truncation::ldp_second_moment;
use ldp_core::{Bound, Epsilon, LaplaceMechanism};
use rayon::prelude::*;
use serde::Serialize;

use crate::bo::calibrated;
use crate::bo::gp_ucb::Constants;
use crate::bo::{AlgorithmSpec, PolicyError, Privacy, Problem};
use crate::checkpoint::{Checkpoint, CheckpointError};
use crate::device::{Device, DeviceError, InProcessDevice, RawDevice, WireDevice};
use crate::env::Environment;
use crate::gp::FiniteCovariance;
use crate::transport::{Link, QemuDevice, SerialLink, TcpLink, WireClient};

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
    /// Parses `in-process`, `qemu`, `qemu:ELF`, `serial:PATH` or `tcp:HOST:PORT`.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.split_once(':') {
            None if text == "in-process" => Ok(Self::InProcess),
            None if text == "qemu" => Ok(Self::Qemu { elf: default_firmware_elf() }),
            Some(("qemu", elf)) => Ok(Self::Qemu { elf: PathBuf::from(elf) }),
            Some(("serial", path)) if !path.is_empty() => Ok(Self::Serial { path: path.to_string() }),
            Some(("tcp", addr)) if addr.contains(':') => Ok(Self::Tcp { addr: addr.to_string() }),
            _ => Err(format!(
                "unknown --device '{text}': use in-process, qemu, qemu:ELF, serial:PATH or tcp:HOST:PORT"
            )),
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
    /// non-private run.
    pub epsilon: Option<f64>,
    /// Central DP: the device passes raw rewards and the learner privatises what it computes
    /// (seed 004 Alg. 1, 3; seed 002). Local DP (the default): the device privatises.
    pub central: bool,
    /// λ of the GP surrogate with practical or paper constants (calibrated constants set λ to
    /// the observed noise variance instead, see [`calibrated`]).
    pub lambda: f64,
    /// δ of the β formulas.
    pub delta: f64,
    /// Multiplies every β_t (1 = the constants as given); see [`Problem::beta_scale`].
    pub beta_scale: f64,
    /// Calibrated (the default), practical or paper constants.
    #[serde(serialize_with = "ser_constants")]
    pub constants: Constants,
    /// The algorithms to compare.
    pub algorithms: Vec<AlgorithmSpec>,
    /// The device for private runs.
    pub device: DeviceKind,
}

impl RunConfig {
    /// ε of the device's reports: `epsilon` in the local model, `None` in the central model
    /// (the device passes raw rewards) or a non-private run.
    fn local_epsilon(&self) -> Option<f64> {
        if self.central { None } else { self.epsilon }
    }
}

fn ser_constants<S: serde::Serializer>(c: &Constants, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(c.name())
}

/// Why a run stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum RunError {
    /// The environment could not be built.
    Environment(String),
    /// The device refused or could not be configured.
    Device(DeviceError),
    /// A policy failed.
    Policy(PolicyError),
    /// A bad setting (trials or horizon zero, bad threads).
    Config(String),
    /// The checkpoint of a resumable run could not be read or written.
    Checkpoint(CheckpointError),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Environment(e) => write!(f, "environment: {e}"),
            Self::Device(e) => write!(f, "{e}"),
            Self::Policy(e) => write!(f, "learner: {e}"),
            Self::Config(e) => write!(f, "{e}"),
            Self::Checkpoint(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<CheckpointError> for RunError {
    fn from(e: CheckpointError) -> Self {
        Self::Checkpoint(e)
    }
}

/// An identity for a run's results: FNV-1a over the experiment, its description and every
/// setting that changes results (not the thread count, which does not).
pub fn run_id(experiment: &str, description: &str, config: &RunConfig) -> String {
    let mut c = config.clone();
    c.threads = None;
    let text = format!("{experiment}\n{description}\n{}", serde_json::to_string(&c).unwrap_or_default());
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// SplitMix64 finaliser: a seed per (master, a, b), well mixed.
pub fn derive_seed(master: u64, a: u64, b: u64) -> u64 {
    let mut z = master ^ a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The learner's public problem for an environment, privatised at `epsilon` or not.
pub fn problem_for(env: &dyn Environment, config: &RunConfig) -> Result<Problem, RunError> {
    let bounds = env.bounds();
    let covariance = FiniteCovariance::new(env.prior_covariance().clone())
        .map_err(|e| RunError::Environment(e.to_string()))?;
    let (v, c, privacy) = match config.local_epsilon() {
        None => (bounds.v, bounds.c, None),
        Some(eps) => {
            let r = bounds.r.ok_or(RunError::Device(DeviceError::UnboundedNoise))?;
            let cfg = |e| RunError::Device(DeviceError::Config(e));
            let (eps_v, b, rb) = (
                Epsilon::new(eps).map_err(cfg)?,
                Bound::new(bounds.b).map_err(cfg)?,
                Bound::new(r).map_err(cfg)?,
            );
            let mechanism = LaplaceMechanism::ctl(eps_v, b, rb).map_err(cfg)?;
            let v = ldp_second_moment(b, rb, eps_v);
            let c = r * r + 8.0 * (bounds.b + r).powi(2) / (eps * eps);
            (v, c, Some(Privacy { epsilon: eps, laplace_scale: mechanism.noise_scale() }))
        }
    };

    let mut problem = Problem {
        covariance,
        b: bounds.b,
        noise_bound: bounds.r,
        alpha: bounds.alpha,
        v,
        c,
        horizon: config.horizon,
        lambda: config.lambda,
        delta: config.delta,
        privacy,
        central_epsilon: if config.central { config.epsilon } else { None },
        beta_scale: config.beta_scale,
    };
    if config.constants == Constants::Calibrated {
        problem.lambda = calibrated::observed_variance(&problem);
    }
    Ok(problem)
}

/// Cumulative regret after each round of one trial of one algorithm.
pub fn run_trial(
    env: &dyn Environment,
    algorithm: &AlgorithmSpec,
    config: &RunConfig,
    trial_seed: u64,
    algo_index: u64,
) -> Result<Vec<f64>, RunError> {
    let problem = problem_for(env, config)?;
    let mut policy = (algorithm.build)(&problem, config.constants, derive_seed(trial_seed, algo_index, 3))
        .map_err(RunError::Policy)?;
    let world_seed = derive_seed(trial_seed, algo_index, 1);
    let device_seed = derive_seed(trial_seed, algo_index, 2);
    let mut device: Box<dyn Device + '_> = match (config.local_epsilon(), &config.device) {
        (Some(eps), DeviceKind::InProcess) => Box::new(
            InProcessDevice::new(env, eps, config.horizon, world_seed, device_seed)
                .map_err(RunError::Device)?,
        ),
        (Some(eps), DeviceKind::Qemu { elf }) => {
            Box::new(QemuWire::start(env, elf, eps, trial_seed, algo_index)?)
        }
        (Some(eps), DeviceKind::Serial { path }) => {
            let link =
                SerialLink::open(path).map_err(|e| RunError::Device(DeviceError::Link(e.to_string())))?;
            Box::new(checked_wire_device(env, link, eps)?)
        }
        (Some(eps), DeviceKind::Tcp { addr }) => {
            let link = TcpLink::connect(addr, std::time::Duration::from_secs(5))
                .map_err(|e| RunError::Device(DeviceError::Link(format!("cannot connect to {addr}: {e}"))))?;
            Box::new(checked_wire_device(env, link, eps)?)
        }
        (None, DeviceKind::InProcess) => Box::new(RawDevice::new(env, world_seed)),
        (None, _) => return Err(RunError::Config("a non-private run has no device: drop --device".into())),
    };
    let best = env.best_mean();
    let mut total = 0.0;
    let mut curve = Vec::with_capacity(config.horizon);
    for _ in 0..config.horizon {
        let arm = policy.select();
        let report = device.query(arm, policy.device_level()).map_err(RunError::Device)?;
        policy.observe(arm, report).map_err(RunError::Policy)?;
        total += best - env.mean(arm);
        curve.push(total);
    }
    Ok(curve)
}

/// Per-algorithm results of a run.
#[derive(Clone, Debug, Serialize)]
pub struct AlgorithmResult {
    /// The algorithm's label (with `LDP-` for private runs).
    pub label: String,
    /// Mean cumulative regret after each round.
    pub mean: Vec<f64>,
    /// Sample standard deviation across trials after each round.
    pub std: Vec<f64>,
    /// Final cumulative regret of each trial.
    pub finals: Vec<f64>,
    /// Wall-clock seconds spent in this algorithm's trials (summed over threads).
    pub seconds: f64,
    /// Final expected regret of uniform play in the same trials (same f, same order), empty
    /// when the run has no uniform reference.
    pub uniform_finals: Vec<f64>,
    /// `true` for the uniform-play reference row itself (drawn dashed, never judged).
    pub reference: bool,
    /// The constants the learner derived in trial 0 (the problem's B, R, v, c, λ, 𝓛 and the
    /// policy's own, see [`Policy::constants`](crate::bo::Policy::constants)), for `run.json`.
    pub constants: Vec<(String, f64)>,
}

impl AlgorithmResult {
    /// Mean final regret over the trials.
    pub fn final_mean(&self) -> f64 {
        mean(&self.finals)
    }

    /// Mean final regret divided by uniform play's over the same trials (`None` without a
    /// uniform reference or when uniform play has no regret).
    pub fn vs_uniform(&self) -> Option<f64> {
        let u = mean(&self.uniform_finals);
        (!self.uniform_finals.is_empty() && u > 0.0).then(|| self.final_mean() / u)
    }
}

fn mean(x: &[f64]) -> f64 {
    if x.is_empty() { 0.0 } else { x.iter().sum::<f64>() / x.len() as f64 }
}

/// Label of the uniform-play reference row.
pub const UNIFORM_LABEL: &str = "uniform play";

/// Expected cumulative regret of playing an arm uniformly at random every round, exactly:
/// t·(max f − mean f) after round t.
pub fn uniform_curve(env: &dyn Environment, horizon: usize) -> Vec<f64> {
    let n = env.num_arms().max(1);
    let average = (0..n).map(|a| env.mean(a)).sum::<f64>() / n as f64;
    let gap = env.best_mean() - average;
    (1..=horizon).map(|t| t as f64 * gap).collect()
}

/// Runs every (trial, algorithm) pair. `make_env(trial_seed)` builds the trial's environment.
pub fn run(
    config: &RunConfig,
    make_env: &(dyn Fn(u64) -> Result<Box<dyn Environment>, String> + Sync),
    progress: bool,
    checkpoint: Option<&Checkpoint>,
) -> Result<Vec<AlgorithmResult>, RunError> {
    let private = config.epsilon.is_some();
    let labels = config.algorithms.iter().map(|a| a.label(private).to_string()).collect();
    let pool = JobPool { stack_bytes: None, progress };
    run_jobs(config, labels, pool, |trial, a| {
        if let Some(done) = checkpoint.and_then(|c| c.get(trial, a)) {
            return Ok(done.clone());
        }
        let start = Instant::now();
        let trial_seed = derive_seed(config.seed, trial as u64, 0);
        let env = make_env(trial_seed).map_err(RunError::Environment)?;
        let curve = run_trial(env.as_ref(), &config.algorithms[a], config, trial_seed, a as u64)?;
        let seconds = start.elapsed().as_secs_f64();
        if let Some(c) = checkpoint {
            c.record(trial, a, &curve, seconds)?;
        }
        Ok((curve, seconds))
    })
    .and_then(|mut results| {
        for (a, r) in results.iter_mut().enumerate() {
            r.constants = derived_constants(config, make_env, a)?;
        }
        with_uniform(config, results, |trial| {
            let env = make_env(derive_seed(config.seed, trial as u64, 0)).map_err(RunError::Environment)?;
            Ok(uniform_curve(env.as_ref(), config.horizon))
        })
    })
}

/// The problem's and algorithm `a`'s policy's constants in trial 0.
fn derived_constants(
    config: &RunConfig,
    make_env: &(dyn Fn(u64) -> Result<Box<dyn Environment>, String> + Sync),
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

/// Appends the uniform-play reference row, `uniform(trial)` being trial's exact curve, and
/// records its finals in every row.
pub fn with_uniform(
    config: &RunConfig,
    mut results: Vec<AlgorithmResult>,
    uniform: impl Fn(usize) -> Result<Vec<f64>, RunError>,
) -> Result<Vec<AlgorithmResult>, RunError> {
    let curves = (0..config.trials).map(uniform).collect::<Result<Vec<_>, _>>()?;
    let mut reference = aggregate(UNIFORM_LABEL.to_string(), &curves, 0.0);
    reference.reference = true;
    reference.uniform_finals = reference.finals.clone();
    for r in &mut results {
        r.uniform_finals = reference.finals.clone();
    }
    results.push(reference);
    Ok(results)
}

/// How [`run_jobs`] runs its jobs.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobPool {
    /// Stack size of each worker thread (`None`: rayon's default).
    pub stack_bytes: Option<usize>,
    /// Show a progress bar.
    pub progress: bool,
}

/// Runs `job(trial, index)` for every trial of `config` and every index of `labels` on
/// `config.threads` threads, and aggregates each index's curves (in trial order, so the result
/// does not depend on the thread count) under its label. A job returns its regret curve and
/// the seconds it took. The first error (in job order) is returned.
pub fn run_jobs(
    config: &RunConfig,
    labels: Vec<String>,
    pool: JobPool,
    job: impl Fn(usize, usize) -> Result<(Vec<f64>, f64), RunError> + Sync,
) -> Result<Vec<AlgorithmResult>, RunError> {
    if config.trials == 0 || config.horizon == 0 {
        return Err(RunError::Config("trials and horizon must be at least 1".into()));
    }
    let mut threads = rayon::ThreadPoolBuilder::new().num_threads(config.threads.unwrap_or(0));
    if let Some(bytes) = pool.stack_bytes {
        threads = threads.stack_size(bytes);
    }
    let threads = threads
        .build()
        .map_err(|e| RunError::Config(format!("cannot start {:?} threads: {e}", config.threads)))?;
    let jobs: Vec<(usize, usize)> =
        (0..config.trials).flat_map(|t| (0..labels.len()).map(move |a| (t, a))).collect();
    let bar = if pool.progress { ProgressBar::new(jobs.len() as u64) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {pos}/{len} trial×algorithm runs, eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let outcomes: Vec<Result<(Vec<f64>, f64), RunError>> = threads.install(|| {
        jobs.par_iter()
            .map(|&(trial, a)| {
                let outcome = job(trial, a);
                bar.inc(1);
                outcome
            })
            .collect()
    });
    bar.finish_and_clear();
    let mut curves: Vec<Vec<Vec<f64>>> = vec![Vec::new(); labels.len()];
    let mut seconds = vec![0.0; labels.len()];
    for (&(_, a), outcome) in jobs.iter().zip(outcomes) {
        let (curve, secs) = outcome?;
        seconds[a] += secs;
        curves[a].push(curve);
    }
    Ok(labels
        .into_iter()
        .zip(curves)
        .zip(seconds)
        .map(|((label, curves), seconds)| aggregate(label, &curves, seconds))
        .collect())
}

/// Aggregates equal-length regret curves (one per trial): mean and sample standard deviation
/// per round, and each trial's final value.
pub fn aggregate(label: String, curves: &[Vec<f64>], seconds: f64) -> AlgorithmResult {
    let n = curves.len() as f64;
    let horizon = curves.first().map_or(0, Vec::len);
    let mut mean = Vec::with_capacity(horizon);
    let mut std = Vec::with_capacity(horizon);
    for t in 0..horizon {
        let m = curves.iter().map(|c| c[t]).sum::<f64>() / n;
        let var =
            if n > 1.0 { curves.iter().map(|c| (c[t] - m).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
        mean.push(m);
        std.push(var.sqrt());
    }
    let finals = curves.iter().filter_map(|c| c.last().copied()).collect();
    AlgorithmResult {
        label,
        mean,
        std,
        finals,
        seconds,
        uniform_finals: Vec::new(),
        reference: false,
        constants: Vec::new(),
    }
}

/// A wire device after the handshake, with its public configuration checked against what the
/// learner assumes (B and R of the environment).
fn checked_wire_device<L: Link>(
    env: &dyn Environment,
    link: L,
    epsilon: f64,
) -> Result<WireDevice<L>, RunError> {
    let mut client = WireClient::new(link);
    let hello = client.hello().map_err(|e| RunError::Device(DeviceError::Link(e.to_string())))?;
    let bounds = env.bounds();
    let (b, r) = (hello.config.b.get(), hello.config.r.get());
    if b != bounds.b || Some(r) != bounds.r {
        return Err(RunError::Config(format!(
            "the device reports B = {b}, R = {r} but the experiment assumes B = {}, R = {:?}: run the device experiment",
            bounds.b, bounds.r
        )));
    }
    WireDevice::new(client, epsilon).map_err(RunError::Device)
}

/// The firmware under QEMU for one trial: a new device in its own working directory, provisioned
/// and seeded from OS entropy (never from the trial seed: the learner must not know the noise,
/// so QEMU runs are not reproducible; the in-process device is).
struct QemuWire {
    device: WireDevice<TcpLink>,
    _qemu: QemuDevice,
}

impl QemuWire {
    fn start(
        env: &dyn Environment,
        elf: &Path,
        epsilon: f64,
        trial_seed: u64,
        algo: u64,
    ) -> Result<Self, RunError> {
        let link_err = |e: std::io::Error| RunError::Device(DeviceError::Link(e.to_string()));
        if !elf.exists() {
            return Err(RunError::Config(format!(
                "no firmware at {}: build it with (cd firmware-example && cargo build --release)",
                elf.display()
            )));
        }
        let dir =
            std::env::temp_dir().join(format!("ldp-qemu-{}-{trial_seed:016x}-{algo}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut qemu = QemuDevice::start(elf, &dir).map_err(link_err)?;
        let link = qemu.connect().map_err(link_err)?;
        Ok(Self { device: checked_wire_device(env, link, epsilon)?, _qemu: qemu })
    }
}

impl Device for QemuWire {
    fn query(&mut self, arm: usize, level: Option<f64>) -> Result<f64, DeviceError> {
        self.device.query(arm, level)
    }
}
