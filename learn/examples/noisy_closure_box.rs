//! `noisy_closure` on a box: your noisy closure over a continuous box, here Branin on
//! [−5, 10] × [0, 15] rescaled to a reward in [−1, 1] (ldp_learn::domain::functions), optimised
//! by ask/tell with BoxOptimizer; the learner sees each measurement only as ldp-core's
//! CTL(ε = 1) release, made where it is measured (the device).
//! `cargo run --release -p ldp-learn --example noisy_closure_box`
use ldp_core::{Bound, Epsilon, LaplaceMechanism};
use ldp_learn::domain::BoxOptimizer;
use ldp_learn::domain::functions::TestFunction;
use ldp_learn::env::SimRng;
use ldp_learn::optimizer::Settings;
use rand::{RngExt, SeedableRng};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Seeded for a reproducible example; a device draws its noise from its own entropy.
    let (mut world, mut device) = (SimRng::seed_from_u64(1), SimRng::seed_from_u64(2));
    // |reward| ≤ B = 1 plus noise |η| ≤ R = 0.2.
    let branin = TestFunction::Branin;
    let f = |x: &[f64], world: &mut SimRng| branin.reward(x) + world.random_range(-0.2..=0.2);
    let ctl = LaplaceMechanism::ctl(Epsilon::new(1.0)?, Bound::new(1.0)?, Bound::new(0.2)?)?;
    let settings = Settings { noise_bound: 0.2, horizon: 2000, ..Settings::default() }; // ε = 1, B = 1
    let mut opt = BoxOptimizer::new("LDP-TGP-UCB", branin.domain(), settings)?;
    for _ in 0..settings.horizon {
        let x = opt.ask();
        let release = ctl.release(f(&x, &mut world), &mut device)?;
        opt.tell(&x, release.value())?;
    }
    let x = opt.recommend();
    println!("recommends x = ({:.2}, {:.2}), Branin {:.3} there", x[0], x[1], branin.value(&x));
    println!("(its minimum is 0.398, at (-3.14, 12.28), (3.14, 2.28) and (9.42, 2.48))");
    Ok(())
}
