//! Hardware in the loop under QEMU: a small fig2a against the emulated firmware. The host
//! samples each raw reward from the experiment's environment and feeds it with the query; the
//! device, provisioned with the experiment's B, R and a budget of T·ε, privatises it through its
//! production path. Every release is on the device's CTL grid, the budget goes down by exactly
//! ε per report, an exhausted budget refuses, and a restarted device keeps the budget and the
//! configuration it was provisioned with — and one whose kept configuration was truncated or
//! rewritten, or whose provisioning request is invalid, serves nothing. Regret is not compared with the in-process run: the
//! device keys its noise from OS entropy.
//!
//! Skips with a printed reason when QEMU or the thumbv7em target is missing, unless
//! REQUIRE_QEMU=1 (CI), when that is a failure.

use crate::common;

use host_sim::experiments;
use host_sim::experiments::runner::{DeviceKind, RunConfig, derive_seed, problem_for, run_trial};
use ldp_core::mechanism::MAX_RELEASE_INDEX;
use ldp_core::wire::{Query, Refusal};
use ldp_core::{Bound, Epsilon, LaplaceMechanism};
use ldp_learn::bo::gp_ucb::GpUcb;
use ldp_learn::env::{Environment, SimRng};
use ldp_learn::policy::Constants;
use ldp_learn::policy::Policy;
use ldp_link::client::{LinkError, WireClient};
use ldp_link::device::device_config;
use ldp_link::transport::QemuDevice;
use rand_core::SeedableRng;

const ROUNDS: usize = 120;

fn fig2a() -> (&'static experiments::Experiment, Box<dyn Environment>, f64) {
    let fig2a = experiments::find("fig2a").unwrap();
    let env = experiments::env_factory(fig2a.env, None).unwrap()(derive_seed(0, 0, 0)).unwrap();
    (fig2a, env, fig2a.epsilon.unwrap().get())
}

#[test]
fn fig2a_against_the_emulated_firmware_with_fed_rewards() {
    let Some(elf) = common::firmware(&[]) else { return };
    let (fig2a, env, eps) = fig2a();
    let total = eps * ROUNDS as f64;
    let provision = device_config(env.as_ref(), Epsilon::new(eps).unwrap(), total).unwrap();
    let workdir = common::fresh_dir("hil");
    let mut qemu = QemuDevice::start_provisioned(&elf, &workdir, &provision).unwrap();
    let mut client = WireClient::new(qemu.connect().unwrap(), qemu.auth().unwrap());
    let hello = client.hello().unwrap();
    assert_eq!(hello.config, provision, "the device runs with the experiment's B, R and budget");
    assert_eq!(hello.budget_remaining, total);

    let bounds = env.bounds();
    let epsilon = Epsilon::new(eps).unwrap();
    let ctl =
        LaplaceMechanism::ctl(epsilon, Bound::new(bounds.b).unwrap(), Bound::new(bounds.r.unwrap()).unwrap())
            .unwrap();
    let config = RunConfig { horizon: ROUNDS, constants: Constants::Practical, ..fig2a.default_config() };
    let mut policy =
        GpUcb::tgp_ucb(&problem_for(env.as_ref(), &config).unwrap(), Constants::Practical).unwrap();
    let mut world = SimRng::seed_from_u64(1);
    let mut left = total;
    for t in 1..=ROUNDS as u32 {
        let arm = policy.select();
        // The last reading is NaN: released as a sensor's NaN is (as 0), and charged.
        let reading = if t == ROUNDS as u32 { f64::NAN } else { env.sample(arm, &mut world) };
        let query = Query { round: t, action: arm as u32, epsilon, level: None };
        let report = client.fed_query(query, reading).unwrap().unwrap_or_else(|r| panic!("round {t}: {r}"));
        assert_eq!(report.release.grid_log2, ctl.grid_log2(), "round {t}: off the device's grid");
        assert!(report.release.index.abs() <= MAX_RELEASE_INDEX, "round {t}");
        assert_eq!((report.epsilon, report.epsilon_effective), (eps, ctl.epsilon_effective()), "round {t}");
        // Exactly ε per report (the accountant counts whole nano-ε; ε = 1 here).
        assert!((left - report.budget_remaining - eps).abs() < 1e-9, "round {t}: {report:?} after {left}");
        left = report.budget_remaining;
        policy.observe(arm, report.release.value()).unwrap();
    }
    assert!(left.abs() < 1e-9, "T reports spent T·ε: {left} left");
    let over = client.fed_query(Query { round: 0, action: 0, epsilon, level: None }, 0.5).unwrap();
    assert!(matches!(over, Err(Refusal::BudgetExhausted { .. })), "{over:?}");

    // A restart (a power cycle) keeps the device: its spent budget and its configuration, even
    // when the host asks to provision another one.
    qemu.kill();
    drop(qemu);
    let other = device_config(env.as_ref(), Epsilon::new(eps / 2.0).unwrap(), 1000.0).unwrap();
    let mut qemu = QemuDevice::start_provisioned(&elf, &workdir, &other).unwrap();
    let hello = WireClient::new(qemu.connect().unwrap(), qemu.auth().unwrap()).hello().unwrap();
    assert_eq!(hello.config, provision);
    assert!(hello.budget_remaining.abs() < 1e-9, "{hello:?}");
    let _ = std::fs::remove_dir_all(&workdir);
}

/// The bandit loop itself (`host-sim run fig2a --device qemu`): a fed trial runs to its horizon
/// on a device provisioned with T·ε, which the trial spends exactly.
#[test]
fn the_runner_feeds_a_qemu_device() {
    let Some(elf) = common::firmware(&[]) else { return };
    let (fig2a, env, _) = fig2a();
    let horizon = 40;
    let config = RunConfig {
        horizon,
        trials: 1,
        threads: Some(1),
        device: DeviceKind::Qemu { elf },
        feed: true,
        ..fig2a.default_config()
    };
    let curve = run_trial(env.as_ref(), &config.algorithms[1], &config, derive_seed(0, 0, 0), 1).unwrap();
    assert_eq!(curve.len(), horizon);
    assert!(curve.windows(2).all(|w| w[1] >= w[0] && w[1].is_finite()), "{curve:?}");
}

/// The state file's layout (firmware-example/src/semihosting.rs): two 64-byte record slots,
/// then the configuration tail (magic, four `f64`, CRC-32C).
const RECORDS: usize = 128;
const TAIL: usize = 40;

/// A device that must not serve: it answers no hello and no query (a halted firmware is
/// silent; what it would say with a fresh budget is the attack), and it writes nothing.
fn assert_halted(qemu: &mut QemuDevice, what: &str) {
    let state = std::fs::read(qemu.workdir().join("ldp-state.bin")).ok();
    let mut client = WireClient::new(qemu.connect().unwrap(), qemu.auth().unwrap());
    client.tries = 3;
    let hello = client.hello();
    assert!(
        matches!(hello, Err(LinkError::Timeout { .. })),
        "{what}: the device answered {hello:?}; {:?}",
        qemu.exited()
    );
    let query = Query { round: 1, action: 0, epsilon: Epsilon::new(1.0).unwrap(), level: None };
    let released = client.fed_query(query, 0.5);
    assert!(matches!(released, Err(LinkError::Timeout { .. })), "{what}: the device answered {released:?}");
    let after = std::fs::read(qemu.workdir().join("ldp-state.bin")).ok();
    assert_eq!(after, state, "{what}: the halted device wrote its state");
}

/// The review's attack: an exhausted device's configuration tail truncated away, or its total
/// rewritten to 10^6 ε, or its newer record blanked, gave it a fresh budget after a reboot. Now
/// the rebooted device halts as it does for a torn record; an intact one still answers, with
/// nothing left.
#[test]
fn a_truncated_or_rewritten_configuration_or_a_blanked_record_halts_the_device() {
    let Some(elf) = common::firmware(&[]) else { return };
    let (_, env, eps) = fig2a();
    let provision = device_config(env.as_ref(), Epsilon::new(eps).unwrap(), 2.0 * eps).unwrap();
    let epsilon = Epsilon::new(eps).unwrap();
    type Attack = fn(&mut Vec<u8>);
    let attacks: [(&str, Attack); 4] = [
        ("intact", |_| {}),
        ("truncated to the records", |state| state.truncate(RECORDS)),
        ("total rewritten to 1e6", |state| {
            state[RECORDS + 4 + 24..RECORDS + 4 + 32].copy_from_slice(&1e6f64.to_le_bytes())
        }),
        // Issue 25, item 4: the newer record (by generation) blanked gave the budget back.
        ("newer record blanked", |state| {
            let generation =
                |at: usize| u32::from_le_bytes([state[at + 4], state[at + 5], state[at + 6], state[at + 7]]);
            let at = if generation(64) > generation(0) { 64 } else { 0 };
            state[at..at + 64].fill(0xFF);
        }),
    ];
    for (i, (what, attack)) in attacks.into_iter().enumerate() {
        let workdir = common::fresh_dir(&format!("hil-tail-{i}"));
        let mut qemu = QemuDevice::start_provisioned(&elf, &workdir, &provision).unwrap();
        let mut client = WireClient::new(qemu.connect().unwrap(), qemu.auth().unwrap());
        assert_eq!(client.hello().unwrap().config, provision, "{what}");
        for t in 1..=2 {
            let query = Query { round: t, action: 0, epsilon, level: None };
            client.fed_query(query, 0.5).unwrap().unwrap();
        }
        let over = client.fed_query(Query { round: 3, action: 0, epsilon, level: None }, 0.5).unwrap();
        assert!(matches!(over, Err(Refusal::BudgetExhausted { .. })), "{what}: {over:?}");
        drop(client);
        qemu.kill();
        drop(qemu);

        let path = workdir.join("ldp-state.bin");
        let mut state = std::fs::read(&path).unwrap();
        assert_eq!(state.len(), RECORDS + TAIL, "{what}");
        attack(&mut state);
        std::fs::write(&path, &state).unwrap();
        let mut qemu = QemuDevice::start(&elf, &workdir).unwrap();
        if i == 0 {
            let hello = WireClient::new(qemu.connect().unwrap(), qemu.auth().unwrap()).hello().unwrap();
            assert_eq!(hello.config, provision);
            assert!(hello.budget_remaining.abs() < 1e-9, "{hello:?}");
        } else {
            assert_halted(&mut qemu, what);
        }
        drop(qemu);
        let _ = std::fs::remove_dir_all(&workdir);
    }
}

/// A provisioning request that is short or invalid (NaN, a per-report limit above the total)
/// provisions nothing: the new device halts, and no state file is created.
#[test]
fn an_invalid_provisioning_request_provisions_nothing() {
    let Some(elf) = common::firmware(&[]) else { return };
    let words = |w: [f64; 4]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let requests = [
        ("short", words([1.0, 1.0, 1.0, 10.0])[..31].to_vec()),
        ("NaN", words([f64::NAN, 1.0, 1.0, 10.0])),
        ("limit above the total", words([1.0, 1.0, 10.0, 1.0])),
    ];
    for (i, (what, request)) in requests.into_iter().enumerate() {
        let workdir = common::fresh_dir(&format!("hil-request-{i}"));
        std::fs::create_dir_all(&workdir).unwrap();
        std::fs::write(workdir.join("ldp-config.bin"), &request).unwrap();
        let mut qemu = QemuDevice::start(&elf, &workdir).unwrap();
        assert_halted(&mut qemu, what);
        assert!(!workdir.join("ldp-state.bin").exists(), "{what}: a device was provisioned");
        drop(qemu);
        let _ = std::fs::remove_dir_all(&workdir);
    }
}
