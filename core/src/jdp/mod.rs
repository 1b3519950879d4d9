//! Private approximate GP-UCB in a fixed feature space (Dubey, Dubey 2021): the pieces that
//! must be exact, small and allocation-free — the Gaussian releases, their accounting, the
//! symmetric-matrix tree and the local-JDP client.
//!
//! # The algorithms (Dubey Alg. 1–3)
//!
//! With features `Φ: 𝒟 → ℝ^F` (`‖Φ(x)‖ ≤ 1`, [`crate::features`]) the GP posterior needs only
//! `Σ_t = Σ_{τ<t} Φ(x_τ)Φ(x_τ)ᵀ` and `u_t = Σ_{τ<t} y_τΦ(x_τ)`. The learner receives noisy
//! versions `Σ̃_t = Σ_t + H_t`, `ũ_t = u_t + h_t`, sets `V_t = Σ̃_t + λI`,
//! `θ̃_t = V_t⁻¹ũ_t`, and plays
//!
//! ```text
//! x_t = argmax_{x ∈ 𝒟_t} ⟨θ̃_t, Φ(x)⟩ + w_t·‖Φ(x)‖_{V_t⁻¹}          (Alg. 1, eq. 8)
//! ```
//!
//! with the width `w_t` of Theorem 1 ([`confidence`]). Who adds the noise is the privacy model:
//!
//! - **JDP** (Alg. 2, Lemma 2–3): a trusted PRIVATIZER sees `(Φ(x_t), y_t)` and releases the
//!   prefix sums of `[Φ, y]ᵀ[Φ, y]` through a tree-based mechanism with Gaussian node noise
//!   ([`SymmetricTree`]); the learner shifts the noisy Gram matrix by `2Λ` (Lemma 3).
//! - **Local JDP** (Alg. 3, Lemma 5–6): no trusted party. The server forwards `(Σ̃_t, ũ_t)` to
//!   user t's device; the device picks `x_t` from its *own* decision set, plays it, and returns
//!   `Σ̃_t + Φ(x_t)Φ(x_t)ᵀ + N_t` and `ũ_t + y_tΦ(x_t) + n_t` ([`LocalJdpClient`]). The
//!   noise accumulates (variance ∝ t), which costs the extra `T^{1/4}` of Corollary 3.
//!
//! # Threat model of the local client
//!
//! The server and everyone on the link see every state the server sends and every state a
//! device returns; they do not see the device's decision set, the point it played, its reward
//! or its RNG. A returned state minus the received one is `round(ΦΦᵀ/2^k) + N_t` and
//! `round(yΦ/2^k) + n_t` on a public grid, with integer discrete-Gaussian noise
//! ([`DiscreteGaussian`](crate::sampler::DiscreteGaussian)); with `‖Φ‖ ≤ 1` (clipped) and
//! `|y| ≤ b` (clamped) its ℓ2 sensitivities are fixed, so each report is (ε, δ)-LDP with
//! respect to **everything the user holds** (decision set, choice and reward), whatever state
//! the server sent (Lemma 5), and the protocol is (ε, δ)-local JDP, hence JDP (Lemma 4). The
//! device trusts nothing it receives: a state that is not positive definite after the shift
//! gives an error, never a panic.
//!
//! # Floating-point safety
//!
//! As in [`crate::mechanism`] and [`crate::tree`]: every released number is an integer index
//! on a public power-of-two grid, noise is added to the integer, and the value `index·2^k` is
//! exact in `f64`. The accounting is zCDP ([`zcdp`]): the discrete Gaussian on integer vectors
//! has exactly the continuous Gaussian's `ρ = Δ²/2σ²`.
//!
//! # What is not promised
//!
//! - The confidence width and the shift are utility choices; privacy never depends on them.
//! - Timing: the discrete Gaussian is a rejection sampler (see the crate docs).
//! - A device reporting many times composes: its reports are `k·ρ`-zCDP together.

use core::fmt;

use crate::error::ParamError;
use crate::grid::{Grid, MAX_RANGE_LOG2, MIN_RANGE_LOG2, floor_log2, pow2};

pub mod client;
pub mod confidence;
pub mod tree;
pub mod zcdp;

pub use client::{
    ClientConfig, DEVICE_FEATURES, DeviceClient, JdpReportError, JdpReporter, JdpState, LocalJdpClient,
    Selection,
};
pub use confidence::{Confidence, ShiftRule, SpectralBounds};
pub use tree::{MAX_TREE_HORIZON, SymmetricTree, TreeConfig, packed_index};

/// The largest matrix dimension m (tree) or feature count F (client) accepted.
pub const MAX_MATRIX_DIM: usize = 1024;
/// Relative margin on every bound used in a sensitivity: absorbs the floating-point error of
/// products and clipping (a few ulp) many times over.
const BOUND_MARGIN: f64 = 1.0 + 1.0 / (1u64 << 40) as f64;
/// Calibrated variances are raised by this factor before rounding up, so that the spent ρ is
/// below the budget despite the rounding of the calibration arithmetic.
const VARIANCE_MARGIN: f64 = 1.0 + 1e-12;
/// Default grid: 2^16 steps per unit of the largest entry bound.
const DEFAULT_GRID_STEPS_LOG2: i32 = 16;

/// An operation was refused or failed. Nothing was changed or released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum JdpError {
    /// The tree already holds T rows.
    HorizonReached,
    /// A row had the wrong length.
    DimensionMismatch,
    /// A value (row entry, feature, reward) was NaN or ±∞. It is never clamped or passed on.
    NonFiniteValue,
    /// An output buffer had the wrong length.
    BufferLength,
    /// The state was made on a different grid than this client's.
    GridMismatch,
    /// `Σ̃ + (λ + 2Λ)I` was not positive definite: the state is corrupt or the noise exceeded
    /// its (ζ/2T)-accurate bound. Post-processing may add more to the diagonal and retry.
    NotPositiveDefinite,
    /// The decision set was empty.
    EmptyDecisionSet,
    /// No candidate had a finite score.
    NoFiniteScore,
}

impl fmt::Display for JdpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::HorizonReached => "the tree already holds T rows: nothing was inserted",
            Self::DimensionMismatch => "the row has the wrong length: nothing was inserted",
            Self::NonFiniteValue => "a value is NaN or infinite: nothing was released",
            Self::BufferLength => "the output buffer has the wrong length",
            Self::GridMismatch => "the state uses a different grid than this client",
            Self::NotPositiveDefinite => "the shifted Gram matrix is not positive definite",
            Self::EmptyDecisionSet => "the decision set is empty",
            Self::NoFiniteScore => "no candidate has a finite UCB score",
        })
    }
}

impl core::error::Error for JdpError {}

/// The public grid of a release for entries bounded by `bound` (times [`BOUND_MARGIN`]):
/// default `k = ⌊log₂ bound⌋ − 16`, an explicit `k` within `[⌊log₂ bound⌋ − 20, ⌊log₂ bound⌋]`
/// and at most 2^20 steps (the shared [`Grid`]).
pub(crate) fn grid(bound: f64, log2: Option<i32>) -> Result<Grid, ParamError> {
    check_bound(bound)?;
    // The nominal bound is in range; with its margin it may pass 2^40 by a factor 1 + 2^-40.
    let bound = bound * BOUND_MARGIN;
    let k = log2.unwrap_or(floor_log2(bound) - DEFAULT_GRID_STEPS_LOG2);
    Grid::spanning(bound, Some(k)).map_err(ParamError::of_bound)
}

/// A bound that must be finite and > 0.
pub(crate) fn positive_bound(bound: f64) -> Result<f64, ParamError> {
    if !bound.is_finite() {
        Err(ParamError::BoundNotFinite)
    } else if bound <= 0.0 {
        Err(ParamError::BoundNotPositive)
    } else {
        Ok(bound)
    }
}

/// A bound must be finite, positive and within the exact-grid range `[2^-40, 2^40]`.
pub(crate) fn check_bound(bound: f64) -> Result<f64, ParamError> {
    let bound = positive_bound(bound)?;
    if (pow2(MIN_RANGE_LOG2)..=pow2(MAX_RANGE_LOG2)).contains(&bound) {
        Ok(bound)
    } else {
        Err(ParamError::BoundOutOfRange)
    }
}
