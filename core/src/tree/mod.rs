//! Tree-based aggregation (the binary mechanism) for continual release of private prefix sums —
//! SPEC §1.6; Dwork, Naor, Pitassi & Rothblum (STOC 2010), Chan, Shi & Song (TISSEC 2011),
//! Agarwal & Singh Alg. 2 (vector losses, ℓ1 sensitivity), Tao et al. Alg. 2 (adaptive bound).
//!
//! A stream σ(1), σ(2), …, σ(T) arrives one element at a time; after each element the tree
//! releases a noisy prefix sum Ŝ(t) ≈ S(t) = Σ_{i≤t} σ(i), in fixed memory and without alloc.
//!
//! # The binary mechanism (Tao et al. Alg. 2)
//!
//! Write t in binary, t = Σ_j Bin_j(t)·2^j. The p-sum α_j^t = Σ[t − 2^j + 1, t] covers the 2^j
//! elements ending at t (Tao et al. Definition 4). At time t, with i = min{j : Bin_j(t) = 1}:
//!
//! ```text
//! α_i ← Σ_{j<i} α_j + σ(t),     α_j, α̂_j ← 0 for j < i,     α̂_i ← α_i + noise,
//! Ŝ(t) = Σ_{j : Bin_j(t) = 1} α̂_j.
//! ```
//!
//! So one node is closed (and one noise value drawn) per element, a release is the sum of
//! popcount(t) ≤ depth noisy nodes, and the state is one exact and one noisy p-sum per level.
//! A horizon T needs `depth(T) = ⌊log₂ T⌋ + 1` levels ([`levels_for`]): the top level is used
//! at t = 2^⌊log₂ T⌋, so T = 8 = 1000₂ needs 4 levels, not 3. A tree with `L` levels in its type
//! therefore holds any horizon `1 ≤ T ≤ 2^L − 1` ([`Tree::CAPACITY`]); its size is fixed by `L`
//! and does not depend on T. `1 ≤ L ≤` [`MAX_LEVELS`] ` = 32` is checked at compile time.
//!
//! # Floating-point safety
//!
//! No continuous noise is ever added (see [`crate::mechanism`] for why: Mironov, CCS 2012).
//! Every inserted value is clamped to `[−B, B]` and rounded to the nearest index of the public
//! grid `g = 2^k`, giving an integer `i ∈ [−M, M]`, `M = ⌈B/g⌉`; p-sums are exact `i64` sums of
//! indices; each node gets integer noise from the exact [`DiscreteLaplace`] sampler; a release is
//! the integer `Σ α̂_j` (clamped to ±2^52, which is post-processing) and its value `index·2^k` is
//! exact in `f64`. With the default grid `k = ⌊log₂ B⌋ − 12` ([`DEFAULT_GRID_BITS`](crate::grid::DEFAULT_GRID_BITS)), so `M·g`
//! exceeds `B` by at most a factor `1 + 2^-12`. Caps (`M ≤ 2^20`, `T < 2^32`) keep every exact
//! p-sum below 2^52 in magnitude: no overflow and nothing inexact anywhere.
//!
//! # Privacy (event-level ε-DP of the whole release sequence)
//!
//! Neighbouring streams differ in one element σ(s), each version within its bound. With
//! `depth = ⌊log₂ T⌋ + 1`:
//!
//! 1. **Each element is in at most `depth` noisy nodes.** The nodes closed at level j cover the
//!    disjoint blocks [m·2^j + 1, (m+1)·2^j] that end by T, so σ(s) lies in at most one node per
//!    level, and there are `depth` levels. The bound is attained: σ(1) lies in [1, 1], [1, 2],
//!    [1, 4], …, [1, 2^⌊log₂ T⌋].
//! 2. **Each node is ε'-DP with ε' < ε/depth.** A node's index sum changes by at most
//!    `Δ = 2M` when one element changes (ℓ1 sensitivity `2·D·M` for a `D`-vector, see
//!    [`VectorTree`]). The node noise is discrete Laplace with scale `num/den` grid steps,
//!    `den = 1024` ([`SCALE_DENOMINATOR`]) and `num = ⌊Δ·den·depth/ε⌋ + 1`, whose pmf ratio
//!    under a shift of Δ is at most `exp(Δ·den/num) = exp(ε'_eff)`, `ε'_eff < ε/depth`.
//! 3. **Composition.** Node noises are independent, the other nodes' distributions do not
//!    change, and the whole sequence Ŝ(1), …, Ŝ(T) is a function of the noisy nodes
//!    (post-processing). Basic composition (which also holds when later elements are chosen
//!    adaptively from earlier releases) gives `depth·ε'_eff < ε` ([`Tree::epsilon_effective`]).
//!
//! A single release Ŝ(t) uses each element in exactly one of its nodes (the dyadic pieces of
//! [1, t] are disjoint), so one release alone is ε'-DP; it is the sequence that costs ε.
//!
//! **Why not the paper's ε' = ε/log T.** Seed 004 Alg. 2 line 4 sets ε' = ε/log T. Read as
//! log₂ T that is wrong when T is a power of two (T = 2^m puts σ(1) in m + 1 nodes, so the tree
//! would be (1 + 1/m)·ε-DP) and undefined for T = 1. For every other T, ⌈log₂ T⌉ = depth. We use
//! `ε' = ε/depth = ε/(⌊log₂ T⌋ + 1) = ε/⌈log₂(T + 1)⌉`, which is exact in every case
//! (`tests/tree_privacy.rs` catches the log₂ T version at T = 4).
//!
//! **Adaptive bound (Tao et al. Alg. 2, [`AdaptiveTree`]).** Element t is clamped to `[−B_t, B_t]`
//! with B_t non-decreasing, and the node closed at t gets noise of scale `2M_t·depth/ε` steps
//! (the paper's `Lap(2B_t/ε')`). That node holds elements s ≤ t, whose indices lie in
//! `[−M_s, M_s] ⊆ [−M_t, M_t]`, so its sensitivity is at most 2M_t and step 2 holds node by
//! node. This needs B_t non-decreasing (a decreasing bound is refused) and **public**: B_t may
//! depend on t and on earlier releases, never on the private data itself.
//!
//! The guarantee is central DP for the holder of the stream (e.g. the device summing its own
//! readings, or a trusted aggregator); the tree's memory holds exact partial sums and is as
//! secret as the raw data. Its `Debug` output shows only the public configuration.
//!
//! # Accuracy (Tao et al. Lemma 2)
//!
//! See [`lemma2_error_bound`] for the paper's bound, its log bases and the range of δ where it
//! holds, and [`Tree::error_bound`] for the same bound stated for these trees.
//!
//! # Panics
//!
//! Never, on any input: full trees, bad bounds and non-finite values are errors, and the
//! arithmetic is saturating or provably in range.

use core::fmt;

use crate::error::ParamError;
use crate::grid::Grid;
use crate::mechanism::SCALE_DENOMINATOR;
use crate::params::{Bound, Epsilon, ErrorBoundDelta};
use crate::sampler::{DiscreteLaplace, MAX_SCALE_NUMERATOR};

mod adaptive;
pub(crate) mod psums;
mod scalar;
mod vector;

use psums::PSums;

pub use adaptive::{Adaptive, AdaptiveTree};
pub use scalar::{Scalar, Tree};
pub use vector::{Vector, VectorRelease, VectorTree};

/// The largest number of levels a tree type may have: horizons up to 2^32 − 1.
pub const MAX_LEVELS: usize = 32;
/// The largest vector dimension of a [`VectorTree`].
pub const MAX_DIMENSION: usize = 1 << 16;
/// The largest δ for which [`lemma2_error_bound`] is claimed (see there):
/// [`ErrorBoundDelta::MAX`].
pub const MAX_LEMMA2_DELTA: f64 = ErrorBoundDelta::MAX;

/// The number of tree levels a horizon needs: `⌊log₂ T⌋ + 1 = ⌈log₂(T + 1)⌉` for T ≥ 1 (0 for
/// T = 0). This is the `depth` of the privacy argument and the smallest `L` whose tree holds T.
///
/// ```
/// use ldp_core::tree::{levels_for, Tree};
/// assert_eq!(levels_for(1), 1);
/// assert_eq!(levels_for(7), 3);
/// assert_eq!(levels_for(8), 4); // a power of two needs one more level
/// // Size a tree for a known horizon at compile time:
/// let (e, b) = (ldp_core::Epsilon::new(1.0)?, ldp_core::Bound::new(1.0)?);
/// let tree = Tree::<{ levels_for(1000) }>::new(e, b, 1000)?;
/// assert_eq!(tree.depth(), 10);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub const fn levels_for(horizon: u64) -> usize {
    (u64::BITS - horizon.leading_zeros()) as usize
}

/// The largest horizon a tree with `levels` levels holds: `2^levels − 1`.
const fn capacity(levels: usize) -> u64 {
    if levels >= 64 { u64::MAX } else { (1u64 << levels) - 1 }
}

/// An element could not be inserted. The tree is unchanged and nothing was released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TreeInsertError {
    /// The tree already holds T elements.
    HorizonReached,
    /// The value (or a coordinate of it) was NaN or ±∞. It is never clamped or passed through.
    NonFiniteValue,
    /// The adaptive bound B_t was NaN or infinite.
    BoundNotFinite,
    /// The adaptive bound B_t was zero or negative.
    BoundNotPositive,
    /// The adaptive bound B_t exceeds the ceiling the tree was built with.
    BoundAboveMax,
    /// The adaptive bound B_t is smaller than the previous one (Tao et al. Alg. 2 needs B_t
    /// non-decreasing; otherwise an old element could exceed a new node's sensitivity).
    BoundDecreased,
}

impl fmt::Display for TreeInsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::HorizonReached => "the tree already holds T elements: nothing was inserted",
            Self::NonFiniteValue => "the value is NaN or infinite: nothing was inserted",
            Self::BoundNotFinite => "the bound is NaN or infinite: nothing was inserted",
            Self::BoundNotPositive => "the bound is zero or negative: nothing was inserted",
            Self::BoundAboveMax => "the bound exceeds the tree's maximum bound: nothing was inserted",
            Self::BoundDecreased => {
                "the bound is smaller than the previous one (it must be non-decreasing): nothing was inserted"
            }
        })
    }
}

impl core::error::Error for TreeInsertError {}

/// The paper's high-probability error bound for the (adaptive) tree, Tao et al. Lemma 2 (eq. 3):
///
/// ```text
/// |Ŝ(t) − S(t)| ≤ (2B_t/ε) · log^{1.5} T · log(1/δ)     with probability ≥ 1 − δ,
/// ```
///
/// computed with **`log T = depth = ⌊log₂ T⌋ + 1`** (the same "log T" as in ε' = ε/log T, see
/// the module docs; `log₂ T` itself gives 0 at T = 1, which is false) and **`log(1/δ) =
/// log₂(1/δ)`**, for `δ ∈ (0, 1/2]` (an [`ErrorBoundDelta`], validated when it is made).
///
/// The paper leaves the bases open (the lemma is Chan et al.'s O(·) bound with constants). With
/// Laplace noise of scale `b = 2B·depth/ε` on each of `k ≤ depth` nodes, the error in units of b
/// is a sum of k unit Laplaces, and the bound is `√depth·log₂(1/δ)` of those units. The exact
/// tail of that sum (a finite gamma series), computed on a grid of δ for every depth ≤ 64 (in
/// `tests/tree_accuracy.rs`, which checks every figure of this paragraph), gives
/// `P(|error| > bound) ≤ 0.955·δ` at δ = 1/2 (worst at k = depth, tending to the Gaussian limit
/// 0.959·δ), `≤ 0.87·δ` at δ = 0.4 and `δ^{1/ln 2} < δ` for δ ≤ 0.1 (worst at k = 1). The
/// lemma is **false** outside this reading: for δ → 1 the bound tends to 0 (it fails above
/// δ ≈ 0.6); with natural logs (`ln(1/δ)`) it fails for every δ above about 0.09 (at depth 7
/// `P ≈ 1.21·δ` at δ = 1/2 and `1.24·δ` at δ = 1/4, which sampled trees show too); and
/// with ε' = ε/depth but `log₂ T` in the bound it fails for small T (T = 1: a zero bound; T = 2,
/// 3 at δ = 1/2). Smaller bounds on earlier nodes (the adaptive tree) and fewer noise terms
/// (popcount(t) < depth) only shrink the error, because a sum of Laplaces is a Gaussian scale
/// mixture, whose tails grow with each scale.
///
/// For the trees of this module use [`Tree::error_bound`] and friends, which apply this to the
/// actual node scale and add `depth·2^k` for the discreteness of the noise.
///
/// ```
/// use ldp_core::tree::lemma2_error_bound;
/// use ldp_core::{Bound, Epsilon, ErrorBoundDelta, ParamError};
/// // B = 1, ε = 1, T = 1000 (depth 10), δ = 1/8: 2·10^1.5·3.
/// let (b1, e1) = (Bound::new(1.0)?, Epsilon::new(1.0)?);
/// let b = lemma2_error_bound(b1, e1, 1000, ErrorBoundDelta::new(0.125)?)?;
/// assert!((b - 2.0 * 10f64.powf(1.5) * 3.0).abs() < 1e-9);
/// assert_eq!(ErrorBoundDelta::new(0.9), Err(ParamError::ErrorBoundDeltaOutOfRange));
/// assert_eq!(lemma2_error_bound(b1, e1, 0, ErrorBoundDelta::new(0.1)?), Err(ParamError::HorizonZero));
/// # Ok::<(), ParamError>(())
/// ```
pub fn lemma2_error_bound(
    bound: Bound,
    epsilon: Epsilon,
    horizon: u64,
    delta: ErrorBoundDelta,
) -> Result<f64, ParamError> {
    let bound = bound.get();
    if bound == 0.0 {
        return Err(ParamError::BoundNotPositive);
    }
    if horizon == 0 {
        return Err(ParamError::HorizonZero);
    }
    let depth = levels_for(horizon) as f64;
    Ok(2.0 * bound / epsilon.get() * depth * libm::sqrt(depth) * delta.log2_inverse())
}

/// Lemma 2 for a tree: node scale `b` (value units), `depth` levels, grid `2^k`.
fn tree_error_bound(node_scale: f64, depth: usize, grid_log2: i32, delta: ErrorBoundDelta) -> f64 {
    let depth_f = depth as f64;
    node_scale * libm::sqrt(depth_f) * delta.log2_inverse() + libm::scalbn(depth_f, grid_log2)
}

// ---------------------------------------------------------------------------------------------
// Parameter validation and the grid, all `const`.

/// `?` for `const fn`.
macro_rules! ctry {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Err(e),
        }
    };
}

/// Checks `1 ≤ T ≤ 2^levels − 1` and returns `depth(T)`.
const fn check_horizon(horizon: u64, levels: usize) -> Result<usize, ParamError> {
    if horizon == 0 {
        Err(ParamError::HorizonZero)
    } else if horizon > capacity(levels) {
        Err(ParamError::HorizonAboveCapacity)
    } else {
        Ok(levels_for(horizon))
    }
}

/// The validation shared by every tree (ε and B are valid by type), in the order of
/// [`ParamError`]'s variants: B > 0 and the grid, then T against `levels`, then the node noise
/// for a `dim`-vector. Returns the grid, `depth(T)` and the node noise at B.
const fn configure(
    epsilon: Epsilon,
    bound: Bound,
    horizon: u64,
    grid_log2: Option<i32>,
    levels: usize,
    dim: usize,
) -> Result<(Grid, usize, DiscreteLaplace), ParamError> {
    let grid = match Grid::new(bound.get(), grid_log2) {
        Ok(grid) => grid,
        Err(e) => return Err(ParamError::of_bound(e)),
    };
    let depth = ctry!(check_horizon(horizon, levels));
    let noise = ctry!(node_noise(grid.max_index(), dim, depth, epsilon));
    Ok((grid, depth, noise))
}

/// The refusals every insert shares: a full tree, then a non-finite value.
const fn check_insert(time: u64, horizon: u64, finite: bool) -> Result<(), TreeInsertError> {
    if time >= horizon {
        Err(TreeInsertError::HorizonReached)
    } else if !finite {
        Err(TreeInsertError::NonFiniteValue)
    } else {
        Ok(())
    }
}

/// The node noise: discrete Laplace of scale `num/den` steps, `den` = [`SCALE_DENOMINATOR`],
/// `num = ⌊2·D·M·depth·den/ε⌋ + 1 > 2·D·M·depth·den/ε`, so the node is ε'_eff-DP with
/// `ε'_eff = 2·D·M·den/num < ε/depth`.
const fn node_noise(
    max_index: i64,
    dim: usize,
    depth: usize,
    epsilon: Epsilon,
) -> Result<DiscreteLaplace, ParamError> {
    // ≤ 2·2^16·2^20·32·2^10 = 2^52: an exact integer, and exact as f64.
    let numerator = 2 * dim as u64 * max_index as u64 * depth as u64 * SCALE_DENOMINATOR;
    // floor(fl(q)) + 1 > q: if q ≥ n + 1 then fl(q) ≥ n + 1 (rounding is monotone and n + 1 is
    // representable), so ⌊fl(q)⌋ = n implies q < n + 1.
    let quotient = numerator as f64 / epsilon.get();
    if quotient >= MAX_SCALE_NUMERATOR as f64 {
        return Err(ParamError::EpsilonTooSmall);
    }
    match DiscreteLaplace::new(quotient as u64 + 1, SCALE_DENOMINATOR) {
        Some(noise) => Ok(noise),
        None => Err(ParamError::EpsilonTooSmall),
    }
}

/// `Δ·den/num` for a sensitivity of Δ grid steps.
fn node_epsilon(sensitivity: i64, noise: DiscreteLaplace) -> f64 {
    let (num, den) = noise.scale_fraction();
    sensitivity as f64 * den as f64 / num as f64
}

// ---------------------------------------------------------------------------------------------
// The tree, written once for every kind.

mod sealed {
    pub trait Sealed {}
}

/// What a tree sums and how its elements are bounded: [`Scalar`] (a fixed bound B), [`Vector`]
/// (a fixed bound B per coordinate, ℓ1 sensitivity) or [`Adaptive`] (a public bound B_t per
/// element, non-decreasing). Sealed: the privacy argument of the module docs covers these three.
pub trait Kind: sealed::Sealed + Copy {
    /// The type's name in `Debug` output.
    const NAME: &'static str;
    /// What the grid's bound is, in `Debug` output (`bound`, or `max_bound` for B_max).
    const BOUND_NAME: &'static str = "bound";
    /// The state before the first element.
    const START: Self;
    /// Whether [`BinaryTree::error_bound`] is 0 before the first element (no node yet).
    const NO_BOUND_BEFORE_FIRST: bool = false;

    /// The noise of the nodes closed now, given the node noise at B.
    fn node_noise(&self, at_bound: DiscreteLaplace) -> DiscreteLaplace {
        at_bound
    }

    /// The largest ε'_eff of a node so far, given a node's ε'_eff at B.
    fn worst_node_epsilon(&self, at_bound: f64) -> f64 {
        at_bound
    }
}

/// The binary mechanism over a stream of `D`-vectors with `L` levels: what every tree of the
/// family shares (validation, the grid, the p-sums, the clock, the privacy claim, the error
/// bound). Use it as [`Tree`], [`VectorTree`] or [`AdaptiveTree`]; `K` says which.
///
/// Memory: `16·D·L` bytes of p-sums plus a few words, independent of T. `L` outside
/// `1..=`[`MAX_LEVELS`] or `D` outside `1..=`[`MAX_DIMENSION`] does not compile.
pub struct BinaryTree<K: Kind, const D: usize, const L: usize> {
    sums: PSums<D, L>,
    time: u64,
    horizon: u64,
    depth: usize,
    epsilon: Epsilon,
    grid: Grid,
    /// The node noise at the bound B (B_max for the adaptive tree: the largest any node gets).
    noise: DiscreteLaplace,
    kind: K,
}

impl<K: Kind, const D: usize, const L: usize> BinaryTree<K, D, L> {
    /// The largest horizon this tree type holds: `2^L − 1`.
    pub const CAPACITY: u64 = capacity(L);

    /// An ε-DP tree for horizon T with values clamped to `[−B, B]` (for the adaptive tree: bounds
    /// up to B_max = `bound`), on the default grid `2^(⌊log₂ B⌋ − 12)`.
    ///
    /// ε and B are validated by their types ([`Epsilon::new`], [`Bound::new`]). Fails with the
    /// [`ParamError`] naming the first invalid parameter: B (> 0, within [2^-40, 2^40]),
    /// T (`1 ≤ T ≤ 2^L − 1`), and the noise scale (`EpsilonTooSmall`).
    ///
    /// ```
    /// use ldp_core::tree::{Tree};
    /// use ldp_core::{Bound, Epsilon, ParamError};
    /// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
    /// const EPSILON: Epsilon = match Epsilon::new(1.0) {
    ///     Ok(e) => e,
    ///     Err(_) => panic!("ε = 1 is valid"),
    /// };
    /// let two = Bound::new(2.0)?;
    /// let mut tree = Tree::<4>::new(EPSILON, two, 8)?; // T = 8 needs 4 levels
    /// assert_eq!(tree.depth(), 4);
    /// assert!(tree.epsilon_effective() < 1.0);
    /// let mut rng = ChaCha20Rng::seed_from_u64(1);
    /// let s1 = tree.insert(0.5, &mut rng).map_err(|_| ParamError::HorizonZero)?;
    /// assert_eq!(s1.grid_log2, tree.grid_log2());
    /// assert_eq!(Tree::<3>::new(EPSILON, two, 8).err(), Some(ParamError::HorizonAboveCapacity));
    /// assert_eq!(Tree::<4>::new(EPSILON, Bound::new(0.0)?, 8).err(), Some(ParamError::BoundNotPositive));
    /// # Ok::<(), ParamError>(())
    /// ```
    ///
    /// ```compile_fail
    /// use ldp_core::{Bound, Epsilon};
    /// let (e, b) = (Epsilon::new(1.0).unwrap(), Bound::new(1.0).unwrap());
    /// let _ = ldp_core::tree::Tree::<33>::new(e, b, 1); // more than MAX_LEVELS
    /// ```
    pub const fn new(epsilon: Epsilon, bound: Bound, horizon: u64) -> Result<Self, ParamError> {
        Self::build(epsilon, bound, horizon, None)
    }

    /// As [`BinaryTree::new`] with an explicit grid `2^grid_log2`, which must be no coarser than
    /// B and such that B spans at most 2^20 grid steps.
    ///
    /// ```
    /// use ldp_core::tree::{AdaptiveTree, Tree};
    /// use ldp_core::{Bound, Epsilon, ParamError};
    /// let (e, b) = (Epsilon::new(1.0)?, Bound::new(1.0)?);
    /// let tree = Tree::<10>::with_grid(e, b, 1000, -3)?;
    /// assert_eq!(tree.max_index(), 8);
    /// assert_eq!(Tree::<10>::with_grid(e, b, 1000, 1).err(), Some(ParamError::GridOutOfRange));
    /// assert_eq!(AdaptiveTree::<10>::with_grid(e, Bound::new(100.0)?, 1000, -10)?.grid_log2(), -10);
    /// # Ok::<(), ParamError>(())
    /// ```
    pub const fn with_grid(
        epsilon: Epsilon,
        bound: Bound,
        horizon: u64,
        grid_log2: i32,
    ) -> Result<Self, ParamError> {
        Self::build(epsilon, bound, horizon, Some(grid_log2))
    }

    const fn build(
        epsilon: Epsilon,
        bound: Bound,
        horizon: u64,
        grid_log2: Option<i32>,
    ) -> Result<Self, ParamError> {
        const {
            assert!(L >= 1 && L <= MAX_LEVELS, "a tree needs 1 ..= MAX_LEVELS (32) levels");
            assert!(D >= 1 && D <= MAX_DIMENSION, "a vector tree needs 1 ..= MAX_DIMENSION coordinates");
        };
        let (grid, depth, noise) = ctry!(configure(epsilon, bound, horizon, grid_log2, L, D));
        Ok(Self { sums: PSums::new(), time: 0, horizon, depth, epsilon, grid, noise, kind: K::START })
    }

    /// Closes the node of the next t with noise `noise(level, dist)` on each coordinate and
    /// returns Ŝ(t). The caller has checked the insert ([`check_insert`]), so t ≤ T < 2^L and
    /// the p-sums hold it; were they not to, the insert is refused as the tree being full.
    fn push(
        &mut self,
        indices: &[i64; D],
        dist: DiscreteLaplace,
        mut noise: impl FnMut(usize, DiscreteLaplace) -> i64,
    ) -> Result<[i64; D], TreeInsertError> {
        let t = self.time + 1;
        let sums = self.sums.push(t, indices, |level| noise(level, dist));
        let sums = sums.map_err(|_| TreeInsertError::HorizonReached)?;
        self.time = t;
        Ok(sums)
    }

    /// Ŝ(t) for the current t again (no new noise), or `None` before the first insert.
    fn last_sums(&self) -> Option<[i64; D]> {
        if self.time == 0 { None } else { self.sums.prefix(self.time).ok() }
    }

    /// Seed 004 Lemma 2 for this tree: for every t and δ ∈ (0, 1/2], with probability ≥ 1 − δ,
    /// each coordinate has `|Ŝ(t) − S(t)| ≤ b·√depth·log₂(1/δ) + depth·2^k`, where S(t) is the
    /// sum of the clamped, grid-rounded elements and `b` = [`BinaryTree::node_noise_scale`] ≥
    /// `2·D·B·depth/ε` (so this is [`lemma2_error_bound`] with B replaced by `b·ε/(2·depth)`);
    /// all D coordinates at once with probability ≥ 1 − D·δ. The `depth·2^k` term covers the
    /// discreteness: a discrete Laplace is `⌊E₁⌋ − ⌊E₂⌋` for the exponentials of a continuous
    /// Laplace `E₁ − E₂` of the same scale, so each node is within one step of it. The adaptive
    /// tree uses the node scale of the last bound B_t (every node in Ŝ(t) has a scale at most
    /// that), and 0 before the first insert.
    ///
    /// ```
    /// use ldp_core::tree::{lemma2_error_bound, AdaptiveTree, Tree};
    /// use ldp_core::{Bound, Epsilon, ErrorBoundDelta};
    /// let (e, b) = (Epsilon::new(1.0)?, Bound::new(1.0)?);
    /// let tree = Tree::<10>::new(e, b, 1000)?;
    /// let delta = ErrorBoundDelta::new(0.01)?;
    /// let ours = tree.error_bound(delta);
    /// let paper = lemma2_error_bound(b, e, 1000, delta)?;
    /// assert!(ours >= paper && ours < paper * 1.001);
    /// let adaptive = AdaptiveTree::<10>::new(e, Bound::new(8.0)?, 1000)?;
    /// assert_eq!(adaptive.error_bound(ErrorBoundDelta::new(0.1)?), 0.0);
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn error_bound(&self, delta: ErrorBoundDelta) -> f64 {
        if K::NO_BOUND_BEFORE_FIRST && self.time == 0 {
            return 0.0;
        }
        tree_error_bound(self.node_noise_scale(), self.depth, self.grid.log2(), delta)
    }

    /// The ε asked for at construction.
    pub fn epsilon(&self) -> f64 {
        self.epsilon.get()
    }

    /// The ε the release sequence guarantees: `depth·ε'_eff` with `ε'_eff = 2·D·M·den/num <
    /// ε/depth` the worst node's (for the adaptive tree: over the nodes closed so far, 0 before
    /// the first insert). Below [`BinaryTree::epsilon`].
    pub fn epsilon_effective(&self) -> f64 {
        let at_bound = node_epsilon(2 * D as i64 * self.grid.max_index(), self.noise);
        self.depth as f64 * self.kind.worst_node_epsilon(at_bound)
    }

    /// The horizon T.
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    /// The number of elements inserted so far (the current t).
    pub fn time(&self) -> u64 {
        self.time
    }

    /// How many more elements the tree accepts, `T − t`.
    pub fn remaining(&self) -> u64 {
        self.horizon - self.time
    }

    /// `depth(T) = ⌊log₂ T⌋ + 1`: the most nodes an element lies in, and the most noise terms
    /// in a release.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The grid exponent k (the grid is 2^k).
    pub fn grid_log2(&self) -> i32 {
        self.grid.log2()
    }

    /// M: elements are grid indices in `[−M, M]` (`M = ⌈B/2^k⌉`; B_max for the adaptive tree).
    pub fn max_index(&self) -> i64 {
        self.grid.max_index()
    }

    /// The noise added to each coordinate of the node closed now, on grid indices (for the
    /// adaptive tree: the last insert's, at B_max before the first).
    pub fn node_noise(&self) -> DiscreteLaplace {
        self.kind.node_noise(self.noise)
    }

    /// [`BinaryTree::node_noise`] in value units, `(num/den)·2^k ≈ 2·D·B·depth/ε`.
    pub fn node_noise_scale(&self) -> f64 {
        self.grid.scaled(self.node_noise().scale())
    }
}

impl<K: Kind, const D: usize, const L: usize> fmt::Debug for BinaryTree<K, D, L> {
    /// The public configuration only: the p-sums are as secret as the data.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(K::NAME)
            .field("dimension", &D)
            .field("levels", &L)
            .field("epsilon", &self.epsilon.get())
            .field(K::BOUND_NAME, &self.grid.bound())
            .field("grid_log2", &self.grid.log2())
            .field("horizon", &self.horizon)
            .field("time", &self.time)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    //! The p-sum bookkeeping with the noise replaced through `insert_with`: exact prefix sums
    //! with zero noise, the number of noise terms per release, and the node count per element.
    use super::*;
    use crate::mechanism::MAX_RELEASE_INDEX;
    use crate::params::literal::{bnd, eps};
    use rand_core::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    const HORIZONS: [u64; 7] = [1, 2, 7, 8, 9, 1024, 1000];

    /// A value in [−1.5·b, 1.5·b]: a third of them are clamped.
    fn draw(rng: &mut Xoshiro256PlusPlus, b: f64) -> f64 {
        ((rng.next_u64() >> 11) as f64 * (-53f64).exp2() * 3.0 - 1.5) * b
    }

    /// The grid index the tree should use, computed independently of [`Grid`].
    fn expected_index(v: f64, b: f64, g: f64) -> i64 {
        (v.clamp(-b, b) / g).round() as i64
    }

    #[test]
    fn zero_noise_gives_exact_prefix_sums_of_the_rounded_inputs() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for horizon in HORIZONS {
            let b = 1.7;
            let mut tree = Tree::<11>::new(eps(0.5), bnd(b), horizon).unwrap();
            let g = (tree.grid_log2() as f64).exp2();
            let mut sum = 0i64;
            for t in 1..=horizon {
                let v = draw(&mut rng, b);
                sum += expected_index(v, b, g);
                let r = tree.insert_with(v, |_, _| 0).unwrap();
                assert_eq!(r.index, sum, "T = {horizon}, t = {t}");
                assert_eq!(tree.last_release(), Some(r));
            }
            assert_eq!(tree.insert_with(0.0, |_, _| 0), Err(TreeInsertError::HorizonReached));
            assert_eq!(tree.last_release().map(|r| r.index), Some(sum));
        }
    }

    #[test]
    fn zero_noise_adaptive_tree_sums_each_element_clamped_to_its_own_bound() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        for horizon in HORIZONS {
            let b_max = (horizon as f64).sqrt() + 1.0;
            let mut tree = AdaptiveTree::<11>::new(eps(1.0), bnd(b_max), horizon).unwrap();
            let g = (tree.grid_log2() as f64).exp2();
            let mut sum = 0i64;
            for t in 1..=horizon {
                let b = (t as f64).sqrt(); // non-decreasing, the shape of seed 004 Alg. 1's B_n
                let v = draw(&mut rng, b);
                sum += expected_index(v, b, g);
                let r = tree.insert_with(v, b, |_, _| 0).unwrap();
                assert_eq!(r.index, sum, "T = {horizon}, t = {t}");
            }
        }
    }

    #[test]
    fn zero_noise_vector_tree_gives_exact_prefix_sums_per_coordinate() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for horizon in HORIZONS {
            let b = 0.3;
            let mut tree = VectorTree::<3, 11>::new(eps(2.0), bnd(b), horizon).unwrap();
            let g = (tree.grid_log2() as f64).exp2();
            let mut sum = [0i64; 3];
            for t in 1..=horizon {
                let v = [draw(&mut rng, b), draw(&mut rng, b), draw(&mut rng, b)];
                for (s, x) in sum.iter_mut().zip(v) {
                    *s += expected_index(x, b, g);
                }
                let r = tree.insert_with(&v, |_, _| 0).unwrap();
                assert_eq!(r.indices, sum, "T = {horizon}, t = {t}");
            }
        }
    }

    #[test]
    fn a_release_has_popcount_t_noise_terms_and_the_new_node_is_at_the_lowest_set_bit() {
        for horizon in HORIZONS {
            let mut tree = Tree::<11>::new(eps(1.0), bnd(1.0), horizon).unwrap();
            for t in 1..=horizon {
                let r = tree
                    .insert_with(0.0, |level, _| {
                        assert_eq!(level, t.trailing_zeros() as usize);
                        1
                    })
                    .unwrap();
                assert_eq!(r.index, i64::from(t.count_ones()), "t = {t}");
                assert!(t.count_ones() as usize <= tree.depth());
            }
        }
    }

    #[test]
    fn each_element_lies_in_at_most_depth_nodes_and_the_first_in_exactly_depth() {
        for horizon in HORIZONS {
            let mut tree = Tree::<11>::new(eps(1.0), bnd(1.0), horizon).unwrap();
            let mut count = [0usize; 1024];
            for t in 1..=horizon {
                let mut closed = None;
                tree.insert_with(0.0, |level, _| {
                    closed = Some(level);
                    0
                })
                .unwrap();
                // The node closed at t at level i covers [t − 2^i + 1, t].
                let width = 1u64 << closed.unwrap();
                for s in (t + 1 - width)..=t {
                    count[(s - 1) as usize] += 1;
                }
            }
            let depth = levels_for(horizon);
            assert_eq!(tree.depth(), depth);
            assert!(count.iter().all(|&c| c <= depth), "T = {horizon}");
            assert_eq!(count[0], depth, "T = {horizon}");
        }
    }

    #[test]
    fn adaptive_nodes_get_the_scalar_noise_of_their_own_bound() {
        let (epsilon, horizon) = (0.7, 100);
        let mut tree = AdaptiveTree::<7>::new(eps(epsilon), bnd(16.0), horizon).unwrap();
        let k = tree.grid_log2();
        for t in 1..=horizon {
            let b = 1.0 + 15.0 * (t as f64 / horizon as f64).powi(2);
            let scalar = Tree::<7>::with_grid(eps(epsilon), bnd(b), horizon, k).unwrap();
            tree.insert_with(0.0, b, |_, dist| {
                assert_eq!(dist, scalar.node_noise(), "t = {t}");
                0
            })
            .unwrap();
            assert!(tree.epsilon_effective() < epsilon);
        }
    }

    #[test]
    fn extreme_horizon_and_values_neither_overflow_nor_panic() {
        // A full-size tree near the end of its largest horizon, fed the largest indices.
        let mut tree = Tree::<32>::with_grid(eps(1.0), bnd(1.0), Tree::<32>::CAPACITY, -20).unwrap();
        assert_eq!(tree.max_index(), 1 << 20);
        tree.time = Tree::<32>::CAPACITY - 3;
        for _ in 0..3 {
            let r = tree.insert_with(5.0, |_, _| i64::MAX).unwrap();
            assert!(r.index.abs() <= MAX_RELEASE_INDEX);
        }
        assert_eq!(tree.insert_with(1.0, |_, _| 0), Err(TreeInsertError::HorizonReached));
        let mut sums = PSums::<1, 32>::new();
        let mut last = 0;
        for t in 1..=(1u64 << 12) {
            last = sums.push(t, &[-(1 << 20)], |_| 0).unwrap()[0];
        }
        assert_eq!(last, -(1i64 << 32));
    }
}
