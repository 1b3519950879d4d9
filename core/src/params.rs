//! Validated parameters. A value of these types is always usable: the constructors reject
//! everything else with a [`ParamError`] saying what was wrong.

use crate::error::ParamError;

/// The privacy parameter ε of an ε-LDP release: finite and strictly positive.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Epsilon(f64);

impl Epsilon {
    /// Validates ε.
    ///
    /// ```
    /// use ldp_core::{Epsilon, ParamError};
    /// assert_eq!(Epsilon::new(1.0).map(Epsilon::get), Ok(1.0));
    /// assert_eq!(Epsilon::new(0.0), Err(ParamError::EpsilonNotPositive));
    /// assert_eq!(Epsilon::new(f64::NAN), Err(ParamError::EpsilonNotFinite));
    /// ```
    pub const fn new(epsilon: f64) -> Result<Self, ParamError> {
        if !epsilon.is_finite() {
            Err(ParamError::EpsilonNotFinite)
        } else if epsilon <= 0.0 {
            Err(ParamError::EpsilonNotPositive)
        } else {
            Ok(Self(epsilon))
        }
    }

    /// The value of ε.
    pub const fn get(self) -> f64 {
        self.0
    }
}

/// ε as the number it is: what `f64`'s `Display` prints, so labels and file names made from an
/// `Epsilon` read as they did from the `f64`.
///
/// ```
/// use ldp_core::Epsilon;
/// assert_eq!(Epsilon::new(1.0)?.to_string(), "1");
/// assert_eq!(format!("eps={}", Epsilon::new(0.5)?), "eps=0.5");
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
impl core::fmt::Display for Epsilon {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(&self.0, f)
    }
}

/// A failure probability δ in the open interval (0, 1).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Delta(f64);

impl Delta {
    /// Validates δ.
    ///
    /// ```
    /// use ldp_core::{Delta, ParamError};
    /// assert!(Delta::new(1e-3).is_ok());
    /// assert_eq!(Delta::new(1.0), Err(ParamError::DeltaOutOfRange));
    /// ```
    pub const fn new(delta: f64) -> Result<Self, ParamError> {
        // `!(a < x && x < b)` also rejects NaN.
        if !(delta > 0.0 && delta < 1.0) { Err(ParamError::DeltaOutOfRange) } else { Ok(Self(delta)) }
    }

    /// The value of δ.
    pub const fn get(self) -> f64 {
        self.0
    }
}

/// The δ of a high-probability error bound: "with probability ≥ 1 − δ" in Tao et al. Lemma 2
/// ([`lemma2_error_bound`](crate::tree::lemma2_error_bound), the trees' `error_bound`), in
/// `(0, 1/2]`, the range where that lemma holds as we read it (see there: it is false for δ
/// near 1). Not a privacy parameter: a release's δ is [`Delta`].
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ErrorBoundDelta(f64);

impl ErrorBoundDelta {
    /// The largest δ accepted, 1/2.
    pub const MAX: f64 = 0.5;

    /// Validates δ.
    ///
    /// ```
    /// use ldp_core::{ErrorBoundDelta, ParamError};
    /// assert_eq!(ErrorBoundDelta::new(0.1).map(ErrorBoundDelta::get), Ok(0.1));
    /// assert!(ErrorBoundDelta::new(ErrorBoundDelta::MAX).is_ok());
    /// assert_eq!(ErrorBoundDelta::new(0.51), Err(ParamError::ErrorBoundDeltaOutOfRange));
    /// assert_eq!(ErrorBoundDelta::new(0.0), Err(ParamError::ErrorBoundDeltaOutOfRange));
    /// assert_eq!(ErrorBoundDelta::new(f64::NAN), Err(ParamError::ErrorBoundDeltaOutOfRange));
    /// ```
    pub const fn new(delta: f64) -> Result<Self, ParamError> {
        // `!(a < x && x <= b)` also rejects NaN.
        if !(delta > 0.0 && delta <= Self::MAX) {
            Err(ParamError::ErrorBoundDeltaOutOfRange)
        } else {
            Ok(Self(delta))
        }
    }

    /// The value of δ.
    pub const fn get(self) -> f64 {
        self.0
    }

    /// `log₂(1/δ) ≥ 1`.
    pub(crate) fn log2_inverse(self) -> f64 {
        -libm::log2(self.0)
    }
}

/// A bound on a magnitude — B on |f(x)|, R on |η| (Zhou & Tan §3): finite and ≥ 0.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Bound(f64);

impl Bound {
    /// Validates a bound.
    ///
    /// ```
    /// use ldp_core::{Bound, ParamError};
    /// assert!(Bound::new(0.0).is_ok());
    /// assert_eq!(Bound::new(-1.0), Err(ParamError::BoundNegative));
    /// assert_eq!(Bound::new(f64::INFINITY), Err(ParamError::BoundNotFinite));
    /// ```
    pub const fn new(bound: f64) -> Result<Self, ParamError> {
        if !bound.is_finite() {
            Err(ParamError::BoundNotFinite)
        } else if bound < 0.0 {
            Err(ParamError::BoundNegative)
        } else {
            Ok(Self(bound))
        }
    }

    /// The value of the bound.
    pub const fn get(self) -> f64 {
        self.0
    }
}

/// A truncation (or clamping) level b: finite and strictly positive.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TruncationLevel(f64);

impl TruncationLevel {
    /// Validates a truncation level.
    ///
    /// ```
    /// use ldp_core::{ParamError, TruncationLevel};
    /// assert!(TruncationLevel::new(2.5).is_ok());
    /// assert_eq!(TruncationLevel::new(0.0), Err(ParamError::TruncationNotPositive));
    /// assert_eq!(TruncationLevel::new(f64::NAN), Err(ParamError::TruncationNotFinite));
    /// ```
    pub const fn new(level: f64) -> Result<Self, ParamError> {
        if !level.is_finite() {
            Err(ParamError::TruncationNotFinite)
        } else if level <= 0.0 {
            Err(ParamError::TruncationNotPositive)
        } else {
            Ok(Self(level))
        }
    }

    /// The value of the level.
    pub const fn get(self) -> f64 {
        self.0
    }
}

/// Typed values of valid literals for the unit tests (`const`, panicking on an invalid one).
#[cfg(test)]
pub(crate) mod literal {
    use super::{Bound, Delta, Epsilon};

    pub(crate) const fn eps(x: f64) -> Epsilon {
        match Epsilon::new(x) {
            Ok(e) => e,
            Err(_) => panic!("an invalid epsilon in a test"),
        }
    }

    pub(crate) const fn bnd(x: f64) -> Bound {
        match Bound::new(x) {
            Ok(b) => b,
            Err(_) => panic!("an invalid bound in a test"),
        }
    }

    pub(crate) const fn del(x: f64) -> Delta {
        match Delta::new(x) {
            Ok(d) => d,
            Err(_) => panic!("an invalid delta in a test"),
        }
    }
}
