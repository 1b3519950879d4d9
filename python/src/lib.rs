//! `ldp_bo`: the device of `ldp-core` and the learners of `host-sim` from Python.
//!
//! The learners: [`optimizer`] (ask/tell, `ldp_bo.Optimizer`) and [`run`] (a named experiment,
//! `ldp_bo.run`). The device, two entry points, both over its production
//! [`ldp_core::Reporter`] — the code path of `host-sim privatise` (its `privatise_table`):
//!
//! - [`privatise`]: every value of an array released once through a fresh device whose budget
//!   covers exactly one report per value at ε;
//! - [`Reporter`]: one simulated device with its lifetime budget, queried value by value.
//!
//! # Seeds
//!
//! Without a seed the device's secret comes from the operating system's entropy, fresh for every
//! call. With one, the secret is derived from the seed as host-sim's simulated devices do
//! (`link/src/device.rs`, `simulated_reporter`): whoever knows the seed recomputes the noise
//! and removes it, and two calls with one seed share their noise, so the difference of their
//! releases is the difference of the raw values. Seeds are for tests and reproducible examples
//! only: every seeded call warns with [`SeededNoiseWarning`] (an application that must never
//! release seeded noise turns the warning into an error with the `warnings` module).
//!
//! # Errors
//!
//! Every refusal raises a subclass of `LdpError` carrying the CLI's message, before any value is
//! released: nothing partial is ever returned.

use std::convert::Infallible;

mod optimizer;
mod run;

use ldp_core::budget::UNITS_PER_EPSILON;
use ldp_core::{BudgetError, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, ParamError, ReportError};
use numpy::ndarray::{ArrayD, IxDyn};
use numpy::{IntoPyArray, PyArrayDyn, PyReadonlyArrayDyn};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyUserWarning};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyTuple};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

create_exception!(
    ldp_bo,
    LdpError,
    PyException,
    "Base class of every error ldp_bo raises. Nothing was released when it is raised."
);
create_exception!(
    ldp_bo,
    InvalidParameter,
    LdpError,
    "An invalid setting (epsilon, bound, noise_bound, an algorithm or experiment name, ...): nothing was built, released or run. The message says which and what to do."
);
create_exception!(
    ldp_bo,
    NonFiniteValue,
    LdpError,
    "A value to release was NaN or infinite: nothing was released. Drop or impute missing values first."
);
create_exception!(
    ldp_bo,
    InvalidValue,
    LdpError,
    "A value to release is not a real number (a string, bool, complex number, date or other object): nothing was released. The message names its position and type, never the value."
);
create_exception!(
    ldp_bo,
    BudgetExhausted,
    LdpError,
    "The device's privacy budget cannot pay for the report: nothing was released. The message says whether a smaller report is still possible."
);
create_exception!(
    ldp_bo,
    EpsilonOutOfRange,
    LdpError,
    "The requested epsilon is outside the device's per-report floor and limit: nothing was released or spent."
);
create_exception!(
    ldp_bo,
    ForkedReporter,
    LdpError,
    "A Reporter was used in another process than the one that made it (a copy by os.fork, multiprocessing or a prefork server): a copy repeats its noise and spends its budget twice, so it does not report. Create the Reporter in the process that uses it."
);
create_exception!(
    ldp_bo,
    NotAsked,
    LdpError,
    "Optimizer.tell for another action than the one Optimizer.ask returned (or before any ask): the learner is unchanged. Tell the report of the action ask() returned."
);
create_exception!(
    ldp_bo,
    SeededNoiseWarning,
    PyUserWarning,
    "A seed was given: the noise is reproducible by whoever knows the seed, and calls with one seed share their noise. For tests only."
);

/// The CLI's message for an invalid setting (`host-sim`'s `PrivatiseError::Param`).
fn invalid(e: ParamError) -> PyErr {
    InvalidParameter::new_err(format!("invalid setting: {e}"))
}

/// The CLI's message for a refusal by the device (`host-sim`'s `PrivatiseError::Device`), as
/// the exception class of its kind.
fn refused(e: ReportError<Infallible>) -> PyErr {
    let message = format!("the device refused: {e}");
    match e {
        ReportError::Budget(BudgetError::Exhausted { .. }) => BudgetExhausted::new_err(message),
        ReportError::Budget(BudgetError::AboveDeviceLimit { .. } | BudgetError::BelowDeviceFloor { .. }) => {
            EpsilonOutOfRange::new_err(message)
        }
        ReportError::Param(_) => InvalidParameter::new_err(message),
        _ => LdpError::new_err(message),
    }
}

/// The refusal of a report the budget left cannot pay: whether a smaller report is still
/// possible and, when the budget is short by its 1e-9 rounding, how to size it for n reports.
fn exhausted(requested: f64, remaining: f64, floor: f64) -> PyErr {
    let next = if remaining >= floor {
        // Not "eps <= remaining": eps is charged rounded up to 1e-9, and `remaining` as a float
        // can round up to one unit more than is left.
        format!(
            "a smaller report can still be paid (eps in units of 1e-9, rounded up, within the {remaining} left)"
        )
    } else {
        format!(
            "this device will not report again (what is left is below its smallest report, eps = {floor})"
        )
    };
    let rounding = if (requested - remaining) * UNITS_PER_EPSILON <= 1.5 {
        " (the budget is counted in units of 1e-9 and n * eps in floats can fall one unit short: Reporter.for_reports(n, eps, ...) pays exactly n reports)"
    } else {
        ""
    };
    BudgetExhausted::new_err(format!(
        "the device refused: privacy budget exhausted: {requested} requested, {remaining} left; nothing was released; {next}{rounding}"
    ))
}

/// How a refusal of a value to release ends.
const RELEASED_NOTHING: &str = "nothing was released";

fn non_finite(position: &str) -> PyErr {
    NonFiniteValue::new_err(format!(
        "{position} is NaN or infinite (an int beyond the float range, |x| >= 2^1024, counts as infinite): give finite values (drop or impute missing ones first); nothing was released"
    ))
}

/// A refusal of a value that is not a real number: its position and what it is, never the value.
fn not_real(position: &str, what: &str, outcome: &str) -> PyErr {
    InvalidValue::new_err(format!(
        "{position} is {what}, not a real number: give floats or ints (not strings, bools, complex numbers, dates or objects); {outcome}"
    ))
}

/// One value as `f64`: a Python float or int (not bool) or a numpy floating or integer scalar.
/// An int beyond the float range becomes ±inf (refused later as non-finite). Errors never carry
/// the value (numpy's and Python's own conversion errors quote it); `outcome` ends a refusal
/// ("nothing was released").
pub(crate) fn real(value: &Bound<'_, PyAny>, position: &str, outcome: &str) -> PyResult<f64> {
    let builtin = value.is_instance_of::<PyFloat>()
        || (value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>());
    // numpy only for what is not a Python float or int (importing it costs about a microsecond
    // a call, most of `Optimizer.tell`'s own time).
    let numeric = builtin || {
        let numpy = value.py().import("numpy")?;
        value.is_instance(&numpy.getattr("floating")?)? || value.is_instance(&numpy.getattr("integer")?)?
    };
    if !numeric {
        let name = value.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "an object".into());
        return Err(not_real(position, &format!("of type {name}"), outcome));
    }
    match value.extract::<f64>() {
        Ok(y) => Ok(y),
        // Only an int too large for a float fails here: its sign decides which infinity.
        Err(_) if value.gt(0)? => Ok(f64::INFINITY),
        Err(_) => Ok(f64::NEG_INFINITY),
    }
}

/// Whether `value` is a masked array or a list or tuple holding one (numpy would read its data
/// under the mask as values). Deeper than numpy's 64 dimensions numpy refuses the list anyway.
fn has_masked(value: &Bound<'_, PyAny>, masked: &Bound<'_, PyAny>, depth: usize) -> PyResult<bool> {
    if value.is_instance(masked)? {
        return Ok(true);
    }
    if depth < 64 && (value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>()) {
        for item in value.try_iter()? {
            if has_masked(&item?, masked, depth + 1)? {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The values of an array-like as `f64` in logical (C) order, with its shape. A numpy array (or
/// anything with `__array__`) must have a float or int dtype; a list, tuple or scalar is read
/// value by value with [`real`] (so a bool or string among floats is refused, not converted).
fn read_values(values: &Bound<'_, PyAny>) -> PyResult<(Vec<usize>, Vec<f64>)> {
    let py = values.py();
    let numpy = py.import("numpy")?;
    let unreadable = |_| {
        InvalidValue::new_err(
            "the values cannot be read as an array of numbers (a ragged list, or an object numpy cannot convert): give a float or int array; nothing was released",
        )
    };
    let masked = numpy.getattr("ma")?.getattr("MaskedArray")?;
    if has_masked(values, &masked, 0)? {
        return Err(InvalidValue::new_err(
            "the values are (or hold) a numpy masked array: its masked entries would be released as if observed; drop them (values.compressed()) or fill them, and pass a plain array; nothing was released",
        ));
    }
    if values.is_instance(&numpy.getattr("ndarray")?)? || values.hasattr("__array__")? {
        let array = numpy.call_method1("asarray", (values,)).map_err(unreadable)?;
        let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
        let what = match kind.as_str() {
            "f" | "i" | "u" => None,
            "b" => Some("bool"),
            "c" => Some("complex"),
            "M" | "m" => Some("dates or times"),
            "U" | "S" => Some("strings"),
            "O" => Some("Python objects"),
            _ => Some("not numbers"),
        };
        if let Some(what) = what {
            return Err(not_real(
                &format!("the array (numpy dtype kind '{kind}')"),
                &format!("of {what}"),
                RELEASED_NOTHING,
            ));
        }
        let array = numpy.call_method1("asarray", (array, "float64"))?;
        let array: PyReadonlyArrayDyn<'_, f64> = array.extract()?;
        let view = array.as_array();
        // Logical (C) order whatever the memory layout: a seeded call's noise depends on it.
        return Ok((view.shape().to_vec(), view.iter().copied().collect()));
    }
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("dtype", "object")?;
    let objects = numpy.call_method("asarray", (values,), Some(&kwargs)).map_err(unreadable)?;
    let shape: Vec<usize> = objects.getattr("shape")?.extract()?;
    let flat = objects.call_method0("ravel")?.call_method0("tolist")?;
    let raw = flat
        .try_iter()?
        .enumerate()
        .map(|(i, value)| real(&value?, &format!("value {i} (flat, C order)"), RELEASED_NOTHING))
        .collect::<PyResult<Vec<f64>>>()?;
    Ok((shape, raw))
}

const SEED_WARNING: &std::ffi::CStr = c"seeded noise is not private: whoever knows the seed removes it, and two calls with one seed share their noise (their difference is the raw difference); use seed=None except in tests";

/// Warns that `seed` makes the noise known (see the module docs); an error if the warning is.
fn warn_seeded(py: Python<'_>, seed: Option<u64>) -> PyResult<()> {
    match seed {
        Some(_) => PyErr::warn(py, &py.get_type::<SeededNoiseWarning>(), SEED_WARNING, 1),
        None => Ok(()),
    }
}

/// A device over `config` whose secret (seed material and boot entropy) comes from `seed` as
/// host-sim's `simulated_reporter` derives it, or from the operating system's entropy.
fn open_device(config: DeviceConfig, seed: Option<u64>) -> PyResult<ldp_core::Reporter<MemoryStore>> {
    let (mut material, mut entropy) = ([0u8; 32], [0u8; 32]);
    match seed {
        Some(seed) => {
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            rng.fill_bytes(&mut material);
            rng.fill_bytes(&mut entropy);
        }
        None => {
            let os = |e: getrandom::Error| {
                LdpError::new_err(format!("no entropy from the operating system for the noise: {e}"))
            };
            getrandom::fill(&mut material).map_err(os)?;
            getrandom::fill(&mut entropy).map_err(os)?;
        }
    }
    ldp_core::Reporter::open(config, MemoryStore::provisioned(material), entropy)
        .map_err(|e| refused(ReportError::Budget(e)))
}

/// B and R, checked as the CTL mechanism at `epsilon` needs them (B + R in [2^-40, 2^40], and
/// ε not too small for the sampler), so that a bad setting is refused before anything is built.
fn bounds(epsilon: Epsilon, bound: f64, noise_bound: f64) -> PyResult<(ldp_core::Bound, ldp_core::Bound)> {
    let (b, r) =
        (ldp_core::Bound::new(bound).map_err(invalid)?, ldp_core::Bound::new(noise_bound).map_err(invalid)?);
    ldp_core::LaplaceMechanism::ctl(epsilon, b, r).map_err(invalid)?;
    Ok((b, r))
}

/// The total that pays for exactly `reports` reports at `epsilon`: the budget rule of
/// `ldp_learn::budget::total_for` (the accountant charges each report rounded up to 10⁻⁹ and
/// reads the total rounded down), host-sim's too.
fn total_for(epsilon: Epsilon, reports: usize) -> PyResult<Epsilon> {
    ldp_learn::budget::total_for(epsilon, reports).map_err(beyond_counter)
}

/// `epsilon` if the budget counter holds it (`ldp_learn::budget::within_counter`); otherwise a
/// refusal naming the counter's range.
fn within_counter(epsilon: Epsilon, name: &'static str) -> PyResult<Epsilon> {
    ldp_learn::budget::within_counter(epsilon, name).map_err(beyond_counter)
}

fn beyond_counter(e: ldp_learn::budget::BudgetError) -> PyErr {
    InvalidParameter::new_err(format!("invalid setting: {e}"))
}

/// A seed: None, or an int in [0, 2^64) — not a bool (`seed=True` was read as seed 1).
pub(crate) fn read_seed(seed: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let wrong = || {
        InvalidParameter::new_err(
            "invalid setting: seed must be None or an int in [0, 2^64), not a bool, float or other type",
        )
    };
    match seed {
        None => Ok(None),
        Some(seed) if seed.is_instance_of::<PyBool>() || !seed.is_instance_of::<PyInt>() => Err(wrong()),
        Some(seed) => seed.extract::<u64>().map(Some).map_err(|_| wrong()),
    }
}

/// Release every value once through the device's CTL(eps) mechanism; return the releases.
///
/// Each value is clamped to [-(bound + noise_bound), bound + noise_bound], rounded to the
/// mechanism's public grid 2^k (k = floor(log2(bound + noise_bound)) - 12) and released with
/// discrete Laplace noise of scale about 2 (bound + noise_bound) / eps: the same code path as
/// `host-sim privatise --input` (the device's production reporter). Every release is eps-LDP
/// for its value.
///
/// Parameters
/// ----------
/// values : array_like of float or int
///     The raw values, any shape: a numpy array of a float or int dtype, or (nested) lists of
///     Python or numpy floats and ints. Strings, bools, complex numbers, dates and other objects
///     are refused (InvalidValue), and so are NaN and infinity (NonFiniteValue), an int beyond
///     the float range (|x| >= 2^1024) counting as infinite; nothing is released then, and the
///     error names the position and type, never the value. A numpy masked array (or a list
///     holding one) is refused: its masked entries would be released as if observed.
/// eps : float
///     The epsilon of each release (> 0). Each call is a fresh device that pays exactly one
///     report per value; calls on the same data add up (2 calls = 2 eps per value), and this
///     package does not track that. eps * len(values) must stay within the budget counter's
///     range (2^64 units of 1e-9, about 1.8e10). The call's time depends on the noise drawn (as for
///     `Reporter.report`): do not release per-value timings.
/// bound : float
///     B >= 0, the bound on the values' noiseless part |f|.
/// noise_bound : float
///     R >= 0, the bound on their noise |eta|; B + R must be in [2^-40, 2^40].
/// seed : int or None
///     None (the default): the device's secret comes from the operating system's entropy.
///     An int in [0, 2^64): reproducible noise, FOR TESTS ONLY: whoever knows the seed removes
///     the noise, and two calls with one seed share their noise. Warns with SeededNoiseWarning.
///
/// Returns
/// -------
/// numpy.ndarray of float64, the shape of `values`: the released values (multiples of 2^k).
///
/// Raises
/// ------
/// InvalidParameter
///     eps, bound, noise_bound or seed is invalid, or eps * len(values) is beyond the budget
///     counter's range.
/// InvalidValue
///     A value is not a real number (or the values are not an array of numbers).
/// NonFiniteValue
///     A value is NaN or infinite.
///
/// Examples
/// --------
/// >>> import ldp_bo
/// >>> released = ldp_bo.privatise([0.2, -0.7, 1.5], eps=1.0, bound=1.0, noise_bound=0.5)
/// >>> released.shape
/// (3,)
#[pyfunction]
#[pyo3(signature = (values, eps, bound, noise_bound, seed=None))]
fn privatise<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
    eps: f64,
    bound: f64,
    noise_bound: f64,
    seed: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let seed = read_seed(seed)?;
    let epsilon = Epsilon::new(eps).map_err(invalid)?;
    let (b, r) = bounds(epsilon, bound, noise_bound)?;
    let (shape, raw) = read_values(values)?;
    if let Some(i) = raw.iter().position(|y| !y.is_finite()) {
        return Err(non_finite(&format!("value {i} (flat, C order)")));
    }
    let policy = BudgetPolicy::new(epsilon, total_for(epsilon, raw.len())?).map_err(invalid)?;
    warn_seeded(py, seed)?;
    let mut device = open_device(DeviceConfig { b, r, policy }, seed)?;
    let released = py.detach(|| {
        raw.iter()
            .map(|&y| device.report(y, epsilon, None).map(|report| report.release.value()))
            .collect::<Result<Vec<f64>, _>>()
    });
    let released = released.map_err(refused)?;
    let array = ArrayD::from_shape_vec(IxDyn(&shape), released)
        .map_err(|e| LdpError::new_err(format!("cannot shape the releases as the input: {e}")))?;
    Ok(array.into_pyarray(py))
}

/// A simulated device: the production reporter with its lifetime privacy budget.
///
/// Each `report(value, eps)` releases one value with CTL(eps) (as `privatise` does) and spends
/// eps from the budget; a report the budget cannot pay is refused with BudgetExhausted and
/// nothing is released. The budget lives in memory: a new Reporter is a new device with a
/// fresh budget. It reports only in the process that made it: a copy made by os.fork
/// (multiprocessing's "fork" start method, prefork servers) would repeat its noise and spend
/// its budget again, so it raises ForkedReporter; make one Reporter per process.
///
/// Parameters
/// ----------
/// eps_total : float
///     The lifetime budget (> 0), counted in units of 1e-9: each report is charged eps rounded
///     up to a unit and the total is rounded down, so a total computed as n * eps in floats
///     can be one unit short of n reports (3 * 0.3 == 0.8999999999999999 pays two reports at
///     0.3, not three). For exactly n reports at eps use `Reporter.for_reports(n, eps, ...)`.
/// bound, noise_bound : float
///     B and R as for `privatise`.
/// seed : int or None
///     As for `privatise`: None takes the device's secret from the operating system; an int is
///     FOR TESTS ONLY (known noise, shared by every device with that seed) and warns.
/// eps_limit : float or None
///     The weakest (largest) epsilon of one report; default eps_total. Both at most about
///     1.8e10 (the budget counter holds 2^64 units of 1e-9). The strongest accepted
///     is eps_limit / 1024 (the device's floor).
///
/// Examples
/// --------
/// >>> import ldp_bo
/// >>> dev = ldp_bo.Reporter(eps_total=3.0, bound=1.0, noise_bound=1.0)
/// >>> y = dev.report(0.4, eps=1.0)
/// >>> dev.budget_remaining
/// 2.0
#[pyclass(module = "ldp_bo")]
struct Reporter {
    device: ldp_core::Reporter<MemoryStore>,
    seeded: bool,
    /// The process that made the device: a copy made by `fork` shares its noise key, its
    /// sampler's state and its budget, so only this process reports.
    pid: u32,
}

impl Reporter {
    fn build(
        py: Python<'_>,
        total: Epsilon,
        limit: Epsilon,
        bound: f64,
        noise_bound: f64,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let (b, r) = bounds(limit, bound, noise_bound)?;
        let policy = BudgetPolicy::new(limit, total).map_err(invalid)?;
        warn_seeded(py, seed)?;
        Ok(Self {
            device: open_device(DeviceConfig { b, r, policy }, seed)?,
            seeded: seed.is_some(),
            pid: std::process::id(),
        })
    }
}

#[pymethods]
impl Reporter {
    #[new]
    #[pyo3(signature = (eps_total, bound, noise_bound, seed=None, *, eps_limit=None))]
    fn new(
        py: Python<'_>,
        eps_total: f64,
        bound: f64,
        noise_bound: f64,
        seed: Option<&Bound<'_, PyAny>>,
        eps_limit: Option<f64>,
    ) -> PyResult<Self> {
        let total = within_counter(Epsilon::new(eps_total).map_err(invalid)?, "eps_total")?;
        let limit = eps_limit.map(Epsilon::new).transpose().map_err(invalid)?.unwrap_or(total);
        let limit = within_counter(limit, "eps_limit")?;
        Self::build(py, total, limit, bound, noise_bound, read_seed(seed)?)
    }

    /// A Reporter whose budget pays for exactly `reports` reports at `eps` (and eps_limit = eps).
    ///
    /// The budget is counted in units of 1e-9 (each report charged rounded up, the total rounded
    /// down), so `Reporter(n * eps, ...)` can fall one unit short when `n * eps` rounds below
    /// the exact product: `Reporter(3 * 0.3, ..., eps_limit=0.3)` refuses the third report at
    /// 0.3 (3 * 0.3 is 0.8999999999999999). This constructor takes the smallest total that pays
    /// all n, as `privatise` does.
    ///
    /// >>> import ldp_bo
    /// >>> dev = ldp_bo.Reporter.for_reports(3, 0.3, bound=1.0, noise_bound=1.0)
    /// >>> ys = [dev.report(0.4, eps=0.3) for _ in range(3)]
    #[staticmethod]
    #[pyo3(signature = (reports, eps, bound, noise_bound, seed=None))]
    fn for_reports(
        py: Python<'_>,
        reports: &Bound<'_, PyAny>,
        eps: f64,
        bound: f64,
        noise_bound: f64,
        seed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let count = || InvalidParameter::new_err("invalid setting: reports must be an int >= 1");
        if reports.is_instance_of::<PyBool>() {
            return Err(count());
        }
        let reports: usize = reports.extract().map_err(|_| count())?;
        if reports == 0 {
            return Err(count());
        }
        let epsilon = Epsilon::new(eps).map_err(invalid)?;
        let total = total_for(epsilon, reports)?;
        Self::build(py, total, epsilon, bound, noise_bound, read_seed(seed)?)
    }

    /// Release `value` once at `eps` and spend eps from the budget; return the released value.
    ///
    /// Without `level` the value is clamped to [-(bound + noise_bound), bound + noise_bound]
    /// (CTL). With a level b > 0 (the public truncation level `Optimizer.device_level` gives
    /// for LDP-RSE) it is kept within [-b, b] and set to 0 outside, with noise scaled to b: the
    /// device's truncated mechanism, eps-LDP for every b.
    ///
    /// Raises BudgetExhausted when the budget left cannot pay eps, EpsilonOutOfRange when eps is
    /// above the device's per-report limit or below its floor, InvalidParameter when eps or level is not
    /// a finite number > 0 (or too small for the sampler), InvalidValue when the value is not a
    /// float or int (a bool, string, ...), NonFiniteValue for a NaN or infinite value (an int
    /// beyond the float range counts as infinite), ForkedReporter in another process than the
    /// one that made the Reporter. Nothing is released or spent when it raises.
    ///
    /// Timing: the time a report takes depends on the noise drawn (the exact sampler loops about
    /// |noise| / scale times), so whoever times the replies learns about |noise| and, with the
    /// release, the raw value up to its sign. The device hides this in a fixed reply slot; this
    /// Python call has none. A process answering a remote learner must send each reply at a
    /// fixed time (a deadline well above the slowest report) or in batches, never as soon as
    /// `report` returns.
    #[pyo3(signature = (value, eps, *, level=None))]
    fn report(&mut self, value: &Bound<'_, PyAny>, eps: f64, level: Option<f64>) -> PyResult<f64> {
        if std::process::id() != self.pid {
            return Err(ForkedReporter::new_err(
                "this Reporter was made in another process (copied by os.fork, multiprocessing or a prefork server): a copy would repeat its noise and spend its budget twice, so it does not report; create the Reporter in the process that uses it",
            ));
        }
        let epsilon = Epsilon::new(eps).map_err(invalid)?;
        let level = level.map(ldp_core::TruncationLevel::new).transpose().map_err(invalid)?;
        let value = real(value, "the value", RELEASED_NOTHING)?;
        if !value.is_finite() {
            return Err(non_finite("the value"));
        }
        let floor = self.eps_floor();
        let report = self.device.report(value, epsilon, level).map_err(|e| match e {
            ReportError::Budget(BudgetError::Exhausted { requested, remaining }) => {
                exhausted(requested, remaining, floor)
            }
            e => refused(e),
        })?;
        Ok(report.release.value())
    }

    /// The budget this device can still spend (the lifetime total minus what it spent).
    #[getter]
    fn budget_remaining(&self) -> f64 {
        self.device.accountant().remaining()
    }

    /// The budget this device has spent.
    #[getter]
    fn budget_spent(&self) -> f64 {
        self.device.accountant().spent()
    }

    /// The lifetime budget.
    #[getter]
    fn eps_total(&self) -> f64 {
        self.device.config().policy.total().get()
    }

    /// The weakest (largest) epsilon of one report.
    #[getter]
    fn eps_limit(&self) -> f64 {
        self.device.config().policy.per_report_limit().get()
    }

    /// The strongest (smallest) epsilon of one report.
    #[getter]
    fn eps_floor(&self) -> f64 {
        self.device.config().policy.per_report_floor().get()
    }

    fn __repr__(&self) -> String {
        let config = self.device.config();
        format!(
            "Reporter(eps_total={:?}, bound={:?}, noise_bound={:?}, budget_remaining={:?}{})",
            config.policy.total().get(),
            config.b.get(),
            config.r.get(),
            self.budget_remaining(),
            if self.seeded { ", seeded: for tests only" } else { "" }
        )
    }
}

/// Locally differentially private Bayesian optimisation: the device of ldp-core and the
/// learners of host-sim from Python.
///
/// privatise(values, eps, bound, noise_bound) releases an array through the device's CTL(eps)
/// mechanism; Reporter(eps_total, bound, noise_bound) is a simulated device with its budget.
/// Optimizer(points, algorithm, eps=...) is a learner driven by ask/tell on the device's
/// releases (learners() lists them); run("fig2a", ...) runs a named experiment as
/// `host-sim run` does (experiments() lists them). Errors are subclasses of LdpError; seeded
/// noise (seed=... of privatise and Reporter) warns with SeededNoiseWarning and is for tests only.
#[pymodule]
fn ldp_bo(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(privatise, m)?)?;
    m.add_class::<Reporter>()?;
    m.add_class::<optimizer::Optimizer>()?;
    m.add_function(wrap_pyfunction!(optimizer::learners, m)?)?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_function(wrap_pyfunction!(run::experiments, m)?)?;
    m.add("LdpError", py.get_type::<LdpError>())?;
    m.add("InvalidParameter", py.get_type::<InvalidParameter>())?;
    m.add("NonFiniteValue", py.get_type::<NonFiniteValue>())?;
    m.add("InvalidValue", py.get_type::<InvalidValue>())?;
    m.add("BudgetExhausted", py.get_type::<BudgetExhausted>())?;
    m.add("EpsilonOutOfRange", py.get_type::<EpsilonOutOfRange>())?;
    m.add("ForkedReporter", py.get_type::<ForkedReporter>())?;
    m.add("NotAsked", py.get_type::<NotAsked>())?;
    m.add("SeededNoiseWarning", py.get_type::<SeededNoiseWarning>())?;
    Ok(())
}
