//! A fleet run over a broker writes each query to its job's record of queries in flight
//! (`ldp_link::fleet::record`, the wiring of `MqttRun::connect`), with one query in flight and
//! with several (`--in-flight`), so that a run killed with queries in flight labels them when it
//! runs the job again (#37).
//!
//! Over a real Mosquitto (skips without one, unless REQUIRE_BROKER=1).

mod common;
use common::broker;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use host_sim::experiments::experiment_env;
use host_sim::experiments::runner::{KEYS_VAR, derive_seed, run_trial_with_record};
use host_sim::run::output::{begin_query_record, queries_path};
use ldp_link::mqtt::{DevicesSpec, Seeds};

/// Two devices on the broker; a one-trial run of 10 rounds on them, with `in_flight` queries
/// in flight, its record begun as a job's is: every query it sent is in the record, and settled
/// (10 of them by a report).
#[test]
fn a_fleet_run_over_a_broker_writes_each_query_to_its_record() {
    let Some(broker) = broker() else { return };
    let dir = common::fresh_dir("mqtt-record");
    let (env, epsilon) = experiment_env("device", 7, 0, None).unwrap();
    let mut spec = DevicesSpec::new(broker.url(), &dir, 2, Arc::clone(&env), epsilon, 200.0);
    spec.seeds = Seeds::Simulated { trial_seed: 21 };
    spec.provision = true;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let serving = std::thread::spawn(move || ldp_link::mqtt::serve_devices(&spec, &flag));
    common::keys(&[&dir], 2);
    // SAFETY: the only test of this binary; no other thread of it reads the environment now.
    unsafe { std::env::set_var(KEYS_VAR, &dir) };
    let records = dir.join("records");
    for (learner, in_flight) in [(0, 1), (1, 2)] {
        let mut config = common::mqtt_fleet_run(&broker.url().to_string(), epsilon);
        config.in_flight = in_flight;
        let record = begin_query_record(&records, 0, learner).unwrap();
        let trial = run_trial_with_record(
            env.as_ref(),
            &config.algorithms[4],
            &config,
            derive_seed(7, 0, 0),
            4,
            Some(record),
        );
        assert!(trial.curve.is_ok(), "{in_flight} in flight: {:?}", trial.curve.err().map(|e| e.to_string()));
        let text = std::fs::read_to_string(queries_path(&records, 0, learner)).unwrap();
        let sent: Vec<&str> = text.lines().filter(|l| l.starts_with("sent ")).collect();
        let reported = text.lines().filter(|l| l.starts_with("done ") && l.ends_with(" report")).count();
        assert_eq!(reported, 10, "{in_flight} in flight: every report is recorded: {text}");
        assert!(sent.len() >= 10, "{in_flight} in flight: every query is recorded before it is sent: {text}");
        for line in sent {
            let [_, device, n, _] = line.split(' ').collect::<Vec<_>>()[..] else { panic!("{line}") };
            assert!(text.contains(&format!("\ndone {device} {n} ")), "{line} settled: {text}");
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = serving.join();
    let _ = std::fs::remove_dir_all(&dir);
}
