//! Random Fourier features, the baseline (see [`crate::features`]).

use rand_core::Rng;

use super::{FeatureMap, ParamError, check_lengthscale};

/// Two independent standard normals from two 53-bit uniforms (Box–Muller).
fn standard_normal_pair<R: Rng + ?Sized>(rng: &mut R) -> (f64, f64) {
    const TWO_M53: f64 = 1.0 / (1u64 << 53) as f64;
    // u1 ∈ (0, 1] so that ln(u1) is finite; u2 ∈ [0, 1).
    let u1 = ((rng.next_u64() >> 11) + 1) as f64 * TWO_M53;
    let u2 = (rng.next_u64() >> 11) as f64 * TWO_M53;
    let radius = libm::sqrt(-2.0 * libm::log(u1));
    let (s, c) = libm::sincos(core::f64::consts::TAU * u2);
    (radius * c, radius * s)
}

/// Random Fourier features for `exp(−Σ_i (x_i − y_i)²/2l_i²)`: `N` frequencies, `F = 2N`
/// features (checked at compile time). Stores `N·D` frequencies.
///
/// ```
/// use ldp_core::features::{FeatureMap, Rff};
/// use rand_chacha::{ChaCha8Rng, rand_core::SeedableRng};
/// let rff = Rff::<2, 128, 256>::new(0.5, &mut ChaCha8Rng::seed_from_u64(3))?;
/// let (x, y) = ([0.2, 0.4], [0.3, 0.1]);
/// assert!((rff.approx_kernel(&x, &y) - rff.kernel(&x, &y)).abs() < 0.5);
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rff<const D: usize, const N: usize, const F: usize> {
    omega: [[f64; D]; N],
    inv_lengthscales: [f64; D],
}

impl<const D: usize, const N: usize, const F: usize> Rff<D, N, F> {
    /// Isotropic lengthscale `l`. Fails with [`ParamError::LengthscaleInvalid`] unless `l`
    /// is finite and positive with `1/l` finite. `F ≠ 2N` or a zero size is a compile-time
    /// error.
    pub fn new<R: Rng + ?Sized>(lengthscale: f64, rng: &mut R) -> Result<Self, ParamError> {
        Self::with_lengthscales([lengthscale; D], rng)
    }

    /// One lengthscale per coordinate (ARD). Draws `N·D` normals (`⌈N·D/2⌉` pairs) from `rng`.
    pub fn with_lengthscales<R: Rng + ?Sized>(
        lengthscales: [f64; D],
        rng: &mut R,
    ) -> Result<Self, ParamError> {
        const {
            assert!(D >= 1 && N >= 1, "RFF needs D >= 1 and N >= 1");
            assert!(N.checked_mul(2).is_some() && 2 * N == F, "RFF needs F == 2*N");
        };
        let mut inv_lengthscales = [0.0; D];
        for (inv, &l) in inv_lengthscales.iter_mut().zip(&lengthscales) {
            *inv = 1.0 / check_lengthscale(l)?;
        }
        let mut omega = [[0.0; D]; N];
        let mut spare: Option<f64> = None;
        for row in &mut omega {
            for (w, &inv) in row.iter_mut().zip(&inv_lengthscales) {
                let z = match spare.take() {
                    Some(z) => z,
                    None => {
                        let (a, b) = standard_normal_pair(rng);
                        spare = Some(b);
                        a
                    }
                };
                *w = z * inv;
            }
        }
        Ok(Self { omega, inv_lengthscales })
    }

    /// The frequencies `ω_k` (rows).
    pub fn frequencies(&self) -> &[[f64; D]; N] {
        &self.omega
    }
}

fn dot<const D: usize>(a: &[f64; D], b: &[f64; D]) -> f64 {
    a.iter().zip(b).map(|(p, q)| p * q).sum()
}

impl<const D: usize, const N: usize, const F: usize> FeatureMap<D, F> for Rff<D, N, F> {
    fn features_into(&self, x: &[f64; D], out: &mut [f64; F]) {
        let scale = libm::sqrt(1.0 / N as f64);
        for (w, pair) in self.omega.iter().zip(out.chunks_exact_mut(2)) {
            let (s, c) = libm::sincos(dot(w, x));
            pair[0] = scale * c;
            pair[1] = scale * s;
        }
    }

    fn kernel(&self, x: &[f64; D], y: &[f64; D]) -> f64 {
        let q: f64 = x
            .iter()
            .zip(y)
            .zip(&self.inv_lengthscales)
            .map(|((a, b), il)| {
                let z = (a - b) * il;
                z * z
            })
            .sum();
        libm::exp(-0.5 * q)
    }

    fn approx_kernel(&self, x: &[f64; D], y: &[f64; D]) -> f64 {
        let mut r = [0.0; D];
        for (ri, (a, b)) in r.iter_mut().zip(x.iter().zip(y)) {
            *ri = a - b;
        }
        self.omega.iter().map(|w| libm::cos(dot(w, &r))).sum::<f64>() / N as f64
    }
}
