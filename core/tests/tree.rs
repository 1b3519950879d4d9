//! Behaviour of the tree-based aggregation (`ldp_core::tree`) through its public API: parameter
//! validation, capacity, refusals that change nothing, memory fixed by the type, and the
//! adaptive tree reducing to the fixed-bound one.

use crate::common;

use common::{bnd, edel, eps};
use core::mem::size_of;

use ldp_core::tree::{
    AdaptiveTree, MAX_LEVELS, Tree, TreeInsertError, VectorTree, lemma2_error_bound, levels_for,
};
use ldp_core::{Bound, Epsilon, ErrorBoundDelta, ParamError};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

#[test]
fn levels_for_is_floor_log2_plus_one_and_capacity_is_two_to_the_l_minus_one() {
    assert_eq!(levels_for(0), 0);
    for t in 1..=4096u64 {
        assert_eq!(levels_for(t), (t as f64).log2().floor() as usize + 1, "T = {t}");
    }
    assert_eq!(levels_for(u64::MAX), 64);
    assert_eq!(Tree::<1>::CAPACITY, 1);
    assert_eq!(Tree::<3>::CAPACITY, 7);
    assert_eq!(AdaptiveTree::<10>::CAPACITY, 1023);
    assert_eq!(VectorTree::<2, 32>::CAPACITY, u32::MAX as u64);
    // Powers of two need the extra level.
    for (levels, horizon) in [(1, 1u64), (2, 2), (3, 7), (4, 8), (4, 9), (11, 1024), (10, 1000)] {
        assert_eq!(levels_for(horizon), levels);
    }
    assert!(Tree::<3>::new(eps(1.0), bnd(1.0), 7).is_ok());
    assert_eq!(Tree::<3>::new(eps(1.0), bnd(1.0), 8).err(), Some(ParamError::HorizonAboveCapacity));
    assert!(Tree::<4>::new(eps(1.0), bnd(1.0), 8).is_ok());
    assert_eq!(Tree::<10>::new(eps(1.0), bnd(1.0), 1024).err(), Some(ParamError::HorizonAboveCapacity));
    assert!(Tree::<11>::new(eps(1.0), bnd(1.0), 1024).is_ok());
    assert!(Tree::<{ MAX_LEVELS }>::new(eps(1.0), bnd(1.0), u32::MAX as u64).is_ok());
    // The depth (and so the noise) follows T, not the type.
    assert_eq!(Tree::<20>::new(eps(1.0), bnd(1.0), 5).unwrap().depth(), 3);
}

#[test]
fn invalid_parameters_get_their_own_error_variants() {
    use ParamError::*;
    let cases: [(f64, f64, u64, ParamError); 9] = [
        (f64::NAN, 1.0, 10, EpsilonNotFinite),
        (f64::INFINITY, 1.0, 10, EpsilonNotFinite),
        (0.0, 1.0, 10, EpsilonNotPositive),
        (-1.0, 1.0, 10, EpsilonNotPositive),
        (1.0, f64::NAN, 10, BoundNotFinite),
        (1.0, 0.0, 10, BoundNotPositive),
        (1.0, 1e300, 10, BoundOutOfRange),
        (1.0, 1.0, 0, HorizonZero),
        (1e-12, 1.0, 10, EpsilonTooSmall),
    ];
    // ε and B are validated by their types, the rest by the constructors: the first error wins.
    for (e, b, t, err) in cases {
        let typed = Epsilon::new(e).and_then(|e| Ok((e, Bound::new(b)?)));
        let build = |new: fn(Epsilon, Bound, u64) -> Option<ParamError>| {
            typed.map_or_else(Some, |(e, b)| new(e, b, t))
        };
        assert_eq!(build(|e, b, t| Tree::<10>::new(e, b, t).err()), Some(err), "Tree({e}, {b}, {t})");
        assert_eq!(
            build(|e, b, t| AdaptiveTree::<10>::new(e, b, t).err()),
            Some(err),
            "AdaptiveTree({e}, {b}, {t})"
        );
        assert_eq!(
            build(|e, b, t| VectorTree::<4, 10>::new(e, b, t).err()),
            Some(err),
            "VectorTree({e}, {b}, {t})"
        );
    }
    assert_eq!(Bound::new(-2.0).err(), Some(BoundNegative));
    assert_eq!(Tree::<10>::new(eps(1.0), bnd(1e-13), 10).err(), Some(BoundOutOfRange));
    assert_eq!(Tree::<10>::with_grid(eps(1.0), bnd(1.0), 10, 1).err(), Some(GridOutOfRange));
    assert_eq!(Tree::<10>::with_grid(eps(1.0), bnd(1.0), 10, -21).err(), Some(GridOutOfRange));
    assert!(Tree::<10>::with_grid(eps(1.0), bnd(1.0), 10, -20).is_ok());
    assert!(Tree::<10>::with_grid(eps(1.0), bnd(1.0), 10, 0).is_ok());
    // The ℓ1 scale makes a large vector need a larger ε than a scalar at the same settings.
    assert!(Tree::<32>::new(eps(1e-5), bnd(1.0), 1 << 31).is_ok());
    assert_eq!(VectorTree::<512, 32>::new(eps(1e-5), bnd(1.0), 1 << 31).err(), Some(EpsilonTooSmall));
    // The pure error bound.
    for delta in [0.0, -0.1, 0.51, 1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(ErrorBoundDelta::new(delta), Err(ErrorBoundDeltaOutOfRange), "δ = {delta}");
    }
    assert_eq!(lemma2_error_bound(bnd(1.0), eps(1.0), 0, edel(0.1)), Err(HorizonZero));
    assert_eq!(lemma2_error_bound(bnd(0.0), eps(1.0), 10, edel(0.1)), Err(BoundNotPositive));
    // Every error explains itself.
    for e in [EpsilonNotFinite, EpsilonTooSmall, HorizonAboveCapacity, ErrorBoundDeltaOutOfRange] {
        assert!(e.to_string().len() > 20);
    }
}

/// Trees are usable as `const` / `static` values: the constructors are `const fn`.
const STATIC_TREE: Result<Tree<8>, ParamError> = Tree::new(eps(1.0), bnd(1.0), 255);
const BAD_TREE: Result<Tree<8>, ParamError> = Tree::new(eps(1.0), bnd(1.0), 256);

#[test]
fn constructors_run_at_compile_time() {
    assert!(STATIC_TREE.is_ok());
    assert_eq!(BAD_TREE.err(), Some(ParamError::HorizonAboveCapacity));
}

#[test]
fn memory_is_fixed_by_the_type_not_by_the_horizon() {
    // A tree's size is a function of its type (any horizon up to 2^L − 1 fits): two i64 p-sums
    // per level plus a fixed header.
    let per_level = size_of::<Tree<17>>() - size_of::<Tree<16>>();
    assert_eq!(per_level, 16);
    assert!(size_of::<Tree<16>>() <= 16 * 16 + 128, "{}", size_of::<Tree<16>>());
    assert_eq!(size_of::<AdaptiveTree<9>>() - size_of::<AdaptiveTree<8>>(), 16);
    assert_eq!(size_of::<VectorTree<5, 9>>() - size_of::<VectorTree<5, 8>>(), 16 * 5);
    assert!(
        VectorTree::<5, 12>::new(eps(1.0), bnd(1.0), 4095).is_ok()
            && VectorTree::<5, 12>::new(eps(1.0), bnd(1.0), 4096).is_err()
    );
}

#[test]
fn inserting_past_the_horizon_is_an_error_and_changes_nothing() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    for horizon in [1u64, 2, 7, 8, 9] {
        let mut tree = Tree::<4>::new(eps(1.0), bnd(1.0), horizon).unwrap();
        assert_eq!(tree.last_release(), None);
        for _ in 0..horizon {
            tree.insert(0.5, &mut rng).unwrap();
        }
        assert_eq!(tree.remaining(), 0);
        let last = tree.last_release();
        for _ in 0..3 {
            assert_eq!(tree.insert(0.5, &mut rng), Err(TreeInsertError::HorizonReached));
        }
        assert_eq!(tree.last_release(), last);
        assert_eq!(tree.time(), horizon);

        let mut adaptive = AdaptiveTree::<4>::new(eps(1.0), bnd(1.0), horizon).unwrap();
        let mut vector = VectorTree::<2, 4>::new(eps(1.0), bnd(1.0), horizon).unwrap();
        for _ in 0..horizon {
            adaptive.insert(0.5, 1.0, &mut rng).unwrap();
            vector.insert(&[0.5, 0.5], &mut rng).unwrap();
        }
        assert_eq!(adaptive.insert(0.5, 1.0, &mut rng), Err(TreeInsertError::HorizonReached));
        assert_eq!(vector.insert(&[0.5, 0.5], &mut rng), Err(TreeInsertError::HorizonReached));
    }
}

#[test]
fn non_finite_values_are_refused_and_change_nothing() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let mut tree = Tree::<4>::new(eps(1.0), bnd(1.0), 8).unwrap();
    tree.insert(0.25, &mut rng).unwrap();
    let before = tree.last_release();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(tree.insert(bad, &mut rng), Err(TreeInsertError::NonFiniteValue));
    }
    assert_eq!((tree.time(), tree.last_release()), (1, before));

    let mut vector = VectorTree::<3, 4>::new(eps(1.0), bnd(1.0), 8).unwrap();
    assert_eq!(vector.insert(&[0.0, f64::NAN, 0.0], &mut rng), Err(TreeInsertError::NonFiniteValue));
    assert_eq!(vector.time(), 0);

    let mut adaptive = AdaptiveTree::<4>::new(eps(1.0), bnd(1.0), 8).unwrap();
    assert_eq!(adaptive.insert(f64::NAN, 0.5, &mut rng), Err(TreeInsertError::NonFiniteValue));
    assert_eq!(adaptive.last_bound(), None);
}

#[test]
fn adaptive_tree_rejects_a_decreasing_or_invalid_bound_and_changes_nothing() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let mut tree = AdaptiveTree::<6>::new(eps(1.0), bnd(4.0), 50).unwrap();
    tree.insert(0.1, 1.0, &mut rng).unwrap();
    tree.insert(0.1, 1.0, &mut rng).unwrap(); // equal is fine: non-decreasing
    tree.insert(0.1, 2.0, &mut rng).unwrap();
    let before = (tree.time(), tree.last_release(), tree.node_noise(), tree.epsilon_effective());
    assert_eq!(tree.insert(0.1, 1.999, &mut rng), Err(TreeInsertError::BoundDecreased));
    assert_eq!(tree.insert(0.1, 4.0001, &mut rng), Err(TreeInsertError::BoundAboveMax));
    assert_eq!(tree.insert(0.1, 0.0, &mut rng), Err(TreeInsertError::BoundNotPositive));
    assert_eq!(tree.insert(0.1, -3.0, &mut rng), Err(TreeInsertError::BoundNotPositive));
    assert_eq!(tree.insert(0.1, f64::NAN, &mut rng), Err(TreeInsertError::BoundNotFinite));
    assert_eq!(tree.insert(0.1, f64::INFINITY, &mut rng), Err(TreeInsertError::BoundNotFinite));
    assert_eq!((tree.time(), tree.last_release(), tree.node_noise(), tree.epsilon_effective()), before);
    assert_eq!(tree.last_bound(), Some(2.0));
    tree.insert(0.1, 4.0, &mut rng).unwrap();
    assert!(tree.epsilon_effective() < tree.epsilon());
    // A tiny bound still gets a valid (one-step) index range.
    let mut tiny = AdaptiveTree::<3>::new(eps(1.0), bnd(1.0), 5).unwrap();
    assert!(tiny.insert(1.0, f64::MIN_POSITIVE, &mut rng).is_ok());
}

#[test]
fn adaptive_tree_with_a_constant_bound_is_the_fixed_bound_tree() {
    // Seed 004: "When B_t = B, Algorithm 2 will be the same as the original one."
    let (eps, b, horizon) = (0.8, 3.0, 100);
    let mut fixed = Tree::<7>::new(common::eps(eps), bnd(b), horizon).unwrap();
    let mut adaptive = AdaptiveTree::<7>::new(common::eps(eps), bnd(b), horizon).unwrap();
    let (mut r1, mut r2) = (Xoshiro256PlusPlus::seed_from_u64(4), Xoshiro256PlusPlus::seed_from_u64(4));
    for t in 0..horizon {
        let v = (t as f64 * 0.37).sin() * 4.0;
        assert_eq!(fixed.insert(v, &mut r1), adaptive.insert(v, b, &mut r2));
    }
    assert_eq!(fixed.node_noise(), adaptive.node_noise());
    assert!((fixed.epsilon_effective() - adaptive.epsilon_effective()).abs() < 1e-12);
}

#[test]
fn noise_is_calibrated_to_depth_and_to_l1_sensitivity() {
    for horizon in [1u64, 2, 7, 8, 1000, 1 << 20] {
        for eps in [0.01, 0.5, 1.0, 8.0] {
            let tree = Tree::<21>::new(common::eps(eps), bnd(1.0), horizon).unwrap();
            let depth = levels_for(horizon) as f64;
            assert!(tree.epsilon_effective() < eps);
            assert!(tree.epsilon_effective() > eps * (1.0 - 1e-6));
            assert!((tree.epsilon_per_node() * depth - tree.epsilon_effective()).abs() < 1e-12);
            // Node scale 2·B_eff·depth/ε with B_eff = M·2^k ≥ B.
            let expected = 2.0 * tree.effective_bound() * depth / eps;
            assert!(tree.node_noise_scale() >= expected);
            assert!(tree.node_noise_scale() < expected * (1.0 + 1e-6));
            assert!(tree.effective_bound() >= 1.0 && tree.effective_bound() <= 1.0 + 2f64.powi(-12));

            let vector = VectorTree::<4, 21>::new(common::eps(eps), bnd(1.0), horizon).unwrap();
            assert!(vector.epsilon_effective() < eps);
            assert!((vector.node_noise_scale() / tree.node_noise_scale() - 4.0).abs() < 1e-5);
        }
    }
}

#[test]
fn error_bound_is_the_paper_formula_at_the_effective_bound() {
    let tree = Tree::<10>::new(eps(0.5), bnd(2.0), 1000).unwrap();
    for delta in [0.5, 0.1, 1e-6] {
        let ours = tree.error_bound(edel(delta));
        let paper = lemma2_error_bound(bnd(tree.effective_bound()), eps(0.5), 1000, edel(delta)).unwrap();
        let grid_term = 10.0 * (tree.grid_log2() as f64).exp2();
        assert!(ours >= paper + grid_term);
        assert!(ours <= (paper + grid_term) * (1.0 + 1e-6));
    }
    // log T = depth: positive at T = 1, where log₂ T = 0 would claim an exact release.
    assert!(lemma2_error_bound(bnd(1.0), eps(1.0), 1, edel(0.5)).unwrap() > 0.0);
    // Monotone in everything the paper says it grows with.
    let e = |b, eps, t, d| lemma2_error_bound(bnd(b), common::eps(eps), t, edel(d)).unwrap();
    assert!(e(2.0, 1.0, 100, 0.1) > e(1.0, 1.0, 100, 0.1));
    assert!(e(1.0, 0.5, 100, 0.1) > e(1.0, 1.0, 100, 0.1));
    assert!(e(1.0, 1.0, 1000, 0.1) > e(1.0, 1.0, 100, 0.1));
    assert!(e(1.0, 1.0, 100, 0.01) > e(1.0, 1.0, 100, 0.1));
}

#[test]
fn released_values_are_exact_grid_multiples() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let mut tree = Tree::<10>::new(eps(1.0), bnd(0.3), 1000).unwrap();
    let g = (tree.grid_log2() as f64).exp2();
    for t in 0..1000 {
        let r = tree.insert((t as f64).cos(), &mut rng).unwrap();
        assert_eq!(r.grid_log2, tree.grid_log2());
        assert_eq!(r.value().to_bits(), (r.index as f64 * g).to_bits());
        assert!(r.index.unsigned_abs() <= 1 << 52);
    }
}

#[test]
fn debug_output_shows_the_configuration_but_not_the_sums() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
    let mut tree = Tree::<4>::with_grid(eps(1.0), bnd(1.0), 8, -3).unwrap();
    tree.insert(0.875, &mut rng).unwrap(); // index 7
    let text = format!("{tree:?}");
    assert!(text.contains("horizon: 8") && text.contains("time: 1"), "{text}");
    assert!(!text.contains("exact") && !text.contains("sums") && !text.contains('7'), "{text}");
}
