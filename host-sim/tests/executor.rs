//! The one executor, for every family of experiments (the bandit loop, Tao et al.'s sweeps, the
//! experts, Dubey's variants): a run killed part-way resumes to the same files, and a run
//! split into shards merges to the same files, byte for byte, as one uninterrupted run.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use host_sim::experiments;
use host_sim::experiments::runner::{AlgorithmResult, RunConfig, RunError, run_id};
use host_sim::run::checkpoint::{Checkpoint, Steps};
use host_sim::run::executor::{Executor, Job, Observer, Outcome, Shard, Task};

use crate::common;

/// One experiment of each family, small.
const FAMILIES: [(&str, usize, usize); 4] =
    [("fig3a", 3, 120), ("tao-s2", 3, 400), ("agarwal-experts", 3, 150), ("dubey-alpha", 2, 60)];

/// One experiment of [`FAMILIES`], small: its config, task and run id, its results run whole, and
/// its number of jobs.
fn setup(
    name: &str,
    trials: usize,
    horizon: usize,
) -> (RunConfig, Box<dyn Task>, String, Vec<AlgorithmResult>, usize) {
    let e = experiments::find(name).unwrap();
    let mut config = e.default_config();
    config.trials = trials;
    config.horizon = horizon;
    config.threads = Some(2);
    config.seed = 11;
    let task = experiments::task(e, e.env, &config, None).unwrap();
    let id = run_id(name, "test", &config);
    let whole = Executor::new(&config).results(task.as_ref()).unwrap();
    let jobs = trials * task.labels().len();
    (config, task, id, whole, jobs)
}

/// The files written into `dir`'s two subdirectories from their results (each a name and
/// results) are the same bytes, except `run.json`'s wall-clock seconds.
fn assert_same(
    name: &str,
    what: &str,
    config: &RunConfig,
    dir: &Path,
    runs: [(&str, &[AlgorithmResult]); 2],
) {
    let [a, b] = runs.map(|(sub, results)| common::run_files(&dir.join(sub), config, results, &["seconds"]));
    for ((file, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name}: {file} differs {what}");
    }
}

/// Stops the run (as a kill would) once `after` jobs have ended.
struct Kill {
    after: usize,
    ended: AtomicUsize,
}

impl Observer for Kill {
    fn job_done(&self, _: Job, _: &Steps, _: f64, _: Option<f64>) -> Result<(), RunError> {
        if self.ended.fetch_add(1, Ordering::SeqCst) + 1 >= self.after {
            return Err(RunError::Learner { label: "the test".into(), source: "killed".into() });
        }
        Ok(())
    }
}

#[test]
fn every_family_resumes_after_a_kill_to_the_same_files() {
    for (name, trials, horizon) in FAMILIES {
        let (config, task, id, whole, jobs) = setup(name, trials, horizon);

        let dir = common::dir("executor", &format!("kill-{name}"));
        let kill = Kill { after: jobs / 3, ended: AtomicUsize::new(0) };
        let checkpoint = Checkpoint::open(&dir, &id, horizon).unwrap();
        let killed = Executor::new(&config).checkpoint(&checkpoint).observe(&kill).run(task.as_ref());
        assert!(killed.is_err(), "{name}: the kill did not stop the run");
        drop(checkpoint);
        let checkpoint = Checkpoint::open(&dir, &id, horizon).unwrap();
        let kept = checkpoint.finished();
        assert!(kept >= jobs / 3 && kept < jobs, "{name}: {kept} of {jobs} jobs on disk after the kill");

        let resumed = Executor::new(&config).checkpoint(&checkpoint).results(task.as_ref()).unwrap();
        assert_same(name, "after resuming", &config, &dir, [("whole", &whole), ("resumed", &resumed)]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn every_family_split_into_three_shards_merges_to_the_same_files() {
    for (name, trials, horizon) in FAMILIES {
        let (config, task, id, whole, total) = setup(name, trials, horizon);
        let base = common::dir("executor", &format!("shard-{name}"));
        let mut dirs = Vec::new();
        let mut owned = 0;
        for index in 0..3 {
            let dir = base.join(format!("shard{index}"));
            let checkpoint = Checkpoint::open(&dir, &id, horizon).unwrap();
            assert_eq!(checkpoint.finished(), 0, "{name}: a new shard starts empty");
            match Executor::new(&config)
                .checkpoint(&checkpoint)
                .shard(Shard { index, count: 3 })
                .run(task.as_ref())
            {
                Ok(Outcome::Shard { jobs, total: t }) => {
                    assert_eq!(t, total, "{name}");
                    owned += jobs;
                }
                other => panic!("{name}: shard {index} ended with {other:?}"),
            }
            dirs.push(dir);
        }
        assert_eq!(owned, total, "{name}: the shards cover every job exactly once");

        // Two of three shards are not enough.
        let mut partial = Checkpoint::open(&base.join("partial"), &id, horizon).unwrap();
        for dir in &dirs[..2] {
            partial.absorb(dir).unwrap();
        }
        let refused = Executor::new(&config).checkpoint(&partial).from_checkpoint_only().run(task.as_ref());
        assert!(matches!(refused, Err(RunError::Incomplete { .. })), "{name}: merged a missing shard");

        let mut merged = Checkpoint::open(&base.join("merged"), &id, horizon).unwrap();
        let absorbed: usize = dirs.iter().map(|d| merged.absorb(d).unwrap()).sum();
        assert_eq!(absorbed, total, "{name}");
        let results =
            Executor::new(&config).checkpoint(&merged).from_checkpoint_only().results(task.as_ref()).unwrap();
        assert_same(name, "after merging", &config, &base, [("whole", &whole), ("out", &results)]);
        let _ = std::fs::remove_dir_all(&base);
    }
}

#[test]
fn a_curve_is_stored_bit_for_bit_and_compactly() {
    // Exact replays, values that adding does not rebuild, signed zeros, a long constant run, and
    // a step and a later absolute value whose bits differ only in bit 31 (the round's flag bit).
    let near_one = f64::from_bits(1f64.to_bits() ^ (1 << 31));
    let mut curve =
        vec![near_one, 1e300, 1.0, 0.0, -0.0, 0.1, 0.30000000000000004, 1e300, 1e300 + 1e284, 3.0];
    let mut total = 3.0;
    for t in 0..100_000 {
        total += [0.25, 0.0, 0.7][t % 3];
        curve.push(total);
    }
    let steps = Steps::encode(&curve).unwrap();
    let back = steps.decode(curve.len()).unwrap();
    assert_eq!(steps.decode(curve.len() - 1), Err(host_sim::run::checkpoint::StepsError::TooLong));
    assert_eq!(back.len(), curve.len());
    for (a, b) in curve.iter().zip(&back) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
    let line = serde_json::to_string(&steps).unwrap();
    assert!(line.len() < 4000, "a periodic 10^5-round curve takes {} bytes", line.len());
}
