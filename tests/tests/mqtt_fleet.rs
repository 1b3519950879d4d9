//! A fleet over a real MQTT broker (Mosquitto): devices served by `host_sim::mqtt::serve_devices`,
//! a learner on `MqttFleet`, every frame through the broker. Each query gets exactly one report
//! through dropped and duplicated frames and a broker restart, each device's spent budget is ε
//! times its reports, and a restarted device process keeps its spent budget and boots again.
//!
//! Skips with a printed reason when `mosquitto` is missing, unless REQUIRE_BROKER=1 (CI), when
//! that is a failure. Waits are bounded generously (the machine may be loaded); nothing
//! asserts wall-clock times.

mod common;
use common::broker;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use host_sim::experiments::experiment_env;
use host_sim::mqtt::{Broker, DevicesSpec, FleetWait, MqttError, MqttFleet, MqttLink, Seeds, ServeStats};
use host_sim::transport::{Faults, FaultyLink, Link, WireClient};
use ldp_core::Epsilon;

const EPSILON: f64 = 1.0;
const BUDGET: f64 = 200.0;

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ldp-mqtt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn spec(broker: &Broker, dir: &Path, count: usize, seeds: Seeds) -> DevicesSpec {
    let (env, epsilon) = experiment_env("device", 7, 0, None).expect("the device experiment's environment");
    assert_eq!(epsilon.get(), EPSILON);
    let mut spec = DevicesSpec::new(broker.url(), dir, count, env, epsilon, BUDGET);
    spec.seeds = seeds;
    spec.provision = true;
    spec
}

/// Devices served in a thread until the returned flag is set.
fn serve(spec: DevicesSpec) -> (Arc<AtomicBool>, JoinHandle<Result<ServeStats, MqttError>>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    (stop, std::thread::spawn(move || host_sim::mqtt::serve_devices(&spec, &flag)))
}

fn stop(serving: (Arc<AtomicBool>, JoinHandle<Result<ServeStats, MqttError>>)) -> ServeStats {
    serving.0.store(true, Ordering::Relaxed);
    serving.1.join().expect("the device thread ends").expect("the devices served")
}

fn wait() -> FleetWait {
    FleetWait { devices: None, patience: Duration::from_secs(30) }
}

/// One query; the report's remaining budget.
fn query<L: Link>(client: &mut WireClient<L>, round: u32) -> f64 {
    let eps = Epsilon::new(EPSILON).expect("ε");
    match client.query(round, round % 100, eps, None) {
        Ok(Ok(report)) => report.budget_remaining,
        other => panic!("query {round}: {other:?}"),
    }
}

#[test]
fn every_query_gets_one_report_through_faults_and_a_broker_restart() {
    let Some(mut broker) = broker() else { return };
    let dir = fresh_dir("faults");
    let serving = serve(spec(&broker, &dir, 5, Seeds::Simulated { trial_seed: 11 }));
    let keys = common::keys(&[&dir], 5);
    let fleet = MqttFleet::connect(&broker.url(), FleetWait { devices: Some(5), ..wait() }, &keys)
        .expect("five hellos");
    let members = fleet.members();
    let ids: Vec<u64> = members.iter().map(|(h, _)| h.device_id).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    for (hello, _) in &members {
        assert_eq!(hello.budget_remaining, BUDGET);
        assert_eq!(hello.config.policy.per_report_limit().get(), EPSILON);
        assert_eq!(hello.config.policy.total().get(), BUDGET);
        assert_eq!((hello.config.b.get(), hello.config.r.get()), (1.0, 1.0)); // the sensor model
    }
    let faults = Faults { drop: 0.05, duplicate: 0.05, ..Faults::default() };
    let mut clients: Vec<(u64, WireClient<FaultyLink<MqttLink>>)> = members
        .into_iter()
        .map(|(hello, link)| {
            let auth = link.auth();
            let mut client = WireClient::new(FaultyLink::new(link, faults, hello.device_id), auth);
            client.tries = 20;
            (hello.device_id, client)
        })
        .collect();
    let mut reports = vec![0u32; clients.len()];
    let mut round = 0;
    for phase in 0..2 {
        if phase == 1 {
            broker.restart().expect("the broker restarts on its port");
        }
        for _ in 0..8 {
            for (k, (_, client)) in clients.iter_mut().enumerate() {
                round += 1;
                let left = query(client, round);
                reports[k] += 1;
                // Exactly once: the device's budget moved by ε per report the learner got.
                assert_eq!(left, BUDGET - EPSILON * f64::from(reports[k]), "device {}", k + 1);
            }
        }
    }
    let (mut resends, mut dropped, mut duplicated) = (0, 0, 0);
    for (k, (id, client)) in clients.iter().enumerate() {
        // The retained hello says the same: spent = ε × reports.
        common::hello_until(&fleet, *id, Duration::from_secs(30), |b| {
            b == BUDGET - EPSILON * f64::from(reports[k])
        });
        resends += client.resends;
        dropped += client.link().counts.dropped;
        duplicated += client.link().counts.duplicated;
    }
    assert!(
        dropped > 0 && duplicated > 0,
        "faults were injected: {dropped} dropped, {duplicated} duplicated"
    );
    assert!(resends >= dropped.min(1), "lost frames were resent");
    assert!(fleet.connections() >= 2, "the learner reconnected after the restart");
    drop(clients);
    drop(fleet);
    let stats = stop(serving);
    assert!(stats.connections >= 2, "the devices reconnected: {stats:?}");
    assert_eq!(stats.devices.len(), 5);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_restarted_device_process_keeps_its_spent_budget_and_boots_again() {
    let Some(broker) = broker() else { return };
    let dir = fresh_dir("restart");
    let serving = serve(spec(&broker, &dir, 2, Seeds::Os));
    let keys = common::keys(&[&dir], 2);
    let fleet = MqttFleet::connect(&broker.url(), FleetWait { devices: Some(2), ..wait() }, &keys)
        .expect("two hellos");
    let (_, link) = fleet.members().into_iter().next().expect("device 1");
    let auth = link.auth();
    let mut client = WireClient::new(link, auth);
    let mut left = BUDGET;
    for round in 1..=5 {
        left = query(&mut client, round);
    }
    assert_eq!(left, BUDGET - 5.0 * EPSILON);
    let first = stop(serving);
    let before = first.devices[0].clone();
    assert_eq!((before.id, before.budget_remaining), (1, left));

    // The same directory again: a new boot of the same devices.
    let serving = serve(spec(&broker, &dir, 2, Seeds::Os));
    // The new process renews the retained hello with its reservation counted as spent.
    let after_boot = common::hello_until(&fleet, 1, Duration::from_secs(30), |b| b < left);
    let (_, link) = fleet.members().into_iter().next().expect("device 1");
    client.replace_link(link);
    let after_query = query(&mut client, 6);
    assert_eq!(after_query, after_boot - EPSILON);
    let second = stop(serving);
    let after = &second.devices[0];
    assert_eq!(after.id, 1);
    assert_eq!(after.boot, before.boot + 1, "the boot counter advanced");
    assert!(
        after.budget_remaining < before.budget_remaining,
        "the budget did not go back: {after:?} after {before:?}"
    );
    assert_eq!(after.state_file, dir.join("1").join("state.bin"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_learner_without_a_broker_says_so() {
    let url = host_sim::mqtt::BrokerUrl::parse("mqtt://127.0.0.1:1").expect("url");
    let keys = host_sim::keys::Keys::new();
    let err =
        MqttFleet::connect(&url, FleetWait { devices: Some(1), patience: Duration::from_secs(2) }, &keys)
            .err()
            .expect("nothing listens on port 1");
    assert!(matches!(err, MqttError::Unreachable { .. }), "{err}");
    assert!(err.to_string().contains("127.0.0.1:1"), "{err}");
}

#[test]
fn every_hello_of_a_fleet_larger_than_the_clients_queue_comes_and_goes() {
    let Some(broker) = broker() else { return };
    let dir = fresh_dir("many");
    // More devices than a client's request queue holds (256): the hellos wait for room.
    let n = 300;
    let serving = serve(spec(&broker, &dir, n, Seeds::Simulated { trial_seed: 3 }));
    let keys = common::keys(&[&dir], n);
    let fleet = MqttFleet::connect(
        &broker.url(),
        FleetWait { devices: Some(n), patience: Duration::from_secs(120) },
        &keys,
    )
    .expect("every device's hello");
    assert_eq!(fleet.members().len(), n);
    drop(fleet);
    // A clean stop takes every hello off the broker, acknowledged.
    let stats = stop(serving);
    assert_eq!(stats.dropped_publishes, 0, "{stats:?}");
    let err = MqttFleet::connect(
        &broker.url(),
        FleetWait { devices: None, patience: Duration::from_secs(3) },
        &keys,
    )
    .err()
    .expect("no device is left");
    assert!(matches!(err, MqttError::TooFewDevices { found: 0, .. }), "{err}");
    // Forgetting devices that are gone already is harmless.
    host_sim::mqtt::forget_devices(&broker.url(), 1..=3).expect("the broker acknowledges");
    let _ = std::fs::remove_dir_all(&dir);
}
