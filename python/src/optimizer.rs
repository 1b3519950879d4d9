//! `ldp_bo.Optimizer`: host-sim's ask/tell learner ([`ldp_learn::optimizer`]) from Python.
//!
//! Nothing here privatises or sees a raw value: the optimiser reads the reports it is told, and
//! the reports must be what the device released.

use std::sync::{Mutex, MutexGuard};

use ldp_learn::domain::{BoxError, BoxOptimizer, BoxOptions, Lengthscale};
use ldp_learn::env::custom::{KernelChoice, KernelName};
use ldp_learn::optimizer::{self as ask_tell, Domain, OptimizerError, Settings};
use ldp_learn::policy::Constants;
use ldp_learn::policy::PolicyError;
use nalgebra::DMatrix;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyAttributeError;
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

/// The box learner's refusal as the exception of its kind, with ldp-learn's message.
fn box_refused(e: BoxError) -> PyErr {
    let message = e.to_string();
    match e {
        BoxError::PointDimension { .. } | BoxError::OutsideBox { .. } => InvalidValue::new_err(message),
        BoxError::NonFinitePoint { .. } | BoxError::NonFiniteReport => NonFiniteValue::new_err(message),
        _ => InvalidParameter::new_err(format!("invalid setting: {message}")),
    }
}

/// An array-like as a float64 numpy array, refused if it is a masked array or not of floats or
/// ints; `give` says what to pass instead.
fn float_array<'py>(value: &Bound<'py, PyAny>, what: &str, give: &str) -> PyResult<Bound<'py, PyAny>> {
    let numpy = value.py().import("numpy")?;
    if value.is_instance(&numpy.getattr("ma")?.getattr("MaskedArray")?)? {
        return Err(InvalidValue::new_err(format!(
            "{what} is a numpy masked array: give a plain float array (its masked entries would be read as numbers)"
        )));
    }
    let array = numpy.call_method1("asarray", (value,)).map_err(|_| {
        InvalidValue::new_err(format!(
            "{what} cannot be read as an array of numbers (a ragged list, or an object numpy cannot convert): give {give}"
        ))
    })?;
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    if !matches!(kind.as_str(), "f" | "i" | "u") {
        return Err(InvalidValue::new_err(format!(
            "{what} must be an array of floats or ints, not of numpy dtype kind '{kind}'"
        )));
    }
    numpy.call_method1("asarray", (array, "float64"))
}

/// A 2-D array of finite floats, one row per action, from an array-like; with `column`, a 1-D
/// one is a column (n points of dimension 1).
fn read_rows(value: &Bound<'_, PyAny>, what: &str, column: bool) -> PyResult<Vec<Vec<f64>>> {
    let mut array = float_array(value, what, "a 2-D float array, one row per action")?;
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

/// A box's bounds, (lower, upper) pairs one a coordinate (shape (d, 2)), as the lower and the
/// upper bounds; their values are checked by ldp-learn (finite, lower < upper, 1 <= d <= 20).
fn read_bounds(value: &Bound<'_, PyAny>) -> PyResult<(Vec<f64>, Vec<f64>)> {
    let give = "(lower, upper) pairs, one a coordinate: bounds=[(0.0, 1.0), (-5.0, 5.0)]";
    let array = float_array(value, "bounds", give)?;
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    let size: usize = array.getattr("size")?.extract()?;
    if size == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    if !(shape.len() == 2 && shape[1] == 2) {
        return Err(InvalidValue::new_err(format!(
            "bounds must be {give}; their shape is {shape:?}, not (d, 2)"
        )));
    }
    let array: PyReadonlyArray2<'_, f64> = array.extract()?;
    let view = array.as_array();
    Ok((view.column(0).to_vec(), view.column(1).to_vec()))
}

/// A point of a box: a 1-D array-like of floats or ints (a float or int for d = 1); its length
/// and values are checked by ldp-learn.
fn read_point(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<f64>> {
    // A float64 array as ask() returns it: no conversion (most of tell's own time otherwise).
    if let Ok(array) = value.extract::<PyReadonlyArray1<'_, f64>>() {
        let numpy = value.py().import("numpy")?;
        if !value.is_instance(&numpy.getattr("ma")?.getattr("MaskedArray")?)? {
            return Ok(array.as_array().to_vec());
        }
    }
    let array = float_array(value, what, "the point as d floats, as ask() returns it")?;
    let ndim: usize = array.getattr("ndim")?.extract()?;
    if ndim > 1 {
        return Err(InvalidValue::new_err(format!(
            "{what} must be a 1-D array of the box's d coordinates; it has {ndim} dimensions"
        )));
    }
    let array: PyReadonlyArray1<'_, f64> = array.call_method1("reshape", (-1,))?.extract()?;
    Ok(array.as_array().to_vec())
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
///     `kernel` over them. Give exactly one of points, arms, covariance and bounds.
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
///     With bounds: every coordinate's lengthscale in units of the box's side there (0.2: a
///     fifth of its width), never fitted (default: fitted to the reports after 16 of them and
///     at every doubling, by maximum marginal likelihood).
/// arms : int, keyword only
///     k actions with no known structure (independent arms, identity prior).
/// covariance : array_like of float, shape (k, k), keyword only
///     Your own prior covariance over k actions (symmetric, non-negative diagonal).
/// bounds : array_like of float, shape (d, 2), keyword only
///     A box of d continuous knobs (1 <= d <= 20), one (lower, upper) pair a coordinate with
///     lower < upper. Runs GP-UCB, LDP-TGP-UCB or LDP-MoMA-GP-UCB (calibrated constants
///     only; MoMA plays each point k times, `constants["k"]`); the other learners are
///     refused, saying why.
///
/// Actions are indices 0..n-1 into the domain: `ask()` returns an int, `tell(action, report)`
/// takes it back, `recommend()` returns one; `points[action]` is its point. With bounds they
/// are points: `ask()` returns a float64 array of length d within the bounds, `tell(x,
/// report)` takes the point measured (any point of the box), `recommend()` returns the told
/// point of best posterior mean; `posterior(x)`, `lengthscales` and `fits` describe the
/// learner's model.
///
/// Raises
/// ------
/// InvalidParameter
///     An unknown algorithm (the message lists the names), an invalid setting, or a domain the
///     learner cannot use (an empty, inverted or non-finite box, d above 20, a learner that
///     cannot run on a box).
/// InvalidValue, NonFiniteValue
///     points or covariance are not a 2-D array of finite numbers; bounds are not (d, 2).
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
///
/// Two continuous knobs:
///
/// >>> opt = ldp_bo.Optimizer(bounds=[(0.0, 1.0), (-5.0, 5.0)], eps=1.0, horizon=50, seed=3)
/// >>> dev = ldp_bo.Reporter.for_reports(50, 1.0, bound=1.0, noise_bound=1.0)
/// >>> x = opt.ask()                            # array([x0, x1]) within the bounds
/// >>> opt.tell(x, dev.report(0.5, eps=1.0))   # the device's release at x
#[pyclass(module = "ldp_bo")]
pub(crate) struct Optimizer {
    inner: Mutex<Learner>,
    points: Option<Vec<Vec<f64>>>,
    /// A box's lower and upper bounds.
    bounds: Option<(Vec<f64>, Vec<f64>)>,
    actions: usize,
    settings: Settings,
}

/// The Rust learner: over a finite set of actions (indices), or over a box (points).
enum Learner {
    Indexed(ask_tell::Optimizer),
    Box(Box<BoxOptimizer>),
}

/// What `ask` returns: an index, or a point of a box.
enum Asked {
    Index(usize),
    Point(Vec<f64>),
}

/// The refusal of an index domain's attribute on a box, or a box's on an index domain.
fn not_on(this: &str, what: &str) -> PyErr {
    PyAttributeError::new_err(format!("{what} is not defined on {this}"))
}

impl Optimizer {
    fn lock(&self) -> PyResult<MutexGuard<'_, Learner>> {
        self.inner.lock().map_err(|_| {
            LdpError::new_err(
                "this Optimizer stopped in an internal error and cannot be used: make a new one (and please report it)",
            )
        })
    }

    /// Runs `f` on the index learner; on a box, an AttributeError naming `what`.
    fn indexed<T>(&self, what: &str, f: impl FnOnce(&mut ask_tell::Optimizer) -> T) -> PyResult<T> {
        match &mut *self.lock()? {
            Learner::Indexed(inner) => Ok(f(inner)),
            Learner::Box(_) => Err(not_on("a box (its actions are points, not indices)", what)),
        }
    }

    /// Runs `f` on the box learner; on an index domain, an AttributeError naming `what`.
    fn on_box<T>(&self, what: &str, f: impl FnOnce(&mut BoxOptimizer) -> T) -> PyResult<T> {
        match &mut *self.lock()? {
            Learner::Box(inner) => Ok(f(inner)),
            Learner::Indexed(_) => Err(not_on("points, arms or a covariance (only with bounds=)", what)),
        }
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

    /// `ask(q)`.
    fn ask_batch<'py>(&self, py: Python<'py>, q: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let q = match q.extract::<usize>() {
            Ok(n) if n >= 1 && !q.is_instance_of::<PyBool>() => n,
            _ => {
                return Err(InvalidParameter::new_err(
                    "invalid setting: q must be an int >= 1 (the actions to ask at once), or left out for one",
                ));
            }
        };
        match &mut *self.lock()? {
            Learner::Indexed(inner) => {
                let actions: Vec<i64> = inner.ask_batch(q).iter().map(|a| a.action as i64).collect();
                Ok(actions.into_pyarray(py).into_any())
            }
            Learner::Box(inner) => {
                let points = inner.ask_batch(q);
                let d = inner.dimension();
                let array = Array2::from_shape_fn((points.len(), d), |(i, j)| points[i][j]);
                Ok(array.into_pyarray(py).into_any())
            }
        }
    }

    /// `tell(actions, reports)`: every report and action is read and checked first; a refusal
    /// by the learner stops at that action, the ones before it told.
    fn tell_many(
        &self,
        py: Python<'_>,
        actions: &Bound<'_, PyAny>,
        reports: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let reports = float_array(reports, "the reports", "a 1-D float array, one report per action")?;
        let ndim: usize = reports.getattr("ndim")?.extract()?;
        if ndim != 1 {
            return Err(InvalidValue::new_err(format!(
                "the reports must be a 1-D array, one per action; they have {ndim} dimensions; nothing was told"
            )));
        }
        let reports: Vec<f64> = reports.extract::<PyReadonlyArray1<'_, f64>>()?.as_array().to_vec();
        if let Some(i) = reports.iter().position(|r| !r.is_finite()) {
            return Err(NonFiniteValue::new_err(format!(
                "report {i} is NaN or infinite: the device must never send one; nothing was told"
            )));
        }
        let mismatch = |n: usize| {
            InvalidValue::new_err(format!(
                "{n} actions and {} reports: give one report per action; nothing was told",
                reports.len()
            ))
        };
        if self.bounds.is_some() {
            let points = read_rows(actions, "the points", false)?;
            if points.len() != reports.len() {
                return Err(mismatch(points.len()));
            }
            return py.detach(|| match &mut *self.lock()? {
                Learner::Box(inner) => {
                    points.iter().zip(&reports).try_for_each(|(x, &r)| inner.tell(x, r).map_err(box_refused))
                }
                Learner::Indexed(_) => Err(LdpError::new_err("internal error: a box without its learner")),
            });
        }
        let items: Vec<Bound<'_, PyAny>> = actions.try_iter()?.collect::<PyResult<_>>()?;
        let actions: Vec<usize> = items.iter().map(|a| self.action(a)).collect::<PyResult<_>>()?;
        if actions.len() != reports.len() {
            return Err(mismatch(actions.len()));
        }
        py.detach(|| match &mut *self.lock()? {
            Learner::Indexed(inner) => {
                actions.iter().zip(&reports).try_for_each(|(&a, &r)| inner.tell(a, r).map_err(refused))
            }
            Learner::Box(_) => Err(LdpError::new_err("internal error: an index domain without its learner")),
        })
    }
}

#[pymethods]
impl Optimizer {
    /// Abandon an action asked whose report will never come (the earliest pending one of that
    /// action; with bounds a point ask() returned): the learner is never told of it. LDP-RSE,
    /// which needs every measurement of its epoch, asks it again first. Raises NotAsked if it
    /// is not pending.
    fn forget(&self, action: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.bounds.is_some() {
            let point = read_point(action, "the point")?;
            return match &mut *self.lock()? {
                Learner::Box(inner) => inner.forget(&point).map_err(|e| NotAsked::new_err(e.to_string())),
                Learner::Indexed(_) => Err(LdpError::new_err("internal error: a box without its learner")),
            };
        }
        let action = self.action(action)?;
        match &mut *self.lock()? {
            Learner::Indexed(inner) => inner.forget(action).map_err(refused),
            Learner::Box(_) => Err(LdpError::new_err("internal error: an index domain without its learner")),
        }
    }

    /// The actions asked whose reports have not been told, in the order asked (an int64
    /// array; with bounds a (p, d) float64 array).
    #[getter]
    fn pending<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &*self.lock()? {
            Learner::Indexed(inner) => {
                let actions: Vec<i64> = inner.pending().iter().map(|&a| a as i64).collect();
                Ok(actions.into_pyarray(py).into_any())
            }
            Learner::Box(inner) => {
                let points = inner.pending();
                let d = inner.dimension();
                let array = Array2::from_shape_fn((points.len(), d), |(i, j)| points[i][j]);
                Ok(array.into_pyarray(py).into_any())
            }
        }
    }

    #[new]
    #[pyo3(signature = (
        points=None, algorithm="ldp-tgp-ucb", *, eps=Some(1.0), bound=1.0, noise_bound=1.0, horizon=1000,
        constants="calibrated", seed=None, kernel=None, lengthscale=None, arms=None, covariance=None, bounds=None
    ), text_signature = "(points=None, algorithm='ldp-tgp-ucb', *, eps=1.0, bound=1.0, noise_bound=1.0, horizon=1000, constants='calibrated', seed=None, kernel=None, lengthscale=None, arms=None, covariance=None, bounds=None)")]
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
        bounds: Option<&Bound<'_, PyAny>>,
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
        if (kernel.is_some() || lengthscale.is_some()) && points.is_none() && bounds.is_none() {
            return Err(InvalidParameter::new_err(
                "invalid setting: kernel and lengthscale make the prior over points: give points, or drop them",
            ));
        }
        // With eps=None the learners' names have no "LDP-": say so when one is given one.
        let raw = eps.is_none() && algorithm.trim().to_lowercase().starts_with("ldp-");
        let (domain, rows, n) = match (points, arms, covariance, bounds) {
            (Some(points), None, None, None) => {
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
                let n = rows.len();
                (Domain::Points { points: rows.clone(), kernel }, Some(rows), n)
            }
            (None, Some(arms), None, None) => {
                let k = read_arms(arms)?;
                (Domain::Arms(k), None, k)
            }
            (None, None, Some(covariance), None) => {
                let rows = read_rows(covariance, "covariance", false)?;
                let (k, cols) = (rows.len(), rows.first().map_or(0, Vec::len));
                if k != cols {
                    return Err(InvalidValue::new_err(format!(
                        "covariance must be square (k x k, one row and column per action), got {k} x {cols}"
                    )));
                }
                (Domain::Covariance(DMatrix::from_fn(k, k, |i, j| rows[i][j])), None, k)
            }
            (None, None, None, Some(bounds)) => {
                if kernel.is_some() {
                    return Err(InvalidParameter::new_err(
                        "invalid setting: a box's kernel is the squared exponential, its lengthscales fitted to the reports unless lengthscale= fixes them: drop kernel",
                    ));
                }
                let (lower, upper) = read_bounds(bounds)?;
                let lengthscale = lengthscale.map_or(Lengthscale::Fitted, Lengthscale::Fixed);
                let options = BoxOptions { lengthscale, ..BoxOptions::default() };
                let domain = Domain::Box { lower: lower.clone(), upper: upper.clone() };
                let inner = BoxOptimizer::with_options(algorithm, domain, settings, options).map_err(|e| match e {
                    BoxError::UnknownLearner { .. } if raw => InvalidParameter::new_err(format!(
                        "invalid setting: {e} (eps=None: the learners see raw rewards and their names have no LDP-)"
                    )),
                    e => box_refused(e),
                })?;
                let inner = Mutex::new(Learner::Box(Box::new(inner)));
                return Ok(Self { inner, points: None, bounds: Some((lower, upper)), actions: 0, settings });
            }
            _ => {
                return Err(InvalidParameter::new_err(
                    "invalid setting: give exactly one domain: points (one row per action), arms=k (independent actions), covariance=K (your prior over the actions) or bounds=[(lower, upper), ...] (a box of continuous knobs)",
                ));
            }
        };
        let inner = ask_tell::Optimizer::new(algorithm, domain, settings).map_err(|e| {
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
        Ok(Self { inner: Mutex::new(Learner::Indexed(inner)), points: rows, bounds: None, actions, settings })
    }

    /// The action to measure next: an index into the domain (0 to n-1; `points[i]` is its
    /// point), or with bounds a point of the box (a float64 array of length d, within the
    /// bounds). Asked again before `tell`, it returns the same action.
    ///
    /// With q (an int >= 1): q more actions to measure at once, whatever is pending, as an
    /// int64 array (with bounds a float64 array of shape (q, d)); tell their reports in any
    /// order as they arrive (`tell(actions, reports)` takes arrays). Each is chosen as if the
    /// pending ones had been told their posterior mean (GP-BUCB; the K-armed learners count
    /// pending measurements). LDP-RSE returns fewer at the end of its epoch. q=1 with nothing
    /// pending is ask()'s action.
    #[pyo3(signature = (q=None))]
    fn ask<'py>(&self, py: Python<'py>, q: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(q) = q {
            return self.ask_batch(py, q);
        }
        // The lock is taken and released without the GIL (a thread waiting for it holds none).
        let asked: PyResult<Asked> = py.detach(|| {
            Ok(match &mut *self.lock()? {
                Learner::Indexed(inner) => Asked::Index(inner.ask()),
                Learner::Box(inner) => Asked::Point(inner.ask()),
            })
        });
        match asked? {
            Asked::Index(i) => Ok(i.into_pyobject(py)?.into_any()),
            Asked::Point(x) => Ok(x.into_pyarray(py).into_any()),
        }
    }

    /// Tell the learner the device's releases for actions asked: `tell(action, report)` for one,
    /// `tell(actions, reports)` for several (an int array and a float array of the same
    /// length; with bounds a (q, d) array of points), in any order.
    ///
    /// `action` is the int `ask()` returned, or with bounds the point measured (an array or
    /// sequence of d floats within the bounds, normally the one `ask()` returned); `report` the
    /// device's release at eps for it (a float). Raises NotAsked for another action than the
    /// one asked for (or before any ask), InvalidValue for an action outside the domain (a
    /// point outside the box or of another length) or a report that is not a real number,
    /// NonFiniteValue for a NaN or infinite report or point; the learner is unchanged then.
    fn tell(&self, py: Python<'_>, action: &Bound<'_, PyAny>, report: &Bound<'_, PyAny>) -> PyResult<()> {
        // Several at once: an array of reports with an array of actions (with bounds, a 2-D
        // array of points). Anything else is one report, refused below if it is not a number.
        let numpy = py.import("numpy")?;
        let ndim = |value: &Bound<'_, PyAny>| -> PyResult<usize> {
            if value.is_instance_of::<pyo3::types::PyFloat>() || value.is_instance_of::<PyInt>() {
                return Ok(0);
            }
            // A ragged or odd object is left to the one-report path's refusal.
            Ok(numpy.call_method1("ndim", (value,)).and_then(|n| n.extract::<usize>()).unwrap_or(0))
        };
        let actions_ndim = if self.bounds.is_some() { 2 } else { 1 };
        if ndim(report)? >= 1 && ndim(action)? == actions_ndim {
            return self.tell_many(py, action, report);
        }
        if self.bounds.is_some() {
            let point = read_point(action, "the point")?;
            let report = crate::real(report, "the report", "nothing was told")?;
            return py.detach(|| match &mut *self.lock()? {
                Learner::Box(inner) => inner.tell(&point, report).map_err(box_refused),
                Learner::Indexed(_) => Err(LdpError::new_err("internal error: a box without its learner")),
            });
        }
        let action = self.action(action)?;
        let report = crate::real(report, "the report", "nothing was told")?;
        py.detach(|| match &mut *self.lock()? {
            Learner::Indexed(inner) => inner.tell(action, report).map_err(refused),
            Learner::Box(_) => Err(LdpError::new_err("internal error: an index domain without its learner")),
        })
    }

    /// The action to recommend now: the most measured one (ties: the higher mean report, then
    /// the lower index); action 0 before any report. With bounds: the told point of best
    /// posterior mean (ties: the earliest told), the box's centre before any report.
    fn recommend<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &*self.lock()? {
            Learner::Indexed(inner) => Ok(inner.recommend().into_pyobject(py)?.into_any()),
            Learner::Box(inner) => Ok(inner.recommend().into_pyarray(py).into_any()),
        }
    }

    /// With bounds: the posterior (mean, variance) at the point x of the box, of the reports as
    /// the learner used them (LDP-TGP-UCB: truncated). InvalidValue or NonFiniteValue for a
    /// point outside the box, of another length or not finite.
    fn posterior(&self, x: &Bound<'_, PyAny>) -> PyResult<(f64, f64)> {
        let point = read_point(x, "the point")?;
        self.on_box("posterior", |inner| inner.posterior(&point))?.map_err(box_refused)
    }

    /// The learner's name, e.g. "LDP-TGP-UCB".
    #[getter]
    fn algorithm(&self) -> PyResult<&'static str> {
        Ok(match &*self.lock()? {
            Learner::Indexed(inner) => inner.name(),
            Learner::Box(inner) => inner.name(),
        })
    }

    /// The number of actions n (not defined with bounds: a box has infinitely many).
    #[getter]
    fn n_actions(&self) -> PyResult<usize> {
        self.indexed("n_actions", |_| self.actions)
    }

    /// The actions' points (a copy, shape (n, d)), or None for a domain of arms, a covariance
    /// or a box.
    #[getter]
    fn points<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        let Some(rows) = &self.points else { return Ok(None) };
        let d = rows.first().map_or(0, Vec::len);
        let array = Array2::from_shape_fn((rows.len(), d), |(i, j)| rows[i][j]);
        Ok(Some(array.into_pyarray(py)))
    }

    /// The box's bounds (a copy, shape (d, 2): lower, upper), or None without bounds.
    #[getter]
    fn bounds<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        let Some((lower, upper)) = &self.bounds else { return Ok(None) };
        let array =
            Array2::from_shape_fn((lower.len(), 2), |(i, j)| if j == 0 { lower[i] } else { upper[i] });
        Ok(Some(array.into_pyarray(py)))
    }

    /// d, the dimension of the box or of the points; None for arms or a covariance.
    #[getter]
    fn dimension(&self) -> Option<usize> {
        match (&self.bounds, &self.points) {
            (Some((lower, _)), _) => Some(lower.len()),
            (None, Some(rows)) => rows.first().map(Vec::len),
            (None, None) => None,
        }
    }

    /// How often each action has been told a report (uint64, length n; not defined with
    /// bounds).
    #[getter]
    fn pulls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        self.indexed("pulls", |inner| PyArray1::from_slice(py, inner.pulls()))
    }

    /// The number of reports told so far.
    #[getter]
    fn told(&self) -> PyResult<u64> {
        Ok(match &*self.lock()? {
            Learner::Indexed(inner) => inner.pulls().iter().sum(),
            Learner::Box(inner) => inner.num_reports() as u64,
        })
    }

    /// With bounds: the kernel's lengthscales (float64, one a coordinate, in the box's units)
    /// and its signal scale, as fitted to the reports so far (or as fixed by lengthscale=).
    #[getter]
    fn lengthscales<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyArray1<f64>>, f64)> {
        let (l, s) = self.on_box("lengthscales", |inner| inner.lengthscales())?;
        Ok((l.into_pyarray(py), s))
    }

    /// With bounds: how many times the kernel has been fitted (after 16 reports, then at every
    /// doubling; with a fixed lengthscale, the posterior rebuilt).
    #[getter]
    fn fits(&self) -> PyResult<usize> {
        self.on_box("fits", |inner| inner.fits())
    }

    /// The truncation level the learner asks the device to apply before its noise for the
    /// action just asked (LDP-RSE: pass it to `Reporter.report(..., level=...)`), or None for
    /// the device's clamp to bound + noise_bound (every box learner).
    #[getter]
    fn device_level(&self) -> PyResult<Option<f64>> {
        Ok(match &*self.lock()? {
            Learner::Indexed(inner) => inner.device_level(),
            Learner::Box(_) => None,
        })
    }

    /// The constants the learner derived from the settings, by name (as run.json lists them).
    #[getter]
    fn constants<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let constants = match &*self.lock()? {
            Learner::Indexed(inner) => inner.constants(),
            Learner::Box(inner) => inner.constants(),
        };
        let dict = PyDict::new(py);
        for (name, value) in constants {
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
        let eps = self.settings.epsilon.map_or("None".to_string(), |e| format!("{e:?}"));
        let (name, domain, told) = match &*self.lock()? {
            Learner::Indexed(inner) => {
                (inner.name(), format!("{} actions", self.actions), inner.pulls().iter().sum::<u64>())
            }
            Learner::Box(inner) => (
                inner.name(),
                format!("a box of {} coordinates", inner.dimension()),
                inner.num_reports() as u64,
            ),
        };
        Ok(format!(
            "Optimizer({name:?}, {domain}, eps={eps}, horizon={}, told={told})",
            self.settings.horizon
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
