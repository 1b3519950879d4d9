//! Gauss–Hermite rules by Sturm bisection and Newton (method: see [`crate::features`]).

use super::ParamError;

/// `π^{−1/4}`, the value of the orthonormal Hermite function of degree 0.
const PI_M4: f64 = 0.751_125_544_464_942_5;
/// `√π`, the total mass of `e^{−s²}`.
pub(crate) const SQRT_PI: f64 = 1.772_453_850_905_516;
/// Bisection steps allowed per node (each halves the bracket; ~64 reach adjacent floats).
const MAX_BISECTIONS: usize = 200;

/// Evaluate `(h̃_n(z), h̃_n'(z))` by the orthonormal recurrence.
fn hermite_orthonormal(n: usize, z: f64) -> (f64, f64) {
    let (mut p1, mut p2) = (PI_M4, 0.0_f64);
    for k in 0..n {
        let p3 = p2;
        p2 = p1;
        let kf = k as f64;
        p1 = z * libm::sqrt(2.0 / (kf + 1.0)) * p2 - libm::sqrt(kf / (kf + 1.0)) * p3;
    }
    (p1, libm::sqrt(2.0 * n as f64) * p2)
}

/// The number of zeros of `H_n` below `x`: the negative pivots of `T − xI` (Sturm count).
fn count_below(n: usize, x: f64) -> usize {
    // A (near-)zero pivot is replaced by a tiny negative one and counted as negative (Kahan's
    // safeguard), so that the count stays monotone in x.
    const TINY: f64 = 1e-150;
    let nudge = |q: f64| if libm::fabs(q) < TINY { -TINY } else { q };
    let mut q = nudge(-x);
    let mut count = usize::from(q < 0.0);
    for k in 1..n {
        q = nudge(-x - (k as f64 / 2.0) / q);
        count += usize::from(q < 0.0);
    }
    count
}

/// The non-negative half of the `n`-point Gauss–Hermite rule, largest node first:
/// `nodes[i] = s_i > 0` for `i < n/2`, and for odd `n` the last entry is the node 0.
/// `nodes` and `weights` must hold at least `⌈n/2⌉` entries; only those are written.
pub(crate) fn half_rule(n: usize, nodes: &mut [f64], weights: &mut [f64]) -> Result<(), ParamError> {
    let half = n.div_ceil(2);
    if n == 0 || nodes.len() < half || weights.len() < half {
        return Err(ParamError::QuadratureFailed);
    }
    // Gershgorin: every eigenvalue of T is below 2·max β = 2·√((n−1)/2) < √(2n) + 1.
    let upper = libm::sqrt(2.0 * n as f64) + 1.0;
    for i in 0..half {
        let is_middle = n % 2 == 1 && i == half - 1;
        let z = if is_middle {
            0.0 // the middle zero of an odd-degree Hermite polynomial, exactly
        } else {
            // The i-th largest zero is the (n−i)-th smallest: the least x with n − i zeros below
            // or at it. Invariant: count_below(lo) ≤ n − 1 − i < n − i ≤ count_below(hi).
            let (mut lo, mut hi) = (0.0, upper);
            for _ in 0..MAX_BISECTIONS {
                let mid = 0.5 * (lo + hi);
                if mid <= lo || mid >= hi {
                    break;
                }
                if count_below(n, mid) >= n - i { hi = mid } else { lo = mid }
            }
            let z = 0.5 * (lo + hi);
            // One Newton step to polish, kept only if it stays in the bracket (it moves by
            // about an ulp: bisection has already located the zero).
            let (p, dp) = hermite_orthonormal(n, z);
            let polished = z - p / dp;
            if polished >= lo && polished <= hi { polished } else { z }
        };
        if (!is_middle && z <= 0.0) || (i > 0 && z >= nodes[i - 1]) {
            return Err(ParamError::QuadratureFailed);
        }
        let (_, dp) = hermite_orthonormal(n, z);
        let w = 2.0 / (dp * dp);
        if !(w > 0.0 && w.is_finite()) {
            return Err(ParamError::QuadratureFailed);
        }
        nodes[i] = z;
        weights[i] = w;
    }
    // Σ w = √π (exactness on the constant); summed smallest first.
    let mut total = 0.0;
    for (i, &w) in weights[..half].iter().enumerate() {
        let is_middle = n % 2 == 1 && i == half - 1;
        total += if is_middle { w } else { 2.0 * w };
    }
    if libm::fabs(total - SQRT_PI) > 1e-12 * SQRT_PI {
        return Err(ParamError::QuadratureFailed);
    }
    Ok(())
}

/// The `N`-point Gauss–Hermite rule `∫ e^{−s²} g(s) ds ≈ Σ_j w_j g(s_j)`, exact for polynomials
/// of degree ≤ 2N − 1, with nodes in increasing order.
///
/// Computed at construction (Sturm bisection and Newton, see the [module docs](crate::features)): about
/// `32·N²` divisions, i.e. 25 000 for `N = 28`, once.
///
/// ```
/// use ldp_core::features::GaussHermite;
/// let rule = GaussHermite::<5>::new()?;
/// // ∫ e^{−s²} s⁴ ds = 3√π/4, exact since 4 ≤ 2·5 − 1.
/// let q = rule.integrate(|s| s.powi(4));
/// assert!((q - 0.75 * core::f64::consts::PI.sqrt()).abs() < 1e-14);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaussHermite<const N: usize> {
    nodes: [f64; N],
    weights: [f64; N],
}

impl<const N: usize> GaussHermite<N> {
    /// Compute and check the rule. `N = 0` is a compile-time error.
    ///
    /// Fails with [`ParamError::QuadratureFailed`] if a check fails: for `N ≳ 375`, whose
    /// outermost weights underflow `f64` (works for `N ≤ 370`).
    pub fn new() -> Result<Self, ParamError> {
        const { assert!(N >= 1, "a Gauss-Hermite rule needs at least one node") };
        let mut nodes = [0.0; N];
        let mut weights = [0.0; N];
        let half = N.div_ceil(2);
        // Compute the non-negative half into the top of the arrays, then mirror it.
        half_rule(N, &mut nodes, &mut weights)?;
        let (mut hn, mut hw) = ([0.0; N], [0.0; N]);
        hn[..half].copy_from_slice(&nodes[..half]);
        hw[..half].copy_from_slice(&weights[..half]);
        for i in 0..half {
            // hn[i] is the i-th largest node: it goes to N−1−i, its mirror to i (for odd N the
            // middle node 0 is its own mirror).
            nodes[i] = -hn[i];
            weights[i] = hw[i];
            nodes[N - 1 - i] = hn[i];
            weights[N - 1 - i] = hw[i];
        }
        Ok(Self { nodes, weights })
    }

    /// The nodes `s_j`, increasing and symmetric about 0.
    pub fn nodes(&self) -> &[f64; N] {
        &self.nodes
    }

    /// The weights `w_j > 0`, with `Σ w_j = √π`.
    pub fn weights(&self) -> &[f64; N] {
        &self.weights
    }

    /// `Σ_j w_j g(s_j)`, the rule's value for `∫ e^{−s²} g(s) ds`.
    pub fn integrate(&self, mut g: impl FnMut(f64) -> f64) -> f64 {
        self.nodes.iter().zip(&self.weights).map(|(&s, &w)| w * g(s)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sturm_count_brackets_each_zero() {
        // Zeros of H_4: ±0.5246…, ±1.6506…
        let n = 4;
        assert_eq!(count_below(n, -2.0), 0);
        assert_eq!(count_below(n, -1.0), 1);
        assert_eq!(count_below(n, 0.0), 2);
        assert_eq!(count_below(n, 1.0), 3);
        assert_eq!(count_below(n, 2.0), 4);
    }

    #[test]
    fn half_rule_refuses_bad_buffers() {
        let (mut s, mut w) = ([0.0; 2], [0.0; 2]);
        assert_eq!(half_rule(0, &mut s, &mut w), Err(ParamError::QuadratureFailed));
        assert_eq!(half_rule(5, &mut s, &mut w), Err(ParamError::QuadratureFailed));
        assert_eq!(half_rule(4, &mut s, &mut w), Ok(()));
        assert!((s[0] - 1.650_680_123_885_784_6).abs() < 1e-15);
    }

    #[test]
    fn orthonormal_recurrence_vanishes_at_the_nodes() {
        let (mut s, mut w) = ([0.0; 10], [0.0; 10]);
        half_rule(20, &mut s, &mut w).unwrap();
        for &z in &s {
            let (p, dp) = hermite_orthonormal(20, z);
            assert!(libm::fabs(p / dp) < 1e-15);
        }
    }
}
