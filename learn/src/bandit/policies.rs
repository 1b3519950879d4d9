//! The runner's [`Policy`] adapters over `ldp_core::bandit`: the learners of the bandit
//! experiments *are* the core state machines (the code a device would run); these wrappers only
//! own the seeded generator, convert rewards to losses where needed and map errors.
//!
//! | spec | core type | privacy | reads from the [`Problem`] |
//! |---|---|---|---|
//! | [`ROBUST_UCB`] "Robust-UCB" | [`RobustUcb`] | none (raw rewards) | u = `v`, v = `alpha`, T |
//! | [`ROBUST_UCB_TABLE`] "Robust-UCB" | as [`ROBUST_UCB`] | none | as [`ROBUST_UCB`]; calibrated: B, R, c |
//! | [`DP_RUCB`] "DP-RUCB" | [`DpRobustUcb`] | central ε (`central_epsilon`) | u, v, T, ε |
//! | [`DP_RSE`] "DP-RSE" | [`DpRobustSe`] | central ε | u, v, T (β = 1/T), ε |
//! | [`LDP_RSE_S3`] "LDP-RSE" | [`LdpRobustSe`] | local ε (`privacy`), device level B_τ | v, T, ε; u of S3 |
//! | [`EXP3`] "EXP3" | [`Exp3`] (Thm 4.1, λ = 0) | none | T |
//! | [`PRIVATE_EXP3`] "Private-EXP3" | [`PrivateExp3`] (Thm 4.1, λ = 1/ε) | central ε | T, ε |
//!
//! `Constants::Paper` selects the papers' confidence constants (Bubeck et al.'s 4; 18; κ = 24,
//! 28), `Constants::Practical` the practical ones of `ldp_core::bandit` (0.6; ½; κ = 2, 6).
//! `Constants::Calibrated` (the default) builds the `Calibrated*` learners of
//! `ldp_core::bandit` with one [`Rule`] ([`calibrated_rule`]: B of the Problem, K its arms,
//! κ = [`KAPPA`] × `--beta-scale`): with Tao et al.'s heavy-tailed noise for the tao experiments
//! (E|X − μ|^{1+v} ≤ c, the Problem's c; for LDP-RSE on S3 `2^v(u + B^{1+v})`, since an LDP
//! Problem's c is the reports'), and with a table's bounded noise (R, c) for
//! `custom --family bandit` ([`ROBUST_UCB_TABLE`], [`LDP_RSE`]; LDP-RSE takes R² for the raw
//! variance, as the GP learners' rule 1 does under CTL). EXP3 and Private-EXP3 have no
//! calibrated variant.
//!
//! In an LDP run the runner replaces the Problem's moment bound by that of CTL-privatised
//! rewards, so LDP-RSE cannot read u from it; [`LDP_RSE_S3`] uses S3's u
//! ([`ParetoInstance::moment_bound`]) at the Problem's v — the paper's assumption that u and v
//! are known.
//!
//! Errors: a spec built in the wrong privacy mode (e.g. DP-RUCB without a central ε) or with
//! parameters the core refuses fails with [`PolicyError::InvalidSetting`] saying which; an arm
//! count outside `2..=`[`MAX_ARMS`] with [`PolicyError::ArmCount`] (LDP-UCB and the GP learners
//! take any number).
//! Rewards are losses `1 − reward` (clamped to [0, 1]) for EXP3.

use ldp_core::Epsilon;
use ldp_core::ParamError;
use ldp_core::bandit::{
    CalibratedDpRobustSe, CalibratedDpRobustUcb, CalibratedLdpRobustSe, CalibratedRobustUcb, DpRobustSe,
    DpRobustUcb, Exp3, Exp3Params, HeavyTail, KAPPA, LdpRobustSe, Noise, ObserveError, PAPER_DP_RSE_KAPPA,
    PAPER_DP_UCB_CONSTANT, PAPER_LDP_RSE_KAPPA, PAPER_ROBUST_UCB_CONSTANT, PRACTICAL_DP_RSE_KAPPA,
    PRACTICAL_DP_UCB_CONSTANT, PRACTICAL_LDP_RSE_KAPPA, PRACTICAL_ROBUST_UCB_CONSTANT, PrivateExp3,
    RobustUcb, RseParams, Rule,
};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use super::env::ParetoInstance;
use crate::policy::{AlgorithmSpec, Constants, Policy, PolicyError, Problem};

/// Levels of the host's privacy trees: horizons up to 2^32 − 1 (the noise follows T, not L).
pub const HOST_TREE_LEVELS: usize = 32;
/// The largest number of arms the adapters take: each core learner is instantiated once, with
/// capacity K = `MAX_ARMS` (its fixed-size arrays), and built `with_arms` the problem's arm
/// count (the light-sensor table has 41 arms, the stocks 29).
pub const MAX_ARMS: usize = 64;

/// The problem's arm count if the adapters take it (`2..=MAX_ARMS`), else the arm-count error.
fn arms(problem: &Problem) -> Result<usize, PolicyError> {
    match problem.num_arms() {
        n @ 2..=MAX_ARMS => Ok(n),
        n => Err(PolicyError::ArmCount { arms: n, min: 2, max: MAX_ARMS }),
    }
}

fn config_error(_: ParamError) -> PolicyError {
    PolicyError::InvalidSetting("the bandit policy's parameters (epsilon, moments, horizon) are out of range")
}

fn observe_error(e: ObserveError) -> PolicyError {
    match e {
        ObserveError::ArmOutOfRange { arm, arms } => PolicyError::ArmOutOfRange { arm, arms },
        ObserveError::UnexpectedArm { expected, got } => {
            PolicyError::UnexpectedArm { expected: (expected != usize::MAX).then_some(expected), got }
        }
        ObserveError::NonFiniteReward => PolicyError::NonFiniteReport,
        ObserveError::ReportOutOfRange => PolicyError::ReportOutOfRange,
        _ => PolicyError::Numerical,
    }
}

/// u = the Problem's moment bound `v`, v = its `alpha` (raw-reward runs).
fn raw_tail(problem: &Problem) -> Result<HeavyTail, PolicyError> {
    HeavyTail::new(problem.v, problem.alpha).map_err(config_error)
}

fn central_epsilon(problem: &Problem) -> Result<Epsilon, PolicyError> {
    problem.central_epsilon.and_then(|e| Epsilon::new(e).ok()).ok_or(PolicyError::InvalidSetting(
        "a central-DP learner needs a central-DP run with a valid epsilon",
    ))
}

fn horizon(problem: &Problem) -> u64 {
    problem.horizon as u64
}

/// The loss of a reward, for EXP3: `1 − r` clamped to [0, 1].
fn loss(reward: f64) -> f64 {
    (1.0 - reward).clamp(0.0, 1.0)
}

/// What the one adapter ([`Adapter`]) asks of a core K-armed learner: each core type says
/// once whether it draws from the rng, and what it tells the runner beyond its arms.
trait KArmed: Send {
    /// Whether the learner minimises losses `1 − reward` (EXP3) rather than maximising rewards.
    const TAKES_LOSSES: bool = false;
    /// The arm to play next.
    fn choose(&mut self, rng: &mut ChaCha20Rng) -> usize;
    /// A reward (or loss) for the arm just played.
    fn take(&mut self, arm: usize, value: f64, rng: &mut ChaCha20Rng) -> Result<(), ObserveError>;
    /// [`Policy::device_level`].
    fn truncation_level(&self) -> Option<f64> {
        None
    }
    /// [`Policy::constants`].
    fn derived_constants(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// [`Policy::fork`]'s copy of the core learner: `None` for a learner that cannot be copied
    /// or that must draw its arm (`choose`) before every report (EXP3).
    fn fork(&self) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
    /// [`Policy::schedule`].
    fn schedule(&self) -> Option<u64> {
        None
    }
}

/// [`Policy::schedule`] of an elimination learner: its epoch τ, and whether it has committed.
fn elimination_mark(tau: u32, committed: Option<usize>) -> Option<u64> {
    Some(u64::from(tau) * 2 + u64::from(committed.is_some()))
}

/// The [`Policy`] of every core K-armed learner: it owns the seeded generator (a learner that
/// draws nothing leaves it untouched), converts rewards to losses where the learner takes
/// losses, and maps the core's errors.
struct Adapter<C> {
    core: C,
    rng: ChaCha20Rng,
}

fn adapt<C: KArmed + 'static>(core: C, seed: u64) -> Result<Box<dyn Policy>, PolicyError> {
    Ok(Box::new(Adapter { core, rng: ChaCha20Rng::seed_from_u64(seed) }))
}

impl<C: KArmed + 'static> Policy for Adapter<C> {
    fn select(&mut self) -> usize {
        self.core.choose(&mut self.rng)
    }
    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError> {
        let value = if C::TAKES_LOSSES {
            // The loss's clamp would hide a non-finite report: refuse it first.
            if !report.is_finite() {
                return Err(PolicyError::NonFiniteReport);
            }
            loss(report)
        } else {
            report
        };
        self.core.take(arm, value, &mut self.rng).map_err(observe_error)
    }
    fn device_level(&self) -> Option<f64> {
        self.core.truncation_level()
    }
    fn constants(&self) -> Vec<(&'static str, f64)> {
        self.core.derived_constants()
    }
    fn fork(&self) -> Option<Box<dyn Policy>> {
        let core = self.core.fork()?;
        Some(Box::new(Adapter { core, rng: self.rng.clone() }))
    }
    fn schedule(&self) -> Option<u64> {
        self.core.schedule()
    }
}

impl KArmed for RobustUcb<MAX_ARMS> {
    fn fork(&self) -> Option<Self> {
        Some(self.clone())
    }
    fn choose(&mut self, _: &mut ChaCha20Rng) -> usize {
        self.select()
    }
    fn take(&mut self, arm: usize, reward: f64, _: &mut ChaCha20Rng) -> Result<(), ObserveError> {
        self.observe(arm, reward)
    }
}

impl KArmed for DpRobustUcb<MAX_ARMS, HOST_TREE_LEVELS> {
    fn choose(&mut self, _: &mut ChaCha20Rng) -> usize {
        self.select()
    }
    fn take(&mut self, arm: usize, reward: f64, rng: &mut ChaCha20Rng) -> Result<(), ObserveError> {
        self.observe(arm, reward, rng)
    }
}

impl KArmed for DpRobustSe<MAX_ARMS> {
    fn fork(&self) -> Option<Self> {
        Some(self.clone())
    }
    fn schedule(&self) -> Option<u64> {
        elimination_mark(self.tau(), self.committed())
    }
    fn choose(&mut self, _: &mut ChaCha20Rng) -> usize {
        self.select()
    }
    fn take(&mut self, arm: usize, reward: f64, rng: &mut ChaCha20Rng) -> Result<(), ObserveError> {
        self.observe(arm, reward, rng)
    }
}

impl KArmed for LdpRobustSe<MAX_ARMS> {
    fn fork(&self) -> Option<Self> {
        Some(*self)
    }
    fn schedule(&self) -> Option<u64> {
        elimination_mark(self.tau(), self.committed())
    }
    fn choose(&mut self, _: &mut ChaCha20Rng) -> usize {
        self.select()
    }
    fn take(&mut self, arm: usize, report: f64, _: &mut ChaCha20Rng) -> Result<(), ObserveError> {
        self.observe(arm, report)
    }
    /// B_τ: the device truncates to zero outside [−B_τ, B_τ] and adds Lap(2B_τ/ε).
    fn truncation_level(&self) -> Option<f64> {
        Some(self.device_level())
    }
}

impl KArmed for Exp3<MAX_ARMS> {
    const TAKES_LOSSES: bool = true;
    fn choose(&mut self, rng: &mut ChaCha20Rng) -> usize {
        self.select(rng)
    }
    fn take(&mut self, arm: usize, loss: f64, _: &mut ChaCha20Rng) -> Result<(), ObserveError> {
        self.observe(arm, loss)
    }
}

impl KArmed for PrivateExp3<MAX_ARMS> {
    const TAKES_LOSSES: bool = true;
    fn choose(&mut self, rng: &mut ChaCha20Rng) -> usize {
        self.select(rng)
    }
    fn take(&mut self, arm: usize, loss: f64, rng: &mut ChaCha20Rng) -> Result<(), ObserveError> {
        self.observe(arm, loss, rng)
    }
}

/// The constants of a calibrated learner for `run.json`: κ, B, the noise's R and c (or c and
/// v), and its first level.
fn rule_constants(rule: &Rule, first_level: f64) -> Vec<(&'static str, f64)> {
    let mut c = vec![("kappa", rule.kappa()), ("B", rule.signal_bound())];
    match rule.noise() {
        Noise::Bounded { r, c: var } => c.extend([("R", r), ("c", var)]),
        Noise::Moment { c: m, v } => c.extend([("c", m), ("v", v)]),
    }
    c.push(("level_1", first_level));
    c
}

impl KArmed for CalibratedRobustUcb<MAX_ARMS> {
    fn fork(&self) -> Option<Self> {
        Some(self.clone())
    }
    fn choose(&mut self, _: &mut ChaCha20Rng) -> usize {
        self.select()
    }
    fn take(&mut self, arm: usize, reward: f64, _: &mut ChaCha20Rng) -> Result<(), ObserveError> {
        self.observe(arm, reward)
    }
    fn derived_constants(&self) -> Vec<(&'static str, f64)> {
        rule_constants(&self.rule(), f64::NAN)
    }
}

impl KArmed for CalibratedDpRobustUcb<MAX_ARMS, HOST_TREE_LEVELS> {
    fn choose(&mut self, _: &mut ChaCha20Rng) -> usize {
        self.select()
    }
    fn take(&mut self, arm: usize, reward: f64, rng: &mut ChaCha20Rng) -> Result<(), ObserveError> {
        self.observe(arm, reward, rng)
    }
    fn derived_constants(&self) -> Vec<(&'static str, f64)> {
        rule_constants(&self.rule(), self.level(1))
    }
}

impl KArmed for CalibratedDpRobustSe<MAX_ARMS> {
    fn fork(&self) -> Option<Self> {
        Some(self.clone())
    }
    fn schedule(&self) -> Option<u64> {
        elimination_mark(self.tau(), self.committed())
    }
    fn choose(&mut self, _: &mut ChaCha20Rng) -> usize {
        self.select()
    }
    fn take(&mut self, arm: usize, reward: f64, rng: &mut ChaCha20Rng) -> Result<(), ObserveError> {
        self.observe(arm, reward, rng)
    }
    fn derived_constants(&self) -> Vec<(&'static str, f64)> {
        rule_constants(&self.rule(), self.level(0))
    }
}

impl KArmed for CalibratedLdpRobustSe<MAX_ARMS> {
    fn fork(&self) -> Option<Self> {
        Some(*self)
    }
    fn schedule(&self) -> Option<u64> {
        elimination_mark(self.tau(), self.committed())
    }
    fn choose(&mut self, _: &mut ChaCha20Rng) -> usize {
        self.select()
    }
    fn take(&mut self, arm: usize, report: f64, _: &mut ChaCha20Rng) -> Result<(), ObserveError> {
        self.observe(arm, report)
    }
    /// b_τ = B + L_τ: the device truncates to zero outside [−b_τ, b_τ] and adds Lap(2b_τ/ε).
    fn truncation_level(&self) -> Option<f64> {
        Some(self.device_level())
    }
    fn derived_constants(&self) -> Vec<(&'static str, f64)> {
        rule_constants(&self.rule(), self.device_level())
    }
}

/// The calibrated rule ([`ldp_core::bandit::Rule`]) for `problem` with `noise`: B of the
/// problem, K its arms, κ = [`KAPPA`] × the run's `--beta-scale`.
pub fn calibrated_rule(problem: &Problem, noise: Noise) -> Result<Rule, PolicyError> {
    let arms = u32::try_from(problem.num_arms())
        .map_err(|_| PolicyError::InvalidSetting("too many arms for a K-armed learner"))?;
    Rule::new(problem.b, noise, arms, KAPPA * problem.beta_scale).map_err(config_error)
}

/// The noise of Tao et al.'s problems: heavy tails with `E|X − μ|^{1+v} ≤ c` (the Problem's c;
/// no bound is known, whatever clamp the environment gives its device).
fn heavy_noise(problem: &Problem) -> Noise {
    Noise::Moment { c: problem.c, v: problem.alpha }
}

/// The noise of a bounded problem (a data table): |η| ≤ R and E η² ≤ c of the raw rewards.
fn bounded_noise(problem: &Problem) -> Result<Noise, PolicyError> {
    let r = problem
        .noise_bound
        .ok_or(PolicyError::InvalidSetting("this learner needs bounded noise (a bound R)"))?;
    Ok(Noise::Bounded { r, c: problem.c })
}

/// Bubeck et al.'s robust UCB (non-private; ignores any ε) on raw rewards; under calibrated
/// constants the shift-invariant [`CalibratedRobustUcb`] with Tao et al.'s heavy-tailed noise.
pub fn build_robust_ucb(
    problem: &Problem,
    constants: Constants,
    seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    robust_ucb(problem, constants, seed, heavy_noise(problem))
}

/// [`ROBUST_UCB_TABLE`]'s constructor: as [`build_robust_ucb`], with the bounded noise of a
/// data table under calibrated constants.
pub fn build_robust_ucb_table(
    problem: &Problem,
    constants: Constants,
    seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    let noise = match constants {
        Constants::Calibrated => bounded_noise(problem)?,
        _ => heavy_noise(problem), // unused: paper and practical read u and v
    };
    robust_ucb(problem, constants, seed, noise)
}

fn robust_ucb(
    problem: &Problem,
    constants: Constants,
    seed: u64,
    noise: Noise,
) -> Result<Box<dyn Policy>, PolicyError> {
    let t = horizon(problem);
    let c = match constants {
        Constants::Paper => PAPER_ROBUST_UCB_CONSTANT,
        Constants::Practical => PRACTICAL_ROBUST_UCB_CONSTANT,
        Constants::Calibrated => {
            let rule = calibrated_rule(problem, noise)?;
            let inner = CalibratedRobustUcb::with_arms(arms(problem)?, rule, t).map_err(config_error)?;
            return adapt(inner, seed);
        }
    };
    let tail = raw_tail(problem)?;
    adapt(RobustUcb::with_arms(arms(problem)?, tail, t, c).map_err(config_error)?, seed)
}

/// Seed 004 Alg. 1 at the Problem's central ε (calibrated: [`CalibratedDpRobustUcb`] with
/// Tao et al.'s heavy-tailed noise).
pub fn build_dp_rucb(
    problem: &Problem,
    constants: Constants,
    seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    let (tail, eps, t) = (raw_tail(problem)?, central_epsilon(problem)?, horizon(problem));
    let c = match constants {
        Constants::Paper => PAPER_DP_UCB_CONSTANT,
        Constants::Practical => PRACTICAL_DP_UCB_CONSTANT,
        Constants::Calibrated => {
            let rule = calibrated_rule(problem, heavy_noise(problem))?;
            let inner =
                CalibratedDpRobustUcb::with_arms(arms(problem)?, rule, eps, t).map_err(config_error)?;
            return adapt(inner, seed);
        }
    };
    let inner = DpRobustUcb::with_arms(arms(problem)?, eps, tail, t, c).map_err(config_error)?;
    adapt(inner, seed)
}

/// Seed 004 Alg. 3 at the Problem's central ε, β = 1/T (calibrated: [`CalibratedDpRobustSe`]
/// with Tao et al.'s heavy-tailed noise).
pub fn build_dp_rse(
    problem: &Problem,
    constants: Constants,
    seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    let (tail, eps, t) = (raw_tail(problem)?, central_epsilon(problem)?, horizon(problem));
    let kappa = match constants {
        Constants::Paper => PAPER_DP_RSE_KAPPA,
        Constants::Practical => PRACTICAL_DP_RSE_KAPPA,
        Constants::Calibrated => {
            let rule = calibrated_rule(problem, heavy_noise(problem))?;
            let inner = CalibratedDpRobustSe::with_arms(arms(problem)?, rule, eps).map_err(config_error)?;
            return adapt(inner, seed);
        }
    };
    let params = RseParams::new(eps, tail, RseParams::beta_for_horizon(t), kappa).map_err(config_error)?;
    let inner = DpRobustSe::with_arms(arms(problem)?, params).map_err(config_error)?;
    adapt(inner, seed)
}

/// Seed 004 Alg. 4's learner at the Problem's local ε, β = 1/T, u of `instance` at the
/// Problem's v (calibrated: [`CalibratedLdpRobustSe`] with the instance's heavy-tailed noise,
/// `E|X − μ|^{1+v} ≤ 2^v(u + B^{1+v})`).
pub fn build_ldp_rse(
    problem: &Problem,
    constants: Constants,
    instance: ParetoInstance,
) -> Result<Box<dyn Policy>, PolicyError> {
    let (u, v) = (instance.moment_bound(problem.alpha), problem.alpha);
    // The LDP Problem's c is that of the reports; the raw rewards' is the instance's.
    let noise = Noise::Moment { c: 2f64.powf(v) * (u + problem.b.powf(1.0 + v)), v };
    // LDP-RSE draws nothing on the host (its noise is the device's): any seed will do.
    ldp_rse(problem, constants, u, noise, 0)
}

/// Seed 004 Alg. 4 with moment bound `u` (E|X|^{1+α} ≤ u); under calibrated constants the
/// calibrated learner with `noise`.
fn ldp_rse(
    problem: &Problem,
    constants: Constants,
    u: f64,
    noise: Noise,
    seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    let eps = problem
        .privacy
        .and_then(|p| Epsilon::new(p.epsilon).ok())
        .ok_or(PolicyError::InvalidSetting("an LDP learner needs a local-DP run with a valid epsilon"))?;
    let kappa = match constants {
        Constants::Paper => PAPER_LDP_RSE_KAPPA,
        Constants::Practical => PRACTICAL_LDP_RSE_KAPPA,
        Constants::Calibrated => {
            let rule = calibrated_rule(problem, noise)?;
            let inner = CalibratedLdpRobustSe::with_arms(arms(problem)?, rule, eps).map_err(config_error)?;
            return adapt(inner, seed);
        }
    };
    let tail = HeavyTail::new(u, problem.alpha).map_err(config_error)?;
    let t = horizon(problem);
    let params = RseParams::new(eps, tail, RseParams::beta_for_horizon(t), kappa).map_err(config_error)?;
    adapt(LdpRobustSe::with_arms(arms(problem)?, params).map_err(config_error)?, seed)
}

/// [`LDP_RSE`]'s constructor: Tao et al. Alg. 4 with u = (B + R)^{1+α}; calibrated: the
/// calibrated learner with bounded noise (|η| ≤ R, and R² for its variance, as the GP
/// learners' rule 1 takes under CTL: the LDP Problem's c is the reports').
pub fn build_ldp_rse_bounded(
    problem: &Problem,
    constants: Constants,
    seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    let r =
        problem.noise_bound.ok_or(PolicyError::InvalidSetting("LDP-RSE needs bounded noise (a bound R)"))?;
    let u = (problem.b + r).powf(1.0 + problem.alpha);
    ldp_rse(problem, constants, u, Noise::Bounded { r, c: r * r }, seed)
}

/// EXP3 with Theorem 4.1's tuning at λ = 0 (non-private; ignores any ε).
pub fn build_exp3(problem: &Problem, _: Constants, seed: u64) -> Result<Box<dyn Policy>, PolicyError> {
    let t = horizon(problem);
    let params = Exp3Params::theorem_4_1(problem.num_arms(), t, 0.0).map_err(config_error)?;
    let inner = Exp3::with_arms(arms(problem)?, params).map_err(config_error)?;
    adapt(inner, seed)
}

/// Seed 002 Alg. 4 + 5 with Theorem 4.1's parameters at the Problem's central ε.
pub fn build_private_exp3(
    problem: &Problem,
    _: Constants,
    seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    let (eps, t) = (central_epsilon(problem)?, horizon(problem));
    let inner = PrivateExp3::with_arms(arms(problem)?, eps, t).map_err(config_error)?;
    adapt(inner, seed)
}

/// Bubeck et al.'s robust UCB, the non-private baseline of Tao et al..
pub const ROBUST_UCB: AlgorithmSpec =
    AlgorithmSpec { name: "Robust-UCB", private_name: "Robust-UCB", build: build_robust_ucb };
/// Robust UCB on a data table (`custom --family bandit --eps none`): as [`ROBUST_UCB`] under
/// paper and practical constants; under calibrated ones with the table's bounded noise.
pub const ROBUST_UCB_TABLE: AlgorithmSpec =
    AlgorithmSpec { name: "Robust-UCB", private_name: "Robust-UCB", build: build_robust_ucb_table };
/// DP robust UCB (Tao et al. Alg. 1); needs a central-DP run.
pub const DP_RUCB: AlgorithmSpec =
    AlgorithmSpec { name: "DP-RUCB", private_name: "DP-RUCB", build: build_dp_rucb };
/// DP robust successive elimination (Tao et al. Alg. 3); needs a central-DP run.
pub const DP_RSE: AlgorithmSpec =
    AlgorithmSpec { name: "DP-RSE", private_name: "DP-RSE", build: build_dp_rse };
/// LDP robust successive elimination (Tao et al. Alg. 4) with S3's moment bound; needs an LDP run.
pub const LDP_RSE_S3: AlgorithmSpec = AlgorithmSpec {
    name: "LDP-RSE",
    private_name: "LDP-RSE",
    build: |p, c, _| build_ldp_rse(p, c, ParetoInstance::S3),
};
/// LDP robust successive elimination (Tao et al. Alg. 4) for any bounded problem: the moment
/// bound is u = (B + R)^{1+α}, which every reward |f + η| ≤ B + R meets (a user's own data).
pub const LDP_RSE: AlgorithmSpec =
    AlgorithmSpec { name: "LDP-RSE", private_name: "LDP-RSE", build: build_ldp_rse_bounded };
/// LDP-UCB ([`super::ldp_ucb`]): a UCB index on the device's CTL reports with a Bernstein width
/// for their noise, κ = [`super::ldp_ucb::KAPPA`] × `--beta-scale` (its constants are its own:
/// the same in every mode; `custom --family bandit` shows it under calibrated constants only).
pub const LDP_UCB: AlgorithmSpec = AlgorithmSpec {
    name: "LDP-UCB",
    private_name: "LDP-UCB",
    build: |p, _, _| Ok(Box::new(super::ldp_ucb::LdpUcb::new(p, super::ldp_ucb::KAPPA * p.beta_scale)?)),
};
/// EXP3 (Agarwal & Singh Alg. 5, Theorem 4.1 tuning with λ = 0).
pub const EXP3: AlgorithmSpec = AlgorithmSpec { name: "EXP3", private_name: "EXP3", build: build_exp3 };
/// Private EXP3 by the reduction of Agarwal & Singh Alg. 4; needs a central-DP run.
pub const PRIVATE_EXP3: AlgorithmSpec =
    AlgorithmSpec { name: "Private-EXP3", private_name: "Private-EXP3", build: build_private_exp3 };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_beyond_the_mechanism_is_named_as_such_not_as_a_numerical_failure() {
        // It used to read "posterior update failed numerically: increase lambda" (review).
        let e = observe_error(ObserveError::ReportOutOfRange);
        assert_eq!(e, PolicyError::ReportOutOfRange);
        assert!(e.to_string().contains("larger than the device's mechanism can release"), "{e}");
    }
}
