//! Exact samplers on the integers, driven only by uniform random bits.
//!
//! [`DiscreteLaplace`] is the sampler of Canonne, Kamath & Steinke, *The Discrete Gaussian for
//! Differential Privacy* (NeurIPS 2020), Algorithms 1 and 2. It uses integer arithmetic only: no
//! logarithm, no floating-point rounding, so the distribution is exactly
//!
//! ```text
//! P(Z = z) = (1 − q) / (1 + q) · q^|z|,   q = exp(−den/num),   z ∈ ℤ,
//! ```
//!
//! given uniform bits from the generator, and its support does not depend on anything secret.
//! Its running time is random (expected O(1) draws) and, like every rejection sampler, depends
//! on the sample drawn: see the crate docs on timing.
//!
//! [`DiscreteGaussian`] is the same paper's Algorithm 3 on top of it: N_ℤ(0, σ²) for a rational
//! σ², exact, with its zCDP → (ε, δ) accounting documented on the type.

use rand_core::Rng;

/// Largest numerator accepted, so that every product in the samplers fits in a `u64`.
pub const MAX_SCALE_NUMERATOR: u64 = 1 << 48;
/// Largest denominator accepted.
pub const MAX_SCALE_DENOMINATOR: u64 = 1 << 16;

/// A uniform integer in `0..n` (`n > 0`; `n == 0` returns 0), by Lemire's multiply-and-reject:
/// exactly uniform, no modulo bias.
pub(crate) fn uniform_below<R: Rng + ?Sized>(rng: &mut R, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    // (2^64 − n) mod n: the low products below it are the biased ones. It is below n, so a low
    // product ≥ n is accepted without computing it (Lemire's lazy form: the same outputs for
    // the same bits, one division saved on almost every call).
    let mut threshold = None;
    loop {
        let m = u128::from(rng.next_u64()) * u128::from(n);
        let low = m as u64;
        if low >= n || low >= *threshold.get_or_insert_with(|| n.wrapping_neg() % n) {
            return (m >> 64) as u64;
        }
    }
}

/// Bernoulli(num/den), exactly, for `num <= den`, `den > 0`.
fn bernoulli_ratio<R: Rng + ?Sized>(rng: &mut R, num: u64, den: u64) -> bool {
    uniform_below(rng, den) < num
}

/// Bernoulli(exp(−num/den)), exactly, for `num <= den` (γ = num/den ∈ [0, 1]):
/// CKS 2020 Algorithm 1. Draw A_k ~ Bernoulli(γ/k) for k = 1, 2, … until one is 0;
/// the result is 1 iff that k is odd.
fn bernoulli_exp_unit<R: Rng + ?Sized>(rng: &mut R, num: u64, den: u64) -> bool {
    let mut k: u64 = 1;
    // den·k overflows only after ~2^16 successes in a row, each of probability ≤ 1/k.
    while bernoulli_ratio(rng, num, den.saturating_mul(k)) {
        k += 1;
    }
    k % 2 == 1
}

/// The discrete Laplace distribution on ℤ with scale `num/den` (in grid steps):
/// P(Z = z) ∝ exp(−|z|·den/num).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DiscreteLaplace {
    num: u64,
    den: u64,
}

impl DiscreteLaplace {
    /// A discrete Laplace with scale `num/den`; `None` unless `1 <= num <= 2^48` and
    /// `1 <= den <= 2^16`.
    ///
    /// ```
    /// use ldp_core::sampler::DiscreteLaplace;
    /// assert!(DiscreteLaplace::new(3, 2).is_some());
    /// assert!(DiscreteLaplace::new(0, 1).is_none());
    /// ```
    pub const fn new(num: u64, den: u64) -> Option<Self> {
        if num == 0 || num > MAX_SCALE_NUMERATOR || den == 0 || den > MAX_SCALE_DENOMINATOR {
            None
        } else {
            Some(Self { num, den })
        }
    }

    /// The scale as the exact fraction `(num, den)`.
    pub const fn scale_fraction(&self) -> (u64, u64) {
        (self.num, self.den)
    }

    /// The scale `num/den` in grid steps, rounded to the nearest `f64`.
    pub fn scale(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// One sample: CKS 2020 Algorithm 2 with t = num, s = den.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        let (t, s) = (self.num, self.den);
        loop {
            // U uniform on 0..t, kept with probability exp(−U/t).
            let u = uniform_below(rng, t);
            if !bernoulli_exp_unit(rng, u, t) {
                continue;
            }
            // V ~ Geometric(1 − e^{-1}) on {0, 1, …}.
            let mut v: u64 = 0;
            while bernoulli_exp_unit(rng, 1, 1) {
                v += 1;
            }
            // X = U + t·V has P(X = x) ∝ exp(−x/t); Y = ⌊X/s⌋ has P(Y = y) ∝ exp(−y·s/t).
            // Saturation needs V ≳ 2^15, probability below e^{-32000}.
            let x = u.saturating_add(t.saturating_mul(v));
            let y = (x / s).min(i64::MAX as u64) as i64;
            let negative = rng.next_u32() & 1 == 1;
            if negative && y == 0 {
                continue; // otherwise zero would be counted twice
            }
            return if negative { -y } else { y };
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Discrete Gaussian.

/// Largest variance numerator accepted by [`DiscreteGaussian::new`]: σ² ≤ 2^62 grid steps², so
/// σ ≤ 2^31 steps and every product in the sampler fits in a `u128`.
pub const MAX_VARIANCE_NUMERATOR: u64 = 1 << 62;
/// Largest variance denominator accepted by [`DiscreteGaussian::new`].
pub const MAX_VARIANCE_DENOMINATOR: u64 = 1 << 16;

const LOW64: u128 = u64::MAX as u128;

/// A uniform integer in `0..n` for `n > 0` (0 for `n == 0`), for `n` up to 2^128 − 1: draw
/// `bits(n − 1)` uniform bits and reject values `≥ n` (fewer than 2 draws on average). Exact.
fn uniform_below_u128<R: Rng + ?Sized>(rng: &mut R, n: u128) -> u128 {
    if n <= 1 {
        return 0;
    }
    let bits = u128::BITS - (n - 1).leading_zeros();
    let mask = if bits >= u128::BITS { u128::MAX } else { (1u128 << bits) - 1 };
    loop {
        let v = ((u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())) & mask;
        if v < n {
            return v;
        }
    }
}

/// Bernoulli(exp(−num/den)) for `num <= den`, `den > 0` (γ = num/den ∈ [0, 1]), in `u128`:
/// CKS 2020 Algorithm 1 with each Bernoulli(γ/k) drawn as the product of the independent
/// Bernoulli(num/den) and Bernoulli(1/k), so nothing overflows and nothing is rounded.
fn bernoulli_exp_unit_u128<R: Rng + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    let mut k: u64 = 1;
    loop {
        let one_in_k = k == 1 || uniform_below(rng, k) == 0;
        if !(one_in_k && uniform_below_u128(rng, den) < num) {
            return k % 2 == 1;
        }
        k = k.saturating_add(1);
    }
}

/// `a·b` as `(high, low)` 128-bit halves of the 256-bit product.
fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let (a1, a0) = (a >> 64, a & LOW64);
    let (b1, b0) = (b >> 64, b & LOW64);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    // Each term is below 2^64, so `mid < 3·2^64`.
    let mid = (p00 >> 64) + (p01 & LOW64) + (p10 & LOW64);
    let low = (p00 & LOW64) | (mid << 64);
    let high = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    (high, low)
}

/// `(high·2^128 + low) divmod d` for `0 < d < 2^127`, or `None` if the quotient is `≥ 2^128`
/// (`high ≥ d`). Restoring long division, one bit at a time: the remainder stays below `d`, so
/// `2·r + 1 < 2^128` never overflows.
fn divrem_wide(high: u128, low: u128, d: u128) -> Option<(u128, u128)> {
    if d == 0 || high >= d {
        return None;
    }
    if high == 0 {
        // γ < 1 on most calls of the Gaussian sampler: no division at all then.
        if low < d {
            return Some((0, low));
        }
        let q = low / d;
        return Some((q, low - q * d));
    }
    let (mut q, mut r) = (0u128, high);
    for i in (0..u128::BITS).rev() {
        r = (r << 1) | ((low >> i) & 1);
        q <<= 1;
        if r >= d {
            r -= d;
            q |= 1;
        }
    }
    Some((q, r))
}

/// Bernoulli(exp(−a²/d)) for `0 < d < 2^127`: CKS 2020 Algorithm 1 for γ > 1, i.e. ⌊γ⌋
/// independent Bernoulli(e^{−1}) trials that must all succeed, then one Bernoulli(e^{−(γ − ⌊γ⌋)}).
/// γ = a²/d is split exactly with 256-bit arithmetic. If ⌊γ⌋ ≥ 2^128 the answer is `false`:
/// the exact procedure would need 2^128 successes in a row, probability `e^{−2^128}`.
fn bernoulli_exp_square<R: Rng + ?Sized>(rng: &mut R, a: u128, d: u128) -> bool {
    let (high, low) = mul_wide(a, a);
    let Some((whole, rest)) = divrem_wide(high, low, d) else {
        return false;
    };
    let mut i = 0u128;
    while i < whole {
        if !bernoulli_exp_unit(rng, 1, 1) {
            return false;
        }
        i += 1;
    }
    bernoulli_exp_unit_u128(rng, rest, d)
}

/// The discrete Gaussian N_ℤ(0, σ²) on the integers, σ² = `num/den` (in grid steps²):
///
/// ```text
/// P(Z = z) = exp(−z²/2σ²) / Σ_{x ∈ ℤ} exp(−x²/2σ²),   z ∈ ℤ,
/// ```
///
/// sampled exactly by Canonne, Kamath & Steinke (NeurIPS 2020) Algorithm 3: with
/// `t = ⌊σ⌋ + 1`, propose `Y ~` [`DiscreteLaplace`]`(t)` and accept it with probability
/// `exp(−(|Y| − σ²/t)²/2σ²)` (Algorithm 1, Bernoulli(exp(−γ)) for rational γ), else repeat.
/// Every quantity is an integer ratio: `γ = (|Y|·t·den − num)² / (2·num·den·t²)`, split into
/// integer and fractional parts with 256-bit products, so there is no floating point, no
/// logarithm and no rounding anywhere; the output is exact given uniform bits. The only
/// departures are events of probability below `e^{−2^{31}}` (a saturated Laplace proposal,
/// see [`DiscreteLaplace::sample`], or `γ ≥ 2^{128}` treated as a rejection).
///
/// # Privacy (zCDP and its (ε, δ) conversion)
///
/// Adding independent N_ℤ(0, σ²) noise to each coordinate of an **integer** vector whose ℓ2
/// sensitivity is Δ (in grid steps) is ρ-zCDP with
///
/// ```text
/// ρ = Δ² / (2σ²)                                   (CKS 2020, Theorem 4 and §2.3)
/// ```
///
/// exactly as for the continuous Gaussian: for an integer shift μ the Rényi divergence is
/// `D_a(N_ℤ(0,σ²) ‖ N_ℤ(μ,σ²)) ≤ a·μ²/2σ²` (the theta sum `Σ_x exp(−(x − c)²/2σ²)` is largest at
/// integer c), and divergences of independent coordinates add. ρ-zCDP composes by adding ρ's
/// (also adaptively) and converts to (ε, δ)-DP by CKS 2020 Corollary 13,
/// `δ = inf_{a>1} exp((a−1)(aρ−ε))/(a−1)·(1−1/a)^a`, which is tighter than Bun & Steinke's
/// `ε = ρ + 2√(ρ ln(1/δ))` (see [`crate::jdp::zcdp`], which computes both directions). Inputs
/// must be on the integer grid *before* the noise is added: round real values to a public grid
/// `2^k` first and add the rounding (≤ ½ step per coordinate) to Δ, as the release paths in
/// [`crate::jdp`] do.
///
/// Like every rejection sampler its running time depends on the sample (see the crate docs on
/// timing): about two proposals on average.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DiscreteGaussian {
    num: u64,
    den: u64,
    /// `t = ⌊σ⌋ + 1`.
    t: u64,
    laplace: DiscreteLaplace,
}

/// `⌊√(num/den)⌋`: the largest `s` with `s²·den ≤ num` (binary search, exact in `u128`).
const fn floor_sqrt_ratio(num: u64, den: u64) -> u64 {
    let (mut lo, mut hi) = (0u64, 1u64 << 32); // s²·den ≤ num ≤ 2^62 ⇒ s < 2^32
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if (mid as u128) * (mid as u128) * (den as u128) <= num as u128 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

impl DiscreteGaussian {
    /// N_ℤ(0, σ²) with σ² = `num/den` grid steps²; `None` unless `1 <= num <= 2^62` and
    /// `1 <= den <= 2^16`.
    ///
    /// ```
    /// use ldp_core::sampler::DiscreteGaussian;
    /// let g = DiscreteGaussian::new(9, 4).unwrap(); // σ = 1.5 steps
    /// assert!((g.sigma() - 1.5).abs() < 1e-15);
    /// assert!(DiscreteGaussian::new(0, 1).is_none());
    /// assert!(DiscreteGaussian::new(1, 1 << 17).is_none());
    /// ```
    pub const fn new(num: u64, den: u64) -> Option<Self> {
        if num == 0 || num > MAX_VARIANCE_NUMERATOR || den == 0 || den > MAX_VARIANCE_DENOMINATOR {
            return None;
        }
        let t = floor_sqrt_ratio(num, den) + 1; // ≤ 2^31 + 1, within the Laplace's range
        match DiscreteLaplace::new(t, 1) {
            Some(laplace) => Some(Self { num, den, t, laplace }),
            None => None,
        }
    }

    /// The smallest representable variance `≥ sigma2` (grid steps²): `den = 2^16` while that
    /// fits, else `den = 1`. Rounding σ² up only adds privacy. `None` if `sigma2` is not finite,
    /// not positive or above 2^62.
    ///
    /// ```
    /// use ldp_core::sampler::DiscreteGaussian;
    /// let g = DiscreteGaussian::with_variance_at_least(1e6 + 0.3).unwrap();
    /// assert!(g.variance() >= 1e6 + 0.3 && g.variance() < 1e6 + 0.31);
    /// assert!(DiscreteGaussian::with_variance_at_least(f64::NAN).is_none());
    /// ```
    pub fn with_variance_at_least(sigma2: f64) -> Option<Self> {
        if sigma2.is_nan() || sigma2 <= 0.0 || sigma2 > MAX_VARIANCE_NUMERATOR as f64 {
            return None;
        }
        let fine = MAX_VARIANCE_DENOMINATOR as f64;
        // x·2^16 and ⌈·⌉ are exact; the u64 conversion is exact below 2^63.
        let (num, den) = if sigma2 * fine <= MAX_VARIANCE_NUMERATOR as f64 {
            (libm::ceil(sigma2 * fine) as u64, MAX_VARIANCE_DENOMINATOR)
        } else {
            (libm::ceil(sigma2) as u64, 1)
        };
        Self::new(num.max(1), den)
    }

    /// σ² as the exact fraction `(num, den)`.
    pub const fn variance_fraction(&self) -> (u64, u64) {
        (self.num, self.den)
    }

    /// σ² in grid steps², rounded to the nearest `f64`.
    pub fn variance(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// σ in grid steps.
    pub fn sigma(&self) -> f64 {
        libm::sqrt(self.variance())
    }

    /// The zCDP parameter `ρ = Δ²/(2σ²)` of adding this noise to each coordinate of an integer
    /// vector with ℓ2 sensitivity `sensitivity` grid steps (see the type docs).
    pub fn rho(&self, sensitivity: f64) -> f64 {
        sensitivity * sensitivity / (2.0 * self.variance())
    }

    /// One sample: CKS 2020 Algorithm 3.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        let (num, den, t) = (u128::from(self.num), u128::from(self.den), u128::from(self.t));
        // d = 2·num·den·t² < 2^127: den·t² ≤ num + 2√(num·den) + den < 2^63 (t ≤ √(num/den) + 1).
        let d = 2 * num * (den * t * t);
        loop {
            let y = self.laplace.sample(rng);
            // |Y|·t·den ≤ 2^63·2^32·2^16 = 2^111.
            let scaled = u128::from(y.unsigned_abs()) * t * den;
            let a = scaled.abs_diff(num);
            // γ = (|Y| − σ²/t)²/(2σ²) = a²/d.
            if bernoulli_exp_square(rng, a, d) {
                return y;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Frequency tests at a false-alarm rate of about 1e-7 each (|z| > 5.33), fixed seeds.
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    const Z: f64 = 5.33;

    fn assert_frequency(hits: u64, n: u64, p: f64) {
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        let freq = hits as f64 / n as f64;
        assert!((freq - p).abs() <= Z * sd, "frequency {freq} vs {p} (sd {sd})");
    }

    #[test]
    fn uniform_below_is_uniform_including_awkward_ranges() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let n = 600_000;
        // 3 does not divide 2^64; 2^63 + 1 makes Lemire's rejection threshold huge.
        let mut counts = [0u64; 3];
        for _ in 0..n {
            counts[uniform_below(&mut rng, 3) as usize] += 1;
        }
        for c in counts {
            assert_frequency(c, n, 1.0 / 3.0);
        }
        let big = (1u64 << 63) + 1;
        let low_half = (0..n).filter(|_| uniform_below(&mut rng, big) < big / 2).count() as u64;
        assert_frequency(low_half, n, (big / 2) as f64 / big as f64);
        assert_eq!(uniform_below(&mut rng, 1), 0);
        assert_eq!(uniform_below(&mut rng, 0), 0);
    }

    #[test]
    fn bernoulli_exp_has_probability_exp_minus_gamma() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let n = 400_000;
        for (num, den) in [(0u64, 5u64), (3, 10), (1, 1), (999, 1000)] {
            let hits = (0..n).filter(|_| bernoulli_exp_unit(&mut rng, num, den)).count() as u64;
            let p = (-(num as f64) / den as f64).exp();
            if num == 0 {
                assert_eq!(hits, n);
            } else {
                assert_frequency(hits, n, p);
            }
        }
    }

    /// The eager form of Lemire's method (the threshold computed first).
    fn uniform_below_eager<R: Rng + ?Sized>(rng: &mut R, n: u64) -> u64 {
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(rng.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    #[test]
    fn lazy_threshold_gives_the_same_outputs_for_the_same_bits() {
        let (mut a, mut b) = (Xoshiro256PlusPlus::seed_from_u64(9), Xoshiro256PlusPlus::seed_from_u64(9));
        let mut sizes = Xoshiro256PlusPlus::seed_from_u64(10);
        for _ in 0..100_000 {
            // Sizes near 2^64 make rejections common.
            let n = (sizes.next_u64() >> (sizes.next_u32() % 64)).max(1)
                | (u64::from(sizes.next_u32() % 2) << 63);
            assert_eq!(uniform_below(&mut a, n), uniform_below_eager(&mut b, n));
        }
    }

    /// FNV-1a hashes of 20 000 samples per variance (σ = 1.5 steps, σ² = 10⁶ + 0.3, the JDP
    /// tree's node noise at ε = 1 on §6.1, σ² = 2^62) from fixed seeds, recorded before the
    /// division shortcut in [`divrem_wide`]: speed-ups must leave every sample as it was.
    #[test]
    fn discrete_gaussian_samples_are_pinned() {
        let pinned = [
            (9u64, 4u64, 0x1911_7a80_50f5_846d_u64),
            (65_536_000_019_661, 65_536, 0x2aaf_4999_3662_a368),
            (11_565_237_651_472_988, 65_536, 0xdead_ac1d_3272_a5b1),
            (1 << 62, 1, 0x0908_b43c_34f7_e8a4),
        ];
        for (num, den, hash) in pinned {
            let g = DiscreteGaussian::new(num, den).unwrap();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(num);
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for _ in 0..20_000 {
                h = (h ^ g.sample(&mut rng) as u64).wrapping_mul(0x100_0000_01b3);
            }
            assert_eq!(h, hash, "σ² = {num}/{den}");
        }
    }

    #[test]
    fn wide_arithmetic_matches_u128_where_it_fits_and_known_values_beyond() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        for _ in 0..10_000 {
            let a = u128::from(rng.next_u64());
            let b = u128::from(rng.next_u64() >> (rng.next_u32() % 64));
            let (hi, lo) = mul_wide(a, b);
            assert_eq!((hi, lo), (0, a * b));
            let d = (u128::from(rng.next_u64()) << (rng.next_u32() % 60)) | 1;
            assert_eq!(divrem_wide(hi, lo, d), Some((a * b / d, a * b % d)));
        }
        // (2^128 − 1)² = 2^256 − 2^129 + 1.
        assert_eq!(mul_wide(u128::MAX, u128::MAX), (u128::MAX - 1, 1));
        // (2^100)² / (2^90 + 1) = 2^110 − 2^20 + (2^20·2^90 … ): check q·d + r = n.
        let (hi, lo) = mul_wide(1 << 100, 1 << 100);
        let d = (1u128 << 90) + 1;
        let (q, r) = divrem_wide(hi, lo, d).unwrap();
        let (qh, ql) = mul_wide(q, d);
        let (sum, carry) = ql.overflowing_add(r);
        assert_eq!((qh + u128::from(carry), sum), (hi, lo));
        assert!(r < d);
        assert_eq!(divrem_wide(5, 0, 5), None);
        // The shortcut below d and the single division just above it.
        assert_eq!(divrem_wide(0, 6, 7), Some((0, 6)));
        assert_eq!(divrem_wide(0, 7, 7), Some((1, 0)));
        assert_eq!(divrem_wide(0, u128::MAX, 3), Some((u128::MAX / 3, 0)));
        assert_eq!(divrem_wide(0, u128::MAX, 1 << 126), Some((3, (1 << 126) - 1)));
    }

    #[test]
    fn uniform_below_u128_is_uniform_on_a_range_beyond_u64() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let n = 300_000;
        let big = (1u128 << 100) + (1u128 << 99); // 3·2^99: a third of the masked draws rejected
        let third = big / 3;
        let mut counts = [0u64; 3];
        for _ in 0..n {
            let v = uniform_below_u128(&mut rng, big);
            assert!(v < big);
            counts[(v / third).min(2) as usize] += 1;
        }
        for c in counts {
            assert_frequency(c, n, 1.0 / 3.0);
        }
        assert_eq!(uniform_below_u128(&mut rng, 1), 0);
        assert_eq!(uniform_below_u128(&mut rng, 0), 0);
    }

    #[test]
    fn bernoulli_exp_square_has_probability_exp_minus_a2_over_d() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
        let n = 300_000;
        // γ = 9/10, 49/20 = 2.45, and a huge d (γ = 0.6 with d near 2^126).
        let big = 1u128 << 125;
        let a_big = 7 * (1u128 << 61); // a² = 49·2^122, γ = 49/8 = 6.125
        for (a, d) in [(3u128, 10u128), (7, 20), (a_big, big)] {
            let hits = (0..n).filter(|_| bernoulli_exp_square(&mut rng, a, d)).count() as u64;
            let gamma = (a as f64) * (a as f64) / d as f64;
            assert_frequency(hits, n, (-gamma).exp());
        }
        // A Bernoulli(e^{-γ}) with γ ≥ 2^128 is 0.
        assert!(!bernoulli_exp_square(&mut rng, u128::MAX, 3));
    }

    #[test]
    fn discrete_gaussian_parameters() {
        assert!(DiscreteGaussian::new(MAX_VARIANCE_NUMERATOR, 1).is_some());
        assert!(DiscreteGaussian::new(MAX_VARIANCE_NUMERATOR + 1, 1).is_none());
        assert!(DiscreteGaussian::new(1, MAX_VARIANCE_DENOMINATOR).is_some());
        assert_eq!(floor_sqrt_ratio(MAX_VARIANCE_NUMERATOR, 1), 1 << 31);
        assert_eq!(floor_sqrt_ratio(99, 4), 4);
        assert_eq!(floor_sqrt_ratio(100, 4), 5);
        assert_eq!(floor_sqrt_ratio(1, 1 << 16), 0);
        let g = DiscreteGaussian::with_variance_at_least(2f64.powi(50)).unwrap();
        assert_eq!(g.variance_fraction(), (1 << 50, 1));
        let g = DiscreteGaussian::with_variance_at_least(0.1).unwrap();
        assert_eq!(g.variance_fraction(), (6554, 1 << 16));
        assert!(DiscreteGaussian::with_variance_at_least(2f64.powi(63)).is_none());
        assert!(DiscreteGaussian::with_variance_at_least(-1.0).is_none());
    }

    #[test]
    fn discrete_laplace_rejects_out_of_range_scales() {
        assert!(DiscreteLaplace::new(0, 1).is_none());
        assert!(DiscreteLaplace::new(1, 0).is_none());
        assert!(DiscreteLaplace::new(MAX_SCALE_NUMERATOR + 1, 1).is_none());
        assert!(DiscreteLaplace::new(1, MAX_SCALE_DENOMINATOR + 1).is_none());
        assert!(DiscreteLaplace::new(MAX_SCALE_NUMERATOR, MAX_SCALE_DENOMINATOR).is_some());
    }
}
