//! Whoever may subscribe and publish on the broker, without a key, can neither stop a fleet run,
//! hide which keyed devices it used, nor pass one job's recorded reports to the next.
//!
//! Over a real Mosquitto (each test skips without one, unless REQUIRE_BROKER=1). Covers: a stale
//! retained hello re-published for a device no longer served; a run whose keyed devices do not
//! all answer (a hello with nobody behind it, or no hello at all); a recorded job's hello and
//! reports replayed to the next job after the device restarted.

mod common;
use common::broker;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use host_sim::experiments::experiment_env;
use host_sim::experiments::runner::{RunError, derive_seed, run_trial_with_ledger};
use ldp_core::Epsilon;
use ldp_core::wire::StreamReader;
use ldp_learn::env::Environment;
use ldp_link::client::WireClient;
use ldp_link::device::MemberRecord;
use ldp_link::mqtt::{DevicesSpec, FleetWait, MqttError, MqttFleet, Seeds, ServeStats};

/// Held by every test of this binary that sets the environment (`KEYS_VAR`), so that no other
/// test of it runs meanwhile.
static ENVIRONMENT: Mutex<()> = Mutex::new(());

/// Devices `first_id`.. (`count` of them) of `env` on the broker at `url`, their state in
/// `dir`, provisioned, with the simulated seeds of trial 21 and `budget` ε each, served until
/// the returned flag is set.
fn serve(
    url: ldp_link::mqtt::BrokerUrl,
    dir: &Path,
    count: usize,
    env: &Arc<dyn Environment>,
    epsilon: Epsilon,
    budget: f64,
) -> (Arc<AtomicBool>, JoinHandle<Result<ServeStats, MqttError>>) {
    let mut spec = DevicesSpec::new(url, dir, count, Arc::clone(env), epsilon, budget);
    spec.seeds = Seeds::Simulated { trial_seed: 21 };
    spec.provision = true;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    (stop, std::thread::spawn(move || ldp_link::mqtt::serve_devices(&spec, &flag)))
}

/// What a fleet run did: its outcome, how long it took, and the keys the learner held.
type StaleRun = (Result<(Vec<f64>, Option<Vec<MemberRecord>>), RunError>, Duration, usize);

/// Devices 1..=3 are provisioned (the learner holds their keys) and served until the attacker
/// has recorded device `stale`'s retained hello; they stop cleanly (their hellos are taken off
/// the broker), devices 1..=`served` come back, and the attacker leaves the recorded hello on
/// the broker again. Then a one-trial fleet run of 10 rounds; `None` without a broker.
fn run_after_a_stale_hello(name: &str, stale: u64, served: usize) -> Option<StaleRun> {
    use rumqttc::QoS;
    let _environment = ENVIRONMENT.lock().unwrap_or_else(|e| e.into_inner());
    let broker = broker()?;
    let dir = common::fresh_dir(name);
    let (env, epsilon) = experiment_env("device", 7, 0, None).unwrap();
    let serve = |count: usize| serve(broker.url(), &dir, count, &env, epsilon, 50.0);
    let (stop3, serving3) = serve(3);
    let keys = common::keys(&[&dir], 3).len();
    let topic = format!("ldp/{stale}/hello");
    let (eve, recorded) = common::record_first(broker.port(), &topic);
    stop3.store(true, Ordering::Relaxed);
    serving3.join().unwrap().unwrap();
    let (stop, serving) = serve(served);
    std::thread::sleep(Duration::from_millis(200));
    eve.publish(topic, QoS::AtLeastOnce, true, recorded).unwrap();
    std::thread::sleep(Duration::from_millis(500));

    // SAFETY: the tests of this binary that touch the environment hold ENVIRONMENT, and no
    // thread of this test reads it now.
    unsafe { std::env::set_var(host_sim::experiments::runner::KEYS_VAR, &dir) };
    let config = common::mqtt_fleet_run(&broker.url().to_string(), epsilon);
    let started = Instant::now();
    let got = run_trial_with_ledger(env.as_ref(), &config.algorithms[4], &config, derive_seed(7, 0, 0), 4);
    let took = started.elapsed();
    let _ = ldp_link::mqtt::forget_devices(&broker.url(), [stale]);
    stop.store(true, Ordering::Relaxed);
    let _ = serving.join();
    let _ = std::fs::remove_dir_all(&dir);
    Some((got, took, keys))
}

/// One stale retained hello does not stop a fleet run. `docs/fleet.md` says a device process
/// that is killed leaves its devices' retained hellos, and "a learner sees them, finds those
/// devices silent and benches them". Review 4 found that the run greeted each member before it
/// started (`MqttRun::connect`: `client.hello()…?`) and ended there when one did not answer: an
/// attacker who may publish on `ldp/<id>/hello` (the broker's operator, or the device's own
/// login under the documented ACL) re-publishes, retained, a hello it recorded from a device no
/// longer served, and every later run against the fleet fails before its first round. No key
/// is needed: the hello is genuine.
#[test]
fn a_stale_retained_hello_does_not_stop_a_fleet_run() {
    // Devices 1..=3 run; the attacker records device 3's retained hello; 1 and 2 come back.
    let Some((got, took, _)) = run_after_a_stale_hello("mqtt-stale-hello", 3, 2) else { return };
    let outcome = match &got {
        Ok((_, ledger)) => format!("ran; ledger {ledger:?}"),
        Err(e) => format!("failed: {e}"),
    };
    println!("a run with device 3's stale hello on the broker {outcome} (after {took:.1?})");
    let (_, ledger) = got.expect("one silent member ended the fleet run before its first round");
    let ledger = ledger.expect("a fleet's ledger");
    // Benched as the docs say (or left out): either way it answered nothing.
    assert!(ledger.iter().filter(|r| r.id == 3).all(|r| r.reports == 0), "{ledger:?}");
    assert_eq!(ledger.iter().map(|r| r.reports).sum::<u64>(), 10, "{ledger:?}");
}

/// Which devices a fleet run uses, and whether its record says so. An MQTT run leaves out any
/// device whose first hello fails (a line on stderr), and fails only if none answered. Whoever
/// carries the fleet's messages chooses which hellos, and so which devices, reach the learner:
/// dropping a device's replies leaves it out, and withholding its retained hello always did
/// (`FleetWait { devices: None }`: the fleet is whatever hellos arrive). Review 5 found that
/// nothing the run keeps — the job's ledger (`fleet/*.csv`), `run.json`'s `fleet` summary —
/// named a device the learner holds a key for but did not use: a run of one device out of a
/// hundred read exactly as a run of a fleet of one, and with the key of one member the attacker
/// had every round answered by it, i.e. chose every observation the learner made.
#[test]
fn a_fleet_run_names_every_keyed_device_it_did_not_use() {
    // Only device 1 is served after the recording (the attacker's, say). Device 2 shows a hello
    // but nobody answers for it (as when its replies are dropped); device 3 shows none (as when
    // its retained hello is withheld).
    let Some((got, took, keys)) = run_after_a_stale_hello("mqtt-left-out", 2, 1) else { return };
    assert_eq!(keys, 3, "the learner holds all three keys");
    let ledger = match got {
        // Refusing to run without every keyed device is one fix.
        Err(e) => {
            println!("the run refused: {e}");
            return;
        }
        Ok((_, ledger)) => ledger.expect("a fleet's ledger"),
    };
    println!("3 keyed devices, 1 answering: the run exited Ok after {took:.1?}; its ledger: {ledger:?}");
    let ids: Vec<u64> = ledger.iter().map(|r| r.id).collect();
    assert_eq!(ledger.iter().map(|r| r.reports).sum::<u64>(), 10, "{ledger:?}");
    assert!(
        ids.contains(&2),
        "device 2 (keyed, its hello on the broker, silent) was left out, and the job's ledger does not say so: {ids:?}"
    );
    assert!(
        ids.contains(&3),
        "device 3 (keyed, no hello on the broker) is not in the run, and the job's ledger does not say so: {ids:?}"
    );
}

const BUDGET: f64 = 200.0;

/// An attacker that can only subscribe and publish (no key) records one job's frames, then
/// answers the next job's hello (number 1, as every `WireClient::new` numbers it) with the
/// recorded hello, and each of its queries with the recorded report of the same number. Before
/// wire format 4 the second job's learner took the first job's reports (for other actions) while
/// the device spent nothing for it; every report taken must be released for it.
#[test]
fn a_recorded_job_is_not_replayed_to_the_next_job() {
    use rumqttc::{Client, Event, MqttOptions, Packet, QoS};
    let _environment = ENVIRONMENT.lock().unwrap_or_else(|e| e.into_inner());
    let Some(broker) = broker() else { return };
    let dir = common::fresh_dir("mqtt-replay");
    let (env, epsilon) = experiment_env("device", 7, 0, None).unwrap();
    let start = || serve(broker.url(), &dir, 1, &env, epsilon, BUDGET);
    let (stop1, serving1) = start();
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
    let (stop, serving) = start();
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
