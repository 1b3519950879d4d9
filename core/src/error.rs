//! Error types: one `Copy` enum per layer — [`ParamError`] for every parameter, and one per
//! operation that can be refused — each variant saying what was wrong and what to do about it.

use core::fmt;

use crate::grid::GridError;

/// A parameter given to a constructor (or a calculation) was invalid. Nothing was built.
///
/// One enum for the whole parameter layer: the mechanism, the budget, the trees, the bandit
/// policies, the feature maps and JDP all report what was wrong with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ParamError {
    /// ε was NaN or infinite.
    EpsilonNotFinite,
    /// ε was zero or negative.
    EpsilonNotPositive,
    /// ε is so small that the noise scale does not fit the sampler's integer range.
    EpsilonTooSmall,
    /// δ was not in the open interval (0, 1).
    DeltaOutOfRange,
    /// δ of an error bound was not in (0, 1/2], where the bound is claimed.
    ErrorBoundDeltaOutOfRange,
    /// ρ (zCDP) was NaN, infinite or negative.
    RhoInvalid,
    /// A bound (B on |f|, R on |η|) was NaN or infinite.
    BoundNotFinite,
    /// A bound (B on |f|, R on |η|) was negative.
    BoundNegative,
    /// A bound that must be strictly positive was zero or negative.
    BoundNotPositive,
    /// A bound is outside [2^-40, 2^40], where the grid arithmetic is exact.
    BoundOutOfRange,
    /// The clamping range B + R (or the truncation level) is zero: nothing could be released.
    SensitivityZero,
    /// The clamping range is outside [2^-40, 2^40], where the grid arithmetic is exact.
    SensitivityOutOfRange,
    /// A truncation level was NaN or infinite.
    TruncationNotFinite,
    /// A truncation level was zero or negative.
    TruncationNotPositive,
    /// An explicit grid 2^k is too coarse (coarser than the clamping range) or so fine that the
    /// clamped range spans more than 2^20 grid steps.
    GridOutOfRange,
    /// The calibrated (Gaussian) noise does not fit the sampler.
    NoiseOutOfRange,
    /// The sub-Weibull tail constant K₁ was NaN, infinite or negative.
    TailConstantInvalid,
    /// The sub-Weibull tail exponent θ was NaN, infinite, zero or negative.
    TailExponentInvalid,
    /// The horizon T was zero.
    HorizonZero,
    /// The horizon exceeds what the type holds (a tree's `2^L − 1`, JDP's `2^32 − 1`).
    HorizonAboveCapacity,
    /// The per-report ε limit exceeds the total budget: no report could ever be made.
    PerReportAboveTotal,
    /// The per-report ε floor exceeds the per-report limit: no report could ever be made.
    FloorAboveLimit,
    /// The reservation chunk is below the per-report limit: a report could need two writes.
    ChunkBelowLimit,
    /// A matrix dimension or feature count was 0 or above the supported size.
    DimensionInvalid,
    /// A storage buffer did not have the required length.
    BufferLength,
    /// λ was not finite and > 0.
    LambdaInvalid,
    /// ζ was not in (0, 1).
    ZetaInvalid,
    /// A confidence constant (κ, an index constant, B, ρ, ϵ, a width scale) was NaN, infinite
    /// or outside its range.
    ConstantInvalid,
    /// The confidence β was not in (0, 1).
    ConfidenceOutOfRange,
    /// The moment order v was not in (0, 1].
    MomentOrderInvalid,
    /// The moment bound u was not finite and > 0.
    MomentBoundInvalid,
    /// The learning rate η was not finite and > 0.
    LearningRateInvalid,
    /// The exploration rate γ was not in [0, 1].
    ExplorationInvalid,
    /// The number of arms or experts is below what the policy needs (1 for most, 2 for EXP3's
    /// Theorem 4.1 tuning and Hedge's learning rate).
    TooFewArms,
    /// More arms than the policy's capacity K (its fixed-size arrays) holds.
    ArmsAboveCapacity,
    /// A lengthscale was NaN, infinite, zero, negative, or so small that `1/l` overflows.
    LengthscaleInvalid,
    /// The Gauss–Hermite rule failed a check (nodes not strictly decreasing, a weight not
    /// positive and finite, or `Σ w ≠ √π`): from about 375 nodes, whose outermost weights
    /// underflow `f64`.
    QuadratureFailed,
    /// A feature block named a coordinate `≥ D`.
    BlockIndexOutOfRange,
    /// A feature block named the same coordinate twice.
    BlockIndexRepeated,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::EpsilonNotFinite => "epsilon is NaN or infinite: give a finite epsilon > 0",
            Self::EpsilonNotPositive => "epsilon is zero or negative: give a finite epsilon > 0",
            Self::EpsilonTooSmall => {
                "epsilon is too small for the sampler's integer range: use a larger epsilon, a coarser grid or a shorter horizon"
            }
            Self::DeltaOutOfRange => "delta is not in (0, 1): give a probability strictly between 0 and 1",
            Self::ErrorBoundDeltaOutOfRange => "delta must be in (0, 1/2] for the error bound",
            Self::RhoInvalid => "rho must be finite and >= 0",
            Self::BoundNotFinite => "a bound is NaN or infinite: give a finite bound (>= 0, or > 0 where it divides)",
            Self::BoundNegative => "a bound is negative: give a finite bound >= 0",
            Self::BoundNotPositive => "a bound is zero or negative: give a finite bound > 0",
            Self::BoundOutOfRange => "a bound is outside [2^-40, 2^40]: rescale the values",
            Self::SensitivityZero => {
                "the clamping range is zero: B + R (or the truncation level) must be > 0"
            }
            Self::SensitivityOutOfRange => "the clamping range is outside [2^-40, 2^40]: rescale the rewards",
            Self::TruncationNotFinite => "a truncation level is NaN or infinite: give a finite level > 0",
            Self::TruncationNotPositive => "a truncation level is zero or negative: give a finite level > 0",
            Self::GridOutOfRange => {
                "the grid 2^k must be no coarser than the clamping range and span at most 2^20 steps of it"
            }
            Self::NoiseOutOfRange => {
                "the calibrated noise does not fit the sampler: use a larger epsilon or delta, or a coarser grid"
            }
            Self::TailConstantInvalid => "the tail constant K1 must be finite and >= 0",
            Self::TailExponentInvalid => "the tail exponent theta must be finite and > 0",
            Self::HorizonZero => "the horizon T must be at least 1",
            Self::HorizonAboveCapacity => {
                "the horizon exceeds what the type holds (a tree's 2^L - 1: use more levels, see levels_for)"
            }
            Self::PerReportAboveTotal => "the per-report epsilon limit exceeds the total budget: lower it",
            Self::FloorAboveLimit => "the per-report epsilon floor exceeds the per-report limit: lower it",
            Self::ChunkBelowLimit => "the reservation chunk is below the per-report epsilon limit: raise it",
            Self::DimensionInvalid => "the dimension must be in 1..=1024",
            Self::BufferLength => "the storage buffer has the wrong length (see buffer_len)",
            Self::LambdaInvalid => "lambda must be finite and > 0",
            Self::ZetaInvalid => "zeta must be in (0, 1)",
            Self::ConstantInvalid => "a confidence constant is NaN, infinite or out of its range",
            Self::ConfidenceOutOfRange => "the confidence beta must be in (0, 1)",
            Self::MomentOrderInvalid => "the moment order v must be in (0, 1]",
            Self::MomentBoundInvalid => "the moment bound u must be finite and > 0",
            Self::LearningRateInvalid => "the learning rate eta must be finite and > 0",
            Self::ExplorationInvalid => "the exploration rate gamma must be in [0, 1]",
            Self::TooFewArms => "too few arms or experts for this policy: use at least 2",
            Self::ArmsAboveCapacity => {
                "more arms than the policy's capacity K holds: use at most K arms or a larger K"
            }
            Self::LengthscaleInvalid => "a lengthscale must be finite and > 0 (with 1/l finite)",
            Self::QuadratureFailed => "the Gauss-Hermite rule failed its checks: use fewer nodes",
            Self::BlockIndexOutOfRange => "a block names a coordinate >= D: use indices below D",
            Self::BlockIndexRepeated => "a block names the same coordinate twice: list each once",
        })
    }
}

impl core::error::Error for ParamError {}

impl ParamError {
    /// A grid error over a bound B (trees, JDP): the bound's own variants.
    pub(crate) const fn of_bound(e: GridError) -> Self {
        match e {
            GridError::BoundNotFinite => Self::BoundNotFinite,
            GridError::BoundNotPositive => Self::BoundNotPositive,
            GridError::BoundOutOfRange => Self::BoundOutOfRange,
            GridError::GridOutOfRange => Self::GridOutOfRange,
        }
    }

    /// A grid error over a mechanism's clamping range C (a validated level, so in practice only
    /// its range or the grid can be wrong): the range's variants, which a device may send.
    pub(crate) const fn of_range(e: GridError) -> Self {
        match e {
            GridError::BoundNotFinite => Self::TruncationNotFinite,
            GridError::BoundNotPositive => Self::TruncationNotPositive,
            GridError::BoundOutOfRange => Self::SensitivityOutOfRange,
            GridError::GridOutOfRange => Self::GridOutOfRange,
        }
    }
}

/// A reward could not be released. Nothing left the device and no budget was spent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ReleaseError {
    /// The raw reward was NaN or ±∞ (a faulty sensor). It is never passed through or clamped.
    NonFiniteReward,
}

impl fmt::Display for ReleaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NonFiniteReward => {
                "the raw reward is NaN or infinite: check the sensor; nothing was released"
            }
        })
    }
}

impl core::error::Error for ReleaseError {}

/// The privacy accountant refused a spend, or its storage failed.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum BudgetError<E> {
    /// The requested ε is weaker (larger) than the device's per-report limit.
    AboveDeviceLimit {
        /// What the learner asked for.
        requested: f64,
        /// The weakest ε this device releases at.
        limit: f64,
    },
    /// The requested ε is stronger (smaller) than the device's per-report floor.
    BelowDeviceFloor {
        /// What the learner asked for.
        requested: f64,
        /// The strongest ε this device releases at.
        floor: f64,
    },
    /// The total budget would be exceeded.
    Exhausted {
        /// What the learner asked for.
        requested: f64,
        /// What is left.
        remaining: f64,
    },
    /// The state store is blank: the device was never provisioned, and will not invent a
    /// budget or a seed.
    NotProvisioned,
    /// The stored state says more was spent than the total budget allows, or it is missing in
    /// part, torn or inconsistent; the device refuses to report rather than guess.
    CorruptState,
    /// A record of the stored state was blanked, which a power cut never does
    /// ([`StateError::Blanked`](crate::StateError::Blanked)): the state may have been rolled
    /// back, and the device refuses to report.
    BlankedState,
    /// The persistent store failed; the spend is counted in memory anyway (fail closed).
    Storage(E),
    /// This boot has not reserved budget for the request ahead of time (its idle-time
    /// reservation failed or was never made); nothing was spent.
    NotReserved,
}

impl<E: fmt::Display> fmt::Display for BudgetError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AboveDeviceLimit { requested, limit } => write!(
                f,
                "epsilon {requested} is weaker than this device's per-report limit {limit}: ask for epsilon <= {limit}"
            ),
            Self::BelowDeviceFloor { requested, floor } => write!(
                f,
                "epsilon {requested} is stronger than this device's per-report floor {floor}: ask for epsilon >= {floor}"
            ),
            Self::Exhausted { requested, remaining } => write!(
                f,
                "privacy budget exhausted: {requested} requested, {remaining} left; this device will not report again"
            ),
            Self::NotProvisioned => {
                f.write_str("the device was never provisioned: provision its state store before it reports")
            }
            Self::CorruptState => {
                f.write_str("stored privacy-budget state is invalid: the device refuses to report")
            }
            Self::BlankedState => f.write_str(
                "a record of the stored privacy-budget state was blanked (a power cut never does that), which may roll the budget back: the device refuses to report",
            ),
            Self::Storage(e) => write!(f, "privacy-budget storage failed ({e}): nothing was released"),
            Self::NotReserved => {
                f.write_str("no budget reserved ahead for this report (the store could not be written): nothing was released")
            }
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for BudgetError<E> {}

/// A device report was refused. Nothing was released.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ReportError<E> {
    /// The mechanism cannot use the query's ε or truncation level (ε too small for the sampler,
    /// a range outside [2^-40, 2^40]; invalid values are refused where they enter, by
    /// [`Epsilon`](crate::Epsilon) and [`TruncationLevel`](crate::TruncationLevel)). No budget
    /// was spent.
    Param(ParamError),
    /// The mechanism refused the raw reward. [`Reporter`](crate::Reporter) never returns it: it
    /// releases a non-finite reading as a fixed value instead (see its docs); kept for callers
    /// of the mechanism.
    Release(ReleaseError),
    /// The accountant refused (limit, exhausted, storage).
    Budget(BudgetError<E>),
}

impl<E: fmt::Display> fmt::Display for ReportError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Param(e) => write!(f, "bad query: {e}"),
            Self::Release(e) => write!(f, "{e}"),
            Self::Budget(e) => write!(f, "{e}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for ReportError<E> {}

impl<E> From<ParamError> for ReportError<E> {
    fn from(e: ParamError) -> Self {
        Self::Param(e)
    }
}

impl<E> From<ReleaseError> for ReportError<E> {
    fn from(e: ReleaseError) -> Self {
        Self::Release(e)
    }
}

impl<E> From<BudgetError<E>> for ReportError<E> {
    fn from(e: BudgetError<E>) -> Self {
        Self::Budget(e)
    }
}
