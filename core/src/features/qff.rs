//! Quadrature Fourier features. The construction, norm, error bounds and default sizes are
//! documented on the parent module, [`crate::features`].

use super::hermite::{SQRT_PI, half_rule};
use super::{FeatureMap, ParamError, check_lengthscale};

/// Frequencies per coordinate of the default QFF: a `2·14 = 28`-node Gauss–Hermite rule,
/// `28` features per coordinate. See the [module docs](crate::features).
pub const DEFAULT_FREQUENCIES: usize = 14;

/// The smallest lengthscale for which [`DEFAULT_FREQUENCIES`] guarantees
/// [`DEFAULT_TOLERANCE`] per coordinate on `[0, 1]`.
pub const DEFAULT_MIN_LENGTHSCALE: f64 = 0.2;

/// Guaranteed per-coordinate sup error of the default size for `l ≥` [`DEFAULT_MIN_LENGTHSCALE`].
pub const DEFAULT_TOLERANCE: f64 = 1e-6;

/// The default one-dimensional QFF (`F = 28`).
pub type DefaultQff1 = Qff<1, DEFAULT_FREQUENCIES, { 2 * DEFAULT_FREQUENCIES }>;

/// The default two-dimensional QFF (`F = 784`; 6.1 KiB per feature vector; error ≤ 1.2e-6 for
/// `l ≥ 0.2`).
pub type DefaultQff2 = Qff<2, DEFAULT_FREQUENCIES, { 4 * DEFAULT_FREQUENCIES * DEFAULT_FREQUENCIES }>;

/// Bound on `sup_{|r| ≤ 1} |k₁(r) − φᵀφ|` for one coordinate with an `m_bar`-node Gauss–Hermite
/// rule and lengthscale `l`: `m̄! / ((2m̄)!·l^{2m̄})` (the remainder A&S 25.4.46), capped at 2.
///
/// ```
/// use ldp_core::features::gauss_hermite_error_bound;
/// assert!(gauss_hermite_error_bound(28, 0.2) < 1e-6);
/// ```
pub fn gauss_hermite_error_bound(m_bar: usize, lengthscale: f64) -> f64 {
    let n = m_bar as f64;
    let log = libm::lgamma(n + 1.0) - libm::lgamma(2.0 * n + 1.0) - 2.0 * n * libm::log(lengthscale);
    libm::exp(log).min(2.0)
}

/// Seed 003's Theorem 2 (Mutny & Krause 2018):
/// `d·2^{d−1}·√(π/2)·m̄^{−m̄}·(e/(4ν²))^{m̄}` with `ν` the smallest lengthscale (not capped).
///
/// Looser than `d ·` [`gauss_hermite_error_bound`] everywhere (module docs).
pub fn theorem2_bound(d: usize, m_bar: usize, nu: f64) -> f64 {
    let (df, n) = (d as f64, m_bar as f64);
    let log = libm::log(df)
        + (df - 1.0) * core::f64::consts::LN_2
        + 0.5 * libm::log(core::f64::consts::FRAC_PI_2)
        + n * (1.0 - libm::log(4.0 * nu * nu * n));
    libm::exp(log)
}

/// The positive half of the `2M`-node rule as (nodes, merged coefficients `c_j`, Σc = 1).
fn merged_rule<const M: usize>() -> Result<([f64; M], [f64; M]), ParamError> {
    let mut nodes = [0.0; M];
    let mut weights = [0.0; M];
    half_rule(2 * M, &mut nodes, &mut weights)?;
    let mut sum = 0.0;
    for w in &mut weights {
        *w *= 2.0 / SQRT_PI;
        sum += *w;
    }
    for w in &mut weights {
        *w /= sum;
    }
    Ok((nodes, weights))
}

/// One factor per coordinate, all from one `2M`-node rule. Every lengthscale is checked before
/// the rule is computed.
fn factors_for<const D: usize, const M: usize>(lengthscales: &[f64; D]) -> Result<[Qff1d<M>; D], ParamError> {
    for &l in lengthscales {
        check_lengthscale(l)?;
    }
    let (nodes, c) = merged_rule::<M>()?;
    let mut dims = [Qff1d { freq: [0.0; M], coef: [0.0; M], lengthscale: 1.0 }; D];
    for (dim, &l) in dims.iter_mut().zip(lengthscales) {
        *dim = Qff1d::from_rule(&nodes, &c, l)?;
    }
    Ok(dims)
}

/// One-dimensional quadrature Fourier features: `M` frequencies, `2M` features, from the
/// `2M`-node Gauss–Hermite rule (the [module docs](crate::features) say why `M` counts
/// frequencies).
///
/// ```
/// use ldp_core::features::Qff1d;
/// let q = Qff1d::<14>::new(0.2)?;
/// let (fx, fy) = (q.features(0.1), q.features(0.8));
/// let dot: f64 = fx.iter().zip(&fy).map(|(a, b)| a[0] * b[0] + a[1] * b[1]).sum();
/// assert!((dot - q.kernel(0.1 - 0.8)).abs() < 1e-6);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Qff1d<const M: usize> {
    /// `a_j = √2·s_j/l`, decreasing.
    freq: [f64; M],
    /// `√c_j`.
    coef: [f64; M],
    lengthscale: f64,
}

impl<const M: usize> Qff1d<M> {
    /// Features for `exp(−r²/2l²)`. Fails with [`ParamError::LengthscaleInvalid`] unless `l`
    /// is finite and positive with `1/l` finite, and with [`ParamError::QuadratureFailed`] if
    /// the rule fails its checks (from `M ≈ 187`; see
    /// [`GaussHermite::new`](super::GaussHermite::new)). `M = 0` is a compile-time error.
    pub fn new(lengthscale: f64) -> Result<Self, ParamError> {
        const { assert!(M >= 1, "QFF needs at least one frequency") };
        check_lengthscale(lengthscale)?;
        let (nodes, c) = merged_rule::<M>()?;
        Self::from_rule(&nodes, &c, lengthscale)
    }

    fn from_rule(nodes: &[f64; M], c: &[f64; M], lengthscale: f64) -> Result<Self, ParamError> {
        let l = check_lengthscale(lengthscale)?;
        let mut freq = [0.0; M];
        let mut coef = [0.0; M];
        for j in 0..M {
            freq[j] = core::f64::consts::SQRT_2 * nodes[j] / l;
            coef[j] = libm::sqrt(c[j]);
        }
        if freq.iter().any(|a| !a.is_finite()) {
            return Err(ParamError::LengthscaleInvalid);
        }
        Ok(Self { freq, coef, lengthscale: l })
    }

    /// `φ(x)` as `M` pairs `√c_j·(cos(a_j x), sin(a_j x))`. A non-finite `x` gives NaNs.
    pub fn features(&self, x: f64) -> [[f64; 2]; M] {
        let mut out = [[0.0; 2]; M];
        for ((o, &a), &c) in out.iter_mut().zip(&self.freq).zip(&self.coef) {
            let (s, co) = libm::sincos(a * x);
            *o = [c * co, c * s];
        }
        out
    }

    /// `φ(x)ᵀφ(y)` evaluated directly as `Σ_j c_j cos(a_j r)`, `r = x − y` (O(M), no features).
    pub fn approx_kernel(&self, r: f64) -> f64 {
        self.freq.iter().zip(&self.coef).map(|(&a, &c)| c * c * libm::cos(a * r)).sum()
    }

    /// The exact kernel `exp(−r²/2l²)`.
    pub fn kernel(&self, r: f64) -> f64 {
        let z = r / self.lengthscale;
        libm::exp(-0.5 * z * z)
    }

    /// The frequencies `a_j = √2·s_j/l` (positive nodes only, decreasing).
    pub fn frequencies(&self) -> &[f64; M] {
        &self.freq
    }

    /// The feature scales `√c_j` (`Σ c_j = 1`).
    pub fn scales(&self) -> &[f64; M] {
        &self.coef
    }

    /// The lengthscale `l`.
    pub fn lengthscale(&self) -> f64 {
        self.lengthscale
    }

    /// Guaranteed `sup_{|x−y| ≤ 1} |k₁ − φᵀφ|`: [`gauss_hermite_error_bound`]`(2M, l)`.
    pub fn error_bound(&self) -> f64 {
        gauss_hermite_error_bound(2 * M, self.lengthscale)
    }
}

/// `out[..len·2M]` ← `out[..len] ⊗ pairs` in place (reverse order, so nothing unread is
/// overwritten: entry `i` is read before entries `i·2M.. ≥ i` are written). Returns `len·2M`.
fn kron_in_place<const M: usize>(out: &mut [f64], len: usize, pairs: &[[f64; 2]; M]) -> usize {
    for i in (0..len).rev() {
        let v = out[i];
        let base = i * 2 * M;
        for (j, p) in pairs.iter().enumerate() {
            out[base + 2 * j] = v * p[0];
            out[base + 2 * j + 1] = v * p[1];
        }
    }
    len * 2 * M
}

/// `(2M)^D` if it fits in `usize`.
const fn tensor_len(m: usize, d: usize) -> Option<usize> {
    match (2 * m).checked_pow(d as u32) {
        Some(v) if d <= u32::MAX as usize => Some(v),
        _ => None,
    }
}

/// Tensor-product quadrature Fourier features on `[0, 1]^D` for the squared-exponential kernel
/// `k(x, y) = exp(−Σ_i (x_i − y_i)²/2l_i²)`: `M` frequencies per coordinate (a `2M`-node rule),
/// `F = (2M)^D` features (checked at compile time).
///
/// ```
/// use ldp_core::features::{FeatureMap, Qff};
/// let q = Qff::<2, 6, 144>::new(0.5)?;
/// let (x, y) = ([0.1, 0.9], [0.7, 0.2]);
/// let (fx, fy) = (q.features(&x), q.features(&y));
/// let dot: f64 = fx.iter().zip(&fy).map(|(a, b)| a * b).sum();
/// assert!((dot - q.kernel(&x, &y)).abs() <= q.error_bound());
/// assert!(q.error_bound() < 1e-6);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
///
/// A feature count other than `(2M)^D` does not compile:
///
/// ```compile_fail
/// let q = ldp_core::features::Qff::<2, 6, 100>::new(0.5); // needs F = 144
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Qff<const D: usize, const M: usize, const F: usize> {
    dims: [Qff1d<M>; D],
}

impl<const D: usize, const M: usize, const F: usize> Qff<D, M, F> {
    /// Isotropic lengthscale `l` on every coordinate. Errors as [`Qff1d::new`];
    /// `F ≠ (2M)^D`, `D = 0` or `M = 0` is a compile-time error.
    pub fn new(lengthscale: f64) -> Result<Self, ParamError> {
        Self::with_lengthscales([lengthscale; D])
    }

    /// One lengthscale per coordinate (ARD). Errors as [`Qff1d::new`].
    pub fn with_lengthscales(lengthscales: [f64; D]) -> Result<Self, ParamError> {
        const {
            assert!(D >= 1 && M >= 1, "QFF needs D >= 1 and M >= 1");
            assert!(matches!(tensor_len(M, D), Some(f) if f == F), "QFF needs F == (2*M)^D");
        };
        Ok(Self { dims: factors_for(&lengthscales)? })
    }

    /// The per-coordinate factors.
    pub fn factors(&self) -> &[Qff1d<M>; D] {
        &self.dims
    }

    /// Guaranteed `sup |k − ΦᵀΦ|` over pairs with `|x_i − y_i| ≤ 1` (e.g. `[0, 1]^D`):
    /// `Σ_i` [`gauss_hermite_error_bound`]`(2M, l_i)`, capped at 2.
    pub fn error_bound(&self) -> f64 {
        self.dims.iter().map(Qff1d::error_bound).sum::<f64>().min(2.0)
    }
}

impl<const D: usize, const M: usize, const F: usize> FeatureMap<D, F> for Qff<D, M, F> {
    fn features_into(&self, x: &[f64; D], out: &mut [f64; F]) {
        out[0] = 1.0;
        let mut len = 1;
        for (dim, &xi) in self.dims.iter().zip(x) {
            len = kron_in_place(out, len, &dim.features(xi));
        }
        debug_assert_eq!(len, F);
    }

    fn kernel(&self, x: &[f64; D], y: &[f64; D]) -> f64 {
        self.dims.iter().zip(x.iter().zip(y)).map(|(dim, (&a, &b))| dim.kernel(a - b)).product()
    }

    fn approx_kernel(&self, x: &[f64; D], y: &[f64; D]) -> f64 {
        self.dims.iter().zip(x.iter().zip(y)).map(|(dim, (&a, &b))| dim.approx_kernel(a - b)).product()
    }
}

/// Additive quadrature Fourier features for high `D`: `G` blocks of `B` coordinates each,
///
/// ```text
/// k(x, y) = (1/G) Σ_g Π_{i ∈ block g} exp(−(x_i − y_i)²/2l_i²),   Φ(x) = (1/√G)·(Φ_1(x) ‖ … ‖ Φ_G(x)),
/// ```
///
/// with `Φ_g` the `(2M)^B` tensor-product features of block `g`, so `F = G·(2M)^B` (checked at
/// compile time). The `1/G` makes `k(x, x) = 1 = ‖Φ(x)‖²`, as for [`Qff`]. The error is the
/// average of the blocks' errors, so it depends on `B`, not `D` (Dubey, Remark 2).
/// Block `g` occupies `Φ[g·(2M)^B .. (g+1)·(2M)^B]`.
///
/// Blocks may overlap (the kernel is still positive definite); within a block each coordinate
/// may appear only once.
///
/// ```
/// use ldp_core::features::{AdditiveQff, FeatureMap};
/// // Six coordinates in three blocks of two: F = 3·(2·6)² = 432.
/// let q = AdditiveQff::<6, 3, 2, 6, 432>::contiguous(0.5)?;
/// let (x, y) = ([0.1; 6], [0.6; 6]);
/// let dot: f64 = q.features(&x).iter().zip(&q.features(&y)).map(|(a, b)| a * b).sum();
/// assert!((dot - q.kernel(&x, &y)).abs() < 1e-6);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdditiveQff<const D: usize, const G: usize, const B: usize, const M: usize, const F: usize> {
    dims: [Qff1d<M>; D],
    blocks: [[usize; B]; G],
}

impl<const D: usize, const G: usize, const B: usize, const M: usize, const F: usize>
    AdditiveQff<D, G, B, M, F>
{
    const CHECK: () = {
        assert!(D >= 1 && G >= 1 && B >= 1 && M >= 1, "AdditiveQff needs D, G, B, M >= 1");
        assert!(
            matches!(tensor_len(M, B), Some(fb) if fb.checked_mul(G).is_some() && fb * G == F),
            "AdditiveQff needs F == G * (2*M)^B"
        );
    };

    /// Blocks `g = 0..G` covering coordinates `g·B .. g·B + B` with one isotropic lengthscale.
    /// `D ≠ G·B` is a compile-time error, as are the conditions of [`Self::new`].
    pub fn contiguous(lengthscale: f64) -> Result<Self, ParamError> {
        const { assert!(D == G * B, "contiguous blocks need D == G * B") };
        let mut blocks = [[0; B]; G];
        for (g, block) in blocks.iter_mut().enumerate() {
            for (k, i) in block.iter_mut().enumerate() {
                *i = g * B + k;
            }
        }
        Self::new([lengthscale; D], blocks)
    }

    /// Explicit blocks (coordinate indices) and one lengthscale per coordinate.
    ///
    /// Errors: [`ParamError::BlockIndexOutOfRange`] for an index `≥ D`,
    /// [`ParamError::BlockIndexRepeated`] for a coordinate twice in one block, and those of
    /// [`Qff1d::new`]. `F ≠ G·(2M)^B` or a zero size is a compile-time error.
    pub fn new(lengthscales: [f64; D], blocks: [[usize; B]; G]) -> Result<Self, ParamError> {
        let () = Self::CHECK;
        for block in &blocks {
            for (k, &i) in block.iter().enumerate() {
                if i >= D {
                    return Err(ParamError::BlockIndexOutOfRange);
                }
                if block[..k].contains(&i) {
                    return Err(ParamError::BlockIndexRepeated);
                }
            }
        }
        Ok(Self { dims: factors_for(&lengthscales)?, blocks })
    }

    /// The blocks (coordinate indices).
    pub fn blocks(&self) -> &[[usize; B]; G] {
        &self.blocks
    }

    /// `(1/G) Σ_g Π_{i ∈ block g} k(factor i, x_i − y_i)`.
    fn block_mean(&self, x: &[f64; D], y: &[f64; D], k: impl Fn(&Qff1d<M>, f64) -> f64) -> f64 {
        let sum: f64 = self
            .blocks
            .iter()
            .map(|block| block.iter().map(|&i| k(&self.dims[i], x[i] - y[i])).product::<f64>())
            .sum();
        sum / G as f64
    }

    /// Guaranteed `sup |k − ΦᵀΦ|` over pairs with `|x_i − y_i| ≤ 1`: the average over blocks of
    /// `Σ_{i ∈ block}` [`gauss_hermite_error_bound`]`(2M, l_i)`, capped at 2.
    pub fn error_bound(&self) -> f64 {
        let total: f64 = self.blocks.iter().flatten().map(|&i| self.dims[i].error_bound()).sum();
        (total / G as f64).min(2.0)
    }
}

impl<const D: usize, const G: usize, const B: usize, const M: usize, const F: usize> FeatureMap<D, F>
    for AdditiveQff<D, G, B, M, F>
{
    fn features_into(&self, x: &[f64; D], out: &mut [f64; F]) {
        let block_len = F / G;
        let scale = libm::sqrt(1.0 / G as f64);
        for (block, chunk) in self.blocks.iter().zip(out.chunks_exact_mut(block_len)) {
            chunk[0] = scale;
            let mut len = 1;
            for &i in block {
                len = kron_in_place(chunk, len, &self.dims[i].features(x[i]));
            }
            debug_assert_eq!(len, block_len);
        }
    }

    fn kernel(&self, x: &[f64; D], y: &[f64; D]) -> f64 {
        self.block_mean(x, y, Qff1d::kernel)
    }

    fn approx_kernel(&self, x: &[f64; D], y: &[f64; D]) -> f64 {
        self.block_mean(x, y, Qff1d::approx_kernel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kron_in_place_is_the_kronecker_product() {
        let (a, b) = ([[2.0, 3.0]], [[5.0, 7.0]]);
        let mut out = [1.0, 0.0, 0.0, 0.0];
        let len = kron_in_place(&mut out, 1, &a);
        assert_eq!(len, 2);
        let len = kron_in_place(&mut out, len, &b);
        assert_eq!(len, 4);
        for (o, want) in out.iter().zip([10.0, 14.0, 15.0, 21.0]) {
            assert!((o - want).abs() < 1e-15);
        }
    }

    #[test]
    fn tensor_len_refuses_overflow() {
        assert_eq!(tensor_len(14, 2), Some(784));
        assert_eq!(tensor_len(1 << 20, 4), None);
    }

    #[test]
    fn merged_rule_coefficients_sum_to_one() {
        let (nodes, c) = merged_rule::<14>().unwrap();
        assert!(nodes.windows(2).all(|w| w[0] > w[1]) && nodes[13] > 0.0);
        assert!((c.iter().sum::<f64>() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn bounds_order_and_default() {
        for m in [2, 8, 28, 60] {
            for l in [0.1, 0.2, 0.5, 1.0, 3.0] {
                let b = gauss_hermite_error_bound(m, l);
                assert!(b <= 2.0 && (b <= theorem2_bound(1, m, l)));
            }
        }
        assert!(
            gauss_hermite_error_bound(2 * DEFAULT_FREQUENCIES, DEFAULT_MIN_LENGTHSCALE) < DEFAULT_TOLERANCE
        );
    }
}
