//! Every truncation level is refused before anything is spent, or charged the full ε with a
//! noised release.
//!
//! The level of LDP-RSE as the Python package's `Reporter.report(value, eps, level=)` applies
//! it (`python/src/lib.rs`: `TruncationLevel::new(level)` then `ldp_core::Reporter::report`,
//! the path tested here without building the wheel): NaN, ±∞, 0, −0 and negative levels are
//! refused before anything is spent (`TruncationLevel::new`; the package raises
//! `InvalidParameter`); levels outside [2^-40, 2^40] (subnormal, 1e-300, 1e300, `f64::MAX`)
//! are refused by the mechanism, which is built before the spend, with nothing spent (the
//! package raises `InvalidParameter`, "the device refused"); every accepted level charges the
//! full ε asked, releases a finite value, and does not pass the raw value through.

use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter, TruncationLevel};

fn reporter(seed: u8) -> Reporter<MemoryStore> {
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(1e6).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
    Reporter::open(config, MemoryStore::provisioned([seed; 32]), [seed; 32]).unwrap()
}

/// Held: invalid levels are refused before the spend; tiny ones by the mechanism, nothing
/// spent; valid ones charge exactly ε and never release the raw value itself for a value
/// within the level (the release is on the grid, noised; checked: not all equal to the raw).
#[test]
fn every_level_is_refused_before_the_spend_or_charged_in_full() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, -1.0, -f64::MAX] {
        assert!(TruncationLevel::new(bad).is_err(), "level {bad} accepted");
    }
    let eps = Epsilon::new(0.5).unwrap();
    for level in
        [f64::from_bits(1), f64::MIN_POSITIVE, 1e-300, 2f64.powi(-41), 2f64.powi(41), 1e300, f64::MAX]
    {
        let mut r = reporter(1);
        let got = r.report(0.25, eps, Some(TruncationLevel::new(level).unwrap()));
        assert!(got.is_err(), "level {level:e}: {got:?}");
        assert_eq!(r.accountant().spent(), 0.0, "level {level:e}: refused but spent");
    }
    for level in [2f64.powi(-40), 1e-9, 0.5, 1.0, 1e9, 2f64.powi(40)] {
        let mut r = reporter(2);
        let mut raw_released = 0;
        for k in 0..50 {
            let report = r.report(0.4 * level, eps, Some(TruncationLevel::new(level).unwrap())).unwrap();
            assert!(report.release.value().is_finite(), "level {level:e}: {report:?}");
            raw_released += usize::from(report.release.value() == 0.4 * level);
            assert!((r.accountant().spent() - 0.5 * (k + 1) as f64).abs() < 1e-9);
        }
        assert!(raw_released < 50, "level {level:e}: the raw value came out every time");
    }
}
