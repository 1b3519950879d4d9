//! Where the fitted lengthscale's bias comes from: the kernel fitted ([`fit::fit`]) to the same
//! function's reports gathered two ways — by the learner itself (raw GP-UCB on a box, its
//! kernel fitted as it goes: the design an exploiting learner makes) and at points drawn
//! uniformly from the box — with `m` random features, on functions drawn from a GP prior of
//! known lengthscale ([`PriorSample`]). `docs/boxes.md`, "The fitted kernel".
//!
//! ```sh
//! cargo run --release -p ldp-learn --example fit_design -- \
//!     --d 2 --lengthscales 0.05,0.2,0.5 --horizon 5000 --trials 5 --features 128,512
//! ```
//!
//! Each fit reads at most 1024 reports (every ⌈t/1024⌉-th of the learner's, or 1024 uniform
//! points) with the world's noise U[−1, 1], the learner's λ, starting from the learner's
//! initial lengthscale √(d/6). Prints one line a (lengthscale, trial, design, m) and, per
//! (lengthscale, design, m), the geometric mean of the fitted lengthscales over the trials.

use ldp_learn::domain::feature_gp::{FeatureGp, Hyperparameters};
use ldp_learn::domain::fit::{FIT_POINTS, fit};
use ldp_learn::domain::functions::PriorSample;
use ldp_learn::domain::{BoxOptimizer, BoxOptions};
use ldp_learn::env::SimRng;
use ldp_learn::optimizer::Settings;
use ldp_learn::rules::derive_seed;
use rand::RngExt;
use rand_core::SeedableRng;

struct Args {
    d: usize,
    lengthscales: Vec<f64>,
    horizon: usize,
    trials: usize,
    features: Vec<usize>,
    seed: u64,
}

fn list<T: std::str::FromStr>(v: &str) -> Result<Vec<T>, String> {
    v.split(',').map(|x| x.trim().parse().map_err(|_| format!("not a number: {x}"))).collect()
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        d: 2,
        lengthscales: vec![0.05, 0.2, 0.5],
        horizon: 5000,
        trials: 5,
        features: vec![128],
        seed: 7000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--d" => a.d = value.parse().map_err(|e| bad(&e))?,
            "--lengthscales" => a.lengthscales = list(&value)?,
            "--horizon" => a.horizon = value.parse().map_err(|e| bad(&e))?,
            "--trials" => a.trials = value.parse().map_err(|e| bad(&e))?,
            "--features" => a.features = list(&value)?,
            "--seed" => a.seed = value.parse().map_err(|e| bad(&e))?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

/// The learner's design: the points raw GP-UCB asks on `f` over `horizon` rounds, with their
/// reports, and its λ.
fn learner_design(f: &PriorSample, horizon: usize, seed: u64) -> Result<(Vec<f64>, Vec<f64>, f64), String> {
    let settings = Settings { epsilon: None, horizon, seed: derive_seed(seed, 0, 3), ..Settings::default() };
    let mut opt = BoxOptimizer::with_options("tgp-ucb", f.domain(), settings, BoxOptions::default())
        .map_err(|e| e.to_string())?;
    let lambda = opt.constants().iter().find(|c| c.0 == "lambda").map_or(1.0, |c| c.1);
    let mut world = SimRng::seed_from_u64(derive_seed(seed, 0, 1));
    let (mut points, mut reports) = (Vec::new(), Vec::new());
    for _ in 0..horizon {
        let x = opt.ask();
        let y = f.reward(&x) + world.random_range(-1.0..=1.0);
        opt.tell(&x, y).map_err(|e| e.to_string())?;
        points.extend_from_slice(&x);
        reports.push(y);
    }
    Ok((points, reports, lambda))
}

/// The lengthscale fitted (mean over coordinates) to `reports` at `points` with `m` features.
fn fitted(d: usize, points: &[f64], reports: &[f64], lambda: f64, m: usize, seed: u64) -> f64 {
    let start = Hyperparameters { lengthscales: vec![(d as f64 / 6.0).sqrt(); d], signal: 1.0 };
    let mut gp = FeatureGp::new(d, m / 2, lambda, start, &mut SimRng::seed_from_u64(seed));
    for (u, y) in points.chunks(d).zip(reports) {
        gp.observe(u, *y);
    }
    let h = fit(&gp, 1.0);
    h.lengthscales.iter().sum::<f64>() / d as f64
}

fn main() -> Result<(), String> {
    let a = parse()?;
    println!("lengthscale,trial,design,features,fitted");
    let mut table = Vec::new();
    for &l in &a.lengthscales {
        let mut logs = vec![vec![0.0; a.features.len()]; 2];
        for i in 0..a.trials {
            let seed = derive_seed(a.seed, i as u64, 0);
            let f = PriorSample::draw(a.d, l, derive_seed(a.seed, i as u64, 11))
                .ok_or("--d must be 1 to 20 and every lengthscale positive")?;
            let (learned, learned_y, lambda) = learner_design(&f, a.horizon, seed)?;
            let mut world = SimRng::seed_from_u64(derive_seed(seed, 0, 4));
            let uniform: Vec<f64> = (0..FIT_POINTS * a.d).map(|_| world.random_range(0.0..=1.0)).collect();
            let uniform_y: Vec<f64> =
                uniform.chunks(a.d).map(|u| f.reward(u) + world.random_range(-1.0..=1.0)).collect();
            for (k, &m) in a.features.iter().enumerate() {
                for (j, (design, points, ys)) in
                    [("learner", &learned, &learned_y), ("uniform", &uniform, &uniform_y)]
                        .into_iter()
                        .enumerate()
                {
                    let ell = fitted(a.d, points, ys, lambda, m, derive_seed(seed, k as u64, 5));
                    println!("{l},{i},{design},{m},{ell:.4}");
                    logs[j][k] += ell.ln() / a.trials as f64;
                }
            }
        }
        table.push((l, logs));
    }
    println!(
        "\n| true ℓ | design | {} |",
        a.features.iter().map(|m| format!("m = {m}")).collect::<Vec<_>>().join(" | ")
    );
    println!("|---|---|{}", "---|".repeat(a.features.len()));
    for (l, logs) in table {
        for (j, design) in ["learner", "uniform"].iter().enumerate() {
            let cells: Vec<String> = logs[j].iter().map(|g| format!("{:.3}", g.exp())).collect();
            println!("| {l} | {design} | {} |", cells.join(" | "));
        }
    }
    Ok(())
}
