//! GP-UCB and (LDP-)TGP-UCB over the exact posterior on the finite arm set.
//!
//! Both keep the exact GP posterior of Zhou & Tan eq. (2)–(3), updated in O(n²) per round, and
//! play `argmax μ_{t−1}(x) + β_t σ_{t−1}(x)`. TGP-UCB (Zhou & Tan Alg. 2; Chowdhury & Gopalan 2019)
//! first truncates each report once: `ŷ_t = ȳ_t·1{|ȳ_t| ≤ b_t}`.

use ldp_core::truncation::tgp_ucb_practical_level;
use nalgebra::DVector;

use super::calibrated::LevelRule;
use super::ucb_arm;
use crate::gp::FinitePosterior;
use crate::policy::{Constants, Policy, PolicyError, Problem, check_report};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Rule {
    /// GP-UCB (IGP-UCB of Chowdhury & Gopalan 2017): no truncation,
    /// β_t = B + σ_η √(2(γ̂_{t−1} + 1 + ln(1/δ))).
    GpUcb { noise_sd: f64 },
    /// Practical TGP-UCB: b_t = t^{1/(2(1+α))} v^{1/(1+α)}, β_t = B√λ + b_t √(ln t).
    TgpPractical,
    /// LDP-TGP-UCB, Zhou & Tan Alg. 2: b_t = B + R + 𝓛 ln t,
    /// β_t = B + (2√2/√λ) b_{t−1} √(γ̂_{t−1} + ln(1/δ)) + (1/√λ) √(K (ln(t−1) + 1)),
    /// K = B² + R² + 2𝓛².
    TgpPaperLdp { r: f64, scale: f64 },
    /// Calibrated GP-UCB or TGP-UCB ([`super::calibrated`]): β_t from the GP-UCB schedule over
    /// `arms` arms; TGP-UCB's level from rule 3 (`levels`: Zhou & Tan Alg. 2's B + R + 𝓛 ln t on
    /// privatised rewards, B + t^{1/(2(1+α))} c^{1/(1+α)} on raw noise without a bound, B + R
    /// within one), none for GP-UCB (`levels` is `None`).
    Calibrated { arms: usize, levels: Option<LevelRule> },
}

/// GP-UCB or TGP-UCB on the exact posterior.
#[derive(Clone, Debug)]
pub struct GpUcb {
    posterior: FinitePosterior,
    rule: Rule,
    b: f64,
    alpha: f64,
    v: f64,
    delta: f64,
    horizon: usize,
    beta_scale: f64,
    tie_order: Option<Vec<usize>>,
}

impl GpUcb {
    /// The GP-UCB baseline: no truncation. The noise proxy σ_η is the standard deviation of
    /// what the learner observes: `√(R² + 2𝓛²)` for privatised bounded rewards (R, 𝓛 as the
    /// bounds, an over-estimate), `R` for bounded raw rewards, `√c` otherwise (α = 1: c is the
    /// noise's second moment).
    ///
    /// With [`Constants::Calibrated`], the calibrated β and no truncation.
    pub fn baseline(problem: &Problem, constants: Constants) -> Result<Self, PolicyError> {
        if constants == Constants::Calibrated {
            let rule = Rule::Calibrated { arms: problem.num_arms(), levels: None };
            return Self::with_rule(problem, rule);
        }
        let r = problem.noise_bound.unwrap_or(0.0);
        let noise_sd = match (problem.privacy, problem.noise_bound) {
            (Some(p), _) => (r * r + 2.0 * p.laplace_scale * p.laplace_scale).sqrt(),
            (None, Some(r)) => r,
            (None, None) => problem.c.sqrt(),
        };
        Self::with_rule(problem, Rule::GpUcb { noise_sd })
    }

    /// TGP-UCB (non-private, heavy tails) or LDP-TGP-UCB (on privatised reports). With
    /// [`Constants::Paper`] and privatised bounded rewards, the level and β of Zhou & Tan
    /// Alg. 2; otherwise the practical level and β (SPEC §2.2), with `v` from the problem.
    pub fn tgp_ucb(problem: &Problem, constants: Constants) -> Result<Self, PolicyError> {
        let rule = match (constants, problem.privacy, problem.noise_bound) {
            (Constants::Calibrated, ..) => {
                Rule::Calibrated { arms: problem.num_arms(), levels: Some(LevelRule::new(problem)) }
            }
            (Constants::Paper, Some(p), Some(r)) => Rule::TgpPaperLdp { r, scale: p.laplace_scale },
            _ => Rule::TgpPractical,
        };
        Self::with_rule(problem, rule)
    }

    fn with_rule(problem: &Problem, rule: Rule) -> Result<Self, PolicyError> {
        let posterior =
            FinitePosterior::new(&problem.covariance, problem.lambda).map_err(|_| PolicyError::Numerical)?;
        Ok(Self {
            posterior,
            rule,
            b: problem.b,
            alpha: problem.alpha,
            v: problem.v,
            delta: problem.delta,
            horizon: problem.horizon,
            beta_scale: problem.beta_scale,
            tie_order: problem.tie_order.clone(),
        })
    }

    /// The truncation level b_t for round `t` (∞ for GP-UCB).
    pub fn level(&self, t: usize) -> f64 {
        let t = t.max(1);
        match self.rule {
            Rule::GpUcb { .. } => f64::INFINITY,
            Rule::TgpPractical => tgp_ucb_practical_level(t as u64, self.alpha, self.v),
            Rule::TgpPaperLdp { r, scale } => self.b + r + scale * (t as f64).ln(),
            Rule::Calibrated { levels: Some(levels), .. } => levels.tgp(t, self.alpha),
            Rule::Calibrated { levels: None, .. } => f64::INFINITY,
        }
    }

    /// β_t for round `t` (uses γ̂_{t−1}, the information gain so far).
    pub fn beta(&self, t: usize) -> f64 {
        let gamma = self.posterior.info_gain();
        let log_inv_delta = (1.0 / self.delta).ln();
        match self.rule {
            Rule::GpUcb { noise_sd } => self.b + noise_sd * (2.0 * (gamma + 1.0 + log_inv_delta)).sqrt(),
            Rule::TgpPractical => {
                self.b * self.posterior.lambda().sqrt() + self.level(t) * (t.max(1) as f64).ln().sqrt()
            }
            Rule::TgpPaperLdp { r, scale } => {
                let prev = (t.max(2) - 1) as f64;
                let k = self.b * self.b + r * r + 2.0 * scale * scale;
                let root_lambda = self.posterior.lambda().sqrt();
                self.b
                    + 2.0 * 2f64.sqrt() / root_lambda * self.level(t - 1) * (gamma + log_inv_delta).sqrt()
                    + (k * (prev.ln() + 1.0)).sqrt() / root_lambda
            }
            Rule::Calibrated { arms, .. } => super::calibrated::beta(arms, t, self.delta),
        }
    }

    /// The posterior.
    pub fn posterior(&self) -> &FinitePosterior {
        &self.posterior
    }
}

impl Policy for GpUcb {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        Some(Box::new(self.clone()))
    }

    fn select(&mut self) -> usize {
        let beta = self.beta_scale * self.beta(self.posterior.num_observations() + 1);
        ucb_arm(self.posterior.means(), &self.posterior.variances(), beta, self.tie_order.as_deref())
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        let mut out = vec![
            ("lambda", self.posterior.lambda()),
            ("delta", self.delta),
            ("beta_1", self.beta_scale * self.beta(1)),
            ("level_1", self.level(1)),
            ("level_T", self.level(self.horizon)),
        ];
        if let Rule::Calibrated { .. } = self.rule {
            out.push(("kappa", super::calibrated::KAPPA * self.beta_scale));
            out.push(("beta_T", self.beta_scale * self.beta(self.horizon)));
        }
        out
    }

    /// μ_t, the exact posterior mean of the reports as the learner used them (TGP-UCB: each
    /// truncated at its round's level).
    fn posterior_means(&self) -> Option<&DVector<f64>> {
        Some(self.posterior.means())
    }

    fn posterior_variances(&self) -> Option<DVector<f64>> {
        Some(self.posterior.variances())
    }

    /// GP-BUCB: the mean of the reports received, β of the round they make, the variances
    /// given (those of every point selected).
    fn select_with_variances(&mut self, variances: &DVector<f64>) -> Option<usize> {
        if variances.len() != self.posterior.len() {
            return None;
        }
        let beta = self.beta_scale * self.beta(self.posterior.num_observations() + 1);
        Some(ucb_arm(self.posterior.means(), variances, beta, self.tie_order.as_deref()))
    }

    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError> {
        check_report(arm, self.posterior.len(), report)?;
        // This is round t = (reports so far) + 1; the posterior counts every report (its
        // `observe` cannot fail once the arm and report are checked).
        let t = self.posterior.num_observations() + 1;
        let y = if report.abs() <= self.level(t) { report } else { 0.0 };
        self.posterior.observe(arm, y).map_err(|_| PolicyError::Numerical)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gp::{FiniteCovariance, SquaredExponential, gram_matrix};
    use crate::policy::Privacy;

    fn problem(privacy: Option<Privacy>) -> Problem {
        let points: Vec<Vec<f64>> = (0..10).map(|i| vec![i as f64 / 9.0]).collect();
        let k = gram_matrix(&SquaredExponential::new(0.2).unwrap(), &points).unwrap();
        Problem {
            covariance: FiniteCovariance::new(k).unwrap(),
            b: 1.0,
            noise_bound: Some(1.0),
            alpha: 1.0,
            v: 4.0,
            c: 3.0,
            horizon: 100,
            lambda: 1.0,
            delta: 0.1,
            privacy,
            beta_scale: 1.0,
            central_epsilon: None,
            tie_order: None,
        }
    }

    #[test]
    fn tgp_truncates_reports_above_the_level_to_zero() {
        let mut p = GpUcb::tgp_ucb(&problem(None), Constants::Practical).unwrap();
        // b_1 = 1^{1/4} · 4^{1/2} = 2.
        assert!((p.level(1) - 2.0).abs() < 1e-12);
        p.observe(3, 2.5).unwrap(); // cut to 0
        let mut q = GpUcb::tgp_ucb(&problem(None), Constants::Practical).unwrap();
        q.observe(3, 0.0).unwrap();
        assert_eq!(p.posterior().means(), q.posterior().means());
        // b_2 = 2^{1/4}·2 ≈ 2.378: 2.3 is kept.
        p.observe(4, 2.3).unwrap();
        q.observe(4, 0.0).unwrap();
        assert_ne!(p.posterior().means(), q.posterior().means());
    }

    #[test]
    fn paper_ldp_level_grows_like_laplace_scale_times_log_t() {
        let p =
            GpUcb::tgp_ucb(&problem(Some(Privacy { epsilon: 1.0, laplace_scale: 4.0 })), Constants::Paper)
                .unwrap();
        assert!((p.level(1) - 2.0).abs() < 1e-12);
        assert!((p.level(100) - (2.0 + 4.0 * 100f64.ln())).abs() < 1e-12);
    }

    #[test]
    fn gp_ucb_never_truncates_and_rejects_bad_reports() {
        let mut p = GpUcb::baseline(&problem(None), Constants::Practical).unwrap();
        assert_eq!(p.level(5), f64::INFINITY);
        assert_eq!(p.observe(10, 1.0), Err(PolicyError::ArmOutOfRange { arm: 10, arms: 10 }));
        assert_eq!(p.observe(0, f64::NAN), Err(PolicyError::NonFiniteReport));
        p.observe(0, 1e6).unwrap();
        assert!(p.posterior().mean(0).unwrap() > 1e5);
    }

    #[test]
    fn ucb_selects_the_arm_with_the_largest_index() {
        let mut p = GpUcb::baseline(&problem(None), Constants::Practical).unwrap();
        // Prior: all means 0 and variances 1 → first arm on ties.
        assert_eq!(p.select(), 0);
        p.observe(7, 1.0).unwrap();
        let beta = p.beta(2);
        let (m, v) = (p.posterior().means().clone(), p.posterior().variances());
        let best =
            (0..10).max_by(|&i, &j| (m[i] + beta * v[i].sqrt()).total_cmp(&(m[j] + beta * v[j].sqrt())));
        assert_eq!(Some(p.select()), best);
    }

    #[test]
    fn beta_scale_multiplies_the_exploration_bonus() {
        let greedy = Problem { beta_scale: 0.0, ..problem(None) };
        let mut p = GpUcb::baseline(&greedy, Constants::Practical).unwrap();
        p.observe(2, -1.0).unwrap();
        p.observe(8, 0.5).unwrap();
        // β scaled to 0: the arm with the largest posterior mean, whatever its variance.
        let m = p.posterior().means().clone();
        let best = (0..10).max_by(|&i, &j| m[i].total_cmp(&m[j]));
        assert_eq!(Some(p.select()), best);
        assert_eq!(p.select(), 8);
    }
}
