//! The local-JDP client of Dubey Alg. 3: its selection is the UCB rule computed naively,
//! its reports add exactly the rounded statistics plus discrete Gaussian noise of the
//! calibrated σ (KS at α = 1e-6), it is float-safe, it refuses bad input without panicking,
//! and it learns.

use crate::common;

use common::{ALPHA, bnd, del, dkw_threshold, eps};
use ldp_core::features::{FeatureMap, Qff};
use ldp_core::jdp::{ClientConfig, Confidence, JdpError, JdpState, LocalJdpClient, zcdp};
use nalgebra::{SMatrix, SVector};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use statrs::distribution::{ContinuousCDF, Normal};

const F: usize = 8;
type Features = Qff<1, 4, F>;
type Client = LocalJdpClient<1, F, Features>;

const CONF: Confidence =
    Confidence { rkhs_bound: 1.0, noise_scale: 0.5, approx_error: 1e-3, zeta: 0.1, scale: 0.1 };

fn client(epsilon: f64, delta: f64, horizon: u64) -> Client {
    let q = Features::new(0.5).unwrap();
    LocalJdpClient::new(q, ClientConfig::new(eps(epsilon), del(delta), bnd(1.0), horizon, CONF)).unwrap()
}

fn candidates() -> [[f64; 1]; 11] {
    core::array::from_fn(|i| [i as f64 / 10.0])
}

#[test]
fn selection_is_the_ucb_argmax_computed_naively() {
    let c = client(1.0, 0.1, 200);
    let mut state = c.initial_state();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let xs = candidates();
    for round in 0..60 {
        let pick = c.select(&state, &xs).unwrap();
        // Naive: V = Σ̃ + (λ + 2Λ_t)I, inverse, θ = V⁻¹u, score = θᵀφ + w·√(φᵀV⁻¹φ).
        let bounds = c.spectral_bounds(state.rounds);
        let diag = 1.0 + 2.0 * (bounds.lambda_min - 1.0);
        let g = (c.grid_log2() as f64).exp2();
        let v = SMatrix::<f64, F, F>::from_fn(|i, j| {
            state.gram[i.min(j)][i.max(j)] as f64 * g + if i == j { diag } else { 0.0 }
        });
        let vinv = v.try_inverse().unwrap();
        let u = SVector::<f64, F>::from_fn(|i, _| state.moment[i] as f64 * g);
        let theta = vinv * u;
        let scores: Vec<f64> = xs
            .iter()
            .map(|x| {
                let phi = SVector::<f64, F>::from(c.features().features(x));
                theta.dot(&phi) + pick.width * (phi.transpose() * vinv * phi)[(0, 0)].sqrt()
            })
            .collect();
        let best = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        assert!((scores[pick.index] - best).abs() <= 1e-9 * best.abs().max(1.0), "round {round}");
        assert!((pick.score - scores[pick.index]).abs() <= 1e-9 * best.abs().max(1.0));
        let y = if rng.next_u32() % 2 == 0 { 1.0 } else { 0.0 };
        c.report(&mut state, &xs[pick.index], y, &mut rng).unwrap();
        let symmetric = (0..F).all(|i| (0..i).all(|j| state.gram[i][j] == state.gram[j][i]));
        assert!(symmetric, "round {round}: the returned Gram matrix is not symmetric");
    }
}

/// After one report from the empty state, state − round(statistics) is the noise: pooled over
/// many independent reports, the Gram entries are N_ℤ(0, σ_X²) and the moment entries
/// N_ℤ(0, σ_u²) (σ of thousands of steps, so the CDF is Φ((k + ½)/σ) to within 1e-8).
#[test]
fn reports_add_rounded_statistics_plus_calibrated_discrete_gaussian_noise() {
    let c = client(1.0, 0.1, 1000);
    let g = (c.grid_log2() as f64).exp2();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let (x, y) = ([0.3], 0.7);
    let phi = c.features().features(&x);
    let norm = phi.iter().map(|p| p * p).sum::<f64>().sqrt().max(1.0);
    let phi = phi.map(|p| p / norm);
    let (mut gram, mut moment) = (Vec::new(), Vec::new());
    for _ in 0..5000 {
        let mut state = c.initial_state();
        c.report(&mut state, &x, y, &mut rng).unwrap();
        for i in 0..F {
            for j in i..F {
                gram.push(state.gram[i][j] - (phi[i] * phi[j] / g).round() as i64);
            }
            moment.push(state.moment[i] - (y * phi[i] / g).round() as i64);
        }
    }
    for (noise, sigma) in [(&mut gram, c.gram_sigma() / g), (&mut moment, c.moment_sigma() / g)] {
        assert!(sigma > 1000.0);
        let normal = Normal::new(0.0, sigma).unwrap();
        noise.sort_unstable();
        let n = noise.len() as f64;
        let mut worst: f64 = 0.0;
        for (i, &v) in noise.iter().enumerate() {
            let cdf = normal.cdf(v as f64 + 0.5);
            worst = worst
                .max((((i + 1) as f64 / n) - cdf).abs())
                .max((i as f64 / n - normal.cdf(v as f64 - 0.5)).abs());
        }
        assert!(worst <= dkw_threshold(noise.len(), ALPHA), "KS {worst} (σ = {sigma} steps)");
    }
    // The calibration spends at most the budget: one report is (ε, δ)-LDP.
    assert!(c.rho() <= zcdp::rho_for(eps(1.0), del(0.1)).unwrap());
    assert!(c.epsilon_effective() <= 1.0 + 1e-9);
}

#[test]
fn rewards_on_the_same_grid_index_give_identical_reports() {
    // Float safety: the report depends on the reward only through its grid index, so no low
    // bit of the reward can show through (Mironov 2012).
    let c = client(1.0, 0.1, 100);
    let g = (c.grid_log2() as f64).exp2();
    // y·φ_i/2^k rounds to 0 for both rewards and every |φ_i| ≤ 1.
    let y = 0.0;
    let y2 = g / 4.0;
    let mut a = c.initial_state();
    let mut b = c.initial_state();
    c.report(&mut a, &[0.4], y, &mut Xoshiro256PlusPlus::seed_from_u64(3)).unwrap();
    c.report(&mut b, &[0.4], y2, &mut Xoshiro256PlusPlus::seed_from_u64(3)).unwrap();
    assert_eq!(a.moment, b.moment);
    assert_eq!(a.gram, b.gram);
    // Every released entry is an integer index within ±2^52: its value index·2^k is exact.
    for v in a.moment.into_iter().chain(a.gram.into_iter().flatten()) {
        assert!(v.unsigned_abs() <= 1 << 52 && (v as f64) as i64 == v, "{v}");
    }
}

#[test]
fn bad_input_is_refused_without_panicking() {
    let c = client(1.0, 0.1, 100);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
    let mut state = c.initial_state();
    assert_eq!(c.select(&state, &[]), Err(JdpError::EmptyDecisionSet));
    assert_eq!(c.report(&mut state, &[0.5], f64::NAN, &mut rng), Err(JdpError::NonFiniteValue));
    assert_eq!(c.report(&mut state, &[f64::INFINITY], 1.0, &mut rng), Err(JdpError::NonFiniteValue));
    assert_eq!(state, c.initial_state(), "a refused report changes nothing");
    let mut other = JdpState::<F>::new(c.grid_log2() + 1);
    assert_eq!(c.select(&other, &candidates()), Err(JdpError::GridMismatch));
    assert_eq!(c.report(&mut other, &[0.5], 1.0, &mut rng), Err(JdpError::GridMismatch));
    // A corrupt state (hugely negative diagonal) is not positive definite after the shift.
    let mut bad = c.initial_state();
    bad.gram[2][2] = -(1 << 50);
    assert_eq!(c.select(&bad, &candidates()), Err(JdpError::NotPositiveDefinite));
    // Arbitrary garbage from a malicious server: an error or a selection, never a panic, and a
    // report still adds exactly one round.
    for _ in 0..200 {
        let mut junk = c.initial_state();
        for row in junk.gram.iter_mut() {
            for v in row.iter_mut() {
                *v = rng.next_u64() as i64 >> (rng.next_u32() % 64);
            }
        }
        for v in junk.moment.iter_mut() {
            *v = rng.next_u64() as i64;
        }
        junk.rounds = rng.next_u64();
        let _ = c.select(&junk, &candidates());
        let before = junk.rounds;
        c.report(&mut junk, &[0.5], 1.0, &mut rng).unwrap();
        assert_eq!(junk.rounds, before.saturating_add(1));
    }
}

#[test]
fn the_client_learns_a_smooth_function_at_a_weak_privacy_level() {
    // f peaks at x = 0.7 on 11 points; Bernoulli rewards; α = 10, δ = 0.5.
    let f = |x: f64| 0.2 + 0.7 * (-(x - 0.7f64).powi(2) / (2.0 * 0.15f64.powi(2))).exp();
    let xs = candidates();
    let best = xs.iter().map(|x| f(x[0])).fold(0.0, f64::max);
    let uniform = xs.iter().map(|x| best - f(x[0])).sum::<f64>() / xs.len() as f64;
    let horizon = 600;
    let c = client(10.0, 0.5, horizon);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let mut state = c.initial_state();
    let mut late = 0.0;
    for t in 0..horizon {
        let pick = c.select(&state, &xs).unwrap();
        let x = xs[pick.index][0];
        let y = if ((rng.next_u64() >> 11) as f64 * (-53f64).exp2()) < f(x) { 1.0 } else { 0.0 };
        c.report(&mut state, &xs[pick.index], y, &mut rng).unwrap();
        if t >= horizon - 200 {
            late += best - f(x);
        }
    }
    let late = late / 200.0;
    println!("late regret per round {late}, uniform play {uniform}");
    assert!(late < 0.5 * uniform, "late regret per round {late} vs uniform play {uniform}");
}

/// The production local-JDP reporter charges every report before releasing it, stops at its
/// total, survives a reset without restoring budget, keys fresh noise per boot, and charges a
/// NaN reward like any other (no free probe).
#[test]
fn the_jdp_reporter_has_an_accountant_like_the_reporter() {
    use ldp_core::jdp::{DeviceClient, JdpReportError, JdpReporter};
    use ldp_core::{BudgetError, BudgetPolicy, Epsilon, MemoryStore};
    let conf = Confidence { rkhs_bound: 1.0, noise_scale: 0.5, approx_error: 1e-6, zeta: 0.1, scale: 0.1 };
    let client =
        || DeviceClient::new(0.2, ClientConfig::new(eps(0.5), del(0.1), bnd(1.0), 100, conf)).unwrap();
    let e = |x| Epsilon::new(x).unwrap();
    let policy = BudgetPolicy::new(e(0.5), e(3.0)).unwrap().with_chunk(e(1.0)).unwrap();
    let mut device = JdpReporter::open(client(), policy, MemoryStore::provisioned([2; 32]), [0; 32]).unwrap();
    let mut state = device.client().initial_state();
    device.report(&mut state, &[0.3], 0.7).unwrap();
    device.report(&mut state, &[f64::NAN], f64::NAN).unwrap();
    assert_eq!(device.accountant().spent(), 1.0, "the NaN report was charged");
    assert_eq!(state.rounds, 2);
    // A reset: the reservation (1.0) counts as spent, and the next boot's noise is new.
    let store = *device.accountant().store();
    let mut device = JdpReporter::open(client(), policy, store, [0; 32]).unwrap();
    assert_eq!((device.accountant().boot(), device.accountant().spent()), (2, 1.0));
    let mut replay = device.client().initial_state();
    device.report(&mut replay, &[0.3], 0.7).unwrap();
    let mut again = JdpReporter::open(client(), policy, MemoryStore::provisioned([2; 32]), [0; 32]).unwrap();
    let mut original = again.client().initial_state();
    again.report(&mut original, &[0.3], 0.7).unwrap();
    assert_ne!(replay.gram, original.gram, "boot 2 replayed boot 1's noise");
    for _ in 0..3 {
        device.report(&mut replay, &[0.3], 0.7).unwrap();
    }
    assert!(matches!(
        device.report(&mut replay, &[0.3], 0.7),
        Err(JdpReportError::Budget(BudgetError::Exhausted { .. }))
    ));
    assert_eq!(replay.rounds, 4, "the refused report changed nothing");
    // A client at an ε above the device's limit cannot be opened.
    let weak = DeviceClient::new(0.2, ClientConfig::new(eps(1.0), del(0.1), bnd(1.0), 100, conf)).unwrap();
    assert!(matches!(
        JdpReporter::open(weak, policy, MemoryStore::provisioned([2; 32]), [0; 32]),
        Err(BudgetError::AboveDeviceLimit { .. })
    ));
}
