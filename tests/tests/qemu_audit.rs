//! The privacy audit of the production path on the real firmware under QEMU (`host-sim audit
//! --qemu`): one report, and one report from each of two boots of one device, pass their claim
//! of ε = 1; a device whose state file is rolled back and whose boot entropy is replayed before
//! the second boot (no persistent store, no TRNG) repeats its noise and is caught. 1000 test
//! draws per neighbour, Clopper–Pearson at α = 1e-6.
//!
//! Skips with a printed reason when QEMU or the thumbv7em target is missing, unless
//! REQUIRE_QEMU=1 (CI), when that is a failure.

use host_sim::audit::{audit_all, firmware_cases, table};

use crate::common;

#[test]
fn the_firmware_passes_its_audit_and_a_rolled_back_device_is_caught() {
    let Some(elf) = common::firmware(&[]) else { return };
    let verdicts = audit_all(&firmware_cases(&elf), 1000, 1e-6, 5);
    let report = table(&verdicts);
    eprintln!("{report}");
    assert_eq!(verdicts.len(), 3);
    for v in &verdicts {
        assert!(v.epsilon_lower_bound.is_finite(), "a device failed (NaN draws):\n{report}");
        assert_eq!(v.passed, v.ours, "verdict contrary to expectation:\n{report}");
    }
}
