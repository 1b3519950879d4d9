//! The bandit policies' privacy claims, checked rather than asserted (the pattern of
//! `tests/privacy.rs`): two neighbouring reward streams differ in one reward, at the extremes
//! ±B; a threshold attack set on what is released gives a Clopper–Pearson lower bound on ε at
//! α = 1e-6, which must stay below the claim, and the same audit must catch a version whose noise
//! is halved.
//!
//! - DP-RSE (Tao et al. Alg. 3): the epoch means released at the end of epoch 1, run through the
//!   state machine itself; the neighbouring streams differ in arm 0's first reward;
//! - LDP-RSE (Tao et al. Alg. 4): the device report at the learner's public level B_τ.

use crate::common;

use common::*;
use ldp_core::bandit::{DpRobustSe, HeavyTail, LdpRobustSe, RseParams};
use ldp_core::sampler::DiscreteLaplace;
use ldp_core::{Epsilon, LaplaceMechanism};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Two arms, u = v = 1, β = ½, κ = ½: ℓ = ln 16, R_1 = ⌈¼·ℓ·4/ε + 1⌉ (4 at ε = 1), so one run of
/// epoch 1 is 2·R_1 observations.
fn params(epsilon: f64) -> RseParams {
    RseParams::new(Epsilon::new(epsilon).unwrap(), HeavyTail::new(1.0, 1.0).unwrap(), 0.5, 0.5).unwrap()
}

/// One run of DP-RSE's first epoch: arm 0's first reward is +B_1 or −B_1, every other reward is
/// 0. The attack: arm 0's released noisy index sum exceeds the high input's index i_high, whose
/// likelihood ratio between the inputs is exactly `q^{−(i_high − i_low)} ≤ e^{ε_eff}`.
fn dp_rse_attack(epsilon: f64) -> impl FnMut(bool, &mut Xoshiro256PlusPlus) -> bool {
    move |high, rng| {
        let mut se = DpRobustSe::<2>::new(params(epsilon)).unwrap();
        let b = se.epoch().level;
        let pulls = se.epoch().pulls;
        let grid = (se.sum(0).unwrap().grid_log2() as f64).exp2();
        let i_high = (b / grid).round();
        for step in 0..2 * pulls {
            let arm = se.select();
            let reward = if step == 0 { if high { b } else { -b } } else { 0.0 };
            se.observe(arm, reward, rng).unwrap();
        }
        let release = se.last_release().unwrap();
        assert_eq!(release.tau, 1);
        // μ̃_0 = (noisy index sum)·2^k / R_1: recover the integer.
        let noisy_index = (release.means[0] * pulls as f64 / grid).round();
        noisy_index > i_high
    }
}

#[test]
fn dp_rse_epoch_means_are_epsilon_dp_and_the_audit_catches_halved_noise() {
    let (eps, n) = (1.0, 1_000_000);
    let se = DpRobustSe::<2>::new(params(eps)).unwrap();
    assert_eq!(se.epoch().pulls, 4);
    let claim = se.epsilon_effective();
    assert!(claim < eps);
    let ours = epsilon_lower_bound(n, 51, dp_rse_attack(eps));
    eprintln!("DP-RSE epoch release: empirical ε lower bound {ours:.4}, claim ε_eff = {claim:.6}");
    assert!(ours <= claim, "empirical ε lower bound {ours} exceeds the claimed {claim}");
    assert!(ours > 0.9 * claim, "the audit is too weak to be meaningful: bound {ours}");

    // Test of the test: the same state machine with its noise calibrated to 2ε (half the
    // noise a correct ε needs) must fail an audit at the claim ε.
    let caught = epsilon_lower_bound(n, 52, dp_rse_attack(2.0 * eps));
    eprintln!("halved-noise DP-RSE: empirical ε lower bound {caught:.4}");
    assert!(caught > eps, "the audit did not catch halved noise: bound {caught}");
}

#[test]
fn ldp_rse_device_report_at_the_public_level_is_epsilon_ldp_and_the_audit_catches_halved_noise() {
    let (eps, n) = (5.0, 1_000_000);
    let learner = LdpRobustSe::<5>::new(params(eps));
    let level = learner.device_level();
    let mechanism: LaplaceMechanism = learner.device_mechanism().unwrap();
    assert_eq!(mechanism.range(), level);
    let claim = mechanism.epsilon_effective();
    assert!(claim < eps);
    let i_high = mechanism.grid_index(level).unwrap();
    // Rewards at ±B_τ: the largest shift a truncated report can see.
    let attack = |noise: DiscreteLaplace| {
        move |high: bool, rng: &mut Xoshiro256PlusPlus| {
            let x = if high { level } else { -level };
            mechanism.grid_index(x).unwrap() + noise.sample(rng) > i_high
        }
    };
    // The device's own release path, as the firmware runs it.
    let device = |high: bool, rng: &mut Xoshiro256PlusPlus| {
        mechanism.release(if high { level } else { -level }, rng).unwrap().index > i_high
    };
    let ours = epsilon_lower_bound(n, 53, device);
    eprintln!("LDP-RSE report at B_τ = {level:.4}: empirical ε lower bound {ours:.4}, claim {claim:.6}");
    assert!(ours <= claim, "empirical ε lower bound {ours} exceeds the claimed {claim}");
    assert!(ours > 0.9 * claim, "the audit is too weak to be meaningful: bound {ours}");
    assert!(epsilon_lower_bound(n / 10, 54, attack(mechanism.noise())) <= claim);

    let (num, den) = mechanism.noise().scale_fraction();
    let caught = epsilon_lower_bound(n, 55, attack(DiscreteLaplace::new(num / 2, den).unwrap()));
    eprintln!("halved-noise report: empirical ε lower bound {caught:.4}");
    assert!(caught > eps, "the audit did not catch halved noise: bound {caught}");
}
