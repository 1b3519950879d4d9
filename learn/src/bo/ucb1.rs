//! UCB1 (Auer et al. 2002) over the arms, ignoring the kernel: the simple baseline every GP
//! learner is shown beside.
//!
//! Each arm is played once (in arm order), then the arm with the largest
//! `mean_a + σ √(2 ln t / n_a)` (first on ties). Auer et al. state UCB1 for rewards in [0, 1];
//! rewards here are unbounded (Laplace-privatised or heavy-tailed), so the bonus is scaled by
//! σ, the standard deviation of what the learner observes ([`super::calibrated::observed_variance`],
//! the same in every constants mode): the sub-Gaussian form of the index.

use super::{argmax, calibrated};
use crate::policy::{Policy, PolicyError, Problem, check_report};

/// UCB1 with the observed-noise scale.
#[derive(Clone, Debug)]
pub struct Ucb1 {
    sums: Vec<f64>,
    counts: Vec<usize>,
    sigma: f64,
    rounds: usize,
}

impl Ucb1 {
    /// The policy for `problem` (no constants of its own besides σ).
    pub fn new(problem: &Problem) -> Result<Self, PolicyError> {
        let n = problem.num_arms();
        let sigma = calibrated::observed_variance(problem).sqrt();
        if n == 0 || !sigma.is_finite() {
            return Err(PolicyError::InvalidSetting("UCB1 needs at least one arm and a finite noise bound"));
        }
        Ok(Self { sums: vec![0.0; n], counts: vec![0; n], sigma, rounds: 0 })
    }
}

impl Policy for Ucb1 {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        Some(Box::new(self.clone()))
    }

    fn select(&mut self) -> usize {
        if let Some(unplayed) = self.counts.iter().position(|&c| c == 0) {
            return unplayed;
        }
        let log_t = ((self.rounds + 1) as f64).ln();
        argmax(self.counts.len(), |a| {
            let n = self.counts[a] as f64;
            self.sums[a] / n + self.sigma * (2.0 * log_t / n).sqrt()
        })
    }

    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError> {
        check_report(arm, self.counts.len(), report)?;
        self.sums[arm] += report;
        self.counts[arm] += 1;
        self.rounds += 1;
        Ok(())
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![("sigma", self.sigma)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bo::ata::tests::problem_with;
    use nalgebra::DMatrix;

    #[test]
    fn plays_each_arm_once_then_the_largest_index() {
        let mut p = Ucb1::new(&problem_with(DMatrix::identity(3, 3), 100, 1.0, 4.0, 1.0)).unwrap();
        for (arm, y) in [(0, 0.0), (1, 1.0), (2, 0.5)] {
            assert_eq!(p.select(), arm);
            p.observe(arm, y).unwrap();
        }
        // σ = 1 (c = 1, α = 1): all bonuses equal √(2 ln 4), so the best mean wins.
        assert_eq!(p.select(), 1);
        for _ in 0..20 {
            p.observe(1, 1.0).unwrap();
        }
        // ln 24: arm 2's 0.5 + √(2 ln 24) ≈ 3.02 beats arm 0's 2.52 and arm 1's
        // 1 + √(2 ln 24 / 21) ≈ 1.55.
        assert_eq!(p.select(), 2);
        assert_eq!(p.observe(3, 0.0), Err(PolicyError::ArmOutOfRange { arm: 3, arms: 3 }));
        assert_eq!(p.observe(0, f64::INFINITY), Err(PolicyError::NonFiniteReport));
    }
}
