//! Review of issue #25 item 1 over a real Mosquitto: an attacker that can only subscribe and
//! publish (no key) records one job's frames, then answers the next job's hello (seq 1, as every
//! `WireClient::new` numbers it) with the recorded hello, and each of its queries with the
//! recorded report of the same number. On 3b3f520 the second job's learner takes the first
//! job's reports (for other actions) while the device spends nothing for it: the test asserts
//! the property (every report taken was released for it); it holds since wire format 4.

mod common;
use common::broker;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use host_sim::experiments::experiment_env;
use ldp_core::Epsilon;
use ldp_core::wire::StreamReader;
use ldp_link::mqtt::{DevicesSpec, FleetWait, MqttFleet, Seeds};
use ldp_link::transport::WireClient;

const BUDGET: f64 = 200.0;

/// Failed on 3b3f520 (review2 finding 1); passes since wire format 4.
#[test]
fn a_recorded_job_is_not_replayed_to_the_next_job() {
    use rumqttc::{Client, Event, MqttOptions, Packet, QoS};
    let Some(broker) = broker() else { return };
    let dir = common::fresh_dir("review-replay");
    let (env, epsilon) = experiment_env("device", 7, 0, None).unwrap();
    let mk = || {
        let mut spec = DevicesSpec::new(broker.url(), &dir, 1, std::sync::Arc::clone(&env), epsilon, BUDGET);
        spec.seeds = Seeds::Simulated { trial_seed: 21 };
        spec.provision = true;
        spec
    };
    let start = |spec: DevicesSpec| {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        (stop, std::thread::spawn(move || ldp_link::mqtt::serve_devices(&spec, &flag)))
    };
    let (stop1, serving1) = start(mk());
    let keys = common::keys(&[&dir], 1);

    let recorded: Arc<Mutex<HashMap<u32, Vec<u8>>>> = Arc::default();
    let attacking = Arc::new(AtomicBool::new(false));
    let (client, mut connection) = Client::new(MqttOptions::new("eve", "127.0.0.1", broker.port()), 256);
    client.subscribe("ldp/1/query", QoS::AtLeastOnce).unwrap();
    client.subscribe("ldp/1/report", QoS::AtLeastOnce).unwrap();
    let (rec, on) = (Arc::clone(&recorded), Arc::clone(&attacking));
    let mut mine: Vec<Vec<u8>> = Vec::new();
    std::thread::spawn(move || {
        for event in connection.iter() {
            let Ok(Event::Incoming(Packet::Publish(p))) = event else { continue };
            let payload = p.payload.to_vec();
            if p.retain || mine.contains(&payload) {
                continue;
            }
            let mut reader = StreamReader::new();
            let Some(seq) =
                payload.iter().find_map(|&b| reader.push(b).and_then(Result::ok).map(|f| f.seq()))
            else {
                continue;
            };
            if p.topic.ends_with("/report") && !on.load(Ordering::Relaxed) {
                rec.lock().unwrap().entry(seq).or_insert(payload);
            } else if p.topic.ends_with("/query")
                && on.load(Ordering::Relaxed)
                && let Some(old) = rec.lock().unwrap().get(&seq).cloned()
            {
                mine.push(old.clone());
                let _ = client.publish("ldp/1/report", QoS::AtLeastOnce, false, old);
            }
        }
    });
    let eps = Epsilon::new(1.0).unwrap();
    // Job 1: the attacker records.
    let job = |action: u32| {
        let fleet = MqttFleet::connect(
            &broker.url(),
            FleetWait { devices: Some(1), patience: Duration::from_secs(30) },
            &keys,
        )
        .unwrap();
        let (_, link) = fleet.members().into_iter().next().unwrap();
        let auth = link.auth();
        let mut c = WireClient::new(link, auth);
        let h = c.hello().unwrap();
        let vals: Vec<(f64, f64)> = (0..10)
            .map(|t| match c.query(t, action, eps, None) {
                Ok(Ok(r)) => (r.release.value(), r.budget_remaining),
                other => panic!("{other:?}"),
            })
            .collect();
        println!(
            "job (action {action}): hello session {} conversation {} budget {}; dropped {:?}",
            h.session, h.conversation, h.budget_remaining, c.dropped
        );
        vals
    };
    let first = job(3);
    std::thread::sleep(Duration::from_millis(500));
    // The device restarts (boot 2): a new session.
    stop1.store(true, Ordering::Relaxed);
    let s1 = serving1.join().unwrap().unwrap();
    println!("after job 1 the device has {} left", s1.devices[0].budget_remaining);
    let (stop, serving) = start(mk());
    let watch = MqttFleet::connect(
        &broker.url(),
        FleetWait { devices: Some(1), patience: Duration::from_secs(30) },
        &keys,
    )
    .unwrap();
    let after_boot = common::hello_until(&watch, 1, Duration::from_secs(30), |b| b < 190.0);
    println!("device restarted: its own hello says {after_boot} left (the boot reserved a chunk)");
    attacking.store(true, Ordering::Relaxed);
    let second = job(5);
    println!("job 1: {first:?}\njob 2: {second:?}");
    stop.store(true, Ordering::Relaxed);
    let stats = serving.join().unwrap().unwrap();
    println!("device budget left: {}", stats.devices[0].budget_remaining);
    let spent = after_boot - stats.devices[0].budget_remaining;
    println!(
        "job 2 took {} of job 1's reports; the device spent {spent} for job 2",
        second.iter().zip(&first).filter(|(a, b)| a == b).count()
    );
    assert_eq!(spent, second.len() as f64, "every report job 2 took was released (and charged) for it");
    let _ = std::fs::remove_dir_all(&dir);
}
