//! The Rust side of the per-round ask/tell cost on a box (`benches/box_ask_tell.py` is the
//! Python side): GP-UCB on [0, 1]², ε = 1, the same reports in the same order as the Python bench.
//!
//! `cargo bench --bench box_ask_tell` (in python/): prints each sample's `rust ns_per_round` and
//! the asked points' checksum, which the Python bench compares with its own (same settings, same
//! points).
use std::hint::black_box;
use std::time::Instant;

use ldp_learn::domain::BoxOptimizer;
use ldp_learn::optimizer::{Domain, Settings};

/// Rounds per sample, samples (after one of warm-up), and the horizon the learner is told.
const ROUNDS: usize = 2000;
const SAMPLES: usize = 5;
const HORIZON: usize = ROUNDS * (SAMPLES + 1);

/// The k-th report: a fixed sequence in [-1, 1) (the Python bench computes the same).
fn report(k: usize) -> f64 {
    ((k * 7919) % 1000) as f64 / 500.0 - 1.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let settings = Settings { horizon: HORIZON, seed: 1, ..Settings::default() };
    let domain = Domain::Box { lower: vec![0.0; 2], upper: vec![1.0; 2] };
    let mut opt = BoxOptimizer::new("gp-ucb", domain, settings)?;
    let (mut k, mut checksum) = (0usize, 0u64);
    for sample in 0..=SAMPLES {
        let start = Instant::now();
        for _ in 0..ROUNDS {
            let x = opt.ask();
            opt.tell(&x, black_box(report(k)))?;
            checksum = x.iter().fold(checksum, |c, v| c.wrapping_mul(31).wrapping_add(v.to_bits()));
            k += 1;
        }
        if sample > 0 {
            // sample 0 warms up
            println!("rust ns_per_round {:.0}", start.elapsed().as_nanos() as f64 / ROUNDS as f64);
        }
    }
    println!("rust checksum {checksum}");
    // The calls' own cost, little learner work: ask() again before tell (the asked point, kept)
    // and posterior(x), each the fastest of 9 batches of 10^4 calls.
    let x = opt.ask();
    let fastest = |f: &mut dyn FnMut()| {
        let batches = (0..9).map(|_| {
            let start = Instant::now();
            for _ in 0..10_000 {
                f();
            }
            start.elapsed().as_nanos() as f64 / 1e4
        });
        batches.fold(f64::INFINITY, f64::min)
    };
    let ask = fastest(&mut || {
        black_box(opt.ask());
    });
    let posterior = fastest(&mut || {
        black_box(opt.posterior(black_box(&x)).ok());
    });
    println!("rust ns_per_asked_again {ask:.0}");
    println!("rust ns_per_posterior {posterior:.0}");
    Ok(())
}
