//! The QEMU firmware joins an MQTT fleet through `ldp_link::bridge`: its retained hello is on the
//! broker, a learner's queries over `MqttLink` get its reports (each spending ε, once), the
//! bridge survives a broker restart (subscribes and publishes its hello again), and a mixed
//! fleet — three `serve_devices` devices and the bridged board — answers a round-robin `Fleet`.
//!
//! Needs mosquitto and QEMU (with the thumbv7em target): skips with a printed reason when one is
//! missing, unless REQUIRE_BROKER=1 / REQUIRE_QEMU=1 (CI), when that is a failure. Waits are
//! bounded generously (the machine may be loaded); nothing asserts wall-clock times.

use common::broker;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::common;

use host_sim::experiments::experiment_env;
use ldp_core::device::{DeviceApp, SensorModel, SimulatedSensor};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use ldp_link::bridge::{Bridge, BridgeError, BridgeStats};
use ldp_link::client::WireClient;
use ldp_link::device::Device;
use ldp_link::fleet::{Fleet, Member, Routing};
use ldp_link::mqtt::{BrokerUrl, DevicesSpec, FleetWait, MqttError, MqttFleet, MqttLink, Seeds, ServeStats};
use ldp_link::transport::{Link, LoopbackLink, QemuDevice};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

/// The firmware's per-report limit and its lifetime budget.
const EPSILON: f64 = 1.0;
const FIRMWARE_TOTAL: f64 = 1000.0;

type Bridging = (Arc<AtomicBool>, JoinHandle<Result<BridgeStats, BridgeError>>);

/// Boots the firmware in `dir` and bridges it to `url` in a thread until the flag is set.
fn bridge(elf: &Path, dir: &Path, url: &BrokerUrl) -> (QemuDevice, Bridging) {
    let mut qemu = QemuDevice::start(elf, dir).expect("QEMU starts");
    let link = qemu.connect().expect("the emulated USART1 answers");
    let auth = qemu.auth().expect("the board's key");
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, url) = (Arc::clone(&stop), url.clone());
    (qemu, (stop, std::thread::spawn(move || Bridge::run(link, auth, &url, &flag))))
}

fn stop_bridge(bridging: Bridging) -> BridgeStats {
    bridging.0.store(true, Ordering::Relaxed);
    bridging.1.join().expect("the bridge thread ends").expect("the bridge ran")
}

/// One query; the report's remaining budget.
fn query<L: Link>(client: &mut WireClient<L>, round: u32) -> f64 {
    let eps = Epsilon::new(EPSILON).expect("ε");
    match client.query(round, round % 100, eps, None) {
        Ok(Ok(report)) => report.budget_remaining,
        other => panic!("query {round}: {other:?}"),
    }
}

fn patient(link: MqttLink) -> WireClient<MqttLink> {
    let auth = link.auth();
    let mut client = WireClient::new(link, auth);
    client.timeout = Duration::from_secs(2);
    client.tries = 15;
    client
}

#[test]
fn a_bridged_qemu_board_answers_a_learner_over_mqtt_and_survives_a_broker_restart() {
    let Some(mut broker) = broker() else { return };
    let Some(elf) = common::firmware(&[]) else { return };
    let dir = common::fresh_dir("bridge");
    let (qemu, bridging) = bridge(&elf, &dir, &broker.url());
    let wait = FleetWait { devices: Some(1), patience: Duration::from_secs(60) };
    let keys = common::keys(&[&dir], 1);
    let fleet = MqttFleet::connect(&broker.url(), wait, &keys).expect("the board's hello");
    let (hello, link) = fleet.members().into_iter().next().expect("one member");
    // The board's public configuration: the device experiment's bounds and ε.
    let (env, epsilon) = experiment_env("device", 0, 0, None).expect("the device experiment");
    let bounds = env.bounds();
    assert_eq!((hello.config.b.get(), hello.config.r.get()), (1.0, 1.0));
    assert_eq!((hello.config.b.get(), Some(hello.config.r.get())), (bounds.b, bounds.r));
    assert_eq!(hello.config.policy.per_report_limit(), epsilon);
    assert_eq!(hello.config.policy.total().get(), FIRMWARE_TOTAL);
    assert_eq!(hello.budget_remaining, FIRMWARE_TOTAL, "a fresh board");
    let id = hello.device_id;

    let mut client = patient(link);
    let mut left = hello.budget_remaining;
    for round in 1..=5 {
        let now = query(&mut client, round);
        assert_eq!(now, left - EPSILON, "round {round}: one report, ε spent once");
        left = now;
    }
    // The retained hello follows the reports.
    common::hello_until(&fleet, id, Duration::from_secs(60), |b| b == left);

    // A broker restart: the bridge reconnects, subscribes again and publishes its hello again.
    broker.restart().expect("the broker restarts on its port");
    let now = query(&mut client, 6);
    assert_eq!(now, left - EPSILON, "after the restart: one report, ε spent once");
    left = now;
    let fresh = MqttFleet::connect(&broker.url(), wait, &keys).expect("the hello is on the restarted broker");
    // (The hello follows the report through the broker: wait for it, bounded.)
    common::hello_until(&fresh, id, Duration::from_secs(60), |b| b == left);
    drop(fresh);

    drop(client);
    drop(fleet);
    let stats = stop_bridge(bridging);
    assert_eq!(stats.device_id, id);
    assert!(stats.queries >= 6 && stats.reports >= 6, "{stats:?}");
    assert!(stats.connections >= 2, "the bridge reconnected: {stats:?}");
    assert_eq!(stats.budget_remaining, left);
    drop(qemu);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_mixed_fleet_of_simulated_devices_and_a_bridged_board_answers_round_robin() {
    let Some(broker) = broker() else { return };
    let Some(elf) = common::firmware(&[]) else { return };
    let dir = common::fresh_dir("bridge-mixed");
    let (env, epsilon) = experiment_env("device", 7, 0, None).expect("the device experiment");
    let mut spec = DevicesSpec::new(broker.url(), &dir.join("devices"), 3, env, epsilon, 100.0);
    spec.seeds = Seeds::Simulated { trial_seed: 5 };
    spec.provision = true;
    let stop_devices = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop_devices);
    let devices: JoinHandle<Result<ServeStats, MqttError>> =
        std::thread::spawn(move || ldp_link::mqtt::serve_devices(&spec, &flag));
    let (qemu, bridging) = bridge(&elf, &dir.join("board"), &broker.url());

    let wait = FleetWait { devices: Some(4), patience: Duration::from_secs(60) };
    let keys = common::keys(&[&dir.join("devices"), &dir.join("board")], 4);
    let mqtt = MqttFleet::connect(&broker.url(), wait, &keys).expect("four hellos");
    // Each member from its own answered hello, as the runner builds them (review 13).
    let members: Vec<_> = mqtt
        .members()
        .into_iter()
        .map(|(_, link)| Member::new(patient(link)).expect("an answered hello"))
        .collect();
    assert_eq!(members.len(), 4);
    let board = members[3].id();
    assert!(board > 3, "the board's id follows the simulated devices' 1, 2, 3: {board:#x}");
    let mut fleet = Fleet::new(members, epsilon, Routing::RoundRobin, 0);
    for round in 0..8 {
        fleet.query(round % 10, None).expect("a report");
    }
    for record in fleet.ledger() {
        assert_eq!(record.reports, 2, "{record:?}");
        assert_eq!(record.skipped, 0, "{record:?}");
        assert!((record.spent - 2.0 * epsilon.get()).abs() < 1e-9, "{record:?}");
    }
    common::hello_until(&mqtt, board, Duration::from_secs(60), |b| {
        (b - (FIRMWARE_TOTAL - 2.0 * epsilon.get())).abs() < 1e-9
    });

    drop(fleet);
    drop(mqtt);
    let stats = stop_bridge(bridging);
    // Two reports and the learner's hello (it greets a device before its first query).
    assert_eq!((stats.device_id, stats.reports), (board, 3));
    stop_devices.store(true, Ordering::Relaxed);
    devices.join().expect("the devices' thread ends").expect("the devices served");
    drop(qemu);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The device application in memory with the firmware's constants, as device `id`.
fn in_memory_board(id: u64) -> LoopbackLink<MemoryStore, SimulatedSensor<ChaCha20Rng>> {
    let eps = |e| Epsilon::new(e).expect("ε");
    let policy = BudgetPolicy::new(eps(EPSILON), eps(FIRMWARE_TOTAL)).expect("policy");
    let one = Bound::new(1.0).expect("bound");
    let config = DeviceConfig { b: one, r: one, policy };
    let reporter = Reporter::open(config, MemoryStore::provisioned([9; 32]), [1; 32]).expect("reporter");
    let sensor =
        SimulatedSensor::new(SensorModel::new(100, one).expect("sensor"), ChaCha20Rng::seed_from_u64(9));
    LoopbackLink::new(DeviceApp::new(reporter, sensor, id))
}

#[test]
fn a_bridged_in_memory_board_passes_frames_unchanged_and_drops_other_messages() {
    // The broker only: the device application in memory stands for the board.
    let Some(broker) = broker() else { return };
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, url) = (Arc::clone(&stop), broker.url());
    let board = in_memory_board(77);
    let auth = board.auth();
    let keys = ldp_link::keys::Keys::from([(77, auth.key)]);
    let bridging: Bridging = (stop, std::thread::spawn(move || Bridge::run(board, auth, &url, &flag)));
    let wait = FleetWait { devices: Some(1), patience: Duration::from_secs(60) };
    let fleet = MqttFleet::connect(&broker.url(), wait, &keys).expect("the board's hello");
    let (hello, mut link) = fleet.members().into_iter().next().expect("one member");
    assert_eq!((hello.device_id, hello.budget_remaining), (77, FIRMWARE_TOTAL));
    // A message that is not one frame exactly never reaches the board: too long, no
    // delimiter, two frames.
    link.send(&[1u8; 4096]).expect("published");
    link.send(&[1, 2, 3]).expect("published");
    link.send(&[1, 0, 2, 0]).expect("published");
    let mut client = patient(link);
    let mut left = FIRMWARE_TOTAL;
    for round in 1..=20 {
        let now = query(&mut client, round);
        assert_eq!(now, left - EPSILON, "round {round}");
        left = now;
    }
    // The learner's own hello request passes through too, and says the same.
    assert_eq!(client.hello().expect("a hello through the bridge").budget_remaining, left);
    common::hello_until(&fleet, 77, Duration::from_secs(60), |b| b == left);
    drop(client);
    drop(fleet);
    let stats = stop_bridge(bridging);
    assert_eq!(stats.dropped_queries, 3, "{stats:?}");
    // One frame back per frame in (a resend on a loaded machine adds one of each).
    assert!(stats.queries >= 21 && stats.reports == stats.queries, "{stats:?}");
    assert_eq!(stats.budget_remaining, left);
    assert!(stats.hellos >= 22, "a hello at the start and after every frame: {stats:?}");
    // A clean stop took the hello off the broker.
    let err = MqttFleet::connect(
        &broker.url(),
        FleetWait { devices: None, patience: Duration::from_secs(3) },
        &keys,
    )
    .err()
    .expect("no board is left");
    assert!(matches!(err, MqttError::TooFewDevices { found: 0, .. }), "{err}");
}

#[test]
fn a_bridge_without_a_board_or_broker_says_what_to_do() {
    // A link on which nothing ever answers: the handshake gives up with a message.
    struct Silent;
    impl Link for Silent {
        fn send(&mut self, _: &[u8]) -> std::io::Result<()> {
            Ok(())
        }
        fn recv_byte(&mut self, timeout: Duration) -> std::io::Result<Option<u8>> {
            std::thread::sleep(timeout.min(Duration::from_millis(50)));
            Ok(None)
        }
    }
    let url = BrokerUrl::parse("mqtt://127.0.0.1:1").expect("url");
    let auth = ldp_core::wire::Auth::new(ldp_core::wire::LinkKey::new([1; 32]), 1);
    let err = Bridge::run(Silent, auth, &url, &AtomicBool::new(false)).expect_err("no board");
    assert!(matches!(err, BridgeError::NoHello { .. }), "{err}");
    assert!(err.to_string().contains("--serial"), "{err}");
}
