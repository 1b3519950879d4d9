//! The scalar tree with a fixed bound B.

use rand_core::Rng;

use super::{BinaryTree, Kind, TreeInsertError, check_insert, node_epsilon, sealed};
use crate::mechanism::Release;
use crate::sampler::DiscreteLaplace;

/// The kind of [`Tree`]: scalars, each clamped to the fixed `[−B, B]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scalar;

impl sealed::Sealed for Scalar {}

impl Kind for Scalar {
    const NAME: &'static str = "Tree";
    const START: Self = Self;
}

/// The binary mechanism for a scalar stream with a fixed bound B: ε-DP release of all prefix
/// sums of a stream of at most T ≤ `2^L − 1` elements, each clamped to `[−B, B]`.
///
/// Node noise: discrete Laplace of scale `2M·depth/ε` grid steps (`M·2^k ≈ B`), i.e. the
/// `Lap(2B/ε')`, `ε' = ε/depth`, of Tao et al. Alg. 2 with `B_t = B`. See the module docs for the
/// construction and the privacy argument; [`BinaryTree`] for what every tree has.
pub type Tree<const L: usize> = BinaryTree<Scalar, 1, L>;

impl<const L: usize> BinaryTree<Scalar, 1, L> {
    /// Insert σ(t) for the next t and release Ŝ(t).
    ///
    /// The value is clamped to `[−B, B]` and rounded to the grid. NaN/±∞ is refused
    /// ([`TreeInsertError::NonFiniteValue`]); after T elements every insert is refused
    /// ([`TreeInsertError::HorizonReached`]). A refused insert changes nothing.
    pub fn insert<R: Rng + ?Sized>(&mut self, value: f64, rng: &mut R) -> Result<Release, TreeInsertError> {
        self.insert_with(value, |_, noise| noise.sample(rng))
    }

    /// [`Tree::insert`] with the node noise drawn by `noise(level, distribution)`.
    pub(super) fn insert_with(
        &mut self,
        value: f64,
        noise: impl FnMut(usize, DiscreteLaplace) -> i64,
    ) -> Result<Release, TreeInsertError> {
        check_insert(self.time, self.horizon, value.is_finite())?;
        let b = self.grid.bound();
        let index = self.grid.index(value.clamp(-b, b));
        let [sum] = self.push(&[index], self.noise, noise)?;
        Ok(Release { index: sum, grid_log2: self.grid.log2() })
    }

    /// Ŝ(t) for the current t again (no new noise), or `None` before the first insert.
    pub fn last_release(&self) -> Option<Release> {
        self.last_sums().map(|[index]| Release { index, grid_log2: self.grid.log2() })
    }

    /// The ε of one node, `ε'_eff = 2M·den/num < ε/depth`; a single release is ε'_eff-DP.
    pub fn epsilon_per_node(&self) -> f64 {
        node_epsilon(2 * self.grid.max_index(), self.noise)
    }

    /// The bound B.
    pub fn bound(&self) -> f64 {
        self.grid.bound()
    }

    /// `M·2^k ≥ B`: the bound the noise is calibrated to, after rounding B up to the grid.
    pub fn effective_bound(&self) -> f64 {
        self.grid.value(self.grid.max_index())
    }
}
