//! The K-armed learners under the calibrated rule: shift invariance (a constant added to every
//! reward changes no choice), successive elimination that leaves round robin within a few
//! thousand pulls, levels that depend on public values only, refusals that change nothing.

use ldp_core::bandit::{
    CalibratedDpRobustSe, CalibratedDpRobustUcb, CalibratedLdpRobustSe, CalibratedRobustUcb, Noise,
    ObserveError, Rule,
};
use ldp_core::{Epsilon, LaplaceMechanism, ParamError, TruncationLevel};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

fn eps(e: f64) -> Epsilon {
    Epsilon::new(e).unwrap()
}

/// A reward of arm a: its mean plus k/1024 for k uniform in −128..=128, or (heavy) plus an
/// occasional ±k/16 outlier; dyadic, so that adding a dyadic constant is exact.
struct World {
    rng: ChaCha20Rng,
    means: Vec<f64>,
    heavy: bool,
}

impl World {
    fn new(seed: u64, means: &[f64], heavy: bool) -> Self {
        Self { rng: ChaCha20Rng::seed_from_u64(seed), means: means.to_vec(), heavy }
    }

    fn draw(&mut self, arm: usize) -> f64 {
        let k = (self.rng.next_u32() % 257) as f64 - 128.0;
        let outlier = if self.heavy && self.rng.next_u32().is_multiple_of(50) { k / 16.0 } else { 0.0 };
        self.means[arm] + k / 1024.0 + outlier
    }
}

const MEANS: [f64; 4] = [0.25, 0.5, 0.625, 0.375];
/// R of [`World`] without outliers.
const R: f64 = 0.125;

fn bounded_rule(b: f64) -> Rule {
    Rule::new(b, Noise::Bounded { r: R, c: R * R / 3.0 }, 4, 0.5).unwrap()
}

fn heavy_rule(b: f64) -> Rule {
    Rule::new(b, Noise::Moment { c: 0.2, v: 0.5 }, 4, 0.5).unwrap()
}

/// The arms `learner` chooses (`select`) over `rounds` rounds, each told (`tell`) the world's
/// draw for it shifted by `shift`.
fn play<L>(
    learner: &mut L,
    select: fn(&L) -> usize,
    (world, shift): (&mut World, f64),
    rounds: usize,
    mut tell: impl FnMut(&mut L, usize, f64),
) -> Vec<usize> {
    (0..rounds)
        .map(|_| {
            let arm = select(learner);
            tell(learner, arm, world.draw(arm) + shift);
            arm
        })
        .collect()
}

/// The arms Robust-UCB chooses over `rounds` rounds with every reward shifted by `shift`.
fn robust_ucb_choices(rule: Rule, heavy: bool, shift: f64, rounds: usize) -> Vec<usize> {
    let mut ucb = CalibratedRobustUcb::<4>::new(rule, rounds as u64).unwrap();
    let mut world = World::new(11, &MEANS, heavy);
    play(&mut ucb, CalibratedRobustUcb::select, (&mut world, shift), rounds, |ucb, arm, reward| {
        ucb.observe(arm, reward).unwrap()
    })
}

#[test]
fn calibrated_robust_ucb_is_shift_invariant() {
    for (rule, heavy) in [(bounded_rule(1.0), false), (heavy_rule(1.0), true)] {
        let base = robust_ucb_choices(rule, heavy, 0.0, 3000);
        // Any shift: the rewards near 1000 are far outside the public range [−B, B].
        for shift in [1000.0, -7.5, 10.25] {
            let shifted = robust_ucb_choices(rule, heavy, shift, 3000);
            assert_eq!(first_difference(&shifted, &base), None, "shift {shift}, heavy {heavy}");
        }
        // It learns: the best arm (2) is played most.
        let best = base.iter().filter(|&&a| a == 2).count();
        assert!(best > 1500, "{best} of 3000 on the best arm (heavy {heavy})");
    }
}

/// The choices of the calibrated DP-RSE over `rounds` rounds, rewards shifted by `shift`.
fn dp_rse_choices(rule: Rule, heavy: bool, shift: f64, rounds: usize) -> Vec<usize> {
    let mut se = CalibratedDpRobustSe::<4>::new(rule, eps(1.0)).unwrap();
    let (mut world, mut noise) = (World::new(5, &MEANS, heavy), ChaCha20Rng::seed_from_u64(6));
    play(&mut se, CalibratedDpRobustSe::select, (&mut world, shift), rounds, |se, arm, reward| {
        se.observe(arm, reward, &mut noise).unwrap()
    })
}

/// The choices of the calibrated DP-RUCB.
fn dp_rucb_choices(rule: Rule, heavy: bool, shift: f64, rounds: usize) -> Vec<usize> {
    let mut ucb = CalibratedDpRobustUcb::<4, 16>::new(rule, eps(1.0), rounds as u64).unwrap();
    let (mut world, mut noise) = (World::new(7, &MEANS, heavy), ChaCha20Rng::seed_from_u64(8));
    play(&mut ucb, CalibratedDpRobustUcb::select, (&mut world, shift), rounds, |ucb, arm, reward| {
        ucb.observe(arm, reward, &mut noise).unwrap()
    })
}

/// The choices of the calibrated LDP-RSE with a device that truncates at the level sent and
/// adds its Laplace noise (the production mechanism), rewards shifted by `shift`.
/// (ε = 8: at ε = 1 the device's noise for B = 4 needs ≈ 10⁶ rounds to separate these arms.)
fn ldp_rse_choices(rule: Rule, heavy: bool, shift: f64, rounds: usize) -> Vec<usize> {
    let mut se = CalibratedLdpRobustSe::<4>::new(rule, eps(8.0));
    let (mut world, mut device) = (World::new(9, &MEANS, heavy), ChaCha20Rng::seed_from_u64(10));
    play(&mut se, CalibratedLdpRobustSe::select, (&mut world, shift), rounds, |se, arm, reward| {
        // The device's mechanism: truncation at the level the learner sends, Lap(2b/ε).
        let m =
            LaplaceMechanism::truncated(eps(8.0), TruncationLevel::new(se.device_level()).unwrap()).unwrap();
        let report = m.release(reward, &mut device).unwrap().value();
        se.observe(arm, report).unwrap();
    })
}

/// The first round at which two choice sequences differ (`None`: identical).
fn first_difference(a: &[usize], b: &[usize]) -> Option<usize> {
    (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i))
}

#[test]
fn calibrated_central_and_local_learners_are_shift_invariant_within_the_public_range() {
    // B = 4: the means (≤ 0.625) shifted by up to 2.5 stay within [−B, B], the rewards within
    // B + R, so the levels (B + R around the public centre 0, then R plus the centre's radius
    // around a released centre) cut nothing. With heavy tails the clamp around 0 cuts noise at
    // a point that moves with the shift, so only Robust-UCB (whose centres are its own
    // rewards) is invariant there.
    type Choices = fn(Rule, bool, f64, usize) -> Vec<usize>;
    let learners: [(&str, Choices, usize); 3] = [
        ("DP-RSE", dp_rse_choices, 20_000),
        ("DP-RUCB", dp_rucb_choices, 50_000),
        ("LDP-RSE", ldp_rse_choices, 20_000),
    ];
    for (name, choices, rounds) in learners {
        let rule = bounded_rule(4.0);
        let base = choices(rule, false, 0.0, rounds);
        let best = base.iter().filter(|&&a| a == 2).count();
        assert!(best > rounds / 3, "{name}: {best} of {rounds} rounds on the best arm");
        for shift in [2.5, -3.0, 0.75] {
            let shifted = choices(rule, false, shift, rounds);
            assert_eq!(first_difference(&shifted, &base), None, "{name}, shift {shift}");
        }
    }
}

#[test]
fn calibrated_dp_rse_leaves_round_robin_and_keeps_the_best_arm() {
    let rule = bounded_rule(1.0);
    let mut se = CalibratedDpRobustSe::<4>::new(rule, eps(1.0)).unwrap();
    let (mut world, mut noise) = (World::new(1, &MEANS, false), ChaCha20Rng::seed_from_u64(2));
    let mut first_removal = None;
    for t in 0..20_000 {
        let arm = se.select();
        se.observe(arm, world.draw(arm), &mut noise).unwrap();
        if first_removal.is_none() && se.active().iter().any(|a| !a) {
            first_removal = Some(t);
        }
    }
    // The paper's schedule at κ = 24 needs ≈ 10⁷ pulls for its first epoch here; the gaps are
    // ≥ 0.125 and the noise of the centred sums is small.
    let t = first_removal.expect("an arm is eliminated within 20,000 rounds");
    assert!(t < 5000, "first elimination at round {t}");
    assert!(se.active()[2], "the best arm survives");
    assert_eq!(se.committed(), Some(2));
    // After the first estimates the centre follows the arm's mean and the level covers R plus
    // the centre's radius, well below B + R.
    assert!(se.level(2) < 1.0 + R);
}

#[test]
fn calibrated_ldp_rse_leaves_round_robin_and_sends_a_level_that_covers_the_signal() {
    let rule = bounded_rule(1.0);
    let mut se = CalibratedLdpRobustSe::<4>::new(rule, eps(2.0));
    let (mut world, mut device) = (World::new(3, &MEANS, false), ChaCha20Rng::seed_from_u64(4));
    let mut first_removal = None;
    for t in 0..200_000 {
        // Bounded noise: the level is B + R in every epoch, a public constant.
        assert_eq!(se.device_level(), 1.0 + R);
        let arm = se.select();
        let report = se.device_mechanism().unwrap().release(world.draw(arm), &mut device).unwrap().value();
        se.observe(arm, report).unwrap();
        if first_removal.is_none() && se.active().iter().any(|a| !a) {
            first_removal = Some(t);
        }
    }
    let t = first_removal.expect("an arm is eliminated within 200,000 rounds");
    assert!(t < 100_000, "first elimination at round {t}");
    assert!(se.active()[2], "the best arm survives");
}

#[test]
fn calibrated_ldp_levels_are_public_values_only() {
    // Heavy tails: each epoch's level is B + L(n_τ, z_t) at the round t the epoch starts, and
    // it grows with the epoch; the reports never enter it.
    let rule = heavy_rule(1.0);
    let estimator = ldp_core::bandit::Estimator::Local { epsilon: 1.0 };
    let mut se = CalibratedLdpRobustSe::<4>::new(rule, eps(1.0));
    let (mut world, mut device) = (World::new(2, &MEANS, true), ChaCha20Rng::seed_from_u64(9));
    let mut levels = Vec::new();
    for t in 0..4000u64 {
        if levels.len() < se.tau() as usize {
            let expected = 1.0 + rule.noise_level(estimator, se.epoch_pulls(), rule.z(t.max(1)));
            assert!((se.device_level() - expected).abs() <= 1e-12 * expected, "epoch {}", se.tau());
            levels.push(se.device_level());
        }
        let arm = se.select();
        let report = se.device_mechanism().unwrap().release(world.draw(arm), &mut device).unwrap().value();
        se.observe(arm, report).unwrap();
    }
    assert!(levels.len() >= 5);
    assert!(levels.windows(2).all(|w| w[1] > w[0]), "{levels:?}");
}

#[test]
fn calibrated_ucbs_learn_and_refusals_change_nothing() {
    let rule = bounded_rule(1.0);
    let mut ucb = CalibratedDpRobustUcb::<4, 16>::new(rule, eps(1.0), 20_000).unwrap();
    let (mut world, mut noise) = (World::new(12, &MEANS, false), ChaCha20Rng::seed_from_u64(13));
    for _ in 0..20_000 {
        let arm = ucb.select();
        ucb.observe(arm, world.draw(arm), &mut noise).unwrap();
    }
    assert!(ucb.counts()[2] > 10_000, "{:?}", ucb.counts());
    assert!(ucb.epsilon_effective() < 1.0);
    // Bounded noise: every level is B + R.
    assert_eq!(ucb.level(1), 1.0 + R);
    assert_eq!(ucb.level(20_000), 1.0 + R);

    let mut robust = CalibratedRobustUcb::<4>::new(rule, 100).unwrap();
    let before = robust.index(0);
    assert_eq!(robust.observe(0, f64::NAN), Err(ObserveError::NonFiniteReward));
    assert_eq!(robust.observe(4, 1.0), Err(ObserveError::ArmOutOfRange { arm: 4, arms: 4 }));
    assert_eq!(robust.index(0), before);
    assert_eq!(robust.counts(), [0; 4]);

    let mut se = CalibratedLdpRobustSe::<4>::new(rule, eps(1.0));
    assert_eq!(se.observe(1, 0.5), Err(ObserveError::UnexpectedArm { expected: 0, got: 1 }));
    let mut dp = CalibratedDpRobustSe::<4>::new(rule, eps(1.0)).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(0);
    assert_eq!(dp.observe(0, f64::INFINITY, &mut rng), Err(ObserveError::NonFiniteReward));
    assert_eq!(dp.select(), 0);
    assert_eq!(dp.tau(), 1);
}

#[test]
fn calibrated_dp_rse_refuses_at_construction_an_epsilon_that_a_later_level_could_not_use() {
    // Epoch 1's level B + R = 1.125 has a sum grid of M = 73,728 steps, which ε = 7·10⁻⁷ can
    // noise (ε > M·2^-37); a later level set from the released estimates (radius + R) may have
    // M up to 2^17, which it cannot. Such an ε must be refused before the first release, not
    // at an epoch boundary after releasing.
    let rule = bounded_rule(1.0);
    for e in [5e-7, 7e-7, 9.5e-7] {
        assert_eq!(
            CalibratedDpRobustSe::<4>::new(rule, eps(e)).map(|_| ()),
            Err(ParamError::EpsilonTooSmall)
        );
    }
    assert!(CalibratedDpRobustSe::<4>::new(rule, eps(9.6e-7)).is_ok());
}

#[test]
fn calibrated_ldp_rse_refuses_a_report_larger_than_the_device_can_release() {
    let rule = bounded_rule(1.0);
    let mut se = CalibratedLdpRobustSe::<4>::new(rule, eps(1.0));
    let largest = se.device_mechanism().unwrap().max_release();
    assert_eq!(se.observe(0, 1e300), Err(ObserveError::ReportOutOfRange));
    assert_eq!(se.observe(0, f64::MIN), Err(ObserveError::ReportOutOfRange));
    assert_eq!((se.select(), se.tau()), (0, 1), "a refusal changes nothing");
    // Epochs of the largest reports the device can send keep every estimate finite.
    for _ in 0..12 {
        let arm = se.select();
        se.observe(arm, if arm == 2 { largest } else { -largest }).unwrap();
    }
    for arm in 0..4 {
        let (mean, sd) = se.estimate(arm).unwrap();
        assert!(mean.is_finite() && sd.is_finite(), "arm {arm}: {mean} ± {sd}");
    }
    assert_eq!(se.committed(), Some(2));
}

#[test]
fn calibrated_robust_ucb_sheds_its_warm_up_rewards_variance() {
    // Seed 004's S1 at v = ½ (c = 2^v(u + B^{1+v}), u = 5.6, B = 0.9), K = 5, T = 10⁵. The first
    // rewards after a one-reward centre are clamped at its Markov radius (~4·10⁸), so their
    // variance bounds c·b^{1−v} are huge. The radius after m rewards must approach the one of
    // m rewards each clamped at the noise level L_i alone, √(Σ c·L_i^{1−v})/m: a pooled sum kept
    // the warm-up's bounds (2.5× that at m = 1000, 14× at m = 64).
    let (u, v, b, horizon): (f64, f64, f64, u64) = (5.6, 0.5, 0.9, 100_000);
    let c = 2f64.powf(v) * (u + b.powf(1.0 + v));
    let rule = Rule::new(b, Noise::Moment { c, v }, 5, 0.5).unwrap();
    let z_horizon = rule.z(horizon);
    let mut ucb = CalibratedRobustUcb::<5>::new(rule, horizon).unwrap();
    let mut world = World::new(21, &[0.9, 0.7, 0.5, 0.3, 0.1], true);
    let mut ideal = 0.0;
    for m in 1..=1000u64 {
        if m == 1 {
            ucb.observe(0, world.draw(0)).unwrap(); // the first centre, not in the estimate
        }
        ucb.observe(0, world.draw(0)).unwrap();
        let level = rule.noise_level(ldp_core::bandit::Estimator::Raw, m, z_horizon);
        ideal += rule.sample_variance(level);
        let rounds = m + 1;
        let sd = (ucb.index(0) - ucb.mean(0).unwrap()) / (0.5 * rule.z(rounds + 1));
        let ideal_sd = ideal.sqrt() / m as f64;
        if m == 64 {
            assert!(sd < 2.0 * ideal_sd, "m = 64: sd {sd} against {ideal_sd}");
        }
        if m == 1000 {
            assert!(sd < 1.2 * ideal_sd, "m = 1000: sd {sd} against {ideal_sd}");
        }
    }
}

/// Noiseless rewards (a variance bound of 0, or one whose c/n underflows): Robust-UCB learns
/// the means exactly and plays the best arm (after the inverse-variance blocks it played the
/// worst: every block was dropped as weightless; found by review).
#[test]
fn calibrated_robust_ucb_learns_noiseless_rewards() {
    for (r, c) in [(0.0, 0.0), (0.5, 0.0), (0.5, 1e-310)] {
        let rule = Rule::new(1.0, Noise::Bounded { r, c }, 3, 0.5).unwrap();
        let mut ucb = CalibratedRobustUcb::<3>::new(rule, 1000).unwrap();
        let rewards = [0.1, 0.9, 0.5];
        let mut counts = [0u64; 3];
        for _ in 0..300 {
            let a = ucb.select();
            counts[a] += 1;
            ucb.observe(a, rewards[a]).unwrap();
        }
        assert_eq!(ucb.mean(1), Some(0.9), "r = {r}, c = {c}");
        assert!(counts[1] >= 290, "r = {r}, c = {c}: {counts:?}");
    }
}
