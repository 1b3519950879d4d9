//! A user's own problem from files (`host-sim run custom`): the arms file and the optional
//! coordinates file ([`super::table`] reads them) made into an environment by Zhou & Tan's
//! real-data recipe ([`RealData`]), with the user's constants in place of the derived ones.

use std::path::PathBuf;
use std::sync::Arc;

use nalgebra::DMatrix;
use serde::Serialize;

use super::table::{
    ReadOptions, ReadReport, Table, TableError, TableProblem, fnv1a, kernel_covariance, largest_magnitude,
    read_coordinates,
};
use super::{EnvError, EnvFactory, Environment, RealData, RealDataError, RewardBounds, shared};
use crate::gp::kernel::distance;
use crate::gp::{Kernel, Matern, MaternNu, SquaredExponential};

/// The files and choices of a user's problem (`host-sim run custom`), as `run.json` records
/// them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProblemFiles {
    /// The arms file.
    pub arms: PathBuf,
    /// FNV-1a of the arms file's bytes (a changed file is another run, not a resume).
    pub arms_fnv: String,
    /// The coordinates file, if the prior is a kernel over coordinates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coords: Option<PathBuf>,
    /// The kernel over the coordinates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelChoice>,
    /// B, R, v, c given by the user in place of the derived ones.
    pub overrides: Overrides,
    /// How the arms file is read (delimiter, label column, columns, long format, minimise).
    #[serde(skip_serializing_if = "is_default")]
    pub read: ReadOptions,
    /// What the reader made of the arms file (`run.json` keeps it beside the settings).
    #[serde(skip)]
    pub report: ReadReport,
    /// The files as read and parsed, once: the table from the bytes fingerprinted in
    /// `arms_fnv` and the coordinates. Neither file is read again, and a clone shares them (an
    /// ε sweep's runs use the very table and points its first run read).
    #[serde(skip)]
    parsed: Arc<Parsed>,
}

/// What [`ProblemFiles::new`] read from the files.
#[derive(Debug, PartialEq)]
struct Parsed {
    /// The arms file's table.
    table: Table,
    /// The arms' points in the coordinates file, or why they cannot be used (refused when
    /// the environment is built, as before the points were read up front).
    points: Option<Result<Vec<Vec<f64>>, TableError>>,
}

fn is_default(read: &ReadOptions) -> bool {
    *read == ReadOptions::default()
}

/// A kernel over coordinates, with a lengthscale (default: the median distance between two
/// arms' points, the usual median heuristic); the default is SE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct KernelChoice {
    /// The kernel.
    pub name: KernelName,
    /// The lengthscale, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lengthscale: Option<f64>,
}

/// The kernels a user may choose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum KernelName {
    /// Squared exponential.
    #[default]
    Se,
    /// Matérn with ν = 5/2.
    Matern,
}

/// The constants a user may set in place of the derived ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Overrides {
    /// B: bound on |f|.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<f64>,
    /// R: bound on |η|.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r: Option<f64>,
    /// v: bound on E|y|² of what the learner observes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v: Option<f64>,
    /// c: bound on E|y − f|² of what the learner observes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c: Option<f64>,
}

impl ProblemFiles {
    /// The problem of `arms` (read and parsed now, to fingerprint it), with a prior from
    /// `coords` (read now too) and `kernel` when given.
    pub fn new(
        arms: PathBuf,
        coords: Option<PathBuf>,
        kernel: Option<KernelChoice>,
        overrides: Overrides,
        read: ReadOptions,
    ) -> Result<Self, TableError> {
        let in_arms = |problem| TableError { path: arms.clone(), problem };
        let bytes = std::fs::read(&arms).map_err(|e| in_arms(TableProblem::Unreadable(e.to_string())))?;
        let (table, mut report) = Table::parse_with(&bytes, &read).map_err(in_arms)?;
        report.shift = shift_of(&table.observations(0).map_err(in_arms)?);
        // With coordinates the kernel is always recorded, the default one if none was chosen.
        let kernel = kernel.or_else(|| coords.as_ref().map(|_| KernelChoice::default()));
        let points = coords.as_ref().map(|path| read_coordinates(path, &table.names));
        let parsed = Arc::new(Parsed { table, points });
        Ok(Self { arms_fnv: fnv1a(&bytes), arms, coords, kernel, overrides, read, report, parsed })
    }

    /// The environment the files describe, with the user's constants in place of the derived
    /// ones.
    pub fn environment(&self) -> Result<RealData, TableError> {
        let table = &self.parsed.table;
        let in_arms = |problem| TableError { path: self.arms.clone(), problem };
        let covariance = match (&self.coords, &self.parsed.points) {
            (Some(path), Some(points)) => {
                let points = points.as_ref().map_err(Clone::clone)?;
                kernel_prior(points, self.kernel.unwrap_or_default())
                    .map_err(|problem| TableError { path: path.clone(), problem })?
            }
            _ => table.zscore_covariance().map_err(in_arms)?,
        };
        let name = self.arms.file_stem().map_or("custom".into(), |s| s.to_string_lossy().into_owned());
        let env = environment(table, &name, covariance).map_err(in_arms)?;
        let derived = env.bounds();
        let o = self.overrides;
        Ok(env.with_bounds(RewardBounds {
            b: o.b.unwrap_or(derived.b),
            r: o.r.or(derived.r),
            alpha: derived.alpha,
            v: o.v.unwrap_or(derived.v),
            c: o.c.unwrap_or(derived.c),
        }))
    }

    /// The factory of the one environment every trial shares.
    pub fn factory(&self) -> Result<EnvFactory, EnvError> {
        Ok(shared(self.environment().map_err(EnvError::Table)?))
    }
}

/// The prior `choice` puts on `points`: the kernel's Gram matrix, with the lengthscale given or
/// the median distance between two points.
pub fn kernel_prior(points: &[Vec<f64>], choice: KernelChoice) -> Result<DMatrix<f64>, TableProblem> {
    let lengthscale = choice.lengthscale.unwrap_or_else(|| median_distance(points));
    let problem = |error| TableProblem::Kernel { error, lengthscale: Some(lengthscale) };
    let k: Box<dyn Kernel> = match choice.name {
        KernelName::Matern => Box::new(Matern::new(MaternNu::FiveHalves, lengthscale).map_err(problem)?),
        KernelName::Se => Box::new(SquaredExponential::new(lengthscale).map_err(problem)?),
    };
    kernel_covariance(k.as_ref(), points)
}

/// The median distance between two distinct arms' points (1 if every point is the same).
fn median_distance(points: &[Vec<f64>]) -> f64 {
    let mut d: Vec<f64> = Vec::new();
    for (i, x) in points.iter().enumerate() {
        d.extend(points[i + 1..].iter().map(|y| distance(x, y)));
    }
    d.retain(|x| *x > 0.0);
    d.sort_by(f64::total_cmp);
    d.get(d.len() / 2).copied().unwrap_or(1.0)
}

/// The constant added to every observation of a table whose best arm's mean is not positive
/// (losses, −RMSE, a table read with `--minimise`), so that the papers' recipe, which divides
/// by that mean, can use it: minus the smallest observation, which makes the worst observation 0
/// and every mean positive unless all observations are equal. `None` (no shift) when the best
/// mean is positive. The learners' constants come from the shifted table (B, R, v, c), and
/// regret is unchanged by a shift.
pub fn shift_of(observed: &[Vec<f64>]) -> Option<f64> {
    let best = observed
        .iter()
        .filter(|v| !v.is_empty())
        .map(|v| v.iter().sum::<f64>() / v.len() as f64)
        .fold(f64::NEG_INFINITY, f64::max);
    let smallest = observed.iter().flatten().copied().fold(f64::INFINITY, f64::min);
    (best <= 0.0 && smallest.is_finite()).then_some(-smallest)
}

/// The environment of `table`: the papers' real-data recipe over its observations with
/// `covariance` as the prior (one row and column per arm), after [`shift_of`]'s shift.
pub fn environment(table: &Table, name: &str, covariance: DMatrix<f64>) -> Result<RealData, TableProblem> {
    let mut observed = table.observations(1)?;
    if let Some(shift) = shift_of(&observed) {
        observed.iter_mut().flatten().for_each(|y| *y += shift);
    }
    // The recipe divides by the largest mean: one that overflows is the data's scale, not a sign.
    for (a, values) in observed.iter().enumerate() {
        if !(values.iter().fold(0.0, |s, y| s + y) / values.len() as f64).is_finite() {
            return Err(TableProblem::OutOfScale {
                column: table.names[a].clone(),
                largest: largest_magnitude(values),
            });
        }
    }
    let env = RealData::from_columns(name, observed, covariance).map_err(|e| match e {
        RealDataError::NonPositiveMaxMean(m) => TableProblem::NonPositiveBest(m),
        _ => TableProblem::Inconsistent, // `observations` checked the rest
    })?;
    Ok(env.with_arm_names(table.names.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_custom_environment_uses_each_arms_own_observations() {
        let t = Table::parse("a,b\n1,2\n3,\n,6\n").unwrap();
        let env = environment(&t, "mine", DMatrix::identity(2, 2)).unwrap();
        // Means 2 and 4: s = 4, f = (0.5, 1).
        assert_eq!(env.means(), &[0.5, 1.0]);
        assert_eq!(env.observations(0), &[0.25, 0.75]);
        assert_eq!(env.observations(1), &[0.5, 1.5]);
        assert_eq!(env.arm_names(), ["a", "b"]);
        // All negative (losses): shifted by +4 so the worst observation is 0. Means −1.5 and −3
        // become 2.5 and 1 (s = 2.5), as the same table shifted by hand.
        let negative = Table::parse("a,b\n-1,-2\n-2,-4\n").unwrap();
        let shifted = environment(&negative, "x", DMatrix::identity(2, 2)).unwrap();
        let by_hand = Table::parse("a,b\n3,2\n2,0\n").unwrap();
        let by_hand = environment(&by_hand, "x", DMatrix::identity(2, 2)).unwrap();
        assert_eq!(shifted.means(), &[1.0, 0.4]);
        assert_eq!(shifted.means(), by_hand.means());
        assert_eq!(shifted.observations(1), by_hand.observations(1));
        assert_eq!(shift_of(&[vec![-1.0, -2.0], vec![-2.0, -4.0]]), Some(4.0));
        assert_eq!(shift_of(&[vec![-1.0, 2.0], vec![-2.0, -4.0]]), None);
        // Equal observations stay refused.
        let flat = Table::parse("a,b\n-1,-1\n-1,-1\n").unwrap();
        assert_eq!(
            environment(&flat, "x", DMatrix::identity(2, 2)).unwrap_err(),
            TableProblem::NonPositiveBest(0.0)
        );
        // A mean that overflows is the data's scale (it used to be "the largest mean is inf, not positive").
        let huge = Table::parse("a,b\n1,1e308\n2,1.5e308\n").unwrap();
        assert_eq!(
            environment(&huge, "x", DMatrix::identity(2, 2)).unwrap_err(),
            TableProblem::OutOfScale { column: "b".into(), largest: 1.5e308 }
        );
    }
}
