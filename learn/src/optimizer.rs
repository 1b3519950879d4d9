//! Ask/tell: a learner you drive yourself, with no experiment loop and no true objective.
//!
//! ```
//! use ldp_learn::optimizer::{Domain, Optimizer, Settings};
//!
//! // 30 settings of one knob; the learner sees only ε = 1 private reports of a noisy reward.
//! let points: Vec<Vec<f64>> = (0..30).map(|i| vec![i as f64 / 29.0]).collect();
//! let mut opt = Optimizer::new("LDP-TGP-UCB", Domain::points(points.clone()), Settings::default())?;
//! for _ in 0..200 {
//!     let arm = opt.ask();
//!     let reward = 1.0 - (points[arm][0] - 0.7).abs(); // your measurement, in [-B, B] plus noise
//!     let report = reward; // ... released by your device at ε (ldp-core's reporter); here raw
//!     opt.tell(arm, report)?;
//! }
//! println!("best so far: {:?}", points[opt.recommend()]); // the best posterior mean
//! # Ok::<(), ldp_learn::optimizer::OptimizerError>(())
//! ```
//!
//! Many actions can be in flight: [`Optimizer::ask_batch`] asks q at once, their reports are
//! told in any order, [`Optimizer::forget`] abandons one (docs/batches.md). Above
//! [`LARGE_SET`](crate::domain::points::LARGE_SET) points a point set is learned without
//! |D| × |D| matrices ([`crate::domain::points`]).
//!
//! [`Optimizer::new`] derives every constant from public settings only ([`Settings`]: B, R, ε,
//! T, the constants mode, a seed) and the domain's prior ([`Domain`]); it never needs f. The
//! reports must be what the device released: the optimiser does not privatise (in a
//! deployment the raw reward never reaches the learner's machine). With the same seed, the
//! same reports give the same actions as `host-sim run` with trial seed `seed` and the
//! learner first in its list (host-sim's test `ask_tell_equals_the_bandit_loop`).

use nalgebra::DMatrix;

use crate::bo::GP_EXPERIMENT_ALGORITHMS;
use crate::env::RewardBounds;
use crate::env::custom::{KernelChoice, kernel_prior};
use crate::env::table::TableError;
use crate::policy::{AlgorithmSpec, Constants, Policy, PolicyError, Problem};
use crate::rules::{Public, derive_seed, problem};

/// Why [`Optimizer`] refuses a box ([`crate::domain::BoxError::NotIndexed`] says the same).
pub(crate) const NOT_INDEXED: &str =
    "a box's actions are points, not indices: drive it with BoxOptimizer::new (its ask() returns a point)";

/// Every learner [`Optimizer::new`] builds by name: Zhou & Tan's GP learners, UCB1 and the
/// K-armed learners of `custom --family bandit` (private names, as `host-sim list` prints them).
pub fn learners() -> Vec<AlgorithmSpec> {
    let mut all = GP_EXPERIMENT_ALGORITHMS.to_vec();
    all.extend([crate::bandit::LDP_UCB, crate::bandit::LDP_RSE, crate::bandit::ROBUST_UCB_TABLE]);
    all
}

/// What the learner knows of the actions before any report.
#[derive(Clone, Debug)]
pub enum Domain {
    /// Points of ℝᵈ, one per action, with a kernel over them as the GP prior.
    Points {
        /// The actions' points (every one of the same dimension).
        points: Vec<Vec<f64>>,
        /// The kernel (squared exponential by default; lengthscale: the median distance).
        kernel: KernelChoice,
    },
    /// `k` actions with no known structure: independent arms (identity prior covariance).
    Arms(usize),
    /// Your own prior covariance over the actions (symmetric, positive semi-definite).
    Covariance(DMatrix<f64>),
    /// The box `[lower₁, upper₁] × … × [lower_d, upper_d]` (d ≤ 20): its actions are points,
    /// so it is driven by [`BoxOptimizer`](crate::domain::BoxOptimizer) (`ask()` returns a point), not by [`Optimizer`].
    Box {
        /// The lower bound of each coordinate.
        lower: Vec<f64>,
        /// The upper bound of each coordinate (above the lower).
        upper: Vec<f64>,
    },
}

impl Domain {
    /// `points` under the default kernel.
    pub fn points(points: Vec<Vec<f64>>) -> Self {
        Self::Points { points, kernel: KernelChoice::default() }
    }

    fn prior(&self) -> Result<DMatrix<f64>, OptimizerError> {
        match self {
            Self::Points { points, kernel } => {
                if points.is_empty() {
                    return Err(OptimizerError::Setting(
                        "the domain has no points: give at least one".into(),
                    ));
                }
                kernel_prior(points, *kernel).map_err(|problem| {
                    let error = TableError { path: "the domain's points".into(), problem };
                    OptimizerError::Setting(error.to_string())
                })
            }
            Self::Arms(0) => Err(OptimizerError::Setting("the domain has no arms: give at least one".into())),
            Self::Arms(k) => Ok(DMatrix::identity(*k, *k)),
            Self::Covariance(m) => Ok(m.clone()),
            Self::Box { .. } => Err(OptimizerError::Setting(NOT_INDEXED.to_string())),
        }
    }
}

/// The public settings every constant is derived from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// ε of every report (the device's CTL(ε) release); `None` when the reports are raw
    /// rewards (a non-private run).
    pub epsilon: Option<f64>,
    /// B: a bound on |f| over the actions.
    pub bound: f64,
    /// R: a bound on the raw noise |y − f|.
    pub noise_bound: f64,
    /// T: the number of reports the learner will be told (its β schedule and truncation
    /// levels use it).
    pub horizon: usize,
    /// Which constants (the calibrated rule by default; the papers' by name).
    pub constants: Constants,
    /// The learner's seed (its random choices and the order it breaks ties in).
    pub seed: u64,
}

impl Default for Settings {
    /// ε = 1, B = 1, R = 1, T = 1000, the calibrated constants, seed 0.
    fn default() -> Self {
        Self {
            epsilon: Some(1.0),
            bound: 1.0,
            noise_bound: 1.0,
            horizon: 1000,
            constants: Constants::Calibrated,
            seed: 0,
        }
    }
}

impl Settings {
    /// B, R and T checked, in the user's words; `over` names what B bounds f over ("the
    /// actions", "the box").
    pub(crate) fn check(&self, over: &str) -> Result<(), String> {
        let (b, r) = (self.bound, self.noise_bound);
        if !(b.is_finite() && b > 0.0) {
            return Err(format!("the bound B must be a positive number (a bound on |f| over {over})"));
        }
        if !(r.is_finite() && r >= 0.0) {
            return Err("the noise bound R must be zero or a positive number (a bound on |y − f|)".into());
        }
        if self.horizon == 0 {
            return Err("the horizon T must be at least 1 (the number of reports you will tell)".into());
        }
        Ok(())
    }

    /// ε of the reports as the mechanism's type, or what is wrong with it.
    pub(crate) fn report_epsilon(&self) -> Result<Option<ldp_core::Epsilon>, String> {
        self.epsilon
            .map(|e| {
                ldp_core::Epsilon::new(e).map_err(|_| {
                    "epsilon must be a positive finite number (the ε of every report), or None for raw rewards"
                        .to_string()
                })
            })
            .transpose()
    }
}

/// The constants of a learner that keeps no prior over its domain (a box, a large point set),
/// from the public settings alone: a 1 × 1 prior gives them, since none depends on the domain.
#[derive(Clone, Debug)]
pub struct DomainFree {
    /// λ, kept away from 0 (noiseless raw rewards: R = 0, no ε) so that A ⪰ λI stays invertible.
    pub lambda: f64,
    /// δ of β.
    pub delta: f64,
    /// β's multiplier.
    pub beta_scale: f64,
    /// TGP-UCB's truncation levels, as the finite-set learner derives them; `None` for GP-UCB.
    pub levels: Option<crate::bo::gp_ucb::GpUcb>,
}

/// [`DomainFree`] for `spec` (GP-UCB or (LDP-)TGP-UCB) under `settings` and the checked ε (what
/// [`Optimizer`] gives a box's or a large point set's learner; `learn/examples/box_calibration.rs`
/// builds a [`PointSetGp`](crate::domain::points::PointSetGp) with them).
pub fn domain_free(
    spec: AlgorithmSpec,
    settings: &Settings,
    epsilon: Option<ldp_core::Epsilon>,
) -> Result<DomainFree, String> {
    let (b, r) = (settings.bound, settings.noise_bound);
    let bounds = RewardBounds { b, r: Some(r), alpha: 1.0, v: b * b + r * r, c: r * r };
    let public =
        Public { report_epsilon: epsilon, constants: settings.constants, ..Public::new(settings.horizon) };
    let problem = problem(DMatrix::identity(1, 1), bounds, &public).map_err(|e| e.to_string())?;
    let levels = if spec == crate::bo::ZHOU_TAN_ALGORITHMS[1] {
        Some(crate::bo::gp_ucb::GpUcb::tgp_ucb(&problem, settings.constants).map_err(|e| e.to_string())?)
    } else {
        None
    };
    Ok(DomainFree {
        lambda: problem.lambda.max(1e-6 * b * b),
        delta: problem.delta,
        beta_scale: problem.beta_scale,
        levels,
    })
}

/// What [`Optimizer`] refuses, in the user's words.
#[derive(Debug, Clone, PartialEq)]
pub enum OptimizerError {
    /// No learner has that name.
    UnknownLearner {
        /// The name given.
        name: String,
        /// The names there are.
        valid: Vec<&'static str>,
    },
    /// A setting or the domain cannot be used (the message says which and what to do).
    Setting(String),
    /// [`Optimizer::tell`] for another action than the one [`Optimizer::ask`] gave.
    NotAsked {
        /// The action told.
        told: usize,
        /// The action asked for, if any.
        asked: Option<usize>,
    },
    /// The learner could not use the report.
    Report(PolicyError),
}

impl std::fmt::Display for OptimizerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownLearner { name, valid } => {
                write!(f, "no learner is called '{name}': choose one of {}", valid.join(", "))
            }
            Self::Setting(why) => f.write_str(why),
            Self::NotAsked { told, asked: Some(asked) } => write!(
                f,
                "told a report for action {told}, but the learner asked for action {asked}: tell the report of the \
                 action ask() returned"
            ),
            Self::NotAsked { told, asked: None } => {
                write!(
                    f,
                    "told a report for action {told} before asking: call ask() first, then tell its action"
                )
            }
            Self::Report(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for OptimizerError {}

/// An action [`Optimizer::ask_batch`] gave: the index into the domain, and the truncation
/// level the device applies to its reward before its noise (Tao et al.'s LDP-RSE), or `None`
/// for the device's clamp to B + R.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Asked {
    /// The action to measure.
    pub action: usize,
    /// The device's level for its report.
    pub device_level: Option<f64>,
}

/// An action asked and not yet given to the learner.
#[derive(Clone, Copy, Debug)]
struct Slot {
    action: usize,
    level: Option<f64>,
    /// Its report, once told: it waits here until every action asked before it is told (or
    /// forgotten), so the learner is given its reports in the order it asked.
    report: Option<f64>,
    /// Forgotten by a learner that follows a schedule: to be asked again (it keeps its place).
    again: bool,
}

/// A stand-in report for `action` while its real one is pending: the learner's posterior mean
/// there, else the mean report of the action so far (0 before any).
fn stand_in(shadow: &dyn Policy, action: usize, sums: &[f64], pulls: &[u64]) -> f64 {
    if let Some(means) = shadow.posterior_means() {
        return means.get(action).copied().unwrap_or(0.0);
    }
    match pulls.get(action) {
        Some(&n) if n > 0 => sums[action] / n as f64,
        _ => 0.0,
    }
}

/// A learner driven by ask/tell. See the [module documentation](self).
pub struct Optimizer {
    policy: Box<dyn Policy>,
    name: &'static str,
    /// The actions asked and not yet given to the learner, in the order asked.
    pending: std::collections::VecDeque<Slot>,
    /// The learner told every pending action (its report, or a stand-in): what chooses the
    /// next action while some are pending. `None` until needed, and after any change.
    shadow: Option<Box<dyn Policy>>,
    /// The learner chooses by its mean and a copy's variances
    /// ([`Policy::select_with_variances`]): the copy needs only the points asked, so it is
    /// kept while reports arrive (rebuilt only when an action is forgotten).
    variance_shadow: bool,
    pulls: Vec<u64>,
    sums: Vec<f64>,
}

impl Optimizer {
    /// The learner called `algorithm` ([`learners`]; any case, `ldp-` optional) over `domain`
    /// with `settings`.
    pub fn new(algorithm: &str, domain: Domain, settings: Settings) -> Result<Self, OptimizerError> {
        let all = learners();
        let label = |a: &AlgorithmSpec| a.label(settings.epsilon.is_some());
        let spec =
            all.iter().find(|a| crate::policy::names_learner(algorithm, label(a))).copied().ok_or_else(
                || OptimizerError::UnknownLearner {
                    name: algorithm.to_string(),
                    valid: all.iter().map(label).collect(),
                },
            )?;
        Self::with_spec(spec, domain, settings)
    }

    /// The learner `spec` (e.g. [`crate::bo::UCB1`]) over `domain` with `settings`.
    pub fn with_spec(
        spec: AlgorithmSpec,
        domain: Domain,
        settings: Settings,
    ) -> Result<Self, OptimizerError> {
        settings.check("the actions").map_err(OptimizerError::Setting)?;
        let epsilon = settings.report_epsilon().map_err(OptimizerError::Setting)?;
        let (b, r) = (settings.bound, settings.noise_bound);
        if let Domain::Points { points, kernel } = &domain
            && points.len() > crate::domain::points::LARGE_SET
        {
            return Self::large_set(spec, points, *kernel, settings, epsilon);
        }
        let prior = domain.prior()?;
        // For private reports v and c are derived from B, R and ε; these are the raw rewards'.
        let bounds = RewardBounds { b, r: Some(r), alpha: 1.0, v: b * b + r * r, c: r * r };
        let public = Public {
            report_epsilon: epsilon,
            constants: settings.constants,
            ..Public::new(settings.horizon)
        };
        let mut problem =
            problem(prior, bounds, &public).map_err(|e| OptimizerError::Setting(e.to_string()))?;
        // As the bandit loop does for trial seed `seed` and its first learner.
        if settings.constants == Constants::Calibrated {
            problem.tie_order =
                Some(crate::bo::tie_order(problem.num_arms(), derive_seed(settings.seed, 0, 5)));
        }
        Self::from_problem(spec, &problem, settings.constants, derive_seed(settings.seed, 0, 3))
    }

    /// GP-UCB or (LDP-)TGP-UCB over more than [`LARGE_SET`](crate::domain::points::LARGE_SET)
    /// points, without |D| × |D| matrices ([`crate::domain::points`]).
    fn large_set(
        spec: AlgorithmSpec,
        points: &[Vec<f64>],
        kernel: KernelChoice,
        settings: Settings,
        epsilon: Option<ldp_core::Epsilon>,
    ) -> Result<Self, OptimizerError> {
        use crate::bo::ZHOU_TAN_ALGORITHMS;
        let n = points.len();
        let private = epsilon.is_some();
        let setting = |why: String| OptimizerError::Setting(why);
        if spec != ZHOU_TAN_ALGORITHMS[0] && spec != ZHOU_TAN_ALGORITHMS[1] {
            return Err(setting(format!(
                "{} does not run on {n} points: above {} points only GP-UCB and LDP-TGP-UCB run (their posterior needs no |D| × |D| matrix; ATA and MoMA keep a dictionary over the set, and the K-armed learners play every action once first)",
                spec.label(private),
                crate::domain::points::LARGE_SET
            )));
        }
        if kernel.name != crate::env::custom::KernelName::Se {
            return Err(setting(format!(
                "above {} points the kernel is the squared exponential (its random features): drop the Matérn kernel",
                crate::domain::points::LARGE_SET
            )));
        }
        if let Some(l) = kernel.lengthscale
            && !(l.is_finite() && l > 0.0)
        {
            return Err(setting(format!("the lengthscale must be a positive number, not {l}")));
        }
        if settings.constants != Constants::Calibrated {
            return Err(setting(format!(
                "above {} points only the calibrated constants are offered (the practical and paper constants are for the exact posterior)",
                crate::domain::points::LARGE_SET
            )));
        }
        crate::domain::points::check_points(points).map_err(setting)?;
        let constants = domain_free(spec, &settings, epsilon).map_err(setting)?;
        let policy = crate::domain::points::PointSetGp::new(
            points,
            constants.lambda,
            constants.delta,
            settings.bound,
            constants.beta_scale,
            constants.levels,
            kernel.lengthscale,
            derive_seed(settings.seed, 0, 3),
        );
        Ok(Self {
            variance_shadow: false,
            policy: Box::new(policy),
            name: spec.label(private),
            pending: std::collections::VecDeque::new(),
            shadow: None,
            pulls: vec![0; n],
            sums: vec![0.0; n],
        })
    }

    /// The learner `spec` for a [`Problem`] you derived yourself (the experiment loop's way:
    /// `host-sim` derives it from an environment's prior and bounds, which are public, by
    /// [`crate::rules::problem`]), with the constants `constants` and the learner's own seed
    /// `policy_seed` (used as given: [`with_spec`](Self::with_spec) derives it from
    /// [`Settings::seed`]). A problem holds no objective: the optimiser still never sees f.
    pub fn from_problem(
        spec: AlgorithmSpec,
        problem: &Problem,
        constants: Constants,
        policy_seed: u64,
    ) -> Result<Self, OptimizerError> {
        let policy = (spec.build)(problem, constants, policy_seed).map_err(OptimizerError::Report)?;
        let variance_shadow = policy.posterior_variances().is_some();
        let arms = problem.num_arms();
        let private = problem.privacy.is_some() || problem.central_epsilon.is_some();
        Ok(Self {
            policy,
            name: spec.label(private),
            pending: std::collections::VecDeque::new(),
            shadow: None,
            variance_shadow,
            pulls: vec![0; arms],
            sums: vec![0.0; arms],
        })
    }

    /// The learner's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The action to measure next (an index into the domain). Asked again before
    /// [`tell`](Self::tell), it gives the same action: with actions pending (from
    /// [`ask_batch`](Self::ask_batch)), the earliest of them not yet told.
    pub fn ask(&mut self) -> usize {
        if let Some(slot) = self.pending.iter().find(|s| s.report.is_none()) {
            return slot.action;
        }
        // Nothing awaits a report, so nothing is pending: the learner itself chooses.
        let action = self.policy.select();
        self.pending.push_back(Slot {
            action,
            level: self.policy.device_level(),
            report: None,
            again: false,
        });
        action
    }

    /// The truncation level the learner asks the device to apply before its noise for the
    /// action [`ask`](Self::ask) gives (Tao et al.'s LDP-RSE), or `None` for the device's clamp
    /// to B + R. A batch's actions carry their own ([`Asked::device_level`]).
    pub fn device_level(&self) -> Option<f64> {
        match self.pending.iter().find(|s| s.report.is_none()) {
            Some(slot) => slot.level,
            None => self.policy.device_level(),
        }
    }

    /// `q` more actions to measure at once, whatever is already pending; tell their reports
    /// in any order, as they arrive. With nothing pending and `q = 1` it is [`ask`](Self::ask)'s
    /// action, bit for bit.
    ///
    /// Each action after the first is chosen by the learner as if every pending action had
    /// been told a stand-in report: its own estimate of that action's mean (a GP learner's
    /// posterior mean; a K-armed learner's mean report so far, 0 before any). For the GP
    /// learners this is GP-BUCB (Desautels, Krause & Burdick, JMLR 2014): the posterior mean
    /// is unchanged and the variance shrinks as the pending reports will shrink it, so a batch
    /// spreads over the actions the learner is unsure of; the real reports then replace the
    /// stand-ins. For UCB1, LDP-UCB and Robust-UCB it counts the pending measurements of each
    /// action in its confidence width. The real reports are given to the learner in the order
    /// the actions were asked (a report told early waits for those before it).
    ///
    /// Fewer than `q` come back when the learner cannot choose further without reports:
    /// LDP-RSE's batch stops at the end of its epoch (the eliminations need the epoch's
    /// reports), and a learner that cannot be copied ([`Policy::fork`]) is asked one action at
    /// a time.
    pub fn ask_batch(&mut self, q: usize) -> Vec<Asked> {
        let mut out = Vec::with_capacity(q.min(1 << 16));
        for slot in self.pending.iter_mut().filter(|s| s.again) {
            if out.len() == q {
                return out;
            }
            slot.again = false;
            out.push(Asked { action: slot.action, device_level: slot.level });
        }
        while out.len() < q {
            let (action, level) = if self.pending.is_empty() {
                self.shadow = None;
                (self.policy.select(), self.policy.device_level())
            } else {
                if self.shadow.is_none() {
                    self.shadow = self.build_shadow();
                }
                let Some(shadow) = self.shadow.as_mut() else { break };
                if shadow.schedule() != self.policy.schedule() {
                    break;
                }
                let given = match self.variance_shadow {
                    true => shadow.posterior_variances().and_then(|v| self.policy.select_with_variances(&v)),
                    false => None,
                };
                let (action, level) = match given {
                    Some(action) => (action, self.policy.device_level()),
                    None => (shadow.select(), shadow.device_level()),
                };
                let y = stand_in(shadow.as_ref(), action, &self.sums, &self.pulls);
                if shadow.observe(action, y).is_err() && shadow.observe(action, 0.0).is_err() {
                    self.shadow = None;
                    break;
                }
                (action, level)
            };
            self.pending.push_back(Slot { action, level, report: None, again: false });
            out.push(Asked { action, device_level: level });
        }
        out
    }

    /// The learner told every pending action (its report if told, else a stand-in), or
    /// `None` if the learner cannot be copied or refuses a stand-in.
    fn build_shadow(&self) -> Option<Box<dyn Policy>> {
        let mut shadow = self.policy.fork()?;
        for slot in &self.pending {
            let y = match slot.report {
                Some(report) => report,
                None => stand_in(shadow.as_ref(), slot.action, &self.sums, &self.pulls),
            };
            if shadow.observe(slot.action, y).is_err() {
                shadow.observe(slot.action, 0.0).ok()?;
            }
        }
        Some(shadow)
    }

    /// The actions asked whose reports have not been told, in the order asked (with
    /// repeats: an action asked twice is pending twice).
    pub fn pending(&self) -> Vec<usize> {
        self.pending.iter().filter(|s| s.report.is_none()).map(|s| s.action).collect()
    }

    /// The report the device released for an action asked ([`ask`](Self::ask) or
    /// [`ask_batch`](Self::ask_batch); the earliest pending one of that action). A refused
    /// report changes nothing.
    pub fn tell(&mut self, action: usize, report: f64) -> Result<(), OptimizerError> {
        let i = self.pending_slot(action)?;
        if i > 0 {
            // It waits for the actions asked before it; the learner checks it then.
            if !report.is_finite() {
                return Err(OptimizerError::Report(PolicyError::NonFiniteReport));
            }
            self.pending[i].report = Some(report);
            if !self.variance_shadow {
                self.shadow = None;
            }
            return Ok(());
        }
        self.policy.observe(action, report).map_err(OptimizerError::Report)?;
        self.pending.pop_front();
        self.record(action, report);
        self.drain()
    }

    /// Abandons an action asked whose report will never come (the earliest pending one of
    /// that action): the learner is never told of it. A learner that follows a schedule
    /// (LDP-RSE) needs that measurement: the action is asked again, first, by the next
    /// [`ask`](Self::ask) or [`ask_batch`](Self::ask_batch).
    pub fn forget(&mut self, action: usize) -> Result<(), OptimizerError> {
        let i = self.pending_slot(action)?;
        self.shadow = None;
        if self.policy.schedule().is_some() {
            self.pending[i].again = true;
            return Ok(());
        }
        self.pending.remove(i);
        self.drain()
    }

    /// Gives the learner the reports that were waiting for the actions asked before them. A
    /// waiting report the learner refuses (it can only be LDP-RSE's, out of its mechanism's
    /// range) is dropped, its action asked again, and the refusal returned.
    fn drain(&mut self) -> Result<(), OptimizerError> {
        if !self.variance_shadow {
            self.shadow = None;
        }
        while let Some(&Slot { action, report: Some(report), .. }) = self.pending.front() {
            if let Err(e) = self.policy.observe(action, report) {
                self.shadow = None;
                if let Some(front) = self.pending.front_mut() {
                    front.report = None;
                    front.again = true;
                }
                if self.policy.schedule().is_none() {
                    self.pending.pop_front();
                }
                return Err(OptimizerError::Report(e));
            }
            self.pending.pop_front();
            self.record(action, report);
        }
        if self.pending.is_empty() {
            self.shadow = None;
        }
        Ok(())
    }

    /// The earliest pending ask of `action` not yet told, or the refusal naming the earliest
    /// pending one.
    fn pending_slot(&self, action: usize) -> Result<usize, OptimizerError> {
        self.pending.iter().position(|s| s.action == action && s.report.is_none()).ok_or_else(|| {
            let asked = self.pending.iter().find(|s| s.report.is_none()).map(|s| s.action);
            OptimizerError::NotAsked { told: action, asked }
        })
    }

    fn record(&mut self, action: usize, report: f64) {
        self.pulls[action] += 1;
        self.sums[action] += report;
    }

    /// The action to recommend now, by what the learner keeps:
    ///
    /// - GP-UCB, (LDP-)TGP-UCB, (LDP-)ATA-GP-UCB and (LDP-)MoMA-GP-UCB: the action of the best
    ///   posterior mean ([`posterior_means`](Self::posterior_means); ties: the lower index), the
    ///   estimate of f they build from the reports — TGP-UCB's from the reports truncated at their
    ///   rounds' levels, ATA-GP-UCB's from its adaptively truncated ones, MoMA-GP-UCB's from the
    ///   median of means of its completed epochs. It is not the action the learner asks next,
    ///   which adds an exploration bonus.
    /// - UCB1, LDP-UCB, LDP-RSE and Robust-UCB (K-armed, no surrogate): the most measured action
    ///   (ties: the higher mean report, then the lower index); each concentrates its
    ///   measurements on the action it believes best, and counts are public post-processing of
    ///   the reports.
    ///
    /// Before any report it is action 0.
    pub fn recommend(&self) -> usize {
        if let Some(best) = self.policy.recommend() {
            return best;
        }
        if let Some(means) = self.policy.posterior_means() {
            return crate::bo::argmax(means.len(), |i| means[i]);
        }
        let mean = |i: usize| {
            if self.pulls[i] == 0 { f64::NEG_INFINITY } else { self.sums[i] / self.pulls[i] as f64 }
        };
        (0..self.pulls.len())
            .max_by(|&i, &j| {
                self.pulls[i].cmp(&self.pulls[j]).then(mean(i).total_cmp(&mean(j))).then(j.cmp(&i))
            })
            .unwrap_or(0)
    }

    /// The learner's posterior mean of every action (a GP learner's, see
    /// [`recommend`](Self::recommend)), or `None` for a K-armed learner.
    pub fn posterior_means(&self) -> Option<&[f64]> {
        self.policy.posterior_means().map(|m| m.as_slice())
    }

    /// How often each action has been measured.
    pub fn pulls(&self) -> &[u64] {
        &self.pulls
    }

    /// The constants the learner derived, by name (as `run.json` lists them).
    pub fn constants(&self) -> Vec<(&'static str, f64)> {
        self.policy.constants()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{Environment, Noise, Objective, SimRng};
    use crate::gp::{SquaredExponential, gram_matrix};
    use nalgebra::DVector;
    use rand::RngExt;
    use rand_core::SeedableRng;

    fn env() -> Objective {
        let points: Vec<Vec<f64>> = (0..12).map(|i| vec![i as f64 / 11.0]).collect();
        let kernel = SquaredExponential::new(0.2).unwrap();
        let f = |x: &[f64]| 0.8 - (x[0] - 0.6).abs();
        Objective::new("line", points, f, &kernel, Noise::uniform(0.5).unwrap()).unwrap()
    }

    #[test]
    fn tell_must_answer_the_ask_and_bad_settings_are_refused() {
        let mut opt = Optimizer::new("tgp-ucb", Domain::Arms(3), Settings::default()).unwrap();
        assert_eq!(opt.name(), "LDP-TGP-UCB");
        assert_eq!(opt.tell(0, 0.1), Err(OptimizerError::NotAsked { told: 0, asked: None }));
        let arm = opt.ask();
        assert_eq!(opt.ask(), arm, "asking twice gives the same action");
        let other = (arm + 1) % 3;
        assert_eq!(opt.tell(other, 0.1), Err(OptimizerError::NotAsked { told: other, asked: Some(arm) }));
        assert!(matches!(opt.tell(arm, f64::NAN), Err(OptimizerError::Report(PolicyError::NonFiniteReport))));
        opt.tell(arm, 0.1).unwrap();
        assert_eq!(opt.pulls()[arm], 1);

        let unknown = Optimizer::new("gp-ucbb", Domain::Arms(3), Settings::default()).err().unwrap();
        assert!(unknown.to_string().contains("LDP-MoMA-GP-UCB"), "{unknown}");
        for bad in [
            Settings { bound: 0.0, ..Settings::default() },
            Settings { noise_bound: f64::NAN, ..Settings::default() },
            Settings { epsilon: Some(-1.0), ..Settings::default() },
            Settings { horizon: 0, ..Settings::default() },
        ] {
            assert!(matches!(Optimizer::new("ucb1", Domain::Arms(3), bad), Err(OptimizerError::Setting(_))));
        }
        assert!(matches!(
            Optimizer::new("ucb1", Domain::Arms(0), Settings::default()),
            Err(OptimizerError::Setting(_))
        ));
        assert!(matches!(
            Optimizer::new("ucb1", Domain::points(Vec::new()), Settings::default()),
            Err(OptimizerError::Setting(_))
        ));
    }

    /// The K-armed learners of ldp-core, whose capacity is fixed at `MAX_ARMS` (LDP-RSE,
    /// Robust-UCB), take 2 to `MAX_ARMS` actions; another count is refused saying so, not as
    /// "arm 65 is out of range (the problem has 64 arms)". LDP-UCB takes any number.
    #[test]
    fn an_arm_count_a_learner_cannot_take_is_named_as_such() {
        use crate::bandit::policies::MAX_ARMS;
        for name in ["ldp-rse", "robust-ucb"] {
            for arms in [1, MAX_ARMS + 1] {
                let e = Optimizer::new(name, Domain::Arms(arms), Settings::default()).err().unwrap();
                let text = e.to_string();
                assert!(
                    text.contains(&format!("2 to {MAX_ARMS} actions, not {arms}"))
                        && !text.contains("out of range"),
                    "{name}, {arms} arms: {text}"
                );
            }
            assert!(Optimizer::new(name, Domain::Arms(MAX_ARMS), Settings::default()).is_ok(), "{name}");
        }
        assert!(Optimizer::new("ldp-ucb", Domain::Arms(MAX_ARMS + 1), Settings::default()).is_ok());
    }

    /// On a noisy objective the recommendation after T raw reports is the best action or next
    /// to it (GP-UCB, 1000 reports of 12 actions, uniform noise 0.5).
    #[test]
    fn recommend_finds_the_best_action() {
        let env = env();
        let settings = Settings { epsilon: None, horizon: 1000, noise_bound: 0.5, ..Settings::default() };
        let points: Vec<Vec<f64>> = (0..12).map(|i| vec![i as f64 / 11.0]).collect();
        let mut opt = Optimizer::new("gp-ucb", Domain::points(points), settings).unwrap();
        let mut world = SimRng::seed_from_u64(7);
        for _ in 0..1000 {
            let arm = opt.ask();
            let report = env.sample(arm, &mut world);
            opt.tell(arm, report).unwrap();
        }
        // The best action is 0.6 · 11 ≈ 6.6: point 7 (|7/11 − 0.6| = 0.036) or 6 (0.055).
        assert!([6, 7].contains(&opt.recommend()), "{} {:?}", opt.recommend(), opt.pulls());
    }

    /// GP-UCB's posterior means are the naive solve μ = K_{D,X}(K_{X,X} + λI)⁻¹y on the actions
    /// and reports told (λ = 1 under the practical constants), and its recommendation is their
    /// best — which some seeds show apart from the most measured action. A K-armed learner
    /// keeps no posterior and recommends its most measured action.
    #[test]
    fn recommend_is_the_best_mean_of_the_naive_posterior_solve() {
        let points: Vec<Vec<f64>> = (0..8).map(|i| vec![i as f64 / 7.0]).collect();
        let k = gram_matrix(&SquaredExponential::new(0.3).unwrap(), &points).unwrap();
        let f = |x: f64| 0.5 - (x - 0.4).abs();
        let mut apart = 0;
        for seed in 0..20 {
            let settings = Settings {
                epsilon: None,
                horizon: 40,
                constants: Constants::Practical,
                seed,
                ..Settings::default()
            };
            let mut opt = Optimizer::new("gp-ucb", Domain::Covariance(k.clone()), settings).unwrap();
            let mut world = SimRng::seed_from_u64(seed);
            let (mut xs, mut ys) = (Vec::new(), Vec::new());
            for _ in 0..40 {
                let arm = opt.ask();
                let y = f(points[arm][0]) + world.random_range(-1.0..=1.0);
                opt.tell(arm, y).unwrap();
                xs.push(arm);
                ys.push(y);
            }
            let n = xs.len();
            let kxx = DMatrix::from_fn(n, n, |i, j| k[(xs[i], xs[j])]) + DMatrix::identity(n, n);
            let weights = kxx.cholesky().unwrap().solve(&DVector::from_vec(ys));
            let naive: Vec<f64> = (0..8).map(|a| (0..n).map(|i| k[(a, xs[i])] * weights[i]).sum()).collect();
            let means = opt.posterior_means().unwrap();
            for (a, (m, want)) in means.iter().zip(&naive).enumerate() {
                assert!(
                    (m - want).abs() <= 1e-9 * (1.0 + want.abs()),
                    "seed {seed}, action {a}: {m} vs {want}"
                );
            }
            let best = (0..8).max_by(|&i, &j| naive[i].total_cmp(&naive[j]).then(j.cmp(&i))).unwrap();
            assert_eq!(opt.recommend(), best, "seed {seed}");
            let most = (0..8).max_by(|&i, &j| opt.pulls()[i].cmp(&opt.pulls()[j]).then(j.cmp(&i))).unwrap();
            apart += usize::from(most != best);
        }
        assert!(apart > 0, "the best posterior mean was the most measured action for every seed");

        let mut ucb1 = Optimizer::new("ucb1", Domain::Arms(3), Settings::default()).unwrap();
        assert!(ucb1.posterior_means().is_none());
        for report in [0.1, 0.9, 0.2, 0.3] {
            let arm = ucb1.ask();
            ucb1.tell(arm, report).unwrap();
        }
        let most = (0..3).max_by(|&i, &j| ucb1.pulls()[i].cmp(&ucb1.pulls()[j]).then(j.cmp(&i))).unwrap();
        assert_eq!(ucb1.recommend(), most);
    }

    fn line_points(n: usize) -> Vec<Vec<f64>> {
        (0..n).map(|i| vec![i as f64 / (n - 1) as f64]).collect()
    }

    /// Every learner the optimiser offers, by name, on `arms` arms (points of a line for the GP
    /// learners).
    fn every_learner(arms: usize, seed: u64) -> Vec<Optimizer> {
        let settings = Settings { horizon: 300, seed, ..Settings::default() };
        learners()
            .iter()
            .map(|spec| {
                Optimizer::with_spec(*spec, Domain::points(line_points(arms)), settings)
                    .unwrap_or_else(|e| panic!("{}: {e}", spec.label(true)))
            })
            .collect()
    }

    /// A batch of one with nothing pending is ask()'s action, bit for bit, for every learner:
    /// the same reports give the same actions and the same posterior.
    #[test]
    fn a_batch_of_one_is_the_sequential_learner() {
        let env = env();
        for (mut one, mut batch) in every_learner(12, 3).into_iter().zip(every_learner(12, 3)) {
            let mut world = SimRng::seed_from_u64(11);
            for _ in 0..150 {
                let a = one.ask();
                let level = one.device_level();
                let asked = batch.ask_batch(1);
                assert_eq!(asked, vec![Asked { action: a, device_level: level }], "{}", one.name());
                let report = env.sample(a, &mut world);
                one.tell(a, report).unwrap();
                batch.tell(a, report).unwrap();
            }
            assert_eq!(one.pulls(), batch.pulls(), "{}", one.name());
            assert_eq!(one.posterior_means(), batch.posterior_means(), "{}", one.name());
        }
    }

    /// Reports told in any order are given to the learner in the order asked: shuffled tells
    /// leave the same learner as tells in order (same next batch, same posterior).
    #[test]
    fn reports_told_in_any_order_reach_the_learner_in_ask_order() {
        let env = env();
        for (mut ordered, mut shuffled) in every_learner(12, 5).into_iter().zip(every_learner(12, 5)) {
            let mut world = SimRng::seed_from_u64(2);
            let mut order = SimRng::seed_from_u64(9);
            for _ in 0..20 {
                let a = ordered.ask_batch(7);
                let b = shuffled.ask_batch(7);
                assert_eq!(a, b, "{}", ordered.name());
                let reports: Vec<f64> = a.iter().map(|x| env.sample(x.action, &mut world)).collect();
                for (x, &r) in a.iter().zip(&reports) {
                    ordered.tell(x.action, r).unwrap();
                }
                let mut idx: Vec<usize> = (0..a.len()).collect();
                for i in (1..idx.len()).rev() {
                    idx.swap(i, order.random_range(0..=i));
                }
                // tell() gives a report to the earliest pending ask of its action: the k-th tell
                // of an action carries the report of its k-th ask.
                let mut next_of: std::collections::HashMap<usize, Vec<f64>> = Default::default();
                for (x, &r) in a.iter().zip(&reports) {
                    next_of.entry(x.action).or_default().push(r);
                }
                let mut used: std::collections::HashMap<usize, usize> = Default::default();
                for &i in &idx {
                    let action = a[i].action;
                    let k = used.entry(action).or_default();
                    shuffled.tell(action, next_of[&action][*k]).unwrap();
                    *k += 1;
                }
                assert!(shuffled.pending().is_empty() && ordered.pending().is_empty());
            }
            assert_eq!(ordered.pulls(), shuffled.pulls(), "{}", ordered.name());
            assert_eq!(ordered.posterior_means(), shuffled.posterior_means(), "{}", ordered.name());
            assert_eq!(ordered.ask_batch(5), shuffled.ask_batch(5), "{}", ordered.name());
        }
    }

    /// GP-BUCB: the learner's posterior mean is not moved by the pending actions' stand-ins,
    /// while their variance is, so a GP learner's batch spreads over the line instead of
    /// repeating its best UCB action; without stand-ins (copies of the learner that are told
    /// nothing) every member would be the same action.
    #[test]
    fn a_gp_batch_keeps_the_mean_and_spreads_its_actions() {
        let env = env();
        for name in ["gp-ucb", "ldp-tgp-ucb"] {
            let settings = Settings { horizon: 300, seed: 1, ..Settings::default() };
            let mut opt = Optimizer::new(name, Domain::points(line_points(40)), settings).unwrap();
            let mut world = SimRng::seed_from_u64(4);
            for _ in 0..10 {
                let a = opt.ask();
                opt.tell(a, env.sample(a * 11 / 39, &mut world)).unwrap();
            }
            let means = opt.posterior_means().unwrap().to_vec();
            let batch = opt.ask_batch(8);
            let shadow = opt.build_shadow().unwrap();
            let shadow_means = shadow.posterior_means().unwrap();
            for (m, s) in means.iter().zip(shadow_means.iter()) {
                assert!((m - s).abs() <= 1e-9 * (1.0 + m.abs()), "{name}: {m} vs {s}");
            }
            let mut distinct: Vec<usize> = batch.iter().map(|x| x.action).collect();
            distinct.sort_unstable();
            distinct.dedup();
            // Under ε = 1 the report noise variance λ is about 9 against a prior variance of 1:
            // one pending report takes little variance, so a batch may repeat an action.
            assert!(distinct.len() >= 3, "{name}: {batch:?}");
            let mut copy = opt.policy.fork().unwrap();
            let first = copy.select();
            assert!((0..8).all(|_| copy.select() == first), "copies told nothing repeat their action");
        }
    }

    /// UCB1 counts pending measurements: on two arms after one report each, a batch of 40
    /// splits between them (each pending pull narrows its arm's width), where a learner blind
    /// to pending pulls would give all 40 to the same arm.
    #[test]
    fn a_k_armed_batch_counts_pending_pulls() {
        let mut opt = Optimizer::new("ucb1", Domain::Arms(2), Settings::default()).unwrap();
        for report in [0.2, 0.1] {
            let a = opt.ask();
            opt.tell(a, report).unwrap();
        }
        let batch = opt.ask_batch(40);
        let first = batch.iter().filter(|x| x.action == 0).count();
        assert_eq!(batch.len(), 40);
        assert!((10..=30).contains(&first), "{first} of 40 to arm 0");
        assert_eq!(opt.pending().len(), 40);
    }

    /// LDP-RSE's batch stops at its epoch's end (the next epoch's arms depend on its reports),
    /// each action carrying its epoch's device level; a forgotten action is asked again, first,
    /// in its place; once its reports are in, the next epoch is asked.
    #[test]
    fn an_elimination_batch_stops_at_its_epoch_and_asks_a_forgotten_action_again() {
        let settings = Settings { horizon: 10_000, ..Settings::default() };
        let mut opt = Optimizer::new("ldp-rse", Domain::Arms(4), settings).unwrap();
        let level = opt.device_level();
        let epoch = opt.ask_batch(1000);
        assert!(!epoch.is_empty() && epoch.len() < 1000, "{}", epoch.len());
        assert!(epoch.iter().all(|x| x.device_level == level));
        assert!(opt.ask_batch(5).is_empty(), "nothing more before the epoch's reports");
        let lost = epoch[1].action;
        opt.forget(lost).unwrap();
        assert_eq!(opt.ask_batch(3), vec![epoch[1]], "the forgotten pull, asked again in its place");
        for x in &epoch {
            opt.tell(x.action, 0.1 * x.action as f64).unwrap();
        }
        assert!(opt.pending().is_empty());
        assert!(!opt.ask_batch(1000).is_empty(), "the next epoch");
    }

    /// A forgotten action of a learner free of schedules is never told to it: forgetting one of
    /// a batch and telling the rest leaves the learner told only those reports.
    #[test]
    fn a_forgotten_action_is_never_told() {
        let env = env();
        let settings = Settings { horizon: 300, seed: 2, ..Settings::default() };
        let mut opt = Optimizer::new("ldp-tgp-ucb", Domain::points(line_points(12)), settings).unwrap();
        let mut plain = Optimizer::new("ldp-tgp-ucb", Domain::points(line_points(12)), settings).unwrap();
        let mut world = SimRng::seed_from_u64(8);
        let batch = opt.ask_batch(4);
        opt.forget(batch[0].action).unwrap();
        assert!(opt.forget(99).is_err());
        for x in &batch[1..] {
            let r = env.sample(x.action, &mut world);
            opt.tell(x.action, r).unwrap();
            plain.ask();
            plain.pending.clear();
            plain.pending.push_back(Slot { action: x.action, level: None, report: None, again: false });
            plain.tell(x.action, r).unwrap();
        }
        assert!(opt.pending().is_empty());
        assert_eq!(opt.pulls(), plain.pulls());
        assert_eq!(opt.posterior_means(), plain.posterior_means());
        assert!(matches!(opt.tell(batch[0].action, 0.1), Err(OptimizerError::NotAsked { .. })));
    }

    /// A report told early for a later action of a batch is checked at once (finite), waits,
    /// and a report for no pending action is refused naming the earliest one pending.
    #[test]
    fn a_waiting_report_is_checked_and_a_stray_one_refused() {
        let mut opt = Optimizer::new("gp-ucb", Domain::Arms(5), Settings::default()).unwrap();
        let batch = opt.ask_batch(3);
        let last = batch[2].action;
        assert!(matches!(
            opt.tell(last, f64::NAN),
            Err(OptimizerError::Report(PolicyError::NonFiniteReport))
        ));
        opt.tell(last, 0.3).unwrap();
        assert_eq!(opt.pending().len(), 2);
        assert_eq!(opt.posterior_means().unwrap().iter().filter(|&&m| m != 0.0).count(), 0, "still waiting");
        let stray = (0..5).find(|a| !batch.iter().any(|x| x.action == *a)).unwrap();
        assert_eq!(
            opt.tell(stray, 0.1),
            Err(OptimizerError::NotAsked { told: stray, asked: Some(batch[0].action) })
        );
        assert_eq!(opt.ask(), batch[0].action, "ask() gives the earliest pending action");
    }

    /// Batches learn: GP-UCB asked 10 at a time (1000 raw reports of 12 actions) recommends
    /// the best action or next to it, as the sequential learner does.
    #[test]
    fn a_batched_learner_finds_the_best_action() {
        let env = env();
        let settings = Settings { epsilon: None, horizon: 1000, noise_bound: 0.5, ..Settings::default() };
        let mut opt = Optimizer::new("gp-ucb", Domain::points(line_points(12)), settings).unwrap();
        let mut world = SimRng::seed_from_u64(7);
        for _ in 0..100 {
            for x in opt.ask_batch(10) {
                opt.tell(x.action, env.sample(x.action, &mut world)).unwrap();
            }
        }
        assert!([6, 7].contains(&opt.recommend()), "{} {:?}", opt.recommend(), opt.pulls());
    }

    /// GP-BUCB against a naive solve, with reports arriving while others are pending: every
    /// action asked while some are pending is the argmax of μ_t + β_{t+1} σ, μ_t the posterior
    /// mean of the t reports received and σ² the posterior variance given every point selected
    /// (received or pending), both solved afresh from the prior covariance.
    #[test]
    fn gp_bucb_matches_a_naive_solve_while_reports_arrive() {
        let points = line_points(15);
        let k = gram_matrix(&SquaredExponential::new(0.25).unwrap(), &points).unwrap();
        let f = |x: f64| 0.6 - (x - 0.3).abs();
        let settings = Settings { epsilon: None, horizon: 200, noise_bound: 0.5, ..Settings::default() };
        let mut opt = Optimizer::new("gp-ucb", Domain::Covariance(k.clone()), settings).unwrap();
        let lambda = opt.constants().iter().find(|c| c.0 == "lambda").unwrap().1;
        let delta = opt.constants().iter().find(|c| c.0 == "delta").unwrap().1;
        let mut world = SimRng::seed_from_u64(3);
        let (mut told, mut ys): (Vec<usize>, Vec<f64>) = (Vec::new(), Vec::new());
        let mut in_flight: std::collections::VecDeque<usize> =
            opt.ask_batch(5).iter().map(|x| x.action).collect();
        let mut checked = 0;
        for _ in 0..40 {
            // The oldest report arrives, then one more action is asked.
            let a = in_flight.pop_front().unwrap();
            let y = f(points[a][0]) + world.random_range(-0.5..=0.5);
            opt.tell(a, y).unwrap();
            told.push(a);
            ys.push(y);
            let next = opt.ask_batch(1)[0].action;
            // Naive: μ from the reports received, σ² given the received and pending points.
            let solve = |xs: &[usize]| {
                let n = xs.len();
                let kxx = DMatrix::from_fn(n, n, |i, j| k[(xs[i], xs[j])]) + DMatrix::identity(n, n) * lambda;
                kxx.cholesky().unwrap()
            };
            let chol = solve(&told);
            let w = chol.solve(&DVector::from_vec(ys.clone()));
            let mut selected = told.clone();
            selected.extend(in_flight.iter().copied());
            let chol_all = solve(&selected);
            let t = told.len();
            let beta = crate::bo::calibrated::beta(15, t + 1, delta);
            let score = |x: usize| {
                let mean: f64 = (0..t).map(|i| k[(x, told[i])] * w[i]).sum();
                let kx = DVector::from_fn(selected.len(), |i, _| k[(x, selected[i])]);
                let var = (k[(x, x)] - kx.dot(&chol_all.solve(&kx))).max(0.0);
                mean + beta * var.sqrt()
            };
            let best = (0..15).map(score).fold(f64::NEG_INFINITY, f64::max);
            assert!(
                (score(next) - best).abs() <= 1e-9 * (1.0 + best.abs()),
                "action {next}: {} vs {best}",
                score(next)
            );
            in_flight.push_back(next);
            checked += 1;
        }
        assert_eq!(checked, 40);
    }

    /// LDP-ATA-GP-UCB's and LDP-MoMA-GP-UCB's batches are GP-BUCB with their Nyström
    /// variances, which depend on the points played alone: the copy that chooses a pending
    /// batch is kept while reports arrive, and every action asked while some are pending is the
    /// one a copy rebuilt afresh (the learner told every pending point, whatever the report)
    /// gives by the learner's own mean and β — or, MoMA in a running epoch, that epoch's arm.
    /// The kept copy's variances equal the rebuilt one's bit for bit.
    #[test]
    fn ata_and_moma_batches_match_a_copy_rebuilt_at_every_ask() {
        let points = line_points(15);
        let k = gram_matrix(&SquaredExponential::new(0.25).unwrap(), &points).unwrap();
        let f = |x: f64| 0.6 - (x - 0.3).abs();
        for name in ["ldp-ata-gp-ucb", "ldp-moma-gp-ucb"] {
            let settings =
                Settings { epsilon: Some(1.0), horizon: 300, noise_bound: 0.5, ..Settings::default() };
            let mut opt = Optimizer::new(name, Domain::Covariance(k.clone()), settings).unwrap();
            let mut world = SimRng::seed_from_u64(5);
            let mut in_flight: std::collections::VecDeque<usize> =
                opt.ask_batch(6).iter().map(|x| x.action).collect();
            let (mut by_variance, mut distinct) = (0, std::collections::BTreeSet::new());
            for step in 0..280 {
                let a = in_flight.pop_front().unwrap();
                opt.tell(a, f(points[a][0]) + world.random_range(-0.5..=0.5)).unwrap();
                let mut rebuilt = opt.policy.fork().unwrap();
                for &p in &in_flight {
                    rebuilt.observe(p, 0.0).unwrap();
                }
                let expected = match rebuilt.posterior_variances() {
                    Some(v) => {
                        let kept = opt.shadow.as_ref().and_then(|s| s.posterior_variances());
                        let bits = |v: &DVector<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(kept.as_ref().map(bits), Some(bits(&v)), "{name}, step {step}");
                        by_variance += 1;
                        opt.policy.fork().unwrap().select_with_variances(&v).unwrap()
                    }
                    None => rebuilt.select(),
                };
                let next = opt.ask_batch(1)[0].action;
                assert_eq!(next, expected, "{name}, step {step}");
                distinct.insert(next);
                in_flight.push_back(next);
            }
            assert!(
                by_variance >= 15 && distinct.len() >= 3,
                "{name}: {by_variance} by variance, {distinct:?}"
            );
        }
    }
}
