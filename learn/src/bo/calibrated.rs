//! The calibrated constants ([`Constants::Calibrated`](crate::policy::Constants::Calibrated),
//! the default): one rule, the same for every GP learner, experiment and data set, derived
//! from public quantities only.
//!
//! 1. **Noise term.** The GP regulariser λ is the variance of what the learner receives,
//!    σ²_obs = c^{2/(1+α)}, where c bounds E|y − f|^{1+α} of the observed rewards. For α = 1
//!    (every LDP run and every data set here) c *is* the second moment of the observed noise:
//!    under CTL(ε) it is R² + 8(B+R)²/ε² = R² + 2𝓛² with 𝓛 = 2(B+R)/ε (Zhou & Tan Cor. 1), for
//!    Student-t(3) noise 3, for a data table the mean squared noise. With λ = σ²_obs and the
//!    kernel as the prior covariance, μ_t and σ_t are the Bayesian posterior of f.
//! 2. **Exploration.** β_t = [`KAPPA`] · √(2 ln(|D| t² π² / (6δ))), the schedule of GP-UCB on a
//!    finite domain D (Srinivas et al. 2010, Thm 1), with one fixed multiplier κ for every
//!    learner. t counts the learner's updates: rounds for GP-UCB, TGP-UCB and ATA-GP-UCB, epochs
//!    for MoMA-GP-UCB. MoMA-GP-UCB's λ is the variance of its median-of-means estimate
//!    ([`moma_noise_variance`]) and its κ its own ([`MOMA_KAPPA`]), chosen the same way.
//! 3. **Robustness constants at the theorems' order; truncate noise, not signal.** A level is
//!    the signal bound B, plus the known bound R of the raw noise (when there is one), plus the
//!    theorem's level for the part of the noise that has no bound ([`LevelRule`]): under CTL(ε)
//!    that part is the Laplace noise (Zhou & Tan Alg. 2's 𝓛 ln t for TGP-UCB; Thm 2's level with
//!    its moment 2𝓛² for ATA-GP-UCB), for raw heavy-tailed noise without a bound the noise
//!    itself (Chowdhury & Gopalan's t^{1/(2(1+α))} c^{1/(1+α)}; Thm 2's with c), and for raw
//!    noise within a known R nothing: the level is B + R and never cuts a report (a bounded
//!    reward has no tail to guard against). ATA-GP-UCB and MoMA-GP-UCB use Zhou & Tan Thm 2's
//!    and Thm 4's q; MoMA's epoch length is Thm 4's k = ⌈24 ln(4eT/δ)⌉ without the Chernoff
//!    constant 24, made odd: [`epoch_length`].
//!
//! How κ was chosen: on settings that are not reported (other seeds, other kernels and
//! length-scales, other horizons; see `docs/constants.md`), never per figure.

use ldp_core::truncation::tgp_ucb_practical_level;

use crate::policy::Problem;

/// κ, the one multiplier of the GP-UCB schedule (see the module docs and `docs/constants.md`).
pub const KAPPA: f64 = 0.3;

/// σ²_obs = c^{2/(1+α)}: the variance (α = 1) of the rewards' noise as the learner observes it,
/// used as the GP regulariser λ.
pub fn noise_variance(alpha: f64, c: f64) -> f64 {
    c.powf(2.0 / (1.0 + alpha))
}

/// The variance of what the learner observes, from public quantities: R² + 2𝓛² for
/// CTL-privatised rewards with bounded raw noise (𝓛 the device's Laplace scale), else
/// [`noise_variance`] of the problem's α and c.
pub fn observed_variance(problem: &Problem) -> f64 {
    match problem.privacy {
        Some(p) => {
            let r = problem.noise_bound.unwrap_or(0.0);
            r * r + 2.0 * p.laplace_scale * p.laplace_scale
        }
        None => noise_variance(problem.alpha, problem.c),
    }
}

/// The truncation levels of rule 3: B + R + (a level for the noise that has no known bound).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevelRule {
    /// B + R: the signal bound plus the raw noise's known bound (0 if none is known).
    pub bounded: f64,
    /// The noise without a known bound: its Laplace scale 𝓛 under CTL, or the (1+α)-th moment
    /// c of raw noise that has no bound; `None` when the raw noise is within a known R.
    pub unbounded: Option<Unbounded>,
}

/// The part of the observed noise that has no known bound ([`LevelRule`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unbounded {
    /// CTL's Laplace noise of scale 𝓛 (its second moment is 2𝓛²).
    Laplace(f64),
    /// Raw noise with E|η|^{1+α} ≤ c and no known bound.
    Moment(f64),
}

impl LevelRule {
    /// The rule for `problem`.
    pub fn new(problem: &Problem) -> Self {
        let r = problem.noise_bound.unwrap_or(0.0);
        let unbounded = match (problem.privacy, problem.noise_bound) {
            (Some(p), _) => Some(Unbounded::Laplace(p.laplace_scale)),
            (None, Some(_)) => None,
            (None, None) => Some(Unbounded::Moment(problem.c)),
        };
        Self { bounded: problem.b + r, unbounded }
    }

    /// TGP-UCB's b_t: B + R + 𝓛 ln t (Zhou & Tan Alg. 2) under CTL, B + t^{1/(2(1+α))} c^{1/(1+α)}
    /// for raw noise without a bound, B + R otherwise.
    pub fn tgp(&self, t: usize, alpha: f64) -> f64 {
        let t = t.max(1);
        self.bounded
            + match self.unbounded {
                Some(Unbounded::Laplace(scale)) => scale * (t as f64).ln(),
                Some(Unbounded::Moment(c)) => tgp_ucb_practical_level(t as u64, alpha, c),
                None => 0.0,
            }
    }

    /// ATA-GP-UCB's b_τ / τ^{(1−α)/(2(1+α))}: B + R + (c_u / `log`)^{1/(1+α)}, with c_u = 2𝓛² under
    /// CTL, c for raw noise without a bound, 0 otherwise, and `log` = ln(4 m_t T/δ) (Zhou & Tan
    /// Thm 2's level for the unbounded part; |u_{i,τ}| < 1, so the rest never exceeds B + R).
    pub fn ata_scale(&self, log: f64, alpha: f64) -> f64 {
        let moment = match self.unbounded {
            Some(Unbounded::Laplace(scale)) => 2.0 * scale * scale,
            Some(Unbounded::Moment(c)) => c,
            None => 0.0,
        };
        self.bounded + (moment / log).powf(1.0 / (1.0 + alpha))
    }
}

/// β_t = κ √(2 ln(|D| t² π² / (6δ))) for update `t` ≥ 1 (t is taken ≥ 1) over `arms` arms.
pub fn beta(arms: usize, t: usize, delta: f64) -> f64 {
    beta_with(KAPPA, arms, t, delta)
}

/// [`beta`] with the multiplier `kappa` in place of [`KAPPA`].
pub fn beta_with(kappa: f64, arms: usize, t: usize, delta: f64) -> f64 {
    let t = t.max(1) as f64;
    let pi2 = std::f64::consts::PI * std::f64::consts::PI;
    kappa * (2.0 * (arms.max(1) as f64 * t * t * pi2 / (6.0 * delta)).ln()).sqrt()
}

/// MoMA-GP-UCB's κ: its own multiplier, chosen like [`KAPPA`] on settings that are not reported
/// (`docs/constants.md`, "MoMA-GP-UCB's width"). With its width calibrated
/// ([`moma_noise_variance`]), MoMA's smallest geometric mean of the ratio to uniform play over
/// those settings is at 0.2·[`KAPPA`] (0.387, against 0.535 at [`KAPPA`]; measured, 40 trials
/// a setting). Its width is that of its own estimate; the smaller κ is what its regret asks for.
pub const MOMA_KAPPA: f64 = 0.06;

/// c of [`moma_noise_variance`]: σ̃² with λ = σ²_obs·c/√k matches the mean squared error of
/// MoMA's median-of-means estimate (Monte Carlo, `docs/constants.md`).
pub const MOMA_PICK_VARIANCE: f64 = 1.25;

/// MoMA-GP-UCB's λ: the variance of one epoch's row *as its estimate uses it*,
/// σ²_obs · min(1, c/√k) with c = [`MOMA_PICK_VARIANCE`].
///
/// MoMA fits k ridge estimates, one per play index j (one report per epoch each, noise variance
/// σ²_obs), and keeps the one whose median Ṽ-distance to the others is least (Zhou & Tan Alg. 3).
/// That pick is not the mean of the k (noise σ²_obs/k) nor one of them at random (σ²_obs): in
/// Monte Carlo (k = 7, 13, 15, 25, estimates of f drawn from the prior, CTL noise at ε = 1)
/// its mean squared error equals the GP posterior variance of λ = σ²_obs·c/√k, c ≈ 1.25, and
/// this λ is also where the pick's own error is least. With it, μ̃_n and σ̃_n are the posterior
/// of f given MoMA's estimate, as rule 1 makes them for the other learners; `k = 1` (a single
/// estimate) keeps λ = σ²_obs.
pub fn moma_noise_variance(observed: f64, k: usize) -> f64 {
    observed * (MOMA_PICK_VARIANCE / (k.max(1) as f64).sqrt()).min(1.0)
}

/// MoMA's plays per epoch: ⌈ln(4eT/δ)⌉ made odd (plus 1 if even), so the median of the k
/// estimates is one of them. 13 at T = 1000, δ = 0.1; 15 at T = 10⁴.
pub fn epoch_length(horizon: usize, delta: f64) -> usize {
    let k = (4.0 * std::f64::consts::E * horizon.max(1) as f64 / delta).ln().ceil().max(1.0) as usize;
    if k.is_multiple_of(2) { k + 1 } else { k }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_at_the_default_setting() {
        // CTL at ε = 1, B = R = 1: c = 1 + 8·4 = 33 = R² + 2𝓛² with 𝓛 = 4.
        assert_eq!(noise_variance(1.0, 33.0), 33.0);
        // α < 1: the (1+α)-norm squared.
        assert!((noise_variance(0.5, 8.0) - 16.0).abs() < 1e-12);
        // |D| = 100, t = 1, δ = 0.1: ln(100 π²/0.6) = 7.405.
        let want = KAPPA * (2.0 * (100.0 * std::f64::consts::PI.powi(2) / 0.6f64).ln()).sqrt();
        assert!((beta(100, 1, 0.1) - want).abs() < 1e-12);
        assert!(beta(100, 1000, 0.1) > beta(100, 10, 0.1));
        assert_eq!(epoch_length(1000, 0.1), 13);
        assert_eq!(epoch_length(10_000, 0.1), 15);
        // MoMA: λ = σ²_obs·1.25/√k (0.347 σ²_obs at k = 13), never above σ²_obs; its own κ.
        assert!((moma_noise_variance(33.0, 13) - 33.0 * 1.25 / 13f64.sqrt()).abs() < 1e-12);
        assert_eq!(moma_noise_variance(33.0, 1), 33.0);
        assert!((beta_with(MOMA_KAPPA, 100, 1, 0.1) - want * MOMA_KAPPA / KAPPA).abs() < 1e-12);
        assert_eq!(beta_with(KAPPA, 100, 7, 0.1), beta(100, 7, 0.1));
    }

    #[test]
    fn levels_add_the_bounds_to_the_unbounded_noise_level() {
        // CTL: B = R = 1, 𝓛 = 4: Alg. 2's B + R + 𝓛 ln t; ATA: 2 + √(2𝓛²/log) = 2 + √2 at log 16.
        let ldp = LevelRule { bounded: 2.0, unbounded: Some(Unbounded::Laplace(4.0)) };
        assert!((ldp.tgp(100, 1.0) - (2.0 + 4.0 * 100f64.ln())).abs() < 1e-12);
        assert!((ldp.ata_scale(16.0, 1.0) - (2.0 + 2f64.sqrt())).abs() < 1e-12);
        // Student-t(3), B = 1, c = 3: B + t^{1/4} √3 and B + √(3/log).
        let heavy = LevelRule { bounded: 1.0, unbounded: Some(Unbounded::Moment(3.0)) };
        assert!((heavy.tgp(16, 1.0) - (1.0 + 2.0 * 3f64.sqrt())).abs() < 1e-12);
        assert!((heavy.ata_scale(12.0, 1.0) - 1.5).abs() < 1e-12);
        // Raw noise within a known R = 0.5: B + R at every t.
        let bounded = LevelRule { bounded: 1.5, unbounded: None };
        assert_eq!(bounded.tgp(1, 1.0), 1.5);
        assert_eq!(bounded.tgp(1000, 1.0), 1.5);
        assert_eq!(bounded.ata_scale(10.0, 1.0), 1.5);
    }
}
