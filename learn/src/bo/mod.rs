//! The Bayesian-optimisation learners of Zhou & Tan (Zhou & Tan): GP-UCB, TGP-UCB, ATA-GP-UCB and
//! MoMA-GP-UCB, each run on CTL(ε)-privatised reports (the LDP- variants) or on raw heavy-tailed
//! rewards (the non-private variants), over the learner contract of [`crate::policy`]: a learner
//! only ever sees the [`Problem`](crate::policy::Problem) (public) and the reports passed to
//! [`Policy::observe`](crate::policy::Policy::observe).

use nalgebra::DVector;

use crate::policy::AlgorithmSpec;

pub mod ata;
pub mod calibrated;
pub mod gp_ucb;
pub mod moma;
pub mod ucb1;

/// The four learners of Zhou & Tan (Zhou & Tan), in table order. GP-UCB on privatised reports is
/// the plain baseline, not one of the paper's LDP algorithms, so it keeps its name.
pub const ZHOU_TAN_ALGORITHMS: [AlgorithmSpec; 4] = [
    AlgorithmSpec {
        name: "GP-UCB",
        private_name: "GP-UCB",
        build: |p, c, _| Ok(Box::new(gp_ucb::GpUcb::baseline(p, c)?)),
    },
    AlgorithmSpec {
        name: "TGP-UCB",
        private_name: "LDP-TGP-UCB",
        build: |p, c, _| Ok(Box::new(gp_ucb::GpUcb::tgp_ucb(p, c)?)),
    },
    AlgorithmSpec {
        name: "ATA-GP-UCB",
        private_name: "LDP-ATA-GP-UCB",
        build: |p, c, seed| Ok(Box::new(ata::AtaGpUcb::new(p, ata::AtaParams::with_constants(c), seed)?)),
    },
    AlgorithmSpec {
        name: "MoMA-GP-UCB",
        private_name: "LDP-MoMA-GP-UCB",
        build: |p, c, seed| Ok(Box::new(moma::MomaGpUcb::new(p, moma::MomaParams::with_constants(c), seed)?)),
    },
];

/// UCB1 ([`ucb1`]): the simple baseline shown beside the GP learners.
pub const UCB1: AlgorithmSpec =
    AlgorithmSpec { name: "UCB1", private_name: "UCB1", build: |p, _, _| Ok(Box::new(ucb1::Ucb1::new(p)?)) };

/// The learners of every Zhou & Tan experiment: the four of Zhou & Tan and the [`UCB1`] baseline.
pub const GP_EXPERIMENT_ALGORITHMS: [AlgorithmSpec; 5] =
    [ZHOU_TAN_ALGORITHMS[0], ZHOU_TAN_ALGORITHMS[1], ZHOU_TAN_ALGORITHMS[2], ZHOU_TAN_ALGORITHMS[3], UCB1];

/// Index of the largest `score(i)` for i in 0..n (first on ties; NaN scores lose): `ldp-core`'s.
pub use ldp_core::bandit::argmax;

/// The UCB arm argmax μ(x) + β σ(x), σ = √(`variances`); ties go to the arm first in `order`
/// (the lowest index without one, or if `order` is not a permutation of the arms); NaN scores
/// lose.
pub(crate) fn ucb_arm(
    means: &DVector<f64>,
    variances: &DVector<f64>,
    beta: f64,
    order: Option<&[usize]>,
) -> usize {
    let score = |i: usize| means[i] + beta * variances[i].sqrt();
    match order {
        Some(order) if is_permutation(order, means.len()) => order[argmax(order.len(), |j| score(order[j]))],
        _ => argmax(means.len(), score),
    }
}

/// Whether `order` holds each of `0..n` exactly once.
fn is_permutation(order: &[usize], n: usize) -> bool {
    let mut seen = vec![false; n];
    order.len() == n && order.iter().all(|&i| i < n && !std::mem::replace(&mut seen[i], true))
}

/// A random order of `arms` arms (Fisher–Yates from `seed`), for
/// [`Problem::tie_order`](crate::policy::Problem::tie_order).
pub fn tie_order(arms: usize, seed: u64) -> Vec<usize> {
    use rand::RngExt;
    use rand_core::SeedableRng;
    let mut rng = crate::env::SimRng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..arms).collect();
    for i in (1..arms).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_the_arm_first_in_the_order_and_a_bad_order_is_ignored() {
        let means = DVector::from_vec(vec![0.5, 0.7, 0.7, 0.7, 0.1]);
        let variances = DVector::from_element(5, 0.04);
        assert_eq!(ucb_arm(&means, &variances, 1.0, None), 1);
        assert_eq!(ucb_arm(&means, &variances, 1.0, Some(&[4, 3, 0, 2, 1])), 3);
        // A strictly better arm wins whatever the order.
        let better = DVector::from_vec(vec![0.5, 0.7, 0.7, 0.7, 0.9]);
        assert_eq!(ucb_arm(&better, &variances, 1.0, Some(&[3, 2, 1, 0, 4])), 4);
        // Not a permutation (a repeat, a missing arm, an arm out of range, a short order):
        // first on ties, as without one.
        for bad in [&[3, 3, 0, 2, 1][..], &[3, 2, 0, 1, 5], &[3, 2]] {
            assert_eq!(ucb_arm(&better, &variances, 1.0, Some(bad)), 4);
            assert_eq!(ucb_arm(&means, &variances, 1.0, Some(bad)), 1);
        }
    }

    #[test]
    fn the_tie_order_is_a_seeded_permutation() {
        let order = tie_order(41, 9);
        assert!(is_permutation(&order, 41));
        assert_eq!(order, tie_order(41, 9));
        assert_ne!(order, tie_order(41, 10));
        assert_ne!(order, (0..41).collect::<Vec<_>>());
        // Every arm comes first about equally often over seeds (41 arms, 4100 seeds: 100 each;
        // the smallest or largest of 41 Binomial(4100, 1/41) counts is beyond 5 sd, outside 50..=150, with
        // probability about 2·10⁻⁵).
        let mut first = [0u32; 41];
        for seed in 0..4100 {
            first[tie_order(41, seed)[0]] += 1;
        }
        assert!(first.iter().all(|&c| (50..=150).contains(&c)), "{first:?}");
    }
}
