//! The symmetric-matrix tree-based mechanism (Dubey Alg. 2) through its public API: with
//! real noise every release is a symmetric matrix, its noise is on the scale of the calibrated
//! σ, and the noise shifted by 2Λ (Lemma 3) is positive definite in every round. (Exact sums
//! with zero noise are checked in the module's unit tests, through a private noise hook.)

use crate::common;

use common::{bnd, del, eps};
use ldp_core::jdp::{ShiftRule, SymmetricTree, TreeConfig, packed_index, zcdp};
use nalgebra::SMatrix;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const M: usize = 9; // 8 features and the reward
const T: u64 = 300;

type Mat = SMatrix<f64, M, M>;

fn unpack(tree: &SymmetricTree<Vec<i64>>, packed: &[i64]) -> Mat {
    Mat::from_fn(|i, j| {
        let (a, b) = if i <= j { (i, j) } else { (j, i) };
        tree.value(packed[packed_index(M, a, b)])
    })
}

fn unit(rng: &mut Xoshiro256PlusPlus) -> f64 {
    (rng.next_u64() >> 11) as f64 * (-53f64).exp2()
}

/// A row `[Φ, y]` with ‖Φ‖ = 1 and y ∈ [0, 1] (a Bernoulli-scale reward).
fn row(rng: &mut Xoshiro256PlusPlus) -> [f64; M] {
    let mut z = [0.0; M];
    for v in &mut z[..M - 1] {
        *v = unit(rng) - 0.5;
    }
    let norm = z[..M - 1].iter().map(|v| v * v).sum::<f64>().sqrt();
    for v in &mut z[..M - 1] {
        *v /= norm;
    }
    z[M - 1] = if unit(rng) < 0.7 { 1.0 } else { 0.0 };
    z
}

fn new_tree(epsilon: f64) -> SymmetricTree<Vec<i64>> {
    let len = SymmetricTree::<Vec<i64>>::buffer_len(M, T);
    SymmetricTree::new(vec![0; len], M, TreeConfig::new(eps(epsilon), del(0.1), bnd(2f64.sqrt()), T)).unwrap()
}

#[test]
fn releases_are_symmetric_and_shifted_noise_is_positive_definite_every_round() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    for epsilon in [0.5, 1.0, 10.0] {
        let mut tree = new_tree(epsilon);
        let mut exact = Mat::zeros();
        let mut packed = vec![0i64; M * (M + 1) / 2];
        let g = (tree.grid_log2() as f64).exp2();
        let mut worst_ratio: f64 = 0.0;
        for t in 1..=T {
            let z = row(&mut rng);
            tree.insert(&z, &mut rng).unwrap();
            let zv = SMatrix::<f64, M, 1>::from_column_slice(&z);
            exact += zv * zv.transpose();
            tree.release_into(&mut packed).unwrap();
            let released = unpack(&tree, &packed);
            assert_eq!(released, released.transpose(), "release not symmetric at t = {t}");
            // H_t = release − exact sum (up to t·g/2 of rounding per entry).
            let noise = released - exact;
            let eig = noise.symmetric_eigenvalues();
            let norm = eig.iter().fold(0.0f64, |m, e| m.max(e.abs()));
            let lambda = tree.noise_norm(ShiftRule::Concentration, 0.1);
            let rounding = t as f64 * g * M as f64;
            assert!(norm <= lambda + rounding, "ε = {epsilon}, t = {t}: ‖N‖ = {norm} > Λ = {lambda}");
            worst_ratio = worst_ratio.max(norm / lambda);
            // Lemma 3: H = N + 2ΛI has eigenvalues in [Λ, 3Λ]; in particular it is PD.
            let shifted = noise + Mat::identity() * (2.0 * lambda);
            assert!(shifted.cholesky().is_some(), "ε = {epsilon}, t = {t}: shifted noise not PD");
            // The paper's Λ is larger than the concentration bound.
            assert!(tree.noise_norm(ShiftRule::Paper, 0.1) > lambda);
        }
        // The bound is not vacuous: the noise uses a good part of it.
        assert!(worst_ratio > 0.3, "ε = {epsilon}: ‖N‖/Λ at most {worst_ratio}");
    }
}

#[test]
fn noise_entries_have_the_calibrated_standard_deviation() {
    // After t = 2^k − 1 inserts a release sums k node noises: the entries of release − exact
    // have variance k·σ². Pool the upper triangle over fresh trees; 5.33-sigma check on the
    // sample variance (its relative sd is about √(2/n)).
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let mut sum2 = 0.0;
    let mut n = 0usize;
    let mut sigma = 0.0;
    for _ in 0..40 {
        let mut tree = new_tree(1.0);
        let mut exact = Mat::zeros();
        for _ in 0..63 {
            let z = row(&mut rng);
            tree.insert(&z, &mut rng).unwrap();
            let zv = SMatrix::<f64, M, 1>::from_column_slice(&z);
            exact += zv * zv.transpose();
        }
        let mut packed = vec![0i64; M * (M + 1) / 2];
        tree.release_into(&mut packed).unwrap();
        let noise = unpack(&tree, &packed) - exact;
        for i in 0..M {
            for j in i..M {
                sum2 += noise[(i, j)].powi(2);
                n += 1;
            }
        }
        sigma = tree.node_sigma();
    }
    let var = sum2 / n as f64 / 6.0; // 63 = 111111₂: six nodes
    let rel = (var / (sigma * sigma) - 1.0).abs();
    assert!(rel <= 5.33 * (2.0 / n as f64).sqrt(), "variance {var} vs σ² = {}", sigma * sigma);
}

#[test]
fn accounting_spends_at_most_the_budget_and_smaller_epsilon_means_more_noise() {
    let sigmas: Vec<f64> = [0.1, 0.5, 1.0, 10.0].iter().map(|&e| new_tree(e).node_sigma()).collect();
    assert!(sigmas.windows(2).all(|w| w[0] > w[1]), "{sigmas:?}");
    for eps in [0.1, 1.0, 10.0] {
        let tree = new_tree(eps);
        assert!(tree.rho() <= zcdp::rho_for(common::eps(eps), del(0.1)).unwrap());
        assert!(tree.epsilon_effective() <= eps * (1.0 + 1e-9));
        assert!(tree.epsilon_effective() > 0.99 * eps);
    }
}

#[test]
fn bad_parameters_and_buffers_are_refused() {
    use ldp_core::ParamError;
    let ok = TreeConfig::new(eps(1.0), del(0.1), bnd(1.0), 10);
    let len = SymmetricTree::<Vec<i64>>::buffer_len(3, 10);
    let build = |buf: Vec<i64>, m, c| SymmetricTree::new(buf, m, c).err();
    assert_eq!(build(vec![0; len + 1], 3, ok), Some(ParamError::BufferLength));
    assert_eq!(build(vec![0; len], 0, ok), Some(ParamError::DimensionInvalid));
    assert_eq!(
        build(vec![0; len], 3, TreeConfig::new(eps(1.0), del(0.1), bnd(1.0), 0)),
        Some(ParamError::HorizonZero)
    );
    assert_eq!(
        build(vec![0; len], 3, TreeConfig::new(eps(1.0), del(0.1), bnd(1.0), 1 << 33)),
        Some(ParamError::HorizonAboveCapacity)
    );
    assert_eq!(
        build(vec![0; len], 3, TreeConfig::new(eps(1.0), del(0.1), bnd(0.0), 10)),
        Some(ParamError::BoundNotPositive)
    );
    assert_eq!(
        build(vec![0; len], 3, TreeConfig::new(eps(1.0), del(0.1), bnd(1e30), 10)),
        Some(ParamError::BoundOutOfRange)
    );
    // ε, δ and L's finiteness are checked by their types (`core/tests/params.rs`).
    assert_eq!(build(vec![0; len], 3, ok.with_grid(3)), Some(ParamError::GridOutOfRange));
    // (ε, δ) so small that σ exceeds 2^31 grid steps.
    assert_eq!(
        build(vec![0; len], 3, TreeConfig::new(eps(1e-6), del(1e-12), bnd(1.0), 10)),
        Some(ParamError::NoiseOutOfRange)
    );
}

/// The largest bound the exact grid allows, 2^40, is accepted although the sensitivity margin
/// (1 + 2^-40) takes the grid's own bound past it.
#[test]
fn the_top_of_the_bound_range_is_accepted_with_its_margin() {
    let l = 2f64.powi(20); // L² = 2^40
    let config = TreeConfig::new(eps(1.0), del(0.1), bnd(l), 16);
    let len = SymmetricTree::<Vec<i64>>::buffer_len(2, 16);
    assert!(SymmetricTree::new(vec![0; len], 2, config).is_ok());
    let too_big = TreeConfig::new(eps(1.0), del(0.1), bnd(l * 1.000_001), 16);
    assert!(SymmetricTree::new(vec![0; len], 2, too_big).is_err());
}
