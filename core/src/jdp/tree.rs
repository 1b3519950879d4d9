//! The symmetric-matrix tree-based mechanism with Gaussian noise: the PRIVATIZER of Dubey
//! Alg. 2, noise of Lemma 2 (calibrated by zCDP), shift of Lemma 3 (see
//! [`confidence`]).
//!
//! # What it releases
//!
//! Element t is a row `z_t = [Φ(x_t), y_t] ∈ ℝ^m` (m = F + 1), clipped to `‖z_t‖ ≤ L`. The tree
//! releases, after each insert, the noisy prefix sum of the outer products
//!
//! ```text
//! Ñ_t = Σ_{τ ≤ t} z_τ z_τᵀ + Σ_{nodes j in the binary decomposition of t} W_j,
//! ```
//!
//! whose top-left F×F block is Σ̃ and whose last column (first F entries) is ũ (Dubey §5.1).
//! Each node noise `W_j` is symmetric with independent N_ℤ(0, σ²) entries on and above the
//! diagonal (the form of Lemma 5's `N_t`; Alg. 2's `(v + vᵀ)/√2` differs only by doubling the
//! diagonal variance). The p-sum bookkeeping is that of [`crate::tree`] (Tao et al. Alg. 2), the
//! same code over this tree's run-time sized storage: one node closes per insert, a release
//! sums `popcount(t)` nodes, and the state is one exact and one noisy p-sum per level.
//!
//! # Floating-point safety
//!
//! Only the upper triangle is stored, packed row by row ([`packed_index`]). Each entry
//! `z_i z_j` is rounded to the nearest index of the public grid `2^k` (default
//! `k = ⌊log₂ L²⌋ − 16`), sums are exact `i64`, the noise is the exact discrete Gaussian, and a
//! released index times `2^k` is exact in `f64`. Nothing continuous is ever added.
//!
//! # Privacy
//!
//! Neighbouring streams differ in one row, `z` against `z'`. In grid steps the packed upper
//! triangle moves by at most
//!
//! ```text
//! Δ = ‖zzᵀ − z'z'ᵀ‖_F / 2^k + √(m(m+1)/2) ≤ √2·L²(1 + 2^{−40}) / 2^k + √(m(m+1)/2),
//! ```
//!
//! since `‖zzᵀ − z'z'ᵀ‖_F² = ‖z‖⁴ + ‖z'‖⁴ − 2(zᵀz')² ≤ 2L⁴`, the upper triangle's ℓ2 norm is
//! at most the Frobenius norm, each entry's rounding moves it by less than one step, and the
//! `2^{−40}` absorbs the floating-point error of the products and of the clip. Each node is
//! then `Δ²/(2σ²)`-zCDP ([`DiscreteGaussian`]), each row lies in at most `depth = ⌊log₂ T⌋ + 1`
//! nodes (see [`crate::tree`]), so the whole release sequence is `ρ = depth·Δ²/(2σ²)`-zCDP and
//! the tree picks the smallest σ with `ρ ≤` [`zcdp::rho_for`]`(ε, δ)`: the sequence is
//! (ε, δ)-DP, which is the (α, β)-JDP of Dubey Lemma 2 once the server's choices are
//! post-processing of these releases. Lemma 2 instead takes a high-probability bound on `|y_t|`
//! (adding `β/4` failure probability) and the classical Gaussian mechanism with composition
//! over `n` nodes; clipping makes the sensitivity hold always, and zCDP composes without the
//! `√(8n ln(2/β))` loss.
//!
//! The tree's memory holds exact partial sums and is as secret as the data; `Debug` shows the
//! public configuration only.
//!
//! # Storage
//!
//! The p-sums live in a caller-supplied buffer `S: AsRef<[i64]> + AsMut<[i64]>` of
//! [`SymmetricTree::buffer_len`]`(m, T)` = `2·depth·m(m+1)/2` entries: a `[i64; N]` (or a
//! `&mut` to a `static`) on a device, a `Vec<i64>` on a host, where `m = F + 1` of a few
//! hundred makes it megabytes. The sizes are run-time values so one type serves any F.

use core::fmt;

use rand_core::Rng;

use super::confidence::{self, ShiftRule};
use super::zcdp;
use super::{Grid, JdpError, MAX_MATRIX_DIM, ParamError};
use crate::params::{Bound, Delta, Epsilon};
use crate::sampler::DiscreteGaussian;
use crate::tree::{levels_for, psums};

/// The largest horizon: `2^32 − 1` (32 levels).
pub const MAX_TREE_HORIZON: u64 = (1 << 32) - 1;

/// Position of entry `(i, j)`, `i ≤ j < m`, in the packed upper triangle (row by row):
/// `i·m − i(i−1)/2 + (j − i)`.
///
/// ```
/// use ldp_core::jdp::packed_index;
/// assert_eq!(packed_index(3, 0, 0), 0);
/// assert_eq!(packed_index(3, 1, 1), 3);
/// assert_eq!(packed_index(3, 2, 2), 5);
/// ```
pub const fn packed_index(m: usize, i: usize, j: usize) -> usize {
    i * m - i * i.saturating_sub(1) / 2 + (j - i)
}

/// The parameters of a [`SymmetricTree`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct TreeConfig {
    /// ε (Dubey's α) of the whole release sequence.
    pub epsilon: Epsilon,
    /// δ (Dubey's β), in (0, 1).
    pub delta: Delta,
    /// L: rows are clipped to `‖z‖ ≤ L` (for `z = [Φ, y]` with `‖Φ‖ ≤ 1`, `|y| ≤ b`:
    /// `L = √(1 + b²)`); must be > 0.
    pub row_bound: Bound,
    /// T: the number of rows the tree accepts.
    pub horizon: u64,
    /// The grid exponent k, or `None` for `⌊log₂ L²⌋ − 16`.
    pub grid_log2: Option<i32>,
}

impl TreeConfig {
    /// (ε, δ), L and T, default grid.
    ///
    /// ```
    /// use ldp_core::jdp::TreeConfig;
    /// use ldp_core::{Bound, Delta, Epsilon};
    /// let c = TreeConfig::new(Epsilon::new(1.0)?, Delta::new(0.1)?, Bound::new(2f64.sqrt())?, 1024);
    /// assert_eq!(c.with_grid(-20).grid_log2, Some(-20));
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub const fn new(epsilon: Epsilon, delta: Delta, row_bound: Bound, horizon: u64) -> Self {
        Self { epsilon, delta, row_bound, horizon, grid_log2: None }
    }

    /// The same with an explicit grid `2^k`.
    pub const fn with_grid(mut self, grid_log2: i32) -> Self {
        self.grid_log2 = Some(grid_log2);
        self
    }
}

/// The symmetric-matrix tree-based mechanism (module docs) over caller-supplied storage.
/// (Cloning copies the sums; later inserts still draw fresh noise from the caller's generator.)
#[derive(Clone)]
pub struct SymmetricTree<S> {
    storage: S,
    dim: usize,
    packed: usize,
    depth: usize,
    time: u64,
    config: TreeConfig,
    grid: Grid,
    /// Δ in grid steps.
    sensitivity: f64,
    noise: DiscreteGaussian,
}

impl<S: AsRef<[i64]> + AsMut<[i64]>> SymmetricTree<S> {
    /// Entries of storage a tree of `m × m` matrices needs for horizon T: `2·depth(T)·m(m+1)/2`.
    ///
    /// ```
    /// use ldp_core::jdp::SymmetricTree;
    /// // m = 3 (two features and the reward), T = 8 (4 levels): 2·4·6.
    /// assert_eq!(SymmetricTree::<[i64; 48]>::buffer_len(3, 8), 48);
    /// ```
    pub const fn buffer_len(m: usize, horizon: u64) -> usize {
        2 * levels_for(horizon) * (m * (m + 1) / 2)
    }

    /// A tree of `m × m` matrices over `storage` (of exactly [`Self::buffer_len`] entries; it is
    /// zeroed here). Fails with the [`ParamError`] naming the first bad parameter.
    ///
    /// ```
    /// use ldp_core::jdp::{SymmetricTree, TreeConfig};
    /// use ldp_core::{Bound, Delta, Epsilon};
    /// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
    /// const M: usize = 3;
    /// const LEN: usize = SymmetricTree::<[i64; 0]>::buffer_len(M, 100);
    /// let config = TreeConfig::new(Epsilon::new(1.0)?, Delta::new(0.1)?, Bound::new(2f64.sqrt())?, 100);
    /// let mut tree = SymmetricTree::new([0i64; LEN], M, config)?;
    /// let mut rng = ChaCha20Rng::seed_from_u64(1);
    /// tree.insert(&[0.6, 0.8, 1.0], &mut rng)?;
    /// let mut out = [0i64; M * (M + 1) / 2];
    /// tree.release_into(&mut out)?;
    /// let s00 = tree.value(out[0]); // 0.36 plus noise of standard deviation tree.node_sigma()
    /// assert!((s00 - 0.36).abs() < 10.0 * tree.node_sigma());
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    pub fn new(mut storage: S, m: usize, config: TreeConfig) -> Result<Self, ParamError> {
        if m == 0 || m > MAX_MATRIX_DIM {
            return Err(ParamError::DimensionInvalid);
        }
        let rho = zcdp::rho_for(config.epsilon, config.delta)?;
        if config.horizon == 0 {
            return Err(ParamError::HorizonZero);
        }
        if config.horizon > MAX_TREE_HORIZON {
            return Err(ParamError::HorizonAboveCapacity);
        }
        let l = config.row_bound.get();
        let grid = super::grid(l * l, config.grid_log2)?; // refuses L = 0 (BoundNotPositive)
        let packed = m * (m + 1) / 2;
        let depth = levels_for(config.horizon);
        if storage.as_ref().len() != Self::buffer_len(m, config.horizon) {
            return Err(ParamError::BufferLength);
        }
        storage.as_mut().fill(0);
        let sensitivity = core::f64::consts::SQRT_2 * grid.in_steps(grid.bound()) + libm::sqrt(packed as f64);
        let sigma2 = depth as f64 * sensitivity * sensitivity / (2.0 * rho) * super::VARIANCE_MARGIN;
        let noise = DiscreteGaussian::with_variance_at_least(sigma2).ok_or(ParamError::NoiseOutOfRange)?;
        Ok(Self { storage, dim: m, packed, depth, time: 0, config, grid, sensitivity, noise })
    }

    /// Insert the row `z_t` (clipped to `‖z‖ ≤ L`) and close the node at level
    /// `trailing_zeros(t)` with fresh noise. Refused, changing nothing, after T rows, for a row
    /// of the wrong length or with a NaN/±∞ entry.
    pub fn insert<R: Rng + ?Sized>(&mut self, row: &[f64], rng: &mut R) -> Result<(), JdpError> {
        let noise = self.noise;
        self.insert_with(row, |_| noise.sample(rng))
    }

    /// [`Self::insert`] with each noise entry of the closed node drawn by `noise(level)`.
    fn insert_with(&mut self, row: &[f64], noise: impl FnMut(usize) -> i64) -> Result<(), JdpError> {
        if self.time >= self.config.horizon {
            return Err(JdpError::HorizonReached);
        }
        if row.len() != self.dim {
            return Err(JdpError::DimensionMismatch);
        }
        let scale = clip_scale(row, self.config.row_bound.get())?;
        let t = self.time + 1;
        let (m, grid) = (self.dim, self.grid);
        let storage = self.storage.as_mut();
        let (exact, noisy) =
            storage.split_at_mut_checked(self.depth * self.packed).ok_or(JdpError::BufferLength)?;
        // The new leaf, written into the node slot: the rounded outer product.
        let leaf = |node: &mut [i64]| {
            let mut e = 0;
            for i in 0..m {
                let zi = row[i] * scale;
                for &zj in &row[i..] {
                    node[e] = grid.index(zi * (zj * scale));
                    e += 1;
                }
            }
        };
        psums::close(exact, noisy, self.packed, t, leaf, noise).map_err(|_| JdpError::BufferLength)?;
        self.time = t;
        Ok(())
    }

    /// Write the release `Ñ_t` (packed upper triangle, grid indices, each clamped to ±2^52)
    /// into `out` of length `m(m+1)/2`. All zeros before the first insert.
    pub fn release_into(&self, out: &mut [i64]) -> Result<(), JdpError> {
        let noisy = self.storage.as_ref().get(self.depth * self.packed..).ok_or(JdpError::BufferLength)?;
        psums::release_into(noisy, self.packed, self.time, out).map_err(|_| JdpError::BufferLength)
    }

    /// `index·2^k`, exact.
    pub fn value(&self, index: i64) -> f64 {
        self.grid.value(index)
    }

    /// The matrix dimension m.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The number of rows inserted (t).
    pub fn time(&self) -> u64 {
        self.time
    }

    /// The horizon T.
    pub fn horizon(&self) -> u64 {
        self.config.horizon
    }

    /// `depth(T) = ⌊log₂ T⌋ + 1`: the most nodes a row lies in.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The number of node noises in the current release, `popcount(t)`.
    pub fn noise_terms(&self) -> u32 {
        self.time.count_ones()
    }

    /// The grid exponent k.
    pub fn grid_log2(&self) -> i32 {
        self.grid.log2()
    }

    /// The ℓ2 sensitivity Δ of a node, in grid steps.
    pub fn sensitivity_steps(&self) -> f64 {
        self.sensitivity
    }

    /// The node noise on grid indices.
    pub fn node_noise(&self) -> DiscreteGaussian {
        self.noise
    }

    /// The standard deviation of one noise entry of one node, in value units (`σ·2^k`).
    pub fn node_sigma(&self) -> f64 {
        self.grid.scaled(self.noise.sigma())
    }

    /// The zCDP parameter of the whole release sequence, `depth·Δ²/(2σ²)` (≤ the budget of
    /// (ε, δ)).
    pub fn rho(&self) -> f64 {
        self.depth as f64 * self.noise.rho(self.sensitivity)
    }

    /// The ε the sequence guarantees at the configured δ (≤ the configured ε).
    pub fn epsilon_effective(&self) -> f64 {
        zcdp::epsilon_for(self.rho(), self.config.delta).unwrap_or(f64::INFINITY)
    }

    /// The configuration.
    pub fn config(&self) -> &TreeConfig {
        &self.config
    }

    /// Λ, a `(ζ/2T)`-accurate bound on the norm of the current release's noise matrix (module
    /// docs of [`confidence`]); the learner shifts by 2Λ (Lemma 3).
    pub fn noise_norm(&self, rule: ShiftRule, zeta: f64) -> f64 {
        confidence::tree_noise_norm(
            rule,
            self.node_sigma(),
            self.noise_terms(),
            self.depth,
            self.dim,
            self.config.horizon,
            zeta,
        )
    }
}

/// `min(1, L/‖z‖)`, refusing non-finite rows.
pub(crate) fn clip_scale(row: &[f64], bound: f64) -> Result<f64, JdpError> {
    let norm2: f64 = row.iter().map(|v| v * v).sum();
    if !norm2.is_finite() {
        return Err(JdpError::NonFiniteValue);
    }
    let norm = libm::sqrt(norm2);
    Ok(if norm > bound { bound / norm } else { 1.0 })
}

impl<S> fmt::Debug for SymmetricTree<S> {
    /// The public configuration only: the p-sums are as secret as the data.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SymmetricTree")
            .field("dim", &self.dim)
            .field("config", &self.config)
            .field("grid_log2", &self.grid.log2())
            .field("time", &self.time)
            .field("noise", &self.noise)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    //! The bookkeeping with the noise replaced through `insert_with`.
    use super::*;
    use crate::params::literal::{del, eps};
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn tree(m: usize, horizon: u64) -> SymmetricTree<std::vec::Vec<i64>> {
        let len = SymmetricTree::<std::vec::Vec<i64>>::buffer_len(m, horizon);
        let config = TreeConfig::new(eps(1.0), del(0.1), Bound::new(1.5).unwrap(), horizon);
        SymmetricTree::new(std::vec![0; len], m, config).unwrap()
    }

    fn random_row(rng: &mut Xoshiro256PlusPlus, m: usize) -> std::vec::Vec<f64> {
        (0..m).map(|_| (rng.next_u64() >> 11) as f64 * (-53f64).exp2() * 2.0 - 1.0).collect()
    }

    #[test]
    fn zero_noise_releases_are_the_exact_sums_of_the_rounded_outer_products() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for (m, horizon) in [(1, 1), (2, 7), (3, 8), (4, 100)] {
            let mut t = tree(m, horizon);
            let packed = m * (m + 1) / 2;
            let mut sum = std::vec![0i64; packed];
            let mut out = std::vec![0i64; packed];
            for step in 1..=horizon {
                let row = random_row(&mut rng, m);
                let s = clip_scale(&row, 1.5).unwrap();
                for i in 0..m {
                    for j in i..m {
                        sum[packed_index(m, i, j)] += t.grid.index((row[i] * s) * (row[j] * s));
                    }
                }
                t.insert_with(&row, |_| 0).unwrap();
                t.release_into(&mut out).unwrap();
                assert_eq!(out, sum, "m = {m}, t = {step}");
            }
            assert_eq!(t.insert_with(&[0.0; 4][..m], |_| 0), Err(JdpError::HorizonReached));
        }
    }

    #[test]
    fn a_release_sums_popcount_t_node_noises() {
        let mut t = tree(2, 100);
        let mut out = [0i64; 3];
        for step in 1..=100u64 {
            t.insert_with(&[0.0, 0.0], |level| {
                assert_eq!(level, step.trailing_zeros() as usize);
                1
            })
            .unwrap();
            t.release_into(&mut out).unwrap();
            assert_eq!(out, [i64::from(step.count_ones()); 3]);
            assert_eq!(t.noise_terms(), step.count_ones());
        }
    }

    #[test]
    fn rows_are_clipped_and_bad_rows_refused() {
        let mut t = tree(2, 10);
        let mut out = [0i64; 3];
        t.insert_with(&[3.0, 4.0], |_| 0).unwrap(); // ‖z‖ = 5 → clipped to 1.5: (0.9, 1.2)
        t.release_into(&mut out).unwrap();
        assert!((t.value(out[0]) - 0.81).abs() < 1e-4 && (t.value(out[2]) - 1.44).abs() < 1e-4);
        assert_eq!(t.insert_with(&[f64::NAN, 0.0], |_| 0), Err(JdpError::NonFiniteValue));
        assert_eq!(t.insert_with(&[1.0], |_| 0), Err(JdpError::DimensionMismatch));
        assert_eq!(t.time(), 1);
        assert_eq!(t.release_into(&mut [0; 2]), Err(JdpError::BufferLength));
    }

    #[test]
    fn noise_is_calibrated_to_the_budget() {
        let t = tree(5, 1000);
        let rho = zcdp::rho_for(eps(1.0), del(0.1)).unwrap();
        assert!(t.rho() <= rho);
        assert!(t.rho() > 0.999 * rho);
        assert!(t.epsilon_effective() <= 1.0 + 1e-9);
        // Δ ≈ √2·L²/2^k: the rounding term is negligible.
        let steps = libm::scalbn(1.5 * 1.5, -t.grid_log2());
        assert!(t.sensitivity_steps() > core::f64::consts::SQRT_2 * steps);
        assert!(t.sensitivity_steps() < 1.001 * core::f64::consts::SQRT_2 * steps);
    }
}
