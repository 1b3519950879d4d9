//! LDP-UCB: the calibrated default of `custom --family bandit` under local DP. A UCB index on
//! the device's released reports, with a confidence width derived from the report noise.
//!
//! The device (CTL, no level from the learner) clamps a raw reward x = f + η to [−(B+R), B+R]
//! (which cuts nothing: |f| ≤ B, |η| ≤ R) and adds Lap(𝓛), 𝓛 its mechanism's actual scale
//! (≈ 2(B+R)/ε). A report's noise η + Lap(𝓛) is then **sub-gamma** (Boucheron, Lugosi &
//! Massart 2013, §2.4) with variance factor σ² = R² + 2𝓛² and scale M = max(𝓛, R/3):
//! Lap(𝓛) is sub-gamma (2𝓛², 𝓛) (its log-MGF −ln(1 − 𝓛²λ²) ≤ 𝓛²λ²/(1 − 𝓛λ)), a centred
//! variable within ±R is (R², R/3) (Bernstein), and the factors of independent terms add
//! (variances) or take the larger (scales). For the mean of n reports, Bernstein's inequality
//! then gives, with probability at least 1 − e^{−L},
//!
//! |mean − f| ≤ √(2σ²L/n) + M·L/n.
//!
//! **The index** of an arm played n times is its reports' mean plus
//! w = κ·(√(2σ²L_t/n) + M·L_t/n), with L_t = ln(K t² π²/(6δ)) (a union over the K arms and the
//! rounds t, δ = 0.1: the K-armed rule's z_t = √(2 L_t), so the first term is z_t·σ/√n, as in
//! `ldp_core::bandit::Rule`) and **one multiplier** κ = [`KAPPA`] × `--beta-scale`, chosen by the
//! rule of `docs/constants.md` ("LDP-UCB") on settings reported nowhere. Every arm is played
//! once first (in the run's tie order).
//!
//! **Post-processing only.** The learner reads released reports and public constants (B, R, ε
//! through 𝓛, K, T); it sends the device no level, so the device's privacy path is CTL's,
//! unchanged. **Shift-invariant:** the width does not depend on the reports, so a constant added
//! to every report adds it to every index and changes no choice (within the device's range).

use crate::bo::argmax;
use crate::policy::{Policy, PolicyError, Problem};

/// κ, LDP-UCB's one multiplier of its Bernstein width (`docs/constants.md`, "LDP-UCB":
/// `scripts/choose-kappa-ldp-ucb.sh`).
pub const KAPPA: f64 = 0.4;

/// The noise of one report: sub-gamma with variance factor `variance` and scale `scale`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReportNoise {
    /// σ² = R² + 2𝓛².
    pub variance: f64,
    /// M = max(𝓛, R/3).
    pub scale: f64,
}

impl ReportNoise {
    /// The noise of a CTL report of a reward within ±R of its mean, at Laplace scale `laplace`.
    pub fn ctl(r: f64, laplace: f64) -> Self {
        Self { variance: r * r + 2.0 * laplace * laplace, scale: laplace.max(r / 3.0) }
    }

    /// Bernstein's radius √(2σ²L/n) + M·L/n for the mean of `n` reports at log-confidence `log`.
    pub fn radius(&self, n: f64, log: f64) -> f64 {
        (2.0 * self.variance * log / n).sqrt() + self.scale * log / n
    }
}

/// L_t = ln(K t² π²/(6δ)) (t taken ≥ 1): a union over `arms` arms and every round.
pub fn log_confidence(arms: usize, t: usize, delta: f64) -> f64 {
    let t = t.max(1) as f64;
    (arms as f64 * t * t * std::f64::consts::PI.powi(2) / (6.0 * delta)).ln()
}

/// LDP-UCB (see the module docs).
#[derive(Clone, Debug)]
pub struct LdpUcb {
    sums: Vec<f64>,
    counts: Vec<usize>,
    rounds: usize,
    noise: ReportNoise,
    kappa: f64,
    delta: f64,
    /// The order of the first plays (the run's tie order, else arm order).
    order: Vec<usize>,
}

impl LdpUcb {
    /// The learner for an LDP `problem` with bounded raw noise, κ = `kappa`.
    pub fn new(problem: &Problem, kappa: f64) -> Result<Self, PolicyError> {
        let privacy = problem
            .privacy
            .ok_or(PolicyError::InvalidSetting("LDP-UCB needs a local-DP run with a valid epsilon"))?;
        let r = problem
            .noise_bound
            .ok_or(PolicyError::InvalidSetting("LDP-UCB needs bounded noise (a bound R)"))?;
        let k = problem.num_arms();
        let noise = ReportNoise::ctl(r, privacy.laplace_scale);
        let valid = |x: f64| x.is_finite() && x >= 0.0;
        let usable =
            k >= 2 && valid(noise.variance) && valid(noise.scale) && kappa.is_finite() && kappa > 0.0;
        if !usable {
            return Err(PolicyError::InvalidSetting(
                "LDP-UCB needs two or more arms, a finite noise bound and a positive multiplier",
            ));
        }
        if !(problem.delta > 0.0 && problem.delta < 1.0) {
            return Err(PolicyError::InvalidSetting("LDP-UCB needs a confidence delta in (0, 1)"));
        }
        let order = match &problem.tie_order {
            Some(o) if o.len() == k && o.iter().all(|&a| a < k) => o.clone(),
            _ => (0..k).collect(),
        };
        Ok(Self {
            sums: vec![0.0; k],
            counts: vec![0; k],
            rounds: 0,
            noise,
            kappa,
            delta: problem.delta,
            order,
        })
    }

    /// The index of arm `a` at the current round (+∞ if unplayed).
    pub fn index(&self, a: usize) -> f64 {
        let n = self.counts[a];
        if n == 0 {
            return f64::INFINITY;
        }
        let log = log_confidence(self.counts.len(), self.rounds + 1, self.delta);
        self.sums[a] / n as f64 + self.kappa * self.noise.radius(n as f64, log)
    }

    /// The report noise it assumes.
    pub fn noise(&self) -> ReportNoise {
        self.noise
    }
}

impl Policy for LdpUcb {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        Some(Box::new(self.clone()))
    }

    fn select(&mut self) -> usize {
        if let Some(&a) = self.order.iter().find(|&&a| self.counts[a] == 0) {
            return a;
        }
        argmax(self.counts.len(), |a| self.index(a))
    }

    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError> {
        crate::policy::check_report(arm, self.counts.len(), report)?;
        self.sums[arm] += report;
        self.counts[arm] += 1;
        self.rounds += 1;
        Ok(())
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![("kappa", self.kappa), ("sigma", self.noise.variance.sqrt()), ("M", self.noise.scale)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bo::ata::tests::problem_with;
    use crate::policy::Privacy;
    use nalgebra::DMatrix;

    fn ldp_problem(arms: usize, r: f64, laplace: f64) -> Problem {
        let mut p = problem_with(DMatrix::identity(arms, arms), 1000, 1.0, 1.0, 1.0);
        p.noise_bound = Some(r);
        p.privacy = Some(Privacy { epsilon: 1.0, laplace_scale: laplace });
        p
    }

    #[test]
    fn the_width_is_bernsteins_for_laplace_plus_bounded_noise() {
        // R = 0.6, 𝓛 = 3.2: σ² = 0.36 + 2·10.24 = 20.84, M = max(3.2, 0.2) = 3.2.
        let noise = ReportNoise::ctl(0.6, 3.2);
        assert!((noise.variance - 20.84).abs() < 1e-12, "{noise:?}");
        assert_eq!(noise.scale, 3.2);
        // A large R makes the bounded part's scale R/3 the larger one.
        assert_eq!(ReportNoise::ctl(12.0, 1.0).scale, 4.0);
        // L_t at K = 10, t = 1000, δ = 0.1: ln(10·10⁶·π²/0.6) = ln(1.6449·10⁸) = 18.918.
        let log = log_confidence(10, 1000, 0.1);
        assert!((log - 18.918).abs() < 1e-3, "{log}");
        // n = 100: √(2·20.84·18.918/100) + 3.2·18.918/100 = 2.8081 + 0.6054.
        let w = noise.radius(100.0, log);
        assert!((w - 3.4135).abs() < 1e-3, "{w}");
        // The index: mean + κ·w at round t (the learner counts rounds from its reports).
        let mut p = LdpUcb::new(&ldp_problem(10, 0.6, 3.2), KAPPA).unwrap();
        for a in 0..10 {
            for _ in 0..100 {
                p.observe(a, a as f64).unwrap();
            }
        }
        let log = log_confidence(10, 1001, 0.1);
        let expected = 4.0 + KAPPA * noise.radius(100.0, log);
        assert!((p.index(4) - expected).abs() < 1e-9, "{} against {expected}", p.index(4));
    }

    #[test]
    fn every_arm_first_then_the_largest_index_and_bad_input_refused() {
        let mut p = LdpUcb::new(&ldp_problem(3, 0.5, 2.0), KAPPA).unwrap();
        for arm in 0..3 {
            assert_eq!(p.select(), arm);
            p.observe(arm, [0.0, 5.0, 1.0][arm]).unwrap();
        }
        assert_eq!(p.select(), 1);
        assert_eq!(p.observe(3, 0.0), Err(PolicyError::ArmOutOfRange { arm: 3, arms: 3 }));
        assert_eq!(p.observe(0, f64::NAN), Err(PolicyError::NonFiniteReport));
        let mut raw = ldp_problem(3, 0.5, 2.0);
        raw.privacy = None;
        assert!(matches!(LdpUcb::new(&raw, KAPPA), Err(PolicyError::InvalidSetting(_))));
        assert!(matches!(LdpUcb::new(&ldp_problem(3, 0.5, 2.0), 0.0), Err(PolicyError::InvalidSetting(_))));
    }

    #[test]
    fn a_constant_added_to_every_report_changes_no_choice() {
        use rand::RngExt;
        use rand_core::SeedableRng;
        // The same seeded noise, once as is and once shifted by 2.5 and by −1000: same actions.
        let means = [0.2, 0.9, 0.5, 0.7];
        let play = |shift: f64| {
            let mut rng = crate::env::SimRng::seed_from_u64(7);
            let mut p = LdpUcb::new(&ldp_problem(4, 0.3, 1.5), KAPPA).unwrap();
            (0..3000)
                .map(|_| {
                    let a = p.select();
                    let u: f64 = rng.random_range(-0.5..0.5);
                    let lap = -1.5 * u.signum() * (1.0 - 2.0 * u.abs()).ln();
                    p.observe(a, means[a] + shift + lap).unwrap();
                    a
                })
                .collect::<Vec<_>>()
        };
        let base = play(0.0);
        // Not a round robin (else the property would hold trivially).
        assert!(base.iter().filter(|&&a| a == 1).count() > 3000 / 4 + 300, "{:?}", &base[..40]);
        assert_eq!(base, play(2.5));
        assert_eq!(base, play(-1000.0));
    }
}
