//! Per-round costs of the learner: the exact posterior's rank-one update over |D| arms
//! (O(|D|²)), a full GP-UCB round, and one trial of each seed-000 algorithm at T = 1000 and
//! T = 10⁴ with the default (calibrated) constants.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use host_sim::bo::SEED000_ALGORITHMS;
use host_sim::bo::gp_ucb::Constants;
use host_sim::experiments;
use host_sim::gp::{FinitePosterior, SquaredExponential};
use host_sim::runner::{DeviceKind, RunConfig, run_trial};
use std::hint::black_box;

fn posterior_update(c: &mut Criterion) {
    let mut group = c.benchmark_group("posterior_observe");
    for n in [100usize, 400, 1000] {
        let points: Vec<Vec<f64>> = (0..n).map(|i| vec![i as f64 / (n - 1) as f64]).collect();
        let kernel = SquaredExponential::new(0.2).unwrap();
        let fresh = FinitePosterior::from_kernel(&kernel, &points, 1.0).unwrap();
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            let mut post = fresh.clone();
            let mut i = 0;
            b.iter(|| {
                i = (i + 37) % n;
                post.observe(black_box(i), 0.5).unwrap();
            })
        });
    }
    group.finish();
}

fn trials(c: &mut Criterion) {
    let exp = experiments::find("fig2a").unwrap();
    let factory = experiments::env_factory(exp.env, None).unwrap();
    let env = factory(1).unwrap();
    for horizon in [1000, 10_000] {
        let config = RunConfig {
            trials: 1,
            horizon,
            seed: 0,
            threads: Some(1),
            epsilon: Some(ldp_core::Epsilon::new(1.0).expect("eps")),
            central: false,
            lambda: 1.0,
            delta: 0.1,
            beta_scale: 1.0,
            constants: Constants::Calibrated,
            algorithms: SEED000_ALGORITHMS.to_vec(),
            device: DeviceKind::InProcess,
            select: Vec::new(),
            fleet: None,
            problem: None,
            feed: false,
            prior: None,
            device_ledger_dir: None,
        };
        let mut group = c.benchmark_group(format!("fig2a_trial_T{horizon}"));
        group.sample_size(10);
        for (i, algo) in SEED000_ALGORITHMS.iter().enumerate() {
            group.bench_function(algo.private_name, |b| {
                b.iter(|| run_trial(env.as_ref(), algo, &config, 1, i as u64).unwrap())
            });
        }
        group.finish();
    }
}

criterion_group!(benches, posterior_update, trials);
criterion_main!(benches);
