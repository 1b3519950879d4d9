//! The privacy audit passes our mechanisms (CTL, the LDP-RSE report, the scalar, adaptive and
//! vector trees, the symmetric JDP tree, the private sum, private Hedge and EXP3, the local-JDP
//! Gaussian report at (ε, δ), and the production path: device app bytes, and two boots of one
//! device) and catches every broken fixture (a device that reuses its key after a reset, trees
//! and Hedge without ε split across levels, a sum at half its sensitivity, EXP3's noise for half
//! the loss range, halved noise, missing clamp, naive floating-point Laplace, Gaussian noise at
//! the Laplace scale). Each verdict is a Clopper–Pearson bound at α = 1e-6 with a fixed seed.
//! The firmware rows (`host-sim audit --qemu`) are checked in `tests/tests/qemu_audit.rs`.

use host_sim::audit::{AuditError, Case, Draw, STATS, audit, audit_all, cases, table};

#[test]
fn audit_passes_ours_and_catches_the_fixtures() {
    let verdicts = audit_all(&cases(), 200_000, 1e-6, 11);
    let report = table(&verdicts);
    eprintln!("{report}");
    assert!(verdicts.iter().any(|v| v.ours) && verdicts.iter().any(|v| !v.ours));
    for v in &verdicts {
        assert!(v.epsilon_lower_bound.is_finite() || !v.ours, "{report}");
        if v.ours {
            assert!(v.passed, "our mechanism failed its audit:\n{report}");
        } else {
            assert!(!v.passed, "a broken fixture passed the audit:\n{report}");
        }
    }
}

#[test]
fn audit_is_reproducible_and_thread_count_independent() {
    let a = audit_all(&cases()[..2], 20_000, 1e-6, 3);
    let b = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| audit_all(&cases()[..2], 20_000, 1e-6, 3));
    assert_eq!(a, b);
}

/// Too few draws to catch the broken fixtures: the CLI says more would help, and how many.
#[test]
fn audit_at_few_samples_says_to_run_with_more() {
    let out = std::env::temp_dir().join(format!("host-sim-audit-few-{}", std::process::id()));
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_host-sim"))
        .args(["audit", "--samples", "1000", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "at 1000 draws every fixture was caught: {err}");
    assert!(err.contains("did not catch the deliberately broken"), "{err}");
    assert!(err.contains("run with more, e.g. --samples 10000"), "{err}");
    assert!(!err.contains("privacy violation"), "{err}");
    let _ = std::fs::remove_dir_all(out);
}

/// A device that fails during its audit (a batch's error makes its draws NaN) has no bound and
/// fails: its NaN draws hit no attack set, which alone read as a private device (ε_lb 0, pass)
/// or caught a private fixture.
#[test]
fn a_device_that_fails_during_its_audit_fails_it() {
    let failing = |fail_high: bool| Case {
        name: "a device whose one neighbour's batch fails",
        claimed_epsilon: 1.0,
        claimed_delta: 0.0,
        ours: true,
        draw: Draw::Batch(Box::new(move |high: bool, n: u64, _seed: u64| {
            if high == fail_high {
                Err(AuditError::from(std::io::Error::other("the emulator exited")))
            } else {
                Ok(vec![[if high { 10.0 } else { 0.0 }; STATS]; n as usize])
            }
        })),
    };
    for fail_high in [true, false] {
        let v = audit(&failing(fail_high), 1000, 1e-6, 1);
        assert!(v.failed(), "fail_high {fail_high}: {}", v.epsilon_lower_bound);
        assert!(!v.passed, "fail_high {fail_high}");
        assert!(table(&[v]).contains("FAILED"));
    }
}
