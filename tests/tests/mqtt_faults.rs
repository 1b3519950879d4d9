//! Faults, measured (issue #15): 100 simulated devices on a real Mosquitto, a learner (the
//! `device` experiment's UCB1, through `host_sim`'s public API) routing each round to one of
//! them, every learner link dropping and duplicating 5 % of frames in both directions.
//!
//! 1. **Equality**: devices 1–90 served in a thread, 91–100 in a child process (this test
//!    binary run again, `device_group_child`); mid-run the broker is stopped for a moment and
//!    restarted. No member is skipped, so the routing is the in-process fleet's: the released
//!    values and the regret curve equal the in-process fleet's (`fleet::in_process`, same
//!    seeds, no faults) bit for bit, and each device spent exactly ε per report it gave.
//! 2. **Kill**: the child process (10 % of the devices) is killed with SIGKILL. Every round
//!    still gets exactly one report, the dead members are skipped and backed off, and no
//!    device's remaining budget (as its reports and its retained hellos say) ever goes up.
//! 3. **Restart**: the killed group boots again on its state directory: boot counters advance
//!    and no budget comes back; once their backoff has run out the learner asks them again,
//!    and they answer from their new boot's budget.
//!
//! What happened (frames dropped and duplicated, resends, skips, reconnections, wall time) is
//! printed. Skips with a printed reason when `mosquitto` is missing, unless REQUIRE_BROKER=1.
//! All traffic is on 127.0.0.1; every wait is bounded; nothing asserts wall-clock times.

use crate::common;
use common::broker;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use host_sim::experiments::experiment_env;
use host_sim::experiments::runner::{DeviceKind, RunConfig, derive_seed, problem_for, run_trial_with_ledger};
use host_sim::run::settings::FleetSpec;
use ldp_core::Epsilon;
use ldp_core::state::{LogStore, StateStore};
use ldp_core::wire::Hello;
use ldp_learn::env::Environment;
use ldp_learn::policy::Policy;
use ldp_link::client::WireClient;
use ldp_link::device::Device;
use ldp_link::fleet::{self, FileMedium, Fleet, Member, Routing};
use ldp_link::mqtt::{
    BrokerUrl, DeviceStatus, Devices, DevicesSpec, FleetWait, MqttError, MqttFleet, MqttLink, Seeds,
    ServeStats,
};
use ldp_link::transport::{FaultCounts, Faults, FaultyLink};

/// The run's seed; the fleet is trial 0's.
const RUN_SEED: u64 = 7;
/// The learner: UCB1, the `device` experiment's fifth (`GP_EXPERIMENT_ALGORITHMS[4]`).
const LEARNER: usize = 4;
const DEVICES: u64 = 100;
/// Devices 1..=GROUP_A run in a thread of this process, the rest in a child process.
const GROUP_A: u64 = 90;
const EPSILON: f64 = 1.0;

fn eps() -> Epsilon {
    Epsilon::new(EPSILON).expect("ε")
}
const USER_BUDGET: f64 = 50.0;
const EQUAL_ROUNDS: usize = 300;
/// The broker goes down before this round of the equality phase…
const OUTAGE_AT: usize = 100;
/// …for this long.
const OUTAGE: Duration = Duration::from_millis(1500);
const KILL_ROUNDS: usize = 600;
/// Rounds after the killed group's restart: enough for its members' backoff to expire (their
/// third skip, near round 840, benches them for four passes), so that they answer again.
const RESUME_ROUNDS: usize = 600;
/// How long any single wait may last before the test fails.
const PATIENCE: Duration = Duration::from_secs(60);
/// The child process serves for at most this long, whatever happens to its parent.
const CHILD_LIFETIME: Duration = Duration::from_secs(300);
/// The child's settings: `PORT|DIR|FIRST_ID|COUNT`.
const CHILD_VAR: &str = "LDP_FAULTS_DEVICE_GROUP";

fn trial_seed() -> u64 {
    derive_seed(RUN_SEED, 0, 0) // as `LoopTask::job` derives trial 0's
}

fn config() -> RunConfig {
    RunConfig {
        trials: 1,
        horizon: EQUAL_ROUNDS + KILL_ROUNDS + RESUME_ROUNDS,
        seed: RUN_SEED,
        epsilon: Some(eps()),
        device: DeviceKind::Fleet { devices: DEVICES as usize },
        fleet: Some(FleetSpec {
            routing: Routing::RoundRobin,
            user_budget: Some(USER_BUDGET),
            ledger_dir: None,
        }),
        ..RunConfig::default()
    }
}

fn env() -> Arc<dyn Environment> {
    let (env, epsilon) = experiment_env("device", RUN_SEED, 0, None).expect("the device experiment");
    assert_eq!(epsilon, eps());
    env
}

/// The runner's loop (`run_trial_with_ledger`), one round at a time, keeping what was released.
struct Learner<'e> {
    env: &'e dyn Environment,
    policy: Box<dyn Policy>,
    regret: f64,
    curve: Vec<u64>,
    released: Vec<u64>,
}

impl<'e> Learner<'e> {
    fn new(env: &'e dyn Environment, config: &RunConfig) -> Self {
        let problem = problem_for(env, config).expect("the problem");
        let spec = &config.algorithms[LEARNER];
        assert_eq!(spec.label(true), "UCB1");
        let policy = (spec.build)(&problem, config.constants, derive_seed(trial_seed(), LEARNER as u64, 3))
            .expect("the policy");
        Self { env, policy, regret: 0.0, curve: Vec::new(), released: Vec::new() }
    }

    fn round(&mut self, device: &mut impl Device) {
        let arm = self.policy.select();
        let report = device
            .query(arm, self.policy.device_level())
            .unwrap_or_else(|e| panic!("round {} lost its report: {e}", self.curve.len() + 1));
        self.policy.observe(arm, report).expect("the policy takes the report");
        self.regret += self.env.best_mean() - self.env.mean(arm);
        self.curve.push(self.regret.to_bits());
        self.released.push(report.to_bits());
    }
}

/// Every device's remaining budget as the learner has seen it, per source: it must never go up.
#[derive(Default)]
struct BudgetWatch {
    ledger: BTreeMap<u64, f64>,
    hellos: BTreeMap<u64, f64>,
    looks: u64,
}

impl BudgetWatch {
    fn see(seen: &mut BTreeMap<u64, f64>, id: u64, remaining: f64, source: &str) {
        if let Some(before) = seen.insert(id, remaining) {
            assert!(
                remaining <= before,
                "device {id}'s budget went back ({source}): {before} then {remaining}"
            );
        }
    }

    fn look<L: ldp_link::transport::Link>(&mut self, fleet: &Fleet<L>, mqtt: &MqttFleet) {
        for r in fleet.ledger() {
            Self::see(&mut self.ledger, r.id, USER_BUDGET - r.spent, "its reports");
        }
        for id in 1..=DEVICES {
            if let Some(h) = mqtt.latest_hello(id) {
                Self::see(&mut self.hellos, id, h.budget_remaining, "its hellos");
            }
        }
        self.looks += 1;
    }
}

/// Devices `first_id..first_id + count`, new ones created (`provision`) or only existing ones
/// reopened.
fn spec(url: &BrokerUrl, dir: &Path, first_id: u64, count: u64, provision: bool) -> DevicesSpec {
    let mut spec = DevicesSpec::new(url.clone(), dir, count as usize, env(), eps(), USER_BUDGET);
    spec.first_id = first_id;
    spec.seeds = Seeds::Simulated { trial_seed: trial_seed() };
    spec.provision = provision;
    spec
}

type Serving = (Arc<AtomicBool>, JoinHandle<Result<ServeStats, MqttError>>);

/// Devices booted and served in a thread until the flag is set; their status at boot.
fn serve(spec: DevicesSpec) -> (Vec<DeviceStatus>, Serving) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        let devices = Devices::open(&spec)?;
        let _ = tx.send(devices.status());
        devices.serve(&flag)
    });
    let status = rx.recv_timeout(PATIENCE).expect("the devices boot");
    (status, (stop, thread))
}

fn stop(serving: Serving) -> ServeStats {
    serving.0.store(true, Ordering::Relaxed);
    serving.1.join().expect("the device thread ends").expect("the devices served")
}

/// A group of devices in a child process (this test binary, running `device_group_child`),
/// killed with SIGKILL when dropped.
struct DeviceProcess(Child);

impl DeviceProcess {
    fn spawn(url: &BrokerUrl, dir: &Path, first_id: u64, count: u64) -> Self {
        let exe = std::env::current_exe().expect("this test binary");
        let child = Command::new(exe)
            .args(["mqtt_faults::device_group_child", "--exact", "--ignored"])
            .args(["--nocapture", "--test-threads", "1"])
            .env(CHILD_VAR, format!("{}|{}|{first_id}|{count}", url.port, dir.display()))
            .stdin(Stdio::piped()) // closed when this process ends: the child then stops
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the device process starts");
        Self(child)
    }

    /// SIGKILL: a power cut, nothing flushed beyond what the devices wrote.
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for DeviceProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Not a test on its own: the device process of `faults_measured`, which starts it with
/// `--ignored` (run by hand, it does nothing). Serves its group until its stdin closes (the
/// parent ended) or [`CHILD_LIFETIME`], unless killed first.
#[test]
#[ignore = "the device process of faults_measured, started by it"]
fn device_group_child() {
    let Ok(settings) = std::env::var(CHILD_VAR) else { return };
    let fields: Vec<&str> = settings.split('|').collect();
    let [port, dir, first_id, count] = fields[..] else { panic!("bad {CHILD_VAR}: {settings}") };
    let url = BrokerUrl::parse(&format!("mqtt://127.0.0.1:{port}")).expect("broker url");
    let spec = spec(&url, Path::new(dir), first_id.parse().expect("id"), count.parse().expect("count"), true);
    let stop = Arc::new(AtomicBool::new(false));
    let on_eof = Arc::clone(&stop);
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        on_eof.store(true, Ordering::Relaxed);
    });
    let on_time = Arc::clone(&stop);
    std::thread::spawn(move || {
        std::thread::sleep(CHILD_LIFETIME);
        on_time.store(true, Ordering::Relaxed);
    });
    ldp_link::mqtt::serve_devices(&spec, &stop).expect("the device group serves");
}

/// Link figures summed over members.
#[derive(Debug, Default, Clone, Copy)]
struct LinkFigures {
    faults: FaultCounts,
    resends: u64,
    damaged: u64,
}

fn figures(fleet: &Fleet<FaultyLink<MqttLink>>) -> LinkFigures {
    let mut f = LinkFigures::default();
    for m in fleet.members() {
        let c = m.client();
        let counts = c.link().counts;
        f.faults.frames += counts.frames;
        f.faults.dropped += counts.dropped;
        f.faults.duplicated += counts.duplicated;
        f.faults.corrupted += counts.corrupted;
        f.faults.reordered += counts.reordered;
        f.resends += c.resends;
        f.damaged += c.damaged_frames;
    }
    f
}

fn since(now: LinkFigures, before: LinkFigures) -> String {
    format!(
        "{} frames, {} dropped, {} duplicated, {} resends, {} damaged",
        now.faults.frames - before.faults.frames,
        now.faults.dropped - before.faults.dropped,
        now.faults.duplicated - before.faults.duplicated,
        now.resends - before.resends,
        now.damaged - before.damaged,
    )
}

/// The fleet's members, each behind a link that drops and duplicates 5 % of frames, seeded by
/// `seed` of its hello; a lost frame costs 100 ms, and `tries` of them end a request.
fn faulty_members(
    mqtt: &MqttFleet,
    tries: u32,
    seed: impl Fn(&Hello) -> u64,
) -> Vec<Member<FaultyLink<MqttLink>>> {
    let faults = Faults { drop: 0.05, duplicate: 0.05, ..Faults::default() };
    mqtt.members()
        .into_iter()
        .map(|(hello, link)| {
            let auth = link.auth();
            let mut client = WireClient::new(FaultyLink::new(link, faults, seed(&hello)), auth);
            client.timeout = Duration::from_millis(100);
            client.tries = tries;
            Member::new(client).expect("an answered hello")
        })
        .collect()
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ldp-mqtt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn faults_measured() {
    let Some(broker) = broker() else { return };
    let started = Instant::now();
    let url = broker.url();
    let config = config();
    let env = env();
    let env = env.as_ref();
    let eps = Epsilon::new(EPSILON).expect("ε");
    let fleet_seed = derive_seed(trial_seed(), LEARNER as u64, 4);

    // The reference: the in-process fleet of the same trial, no faults.
    let members = fleet::in_process(env, trial_seed(), DEVICES as usize, eps, USER_BUDGET).expect("members");
    let mut reference = Fleet::new(members, eps, Routing::RoundRobin, fleet_seed);
    let mut expected = Learner::new(env, &config);
    for _ in 0..EQUAL_ROUNDS {
        expected.round(&mut reference);
    }
    // This loop is the runner's: its curve is `run_trial_with_ledger`'s on `--device fleet:100`.
    let (runner_curve, _) =
        run_trial_with_ledger(env, &config.algorithms[LEARNER], &config, trial_seed(), LEARNER as u64)
            .expect("the in-process run");
    let runner_curve: Vec<u64> = runner_curve[..EQUAL_ROUNDS].iter().map(|r| r.to_bits()).collect();
    assert_eq!(expected.curve, runner_curve, "the test's loop is the runner's");

    // The devices: 1..=90 in a thread, 91..=100 in a child process.
    let dir = fresh_dir("faults-measured");
    let (_, serving_a) = serve(spec(&url, &dir, 1, GROUP_A, true));
    let mut group_b = DeviceProcess::spawn(&url, &dir, GROUP_A + 1, DEVICES - GROUP_A);
    let keys = common::keys(&[&dir], DEVICES as usize);
    let mqtt =
        MqttFleet::connect(&url, FleetWait { devices: Some(DEVICES as usize), patience: PATIENCE }, &keys)
            .expect("a hundred hellos");
    // A lost frame costs 100 ms; 50 tries cover an outage of 5 s.
    let members = faulty_members(&mqtt, 50, |hello| {
        assert_eq!(hello.budget_remaining, USER_BUDGET);
        derive_seed(0xFA017, hello.device_id, 0)
    });
    assert_eq!(members.iter().map(Member::id).collect::<Vec<_>>(), (1..=DEVICES).collect::<Vec<_>>());
    let mut fleet = Fleet::new(members, eps, Routing::RoundRobin, fleet_seed);
    let mut learner = Learner::new(env, &config);
    let mut watch = BudgetWatch::default();
    let connected = Instant::now();
    eprintln!("setup (reference run, 100 devices, 100 hellos): {:.1?}", started.elapsed());

    // 1. Equality, through frame faults and a broker outage.
    let mut broker = Some(broker);
    let mut outage = None;
    let mut slowest = (Duration::ZERO, 0);
    for t in 0..EQUAL_ROUNDS {
        if t == OUTAGE_AT {
            let mut b = broker.take().expect("the broker");
            outage = Some(std::thread::spawn(move || {
                let down = Instant::now();
                b.stop();
                std::thread::sleep(OUTAGE);
                b.restart().expect("the broker restarts on its port");
                (b, down.elapsed())
            }));
        }
        let round = Instant::now();
        learner.round(&mut fleet);
        slowest = slowest.max((round.elapsed(), t + 1));
        watch.look(&fleet, &mqtt);
    }
    let (broker, outage_took) = outage.expect("an outage").join().expect("the outage thread");
    let equal_took = connected.elapsed();
    let after_equal = figures(&fleet);
    let ledger = fleet.ledger();
    eprintln!(
        "equality phase: {EQUAL_ROUNDS} rounds in {equal_took:.1?}; broker down {outage_took:.1?} \
         before round {}; slowest round {} took {:.1?}; {}; learner connections {}; skipped {}",
        OUTAGE_AT + 1,
        slowest.1,
        slowest.0,
        since(after_equal, LinkFigures::default()),
        mqtt.connections(),
        ledger.iter().map(|r| r.skipped).sum::<u64>(),
    );
    assert!(
        ledger.iter().all(|r| r.skipped == 0),
        "a member was skipped, so the routing differs: {ledger:?}"
    );
    assert_eq!(learner.released, expected.released, "the released values are the in-process fleet's");
    assert_eq!(learner.curve, expected.curve, "the regret curve is the in-process fleet's");
    // Spent, reports and skips as in process; the faulty link's duplicates are dropped and
    // counted (`dropped`), which the clean in-process link has none of.
    let spent = |l: &[ldp_link::device::MemberRecord]| -> Vec<_> {
        l.iter().map(|r| (r.id, r.spent, r.reports, r.skipped)).collect()
    };
    assert_eq!(spent(&ledger), spent(&reference.ledger()), "every member spent as in the in-process fleet");
    let dropped: u64 = ledger.iter().map(|r| r.dropped.total()).sum();
    let forged: u64 = ledger.iter().map(|r| r.dropped.total() - r.dropped.replayed).sum();
    assert_eq!(forged, 0, "only duplicates were dropped ({dropped} in all): {ledger:?}");
    assert_eq!(ledger.iter().map(|r| r.reports).sum::<u64>(), EQUAL_ROUNDS as u64, "one report per round");
    for r in &ledger {
        // None lost, none counted twice: the device (its reports and its hello) says ε per report.
        let left = USER_BUDGET - EPSILON * r.reports as f64;
        assert!((r.spent - EPSILON * r.reports as f64).abs() < 1e-9, "{r:?}");
        common::hello_until(&mqtt, r.id, PATIENCE, |b| b == left);
    }
    assert!(after_equal.faults.dropped > 0 && after_equal.faults.duplicated > 0, "{after_equal:?}");
    assert!(after_equal.resends > 0, "lost frames were resent");
    assert!(mqtt.connections() >= 2, "the learner reconnected after the outage");

    // 2. Kill 10 % of the devices. Shorter waits now: a dead member costs 4 × 50 ms per ask.
    for m in fleet.members_mut() {
        m.client_mut().timeout = Duration::from_millis(50);
        m.client_mut().tries = 4;
    }
    let killed: Vec<u64> = (GROUP_A + 1..=DEVICES).collect();
    let before_kill: BTreeMap<u64, f64> =
        killed.iter().map(|&id| (id, mqtt.latest_hello(id).expect("hello").budget_remaining)).collect();
    let reports_at_kill: BTreeMap<u64, u64> = fleet.ledger().iter().map(|r| (r.id, r.reports)).collect();
    group_b.kill();
    let kill_started = Instant::now();
    for _ in 0..KILL_ROUNDS {
        learner.round(&mut fleet);
        watch.look(&fleet, &mqtt);
    }
    let kill_took = kill_started.elapsed();
    let after_kill = figures(&fleet);
    let ledger = fleet.ledger();
    let turns = KILL_ROUNDS as u64 / DEVICES;
    let killed_skips: Vec<u64> = ledger.iter().filter(|r| r.id > GROUP_A).map(|r| r.skipped).collect();
    let live_skips: u64 = ledger.iter().filter(|r| r.id <= GROUP_A).map(|r| r.skipped).sum();
    eprintln!(
        "kill phase: {KILL_ROUNDS} rounds in {kill_took:.1?}; {}; skips of the killed members {killed_skips:?} \
         (their turn: {turns} each), of the live ones {live_skips}",
        since(after_kill, after_equal),
    );
    assert_eq!(
        ledger.iter().map(|r| r.reports).sum::<u64>(),
        (EQUAL_ROUNDS + KILL_ROUNDS) as u64,
        "every round got exactly one report"
    );
    // Backed off (one pass, then doubling): asked at most 1 + log2(1 + turns) times, and fewer
    // than their turns.
    let bound = 1 + (1 + turns).ilog2() as u64;
    for r in ledger.iter().filter(|r| r.id > GROUP_A) {
        assert_eq!(r.reports, reports_at_kill[&r.id], "a killed member reported: {r:?}");
        assert!(r.skipped >= 1 && r.skipped <= bound && r.skipped < turns, "{r:?}, bound {bound}");
    }
    for r in &ledger {
        // The device counts what it released; a report can only be lost after it was charged if
        // its round was skipped.
        let (low, high) = (EPSILON * r.reports as f64, EPSILON * (r.reports + r.skipped) as f64);
        assert!(r.spent >= low - 1e-9 && r.spent <= high + 1e-9, "{r:?}");
    }

    // 3. The killed group boots again on its state directory.
    let booted: Vec<(u64, u64)> = killed
        .iter()
        .map(|&id| {
            let mut store = LogStore::new(FileMedium::new(&dir.join(id.to_string()).join("state.bin")));
            (id, store.load().expect("the killed device's state").boot)
        })
        .collect();
    // Not provisioned: each device must find its own state.
    let (status_b, serving_b) = serve(spec(&url, &dir, GROUP_A + 1, DEVICES - GROUP_A, false));
    for (s, (id, boot)) in status_b.iter().zip(&booted) {
        assert_eq!(s.id, *id);
        assert_eq!(s.boot, boot + 1, "device {id}'s boot counter advanced");
        assert!(s.budget_remaining <= before_kill[id], "device {id} got budget back: {s:?}");
        common::hello_until(&mqtt, *id, PATIENCE, |b| b == s.budget_remaining);
    }
    eprintln!(
        "restart of the killed group: boots {:?} -> {:?}; budgets {:?} -> {:?}",
        booted.iter().map(|b| b.1).collect::<Vec<_>>(),
        status_b.iter().map(|s| s.boot).collect::<Vec<_>>(),
        before_kill.values().collect::<Vec<_>>(),
        status_b.iter().map(|s| s.budget_remaining).collect::<Vec<_>>(),
    );
    let at_restart: BTreeMap<u64, (u64, u64)> =
        fleet.ledger().iter().map(|r| (r.id, (r.reports, r.skipped))).collect();
    let resume_started = Instant::now();
    for _ in 0..RESUME_ROUNDS {
        learner.round(&mut fleet);
        watch.look(&fleet, &mqtt);
    }
    let resume_took = resume_started.elapsed();
    let ledger = fleet.ledger();
    let total = (EQUAL_ROUNDS + KILL_ROUNDS + RESUME_ROUNDS) as u64;
    assert_eq!(ledger.iter().map(|r| r.reports).sum::<u64>(), total, "one report per round");
    eprintln!(
        "after the restart: {RESUME_ROUNDS} rounds in {resume_took:.1?}; {}; the restarted members' reports {:?}",
        since(figures(&fleet), after_kill),
        ledger.iter().filter(|r| r.id > GROUP_A).map(|r| r.reports - at_restart[&r.id].0).collect::<Vec<_>>(),
    );
    for (r, s) in ledger.iter().filter(|r| r.id > GROUP_A).zip(&status_b) {
        // Back: asked again and answering, each report charged to the new boot's budget.
        let (reports, skipped) = (r.reports - at_restart[&r.id].0, r.skipped - at_restart[&r.id].1);
        assert!(reports >= 1, "device {} was not asked again after its restart: {r:?}", r.id);
        let spent = (USER_BUDGET - s.budget_remaining) + EPSILON * reports as f64;
        assert!(r.spent >= spent - 1e-9 && r.spent <= spent + EPSILON * skipped as f64 + 1e-9, "{r:?} {s:?}");
    }

    drop(fleet);
    let learner_connections = mqtt.connections();
    drop(mqtt);
    let stats_a = stop(serving_a);
    let stats_b = stop(serving_b);
    eprintln!(
        "devices 1-{GROUP_A}: {} connections, {} replies ({} late), {} publishes dropped; \
         restarted {}-{DEVICES}: {} connections, {} replies; learner connections {learner_connections}; \
         budget looks {}; total wall time {:.1?}",
        stats_a.connections,
        stats_a.replies,
        stats_a.late_replies,
        stats_a.dropped_publishes,
        GROUP_A + 1,
        stats_b.connections,
        stats_b.replies,
        watch.looks,
        started.elapsed(),
    );
    assert!(stats_a.connections >= 2, "the devices reconnected after the outage: {stats_a:?}");
    for s in stats_a.devices.iter().chain(&stats_b.devices) {
        assert!(s.budget_remaining <= watch.hellos[&s.id], "device {}: {s:?}", s.id);
    }
    drop(broker);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A broker outage longer than the learner's patience (5 tries of 100 ms): the round in flight
/// skips member after member until the broker is back, and is then answered; every round still
/// gets exactly one report, and a skipped member may have been charged for the queries that
/// reached it after the outage (its late replies are dropped as stale), never more.
#[test]
fn an_outage_longer_than_the_learners_patience_skips_members_but_loses_no_round() {
    let Some(broker) = broker() else { return };
    const N: u64 = 10;
    const ROUNDS: usize = 60;
    let url = broker.url();
    let config = config();
    let env = env();
    let dir = fresh_dir("long-outage");
    let (_, serving) = serve(spec(&url, &dir, 1, N, true));
    let keys = common::keys(&[&dir], N as usize);
    let mqtt = MqttFleet::connect(&url, FleetWait { devices: Some(N as usize), patience: PATIENCE }, &keys)
        .expect("ten hellos");
    let members = faulty_members(&mqtt, 5, |hello| hello.device_id);
    let mut fleet = Fleet::new(members, Epsilon::new(EPSILON).expect("ε"), Routing::RoundRobin, 1);
    let mut learner = Learner::new(env.as_ref(), &config);
    let mut watch = BudgetWatch::default();
    let mut broker = Some(broker);
    let mut outage = None;
    let started = Instant::now();
    for t in 0..ROUNDS {
        if t == 20 {
            let mut b = broker.take().expect("the broker");
            outage = Some(std::thread::spawn(move || {
                b.stop();
                std::thread::sleep(Duration::from_secs(3));
                b.restart().expect("the broker restarts");
                b
            }));
        }
        learner.round(&mut fleet);
        watch.look(&fleet, &mqtt);
    }
    let _broker = outage.expect("an outage").join().expect("the outage thread");
    let ledger = fleet.ledger();
    let f = figures(&fleet);
    eprintln!(
        "long outage: {ROUNDS} rounds in {:.1?}; skipped {:?}; {}",
        started.elapsed(),
        ledger.iter().map(|r| r.skipped).collect::<Vec<_>>(),
        since(f, LinkFigures::default()),
    );
    assert_eq!(ledger.iter().map(|r| r.reports).sum::<u64>(), ROUNDS as u64, "one report per round");
    assert!(ledger.iter().map(|r| r.skipped).sum::<u64>() >= 1, "the outage outlasted the patience");
    drop(fleet);
    drop(mqtt);
    let stats = stop(serving);
    let wasted: f64 = ledger
        .iter()
        .zip(&stats.devices)
        .map(|(r, s)| USER_BUDGET - s.budget_remaining - r.reports as f64)
        .sum();
    eprintln!("long outage: ε charged for replies the learner dropped as stale: {wasted}");
    for (r, s) in ledger.iter().zip(&stats.devices) {
        let spent = USER_BUDGET - s.budget_remaining;
        assert!(
            spent >= EPSILON * r.reports as f64 - 1e-9
                && spent <= EPSILON * (r.reports + r.skipped) as f64 + 1e-9,
            "{r:?} {s:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A learner that resends often fills its MQTT client's request queue during an outage (each
/// resend waits there until the broker is back). When the broker returns, the learner must
/// still renew its subscriptions — or it never hears a report again.
#[test]
fn a_learner_whose_queue_filled_during_an_outage_hears_the_devices_again() {
    let Some(mut broker) = broker() else { return };
    let url = broker.url();
    let dir = fresh_dir("full-queue");
    let (_, serving) = serve(spec(&url, &dir, 1, 1, true));
    let keys = common::keys(&[&dir], 1);
    let mqtt = MqttFleet::connect(&url, FleetWait { devices: Some(1), patience: PATIENCE }, &keys)
        .expect("one hello");
    let (_, link) = mqtt.members().into_iter().next().expect("device 1");
    let auth = link.auth();
    let mut client = WireClient::new(link, auth);
    let eps = Epsilon::new(EPSILON).expect("ε");
    assert!(matches!(client.query(1, 0, eps, None), Ok(Ok(_))));
    broker.stop();
    let restart = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(2));
        broker.restart().expect("the broker restarts");
        broker
    });
    // A resend every 2 ms: far more than the queue holds (256) before the broker is back; 30 s
    // of patience in all.
    client.timeout = Duration::from_millis(2);
    client.tries = 15_000;
    let started = Instant::now();
    let reply = client.query(2, 1, eps, None);
    let took = started.elapsed();
    let _broker = restart.join().expect("the restart thread");
    eprintln!("full queue: {} resends; answered after {took:.1?}: {}", client.resends, reply.is_ok());
    assert!(matches!(reply, Ok(Ok(_))), "no reply after the outage: {reply:?}");
    drop(client);
    drop(mqtt);
    stop(serving);
    let _ = std::fs::remove_dir_all(&dir);
}
