//! The command line answers bad input with a one-line error and a non-zero exit, never a panic.

use std::process::Command;

fn host_sim(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_host-sim")).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn bad_input_gives_a_one_line_error() {
    let dir = std::env::temp_dir().join(format!("host-sim-cli-{}", std::process::id()));
    let out = dir.to_string_lossy().to_string();
    let cases: &[&[&str]] = &[
        &["run", "fig9z", "--out", &out],
        &["run", "fig2a", "--eps", "-1", "--out", &out],
        &["run", "fig2a", "--eps", "0", "--out", &out],
        &["run", "fig2d", "--eps", "1", "--out", &out],
        &["run", "fig2b", "--out", &out],
        &["run", "fig2b", "--data", "/nonexistent/dir", "--out", &out],
        &["run", "fig2a", "--trials", "0", "--out", &out],
        &["run", "fig2a", "--config", "/nonexistent/cfg.toml"],
        &["privatise", "--eps", "nan"],
        &["run", "fig2d", "--noise", "cauchy", "--out", &out],
        &["run", "fig2b", "--noise", "pareto", "--out", &out],
        &["run", "fig2a", "--noise", "student-t", "--out", &out],
        &["run", "fig2a", "--beta-scale", "-1", "--out", &out],
        &["run", "fig2d", "--device", "qemu", "--out", &out], // non-private: no device to feed
        &["run", "device", "--device", "usb", "--out", &out],
        &["fleet", "bridge", "--broker", "http://x", "--tcp", "127.0.0.1:1"],
        &["fleet", "bench", "--broker", "none", "--devices", "0"],
        &["fleet", "bench", "--broker", "ftp://x"],
        &["live", "--device", "fleet:3", "--actions", "5", "--out", &out],
        &["live", "--device", "tcp:127.0.0.1:1", "--actions", "5", "--out", &out],
        &["live", "--device", "serial:/nonexistent/tty", "--actions", "5", "--out", &out],
        &["live", "--device", "qemu", "--actions", "5", "--eps", "0", "--out", &out],
        &["live", "--device", "qemu", "--actions", "5", "--learner", "nope", "--out", &out],
        &["live", "--device", "qemu", "--actions", "5", "--lengthscale", "-1", "--out", &out],
        &["live", "--device", "qemu", "--coords", "/nonexistent/where.csv", "--out", &out],
    ];
    for args in cases {
        let (ok, _, err) = host_sim(args);
        assert!(!ok, "{args:?} succeeded");
        assert!(err.starts_with("error:"), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn every_help_shows_an_example() {
    for args in [
        &["--help"][..],
        &["run", "--help"],
        &["list", "--help"],
        &["merge", "--help"],
        &["reproduce", "--help"],
        &["audit", "--help"],
        &["privatise", "--help"],
        &["live", "--help"],
        &["fleet", "--help"],
        &["fleet", "devices", "--help"],
        &["fleet", "bridge", "--help"],
        &["fleet", "bench", "--help"],
    ] {
        let (ok, out, _) = host_sim(args);
        assert!(ok && out.contains("Example"), "{args:?}:\n{out}");
        assert!(out.contains("host-sim "), "{args:?}: the example shows no command:\n{out}");
    }
}

#[test]
fn list_names_every_experiment() {
    let (ok, out, _) = host_sim(&["list"]);
    assert!(ok);
    for name in ["fig2a", "fig2b", "fig2c", "fig2d", "fig2e", "fig2f", "fig3a", "fig3b", "fig3c"] {
        assert!(out.contains(name), "{name} missing from:\n{out}");
    }
}

#[test]
fn a_small_run_writes_csv_json_and_svg() {
    let dir = std::env::temp_dir().join(format!("host-sim-run-{}", std::process::id()));
    let out = dir.to_string_lossy().to_string();
    let (ok, stdout, err) =
        host_sim(&["run", "fig3a", "--trials", "2", "--horizon", "50", "--quiet", "--out", &out]);
    assert!(ok, "{err}");
    assert!(stdout.contains("LDP-MoMA-GP-UCB"), "{stdout}");
    for file in ["regret.csv", "finals.csv", "run.json", "regret.svg", "regret.png"] {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        assert!(!bytes.is_empty(), "{file} is empty");
    }
    let csv = std::fs::read_to_string(dir.join("regret.csv")).unwrap();
    assert_eq!(csv.lines().count(), 51, "header + 50 rounds");
    let json = std::fs::read_to_string(dir.join("run.json")).unwrap();
    assert!(json.contains("\"seed\": 0") && json.contains("\"epsilon\": 1.0"), "{json}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A run killed at an arbitrary moment and started again with the same command produces the same
/// regret.csv and finals.csv as an uninterrupted run.
#[test]
fn a_killed_run_resumes_to_the_same_csv() {
    let base = std::env::temp_dir().join(format!("host-sim-kill-{}", std::process::id()));
    let (whole, killed) = (base.join("whole"), base.join("killed"));
    let _ = std::fs::remove_dir_all(&base);
    let args = |out: &std::path::Path| {
        vec![
            "run".to_string(),
            "fig3a".into(),
            "--trials".into(),
            "4".into(),
            "--horizon".into(),
            "500".into(),
            "--threads".into(),
            "1".into(),
            "--quiet".into(),
            "--out".into(),
            out.to_string_lossy().into_owned(),
        ]
    };
    let (ok, _, err) = host_sim(&args(&whole).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{err}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_host-sim"))
        .args(args(&killed))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once a few of its 16 jobs are on disk (or after 10 s at the latest).
    let jobs = killed.join("jobs.jsonl");
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(10) {
        let lines = std::fs::read_to_string(&jobs).map_or(0, |t| t.lines().count());
        if lines >= 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let _ = child.kill();
    let _ = child.wait();
    let recorded = std::fs::read_to_string(&jobs).map_or(0, |t| t.lines().count());
    assert!(recorded < 16, "the run finished before it could be killed ({recorded} jobs)");
    let (ok, _, err) = host_sim(&args(&killed).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{err}");
    for file in ["regret.csv", "finals.csv"] {
        let a = std::fs::read_to_string(whole.join(file)).unwrap();
        let b = std::fs::read_to_string(killed.join(file)).unwrap();
        assert!(a == b, "{file} differs after resuming");
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// A run split into three shards run in parallel by `xargs -P 3` (as on one machine; a Slurm
/// array runs the same commands on several) and merged writes the files one `run` writes.
#[test]
fn three_shards_run_by_xargs_merge_to_the_one_machine_files() {
    let base = std::env::temp_dir().join(format!("host-sim-shards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    // No --threads: it does not change results, and run.json records it as given.
    let settings = ["fig2a", "--trials", "3", "--horizon", "150", "--quiet"];
    let whole = base.join("whole");
    let mut args = vec!["run"];
    args.extend(settings);
    args.extend(["--out", whole.to_str().unwrap()]);
    let (ok, _, err) = host_sim(&args);
    assert!(ok, "{err}");

    let script = format!(
        "seq 0 2 | xargs -P 3 -I{{}} '{}' run {} --shard {{}}/3 --out '{}/shard{{}}'",
        env!("CARGO_BIN_EXE_host-sim"),
        settings.join(" "),
        base.display()
    );
    let status = Command::new("sh").arg("-c").arg(&script).status().unwrap();
    assert!(status.success(), "{script}");
    let shard = |i: usize| base.join(format!("shard{i}")).to_string_lossy().into_owned();
    let merged = base.join("merged");

    // Two of the three shards are refused, with what to do.
    let (ok, _, err) =
        host_sim(&["merge", &shard(0), &shard(2), "--out", base.join("part").to_str().unwrap()]);
    assert!(
        !ok && err.contains("in none of the shard directories") && err.contains("run the missing shards"),
        "{err}"
    );

    let (ok, stdout, err) =
        host_sim(&["merge", &shard(0), &shard(1), &shard(2), "--out", merged.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(stdout.contains("uniform play"), "{stdout}");
    for file in ["regret.csv", "finals.csv", "regret.svg", "run.json"] {
        let read = |dir: &std::path::Path| {
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            text.lines().filter(|l| !l.contains("\"seconds\"")).collect::<Vec<_>>().join("\n")
        };
        assert!(read(&whole) == read(&merged), "{file} differs after merging");
    }
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn plot_redraws_format_json_prints_the_table_and_a_failed_write_leaves_no_run_json() {
    let dir = std::env::temp_dir().join(format!("host-sim-plot-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.to_string_lossy().to_string();
    let small = ["run", "fig3a", "--trials", "2", "--horizon", "40", "--quiet", "--out", &out];
    let (ok, stdout, err) = host_sim(&[&small[..], &["--format", "json", "--log-log"]].concat());
    assert!(ok, "{err}");
    let json: String = stdout.lines().take_while(|l| !l.contains(" s; wrote")).collect();
    let table: serde_json::Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(table["trials"], 2);
    let svg = std::fs::read(dir.join("regret.svg")).unwrap();
    // Redrawn linear, then log-log again: the run's own log-log plot, byte for byte.
    let (ok, stdout, err) = host_sim(&["plot", &out]);
    assert!(ok && stdout.contains("regret.png"), "{err}");
    assert_ne!(std::fs::read(dir.join("regret.svg")).unwrap(), svg);
    let (ok, _, err) = host_sim(&["plot", &out, "--log-log"]);
    assert!(ok, "{err}");
    assert_eq!(std::fs::read(dir.join("regret.svg")).unwrap(), svg);
    // A plot that cannot be written fails the run, and no run.json claims it complete.
    assert!(dir.join("run.json").is_file());
    std::fs::remove_file(dir.join("regret.png")).unwrap();
    std::fs::create_dir(dir.join("regret.png")).unwrap();
    let (ok, _, err) = host_sim(&small); // resumes every job from the checkpoint, then writes

    assert!(!ok && err.contains("error: cannot write") && err.contains("regret.png"), "{err}");
    assert!(!err.contains("Error(") && !err.contains("Os {"), "Rust words in {err}");
    assert!(!dir.join("run.json").exists(), "a failed run left run.json");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_closed_stdout_does_not_crash_a_run() {
    use std::process::{Command, Stdio};
    let out = std::env::temp_dir().join(format!("host-sim-cli-pipe-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_host-sim"))
        .args(["run", "device", "--trials", "2", "--horizon", "300", "--quiet", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // as `host-sim ... | head -0` does: the table meets a closed pipe
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success() && !stderr.contains("panicked"), "{stderr}");
    assert!(out.join("run.json").exists(), "the run still writes its files");
    let _ = std::fs::remove_dir_all(&out);
}
