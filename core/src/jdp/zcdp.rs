//! Zero-concentrated DP accounting for the Gaussian releases of this module.
//!
//! A mechanism is ρ-zCDP (Bun & Steinke, TCC 2016) if every Rényi divergence of order a > 1
//! between its outputs on neighbouring inputs is at most `a·ρ`. Adding independent
//! N_ℤ(0, σ²) noise ([`DiscreteGaussian`](crate::sampler::DiscreteGaussian)) to an integer
//! vector with ℓ2 sensitivity Δ is `Δ²/(2σ²)`-zCDP, ρ's add under (adaptive) composition, and
//! ρ-zCDP implies (ε, δ)-DP for every δ > 0 with
//!
//! ```text
//! δ(ρ, ε) = inf_{a > 1} exp((a − 1)(aρ − ε)) / (a − 1) · (1 − 1/a)^a     (CKS 2020, Cor. 13)
//! ```
//!
//! which is never worse than Bun & Steinke's Proposition 1.3, `ε = ρ + 2√(ρ ln(1/δ))`
//! ([`epsilon_bun_steinke`]). [`delta_for`] evaluates the infimum at a bisected `a`: *any*
//! `a > 1` gives a valid upper bound, so an imprecise search only loosens δ. [`rho_for`] finds
//! (by bisection) the largest ρ whose δ at ε is at most the target, which is how the
//! mechanisms of [`crate::jdp`] calibrate their noise from a user's (α, β) = (ε, δ).

use crate::error::ParamError;
use crate::params::{Delta, Epsilon};

/// Bisection steps: far beyond the 53 needed to exhaust `f64` on these brackets.
const STEPS: usize = 200;
/// δ targets are compared with this relative margin, absorbing the rounding of `exp`/`log1p`.
const DELTA_MARGIN: f64 = 1e-9;

fn check_rho(rho: f64) -> Result<f64, ParamError> {
    if rho.is_finite() && rho >= 0.0 { Ok(rho) } else { Err(ParamError::RhoInvalid) }
}

/// The δ at which ρ-zCDP gives (ε, δ)-DP: CKS 2020 Corollary 13 (see the module docs), capped
/// at 1. `ρ = 0` gives 0.
///
/// ```
/// use ldp_core::jdp::zcdp::delta_for;
/// // CKS's example: ρ = 0.025 at ε = 1.
/// let d = delta_for(0.025, ldp_core::Epsilon::new(1.0)?)?;
/// assert!(d > 1e-6 && d < 1e-5);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub fn delta_for(rho: f64, epsilon: Epsilon) -> Result<f64, ParamError> {
    let rho = check_rho(rho)?;
    let epsilon = epsilon.get();
    if rho == 0.0 {
        return Ok(0.0);
    }
    // The optimal a is a root of (2a − 1)ρ − ε + ln(1 − 1/a), at least (1 + ε/ρ)/2; a ≥ 1.01
    // keeps the formula well conditioned (smaller a only matters when ε ≲ ρ, where δ ≈ 1).
    let (mut lo, mut hi) = (1.01f64, (epsilon + 1.0) / (2.0 * rho) + 2.0);
    let mut a = lo;
    for _ in 0..STEPS {
        a = 0.5 * (lo + hi);
        let slope = (2.0 * a - 1.0) * rho - epsilon + libm::log1p(-1.0 / a);
        if slope < 0.0 {
            lo = a;
        } else {
            hi = a;
        }
    }
    let log_delta = (a - 1.0) * (a * rho - epsilon) + a * libm::log1p(-1.0 / a) - libm::log(a - 1.0);
    Ok(libm::exp(log_delta).min(1.0))
}

/// The smallest ε (by bisection, rounded up) such that ρ-zCDP gives (ε, δ)-DP.
///
/// ```
/// use ldp_core::jdp::zcdp::{epsilon_bun_steinke, epsilon_for};
/// let delta = ldp_core::Delta::new(1e-6)?;
/// let tight = epsilon_for(0.1, delta)?;
/// assert!(tight < epsilon_bun_steinke(0.1, delta)?);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub fn epsilon_for(rho: f64, delta: Delta) -> Result<f64, ParamError> {
    let rho = check_rho(rho)?;
    if rho == 0.0 {
        return Ok(0.0);
    }
    // Invariant: δ(ρ, hi) ≤ δ (Bun–Steinke's ε is valid), δ(ρ, lo) > δ or lo = 0.
    let (mut lo, mut hi) = (0.0f64, epsilon_bun_steinke(rho, delta)?);
    if !hi.is_finite() {
        return Err(ParamError::EpsilonNotFinite); // ρ so large that no finite ε is known
    }
    let target = delta.get() * (1.0 - DELTA_MARGIN);
    for _ in 0..STEPS {
        let mid = 0.5 * (lo + hi);
        // `mid` is finite (inside the finite bracket), so it is a valid ε exactly when it is > 0.
        let below = match Epsilon::new(mid) {
            Ok(epsilon) => delta_for(rho, epsilon)? <= target,
            Err(_) => false,
        };
        if below {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

/// The largest ρ (by bisection, rounded down) such that ρ-zCDP gives (ε, δ)-DP: the budget a
/// mechanism calibrated to the user's (ε, δ) may spend.
///
/// ```
/// use ldp_core::jdp::zcdp::{delta_for, rho_for};
/// use ldp_core::{Delta, Epsilon};
/// let (epsilon, delta) = (Epsilon::new(1.0)?, Delta::new(0.1)?);
/// let rho = rho_for(epsilon, delta)?;
/// assert!(delta_for(rho, epsilon)? <= 0.1);
/// assert!(rho > 0.25 && rho < 0.3); // Bun–Steinke would allow only ρ ≈ 0.09
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub fn rho_for(epsilon: Epsilon, delta: Delta) -> Result<f64, ParamError> {
    let delta = delta.get();
    // Invariant: δ(lo, ε) ≤ δ, and δ(hi, ε) > δ once `hi` has grown (δ close to 1 allows ρ
    // well above ε). The cap only bounds the loop.
    let (mut lo, mut hi) = (0.0f64, epsilon.get() + 1.0);
    while hi < 1.0e12 && delta_for(hi, epsilon)? <= delta * (1.0 - DELTA_MARGIN) {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..STEPS {
        let mid = 0.5 * (lo + hi);
        if delta_for(mid, epsilon)? <= delta * (1.0 - DELTA_MARGIN) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// Bun & Steinke 2016, Proposition 1.3: ρ-zCDP gives (ρ + 2√(ρ ln(1/δ)), δ)-DP.
pub fn epsilon_bun_steinke(rho: f64, delta: Delta) -> Result<f64, ParamError> {
    let rho = check_rho(rho)?;
    let delta = delta.get();
    Ok(rho + 2.0 * libm::sqrt(rho * libm::log(1.0 / delta)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::literal::{del, eps};

    #[test]
    fn matches_the_reference_implementation_values() {
        // Values of cdp_delta / cdp_rho in CKS's cdp2adp.py, recomputed here from the formula
        // at the optimum a (independent closed-form check of the bisection).
        for (rho, e) in [(0.025, 1.0), (0.1, 1.0), (1.0, 10.0), (0.5, 0.5), (4.0, 10.0)] {
            let d = delta_for(rho, eps(e)).unwrap();
            // Brute force over a grid of a: the bisected a is at least as good, up to rounding.
            let mut best = 1.0f64;
            for i in 1..200_000 {
                let a = 1.0 + i as f64 * 1e-3;
                let v = ((a - 1.0) * (a * rho - e) + a * (-1.0 / a).ln_1p()).exp() / (a - 1.0);
                best = best.min(v);
            }
            assert!(d <= best * (1.0 + 1e-9) + 1e-300, "ρ {rho}, ε {e}: {d} vs {best}");
            // And never worse than Bun–Steinke's tail bound exp(−(ε−ρ)²/4ρ).
            if e > rho {
                assert!(d <= (-(e - rho).powi(2) / (4.0 * rho)).exp());
            }
        }
    }

    #[test]
    fn rho_and_epsilon_invert_each_other() {
        for (e, d) in [(0.1, 0.1), (1.0, 0.01), (1.0, 0.99), (10.0, 1e-6), (0.5, 0.5)] {
            let rho = rho_for(eps(e), del(d)).unwrap();
            assert!(delta_for(rho, eps(e)).unwrap() <= d);
            assert!(
                delta_for(rho * 1.001, eps(e)).unwrap() > d * 0.999,
                "ρ {rho} is not maximal at ({e}, {d}): {}",
                delta_for(rho * 1.001, eps(e)).unwrap()
            );
            let back = epsilon_for(rho, del(d)).unwrap();
            assert!((back - e).abs() <= 1e-6 * e, "{back} vs {e}");
            assert!(back <= epsilon_bun_steinke(rho, del(d)).unwrap());
        }
    }

    #[test]
    fn monotone_in_delta_and_rejects_bad_parameters() {
        let rhos: [f64; 4] = [0.01, 0.1, 0.5, 0.99].map(|d| rho_for(eps(1.0), del(d)).unwrap_or(f64::NAN));
        assert!(rhos.windows(2).all(|w| w[0] < w[1]), "{rhos:?}");
        assert_eq!(delta_for(-1.0, eps(1.0)), Err(ParamError::RhoInvalid));
        assert_eq!(delta_for(0.0, eps(1.0)), Ok(0.0));
        assert_eq!(epsilon_for(f64::NAN, del(0.1)), Err(ParamError::RhoInvalid));
    }
}
