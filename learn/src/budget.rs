//! The budget rule: how large a device's lifetime budget must be to pay for exactly n reports at
//! ε.
//!
//! The device's accountant (`ldp_core::budget`) counts ε in units of 10⁻⁹ in a `u64`: it charges
//! each report rounded up to a unit and reads the total rounded down. So the float `n·ε` is not
//! always enough: at ε = 1/3 each report is charged 333 333 334 units and a total of 1.0 holds
//! 10⁹, two units short of three reports. [`total_for`] gives a total that pays exactly n
//! charges. `host-sim privatise --table` and the Python package (`ldp_bo`) size their
//! simulated devices with it; `ldp-core` does not size budgets for its callers.

use ldp_core::budget::UNITS_PER_EPSILON;
use ldp_core::{Epsilon, ParamError};

/// The most ε the budget counter holds: it counts units of 10⁻⁹ in a `u64`, and a larger ε
/// saturates it (a per-report ε or a total above this would be charged or counted as this).
pub const COUNTER_RANGE: f64 = u64::MAX as f64 / UNITS_PER_EPSILON;

/// A budget the device's counter cannot hold, or a total that is no ε.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum BudgetError {
    /// An ε beyond [`COUNTER_RANGE`].
    BeyondCounter {
        /// The setting's name, in the caller's words (`eps`, `eps_total`, …).
        name: &'static str,
        /// Its value.
        epsilon: f64,
    },
    /// n reports at ε would cost more than [`COUNTER_RANGE`] in all.
    TotalBeyondCounter {
        /// ε per report.
        epsilon: f64,
        /// The reports.
        reports: usize,
    },
    /// The total is no valid ε.
    Param(ParamError),
}

impl std::fmt::Display for BudgetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BeyondCounter { name, epsilon } => write!(
                f,
                "{name} = {epsilon} is beyond the budget counter's range (it counts at most 2^64 units of 1e-9, eps {COUNTER_RANGE:.4e}): give a smaller {name}"
            ),
            Self::TotalBeyondCounter { epsilon, reports } => write!(
                f,
                "eps * {reports} reports = {} is beyond the budget counter's range (it counts at most 2^64 units of 1e-9, eps {COUNTER_RANGE:.4e} in all): release fewer values per call or at a smaller eps",
                epsilon * *reports as f64
            ),
            Self::Param(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BudgetError {}

/// `epsilon` if the budget counter holds it; otherwise [`BudgetError::BeyondCounter`] naming the
/// setting `name`.
pub fn within_counter(epsilon: Epsilon, name: &'static str) -> Result<Epsilon, BudgetError> {
    if epsilon.get() * UNITS_PER_EPSILON < u64::MAX as f64 {
        Ok(epsilon)
    } else {
        Err(BudgetError::BeyondCounter { name, epsilon: epsilon.get() })
    }
}

/// The total that pays for exactly `reports` reports at `epsilon` (at least one): an `f64` whose
/// units, rounded down, reach `reports` charges of `epsilon` rounded up, about half a unit above
/// them (so never a report more).
/// (`(units·n + 0.5)/10⁹` alone falls one unit short at 814 429 reports at ε = 10.3, a tie
/// rounded to even above 2^52 units.)
///
/// ```
/// use ldp_core::Epsilon;
/// use ldp_learn::budget::total_for;
///
/// let third = Epsilon::new(1.0 / 3.0)?;
/// let total = total_for(third, 3)?;
/// assert!(total.get() > 1.0); // 1.0 pays two charges of 333 333 334 units, not three
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn total_for(epsilon: Epsilon, reports: usize) -> Result<Epsilon, BudgetError> {
    // Exact integers, as the accountant counts.
    let units = (within_counter(epsilon, "eps")?.get() * UNITS_PER_EPSILON).ceil() as u64;
    let needed = units
        .checked_mul(reports.max(1) as u64)
        .ok_or(BudgetError::TotalBeyondCounter { epsilon: epsilon.get(), reports })?;
    let mut total = (needed as f64 + 0.5) / UNITS_PER_EPSILON;
    while ((total * UNITS_PER_EPSILON).floor() as u64) < needed {
        total = total.next_up();
    }
    Epsilon::new(total).map_err(BudgetError::Param)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::{Bound, BudgetPolicy, DeviceConfig, MemoryStore, Reporter};

    /// A device whose budget is `total_for(ε, n)` pays exactly n reports at ε and refuses the
    /// next, also where n·ε in floats falls short (ε = 1/3, n = 3) and where `(units·n + 0.5)/10⁹`
    /// does (ε = 10.3, n = 814 429).
    #[test]
    fn the_total_pays_exactly_n_reports() {
        for (eps, n) in [(1.0 / 3.0, 3usize), (0.1, 10), (10.3, 814_429)] {
            let epsilon = Epsilon::new(eps).unwrap();
            let total = total_for(epsilon, n).unwrap();
            let units = (eps * UNITS_PER_EPSILON).ceil() as u64;
            assert!(((total.get() * UNITS_PER_EPSILON).floor() as u64) >= units * n as u64);
            assert!(((total.get() * UNITS_PER_EPSILON).floor() as u64) < units * (n as u64 + 1), "not n + 1");
            if n <= 10 {
                let (b, r) = (Bound::new(1.0).unwrap(), Bound::new(1.0).unwrap());
                let config = DeviceConfig { b, r, policy: BudgetPolicy::new(epsilon, total).unwrap() };
                let mut device = Reporter::open(config, MemoryStore::provisioned([1; 32]), [2; 32]).unwrap();
                for _ in 0..n {
                    device.report(0.5, epsilon, None).unwrap();
                }
                assert!(device.report(0.5, epsilon, None).is_err(), "eps = {eps}: one report too many");
            }
        }
        let short = Epsilon::new(1.0).unwrap();
        assert!(((short.get() * UNITS_PER_EPSILON).floor() as u64) < 333_333_334 * 3, "1.0 is short");
    }

    #[test]
    fn budgets_beyond_the_counter_are_refused_by_name() {
        let huge = Epsilon::new(2.0e10).unwrap();
        let err = within_counter(huge, "eps_total").unwrap_err();
        assert_eq!(err, BudgetError::BeyondCounter { name: "eps_total", epsilon: 2.0e10 });
        assert!(err.to_string().starts_with("eps_total = 20000000000 is beyond"), "{err}");
        let err = total_for(Epsilon::new(1.0e9).unwrap(), 100).unwrap_err();
        assert_eq!(err, BudgetError::TotalBeyondCounter { epsilon: 1.0e9, reports: 100 });
        assert!(err.to_string().contains("eps * 100 reports = 100000000000"), "{err}");
        assert_eq!(
            total_for(huge, 1).unwrap_err(),
            BudgetError::BeyondCounter { name: "eps", epsilon: 2.0e10 }
        );
    }
}
