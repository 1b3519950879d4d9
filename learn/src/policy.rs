//! The learner contract: what every learner is given, what it must do each round, and how the
//! runner builds one by name.
//!
//! A learner only ever sees the [`Problem`] (public: bounds, the prior over the arms, ε, the
//! horizon; never f or a raw reward) and the reports passed to [`Policy::observe`]. It is a step
//! function over rounds (argmin's `next_iter` style): the caller owns the loop, asks
//! [`Policy::select`] for an arm, plays it on a device and tells the report. An
//! [`AlgorithmSpec`] names a learner and builds it from a Problem, the [`Constants`] mode and
//! its own seed; the GP learners ([`crate::bo`]), the K-armed ones ([`crate::bandit`]) and
//! [`crate::optimizer`]'s ask/tell all meet here.

use nalgebra::DVector;

use crate::gp::FiniteCovariance;

/// Everything public a learner may use: the arms, the prior and the paper's constants.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Prior covariance over the arms (kernel Gram matrix or empirical covariance).
    pub covariance: FiniteCovariance,
    /// B: bound on |f|.
    pub b: f64,
    /// R: bound on the raw noise, when bounded.
    pub noise_bound: Option<f64>,
    /// α ∈ (0, 1]: the observed rewards have a finite (1+α)-th moment.
    pub alpha: f64,
    /// v: bound on E|y|^{1+α} of the rewards the learner observes. For privatised rewards
    /// this is `B² + R² + 8(B+R)²/ε²` (Zhou & Tan Appendix C).
    pub v: f64,
    /// c: bound on E|y − f|^{1+α} of the observed rewards' noise (MoMA's constant). For
    /// privatised rewards `R² + 8(B+R)²/ε²` (Zhou & Tan Corollary 1).
    pub c: f64,
    /// T: the horizon.
    pub horizon: usize,
    /// λ: the GP regulariser (noise variance of the surrogate model).
    pub lambda: f64,
    /// δ: the confidence parameter of the β formulas.
    pub delta: f64,
    /// Present when rewards are CTL(ε)-privatised: ε and the Laplace scale 𝓛.
    pub privacy: Option<Privacy>,
    /// Present in central-DP runs: the learner sees raw rewards and must make its own outputs
    /// ε-DP (Tao et al. Alg. 1, 3; Agarwal & Singh).
    pub central_epsilon: Option<f64>,
    /// Multiplies every policy's β_t (1 = the constants as given). The practical and paper
    /// constants make β_t ≈ 20–90 at T = 1000, so UCB selection is driven by σ alone; this knob
    /// lets a user study less exploration without editing formulas.
    pub beta_scale: f64,
    /// The order in which the UCB learners break exact ties between arms (`None`: the lowest
    /// index first). The runner sets a seeded random order per trial under the calibrated
    /// constants ([`crate::bo::tie_order`]), so a table's column order cannot favour an arm: with every
    /// unplayed arm tied at the start, first-on-ties plays the first columns first (on a table
    /// sorted by mean, LDP-MoMA at T = 1000, ε = 1, 10 trials: 1.08 ± 0.03× uniform play first on
    /// ties, 1.02 ± 0.04× in a random order).
    pub tie_order: Option<Vec<usize>>,
}

/// The public privacy parameters of the reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Privacy {
    /// ε per report.
    pub epsilon: f64,
    /// 𝓛: the Laplace scale actually used by the device (≈ 2(B+R)/ε).
    pub laplace_scale: f64,
}

impl Problem {
    /// Number of arms.
    pub fn num_arms(&self) -> usize {
        self.covariance.domain_size()
    }
}

/// A learner the runner can build: its names and its constructor. Experiments list these, so a
/// new algorithm family adds its own specs without touching the runner.
#[derive(Clone, Copy)]
pub struct AlgorithmSpec {
    /// Name in non-private runs.
    pub name: &'static str,
    /// Name when it learns from privatised reports (LDP) or privatises itself (central DP).
    pub private_name: &'static str,
    /// Builds the policy for a problem with the chosen constants and its own seed.
    pub build: BuildPolicy,
}

/// A policy constructor: problem, constants and the policy's own seed.
pub type BuildPolicy = fn(&Problem, Constants, u64) -> Result<Box<dyn Policy>, PolicyError>;

impl AlgorithmSpec {
    /// The name for a private or non-private run.
    pub fn label(&self, private: bool) -> &'static str {
        if private { self.private_name } else { self.name }
    }
}

impl std::fmt::Debug for AlgorithmSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for AlgorithmSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.private_name == other.private_name
    }
}

impl serde::Serialize for AlgorithmSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name)
    }
}

/// Whether the learner name `name` (as `host-sim list` prints it, any case) names the learner
/// labelled `label`: the same name, the name with the `LDP-` of a private run, or either
/// followed by a sweep's grid point (`DP-RSE` names `DP-RSE v=0.5 eps=1`).
pub fn names_learner(name: &str, label: &str) -> bool {
    let (name, label) = (name.trim().to_lowercase(), label.to_lowercase());
    [name.clone(), format!("ldp-{name}")]
        .iter()
        .any(|n| label == *n || label.strip_prefix(n.as_str()).is_some_and(|rest| rest.starts_with(' ')))
}

/// Which constants a policy uses (SPEC §2.2: the calibrated rule ships; the practical and the
/// paper's are kept by name). `docs/constants.md` lists every constant in each mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Constants {
    /// One rule for every learner and data set: λ = the observed noise variance, the GP-UCB β
    /// schedule with one multiplier, robustness constants at the theorems' order
    /// ([`crate::bo::calibrated`]).
    #[default]
    Calibrated,
    /// The settings of Chowdhury & Gopalan's public code, which Zhou & Tan's experiments follow.
    Practical,
    /// The constants of the theorems.
    Paper,
}

impl Constants {
    /// The name on the command line and in `run.json`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Calibrated => "calibrated",
            Self::Practical => "practical",
            Self::Paper => "paper",
        }
    }
}

/// A learner: a step function over rounds (argmin's `next_iter` style). The runner owns the
/// loop: `select`, play the arm on the device, `observe` the report.
pub trait Policy: Send {
    /// The arm to play next (0-based).
    fn select(&mut self) -> usize;
    /// The report for the arm just played.
    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError>;
    /// A public truncation level for the device to apply before its noise (Tao et al. Alg. 4:
    /// `x·1{|x| ≤ B_τ}` plus Lap(2B_τ/ε)); `None` (the default) for CTL's clamp to B + R.
    fn device_level(&self) -> Option<f64> {
        None
    }
    /// The constants the policy derived from the problem and its constants mode, by name (for
    /// `run.json`; values that change during a run are given at their first round).
    fn constants(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// The learner's current estimate of every arm's mean, for a learner that keeps a surrogate
    /// over the arms (the GP learners: their posterior mean); `None` (the default) for one that
    /// keeps only per-arm statistics (the K-armed learners).
    fn posterior_means(&self) -> Option<&DVector<f64>> {
        None
    }
    /// The action the learner recommends from what it keeps, for a learner that keeps no
    /// posterior mean of every arm ([`posterior_means`](Self::posterior_means)) but has its own
    /// rule (a large point set's: the told action of best posterior mean); `None` (the
    /// default) otherwise.
    fn recommend(&self) -> Option<usize> {
        None
    }
    /// A copy of the learner in its current state, for choosing actions while reports are
    /// pending ([`crate::optimizer::Optimizer::ask_batch`]: the copy is told stand-in reports
    /// and asked, the learner itself only the real reports). `None` (the default): the learner
    /// must see each report before its next choice, and is asked one action at a time.
    fn fork(&self) -> Option<Box<dyn Policy>> {
        None
    }
    /// The posterior variance of every arm, for a learner that chooses by its posterior mean
    /// and variance alone ([`select_with_variances`](Self::select_with_variances)); `None` (the
    /// default) otherwise.
    fn posterior_variances(&self) -> Option<DVector<f64>> {
        None
    }
    /// The arm this learner would choose with its own mean and confidence width but the
    /// variances `variances` (a copy's that was also told the pending actions: GP-BUCB's rule,
    /// the variance of every selected point with the mean of the reports received); `None`
    /// (the default) for a learner that does not choose that way. A batch's copy then only
    /// ever needs the pending points, never the reports: it is kept while reports arrive.
    fn select_with_variances(&mut self, variances: &DVector<f64>) -> Option<usize> {
        let _ = variances;
        None
    }
    /// For a learner whose actions follow a schedule it fixes from reports (successive
    /// elimination: each epoch plays the surviving arms a set number of times), a number that
    /// changes whenever it takes such a decision (its epoch, and whether it has committed);
    /// a batch of actions never runs past a change, since the decision needs the real
    /// reports. `None` (the default): any arm may be told in any order.
    fn schedule(&self) -> Option<u64> {
        None
    }
}

/// A learner could not use a report.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum PolicyError {
    /// The arm is not one of the problem's arms.
    ArmOutOfRange {
        /// The arm given.
        arm: usize,
        /// Number of arms.
        arms: usize,
    },
    /// The learner's fixed-size arrays (ldp-core's capacity K) hold `min..=max` arms only, and
    /// the problem has another count.
    ArmCount {
        /// The problem's arms.
        arms: usize,
        /// The fewest arms the learner takes.
        min: usize,
        /// The most arms the learner takes.
        max: usize,
    },
    /// A report for another arm than the one the learner dictated this round (successive
    /// elimination, EXP3), or before it selected one.
    UnexpectedArm {
        /// The arm the learner selected (`None`: none yet).
        expected: Option<usize>,
        /// The arm given.
        got: usize,
    },
    /// The report was NaN or infinite.
    NonFiniteReport,
    /// The report is larger than the device's mechanism can release: the device did not send it.
    ReportOutOfRange,
    /// The posterior update failed numerically (matrix not positive definite).
    Numerical,
    /// A setting the learner cannot work with (the message says which and why).
    InvalidSetting(&'static str),
}

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ArmOutOfRange { arm, arms } => {
                write!(f, "arm {arm} is out of range (the problem has {arms} arms)")
            }
            Self::ArmCount { arms, min, max } => write!(
                f,
                "this learner takes {min} to {max} actions, not {arms} (it keeps its per-arm state in fixed arrays of {max}, to run on a device too): \
                 use LDP-UCB or a GP learner (GP-UCB, LDP-TGP-UCB, ...), which take any number"
            ),
            Self::UnexpectedArm { expected: Some(expected), got } => write!(
                f,
                "a report for arm {got}, but the learner selected arm {expected} this round: report the arm it selected"
            ),
            Self::UnexpectedArm { expected: None, got } => {
                write!(f, "a report for arm {got} before the learner selected an arm: select first, then report")
            }
            Self::NonFiniteReport => {
                f.write_str("a report was NaN or infinite: the device must never send one")
            }
            Self::ReportOutOfRange => f.write_str(
                "a report was larger than the device's mechanism can release: the device did not send it (a faulty \
                 or tampered link); check the link and the device's settings",
            ),
            Self::Numerical => f.write_str("posterior update failed numerically: increase lambda"),
            Self::InvalidSetting(why) => write!(f, "invalid learner setting: {why}"),
        }
    }
}

impl std::error::Error for PolicyError {}

/// The checks every [`Policy::observe`] makes first: the arm is one of `arms` and the report
/// is finite.
pub(crate) fn check_report(arm: usize, arms: usize, report: f64) -> Result<(), PolicyError> {
    if arm >= arms {
        return Err(PolicyError::ArmOutOfRange { arm, arms });
    }
    if !report.is_finite() {
        return Err(PolicyError::NonFiniteReport);
    }
    Ok(())
}
