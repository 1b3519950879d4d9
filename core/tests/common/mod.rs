//! Statistical helpers shared by the integration tests. Every test built on them has a stated
//! false-alarm rate and a fixed seed.
#![allow(dead_code)]

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use statrs::distribution::{Beta, ContinuousCDF};

/// The false-alarm rate of each statistical test.
pub const ALPHA: f64 = 1e-6;

/// Exact CDF of the discrete Laplace with P(z) ∝ q^|z|.
pub fn dlap_cdf(q: f64, k: i64) -> f64 {
    if k >= 0 { 1.0 - q.powi((k + 1) as i32) / (1.0 + q) } else { q.powi((-k) as i32) / (1.0 + q) }
}

/// Exact variance and fourth moment of the discrete Laplace with ratio q.
pub fn dlap_moments(q: f64) -> (f64, f64) {
    let var = 2.0 * q / ((1.0 - q) * (1.0 - q));
    let m4 = 2.0 * q * (1.0 + 11.0 * q + 11.0 * q * q + q * q * q) / ((1.0 + q) * (1.0 - q).powi(4));
    (var, m4)
}

/// Kolmogorov–Smirnov distance between the empirical CDF of integer samples and `cdf`.
/// For step functions on the integers the supremum is attained at an integer.
pub fn ks_distance_integers(samples: &mut [i64], cdf: impl Fn(i64) -> f64) -> f64 {
    samples.sort_unstable();
    let n = samples.len() as f64;
    let (lo, hi) = (samples[0] - 1, samples[samples.len() - 1]);
    let mut worst: f64 = 0.0;
    let mut i = 0;
    for k in lo..=hi {
        while i < samples.len() && samples[i] <= k {
            i += 1;
        }
        worst = worst.max((i as f64 / n - cdf(k)).abs());
    }
    worst
}

/// The Dvoretzky–Kiefer–Wolfowitz–Massart threshold: P(sup|F_n − F| > t) ≤ 2 exp(−2 n t²) = α,
/// valid for every distribution, discrete ones included.
pub fn dkw_threshold(n: usize, alpha: f64) -> f64 {
    ((2.0 / alpha).ln() / (2.0 * n as f64)).sqrt()
}

/// Two-sided Clopper–Pearson interval for `k` successes in `n` trials at confidence 1 − α.
pub fn clopper_pearson(k: u64, n: u64, alpha: f64) -> (f64, f64) {
    let lower = if k == 0 {
        0.0
    } else {
        Beta::new(k as f64, (n - k + 1) as f64).map(|b| b.inverse_cdf(alpha / 2.0)).unwrap_or(0.0)
    };
    let upper = if k == n {
        1.0
    } else {
        Beta::new((k + 1) as f64, (n - k) as f64).map(|b| b.inverse_cdf(1.0 - alpha / 2.0)).unwrap_or(1.0)
    };
    (lower, upper)
}

/// ln(p̂_high,lower / p̂_low,upper) for the event `attack(high, rng)` over `n` runs per input,
/// Clopper–Pearson at confidence 1 − α each. P(bound > true ε) ≤ α.
pub fn epsilon_lower_bound(
    n: u64,
    seed: u64,
    mut attack: impl FnMut(bool, &mut Xoshiro256PlusPlus) -> bool,
) -> f64 {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let k_high = (0..n).filter(|_| attack(true, &mut rng)).count() as u64;
    let k_low = (0..n).filter(|_| attack(false, &mut rng)).count() as u64;
    let (p_high_lower, _) = clopper_pearson(k_high, n, ALPHA);
    let (_, p_low_upper) = clopper_pearson(k_low, n, ALPHA);
    (p_high_lower / p_low_upper).ln()
}

/// `pub const fn $name(x: f64) -> $type`: the typed value of a literal that is valid for a test
/// (`const`, so usable in constants); a panic naming `$what` otherwise.
macro_rules! typed_literal {
    ($name:ident, $type:ty, $what:literal) => {
        #[doc = concat!("The ", $what, " of a literal, for a test.")]
        pub const fn $name(x: f64) -> $type {
            match <$type>::new(x) {
                Ok(value) => value,
                Err(_) => panic!(concat!("an invalid ", $what, " in a test")),
            }
        }
    };
}

typed_literal!(eps, ldp_core::Epsilon, "epsilon");
typed_literal!(bnd, ldp_core::Bound, "bound");
typed_literal!(del, ldp_core::Delta, "delta");
typed_literal!(edel, ldp_core::ErrorBoundDelta, "error-bound delta");

/// A generator that counts its 64-bit words drawn.
pub struct Counting {
    inner: Xoshiro256PlusPlus,
    /// 64-bit words drawn so far.
    pub draws: u64,
}

impl Counting {
    pub fn new(seed: u64) -> Self {
        Self { inner: Xoshiro256PlusPlus::seed_from_u64(seed), draws: 0 }
    }
}

impl rand_core::TryRng for Counting {
    type Error = std::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, std::convert::Infallible> {
        self.draws += 1;
        self.inner.try_next_u32()
    }
    fn try_next_u64(&mut self) -> Result<u64, std::convert::Infallible> {
        self.draws += 1;
        self.inner.try_next_u64()
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), std::convert::Infallible> {
        self.draws += dst.len().div_ceil(8) as u64;
        self.inner.try_fill_bytes(dst)
    }
}
