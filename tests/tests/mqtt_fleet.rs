//! A fleet over a real MQTT broker (Mosquitto): devices served by `ldp_link::mqtt::serve_devices`,
//! a learner on `MqttFleet`, every frame through the broker. Each query gets exactly one report
//! through dropped and duplicated frames and a broker restart, each device's spent budget is ε
//! times its reports, and a restarted device process keeps its spent budget and boots again.
//!
//! Skips with a printed reason when `mosquitto` is missing, unless REQUIRE_BROKER=1 (CI), when
//! that is a failure. Waits are bounded generously (the machine may be loaded); nothing
//! asserts wall-clock times.

use crate::common;
use common::broker;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use host_sim::experiments::experiment_env;
use ldp_core::Epsilon;
use ldp_link::client::WireClient;
use ldp_link::mqtt::{Broker, DevicesSpec, FleetWait, MqttError, MqttFleet, MqttLink, Seeds, ServeStats};
use ldp_link::transport::{Faults, FaultyLink, Link};

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
    (stop, std::thread::spawn(move || ldp_link::mqtt::serve_devices(&spec, &flag)))
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
    let url = ldp_link::mqtt::BrokerUrl::parse("mqtt://127.0.0.1:1").expect("url");
    let keys = ldp_link::keys::Keys::new();
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
    ldp_link::mqtt::forget_devices(&broker.url(), 1..=3).expect("the broker acknowledges");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue #25, item 1, over a real broker: an attacker that can publish (any client of the
/// broker, or a device's own login) answers every query with one message of forged reports for
/// that sequence number and the next 30 (value 2^52·2^960, budget 100), a report of +∞ (grid
/// exponent 1024), replays the learner's query and an older one, sends a query of its own, and
/// leaves a forged retained hello. The learner takes exactly the device's reports (its budget
/// going down by ε each), counts what it dropped, and the device spends ε per learner query
/// only. Fails on main, where the forged reports were believed.
#[test]
fn forged_replayed_and_infinite_frames_from_the_broker_are_dropped_and_spend_nothing() {
    use ldp_core::wire::{Auth, LinkKey, MAX_ENCODED_LEN, Message, Repr, StreamReader};
    use ldp_core::{Release, Report};
    use rumqttc::{Client, Event, MqttOptions, Packet, QoS};

    let Some(broker) = broker() else { return };
    let dir = fresh_dir("forged");
    let serving = serve(spec(&broker, &dir, 1, Seeds::Simulated { trial_seed: 21 }));
    let keys = common::keys(&[&dir], 1);

    // The attacker: it knows every topic and sees every frame, but not the device's key.
    let stranger = Auth { session: 1, ..Auth::new(LinkKey::new([0xEE; 32]), 1) };
    let (client, mut connection) = Client::new(MqttOptions::new("attacker", "127.0.0.1", broker.port()), 256);
    client.subscribe("ldp/+/query", QoS::AtLeastOnce).expect("subscribe");
    let attacking = Arc::new(AtomicBool::new(true));
    let on = Arc::clone(&attacking);
    let attacker = std::thread::spawn(move || {
        let mut seen: Vec<Vec<u8>> = Vec::new();
        let mut own: Vec<Vec<u8>> = Vec::new();
        for event in connection.iter() {
            if !on.load(Ordering::Relaxed) {
                break;
            }
            let Ok(Event::Incoming(Packet::Publish(p))) = event else { continue };
            let payload = p.payload.to_vec();
            if p.retain || own.contains(&payload) {
                continue;
            }
            let mut reader = StreamReader::new();
            let Some(frame) = payload
                .iter()
                .find_map(|&b| reader.push(b).and_then(Result::ok).map(|f| (f.seq(), f.msg_type())))
            else {
                continue;
            };
            let (seq, ty) = frame;
            if ty != 0x02 {
                continue; // hello requests: nothing to forge against
            }
            let mut publish = |topic: &str, retain: bool, bytes: Vec<u8>| {
                own.push(bytes.clone());
                let _ = client.publish(topic, QoS::AtLeastOnce, retain, bytes);
            };
            let framed = |repr: Repr| {
                let mut buf = [0u8; MAX_ENCODED_LEN];
                repr.emit_framed(&mut buf, &stranger).expect("encodes").to_vec()
            };
            // One message, 31 forged reports.
            let huge = Report {
                release: Release { index: 1 << 52, grid_log2: 960 },
                epsilon: EPSILON,
                epsilon_effective: EPSILON,
                budget_remaining: 100.0,
            };
            let batch: Vec<u8> = (0..=30)
                .flat_map(|k| framed(Repr::new(seq.wrapping_add(k), Message::Report(huge))))
                .collect();
            publish("ldp/1/report", false, batch);
            // +∞: grid exponent 1024, built by hand (no encoder emits it).
            let mut raw = vec![ldp_core::wire::VERSION, 0x82];
            raw.extend_from_slice(&seq.to_le_bytes());
            raw.extend_from_slice(&1i64.to_le_bytes());
            raw.extend_from_slice(&1024i16.to_le_bytes());
            for x in [EPSILON, EPSILON, 100.0] {
                raw.extend_from_slice(&x.to_le_bytes());
            }
            raw.extend_from_slice(&stranger.tag(1, &raw));
            raw.extend_from_slice(&ldp_core::wire::checksum(&raw).to_le_bytes());
            let mut out = vec![0u8; MAX_ENCODED_LEN];
            let n = cobs::encode(&raw, &mut out);
            out.truncate(n);
            out.push(0);
            publish("ldp/1/report", false, out);
            // Replays: this query (the device answers from its cache, spending nothing) and one
            // two queries old (refused as stale), and a query of the attacker's own.
            publish("ldp/1/query", false, payload.clone());
            if seen.len() >= 2 {
                publish("ldp/1/query", false, seen[seen.len() - 2].clone());
            }
            let q = ldp_core::wire::Query {
                round: 1,
                action: 0,
                epsilon: Epsilon::new(EPSILON).unwrap(),
                level: None,
            };
            publish("ldp/1/query", false, framed(Repr::new(seq.wrapping_add(1_000_000), Message::Query(q))));
            if seen.len() == 1 {
                let policy =
                    ldp_core::BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(100.0).unwrap())
                        .unwrap();
                let one = ldp_core::Bound::new(1.0).unwrap();
                let config = ldp_core::DeviceConfig { b: one, r: one, policy };
                let hello = ldp_core::wire::Hello {
                    device_id: 1,
                    config,
                    budget_remaining: 100.0,
                    session: 1,
                    conversation: 0,
                };
                publish("ldp/1/hello", true, framed(Repr::new(0, Message::Hello(hello))));
            }
            seen.push(payload);
        }
    });

    let fleet = MqttFleet::connect(&broker.url(), FleetWait { devices: Some(1), ..wait() }, &keys)
        .expect("the hello");
    let (_, link) = fleet.members().into_iter().next().expect("device 1");
    let auth = link.auth();
    let mut client = WireClient::new(link, auth);
    const ROUNDS: u32 = 20;
    for round in 1..=ROUNDS {
        let left = query(&mut client, round);
        assert_eq!(left, BUDGET - EPSILON * f64::from(round), "round {round}: only the device's reports");
    }
    let d = client.dropped;
    eprintln!(
        "dropped: {d:?}; extra frames {}; forged hellos {}",
        client.link().extra_frames(),
        fleet.unauthenticated_hellos()
    );
    assert!(d.bad_tag >= u64::from(ROUNDS), "forged reports dropped: {d:?}");
    assert!(client.link().extra_frames() >= 1, "the batch's other 30 frames were dropped");
    // The forged hello was seen (and dropped) once the device renewed its own after it.
    common::hello_until(&fleet, 1, Duration::from_secs(30), |b| b == BUDGET - EPSILON * f64::from(ROUNDS));
    assert!(fleet.unauthenticated_hellos() >= 1);
    attacking.store(false, Ordering::Relaxed);
    drop(client);
    drop(fleet);
    let stats = stop(serving);
    assert_eq!(
        stats.devices[0].budget_remaining,
        BUDGET - EPSILON * f64::from(ROUNDS),
        "replayed and forged queries spent nothing"
    );
    drop(attacker);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Queries in flight over the broker, waiting at distinct devices at once, give exactly the
/// reports the in-process fleet gives one query at a time (round robin, the same simulated
/// keys, no faults); a fleet drained with queries outstanding has a ledger equal to what each
/// device's own hello shows it spent.
#[test]
fn queries_in_flight_over_the_broker_give_the_in_process_fleets_reports() {
    use ldp_link::device::{Device, Submitted};
    use ldp_link::fleet::{Fleet, InFlightFleet, Member, Routing, in_process};

    let Some(broker) = broker() else { return };
    let (n, in_flight, rounds) = (6, 4, 40);
    let dir = fresh_dir("in-flight");
    let serving = serve(spec(&broker, &dir, n, Seeds::Simulated { trial_seed: 13 }));
    let keys = common::keys(&[&dir], n);
    let url = broker.url();
    let mqtt =
        MqttFleet::connect(&url, FleetWait { devices: Some(n), patience: Duration::from_secs(30) }, &keys)
            .expect("the devices' hellos");
    let members: Vec<Member<MqttLink>> = mqtt
        .members()
        .into_iter()
        .map(|(_, link)| {
            let auth = link.auth();
            Member::new(WireClient::new(link, auth)).expect("an answered hello")
        })
        .collect();
    let eps = Epsilon::new(EPSILON).expect("ε");
    let mut concurrent =
        InFlightFleet::new(Fleet::new(members, eps, Routing::RoundRobin, 0), in_flight).expect("workers");
    let (env, _) = experiment_env("device", 7, 0, None).expect("the device experiment's environment");
    let reference = in_process(env.as_ref(), 13, n, eps, BUDGET).expect("the in-process fleet");
    let mut reference = Fleet::new(reference, eps, Routing::RoundRobin, 0);
    let expected: Vec<u64> =
        (0..rounds).map(|t| reference.query(t % 10, None).expect("a report").to_bits()).collect();
    let mut flight = std::collections::VecDeque::new();
    let mut got = Vec::new();
    for t in 0..rounds {
        if flight.len() == in_flight {
            let Some(Submitted::Pending(ticket)) = flight.pop_front() else { panic!("a query in flight") };
            got.push(concurrent.collect(ticket).expect("a report").to_bits());
        }
        flight.push_back(concurrent.submit(t % 10, None).expect("sent"));
    }
    // The run stops with queries in flight: they are waited for and counted.
    concurrent.drain();
    assert_eq!(got, expected[..got.len()]);
    let ledger = concurrent.ledger().expect("a ledger");
    assert_eq!(ledger.iter().map(|r| r.reports).sum::<u64>(), rounds as u64);
    // Each device republishes its hello after each reply: wait (boundedly) for the last ones.
    let shown = |id: u64| BUDGET - mqtt.latest_hello(id).map_or(BUDGET, |h| h.budget_remaining);
    let patience = std::time::Instant::now() + Duration::from_secs(30);
    while ledger.iter().any(|r| (r.spent - shown(r.id)).abs() > 1e-9) && std::time::Instant::now() < patience
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    for r in &ledger {
        assert!(
            (r.spent - shown(r.id)).abs() < 1e-9,
            "device {}: ledger {}, its hello {}",
            r.id,
            r.spent,
            shown(r.id)
        );
        assert!((r.spent - r.reports as f64 * EPSILON).abs() < 1e-9, "{r:?}");
    }
    drop(concurrent);
    stop(serving);
    let _ = std::fs::remove_dir_all(&dir);
}
