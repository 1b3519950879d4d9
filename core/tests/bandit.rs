//! The K-armed policies of `ldp_core::bandit` on hand-made cases: indices against hand
//! computations, the successive-elimination rules at the epoch boundary (12·err_τ for DP,
//! 14·err_τ for LDP), EXP3 and Hedge weights, refusals that change nothing, and memory fixed by
//! the type.

use core::mem::size_of;

use ldp_core::bandit::{
    DpRobustSe, DpRobustUcb, Exp3, Exp3Params, HeavyTail, Hedge, LdpRobustSe, ObserveError,
    PAPER_DP_RSE_KAPPA, PAPER_DP_UCB_CONSTANT, PAPER_LDP_RSE_KAPPA, PAPER_ROBUST_UCB_CONSTANT, PrivateExp3,
    PrivateHedge, PrivateSum, RobustUcb, RseParams, exponential_weights, hedge_learning_rate,
};
use ldp_core::tree::AdaptiveTree;
use ldp_core::truncation::{dp_robust_ucb_level, dp_rse_epoch, ldp_rse_epoch, robust_ucb_level};
use ldp_core::{Epsilon, ParamError, TruncationLevel};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

fn eps(e: f64) -> Epsilon {
    Epsilon::new(e).unwrap()
}

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// micromath's pow/ln in the indices: relative error ≈ 2·10⁻³.
fn assert_rel(actual: f64, expected: f64, tol: f64) {
    assert!(((actual - expected) / expected).abs() < tol, "{actual} vs {expected}");
}

#[test]
fn robust_ucb_truncates_each_sample_at_its_rank_and_matches_a_hand_index() {
    let (u, v, horizon) = (10.0, 1.0, 100);
    let mut ucb =
        RobustUcb::<2>::new(HeavyTail::new(u, v).unwrap(), horizon, PAPER_ROBUST_UCB_CONSTANT).unwrap();
    // B_s = (u s / ln(T²))^{1/(1+v)}: B_1 ≈ 1.042, B_2 ≈ 1.474.
    let ln_t2 = (100.0f64 * 100.0).ln();
    assert!((robust_ucb_level(u, 1, horizon, v) - (u / ln_t2).sqrt()).abs() < 1e-12);
    for (arm, reward) in [(0, 0.5), (1, 3.0), (0, 1.2), (1, 1.0)] {
        assert_eq!(ucb.select(), arm);
        ucb.observe(arm, reward).unwrap();
    }
    // Arm 0 keeps both (0.5 ≤ B_1, 1.2 ≤ B_2); arm 1's 3.0 > B_1 becomes 0, 1.0 ≤ B_2 is kept.
    assert_eq!(ucb.mean(0), Some(0.85));
    assert_eq!(ucb.mean(1), Some(0.5));
    let bonus = 4.0 * u.sqrt() * (ln_t2 / 2.0).sqrt();
    assert_rel(ucb.index(0), 0.85 + bonus, 3e-3);
    assert_rel(ucb.index(1), 0.5 + bonus, 3e-3);
    assert_eq!(ucb.select(), 0);
    assert_eq!(ucb.counts(), [2, 2]);
}

#[test]
fn dp_robust_ucb_pulls_each_arm_once_then_follows_the_paper_index() {
    let (e, u, v, horizon) = (1.0, 2.0, 0.5, 1000);
    let tail = HeavyTail::new(u, v).unwrap();
    let mut ucb = DpRobustUcb::<3, 10>::new(eps(e), tail, horizon, PAPER_DP_UCB_CONSTANT).unwrap();
    let mut r = rng(1);
    for arm in 0..3 {
        assert_eq!(ucb.select(), arm, "rounds 1..K pull each arm once");
        ucb.observe(arm, 0.1 * arm as f64, &mut r).unwrap();
    }
    assert_eq!(ucb.counts(), [1, 1, 1]);
    assert_eq!(ucb.level(1), dp_robust_ucb_level(eps(e), u, 1, horizon, v));
    assert_eq!(ucb.max_bound(), dp_robust_ucb_level(eps(e), u, horizon, horizon, v));
    // Index at t = 4, n = 1: Ŝ/1 + 18 u^{2/3} (ln(2·4⁴) ln^{3.5} T / ε)^{1/3}.
    let log_t = (1000f64).ln();
    let bonus = 18.0 * u.powf(1.0 / 1.5) * ((2.0 * 4f64.powi(4)).ln() * log_t.powf(3.5) / e).powf(1.0 / 3.0);
    for arm in 0..3 {
        let s = ucb.private_sum(arm).unwrap();
        assert_rel(ucb.index(arm) - s, bonus, 3e-3);
    }
    let best = (0..3).max_by(|&a, &b| ucb.index(a).total_cmp(&ucb.index(b))).unwrap();
    assert_eq!(ucb.select(), best);
    assert!(ucb.epsilon_effective() < e);
}

#[test]
fn dp_robust_ucb_truncates_at_b_n_before_the_tree() {
    // With a huge ε the tree noise is negligible, so Ŝ is the truncated sum.
    let (u, v, horizon) = (1.0, 1.0, 100);
    let mut ucb = DpRobustUcb::<1, 7>::new(eps(1e9), HeavyTail::new(u, v).unwrap(), horizon, 1.0).unwrap();
    let b1 = ucb.level(1);
    let mut r = rng(2);
    ucb.observe(0, b1 * 0.5, &mut r).unwrap(); // kept
    ucb.observe(0, ucb.level(2) * 1.5, &mut r).unwrap(); // above B_2: becomes 0
    let s = ucb.private_sum(0).unwrap();
    assert!((s - b1 * 0.5).abs() < 1e-3 * b1, "Ŝ = {s}, expected {}", b1 * 0.5);
}

/// Parameters that make DP-RSE's first epoch two passes (R_1 = 2) with the paper's κ = 24:
/// u = 10⁻⁶, v = 1, ε = 1000, β = 0.1, K = 3 give ℓ = ln 120, R_1 = ⌈576ℓ·4·10⁻⁹ + 1⌉ = 2,
/// B_1 ≈ 0.0204, err_1 ≈ 4.9·10⁻⁵, threshold 12·err_1 ≈ 5.9·10⁻⁴, mean-noise scale ≈ 2·10⁻⁵.
fn small_dp_rse() -> (RseParams, DpRobustSe<3>) {
    let params =
        RseParams::new(eps(1000.0), HeavyTail::new(1e-6, 1.0).unwrap(), 0.1, PAPER_DP_RSE_KAPPA).unwrap();
    (params, DpRobustSe::<3>::new(params).unwrap())
}

#[test]
fn dp_rse_eliminates_a_clearly_bad_arm_at_the_epoch_boundary_with_the_12_err_rule() {
    let (params, mut se) = small_dp_rse();
    let schedule = dp_rse_epoch(1, 3, params.beta, params.epsilon, 1e-6, 1.0);
    assert_eq!(se.epoch(), ldp_core::truncation::dp_rse_epoch_with(24.0, 1, 3, 0.1, eps(1000.0), 1e-6, 1.0));
    assert_eq!(schedule.pulls, 2);
    assert_eq!(schedule.threshold, 12.0 * schedule.err);
    let means = [0.010, 0.0097, 0.0]; // gaps 3·10⁻⁴ (< 12·err) and 0.01 (≫ 12·err)
    let mut r = rng(3);
    for step in 0..6 {
        let arm = se.select();
        assert_eq!(arm, step % 3, "round robin");
        assert_eq!(se.active(), [true; 3], "nothing is eliminated inside an epoch");
        se.observe(arm, means[arm], &mut r).unwrap();
    }
    assert_eq!(se.active(), [true, true, false]);
    assert_eq!(se.tau(), 2);
    let release = se.last_release().unwrap();
    assert_eq!(release.tau, 1);
    assert_eq!(release.epoch, schedule);
    assert_eq!(release.eliminated, [false, false, true]);
    for (m, truth) in release.means.iter().zip(means) {
        assert!((m - truth).abs() < 2e-4, "released mean {m} vs {truth}");
    }
    // Epoch 2 runs over arms 0 and 1 only.
    assert_eq!(se.epoch(), dp_rse_epoch(2, 2, 0.1, eps(1000.0), 1e-6, 1.0));
    assert_eq!(se.select(), 0);
    se.observe(0, 0.01, &mut r).unwrap();
    assert_eq!(se.select(), 1);
}

#[test]
fn dp_rse_commits_to_the_survivor_and_pulls_it_forever() {
    let (_, mut se) = small_dp_rse();
    let means = [0.0, 0.01, 0.0];
    let mut r = rng(4);
    for _ in 0..6 {
        let arm = se.select();
        se.observe(arm, means[arm], &mut r).unwrap();
    }
    assert_eq!(se.committed(), Some(1));
    for _ in 0..10 {
        assert_eq!(se.select(), 1);
        se.observe(1, 5.0, &mut r).unwrap();
    }
}

#[test]
fn dp_rse_refuses_the_wrong_arm_and_non_finite_rewards_without_changing_anything() {
    let (_, mut se) = small_dp_rse();
    let mut r = rng(5);
    se.observe(0, 0.01, &mut r).unwrap();
    let before = format!("{se:?}");
    let passes = se.passes();
    assert_eq!(se.observe(0, 0.01, &mut r), Err(ObserveError::UnexpectedArm { expected: 1, got: 0 }));
    assert_eq!(se.observe(1, f64::NAN, &mut r), Err(ObserveError::NonFiniteReward));
    assert_eq!(se.observe(7, 0.0, &mut r), Err(ObserveError::ArmOutOfRange { arm: 7, arms: 3 }));
    assert_eq!((format!("{se:?}"), se.passes(), se.select()), (before, passes, 1));
    assert_eq!(se.sum(0).unwrap().count(), 1);
}

#[test]
fn ldp_rse_publishes_b_tau_and_eliminates_at_14_err_exactly() {
    // u = 10⁻⁶, v = 1, ε = 1, β = 0.1, K = 3: R_1 = ⌈ℓ + 10⁻⁵ℓ⌉ = 6 with ℓ = ln 240.
    let params =
        RseParams::new(eps(1.0), HeavyTail::new(1e-6, 1.0).unwrap(), 0.1, PAPER_LDP_RSE_KAPPA).unwrap();
    let mut se = LdpRobustSe::<3>::new(params);
    let schedule = ldp_rse_epoch(1, 3, 0.1, eps(1.0), 1e-6, 1.0);
    assert_eq!(se.epoch(), schedule);
    assert_eq!(schedule.pulls, 6);
    assert_eq!(schedule.threshold, 14.0 * schedule.err);
    assert_eq!(se.device_level(), schedule.level);
    let mechanism = se.device_mechanism().unwrap();
    assert_eq!(mechanism.range(), schedule.level);
    assert_eq!(mechanism.preprocess(), ldp_core::Preprocess::TruncateToZero);
    // Reports (already privatised on the device): arm 1 is 0.99·threshold below arm 0 (kept),
    // arm 2 is 1.01·threshold below (eliminated).
    let t = schedule.threshold;
    let reports = [1.0, 1.0 - 0.99 * t, 1.0 - 1.01 * t];
    for _ in 0..6 {
        for (arm, &report) in reports.iter().enumerate() {
            assert_eq!(se.select(), arm);
            se.observe(arm, report).unwrap();
        }
    }
    let release = se.last_release().unwrap();
    assert_eq!(release.eliminated, [false, false, true]);
    assert_eq!(se.active(), [true, true, false]);
    assert_eq!(se.tau(), 2);
    assert_eq!(se.epoch(), ldp_rse_epoch(2, 2, 0.1, eps(1.0), 1e-6, 1.0));
    assert_eq!(se.observe(1, 0.0), Err(ObserveError::UnexpectedArm { expected: 0, got: 1 }));
}

#[test]
fn ldp_rse_schedule_has_the_corrected_radius_and_gap_sequence() {
    // err_τ ≈ D_τ/28 with D_τ = 2^{−τ} (Alg. 4 as corrected), for large R_τ.
    for tau in 1..=4 {
        let e = ldp_rse_epoch(tau, 5, 1e-3, eps(1.0), 1.0, 1.0);
        let d = 0.5f64.powi(tau as i32);
        assert!((e.err * 28.0 / d - 1.0).abs() < 1e-3, "τ = {tau}: err {}", e.err);
        assert!(e.threshold <= d / 2.0 * (1.0 + 1e-9));
    }
}

#[test]
fn exp3_probabilities_and_update_match_a_hand_computation() {
    let (eta, gamma) = (0.5, 0.3);
    let mut exp3 = Exp3::<3>::new(Exp3Params::new(eta, gamma).unwrap());
    assert_eq!(exp3.probabilities(), [1.0 / 3.0; 3]);
    let mut r = rng(6);
    let arm = exp3.select(&mut r);
    exp3.observe(arm, 0.6).unwrap();
    // L̂_arm = 0.6 / (1/3) = 1.8; q ∝ exp(−0.5·L̂); p = 0.7 q + 0.1.
    let mut q = [1.0; 3];
    q[arm] = (-0.5f64 * 1.8).exp();
    let z: f64 = q.iter().sum();
    let p = exp3.probabilities();
    for i in 0..3 {
        assert!((p[i] - (0.7 * q[i] / z + 0.1)).abs() < 1e-12);
    }
    // Observing without a pending selection, or another arm than the one drawn, is refused
    // and changes nothing.
    assert_eq!(exp3.observe(arm, 0.1), Err(ObserveError::UnexpectedArm { expected: usize::MAX, got: arm }));
    let drawn = exp3.select(&mut r);
    let estimates = exp3.estimates();
    let other = (drawn + 1) % 3;
    assert_eq!(exp3.observe(other, 0.0), Err(ObserveError::UnexpectedArm { expected: drawn, got: other }));
    assert_eq!(exp3.estimates(), estimates);
    exp3.observe(drawn, 0.0).unwrap();
    assert_eq!(exp3.rounds(), 2);
}

#[test]
fn exp3_theorem_4_1_parameters_and_the_private_reduction() {
    let p = Exp3Params::theorem_4_1(5, 10_000, 0.0).unwrap();
    let eta = (5f64.ln() / (2.0 * 5.0 * 1e4)).sqrt();
    assert!((p.eta() - eta).abs() < 1e-15);
    assert!((p.gamma() - eta * 5.0).abs() < 1e-15);
    assert_eq!(Exp3Params::theorem_4_1(1, 10, 0.0), Err(ParamError::TooFewArms));
    assert_eq!(Exp3Params::theorem_4_1(10, 1, 0.0).unwrap().gamma(), 1.0); // √(N ln N/2T) > 1: capped
    let mut private = PrivateExp3::<5>::new(eps(0.5), 10_000).unwrap();
    assert_eq!(private.inner().params(), Exp3Params::theorem_4_1(5, 10_000, 2.0).unwrap());
    assert!((private.noise_scale() - 2.0).abs() < 1e-3);
    assert!(private.epsilon_effective() < 0.5);
    let mut r = rng(7);
    // A refused observation draws no noise and changes nothing.
    let drawn = r.get_word_pos();
    assert!(private.observe(0, 0.5, &mut r).is_err());
    assert_eq!(r.get_word_pos(), drawn, "a refused observation drew noise");
    let arm = private.select(&mut r);
    let before = private.inner().estimates();
    let drawn = r.get_word_pos();
    assert!(private.observe((arm + 1) % 5, 0.5, &mut r).is_err());
    assert_eq!(r.get_word_pos(), drawn, "a refused observation drew noise");
    assert_eq!(private.inner().estimates(), before);
    private.observe(arm, 0.5, &mut r).unwrap();
    assert_ne!(private.inner().estimates(), before);
}

#[test]
fn hedge_and_private_hedge_weights() {
    let w = exponential_weights(&[2.0, 1.0, 1.0], 1.0);
    let z = (-1.0f64).exp() + 2.0;
    assert!((w[0] - (-1.0f64).exp() / z).abs() < 1e-15 && (w[1] - 1.0 / z).abs() < 1e-15);
    assert_eq!(exponential_weights(&[f64::NAN, 0.0], 1.0), [0.5, 0.5]);
    assert_eq!(exponential_weights(&[f64::NEG_INFINITY, 0.0, f64::NEG_INFINITY], 1.0), [0.5, 0.0, 0.5]);
    assert_eq!(exponential_weights(&[1e308, -1e308], 10.0), [0.0, 1.0]);

    let horizon = 200;
    let eta = hedge_learning_rate(3, horizon).unwrap();
    let mut hedge = Hedge::<3>::new(eta).unwrap();
    let mut r = rng(8);
    // Negligible noise: private Hedge follows Hedge.
    let calibrated = PrivateHedge::<3, 8>::new(eps(0.5), horizon, eta, &mut r).unwrap();
    let depth = 8.0; // ⌊log₂ 200⌋ + 1
    assert!((calibrated.node_noise_scale() / (3.0 * depth / 0.5) - 1.0).abs() < 1e-3, "λ = N·depth/ε");
    assert!(calibrated.epsilon_effective() < 0.5);
    let mut private = PrivateHedge::<3, 8>::new(eps(1e9), horizon, eta, &mut r).unwrap();
    for t in 0..horizon {
        let losses = [0.0, 1.0, (t % 2) as f64];
        hedge.observe(&losses).unwrap();
        private.observe(&losses, &mut r).unwrap();
    }
    let (a, b) = (hedge.weights(), private.weights());
    for i in 0..3 {
        assert!((a[i] - b[i]).abs() < 1e-3, "{a:?} vs {b:?}");
    }
    assert!(a[0] > 0.99);
    // Past the horizon, and with a non-finite loss, nothing changes.
    let before = private.noisy_cumulative();
    assert!(matches!(private.observe(&[0.0; 3], &mut r), Err(ObserveError::Tree(_))));
    assert_eq!(private.observe(&[0.0, f64::INFINITY, 0.0], &mut r), Err(ObserveError::NonFiniteReward));
    assert_eq!(private.noisy_cumulative(), before);
    assert_eq!(private.rounds(), horizon);
}

#[test]
fn private_hedge_releases_carry_exactly_depth_noise_terms() {
    // With zero losses (shifted to −½ each round), L̃_t + t/2 is pure noise: its variance must
    // be depth·2λ² for every t (Alg. 2's padding), not popcount(t)·2λ².
    let (horizon, e) = (15u64, 1.0);
    let mut r = rng(9);
    let trials = 4000;
    let mut sum_sq = [0.0f64; 3]; // t = 1 (popcount 1), 7 (3), 8 (1)
    let mut scale = 0.0;
    for _ in 0..trials {
        let mut h = PrivateHedge::<1, 4>::new(eps(e), horizon, 0.1, &mut r).unwrap();
        scale = h.node_noise_scale();
        for t in 1..=8u64 {
            h.observe(&[0.0], &mut r).unwrap();
            let slot = match t {
                1 => 0,
                7 => 1,
                8 => 2,
                _ => continue,
            };
            let noise = h.noisy_cumulative()[0] + 0.5 * t as f64;
            sum_sq[slot] += noise * noise;
        }
    }
    let expected = 4.0 * 2.0 * scale * scale; // depth(15) = 4
    for (slot, s) in sum_sq.iter().enumerate() {
        let var = s / trials as f64;
        // The sample variance of a sum of Laplaces: relative sd ≈ √(kurtosis/n) < 0.04.
        assert!((var / expected - 1.0).abs() < 0.2, "slot {slot}: variance {var} vs {expected}");
    }
}

#[test]
fn invalid_parameters_get_their_own_errors() {
    assert_eq!(HeavyTail::new(1.0, 0.0), Err(ParamError::MomentOrderInvalid));
    assert_eq!(HeavyTail::new(f64::NAN, 0.5), Err(ParamError::MomentBoundInvalid));
    let tail = HeavyTail::new(1.0, 1.0).unwrap();
    assert_eq!(RseParams::new(eps(1.0), tail, 0.0, 2.0), Err(ParamError::ConfidenceOutOfRange));
    assert_eq!(RseParams::new(eps(1.0), tail, 0.1, -2.0), Err(ParamError::ConstantInvalid));
    assert_eq!(RobustUcb::<2>::new(tail, 0, 4.0).err(), Some(ParamError::HorizonZero));
    assert_eq!(
        DpRobustUcb::<2, 4>::new(eps(1.0), tail, 16, 1.0).err(),
        Some(ParamError::HorizonAboveCapacity)
    );
    assert_eq!(
        DpRobustUcb::<2, 5>::new(eps(1.0), tail, 16, f64::NAN).err(),
        Some(ParamError::ConstantInvalid)
    );
    assert_eq!(Exp3Params::new(0.0, 0.1), Err(ParamError::LearningRateInvalid));
    assert_eq!(Hedge::<2>::new(f64::INFINITY).err(), Some(ParamError::LearningRateInvalid));
    assert!(PrivateHedge::<2, 3>::new(eps(1.0), 8, 0.1, &mut rng(1)).is_err());
    assert!(PrivateSum::new(TruncationLevel::new(1e20).unwrap(), eps(1.0)).is_err());
    assert_eq!(ParamError::TooFewArms.to_string(), "too few arms or experts for this policy: use at least 2");
}

#[test]
fn every_policy_refuses_non_finite_rewards_and_unknown_arms() {
    let tail = HeavyTail::new(1.0, 1.0).unwrap();
    let mut r = rng(10);
    let mut ucb = RobustUcb::<2>::new(tail, 10, 4.0).unwrap();
    assert_eq!(ucb.observe(0, f64::NAN), Err(ObserveError::NonFiniteReward));
    assert_eq!(ucb.observe(2, 0.0), Err(ObserveError::ArmOutOfRange { arm: 2, arms: 2 }));
    assert_eq!(ucb.counts(), [0, 0]);
    let mut dp = DpRobustUcb::<2, 4>::new(eps(1.0), tail, 10, 1.0).unwrap();
    assert_eq!(dp.observe(0, f64::INFINITY, &mut r), Err(ObserveError::NonFiniteReward));
    assert_eq!(dp.observe(5, 0.0, &mut r), Err(ObserveError::ArmOutOfRange { arm: 5, arms: 2 }));
    assert_eq!((dp.counts(), dp.rounds()), ([0, 0], 0));
    // An arm pulled more than T times: the tree refuses and nothing changes.
    let mut one = DpRobustUcb::<1, 2>::new(eps(1.0), tail, 2, 1.0).unwrap();
    one.observe(0, 0.1, &mut r).unwrap();
    one.observe(0, 0.1, &mut r).unwrap();
    assert!(matches!(one.observe(0, 0.1, &mut r), Err(ObserveError::Tree(_))));
    assert_eq!(one.counts(), [2]);
    let mut ldp = LdpRobustSe::<2>::new(RseParams::new(eps(1.0), tail, 0.1, 6.0).unwrap());
    assert_eq!(ldp.observe(0, f64::NAN), Err(ObserveError::NonFiniteReward));
    assert_eq!(ldp.passes(), 0);
    assert_eq!(ldp.select(), 0, "a refused report moved the round robin on");
}

#[test]
fn memory_is_fixed_by_the_type_not_by_the_horizon() {
    // Only the trees depend on L, and only through their p-sums (16 bytes per level).
    let per_level = |l1: usize, l0: usize, s1: usize, s0: usize| (s1 - s0) / (l1 - l0);
    let tree_per_level = per_level(20, 10, size_of::<AdaptiveTree<20>>(), size_of::<AdaptiveTree<10>>());
    assert_eq!(tree_per_level, 16);
    assert_eq!(
        size_of::<DpRobustUcb<5, 20>>() - size_of::<DpRobustUcb<5, 10>>(),
        5 * (size_of::<AdaptiveTree<20>>() - size_of::<AdaptiveTree<10>>())
    );
    // K arms of DP-RUCB for T < 2^20 fit in a few kilobytes; the SE machines in < 1 KiB.
    assert!(size_of::<DpRobustUcb<5, 20>>() < 5 * 1024, "{}", size_of::<DpRobustUcb<5, 20>>());
    assert!(size_of::<DpRobustSe<5>>() < 1024, "{}", size_of::<DpRobustSe<5>>());
    assert!(size_of::<LdpRobustSe<5>>() < 1024, "{}", size_of::<LdpRobustSe<5>>());
    assert!(size_of::<Exp3<5>>() < 128);
    assert!(size_of::<PrivateHedge<10, 20>>() < 4 * 1024);
    // The same type serves every horizon it can hold.
    let tail = HeavyTail::new(1.0, 0.5).unwrap();
    for horizon in [1, 10, 1000, (1 << 20) - 1] {
        assert!(DpRobustUcb::<5, 20>::new(eps(1.0), tail, horizon, 1.0).is_ok(), "T = {horizon}");
    }
}

#[test]
fn dp_rse_refuses_at_construction_an_epsilon_that_a_later_epoch_could_not_use() {
    // A sum's grid has M ∈ [2^16, 2^17] steps, and the noise scale 2M/ε must fit the sampler:
    // ε > M·2^-37. For ε ∈ (2^-21, 2^-20] a level with M = 2^16 works but one with M near 2^17
    // does not, and a later epoch may choose such a level after its releases. The learner must
    // refuse before releasing anything.
    let tail = HeavyTail::new(1.0, 1.0).unwrap();
    for e in [5e-7, 7e-7, 9.5e-7] {
        assert!(PrivateSum::new(TruncationLevel::new(1.0).unwrap(), eps(e)).is_ok(), "M = 2^16 fits at {e}");
        assert_eq!(
            PrivateSum::new(TruncationLevel::new(1.999).unwrap(), eps(e)).map(|_| ()),
            Err(ParamError::EpsilonTooSmall),
            "M = ⌈1.999·2^16⌉ does not fit at {e}"
        );
        let params = RseParams::new(eps(e), tail, 0.01, PAPER_DP_RSE_KAPPA).unwrap();
        assert_eq!(DpRobustSe::<3>::new(params).map(|_| ()), Err(ParamError::EpsilonTooSmall), "ε = {e}");
    }
    // Just above 2^-20 every level of the mechanism's range is usable.
    let e = eps(9.6e-7);
    assert!(DpRobustSe::<3>::new(RseParams::new(e, tail, 0.01, PAPER_DP_RSE_KAPPA).unwrap()).is_ok());
    for exponent in -40..40 {
        for mantissa in [1.0, 1.25, 1.5, 1.75, 1.999, 2.0 - 2f64.powi(-19), 2.0 - 2f64.powi(-40)] {
            let level = mantissa * 2f64.powi(exponent);
            let sum = PrivateSum::new(TruncationLevel::new(level).unwrap(), e).unwrap();
            assert!(sum.max_index() <= 1 << 17, "level {level}: M = {}", sum.max_index());
        }
    }
}

#[test]
fn ldp_rse_refuses_a_report_larger_than_the_device_can_release() {
    // Finite reports far beyond the mechanism's range would make the epoch sums overflow to
    // ±∞; they cannot come from the device and are refused, changing nothing.
    let params =
        RseParams::new(eps(1.0), HeavyTail::new(1e-6, 1.0).unwrap(), 0.1, PAPER_LDP_RSE_KAPPA).unwrap();
    let mut se = LdpRobustSe::<3>::new(params);
    let largest = se.device_mechanism().unwrap().max_release();
    assert!(largest.is_finite() && largest > 1e6, "{largest}");
    assert_eq!(se.observe(0, f64::MAX), Err(ObserveError::ReportOutOfRange));
    assert_eq!(se.observe(0, -largest * 2.0), Err(ObserveError::ReportOutOfRange));
    assert_eq!((se.select(), se.passes()), (0, 0), "a refusal changes nothing");
    // The largest report the device can send is accepted, and a whole epoch of them stays finite.
    for _ in 0..se.epoch().pulls {
        for arm in 0..3 {
            se.observe(arm, if arm == 0 { largest } else { -largest }).unwrap();
        }
    }
    let release = se.last_release().unwrap();
    assert!(release.means.iter().all(|m| m.is_finite()), "{:?}", release.means);
    assert_eq!(release.eliminated, [false, true, true]);
}
