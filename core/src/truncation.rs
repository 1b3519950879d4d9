//! Truncation rules and the truncation-level schedules of the seed papers (SPEC §1.2).
//!
//! The helpers act on values that are already public (privatised reports on the learner's side)
//! or on the device before noise is added. A NaN input maps to 0 in both helpers, so they never
//! pass NaN on.
//!
//! Logarithms are natural unless a name says otherwise.

use crate::params::{Bound, Epsilon, TruncationLevel};

/// Raw truncation to zero: `y·1{|y| ≤ b}` (TGP-UCB, Zhou & Tan Alg. 2; robust UCB/SE, Tao et al.).
///
/// ```
/// use ldp_core::{truncation::truncate_to_zero, TruncationLevel};
/// let b = TruncationLevel::new(1.0)?;
/// assert_eq!(truncate_to_zero(0.5, b), 0.5);
/// assert_eq!(truncate_to_zero(-1.5, b), 0.0);
/// assert_eq!(truncate_to_zero(f64::NAN, b), 0.0);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub fn truncate_to_zero(y: f64, b: TruncationLevel) -> f64 {
    if y.abs() <= b.get() { y } else { 0.0 }
}

/// Projection onto `[−b, b]`.
///
/// ```
/// use ldp_core::{truncation::clamp, TruncationLevel};
/// let b = TruncationLevel::new(1.0)?;
/// assert_eq!(clamp(-3.0, b), -1.0);
/// assert_eq!(clamp(f64::NAN, b), 0.0);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub fn clamp(y: f64, b: TruncationLevel) -> f64 {
    if y.is_nan() { 0.0 } else { y.clamp(-b.get(), b.get()) }
}

/// LDP-TGP-UCB's level `b_t = B + R + 𝓛 ln t` (Zhou & Tan Alg. 2 with the CTL scale 𝓛);
/// `t` is taken as at least 1.
///
/// ```
/// use ldp_core::{truncation::ldp_tgp_ucb_level, Bound};
/// let b = ldp_tgp_ucb_level(Bound::new(1.0)?, Bound::new(1.0)?, 4.0, 1);
/// assert_eq!(b, 2.0);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub fn ldp_tgp_ucb_level(b: Bound, r: Bound, laplace_scale: f64, t: u64) -> f64 {
    b.get() + r.get() + laplace_scale * libm::log(t.max(1) as f64)
}

/// TGP-UCB's practical level `b_t = t^{1/(2(1+α))} v^{1/(1+α)}` (Chowdhury & Gopalan's public
/// code, which Zhou & Tan's experiments follow); `v` bounds the (1+α)-th moment of the reward.
pub fn tgp_ucb_practical_level(t: u64, alpha: f64, v: f64) -> f64 {
    let t = t.max(1) as f64;
    libm::pow(t, 1.0 / (2.0 * (1.0 + alpha))) * libm::pow(v, 1.0 / (1.0 + alpha))
}

/// ATA-GP-UCB's practical level `b_t = t^{(1−α)/(2(1+α))} (v / ln((m+1)T))^{1/(1+α)}`, with m the
/// Nyström dimension and T the horizon.
pub fn ata_practical_level(t: u64, alpha: f64, v: f64, m: u64, horizon: u64) -> f64 {
    let t = t.max(1) as f64;
    let log = libm::log((m as f64 + 1.0) * horizon.max(1) as f64);
    libm::pow(t, (1.0 - alpha) / (2.0 * (1.0 + alpha))) * libm::pow(v / log, 1.0 / (1.0 + alpha))
}

/// Second moment of a CTL-privatised reward, `v = B² + R² + 8(B+R)²/ε²` (Zhou & Tan Appendix C):
/// the `v` to use in the heavy-tailed levels above for the LDP algorithms.
///
/// ```
/// use ldp_core::{truncation::ldp_second_moment, Bound, Epsilon};
/// let v = ldp_second_moment(Bound::new(1.0)?, Bound::new(1.0)?, Epsilon::new(1.0)?);
/// assert_eq!(v, 34.0);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub fn ldp_second_moment(b: Bound, r: Bound, epsilon: Epsilon) -> f64 {
    let (b, r, e) = (b.get(), r.get(), epsilon.get());
    b * b + r * r + 8.0 * (b + r) * (b + r) / (e * e)
}

/// DP robust UCB's level `B_n = (ε u n / log^{1.5} T)^{1/(1+v)}` (Tao et al. Alg. 1), where `u`
/// bounds the (1+v)-th moment and `n` is the arm's pull count.
pub fn dp_robust_ucb_level(epsilon: Epsilon, u: f64, n: u64, horizon: u64, v: f64) -> f64 {
    dp_robust_ucb_level_at(epsilon, u, n, log_pow_1_5(horizon), v)
}

/// `ln^{1.5} T` (T taken as at least 2), the horizon term of [`dp_robust_ucb_level`].
pub(crate) fn log_pow_1_5(horizon: u64) -> f64 {
    libm::pow(libm::log(horizon.max(2) as f64), 1.5)
}

/// [`dp_robust_ucb_level`] with its horizon term `ln^{1.5} T` given (computed once by a policy).
pub(crate) fn dp_robust_ucb_level_at(epsilon: Epsilon, u: f64, n: u64, log_pow_1_5: f64, v: f64) -> f64 {
    libm::pow(epsilon.get() * u * n as f64 / log_pow_1_5, 1.0 / (1.0 + v))
}

/// The non-private robust UCB level `(u n / ln(t²))^{1/(1+v)}` of Bubeck et al. (2013), quoted in
/// Tao et al. §4.1.
pub fn robust_ucb_level(u: f64, n: u64, t: u64, v: f64) -> f64 {
    robust_ucb_level_at(u, n, log_t_squared(t), v)
}

/// `ln(t²)` (t taken as at least 2), the confidence term of [`robust_ucb_level`].
pub(crate) fn log_t_squared(t: u64) -> f64 {
    let t = t.max(2) as f64;
    libm::log(t * t)
}

/// [`robust_ucb_level`] with its confidence term `ln(t²)` given (computed once by a policy).
pub(crate) fn robust_ucb_level_at(u: f64, n: u64, log_t_squared: f64, v: f64) -> f64 {
    libm::pow(u * n as f64 / log_t_squared, 1.0 / (1.0 + v))
}

/// One epoch τ of robust successive elimination (Tao et al. Alg. 3 and 4, lines 7–9 and 21–23).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RseEpoch {
    /// `R_τ`: pulls of each surviving arm in this epoch (at least 1; saturates at `u64::MAX`).
    pub pulls: u64,
    /// `B_τ`: the truncation level.
    pub level: f64,
    /// `err_τ`: the confidence radius.
    pub err: f64,
    /// The elimination threshold `(κ/2)·err_τ`: an arm whose (private) mean is more than this
    /// below the best one is eliminated. With the paper's κ this is 12·err_τ (DP, κ = 24) or
    /// 14·err_τ (LDP, κ = 28); for every κ it is ≈ D_τ/2 (see [`dp_rse_epoch_with`]).
    pub threshold: f64,
}

/// κ of DP robust successive elimination as printed (Tao et al. Alg. 3, line 8: `24^{(1+v)/v}`;
/// line 23: eliminate at `12·err_τ = (κ/2)·err_τ`).
pub const DP_RSE_PAPER_KAPPA: f64 = 24.0;
/// κ of LDP robust successive elimination as printed (Tao et al. Alg. 4, line 8: `28^{2(1+v)/v}`;
/// line 23: eliminate at `14·err_τ = (κ/2)·err_τ`).
pub const LDP_RSE_PAPER_KAPPA: f64 = 28.0;

/// DP robust successive elimination with the paper's κ = 24, epoch `tau ≥ 1` with `active` arms
/// left (Tao et al. Alg. 3): see [`dp_rse_epoch_with`].
///
/// ```
/// use ldp_core::{truncation::dp_rse_epoch, Epsilon};
/// let e = dp_rse_epoch(1, 5, 1e-3, Epsilon::new(1.0)?, 1.0, 1.0);
/// // ℓ = ln(4·5/β); R_1 = ⌈24²·ℓ/(1/2)² + 1⌉; err ≈ D_1/24; threshold = 12·err.
/// let l = (20.0f64 / 1e-3).ln();
/// assert_eq!(e.pulls, (576.0 * l * 4.0 + 1.0f64).ceil() as u64);
/// assert!((e.threshold - 12.0 * e.err).abs() < 1e-15);
/// assert!((e.err * 24.0 / 0.5 - 1.0).abs() < 1e-3);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub fn dp_rse_epoch(tau: u32, active: u32, beta: f64, epsilon: Epsilon, u: f64, v: f64) -> RseEpoch {
    dp_rse_epoch_with(DP_RSE_PAPER_KAPPA, tau, active, beta, epsilon, u, v)
}

/// DP robust successive elimination, epoch `tau ≥ 1` with `active` arms left, with the constant κ
/// as a parameter (Tao et al. Alg. 3 has κ = 24):
///
/// ```text
/// D_τ = 2^{−τ},   ℓ = ln(4|S|τ²/β),
/// R_τ = ⌈u^{1/v} κ^{(1+v)/v} ℓ / (ε D_τ^{(1+v)/v}) + 1⌉,
/// B_τ = (u R_τ ε / ℓ)^{1/(1+v)},
/// err_τ = u^{1/(1+v)} (ℓ / (R_τ ε))^{v/(1+v)},      threshold = (κ/2)·err_τ.
/// ```
///
/// Substituting R_τ gives `err_τ ≤ D_τ/κ`, so the threshold is at most `D_τ/2` whatever κ is:
/// κ trades the number of pulls per epoch (∝ κ^{(1+v)/v}) against the margin between the
/// threshold and the estimation error. The proof of Lemma 4 needs `|μ̃ − μ| ≤ 6·err_τ` (hence
/// κ = 24 = 4·6); in practice the error is a fraction of err_τ (see `ldp_core::bandit`).
///
/// Checked against the paper: lines 7–9 and 21 of Alg. 3 as printed, and consistent with the
/// proof of Lemma 4 (`12·err_τ < D_τ/2`).
pub fn dp_rse_epoch_with(
    kappa: f64,
    tau: u32,
    active: u32,
    beta: f64,
    epsilon: Epsilon,
    u: f64,
    v: f64,
) -> RseEpoch {
    let e = epsilon.get();
    let (d, l) = gap_and_log(tau, active, beta, 4.0);
    let p = (1.0 + v) / v;
    let r = libm::ceil(libm::pow(u, 1.0 / v) * libm::pow(kappa, p) * l / (e * libm::pow(d, p)) + 1.0);
    let err = libm::pow(u, 1.0 / (1.0 + v)) * libm::pow(l / (r * e), v / (1.0 + v));
    epoch_of(r, libm::pow(u * r * e / l, 1.0 / (1.0 + v)), err, kappa)
}

/// D_τ = 2^{−τ} (τ ≥ 1) and ln(c·|S|·τ²/β): the gap and the log factor both schedules start
/// from (c = 4 in Alg. 3, 8 in Alg. 4).
fn gap_and_log(tau: u32, active: u32, beta: f64, c: f64) -> (f64, f64) {
    let tau_f = f64::from(tau.max(1));
    (libm::pow(2.0, -tau_f), libm::log(c * f64::from(active) * tau_f * tau_f / beta))
}

/// The epoch of `r` pulls (at least one) with truncation level `level`, error bound `err` and
/// elimination threshold κ·err/2.
fn epoch_of(r: f64, level: f64, err: f64, kappa: f64) -> RseEpoch {
    RseEpoch { pulls: (r as u64).max(1), level, err, threshold: 0.5 * kappa * err }
}

/// LDP robust successive elimination with the paper's κ = 28, epoch `tau ≥ 1` with `active`
/// arms left (Tao et al. Alg. 4): see [`ldp_rse_epoch_with`].
///
/// ```
/// use ldp_core::{truncation::ldp_rse_epoch, Epsilon};
/// let e = ldp_rse_epoch(1, 5, 1e-3, Epsilon::new(1.0)?, 1.0, 1.0);
/// // err ≈ D_1/28 with D_1 = 1/2, threshold = 14·err ≈ D_1/2.
/// assert!((e.err * 28.0 / 0.5 - 1.0).abs() < 1e-3);
/// assert!((e.threshold - 14.0 * e.err).abs() < 1e-15);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub fn ldp_rse_epoch(tau: u32, active: u32, beta: f64, epsilon: Epsilon, u: f64, v: f64) -> RseEpoch {
    ldp_rse_epoch_with(LDP_RSE_PAPER_KAPPA, tau, active, beta, epsilon, u, v)
}

/// LDP robust successive elimination, epoch `tau ≥ 1` with `active` arms left, with the constant
/// κ as a parameter (Tao et al. Alg. 4 has κ = 28):
///
/// ```text
/// D_τ = 2^{−τ},   ℓ = ln(8|S|τ²/β),
/// R_τ = ⌈u^{2/v} κ^{2(1+v)/v} ℓ / (ε² D_τ^{2(1+v)/v}) + ℓ⌉,
/// B_τ = (u √R_τ ε / √ℓ)^{1/(1+v)}               (the device's public level),
/// err_τ = u^{1/(1+v)} (√ℓ / (√R_τ ε))^{v/(1+v)},     threshold = (κ/2)·err_τ ≤ D_τ/2.
/// ```
///
/// **Two corrections to Alg. 4 as printed** (both from the paper's own proof, eq. 24 and the
/// elimination step of Lemma 13):
///
/// - **err_τ has √R_τ, not R_τ.** Line 21 prints `(√ℓ/(R_τ ε))^{v/(1+v)}`. The proof (eq. 24)
///   bounds `|μ̃_a − μ_a|` by `7u^{1/(1+v)}(√ℓ/(√R_τ ε))^{v/(1+v)}` — the Laplace average of R_τ
///   reports of scale 2B_τ/ε is of order `B_τ/(ε√R_τ)` — and needs `14·err_τ ≤ D_τ/2`, which
///   holds with √R_τ (then `err_τ ≤ D_τ/28` exactly as R_τ is chosen). With R_τ the radius is
///   smaller by a factor `R_τ^{v/(2(1+v))}` (≈ 30 at R_τ = 10^6, v = 1) than the actual error,
///   and the optimal arm would be eliminated by noise.
/// - **D_τ = 2^{−τ}, not 4^{−τ}.** Line 7 prints `4^{−τ}`; the proof says "we eliminate all arms
///   with gap ≥ 2^{−τ} = D_τ" and sums the pulls with the ratio `R_{τ+1}/R_τ = 4^{(1+v)/v}`,
///   which is `2^{2(1+v)/v}`, i.e. D_τ = 2^{−τ} in R_τ's `D_τ^{−2(1+v)/v}`. (4^{−τ} is also
///   correct for privacy but multiplies epoch τ's pulls by `4^{τ(1+v)/v}`: 64× in epoch 1 and
///   4096× in epoch 2 at v = 1/2.)
///
/// **What these counts cost: not Theorem 7's rate.** An arm of gap Δ is removed once
/// `D_τ ≤ Δ` (the proof's own elimination step), so it is pulled `Σ_{τ ≤ τ(Δ)} R_τ`, which grows
/// as `Δ^{−2(1+v)/v}` (`core/tests/rse_elimination_rate.rs` measures the exponent on this
/// schedule). Lemma 13 instead stops at the first τ with `D_τ² ≤ Δ`, which gives
/// `Δ^{−(1+v)/v}`, and Theorem 7's bounds, `O(u^{2/v} log T/ε² · Σ_a Δ_a^{−1/v})` and
/// `O((K log T/ε²)^{v/(1+v)} T^{1/(1+v)})`, which the paper calls optimal (Remark 3, Thms 8–9),
/// rest on that step. Zhou & Zhang (NeurIPS 2024, "Locally Private and Robust Multi-Armed
/// Bandits") identify the flaw and give the correct rate for locally private heavy-tailed
/// bandits: `Õ((K/ε²)^{v/(2(1+v))} T^{(2+v)/(2(1+v))})` instance-independent. From the counts
/// above the instance-dependent bound is `O(u^{2/v} log T/ε² · Σ_a Δ_a^{−(2+v)/v})` (Δ_a times
/// the pulls; our derivation). "Optimal", in Tao et al.'s title and Remark 3, does not hold for
/// this algorithm; the central-DP proof (Lemma 3, Thm 4) stops at `D_τ ≤ Δ` and is not
/// affected.
pub fn ldp_rse_epoch_with(
    kappa: f64,
    tau: u32,
    active: u32,
    beta: f64,
    epsilon: Epsilon,
    u: f64,
    v: f64,
) -> RseEpoch {
    let e = epsilon.get();
    let (d, l) = gap_and_log(tau, active, beta, 8.0);
    let p = 2.0 * (1.0 + v) / v;
    let r = libm::ceil(libm::pow(u, 2.0 / v) * libm::pow(kappa, p) * l / (e * e * libm::pow(d, p)) + l);
    let err = libm::pow(u, 1.0 / (1.0 + v)) * libm::pow(libm::sqrt(l / r) / e, v / (1.0 + v));
    epoch_of(r, libm::pow(u * libm::sqrt(r) * e / libm::sqrt(l), 1.0 / (1.0 + v)), err, kappa)
}
