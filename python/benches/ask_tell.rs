//! The Rust side of the per-round ask/tell cost (`benches/ask_tell.py` is the Python side): GP-UCB
//! at |D| = 100 points of [0, 1], ε = 1, the same reports in the same order as the Python bench.
//!
//! `cargo bench --bench ask_tell` (in python/): prints `rust ns_per_round <median>` and the
//! actions' checksum, which the Python bench compares with its own (same settings, same actions).
use std::hint::black_box;
use std::time::Instant;

use ldp_learn::optimizer::{Domain, Optimizer, Settings};

/// Rounds per sample, samples, and the horizon the learner is told (more than it will see).
const ROUNDS: usize = 2000;
const SAMPLES: usize = 15;
const HORIZON: usize = 100_000;

/// The k-th report: a fixed sequence in [-1, 1) (the Python bench computes the same).
fn report(k: usize) -> f64 {
    ((k * 7919) % 1000) as f64 / 500.0 - 1.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let points: Vec<Vec<f64>> = (0..100).map(|i| vec![i as f64 / 99.0]).collect();
    let settings = Settings { horizon: HORIZON, seed: 1, ..Settings::default() };
    let mut opt = Optimizer::new("gp-ucb", Domain::points(points), settings)?;
    let (mut k, mut checksum) = (0usize, 0u64);
    let mut per_round = Vec::with_capacity(SAMPLES);
    for sample in 0..=SAMPLES {
        let start = Instant::now();
        for _ in 0..ROUNDS {
            let a = opt.ask();
            opt.tell(a, black_box(report(k)))?;
            checksum = checksum.wrapping_mul(31).wrapping_add(a as u64);
            k += 1;
        }
        if sample > 0 {
            // sample 0 warms up
            per_round.push(start.elapsed().as_nanos() as f64 / ROUNDS as f64);
        }
    }
    per_round.sort_by(f64::total_cmp);
    println!("rust ns_per_round {:.0}", per_round[SAMPLES / 2]);
    println!("rust checksum {checksum}");
    Ok(())
}
