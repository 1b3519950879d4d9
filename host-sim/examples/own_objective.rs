//! Your own objective in Rust: LDP-MoMA-GP-UCB (with UCB1 and uniform play beside it) finds the
//! best of 60 settings of a function it only sees through ε = 1 locally private reports, through
//! the same executor, progress bar and result files as `host-sim run`.
//!
//! `cargo run --release -p host-sim --example own_objective [OUT_DIR]` writes
//! regret.csv, finals.csv, run.json and the plot into OUT_DIR [default: results/own-objective].
use std::error::Error;
use std::path::{Path, PathBuf};

use host_sim::experiments::runner::{Loop, RunConfig};
use host_sim::run::executor::{Executor, Progress};
use host_sim::run::output::{Writer, summary_table};
use host_sim::run::results::AlgorithmResult;
use ldp_core::Epsilon;
use ldp_learn::bo::{UCB1, ZHOU_TAN_ALGORITHMS};
use ldp_learn::env::{Noise, Objective, shared};
use ldp_learn::gp::SquaredExponential;

fn main() -> Result<(), Box<dyn Error>> {
    let out = std::env::args().nth(1).map_or(PathBuf::from("results/own-objective"), PathBuf::from);
    let results = run(&out, 5, 1000)?;
    println!("{}\nwrote {}", summary_table(&results, 5), out.display());
    Ok(())
}

/// `trials` runs of `horizon` rounds, results written into `out`.
pub fn run(out: &Path, trials: usize, horizon: usize) -> Result<Vec<AlgorithmResult>, Box<dyn Error>> {
    // The domain: 60 points of [0, 1]. The objective: any function of a point (here two bumps).
    let points: Vec<Vec<f64>> = (0..60).map(|i| vec![i as f64 / 59.0]).collect();
    let f = |x: &[f64]| (-((x[0] - 0.3) / 0.1).powi(2)).exp() + 0.8 * (-((x[0] - 0.75) / 0.05).powi(2)).exp();
    // Rewards f(x) + U[-0.5, 0.5]; the learner's prior: a squared-exponential kernel.
    let kernel = SquaredExponential::new(0.1)?;
    let env = Objective::new("two-bumps", points, f, &kernel, Noise::uniform(0.5)?)?;
    let config = RunConfig {
        trials,
        horizon,
        epsilon: Some(Epsilon::new(1.0)?), // every report is ε-LDP, privatised by the in-process device
        algorithms: vec![ZHOU_TAN_ALGORITHMS[3], UCB1], // LDP-MoMA-GP-UCB and the UCB1 baseline
        ..RunConfig::default()
    };
    let task = Loop::new(config.clone(), shared(env));
    let (progress, files) =
        (Progress::new(true), Writer::new(out, "own-objective", "two bumps, eps = 1", &config));
    Ok(Executor::new(&config).observe(&progress).observe(&files).results(&task)?)
}
