//! Seconds per trial of seed 003's learners on the §6.1 environment at T = 1024 (F = 144: the
//! `dubey-alpha` / `dubey-local` setting): non-private, JDP (the tree closes one node of
//! 145·146/2 = 10 585 discrete-Gaussian entries per round) and local JDP (the device adds
//! 144·145/2 + 144 = 10 584 entries per round). Run with `cargo bench -p host-sim --bench dubey`.

use criterion::{Criterion, criterion_group, criterion_main};
use host_sim::dubey::{EnvChoice, Privacy, Variant, Variants};
use host_sim::executor::Task;
use host_sim::settings::RunConfig;

fn trials(c: &mut Criterion) {
    let config = RunConfig { trials: 1, horizon: 1024, threads: Some(1), ..RunConfig::default() };
    let variants = vec![
        Variant { label: "non-private".into(), env: EnvChoice::Rkhs, privacy: Privacy::NonPrivate },
        Variant {
            label: "JDP alpha=1".into(),
            env: EnvChoice::Rkhs,
            privacy: Privacy::Jdp { epsilon: 1.0, delta: 0.1 },
        },
        Variant {
            label: "local-JDP alpha=1".into(),
            env: EnvChoice::Rkhs,
            privacy: Privacy::LocalJdp { epsilon: 1.0, delta: 0.1 },
        },
    ];
    let task = Variants::new(&config, variants).expect("the §6.1 task");
    let mut group = c.benchmark_group("dubey_trial_T1024");
    group.sample_size(10);
    for (v, label) in task.labels().iter().enumerate() {
        group.bench_function(label.as_str(), |b| b.iter(|| task.job(0, v).expect("one trial")));
    }
    group.finish();
}

criterion_group!(benches, trials);
criterion_main!(benches);
