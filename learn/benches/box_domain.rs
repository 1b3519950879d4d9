//! Per-round cost of LDP-TGP-UCB on a box (issue 36): ask + a release at ε = 1 of the raw
//! reward (CTL(ε), ldp-core's mechanism) + tell, amortised over a trial of T = 1000 rounds, on
//! the unit boxes of d = 2, 6 and 10 (the default options: m = 128 features, 512 Sobol
//! candidates, 2 × 30 Nelder–Mead iterations, the kernel fitted at 16, 32, …, 512 reports).
//! A round costs the trial's time / 1000. Run with `cargo bench -p ldp-learn --bench box_domain`;
//! the example `box_rounds` runs one trial of any T for `farm-bench` (time and peak memory).
//!
//! Measured (2 cores shared with other jobs, load 3–4): a trial of T = 1000 took 1.69 s, 2.32 s
//! and 2.21 s at d = 2, 6, 10 (criterion's median); one of T = 10⁴, whole process under
//! `farm-bench` (median of 3), 10.7 s, 13.1 s and 16.5 s wall (10.5, 12.7, 14.0 s CPU), peak
//! 28.6, 31.4 and 33.5 MiB.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ldp_core::{Bound, Epsilon, LaplaceMechanism};
use ldp_learn::domain::BoxOptimizer;
use ldp_learn::env::SimRng;
use ldp_learn::optimizer::{Domain, Settings};
use rand::RngExt;
use rand_core::SeedableRng;
use std::hint::black_box;

/// One trial of `horizon` rounds on [0, 1]^d; returns the last point's first coordinate.
fn trial(d: usize, horizon: usize, seed: u64) -> f64 {
    let one = Bound::new(1.0).unwrap();
    let ctl = LaplaceMechanism::ctl(Epsilon::new(1.0).unwrap(), one, one).unwrap();
    let settings = Settings { horizon, seed, ..Settings::default() };
    let domain = Domain::Box { lower: vec![0.0; d], upper: vec![1.0; d] };
    let mut opt = BoxOptimizer::new("ldp-tgp-ucb", domain, settings).unwrap();
    let mut world = SimRng::seed_from_u64(seed);
    let mut last = 0.0;
    for _ in 0..horizon {
        let x = opt.ask();
        let f = 2.0 * (-2.0 * x.iter().map(|v| (v - 0.3) * (v - 0.3)).sum::<f64>()).exp() - 1.0;
        let reward = f + world.random_range(-1.0..=1.0);
        let report = ctl.release(reward, &mut world).unwrap().value();
        opt.tell(&x, report).unwrap();
        last = x[0];
    }
    last
}

fn rounds(c: &mut Criterion) {
    let mut group = c.benchmark_group("box_ldp_tgp_ucb_T1000");
    group.sample_size(10);
    for d in [2usize, 6, 10] {
        group.bench_with_input(BenchmarkId::from_parameter(format!("d{d}")), &d, |b, &d| {
            b.iter(|| black_box(trial(d, 1000, 1)))
        });
    }
    group.finish();
}

criterion_group!(benches, rounds);
criterion_main!(benches);
