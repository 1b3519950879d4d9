//! Ask/tell: LDP-TGP-UCB picks the best of 40 settings of a knob it only sees through ε = 1
//! private reports of a noisy measurement, released by `ldp-core`'s reporter (the device).
//! `cargo run --release -p ldp-learn --example ask_tell`
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use ldp_learn::optimizer::{Domain, Optimizer, Settings};
use rand_core::{Rng, SeedableRng};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let points: Vec<Vec<f64>> = (0..40).map(|i| vec![i as f64 / 39.0]).collect();
    let measure = |x: f64, noise: f64| (1.0 - 4.0 * (x - 0.7).powi(2)).clamp(-1.0, 1.0) + 0.3 * noise;
    let (eps, horizon) = (Epsilon::new(1.0)?, 3000);
    let settings = Settings { horizon, noise_bound: 0.3, ..Settings::default() }; // ε = 1, B = 1
    let mut opt = Optimizer::new("LDP-TGP-UCB", Domain::points(points.clone()), settings)?;
    // The device: CTL(ε) with B = 1, R = 0.3 and a budget of T reports (secret and entropy fixed
    // here for a reproducible example; a device draws its own).
    let policy = BudgetPolicy::new(eps, Epsilon::new(horizon as f64 + 0.5)?)?;
    let config = DeviceConfig { b: Bound::new(1.0)?, r: Bound::new(0.3)?, policy };
    let mut device = Reporter::open(config, MemoryStore::provisioned([7; 32]), [9; 32])?;
    let mut rng = ldp_learn::env::SimRng::seed_from_u64(1);
    for _ in 0..horizon {
        let x = opt.ask();
        let noise = rng.next_u32() as f64 / f64::from(u32::MAX) * 2.0 - 1.0; // your measurement's noise
        let report = device.report(measure(points[x][0], noise), eps, None)?;
        opt.tell(x, report.release.value())?;
    }
    println!("{}: recommends x = {:.3} (the best is 0.7)", opt.name(), points[opt.recommend()][0]);
    Ok(())
}
