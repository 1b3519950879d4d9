//! `host-sim live --device qemu` never makes a new board for a run whose board was lost: the
//! emulated board's state is `<out>/device/ldp-state.bin`, and QEMU provisions a fresh device
//! (a fresh budget) whenever that file is missing, or its records are blank and a provisioning
//! request lies beside it. Issue 25, item 3: the state removed after a run, the same command
//! went on with a new board's budget.
//!
//! Skips with a printed reason when QEMU or the thumbv7em target is missing, unless
//! REQUIRE_QEMU=1 (CI), when that is a failure.

use std::path::PathBuf;
use std::process::Command;

use ldp_link::client::WireClient;
use ldp_link::transport::{FirmwareError, QemuDevice, build_firmware};

/// The firmware image, or `None` (the test skips, saying why).
fn firmware() -> Option<PathBuf> {
    let reason = if Command::new("qemu-system-arm").arg("--version").output().is_err() {
        "qemu-system-arm is not installed (scripts/install-deps.sh --qemu)".to_string()
    } else {
        match build_firmware(&[]) {
            Ok(elf) => return Some(elf),
            Err(FirmwareError::TargetMissing) => FirmwareError::TargetMissing.to_string(),
            Err(e) => panic!("{e}"),
        }
    };
    if std::env::var_os("REQUIRE_QEMU").is_some_and(|v| v == "1") {
        panic!("REQUIRE_QEMU=1 but {reason}");
    }
    eprintln!("skipping this QEMU test: {reason}");
    None
}

/// One emulator at a time in this binary: `host-sim live` picks its emulator's port in another
/// process, which the port lock of `QemuDevice::start` does not reach (two emulators on one
/// port: the learner meets the other test's board).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The firmware image and this binary's turn at the emulator, or `None` (the test skips, saying why).
fn firmware_in_turn() -> Option<(PathBuf, std::sync::MutexGuard<'static, ()>)> {
    let elf = firmware()?;
    Some((elf, ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)))
}

/// An empty directory `<name>-<pid>` in the temporary directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `host-sim live` on the emulated board, `horizon` rounds into `out`: (success, stderr).
fn live(elf: &std::path::Path, out: &std::path::Path, horizon: usize) -> (bool, String) {
    let device = format!("qemu:{}", elf.display());
    let horizon = horizon.to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_host-sim"))
        .args(["live", "--device", &device, "--actions", "5", "--learner", "UCB1", "--quiet"])
        .args(["--horizon", &horizon, "--out"])
        .arg(out)
        .output()
        .expect("host-sim runs");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn a_lost_board_is_refused_not_made_again() {
    let Some((elf, _one)) = firmware_in_turn() else { return };
    let out = fresh_dir("ldp-live-qemu");
    let (ok, err) = live(&elf, &out, 6);
    assert!(ok, "{err}");
    let state = out.join("device").join("ldp-state.bin");
    assert!(state.is_file());
    let rows = |out: &std::path::Path| std::fs::read_to_string(out.join("live.csv")).unwrap().lines().count();
    assert_eq!(rows(&out), 7);

    // The same board goes on.
    let (ok, err) = live(&elf, &out, 8);
    assert!(ok, "{err}");
    assert_eq!(rows(&out), 9);

    // Its state lost: refused, as `fleet bridge` refuses it; nothing is released.
    std::fs::remove_file(&state).unwrap();
    let (ok, err) = live(&elf, &out, 12);
    assert!(!ok, "a new board was made for the recorded run");
    assert!(err.contains("lost its state"), "{err}");
    assert!(!state.exists(), "a new board was provisioned");
    assert_eq!(rows(&out), 9);

    // Everything of the board removed: the run's record still names it.
    std::fs::remove_dir_all(out.join("device")).unwrap();
    let (ok, err) = live(&elf, &out, 12);
    assert!(!ok, "a new board was made for the recorded run");
    assert!(err.contains("--out"), "{err}");
    assert!(!state.exists(), "a new board was provisioned");
    assert_eq!(rows(&out), 9);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_board_whose_records_were_blanked_is_not_provisioned_again() {
    // The next move after the refusal above: keep the state file but blank its records, and
    // leave a provisioning request beside it. The firmware provisions a blank store when asked:
    // the host must never ask for a board that exists.
    let Some((elf, _one)) = firmware_in_turn() else { return };
    let dir = fresh_dir("ldp-live-qemu-blanked");
    let mut qemu = QemuDevice::start(&elf, &dir).unwrap();
    let hello = WireClient::new(qemu.connect().unwrap(), qemu.auth().unwrap()).hello().unwrap();
    assert!(hello.budget_remaining > 0.0);
    drop(qemu);

    let state = dir.join("ldp-state.bin");
    let mut bytes = std::fs::read(&state).unwrap();
    bytes[..128].fill(0xFF);
    std::fs::write(&state, &bytes).unwrap();
    std::fs::write(dir.join("ldp-provision.bin"), [7u8; 32]).unwrap();
    let mut qemu = QemuDevice::start(&elf, &dir).unwrap();
    let answered = qemu.connect().ok().and_then(|link| {
        // Were the request obeyed, the new board would answer under the key of that seed.
        let key = ldp_core::wire::LinkKey::from_seed(&[7; 32]);
        let auth = ldp_core::wire::Auth::new(key, ldp_link::transport::QEMU_DEVICE_ID);
        let mut client = WireClient::new(link, auth);
        client.tries = 3;
        client.hello().ok()
    });
    assert!(answered.is_none(), "the blanked board answered: {answered:?}");
    drop(qemu);
    assert_eq!(std::fs::read(&state).unwrap(), bytes, "the board was provisioned again");
    assert!(!dir.join("ldp-provision.bin").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The emulated board's configuration tail is sealed under its seed (issue #25 review): the
/// tail of a board provisioned with a larger budget, copied into another board's state file,
/// halts that board instead of giving it that budget. Fails with main's tail (a CRC-32C of the
/// tail alone, valid in any image).
#[test]
fn a_configuration_copied_from_another_board_is_refused() {
    let Some((elf, _one)) = firmware_in_turn() else { return };
    let base = fresh_dir("ldp-live-qemu-swap");
    let config = |total: f64| {
        let eps = ldp_core::Epsilon::new(1.0).unwrap();
        let policy = ldp_core::BudgetPolicy::new(eps, ldp_core::Epsilon::new(total).unwrap()).unwrap();
        let one = ldp_core::Bound::new(1.0).unwrap();
        ldp_core::DeviceConfig { b: one, r: one, policy }
    };
    let boot = |dir: &std::path::Path, total: Option<f64>| {
        let mut qemu = match total {
            Some(t) => QemuDevice::start_provisioned(&elf, dir, &config(t)).unwrap(),
            None => QemuDevice::start(&elf, dir).unwrap(),
        };
        let auth = qemu.auth().unwrap();
        qemu.connect().ok().and_then(|link| {
            let mut client = WireClient::new(link, auth);
            client.tries = 3;
            client.hello().ok()
        })
    };
    let (rich, poor) = (base.join("rich"), base.join("poor"));
    assert_eq!(boot(&rich, Some(900.0)).map(|h| h.config.policy.total().get()), Some(900.0));
    assert_eq!(boot(&poor, Some(2.0)).map(|h| h.config.policy.total().get()), Some(2.0));
    // The poor board again, with its own tail: fine.
    assert!(boot(&poor, None).is_some());
    let tail = |dir: &std::path::Path| std::fs::read(dir.join("ldp-state.bin")).unwrap()[128..168].to_vec();
    let mut state = std::fs::read(poor.join("ldp-state.bin")).unwrap();
    state[128..168].copy_from_slice(&tail(&rich));
    std::fs::write(poor.join("ldp-state.bin"), &state).unwrap();
    let answered = boot(&poor, None);
    assert!(answered.is_none(), "the board took another board's configuration: {answered:?}");
    let _ = std::fs::remove_dir_all(&base);
}
