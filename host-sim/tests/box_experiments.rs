//! The box experiments (#36) end to end, small: uniform random search's row is exactly
//! T·(f* − E reward) with E reward the function's own (checked against plain Monte Carlo),
//! every trial's regret is non-decreasing, a run's files are the same bytes on 1 and 2 threads,
//! and `--eps none` runs them non-private while a private finite-set experiment still refuses it.

use std::path::Path;

use host_sim::experiments;
use host_sim::experiments::boxes::BOX_EXPERIMENTS;
use host_sim::experiments::runner::{AlgorithmResult, RunConfig, UNIFORM_LABEL};
use host_sim::run::executor::Executor;
use host_sim::run::request::{RequestError, RunRequest, settle};
use ldp_core::Epsilon;
use ldp_learn::domain::functions::TestFunction;
use ldp_learn::env::SimRng;
use rand::RngExt;
use rand_core::SeedableRng;

use crate::common;

fn config(name: &str, trials: usize, horizon: usize, threads: usize) -> RunConfig {
    let e = experiments::find(name).unwrap();
    RunConfig { trials, horizon, threads: Some(threads), seed: 36, ..e.default_config() }
}

fn run(name: &str, config: &RunConfig) -> Vec<AlgorithmResult> {
    let e = experiments::find(name).unwrap();
    let task = experiments::task(e, e.env, config, None).unwrap();
    Executor::new(config).results(task.as_ref()).unwrap()
}

/// The bytes of the files a run writes, except `run.json`'s wall-clock seconds and thread count.
fn files(dir: &Path, config: &RunConfig, results: &[AlgorithmResult]) -> Vec<(String, Vec<u8>)> {
    common::run_files(dir, config, results, &["seconds", "threads"])
}

#[test]
fn the_uniform_row_is_t_times_the_gap_to_the_mean_reward() {
    let (trials, horizon) = (2, 40);
    let results = run("box-branin", &config("box-branin", trials, horizon, 2));
    let labels: Vec<&str> = results.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["GP-UCB", "LDP-TGP-UCB", "LDP-MoMA-GP-UCB", UNIFORM_LABEL]);

    let f = TestFunction::Branin;
    let gap = f.best_reward() - f.mean_reward();
    let uniform = &results[3];
    assert!(uniform.reference);
    for (t, m) in uniform.mean.iter().enumerate() {
        assert!((m - (t + 1) as f64 * gap).abs() <= 1e-12 * horizon as f64, "round {t}: {m}");
    }
    assert_eq!(uniform.finals, vec![uniform.mean[horizon - 1]; trials]);
    // E reward is Branin's: plain Monte Carlo over 2·10⁵ uniform points agrees within 4 s.e.
    let mut rng = SimRng::seed_from_u64(1);
    let n = 200_000;
    let (mut sum, mut squares) = (0.0, 0.0);
    for _ in 0..n {
        let r = f.reward(&[-5.0 + 15.0 * rng.random::<f64>(), 15.0 * rng.random::<f64>()]);
        sum += r;
        squares += r * r;
    }
    let mean = sum / n as f64;
    let se = ((squares / n as f64 - mean * mean) / n as f64).sqrt();
    assert!((f.mean_reward() - mean).abs() < 4.0 * se, "{} vs {mean} ± {se}", f.mean_reward());
    // Every learner's row is compared with it, and carries f*, E reward and the simple regret.
    for r in &results[..3] {
        assert_eq!(r.uniform_finals, uniform.finals);
        let constant = |k: &str| r.constants.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        assert_eq!(constant("f_star"), Some(f.best_reward()));
        assert_eq!(constant("mean_reward_uniform"), Some(f.mean_reward()));
        assert_eq!(constant("simple_regret_trials"), Some(trials as f64));
        let simple = constant("simple_regret_mean").unwrap();
        assert!((0.0..=2.0).contains(&simple), "{}: simple regret {simple}", r.label);
    }
}

#[test]
fn every_trials_regret_is_non_decreasing_on_every_box() {
    for e in &BOX_EXPERIMENTS {
        let config = config(e.name, 2, 30, 2);
        let task = experiments::task(e, e.env, &config, None).unwrap();
        for trial in 0..2 {
            for learner in 0..task.labels().len() {
                let curve = task.job(trial, learner).unwrap();
                assert_eq!(curve.len(), 30);
                assert!(curve[0] >= 0.0, "{} trial {trial}: {}", e.name, curve[0]);
                assert!(curve.windows(2).all(|w| w[1] >= w[0]), "{} trial {trial} learner {learner}", e.name);
            }
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes_on_one_and_two_threads() {
    for name in ["box-hartmann3", "box-branin"] {
        let one = config(name, 2, 40, 1);
        let two = RunConfig { threads: Some(2), ..one.clone() };
        let (a, b) = (run(name, &one), run(name, &two));
        let (x, y) = (
            files(&common::dir("box", &format!("{name}-1")), &one, &a),
            files(&common::dir("box", &format!("{name}-2")), &two, &b),
        );
        for ((file, p), (_, q)) in x.iter().zip(&y) {
            assert!(p == q, "{name}: {file} differs between 1 and 2 threads");
        }
        for threads in ["1", "2"] {
            let _ = std::fs::remove_dir_all(common::dir("box", &format!("{name}-{threads}")));
        }
        // Another seed is another run.
        let other = run(name, &RunConfig { seed: 37, ..one.clone() });
        assert_ne!(other[0].finals, a[0].finals);
    }
}

#[test]
fn eps_none_runs_a_box_non_private_and_a_finite_set_experiment_still_refuses_it() {
    let branin = experiments::find("box-branin").unwrap();
    let settled =
        settle(RunRequest { trials: Some(1), horizon: Some(30), ..RunRequest::new(branin) }).unwrap();
    assert_eq!(settled.config.epsilon, None);
    assert!(settled.title.contains("non-private"), "{}", settled.title);
    let results = run("box-branin", &settled.config);
    assert_eq!(results[1].label, "TGP-UCB");
    assert_eq!(results[2].label, "MoMA-GP-UCB");
    let private = settle(RunRequest { epsilon: Epsilon::new(0.5).ok(), ..RunRequest::new(branin) }).unwrap();
    assert!(private.title.ends_with("(eps = 0.5)"), "{}", private.title);
    let fig2a = experiments::find("fig2a").unwrap();
    assert_eq!(settle(RunRequest::new(fig2a)).err(), Some(RequestError::EpsNone("fig2a")));
}

/// `--batch q` on a box: q = 1 is the sequential run's curve to the bit, q = 8 another run
/// whose regret is still counted a report at a time (T entries, non-decreasing), the same on 1
/// and 2 threads.
#[test]
fn a_box_experiment_runs_in_batches() {
    let name = "box-branin";
    let one = config(name, 2, 40, 1);
    let e = experiments::find(name).unwrap();
    let curves = |config: &RunConfig| {
        let task = experiments::task(e, e.env, config, None).unwrap();
        (0..3).map(|learner| task.job(1, learner).unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(curves(&one), curves(&RunConfig { batch: 1, ..one.clone() }));
    let batch = RunConfig { batch: 8, ..one.clone() };
    let batched = curves(&batch);
    assert_ne!(batched, curves(&one));
    for curve in &batched {
        assert_eq!(curve.len(), 40);
        assert!(curve.windows(2).all(|w| w[1] >= w[0]));
    }
    assert_eq!(batched, curves(&RunConfig { threads: Some(2), ..batch }));
}

/// The simple regret of every trial survives a resume and a merge of shards: each job's line in
/// the checkpoint keeps it (as its note), so a run that computed some trials before it was
/// stopped, or none of them itself (`merge`), reports the same mean over all of them as an
/// uninterrupted run.
#[test]
fn the_simple_regret_of_every_trial_survives_a_resume_and_a_merge() {
    use host_sim::run::checkpoint::{Checkpoint, JOBS_FILE};
    use host_sim::run::executor::Shard;
    let name = "box-branin";
    let config = config(name, 3, 40, 2);
    let e = experiments::find(name).unwrap();
    let task = || experiments::task(e, e.env, &config, None).unwrap();
    let simple = |results: &[AlgorithmResult]| -> Vec<(Option<f64>, Option<f64>)> {
        let constant =
            |r: &AlgorithmResult, key: &str| r.constants.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
        results
            .iter()
            .filter(|r| r.label != UNIFORM_LABEL)
            .map(|r| (constant(r, "simple_regret_mean"), constant(r, "simple_regret_trials")))
            .collect()
    };
    let whole = simple(&Executor::new(&config).results(task().as_ref()).unwrap());
    assert_eq!(whole.len(), 3);
    assert!(whole.iter().all(|(m, n)| m.is_some() && *n == Some(3.0)), "{whole:?}");

    // Stopped after two of its nine jobs, then resumed by a new process (a new task).
    let dir = std::env::temp_dir().join(format!("box-simple-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    {
        let checkpoint = Checkpoint::open(&dir, "box", 40).unwrap();
        Executor::new(&config).checkpoint(&checkpoint).results(task().as_ref()).unwrap();
    }
    let jobs = std::fs::read_to_string(dir.join(JOBS_FILE)).unwrap();
    assert!(jobs.lines().all(|l| l.contains("\"note\":")), "every box job keeps its simple regret");
    let kept: String = jobs.lines().take(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join(JOBS_FILE), kept).unwrap();
    let resumed = {
        let checkpoint = Checkpoint::open(&dir, "box", 40).unwrap();
        assert_eq!(checkpoint.finished(), 2);
        simple(&Executor::new(&config).checkpoint(&checkpoint).results(task().as_ref()).unwrap())
    };
    assert_eq!(resumed, whole);

    // Two shards, merged by a process that computes nothing.
    let shards: Vec<std::path::PathBuf> = (0..2).map(|i| dir.join(format!("shard{i}"))).collect();
    for (index, shard) in shards.iter().enumerate() {
        std::fs::create_dir_all(shard).unwrap();
        let checkpoint = Checkpoint::open(shard, "box", 40).unwrap();
        let _ = Executor::new(&config)
            .checkpoint(&checkpoint)
            .shard(Shard { index, count: 2 })
            .run(task().as_ref())
            .unwrap();
    }
    let merged_dir = dir.join("merged");
    std::fs::create_dir_all(&merged_dir).unwrap();
    let mut checkpoint = Checkpoint::open(&merged_dir, "box", 40).unwrap();
    for shard in &shards {
        checkpoint.absorb(shard).unwrap();
    }
    let merged = simple(
        &Executor::new(&config)
            .checkpoint(&checkpoint)
            .from_checkpoint_only()
            .results(task().as_ref())
            .unwrap(),
    );
    assert_eq!(merged, whole);
    drop(checkpoint);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--beta-scale s` reaches the box learners: κ is BOX_KAPPA · s (MoMA's BOX_MOMA_KAPPA · s) in
/// `run.json`'s constants, and the learners play differently.
#[test]
fn beta_scale_multiplies_a_box_learners_kappa() {
    use ldp_learn::domain::{BOX_KAPPA, BOX_MOMA_KAPPA};
    let plain = config("box-hartmann3", 1, 60, 1);
    let scaled = RunConfig { beta_scale: 4.0, ..plain.clone() };
    let kappa = |results: &[AlgorithmResult]| -> Vec<Option<f64>> {
        let kappa = |r: &AlgorithmResult| r.constants.iter().find(|(k, _)| k == "kappa").map(|(_, v)| *v);
        results.iter().filter(|r| r.label != UNIFORM_LABEL).map(kappa).collect()
    };
    let (a, b) = (run("box-hartmann3", &plain), run("box-hartmann3", &scaled));
    assert_eq!(kappa(&a), [BOX_KAPPA, BOX_KAPPA, BOX_MOMA_KAPPA].map(Some));
    assert_eq!(kappa(&b), [BOX_KAPPA, BOX_KAPPA, BOX_MOMA_KAPPA].map(|k| Some(4.0 * k)));
    assert_ne!(a[0].finals, b[0].finals);
}
