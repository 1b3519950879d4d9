//! A user-supplied covariance matrix over a finite domain, used as a kernel.
//!
//! The real-data experiments of Zhou & Tan §5.1 take the empirical covariance of normalised samples
//! as the kernel over the arms (SPEC §2.1, §2.3). The domain is {0, 1, …, n−1}; a point is the
//! one-coordinate slice `[i as f64]`.

use nalgebra::DMatrix;

use super::kernel::{Kernel, KernelError};

/// Relative tolerance of the symmetry check: |A[i, j] − A[j, i]| ≤ `SYMMETRY_RTOL` · max |A|.
pub const SYMMETRY_RTOL: f64 = 1e-9;

/// A validated n×n covariance matrix over the finite domain {0, …, n−1}.
///
/// Guarantees: n ≥ 1, every entry finite, diagonal ≥ 0, exactly symmetric (the input is
/// symmetrised as (A + Aᵀ)/2 after passing the [`SYMMETRY_RTOL`] check). Positive
/// semi-definiteness costs an O(n³) eigen-decomposition and is checked only on request
/// ([`FiniteCovariance::check_positive_semidefinite`]); the posterior clamps the small negative
/// variances that an indefinite matrix can produce.
#[derive(Debug, Clone, PartialEq)]
pub struct FiniteCovariance {
    matrix: DMatrix<f64>,
}

impl FiniteCovariance {
    /// Validates and wraps a covariance matrix.
    ///
    /// ```
    /// use ldp_learn::gp::{FiniteCovariance, Kernel};
    /// use nalgebra::DMatrix;
    /// let k = FiniteCovariance::new(DMatrix::from_row_slice(2, 2, &[1.0, 0.5, 0.5, 2.0])).unwrap();
    /// assert_eq!(k.eval(&[0.0], &[1.0]), 0.5);
    /// assert!(k.eval(&[2.0], &[0.0]).is_nan()); // not an index of the domain
    /// assert!(FiniteCovariance::new(DMatrix::from_row_slice(2, 2, &[1.0, 0.5, 0.4, 1.0])).is_err());
    /// ```
    pub fn new(matrix: DMatrix<f64>) -> Result<Self, KernelError> {
        let (rows, cols) = matrix.shape();
        if rows != cols {
            return Err(KernelError::NotSquare { rows, cols });
        }
        if rows == 0 {
            return Err(KernelError::EmptyMatrix);
        }
        let mut max_abs = 0.0f64;
        for col in 0..cols {
            for row in 0..rows {
                let v = matrix[(row, col)];
                if !v.is_finite() {
                    return Err(KernelError::NonFiniteEntry { row, col });
                }
                max_abs = max_abs.max(v.abs());
            }
        }
        let tol = SYMMETRY_RTOL * max_abs;
        for row in 0..rows {
            for col in 0..row {
                if (matrix[(row, col)] - matrix[(col, row)]).abs() > tol {
                    return Err(KernelError::NotSymmetric { row, col });
                }
            }
        }
        if let Some(index) = (0..rows).find(|&i| matrix[(i, i)] < 0.0) {
            return Err(KernelError::NegativeVariance { index });
        }
        let matrix = (&matrix + matrix.transpose()) * 0.5;
        Ok(Self { matrix })
    }

    /// n, the size of the domain.
    pub fn domain_size(&self) -> usize {
        self.matrix.nrows()
    }

    /// The (symmetrised) covariance matrix.
    pub fn matrix(&self) -> &DMatrix<f64> {
        &self.matrix
    }

    /// The covariance of domain points i and j, or `None` if either is out of range.
    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        let n = self.domain_size();
        (i < n && j < n).then(|| self.matrix[(i, j)])
    }

    /// The domain as points for the [`Kernel`] interface: `[[0.0], [1.0], …, [n−1]]`.
    pub fn domain_points(&self) -> Vec<Vec<f64>> {
        (0..self.domain_size()).map(|i| vec![i as f64]).collect()
    }

    /// Checks λ_min ≥ −`rel_tol` · max |λ| over the eigenvalues of the matrix (O(n³)).
    ///
    /// An empirical covariance is PSD in exact arithmetic; `rel_tol = 1e-8` accepts its rounding.
    pub fn check_positive_semidefinite(&self, rel_tol: f64) -> Result<(), KernelError> {
        let n = self.domain_size();
        let eig = nalgebra::SymmetricEigen::try_new(self.matrix.clone(), f64::EPSILON, 1000 + 100 * n)
            .ok_or(KernelError::EigenDecompositionFailed)?;
        let min = eig.eigenvalues.min();
        let max_abs = eig.eigenvalues.amax();
        if min >= -rel_tol * max_abs {
            Ok(())
        } else {
            Err(KernelError::NotPositiveSemidefinite { min_eigenvalue: min })
        }
    }

    fn index_of(&self, x: &[f64]) -> Option<usize> {
        match x {
            [c] if *c >= 0.0 && *c < self.domain_size() as f64 && c.fract() == 0.0 => Some(*c as usize),
            _ => None,
        }
    }
}

impl Kernel for FiniteCovariance {
    /// A[i, j] for the points `[i]`, `[j]`; NaN if a point is not an index of the domain.
    fn eval(&self, x: &[f64], y: &[f64]) -> f64 {
        match (self.index_of(x), self.index_of(y)) {
            (Some(i), Some(j)) => self.matrix[(i, j)],
            _ => f64::NAN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gp::gram_matrix;

    fn m(n: usize, v: &[f64]) -> DMatrix<f64> {
        DMatrix::from_row_slice(n, n, v)
    }

    #[test]
    fn each_invalid_matrix_has_its_own_variant() {
        assert_eq!(
            FiniteCovariance::new(DMatrix::zeros(2, 3)),
            Err(KernelError::NotSquare { rows: 2, cols: 3 })
        );
        assert_eq!(FiniteCovariance::new(DMatrix::zeros(0, 0)), Err(KernelError::EmptyMatrix));
        assert_eq!(
            FiniteCovariance::new(m(2, &[1.0, f64::NAN, 0.0, 1.0])),
            Err(KernelError::NonFiniteEntry { row: 0, col: 1 })
        );
        assert_eq!(
            FiniteCovariance::new(m(2, &[1.0, 0.0, f64::INFINITY, 1.0])),
            Err(KernelError::NonFiniteEntry { row: 1, col: 0 })
        );
        assert_eq!(
            FiniteCovariance::new(m(2, &[1.0, 0.5, 0.5 + 1e-6, 1.0])),
            Err(KernelError::NotSymmetric { row: 1, col: 0 })
        );
        assert_eq!(
            FiniteCovariance::new(m(2, &[1.0, 0.0, 0.0, -1e-3])),
            Err(KernelError::NegativeVariance { index: 1 })
        );
        let indefinite = FiniteCovariance::new(m(2, &[1.0, 2.0, 2.0, 1.0])).unwrap();
        assert!(matches!(
            indefinite.check_positive_semidefinite(1e-8),
            Err(KernelError::NotPositiveSemidefinite { min_eigenvalue }) if (min_eigenvalue + 1.0).abs() < 1e-12
        ));
    }

    #[test]
    fn asymmetry_within_tolerance_is_symmetrised() {
        let k = FiniteCovariance::new(m(2, &[2.0, 0.5, 0.5 + 1e-10, 1.0])).unwrap();
        assert_eq!(k.matrix()[(0, 1)], k.matrix()[(1, 0)]);
        assert!(k.check_positive_semidefinite(1e-8).is_ok());
    }

    #[test]
    fn eval_and_gram_reproduce_the_matrix() {
        let a = m(3, &[1.0, 0.2, -0.1, 0.2, 2.0, 0.3, -0.1, 0.3, 0.5]);
        let k = FiniteCovariance::new(a.clone()).unwrap();
        assert_eq!(gram_matrix(&k, &k.domain_points()).unwrap(), a);
        assert_eq!(k.get(2, 1), Some(0.3));
        assert_eq!(k.get(3, 0), None);
        for bad in [&[3.0][..], &[-1.0], &[0.5], &[f64::NAN], &[0.0, 1.0], &[]] {
            assert!(k.eval(bad, &[0.0]).is_nan());
        }
        assert_eq!(
            gram_matrix(&k, &[vec![0.0], vec![7.0]]),
            Err(KernelError::NonFiniteValue { row: 1, col: 0 })
        );
    }
}
