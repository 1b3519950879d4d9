//! `--device fleet:N`: a run's rounds answered by N simulated users in this process, each the
//! device application with its own budget — what each user spent is recorded per job and
//! summarised in run.json, an exhausted fleet stops the run with a message, and a resumed
//! fleet run is byte-identical.

use std::path::{Path, PathBuf};
use std::process::Command;

fn host_sim(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_host-sim")).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("host-sim-fleet-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `run device` on a fleet of 10, T = 205, 2 trials, into `out`.
fn run(out: &Path, extra: &[&str]) -> (bool, String, String) {
    let out = out.to_string_lossy();
    let base = ["run", "device", "--device", "fleet:10", "--trials", "2", "--horizon", "205", "--quiet"];
    host_sim(&[&base[..], &["--out", &out], extra].concat())
}

#[test]
fn every_user_spends_its_share_and_the_run_records_it() {
    let out = dir("share");
    let (ok, _, err) = run(&out, &[]);
    assert!(ok, "{err}");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let fleet = &record["fleet"];
    let learners = record["results"].as_array().unwrap().iter().filter(|r| r["reference"] == false).count();
    assert_eq!(fleet["jobs"], 2 * learners);
    // eps = 1, T = 205 over 10 users, round-robin: 21 reports for the first five, 20 for the rest;
    // each user's budget is eps * ceil(T / N) = 21.
    assert_eq!(fleet["max_user_eps"], 21.0);
    assert_eq!(record["config"]["fleet"]["routing"], "round-robin");
    for entry in std::fs::read_dir(out.join("fleet")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let rows: Vec<Vec<f64>> =
            text.lines().skip(1).map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect();
        assert_eq!(rows.len(), 10);
        assert_eq!(rows.iter().map(|r| r[2]).sum::<f64>(), 205.0, "one report per round");
        for (i, r) in rows.iter().enumerate() {
            let expected = if i < 5 { 21.0 } else { 20.0 };
            assert_eq!((r[0], r[1], r[2], r[3]), (i as f64 + 1.0, expected, expected, 0.0), "{text}");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_resumed_fleet_run_is_byte_identical() {
    let (a, b) = (dir("whole"), dir("resumed"));
    assert!(run(&a, &[]).0);
    // A run cut short: keep only the first job of the checkpoint and of the ledgers.
    assert!(run(&b, &[]).0);
    let jobs = std::fs::read_to_string(b.join("jobs.jsonl")).unwrap();
    std::fs::write(b.join("jobs.jsonl"), format!("{}\n", jobs.lines().next().unwrap())).unwrap();
    std::fs::remove_file(b.join("run.json")).unwrap();
    let ledgers: Vec<PathBuf> =
        std::fs::read_dir(b.join("fleet")).unwrap().map(|e| e.unwrap().path()).collect();
    for p in ledgers.iter().filter(|p| !p.ends_with("trial0-learner0.csv")) {
        std::fs::remove_file(p).unwrap();
    }
    let (ok, _, err) = run(&b, &[]);
    assert!(ok && err.contains("resuming"), "{err}");
    for file in ["regret.csv", "finals.csv"] {
        assert_eq!(std::fs::read(a.join(file)).unwrap(), std::fs::read(b.join(file)).unwrap(), "{file}");
    }
    let without_seconds = |p: PathBuf| {
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        // Timings: the seconds and the reports told per second of the loops.
        for r in v["results"].as_array_mut().unwrap() {
            r["seconds"] = 0.into();
            r["reports_per_s"] = 0.into();
        }
        v
    };
    assert_eq!(without_seconds(a.join("run.json")), without_seconds(b.join("run.json")));
    let _ = (std::fs::remove_dir_all(&a), std::fs::remove_dir_all(&b));
}

#[test]
fn a_fleet_run_records_the_reports_told_per_second_of_its_loops() {
    let (fleet, plain) = (dir("rate"), dir("rate-plain"));
    let (ok, _, err) = run(&fleet, &["--in-flight", "4"]);
    assert!(ok, "{err}");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fleet.join("run.json")).unwrap()).unwrap();
    assert_eq!(record["config"]["in_flight"], 4);
    for r in record["results"].as_array().unwrap() {
        let rate = &r["reports_per_s"];
        if r["reference"] == true {
            assert!(rate.is_null(), "uniform play is told nothing: {r}");
        } else {
            // 2 trials × 205 reports in at most the job's seconds.
            let (rate, seconds) = (rate.as_f64().unwrap(), r["seconds"].as_f64().unwrap());
            assert!(rate.is_finite() && rate * seconds >= 410.0 * 0.999, "{r}");
        }
    }
    // A run on the in-process device, one query at a time, records none (its run.json as before).
    let out = plain.to_string_lossy();
    let (ok, _, err) =
        host_sim(&["run", "device", "--trials", "1", "--horizon", "20", "--quiet", "--out", &out]);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(plain.join("run.json")).unwrap();
    assert!(!text.contains("reports_per_s"), "{text}");
    let _ = (std::fs::remove_dir_all(&fleet), std::fs::remove_dir_all(&plain));
}

#[test]
fn an_exhausted_fleet_stops_the_run_with_what_to_do() {
    let out = dir("exhausted");
    let (ok, _, err) = run(&out, &["--user-budget", "5"]);
    assert!(!ok);
    assert!(err.contains("exhausted at round 51") && err.contains("--user-budget"), "{err}");
    assert!(!out.join("run.json").exists());
    for (args, says) in [
        (&["--device", "fleet:0"][..], "whole number >= 1"),
        (&["--routing", "random"][..], "add --device fleet:N"),
    ] {
        let (ok, _, err) =
            host_sim(&[&["run", "device", "--quiet", "--out", &out.to_string_lossy()], args].concat());
        assert!(!ok && err.contains(says), "{err}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn shards_of_a_fleet_run_merge_into_the_whole_run_with_its_ledgers() {
    let (whole, root) = (dir("merge-whole"), dir("merge"));
    assert!(run(&whole, &[]).0);
    let shards: Vec<String> =
        (0..3).map(|i| root.join(format!("s{i}")).to_string_lossy().into_owned()).collect();
    for (i, s) in shards.iter().enumerate() {
        let (ok, _, err) = run(Path::new(s), &["--shard", &format!("{i}/3")]);
        assert!(ok, "{err}");
    }
    let merged = root.join("merged");
    let merged_s = merged.to_string_lossy().into_owned();
    let (ok, _, err) = host_sim(
        &[&["merge"], &shards.iter().map(String::as_str).collect::<Vec<_>>()[..], &["--out", &merged_s]]
            .concat(),
    );
    assert!(ok, "{err}");
    let ledger_names = |d: &Path| {
        let mut v: Vec<_> =
            std::fs::read_dir(d.join("fleet")).unwrap().map(|e| e.unwrap().file_name()).collect();
        v.sort();
        v
    };
    assert_eq!(ledger_names(&whole), ledger_names(&merged));
    for name in ledger_names(&whole) {
        assert_eq!(
            std::fs::read(whole.join("fleet").join(&name)).unwrap(),
            std::fs::read(merged.join("fleet").join(&name)).unwrap()
        );
    }
    let fleet = |d: &Path| {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("run.json")).unwrap()).unwrap();
        v["fleet"].clone()
    };
    assert_eq!(fleet(&whole), fleet(&merged));
    let _ = (std::fs::remove_dir_all(&whole), std::fs::remove_dir_all(&root));
}

#[test]
fn a_sweep_of_local_points_runs_on_a_fleet_and_others_say_why_not() {
    let out = dir("sweep");
    let o = out.to_string_lossy().into_owned();
    let (ok, _, err) = host_sim(&[
        "run",
        "tao-ldp",
        "--device",
        "fleet:20",
        "--trials",
        "1",
        "--horizon",
        "400",
        "--quiet",
        "--out",
        &o,
    ]);
    assert!(ok, "{err}");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let learners = record["results"].as_array().unwrap().iter().filter(|r| r["reference"] == false).count();
    // One ledger per learner of the sweep, numbered across its points (none overwrites another).
    assert_eq!(record["fleet"]["jobs"], learners);
    assert_eq!(std::fs::read_dir(out.join("fleet")).unwrap().count(), learners);
    for experiment in ["tao-s1", "agarwal-experts", "fig2d"] {
        let (ok, _, err) = host_sim(&["run", experiment, "--device", "fleet:20", "--quiet", "--out", &o]);
        assert!(!ok && err.contains("a fleet cannot answer it"), "{experiment}: {err}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_bridged_board_is_created_only_when_asked_and_never_again_once_lost() {
    let board = dir("board");
    let b = board.to_string_lossy().into_owned();
    // Refused before QEMU or the broker are touched: neither is needed here.
    let bridge = |extra: &[&str]| {
        host_sim(
            &[
                &["fleet", "bridge", "--broker", "mqtt://127.0.0.1:1", "--qemu", "/no/such.elf", "--dir", &b],
                extra,
            ]
            .concat(),
        )
    };
    let (ok, _, err) = bridge(&[]);
    assert!(!ok && err.contains("has no state") && err.contains("--provision"), "{err}");
    std::fs::create_dir_all(&board).unwrap();
    std::fs::write(board.join("board.txt"), "firmware = x\n").unwrap();
    for extra in [&[][..], &["--provision"][..]] {
        let (ok, _, err) = bridge(extra);
        assert!(!ok && err.contains("lost its state"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&board);
}
