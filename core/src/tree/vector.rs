//! The vector tree: loss vectors of Agarwal & Singh Alg. 2, ℓ1 sensitivity.

use rand_core::Rng;

use super::{BinaryTree, Kind, TreeInsertError, check_insert, sealed};
use crate::mechanism::Release;
use crate::sampler::DiscreteLaplace;

/// The kind of [`VectorTree`]: `D`-vectors, each coordinate clamped to the fixed `[−B, B]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vector;

impl sealed::Sealed for Vector {}

impl Kind for Vector {
    const NAME: &'static str = "VectorTree";
    const START: Self = Self;
}

/// The binary mechanism for a stream of vectors `[f64; D]` (loss vectors, Agarwal & Singh Alg. 2),
/// each coordinate clamped to `[−B, B]`, with independent per-coordinate node noise.
///
/// **Sensitivity in ℓ1.** Changing one vector moves each coordinate's index by at most 2M, so
/// a node moves by at most `2·D·M` steps in ℓ1 (`2·D·B` in value units: the ℓ1 diameter
/// ‖𝒴‖₁ of the box, Agarwal & Singh Lemma 3.3). Per-coordinate discrete Laplace noise of scale
/// `2·D·M·depth/ε` steps then has pmf ratio at most `exp(2DM·den/num) = exp(ε'_eff)`,
/// `ε'_eff < ε/depth`, and the whole sequence is ε-DP as in the module docs. (Noise calibrated
/// to one coordinate, `2M·depth/ε`, would give only D·ε.) Each coordinate's release is a scalar
/// tree release with bound `D·B`, so [`BinaryTree::error_bound`] holds per coordinate.
///
/// ```
/// use ldp_core::tree::VectorTree;
/// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
/// let (e, b) = (ldp_core::Epsilon::new(1.0)?, ldp_core::Bound::new(1.0)?);
/// let mut tree = VectorTree::<3, 8>::new(e, b, 200)?;
/// // ℓ1 sensitivity 2·D·B: the per-coordinate node scale is D times the scalar one.
/// assert!((tree.node_noise_scale() / (2.0 * 3.0 * 1.0 * 8.0 / 1.0) - 1.0).abs() < 1e-3);
/// let mut rng = ChaCha20Rng::seed_from_u64(1);
/// let r = tree.insert(&[0.1, -0.5, 2.0], &mut rng).map_err(|_| ldp_core::ParamError::HorizonZero)?;
/// assert_eq!(r.values().len(), 3);
/// assert_eq!(VectorTree::<2, 4>::with_grid(e, b, 15, -1)?.max_index(), 2);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub type VectorTree<const D: usize, const L: usize> = BinaryTree<Vector, D, L>;

/// One privatised prefix sum of a [`VectorTree`]: a grid index per coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct VectorRelease<const D: usize> {
    /// Grid indices, each within ±2^52.
    pub indices: [i64; D],
    /// The public grid exponent k.
    pub grid_log2: i32,
}

impl<const D: usize> VectorRelease<D> {
    /// The released values `indices[d]·2^k` (exact).
    pub fn values(&self) -> [f64; D] {
        self.indices.map(|i| libm::scalbn(i as f64, self.grid_log2))
    }

    /// Coordinate `d` as a scalar [`Release`], or `None` if `d ≥ D`.
    pub fn get(&self, d: usize) -> Option<Release> {
        self.indices.get(d).map(|&index| Release { index, grid_log2: self.grid_log2 })
    }
}

impl<const D: usize, const L: usize> BinaryTree<Vector, D, L> {
    /// Insert the vector σ(t) and release Ŝ(t). Refused, changing nothing, after T elements or
    /// if any coordinate is NaN/±∞.
    pub fn insert<R: Rng + ?Sized>(
        &mut self,
        value: &[f64; D],
        rng: &mut R,
    ) -> Result<VectorRelease<D>, TreeInsertError> {
        self.insert_with(value, |_, noise| noise.sample(rng))
    }

    /// [`VectorTree::insert`] with the node noise drawn by `noise(level, distribution)`.
    pub(super) fn insert_with(
        &mut self,
        value: &[f64; D],
        noise: impl FnMut(usize, DiscreteLaplace) -> i64,
    ) -> Result<VectorRelease<D>, TreeInsertError> {
        check_insert(self.time, self.horizon, value.iter().all(|v| v.is_finite()))?;
        let grid = self.grid;
        let indices = value.map(|v| grid.index(v.clamp(-grid.bound(), grid.bound())));
        let sums = self.push(&indices, self.noise, noise)?;
        Ok(VectorRelease { indices: sums, grid_log2: grid.log2() })
    }

    /// Ŝ(t) for the current t again (no new noise), or `None` before the first insert.
    pub fn last_release(&self) -> Option<VectorRelease<D>> {
        self.last_sums().map(|indices| VectorRelease { indices, grid_log2: self.grid.log2() })
    }

    /// The per-coordinate bound B.
    pub fn bound(&self) -> f64 {
        self.grid.bound()
    }
}
