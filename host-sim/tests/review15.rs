//! Review 15 of 89e3ee4 ("a job that fails after reaching its devices writes their ledger").
//!
//! A failed job's ledger now outlives the failed run, in `device-ledgers/` or `fleet/` of its
//! `--out` directory. Two ways it ends up in the wrong `run.json`, or out of it:
//! - another run in the same directory sums it as its own: a run whose only job failed leaves
//!   an empty `jobs.jsonl`, which pins no settings, so a run of other settings (the default
//!   `--out` of `run device` is `results/device` whatever the device) starts there without
//!   `--overwrite` and reports the failed run's device as having spent on it; with
//!   `--overwrite`, the replaced run's ledgers stay too;
//! - the job run again overwrites it with what the devices it reaches then show: a fleet
//!   member that spent in the failed attempt and is not in the fleet of the rerun (offline, or
//!   its hello kept off the broker) is left out, and what it spent is recorded nowhere.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

mod common;
use common::{ID, device_key, host_sim, serve_for};

fn dir(tag: &str) -> PathBuf {
    common::dir("review15", tag)
}

fn run_json(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
}

/// A run on a TCP device whose only job failed mid-run leaves its ledger and an empty
/// `jobs.jsonl`; a run in process into the same directory (the default `--out` of `run device`
/// is the same for both) started there without `--overwrite`, and its `run.json` said a device
/// on the wire spent ε on it. Another run's ledger is refused like its jobs are (the directory
/// holds results of other settings), and `--overwrite` discards it.
#[test]
fn a_failed_runs_ledger_is_not_summed_into_another_runs_record() {
    let root = dir("other-run");
    let keys = device_key(&root);
    let out = root.join("out");
    let out_s = out.to_string_lossy().into_owned();
    let common = ["--trials", "1", "--horizon", "12", "--quiet", "--out", &out_s];
    // The hello, then 5 reports; the link is cut on the 6th query.
    let device = format!("tcp:{}", serve_for(6));
    let (ok, err) = host_sim(&[&["run", "device", "--device", &device][..], &common].concat(), &keys);
    assert!(!ok, "a run whose device went away mid-job succeeded");
    assert!(out.join("device-ledgers").is_dir(), "the failed job keeps its ledger: {err}");

    // The same experiment in process, into the same directory.
    let (ok, err) = host_sim(&[&["run", "device"][..], &common].concat(), &keys);
    if ok {
        let summary = &run_json(&out)["device"];
        assert!(
            summary.is_null(),
            "a run in process, which queried no device, records device {ID}'s spending of another run: {summary}"
        );
    } else {
        assert!(err.contains("--overwrite"), "{err}");
    }
    let (ok, err) = host_sim(&[&["run", "device", "--overwrite"][..], &common].concat(), &keys);
    assert!(ok, "{err}");
    let summary = &run_json(&out)["device"];
    assert!(summary.is_null(), "--overwrite kept the replaced run's device ledger: {summary}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A run on a TCP device that finished, replaced by a run in process with `--overwrite`: the
/// replaced run's ledgers stay in `device-ledgers/`, and the new run's `run.json` sums them as
/// its own (before 89e3ee4 already; a failed run now leaves them too).
#[test]
fn overwrite_discards_the_replaced_runs_ledgers() {
    let root = dir("overwrite");
    let keys = device_key(&root);
    let out = root.join("out");
    let out_s = out.to_string_lossy().into_owned();
    let common = ["--trials", "1", "--horizon", "12", "--quiet", "--out", &out_s];
    let device = format!("tcp:{}", serve_for(usize::MAX));
    let (ok, err) = host_sim(&[&["run", "device", "--device", &device][..], &common].concat(), &keys);
    assert!(ok, "{err}");
    assert_eq!(run_json(&out)["device"]["spent_by_device"][ID.to_string()], 12.0);
    let (ok, err) = host_sim(&[&["run", "device", "--overwrite"][..], &common].concat(), &keys);
    assert!(ok, "{err}");
    let summary = &run_json(&out)["device"];
    assert!(summary.is_null(), "a run in process records the replaced run's device spending: {summary}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A failed job's ledger whose write fails is not mentioned: the run says why the job failed,
/// and nothing tells the user that what its device spent was recorded nowhere (here
/// `device-ledgers` is a file, so the directory cannot be made).
#[test]
fn a_failed_jobs_ledger_that_cannot_be_written_is_not_passed_over_in_silence() {
    let root = dir("unwritten");
    let keys = device_key(&root);
    let out = root.join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("device-ledgers"), b"not a directory").unwrap();
    let out_s = out.to_string_lossy().into_owned();
    let device = format!("tcp:{}", serve_for(6));
    let args = [
        "run",
        "device",
        "--device",
        &device,
        "--trials",
        "1",
        "--horizon",
        "12",
        "--quiet",
        "--out",
        &out_s,
    ];
    let (ok, err) = host_sim(&args, &keys);
    assert!(!ok, "a run whose device went away mid-job succeeded");
    assert!(
        err.contains("device-ledgers"),
        "the run's error does not say that the failed job's ledger was not written: {err}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// An MQTT fleet: device 1 spends its 5 ε and the job fails (the fleet is exhausted at round
/// 6); its ledger says device 1 spent 5. Device 1 then goes offline (or its hello is kept off
/// the broker), device 2 comes; the run resumed runs the job again, device 1 left out, and its
/// ledger — overwritten — and `run.json` no longer show that device 1 spent anything. Skips
/// without mosquitto (unless REQUIRE_BROKER=1).
#[test]
fn a_job_run_again_keeps_what_a_device_missing_from_the_rerun_spent() {
    if !ldp_link::mqtt::Broker::available() {
        assert!(
            std::env::var_os("REQUIRE_BROKER").is_none_or(|v| v != "1"),
            "REQUIRE_BROKER=1: no mosquitto"
        );
        eprintln!("skipping: mosquitto is not installed");
        return;
    }
    let broker = ldp_link::mqtt::Broker::start().expect("mosquitto starts");
    let root = dir("mqtt");
    let devices = root.join("devices");
    let (env, epsilon) = host_sim::experiments::experiment_env("device", 7, 0, None).unwrap();
    let serve = |first_id: u64, budget: f64| {
        let mut spec =
            ldp_link::mqtt::DevicesSpec::new(broker.url(), &devices, 1, Arc::clone(&env), epsilon, budget);
        spec.first_id = first_id;
        spec.seeds = ldp_link::mqtt::Seeds::Simulated { trial_seed: 21 };
        spec.provision = true;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        (stop, std::thread::spawn(move || ldp_link::mqtt::serve_devices(&spec, &flag)))
    };
    let wait_key = |id: u64| {
        let start = std::time::Instant::now();
        while !devices.join(id.to_string()).join("link.key").exists() {
            assert!(start.elapsed().as_secs() < 60, "device {id} wrote no key");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    let out = root.join("out");
    let out_s = out.to_string_lossy().into_owned();
    let url = broker.url().to_string();
    let args = [
        "run",
        "device",
        "--device",
        &url,
        "--trials",
        "1",
        "--horizon",
        "10",
        "--seed",
        "7",
        "--quiet",
        "--out",
        &out_s,
    ];
    let eps = epsilon.get();
    let (stop1, serving1) = serve(1, 5.0 * eps);
    wait_key(1);
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (ok, err) = host_sim(&args, &devices);
    stop1.store(true, Ordering::Relaxed);
    let _ = serving1.join();
    assert!(!ok, "10 rounds on one device with budget for 5 succeeded");
    let spent_1 = |text: &str| -> Option<f64> {
        text.lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|f| f[0] == "1" && !f[1].is_empty())
            .map(|f| f[1].parse().unwrap())
    };
    let ledger = std::fs::read_dir(out.join("fleet"))
        .unwrap_or_else(|e| panic!("no fleet/ after the failed job ({e}): {err}"))
        .map(|e| e.unwrap().path())
        .next()
        .expect("the failed job's ledger");
    let text = std::fs::read_to_string(&ledger).unwrap();
    let before = spent_1(&text).unwrap_or_else(|| panic!("device 1's spending in the failed job: {text}"));
    assert!((before - 5.0 * eps).abs() < 1e-6, "{text}");

    // Device 1 is gone; device 2 (fresh budget) serves the job run again.
    let (stop2, serving2) = serve(2, 50.0 * eps);
    wait_key(2);
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (ok, err) = host_sim(&args, &devices);
    stop2.store(true, Ordering::Relaxed);
    let _ = serving2.join();
    let _ = ldp_link::mqtt::forget_devices(&broker.url(), [1, 2]);
    assert!(ok, "{err}");
    let fleet = &run_json(&out)["fleet"];
    let _ = std::fs::remove_dir_all(&root);
    let recorded = fleet["spent_by_device"]["1"].as_f64();
    assert!(
        recorded.is_some_and(|s| s >= before - 1e-9),
        "device 1 spent {before} ε on this run's job (its failed attempt), and run.json records {recorded:?}: {fleet}"
    );
}
