//! `ldp_bo.run`: a named experiment as `host-sim run NAME` runs it (the same task, executor
//! and seeds), its results returned instead of written.
//!
//! The settings are read by the function that reads `host-sim run`'s flags
//! (`host_sim::run::request::settle`), these keywords' refusals worded here;
//! `tests/test_run.py` checks the results against the CLI's `finals.csv`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use host_sim::experiments::{self as registry, EnvKind};
use host_sim::run::checkpoint::Steps;
use host_sim::run::executor::{Executor, Job, Observer};
use host_sim::run::output::{UCB1_LABEL, table_rows};
use host_sim::run::request::{self, RequestError, RunRequest, Settled};
use host_sim::run::results::AlgorithmResult;
use host_sim::run::settings::{RunConfig, RunError};
use ldp_core::Epsilon;
use ldp_learn::env::{EnvError, Prior};
use numpy::PyArray1;
use pyo3::exceptions::PyImportError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::optimizer::{constants_name, constants_named};
use crate::{InvalidParameter, LdpError};

fn invalid(message: String) -> PyErr {
    InvalidParameter::new_err(format!("invalid setting: {message}"))
}

/// A run's refusal or failure, with host-sim's message (the data directory named as `data=`).
fn failed(e: RunError) -> PyErr {
    match e {
        RunError::Environment(EnvError::NoDataDir { file }) => LdpError::new_err(format!(
            "this experiment needs the papers' data and the repository's data/ folder was not found: pass data='DIR', the folder holding {file}"
        )),
        RunError::Config(e) => invalid(e.to_string()),
        e => LdpError::new_err(e.to_string()),
    }
}

/// Stops a run: once set, every job that ends fails the run, so no new job starts.
struct Stop(AtomicBool);

impl Observer for Stop {
    fn job_done(&self, _job: Job, _steps: &Steps, _seconds: f64, _note: Option<f64>) -> Result<(), RunError> {
        if self.0.load(Ordering::Relaxed) {
            return Err(RunError::Learner { label: "ldp_bo.run".into(), source: "interrupted".into() });
        }
        Ok(())
    }
}

/// Runs `task` on a thread of its own while this one, without the GIL, wakes every 100 ms to
/// let Python handle its signals (which it does on the main thread only): on Ctrl-C (or any
/// signal handler's exception) the run stops after the jobs running, and that exception is
/// raised.
fn run_interruptibly(
    py: Python<'_>,
    config: &RunConfig,
    task: &dyn host_sim::run::executor::Task,
) -> PyResult<Vec<AlgorithmResult>> {
    let stop = Stop(AtomicBool::new(false));
    let done = AtomicBool::new(false);
    let caller = std::thread::current();
    let mut raised = None;
    let outcome = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let results = Executor::new(config).observe(&stop).results(task);
            done.store(true, Ordering::Release);
            caller.unpark();
            results
        });
        while !done.load(Ordering::Acquire) && !worker.is_finished() {
            py.detach(|| std::thread::park_timeout(Duration::from_millis(100)));
            if raised.is_none()
                && let Err(e) = py.check_signals()
            {
                stop.0.store(true, Ordering::Relaxed);
                raised = Some(e);
            }
        }
        worker.join()
    });
    if let Some(e) = raised {
        return Err(e);
    }
    match outcome {
        Ok(results) => results.map_err(failed),
        Err(_) => Err(LdpError::new_err("the run stopped in an internal error (a panic): please report it")),
    }
}

/// The named experiments `run` takes, with one line on each: {name: description}.
#[pyfunction]
pub(crate) fn experiments(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let dict = PyDict::new(py);
    for e in registry::all().filter(|e| !matches!(e.env, EnvKind::Table)) {
        dict.set_item(e.name, e.description)?;
    }
    Ok(dict)
}

/// Run a named experiment as `host-sim run NAME` does and return its results.
///
/// The same environments, learners, seeds and executor as the command line: the final regrets
/// equal the CLI's finals.csv for the same settings, and they do not depend on `threads`. No
/// file is written. Ctrl-C stops the run at the end of the jobs running.
///
/// Parameters
/// ----------
/// experiment : str
///     The experiment, as `ldp_bo.experiments()` (and `host-sim list`) names it, e.g. "fig2a".
///     `custom` (your own table) is the CLI's (`host-sim run custom --arms FILE.csv`); with
///     your own objective, drive `ldp_bo.Optimizer`.
/// trials, horizon : int or None
///     Trials and T (default: the experiment's, 10 and 1000 for Zhou & Tan's figures).
/// seed : int or None
///     The master seed (default 0, as the CLI's).
/// eps : float or None
///     The epsilon of every report, in place of the experiment's (private experiments only).
/// constants : str
///     "calibrated" (default), "practical" or "paper".
/// threads : int or None
///     Worker threads (default: all cores); the results do not depend on it.
/// algorithms : list of str or None
///     Only these learners (any case, as the results name them); each keeps its seeds, so its
///     rows are those of the whole run.
/// noise : str or None
///     Synthetic experiments: "uniform", "student-t", "pareto" or "gaussian" (private runs
///     need bounded noise: uniform).
/// prior : str or None
///     The real-data figures: "independent" (default), "shrunk" or "empirical".
/// beta_scale : float or None
///     Multiplies every learner's beta_t (default 1).
/// data : str or os.PathLike or None
///     The folder of the papers' data sets (real-data experiments); default: data/ in the
///     working directory if it holds SHA256SUMS, else the repository the package was built from.
/// as_frame : bool
///     Return "finals" and "summary" as pandas DataFrames (needs pandas).
///
/// Returns
/// -------
/// dict with
///     "experiment", "title", "eps" (None: non-private), "trials", "horizon", "seed",
///     "constants": the settings run;
///     "learners": the rows' labels in order (the last is "uniform play", the reference);
///     "finals": the columns of finals.csv, one row per learner and trial: "algorithm" (list of
///     str), "trial" (int64), "final_regret", "vs_uniform", "vs_ucb1" (float64; NaN where the
///     CSV cell is empty), "worse_than_uniform" (bool);
///     "summary": one row per learner: "algorithm", "final_regret_mean", "final_regret_sd",
///     "final_regret_se", "vs_uniform", "vs_ucb1" (NaN where there is none),
///     "worse_than_uniform";
///     "curves": {label: {"mean": float64[T], "std": float64[T]}}, the mean cumulative regret
///     after each round and its sd over trials (regret.csv);
///     "derived": {label: {constant: value}}, the constants derived in trial 0.
///
/// Raises
/// ------
/// InvalidParameter
///     An unknown experiment, learner or noise, or a setting the experiment cannot use.
/// LdpError
///     The run failed (e.g. the data folder was not found).
///
/// Examples
/// --------
/// >>> import ldp_bo
/// >>> r = ldp_bo.run("fig2a", trials=2, horizon=100)
/// >>> r["learners"][:2]
/// ['GP-UCB', 'LDP-TGP-UCB']
#[pyfunction]
#[pyo3(signature = (
    experiment, *, trials=None, horizon=None, seed=None, eps=None, constants="calibrated", threads=None,
    algorithms=None, noise=None, prior=None, beta_scale=None, data=None, as_frame=false
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<'py>(
    py: Python<'py>,
    experiment: &str,
    trials: Option<usize>,
    horizon: Option<usize>,
    seed: Option<u64>,
    eps: Option<f64>,
    constants: &str,
    threads: Option<usize>,
    algorithms: Option<Vec<String>>,
    noise: Option<&str>,
    prior: Option<&str>,
    beta_scale: Option<f64>,
    data: Option<PathBuf>,
    as_frame: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let name = experiment;
    let experiment = registry::find(name)
        .filter(|e| !matches!(e.env, EnvKind::Table))
        .ok_or_else(|| unknown_experiment(name))?;
    let name = experiment.name;
    // The experiment's own ε unless another is given (`settle` refuses one for a non-private
    // experiment).
    let epsilon = match eps {
        None => experiment.epsilon,
        Some(e) => {
            Some(Epsilon::new(e).map_err(|_| invalid(format!("eps must be a finite number > 0, got {e}")))?)
        }
    };
    let constants = constants_named(constants)?;
    let prior = match prior {
        None => None,
        Some(p) => Some(match p.trim().to_lowercase().as_str() {
            "independent" => Prior::Independent,
            "shrunk" => Prior::Shrunk,
            "empirical" => Prior::Empirical,
            _ => return Err(invalid(format!("prior '{p}': choose independent, shrunk or empirical"))),
        }),
    };
    let request = RunRequest {
        epsilon,
        trials,
        horizon,
        seed,
        threads,
        constants,
        beta_scale,
        prior,
        noise,
        select: algorithms.unwrap_or_default(),
        ..RunRequest::new(experiment)
    };
    let Settled { config, env, title } = request::settle(request).map_err(request_error)?;
    let task = registry::task(experiment, env, &config, data.as_deref()).map_err(failed)?;
    let results = run_interruptibly(py, &config, task.as_ref())?;

    let out = PyDict::new(py);
    out.set_item("experiment", name)?;
    out.set_item("title", title)?;
    out.set_item("eps", config.epsilon.map(Epsilon::get))?;
    out.set_item("trials", config.trials)?;
    out.set_item("horizon", config.horizon)?;
    out.set_item("seed", config.seed)?;
    out.set_item("constants", constants_name(config.constants))?;
    out.set_item("learners", results.iter().map(|r| r.label.as_str()).collect::<Vec<_>>())?;
    let (finals, summary) = (finals(py, &results)?, summary(py, &results, config.trials)?);
    if as_frame {
        let pandas = py.import("pandas").map_err(|_| {
            PyImportError::new_err(
                "as_frame=True needs pandas (pip install pandas); without it run returns numpy columns",
            )
        })?;
        let frame = pandas.getattr("DataFrame")?;
        out.set_item("finals", frame.call1((finals,))?)?;
        out.set_item("summary", frame.call1((summary,))?)?;
    } else {
        out.set_item("finals", finals)?;
        out.set_item("summary", summary)?;
    }
    let curves = PyDict::new(py);
    let derived = PyDict::new(py);
    for r in &results {
        let curve = PyDict::new(py);
        curve.set_item("mean", PyArray1::from_slice(py, &r.mean))?;
        curve.set_item("std", PyArray1::from_slice(py, &r.std))?;
        curves.set_item(&r.label, curve)?;
        let constants = PyDict::new(py);
        for (k, v) in &r.constants {
            constants.set_item(k, v)?;
        }
        derived.set_item(&r.label, constants)?;
    }
    out.set_item("curves", curves)?;
    out.set_item("derived", derived)?;
    Ok(out)
}

/// What `run`'s keywords ask for and the run cannot use, in the keywords' words (the CLI's say
/// `--eps`, these `eps`).
fn request_error(e: RequestError) -> PyErr {
    invalid(match e {
        RequestError::EpsNonPrivate(name) => format!("{name} is non-private: eps does not apply"),
        // Not reached: an experiment's own eps is always passed.
        RequestError::EpsNone(name) => format!("{name} is private: give eps"),
        RequestError::PriorNotTable(name) => format!(
            "prior chooses the prior over a data table's arms: use it with fig2b, fig2c, fig2e, fig2f, fig3b or fig3c, not {name} (its prior is its kernel)"
        ),
        // Not reached: Python has no coordinates.
        RequestError::PriorWithCoords => {
            "prior and coordinates both set the prior: drop one of them".to_string()
        }
        RequestError::BetaScale(value) => format!("beta_scale must be a finite number >= 0, got {value}"),
        // Not reached: Python's run() has no batch.
        RequestError::BatchZero | RequestError::BatchAndInFlight | RequestError::BatchOwnTask(_) => {
            "batch must be at least 1, on an experiment run as one learner loop".to_string()
        }
        RequestError::UnknownNoise(name) => {
            format!("unknown noise '{name}': use uniform, student-t, pareto or gaussian")
        }
        RequestError::NoiseNotSynthetic(name) => {
            format!("noise applies to synthetic experiments only, not {name}")
        }
        RequestError::UnboundedPrivate => {
            "a private run needs bounded noise (CTL clamps to B + R): use noise='uniform'".to_string()
        }
        RequestError::Config(e) => e.to_string(),
    })
}

/// The refusal of an unknown experiment, with the nearest name when there is one.
fn unknown_experiment(name: &str) -> PyErr {
    let names = registry::all().filter(|e| !matches!(e.env, EnvKind::Table)).map(|e| e.name);
    let message = if name == "custom" {
        "custom runs on your own table: use `host-sim run custom --arms FILE.csv`, or drive ldp_bo.Optimizer with your measurements".to_string()
    } else {
        match host_sim::run::settings::closest(name, names) {
            Some(guess) => {
                format!("unknown experiment '{name}': did you mean '{guess}'? (see ldp_bo.experiments())")
            }
            None => format!("unknown experiment '{name}': see ldp_bo.experiments()"),
        }
    };
    invalid(message)
}

/// A float column from optional values (NaN where the CSV cell is empty).
fn column<'py>(py: Python<'py>, values: impl Iterator<Item = Option<f64>>) -> Bound<'py, PyArray1<f64>> {
    let values: Vec<f64> = values.map(|v| v.unwrap_or(f64::NAN)).collect();
    PyArray1::from_vec(py, values)
}

/// finals.csv's columns: one row per learner and trial, as host-sim's `output::write_all`
/// writes them.
fn finals<'py>(py: Python<'py>, results: &[AlgorithmResult]) -> PyResult<Bound<'py, PyDict>> {
    let ucb1 = results.iter().find(|r| r.label == UCB1_LABEL && !r.reference).map(|u| &u.finals[..]);
    let ucb1 = ucb1.unwrap_or_default();
    let rows = || results.iter().flat_map(|r| r.finals.iter().enumerate().map(move |(i, f)| (r, i, *f)));
    let dict = PyDict::new(py);
    dict.set_item("algorithm", rows().map(|(r, _, _)| r.label.as_str()).collect::<Vec<_>>())?;
    let trial: Vec<i64> = rows().map(|(_, i, _)| i as i64).collect();
    dict.set_item("trial", PyArray1::from_vec(py, trial))?;
    dict.set_item("final_regret", column(py, rows().map(|(_, _, f)| Some(f))))?;
    let ratio = |(r, i, f): (&AlgorithmResult, usize, f64)| match r.uniform_finals.get(i) {
        Some(&u) if u > 0.0 => Some(f / u),
        _ => None,
    };
    dict.set_item("vs_uniform", column(py, rows().map(ratio)))?;
    let worse: Vec<bool> = rows().map(|(r, _, _)| r.worse_than_uniform()).collect();
    dict.set_item("worse_than_uniform", PyArray1::from_vec(py, worse))?;
    let vs_ucb1 = |(r, i, f): (&AlgorithmResult, usize, f64)| match ucb1.get(i) {
        Some(&u) if u > 0.0 && !r.reference => Some(f / u),
        _ => None,
    };
    dict.set_item("vs_ucb1", column(py, rows().map(vs_ucb1)))?;
    Ok(dict)
}

/// The summary table's columns (the CLI's printed table, unrounded).
fn summary<'py>(py: Python<'py>, results: &[AlgorithmResult], trials: usize) -> PyResult<Bound<'py, PyDict>> {
    let rows = table_rows(results, trials);
    let dict = PyDict::new(py);
    dict.set_item("algorithm", rows.iter().map(|r| r.algorithm.as_str()).collect::<Vec<_>>())?;
    dict.set_item("final_regret_mean", column(py, rows.iter().map(|r| Some(r.final_mean))))?;
    dict.set_item("final_regret_sd", column(py, rows.iter().map(|r| Some(r.sd))))?;
    dict.set_item("final_regret_se", column(py, rows.iter().map(|r| Some(r.se))))?;
    dict.set_item("vs_uniform", column(py, rows.iter().map(|r| r.vs_uniform)))?;
    dict.set_item("vs_ucb1", column(py, rows.iter().map(|r| r.vs_ucb1)))?;
    let worse: Vec<bool> = rows.iter().map(|r| r.worse_than_uniform).collect();
    dict.set_item("worse_than_uniform", PyArray1::from_vec(py, worse))?;
    Ok(dict)
}
