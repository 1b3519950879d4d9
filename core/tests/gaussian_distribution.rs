//! The discrete Gaussian sampler (CKS 2020 Algorithm 3) has exactly its stated distribution:
//! Kolmogorov–Smirnov against the exact pmf with the DKW–Massart threshold at α = 1e-6, plus
//! mean and variance checks at ~1e-7 each, all with fixed seeds.

use crate::common;

use common::{ALPHA, dkw_threshold};
use ldp_core::sampler::DiscreteGaussian;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use statrs::distribution::{ContinuousCDF, Normal};

const N: usize = 200_000;
/// |z| threshold for a two-sided normal test at ~1e-7.
const Z: f64 = 5.33;

/// The exact CDF of N_ℤ(0, σ²): by summation of the pmf over ±(40σ + 10) (the mass outside is
/// below e^{-800}) for σ ≤ 2000, and for larger σ by the continuous approximation
/// Φ((k + ½)/σ), whose error (Euler–Maclaurin for the partial sum, Poisson summation for the
/// normaliser) is below 0.01/σ² ≤ 3e-9, far below the DKW threshold (≈ 6e-3).
struct ExactCdf {
    sigma2: f64,
    /// (first index, CDF values) for the summed case.
    table: Option<(i64, Vec<f64>)>,
}

impl ExactCdf {
    fn new(g: &DiscreteGaussian) -> Self {
        let sigma2 = g.variance();
        let sigma = sigma2.sqrt();
        if sigma > 2000.0 {
            return Self { sigma2, table: None };
        }
        let r = (40.0 * sigma) as i64 + 10;
        let weights: Vec<f64> = (-r..=r).map(|x| (-(x as f64).powi(2) / (2.0 * sigma2)).exp()).collect();
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cdf = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        Self { sigma2, table: Some((-r, cdf)) }
    }

    fn at(&self, k: i64) -> f64 {
        match &self.table {
            Some((first, cdf)) => {
                if k < *first {
                    0.0
                } else {
                    cdf.get((k - first) as usize).copied().unwrap_or(1.0)
                }
            }
            None => Normal::new(0.0, self.sigma2.sqrt()).unwrap().cdf(k as f64 + 0.5),
        }
    }

    /// Exact variance (summed case) or σ² (the difference is below e^{-2π²σ²}·σ² there).
    fn variance(&self) -> f64 {
        match &self.table {
            Some((first, cdf)) => {
                let mut prev = 0.0;
                let mut var = 0.0;
                for (i, c) in cdf.iter().enumerate() {
                    let x = (first + i as i64) as f64;
                    var += (c - prev) * x * x;
                    prev = *c;
                }
                var
            }
            None => self.sigma2,
        }
    }
}

/// sup_k |F_n(k) − F(k)| over the integers: F_n is constant between distinct sample values, so
/// the supremum is attained at a sample value v or at v − 1.
fn ks_distance(samples: &mut [i64], cdf: &ExactCdf) -> f64 {
    samples.sort_unstable();
    let n = samples.len() as f64;
    let mut worst: f64 = 0.0;
    let mut i = 0;
    while i < samples.len() {
        let v = samples[i];
        let below = i as f64 / n;
        while i < samples.len() && samples[i] == v {
            i += 1;
        }
        worst = worst.max((below - cdf.at(v - 1)).abs()).max((i as f64 / n - cdf.at(v)).abs());
    }
    worst
}

fn draw(g: &DiscreteGaussian, seed: u64) -> Vec<i64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..N).map(|_| g.sample(&mut rng)).collect()
}

#[test]
fn discrete_gaussian_matches_its_exact_cdf_mean_and_variance() {
    // σ² = 1/2, 1, 5/2, 121/4, a non-dyadic 10^4 + 1/3-ish fraction, 2^40 and near the 2^62
    // ceiling (the last two exercise the 256-bit acceptance test).
    let cases = [(1u64, 2u64), (1, 1), (5, 2), (121, 4), (655_381_847, 65_536), (1 << 40, 1), (1 << 62, 1)];
    for (i, (num, den)) in cases.into_iter().enumerate() {
        let g = DiscreteGaussian::new(num, den).unwrap();
        let cdf = ExactCdf::new(&g);
        let mut xs = draw(&g, 100 + i as u64);
        let n = N as f64;
        let var = cdf.variance();
        assert!(var <= g.variance() * (1.0 + 1e-12), "the discrete Gaussian's variance is below σ²");
        let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
        let second = xs.iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / n;
        // Var(Z²) ≈ 2σ⁴ (3σ⁴ − σ⁴ for a Gaussian; within 1% for σ² ≥ 1/2 on ℤ).
        assert!(mean.abs() <= Z * (var / n).sqrt(), "σ² = {num}/{den}: mean {mean}");
        assert!(
            (second - var).abs() <= Z * (2.1 * var * var / n).sqrt(),
            "σ² = {num}/{den}: E[Z²] {second} vs {var}"
        );
        let ks = ks_distance(&mut xs, &cdf);
        assert!(ks <= dkw_threshold(N, ALPHA), "σ² = {num}/{den}: KS {ks}");
    }
}

/// Test of the test: the same check rejects a sampler whose σ is 10% too small.
#[test]
fn ks_check_rejects_a_smaller_sigma() {
    let claimed = DiscreteGaussian::new(100, 1).unwrap();
    let smaller = DiscreteGaussian::new(81, 1).unwrap();
    let mut xs = draw(&smaller, 200);
    let ks = ks_distance(&mut xs, &ExactCdf::new(&claimed));
    assert!(ks > dkw_threshold(N, ALPHA), "KS {ks} failed to detect σ = 9 instead of 10");
}

#[test]
fn small_sigma_pmf_values_match_frequencies() {
    // σ² = 1/2: P(0) = 1/θ, P(±1) = e^{-1}/θ, θ = Σ e^{-x²}; checked by Clopper–Pearson.
    let g = DiscreteGaussian::new(1, 2).unwrap();
    let xs = draw(&g, 300);
    let theta: f64 = (-20i32..=20).map(|x| (-(f64::from(x)).powi(2)).exp()).sum();
    for (value, p) in [(0i64, 1.0 / theta), (1, (-1f64).exp() / theta), (-2, (-4f64).exp() / theta)] {
        let k = xs.iter().filter(|&&x| x == value).count() as u64;
        let (lo, hi) = common::clopper_pearson(k, N as u64, ALPHA);
        assert!(lo <= p && p <= hi, "P({value}) = {p} outside [{lo}, {hi}]");
    }
}
