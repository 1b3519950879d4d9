//! The firmware's sensor model ([`ldp_core::device::SensorModel`]) as an environment, so the
//! learner's regret can be computed for runs against the emulated or real device, and the same
//! model can be run in-process for comparison.

use super::{Arms, EnvError, Environment, RewardBounds, SimRng};
use crate::gp::{SquaredExponential, gram_matrix};
use ldp_core::device::SensorModel;

/// The lengthscale of the SE prior the learner puts on the sensor's arms.
pub const SENSOR_PRIOR_LENGTHSCALE: f64 = 0.2;

/// The sensor model over `arms` points of [0, 1] with U[−R, R] noise. B = 1 bounds |f| ≤ 0.9.
#[derive(Clone, Debug)]
pub struct SensorEnv {
    model: SensorModel,
    arms: Arms,
}

impl SensorEnv {
    /// The model with `arms ≥ 2` arms and noise bound `r`; the learner's prior is the SE kernel
    /// with l = 0.2 over the arm points.
    pub fn new(arms: u32, r: f64) -> Result<Self, EnvError> {
        let bound = ldp_core::Bound::new(r).map_err(|_| EnvError::Sensor { arms, noise_bound: r })?;
        let model = SensorModel::new(arms, bound).ok_or(EnvError::Sensor { arms, noise_bound: r })?;
        let points = super::unit_grid(arms as usize);
        let means: Vec<f64> = (0..arms).map(|a| model.mean(a).unwrap_or(0.0)).collect();
        let kernel = SquaredExponential::new(SENSOR_PRIOR_LENGTHSCALE).map_err(EnvError::Kernel)?;
        let covariance = gram_matrix(&kernel, &points).map_err(EnvError::Kernel)?;
        // E η² = R²/3 for U[−R, R]; E y² ≤ B² + R²/3 with B = 1.
        let bounds = RewardBounds { b: 1.0, r: Some(r), alpha: 1.0, v: 1.0 + r * r / 3.0, c: r * r / 3.0 };
        Ok(Self { model, arms: Arms::new("sensor", points, means, covariance, bounds) })
    }

    /// The model.
    pub fn model(&self) -> &SensorModel {
        &self.model
    }
}

impl Environment for SensorEnv {
    fn arms(&self) -> &Arms {
        &self.arms
    }
    fn sample(&self, arm: usize, rng: &mut SimRng) -> f64 {
        u32::try_from(arm).ok().and_then(|a| self.model.read(a, rng)).unwrap_or(f64::NAN)
    }
}
