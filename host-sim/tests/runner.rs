//! The experiment runner: thread-count independence, a seeded snapshot of a small fig2a run,
//! and basic invariants of regret curves.

use host_sim::experiments;
use host_sim::experiments::runner::{AlgorithmResult, RunConfig, run};
use host_sim::run::output::summary_table;
use ldp_learn::bo::ZHOU_TAN_ALGORITHMS;
use ldp_learn::policy::Constants;

fn small(threads: usize, epsilon: Option<f64>) -> RunConfig {
    RunConfig {
        trials: 3,
        horizon: 200,
        seed: 7,
        threads: Some(threads),
        epsilon: epsilon.map(|e| ldp_core::Epsilon::new(e).unwrap()),
        constants: Constants::Practical,
        algorithms: ZHOU_TAN_ALGORITHMS.to_vec(),
        central: false,
        // The in-process device, λ = 1, δ = 0.1, no fleet, table or prior.
        ..RunConfig::default()
    }
}

fn run_named(name: &str, config: &RunConfig) -> Vec<AlgorithmResult> {
    let exp = experiments::find(name).unwrap();
    let factory = experiments::env_factory(exp.env, None).unwrap();
    run(config, factory.as_ref(), false, None).unwrap()
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let one = run_named("fig2a", &small(1, Some(1.0)));
    let two = run_named("fig2a", &small(2, Some(1.0)));
    assert!(!one.is_empty() && one.len() == two.len(), "{} vs {} results", one.len(), two.len());
    for (a, b) in one.iter().zip(&two) {
        assert_eq!(a.label, b.label);
        assert_eq!(a.mean, b.mean, "{}", a.label);
        assert_eq!(a.std, b.std, "{}", a.label);
        assert_eq!(a.finals, b.finals, "{}", a.label);
    }
}

#[test]
fn regret_curves_are_non_decreasing_and_bounded_by_the_largest_gap() {
    // Synthetic f is normalised to max |f| = 1, so every round's regret is in [0, 2].
    let results = run_named("fig2d", &small(2, None));
    assert_eq!(results.len(), 5, "one result per seed 000 algorithm, then uniform play");
    let uniform = &results[4];
    assert!(uniform.reference && uniform.label == "uniform play");
    // Exact expected regret: linear in t, the trials' mean gap per round.
    let gap = uniform.mean[0];
    assert!(gap > 0.0);
    for (t, m) in uniform.mean.iter().enumerate() {
        assert!((m - gap * (t + 1) as f64).abs() <= 1e-9 * m.abs().max(1.0), "uniform play at round {t}");
    }
    for r in &results[..4] {
        assert_eq!(r.uniform_finals, uniform.finals, "{}", r.label);
        assert!(!r.reference);
    }
    for r in results {
        assert!(!r.mean.is_empty() && !r.finals.is_empty(), "{}: empty result", r.label);
        for t in 1..r.mean.len() {
            let step = r.mean[t] - r.mean[t - 1];
            assert!((-1e-12..=2.0 + 1e-12).contains(&step), "{} round {t}: step {step}", r.label);
        }
        assert!(r.finals.iter().all(|f| f.is_finite() && *f >= 0.0));
    }
}

/// The final-regret table of a small seeded fig2a run, pinned. Regenerate with
/// `UPDATE_SNAPSHOTS=1 cargo test -p host-sim --test tests runner::` after a deliberate change, and
/// say why in the commit.
#[test]
fn small_fig2a_regret_table_snapshot() {
    let results = run_named("fig2a", &small(2, Some(1.0)));
    let mut table = String::new();
    for r in &results {
        table.push_str(&format!("{},{:.6},{:.6}\n", r.label, r.mean[199], r.std[199]));
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots/fig2a_3x200_seed7.csv");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(path, &table).unwrap();
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    assert_eq!(table, expected, "snapshot changed:\n{}", summary_table(&results, 3));
}

/// A run stopped part-way (only some jobs recorded, and a torn last line) and started again
/// with the same settings finishes only the missing jobs and gives the same tables as an
/// uninterrupted run.
#[test]
fn an_interrupted_run_resumes_to_the_same_results() {
    use host_sim::experiments::runner::run_id;
    use host_sim::run::checkpoint::{Checkpoint, JOBS_FILE};
    let config = small(2, Some(1.0));
    let exp = experiments::find("fig3a").unwrap();
    let factory = experiments::env_factory(exp.env, None).unwrap();
    let whole = run(&config, factory.as_ref(), false, None).unwrap();

    let dir = std::env::temp_dir().join(format!("host-sim-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let id = run_id("fig3a", "test", &config);
    let checkpoint = Checkpoint::open(&dir, &id, config.horizon).unwrap();
    let first = run(&config, factory.as_ref(), false, Some(&checkpoint)).unwrap();
    assert_eq!(
        first.iter().map(|r| &r.mean).collect::<Vec<_>>(),
        whole.iter().map(|r| &r.mean).collect::<Vec<_>>()
    );
    drop(checkpoint);
    // Simulate a kill: keep 5 of the 12 job lines and half of a sixth.
    let path = dir.join(JOBS_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 12);
    let mut cut = lines[..5].join("\n");
    cut.push('\n');
    cut.push_str(&lines[5][..lines[5].len() / 2]);
    std::fs::write(&path, cut).unwrap();

    let checkpoint = Checkpoint::open(&dir, &id, config.horizon).unwrap();
    assert_eq!(checkpoint.finished(), 5);
    let resumed = run(&config, factory.as_ref(), false, Some(&checkpoint)).unwrap();
    for (a, b) in resumed.iter().zip(&whole) {
        assert_eq!(a.mean, b.mean, "{}", a.label);
        assert_eq!(a.std, b.std, "{}", a.label);
        assert_eq!(a.finals, b.finals, "{}", a.label);
    }
    // Other settings in the same directory are refused.
    let other = RunConfig { seed: 8, ..config.clone() };
    assert!(Checkpoint::open(&dir, &run_id("fig3a", "test", &other), other.horizon).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
