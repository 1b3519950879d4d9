//! One trial of LDP-TGP-UCB on n random points of the unit cube [0, 1]³ for T rounds at ε = 1
//! (ask, a CTL(ε) release of the raw reward, tell), for timing the whole process and its peak
//! memory: `farm-bench -- target/release/examples/point_set_rounds 1000000 10000`. Above 4096
//! points the learner keeps no |D| × |D| matrix (`ldp_learn::domain::points`). Prints the time a
//! round (set-up excluded) and the recommendation's simple regret.

use ldp_core::{Bound, Epsilon, LaplaceMechanism};
use ldp_learn::env::SimRng;
use ldp_learn::optimizer::{Domain, Optimizer, Settings};
use rand::RngExt;
use rand_core::SeedableRng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map_or(Ok(100_000), |a| a.parse())?;
    let horizon: usize = args.get(1).map_or(Ok(10_000), |a| a.parse())?;
    let d = 3;
    let mut world = SimRng::seed_from_u64(1);
    let points: Vec<Vec<f64>> =
        (0..n).map(|_| (0..d).map(|_| world.random_range(0.0..1.0)).collect()).collect();
    let f = |x: &[f64]| 2.0 * (-8.0 * x.iter().map(|v| (v - 0.3) * (v - 0.3)).sum::<f64>()).exp() - 1.0;
    let best = points.iter().map(|x| f(x)).fold(f64::NEG_INFINITY, f64::max);
    let one = Bound::new(1.0)?;
    let ctl = LaplaceMechanism::ctl(Epsilon::new(1.0)?, one, one)?;
    let settings = Settings { horizon, seed: 1, ..Settings::default() };
    let start = std::time::Instant::now();
    let mut opt = Optimizer::new("ldp-tgp-ucb", Domain::points(points.clone()), settings)?;
    let setup = start.elapsed().as_secs_f64();
    let start = std::time::Instant::now();
    for _ in 0..horizon {
        let a = opt.ask();
        let reward = f(&points[a]) + world.random_range(-1.0..=1.0);
        let report = ctl.release(reward, &mut world).map_err(|e| format!("{e:?}"))?.value();
        opt.tell(a, report)?;
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "n {n}, d {d}, T {horizon}: set-up {setup:.2} s, {:.3} ms a round; simple regret {:.3}",
        1e3 * seconds / horizon as f64,
        best - f(&points[opt.recommend()])
    );
    Ok(())
}
