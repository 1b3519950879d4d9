//! The adaptive tree of Tao et al. Alg. 2: a public, non-decreasing bound B_t per element.

use rand_core::Rng;

use super::{BinaryTree, Kind, TreeInsertError, check_insert, node_epsilon, node_noise, sealed};
use crate::mechanism::Release;
use crate::sampler::DiscreteLaplace;

/// The kind of [`AdaptiveTree`], and its state: the last bound B_t and its node noise, and the
/// worst node's ε'_eff so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adaptive {
    /// B_t of the last insert (0 before the first).
    last_bound: f64,
    /// The node noise of the last insert (`None` before the first: the noise at B_max).
    last_noise: Option<DiscreteLaplace>,
    /// The largest ε'_eff of any node closed so far.
    worst_node_epsilon: f64,
}

impl sealed::Sealed for Adaptive {}

impl Kind for Adaptive {
    const NAME: &'static str = "AdaptiveTree";
    const BOUND_NAME: &'static str = "max_bound";
    const START: Self = Self { last_bound: 0.0, last_noise: None, worst_node_epsilon: 0.0 };
    const NO_BOUND_BEFORE_FIRST: bool = true;

    fn node_noise(&self, at_max: DiscreteLaplace) -> DiscreteLaplace {
        self.last_noise.unwrap_or(at_max)
    }

    fn worst_node_epsilon(&self, _at_max: f64) -> f64 {
        self.worst_node_epsilon
    }
}

/// The adaptive tree of Tao et al. Alg. 2: element t comes with a public bound B_t,
/// **non-decreasing** in t, is clamped to `[−B_t, B_t]`, and the node closed at t gets noise
/// `Lap(2B_t/ε')`, `ε' = ε/depth` (discrete: scale `2M_t·depth/ε` steps, `M_t = ⌈B_t/2^k⌉`).
///
/// The grid `2^k` is public and fixed for the whole stream, so the tree is built with a public
/// ceiling `B_max ≥ every B_t` (for Tao et al. Alg. 1, `B_max = B_T`, line 4); the default grid is
/// `2^(⌊log₂ B_max⌋ − 12)`. A loose ceiling costs only grid resolution for small B_t. With
/// `B_t = B` for all t this is exactly [`Tree`](super::Tree) (same releases for the same random
/// bits).
///
/// Seed 004 Alg. 1 truncates to zero, `x·1{|x| ≤ B_t}`, before inserting; that (or any map
/// into `[−B_t, B_t]`) can be done by the caller, and the tree's own clamp is then a no-op.
/// B_t must not depend on the private data (see the module docs).
///
/// ```
/// use ldp_core::tree::{AdaptiveTree, TreeInsertError};
/// use ldp_core::{Bound, Epsilon, ParamError};
/// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
/// let e = Epsilon::new(1.0)?;
/// let mut tree = AdaptiveTree::<10>::new(e, Bound::new(10.0)?, 1000)?;
/// let mut rng = ChaCha20Rng::seed_from_u64(1);
/// assert!(tree.insert(0.5, 1.0, &mut rng).is_ok());
/// assert!(tree.insert(3.0, 2.5, &mut rng).is_ok());
/// assert_eq!(tree.insert(0.1, 2.0, &mut rng), Err(TreeInsertError::BoundDecreased));
/// assert_eq!(tree.insert(0.1, 11.0, &mut rng), Err(TreeInsertError::BoundAboveMax));
/// assert_eq!(AdaptiveTree::<10>::new(e, Bound::new(0.0)?, 1000).err(), Some(ParamError::BoundNotPositive));
/// # Ok::<(), ParamError>(())
/// ```
pub type AdaptiveTree<const L: usize> = BinaryTree<Adaptive, 1, L>;

impl<const L: usize> BinaryTree<Adaptive, 1, L> {
    /// Insert σ(t) with its bound B_t and release Ŝ(t) (Tao et al. Alg. 2, lines 6–13).
    ///
    /// Refused, changing nothing: after T elements; a NaN/±∞ value; B_t not finite, not
    /// positive, above B_max, or below the previous B_t ([`TreeInsertError::BoundDecreased`]).
    pub fn insert<R: Rng + ?Sized>(
        &mut self,
        value: f64,
        bound: f64,
        rng: &mut R,
    ) -> Result<Release, TreeInsertError> {
        self.insert_with(value, bound, |_, noise| noise.sample(rng))
    }

    /// [`AdaptiveTree::insert`] with the node noise drawn by `noise(level, distribution)`.
    pub(super) fn insert_with(
        &mut self,
        value: f64,
        bound: f64,
        noise: impl FnMut(usize, DiscreteLaplace) -> i64,
    ) -> Result<Release, TreeInsertError> {
        check_insert(self.time, self.horizon, value.is_finite())?;
        if !bound.is_finite() {
            return Err(TreeInsertError::BoundNotFinite);
        }
        if bound <= 0.0 {
            return Err(TreeInsertError::BoundNotPositive);
        }
        if bound > self.grid.bound() {
            return Err(TreeInsertError::BoundAboveMax);
        }
        if bound < self.kind.last_bound {
            return Err(TreeInsertError::BoundDecreased);
        }
        let max_index = self.grid.steps(bound);
        // Cannot fail: M_t ≤ M_max, whose scale was accepted at construction. Falling back to the
        // B_max noise (more noise) keeps the node private even so.
        let dist = node_noise(max_index, 1, self.depth, self.epsilon).unwrap_or(self.noise);
        let index = self.grid.index_within(value.clamp(-bound, bound), max_index);
        let [sum] = self.push(&[index], dist, noise)?;
        let kind = &mut self.kind;
        kind.last_bound = bound;
        kind.last_noise = Some(dist);
        kind.worst_node_epsilon = kind.worst_node_epsilon.max(node_epsilon(2 * max_index, dist));
        Ok(Release { index: sum, grid_log2: self.grid.log2() })
    }

    /// Ŝ(t) for the current t again (no new noise), or `None` before the first insert.
    pub fn last_release(&self) -> Option<Release> {
        self.last_sums().map(|[index]| Release { index, grid_log2: self.grid.log2() })
    }

    /// The ceiling B_max.
    pub fn max_bound(&self) -> f64 {
        self.grid.bound()
    }

    /// The last bound B_t, or `None` before the first insert; the next must be at least this.
    pub fn last_bound(&self) -> Option<f64> {
        (self.time > 0).then_some(self.kind.last_bound)
    }
}
