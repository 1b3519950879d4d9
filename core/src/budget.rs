//! The device's privacy accountant: a per-report floor and limit and a lifetime total under basic
//! sequential composition, reserved ahead in the persistent [`DeviceState`] so that a reset can
//! never restore spent budget.
//!
//! # Accounting
//!
//! ε values are accounted as integers in units of 10⁻⁹ (nano-ε): a spend is rounded **up**, the
//! total **down**, so rounding never grants budget. The per-report floor and limit are compared
//! on the exact `f64` values.
//!
//! # Write-ahead, in chunks
//!
//! The store holds the *reserved* budget, never less than what has been released. A spend that
//! fits the reservation costs no write; one that does not first reserves one more chunk beyond
//! what is reserved (capped at the total) and writes that, together with this boot's number,
//! **before** [`Accountant::spend`] returns `Ok` — and the caller releases only after that.
//! A device reserves while idle ([`Accountant::reserve_ahead`]) and answers queries with
//! [`Accountant::spend_reserved`], which never writes. At
//! boot the whole reservation counts as spent: a reset loses at most one chunk of budget, never
//! privacy. Every write reserves at least `min(chunk, remaining)` new budget, so a device writes
//! its store at most `⌈total / chunk⌉` times in its life, however often it is queried or reset
//! (see [`BudgetPolicy::max_writes`]). If the store fails, the spend still counts in memory
//! (fail closed) and the report must not be made.

use crate::error::{BudgetError, ParamError};
use crate::params::Epsilon;
use crate::state::{DeviceState, StateError, StateStore};

/// Accounting units per unit of ε.
pub const UNITS_PER_EPSILON: f64 = 1e9;

/// Default reservation chunk, in per-report limits ([`BudgetPolicy::new`]).
pub const DEFAULT_CHUNK_REPORTS: f64 = 16.0;
/// Default per-report floor as a fraction of the limit ([`BudgetPolicy::new`]).
pub const DEFAULT_FLOOR_FRACTION: f64 = 1.0 / 1024.0;

/// What the device allows: the strongest and the weakest ε of one report, the total ε over its
/// lifetime, and how much budget one store write reserves.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BudgetPolicy {
    per_report_floor: Epsilon,
    per_report_limit: Epsilon,
    total: Epsilon,
    chunk: Epsilon,
}

impl BudgetPolicy {
    /// Validates a policy: the per-report limit must not exceed the total. The floor defaults to
    /// limit/1024 ([`DEFAULT_FLOOR_FRACTION`]) and the chunk to 16 limits
    /// ([`DEFAULT_CHUNK_REPORTS`]), capped at the total.
    ///
    /// ```
    /// use ldp_core::{BudgetPolicy, Epsilon, ParamError};
    /// let e = |x| Epsilon::new(x);
    /// let policy = BudgetPolicy::new(e(1.0)?, e(1000.0)?)?;
    /// assert_eq!(policy.chunk().get(), 16.0);
    /// assert_eq!(policy.max_writes(), 63);
    /// assert_eq!(BudgetPolicy::new(e(2.0)?, e(1.0)?), Err(ParamError::PerReportAboveTotal));
    /// # Ok::<(), ParamError>(())
    /// ```
    pub fn new(per_report_limit: Epsilon, total: Epsilon) -> Result<Self, ParamError> {
        if per_report_limit > total {
            return Err(ParamError::PerReportAboveTotal);
        }
        let floor = Epsilon::new(per_report_limit.get() * DEFAULT_FLOOR_FRACTION)?;
        let chunk = Epsilon::new((per_report_limit.get() * DEFAULT_CHUNK_REPORTS).min(total.get()))?;
        Ok(Self { per_report_floor: floor, per_report_limit, total, chunk })
    }

    /// The same policy with another per-report floor (at most the limit).
    pub fn with_floor(self, floor: Epsilon) -> Result<Self, ParamError> {
        if floor > self.per_report_limit {
            return Err(ParamError::FloorAboveLimit);
        }
        Ok(Self { per_report_floor: floor, ..self })
    }

    /// The same policy with another reservation chunk: the budget one store write reserves
    /// ahead, at least the per-report limit (so one write covers any report). Larger: fewer
    /// writes; smaller: less budget lost to a reset.
    pub fn with_chunk(self, chunk: Epsilon) -> Result<Self, ParamError> {
        if chunk < self.per_report_limit {
            return Err(ParamError::ChunkBelowLimit);
        }
        Ok(Self { chunk, ..self })
    }

    /// The strongest (smallest) ε the device releases one report at. Smaller requests are
    /// refused: they would buy almost nothing for the learner at the device's full cost.
    pub fn per_report_floor(&self) -> Epsilon {
        self.per_report_floor
    }

    /// The weakest (largest) ε the device releases one report at: its privacy floor.
    pub fn per_report_limit(&self) -> Epsilon {
        self.per_report_limit
    }

    /// The lifetime total.
    pub fn total(&self) -> Epsilon {
        self.total
    }

    /// The budget one store write reserves ahead.
    pub fn chunk(&self) -> Epsilon {
        self.chunk
    }

    /// The most store writes the device makes in its whole life, resets included:
    /// `⌈total / chunk⌉` (every write reserves a chunk beyond what was reserved before, or all
    /// that is left). A [`LogStore`](crate::LogStore) on a medium overwritten in place makes
    /// each one two records ([`crate::state`]).
    pub fn max_writes(&self) -> u64 {
        let (total, chunk) = (units_down(self.total), units_up(self.chunk).max(1));
        total.div_ceil(chunk)
    }
}

fn units_up(epsilon: Epsilon) -> u64 {
    // `as` saturates; a saturated spend can never fit, which is the safe direction.
    libm::ceil(epsilon.get() * UNITS_PER_EPSILON) as u64
}

fn units_down(epsilon: Epsilon) -> u64 {
    libm::floor(epsilon.get() * UNITS_PER_EPSILON) as u64
}

impl<E> From<StateError<E>> for BudgetError<E> {
    fn from(e: StateError<E>) -> Self {
        match e {
            StateError::NotProvisioned => Self::NotProvisioned,
            StateError::Corrupt => Self::CorruptState,
            StateError::Blanked => Self::BlankedState,
            StateError::Medium(e) => Self::Storage(e),
        }
    }
}

/// The device's accountant. Open it once at boot with [`Accountant::open`].
#[derive(Debug)]
pub struct Accountant<S> {
    store: S,
    policy: BudgetPolicy,
    total_units: u64,
    spent_units: u64,
    /// What the store says is reserved, once this boot has written; `None` before.
    reserved_units: Option<u64>,
    state: DeviceState,
}

impl<S: StateStore> Accountant<S> {
    /// Loads the device state and starts boot `stored boot + 1`, counting everything reserved
    /// before as spent. Nothing is written until the first reservation. A never-provisioned store is
    /// [`BudgetError::NotProvisioned`]; a torn or inconsistent one, or one that has reserved
    /// more than the total, is [`BudgetError::CorruptState`]; one with a blanked record is
    /// [`BudgetError::BlankedState`].
    ///
    /// ```
    /// use ldp_core::{Accountant, BudgetPolicy, Epsilon, MemoryStore};
    /// let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(2.0).unwrap()).unwrap();
    /// let mut acc = Accountant::open(MemoryStore::provisioned([7; 32]), policy).unwrap();
    /// acc.spend(Epsilon::new(1.0).unwrap()).unwrap();
    /// acc.spend(Epsilon::new(1.0).unwrap()).unwrap();
    /// assert!(acc.spend(Epsilon::new(0.1).unwrap()).is_err());
    /// ```
    pub fn open(mut store: S, policy: BudgetPolicy) -> Result<Self, BudgetError<S::Error>> {
        let total_units = units_down(policy.total);
        let mut state = store.load()?;
        if state.reserved_units > total_units {
            return Err(BudgetError::CorruptState);
        }
        state.boot = state.boot.checked_add(1).ok_or(BudgetError::CorruptState)?;
        Ok(Self {
            store,
            policy,
            total_units,
            spent_units: state.reserved_units,
            reserved_units: None,
            state,
        })
    }

    /// This boot's number: the stored one plus one. It is written before the first release.
    pub fn boot(&self) -> u64 {
        self.state.boot
    }

    /// The secret seed material (for the per-boot key).
    pub(crate) fn seed(&self) -> &[u8; 32] {
        &self.state.seed
    }

    /// Checks a request against the per-report floor and limit and the remaining budget without
    /// spending.
    pub fn check(&self, epsilon: Epsilon) -> Result<(), BudgetError<S::Error>> {
        self.next_spent(epsilon).map(|_| ())
    }

    fn next_spent(&self, epsilon: Epsilon) -> Result<u64, BudgetError<S::Error>> {
        let (floor, limit) = (self.policy.per_report_floor, self.policy.per_report_limit);
        if epsilon > limit {
            return Err(BudgetError::AboveDeviceLimit { requested: epsilon.get(), limit: limit.get() });
        }
        if epsilon < floor {
            return Err(BudgetError::BelowDeviceFloor { requested: epsilon.get(), floor: floor.get() });
        }
        match self.spent_units.checked_add(units_up(epsilon)) {
            Some(next) if next <= self.total_units => Ok(next),
            _ => Err(BudgetError::Exhausted { requested: epsilon.get(), remaining: self.remaining() }),
        }
    }

    /// Spends ε: checks the floor, the limit and the remaining budget; if the reservation does
    /// not cover it, durably reserves another chunk (with this boot's number) first. Only after
    /// `Ok` may the caller release a value.
    pub fn spend(&mut self, epsilon: Epsilon) -> Result<(), BudgetError<S::Error>> {
        let next = self.next_spent(epsilon)?;
        if !self.covers(next) {
            self.reserve(next)?;
        }
        self.spent_units = next;
        Ok(())
    }

    /// Whether this boot's stored reservation reaches `units`.
    fn covers(&self, units: u64) -> bool {
        self.reserved_units.is_some_and(|reserved| units <= reserved)
    }

    /// Spends ε only if this boot's stored reservation covers it, never writing: what a device
    /// answering a query uses, so that no store write (whose time could overrun the reply slot)
    /// happens in a reply. Otherwise [`BudgetError::NotReserved`], with nothing spent.
    pub fn spend_reserved(&mut self, epsilon: Epsilon) -> Result<(), BudgetError<S::Error>> {
        let next = self.next_spent(epsilon)?;
        if !self.covers(next) {
            return Err(BudgetError::NotReserved);
        }
        self.spent_units = next;
        Ok(())
    }

    /// Durably reserves one more chunk beyond what is reserved (or spent), capped at the total,
    /// and at least `needed`. On failure everything it tried to reserve counts as spent (fail
    /// closed: the write may have stuck).
    fn reserve(&mut self, needed: u64) -> Result<(), BudgetError<S::Error>> {
        // A reservation, when there is one, is never below what was spent.
        let base = self.reserved_units.unwrap_or(self.spent_units);
        let reserved = base.saturating_add(units_up(self.policy.chunk)).max(needed).min(self.total_units);
        let state = DeviceState { reserved_units: reserved, ..self.state };
        self.reserved_units = None;
        if let Err(e) = self.store.save(&state) {
            self.spent_units = self.spent_units.max(reserved); // fail closed
            return Err(e.into());
        }
        self.reserved_units = Some(reserved);
        Ok(())
    }

    /// Writes ahead while the device is idle: if this boot has not written yet, or what is
    /// reserved would not cover one report at the per-report limit, reserves the next chunk
    /// now, so that answering the next query needs no store write (which would take time in
    /// the reply path). Does nothing once the budget is exhausted. A firmware calls it after
    /// boot and after each reply; [`Accountant::spend`] still writes if it was not called.
    pub fn reserve_ahead(&mut self) -> Result<(), BudgetError<S::Error>> {
        let limit = units_up(self.policy.per_report_limit);
        let wanted = self.spent_units.saturating_add(limit).min(self.total_units);
        if self.covers(wanted) || self.spent_units >= self.total_units {
            return Ok(());
        }
        self.reserve(self.spent_units)
    }

    /// ε spent so far (everything reserved before this boot counts as spent).
    pub fn spent(&self) -> f64 {
        self.spent_units as f64 / UNITS_PER_EPSILON
    }

    /// ε left.
    pub fn remaining(&self) -> f64 {
        self.total_units.saturating_sub(self.spent_units) as f64 / UNITS_PER_EPSILON
    }

    /// The policy in force.
    pub fn policy(&self) -> BudgetPolicy {
        self.policy
    }

    /// The store, e.g. to inspect it in tests.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Gives the store back (e.g. to simulate a reset by reopening it).
    pub fn into_store(self) -> S {
        self.store
    }
}
