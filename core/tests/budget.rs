//! The device enforces its privacy budget: per-report floor and limit, lifetime total,
//! reservation in chunks, persistence across resets, fail-closed storage, no spending on
//! refused queries, and non-finite readings charged like any other.

use core::fmt;
use ldp_core::{
    Accountant, Bound, BudgetError, BudgetPolicy, DeviceConfig, DeviceState, Epsilon, MemoryStore,
    ParamError, ReportError, Reporter, StateError, StateStore, TruncationLevel,
};

fn eps(x: f64) -> Epsilon {
    Epsilon::new(x).unwrap()
}

fn lvl(x: f64) -> TruncationLevel {
    TruncationLevel::new(x).unwrap()
}

fn config(limit: f64, total: f64) -> DeviceConfig {
    DeviceConfig {
        b: Bound::new(1.0).unwrap(),
        r: Bound::new(1.0).unwrap(),
        policy: BudgetPolicy::new(eps(limit), eps(total)).unwrap(),
    }
}

fn device(limit: f64, total: f64, store: MemoryStore) -> Reporter<MemoryStore> {
    Reporter::open(config(limit, total), store, [5; 32]).unwrap()
}

fn fresh() -> MemoryStore {
    MemoryStore::provisioned([9; 32])
}

#[test]
fn total_budget_allows_exactly_its_share_of_reports() {
    let mut dev = device(0.1, 1.0, fresh());
    for k in 1..=10 {
        let r = dev.report(0.5, eps(0.1), None).unwrap();
        assert!((r.budget_remaining - (1.0 - 0.1 * k as f64)).abs() < 1e-9);
        assert!(r.epsilon_effective <= r.epsilon);
    }
    for _ in 0..3 {
        assert!(matches!(
            dev.report(0.5, eps(0.1), None),
            Err(ReportError::Budget(BudgetError::Exhausted { .. }))
        ));
    }
    assert!((dev.accountant().spent() - 1.0).abs() < 1e-9);
}

#[test]
fn the_learner_cannot_obtain_a_weaker_epsilon_than_the_device_allows() {
    let mut dev = device(0.5, 10.0, fresh());
    let refused = dev.report(0.5, eps(0.5000001), None);
    assert_eq!(
        refused,
        Err(ReportError::Budget(BudgetError::AboveDeviceLimit { requested: 0.5000001, limit: 0.5 }))
    );
    assert_eq!(dev.accountant().spent(), 0.0, "a refused query spends nothing");
    assert!(dev.report(0.5, eps(0.5), None).is_ok(), "the limit itself is allowed");
    assert!(dev.report(0.5, eps(0.01), None).is_ok(), "stronger privacy is allowed down to the floor");
}

#[test]
fn an_epsilon_below_the_floor_is_refused_and_costs_nothing() {
    let mut dev = device(1.0, 10.0, fresh());
    let floor = dev.accountant().policy().per_report_floor().get();
    assert_eq!(floor, 1.0 / 1024.0);
    let tiny = floor * 0.999;
    assert_eq!(
        dev.report(0.0, eps(tiny), None),
        Err(ReportError::Budget(BudgetError::BelowDeviceFloor { requested: tiny, floor }))
    );
    assert_eq!(dev.accountant().spent(), 0.0);
    assert!(dev.report(0.0, eps(floor), None).is_ok(), "the floor itself is allowed");
    let policy = BudgetPolicy::new(eps(1.0), eps(10.0)).unwrap();
    assert_eq!(policy.with_floor(eps(1.5)), Err(ParamError::FloorAboveLimit));
}

#[test]
fn refused_queries_release_nothing_and_spend_nothing() {
    let mut dev = device(1.0, 10.0, fresh());
    // Invalid ε and levels cannot reach the reporter: their types refuse them where they enter.
    assert_eq!(Epsilon::new(f64::NAN), Err(ParamError::EpsilonNotFinite));
    assert_eq!(Epsilon::new(-1.0), Err(ParamError::EpsilonNotPositive));
    assert_eq!(TruncationLevel::new(0.0), Err(ParamError::TruncationNotPositive));
    // A valid level the mechanism cannot use (beyond the exact grid range) is refused at the report.
    assert_eq!(
        dev.report(0.3, eps(1.0), Some(lvl(1e20))),
        Err(ReportError::Param(ParamError::SensitivityOutOfRange))
    );
    assert_eq!(dev.accountant().spent(), 0.0);
    assert_eq!(dev.accountant().store().state.unwrap().reserved_units, 0, "nothing was written");
}

/// A NaN or infinite reading is not a free probe: it is charged and released exactly as the
/// documented substitute (NaN as 0, ±∞ as ±MAX, i.e. clamped to ±C) would be — same noise
/// stream, same bytes.
#[test]
fn non_finite_readings_are_charged_and_released_as_their_substitute() {
    for (bad, substitute, level) in [
        (f64::NAN, 0.0, None),
        (f64::INFINITY, 2.0, None),
        (f64::NEG_INFINITY, -2.0, None),
        (f64::NAN, 0.0, Some(lvl(1.5))),
        (f64::INFINITY, 0.0, Some(lvl(1.5))), // truncated to zero, like any reading above the level
    ] {
        let mut a = device(1.0, 10.0, fresh());
        let mut b = device(1.0, 10.0, fresh());
        for _ in 0..5 {
            let x = a.report(bad, eps(0.5), level).unwrap();
            let y = b.report(substitute, eps(0.5), level).unwrap();
            assert_eq!(x, y, "{bad} vs {substitute} at level {level:?}");
        }
        assert_eq!(a.accountant().spent(), 2.5, "each non-finite reading was charged");
    }
}

#[test]
fn a_reset_does_not_restore_spent_budget_and_costs_at_most_one_chunk() {
    let policy = BudgetPolicy::new(eps(1.0), eps(40.0)).unwrap();
    assert_eq!(policy.chunk().get(), 16.0);
    let config = DeviceConfig { policy, ..config(1.0, 40.0) };
    let mut dev = Reporter::open(config, fresh(), [0; 32]).unwrap();
    assert_eq!(dev.accountant().boot(), 1);
    dev.report(0.1, eps(1.0), None).unwrap();
    dev.report(0.2, eps(1.0), None).unwrap();
    let state = dev.accountant().store().state.unwrap();
    assert_eq!((state.boot, state.reserved_units), (1, 16_000_000_000), "boot 1 reserved one chunk");
    // Power cycle: all RAM state is lost, the store survives; the reservation counts as spent.
    let mut dev = Reporter::open(config, dev.into_store(), [0; 32]).unwrap();
    assert_eq!(dev.accountant().boot(), 2);
    assert_eq!(dev.accountant().spent(), 16.0);
    for _ in 0..16 {
        dev.report(0.3, eps(1.0), None).unwrap();
    }
    let state = dev.accountant().store().state.unwrap();
    assert_eq!((state.boot, state.reserved_units), (2, 32_000_000_000));
    let mut dev = Reporter::open(config, dev.into_store(), [0; 32]).unwrap();
    for _ in 0..8 {
        dev.report(0.3, eps(1.0), None).unwrap();
    }
    assert!(matches!(
        dev.report(0.3, eps(1.0), None),
        Err(ReportError::Budget(BudgetError::Exhausted { .. }))
    ));
    // A boot that releases nothing writes nothing.
    let store = dev.into_store();
    let dev = Reporter::open(config, store, [0; 32]).unwrap();
    assert_eq!(dev.into_store(), store);
}

/// Writes are bounded by the budget, not by the query rate: ⌈total / chunk⌉ over the device's
/// life, however it is queried or reset.
#[test]
fn store_writes_are_at_most_total_over_chunk_whatever_the_resets() {
    let policy = BudgetPolicy::new(eps(1.0), eps(100.0)).unwrap();
    assert_eq!(policy.max_writes(), 7);
    let config = DeviceConfig { policy, ..config(1.0, 100.0) };
    // No resets: 400 reports at 0.25 use the whole budget with 7 writes.
    let mut dev = Reporter::open(config, CountingStore { inner: fresh(), writes: 0 }, [0; 32]).unwrap();
    for _ in 0..400 {
        dev.report(0.0, eps(0.25), None).unwrap();
    }
    assert_eq!(dev.accountant().remaining(), 0.0);
    assert_eq!(dev.accountant().store().writes, 7);
    // An attacker power-cycles the board every few queries: each reset burns the rest of a
    // chunk, and still no more than 7 writes ever happen.
    let mut store = CountingStore { inner: fresh(), writes: 0 };
    let mut reports = 0;
    for boot in 0..200 {
        let mut dev = Reporter::open(config, store, [0; 32]).unwrap();
        for _ in 0..(boot % 5) {
            if dev.report(0.0, eps(0.25), None).is_ok() {
                reports += 1;
            }
        }
        store = dev.into_store();
    }
    assert_eq!(store.inner.state.unwrap().reserved_units, 100_000_000_000, "the budget is used up");
    assert!(reports >= 7, "{reports} reports");
    assert!(store.writes <= policy.max_writes(), "{} writes > {}", store.writes, policy.max_writes());
}

#[derive(Debug)]
struct CountingStore {
    inner: MemoryStore,
    writes: u64,
}

impl StateStore for CountingStore {
    type Error = core::convert::Infallible;
    fn load(&mut self) -> Result<DeviceState, StateError<Self::Error>> {
        self.inner.load()
    }
    fn save(&mut self, state: &DeviceState) -> Result<(), StateError<Self::Error>> {
        self.writes += 1;
        self.inner.save(state)
    }
}

#[test]
fn a_device_that_was_never_provisioned_or_has_reserved_beyond_its_total_refuses() {
    let policy = BudgetPolicy::new(eps(1.0), eps(2.0)).unwrap();
    assert!(matches!(Accountant::open(MemoryStore::default(), policy), Err(BudgetError::NotProvisioned)));
    let mut state = DeviceState::provisioned([1; 32]);
    state.reserved_units = 2_000_000_001;
    let store = MemoryStore { state: Some(state) };
    assert!(matches!(Accountant::open(store, policy), Err(BudgetError::CorruptState)));
}

#[derive(Debug)]
struct FlakyStore {
    fail: bool,
    inner: MemoryStore,
}

#[derive(Debug, PartialEq)]
struct WriteFailed;

impl fmt::Display for WriteFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("flash write failed")
    }
}

impl StateStore for FlakyStore {
    type Error = WriteFailed;
    fn load(&mut self) -> Result<DeviceState, StateError<WriteFailed>> {
        self.inner.load().map_err(|_| StateError::NotProvisioned)
    }
    fn save(&mut self, state: &DeviceState) -> Result<(), StateError<WriteFailed>> {
        if self.fail {
            return Err(StateError::Medium(WriteFailed));
        }
        self.inner.state = Some(*state);
        Ok(())
    }
}

#[test]
fn storage_failure_refuses_the_report_and_still_counts_the_spend() {
    let config = config(1.0, 2.0);
    let mut dev = Reporter::open(config, FlakyStore { fail: false, inner: fresh() }, [0; 32]).unwrap();
    dev.report(0.0, eps(0.5), None).unwrap();
    let reserved = dev.accountant().store().inner.state.unwrap().reserved_units;
    assert_eq!(reserved, 2_000_000_000, "the reservation is capped at the total");
    let mut dev = {
        let mut store = dev.into_store();
        store.fail = true;
        Reporter::open(config, store, [0; 32]).unwrap()
    };
    // The reset counted the whole reservation (2) as spent.
    assert!(matches!(
        dev.report(0.0, eps(0.5), None),
        Err(ReportError::Budget(BudgetError::Exhausted { .. }))
    ));
    let mut store = dev.into_store();
    store.inner = fresh();
    let mut dev = Reporter::open(config, store, [0; 32]).unwrap();
    let err = dev.report(0.0, eps(1.0), None).unwrap_err();
    assert_eq!(err, ReportError::Budget(BudgetError::Storage(WriteFailed)));
    assert!(err.to_string().contains("flash write failed"));
    // Fail closed: the write may have stuck, so all it tried to reserve (the total, 2) counts.
    assert_eq!(dev.accountant().spent(), 2.0);
    assert!(matches!(
        dev.report(0.0, eps(0.5), None),
        Err(ReportError::Budget(BudgetError::Exhausted { .. }))
    ));
}

/// The device path never writes in a reply: `report_reserved` spends only what an idle-time
/// `prepare` reserved, and refuses (spending nothing, writing nothing) when that failed.
#[test]
fn report_reserved_never_writes_and_refuses_what_was_not_reserved() {
    let config = config(1.0, 40.0);
    let mut dev = Reporter::open(config, FlakyStore { fail: true, inner: fresh() }, [0; 32]).unwrap();
    assert!(dev.prepare().is_err(), "the store fails");
    let spent = dev.accountant().spent();
    assert_eq!(dev.report_reserved(0.0, eps(1.0), None), Err(ReportError::Budget(BudgetError::NotReserved)));
    assert_eq!(dev.accountant().spent(), spent, "a refusal for want of a reservation spends nothing");
    let mut store = dev.into_store();
    store.fail = false;
    let mut dev = Reporter::open(config, store, [0; 32]).unwrap();
    dev.prepare().unwrap();
    let reserved = dev.accountant().store().inner.state.unwrap();
    dev.report_reserved(0.0, eps(1.0), None).unwrap();
    assert_eq!(dev.accountant().store().inner.state.unwrap(), reserved, "a report wrote the store");
}

#[test]
fn learner_level_truncates_to_zero_before_noise() {
    let mut dev = device(1.0, 2000.0, fresh());
    // Level 2: a reward of 5 is truncated to 0, so its release is centred on 0.
    let n = 2000;
    let mean =
        (0..n).map(|_| dev.report(5.0, eps(1.0), Some(lvl(2.0))).unwrap().release.value()).sum::<f64>()
            / n as f64;
    // Noise sd = √2·(2·2/1) ≈ 5.66; the mean of 2000 has sd 0.127: 5.33 sd ≈ 0.68.
    assert!(mean.abs() < 0.68, "mean {mean}: the out-of-range reward was not truncated to zero");
}

/// Each boot keys its noise afresh: two boots that release (same store, same entropy) draw
/// different noise, and entropy alone also changes it.
#[test]
fn every_boot_draws_fresh_noise() {
    let config = config(1.0, 100.0);
    let draws = |dev: &mut Reporter<MemoryStore>| -> Vec<i64> {
        (0..8).map(|_| dev.report(0.0, eps(1.0), None).unwrap().release.index).collect()
    };
    let mut first = Reporter::open(config, fresh(), [0; 32]).unwrap();
    let a = draws(&mut first);
    let mut second = Reporter::open(config, first.into_store(), [0; 32]).unwrap();
    let b = draws(&mut second);
    assert_ne!(a, b, "boot 2 replayed boot 1's noise");
    let mut other_entropy = Reporter::open(config, fresh(), [1; 32]).unwrap();
    assert_ne!(a, draws(&mut other_entropy), "entropy is not mixed into the key");
    let mut same = Reporter::open(config, fresh(), [0; 32]).unwrap();
    assert_eq!(a, draws(&mut same), "a simulation with the same seed and entropy is reproducible");
}

/// Reserving ahead while idle keeps store writes out of the reply path: after `prepare`, no
/// report writes; `prepare` writes only when the next report at the limit would not fit.
#[test]
fn prepare_writes_ahead_so_reports_never_write() {
    let policy = BudgetPolicy::new(eps(1.0), eps(40.0)).unwrap();
    let config = DeviceConfig { policy, ..config(1.0, 40.0) };
    let mut dev = Reporter::open(config, CountingStore { inner: fresh(), writes: 0 }, [0; 32]).unwrap();
    dev.prepare().unwrap();
    assert_eq!(dev.accountant().store().writes, 1, "the boot is written at prepare, before any query");
    let mut report_writes = 0;
    for _ in 0..40 {
        let before = dev.accountant().store().writes;
        dev.report(0.0, eps(1.0), None).unwrap();
        report_writes += dev.accountant().store().writes - before;
        dev.prepare().unwrap();
    }
    assert_eq!(report_writes, 0, "a report wrote the store");
    assert_eq!(dev.accountant().store().writes, 3, "reservations at 16, 32 and 40");
    assert_eq!(dev.accountant().remaining(), 0.0);
}
