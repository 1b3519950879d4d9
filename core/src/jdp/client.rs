//! The local-JDP client of Dubey Alg. 3: what runs on user t's device.
//!
//! ```text
//! CLIENT(t): receive (Σ̃_t, ũ_t) ─► V = Σ̃_t + (λ + 2Λ_t)I ─► Cholesky ─► θ̃ = V⁻¹ũ_t
//!            x_t = argmax_{x ∈ 𝒟_t} ⟨θ̃, Φ(x)⟩ + w_t‖Φ(x)‖_{V⁻¹}      (𝒟_t never leaves the device)
//!            play x_t, observe y_t
//!            return Σ̃_t + Φ(x_t)Φ(x_t)ᵀ + N_t,  ũ_t + y_tΦ(x_t) + n_t        (Lemma 5 noise)
//! ```
//!
//! Sizes are const generics: `D` coordinates, `F` features ([`FeatureMap<D, F>`]); the state is
//! a `[[i64; F]; F]` Gram matrix and a `[i64; F]` vector on the public grid `2^k` ([`JdpState`]),
//! `8F² + 8F + 16` bytes; the solve is a fixed-size `nalgebra` Cholesky on the stack (`8F²` bytes,
//! twice). Nothing allocates: the crate has no allocator. [`DeviceClient`] is a concrete,
//! non-generic instance (1-D default QFF, `F = 28`, ChaCha20) that is compiled for the
//! Cortex-M targets.
//!
//! # Noise (Lemma 5, calibrated by zCDP)
//!
//! `N_t` is symmetric with independent N_ℤ(0, σ_X²) entries on and above the diagonal, `n_t` has
//! independent N_ℤ(0, σ_u²) entries, both in grid steps. With `Φ` clipped to `‖Φ‖ ≤ 1` and `y`
//! clamped to `[−b, b]`, the ℓ2 sensitivities on the grid are
//!
//! ```text
//! Δ_X = √2·(1 + 2^{−40})/2^k + √(F(F+1)/2),     Δ_u = 2b(1 + 2^{−40})/2^k + √F
//! ```
//!
//! (`‖ΦΦᵀ − Φ'Φ'ᵀ‖_F ≤ √2`, `‖yΦ − y'Φ'‖ ≤ 2b`, one step of rounding per entry). The report is
//! `Δ_X²/2σ_X² + Δ_u²/2σ_u²`-zCDP; splitting the budget `ρ =` [`zcdp::rho_for`]`(ε, δ)` equally
//! (Lemma 5 gives each half (α/2, β/2)) sets `σ_X² = Δ_X²/ρ`, `σ_u² = Δ_u²/ρ`, so each report is
//! (ε, δ)-LDP. Lemma 5's own constants, `σ_X² ≥ 8 ln(5/2β)/α²` and
//! `σ_u² ≥ 8(B² + 2 ln(8m/δ)) ln(5/β)/α²`, come from the classical Gaussian mechanism (valid
//! only for α ≤ 1) with a per-entry sensitivity of 1 for `ΦΦᵀ`, which undercounts the matrix's
//! Frobenius sensitivity √2; here the bound holds for every α and is exact.
//!
//! # The shift and the width (Lemma 6, Theorem 1)
//!
//! After t reports the Gram noise is a sum of t independent matrices, standard deviation
//! `σ_X√t` per entry; the client bounds its norm by `Λ_t` ([`local_noise_norm`]) and solves with
//! `V = Σ̃_t + (λ + 2Λ_t)I`, so `Λ_t + λ ≤ H_t + λI ≤ 3Λ_t + λ` with probability `1 − ζ/2T`.
//! The width is [`Confidence::width`] with those bounds and `κ` from `ũ`'s noise `σ_u√t`.

use nalgebra::{Cholesky, Const, SMatrix, SVector};
use rand_chacha::ChaCha20Rng;
use rand_core::Rng;

use super::confidence::{Confidence, ShiftRule, SpectralBounds, local_noise_norm, vector_noise_norm};
use super::tree::clip_scale;
use super::zcdp;
use super::{BOUND_MARGIN, Grid, JdpError, MAX_MATRIX_DIM, MAX_TREE_HORIZON, ParamError, VARIANCE_MARGIN};
use crate::budget::{Accountant, BudgetPolicy};
use crate::error::BudgetError;
use crate::features::{DefaultQff1, FeatureMap};
use crate::mechanism::MAX_RELEASE_INDEX;
use crate::params::{Bound, Delta, Epsilon};
use crate::reporter::{boot_key, sanitize};
use crate::sampler::DiscreteGaussian;
use crate::state::StateStore;
use rand_core::SeedableRng;

/// How many times [`LocalJdpClient::select`] may double the extra ridge.
const MAX_EXTRA_RIDGE_DOUBLINGS: usize = 16;

/// The parameters of a [`LocalJdpClient`] (all public: the server may know them).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ClientConfig {
    /// ε (Dubey's α) of each report.
    pub epsilon: Epsilon,
    /// δ (Dubey's β) of each report, in (0, 1).
    pub delta: Delta,
    /// b: rewards are clamped to `[−b, b]` before use; must be > 0.
    pub reward_bound: Bound,
    /// T: the horizon (enters the shift and the width only).
    pub horizon: u64,
    /// λ: the ridge.
    pub lambda: f64,
    /// How Λ_t is bounded.
    pub shift: ShiftRule,
    /// Theorem 1's constants.
    pub confidence: Confidence,
    /// The grid exponent k, or `None` for `⌊log₂ max(1, b)⌋ − 16`.
    pub grid_log2: Option<i32>,
}

impl ClientConfig {
    /// (ε, δ), b, T and Theorem 1's constants; λ = 1, the concentration shift, default grid.
    pub const fn new(
        epsilon: Epsilon,
        delta: Delta,
        reward_bound: Bound,
        horizon: u64,
        confidence: Confidence,
    ) -> Self {
        Self {
            epsilon,
            delta,
            reward_bound,
            horizon,
            lambda: 1.0,
            shift: ShiftRule::Concentration,
            confidence,
            grid_log2: None,
        }
    }

    /// The same with ridge λ.
    pub const fn with_lambda(mut self, lambda: f64) -> Self {
        self.lambda = lambda;
        self
    }

    /// The same with another shift rule.
    pub const fn with_shift(mut self, shift: ShiftRule) -> Self {
        self.shift = shift;
        self
    }

    /// The same with an explicit grid `2^k`.
    pub const fn with_grid(mut self, grid_log2: i32) -> Self {
        self.grid_log2 = Some(grid_log2);
        self
    }
}

/// What the server holds and forwards: `Σ̃_t` and `ũ_t` as grid indices, the number of reports
/// so far and the grid. All of it is public.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct JdpState<const F: usize> {
    /// `Σ̃_t`, symmetric (a client reads the upper triangle and writes both).
    pub gram: [[i64; F]; F],
    /// `ũ_t`.
    pub moment: [i64; F],
    /// t: the number of reports added.
    pub rounds: u64,
    /// The grid exponent k: entry `i` stands for `i·2^k`.
    pub grid_log2: i32,
}

impl<const F: usize> JdpState<F> {
    /// The empty state `Σ̃_1 = 0`, `ũ_1 = 0` on grid `2^grid_log2` (a `const fn`, so it can be
    /// a `static`).
    pub const fn new(grid_log2: i32) -> Self {
        Self { gram: [[0; F]; F], moment: [0; F], rounds: 0, grid_log2 }
    }
}

/// The point a client chose.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Selection {
    /// Index into the decision set.
    pub index: usize,
    /// Its UCB score `⟨θ̃, Φ(x)⟩ + w·‖Φ(x)‖_{V⁻¹}`.
    pub score: f64,
    /// `⟨θ̃, Φ(x)⟩`.
    pub mean: f64,
    /// `‖Φ(x)‖_{V⁻¹}`.
    pub spread: f64,
    /// The width `w_t`.
    pub width: f64,
    /// What had to be added to the diagonal beyond `λ + 2Λ_t` for `V` to be positive definite
    /// (0 unless the noise exceeded its `(ζ/2T)`-accurate bound or the state is corrupt).
    pub extra_ridge: f64,
}

/// The local-JDP client (module docs): `D` coordinates, `F` features from `M`.
#[derive(Clone, Debug)]
pub struct LocalJdpClient<const D: usize, const F: usize, M> {
    features: M,
    config: ClientConfig,
    grid: Grid,
    gram_max: i64,
    moment_max: i64,
    gram_noise: DiscreteGaussian,
    moment_noise: DiscreteGaussian,
    gram_sensitivity: f64,
    moment_sensitivity: f64,
}

impl<const D: usize, const F: usize, M: FeatureMap<D, F>> LocalJdpClient<D, F, M> {
    /// A client with feature map `features`. Fails with the [`ParamError`] naming the first
    /// bad parameter; `D = 0`, `F = 0` or `F > 1024` does not compile.
    ///
    /// ```
    /// use ldp_core::features::Qff;
    /// use ldp_core::jdp::{ClientConfig, Confidence, LocalJdpClient};
    /// use ldp_core::{Bound, Delta, Epsilon};
    /// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
    /// let q = Qff::<1, 4, 8>::new(0.5)?;
    /// let conf = Confidence { rkhs_bound: 1.0, noise_scale: 0.5, approx_error: 1e-6, zeta: 0.1, scale: 0.1 };
    /// let client = LocalJdpClient::new(q, ClientConfig::new(Epsilon::new(1.0)?, Delta::new(0.1)?, Bound::new(1.0)?, 100, conf))?;
    /// let mut state = client.initial_state();
    /// let candidates = [[0.1], [0.5], [0.9]];
    /// let mut rng = ChaCha20Rng::seed_from_u64(7);
    /// let pick = client.select(&state, &candidates)?;
    /// client.report(&mut state, &candidates[pick.index], 1.0, &mut rng)?;
    /// assert_eq!(state.rounds, 1);
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    pub fn new(features: M, config: ClientConfig) -> Result<Self, ParamError> {
        const { assert!(D >= 1 && F >= 1 && F <= MAX_MATRIX_DIM, "a client needs D >= 1 and 1 <= F <= 1024") };
        let rho = zcdp::rho_for(config.epsilon, config.delta)?;
        let b = config.reward_bound.get(); // finite and ≥ 0 by type
        if b == 0.0 {
            return Err(ParamError::BoundNotPositive);
        }
        if config.horizon == 0 {
            return Err(ParamError::HorizonZero);
        }
        if config.horizon > MAX_TREE_HORIZON {
            return Err(ParamError::HorizonAboveCapacity);
        }
        if !(config.lambda.is_finite() && config.lambda > 0.0) {
            return Err(ParamError::LambdaInvalid);
        }
        let c = &config.confidence;
        if !(c.zeta > 0.0 && c.zeta < 1.0) {
            return Err(ParamError::ZetaInvalid);
        }
        if ![c.rkhs_bound, c.noise_scale, c.approx_error, c.scale].iter().all(|v| v.is_finite() && *v >= 0.0)
        {
            return Err(ParamError::ConstantInvalid);
        }
        let grid = super::grid(b.max(1.0), config.grid_log2)?;
        let (gram_max, moment_max) = (grid.steps(BOUND_MARGIN), grid.steps(b * BOUND_MARGIN));
        let unit = grid.in_steps(BOUND_MARGIN);
        let gram_sensitivity = core::f64::consts::SQRT_2 * unit + libm::sqrt((F * (F + 1) / 2) as f64);
        let moment_sensitivity = 2.0 * b * unit + libm::sqrt(F as f64);
        let noise =
            |delta: f64| DiscreteGaussian::with_variance_at_least(delta * delta / rho * VARIANCE_MARGIN);
        let gram_noise = noise(gram_sensitivity).ok_or(ParamError::NoiseOutOfRange)?;
        let moment_noise = noise(moment_sensitivity).ok_or(ParamError::NoiseOutOfRange)?;
        Ok(Self {
            features,
            config,
            grid,
            gram_max,
            moment_max,
            gram_noise,
            moment_noise,
            gram_sensitivity,
            moment_sensitivity,
        })
    }

    /// The empty state on this client's grid.
    pub fn initial_state(&self) -> JdpState<F> {
        JdpState::new(self.grid.log2())
    }

    /// Alg. 3's selection: the UCB argmax over `candidates` (first on ties; NaN scores lose).
    ///
    /// If `V = Σ̃ + (λ + 2Λ_t)I` is not positive definite (the noise exceeded its bound, which
    /// happens with probability at most ζ/2T per round), the diagonal is raised by
    /// `λ + 2Λ_t`, then doubling, up to 16 times ([`Selection::extra_ridge`]).
    ///
    /// Errors: [`JdpError::GridMismatch`], [`JdpError::EmptyDecisionSet`],
    /// [`JdpError::NotPositiveDefinite`] (still not positive definite: a corrupt state),
    /// [`JdpError::NoFiniteScore`].
    pub fn select(&self, state: &JdpState<F>, candidates: &[[f64; D]]) -> Result<Selection, JdpError> {
        if state.grid_log2 != self.grid.log2() {
            return Err(JdpError::GridMismatch);
        }
        if candidates.is_empty() {
            return Err(JdpError::EmptyDecisionSet);
        }
        let bounds = self.spectral_bounds(state.rounds);
        let base = 2.0 * (bounds.lambda_min - self.config.lambda) + self.config.lambda;
        let grid = self.grid;
        // V = Σ̃ + (λ + 2Λ_t)I; if the noise exceeded its bound, add more to the diagonal
        // (post-processing of public data: privacy is unaffected) and record it.
        let mut extra = 0.0;
        let mut chol: Option<Cholesky<f64, Const<F>>> = None;
        for _ in 0..=MAX_EXTRA_RIDGE_DOUBLINGS {
            let diag = base + extra;
            let v = SMatrix::<f64, F, F>::from_fn(|i, j| {
                let (a, b) = if i <= j { (i, j) } else { (j, i) };
                grid.value(state.gram[a][b]) + if i == j { diag } else { 0.0 }
            });
            chol = v.cholesky();
            if chol.is_some() {
                break;
            }
            extra = if extra == 0.0 { base } else { 2.0 * extra };
        }
        let chol = chol.ok_or(JdpError::NotPositiveDefinite)?;
        let u = SVector::<f64, F>::from_fn(|i, _| grid.value(state.moment[i]));
        let theta = chol.solve(&u);
        let width = self.config.confidence.width(state.rounds, &bounds, chol.ln_determinant(), F);
        let mut best: Option<Selection> = None;
        let mut phi = [0.0; F];
        for (index, x) in candidates.iter().enumerate() {
            self.features.features_into(x, &mut phi);
            let phi_v = SVector::<f64, F>::from_column_slice(&phi);
            let mean = theta.dot(&phi_v);
            let Some(w) = chol.l_dirty().solve_lower_triangular(&phi_v) else {
                continue;
            };
            let spread = w.norm();
            let score = mean + width * spread;
            if score.is_finite() && best.is_none_or(|b| score > b.score) {
                best = Some(Selection { index, score, mean, spread, width, extra_ridge: extra });
            }
        }
        best.ok_or(JdpError::NoFiniteScore)
    }

    /// Alg. 3's report: add `round(Φ(x)Φ(x)ᵀ) + N_t` and `round(yΦ(x)) + n_t` to `state` in
    /// place (Φ clipped to norm 1, y clamped to `[−b, b]`), and count the report.
    ///
    /// Refused, changing nothing: a state on another grid, a non-finite reward or point.
    pub fn report<R: Rng + ?Sized>(
        &self,
        state: &mut JdpState<F>,
        x: &[f64; D],
        reward: f64,
        rng: &mut R,
    ) -> Result<(), JdpError> {
        if state.grid_log2 != self.grid.log2() {
            return Err(JdpError::GridMismatch);
        }
        if !reward.is_finite() || x.iter().any(|v| !v.is_finite()) {
            return Err(JdpError::NonFiniteValue);
        }
        let mut phi = [0.0; F];
        self.features.features_into(x, &mut phi);
        let s = clip_scale(&phi, 1.0)?;
        for p in &mut phi {
            *p *= s;
        }
        let b = self.config.reward_bound.get();
        let y = reward.clamp(-b, b);
        let add =
            |old: i64, delta: i64| old.saturating_add(delta).clamp(-MAX_RELEASE_INDEX, MAX_RELEASE_INDEX);
        for i in 0..F {
            for j in i..F {
                let entry =
                    self.grid.index_within(phi[i] * phi[j], self.gram_max) + self.gram_noise.sample(rng);
                let new = add(state.gram[i][j], entry);
                state.gram[i][j] = new;
                state.gram[j][i] = new;
            }
        }
        for (m, p) in state.moment.iter_mut().zip(&phi) {
            *m = add(*m, self.grid.index_within(y * p, self.moment_max) + self.moment_noise.sample(rng));
        }
        state.rounds = state.rounds.saturating_add(1);
        Ok(())
    }

    /// Definition 3's bounds after `t` reports (Lemma 6 structure, see the module docs).
    pub fn spectral_bounds(&self, t: u64) -> SpectralBounds {
        let c = &self.config;
        let zeta = c.confidence.zeta;
        let lam = local_noise_norm(c.shift, self.gram_sigma(), t, F, c.horizon, zeta);
        let lam = if t == 0 { 0.0 } else { lam };
        let h = vector_noise_norm(self.moment_sigma() * libm::sqrt(t as f64), F, c.horizon, zeta);
        SpectralBounds::shifted(c.lambda, lam, h)
    }

    /// σ_X: standard deviation of one Gram noise entry, value units.
    pub fn gram_sigma(&self) -> f64 {
        self.grid.scaled(self.gram_noise.sigma())
    }

    /// σ_u: standard deviation of one moment noise entry, value units.
    pub fn moment_sigma(&self) -> f64 {
        self.grid.scaled(self.moment_noise.sigma())
    }

    /// The zCDP parameter of one report, `Δ_X²/2σ_X² + Δ_u²/2σ_u²`.
    pub fn rho(&self) -> f64 {
        self.gram_noise.rho(self.gram_sensitivity) + self.moment_noise.rho(self.moment_sensitivity)
    }

    /// The ε one report guarantees at the configured δ (≤ the configured ε).
    pub fn epsilon_effective(&self) -> f64 {
        zcdp::epsilon_for(self.rho(), self.config.delta).unwrap_or(f64::INFINITY)
    }

    /// The grid exponent k.
    pub fn grid_log2(&self) -> i32 {
        self.grid.log2()
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The feature map.
    pub fn features(&self) -> &M {
        &self.features
    }
}

/// The feature count of [`DeviceClient`]: the default 1-D QFF.
pub const DEVICE_FEATURES: usize = 2 * crate::features::DEFAULT_FREQUENCIES;

/// A concrete local-JDP client for a device: one coordinate, the default QFF (`F = 28`, error
/// ≤ 1e-6 for `l ≥ 0.2`), ChaCha20 noise. It is non-generic, so the whole path (features,
/// Cholesky, discrete Gaussian) is compiled with the library for every target, and its state is
/// 6 512 bytes (`8F² + 8F + 16`; checked in `core/tests/jdp_alloc.rs`).
#[derive(Clone, Debug)]
pub struct DeviceClient {
    inner: LocalJdpClient<1, DEVICE_FEATURES, DefaultQff1>,
}

impl DeviceClient {
    /// The default 1-D QFF at `lengthscale` on [0, 1] and the client configuration.
    ///
    /// ```
    /// use ldp_core::jdp::{ClientConfig, Confidence, DeviceClient};
    /// use ldp_core::{Bound, Delta, Epsilon};
    /// use rand_chacha::{ChaCha20Rng, rand_core::SeedableRng};
    /// let conf = Confidence { rkhs_bound: 1.0, noise_scale: 0.5, approx_error: 1e-6, zeta: 0.1, scale: 0.1 };
    /// let device = DeviceClient::new(0.2, ClientConfig::new(Epsilon::new(1.0)?, Delta::new(0.1)?, Bound::new(1.0)?, 1000, conf))?;
    /// let mut state = device.initial_state();
    /// let mut rng = ChaCha20Rng::seed_from_u64(3);
    /// let grid = [[0.0], [0.25], [0.5], [0.75], [1.0]];
    /// let pick = device.select(&state, &grid)?;
    /// device.report(&mut state, &grid[pick.index], 0.8, &mut rng)?;
    /// assert_eq!(state.rounds, 1);
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    pub fn new(lengthscale: f64, config: ClientConfig) -> Result<Self, ParamError> {
        let features = DefaultQff1::new(lengthscale)?;
        let inner = LocalJdpClient::new(features, config)?;
        Ok(Self { inner })
    }

    /// The empty state on this client's grid.
    pub fn initial_state(&self) -> JdpState<DEVICE_FEATURES> {
        self.inner.initial_state()
    }

    /// [`LocalJdpClient::select`].
    pub fn select(
        &self,
        state: &JdpState<DEVICE_FEATURES>,
        candidates: &[[f64; 1]],
    ) -> Result<Selection, JdpError> {
        self.inner.select(state, candidates)
    }

    /// [`LocalJdpClient::report`] with a ChaCha20 generator (seed it from a hardware TRNG).
    pub fn report(
        &self,
        state: &mut JdpState<DEVICE_FEATURES>,
        x: &[f64; 1],
        reward: f64,
        rng: &mut ChaCha20Rng,
    ) -> Result<(), JdpError> {
        self.inner.report(state, x, reward, rng)
    }

    /// The generic client inside.
    pub fn client(&self) -> &LocalJdpClient<1, DEVICE_FEATURES, DefaultQff1> {
        &self.inner
    }
}

/// A [`JdpReporter`] refused a report. Nothing was released.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum JdpReportError<E> {
    /// The client refused: the state is on another grid than the client's (checked before the
    /// spend, so no budget was spent).
    Jdp(JdpError),
    /// The accountant refused (floor, limit, exhausted) or its store failed (then the spend
    /// counts: fail closed).
    Budget(BudgetError<E>),
}

impl<E: core::fmt::Display> core::fmt::Display for JdpReportError<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Jdp(e) => write!(f, "{e}"),
            Self::Budget(e) => write!(f, "{e}"),
        }
    }
}

impl<E: core::fmt::Debug + core::fmt::Display> core::error::Error for JdpReportError<E> {}

/// The production local-JDP reporter: a [`DeviceClient`] whose every report is charged to the
/// device's [`Accountant`] first, and whose noise comes from the per-boot ChaCha20 key of
/// [`crate::reporter`] — the same promise as [`crate::Reporter`]'s, for Dubey's Alg. 3.
///
/// Each report costs the client's ε; k reports are (kε, kδ)-LDP by basic composition, with
/// kε ≤ the policy's total (and so kδ ≤ total·δ/ε). A non-finite reward is charged and used as
/// [`sanitize`] says, a point is clamped to the client's domain [0, 1] (NaN read as 0): neither
/// is ever refused, so no refusal depends on the private values.
#[derive(Debug)]
pub struct JdpReporter<S> {
    client: DeviceClient,
    epsilon: Epsilon,
    accountant: Accountant<S>,
    rng: ChaCha20Rng,
}

impl<S: StateStore> JdpReporter<S> {
    /// Boots the reporter over `store` (see [`crate::Reporter::open`]); each report costs the
    /// client's ε, which must lie within `policy`'s floor and limit.
    ///
    /// ```
    /// use ldp_core::jdp::{ClientConfig, Confidence, DeviceClient, JdpReporter};
    /// use ldp_core::{Bound, BudgetPolicy, Delta, Epsilon, MemoryStore};
    /// let conf = Confidence { rkhs_bound: 1.0, noise_scale: 0.5, approx_error: 1e-6, zeta: 0.1, scale: 0.1 };
    /// let client = DeviceClient::new(0.2, ClientConfig::new(Epsilon::new(1.0)?, Delta::new(0.1)?, Bound::new(1.0)?, 1000, conf))?;
    /// let policy = BudgetPolicy::new(Epsilon::new(1.0)?, Epsilon::new(2.0)?)?;
    /// let mut device = JdpReporter::open(client, policy, MemoryStore::provisioned([1; 32]), [0; 32])?;
    /// let mut state = device.client().initial_state();
    /// device.report(&mut state, &[0.5], 0.8)?;
    /// device.report(&mut state, &[0.5], 0.8)?;
    /// assert!(device.report(&mut state, &[0.5], 0.8).is_err()); // 2 ε spent of 2
    /// assert_eq!(state.rounds, 2);
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    pub fn open(
        client: DeviceClient,
        policy: BudgetPolicy,
        store: S,
        entropy: [u8; 32],
    ) -> Result<Self, BudgetError<S::Error>> {
        let accountant = Accountant::open(store, policy)?;
        let epsilon = client.client().config().epsilon;
        accountant.check(epsilon)?;
        let rng = ChaCha20Rng::from_seed(boot_key(accountant.seed(), accountant.boot(), &entropy, 1));
        Ok(Self { client, epsilon, accountant, rng })
    }

    /// Charges ε, then adds this user's privatised contribution to `state` (Alg. 3's report).
    pub fn report(
        &mut self,
        state: &mut JdpState<DEVICE_FEATURES>,
        x: &[f64; 1],
        reward: f64,
    ) -> Result<(), JdpReportError<S::Error>> {
        if state.grid_log2 != self.client.client().grid_log2() {
            return Err(JdpReportError::Jdp(JdpError::GridMismatch));
        }
        self.accountant.spend(self.epsilon).map_err(JdpReportError::Budget)?;
        // The client's domain is [0, 1]: a point outside it is clamped (NaN read as 0).
        let x = [sanitize(x[0]).clamp(0.0, 1.0)];
        // The grid matches and every value is finite: the client does not refuse.
        self.client.report(state, &x, sanitize(reward), &mut self.rng).map_err(JdpReportError::Jdp)
    }

    /// The client (selection, parameters).
    pub fn client(&self) -> &DeviceClient {
        &self.client
    }

    /// The accountant (spent and remaining budget, boot number).
    pub fn accountant(&self) -> &Accountant<S> {
        &self.accountant
    }
}
