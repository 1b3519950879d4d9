//! Expected cumulative regret of uniformly random play, T·(max f − mean f), for each
//! experiment's environments (same trial seeds as `host-sim run`): the "no learning" line.
use host_sim::experiments::runner::derive_seed;
use host_sim::experiments::{self, EXPERIMENTS};

fn main() {
    let data = std::env::args().nth(1).map(std::path::PathBuf::from);
    for e in &EXPERIMENTS {
        let Ok(factory) = experiments::env_factory(e.env, data.as_deref()) else {
            println!("{:<6} skipped (pass the data directory as the first argument)", e.name);
            continue;
        };
        let trials = 20;
        let mut total = 0.0;
        for t in 0..trials {
            let Ok(env) = factory(derive_seed(0, t, 0)) else { continue };
            let n = env.num_arms();
            let mean = (0..n).map(|a| env.mean(a)).sum::<f64>() / n as f64;
            total += 1000.0 * (env.best_mean() - mean);
        }
        println!(
            "{:<6} uniform play, T = 1000: expected regret {:.1} (mean of {trials} trials)",
            e.name,
            total / trials as f64
        );
    }
}
