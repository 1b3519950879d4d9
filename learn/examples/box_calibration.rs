//! The box learners on functions drawn from a GP prior of known lengthscale
//! ([`PriorSample`]): what their κ is chosen on and their fitted kernel checked on
//! (`docs/boxes.md`, "The constants").
//!
//! ```sh
//! cargo run --release -p ldp-learn --example box_calibration -- \
//!     --d 2 --lengthscale 0.2 --eps 1 --horizon 10000 --trials 6 --seed 5000 \
//!     --runs fitted@1,fitted@0.5,median@1,0.1@1
//! ```
//!
//! With `--points N` the domain is N points drawn uniformly from the unit cube (a new set each
//! trial, seed `derive_seed(seed, i, 12)`) and the learner the large point set's
//! ([`PointSetGp`], `ldp_learn::domain::points`) with its β multiplied by SCALE; regret and
//! uniform play are then measured against the set's best point and the set's mean reward.
//! What the large point sets' κ is chosen on (`scripts/choose-box-kappa.sh --points`).
//!
//! `--learner moma` runs (LDP-)MoMA-GP-UCB on the box instead of (LDP-)TGP-UCB (what its κ,
//! [`ldp_learn::domain::BOX_MOMA_KAPPA`], is chosen on: `scripts/choose-box-kappa.sh --moma`).
//!
//! Each run is `KERNEL@SCALE`: KERNEL `fitted` (the default), `median` (the median rule's fixed
//! lengthscale √(d/6)) or a number (a fixed lengthscale in units of the side), and SCALE the β
//! multiplier (`BoxOptions::beta_scale`); `--features m` sets the learner's random features and `--noise-bound R` the R it is told (the world's noise stays U[−1, 1]). Trial i draws its function from seed
//! `derive_seed(seed, i, 11)` and its world noise and release from seeds shared by every run, so
//! runs are compared on the same functions and the same noise (paired). The learner is
//! LDP-TGP-UCB at ε (GP-UCB's raw rewards with `--eps none`); the reward is released by the
//! CTL(ε) Laplace mechanism of ldp-core with B = R = 1, as the box experiments' device does.
//! Prints one line a (trial, run) (`trial,run,regret,uniform,simple,lengthscale`) and a table:
//! each run's R_T over uniform random search's expected R_T, mean ± s.e. over trials, and the
//! paired difference from the first run.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use ldp_core::{Bound, Epsilon, LaplaceMechanism};
use ldp_learn::bo::ZHOU_TAN_ALGORITHMS;
use ldp_learn::domain::functions::PriorSample;
use ldp_learn::domain::points::PointSetGp;
use ldp_learn::domain::{BoxOptimizer, BoxOptions, Lengthscale};
use ldp_learn::env::SimRng;
use ldp_learn::optimizer::{Settings, domain_free};
use ldp_learn::policy::Policy;
use ldp_learn::rules::derive_seed;
use rand::RngExt;
use rand_core::SeedableRng;

struct Args {
    d: usize,
    lengthscale: f64,
    eps: Option<f64>,
    horizon: usize,
    trials: usize,
    seed: u64,
    runs: Vec<(String, Lengthscale, f64)>,
    threads: usize,
    features: usize,
    noise_bound: f64,
    points: usize,
    moma: bool,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        d: 2,
        lengthscale: 0.2,
        eps: Some(1.0),
        horizon: 10_000,
        trials: 6,
        seed: 5000,
        runs: Vec::new(),
        threads: 2,
        features: BoxOptions::default().features,
        noise_bound: 1.0,
        points: 0,
        moma: false,
    };
    let mut runs = "fitted@1".to_string();
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--d" => a.d = value.parse().map_err(|e| bad(&e))?,
            "--lengthscale" => a.lengthscale = value.parse().map_err(|e| bad(&e))?,
            "--eps" if value == "none" => a.eps = None,
            "--eps" => a.eps = Some(value.parse().map_err(|e| bad(&e))?),
            "--horizon" => a.horizon = value.parse().map_err(|e| bad(&e))?,
            "--trials" => a.trials = value.parse().map_err(|e| bad(&e))?,
            "--seed" => a.seed = value.parse().map_err(|e| bad(&e))?,
            "--threads" => a.threads = value.parse().map_err(|e| bad(&e))?,
            "--features" => a.features = value.parse().map_err(|e| bad(&e))?,
            "--noise-bound" => a.noise_bound = value.parse().map_err(|e| bad(&e))?,
            "--points" => a.points = value.parse().map_err(|e| bad(&e))?,
            "--learner" if value == "moma" => a.moma = true,
            "--learner" if value == "tgp" => a.moma = false,
            "--learner" => return Err(format!("--learner is tgp or moma, not {value}")),
            "--runs" => runs = value,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let median = (a.d as f64 / 6.0).sqrt();
    for run in runs.split(',') {
        let (kernel, scale) = run.split_once('@').unwrap_or((run, "1"));
        let scale: f64 = scale.parse().map_err(|e| format!("{run}: {e}"))?;
        let kernel = match kernel {
            "fitted" => Lengthscale::Fitted,
            "median" => Lengthscale::Fixed(median),
            l => Lengthscale::Fixed(l.parse().map_err(|e| format!("{run}: {e}"))?),
        };
        a.runs.push((run.to_string(), kernel, scale));
    }
    Ok(a)
}

/// One trial of one run: (R_T, uniform's expected R_T, simple regret, first fitted lengthscale).
fn trial(a: &Args, f: &PriorSample, mean: f64, i: usize, run: usize) -> Result<[f64; 4], String> {
    let (_, lengthscale, beta_scale) = a.runs[run];
    let trial_seed = derive_seed(a.seed, i as u64, 0);
    let settings = Settings {
        epsilon: a.eps,
        noise_bound: a.noise_bound,
        horizon: a.horizon,
        seed: derive_seed(trial_seed, 0, 3),
        ..Settings::default()
    };
    if a.points > 0 {
        return point_set_trial(a, f, i, run, settings);
    }
    let options = BoxOptions { lengthscale, beta_scale, features: a.features, ..BoxOptions::default() };
    let name = match (a.moma, a.eps.is_some()) {
        (true, true) => "ldp-moma-gp-ucb",
        (true, false) => "moma-gp-ucb",
        (false, true) => "ldp-tgp-ucb",
        (false, false) => "tgp-ucb",
    };
    let mut opt =
        BoxOptimizer::with_options(name, f.domain(), settings, options).map_err(|e| e.to_string())?;
    let mut device = Device::new(a.eps, trial_seed)?;
    let mut regret = 0.0;
    for _ in 0..a.horizon {
        let x = opt.ask();
        let reward = f.reward(&x);
        regret += 1.0 - reward;
        opt.tell(&x, device.report(reward)?).map_err(|e| e.to_string())?;
    }
    let simple = 1.0 - f.reward(&opt.recommend());
    let (ls, _) = opt.lengthscales();
    let ls = ls.iter().sum::<f64>() / ls.len() as f64;
    Ok([regret, a.horizon as f64 * (1.0 - mean), simple, ls])
}

/// A trial's world and device: U[−1, 1] noise on the reward, then the CTL(ε) release of the
/// box experiments' device (B = R = 1), or the raw reward; seeded from the trial's seed, so
/// every run of a trial sees the same noise (paired).
struct Device {
    ctl: Option<LaplaceMechanism>,
    world: SimRng,
    device: SimRng,
}

impl Device {
    fn new(eps: Option<f64>, trial_seed: u64) -> Result<Self, String> {
        let one = Bound::new(1.0).map_err(|e| format!("{e:?}"))?;
        let ctl = eps
            .map(|e| {
                LaplaceMechanism::ctl(Epsilon::new(e).map_err(|e| format!("{e:?}"))?, one, one)
                    .map_err(|e| format!("{e:?}"))
            })
            .transpose()?;
        Ok(Self {
            ctl,
            world: SimRng::seed_from_u64(derive_seed(trial_seed, 0, 1)),
            device: SimRng::seed_from_u64(derive_seed(trial_seed, 0, 2)),
        })
    }

    /// The report of a round whose reward is `reward`.
    fn report(&mut self, reward: f64) -> Result<f64, String> {
        let raw = reward + self.world.random_range(-1.0..=1.0);
        match &self.ctl {
            Some(ctl) => Ok(ctl.release(raw, &mut self.device).map_err(|e| format!("{e:?}"))?.value()),
            None => Ok(raw),
        }
    }
}

/// [`trial`] on `--points` points of the unit cube: the large point set's learner, regret against
/// the set's best point, uniform play's expected R_T over the set.
fn point_set_trial(
    a: &Args,
    f: &PriorSample,
    i: usize,
    run: usize,
    settings: Settings,
) -> Result<[f64; 4], String> {
    let (_, lengthscale, beta_scale) = a.runs[run];
    let trial_seed = derive_seed(a.seed, i as u64, 0);
    let mut draw = SimRng::seed_from_u64(derive_seed(a.seed, i as u64, 12));
    let points: Vec<Vec<f64>> =
        (0..a.points).map(|_| (0..a.d).map(|_| draw.random_range(0.0..1.0)).collect()).collect();
    let rewards: Vec<f64> = points.iter().map(|x| f.reward(x)).collect();
    let best = rewards.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = rewards.iter().sum::<f64>() / rewards.len() as f64;
    let spec = ZHOU_TAN_ALGORITHMS[1];
    let epsilon = a.eps.map(Epsilon::new).transpose().map_err(|e| format!("{e:?}"))?;
    let constants = domain_free(spec, &settings, epsilon)?;
    let fixed = match lengthscale {
        Lengthscale::Fitted => None,
        Lengthscale::Fixed(l) => Some(l),
    };
    let mut learner = PointSetGp::new(
        &points,
        constants.lambda,
        constants.delta,
        settings.bound,
        constants.beta_scale * beta_scale,
        constants.levels,
        fixed,
        derive_seed(settings.seed, 0, 3),
    );
    let mut device = Device::new(a.eps, trial_seed)?;
    let mut regret = 0.0;
    for _ in 0..a.horizon {
        let k = learner.select();
        regret += best - rewards[k];
        learner.observe(k, device.report(rewards[k])?).map_err(|e| format!("{e:?}"))?;
    }
    let simple = learner.recommend().map_or(f64::NAN, |k| best - rewards[k]);
    let ls = &learner.hyperparameters().lengthscales;
    let ls = ls.iter().sum::<f64>() / ls.len() as f64;
    Ok([regret, a.horizon as f64 * (best - mean), simple, ls])
}

fn main() -> Result<(), String> {
    let a = parse()?;
    let functions: Vec<(PriorSample, f64)> = (0..a.trials)
        .map(|i| {
            let f = PriorSample::draw(a.d, a.lengthscale, derive_seed(a.seed, i as u64, 11))
                .ok_or("--d must be 1 to 20 and --lengthscale positive")?;
            let mean = if a.points > 0 { f64::NAN } else { f.mean_reward() };
            Ok((f, mean))
        })
        .collect::<Result<_, String>>()?;
    let jobs: Vec<(usize, usize)> =
        (0..a.trials).flat_map(|i| (0..a.runs.len()).map(move |r| (i, r))).collect();
    let next = AtomicUsize::new(0);
    let results = Mutex::new(vec![[f64::NAN; 4]; jobs.len()]);
    let errors = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..a.threads.max(1) {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(i, r)) = jobs.get(k) else { break };
                    let (f, mean) = &functions[i];
                    match trial(&a, f, *mean, i, r) {
                        Ok(v) => {
                            println!("{i},{},{:.3},{:.3},{:.4},{:.4}", a.runs[r].0, v[0], v[1], v[2], v[3]);
                            if let Ok(mut out) = results.lock() {
                                out[k] = v;
                            }
                        }
                        Err(e) => {
                            if let Ok(mut errors) = errors.lock() {
                                errors.push(e);
                            }
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = errors.lock().map_err(|e| e.to_string())?.first() {
        return Err(e.clone());
    }
    let results = results.into_inner().map_err(|e| e.to_string())?;
    let ratio = |i: usize, r: usize| {
        let v = results[i * a.runs.len() + r];
        v[0] / v[1]
    };
    let n = a.trials as f64;
    let mean_se = |xs: &[f64]| {
        let m = xs.iter().sum::<f64>() / n;
        let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0).max(1.0);
        (m, (var / n).sqrt())
    };
    println!(
        "\nd = {}, lengthscale {}, eps {:?}, T = {}, {} trials: R_T / uniform's (mean ± s.e.), paired difference from {}, simple regret, lengthscale at T",
        a.d, a.lengthscale, a.eps, a.horizon, a.trials, a.runs[0].0
    );
    for r in 0..a.runs.len() {
        let ratios: Vec<f64> = (0..a.trials).map(|i| ratio(i, r)).collect();
        let diffs: Vec<f64> = (0..a.trials).map(|i| ratio(i, r) - ratio(i, 0)).collect();
        let simple: Vec<f64> = (0..a.trials).map(|i| results[i * a.runs.len() + r][2]).collect();
        let ls: Vec<f64> = (0..a.trials).map(|i| results[i * a.runs.len() + r][3]).collect();
        let ((m, se), (dm, dse), (sm, _), (lm, _)) =
            (mean_se(&ratios), mean_se(&diffs), mean_se(&simple), mean_se(&ls));
        println!(
            "{:>14}  {m:.3} ± {se:.3}   diff {dm:+.3} ± {dse:.3}   simple {sm:.3}   lengthscale {lm:.3}",
            a.runs[r].0
        );
    }
    Ok(())
}
