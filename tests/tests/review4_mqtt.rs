//! Review 4 over a real Mosquitto (skips without one, unless REQUIRE_BROKER=1).
//!
//! Finding 1: one stale retained hello stops every fleet run. `docs/fleet.md` says a device
//! process that is killed leaves its devices' retained hellos, and "a learner sees them, finds
//! those devices silent and benches them". Since wire format 3 the run greets each member
//! itself before it starts (`runner.rs`, `MqttRun::connect`: `client.hello()…?`), and a member
//! that does not answer ends the run there. An attacker who may publish on `ldp/<id>/hello`
//! (the broker's operator, or the device's own login under the documented ACL) re-publishes,
//! retained, a hello it recorded from a device that is no longer served; it stays on the
//! broker, and every later run against the fleet fails before its first round, until someone
//! clears it. No key is needed: the hello is genuine.

mod common;
use common::broker;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use host_sim::experiments::experiment_env;
use host_sim::experiments::runner::{derive_seed, run_trial_with_ledger};
use ldp_link::mqtt::{DevicesSpec, Seeds};

#[test]
fn a_stale_retained_hello_does_not_stop_a_fleet_run() {
    use rumqttc::QoS;
    let Some(broker) = broker() else { return };
    let dir = common::fresh_dir("review4-stale-hello");
    let (env, epsilon) = experiment_env("device", 7, 0, None).unwrap();
    let serve = |count: usize| {
        let mut spec = DevicesSpec::new(broker.url(), &dir, count, Arc::clone(&env), epsilon, 50.0);
        spec.seeds = Seeds::Simulated { trial_seed: 21 };
        spec.provision = true;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        (stop, std::thread::spawn(move || ldp_link::mqtt::serve_devices(&spec, &flag)))
    };
    // Devices 1..=3 run; the attacker records device 3's retained hello.
    let (stop3, serving3) = serve(3);
    let _ = common::keys(&[&dir], 3);
    let (eve, recorded) = common::record_first(broker.port(), "ldp/3/hello");
    // The devices stop cleanly (their hellos are taken off the broker); 1 and 2 come back.
    stop3.store(true, Ordering::Relaxed);
    serving3.join().unwrap().unwrap();
    let (stop2, serving2) = serve(2);
    // The attacker leaves device 3's hello on the broker again.
    std::thread::sleep(Duration::from_millis(200));
    eve.publish("ldp/3/hello", QoS::AtLeastOnce, true, recorded).unwrap();
    std::thread::sleep(Duration::from_millis(500));

    // SAFETY: this test binary holds one test, and nothing else reads the environment now.
    unsafe { std::env::set_var(host_sim::experiments::runner::KEYS_VAR, &dir) };
    let config = common::mqtt_fleet_run(&broker.url().to_string(), epsilon);
    let started = Instant::now();
    let got = run_trial_with_ledger(env.as_ref(), &config.algorithms[4], &config, derive_seed(7, 0, 0), 4);
    let outcome = match &got {
        Ok((_, ledger)) => format!("ran; ledger {ledger:?}"),
        Err(e) => format!("failed: {e}"),
    };
    println!("a run with device 3's stale hello on the broker {outcome} (after {:.1?})", started.elapsed());
    let _ = ldp_link::mqtt::forget_devices(&broker.url(), [3]);
    stop2.store(true, Ordering::Relaxed);
    let _ = serving2.join();
    let _ = std::fs::remove_dir_all(&dir);
    let (_, ledger) = got.expect("one silent member ended the fleet run before its first round");
    let ledger = ledger.expect("a fleet's ledger");
    // Benched as the docs say (or left out): either way it answered nothing.
    assert!(ledger.iter().filter(|r| r.id == 3).all(|r| r.reports == 0), "{ledger:?}");
    assert_eq!(ledger.iter().map(|r| r.reports).sum::<u64>(), 10, "{ledger:?}");
}
