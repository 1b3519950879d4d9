//! Review 5 over a real Mosquitto (skips without one, unless REQUIRE_BROKER=1): which devices a
//! fleet run uses, and whether its record says so.
//!
//! Fix 1 of `4286d89` leaves out of an MQTT run any device whose first hello fails (a line on
//! stderr), and fails the run only if none answered. Whoever carries the fleet's messages (the
//! broker, or anyone on its links) chooses which hellos, and so which devices, reach the
//! learner: dropping a device's replies now leaves it out (fix 1), and withholding its retained
//! hello always did (`FleetWait { devices: None }`: the fleet is whatever hellos arrive). The
//! run then exits 0, and nothing it keeps — the job's ledger (`fleet/*.csv`), `run.json`'s
//! `fleet` summary — names a device the learner holds a key for but did not use: a run of one
//! device out of a hundred reads exactly as a run of a fleet of one. With the key of one
//! member (its own device, or one it compromised), the attacker has every round answered by
//! that member, i.e. chooses every observation the learner makes, within the range checks.

mod common;
use common::broker;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use host_sim::experiments::experiment_env;
use host_sim::experiments::runner::{derive_seed, run_trial_with_ledger};
use ldp_link::mqtt::{DevicesSpec, Seeds};

#[test]
fn a_fleet_run_names_every_keyed_device_it_did_not_use() {
    use rumqttc::QoS;
    let Some(broker) = broker() else { return };
    let dir = common::fresh_dir("review5-left-out");
    let (env, epsilon) = experiment_env("device", 7, 0, None).unwrap();
    let serve = |count: usize| {
        let mut spec = DevicesSpec::new(broker.url(), &dir, count, Arc::clone(&env), epsilon, 50.0);
        spec.seeds = Seeds::Simulated { trial_seed: 21 };
        spec.provision = true;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        (stop, std::thread::spawn(move || ldp_link::mqtt::serve_devices(&spec, &flag)))
    };
    // Devices 1..=3 are provisioned; the learner holds all three keys.
    let (stop3, serving3) = serve(3);
    let keys = common::keys(&[&dir], 3);
    assert_eq!(keys.len(), 3);
    let (eve, recorded) = common::record_first(broker.port(), "ldp/2/hello");
    stop3.store(true, Ordering::Relaxed);
    serving3.join().unwrap().unwrap();
    // Only device 1 is served now (the attacker's, say). Device 2 shows a hello but nobody
    // answers for it (as when its replies are dropped); device 3 shows none (as when its
    // retained hello is withheld).
    let (stop1, serving1) = serve(1);
    std::thread::sleep(Duration::from_millis(200));
    eve.publish("ldp/2/hello", QoS::AtLeastOnce, true, recorded).unwrap();
    std::thread::sleep(Duration::from_millis(500));

    // SAFETY: this test binary holds one test, and nothing else reads the environment now.
    unsafe { std::env::set_var(host_sim::experiments::runner::KEYS_VAR, &dir) };
    let config = common::mqtt_fleet_run(&broker.url().to_string(), epsilon);
    let started = Instant::now();
    let got = run_trial_with_ledger(env.as_ref(), &config.algorithms[4], &config, derive_seed(7, 0, 0), 4);
    let took = started.elapsed();
    let _ = ldp_link::mqtt::forget_devices(&broker.url(), [2]);
    stop1.store(true, Ordering::Relaxed);
    let _ = serving1.join();
    let _ = std::fs::remove_dir_all(&dir);
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
