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
        &["run", "fig2b", "--data", "/nonexistent/data", "--out", &out],
        &["run", "fig2b", "--data", "/nonexistent/dir", "--out", &out],
        &["run", "fig2a", "--trials", "0", "--out", &out],
        &["run", "fig2a", "--config", "/nonexistent/cfg.toml"],
        &["privatise", "--eps", "nan"],
        &["run", "fig2d", "--noise", "cauchy", "--out", &out],
        &["run", "fig2b", "--noise", "pareto", "--out", &out],
        &["run", "fig2a", "--noise", "student-t", "--out", &out],
        &["run", "fig2a", "--beta-scale", "-1", "--out", &out],
        &["run", "fig2a", "--batch", "0", "--out", &out],
        &["run", "tao-s1", "--batch", "4", "--out", &out], // a sweep asks one action at a time
        &["run", "fig2a", "--in-flight", "0", "--out", &out],
        &["run", "fig2a", "--batch", "2", "--in-flight", "2", "--out", &out],
        &["run", "box-branin", "--in-flight", "4", "--out", &out],
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
        &["reproduce", "--quick", "--decide-budget=-1", "--out", &out],
        &["reproduce", "--quick", "--decide-budget", "inf", "--out", &out],
    ];
    for args in cases {
        let (ok, _, err) = host_sim(args);
        assert!(!ok, "{args:?} succeeded");
        assert!(err.starts_with("error:"), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// `live` offers every learner of ask/tell (`ldp_learn::optimizer::learners`), LDP-UCB among
/// them: an unknown name is answered with all of them, before any device is started.
#[test]
fn live_offers_every_learner_of_ask_tell() {
    let out = std::env::temp_dir().join(format!("host-sim-cli-live-{}", std::process::id()));
    let out = out.to_string_lossy();
    let (ok, _, err) =
        host_sim(&["live", "--device", "qemu", "--actions", "5", "--learner", "nope", "--out", &out]);
    assert!(!ok);
    for spec in ldp_learn::optimizer::learners() {
        assert!(err.contains(spec.label(true)), "{}: {err}", spec.label(true));
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
    assert_eq!(partials(&dir), Vec::<String>::new(), "a failed write left its partial file");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The partial files in `dir` (a write that failed or was cut short).
fn partials(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(".partial"))
        .collect()
}

/// Whether `stderr` ends with one line of error (after the run's announcement, if any).
fn one_error(stderr: &str) -> bool {
    let lines: Vec<&str> = stderr.trim_end().lines().collect();
    lines.last().is_some_and(|l| l.starts_with("error: "))
        && lines.iter().filter(|l| l.contains("error")).count() == 1
}

/// A scratch directory with a small arms file for `run custom`.
fn custom_scratch(tag: &str) -> (std::path::PathBuf, String) {
    let base = std::env::temp_dir().join(format!("host-sim-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let arms = base.join("arms.csv");
    std::fs::write(
        &arms,
        "Date,north,south,east\nd1,1.0,2.0,0.5\nd2,,4.0,0.7\nd3,2.5,3.0,0.9\nd4,1.5,,0.4\n",
    )
    .unwrap();
    (base, arms.to_string_lossy().into_owned())
}

/// `run custom` of seed `seed` into `out`, as the reproduction ran it.
fn custom_args(arms: &str, seed: u64, out: &std::path::Path) -> Vec<String> {
    let out = out.to_string_lossy();
    format!("run custom --arms {arms} --trials 2 --horizon 1000 --quiet --seed {seed} --out {out}")
        .split(' ')
        .map(String::from)
        .collect()
}

/// Two runs of other seeds started together into one --out: one writes, the other is refused
/// (its directory is in use, or holds the other's results), and the files are the winner's
/// alone. Without a lock both used to pass the settings check before either wrote a job, and
/// finished with exit 0 and each other's results mixed.
#[test]
fn two_runs_into_one_out_never_mix() {
    let (base, arms) = custom_scratch("race");
    let reference = |seed: u64| {
        let dir = base.join(format!("alone{seed}"));
        let args = custom_args(&arms, seed, &dir);
        let (ok, _, err) = host_sim(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(ok, "{err}");
        ["regret.csv", "finals.csv"].map(|f| std::fs::read_to_string(dir.join(f)).unwrap())
    };
    let alone = [reference(1), reference(2)];
    let (mut busy, mut other) = (0, 0);
    for attempt in 0..20 {
        let out = base.join(format!("cc{attempt}"));
        let children: Vec<_> = [1, 2]
            .map(|seed| {
                Command::new(env!("CARGO_BIN_EXE_host-sim"))
                    .args(custom_args(&arms, seed, &out))
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .into_iter()
            .collect();
        let ended: Vec<_> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
        let won: Vec<usize> = (0..2).filter(|&i| ended[i].status.success()).collect();
        assert_eq!(won.len(), 1, "attempt {attempt}: {} of the two runs into one --out succeeded", won.len());
        let (winner, loser) = (won[0], 1 - won[0]);
        let err = String::from_utf8_lossy(&ended[loser].stderr);
        assert!(one_error(&err), "{err}");
        if err.contains("is being written by another host-sim run") {
            busy += 1;
        } else if err.contains("holds results of other settings") {
            other += 1;
        } else {
            panic!("attempt {attempt}: the refused run says {err}");
        }
        let json = std::fs::read_to_string(out.join("run.json")).unwrap();
        assert!(json.contains(&format!("\"seed\": {}", winner + 1)), "attempt {attempt}");
        for (f, expected) in ["regret.csv", "finals.csv"].iter().zip(&alone[winner]) {
            assert!(
                std::fs::read_to_string(out.join(f)).unwrap() == *expected,
                "attempt {attempt}: {f} mixed"
            );
        }
        let jobs = std::fs::read_to_string(out.join("jobs.jsonl")).unwrap();
        assert_eq!(jobs.lines().count(), 10, "attempt {attempt}: jobs of both runs in one checkpoint");
    }
    eprintln!(
        "of 20 attempts, the second run was refused as busy {busy} times, as other settings {other} times"
    );
    let _ = std::fs::remove_dir_all(&base);
}

/// While a directory is held (here by this test), every command that writes into it is refused
/// at once with the holder's process id, and writes nothing there.
#[test]
fn a_held_output_directory_refuses_every_writer() {
    let (base, arms) = custom_scratch("held");
    let (shard, held) = (base.join("shard"), base.join("held"));
    let args = |extra: &[&str], out: &std::path::Path| {
        let mut a = custom_args(&arms, 1, out);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |a: Vec<String>| host_sim(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let (ok, _, err) = run(args(&["--shard", "0/2"], &shard));
    assert!(ok, "{err}");
    let lock = host_sim::run::checkpoint::OutLock::acquire(&held).unwrap();
    let holder = format!("is being written by another host-sim run (process {})", std::process::id());
    let (shard, held_s) = (shard.to_string_lossy().into_owned(), held.to_string_lossy().into_owned());
    for (what, result) in [
        ("run", run(args(&[], &held))),
        ("a shard", run(args(&["--shard", "1/2"], &held))),
        ("merge", host_sim(&["merge", &shard, "--out", &held_s])),
        ("plot", host_sim(&["plot", &held_s])),
        ("a sweep", run(args(&["--eps", "0.5,1"], &held))),
    ] {
        let (ok, _, err) = result;
        assert!(!ok && err.contains(&holder) && one_error(&err), "{what}: {err}");
    }
    let mut left: Vec<String> =
        std::fs::read_dir(&held).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    left.sort();
    assert_eq!(left, ["run.lock"], "a refused run wrote into the held directory");
    drop(lock);
    let (ok, _, err) = run(args(&[], &held));
    assert!(ok, "once released: {err}");
    let _ = std::fs::remove_dir_all(&base);
}

/// A shard whose last checkpoint line was cut in half (a kill mid-write) resumes, and the merge
/// finds every job: the record appended on resuming used to be glued to the torn line, where
/// no later reading found it ("7 of 15 jobs done", then the merge said a job is in no shard).
#[test]
fn a_torn_shard_line_resumes_and_merges_to_the_whole_run() {
    let base = std::env::temp_dir().join(format!("host-sim-torn-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let dir = |name: &str| base.join(name).to_string_lossy().into_owned();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "fig3a", "--trials", "3", "--horizon", "80", "--quiet"];
        args.extend(extra);
        let (ok, _, err) = host_sim(&args);
        assert!(ok, "{extra:?}: {err}");
        err
    };
    run(&["--out", &dir("whole")]);
    run(&["--shard", "0/2", "--out", &dir("s0")]);
    run(&["--shard", "1/2", "--out", &dir("s1")]);
    let jobs = base.join("s0").join("jobs.jsonl");
    let text = std::fs::read_to_string(&jobs).unwrap();
    let last = text.trim_end().rfind('\n').unwrap() + 1;
    let cut = last + (text.len() - last) / 2;
    std::fs::write(&jobs, &text[..cut]).unwrap();
    let err = run(&["--shard", "0/2", "--out", &dir("s0")]);
    assert!(err.contains("resuming: 7 finished"), "{err}");
    let (ok, _, err) = host_sim(&["merge", &dir("s0"), &dir("s1"), "--out", &dir("merged")]);
    assert!(ok, "{err}");
    for file in ["regret.csv", "finals.csv"] {
        let read = |d: &str| std::fs::read_to_string(base.join(d).join(file)).unwrap();
        assert!(read("whole") == read("merged"), "{file} differs after the torn line");
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// A write that fails part-way (the file size limit stands in for a full disk: the same write
/// error, part of the bytes written) leaves no partial file and no torn checkpoint line.
#[test]
fn a_write_that_fails_part_way_leaves_no_partial_file_and_no_torn_line() {
    let (base, arms) = custom_scratch("full");
    // kibibytes: the checkpoint (3 KB) fits and regret.csv (39 KB) does not; then neither does
    // the checkpoint.
    for (limit, failing) in [(16, "regret.csv"), (2, "jobs.jsonl")] {
        let out = base.join(format!("limit{limit}"));
        let args = custom_args(&arms, 1, &out).join(" ").replace("--horizon 1000", "--horizon 200");
        let script =
            format!("trap '' XFSZ; ulimit -f {limit}; exec '{}' {args}", env!("CARGO_BIN_EXE_host-sim"));
        let done = Command::new("bash").arg("-c").arg(&script).output().unwrap();
        let err = String::from_utf8_lossy(&done.stderr);
        assert!(!done.status.success() && err.contains(failing) && one_error(&err), "limit {limit}: {err}");
        assert_eq!(partials(&out), Vec::<String>::new(), "limit {limit}: {err}");
        assert!(!out.join("run.json").exists());
        let jobs = std::fs::read(out.join("jobs.jsonl")).unwrap();
        assert!(jobs.is_empty() || jobs.ends_with(b"\n"), "limit {limit}: a torn checkpoint line");
    }
    let _ = std::fs::remove_dir_all(&base);
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
