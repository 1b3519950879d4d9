//! Ask/tell (`ldp_learn::optimizer`) against the experiments' bandit loop: driving the optimiser
//! by hand with the loop's in-process device gives the loop's actions, so the regret curves of
//! every learner it builds are equal to the bit.

use host_sim::experiments::runner::{RunConfig, derive_seed, run_trial};
use ldp_learn::env::{Environment, Noise, Objective};
use ldp_learn::gp::SquaredExponential;
use ldp_learn::optimizer::{Domain, Optimizer, Settings, learners};
use ldp_learn::policy::{AlgorithmSpec, Constants};
use ldp_link::device::{Device, InProcessDevice};

fn env() -> Objective {
    let points: Vec<Vec<f64>> = (0..12).map(|i| vec![i as f64 / 11.0]).collect();
    let kernel = SquaredExponential::new(0.2).unwrap();
    let f = |x: &[f64]| 0.8 - (x[0] - 0.6).abs();
    Objective::new("line", points, f, &kernel, Noise::uniform(0.5).unwrap()).unwrap()
}

/// The loop's run of `spec` on `env` under `config` (ε = 1, trial seed `seed`), and the same
/// learner and in-process device for driving them by hand.
fn by_hand<'a>(
    env: &'a Objective,
    spec: AlgorithmSpec,
    config: &RunConfig,
    seed: u64,
) -> (Vec<f64>, Optimizer, InProcessDevice<'a>) {
    let looped = run_trial(env, &spec, config, seed, 0).unwrap();
    let bounds = env.bounds();
    let settings = Settings {
        epsilon: Some(1.0),
        bound: bounds.b,
        noise_bound: bounds.r.unwrap(),
        horizon: config.horizon,
        constants: Constants::Calibrated,
        seed,
    };
    let domain = Domain::Covariance(env.prior_covariance().clone());
    let opt = Optimizer::with_spec(spec, domain, settings).unwrap();
    let eps = config.local_epsilon().unwrap();
    let device =
        InProcessDevice::new(env, eps, config.horizon, derive_seed(seed, 0, 1), derive_seed(seed, 0, 2))
            .unwrap();
    (looped, opt, device)
}

/// ε = 1 runs of `horizon` rounds.
fn private(horizon: usize) -> RunConfig {
    RunConfig {
        horizon,
        epsilon: Some(ldp_core::Epsilon::new(1.0).unwrap()),
        prior: None,
        ..RunConfig::default()
    }
}

#[test]
fn ask_tell_equals_the_bandit_loop() {
    let env = env();
    for spec in learners() {
        let (looped, mut opt, mut device) = by_hand(&env, spec, &private(60), 41);
        let (mut total, mut curve) = (0.0, Vec::new());
        for _ in 0..60 {
            let arm = opt.ask();
            let report = device.query(arm, opt.device_level()).unwrap();
            opt.tell(arm, report).unwrap();
            total += env.best_mean() - env.mean(arm);
            curve.push(total);
        }
        assert_eq!(curve, looped, "{}", spec.name);
        assert_eq!(opt.pulls().iter().sum::<u64>(), 60);
    }
}

/// `--batch q`: the loop asks q actions, queries the device for each, then tells the q reports;
/// driving `ask_batch` by hand the same way gives the loop's curve, for every learner, and a
/// run of q = 7 is not the sequential run (the learner decides without the batch's reports).
#[test]
fn a_batch_run_is_ask_batch_then_tell() {
    let env = env();
    let (horizon, q) = (60, 7);
    for spec in learners() {
        let config = RunConfig { batch: q, ..private(horizon) };
        let (looped, mut opt, mut device) = by_hand(&env, spec, &config, 43);
        let sequential = run_trial(&env, &spec, &private(horizon), 43, 0).unwrap();
        let (mut total, mut curve) = (0.0, Vec::new());
        while curve.len() < horizon {
            let asked = opt.ask_batch(q.min(horizon - curve.len()));
            let reports: Vec<f64> =
                asked.iter().map(|x| device.query(x.action, x.device_level).unwrap()).collect();
            for (x, r) in asked.iter().zip(reports) {
                opt.tell(x.action, r).unwrap();
                total += env.best_mean() - env.mean(x.action);
                curve.push(total);
            }
        }
        assert_eq!(curve, looped, "{}", spec.name);
        // LDP-RSE's round robin is the same whether its epoch is asked at once or not, and
        // MoMA-GP-UCB's epochs of k reports at one arm run whole either way at T = 60.
        if !["LDP-RSE", "MoMA-GP-UCB"].contains(&spec.name) {
            assert_ne!(looped, sequential, "{}", spec.name);
        }
    }
}

/// `--in-flight N`: the loop keeps N queries outstanding and tells the oldest report before
/// each new ask; driving `ask_batch(1)` and `tell` by hand the same way gives the loop's curve,
/// for every learner.
#[test]
fn an_in_flight_run_tells_the_oldest_report_before_each_ask() {
    let env = env();
    let (horizon, n) = (60, 5);
    for spec in learners() {
        let config = RunConfig { in_flight: n, ..private(horizon) };
        let (looped, mut opt, mut device) = by_hand(&env, spec, &config, 44);
        let (mut total, mut curve) = (0.0, Vec::new());
        let mut flight = std::collections::VecDeque::new();
        while curve.len() < horizon {
            while flight.len() < n && curve.len() + flight.len() < horizon {
                let Some(x) = opt.ask_batch(1).pop() else { break };
                flight.push_back((x.action, device.query(x.action, x.device_level).unwrap()));
            }
            let (a, r) = flight.pop_front().unwrap();
            opt.tell(a, r).unwrap();
            total += env.best_mean() - env.mean(a);
            curve.push(total);
        }
        assert_eq!(curve, looped, "{}", spec.name);
        assert!(opt.pending().is_empty());
    }
}
