//! Feature maps for the squared-exponential kernel (SPEC §1.4, Dubey §4.2, Theorem 2).
//!
//! What is checked, and against what:
//! - the Gauss–Hermite rule: `Σ w = √π`, symmetry, tabulated values (Abramowitz & Stegun
//!   Table 25.10), exactness on `s^k` for every `k ≤ 2m̄ − 1` and *in*exactness at `2m̄`;
//! - QFF error over a 201 × 201 grid of `[0, 1]²` (1-D) for `m̄ = 2..40` nodes and
//!   `l ∈ {1, 0.5, 0.2}`: measured ≤ the Gauss–Hermite remainder bound ≤ Theorem 2's bound for
//!   every `m̄`; past Theorem 2's phase transition `m̄ > e/(4l²)` (Remark 2) and above the
//!   rounding floor, each step `m̄ → m̄ + 2` shrinks the error by a factor < 1 that itself
//!   shrinks (faster than exponential, as `(e/(4m̄l²))^{m̄}` does); the default size is below
//!   1e-6 for `l ≥ 0.2`;
//! - 2-D tensor product and additive blocks against their bounds, the layout of the tensor
//!   product, `‖Φ(x)‖² = 1 = k(x, x)`;
//! - RFF: Box–Muller frequencies (DKW), a Hoeffding + union bound on the sup error at a
//!   false-alarm rate ≤ 1e-8 per run, and the `N^{−1/2}` decay of the mean sup error.

use core::f64::consts::{PI, SQRT_2};

use ldp_core::ParamError;
use ldp_core::features::{
    AdditiveQff, DEFAULT_FREQUENCIES, DEFAULT_MIN_LENGTHSCALE, DEFAULT_TOLERANCE, DefaultQff1, DefaultQff2,
    FeatureMap, GaussHermite, Qff, Qff1d, Rff, gauss_hermite_error_bound, theorem2_bound,
};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use statrs::distribution::{ContinuousCDF, Normal};

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn se(r: f64, l: f64) -> f64 {
    (-(r / l) * (r / l) / 2.0).exp()
}

/// 201 equally spaced points of [0, 1].
fn grid_1d() -> Vec<f64> {
    (0..=200).map(|i| i as f64 / 200.0).collect()
}

/// `∫ e^{−s²} s^k ds`: `Γ((k+1)/2) = √π·(k−1)!!/2^{k/2}` for even k, 0 for odd k (computed as
/// a product, accurate to a few ulp; a Lanczos Γ is not).
fn hermite_moment(k: usize) -> f64 {
    if k % 2 == 1 { 0.0 } else { (1..=k / 2).map(|j| (2 * j - 1) as f64 / 2.0).product::<f64>() * PI.sqrt() }
}

// ---------------------------------------------------------------- Gauss–Hermite rule

fn check_rule<const N: usize>() {
    let rule = GaussHermite::<N>::new().unwrap();
    let (s, w) = (rule.nodes(), rule.weights());
    let total: f64 = w.iter().sum();
    assert!((total - PI.sqrt()).abs() < 1e-14, "N = {N}: Σw − √π = {:e}", total - PI.sqrt());
    for j in 0..N {
        assert!(w[j] > 0.0, "N = {N}: weight {j} not positive");
        assert!((s[j] + s[N - 1 - j]).abs() < 1e-14 * (1.0 + s[j].abs()), "N = {N}: nodes not symmetric");
        assert!((w[j] - w[N - 1 - j]).abs() <= 1e-13 * w[j], "N = {N}: weights not symmetric");
        if j > 0 {
            assert!(s[j] > s[j - 1], "N = {N}: nodes not increasing");
        }
    }
    // Exact for s^k, k ≤ 2N − 1, to rounding: the scale of the sum is Σ w |s|^k.
    for k in 0..2 * N {
        let q = rule.integrate(|x| x.powi(k as i32));
        let scale: f64 = s.iter().zip(w).map(|(x, v)| v * x.abs().powi(k as i32)).sum();
        let exact = hermite_moment(k);
        assert!((q - exact).abs() <= 1e-14 * scale.max(1.0), "N = {N}, degree {k}: {q} vs {exact}");
    }
    // ... and not for s^{2N}: there the error is the remainder of A&S 25.4.46 with
    // g^{(2N)} = (2N)!, i.e. ∫ − Σ = N!·√π/2^N exactly (the formula behind the error bound).
    let q = rule.integrate(|x| x.powi(2 * N as i32));
    let remainder = (1..=N).map(|j| j as f64 / 2.0).product::<f64>() * PI.sqrt();
    let scale: f64 = s.iter().zip(w).map(|(x, v)| v * x.powi(2 * N as i32)).sum();
    let expected = hermite_moment(2 * N) - remainder;
    assert!(
        (q - expected).abs() <= 1e-12 * scale.max(hermite_moment(2 * N)),
        "N = {N}: degree 2N gives {q}, not {expected}"
    );
}

macro_rules! check_rules { ($($n:literal),*) => { $( check_rule::<$n>(); )* } }

#[test]
fn gauss_hermite_rules_are_exact_to_degree_2n_minus_1_and_no_further() {
    check_rules!(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 20, 24, 28, 32, 40);
}

#[test]
fn gauss_hermite_matches_closed_forms_and_tables() {
    let sp = PI.sqrt();
    let r2 = GaussHermite::<2>::new().unwrap();
    assert!((r2.nodes()[1] - 0.5f64.sqrt()).abs() < 1e-16);
    assert!((r2.weights()[0] - sp / 2.0).abs() < 1e-15);
    let r3 = GaussHermite::<3>::new().unwrap();
    assert!(r3.nodes()[1].abs() < 1e-300);
    assert!((r3.nodes()[2] - 1.5f64.sqrt()).abs() < 1e-15);
    assert!((r3.weights()[1] - 2.0 * sp / 3.0).abs() < 1e-15);
    assert!((r3.weights()[2] - sp / 6.0).abs() < 1e-15);
    // Abramowitz & Stegun Table 25.10, n = 10 and n = 20 (largest node and its weight).
    let r10 = GaussHermite::<10>::new().unwrap();
    assert!((r10.nodes()[9] - 3.436_159_118_837_737_4).abs() < 1e-14);
    assert!((r10.weights()[9] / 7.640_432_855_232_62e-6 - 1.0).abs() < 1e-13);
    assert!((r10.nodes()[5] - 0.342_901_327_223_704_6).abs() < 1e-15);
    assert!((r10.weights()[5] / 0.610_862_633_735_325_8 - 1.0).abs() < 1e-13);
    let r20 = GaussHermite::<20>::new().unwrap();
    assert!((r20.nodes()[19] - 5.387_480_890_011_233).abs() < 1e-14);
    assert!((r20.weights()[19] / 2.229_393_645_534_151_3e-13 - 1.0).abs() < 1e-13);
}

#[test]
fn gauss_hermite_large_rules_and_refusal_beyond_the_f64_range() {
    // 300 nodes still work (plain Newton from the `gauher` guesses fails from 200 on) ...
    let r = GaussHermite::<300>::new().unwrap();
    assert!((r.weights().iter().sum::<f64>() - PI.sqrt()).abs() < 1e-13);
    // ... while at 400 the outermost weights are below the f64 range: refused, not garbage.
    assert_eq!(GaussHermite::<400>::new(), Err(ParamError::QuadratureFailed));
}

// ---------------------------------------------------------------- QFF, one dimension

/// sup over the 201 × 201 grid of |k(x − y) − φ(x)ᵀφ(y)|, from the features themselves.
fn qff1d_sup_error<const M: usize>(l: f64) -> f64 {
    let q = Qff1d::<M>::new(l).unwrap();
    let g = grid_1d();
    let feats: Vec<Vec<f64>> = g.iter().map(|&x| q.features(x).into_iter().flatten().collect()).collect();
    let mut worst: f64 = 0.0;
    for (i, fx) in feats.iter().enumerate() {
        for (j, fy) in feats.iter().enumerate() {
            let approx = dot(fx, fy);
            // The cheap path computes the same number.
            assert!((approx - q.approx_kernel(g[i] - g[j])).abs() < 1e-14);
            worst = worst.max((q.kernel(g[i] - g[j]) - approx).abs());
        }
    }
    worst
}

/// The same error for the full m̄-node rule (any m̄, odd included), via r = x − y on the grid.
fn rule_sup_error<const N: usize>(l: f64) -> f64 {
    let rule = GaussHermite::<N>::new().unwrap();
    let mut worst: f64 = 0.0;
    for i in -200..=200 {
        let r = i as f64 / 200.0;
        let q = rule.integrate(|s| (SQRT_2 * s * r / l).cos()) / PI.sqrt();
        worst = worst.max((q - se(r, l)).abs());
    }
    worst
}

const LENGTHSCALES: [f64; 3] = [1.0, 0.5, 0.2];

macro_rules! qff_table {
    ($($m:literal),*) => { vec![ $( (2 * $m, LENGTHSCALES.map(|l| qff1d_sup_error::<$m>(l))) ),* ] }
}
macro_rules! rule_table {
    ($($n:literal),*) => { vec![ $( ($n, LENGTHSCALES.map(|l| rule_sup_error::<$n>(l))) ),* ] }
}

#[test]
fn qff_error_decays_at_the_rate_of_theorem_2() {
    let table = qff_table!(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20);
    println!("m̄ = 2M | l | sup error (features, 201² grid) | remainder bound | Theorem 2");
    for (m_bar, errs) in &table {
        for (k, &l) in LENGTHSCALES.iter().enumerate() {
            let (e, b, t) = (errs[k], gauss_hermite_error_bound(*m_bar, l), theorem2_bound(1, *m_bar, l));
            println!("{m_bar:3} | {l:3} | {e:9.2e} | {b:9.2e} | {t:9.2e}");
            // The upper rate: measured ≤ remainder bound ≤ Theorem 2 (rounding allowance 1e-14).
            assert!(e <= b + 1e-14, "m̄ = {m_bar}, l = {l}: {e:e} above the bound {b:e}");
            assert!(b <= t, "remainder bound above Theorem 2 at m̄ = {m_bar}, l = {l}");
        }
    }
    // Faster than exponential past the phase transition m̄ > e/(4l²), above the rounding floor.
    for (k, &l) in LENGTHSCALES.iter().enumerate() {
        let transition = core::f64::consts::E / (4.0 * l * l);
        let tail: Vec<(usize, f64)> = table
            .iter()
            .map(|(m, e)| (*m, e[k]))
            .filter(|&(m, e)| m as f64 > transition && e > 1e-13)
            .collect();
        assert!(tail.len() >= 3, "l = {l}: too few points past the transition");
        let ratios: Vec<f64> = tail.windows(2).map(|w| w[1].1 / w[0].1).collect();
        for pair in ratios.windows(2) {
            assert!(pair[0] < 1.0 && pair[1] < 1.0, "l = {l}: error not decreasing: {ratios:?}");
            assert!(pair[1] <= pair[0] * 1.05, "l = {l}: decay slowing down: {ratios:?}");
        }
        // And the bound tracks the error: within 3 orders of magnitude where both are resolved.
        for &(m, e) in &tail {
            assert!(e >= 1e-3 * gauss_hermite_error_bound(m, l), "l = {l}, m̄ = {m}: bound too loose");
        }
    }
    // The default size meets the documented tolerance at the documented lengthscale, with room.
    let default_row = &table[DEFAULT_FREQUENCIES - 1];
    assert_eq!(default_row.0, 2 * DEFAULT_FREQUENCIES);
    assert!(default_row.1[2] < DEFAULT_TOLERANCE * 1e-2);
    assert!(gauss_hermite_error_bound(2 * DEFAULT_FREQUENCIES, DEFAULT_MIN_LENGTHSCALE) < DEFAULT_TOLERANCE);
}

#[test]
fn quadrature_error_for_every_node_count_2_to_16() {
    // The merged features only realise even m̄; the rule itself gives every m̄ (same φᵀφ).
    let table = rule_table!(2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    for (m_bar, errs) in &table {
        println!("m̄ = {m_bar:2}: {:9.2e} {:9.2e} {:9.2e}  (l = 1, 0.5, 0.2)", errs[0], errs[1], errs[2]);
        for (k, &l) in LENGTHSCALES.iter().enumerate() {
            assert!(errs[k] <= gauss_hermite_error_bound(*m_bar, l) + 1e-14);
        }
    }
    // l = 0.5 (transition at m̄ ≈ 2.7): strictly decreasing from m̄ = 2 to 16, and each step
    // gains more than the last.
    let e: Vec<f64> = table.iter().map(|r| r.1[1]).collect();
    for w in e.windows(3) {
        assert!(w[1] < w[0] && w[2] / w[1] <= w[1] / w[0] * 1.05, "{e:?}");
    }
    // The merged even-m̄ features agree with the rule (same numbers to rounding).
    assert!((qff1d_sup_error::<4>(0.5) - e[6]).abs() < 1e-14);
}

#[test]
fn default_size_holds_for_every_lengthscale_from_the_documented_minimum() {
    for l in [0.2, 0.25, 0.3, 0.5, 1.0, 2.0, 10.0, 1e3] {
        let q = DefaultQff1::new(l).unwrap();
        assert!(q.error_bound() < DEFAULT_TOLERANCE, "l = {l}");
        let mut worst: f64 = 0.0;
        for i in 0..=100 {
            for j in 0..=100 {
                let (x, y) = ([i as f64 / 100.0], [j as f64 / 100.0]);
                worst = worst.max((q.kernel(&x, &y) - dot(&q.features(&x), &q.features(&y))).abs());
            }
        }
        assert!(worst < DEFAULT_TOLERANCE, "l = {l}: {worst:e}");
    }
    // Below the documented minimum the bound says so.
    assert!(DefaultQff1::new(0.1).unwrap().error_bound() > DEFAULT_TOLERANCE);
}

// ---------------------------------------------------------------- QFF, several dimensions

fn qff2_sup_error<const M: usize, const F: usize>(l: f64, n: usize) -> (f64, f64) {
    let q = Qff::<2, M, F>::new(l).unwrap();
    let pts: Vec<[f64; 2]> = (0..n)
        .flat_map(|i| (0..n).map(move |j| [i as f64 / (n - 1) as f64, j as f64 / (n - 1) as f64]))
        .collect();
    let feats: Vec<[f64; F]> = pts.iter().map(|x| q.features(x)).collect();
    let mut worst: f64 = 0.0;
    for (x, fx) in pts.iter().zip(&feats) {
        for (y, fy) in pts.iter().zip(&feats) {
            let approx = dot(fx, fy);
            assert!((approx - q.approx_kernel(x, y)).abs() < 1e-13);
            worst = worst.max((q.kernel(x, y) - approx).abs());
        }
    }
    (worst, q.error_bound())
}

#[test]
fn tensor_product_error_in_two_dimensions() {
    let rows = [
        (4, qff2_sup_error::<2, 16>(0.5, 21)),
        (8, qff2_sup_error::<4, 64>(0.5, 21)),
        (12, qff2_sup_error::<6, 144>(0.5, 21)),
        (16, qff2_sup_error::<8, 256>(0.5, 21)),
    ];
    for (m_bar, (e, b)) in rows {
        println!(
            "2-D, l = 0.5, m̄ = {m_bar:2}: sup error {e:9.2e}, bound {b:9.2e}, Theorem 2 {:9.2e}",
            theorem2_bound(2, m_bar, 0.5)
        );
        // The product of two approximations errs by at most the sum of the two errors, and at
        // least the 1-D error (at y − x = (r, 0)).
        let one_d = rule_sup_error_dyn(m_bar, 0.5);
        assert!(e <= b + 1e-14 && e <= 2.0 * one_d + 1e-14, "m̄ = {m_bar}: {e:e} vs {b:e}");
        assert!(e >= one_d - 1e-14, "m̄ = {m_bar}");
        assert!(b <= theorem2_bound(2, m_bar, 0.5));
    }
    for w in rows.windows(2) {
        assert!(w[1].1.0 < 0.1 * w[0].1.0, "2-D error not decaying: {rows:?}");
    }
    // The documented 2-D default (F = 784) at l = 0.2 on a 15 × 15 grid.
    let q = DefaultQff2::new(0.2).unwrap();
    assert!(q.error_bound() < 2.0 * DEFAULT_TOLERANCE);
    let (e, _) = qff2_sup_error::<DEFAULT_FREQUENCIES, 784>(0.2, 15);
    assert!(e < DEFAULT_TOLERANCE, "{e:e}");
}

/// `rule_sup_error` for a runtime m̄ (the even values used above).
fn rule_sup_error_dyn(m_bar: usize, l: f64) -> f64 {
    match m_bar {
        4 => rule_sup_error::<4>(l),
        8 => rule_sup_error::<8>(l),
        12 => rule_sup_error::<12>(l),
        16 => rule_sup_error::<16>(l),
        _ => unreachable!(),
    }
}

#[test]
fn tensor_layout_is_the_kronecker_product_coordinate_0_slowest() {
    let q = Qff::<3, 2, 64>::with_lengthscales([0.3, 0.7, 1.1]).unwrap();
    let x = [0.13, 0.58, 0.91];
    let phi = q.features(&x);
    let per: Vec<Vec<f64>> =
        q.factors().iter().zip(&x).map(|(f, &xi)| f.features(xi).into_iter().flatten().collect()).collect();
    for k0 in 0..4 {
        for k1 in 0..4 {
            for k2 in 0..4 {
                let want = per[0][k0] * per[1][k1] * per[2][k2];
                assert!((phi[k0 * 16 + k1 * 4 + k2] - want).abs() < 1e-16);
            }
        }
    }
    // ARD: each coordinate has its own lengthscale.
    let y = [0.5, 0.1, 0.2];
    let k = se(x[0] - y[0], 0.3) * se(x[1] - y[1], 0.7) * se(x[2] - y[2], 1.1);
    assert!((q.kernel(&x, &y) - k).abs() < 1e-15);
    assert!((q.approx_kernel(&x, &y) - k).abs() <= q.error_bound());
}

#[test]
fn features_have_unit_norm_like_the_kernel_diagonal() {
    // ‖Φ(x)‖² = (Σ c_j)^D = 1 in exact arithmetic; computed within 1e-14, also off [0, 1].
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let mut u = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 6.0 - 3.0;
    let q1 = DefaultQff1::new(0.2).unwrap();
    let q2 = Qff::<2, 6, 144>::new(0.5).unwrap();
    let q3 = Qff::<3, 3, 216>::with_lengthscales([0.5, 1.0, 2.0]).unwrap();
    let add = AdditiveQff::<6, 3, 2, 6, 432>::contiguous(0.5).unwrap();
    let rff = Rff::<2, 64, 128>::new(0.3, &mut Xoshiro256PlusPlus::seed_from_u64(5)).unwrap();
    let mut worst: f64 = 0.0;
    for _ in 0..500 {
        let x6 = [u(), u(), u(), u(), u(), u()];
        for n2 in [
            dot(&q1.features(&[x6[0]]), &q1.features(&[x6[0]])),
            dot(&q2.features(&[x6[0], x6[1]]), &q2.features(&[x6[0], x6[1]])),
            dot(&q3.features(&[x6[0], x6[1], x6[2]]), &q3.features(&[x6[0], x6[1], x6[2]])),
            dot(&add.features(&x6), &add.features(&x6)),
            dot(&rff.features(&[x6[0], x6[1]]), &rff.features(&[x6[0], x6[1]])),
        ] {
            worst = worst.max((n2 - 1.0).abs());
        }
        assert!((q2.kernel(&[x6[0], x6[1]], &[x6[0], x6[1]]) - 1.0).abs() < 1e-300);
    }
    println!("max |‖Φ(x)‖² − 1| = {worst:e}");
    assert!(worst < 1e-14, "{worst:e}");
    // The scales: Σ c_j = 1 to rounding.
    let c: f64 = q1.factors()[0].scales().iter().map(|s| s * s).sum();
    assert!((c - 1.0).abs() < 1e-15);
}

#[test]
fn additive_blocks_error_depends_on_the_block_not_on_d() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let mut u = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    // Contiguous: 6 coordinates, 3 blocks of 2, 12 nodes per coordinate, l = 0.5.
    let add = AdditiveQff::<6, 3, 2, 6, 432>::contiguous(0.5).unwrap();
    assert_eq!(add.blocks(), &[[0, 1], [2, 3], [4, 5]]);
    // Overlapping blocks with ARD lengthscales (still a valid kernel).
    let ls = [0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
    let over = AdditiveQff::<6, 4, 2, 6, 576>::new(ls, [[0, 5], [1, 2], [2, 3], [4, 0]]).unwrap();
    let mut worst = [0.0f64; 2];
    for _ in 0..2000 {
        let x: [f64; 6] = core::array::from_fn(|_| u());
        let y: [f64; 6] = core::array::from_fn(|_| u());
        let k = ([[0, 1], [2, 3], [4, 5]]
            .iter()
            .map(|b| se(x[b[0]] - y[b[0]], 0.5) * se(x[b[1]] - y[b[1]], 0.5)))
        .sum::<f64>()
            / 3.0;
        assert!((add.kernel(&x, &y) - k).abs() < 1e-15);
        let approx = dot(&add.features(&x), &add.features(&y));
        assert!((approx - add.approx_kernel(&x, &y)).abs() < 1e-14);
        worst[0] = worst[0].max((approx - k).abs());
        let k2 = over
            .blocks()
            .iter()
            .map(|b| se(x[b[0]] - y[b[0]], ls[b[0]]) * se(x[b[1]] - y[b[1]], ls[b[1]]))
            .sum::<f64>()
            / 4.0;
        worst[1] = worst[1].max((dot(&over.features(&x), &over.features(&y)) - k2).abs());
    }
    println!(
        "additive sup errors (2000 random pairs): {worst:?}; bounds {:e} {:e}",
        add.error_bound(),
        over.error_bound()
    );
    assert!(worst[0] <= add.error_bound() && add.error_bound() < 1e-7);
    assert!(worst[1] <= over.error_bound() && over.error_bound() < 2e-6);
    // The additive bound equals the 2-D bound of one block: it does not grow with D.
    let block = Qff::<2, 6, 144>::new(0.5).unwrap();
    assert!((add.error_bound() - block.error_bound()).abs() < 1e-20);
    // Block placement: block g of Φ(x) is Φ_g(x)/√G.
    let x = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
    let phi = add.features(&x);
    let b1 = block.features(&[0.3, 0.4]);
    for (a, b) in phi[144..288].iter().zip(&b1) {
        assert!((a - b / 3f64.sqrt()).abs() < 1e-16);
    }
}

// ---------------------------------------------------------------- errors

#[test]
fn invalid_parameters_are_refused() {
    use ParamError::*;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    for l in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, -1.0, 1e-320] {
        assert_eq!(Qff1d::<4>::new(l), Err(LengthscaleInvalid), "l = {l}");
        assert_eq!(Qff::<2, 2, 16>::new(l), Err(LengthscaleInvalid));
        assert_eq!(Qff::<2, 2, 16>::with_lengthscales([1.0, l]), Err(LengthscaleInvalid));
        assert_eq!(AdditiveQff::<4, 2, 2, 2, 32>::contiguous(l), Err(LengthscaleInvalid));
        assert_eq!(Rff::<2, 8, 16>::new(l, &mut rng), Err(LengthscaleInvalid));
        assert_eq!(Rff::<2, 8, 16>::with_lengthscales([l, 1.0], &mut rng), Err(LengthscaleInvalid));
    }
    assert_eq!(AdditiveQff::<4, 2, 2, 2, 32>::new([1.0; 4], [[0, 1], [2, 4]]), Err(BlockIndexOutOfRange));
    assert_eq!(AdditiveQff::<4, 2, 2, 2, 32>::new([1.0; 4], [[0, 1], [3, 3]]), Err(BlockIndexRepeated));
    // Every error has a message, and is a core::error::Error.
    for e in [LengthscaleInvalid, QuadratureFailed, BlockIndexOutOfRange, BlockIndexRepeated] {
        let err: &dyn core::error::Error = &e;
        assert!(!err.to_string().is_empty());
    }
    // Non-finite inputs give non-finite features, never a panic.
    let q = Qff::<2, 2, 16>::new(1.0).unwrap();
    assert!(q.features(&[f64::NAN, 0.5]).iter().all(|v| v.is_nan()));
}

// ---------------------------------------------------------------- RFF

#[test]
fn rff_frequencies_are_normal_with_variance_l_minus_2() {
    // DKW: P(sup |F_n − F| > t) ≤ 2·exp(−2n t²); t for a false alarm of 1e-8.
    let l = 0.25;
    let rff = Rff::<2, 4096, 8192>::new(l, &mut Xoshiro256PlusPlus::seed_from_u64(2024)).unwrap();
    let mut z: Vec<f64> = rff.frequencies().iter().flatten().map(|w| w * l).collect();
    z.sort_by(f64::total_cmp);
    let n = z.len() as f64;
    let normal = Normal::standard();
    let ks = z
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let f = normal.cdf(v);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max);
    let t = ((2.0 / 1e-8f64).ln() / (2.0 * n)).sqrt();
    assert!(ks < t, "KS distance {ks} ≥ {t}");
    // The same seed gives the same features; another seed different ones.
    let a = Rff::<1, 8, 16>::new(0.5, &mut Xoshiro256PlusPlus::seed_from_u64(9)).unwrap();
    let b = Rff::<1, 8, 16>::new(0.5, &mut Xoshiro256PlusPlus::seed_from_u64(9)).unwrap();
    let c = Rff::<1, 8, 16>::new(0.5, &mut Xoshiro256PlusPlus::seed_from_u64(10)).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

/// sup over r = x − y on the 1-D grid (401 values) of |k − φ(x)ᵀφ(y)| for one RFF draw.
fn rff_sup_error<const N: usize, const F: usize>(l: f64, seed: u64) -> f64 {
    let rff = Rff::<1, N, F>::new(l, &mut Xoshiro256PlusPlus::seed_from_u64(seed)).unwrap();
    let z = rff.features(&[0.0]);
    let mut worst: f64 = 0.0;
    for i in -200..=200 {
        let r = i as f64 / 200.0;
        // k and φ(x)ᵀφ(y) depend on x − y only; check that on one shifted pair too.
        let approx = dot(&rff.features(&[r]), &z);
        if i % 50 == 0 {
            let shifted = dot(&rff.features(&[r + 0.3]), &rff.features(&[0.3]));
            assert!((approx - shifted).abs() < 1e-12);
        }
        worst = worst.max((approx - se(r, l)).abs());
    }
    worst
}

#[test]
fn rff_error_decays_like_n_to_the_minus_one_half_and_qff_beats_it() {
    // Hoeffding at each of the 401 values of r, union bound: P(sup > t) ≤ 802·exp(−N t²/2);
    // t = √(2 ln(802e8)/N) = 7.09/√N has a false-alarm rate 1e-8 per draw.
    let l = 0.2;
    const SEEDS: u64 = 20;
    let sizes = [16.0, 64.0, 256.0, 1024.0];
    let mut means = [0.0; 4];
    for seed in 0..SEEDS {
        let errs = [
            rff_sup_error::<16, 32>(l, seed),
            rff_sup_error::<64, 128>(l, seed),
            rff_sup_error::<256, 512>(l, seed),
            rff_sup_error::<1024, 2048>(l, seed),
        ];
        for (k, &e) in errs.iter().enumerate() {
            let t = (2.0 * (802e8f64).ln() / sizes[k]).sqrt();
            assert!(e < t, "N = {}, seed {seed}: sup error {e} ≥ {t}", sizes[k]);
            means[k] += e / SEEDS as f64;
        }
    }
    println!("RFF mean sup error over {SEEDS} seeds, N = 16, 64, 256, 1024: {means:?}");
    println!("  × √N: {:?}", core::array::from_fn::<f64, 4, _>(|k| means[k] * sizes[k].sqrt()));
    // Roughly N^{−1/2}: each ×4 in N divides the mean error by 2 (accept 1.4 to 2.9), and
    // √N × error stays within [0.2, 5] (the sup over r adds a slowly growing factor).
    for k in 0..3 {
        let ratio = means[k] / means[k + 1];
        assert!((1.4..2.9).contains(&ratio), "ratio {ratio} at N = {}", sizes[k]);
    }
    for k in 0..4 {
        assert!((0.2..5.0).contains(&(means[k] * sizes[k].sqrt())), "{means:?}");
    }
    // At the same feature count F = 32, QFF (l = 0.2, 32 nodes) is ~10 orders of magnitude better.
    let qff = qff1d_sup_error::<16>(l);
    assert!(qff < 1e-10 && qff < 1e-8 * means[0], "QFF {qff:e} vs RFF {:e}", means[0]);
}
