//! A user's own objective: f given as a Rust function over their own domain (a finite set of
//! points), rewards f(x) + η with a noise model of [`Noise`], and a kernel prior over the
//! points. The library route of "bring your own problem" (`host-sim/examples/own_objective.rs`).

use nalgebra::DMatrix;

use super::{Arms, EnvError, Environment, Noise, SimRng};
use crate::gp::{Kernel, gram_matrix};

/// Why a user's objective cannot be used.
#[derive(Clone, Debug, PartialEq)]
pub enum ObjectiveError {
    /// f is NaN or infinite at a point.
    NotFinite {
        /// The point's index.
        point: usize,
        /// The point.
        at: Vec<f64>,
    },
    /// Fewer than two points to choose from.
    TooFewPoints(usize),
}

impl std::fmt::Display for ObjectiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFinite { point, at } => write!(
                f,
                "f is not finite at point {point} ({at:?}): the objective must be finite on every point"
            ),
            Self::TooFewPoints(n) => write!(f, "{n} point(s): give at least two points to choose from"),
        }
    }
}

impl std::error::Error for ObjectiveError {}

/// An environment from a function: arm a is `points[a]`, its mean `f(points[a])` (evaluated
/// once, so regret is exact), a pull returns the mean plus a draw of the noise.
#[derive(Clone, Debug)]
pub struct Objective {
    arms: Arms,
    noise: Noise,
}

impl Objective {
    /// f over `points` with `noise`, the prior the Gram matrix of `kernel` over the points.
    /// B = max |f| over the points, R, v and c from the noise (α = 1 when the noise has a
    /// variance, else its own default, see [`Noise::default_alpha`]).
    pub fn new(
        name: &str,
        points: Vec<Vec<f64>>,
        f: impl Fn(&[f64]) -> f64,
        kernel: &dyn Kernel,
        noise: Noise,
    ) -> Result<Self, EnvError> {
        let means: Vec<f64> = points.iter().map(|x| f(x)).collect();
        if let Some(point) = means.iter().position(|m| !m.is_finite()) {
            return Err(EnvError::Objective(ObjectiveError::NotFinite { point, at: points[point].clone() }));
        }
        if points.len() < 2 {
            return Err(EnvError::Objective(ObjectiveError::TooFewPoints(points.len())));
        }
        let covariance: DMatrix<f64> = gram_matrix(kernel, &points).map_err(EnvError::Kernel)?;
        let b = means.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let bounds = noise.reward_bounds(b, noise.default_alpha()).map_err(EnvError::Noise)?;
        Ok(Self { arms: Arms::new(name, points, means, covariance, bounds), noise })
    }
}

impl Environment for Objective {
    fn arms(&self) -> &Arms {
        &self.arms
    }

    /// f(arm) plus a draw of the noise; NaN for an arm out of range.
    fn sample(&self, arm: usize, rng: &mut SimRng) -> f64 {
        self.arms.mean(arm) + self.noise.sample(rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gp::SquaredExponential;
    use rand_core::SeedableRng;

    #[test]
    fn env_objective_means_bounds_and_pulls() {
        let points: Vec<Vec<f64>> = (0..5).map(|i| vec![i as f64 / 4.0]).collect();
        let k = SquaredExponential::new(0.3).unwrap();
        let env =
            Objective::new("sq", points, |x| 1.0 - x[0] * x[0], &k, Noise::uniform(0.5).unwrap()).unwrap();
        assert_eq!(env.arms().means(), &[1.0, 0.9375, 0.75, 0.4375, 0.0]);
        let b = env.bounds();
        assert_eq!((b.b, b.r, b.alpha), (1.0, Some(0.5), 1.0));
        assert_eq!(env.prior_covariance()[(0, 0)], 1.0);
        let mut rng = SimRng::seed_from_u64(1);
        for _ in 0..1000 {
            let y = env.sample(4, &mut rng);
            assert!((-0.5..=0.5).contains(&y));
        }
        assert!(env.sample(5, &mut rng).is_nan());
        let bad = Objective::new(
            "nan",
            vec![vec![0.0], vec![1.0]],
            |x| 1.0 / x[0] - f64::INFINITY,
            &k,
            Noise::PAPER_LDP,
        );
        assert!(bad.unwrap_err().to_string().contains("not finite at point 0"));
    }
}
