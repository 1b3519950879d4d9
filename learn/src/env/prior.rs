//! The learner's prior over a data table's arms (`--prior`), for the experiments whose prior
//! would otherwise be the empirical covariance of the table itself: Zhou & Tan's real-data figures
//! and `custom` without `--coords`.
//!
//! Seed 000 puts a GP prior on f whose covariance is the empirical covariance of the z-scored
//! columns: how the arms' *readings move together* over the rows, which says nothing about
//! how close their *means* are. On tables whose low-mean columns are the weakly correlated ones
//! the posterior keeps the worst arms the most uncertain and the learner locks onto them: on
//! the light-sensor data (ε = 1, T = 1000) every private learner scored 0.96–1.06× uniform
//! play's regret (1.26–1.29× with the practical constants), and the reporter measured
//! 1.11–1.17× at T = 10⁴ on a table of 23 employment series that trend together.
//!
//! What a prior may be computed from: in a deployment the learner never sees the raw table —
//! it sees privatised reports only. A prior from the same rows the rewards come from (the
//! stocks figure, `custom`) is an oracle the learner could not have. A prior from a *public*
//! source is fair: the arms' coordinates (`--coords`), or a separate, public split of the data
//! (the light-sensor figure's training rows, which are not the test rows its rewards come from).
//!
//! **The common level.** A GP prior with mean zero is not shift-invariant, and on a table that
//! is the rule, not the exception: the recipe scales f to a largest mean of 1, so every arm's
//! mean sits in (0, 1], far above the prior mean 0 measured in the exploration bonus. Under CTL
//! the learner's noise variance λ is large (σ²_obs ≈ 900 on a heavy-tailed table at ε = 1), an
//! arm's posterior mean moves by about y/λ per report and its sd shrinks by about 1/(2λ), so
//! each report of the arm just played lifts its index above every unplayed arm's and the learner
//! stays on the first arm it tried (MoMA on a table sorted by mean: 1.3× uniform play's regret).
//! The non-paper choices therefore add the arms' common level as one more unknown,
//! s²·11ᵀ with s = [`LEVEL_SD`] = 10 (ten times the largest |f| of a scaled table, so any level
//! in [−1, 1] is a priori as plausible as any other to within 1 %): a report then moves every
//! arm's mean alike, as a flat prior on the level would, and only the deviations from the level
//! are learned per arm. The learner's β multiplies the common part of σ equally for every arm,
//! so it does not change which arm is played.
//!
//! The choices:
//! - [`Prior::Independent`], the default: K = I + s²11ᵀ, every arm's deviation from the common
//!   level a priori its own unit-variance unknown. It is computed from nothing, so it is never
//!   an oracle and cannot lock in through a correlation; the GP learners then spend their
//!   exploration per arm, as UCB1 does, with the calibrated β and λ. A table whose arms do
//!   resemble each other in a known way should say how with `--coords` (a kernel over
//!   coordinates).
//! - [`Prior::Shrunk`]: ½K̂ + ½I + s²11ᵀ, the empirical correlation K̂ shrunk halfway to
//!   independence (the even mixture of the two hypotheses "the co-movement tells how the means
//!   relate" and "it tells nothing").
//! - [`Prior::Empirical`]: K̂ itself, Zhou & Tan's recipe, for reproducing its figures exactly.
//!
//! The default was chosen on settings no figure reports (docs/constants.md, "The prior of a
//! data table"; `scripts/choose-prior.sh`).

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

/// s, the prior standard deviation of the arms' common level in the non-paper priors (module
/// documentation).
pub const LEVEL_SD: f64 = 10.0;

/// The prior covariance over a data table's arms (module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Prior {
    /// K = I + s²11ᵀ: independent arms around a common level (the default).
    #[default]
    Independent,
    /// ½K̂ + ½I + s²11ᵀ: the empirical correlation shrunk halfway toward independent arms,
    /// around a common level.
    Shrunk,
    /// K̂: the empirical covariance of the z-scored columns (seed 000's real-data recipe).
    Empirical,
}

impl Prior {
    /// The name on the command line and in `run.json`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Independent => "independent",
            Self::Shrunk => "shrunk",
            Self::Empirical => "empirical",
        }
    }

    /// The prior this choice makes of `empirical`, the z-scored columns' covariance (unit
    /// diagonal). `Empirical` returns it unchanged, bit for bit.
    pub fn apply(self, empirical: &DMatrix<f64>) -> DMatrix<f64> {
        let n = empirical.nrows();
        match self {
            Self::Empirical => empirical.clone(),
            Self::Independent => DMatrix::identity(n, n).add_scalar(LEVEL_SD * LEVEL_SD),
            Self::Shrunk => {
                ((empirical + DMatrix::<f64>::identity(n, n)) * 0.5).add_scalar(LEVEL_SD * LEVEL_SD)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_choice_is_the_matrix_it_names() {
        let k = DMatrix::from_row_slice(3, 3, &[1.0, 0.9, -0.2, 0.9, 1.0, 0.4, -0.2, 0.4, 1.0]);
        assert_eq!(Prior::Empirical.apply(&k), k);
        let level = DMatrix::from_element(3, 3, 100.0);
        assert_eq!(Prior::Independent.apply(&k), DMatrix::identity(3, 3) + &level);
        let s = Prior::Shrunk.apply(&k);
        let half = DMatrix::from_row_slice(3, 3, &[1.0, 0.45, -0.1, 0.45, 1.0, 0.2, -0.1, 0.2, 1.0]);
        assert_eq!(s, half + level);
        // The default is the one computed from nothing.
        assert_eq!(Prior::default(), Prior::Independent);
    }
}
