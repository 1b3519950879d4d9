//! Review 6: boot numbers of an exhausted device.
//!
//! **Break (informational).** Issue #25 asks that "boot numbers never repeat", and
//! docs/wire-format.md says the session is "the device's boot number (never repeated: it is
//! written before a boot's first release)". An exhausted device never writes: `prepare` (the
//! boot write) reserves nothing once the budget is spent (`Accountant::reserve_ahead`), so every
//! power cycle of an exhausted device starts the same boot number, and its conversation count
//! starts at 1 again: (session, conversation) pairs repeat, and a recorded hello request and
//! query of an earlier such boot verify again. Nothing is released or spent (every query is
//! refused `BudgetExhausted`, as it was), so no report or budget is at stake; it only makes the
//! claim false. A fix: write the boot number at boot whatever the budget, or say so in the docs.

use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};

fn open(store: MemoryStore, total: f64) -> Reporter<MemoryStore> {
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(total).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
    let mut r = Reporter::open(config, store, [1; 32]).unwrap();
    let _ = r.prepare(); // what `DeviceApp::new` does at boot
    r
}

/// Held: a device with budget left writes a new boot number at every boot.
#[test]
fn a_device_with_budget_left_never_repeats_a_boot_number() {
    let mut boots = Vec::new();
    let mut store = MemoryStore::provisioned([4; 32]);
    for _ in 0..3 {
        let r = open(store, 1000.0);
        boots.push(r.accountant().boot());
        store = *r.accountant().store();
    }
    assert!(boots.windows(2).all(|w| w[1] > w[0]), "{boots:?}");
}

#[test]
#[ignore = "review6 break (informational): an exhausted device repeats its boot number at every power cycle"]
fn an_exhausted_device_never_repeats_a_boot_number() {
    let mut r = open(MemoryStore::provisioned([4; 32]), 2.0);
    let eps = Epsilon::new(1.0).unwrap();
    r.report(0.1, eps, None).unwrap();
    r.report(0.1, eps, None).unwrap();
    assert!(r.report(0.1, eps, None).is_err());
    let mut boots = vec![r.accountant().boot()];
    let mut store = *r.accountant().store();
    for _ in 0..3 {
        let r = open(store, 2.0);
        boots.push(r.accountant().boot());
        store = *r.accountant().store();
    }
    assert!(boots.windows(2).all(|w| w[1] > w[0]), "boot numbers across power cycles: {boots:?}");
}
