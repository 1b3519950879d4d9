//! A K-armed learner built `with_arms(k)` at capacity 64 behaves exactly as the learner of
//! capacity K = k: the same arm every round, the same refusals, the same public state, and the
//! same random draws (counted on the generator), for every learner type, several k and random
//! rewards. An arm past k selected, or noise drawn for one (a release, a tree node), fails here.

use ldp_core::bandit::{
    CalibratedDpRobustSe, CalibratedDpRobustUcb, CalibratedLdpRobustSe, CalibratedRobustUcb, DpRobustSe,
    DpRobustUcb, EpochRelease, Exp3, Exp3Params, HeavyTail, LdpRobustSe, Noise, ObserveError, PrivateExp3,
    RobustUcb, RseParams, Rule,
};
use ldp_core::{Epsilon, ParamError};
use proptest::prelude::*;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::common::Counting;

/// The capacity the host's adapters use (`ldp_learn::bandit::policies::MAX_ARMS`).
const CAP: usize = 64;
/// Tree levels of the DP-RUCB learners: horizons up to 1023.
const LEVELS: usize = 10;
const ROUNDS: usize = 400;

/// One learner driven the same way whatever its type: `select`, `observe` (with the generator
/// for the central-DP ones), the level a device must truncate at (LDP), and the bits of its
/// public state for arms `0..=k` (arm k is one past the last played).
trait Learner {
    fn select(&mut self, rng: &mut Counting) -> usize;
    fn observe(&mut self, arm: usize, reward: f64, rng: &mut Counting) -> Result<(), ObserveError>;
    fn level(&self) -> Option<f64> {
        None
    }
    fn state(&self, k: usize) -> Vec<u64>;
}

fn bits(x: f64) -> u64 {
    x.to_bits()
}

fn opt_bits(x: Option<f64>) -> u64 {
    x.map_or(u64::MAX - 1, f64::to_bits)
}

/// [`Learner::select`] and [`Learner::observe`] of the core learner `$t`: its own `select`, and
/// its own `observe`, given the generator (`rng`, the central-DP learners) or not.
macro_rules! select_and_observe {
    ($t:ident) => {
        fn select(&mut self, _: &mut Counting) -> usize {
            $t::select(self)
        }
        fn observe(&mut self, arm: usize, reward: f64, _: &mut Counting) -> Result<(), ObserveError> {
            $t::observe(self, arm, reward)
        }
    };
    ($t:ident, rng) => {
        fn select(&mut self, _: &mut Counting) -> usize {
            $t::select(self)
        }
        fn observe(&mut self, arm: usize, reward: f64, rng: &mut Counting) -> Result<(), ObserveError> {
            $t::observe(self, arm, reward, rng)
        }
    };
}

impl<const K: usize> Learner for RobustUcb<K> {
    select_and_observe!(RobustUcb);
    fn state(&self, k: usize) -> Vec<u64> {
        (0..=k)
            .flat_map(|a| [bits(self.index(a)), opt_bits(self.mean(a)), *self.counts().get(a).unwrap_or(&0)])
            .collect()
    }
}

impl<const K: usize, const L: usize> Learner for DpRobustUcb<K, L> {
    select_and_observe!(DpRobustUcb, rng);
    fn state(&self, k: usize) -> Vec<u64> {
        let mut s: Vec<u64> =
            (0..=k).flat_map(|a| [bits(self.index(a)), opt_bits(self.private_sum(a))]).collect();
        s.extend([self.rounds(), bits(self.epsilon_effective())]);
        s
    }
}

impl<const K: usize, const L: usize> Learner for CalibratedDpRobustUcb<K, L> {
    select_and_observe!(CalibratedDpRobustUcb, rng);
    fn state(&self, k: usize) -> Vec<u64> {
        let mut s: Vec<u64> =
            (0..=k).flat_map(|a| [bits(self.index(a)), opt_bits(self.private_sum(a))]).collect();
        s.push(bits(self.epsilon_effective()));
        s
    }
}

impl<const K: usize> Learner for CalibratedRobustUcb<K> {
    select_and_observe!(CalibratedRobustUcb);
    fn state(&self, k: usize) -> Vec<u64> {
        (0..=k)
            .flat_map(|a| [bits(self.index(a)), opt_bits(self.mean(a)), opt_bits(self.centre(a))])
            .collect()
    }
}

/// The public schedule of an epoch of the paper's elimination learners (R_τ, B_τ, err_τ,
/// threshold): computed from |S|, so a formula left on the capacity shows here.
fn epoch_bits(e: ldp_core::truncation::RseEpoch) -> [u64; 4] {
    [e.pulls, bits(e.level), bits(e.err), bits(e.threshold)]
}

/// The state both elimination learners of the paper show.
fn active_bits(active: &[bool], k: usize) -> Vec<u64> {
    // Past k nothing is ever active; the capacity-k learner has nothing there.
    assert!(active[k.min(active.len())..].iter().all(|&a| !a), "an arm past {k} is active");
    active[..k].iter().map(|&a| u64::from(a)).collect()
}

/// The arm an elimination learner of the paper committed to, and its last release's means and
/// arms removed.
fn release_bits<const K: usize>(
    committed: Option<usize>,
    last: Option<EpochRelease<K>>,
    k: usize,
) -> Vec<u64> {
    let mut s: Vec<u64> = committed.map(|a| a as u64).into_iter().collect();
    if let Some(last) = last {
        s.extend(last.means[..k].iter().map(|&m| bits(m)));
        s.extend(active_bits(&last.eliminated, k));
    }
    s
}

impl<const K: usize> Learner for DpRobustSe<K> {
    select_and_observe!(DpRobustSe, rng);
    fn state(&self, k: usize) -> Vec<u64> {
        let mut s = active_bits(&self.active(), k);
        s.extend([u64::from(self.tau()), self.passes(), bits(self.epsilon_effective())]);
        s.extend(epoch_bits(self.epoch()));
        // The audit accessor: an accumulator for the played arms only, at the epoch's level.
        s.extend((0..=k).flat_map(|a| match self.sum(a) {
            Some(sum) => [1, bits(sum.level()), bits(sum.noise_scale()), sum.count()],
            None => [0; 4],
        }));
        s.extend(release_bits(self.committed(), self.last_release(), k));
        s
    }
}

impl<const K: usize> Learner for LdpRobustSe<K> {
    select_and_observe!(LdpRobustSe);
    fn level(&self) -> Option<f64> {
        Some(self.device_level())
    }
    fn state(&self, k: usize) -> Vec<u64> {
        let mut s = active_bits(&self.active(), k);
        s.extend([u64::from(self.tau()), self.passes(), bits(self.device_level())]);
        s.extend(epoch_bits(self.epoch()));
        s.extend(release_bits(self.committed(), self.last_release(), k));
        s
    }
}

impl<const K: usize> Learner for CalibratedDpRobustSe<K> {
    select_and_observe!(CalibratedDpRobustSe, rng);
    fn state(&self, k: usize) -> Vec<u64> {
        let mut s = active_bits(&self.active(), k);
        s.extend((0..=k).flat_map(|a| {
            let (m, sd) = self.estimate(a).unwrap_or((-1.0, -1.0));
            [bits(m), bits(sd), bits(self.level(a)), bits(self.centre(a))]
        }));
        s.extend([u64::from(self.tau()), self.epoch_pulls(), bits(self.epsilon_effective())]);
        s.extend(self.committed().map(|a| a as u64));
        s
    }
}

impl<const K: usize> Learner for CalibratedLdpRobustSe<K> {
    select_and_observe!(CalibratedLdpRobustSe);
    fn level(&self) -> Option<f64> {
        Some(self.device_level())
    }
    fn state(&self, k: usize) -> Vec<u64> {
        let mut s = active_bits(&self.active(), k);
        s.extend((0..=k).flat_map(|a| {
            let (m, sd) = self.estimate(a).unwrap_or((-1.0, -1.0));
            [bits(m), bits(sd)]
        }));
        s.extend([u64::from(self.tau()), self.epoch_pulls(), bits(self.device_level())]);
        s.extend(self.committed().map(|a| a as u64));
        s
    }
}

impl<const K: usize> Learner for Exp3<K> {
    fn select(&mut self, rng: &mut Counting) -> usize {
        Exp3::select(self, rng)
    }
    fn observe(&mut self, arm: usize, reward: f64, _: &mut Counting) -> Result<(), ObserveError> {
        Exp3::observe(self, arm, (1.0 - reward).clamp(0.0, 1.0))
    }
    fn state(&self, k: usize) -> Vec<u64> {
        let (p, l) = (self.probabilities(), self.estimates());
        assert!(p[k.min(K)..].iter().chain(&l[k.min(K)..]).all(|&x| x == 0.0), "an arm past {k} has weight");
        p[..k].iter().chain(&l[..k]).map(|&x| bits(x)).chain([self.rounds()]).collect()
    }
}

impl<const K: usize> Learner for PrivateExp3<K> {
    fn select(&mut self, rng: &mut Counting) -> usize {
        PrivateExp3::select(self, rng)
    }
    fn observe(&mut self, arm: usize, reward: f64, rng: &mut Counting) -> Result<(), ObserveError> {
        PrivateExp3::observe(self, arm, (1.0 - reward).clamp(0.0, 1.0), rng)
    }
    fn state(&self, k: usize) -> Vec<u64> {
        Learner::state(self.inner(), k)
    }
}

/// The rewards: arm a's mean plus uniform noise in ±`noise`, from their own generator (the
/// same for both learners); a learner of the local model gets the reward truncated at its
/// device level (a report the device's mechanism could release).
struct World {
    rng: Xoshiro256PlusPlus,
    means: Vec<f64>,
    noise: f64,
}

impl World {
    fn draw(&mut self, arm: usize) -> f64 {
        let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        self.means[arm] + self.noise * (2.0 * u - 1.0)
    }
}

/// Runs `wide` (capacity 64, `with_arms(k)`) and `exact` (capacity k) side by side for
/// [`ROUNDS`] rounds on the same rewards and equally seeded generators, and checks that every
/// round they select the same arm (below k), refuse and accept the same observations, draw
/// the same number of random words and show the same public state.
fn same_run(
    wide: &mut impl Learner,
    exact: &mut impl Learner,
    k: usize,
    seed: u64,
    means: &[f64],
    noise: f64,
) {
    let mut world =
        World { rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5eed), means: means[..k].to_vec(), noise };
    let (mut rw, mut re) = (Counting::new(seed), Counting::new(seed));
    for round in 0..ROUNDS {
        let arm = wide.select(&mut rw);
        assert_eq!(arm, exact.select(&mut re), "k = {k}, round {round}: another arm");
        assert!(arm < k, "k = {k}, round {round}: arm {arm} is not played");
        assert_eq!(rw.draws, re.draws, "k = {k}, round {round}: select drew differently");
        // Every arm past the last played (the first, the next, the capacity's last, past the
        // capacity) is refused by both, drawing nothing.
        for bad in [k, k + 1, CAP - 1, CAP, usize::MAX].into_iter().filter(|&b| b >= k) {
            let refused = wide.observe(bad, 0.5, &mut rw);
            assert_eq!(refused, exact.observe(bad, 0.5, &mut re), "k = {k}, round {round}, arm {bad}");
            assert!(
                matches!(refused, Err(ObserveError::ArmOutOfRange { arm, arms }) if arm == bad && arms == k),
                "k = {k}, round {round}, arm {bad}: {refused:?}"
            );
            assert_eq!(rw.draws, re.draws, "k = {k}, round {round}: a refusal drew");
        }
        let mut reward = world.draw(arm);
        if let Some(level) = wide.level() {
            assert_eq!(
                level.to_bits(),
                exact.level().map(f64::to_bits).unwrap_or(0),
                "k = {k}, round {round}"
            );
            reward = reward.clamp(-level, level);
        }
        let accepted = wide.observe(arm, reward, &mut rw);
        assert_eq!(accepted, exact.observe(arm, reward, &mut re), "k = {k}, round {round}");
        assert_eq!(rw.draws, re.draws, "k = {k}, round {round}: observe drew differently");
        assert_eq!(wide.state(k), exact.state(k), "k = {k}, round {round}: another state");
    }
}

fn eps(e: f64) -> Epsilon {
    Epsilon::new(e).unwrap()
}

/// The random part of a case: the seed of the rewards and generators, the arms' means, the
/// noise's width, and an ε.
fn case() -> impl Strategy<Value = (u64, Vec<f64>, f64, f64)> {
    (
        any::<u64>(),
        proptest::collection::vec(-1.0f64..1.0, CAP),
        prop_oneof![Just(0.05), Just(0.5), Just(2.0)],
        prop_oneof![Just(0.5), Just(4.0), Just(64.0)],
    )
}

/// Calls `$check!(k)` with k a const, for arm counts that cover the small ones, the data
/// tables' (29, 41) and the capacity itself.
macro_rules! for_some_arms {
    ($check:ident) => {
        $check!(1);
        $check!(2);
        $check!(3);
        $check!(5);
        $check!(29);
        $check!(41);
        $check!(64);
    };
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn robust_ucb_with_arms_is_the_learner_of_that_many((seed, means, noise, _e) in case()) {
        let tail = HeavyTail::new(2.0, 0.5).unwrap();
        macro_rules! check {
            ($k:literal) => {{
                let mut wide = RobustUcb::<CAP>::with_arms($k, tail, ROUNDS as u64, 0.6).unwrap();
                let mut exact = RobustUcb::<$k>::new(tail, ROUNDS as u64, 0.6).unwrap();
                same_run(&mut wide, &mut exact, $k, seed, &means, noise);
            }};
        }
        for_some_arms!(check);
    }

    #[test]
    fn dp_robust_ucb_with_arms_draws_the_same_noise((seed, means, noise, e) in case()) {
        let tail = HeavyTail::new(2.0, 0.5).unwrap();
        macro_rules! check {
            ($k:literal) => {{
                let mut wide = DpRobustUcb::<CAP, LEVELS>::with_arms($k, eps(e), tail, ROUNDS as u64, 0.5).unwrap();
                let mut exact = DpRobustUcb::<$k, LEVELS>::new(eps(e), tail, ROUNDS as u64, 0.5).unwrap();
                same_run(&mut wide, &mut exact, $k, seed, &means, noise);
            }};
        }
        for_some_arms!(check);
    }

    #[test]
    fn dp_and_ldp_rse_with_arms_eliminate_and_release_alike((seed, means, noise, e) in case()) {
        // κ = 1/2 and v = 1: epochs of a few passes, so arms are eliminated within the run.
        let params = RseParams::new(eps(e), HeavyTail::new(1.0, 1.0).unwrap(), 0.1, 0.5).unwrap();
        macro_rules! check {
            ($k:literal) => {{
                let mut wide = DpRobustSe::<CAP>::with_arms($k, params).unwrap();
                let mut exact = DpRobustSe::<$k>::new(params).unwrap();
                same_run(&mut wide, &mut exact, $k, seed, &means, noise);
                let mut wide = LdpRobustSe::<CAP>::with_arms($k, params).unwrap();
                let mut exact = LdpRobustSe::<$k>::new(params);
                same_run(&mut wide, &mut exact, $k, seed, &means, noise);
            }};
        }
        for_some_arms!(check);
    }

    #[test]
    fn calibrated_learners_with_arms_are_the_learners_of_that_many((seed, means, noise, e) in case()) {
        macro_rules! check {
            ($k:literal) => {{
                for noise_model in [Noise::Bounded { r: noise, c: noise * noise / 3.0 }, Noise::Moment { c: 0.2, v: 0.5 }] {
                    let rule = Rule::new(1.0, noise_model, $k, 0.5).unwrap();
                    let t = ROUNDS as u64;
                    let mut wide = CalibratedRobustUcb::<CAP>::with_arms($k, rule, t).unwrap();
                    let mut exact = CalibratedRobustUcb::<$k>::new(rule, t).unwrap();
                    same_run(&mut wide, &mut exact, $k, seed, &means, noise);
                    let mut wide = CalibratedDpRobustUcb::<CAP, LEVELS>::with_arms($k, rule, eps(e), t).unwrap();
                    let mut exact = CalibratedDpRobustUcb::<$k, LEVELS>::new(rule, eps(e), t).unwrap();
                    same_run(&mut wide, &mut exact, $k, seed, &means, noise);
                    let mut wide = CalibratedDpRobustSe::<CAP>::with_arms($k, rule, eps(e)).unwrap();
                    let mut exact = CalibratedDpRobustSe::<$k>::new(rule, eps(e)).unwrap();
                    same_run(&mut wide, &mut exact, $k, seed, &means, noise);
                    let mut wide = CalibratedLdpRobustSe::<CAP>::with_arms($k, rule, eps(e)).unwrap();
                    let mut exact = CalibratedLdpRobustSe::<$k>::new(rule, eps(e));
                    same_run(&mut wide, &mut exact, $k, seed, &means, noise);
                }
            }};
        }
        for_some_arms!(check);
    }

    #[test]
    fn exp3_and_private_exp3_with_arms_sample_alike((seed, means, noise, e) in case()) {
        macro_rules! check {
            ($k:literal) => {{
                let params = Exp3Params::new(0.05, 0.1).unwrap();
                let mut wide = Exp3::<CAP>::with_arms($k, params).unwrap();
                let mut exact = Exp3::<$k>::new(params);
                same_run(&mut wide, &mut exact, $k, seed, &means, noise);
                if $k >= 2 {
                    let mut wide = PrivateExp3::<CAP>::with_arms($k, eps(e), ROUNDS as u64).unwrap();
                    let mut exact = PrivateExp3::<$k>::new(eps(e), ROUNDS as u64).unwrap();
                    same_run(&mut wide, &mut exact, $k, seed, &means, noise);
                }
            }};
        }
        for_some_arms!(check);
    }
}

/// `with_arms` refuses 0 arms and more than the capacity, as a typed error; `new` is
/// `with_arms(K)`.
#[test]
fn an_arm_count_outside_one_to_the_capacity_is_refused() {
    let tail = HeavyTail::new(1.0, 1.0).unwrap();
    let params = RseParams::new(eps(1.0), tail, 0.1, 0.5).unwrap();
    let rule = Rule::new(1.0, Noise::Bounded { r: 0.1, c: 0.01 }, 4, 0.5).unwrap();
    let exp3 = Exp3Params::new(0.1, 0.1).unwrap();
    for (arms, expected) in [(0, ParamError::TooFewArms), (5, ParamError::ArmsAboveCapacity)] {
        let e = Some(expected);
        assert_eq!(RobustUcb::<4>::with_arms(arms, tail, 10, 1.0).err(), e);
        assert_eq!(DpRobustUcb::<4, 5>::with_arms(arms, eps(1.0), tail, 10, 1.0).err(), e);
        assert_eq!(DpRobustSe::<4>::with_arms(arms, params).err(), e);
        assert_eq!(LdpRobustSe::<4>::with_arms(arms, params).err(), e);
        assert_eq!(CalibratedRobustUcb::<4>::with_arms(arms, rule, 10).err(), e);
        assert_eq!(CalibratedDpRobustUcb::<4, 5>::with_arms(arms, rule, eps(1.0), 10).err(), e);
        assert_eq!(CalibratedDpRobustSe::<4>::with_arms(arms, rule, eps(1.0)).err(), e);
        assert_eq!(CalibratedLdpRobustSe::<4>::with_arms(arms, rule, eps(1.0)).err(), e);
        assert_eq!(Exp3::<4>::with_arms(arms, exp3).err(), e);
        assert_eq!(PrivateExp3::<4>::with_arms(arms, eps(1.0), 10).err(), e);
    }
    assert!(ParamError::ArmsAboveCapacity.to_string().contains("capacity K"));
    assert_eq!(RobustUcb::<4>::new(tail, 10, 1.0).map(|u| u.arms()), Ok(4));
    assert_eq!(LdpRobustSe::<4>::new(params).arms(), 4);
}
