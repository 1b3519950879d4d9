//! Seconds per trial of Dubey's learners on the §6.1 environment at T = 1024 (F = 144: the
//! `dubey-alpha` / `dubey-local` setting): non-private, JDP (the tree closes one node of
//! 145·146/2 = 10 585 discrete-Gaussian entries per round) and local JDP (the device adds
//! 144·145/2 + 144 = 10 584 entries per round); and of Table 1's costliest benchmark, `styb`
//! (F = 240 features, 500 candidates), at T = 300, non-private and JDP at α = 10: 80 % of a
//! non-private round is the triangular solve of the 240 × 240 Cholesky factor against the 500
//! candidates' features (compute-bound: a solve sharing each pass over the factor among four
//! candidates, with the same bits, was no faster), and 40 % of a JDP round, whose tree draws
//! 241·242/2 discrete-Gaussian entries a round for another 40 %. Run with
//! `cargo bench -p ldp-learn --bench dubey`.

use criterion::{Criterion, criterion_group, criterion_main};
use ldp_learn::dubey::{BenchmarkKind, EnvChoice, JobSeeds, Privacy, Settings, Variant, run_variant};
use ldp_learn::policy::Constants;

/// Seconds per trial of each variant at horizon `horizon`, with host-sim's defaults (λ = 1,
/// ζ = δ = 0.1, the calibrated constants).
fn bench_variants(c: &mut Criterion, group: &str, horizon: u64, variants: &[Variant]) {
    let settings =
        Settings { horizon, lambda: 1.0, zeta: 0.1, constants: Constants::Calibrated, beta_scale: 1.0 };
    let mut group = c.benchmark_group(group);
    group.sample_size(10);
    for (v, variant) in variants.iter().enumerate() {
        let seeds = JobSeeds::new(0, 0, v);
        group.bench_function(variant.label.as_str(), |b| {
            b.iter(|| run_variant(variant, &settings, seeds).expect("one trial"))
        });
    }
    group.finish();
}

fn trials(c: &mut Criterion) {
    let env = EnvChoice::Rkhs;
    let variants = [
        Variant { label: "non-private".into(), env, privacy: Privacy::NonPrivate },
        Variant { label: "JDP alpha=1".into(), env, privacy: Privacy::Jdp { epsilon: 1.0, delta: 0.1 } },
        Variant {
            label: "local-JDP alpha=1".into(),
            env,
            privacy: Privacy::LocalJdp { epsilon: 1.0, delta: 0.1 },
        },
    ];
    bench_variants(c, "dubey_trial_T1024", 1024, &variants);
}

fn styb(c: &mut Criterion) {
    let env = EnvChoice::Benchmark(BenchmarkKind::StyblinskiTang);
    let variants = [
        Variant { label: "non-private".into(), env, privacy: Privacy::NonPrivate },
        Variant { label: "JDP alpha=10".into(), env, privacy: Privacy::Jdp { epsilon: 10.0, delta: 0.1 } },
    ];
    bench_variants(c, "dubey_trial_styb_T300", 300, &variants);
}

criterion_group!(benches, trials, styb);
criterion_main!(benches);
