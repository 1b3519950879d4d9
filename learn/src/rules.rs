//! The constants rules: what a learner derives before its first report, from public settings
//! only.
//!
//! A learner knows the domain (its prior covariance over the actions), the reward bounds
//! ([`RewardBounds`]: B, R, α, v, c) and the run's public settings ([`Public`]: T, ε, λ, δ, the
//! β multiplier, the constants mode). [`problem`] turns them into the [`Problem`] every learner
//! is built from. For CTL(ε)-privatised reports v and c are the privatised rewards' moment
//! bounds (Zhou & Tan Appendix C and Corollary 1) and 𝓛 the device's Laplace scale; under the
//! calibrated constants λ is the observed noise variance ([`calibrated`]). No true f enters.
//!
//! [`derive_seed`] is the one seed rule: every trial, learner and device seed of a run is
//! `derive_seed(master, a, b)` of the run's master seed.

use nalgebra::DMatrix;

use ldp_core::truncation::ldp_second_moment;
use ldp_core::{Bound, Epsilon, LaplaceMechanism, ParamError};

use crate::bo::calibrated;
use crate::env::RewardBounds;
use crate::gp::{FiniteCovariance, KernelError};
use crate::policy::{Constants, Privacy, Problem};

/// The public settings a learner's constants come from (with the domain's prior and the reward
/// bounds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Public {
    /// T: the horizon.
    pub horizon: usize,
    /// ε of every report when the device privatises (local DP); `None` when the learner sees
    /// raw rewards (a non-private run, or central DP).
    pub report_epsilon: Option<Epsilon>,
    /// ε of the learner's own outputs in central DP (Tao et al. Alg. 1, 3; Agarwal & Singh), else `None`.
    pub central_epsilon: Option<f64>,
    /// λ of the GP surrogate (the calibrated constants set it to the observed noise variance).
    pub lambda: f64,
    /// δ of the β formulas.
    pub delta: f64,
    /// Multiplies every β_t (1 = the constants as given).
    pub beta_scale: f64,
    /// Calibrated, practical or paper constants.
    pub constants: Constants,
    /// The user's own v in place of the derived one.
    pub v: Option<f64>,
    /// The user's own c in place of the derived one.
    pub c: Option<f64>,
}

impl Public {
    /// Raw rewards over `horizon` rounds with the default constants: the calibrated rule, λ = 1
    /// and δ = 0.1 where a mode uses them, β as given.
    pub fn new(horizon: usize) -> Self {
        Self {
            horizon,
            report_epsilon: None,
            central_epsilon: None,
            lambda: 1.0,
            delta: 0.1,
            beta_scale: 1.0,
            constants: Constants::Calibrated,
            v: None,
            c: None,
        }
    }
}

/// Why a [`Problem`] could not be set up.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ProblemError {
    /// The prior covariance is not a valid covariance.
    Kernel(KernelError),
    /// Private reports need a bound R on the raw noise and the rewards' noise has none.
    UnboundedNoise,
    /// The CTL(ε) mechanism cannot be configured with these B, R and ε.
    Mechanism(ParamError),
}

impl std::fmt::Display for ProblemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Kernel(e) => write!(f, "{e}"),
            Self::UnboundedNoise => f.write_str(
                "the environment's noise is unbounded, so CTL(eps) has no R: use a bounded-noise environment",
            ),
            Self::Mechanism(e) => write!(f, "device configuration: {e}"),
        }
    }
}

impl std::error::Error for ProblemError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Kernel(e) => Some(e),
            _ => None,
        }
    }
}

/// The learner's public problem from what it knows: the prior covariance over the arms, the
/// reward constants (an environment's, or a device's B and R) and the public settings.
pub fn problem(prior: DMatrix<f64>, bounds: RewardBounds, public: &Public) -> Result<Problem, ProblemError> {
    let covariance = FiniteCovariance::new(prior).map_err(ProblemError::Kernel)?;
    let (v, c, privacy) = match public.report_epsilon {
        None => (bounds.v, bounds.c, None),
        Some(eps) => {
            let r = bounds.r.ok_or(ProblemError::UnboundedNoise)?;
            let cfg = ProblemError::Mechanism;
            let (b, rb) = (Bound::new(bounds.b).map_err(cfg)?, Bound::new(r).map_err(cfg)?);
            let mechanism = LaplaceMechanism::ctl(eps, b, rb).map_err(cfg)?;
            let v = ldp_second_moment(b, rb, eps);
            let e = eps.get();
            let c = r * r + 8.0 * (bounds.b + r).powi(2) / (e * e);
            (v, c, Some(Privacy { epsilon: e, laplace_scale: mechanism.noise_scale() }))
        }
    };

    // The user's own v and c (`custom --v --c`) replace the derived ones, privatised or not.
    let (v, c) = (public.v.unwrap_or(v), public.c.unwrap_or(c));
    let mut problem = Problem {
        covariance,
        b: bounds.b,
        noise_bound: bounds.r,
        alpha: bounds.alpha,
        v,
        c,
        horizon: public.horizon,
        lambda: public.lambda,
        delta: public.delta,
        privacy,
        central_epsilon: public.central_epsilon,
        beta_scale: public.beta_scale,
        tie_order: None,
    };
    if public.constants == Constants::Calibrated {
        problem.lambda = calibrated::observed_variance(&problem);
    }
    Ok(problem)
}

/// SplitMix64 finaliser: a seed per (master, a, b), well mixed.
pub fn derive_seed(master: u64, a: u64, b: u64) -> u64 {
    let mut z = master ^ a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds() -> RewardBounds {
        RewardBounds { b: 1.0, r: Some(1.0), alpha: 1.0, v: 2.0, c: 1.0 }
    }

    /// Private reports: v and c are the privatised rewards' bounds (Zhou & Tan Appendix C,
    /// Corollary 1), 𝓛 is the mechanism's, and the user's own v and c replace the derived ones.
    #[test]
    fn private_constants_come_from_b_r_and_epsilon() {
        let eps = Epsilon::new(1.0).unwrap();
        let public = Public { report_epsilon: Some(eps), constants: Constants::Practical, ..Public::new(10) };
        let p = problem(DMatrix::identity(3, 3), bounds(), &public).unwrap();
        let (b, r) = (Bound::new(1.0).unwrap(), Bound::new(1.0).unwrap());
        assert_eq!(p.v, ldp_second_moment(b, r, eps));
        assert_eq!(p.c, 1.0 + 8.0 * 4.0);
        let scale = LaplaceMechanism::ctl(eps, b, r).unwrap().noise_scale();
        assert_eq!(p.privacy, Some(Privacy { epsilon: 1.0, laplace_scale: scale }));
        assert_eq!(p.lambda, 1.0, "practical constants keep λ");
        let own = Public { v: Some(7.0), c: Some(3.0), ..public };
        let p = problem(DMatrix::identity(3, 3), bounds(), &own).unwrap();
        assert_eq!((p.v, p.c), (7.0, 3.0));
        // Raw rewards keep the bounds' own v and c.
        let p = problem(DMatrix::identity(3, 3), bounds(), &Public::new(10)).unwrap();
        assert_eq!((p.v, p.c, p.privacy), (2.0, 1.0, None));
    }

    #[test]
    fn unusable_settings_are_refused() {
        let eps = Epsilon::new(1.0).unwrap();
        let public = Public { report_epsilon: Some(eps), ..Public::new(10) };
        let unbounded = RewardBounds { r: None, ..bounds() };
        assert_eq!(
            problem(DMatrix::identity(2, 2), unbounded, &public).unwrap_err(),
            ProblemError::UnboundedNoise
        );
        let not_a_covariance = DMatrix::from_row_slice(2, 2, &[1.0, 5.0, 4.0, 1.0]);
        assert!(matches!(problem(not_a_covariance, bounds(), &public), Err(ProblemError::Kernel(_))));
        let no_bound = RewardBounds { b: f64::NAN, ..bounds() };
        assert!(matches!(
            problem(DMatrix::identity(2, 2), no_bound, &public),
            Err(ProblemError::Mechanism(_))
        ));
    }
}
