//! `ldp_bo.Optimizer`: host-sim's ask/tell learner ([`ldp_learn::optimizer`]) from Python.
//!
//! Nothing here privatises or sees a raw value: the optimiser reads the reports it is told, and
//! the reports must be what the device released.

use std::sync::{Mutex, MutexGuard};

use ldp_learn::env::custom::{KernelChoice, KernelName};
use ldp_learn::optimizer::{self as ask_tell, Domain, OptimizerError, Settings};
use ldp_learn::policy::Constants;
use ldp_learn::policy::PolicyError;
use nalgebra::DMatrix;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt};

use crate::{InvalidParameter, InvalidValue, LdpError, NonFiniteValue, NotAsked};

/// The constants mode called `name` (any case): calibrated, practical or paper.
pub(crate) fn constants_named(name: &str) -> PyResult<Constants> {
    match name.trim().to_lowercase().as_str() {
        "calibrated" => Ok(Constants::Calibrated),
        "practical" => Ok(Constants::Practical),
        "paper" => Ok(Constants::Paper),
        _ => Err(InvalidParameter::new_err(format!(
            "invalid setting: constants '{name}': choose calibrated (the default), practical or paper"
        ))),
    }
}

/// The name of a constants mode, as `constants=` takes it.
pub(crate) fn constants_name(constants: Constants) -> &'static str {
    match constants {
        Constants::Calibrated => "calibrated",
        Constants::Practical => "practical",
        Constants::Paper => "paper",
    }
}

/// The optimiser's refusal as the exception of its kind, with host-sim's message.
fn refused(e: OptimizerError) -> PyErr {
    let message = e.to_string();
    match e {
        OptimizerError::UnknownLearner { .. } | OptimizerError::Setting(_) => {
            InvalidParameter::new_err(format!("invalid setting: {message}"))
        }
        OptimizerError::NotAsked { .. } => NotAsked::new_err(message),
        OptimizerError::Report(PolicyError::NonFiniteReport) => NonFiniteValue::new_err(message),
        OptimizerError::Report(
            PolicyError::ReportOutOfRange
            | PolicyError::ArmOutOfRange { .. }
            | PolicyError::UnexpectedArm { .. },
        ) => InvalidValue::new_err(message),
        OptimizerError::Report(PolicyError::InvalidSetting(_) | PolicyError::ArmCount { .. }) => {
            InvalidParameter::new_err(format!("invalid setting: {message}"))
        }
        OptimizerError::Report(_) => LdpError::new_err(message),
    }
}

/// A 2-D array of finite floats, one row per action, from an array-like; with `column`, a 1-D
/// one is a column (n points of dimension 1).
fn read_rows(value: &Bound<'_, PyAny>, what: &str, column: bool) -> PyResult<Vec<Vec<f64>>> {
    let numpy = value.py().import("numpy")?;
    if value.is_instance(&numpy.getattr("ma")?.getattr("MaskedArray")?)? {
        return Err(InvalidValue::new_err(format!(
            "{what} is a numpy masked array: give a plain float array (its masked entries would be read as numbers)"
        )));
    }
    let array = numpy.call_method1("asarray", (value,)).map_err(|_| {
        InvalidValue::new_err(format!(
            "{what} cannot be read as an array of numbers (a ragged list, or an object numpy cannot convert): give a 2-D float array, one row per action"
        ))
    })?;
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    if !matches!(kind.as_str(), "f" | "i" | "u") {
        return Err(InvalidValue::new_err(format!(
            "{what} must be an array of floats or ints, not of numpy dtype kind '{kind}'"
        )));
    }
    let mut array = numpy.call_method1("asarray", (array, "float64"))?;
    let ndim: usize = array.getattr("ndim")?.extract()?;
    if ndim == 1 && column {
        array = array.call_method1("reshape", (-1, 1))?;
    } else if ndim != 2 {
        let shape = if column { "a 1-D array (points on a line) or a 2-D array" } else { "a 2-D array" };
        return Err(InvalidValue::new_err(format!(
            "{what} must be {shape}, one row per action; it has {ndim} dimensions"
        )));
    }
    let array: PyReadonlyArray2<'_, f64> = array.extract()?;
    let view = array.as_array();
    if let Some(((i, j), _)) = view.indexed_iter().find(|(_, x)| !x.is_finite()) {
        return Err(NonFiniteValue::new_err(format!(
            "{what}[{i}, {j}] is NaN or infinite: give finite numbers"
        )));
    }
    Ok(view.outer_iter().map(|row| row.to_vec()).collect())
}

/// A count of arms: an int >= 1, not a bool.
fn read_arms(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    let wrong =
        || InvalidParameter::new_err("invalid setting: arms must be an int >= 1 (the number of actions)");
    if value.is_instance_of::<PyBool>() {
        return Err(wrong());
    }
    match value.extract::<usize>() {
        Ok(k) if k >= 1 => Ok(k),
        _ => Err(wrong()),
    }
}

/// A learner driven by ask/tell: it asks for an action, you measure it on the device and tell
/// it the device's release.
///
/// The optimiser never privatises and never sees a raw value unless you pass one: the reports
/// you tell it must be what the device released at eps (`Reporter.report`, or your own
/// device's reports). A raw measurement passed to `tell` is used as given and is not private.
/// eps, bound and noise_bound are public settings the learner derives its constants from; they
/// must be the device's.
///
/// Every constant comes from these public settings and the domain (its kernel or prior), never
/// from the objective. With the same settings, seed and reports, the actions are those of the
/// Rust `ldp_learn::optimizer::Optimizer`.
///
/// Parameters
/// ----------
/// points : array_like of float, shape (n, d) or (n,), optional
///     The actions' points, one row per action (a 1-D array: n points on a line). The prior is
///     `kernel` over them. Give exactly one of points, arms and covariance.
/// algorithm : str
///     The learner, as `ldp_bo.learners()` names it (any case; the "LDP-" prefix optional):
///     LDP-TGP-UCB (default), GP-UCB, LDP-ATA-GP-UCB, LDP-MoMA-GP-UCB, UCB1, and the K-armed
///     LDP-UCB, LDP-RSE and Robust-UCB (at most 64 actions). With eps=None the names lose
///     "LDP-" (`ldp_bo.learners(private=False)`).
/// eps : float or None
///     The epsilon of every report (> 0), or None when the reports are raw rewards (a
///     non-private run).
/// bound : float
///     B > 0, a bound on |f| over the actions (the device's B).
/// noise_bound : float
///     R >= 0, a bound on the raw noise |y - f| (the device's R).
/// horizon : int
///     T >= 1, the number of reports you will tell (the learner's beta schedule and truncation
///     levels use it).
/// constants : str
///     "calibrated" (default, docs/constants.md), "practical" or "paper".
/// seed : int or None
///     The learner's seed (its random choices and the order it breaks ties in), an int in
///     [0, 2^64); None draws one from the operating system (the `seed` attribute says which).
///     It is not the device's: it makes no noise and needs no secrecy.
/// kernel : str or None
///     With points: "se" (squared exponential, default) or "matern" (nu = 5/2).
/// lengthscale : float or None
///     With points: the kernel's lengthscale (default: the median distance between two points).
/// arms : int, keyword only
///     k actions with no known structure (independent arms, identity prior).
/// covariance : array_like of float, shape (k, k), keyword only
///     Your own prior covariance over k actions (symmetric, non-negative diagonal).
///
/// Actions are indices 0..n-1 into the domain: `ask()` returns an int, `tell(action, report)`
/// takes it back, `recommend()` returns one; `points[action]` is its point.
///
/// Raises
/// ------
/// InvalidParameter
///     An unknown algorithm (the message lists the names), an invalid setting, or a domain the
///     learner cannot use.
/// InvalidValue, NonFiniteValue
///     points or covariance are not a 2-D array of finite numbers.
///
/// Examples
/// --------
/// >>> import numpy as np, ldp_bo
/// >>> points = np.linspace(0, 1, 30)
/// >>> opt = ldp_bo.Optimizer(points, "ldp-tgp-ucb", eps=1.0, bound=1.0, noise_bound=1.0, horizon=50, seed=3)
/// >>> dev = ldp_bo.Reporter.for_reports(50, 1.0, bound=1.0, noise_bound=1.0)
/// >>> for _ in range(50):
/// ...     i = opt.ask()
/// ...     y = 1 - abs(points[i] - 0.7)            # your measurement (with its noise)
/// ...     opt.tell(i, dev.report(y, eps=1.0))     # the device's release, never y itself
/// >>> best = points[opt.recommend()]
#[pyclass(module = "ldp_bo")]
pub(crate) struct Optimizer {
    inner: Mutex<ask_tell::Optimizer>,
    points: Option<Vec<Vec<f64>>>,
    actions: usize,
    settings: Settings,
}

impl Optimizer {
    fn lock(&self) -> PyResult<MutexGuard<'_, ask_tell::Optimizer>> {
        self.inner.lock().map_err(|_| {
            LdpError::new_err(
                "this Optimizer stopped in an internal error and cannot be used: make a new one (and please report it)",
            )
        })
    }

    /// `action` as an index of the domain: an int (or numpy integer) in 0..n, not a bool.
    fn action(&self, action: &Bound<'_, PyAny>) -> PyResult<usize> {
        let n = self.actions;
        let integral = (action.is_instance_of::<PyInt>() && !action.is_instance_of::<PyBool>()) || {
            let numpy = action.py().import("numpy")?;
            action.is_instance(&numpy.getattr("integer")?)?
        };
        if !integral {
            let name = action.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "an object".into());
            return Err(InvalidValue::new_err(format!(
                "the action is of type {name}, not an int: tell the index ask() returned (0 to {}); nothing was told",
                n - 1
            )));
        }
        match action.extract::<usize>() {
            Ok(i) if i < n => Ok(i),
            _ => Err(InvalidValue::new_err(format!(
                "action {} is not one of the domain's {n} actions (0 to {}): tell the index ask() returned; nothing was told",
                action.str().map(|s| s.to_string()).unwrap_or_default(),
                n - 1
            ))),
        }
    }
}

#[pymethods]
impl Optimizer {
    #[new]
    #[pyo3(signature = (
        points=None, algorithm="ldp-tgp-ucb", *, eps=Some(1.0), bound=1.0, noise_bound=1.0, horizon=1000,
        constants="calibrated", seed=None, kernel=None, lengthscale=None, arms=None, covariance=None
    ), text_signature = "(points=None, algorithm='ldp-tgp-ucb', *, eps=1.0, bound=1.0, noise_bound=1.0, horizon=1000, constants='calibrated', seed=None, kernel=None, lengthscale=None, arms=None, covariance=None)")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        points: Option<&Bound<'_, PyAny>>,
        algorithm: &str,
        eps: Option<f64>,
        bound: f64,
        noise_bound: f64,
        horizon: usize,
        constants: &str,
        seed: Option<&Bound<'_, PyAny>>,
        kernel: Option<&str>,
        lengthscale: Option<f64>,
        arms: Option<&Bound<'_, PyAny>>,
        covariance: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let seed = match crate::read_seed(seed)? {
            Some(seed) => seed,
            None => {
                let mut bytes = [0u8; 8];
                getrandom::fill(&mut bytes).map_err(|e| {
                    LdpError::new_err(format!(
                        "no entropy from the operating system for the learner's seed: {e}"
                    ))
                })?;
                u64::from_le_bytes(bytes)
            }
        };
        let settings = Settings {
            epsilon: eps,
            bound,
            noise_bound,
            horizon,
            constants: constants_named(constants)?,
            seed,
        };
        if (kernel.is_some() || lengthscale.is_some()) && points.is_none() {
            return Err(InvalidParameter::new_err(
                "invalid setting: kernel and lengthscale make the prior over points: give points, or drop them",
            ));
        }
        let (domain, rows) = match (points, arms, covariance) {
            (Some(points), None, None) => {
                let name = match kernel.map(|k| k.trim().to_lowercase()) {
                    None => KernelName::Se,
                    Some(k) if k == "se" => KernelName::Se,
                    Some(k) if k == "matern" => KernelName::Matern,
                    Some(_) => {
                        return Err(InvalidParameter::new_err(format!(
                            "invalid setting: kernel '{}': choose se (squared exponential) or matern (nu = 5/2)",
                            kernel.unwrap_or_default()
                        )));
                    }
                };
                if let Some(l) = lengthscale
                    && !(l.is_finite() && l > 0.0)
                {
                    return Err(InvalidParameter::new_err(format!(
                        "invalid setting: lengthscale must be a finite number > 0, got {l}"
                    )));
                }
                let rows = read_rows(points, "points", true)?;
                if let Some(d) = rows.first().map(Vec::len)
                    && d == 0
                {
                    return Err(InvalidValue::new_err(
                        "points have no coordinates (shape (n, 0)): give one row of d >= 1 numbers per action",
                    ));
                }
                let kernel = KernelChoice { name, lengthscale };
                (Domain::Points { points: rows.clone(), kernel }, Some(rows))
            }
            (None, Some(arms), None) => (Domain::Arms(read_arms(arms)?), None),
            (None, None, Some(covariance)) => {
                let rows = read_rows(covariance, "covariance", false)?;
                let (k, cols) = (rows.len(), rows.first().map_or(0, Vec::len));
                if k != cols {
                    return Err(InvalidValue::new_err(format!(
                        "covariance must be square (k x k, one row and column per action), got {k} x {cols}"
                    )));
                }
                (Domain::Covariance(DMatrix::from_fn(k, k, |i, j| rows[i][j])), None)
            }
            _ => {
                return Err(InvalidParameter::new_err(
                    "invalid setting: give exactly one domain: points (one row per action), arms=k (independent actions) or covariance=K (your prior over the actions)",
                ));
            }
        };
        let n = match &domain {
            Domain::Points { points, .. } => points.len(),
            Domain::Arms(k) => *k,
            Domain::Covariance(m) => m.nrows(),
            // Not built above: a box is driven by `BoxOptimizer`, not yet offered in Python.
            Domain::Box { .. } => 0,
        };
        let inner = ask_tell::Optimizer::new(algorithm, domain, settings).map_err(|e| {
            let raw = eps.is_none() && algorithm.trim().to_lowercase().starts_with("ldp-");
            match e {
                OptimizerError::UnknownLearner { .. } if raw => InvalidParameter::new_err(format!(
                    "invalid setting: {e} (eps=None: the learners see raw rewards and their names have no LDP-)"
                )),
                // A K-armed learner built for a fixed range of arm counts.
                OptimizerError::Report(PolicyError::ArmCount { max, .. }) if n > max => {
                    InvalidParameter::new_err(format!(
                        "invalid setting: {algorithm} runs on at most {max} actions and the domain has {n}: choose a GP learner (GP-UCB, LDP-TGP-UCB, ...), which shares what it learns between actions"
                    ))
                }
                e => refused(e),
            }
        })?;
        let actions = inner.pulls().len();
        Ok(Self { inner: Mutex::new(inner), points: rows, actions, settings })
    }

    /// The action to measure next: an index into the domain (0 to n-1; `points[i]` is its
    /// point). Asked again before `tell`, it returns the same action.
    fn ask(&self, py: Python<'_>) -> PyResult<usize> {
        py.detach(|| self.lock().map(|mut inner| inner.ask()))
    }

    /// Tell the learner the device's release for the action `ask()` returned.
    ///
    /// `action` is the int `ask()` returned; `report` the device's release at eps for it (a
    /// float). Raises NotAsked for another action than the one asked for (or before any ask),
    /// InvalidValue for an action outside the domain or a report that is not a real number,
    /// NonFiniteValue for a NaN or infinite report; the learner is unchanged then.
    fn tell(&self, py: Python<'_>, action: &Bound<'_, PyAny>, report: &Bound<'_, PyAny>) -> PyResult<()> {
        let action = self.action(action)?;
        let report = crate::real(report, "the report", "nothing was told")?;
        py.detach(|| self.lock()?.tell(action, report).map_err(refused))
    }

    /// The action to recommend now: the most measured one (ties: the higher mean report, then
    /// the lower index). Action 0 before any report.
    fn recommend(&self) -> PyResult<usize> {
        Ok(self.lock()?.recommend())
    }

    /// The learner's name, e.g. "LDP-TGP-UCB".
    #[getter]
    fn algorithm(&self) -> PyResult<&'static str> {
        Ok(self.lock()?.name())
    }

    /// The number of actions n.
    #[getter]
    fn n_actions(&self) -> usize {
        self.actions
    }

    /// The actions' points (a copy, shape (n, d)), or None for a domain of arms or a covariance.
    #[getter]
    fn points<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        let Some(rows) = &self.points else { return Ok(None) };
        let d = rows.first().map_or(0, Vec::len);
        let array = Array2::from_shape_fn((rows.len(), d), |(i, j)| rows[i][j]);
        Ok(Some(array.into_pyarray(py)))
    }

    /// How often each action has been told a report (uint64, length n).
    #[getter]
    fn pulls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        Ok(PyArray1::from_slice(py, self.lock()?.pulls()))
    }

    /// The number of reports told so far.
    #[getter]
    fn told(&self) -> PyResult<u64> {
        Ok(self.lock()?.pulls().iter().sum())
    }

    /// The truncation level the learner asks the device to apply before its noise for the
    /// action just asked (LDP-RSE: pass it to `Reporter.report(..., level=...)`), or None for
    /// the device's clamp to bound + noise_bound.
    #[getter]
    fn device_level(&self) -> PyResult<Option<f64>> {
        Ok(self.lock()?.device_level())
    }

    /// The constants the learner derived from the settings, by name (as run.json lists them).
    #[getter]
    fn constants<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in self.lock()?.constants() {
            dict.set_item(name, value)?;
        }
        Ok(dict)
    }

    /// The settings: eps, bound, noise_bound, horizon, constants and seed (the one drawn when
    /// seed=None was given).
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = &self.settings;
        let dict = PyDict::new(py);
        dict.set_item("eps", s.epsilon)?;
        dict.set_item("bound", s.bound)?;
        dict.set_item("noise_bound", s.noise_bound)?;
        dict.set_item("horizon", s.horizon)?;
        dict.set_item("constants", constants_name(s.constants))?;
        dict.set_item("seed", s.seed)?;
        Ok(dict)
    }

    /// The learner's seed (the one drawn when seed=None was given).
    #[getter]
    fn seed(&self) -> u64 {
        self.settings.seed
    }

    fn __repr__(&self) -> PyResult<String> {
        let inner = self.lock()?;
        let eps = self.settings.epsilon.map_or("None".to_string(), |e| format!("{e:?}"));
        Ok(format!(
            "Optimizer({:?}, {} actions, eps={eps}, horizon={}, told={})",
            inner.name(),
            self.actions,
            self.settings.horizon,
            inner.pulls().iter().sum::<u64>()
        ))
    }
}

/// The learners `Optimizer` builds, by name: private names (with "LDP-" where the learner is
/// private) or, with private=False, the names for raw rewards (eps=None).
#[pyfunction]
#[pyo3(signature = (private=true))]
pub(crate) fn learners(private: bool) -> Vec<&'static str> {
    ask_tell::learners().iter().map(|a| a.label(private)).collect()
}
