//! The released values have exactly the intended distribution: discrete Laplace on the public
//! grid around the rounded, clamped reward. Each statistical check has false-alarm rate ≤ 1e-6
//! and a fixed seed.

use crate::common;

use common::*;
use ldp_core::sampler::DiscreteLaplace;
use ldp_core::{Bound, Epsilon, LaplaceMechanism};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const N: usize = 200_000;
/// |z| threshold for a two-sided normal test at ~1e-7.
const Z: f64 = 5.33;

fn q_of(d: DiscreteLaplace) -> f64 {
    (-1.0 / d.scale()).exp()
}

#[test]
fn discrete_laplace_matches_its_cdf_mean_and_variance() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    for (num, den) in [(1u64, 1u64), (7, 2), (4097 * 1024, 1024), (3, 1000)] {
        let d = DiscreteLaplace::new(num, den).unwrap();
        let q = q_of(d);
        let mut xs: Vec<i64> = (0..N).map(|_| d.sample(&mut rng)).collect();
        let (var, m4) = dlap_moments(q);
        let n = N as f64;
        let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
        let second = xs.iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / n;
        assert!(mean.abs() <= Z * (var / n).sqrt(), "scale {num}/{den}: mean {mean}");
        assert!(
            (second - var).abs() <= Z * ((m4 - var * var) / n).sqrt(),
            "scale {num}/{den}: E[Z²] {second} vs {var}"
        );
        let ks = ks_distance_integers(&mut xs, |k| dlap_cdf(q, k));
        assert!(ks <= dkw_threshold(N, ALPHA), "scale {num}/{den}: KS {ks}");
    }
}

/// Test of the test: the same check rejects a sampler with half the scale.
#[test]
fn ks_check_rejects_halved_scale() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
    let claimed = DiscreteLaplace::new(8, 1).unwrap();
    let halved = DiscreteLaplace::new(4, 1).unwrap();
    let mut xs: Vec<i64> = (0..N).map(|_| halved.sample(&mut rng)).collect();
    let ks = ks_distance_integers(&mut xs, |k| dlap_cdf(q_of(claimed), k));
    assert!(ks > dkw_threshold(N, ALPHA), "KS {ks} failed to detect a halved scale");
}

#[test]
fn ctl_release_is_grid_index_plus_discrete_laplace() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(13);
    let ctl =
        LaplaceMechanism::ctl(Epsilon::new(1.0).unwrap(), Bound::new(1.0).unwrap(), Bound::new(1.0).unwrap())
            .unwrap();
    let y = 0.3;
    let center = ctl.grid_index(y).unwrap();
    let g = (ctl.grid_log2() as f64).exp2();
    assert!((center as f64 * g - y).abs() <= g / 2.0, "rounding to the grid is to the nearest step");
    let mut offsets = Vec::with_capacity(N);
    let (mut sum, mut sum2) = (0.0, 0.0);
    for _ in 0..N {
        let r = ctl.release(y, &mut rng).unwrap();
        assert_eq!(r.grid_log2, ctl.grid_log2());
        let v = r.value();
        assert_eq!(v, r.index as f64 * g, "value is exactly index·2^k");
        sum += v - center as f64 * g;
        sum2 += (v - center as f64 * g).powi(2);
        offsets.push(r.index - center);
    }
    let q = q_of(ctl.noise());
    let ks = ks_distance_integers(&mut offsets, |k| dlap_cdf(q, k));
    assert!(ks <= dkw_threshold(N, ALPHA), "KS {ks}");
    // Mean and variance in reward units: centred on the rounded reward, variance 2q/(1−q)²·g²,
    // within 2^-11 of the continuous Laplace variance 2𝓛² with 𝓛 = 2(B+R)/ε = 4.
    let n = N as f64;
    let var = ctl.noise_variance();
    assert!(((var / 32.0) - 1.0).abs() < 1.0 / 2048.0, "variance {var} vs 2·4² = 32");
    let (_, m4) = dlap_moments(q);
    let m4 = m4 * g.powi(4);
    assert!((sum / n).abs() <= Z * (var / n).sqrt(), "mean offset {}", sum / n);
    assert!((sum2 / n - var).abs() <= Z * ((m4 - var * var) / n).sqrt(), "variance {}", sum2 / n);
}

#[test]
fn effective_epsilon_never_exceeds_the_request_and_is_close() {
    for &c in &[1e-9, 0.001, 0.3, 1.0, 2.0, 3.7, 1000.0, 6.5e9] {
        for &e in &[1e-4, 0.01, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0] {
            let m = LaplaceMechanism::ctl(
                Epsilon::new(e).unwrap(),
                Bound::new(c).unwrap(),
                Bound::new(0.0).unwrap(),
            )
            .unwrap();
            let eff = m.epsilon_effective();
            assert!(eff <= e, "C={c} ε={e}: ε_eff {eff}");
            // num's rounding costs less than 1/num = ε_eff/(2M·den) ≤ ε·2^-23 (M ≥ 2^12).
            let rounding = e / 8_388_608.0;
            assert!(eff >= e * (1.0 - rounding), "C={c} ε={e}: ε_eff {eff} needlessly small");
            // Scale within 2^-12 (grid) of the continuous 2C/ε, plus num's rounding.
            let ratio = m.noise_scale() / (2.0 * c / e);
            let max = (1.0 + 1.0 / 4096.0) * (1.0 + rounding) + 1e-12;
            assert!((1.0..=max).contains(&ratio), "C={c} ε={e}: scale ratio {ratio}");
        }
    }
}

#[test]
fn out_of_range_rewards_are_clamped_before_noise() {
    let ctl = LaplaceMechanism::ctl(
        Epsilon::new(0.5).unwrap(),
        Bound::new(1.0).unwrap(),
        Bound::new(0.25).unwrap(),
    )
    .unwrap();
    let m = ctl.max_index();
    assert_eq!(ctl.grid_index(1.25).unwrap(), m);
    for y in [1.2500001, 3.0, 1e300, f64::MAX] {
        assert_eq!(ctl.grid_index(y).unwrap(), m, "{y}");
        assert_eq!(ctl.grid_index(-y).unwrap(), -m, "{}", -y);
    }
    // And the released distribution of a clamped reward is that of the bound itself.
    let mut a = Xoshiro256PlusPlus::seed_from_u64(3);
    let mut b = Xoshiro256PlusPlus::seed_from_u64(3);
    for _ in 0..1000 {
        assert_eq!(ctl.release(1e6, &mut a).unwrap(), ctl.release(1.25, &mut b).unwrap());
    }
}
