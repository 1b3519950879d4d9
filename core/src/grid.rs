//! The public power-of-two grid every released value lives on — the mechanism's, the trees'
//! and JDP's alike.
//!
//! Values clamped to `[−B, B]` are rounded to integer indices `i ∈ [−M, M]` of the grid `2^k`,
//! `M = ⌈B/2^k⌉`; sums of indices are exact `i64`, noise is added as integers, and a release
//! `index·2^k` is exact in `f64`. That is what makes the releases safe in floating point (see
//! [`crate::mechanism`]). The limits keep every sum exact: `B ∈ [2^-40, 2^40]`, `k` no coarser
//! than `⌊log₂ B⌋` and `M ≤ 2^20`.

/// Ranges are restricted to `[2^MIN_RANGE_LOG2, 2^MAX_RANGE_LOG2]`.
pub const MIN_RANGE_LOG2: i32 = -40;
/// See [`MIN_RANGE_LOG2`].
pub const MAX_RANGE_LOG2: i32 = 40;
/// Default number of grid steps per power of two of the range: `k = ⌊log₂ B⌋ − 12`.
pub const DEFAULT_GRID_BITS: i32 = 12;
/// The most grid steps a range may span, `M ≤ 2^20`.
pub const MAX_GRID_STEPS: i64 = 1 << 20;

/// Why a grid could not be made. Each layer reports it in its own parameter error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum GridError {
    /// The bound was NaN or infinite.
    BoundNotFinite,
    /// The bound was zero or negative.
    BoundNotPositive,
    /// The bound is outside `[2^-40, 2^40]`, where the grid arithmetic is exact.
    BoundOutOfRange,
    /// An explicit grid `2^k` is coarser than the bound, or so fine that the bound spans more
    /// than `2^20` steps.
    GridOutOfRange,
}

/// A grid `2^k` for values in `[−B, B]`: validated once, then exact.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Grid {
    bound: f64,
    log2: i32,
    max_index: i64,
}

impl Grid {
    /// The grid for `[−bound, bound]`: `2^log2`, or `2^(⌊log₂ B⌋ − 12)` for `None`.
    ///
    /// ```
    /// use ldp_core::grid::{Grid, GridError};
    /// let g = Grid::new(1.5, None)?;
    /// assert_eq!((g.log2(), g.max_index()), (-12, 6144));
    /// assert_eq!(Grid::new(1.0, Some(-3))?.max_index(), 8);
    /// assert_eq!(Grid::new(1.0, Some(1)), Err(GridError::GridOutOfRange)); // coarser than B
    /// assert_eq!(Grid::new(1.5, Some(-20)), Err(GridError::GridOutOfRange)); // 1.5·2^20 steps
    /// assert_eq!(Grid::new(f64::NAN, None), Err(GridError::BoundNotFinite));
    /// # Ok::<(), GridError>(())
    /// ```
    pub const fn new(bound: f64, log2: Option<i32>) -> Result<Self, GridError> {
        if !bound.is_finite() {
            return Err(GridError::BoundNotFinite);
        }
        if bound <= 0.0 {
            return Err(GridError::BoundNotPositive);
        }
        if bound < pow2(MIN_RANGE_LOG2) || bound > pow2(MAX_RANGE_LOG2) {
            return Err(GridError::BoundOutOfRange);
        }
        Self::spanning(bound, log2)
    }

    /// [`Grid::new`] for a bound whose range the caller has checked: JDP checks its nominal
    /// bound and builds the grid on the bound times a margin of `1 + 2^-40`, which may pass
    /// `2^40` by that factor. `bound` must be positive and normal.
    pub(crate) const fn spanning(bound: f64, log2: Option<i32>) -> Result<Self, GridError> {
        let top = floor_log2(bound);
        let k = match log2 {
            Some(k) => k,
            None => top - DEFAULT_GRID_BITS,
        };
        if k > top || k < top - 20 {
            return Err(GridError::GridOutOfRange);
        }
        // B/2^k is exact (a power of two and a normal number) and below 2^21.
        let max_index = ceil_at_least_one(bound * pow2(-k));
        if max_index > MAX_GRID_STEPS {
            return Err(GridError::GridOutOfRange);
        }
        Ok(Self { bound, log2: k, max_index })
    }

    /// The bound B.
    pub const fn bound(&self) -> f64 {
        self.bound
    }

    /// The exponent k: the grid is `2^k`.
    pub const fn log2(&self) -> i32 {
        self.log2
    }

    /// `M = ⌈B/2^k⌉`: indices lie in `[−M, M]`.
    pub const fn max_index(&self) -> i64 {
        self.max_index
    }

    /// `⌈b/2^k⌉`, at least 1 and at most M, for a smaller bound `0 < b ≤ B`.
    pub fn steps(&self, b: f64) -> i64 {
        ceil_at_least_one(libm::scalbn(b, -self.log2)).min(self.max_index)
    }

    /// The nearest index of a finite value, clamped to `[−M, M]`.
    pub fn index(&self, value: f64) -> i64 {
        self.index_within(value, self.max_index)
    }

    /// The nearest index of a finite value, clamped to `[−max_index, max_index]`.
    pub fn index_within(&self, value: f64, max_index: i64) -> i64 {
        (libm::round(libm::scalbn(value, -self.log2)) as i64).clamp(-max_index, max_index)
    }

    /// `index·2^k`, exact for `|index| ≤ 2^53`.
    pub fn value(&self, index: i64) -> f64 {
        libm::scalbn(index as f64, self.log2)
    }

    /// `x·2^k`: a quantity in grid steps (a noise scale) in value units.
    pub fn scaled(&self, steps: f64) -> f64 {
        libm::scalbn(steps, self.log2)
    }

    /// `x/2^k`: a value in grid steps.
    pub fn in_steps(&self, x: f64) -> f64 {
        libm::scalbn(x, -self.log2)
    }
}

/// `2^k` for k in the normal range `[−1022, 1023]`, usable in `const`.
pub(crate) const fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `⌊log₂ x⌋` for a positive normal x, usable in `const`.
pub(crate) const fn floor_log2(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

/// `⌈x⌉` for `0 ≤ x < 2^63`, at least 1.
const fn ceil_at_least_one(x: f64) -> i64 {
    let f = x as i64; // truncation = floor for x ≥ 0
    let c = if (f as f64) < x { f + 1 } else { f };
    if c < 1 { 1 } else { c }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_helpers_agree_with_libm() {
        for k in -60..=60 {
            assert_eq!(pow2(k).to_bits(), libm::scalbn(1.0, k).to_bits());
        }
        for x in [2f64.powi(-40), 0.3, 1.0, 1.5, 1023.9, 2f64.powi(40)] {
            assert_eq!(floor_log2(x), libm::ilogb(x));
        }
        for x in [0.0, 0.2, 1.0, 1.0000001, 4095.5, 4096.0] {
            assert_eq!(ceil_at_least_one(x), (libm::ceil(x) as i64).max(1));
        }
    }

    #[test]
    fn indices_round_to_nearest_and_clamp() {
        let g = Grid::new(1.0, Some(-2)).unwrap(); // steps of 1/4, M = 4
        assert_eq!(g.max_index(), 4);
        assert_eq!([g.index(0.3), g.index(0.38), g.index(-0.9), g.index(7.0)], [1, 2, -4, 4]);
        assert_eq!(g.index_within(7.0, 2), 2);
        assert_eq!((g.value(-3), g.scaled(2.5), g.in_steps(0.75)), (-0.75, 0.625, 3.0));
        assert_eq!((g.steps(0.3), g.steps(0.01), g.steps(5.0)), (2, 1, 4));
        assert_eq!(Grid::new(2f64.powi(41), None), Err(GridError::BoundOutOfRange));
        assert_eq!(Grid::new(0.0, None), Err(GridError::BoundNotPositive));
        assert_eq!(Grid::new(1.0, Some(-20)).map(|g| g.max_index()), Ok(MAX_GRID_STEPS));
    }
}
