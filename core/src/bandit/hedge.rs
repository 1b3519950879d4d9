//! Hedge (exponential weights / FTRL with the entropic regulariser) for prediction with expert
//! advice, and its private version on tree-aggregated noisy cumulative losses (Agarwal & Singh Alg. 1
//! and Alg. 2, Corollary 3.2.1).

use rand_core::Rng;

use super::{ObserveError, ParamError, check_eta};
use crate::params::{Bound, Epsilon};
use crate::tree::VectorTree;

/// The exponential weights `x_i ∝ exp(−η L_i)`: the FTRL choice
/// `argmin_x η⟨x, L⟩ + Σ x_i ln x_i` over the simplex (Agarwal & Singh Alg. 1, line 5).
///
/// Computed with the smallest finite `L_i` subtracted, so nothing under- or overflows. A
/// non-finite `L_i` gets weight 0 (`+∞`) or takes all the weight (`−∞`, shared among ties); NaN
/// or all-`+∞` losses give the uniform distribution.
///
/// ```
/// use ldp_core::bandit::exponential_weights;
/// let w = exponential_weights(&[0.0, 1.0, 1e6], 1.0);
/// let z = 1.0 + (-1.0f64).exp();
/// assert!((w[0] - 1.0 / z).abs() < 1e-12 && (w[1] - (-1.0f64).exp() / z).abs() < 1e-12);
/// assert_eq!(w[2], 0.0);
/// ```
pub fn exponential_weights<const N: usize>(losses: &[f64; N], eta: f64) -> [f64; N] {
    let mut w = [0.0; N];
    exponential_weights_into(losses, eta, &mut w);
    w
}

/// [`exponential_weights`] of `losses` written into `out`, of the same length (the same
/// operations in the same order, so the same bits). For a policy that plays only the first
/// arms of its capacity.
pub(crate) fn exponential_weights_into(losses: &[f64], eta: f64, out: &mut [f64]) {
    let n = losses.len();
    if losses.iter().any(|l| l.is_nan()) || !(eta.is_finite() && eta >= 0.0) {
        out.fill(1.0 / n as f64);
        return;
    }
    let minus_infinity = |l: f64| l.is_infinite() && l < 0.0;
    let ties = losses.iter().filter(|&&l| minus_infinity(l)).count();
    if ties > 0 {
        for (o, &l) in out.iter_mut().zip(losses) {
            *o = if minus_infinity(l) { 1.0 / ties as f64 } else { 0.0 };
        }
        return;
    }
    let min = losses.iter().copied().fold(f64::INFINITY, f64::min);
    if !min.is_finite() {
        out.fill(1.0 / n as f64);
        return;
    }
    for (o, &l) in out.iter_mut().zip(losses) {
        *o = libm::exp(-eta * (l - min));
    }
    let total: f64 = out.iter().sum(); // ≥ 1: the minimum has weight exp(0)
    for o in out.iter_mut() {
        *o /= total;
    }
}

/// The classical tuned learning rate `η = √(8 ln N / T)` of exponential weights for losses in
/// [0, 1] (Cesa-Bianchi & Lugosi 2006, Thm 2.2: regret ≤ √(T ln N / 2)); `None` for N < 2 or
/// T = 0.
///
/// ```
/// use ldp_core::bandit::hedge_learning_rate;
/// assert_eq!(hedge_learning_rate(1, 100), None);
/// assert!((hedge_learning_rate(10, 1000).unwrap_or(0.0) - (8.0 * 10f64.ln() / 1000.0).sqrt()).abs() < 1e-15);
/// ```
pub fn hedge_learning_rate(experts: usize, horizon: u64) -> Option<f64> {
    (experts >= 2 && horizon > 0).then(|| libm::sqrt(8.0 * libm::log(experts as f64) / horizon as f64))
}

fn check_losses<const N: usize>(losses: &[f64; N]) -> Result<(), ObserveError> {
    if losses.iter().all(|l| l.is_finite()) { Ok(()) } else { Err(ObserveError::NonFiniteReward) }
}

/// Non-private Hedge on N experts: `x_t ∝ exp(−η Σ_{s<t} l_s)`.
///
/// ```
/// use ldp_core::bandit::Hedge;
/// let mut hedge = Hedge::<2>::new(0.5)?;
/// hedge.observe(&[1.0, 0.0]).map_err(|_| ldp_core::ParamError::HorizonZero)?;
/// let x = hedge.weights();
/// assert!((x[1] / x[0] - 0.5f64.exp()).abs() < 1e-12);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hedge<const N: usize> {
    eta: f64,
    cumulative: [f64; N],
    rounds: u64,
}

impl<const N: usize> Hedge<N> {
    /// Hedge with learning rate η (see [`hedge_learning_rate`]).
    pub fn new(eta: f64) -> Result<Self, ParamError> {
        const { assert!(N >= 1, "at least one expert") };
        Ok(Self { eta: check_eta(eta)?, cumulative: [0.0; N], rounds: 0 })
    }

    /// This round's distribution over experts.
    pub fn weights(&self) -> [f64; N] {
        exponential_weights(&self.cumulative, self.eta)
    }

    /// The round's loss vector (full information). Refused, changing nothing, if any loss is
    /// not finite.
    pub fn observe(&mut self, losses: &[f64; N]) -> Result<(), ObserveError> {
        check_losses(losses)?;
        for (c, l) in self.cumulative.iter_mut().zip(losses) {
            *c += l;
        }
        self.rounds = self.rounds.saturating_add(1);
        Ok(())
    }

    /// The cumulative losses.
    pub fn cumulative(&self) -> [f64; N] {
        self.cumulative
    }

    /// Rounds observed so far.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }
}

/// ε-DP Hedge for N experts with losses in [0, 1]: Agarwal & Singh Alg. 1 (FTRL with
/// `R(x) = Σ x_i ln x_i`) on the noisy cumulative losses of Alg. 2, with the noise of
/// Corollary 3.2.1 (`λ = N log T / ε`).
///
/// ```text
/// L̃_0 = Σ_{i=1}^{depth} n_0^i;   x_t ∝ exp(−η L̃_{t−1});
/// L̃_t = Ŝ(t) + Σ_{i=1}^{depth − popcount(t)} n_t^i     (Ŝ: the tree's release, Alg. 2 lines 1–6)
/// ```
///
/// The tree is a [`VectorTree`] over `l_t − ½ ∈ [−½, ½]^N` (B = ½): its per-coordinate node
/// noise has scale `2·N·B·depth/ε = N·depth/ε`, the paper's λ with `log T` read as
/// `depth = ⌊log₂ T⌋ + 1` (see [`crate::tree`] for why that reading is the exact one). The
/// shift by ½ changes every cumulative loss by t/2 and leaves the weights unchanged. Alg. 2's
/// padding draws (`n_t^i`, from the same node distribution) make every release the true sum plus
/// exactly `depth` noise terms; they are independent of the data, so they cost no privacy. The
/// whole sequence L̃_1, …, L̃_T is ε-DP (Lemma 3.3) and the predictions are post-processing.
///
/// Memory: the tree (`16·N·L` bytes of p-sums) and N noisy sums, independent of T.
///
/// ```
/// use ldp_core::bandit::PrivateHedge;
/// use ldp_core::Epsilon;
/// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
/// let mut rng = ChaCha20Rng::seed_from_u64(4);
/// let mut hedge = PrivateHedge::<3, 10>::new(Epsilon::new(1.0)?, 1000, 0.1, &mut rng)?;
/// let x = hedge.weights(); // from L̃_0: pure noise
/// assert!((x.iter().sum::<f64>() - 1.0).abs() < 1e-12);
/// hedge.observe(&[0.0, 1.0, 0.5], &mut rng).map_err(|_| ldp_core::ParamError::HorizonZero)?;
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub struct PrivateHedge<const N: usize, const L: usize> {
    eta: f64,
    tree: VectorTree<N, L>,
    /// L̃_t as grid indices.
    noisy: [i64; N],
}

/// B = ½: the bound on the shifted losses `l_t − ½`.
const HALF: Bound = match Bound::new(0.5) {
    Ok(half) => half,
    Err(_) => panic!("B = 1/2 is valid"),
};

impl<const N: usize, const L: usize> PrivateHedge<N, L> {
    /// Private Hedge at ε for horizon T (`1 ≤ T ≤ 2^L − 1`) with learning rate η; draws L̃_0
    /// from `rng`.
    pub fn new<R: Rng + ?Sized>(
        epsilon: Epsilon,
        horizon: u64,
        eta: f64,
        rng: &mut R,
    ) -> Result<Self, ParamError> {
        let eta = check_eta(eta)?;
        let tree = VectorTree::<N, L>::new(epsilon, HALF, horizon)?;
        let mut noisy = [0i64; N];
        Self::pad(&tree, &mut noisy, tree.depth(), rng);
        Ok(Self { eta, tree, noisy })
    }

    /// Adds `count` independent node-noise draws to each coordinate.
    fn pad<R: Rng + ?Sized>(tree: &VectorTree<N, L>, indices: &mut [i64; N], count: usize, rng: &mut R) {
        let noise = tree.node_noise();
        for index in indices.iter_mut() {
            for _ in 0..count {
                *index = index.saturating_add(noise.sample(rng));
            }
        }
    }

    /// This round's distribution over experts, `x_t ∝ exp(−η L̃_{t−1})`.
    pub fn weights(&self) -> [f64; N] {
        exponential_weights(&self.noisy_cumulative(), self.eta)
    }

    /// The round's loss vector (each loss clamped to [0, 1]); noise from `rng`. Refused,
    /// changing nothing, if a loss is not finite or the horizon is reached.
    pub fn observe<R: Rng + ?Sized>(&mut self, losses: &[f64; N], rng: &mut R) -> Result<(), ObserveError> {
        check_losses(losses)?;
        let shifted = losses.map(|l| l.clamp(0.0, 1.0) - 0.5);
        let release = self.tree.insert(&shifted, rng).map_err(ObserveError::Tree)?;
        let mut noisy = release.indices;
        let terms = self.tree.time().count_ones() as usize;
        Self::pad(&self.tree, &mut noisy, self.tree.depth().saturating_sub(terms), rng);
        self.noisy = noisy;
        Ok(())
    }

    /// L̃_t, the noisy cumulative shifted losses `Σ (l_s − ½)` plus noise (private).
    pub fn noisy_cumulative(&self) -> [f64; N] {
        let k = self.tree.grid_log2();
        self.noisy.map(|i| libm::scalbn(i as f64, k))
    }

    /// Rounds observed so far.
    pub fn rounds(&self) -> u64 {
        self.tree.time()
    }

    /// The per-coordinate node noise scale in loss units, `≈ N·depth/ε`.
    pub fn node_noise_scale(&self) -> f64 {
        self.tree.node_noise_scale()
    }

    /// The ε the release sequence guarantees (< ε).
    pub fn epsilon_effective(&self) -> f64 {
        self.tree.epsilon_effective()
    }
}

impl<const N: usize, const L: usize> core::fmt::Debug for PrivateHedge<N, L> {
    /// The public configuration only: the tree's sums are as secret as the losses.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PrivateHedge")
            .field("eta", &self.eta)
            .field("tree", &self.tree)
            .finish_non_exhaustive()
    }
}
