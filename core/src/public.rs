//! What a device makes public: its configuration ([`DeviceConfig`]: B, R and the budget policy)
//! and its reports ([`Report`]). The reporter produces them and the wire carries them; neither
//! layer owns them, so the wire depends on nothing above it.

use crate::budget::BudgetPolicy;
use crate::mechanism::Release;
use crate::params::Bound;

/// What a device knows about its own rewards and allows.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DeviceConfig {
    /// B: bound on |f(x)|.
    pub b: Bound,
    /// R: bound on |η| (or the sub-Weibull bound of
    /// [`crate::mechanism::sub_weibull_noise_bound`]).
    pub r: Bound,
    /// Per-report floor and limit, lifetime total, reservation chunk.
    pub policy: BudgetPolicy,
}

/// One released report.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Report {
    /// The privatised value, on its public grid.
    pub release: Release,
    /// The ε charged to the budget (the ε asked for).
    pub epsilon: f64,
    /// The ε the mechanism guarantees (≤ `epsilon`, see
    /// [`LaplaceMechanism::epsilon_effective`](crate::mechanism::LaplaceMechanism::epsilon_effective)).
    pub epsilon_effective: f64,
    /// The budget left after this report.
    pub budget_remaining: f64,
}
