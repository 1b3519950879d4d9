//! Per-round costs of the learner: the exact posterior's rank-one update over |D| arms
//! (O(|D|²)), and one trial of each seed-000 algorithm at T = 1000 and T = 10⁴ with the
//! default (calibrated) constants on fig2a's environment (a synthetic Matérn function), driven
//! by ask/tell with `ldp-core`'s reporter releasing every reward at ε = 1 (the work of
//! host-sim's in-process device). Run with `cargo bench -p ldp-learn --bench gp`.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use ldp_learn::bo::ZHOU_TAN_ALGORITHMS;
use ldp_learn::env::{Environment, Noise, SimRng, SyntheticKernel, SyntheticRkhs};
use ldp_learn::gp::{FinitePosterior, SquaredExponential};
use ldp_learn::optimizer::{Domain, Optimizer, Settings};
use rand_core::SeedableRng;
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

/// One trial: `horizon` rounds of ask, a release at ε = 1 of the arm's raw reward, tell.
fn trial(env: &SyntheticRkhs, spec: ldp_learn::policy::AlgorithmSpec, horizon: usize) -> usize {
    let bounds = env.bounds();
    let settings =
        Settings { noise_bound: bounds.r.unwrap_or(1.0), bound: bounds.b, horizon, ..Settings::default() };
    let domain = Domain::Covariance(env.prior_covariance().clone());
    let mut opt = Optimizer::with_spec(spec, domain, settings).unwrap();
    let eps = Epsilon::new(1.0).unwrap();
    let (b, r) = (Bound::new(settings.bound).unwrap(), Bound::new(settings.noise_bound).unwrap());
    let total = Epsilon::new(horizon as f64).unwrap();
    let config = DeviceConfig { b, r, policy: BudgetPolicy::new(eps, total).unwrap() };
    let mut device = Reporter::open(config, MemoryStore::provisioned([3; 32]), [4; 32]).unwrap();
    let mut world = SimRng::seed_from_u64(1);
    for _ in 0..horizon {
        let arm = opt.ask();
        let report = device.report(env.sample(arm, &mut world), eps, None).unwrap();
        opt.tell(arm, report.release.value()).unwrap();
    }
    opt.recommend()
}

fn trials(c: &mut Criterion) {
    let noise = Noise::PAPER_LDP.validate().unwrap();
    let env =
        SyntheticRkhs::new(SyntheticKernel::PAPER_MATERN, noise, &mut SimRng::seed_from_u64(1)).unwrap();
    for horizon in [1000, 10_000] {
        let mut group = c.benchmark_group(format!("fig2a_trial_T{horizon}"));
        group.sample_size(10);
        for algo in ZHOU_TAN_ALGORITHMS {
            group.bench_function(algo.private_name, |b| b.iter(|| trial(&env, algo, horizon)));
        }
        group.finish();
    }
}

criterion_group!(benches, posterior_update, trials);
criterion_main!(benches);
