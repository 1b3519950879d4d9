//! ns per privatised report on the host: the mechanism alone, and the full device path
//! (validation, budget, ChaCha20 CSPRNG).

use criterion::{Criterion, criterion_group, criterion_main};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, LaplaceMechanism, MemoryStore, Reporter};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let (b, r) = (Bound::new(1.0).unwrap(), Bound::new(1.0).unwrap());
    let mut group = c.benchmark_group("privatise");
    for eps in [0.1, 1.0, 10.0] {
        let ctl = LaplaceMechanism::ctl(Epsilon::new(eps).unwrap(), b, r).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        group.bench_function(format!("ctl_release_xoshiro/eps={eps}"), |bench| {
            bench.iter(|| ctl.release(black_box(0.3), &mut rng))
        });
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        group.bench_function(format!("ctl_release_chacha20/eps={eps}"), |bench| {
            bench.iter(|| ctl.release(black_box(0.3), &mut rng))
        });
    }
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(1e9).unwrap()).unwrap();
    let mut dev =
        Reporter::open(DeviceConfig { b, r, policy }, MemoryStore::provisioned([2; 32]), [0; 32]).unwrap();
    group.bench_function("reporter_report_chacha20/eps=1", |bench| {
        let one = Epsilon::new(1.0).unwrap();
        bench.iter(|| dev.report(black_box(0.3), one, None))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
