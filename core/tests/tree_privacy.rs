//! The tree's privacy claims, checked rather than asserted (the pattern of `tests/privacy.rs`):
//! neighbouring streams differ in their first element, at the extremes ±B; a threshold attack
//! set on the releases gives a Clopper–Pearson lower bound on ε at α = 1e-6, which must stay
//! below the claim, and the same audit must catch trees whose noise is too small.
//!
//! - one release Ŝ(t) holds the element in exactly one node, so it is ε'-DP, ε' = ε/depth;
//! - the whole sequence holds it in `depth` nodes (σ(1) lies in Ŝ(1), Ŝ(2), Ŝ(4), …), and the
//!   event "all of them are high" has likelihood ratio exactly e^{ε_eff}: the audit is tight,
//!   and it catches the paper's ε' = ε/log₂ T at a power of two;
//! - the vector tree's ℓ1 calibration, with the event "all coordinates are high".

use crate::common;

use common::*;
use ldp_core::tree::{Tree, VectorTree};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Attack on the single release Ŝ(4) of a tree with horizon 8 (node [1, 4]):
/// {index > M}, whose likelihood ratio between σ(1) = B and σ(1) = −B is exactly e^{ε'_eff}.
fn single_release_attack(tree_eps: f64, b: f64) -> impl FnMut(bool, &mut Xoshiro256PlusPlus) -> bool {
    move |high, rng| {
        let mut tree = Tree::<4>::new(eps(tree_eps), bnd(b), 8).unwrap();
        let m = tree.max_index();
        tree.insert(if high { b } else { -b }, rng).unwrap();
        for _ in 0..2 {
            tree.insert(0.0, rng).unwrap();
        }
        tree.insert(0.0, rng).unwrap().index > m
    }
}

#[test]
fn one_release_is_epsilon_over_depth_private_and_the_audit_catches_halved_noise() {
    let (eps, b, n) = (4.0, 1.0, 1_000_000);
    let tree = Tree::<4>::new(common::eps(eps), bnd(b), 8).unwrap();
    let claim = tree.epsilon_per_node(); // ε'_eff < ε/depth = 1
    assert!(claim < eps / 4.0);
    let ours = epsilon_lower_bound(n, 41, single_release_attack(eps, b));
    eprintln!("one release: empirical ε lower bound {ours:.4}, claim ε' = {claim:.6} (tree ε = {eps})");
    assert!(ours <= claim, "empirical ε lower bound {ours} exceeds the claimed {claim}");
    assert!(ours > 0.9 * claim, "the audit is too weak to be meaningful: bound {ours}");

    // Test of the test: the same tree with its node noise halved (built for 2ε).
    let caught = epsilon_lower_bound(n, 42, single_release_attack(2.0 * eps, b));
    eprintln!("one release, halved noise: empirical ε lower bound {caught:.4}");
    assert!(caught > claim, "the audit did not catch halved noise: bound {caught}");
}

/// Attack on the whole sequence of a tree with horizon 4 (depth 3): σ(1) lies in the nodes
/// [1, 1], [1, 2] and [1, 4], released alone as Ŝ(1), Ŝ(2) and Ŝ(4). The event "all three
/// exceed M" has likelihood ratio exactly e^{3·ε'_eff}.
fn sequence_attack(tree_eps: f64, b: f64) -> impl FnMut(bool, &mut Xoshiro256PlusPlus) -> bool {
    move |high, rng| {
        let mut tree = Tree::<3>::new(eps(tree_eps), bnd(b), 4).unwrap();
        let m = tree.max_index();
        if tree.insert(if high { b } else { -b }, rng).unwrap().index <= m {
            return false;
        }
        if tree.insert(0.0, rng).unwrap().index <= m {
            return false;
        }
        tree.insert(0.0, rng).unwrap(); // Ŝ(3) = [1, 2] + [3, 3]: no new information on σ(1)
        tree.insert(0.0, rng).unwrap().index > m
    }
}

/// The audit's bound `ours` for a tree that claims `claim`: below the claim, and close enough to
/// it to mean something.
fn assert_within_claim(what: &str, ours: f64, claim: f64) {
    eprintln!("{what}: empirical ε lower bound {ours:.4}, claim {claim:.6}");
    assert!(ours <= claim, "empirical ε lower bound {ours} exceeds the claimed {claim}");
    assert!(ours > 0.9 * claim, "the audit is too weak to be meaningful: bound {ours}");
}

/// The audit's `bound` for a tree of `what` with `flaw` is above the ε it was meant to have.
fn assert_caught(what: &str, flaw: &str, bound: f64, eps: f64) {
    eprintln!("{what}, {flaw}: empirical ε lower bound {bound:.4}");
    assert!(bound > eps, "the audit did not catch {flaw}: bound {bound}");
}

#[test]
fn the_release_sequence_is_epsilon_private_and_the_audit_catches_too_little_noise() {
    let (eps, b, n) = (1.0, 2.0, 600_000);
    let tree = Tree::<3>::new(common::eps(eps), bnd(b), 4).unwrap();
    assert_eq!(tree.depth(), 3);
    let claim = tree.epsilon_effective();
    let ours = epsilon_lower_bound(n, 51, sequence_attack(eps, b));
    assert_within_claim(&format!("sequence (ε = {eps})"), ours, claim);

    // The paper's ε' = ε/log₂ T = ε/2 at T = 4 puts σ(1) in 3 nodes at ε/2 each: 1.5·ε.
    // A tree built for 1.5·ε has exactly that node noise.
    let paper = epsilon_lower_bound(n, 52, sequence_attack(1.5 * eps, b));
    assert_caught("sequence", "ε' = ε/log₂ T", paper, eps);

    let halved = epsilon_lower_bound(n, 53, sequence_attack(2.0 * eps, b));
    assert_caught("sequence", "halved noise", halved, eps);
}

/// Attack on a 2-vector tree with horizon 1: both coordinates of Ŝ(1) exceed M, between the
/// neighbours (B, B) and (−B, −B) (ℓ1 distance 2·D·B, the worst case).
fn vector_attack(tree_eps: f64, b: f64) -> impl FnMut(bool, &mut Xoshiro256PlusPlus) -> bool {
    move |high, rng| {
        let mut tree = VectorTree::<2, 1>::new(eps(tree_eps), bnd(b), 1).unwrap();
        let m = tree.max_index();
        let x = if high { b } else { -b };
        tree.insert(&[x, x], rng).unwrap().indices.iter().all(|&i| i > m)
    }
}

#[test]
fn the_vector_tree_is_epsilon_private_in_l1_and_the_audit_catches_per_coordinate_calibration() {
    let (eps, b, n) = (1.0, 0.5, 1_000_000);
    let claim = VectorTree::<2, 1>::new(common::eps(eps), bnd(b), 1).unwrap().epsilon_effective();
    let ours = epsilon_lower_bound(n, 61, vector_attack(eps, b));
    assert_within_claim("vector", ours, claim);

    // Noise calibrated to one coordinate (sensitivity 2B instead of 2·D·B) is a tree built for
    // D·ε: it is only (D·ε)-DP.
    let per_coordinate = epsilon_lower_bound(n, 62, vector_attack(2.0 * eps, b));
    assert_caught("vector", "per-coordinate calibration", per_coordinate, eps);
}
