//! Fixed-size feature maps for the squared-exponential kernel (Dubey §4.2; SPEC §1.4).
//!
//! A Gaussian-process learner that works in a finite feature space keeps an `F × F` matrix and
//! an `F`-vector instead of its whole sample path, and a device can compute `Φ(x) ∈ ℝ^F` for
//! the action it was asked about. All maps here approximate
//!
//! ```text
//! k(x, y) = exp(−Σ_i (x_i − y_i)² / 2l_i²)          on [0, 1]^D
//! ```
//!
//! with `Φ(x)ᵀΦ(y)`, have `‖Φ(x)‖ = 1 = √k(x, x)` (up to rounding), and fix every size at
//! compile time:
//!
//! - [`GaussHermite`]: the quadrature rule, computed by Sturm bisection and Newton, and checked;
//! - [`Qff1d`], [`Qff`]: quadrature Fourier features, one coordinate and the full tensor product
//!   (`F = (2M)^D`), error decaying faster than exponentially in the number of nodes
//!   (Theorem 2);
//! - [`AdditiveQff`]: an additive kernel over blocks of coordinates, for larger `D`;
//! - [`Rff`]: random Fourier features, the `O(N^{−1/2})` baseline.
//!
//! The sizes are checked by `const` assertions: a wrong `F` fails to compile (at the first use
//! of the constructor), so no size error exists at run time. Nothing here panics on any input;
//! a non-finite `x` gives non-finite features. The maps hold no secret state; anything released
//! about `Φ(x)` must go through a mechanism, with the norm bound of [Norm](#norm) below.
//!
//! ```
//! use ldp_core::features::{FeatureMap, Qff, DEFAULT_FREQUENCIES};
//! let q = Qff::<1, DEFAULT_FREQUENCIES, { 2 * DEFAULT_FREQUENCIES }>::new(0.2)?;
//! let mut phi = [0.0; 28];
//! q.features_into(&[0.25], &mut phi);
//! let norm2: f64 = phi.iter().map(|v| v * v).sum();
//! assert!((norm2 - 1.0).abs() < 1e-14);
//! # Ok::<(), ldp_core::ParamError>(())
//! ```
//!
//! # Construction
//!
//! Bochner's integral for the squared-exponential kernel on one coordinate, substituted
//! `ω = √2·s/l`, is a Gauss–Hermite integral:
//!
//! ```text
//! k₁(r) = exp(−r²/2l²) = (1/√π) ∫ e^{−s²} cos(√2·s·r/l) ds
//!       ≈ Σ_{j=1}^{m̄} (w_j/√π) cos(a_j r),          a_j = √2·s_j/l.
//! ```
//!
//! The nodes come in pairs `±s_j` with equal weights and `cos` is even, so the `m̄ = 2M`-point
//! rule collapses onto its `M` positive nodes with coefficients `c_j = 2w_j/√π`:
//!
//! ```text
//! k₁(x − y) ≈ Σ_{j=1}^{M} c_j [cos(a_j x)·cos(a_j y) + sin(a_j x)·sin(a_j y)] = φ(x)ᵀφ(y),
//! φ(x) = (√c_1·cos(a_1 x), √c_1·sin(a_1 x), …, √c_M·cos(a_M x), √c_M·sin(a_M x)) ∈ ℝ^{2M}.
//! ```
//!
//! This is exactly the feature map `φ_j(x) = √(w_j/√π)·[cos(a_j x), sin(a_j x)]` over all `2M`
//! nodes of SPEC §1.4 with each `±s_j` pair merged: the same `φᵀφ`, half the features (the
//! unmerged map has `4M` entries but spans only `2M` dimensions; in `d` dimensions merging saves
//! a factor `2^d`, and every dimension saved is one a privacy mechanism need not add noise to).
//! **So `M` counts frequencies, the quadrature rule has `m̄ = 2M` nodes, and Theorem 2's `m̄` is
//! `2M`.** At a given feature count `2M` the unmerged map affords only an `M`-node rule; the
//! merged one uses `2M` nodes, which more than squares the error (`(e/(8Ml²))^{2M}` against
//! `(e/(4Ml²))^M`).
//!
//! In `d` dimensions `k(x − y) = Π_i k₁(x_i − y_i)`, and the product of the per-coordinate
//! approximations is the inner product of the Kronecker (tensor) product of the per-coordinate
//! feature vectors: `Φ(x) = φ(x₁) ⊗ … ⊗ φ(x_d) ∈ ℝ^{(2M)^d}` ([`Qff`]). Entry
//! `Σ_i k_i·(2M)^{d−1−i}` of `Φ(x)` is `Π_i φ(x_i)_{k_i}` (coordinate 0 varies slowest).
//!
//! For larger `d` the full product is out of reach and [`AdditiveQff`] approximates the additive
//! kernel `(1/G) Σ_g k(x_g − y_g)` over `G` blocks of `B` coordinates each, with `G·(2M)^B`
//! features.
//!
//! # Norm
//!
//! `‖Φ(x)‖² = Π_i Σ_j c_j (cos² + sin²) = (Σ_j c_j)^d`, independent of `x`, and
//! `Σ_j c_j = (1/√π) Σ_j w_j = 1` *exactly* in exact arithmetic, because the rule integrates
//! the constant exactly. So `‖Φ(x)‖ = 1 = √k(x, x)` with no renormalisation needed, and the
//! approximation is exact on the diagonal. In `f64` the computed weights sum to `√π` within
//! about 1e-15 relative; the constructors divide the `c_j` by their computed sum anyway, so
//! the only residue is rounding: the computed `‖Φ(x)‖²` is `1 ± (a few ulp)·F`, measured
//! within 1e-14 of 1 (tests). It is not guaranteed `≤ 1` bit for bit; a consumer that needs a
//! hard bound (a sensitivity, say) should take `1 + 1e-12` or rescale by `1/max(1, ‖Φ(x)‖)`.
//!
//! # Error (Theorem 2 and a sharper form)
//!
//! The Gauss–Hermite remainder (Abramowitz & Stegun 25.4.46) is
//! `E = n!·√π / (2ⁿ·(2n)!) · g^{(2n)}(ξ)`. For `g(s) = cos(√2·s·r/l)` with `|r| ≤ 1` this gives,
//! for one coordinate and `n = m̄ = 2M` nodes,
//!
//! ```text
//! sup_{|r| ≤ 1} |k₁(r) − φᵀφ| ≤ n! / ((2n)!·l^{2n})  ≤  (e/(2√π))·(e/(4·n·l²))ⁿ,
//! ```
//!
//! and in `d` dimensions (all factors lie in `[−1, 1]`, telescope) the errors add:
//! `sup |k − ΦᵀΦ| ≤ Σ_i n!/((2n)!·l_i^{2n})` ([`gauss_hermite_error_bound`],
//! [`Qff::error_bound`]). This is below Dubey's Theorem 2,
//! `d·2^{d−1}·√(π/2)·m̄^{−m̄}·(e/(4ν²))^{m̄}` with `ν = min_i l_i` ([`theorem2_bound`]), for every
//! `d`, `m̄` and `l`. Both decay faster than exponentially once `m̄ > e/(4l²)` (Remark 2's phase
//! transition; at `l = 0.2` that is `m̄ > 17`). Before it they exceed 1 and say nothing.
//!
//! # Default size
//!
//! [`DEFAULT_FREQUENCIES`]` = 14` (a 28-node rule, 28 features per coordinate) meets
//! `sup |k₁ − φᵀφ| ≤ 1e-6` for every lengthscale `l ≥ 0.2` on `[0, 1]`, *guaranteed by the bound
//! above* (5.9e-7 at `l = 0.2`); the measured error there is 1.3e-9 (201 × 201 grid; the table
//! is printed by `cargo test -p ldp-core --test tests features:: -- --nocapture`). Measured
//! alone, 24 nodes (`M = 12`, 3.8e-7) would do, but nothing guarantees it. The error grows with `d`
//! only linearly (`≤ d·5.9e-7`), the feature count as `28^d`:
//!
//! | d | type                            | F   | one `[f64; F]` | guaranteed error     |
//! |---|---------------------------------|-----|----------------|----------------------|
//! | 1 | `Qff<1, 14, 28>` ([`DefaultQff1`]) | 28 | 224 B        | 5.9e-7 (l ≥ 0.2)     |
//! | 2 | `Qff<2, 14, 784>` ([`DefaultQff2`]) | 784 | 6.1 KiB    | 1.2e-6 (l ≥ 0.2)     |
//! | 2 | `Qff<2, 6, 144>`                | 144 | 1.1 KiB        | 2.6e-8 (l ≥ 0.5)     |
//! | 2 | `Qff<2, 4, 64>`                 | 64  | 512 B          | 3.9e-9 (l ≥ 1)       |
//! | 6 | `AdditiveQff<6, 6, 1, 14, 168>` | 168 | 1.3 KiB        | 5.9e-7 (l ≥ 0.2)     |
//! | 6 | `AdditiveQff<6, 3, 2, 6, 432>`  | 432 | 3.4 KiB        | 2.6e-8 (l ≥ 0.5)     |
//!
//! On a Cortex-M4 keep `F` to a few hundred: a GP posterior in feature space stores an `F × F`
//! matrix. Larger lengthscales need far fewer nodes: `l = 0.5` needs 12 nodes (`M = 6`, bound
//! 1.3e-8, measured 4.9e-9), `l = 1` needs 8 (`M = 4`, bound 1.9e-9, measured 1.5e-9).
//! Construction costs one Gauss–Hermite rule (about `32·(2M)²` divisions: 25 000 at the default)
//! and `D` sets of frequencies; a feature vector costs `D·M` `sincos` calls and `F` products.
//!
//! # Gauss–Hermite nodes
//!
//! The n-point rule integrates `∫ e^{−s²} g(s) ds ≈ Σ_j w_j g(s_j)` exactly for polynomials `g`
//! of degree ≤ 2n − 1 (Abramowitz & Stegun 25.4.46). Golub–Welsch would need an eigen-solver;
//! with no allocator the nodes — the eigenvalues of the Jacobi matrix, tridiagonal with zero
//! diagonal and off-diagonal `β_k = √(k/2)` — are found one at a time by **bisection on the
//! Sturm count** (the number of negative pivots of `T − xI`, which is the number of nodes below
//! `x`), then **polished by one Newton step** on the orthonormal Hermite recurrence
//!
//! ```text
//! h̃₀ = π^{−1/4},  h̃₋₁ = 0,  h̃_{k+1}(s) = s·√(2/(k+1))·h̃_k(s) − √(k/(k+1))·h̃_{k−1}(s),
//! h̃_n'(s) = √(2n)·h̃_{n−1}(s),   w_j = 2 / h̃_n'(s_j)²     (Numerical Recipes, `gauher`).
//! ```
//!
//! Newton's method alone from `gauher`'s asymptotic first guesses converges to an already found
//! node for `n ≥ 200` (tried: the second guess lands on the wrong side); the Sturm count makes
//! the j-th node the j-th node by construction, at `O(n)` per bisection step and about 64 steps
//! per node. The orthonormal recurrence stays in range far longer than `H_n` itself (about
//! `10^{200}` near n = 100), but at the outermost node `h̃_n'` grows like `e^{s²/2}`: from
//! about n = 375 the outermost weights are below the `f64` range, and such rules are refused
//! (n ≤ 370 works). Every rule is checked before use: nodes strictly decreasing and positive,
//! weights positive and finite, and `Σ w = √π` to 1e-12 relative. A rule that fails a check is
//! refused with [`ParamError::QuadratureFailed`]. Tests: `Σ w`, symmetry, Abramowitz & Stegun
//! Table 25.10, exactness on `s^k` for `k ≤ 2n − 1` (1e-14 relative) and the exact remainder at
//! `k = 2n`.
//!
//! # Random Fourier features
//!
//! The Monte-Carlo baseline (Rahimi & Recht 2008), error `O(N^{−1/2})`.
//!
//! Frequencies `ω_k ~ N(0, diag(l_i^{−2}))`, `k = 1..N`, drawn once at construction from the
//! injected RNG (Box–Muller with `libm`), and the cos/sin pair form
//!
//! ```text
//! Φ(x) = (1/√N)·(cos ω_1ᵀx, sin ω_1ᵀx, …, cos ω_Nᵀx, sin ω_Nᵀx) ∈ ℝ^{2N},
//! Φ(x)ᵀΦ(y) = (1/N) Σ_k cos(ω_kᵀ(x − y)),
//! ```
//!
//! an unbiased estimate of `k(x − y) = E cos(ωᵀ(x − y))` with variance
//! `(1 + k(2r) − 2k(r)²)/(2N) ≤ 1/(2N)`. The pair form has `‖Φ(x)‖² = 1` (up to rounding) for
//! every `x`, like the quadrature features, and for this kernel a lower variance at equal `F`
//! than the `√(2/F)·cos(ωᵀx + b)` form (Sutherland & Schneider, UAI 2015).
//! By Hoeffding (each term lies in `[−1, 1]`), `P(|Φ(x)ᵀΦ(y) − k| ≥ t) ≤ 2·exp(−N t²/2)` at any
//! fixed pair.

use crate::error::ParamError;

mod hermite;
mod qff;
mod rff;

pub use hermite::GaussHermite;
pub use qff::{
    AdditiveQff, DEFAULT_FREQUENCIES, DEFAULT_MIN_LENGTHSCALE, DEFAULT_TOLERANCE, DefaultQff1, DefaultQff2,
    Qff, Qff1d, gauss_hermite_error_bound, theorem2_bound,
};
pub use rff::Rff;

/// A feature map `ℝ^D → ℝ^F` approximating a kernel: `k(x, y) ≈ Φ(x)ᵀΦ(y)`.
pub trait FeatureMap<const D: usize, const F: usize> {
    /// Write `Φ(x)` into `out`.
    fn features_into(&self, x: &[f64; D], out: &mut [f64; F]);

    /// `Φ(x)` by value (`8·F` bytes on the stack).
    fn features(&self, x: &[f64; D]) -> [f64; F] {
        let mut out = [0.0; F];
        self.features_into(x, &mut out);
        out
    }

    /// The exact kernel `k(x, y)` being approximated.
    fn kernel(&self, x: &[f64; D], y: &[f64; D]) -> f64;

    /// `Φ(x)ᵀΦ(y)`, computed without forming the features where that is cheaper.
    fn approx_kernel(&self, x: &[f64; D], y: &[f64; D]) -> f64;
}

/// A lengthscale `l` must be finite and positive with `1/l` finite, or the frequencies overflow.
fn check_lengthscale(l: f64) -> Result<f64, ParamError> {
    if l.is_finite() && l > 0.0 && (1.0 / l).is_finite() {
        Ok(l)
    } else {
        Err(ParamError::LengthscaleInvalid)
    }
}
