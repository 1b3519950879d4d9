//! `host-sim live`: a learner against a device whose means it does not know, here the device
//! application in process behind the wire. Every release is kept, a stopped run resumes to the
//! very rows an uninterrupted one writes, the device's budget ends a run cleanly, and a
//! directory of another run is refused.

use std::path::Path;

use host_sim::live::{self, Actions, LiveError, LiveSpec, Round};
use ldp_core::device::{DeviceApp, SensorModel, SimulatedSensor};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use ldp_learn::bo::{GP_EXPERIMENT_ALGORITHMS, UCB1};
use ldp_learn::env::custom::KernelChoice;
use ldp_learn::policy::Constants;
use ldp_link::client::WireClient;
use ldp_link::transport::LoopbackLink;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

type Device = WireClient<LoopbackLink<MemoryStore, SimulatedSensor<ChaCha20Rng>>>;

/// The sensor model's device (B = R = 1, 20 actions) with a lifetime budget of `total` ε.
fn device(total: f64, r: f64) -> Device {
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(total).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(r).unwrap(), policy };
    let reporter = Reporter::open(config, MemoryStore::provisioned([7; 32]), [1; 32]).unwrap();
    let world = ChaCha20Rng::seed_from_u64(3);
    let source = SimulatedSensor::new(SensorModel::new(20, Bound::new(r).unwrap()).unwrap(), world);
    let link = LoopbackLink::new(DeviceApp::new(reporter, source, 42));
    let auth = link.auth();
    WireClient::new(link, auth)
}

/// [`device`] (r = 1) booted a second time from the state its first boot left.
fn rebooted(total: f64) -> Device {
    let first = device(total, 1.0);
    let store = *first.link().app().reporter().accountant().store();
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(total).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
    let reporter = Reporter::open(config, store, [1; 32]).unwrap();
    let world = ChaCha20Rng::seed_from_u64(3);
    let source = SimulatedSensor::new(SensorModel::new(20, Bound::new(1.0).unwrap()).unwrap(), world);
    let link = LoopbackLink::new(DeviceApp::new(reporter, source, 42));
    let auth = link.auth();
    WireClient::new(link, auth)
}

fn spec(horizon: usize) -> LiveSpec {
    LiveSpec {
        learner: GP_EXPERIMENT_ALGORITHMS[1], // LDP-TGP-UCB
        actions: Actions::Grid { count: 20 },
        kernel: KernelChoice { lengthscale: Some(0.2), ..KernelChoice::default() },
        epsilon: Epsilon::new(1.0).unwrap(),
        horizon,
        seed: 5,
        constants: Constants::Calibrated,
        beta_scale: 1.0,
    }
}

fn csv(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(live::LIVE_CSV)).unwrap()
}

/// A fresh directory for one test's records, removed when the test ends (passed or not).
struct Scratch(std::path::PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("ldp-live-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    Scratch(dir)
}

#[test]
fn every_release_is_kept_and_charged() {
    let dir = scratch("kept");
    let mut seen = Vec::new();
    let out = live::run(&mut device(1000.0, 1.0), &spec(60), &dir, |r, _| seen.push(*r)).unwrap();
    assert_eq!(out.rounds.len(), 60);
    assert_eq!(out.rounds, seen);
    assert!(!out.budget_exhausted);
    for (i, r) in out.rounds.iter().enumerate() {
        assert_eq!(r.round, i + 1);
        assert!(r.action < 20);
        // On the device's grid 2^(⌊log2(B+R)⌋ − 12) = 2^-11, within the clamp and ±2^52 steps.
        let steps = r.release * 2048.0;
        assert_eq!(steps, steps.round(), "round {}: {} is off the grid", r.round, r.release);
        assert!(r.epsilon_effective <= 1.0 && r.epsilon_effective > 0.999);
    }
    // The budget goes down by one ε per report (reserved in chunks ahead: never more per row).
    for w in out.rounds.windows(2) {
        assert!(w[1].budget_remaining <= w[0].budget_remaining - 1.0 + 1e-9);
    }
    // The files: a header and one row per round; the per-action table counts them.
    let text = csv(&dir);
    assert_eq!(text.lines().count(), 61);
    assert_eq!(text.lines().next(), Some("round,action,release,epsilon_effective,budget_remaining"));
    let table = std::fs::read_to_string(dir.join(live::ACTIONS_CSV)).unwrap();
    let pulls: usize =
        table.lines().skip(1).map(|l| l.split(',').nth(1).unwrap().parse::<usize>().unwrap()).sum();
    assert_eq!(pulls, 60);
    assert_eq!(table.lines().count(), 21);
    let names: Vec<_> = out.files.iter().filter_map(|p| p.file_name()?.to_str()).collect();
    assert_eq!(names, ["live.json", "live.csv", "live.svg", "live.png", "actions.csv"]);
    assert!(out.files.iter().all(|p| p.is_file()));
}

#[test]
fn a_stopped_run_resumes_to_the_rows_of_an_uninterrupted_one() {
    let whole = scratch("whole");
    live::run(&mut device(1000.0, 1.0), &spec(50), &whole, |_, _| {}).unwrap();

    // The same device, stopped after 20 rounds, with the 21st row cut short by a kill.
    let parts = scratch("parts");
    let mut dev = device(1000.0, 1.0);
    live::run(&mut dev, &spec(20), &parts, |_, _| {}).unwrap();
    let mut f = std::fs::OpenOptions::new().append(true).open(parts.join(live::LIVE_CSV)).unwrap();
    std::io::Write::write_all(&mut f, b"21,3,0.5").unwrap();
    drop(f);
    let out = live::run(&mut dev, &spec(50), &parts, |_, _| {}).unwrap();
    assert_eq!(out.resumed, 20);
    assert_eq!(out.rounds.len(), 50);
    assert_eq!(csv(&parts), csv(&whole));

    // Going on to the same horizon again releases nothing more, and says it spent nothing
    // (an empty float sum is −0: it printed "-0.000 eps spent").
    let again = live::run(&mut dev, &spec(50), &parts, |_, _| {}).unwrap();
    assert_eq!((again.resumed, again.rounds.len()), (50, 50));
    assert_eq!(csv(&parts), csv(&whole));
    assert_eq!(again.spent().to_bits(), 0.0f64.to_bits());
    assert!(
        again.summary().starts_with("50 rounds (50 resumed), 0.000 eps spent in this session"),
        "{}",
        again.summary()
    );
    // The session that went from round 21 to 50 spent the ε of 30 reports, not of 50.
    assert!(out.spent() > 29.9 && out.spent() <= 30.0, "{}", out.summary());

    // A second run into the directory while one holds it is refused before the device is asked.
    let _held = host_sim::run::checkpoint::OutLock::acquire(&parts).unwrap();
    let busy = live::run(&mut dev, &spec(50), &parts, |_, _| {}).unwrap_err().to_string();
    assert!(busy.contains("is being written by another host-sim run"), "{busy}");
}

#[test]
fn an_exhausted_budget_ends_the_run_and_keeps_what_was_released() {
    let dir = scratch("budget");
    let mut dev = device(12.0, 1.0);
    let out = live::run(&mut dev, &spec(40), &dir, |_, _| {}).unwrap();
    assert!(out.budget_exhausted);
    assert_eq!(out.rounds.len(), 12);
    assert!(out.rounds.last().unwrap().budget_remaining < 1.0);
    let again = live::run(&mut dev, &spec(40), &dir, |_, _| {}).unwrap();
    assert!(again.budget_exhausted);
    assert_eq!((again.resumed, again.rounds.len()), (12, 12));
}

#[test]
fn a_device_with_more_budget_than_recorded_is_not_the_recorded_board() {
    // Issue 25, item 3: the board's state lost, a new board with the same id and configuration
    // answered, and the run went on ("1200 rounds (1000 resumed) ... budget left 800").
    let dir = scratch("regained");
    let out = live::run(&mut device(12.0, 1.0), &spec(40), &dir, |_, _| {}).unwrap();
    assert!(out.budget_exhausted);
    let err = live::run(&mut device(12.0, 1.0), &spec(60), &dir, |_, _| {}).unwrap_err();
    assert!(
        matches!(err, LiveError::BudgetRegained { round: 12, recorded, now } if recorded < 1.0 && now == 12.0),
        "{err}"
    );
    assert!(err.to_string().contains("--out"), "{err}");
    assert_eq!(csv(&dir).lines().count(), 13, "nothing was added to live.csv");
}

/// The highest boot number seen is kept in `live.json`: a resumed run refuses a device whose
/// boot number went back (a recorded hello, or a device whose state was rolled back) before it
/// releases anything (review of wire format 3, item 2).
#[test]
fn a_device_whose_boot_number_went_back_is_refused_on_resume() {
    let dir = scratch("session");
    let mut second = rebooted(1000.0);
    live::run(&mut second, &spec(5), &dir, |_, _| {}).unwrap();
    let boot = second.highest_session();
    assert!(boot >= 2);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(live::LIVE_JSON)).unwrap()).unwrap();
    assert_eq!(json["highest_session"], boot);
    let mut first = device(1000.0, 1.0); // the state of its first boot
    let err = live::run(&mut first, &spec(10), &dir, |_, _| {}).unwrap_err();
    assert!(matches!(err, LiveError::SessionWentBack { recorded, now: 1 } if recorded == boot), "{err}");
    assert_eq!(first.link().app().reporter().accountant().spent(), 0.0, "nothing released");
    assert_eq!(csv(&dir).lines().count(), 6, "the record is untouched");
}

#[test]
fn another_run_or_device_or_a_changed_record_is_refused() {
    let dir = scratch("other");
    // The run's own device: another one (a fresh budget) would be refused for that.
    let mut own = device(1000.0, 1.0);
    live::run(&mut own, &spec(10), &dir, |_, _| {}).unwrap();
    let refused = |spec: &LiveSpec, dev: &mut Device| live::run(dev, spec, &dir, |_, _| {}).unwrap_err();

    let other_learner = LiveSpec { learner: UCB1, ..spec(10) };
    assert!(matches!(
        refused(&other_learner, &mut device(1000.0, 1.0)),
        LiveError::OtherRun { setting: "learner", .. }
    ));
    let other_seed = LiveSpec { seed: 6, ..spec(10) };
    assert!(matches!(
        refused(&other_seed, &mut device(1000.0, 1.0)),
        LiveError::OtherRun { setting: "seed", .. }
    ));
    assert!(matches!(refused(&spec(10), &mut device(1000.0, 0.5)), LiveError::OtherRun { .. }));

    // A recorded action changed by hand: the replayed learner chooses otherwise.
    let path = dir.join(live::LIVE_CSV);
    let text = csv(&dir);
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let cells: Vec<&str> = lines[3].split(',').collect();
    let changed = (cells[1].parse::<usize>().unwrap() + 1) % 20;
    lines[3] = format!("{},{changed},{}", cells[0], cells[2..].join(","));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    assert!(matches!(
        refused(&spec(10), &mut own),
        LiveError::Diverged { round: 3, recorded, .. } if recorded == changed
    ));
    std::fs::write(&path, text.replace("\n3,", "\n4,")).unwrap();
    assert!(matches!(refused(&spec(10), &mut own), LiveError::Record { line: 4, .. }));
}

#[test]
fn limits_and_actions_are_checked_before_anything_is_released() {
    let dir = scratch("limits");
    let greedy = LiveSpec { epsilon: Epsilon::new(2.0).unwrap(), ..spec(10) };
    let mut dev = device(1000.0, 1.0);
    assert!(matches!(
        live::run(&mut dev, &greedy, &dir, |_, _| {}).unwrap_err(),
        LiveError::AboveDeviceLimit { limit, .. } if limit == 1.0
    ));
    // More actions than the device has: the device refuses the first one outside its set.
    let wide = LiveSpec { actions: Actions::Grid { count: 40 }, ..spec(200) };
    let err = live::run(&mut dev, &wide, &dir, |_, _| {}).unwrap_err();
    assert!(matches!(err, LiveError::Refused { action, .. } if action >= 20), "{err}");
    assert!(err.to_string().contains("--actions"));
    let one = LiveSpec { actions: Actions::Grid { count: 1 }, ..spec(10) };
    assert!(matches!(
        live::run(&mut dev, &one, &scratch("one"), |_, _| {}).unwrap_err(),
        LiveError::TooFewActions(1)
    ));
}

#[test]
fn the_most_played_action_is_the_first_of_the_most_often_played() {
    let r = |action| Round { round: 1, action, release: 0.0, epsilon_effective: 1.0, budget_remaining: 0.0 };
    assert_eq!(live::most_played(&[]), None);
    assert_eq!(live::most_played(&[r(3), r(1), r(3), r(1)]), Some((1, 2)));
    assert_eq!(live::most_played(&[r(3), r(1), r(3)]), Some((3, 2)));
}
