//! A run on one device on the wire (`--device tcp:…`, as `serial:` and `qemu`) keeps a ledger per
//! job in `device-ledgers/` and sums them in `run.json` (`device`); `merge` of a sharded run's
//! directories combines the shards' ledgers, so the merged run records what the whole run does.

use std::path::{Path, PathBuf};

mod common;
use common::{ID, device_key, host_sim, serve_for};

fn dir(tag: &str) -> PathBuf {
    common::dir("device-ledgers", tag)
}

#[test]
fn merged_shards_of_a_run_on_one_device_keep_every_jobs_ledger() {
    let root = dir("root");
    let keys = device_key(&root);
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
    let device_summary = |d: &Path| {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("run.json")).unwrap()).unwrap();
        v["device"].clone()
    };
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
    let root = dir("failed");
    let keys = device_key(&root);
    // The hello, then 5 reports; the link is cut on the 6th query.
    let device = format!("tcp:{}", serve_for(6));
    let out = root.join("out");
    let out_s = out.to_string_lossy().into_owned();
    let args = ["run", "device", "--device", &device, "--trials", "1", "--horizon", "12", "--quiet"];
    let (ok, err) = host_sim(&[&args[..], &["--out", &out_s]].concat(), &keys);
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
