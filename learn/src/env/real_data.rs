//! Real-data environments: arms = columns of a sample matrix (Zhou & Tan §5.1 "Light sensor
//! data" and "Stock market data", SPEC §2.3, `data/README.md` of the repository).
//!
//! Following the original experiments (Chowdhury & Gopalan 2019's MATLAB scripts):
//! - f(a) = mean of column a of the reward samples, divided by s = max_a of those means, so
//!   max f = 1;
//! - B = max_a |f(a)| = 1: the bound on |f| that CTL's clamp to B + R needs, and the B every
//!   β formula reads. It is *not* the theorems' B, a bound on the RKHS norm ‖f‖_k: under the
//!   empirical covariance below ‖f‖_k = √(fᵀK⁻¹f) ≈ 13.5 (light) and 8.7 (stocks). The
//!   original scripts set B = s, the largest *unnormalised* mean (945.5 for the light test
//!   samples, 237.3 for stocks), which is neither bound of the normalised f and, under CTL,
//!   would make the Laplace noise hundreds of times larger than the rewards. `run.json`
//!   records the B used;
//! - the prior covariance is the empirical covariance of the z-scored covariance samples (each
//!   column centred and divided by its sample standard deviation; n − 1 denominators, so the
//!   diagonal is 1);
//! - a pull of arm a returns the value of a uniformly random row in column a, divided by the same
//!   s, so rewards and f share one scale; noise = value/s − f(a), R = max |noise| over all cells,
//!   α = 1, v = mean of the squared normalised readings, c = mean of the squared noise.
//!
//! Arm a sits at the 1-D point a/(n−1) of [0, 1] (a label only: the kernel is the explicit
//! covariance matrix).

use std::fmt;
use std::path::Path;

use nalgebra::DMatrix;
use rand::RngExt;

use super::table::{Table, TableError, zscore_covariance};
use super::{Arms, Environment, RewardBounds, SimRng};

/// Why a real-data environment could not be built.
#[derive(Clone, Debug, PartialEq)]
pub enum RealDataError {
    /// A data file could not be read (it names the file, line and column).
    File(TableError),
    /// A sample matrix with no columns.
    NoArms,
    /// Too few rows: the rewards need 1, the covariance needs 2.
    TooFewSamples {
        /// `"reward"` or `"covariance"` samples.
        which: &'static str,
        /// Rows given.
        rows: usize,
        /// Rows needed.
        needed: usize,
    },
    /// The reward and covariance samples have different numbers of arms (columns).
    ArmCountMismatch {
        /// Columns of the reward samples.
        samples: usize,
        /// Columns of the covariance samples.
        covariance: usize,
    },
    /// A NaN or infinite sample (0-based row and column of the matrix).
    NonFiniteSample {
        /// `"reward"` or `"covariance"` samples.
        which: &'static str,
        /// Row.
        row: usize,
        /// Column.
        column: usize,
    },
    /// The largest column mean is not positive, so normalising by it is meaningless.
    NonPositiveMaxMean(f64),
    /// A constant column of the covariance samples cannot be z-scored (0-based column).
    ConstantColumn {
        /// Column.
        column: usize,
    },
}

impl fmt::Display for RealDataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(e) => write!(f, "{e}"),
            Self::NoArms => write!(f, "the sample matrix has no columns (arms)"),
            Self::TooFewSamples { which, rows, needed } => {
                write!(f, "{which} samples have {rows} row(s), at least {needed} are needed")
            }
            Self::ArmCountMismatch { samples, covariance } => write!(
                f,
                "reward samples have {samples} columns but covariance samples have {covariance}; \
                 both files must list the same arms"
            ),
            Self::NonFiniteSample { which, row, column } => {
                write!(f, "{which} sample at row {row}, column {column} (0-based) is not finite")
            }
            Self::NonPositiveMaxMean(m) => write!(
                f,
                "the largest column mean is {m}, not positive, so f cannot be normalised by it; \
                 shift the data to positive values"
            ),
            Self::ConstantColumn { column } => write!(
                f,
                "covariance samples column {column} (0-based) is constant and cannot be \
                 z-scored; drop that arm"
            ),
        }
    }
}

impl std::error::Error for RealDataError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::File(e) => Some(e),
            _ => None,
        }
    }
}

/// An environment whose arms are the columns of a real sample matrix (Zhou & Tan §5.1).
#[derive(Clone, Debug)]
pub struct RealData {
    arms: Arms,
    arm_names: Vec<String>,
    /// Each arm's normalised observations (divided by `scale`).
    columns: Vec<Vec<f64>>,
    scale: f64,
}

impl RealData {
    /// Builds the environment from reward samples (rows = samples, columns = arms, at least one
    /// row) and covariance samples (same columns, at least two rows, no constant column); see
    /// the module documentation for every constant. Arms are named `arm0`, `arm1`, ….
    pub fn from_matrix(
        name: &str,
        samples: &DMatrix<f64>,
        covariance_samples: &DMatrix<f64>,
    ) -> Result<Self, RealDataError> {
        let arms = samples.ncols();
        if arms == 0 {
            return Err(RealDataError::NoArms);
        }
        if covariance_samples.ncols() != arms {
            return Err(RealDataError::ArmCountMismatch {
                samples: arms,
                covariance: covariance_samples.ncols(),
            });
        }
        check_samples("reward", samples, 1)?;
        check_samples("covariance", covariance_samples, 2)?;
        let columns = samples.column_iter().map(|c| c.iter().copied().collect()).collect();
        let covariance = zscore_covariance(covariance_samples)
            .map_err(|column| RealDataError::ConstantColumn { column })?;
        Self::from_columns(name, columns, covariance)
    }

    /// Builds the environment from each arm's observations (`columns[a]`, any positive number
    /// of finite values per arm; columns may differ in length) and the learner's prior
    /// `covariance` over the arms: f, B, R, v and c as in the module documentation, computed
    /// over the observations there are. Arms are named `arm0`, `arm1`, ….
    pub fn from_columns(
        name: &str,
        columns: Vec<Vec<f64>>,
        covariance: DMatrix<f64>,
    ) -> Result<Self, RealDataError> {
        let arms = columns.len();
        if arms == 0 {
            return Err(RealDataError::NoArms);
        }
        for (column, values) in columns.iter().enumerate() {
            if values.is_empty() {
                return Err(RealDataError::TooFewSamples { which: "reward", rows: 0, needed: 1 });
            }
            if let Some(row) = values.iter().position(|y| !y.is_finite()) {
                return Err(RealDataError::NonFiniteSample { which: "reward", row, column });
            }
        }
        if covariance.shape() != (arms, arms) {
            return Err(RealDataError::ArmCountMismatch { samples: arms, covariance: covariance.ncols() });
        }
        // Sums in column order, each column in row order (as a matrix's column-major iterator).
        let raw_means: Vec<f64> =
            columns.iter().map(|c| c.iter().fold(0.0, |s, y| s + y) / c.len() as f64).collect();
        let scale = raw_means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !(scale.is_finite() && scale > 0.0) {
            return Err(RealDataError::NonPositiveMaxMean(scale));
        }
        let columns: Vec<Vec<f64>> =
            columns.into_iter().map(|c| c.into_iter().map(|y| y / scale).collect()).collect();
        let means: Vec<f64> = raw_means.iter().map(|m| m / scale).collect();
        let mut max_noise = 0.0f64;
        let mut sum_noise2 = 0.0;
        for (a, column) in columns.iter().enumerate() {
            for y in column {
                let eta = y - means[a];
                max_noise = max_noise.max(eta.abs());
                sum_noise2 += eta * eta;
            }
        }
        let cells = columns.iter().map(Vec::len).sum::<usize>() as f64;
        let v = columns.iter().flatten().map(|y| y * y).sum::<f64>() / cells;
        let points = super::unit_grid(arms);
        let b = means.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        // B = max |f| (= 1): the bound on |f| the clamp needs, not the RKHS norm (see the
        // module docs for both and for the original scripts' B = s).
        let bounds = RewardBounds { b, r: Some(max_noise), alpha: 1.0, v, c: sum_noise2 / cells };
        Ok(Self {
            arms: Arms::new(name, points, means, covariance, bounds),
            arm_names: (0..arms).map(|a| format!("arm{a}")).collect(),
            columns,
            scale,
        })
    }

    /// The light-sensor environment (41 sensors, CMU Intelligent Workplace, Nov 2005): f from
    /// the test samples, covariance from the training samples. Both files have a header line.
    pub fn light_sensor(
        train_path: impl AsRef<Path>,
        test_path: impl AsRef<Path>,
    ) -> Result<Self, RealDataError> {
        let train = load(train_path.as_ref())?;
        let test = load(test_path.as_ref())?;
        Ok(Self::from_matrix("light-sensor", &test.1, &train.1)?.with_arm_names(test.0))
    }

    /// The stock environment (adjusted closing prices of 29 Dow Jones stocks): f and covariance
    /// from all days. The file has a header line and a leading Date column, which is skipped.
    pub fn stocks(path: impl AsRef<Path>) -> Result<Self, RealDataError> {
        let (names, prices) = load(path.as_ref())?;
        Ok(Self::from_matrix("stocks", &prices, &prices)?.with_arm_names(names))
    }

    /// The arms' names (CSV header names, or `arm0`, `arm1`, …).
    pub fn arm_names(&self) -> &[String] {
        &self.arm_names
    }

    /// s, the largest unnormalised column mean: rewards and f are the data divided by s.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// All normalised means f(0..n).
    pub fn means(&self) -> &[f64] {
        self.arms.means()
    }

    /// c, the mean of the squared normalised noise over all samples (Zhou & Tan §5.1); the
    /// same value as `bounds().c`.
    pub fn mean_squared_noise(&self) -> f64 {
        self.arms.bounds().c
    }

    /// Arm `arm`'s normalised observations (empty for an arm out of range).
    pub fn observations(&self, arm: usize) -> &[f64] {
        self.columns.get(arm).map_or(&[], Vec::as_slice)
    }

    /// The same data with other reward constants (a user's own B, R, v, c).
    pub fn with_bounds(mut self, bounds: RewardBounds) -> Self {
        self.arms = self.arms.with_bounds(bounds);
        self
    }

    /// Sets the arms' names (ignored unless there is one per arm).
    pub fn with_arm_names(mut self, names: Vec<String>) -> Self {
        if names.len() == self.arm_names.len() {
            self.arm_names = names;
        }
        self
    }
}

/// A data set's arm names and observations, which must have no gaps.
fn load(path: &Path) -> Result<(Vec<String>, DMatrix<f64>), RealDataError> {
    let table = Table::read(path).map_err(RealDataError::File)?;
    let matrix = table
        .complete()
        .map_err(|problem| RealDataError::File(TableError { path: path.to_path_buf(), problem }))?;
    Ok((table.names, matrix))
}

fn check_samples(which: &'static str, m: &DMatrix<f64>, needed: usize) -> Result<(), RealDataError> {
    if m.nrows() < needed {
        return Err(RealDataError::TooFewSamples { which, rows: m.nrows(), needed });
    }
    for column in 0..m.ncols() {
        for row in 0..m.nrows() {
            if !m[(row, column)].is_finite() {
                return Err(RealDataError::NonFiniteSample { which, row, column });
            }
        }
    }
    Ok(())
}

impl Environment for RealData {
    fn arms(&self) -> &Arms {
        &self.arms
    }

    /// A uniformly random one of the arm's normalised observations; NaN for an arm out of
    /// range.
    fn sample(&self, arm: usize, rng: &mut SimRng) -> f64 {
        match self.columns.get(arm) {
            Some(column) if !column.is_empty() => column[rng.random_range(0..column.len())],
            _ => f64::NAN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::table::TableProblem;
    use crate::gp::FiniteCovariance;
    use rand_core::SeedableRng;
    use std::path::PathBuf;

    const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/");

    fn data_file(name: &str) -> Option<PathBuf> {
        let path = Path::new(DATA).join(name);
        if path.is_file() {
            Some(path)
        } else {
            println!("skipping: data file {} not found", path.display());
            None
        }
    }

    /// Properties every real-data environment must have.
    fn check_env(env: &RealData, arms: usize) {
        assert_eq!(env.num_arms(), arms);
        assert_eq!(env.best_mean(), 1.0);
        assert!(env.means().iter().all(|m| *m <= 1.0));
        let b = env.bounds();
        let max_abs_f = env.means().iter().fold(0.0f64, |m, x| m.max(x.abs()));
        assert_eq!(b.b, max_abs_f);
        assert!(env.scale() > 1.0);
        let r = b.r.unwrap();
        assert!(r > 0.0);
        // R is attained and bounds every noise value.
        let mut max = 0.0f64;
        for a in 0..arms {
            for y in env.observations(a).iter() {
                max = max.max((y - env.mean(a)).abs());
            }
        }
        assert_eq!(max, r);
        assert_eq!(b.alpha, 1.0);
        // v = E y² = c + mean of f² over the arms (equal column lengths).
        let f2 = env.means().iter().map(|m| m * m).sum::<f64>() / arms as f64;
        assert!((b.v - (env.mean_squared_noise() + f2)).abs() < 1e-9 * b.v);
        let k = env.prior_covariance();
        assert_eq!(k.shape(), (arms, arms));
        assert_eq!(k, &k.transpose());
        assert!((0..arms).all(|i| (k[(i, i)] - 1.0).abs() < 1e-12));
        assert!(k.iter().all(|c| c.abs() <= 1.0 + 1e-12));
        FiniteCovariance::new(k.clone()).unwrap().check_positive_semidefinite(1e-8).unwrap();
        assert_eq!(env.point(0), &[0.0]);
        assert_eq!(env.point(arms - 1), &[1.0]);
        assert!(env.sample(arms, &mut SimRng::seed_from_u64(0)).is_nan());
    }

    /// The mean of many pulls is within a 5.33-standard-error (≈ 1e-7 false alarm) CLT bound.
    fn check_pulls(env: &RealData, arm: usize, seed: u64) {
        let n = 200_000;
        let mut rng = SimRng::seed_from_u64(seed);
        let column = env.observations(arm);
        let var = column.iter().map(|y| (y - env.mean(arm)).powi(2)).sum::<f64>() / column.len() as f64;
        let mut sum = 0.0;
        for _ in 0..n {
            let y = env.sample(arm, &mut rng);
            assert!(column.contains(&y));
            sum += y;
        }
        let tol = 5.33 * (var / n as f64).sqrt();
        assert!((sum / n as f64 - env.mean(arm)).abs() < tol);
    }

    /// A shared table as [`check_env`] checks it, of `arms` arms of `rows` readings, the first
    /// and the last arm named `names`, and its scale s, R and v as cross-checked with an
    /// independent computation (Python csv, same formulas).
    fn check_table(env: &RealData, (arms, rows): (usize, usize), names: [&str; 2], [scale, r, v]: [f64; 3]) {
        check_env(env, arms);
        assert_eq!(env.observations(0).len(), rows);
        assert_eq!(env.arm_names()[0], names[0]);
        assert_eq!(env.arm_names()[arms - 1], names[1]);
        assert!((env.scale() - scale).abs() < 1e-9);
        assert!((env.bounds().r.unwrap() - r).abs() < 1e-12);
        assert!((env.bounds().v - v).abs() < 1e-12);
    }

    #[test]
    fn env_real_light_sensor_from_the_shared_files() {
        let (Some(train), Some(test)) =
            (data_file("lightsensor_train.csv"), data_file("lightsensor_test.csv"))
        else {
            return;
        };
        let env = RealData::light_sensor(&train, &test).unwrap();
        check_table(
            &env,
            (41, 192),
            ["s1", "s41"],
            [945.541_666_666_666_6, 0.883_389_150_839_466, 0.422_148_285_935_130_5],
        );
        assert_eq!(env.mean(3), 1.0);
        let best = (0..41).find(|&a| env.mean(a) == 1.0).unwrap();
        check_pulls(&env, best, 5);
        check_pulls(&env, 0, 6);
    }

    #[test]
    fn env_real_stocks_from_the_shared_file() {
        let Some(path) = data_file("stocks_adjclose.csv") else {
            return;
        };
        let env = RealData::stocks(&path).unwrap();
        check_table(
            &env,
            (29, 823),
            ["AAPL", "XOM"],
            [237.328_268_897_196_7, 0.856_584_561_322_794, 0.256_332_563_906_700_9],
        );
        check_pulls(&env, 3, 7);
    }

    #[test]
    fn env_real_from_matrix_constants_by_hand() {
        // Two arms, means 2 and 4: s = 4, f = (0.5, 1).
        let samples = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 6.0]);
        let env = RealData::from_matrix("toy", &samples, &samples).unwrap();
        assert_eq!(env.means(), &[0.5, 1.0]);
        assert_eq!(env.scale(), 4.0);
        assert_eq!(env.arm_names(), &["arm0".to_string(), "arm1".to_string()]);
        // Normalised cells 0.25, 0.5, 0.75, 1.5: noise ±0.25, ±0.5.
        assert_eq!(env.bounds().r, Some(0.5));
        assert_eq!(env.bounds().v, (0.0625 + 0.25 + 0.5625 + 2.25) / 4.0);
        assert_eq!(env.mean_squared_noise(), (2.0 * 0.0625 + 2.0 * 0.25) / 4.0);
        // Perfectly correlated columns: every covariance entry is 1.
        assert!(env.prior_covariance().iter().all(|c| (c - 1.0).abs() < 1e-15));
    }

    #[test]
    fn env_real_from_matrix_rejects_bad_input() {
        let ok = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 5.0]);
        let e = |s: &DMatrix<f64>, c: &DMatrix<f64>| RealData::from_matrix("x", s, c).unwrap_err();
        assert_eq!(e(&DMatrix::zeros(2, 0), &DMatrix::zeros(2, 0)), RealDataError::NoArms);
        assert_eq!(
            e(&ok, &DMatrix::zeros(2, 3)),
            RealDataError::ArmCountMismatch { samples: 2, covariance: 3 }
        );
        assert_eq!(
            e(&ok, &DMatrix::from_row_slice(1, 2, &[1.0, 2.0])),
            RealDataError::TooFewSamples { which: "covariance", rows: 1, needed: 2 }
        );
        let nan = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, f64::NAN, 5.0]);
        assert_eq!(e(&nan, &ok), RealDataError::NonFiniteSample { which: "reward", row: 1, column: 0 });
        let negative = -&ok;
        assert!(matches!(e(&negative, &ok), RealDataError::NonPositiveMaxMean(_)));
        let constant = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 1.0, 5.0]);
        assert_eq!(e(&ok, &constant), RealDataError::ConstantColumn { column: 0 });
    }

    #[test]
    fn env_real_constructors_report_the_bad_file() {
        let dir = std::env::temp_dir().join(format!("host-sim-env-real-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.csv");
        let bad = dir.join("bad.csv");
        std::fs::write(&good, "s1,s2\n1,2\n3,5\n").unwrap();
        std::fs::write(&bad, "s1,s2\n1,2\n3,oops\n").unwrap();
        let err = RealData::light_sensor(&good, &bad).unwrap_err();
        assert_eq!(
            err,
            RealDataError::File(TableError {
                path: bad.clone(),
                problem: TableProblem::NotANumber { line: 3, column: "s2".into(), cell: "oops".into() }
            })
        );
        assert!(err.to_string().contains("bad.csv") && err.to_string().contains("line 3"));
        let env = RealData::light_sensor(&good, &good).unwrap();
        assert_eq!(env.arm_names(), &["s1".to_string(), "s2".to_string()]);
        // A ragged stocks file is reported at its line.
        std::fs::write(&bad, "Date,A,B\n2020-01-01,1,2\n2020-01-02,3\n").unwrap();
        assert!(matches!(
            RealData::stocks(&bad),
            Err(RealDataError::File(TableError { problem: TableProblem::Ragged { line: 3, .. }, .. }))
        ));
        let missing = dir.join("missing.csv");
        assert!(matches!(
            RealData::stocks(&missing),
            Err(RealDataError::File(TableError { problem: TableProblem::Unreadable(_), .. }))
        ));
        // The papers' data sets have no gaps: an empty cell is named, with where gaps are allowed.
        std::fs::write(&bad, "Date,A,B\n2020-01-01,1,2\n2020-01-02,,4\n").unwrap();
        let err = RealData::stocks(&bad).unwrap_err().to_string();
        assert!(
            err.contains("line 3, column A: the cell is empty") && err.contains("host-sim run custom"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
