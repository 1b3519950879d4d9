//! Covariance functions over points of ℝ^d and the Gram-matrix helper.
//!
//! The closed forms follow Zhou & Tan ("Regularity Assumptions", the SE and Matérn definitions
//! with s = ‖x − x'‖₂) and SPEC §2.1. Every kernel here satisfies k(x, x) = 1, the bounded
//! variance assumption of Zhou & Tan.

use std::fmt;

use nalgebra::DMatrix;

/// A positive semi-definite covariance function k(x, y).
///
/// `eval` has no error channel, so implementations return `f64::NAN` for points they cannot
/// evaluate (points of different lengths, an index outside a finite domain). Code that takes
/// points from outside the crate goes through [`gram_matrix`] or the posterior types, which check
/// dimensions and finiteness first and report a typed error.
pub trait Kernel {
    /// The covariance k(x, y).
    fn eval(&self, x: &[f64], y: &[f64]) -> f64;
}

impl<K: Kernel + ?Sized> Kernel for &K {
    fn eval(&self, x: &[f64], y: &[f64]) -> f64 {
        (**self).eval(x, y)
    }
}

/// Why a kernel or a covariance matrix was rejected.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum KernelError {
    /// The lengthscale l must be finite and > 0.
    InvalidLengthscale(f64),
    /// Matérn smoothness ν other than 1/2, 3/2, 5/2 (the closed forms implemented).
    UnsupportedNu(f64),
    /// A covariance matrix with no rows.
    EmptyMatrix,
    /// A covariance matrix that is not square.
    NotSquare {
        /// Number of rows.
        rows: usize,
        /// Number of columns.
        cols: usize,
    },
    /// A NaN or infinite entry in a covariance matrix.
    NonFiniteEntry {
        /// Row of the first offending entry.
        row: usize,
        /// Column of the first offending entry.
        col: usize,
    },
    /// |A[i, j] − A[j, i]| above the tolerance of [`crate::gp::SYMMETRY_RTOL`].
    NotSymmetric {
        /// Row of the first offending entry.
        row: usize,
        /// Column of the first offending entry.
        col: usize,
    },
    /// A negative diagonal entry (a negative prior variance).
    NegativeVariance {
        /// Index of the offending diagonal entry.
        index: usize,
    },
    /// The smallest eigenvalue is below −tolerance · (largest |eigenvalue|).
    NotPositiveSemidefinite {
        /// The smallest eigenvalue found.
        min_eigenvalue: f64,
    },
    /// The eigen-decomposition did not converge.
    EigenDecompositionFailed,
    /// Points of different dimensions given to one kernel.
    DimensionMismatch {
        /// Dimension of the first point.
        expected: usize,
        /// Dimension of the offending point.
        found: usize,
    },
    /// A point with a NaN or infinite coordinate.
    NonFinitePoint {
        /// Index of the offending point.
        index: usize,
    },
    /// The kernel returned NaN or ±∞ (for a finite-domain kernel: a point that is not an index).
    NonFiniteValue {
        /// Row of the offending Gram entry.
        row: usize,
        /// Column of the offending Gram entry.
        col: usize,
    },
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidLengthscale(l) => write!(f, "lengthscale must be finite and > 0, got {l}"),
            Self::UnsupportedNu(nu) => {
                write!(f, "Matérn nu must be 0.5, 1.5 or 2.5, got {nu}")
            }
            Self::EmptyMatrix => write!(f, "covariance matrix is empty"),
            Self::NotSquare { rows, cols } => {
                write!(f, "covariance matrix is {rows}x{cols}, not square")
            }
            Self::NonFiniteEntry { row, col } => {
                write!(f, "covariance matrix entry ({row}, {col}) is not finite")
            }
            Self::NotSymmetric { row, col } => {
                write!(f, "covariance matrix is not symmetric at ({row}, {col})")
            }
            Self::NegativeVariance { index } => {
                write!(f, "covariance matrix has a negative diagonal entry at {index}")
            }
            Self::NotPositiveSemidefinite { min_eigenvalue } => write!(
                f,
                "covariance matrix is not positive semi-definite (smallest eigenvalue {min_eigenvalue})"
            ),
            Self::EigenDecompositionFailed => write!(f, "eigen-decomposition did not converge"),
            Self::DimensionMismatch { expected, found } => {
                write!(f, "point of dimension {found}, expected {expected}")
            }
            Self::NonFinitePoint { index } => {
                write!(f, "point {index} has a non-finite coordinate")
            }
            Self::NonFiniteValue { row, col } => {
                write!(f, "kernel value at ({row}, {col}) is not finite")
            }
        }
    }
}

impl std::error::Error for KernelError {}

fn check_lengthscale(lengthscale: f64) -> Result<f64, KernelError> {
    if lengthscale.is_finite() && lengthscale > 0.0 {
        Ok(lengthscale)
    } else {
        Err(KernelError::InvalidLengthscale(lengthscale))
    }
}

/// Euclidean distance ‖x − y‖₂, or NaN when the lengths differ.
pub(crate) fn distance(x: &[f64], y: &[f64]) -> f64 {
    if x.len() != y.len() {
        return f64::NAN;
    }
    x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt()
}

/// Squared-exponential kernel k(x, y) = exp(−‖x − y‖² / (2 l²)) (Zhou & Tan, k_SE).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SquaredExponential {
    lengthscale: f64,
}

impl SquaredExponential {
    /// An SE kernel with lengthscale l (finite, > 0).
    ///
    /// ```
    /// use ldp_learn::gp::{Kernel, SquaredExponential};
    /// let k = SquaredExponential::new(0.2).unwrap();
    /// assert!((k.eval(&[0.0], &[0.2]) - (-0.5f64).exp()).abs() < 1e-15);
    /// assert!(SquaredExponential::new(0.0).is_err());
    /// ```
    pub fn new(lengthscale: f64) -> Result<Self, KernelError> {
        Ok(Self { lengthscale: check_lengthscale(lengthscale)? })
    }

    /// The lengthscale l.
    pub fn lengthscale(&self) -> f64 {
        self.lengthscale
    }
}

impl Kernel for SquaredExponential {
    fn eval(&self, x: &[f64], y: &[f64]) -> f64 {
        let r = distance(x, y) / self.lengthscale;
        (-0.5 * r * r).exp()
    }
}

/// How close a numeric ν must be to 0.5, 1.5 or 2.5 for [`Matern::from_nu`].
pub const NU_TOLERANCE: f64 = 1e-9;

/// The Matérn smoothness values with a closed form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaternNu {
    /// ν = 1/2: k = exp(−r/l).
    Half,
    /// ν = 3/2: k = (1 + √3 r/l) exp(−√3 r/l).
    ThreeHalves,
    /// ν = 5/2: k = (1 + √5 r/l + 5r²/(3l²)) exp(−√5 r/l).
    FiveHalves,
}

/// Matérn kernel with ν ∈ {1/2, 3/2, 5/2}, r = ‖x − y‖₂:
///
/// - ν = 1/2: k = exp(−r/l)
/// - ν = 3/2: k = (1 + √3 r/l) exp(−√3 r/l)
/// - ν = 5/2: k = (1 + √5 r/l + 5r²/(3l²)) exp(−√5 r/l)
///
/// These are the half-integer cases of Zhou & Tan's k = 2^{1−ν}/Γ(ν) (√(2ν) r/l)^ν B_ν(√(2ν) r/l)
/// (B_ν the modified Bessel function of the second kind); the tests check the equality.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Matern {
    nu: MaternNu,
    lengthscale: f64,
}

impl Matern {
    /// A Matérn kernel with smoothness `nu` and lengthscale l (finite, > 0).
    ///
    /// ```
    /// use ldp_learn::gp::{Kernel, Matern, MaternNu};
    /// let k = Matern::new(MaternNu::Half, 0.5).unwrap();
    /// assert!((k.eval(&[0.0], &[1.0]) - (-2.0f64).exp()).abs() < 1e-15);
    /// ```
    pub fn new(nu: MaternNu, lengthscale: f64) -> Result<Self, KernelError> {
        Ok(Self { nu, lengthscale: check_lengthscale(lengthscale)? })
    }

    /// A Matérn kernel from a numeric ν, which must be 0.5, 1.5 or 2.5 (within
    /// [`NU_TOLERANCE`]).
    ///
    /// ```
    /// use ldp_learn::gp::{Matern, MaternNu};
    /// assert_eq!(Matern::from_nu(2.5, 0.2).unwrap().nu(), MaternNu::FiveHalves);
    /// assert!(Matern::from_nu(1.0, 0.2).is_err());
    /// ```
    pub fn from_nu(nu: f64, lengthscale: f64) -> Result<Self, KernelError> {
        let near = |half_integer: f64| (nu - half_integer).abs() <= NU_TOLERANCE;
        let nu = if near(0.5) {
            MaternNu::Half
        } else if near(1.5) {
            MaternNu::ThreeHalves
        } else if near(2.5) {
            MaternNu::FiveHalves
        } else {
            return Err(KernelError::UnsupportedNu(nu));
        };
        Self::new(nu, lengthscale)
    }

    /// The smoothness ν.
    pub fn nu(&self) -> MaternNu {
        self.nu
    }

    /// The lengthscale l.
    pub fn lengthscale(&self) -> f64 {
        self.lengthscale
    }
}

impl Kernel for Matern {
    fn eval(&self, x: &[f64], y: &[f64]) -> f64 {
        let r = distance(x, y) / self.lengthscale;
        match self.nu {
            MaternNu::Half => (-r).exp(),
            MaternNu::ThreeHalves => {
                let a = 3f64.sqrt() * r;
                (1.0 + a) * (-a).exp()
            }
            MaternNu::FiveHalves => {
                let a = 5f64.sqrt() * r;
                (1.0 + a + a * a / 3.0) * (-a).exp()
            }
        }
    }
}

/// Checks that all points are finite and share one dimension.
pub(crate) fn check_points(points: &[Vec<f64>]) -> Result<(), KernelError> {
    let expected = points.first().map_or(0, Vec::len);
    for (index, p) in points.iter().enumerate() {
        if p.len() != expected {
            return Err(KernelError::DimensionMismatch { expected, found: p.len() });
        }
        if p.iter().any(|c| !c.is_finite()) {
            return Err(KernelError::NonFinitePoint { index });
        }
    }
    Ok(())
}

/// The Gram matrix G[i, j] = k(x_i, x_j) of a kernel over a finite list of points.
///
/// Only the lower triangle is evaluated and mirrored, so G is exactly symmetric. Fails if the
/// points have different dimensions, a non-finite coordinate, or the kernel returns a non-finite
/// value.
///
/// ```
/// use ldp_learn::gp::{gram_matrix, SquaredExponential};
/// let k = SquaredExponential::new(1.0).unwrap();
/// let g = gram_matrix(&k, &[vec![0.0], vec![1.0]]).unwrap();
/// assert_eq!(g.shape(), (2, 2));
/// assert!((g[(0, 1)] - (-0.5f64).exp()).abs() < 1e-15);
/// ```
pub fn gram_matrix<K: Kernel + ?Sized>(kernel: &K, points: &[Vec<f64>]) -> Result<DMatrix<f64>, KernelError> {
    check_points(points)?;
    let n = points.len();
    let mut g = DMatrix::zeros(n, n);
    for i in 0..n {
        for j in 0..=i {
            let v = kernel.eval(&points[i], &points[j]);
            if !v.is_finite() {
                return Err(KernelError::NonFiniteValue { row: i, col: j });
            }
            g[(i, j)] = v;
            g[(j, i)] = v;
        }
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::f64::consts::PI;

    fn all_kernels(l: f64) -> Vec<Box<dyn Kernel>> {
        vec![
            Box::new(SquaredExponential::new(l).unwrap()),
            Box::new(Matern::new(MaternNu::Half, l).unwrap()),
            Box::new(Matern::new(MaternNu::ThreeHalves, l).unwrap()),
            Box::new(Matern::new(MaternNu::FiveHalves, l).unwrap()),
        ]
    }

    /// K_ν(z) for half-integer ν (Abramowitz–Stegun 10.2.15–17), used to check the closed forms
    /// against the Bessel definition of Zhou & Tan.
    fn bessel_k_half_integer(nu: f64, z: f64) -> f64 {
        let base = (PI / (2.0 * z)).sqrt() * (-z).exp();
        if (nu - 0.5).abs() <= NU_TOLERANCE {
            base
        } else if (nu - 1.5).abs() <= NU_TOLERANCE {
            base * (1.0 + 1.0 / z)
        } else {
            base * (1.0 + 3.0 / z + 3.0 / (z * z))
        }
    }

    fn matern_bessel(nu: f64, r: f64, l: f64) -> f64 {
        // Γ(1/2) = √π, Γ(3/2) = √π/2, Γ(5/2) = 3√π/4.
        let gamma = if (nu - 0.5).abs() <= NU_TOLERANCE {
            PI.sqrt()
        } else if (nu - 1.5).abs() <= NU_TOLERANCE {
            PI.sqrt() / 2.0
        } else {
            3.0 * PI.sqrt() / 4.0
        };
        let z = (2.0 * nu).sqrt() * r / l;
        2f64.powf(1.0 - nu) / gamma * z.powf(nu) * bessel_k_half_integer(nu, z)
    }

    #[test]
    fn matern_closed_forms_match_bessel_definition() {
        // Relative tolerance 1e-12.
        for (nu_f, nu) in [(0.5, MaternNu::Half), (1.5, MaternNu::ThreeHalves), (2.5, MaternNu::FiveHalves)] {
            for l in [0.1, 0.2, 1.0, 3.0] {
                let k = Matern::new(nu, l).unwrap();
                for r in [1e-3, 0.05, 0.3, 1.0, 2.5] {
                    let expected = matern_bessel(nu_f, r, l);
                    let got = k.eval(&[0.0, 0.0], &[r * 0.6, r * 0.8]);
                    assert!(
                        (got - expected).abs() <= 1e-12 * expected.abs().max(1e-300),
                        "nu={nu_f} l={l} r={r}: {got} vs {expected}"
                    );
                }
            }
        }
    }

    #[test]
    fn matern_half_is_exponential() {
        // Tolerance 1e-15 absolute.
        let k = Matern::new(MaternNu::Half, 0.2).unwrap();
        for r in [0.0, 0.01, 0.2, 0.7, 5.0] {
            assert!((k.eval(&[1.0], &[1.0 + r]) - (-r / 0.2).exp()).abs() < 1e-15);
        }
    }

    #[test]
    fn invalid_parameters_have_their_own_variants() {
        for l in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(SquaredExponential::new(l), Err(KernelError::InvalidLengthscale(_))));
            assert!(matches!(Matern::new(MaternNu::Half, l), Err(KernelError::InvalidLengthscale(_))));
        }
        assert_eq!(Matern::from_nu(1.0, 1.0), Err(KernelError::UnsupportedNu(1.0)));
        let k = SquaredExponential::new(1.0).unwrap();
        assert_eq!(
            gram_matrix(&k, &[vec![0.0], vec![0.0, 1.0]]),
            Err(KernelError::DimensionMismatch { expected: 1, found: 2 })
        );
        assert_eq!(
            gram_matrix(&k, &[vec![0.0], vec![f64::NAN]]),
            Err(KernelError::NonFinitePoint { index: 1 })
        );
        // Every error displays something.
        assert!(!KernelError::EmptyMatrix.to_string().is_empty());
    }

    #[test]
    fn mismatched_points_evaluate_to_nan() {
        for k in all_kernels(1.0) {
            assert!(k.eval(&[0.0], &[0.0, 1.0]).is_nan());
        }
    }

    proptest! {
        #[test]
        fn unit_diagonal_and_symmetry(
            l in 0.05f64..5.0,
            x in prop::collection::vec(-3.0f64..3.0, 3),
            y in prop::collection::vec(-3.0f64..3.0, 3),
        ) {
            for k in all_kernels(l) {
                // k(x,x) = 1 exactly up to 1e-15; symmetry to 1e-15; values in [0,1].
                prop_assert!((k.eval(&x, &x) - 1.0).abs() <= 1e-15);
                let kxy = k.eval(&x, &y);
                prop_assert!((kxy - k.eval(&y, &x)).abs() <= 1e-15);
                prop_assert!((0.0..=1.0).contains(&kxy));
            }
        }

        #[test]
        fn gram_is_positive_semidefinite(
            l in 0.05f64..3.0,
            pts in prop::collection::vec(prop::collection::vec(0.0f64..1.0, 2), 1..25),
        ) {
            for k in all_kernels(l) {
                let g = gram_matrix(k.as_ref(), &pts).unwrap();
                let min = g.symmetric_eigenvalues().min();
                // Smallest eigenvalue ≥ −1e-10 (entries are ≤ 1, n ≤ 24).
                prop_assert!(min >= -1e-10, "min eigenvalue {}", min);
            }
        }
    }
}
