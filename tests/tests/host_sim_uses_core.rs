//! host-sim's in-process device is `ldp-core`'s production reporter, bit for bit: the demo's
//! released values are reproduced by driving `ldp_core::Reporter` directly, provisioned and
//! seeded as `ldp_link::device::simulated_reporter` documents.

use host_sim::privatise::{PrivatiseConfig, privatise};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use rand::RngExt;
use rand_chacha::ChaCha20Rng;
use rand_core::Rng;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

#[test]
fn demo_is_reproducible_and_is_the_core_reporter() {
    let config = PrivatiseConfig { reports: 2_000, seed: 42, ..Default::default() };
    let a = privatise(config).unwrap();
    assert_eq!(a, privatise(config).unwrap(), "same seed, same result");
    assert_ne!(a, privatise(PrivatiseConfig { seed: 43, ..config }).unwrap());

    // Replay the demo's stream by hand through ldp-core.
    let eps = Epsilon::new(config.epsilon).unwrap();
    let policy =
        BudgetPolicy::new(eps, Epsilon::new(config.epsilon * config.reports as f64).unwrap()).unwrap();
    let device_config =
        DeviceConfig { b: Bound::new(config.b).unwrap(), r: Bound::new(config.r).unwrap(), policy };
    let mut seeds = ChaCha20Rng::seed_from_u64(config.seed);
    let (mut material, mut entropy) = ([0u8; 32], [0u8; 32]);
    seeds.fill_bytes(&mut material);
    seeds.fill_bytes(&mut entropy);
    let mut device = Reporter::open(device_config, MemoryStore::provisioned(material), entropy).unwrap();
    let mut world = Xoshiro256PlusPlus::seed_from_u64(config.seed);
    let f = world.random_range(-config.b..=config.b);
    let mut sum = 0.0;
    for _ in 0..config.reports {
        let y = f + world.random_range(-config.r..=config.r);
        sum += device.report(y, eps, None).unwrap().release.value();
    }
    let mean = sum / config.reports as f64;
    // Same values, summed in another order: equal to rounding.
    assert!((mean - a.released_mean).abs() < 1e-9, "{mean} vs {}", a.released_mean);
    assert_eq!(device.accountant().spent(), a.epsilon_spent);
}
