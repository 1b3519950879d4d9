//! One trial of LDP-TGP-UCB on the unit box of dimension d for T rounds at ε = 1 (ask, a CTL(ε)
//! release of the raw reward, tell), for timing the whole process and its peak memory:
//! `farm-bench -- target/release/examples/box_rounds 6 10000`. Prints the rounds per second and
//! the recommendation.

use ldp_core::{Bound, Epsilon, LaplaceMechanism};
use ldp_learn::domain::BoxOptimizer;
use ldp_learn::env::SimRng;
use ldp_learn::optimizer::{Domain, Settings};
use rand::RngExt;
use rand_core::SeedableRng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let d: usize = args.first().map_or(Ok(2), |a| a.parse())?;
    let horizon: usize = args.get(1).map_or(Ok(10_000), |a| a.parse())?;
    let one = Bound::new(1.0)?;
    let ctl = LaplaceMechanism::ctl(Epsilon::new(1.0)?, one, one)?;
    let settings = Settings { horizon, seed: 1, ..Settings::default() };
    let domain = Domain::Box { lower: vec![0.0; d], upper: vec![1.0; d] };
    let mut opt = BoxOptimizer::new("ldp-tgp-ucb", domain, settings)?;
    let mut world = SimRng::seed_from_u64(1);
    let start = std::time::Instant::now();
    for _ in 0..horizon {
        let x = opt.ask();
        let f = 2.0 * (-2.0 * x.iter().map(|v| (v - 0.3) * (v - 0.3)).sum::<f64>()).exp() - 1.0;
        let reward = f + world.random_range(-1.0..=1.0);
        let report = ctl.release(reward, &mut world).map_err(|e| format!("{e:?}"))?.value();
        opt.tell(&x, report)?;
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "d {d}, T {horizon}: {:.3} ms a round; recommend {:?}; lengthscales {:?}",
        1e3 * seconds / horizon as f64,
        opt.recommend(),
        opt.lengthscales()
    );
    Ok(())
}
