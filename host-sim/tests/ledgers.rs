//! What a job's devices spent is recorded once, in its own run's record: a run on devices keeps
//! a ledger per job, merged shards keep every job's, a failed job keeps what its devices spent,
//! and no other run sums it as its own.
//!
//! A run on one device on the wire (`--device tcp:…`, as `serial:` and `qemu`) keeps a ledger per
//! job in `device-ledgers/` (a fleet's in `fleet/`) and sums them in `run.json`; `merge` of a
//! sharded run's directories combines the shards' ledgers. A failed job's ledger outlives the
//! failed run; another run in the same directory does not sum it (a run whose only job failed
//! leaves an empty `jobs.jsonl`, which pins no settings), `--overwrite` discards it, and the
//! job run again keeps what a device missing from the rerun spent. A fleet's job killed with
//! queries in flight shows, run again, exactly those queries as spent unanswered by each member
//! (also after a second kill), its other columns as a run never killed writes them; a run never
//! killed shows none and keeps no record; a damaged record is refused, naming it. The run's own
//! fleet writes the record; a job that queried no one keeps none, and pins no settings.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::common;
use common::{ID, device_key, host_sim, serve_for};

fn dir(tag: &str) -> PathBuf {
    common::dir("ledgers", tag)
}

/// A fresh directory `tag` holding the TCP device's key: the directory and the key file.
fn keyed_dir(tag: &str) -> (PathBuf, PathBuf) {
    let root = dir(tag);
    let keys = device_key(&root);
    (root, keys)
}

/// [`keyed_dir`] and the run's output directory in it, `out` (not created).
fn keyed_out_dir(tag: &str) -> (PathBuf, PathBuf, PathBuf) {
    let (root, keys) = keyed_dir(tag);
    let out = root.join("out");
    (root, keys, out)
}

/// `host-sim run device EXTRA --trials 1 --horizon 12 --quiet --out OUT` with the keys in
/// `keys`: whether it succeeded, and its stderr.
fn run_device(extra: &[&str], out: &Path, keys: &Path) -> (bool, String) {
    let out = out.to_string_lossy();
    let options = ["--trials", "1", "--horizon", "12", "--quiet", "--out", &out];
    host_sim(&[&["run", "device"][..], extra, &options].concat(), keys)
}

fn run_json(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
}

/// `run_device` in process with `--overwrite` succeeds, and its `run.json` has no `device`
/// (else fails saying `what`).
fn assert_no_device_after_overwrite(out: &Path, keys: &Path, what: &str) {
    let (ok, err) = run_device(&["--overwrite"], out, keys);
    assert!(ok, "{err}");
    let summary = &run_json(out)["device"];
    assert!(summary.is_null(), "{what}: {summary}");
}

#[test]
fn merged_shards_of_a_run_on_one_device_keep_every_jobs_ledger() {
    let (root, keys) = keyed_dir("root");
    let device = format!("tcp:{}", serve_for(usize::MAX));
    let run = |out: &Path, extra: &[&str]| {
        let out = out.to_string_lossy();
        let base = [
            "run",
            "device",
            "--device",
            &device,
            "--trials",
            "2",
            "--horizon",
            "12",
            "--quiet",
            "--out",
            &out,
        ];
        host_sim(&[&base[..], extra].concat(), &keys)
    };
    let whole = root.join("whole");
    let (ok, err) = run(&whole, &[]);
    assert!(ok, "{err}");
    let shards: Vec<PathBuf> = (0..2).map(|i| root.join(format!("s{i}"))).collect();
    for (i, s) in shards.iter().enumerate() {
        let (ok, err) = run(s, &["--shard", &format!("{i}/2")]);
        assert!(ok, "{err}");
    }
    let merged = root.join("merged");
    let shard_args: Vec<String> = shards.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    let merged_s = merged.to_string_lossy().into_owned();
    let args: Vec<&str> = ["merge"]
        .into_iter()
        .chain(shard_args.iter().map(String::as_str))
        .chain(["--out", &merged_s])
        .collect();
    let (ok, err) = host_sim(&args, &keys);
    assert!(ok, "{err}");
    let ledgers = |d: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d.join("device-ledgers"))
            .unwrap_or_else(|e| panic!("{}: no device-ledgers/ ({e})", d.display()))
            .map(|e| e.unwrap().path())
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
            .collect();
        v.sort();
        v
    };
    let whole_ledgers = ledgers(&whole);
    assert!(whole_ledgers.len() >= 2, "one ledger per job: {}", whole_ledgers.len());
    assert_eq!(ledgers(&merged), whole_ledgers);
    let device_summary = |d: &Path| run_json(d)["device"].clone();
    let summary = device_summary(&merged);
    assert_eq!(summary, device_summary(&whole));
    assert_eq!(summary["jobs"], whole_ledgers.len());
    assert_eq!(summary["ledgers"], "device-ledgers");
    let _ = std::fs::remove_dir_all(&root);
}

/// A job that fails once the device has spent on it still leaves its ledger: the ε its device
/// showed spent, in `device-ledgers/`. Before, the job's error returned before the ledger was
/// written, and what the failed job spent was recorded nowhere.
#[test]
fn a_job_that_fails_mid_run_keeps_what_its_device_spent() {
    let (root, keys) = keyed_dir("failed");
    // The hello, then 5 reports; the link is cut on the 6th query.
    let device = format!("tcp:{}", serve_for(6));
    let out = root.join("out");
    let (ok, err) = run_device(&["--device", &device], &out, &keys);
    assert!(!ok, "a run whose device went away mid-job succeeded");
    let ledgers: Vec<PathBuf> = std::fs::read_dir(out.join("device-ledgers"))
        .unwrap_or_else(|e| panic!("no device-ledgers/ after a failed job ({e}); the run said: {err}"))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(ledgers.len(), 1, "{ledgers:?}");
    let text = std::fs::read_to_string(&ledgers[0]).unwrap();
    let row: Vec<&str> = text.lines().nth(1).expect("a device's row").split(',').collect();
    assert_eq!(row[0], ID.to_string(), "{text}");
    assert_eq!(row[2], "5", "5 reports taken before the link was cut: {text}");
    let spent: f64 = row[1].parse().unwrap();
    // What authenticated frames showed: 5 reports at ε = 1. The device charged the 6th query
    // as well (its reply was cut, and no closing hello reached it): a ledger is a lower bound
    // until the device's next hello shows the rest.
    assert!((spent - 5.0).abs() < 1e-6, "5 reports at ε = 1 showed 5 spent: {text}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A run on a TCP device whose only job failed mid-run leaves its ledger and an empty
/// `jobs.jsonl`; a run in process into the same directory (the default `--out` of `run device`
/// is the same for both) started there without `--overwrite`, and its `run.json` said a device
/// on the wire spent ε on it. Another run's ledger is refused like its jobs are (the directory
/// holds results of other settings), and `--overwrite` discards it.
#[test]
fn a_failed_runs_ledger_is_not_summed_into_another_runs_record() {
    let (root, keys, out) = keyed_out_dir("other-run");
    // The hello, then 5 reports; the link is cut on the 6th query.
    let device = format!("tcp:{}", serve_for(6));
    let (ok, err) = run_device(&["--device", &device], &out, &keys);
    assert!(!ok, "a run whose device went away mid-job succeeded");
    assert!(out.join("device-ledgers").is_dir(), "the failed job keeps its ledger: {err}");

    // The same experiment in process, into the same directory.
    let (ok, err) = run_device(&[], &out, &keys);
    if ok {
        let summary = &run_json(&out)["device"];
        assert!(
            summary.is_null(),
            "a run in process, which queried no device, records device {ID}'s spending of another run: {summary}"
        );
    } else {
        assert!(err.contains("--overwrite"), "{err}");
    }
    assert_no_device_after_overwrite(&out, &keys, "--overwrite kept the replaced run's device ledger");
    let _ = std::fs::remove_dir_all(&root);
}

/// A run on a TCP device that finished, replaced by a run in process with `--overwrite`: the
/// replaced run's ledgers stay in `device-ledgers/`, and the new run's `run.json` sums them as
/// its own (before 89e3ee4 already; a failed run now leaves them too).
#[test]
fn overwrite_discards_the_replaced_runs_ledgers() {
    let (root, keys, out) = keyed_out_dir("overwrite");
    let device = format!("tcp:{}", serve_for(usize::MAX));
    let (ok, err) = run_device(&["--device", &device], &out, &keys);
    assert!(ok, "{err}");
    assert_eq!(run_json(&out)["device"]["spent_by_device"][ID.to_string()], 12.0);
    assert_no_device_after_overwrite(
        &out,
        &keys,
        "a run in process records the replaced run's device spending",
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// A failed job's ledger whose write fails is not mentioned: the run says why the job failed,
/// and nothing tells the user that what its device spent was recorded nowhere (here
/// `device-ledgers` is a file, so the directory cannot be made).
#[test]
fn a_failed_jobs_ledger_that_cannot_be_written_is_not_passed_over_in_silence() {
    let (root, keys, out) = keyed_out_dir("unwritten");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("device-ledgers"), b"not a directory").unwrap();
    let device = format!("tcp:{}", serve_for(6));
    let (ok, err) = run_device(&["--device", &device], &out, &keys);
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
    // The run with device `id` (of `budget`) alone serving: once its key is there, and stopped after.
    let run_on = |id: u64, budget: f64| {
        let (stop, serving) = serve(id, budget);
        wait_key(id);
        std::thread::sleep(std::time::Duration::from_millis(500));
        let got = host_sim(&args, &devices);
        stop.store(true, Ordering::Relaxed);
        let _ = serving.join();
        got
    };
    let eps = epsilon.get();
    let (ok, err) = run_on(1, 5.0 * eps);
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
    let (ok, err) = run_on(2, 50.0 * eps);
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

/// `run device --device fleet:10 --trials 1 --horizon 12 --quiet --out OUT`.
fn run_fleet(out: &Path) -> (bool, String) {
    let out = out.to_string_lossy();
    let args = [
        "run",
        "device",
        "--device",
        "fleet:10",
        "--trials",
        "1",
        "--horizon",
        "12",
        "--quiet",
        "--out",
        &out,
    ];
    host_sim(&args, Path::new("no-keys"))
}

/// What a kill of job (trial 0, learner 2) of [`run_fleet`] leaves in `out` when `queries`
/// queries are in flight: its attempt begun as the run begins it (what earlier attempts left
/// unanswered carried), its fleet (the run's ids and ε) sending them through the run's record,
/// and the record as it is on disk at that moment — no reply of those queries has reached the
/// fleet — with a line a kill cut short after it. (The fleet is then drained, so that its
/// threads end; the record is put back as the kill left it.)
fn kill_with_queries_in_flight(out: &Path, queries: usize) {
    use ldp_link::fleet::{Fleet, InFlightFleet, Routing, in_process};
    let dir = out.join("fleet");
    let record = host_sim::run::output::begin_query_record(&dir, 0, 2).unwrap();
    let (env, epsilon) = host_sim::experiments::experiment_env("device", 0, 0, None).unwrap();
    let members = in_process(env, 1, 10, epsilon, 50.0).unwrap();
    let fleet = Fleet::new(members, epsilon, Routing::RoundRobin, 0).with_record(record);
    let mut flying = InFlightFleet::new(fleet, 8).unwrap();
    for t in 0..queries {
        ldp_link::device::Device::submit(&mut flying, t, None).unwrap();
    }
    let path = host_sim::run::output::queries_path(&dir, 0, 2);
    let mut killed = std::fs::read(&path).unwrap();
    killed.extend_from_slice(b"sent 9 1 0.");
    ldp_link::device::Device::drain(&mut flying);
    drop(flying);
    std::fs::write(&path, killed).unwrap();
}

/// Every ledger of `out`'s fleet, by file name.
fn fleet_ledgers(out: &Path) -> std::collections::BTreeMap<String, String> {
    std::fs::read_dir(out.join("fleet"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// Each row of a ledger's text, its fields.
fn rows(text: &str) -> Vec<Vec<&str>> {
    text.lines().skip(1).map(|l| l.split(',').collect()).collect()
}

/// A fleet's job killed with 3 queries in flight, at members 1 to 3 (round robin), run again:
/// its ledger shows each of them with 1 query spent unanswered at ε = 1, every other member
/// with none, and every other column (what each spent, its reports) as the ledger of a run
/// never killed; the other jobs' ledgers are that run's byte for byte. The run never killed
/// shows nothing unanswered (no such columns, nothing in `run.json`), and neither keeps a
/// record once its jobs finished.
#[test]
fn a_job_killed_with_queries_in_flight_shows_them_spent_unanswered_when_run_again() {
    let root = dir("killed");
    let (whole, killed) = (root.join("whole"), root.join("killed"));
    let (ok, err) = run_fleet(&whole);
    assert!(ok, "{err}");
    kill_with_queries_in_flight(&killed, 3);
    let (ok, err) = run_fleet(&killed);
    assert!(ok, "{err}");
    let (never, again) = (fleet_ledgers(&whole), fleet_ledgers(&killed));
    assert_eq!(never.keys().collect::<Vec<_>>(), again.keys().collect::<Vec<_>>(), "no record is left");
    assert!(never.keys().all(|name| name.ends_with(".csv")), "{:?}", never.keys());
    let job = "trial0-learner2.csv";
    for (name, text) in &never {
        assert!(!text.contains("unanswered"), "a run never killed labels nothing: {name}: {text}");
        if name != job {
            assert_eq!(&again[name], text, "{name}: a job not killed is written as before");
        }
    }
    let (before, after) = (rows(&never[job]), rows(&again[job]));
    assert!(again[job].starts_with(never[job].lines().next().unwrap()), "{}", again[job]);
    assert!(again[job].lines().next().unwrap().ends_with(",left_out,unanswered,unanswered_eps"));
    assert_eq!(before.len(), after.len(), "{}", again[job]);
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(a[..b.len()], b[..], "spent, reports and the rest as a run never killed: {}", again[job]);
        let id: u64 = a[0].parse().unwrap();
        let want = if (1..=3).contains(&id) { ["1", "1"] } else { ["0", "0"] };
        assert_eq!(a[b.len()..], want, "device {id}: {}", again[job]);
    }
    assert!(run_json(&whole)["fleet"].get("unanswered").is_none());
    let unanswered = &run_json(&killed)["fleet"]["unanswered"];
    let one = serde_json::json!({"queries": 1, "eps": 1.0});
    assert_eq!(*unanswered, serde_json::json!({"1": one, "2": one, "3": one}), "{unanswered}");
    let _ = std::fs::remove_dir_all(&root);
}

/// Killed twice: the attempt that runs the job again is killed too, with 2 queries in flight
/// (at members 1 and 2 of its own fleet): the job, run a third time, shows what both attempts
/// left unanswered — the first's carried by the second's record.
#[test]
fn a_job_killed_twice_shows_what_both_attempts_left_unanswered() {
    let root = dir("twice");
    let out = root.join("out");
    kill_with_queries_in_flight(&out, 3);
    kill_with_queries_in_flight(&out, 2);
    let (ok, err) = run_fleet(&out);
    assert!(ok, "{err}");
    let text = &fleet_ledgers(&out)["trial0-learner2.csv"];
    for row in rows(text) {
        let want = match row[0] {
            "1" | "2" => ["2", "2"],
            "3" => ["1", "1"],
            _ => ["0", "0"],
        };
        assert_eq!(row[row.len() - 2..], want, "device {}: {text}", row[0]);
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// A record damaged other than by a kill (a whole line that is not a record's) is refused
/// before the job queries anyone: the error names the file and the line and says what to do;
/// removed, the job runs.
#[test]
fn a_damaged_record_of_queries_in_flight_is_refused_naming_it() {
    let root = dir("damaged");
    let out = root.join("out");
    kill_with_queries_in_flight(&out, 3);
    let path = host_sim::run::output::queries_path(&out.join("fleet"), 0, 2);
    let text = std::fs::read_to_string(&path).unwrap().replacen("sent 2 1 1\n", "sent two 1 1\n", 1);
    std::fs::write(&path, text).unwrap();
    let (ok, err) = run_fleet(&out);
    assert!(!ok, "a damaged record was read");
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("line 3") && err.contains("remove it"), "{err}");
    std::fs::remove_file(&path).unwrap();
    let (ok, err) = run_fleet(&out);
    assert!(ok, "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

/// The run's own fleet writes each query to its job's record (the wiring of `job_recorded_as`
/// and `trial_parts`, not a fleet built by the test): a job whose fleet runs out of budget
/// fails and keeps its record, which holds the queries it sent and how they settled.
#[test]
fn the_runs_own_fleet_writes_each_query_to_its_record() {
    let root = dir("wired");
    let out = root.join("out");
    let o = out.to_string_lossy();
    let args = [
        "run",
        "device",
        "--device",
        "fleet:2",
        "--user-budget",
        "2",
        "--trials",
        "1",
        "--horizon",
        "12",
        "--quiet",
        "--out",
        &o,
    ];
    let (ok, err) = host_sim(&args, Path::new("no-keys"));
    assert!(!ok && err.contains("budget is exhausted"), "the fleet ran out: {err}");
    let records: Vec<String> = std::fs::read_dir(out.join("fleet"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "queries"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(!records.is_empty(), "a failed job keeps its record");
    assert!(
        records.iter().any(|r| r.contains("\nsent 1 1 ") && r.contains("\ndone 1 1 report\n")),
        "the run's fleet recorded nothing: {records:?}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// A run that failed before its job queried anyone (a broker it cannot reach, no keys) leaves
/// no record of queries in flight; and a record that holds no query (its header alone, as a
/// kill before the first query leaves it) pins no settings: another run in the directory runs.
#[test]
fn a_record_of_no_query_is_not_kept_and_pins_no_settings() {
    let (root, out) = failed_before_any_query("no-query");
    let fleet = out.join("fleet");
    let records: Vec<PathBuf> =
        std::fs::read_dir(&fleet).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or_default();
    assert!(records.is_empty(), "a job that queried no one keeps nothing: {records:?}");
    std::fs::create_dir_all(&fleet).unwrap();
    std::fs::write(fleet.join("trial0-learner0.queries"), "ldp-queries-in-flight 1\n").unwrap();
    let (ok, err) = run_fleet(&out);
    assert!(ok, "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A record that holds a query (a job killed with it in flight) is a result of its run's
/// settings, as a ledger is: a run with other settings is refused the directory.
#[test]
fn a_record_of_queries_pins_the_settings() {
    let (root, out) = failed_before_any_query("record-pins");
    let fleet = out.join("fleet");
    std::fs::create_dir_all(&fleet).unwrap();
    std::fs::write(fleet.join("trial0-learner0.queries"), "ldp-queries-in-flight 1\nsent 1 1 0.5\n").unwrap();
    let (ok, err) = run_fleet(&out);
    assert!(!ok && err.contains("other settings"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A run into `tag/out` that fails before it queries anyone (an MQTT fleet with no keys and no
/// broker), having recorded its settings there: the directory and the output directory.
fn failed_before_any_query(tag: &str) -> (PathBuf, PathBuf) {
    let root = dir(tag);
    let out = root.join("out");
    let o = out.to_string_lossy();
    let args = [
        "run",
        "device",
        "--device",
        "mqtt://127.0.0.1:1",
        "--trials",
        "1",
        "--horizon",
        "12",
        "--quiet",
        "--out",
        &o,
    ];
    let (ok, err) = host_sim(&args, Path::new("no-keys"));
    assert!(!ok, "no keys, no broker: {err}");
    (root, out)
}
