//! Your noisy closure `f`, optimised by ask/tell over 25 points; the learner sees each
//! measurement only as ldp-core's CTL(ε = 1) release, made where it is measured (the device).
//! `cargo run --release -p ldp-learn --example noisy_closure`
use ldp_core::{Bound, Epsilon, LaplaceMechanism};
use ldp_learn::env::SimRng;
use ldp_learn::optimizer::{Domain, Optimizer, Settings};
use rand::{RngExt, SeedableRng};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Seeded for a reproducible example; a device draws its noise from its own entropy.
    let (mut world, mut device) = (SimRng::seed_from_u64(1), SimRng::seed_from_u64(2));
    // |f| ≤ B = 1 plus noise |η| ≤ R = 0.2.
    let f = |x: f64, world: &mut SimRng| 0.8 * (6.0 * x).sin() + world.random_range(-0.2..=0.2);
    let points: Vec<Vec<f64>> = (0..25).map(|i| vec![i as f64 / 24.0]).collect();
    let ctl = LaplaceMechanism::ctl(Epsilon::new(1.0)?, Bound::new(1.0)?, Bound::new(0.2)?)?;
    let settings = Settings { noise_bound: 0.2, horizon: 2000, ..Settings::default() }; // ε = 1, B = 1
    let mut opt = Optimizer::new("LDP-TGP-UCB", Domain::points(points.clone()), settings)?;
    for _ in 0..settings.horizon {
        let i = opt.ask();
        let release = ctl.release(f(points[i][0], &mut world), &mut device)?;
        opt.tell(i, release.value())?;
    }
    println!("recommends x = {:.3} (f peaks at π/12 ≈ 0.262)", points[opt.recommend()][0]);
    Ok(())
}
