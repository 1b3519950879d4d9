//! The prior of a data table (`--prior`, `ldp_learn::env::prior`): the default cannot lock a
//! learner onto the first arm it plays.
//!
//! Under CTL the learner's noise variance λ is large (here σ²_obs ≈ 800), so an arm's posterior
//! mean moves by about y/λ per report while its posterior sd shrinks by about 1/(2λ): with a
//! zero prior mean and every arm's mean far above zero, each report of the arm just played raises
//! its index above every unplayed arm's, and the learner never leaves it (measured: MoMA on a
//! table whose first column is its worst scored 1.3× uniform play's regret). The default prior
//! adds the arms' common level with a wide prior, so a report moves every arm's mean alike.

use host_sim::experiments::runner::{RunConfig, problem_from};
use ldp_core::Epsilon;
use ldp_learn::bo::ZHOU_TAN_ALGORITHMS;
use ldp_learn::env::{Prior, RewardBounds};
use ldp_learn::policy::Constants;
use nalgebra::DMatrix;

const ARMS: usize = 6;

/// The arms each seed-000 learner plays in `rounds` rounds when every report is `level` (every
/// arm alike), under `prior` made from an identity empirical covariance, at ε = 1 with R = 9.
fn arms_played(prior: Prior, level: f64, rounds: usize) -> Vec<(String, Vec<usize>)> {
    let config =
        RunConfig { epsilon: Some(Epsilon::new(1.0).unwrap()), horizon: rounds, ..RunConfig::default() };
    let bounds = RewardBounds { b: 1.0, r: Some(9.0), alpha: 1.0, v: 1.0, c: 1.0 };
    let covariance = prior.apply(&DMatrix::identity(ARMS, ARMS));
    let problem = problem_from(covariance, bounds, &config).unwrap();
    ZHOU_TAN_ALGORITHMS
        .iter()
        .map(|spec| {
            let mut policy = (spec.build)(&problem, Constants::Calibrated, 7).unwrap();
            let mut counts = vec![0; ARMS];
            for _ in 0..rounds {
                let arm = policy.select();
                counts[arm] += 1;
                policy.observe(arm, level).unwrap();
            }
            (spec.name.to_string(), counts)
        })
        .collect()
}

#[test]
fn the_default_prior_plays_every_arm_when_every_arm_reports_alike() {
    // 40 epochs of MoMA's k = 15 at T = 600: enough for every learner to visit all six arms.
    for (name, counts) in arms_played(Prior::default(), 0.8, 600) {
        assert!(counts.iter().all(|&c| c > 0), "{name} never left some arms: {counts:?}");
        let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(max - min <= 2 * 15, "{name} favoured some arms over equal ones: {counts:?}");
    }
}

#[test]
fn without_the_common_level_the_first_arm_played_locks_in() {
    // The mechanism the default prevents: K = I (no common level) keeps playing arm 0 when
    // every arm reports 0.8, far above the prior mean 0.
    let locked = arms_played(Prior::Empirical, 0.8, 600);
    assert!(
        locked.iter().any(|(_, counts)| counts[0] == 600),
        "expected a learner locked on arm 0 under K = I: {locked:?}"
    );
}

fn host_sim(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_host-sim")).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn out_dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("host-sim-prior-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn run_json(dir: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap()
}

#[test]
fn prior_is_recorded_refused_where_it_means_nothing_and_the_guard_speaks_up() {
    let d = out_dir("cli");
    std::fs::create_dir_all(&d).unwrap();
    let arms = d.join("arms.csv");
    std::fs::write(&arms, "a,b,c\n1.0,2.0,1.5\n1.2,2.2,1.4\n0.9,1.9,1.6\n1.1,2.1,1.5\n").unwrap();
    let arms = arms.to_string_lossy().into_owned();
    let small = ["--trials", "2", "--horizon", "30", "--quiet"];
    for (given, recorded) in
        [(None, "independent"), (Some("empirical"), "empirical"), (Some("shrunk"), "shrunk")]
    {
        let out = d.join(recorded);
        let mut args = vec!["run", "custom", "--arms", &arms, "--out", out.to_str().unwrap()];
        args.extend(small);
        if let Some(p) = given {
            args.extend(["--prior", p]);
        }
        let (ok, _, err) = host_sim(&args);
        assert!(ok, "{err}");
        assert_eq!(run_json(&out)["config"]["prior"], recorded);
    }
    // A synthetic experiment's prior is its kernel; with coordinates the kernel over them.
    let (ok, _, err) = host_sim(&[&["run", "fig2a", "--prior", "shrunk"][..], &small].concat());
    assert!(!ok && err.contains("--prior") && err.contains("not fig2a"), "{err}");
    let coords = d.join("coords.csv");
    std::fs::write(&coords, "0\n0.5\n1\n").unwrap();
    let args =
        ["run", "custom", "--arms", &arms, "--coords", coords.to_str().unwrap(), "--prior", "empirical"];
    let (ok, _, err) = host_sim(&[&args[..], &small].concat());
    assert!(!ok && err.contains("--coords"), "{err}");
    let out = d.join("coords-run");
    let args = [
        "run",
        "custom",
        "--arms",
        &arms,
        "--coords",
        coords.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let (ok, _, err) = host_sim(&[&args[..], &small].concat());
    assert!(ok, "{err}");
    assert!(run_json(&out)["config"].get("prior").is_none(), "the coordinates' kernel is the prior");
    let _ = std::fs::remove_dir_all(&d);
}

/// The light-sensor figure (Zhou & Tan Fig. 2b) at ε = 1: with the original authors' constants and
/// Zhou & Tan's empirical prior every GP learner is worse than uniform play (≈ 1.27×) and the run
/// says so in the table, finals.csv, run.json and one line; under the defaults none is.
#[test]
fn the_light_sensor_data_under_each_prior() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data");
    if !data.join("lightsensor_train.csv").is_file() {
        println!("skipping: the light-sensor data is not in {}", data.display());
        return;
    }
    let flagged = |prior: &str, constants: &str| {
        let out = out_dir(prior);
        let args = ["run", "fig2b", "--data", data.to_str().unwrap(), "--eps", "1", "--trials", "10"];
        let (ok, _, err) = host_sim(
            &[
                &args[..],
                &["--prior", prior, "--constants", constants, "--quiet", "--out", out.to_str().unwrap()],
            ]
            .concat(),
        );
        assert!(ok, "{err}");
        let json = run_json(&out);
        let flagged: Vec<String> = json["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["worse_than_uniform"] == true)
            .map(|r| r["label"].as_str().unwrap().to_string())
            .collect();
        let finals = std::fs::read_to_string(out.join("finals.csv")).unwrap();
        for label in &flagged {
            // Column 5 of finals.csv is worse_than_uniform.
            let worse = finals
                .lines()
                .filter(|l| l.starts_with(&format!("{label},")))
                .all(|l| l.split(',').nth(4) == Some("true"));
            assert!(finals.contains(&format!("\n{label},0,")) && worse, "{finals}");
        }
        assert_eq!(
            err.contains("warning: worse than choosing an arm at random"),
            !flagged.is_empty(),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&out);
        flagged
    };
    let gp = ["GP-UCB", "LDP-TGP-UCB", "LDP-ATA-GP-UCB", "LDP-MoMA-GP-UCB"];
    assert_eq!(flagged("empirical", "practical"), gp, "seed 000's recipe on the light data at eps = 1");
    assert_eq!(flagged("independent", "calibrated"), Vec::<String>::new());
}
