//! Standard test functions over boxes (Surjanovic & Bingham's library of simulation
//! experiments), as maximisation problems with rewards in [−1, 1]: what the box experiments
//! (`host-sim run box-branin`, …) optimise.
//!
//! Each function f is a minimisation problem with a known minimum f_min (at its listed
//! minimisers) and a bound f_max ≥ f on its box. The reward is the affine map of −f
//!
//! reward(x) = (f_min + f_max − 2 f(x)) / (f_max − f_min),
//!
//! which is 1 at a minimiser and ≥ −1 wherever f ≤ f_max, so |reward| ≤ 1 = B on the box.
//!
//! | function | box | f_min | minimiser | f_max (how) |
//! |---|---|---|---|---|
//! | Branin | [−5, 10] × [0, 15] | 5/(4π) ≈ 0.397887 | (−π, 12.275), (π, 2.275), (3π, 2.475) | 308.129096… = f(−5, 0), the largest of a 1501 × 1501 grid (a corner) |
//! | Hartmann-3 | [0, 1]³ | −3.862780 | (0.114589, 0.555649, 0.852547) | 0: f is minus a sum of positive terms |
//! | Hartmann-6 | [0, 1]⁶ | −3.322368 | (0.201690, 0.150011, 0.476874, 0.275332, 0.311652, 0.657301) | 0, as Hartmann-3 |
//! | Ackley (d) | [−32.768, 32.768]^d | 0 | 0 | 20 + e − 1/e: the first term is < 0 and e^{mean cos} ≥ 1/e |
//! | Rosenbrock (d) | [−2, 2]^d | 0 | (1, …, 1) | 3609 (d − 1) at (−2, …, −2), where every term is largest |
//!
//! The Hartmann minimisers are the literature's (0.114614, …; 0.20169, …) refined by
//! Nelder–Mead: the literature's points are 4·10⁻¹⁰ (Hartmann-3) and 2·10⁻¹¹ (Hartmann-6)
//! above the minimum, which agrees with the literature's −3.86278 and −3.32237 to their digits. The Ackley box is the usual one
//! (a = 20, b = 0.2, c = 2π); Rosenbrock's is [−2, 2]^d, whose maximum is exact.

use std::f64::consts::{E, PI};

use crate::optimizer::Domain;

/// A test function over its box (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestFunction {
    /// Branin–Hoo on [−5, 10] × [0, 15].
    Branin,
    /// Hartmann-3 on [0, 1]³.
    Hartmann3,
    /// Hartmann-6 on [0, 1]⁶.
    Hartmann6,
    /// Ackley in this many dimensions (1 to 20) on [−32.768, 32.768]^d.
    Ackley(usize),
    /// Rosenbrock in this many dimensions (2 to 20) on [−2, 2]^d.
    Rosenbrock(usize),
}

const HARTMANN_ALPHA: [f64; 4] = [1.0, 1.2, 3.0, 3.2];
const HARTMANN3_A: [[f64; 3]; 4] =
    [[3.0, 10.0, 30.0], [0.1, 10.0, 35.0], [3.0, 10.0, 30.0], [0.1, 10.0, 35.0]];
const HARTMANN3_P: [[f64; 3]; 4] =
    [[0.3689, 0.1170, 0.2673], [0.4699, 0.4387, 0.7470], [0.1091, 0.8732, 0.5547], [0.0381, 0.5743, 0.8828]];
const HARTMANN6_A: [[f64; 6]; 4] = [
    [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
    [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
    [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
    [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
];
const HARTMANN6_P: [[f64; 6]; 4] = [
    [0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886],
    [0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991],
    [0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650],
    [0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381],
];

/// Hartmann-3's minimiser, refined (module documentation).
pub const HARTMANN3_MINIMISER: [f64; 3] = [0.11458886966009477, 0.5556488958833097, 0.8525469850791096];
/// Hartmann-6's minimiser, refined.
pub const HARTMANN6_MINIMISER: [f64; 6] = [
    0.20168951198803065,
    0.1500106909541139,
    0.4768739723232889,
    0.275332431141901,
    0.31165161773104394,
    0.6573005355006937,
];
/// Branin's maximum over its box, f(−5, 0).
pub const BRANIN_MAX: f64 = 308.12909601160663;
/// Half the side of Ackley's box.
pub const ACKLEY_HALF_WIDTH: f64 = 32.768;

/// Points of each Sobol sample [`TestFunction::mean_reward`] averages over: 2¹⁶, the most
/// one scramble of `sobol_burley` gives.
pub const MEAN_SAMPLE: usize = 1 << 16;
/// Independent scrambles [`TestFunction::mean_reward`] averages over: 16, so 2²⁰ points.
pub const MEAN_SCRAMBLES: u32 = 16;

fn hartmann<const D: usize>(x: &[f64], a: &[[f64; D]; 4], p: &[[f64; D]; 4]) -> f64 {
    -(0..4)
        .map(|i| {
            let s: f64 = x.iter().zip(a[i].iter().zip(&p[i])).map(|(x, (a, p))| a * (x - p) * (x - p)).sum();
            HARTMANN_ALPHA[i] * (-s).exp()
        })
        .sum::<f64>()
}

impl TestFunction {
    /// Its name: `branin`, `hartmann3`, `hartmann6`, `ackley{d}`, `rosenbrock{d}`.
    pub fn name(&self) -> String {
        match self {
            Self::Branin => "branin".to_string(),
            Self::Hartmann3 => "hartmann3".to_string(),
            Self::Hartmann6 => "hartmann6".to_string(),
            Self::Ackley(d) => format!("ackley{d}"),
            Self::Rosenbrock(d) => format!("rosenbrock{d}"),
        }
    }

    /// d.
    pub fn dimension(&self) -> usize {
        match *self {
            Self::Branin => 2,
            Self::Hartmann3 => 3,
            Self::Hartmann6 => 6,
            Self::Ackley(d) | Self::Rosenbrock(d) => d,
        }
    }

    /// The box's lower and upper bounds.
    pub fn bounds(&self) -> (Vec<f64>, Vec<f64>) {
        let d = self.dimension();
        match self {
            Self::Branin => (vec![-5.0, 0.0], vec![10.0, 15.0]),
            Self::Hartmann3 | Self::Hartmann6 => (vec![0.0; d], vec![1.0; d]),
            Self::Ackley(_) => (vec![-ACKLEY_HALF_WIDTH; d], vec![ACKLEY_HALF_WIDTH; d]),
            Self::Rosenbrock(_) => (vec![-2.0; d], vec![2.0; d]),
        }
    }

    /// The box as a [`Domain`].
    pub fn domain(&self) -> Domain {
        let (lower, upper) = self.bounds();
        Domain::Box { lower, upper }
    }

    /// f(x), the function to minimise (x of length d; extra coordinates are ignored).
    pub fn value(&self, x: &[f64]) -> f64 {
        match *self {
            Self::Branin => {
                let (x1, x2) = (x.first().copied().unwrap_or(0.0), x.get(1).copied().unwrap_or(0.0));
                let (b, c, t) = (5.1 / (4.0 * PI * PI), 5.0 / PI, 1.0 / (8.0 * PI));
                (x2 - b * x1 * x1 + c * x1 - 6.0).powi(2) + 10.0 * (1.0 - t) * x1.cos() + 10.0
            }
            Self::Hartmann3 => hartmann(x, &HARTMANN3_A, &HARTMANN3_P),
            Self::Hartmann6 => hartmann(x, &HARTMANN6_A, &HARTMANN6_P),
            Self::Ackley(d) => {
                let x = &x[..d.min(x.len())];
                let n = x.len().max(1) as f64;
                let squares = x.iter().map(|v| v * v).sum::<f64>() / n;
                let cosines = x.iter().map(|v| (2.0 * PI * v).cos()).sum::<f64>() / n;
                -20.0 * (-0.2 * squares.sqrt()).exp() - cosines.exp() + 20.0 + E
            }
            Self::Rosenbrock(d) => x[..d.min(x.len())]
                .windows(2)
                .map(|w| 100.0 * (w[1] - w[0] * w[0]).powi(2) + (1.0 - w[0]).powi(2))
                .sum(),
        }
    }

    /// The minimum f_min of f over the box.
    pub fn minimum(&self) -> f64 {
        self.value(&self.minimisers()[0])
    }

    /// The points where f is smallest (Branin has three; the others one).
    pub fn minimisers(&self) -> Vec<Vec<f64>> {
        let d = self.dimension();
        match self {
            Self::Branin => vec![vec![-PI, 12.275], vec![PI, 2.275], vec![3.0 * PI, 2.475]],
            Self::Hartmann3 => vec![HARTMANN3_MINIMISER.to_vec()],
            Self::Hartmann6 => vec![HARTMANN6_MINIMISER.to_vec()],
            Self::Ackley(_) => vec![vec![0.0; d]],
            Self::Rosenbrock(_) => vec![vec![1.0; d]],
        }
    }

    /// f_max, a bound on f over the box (module documentation).
    pub fn maximum_bound(&self) -> f64 {
        match *self {
            Self::Branin => BRANIN_MAX,
            Self::Hartmann3 | Self::Hartmann6 => 0.0,
            Self::Ackley(_) => 20.0 + E - 1.0 / E,
            Self::Rosenbrock(d) => 3609.0 * d.saturating_sub(1) as f64,
        }
    }

    /// reward(x) = (f_min + f_max − 2 f(x)) / (f_max − f_min) ∈ [−1, 1], largest (1) at a
    /// minimiser of f.
    pub fn reward(&self, x: &[f64]) -> f64 {
        let (lo, hi) = (self.minimum(), self.maximum_bound());
        (lo + hi - 2.0 * self.value(x)) / (hi - lo)
    }

    /// f*, the largest reward: the reward at the first minimiser (1 up to rounding).
    pub fn best_reward(&self) -> f64 {
        self.reward(&self.minimisers()[0])
    }

    /// E reward(x) for x uniform on the box, estimated by the mean over [`MEAN_SCRAMBLES`]
    /// Owen scrambles (seeds 0 to 15) of the first [`MEAN_SAMPLE`] points of the Sobol sequence
    /// (`sobol_burley`), 2²⁰ points in all: a fixed number, the same on every machine.
    pub fn mean_reward(&self) -> f64 {
        (0..MEAN_SCRAMBLES).map(|seed| self.sobol_mean(MEAN_SAMPLE, seed)).sum::<f64>()
            / f64::from(MEAN_SCRAMBLES)
    }

    /// The mean reward over the first `n` (at most 2¹⁶) points of the Sobol sequence, Owen
    /// scrambled by `seed`.
    pub fn sobol_mean(&self, n: usize, seed: u32) -> f64 {
        let (lower, upper) = self.bounds();
        sobol_mean(n, seed, &lower, &upper, |x| self.reward(x))
    }
}

/// The mean of `reward` over the first `n` (at most 2¹⁶) points of the Sobol sequence, Owen
/// scrambled by `seed`, on the box `[lower, upper]`.
fn sobol_mean(n: usize, seed: u32, lower: &[f64], upper: &[f64], reward: impl Fn(&[f64]) -> f64) -> f64 {
    let n = n.min(MEAN_SAMPLE);
    let mut x = vec![0.0; lower.len()];
    let mut sum = 0.0;
    for i in 0..n {
        for (k, v) in x.iter_mut().enumerate() {
            let u = f64::from(sobol_burley::sample(i as u32, k as u32, seed));
            *v = lower[k] + u * (upper[k] - lower[k]);
        }
        sum += reward(&x);
    }
    sum / n.max(1) as f64
}

/// Random Fourier features of a [`PriorSample`]: enough that its covariance is the kernel's
/// within about 2 % an entry (sd 1/√(2M)).
pub const PRIOR_FEATURES: usize = 1024;

/// A function drawn from a zero-mean GP prior on the unit cube [0, 1]^d, kernel the squared
/// exponential exp(−‖u − v‖² / 2ℓ²) of one lengthscale ℓ (in units of the side), by
/// [`PRIOR_FEATURES`] random Fourier features (g(u) = √(2/M) Σ_j w_j cos(ω_j·u + b_j),
/// ω_j ~ N(0, I/ℓ²), b_j ~ U[0, 2π), w_j ~ N(0, 1)), as a maximisation problem with rewards
/// in [−1, 1]: reward(u) = 2 (g(u) − g_min) / (g_max − g_min) − 1, with g_max and g_min
/// found numerically (the best of 2¹⁴ Sobol points, then a compass search from the best 8).
///
/// What the box learners' constants are chosen on and their fitted kernel is checked on
/// (`learn/examples/box_calibration.rs`): functions of a known lengthscale, drawn from seeds
/// no reported run uses.
#[derive(Clone, Debug)]
pub struct PriorSample {
    d: usize,
    lengthscale: f64,
    /// ω_j (d each, already divided by ℓ), then b_j and w_j √(2/M).
    omegas: Vec<f64>,
    phases: Vec<f64>,
    weights: Vec<f64>,
    low: f64,
    high: f64,
    best: Vec<f64>,
}

impl PriorSample {
    /// The sample of seed `seed` in dimension `d` (1 to 20) with lengthscale `lengthscale`
    /// (> 0); `None` for other values.
    pub fn draw(d: usize, lengthscale: f64, seed: u64) -> Option<Self> {
        if !((1..=crate::domain::MAX_DIMENSION).contains(&d) && lengthscale.is_finite() && lengthscale > 0.0)
        {
            return None;
        }
        let mut f = Self::features(d, lengthscale, seed);
        let (best, high) = f.extreme(1.0);
        let (_, low) = f.extreme(-1.0);
        f.best = best;
        (f.low, f.high) = (-low, high);
        Some(f)
    }

    /// The drawn features, before g_min and g_max are found (reward = g then).
    fn features(d: usize, lengthscale: f64, seed: u64) -> Self {
        use rand::RngExt;
        use rand_core::SeedableRng;
        use rand_distr::{Distribution, StandardNormal};
        let mut rng = crate::env::SimRng::seed_from_u64(seed);
        let m = PRIOR_FEATURES;
        let mut omegas = Vec::with_capacity(m * d);
        for _ in 0..m * d {
            let z: f64 = StandardNormal.sample(&mut rng);
            omegas.push(z / lengthscale);
        }
        let phases = (0..m).map(|_| rng.random_range(0.0..2.0 * PI)).collect();
        let scale = (2.0 / m as f64).sqrt();
        let weights = (0..m)
            .map(|_| {
                let w: f64 = StandardNormal.sample(&mut rng);
                w * scale
            })
            .collect();
        Self { d, lengthscale, omegas, phases, weights, low: -1.0, high: 1.0, best: vec![0.5; d] }
    }

    /// g(u), the drawn function (u in the unit cube; extra coordinates ignored).
    pub fn value(&self, u: &[f64]) -> f64 {
        let d = self.d;
        self.weights
            .iter()
            .zip(&self.phases)
            .zip(self.omegas.chunks_exact(d))
            .map(|((w, b), omega)| w * (omega.iter().zip(u).map(|(o, x)| o * x).sum::<f64>() + b).cos())
            .sum()
    }

    /// reward(u) = 2 (g(u) − g_min) / (g_max − g_min) − 1, 1 at [`best_point`](Self::best_point).
    pub fn reward(&self, u: &[f64]) -> f64 {
        2.0 * (self.value(u) - self.low) / (self.high - self.low) - 1.0
    }

    /// The point of the largest reward found (reward 1 there).
    pub fn best_point(&self) -> &[f64] {
        &self.best
    }

    /// d.
    pub fn dimension(&self) -> usize {
        self.d
    }

    /// ℓ, the lengthscale it was drawn with.
    pub fn lengthscale(&self) -> f64 {
        self.lengthscale
    }

    /// The unit cube as a [`Domain`].
    pub fn domain(&self) -> Domain {
        Domain::Box { lower: vec![0.0; self.d], upper: vec![1.0; self.d] }
    }

    /// E reward(u), u uniform on the cube, by 2¹⁶ Sobol points (scramble 0).
    pub fn mean_reward(&self) -> f64 {
        sobol_mean(MEAN_SAMPLE, 0, &vec![0.0; self.d], &vec![1.0; self.d], |u| self.reward(u))
    }

    /// The largest of sign · g: over 2¹⁴ Sobol points, then a compass search (steps halved
    /// from 1/16 to 10⁻⁶ of the side) from each of the best 8; (the point, sign · g there).
    fn extreme(&self, sign: f64) -> (Vec<f64>, f64) {
        let d = self.d;
        let g = |u: &[f64]| sign * self.value(u);
        let mut scored: Vec<(f64, Vec<f64>)> = (0..1u32 << 14)
            .map(|i| {
                let u: Vec<f64> = (0..d).map(|k| f64::from(sobol_burley::sample(i, k as u32, 1))).collect();
                (g(&u), u)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut best = (Vec::new(), f64::NEG_INFINITY);
        for (mut value, mut u) in scored.into_iter().take(8) {
            let mut step = 1.0 / 16.0;
            while step > 1e-6 {
                let mut moved = false;
                for k in 0..d {
                    for s in [step, -step] {
                        let mut v = u.clone();
                        v[k] = (v[k] + s).clamp(0.0, 1.0);
                        let gv = g(&v);
                        if gv > value {
                            (u, value, moved) = (v, gv, true);
                        }
                    }
                }
                if !moved {
                    step *= 0.5;
                }
            }
            if value > best.1 {
                best = (u, value);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use rand::RngExt;
    use rand_core::SeedableRng;

    use super::*;
    use crate::env::SimRng;

    const ALL: [TestFunction; 7] = [
        TestFunction::Branin,
        TestFunction::Hartmann3,
        TestFunction::Hartmann6,
        TestFunction::Ackley(2),
        TestFunction::Ackley(6),
        TestFunction::Rosenbrock(2),
        TestFunction::Rosenbrock(4),
    ];

    fn uniform_point(f: &TestFunction, rng: &mut SimRng) -> Vec<f64> {
        let (lower, upper) = f.bounds();
        lower.iter().zip(&upper).map(|(lo, hi)| lo + rng.random::<f64>() * (hi - lo)).collect()
    }

    #[test]
    fn each_function_has_the_literatures_minimum_at_the_literatures_minimiser() {
        let close = |f: TestFunction, x: &[f64], value: f64, tol: f64| {
            let got = f.value(x);
            assert!((got - value).abs() <= tol, "{}: f({x:?}) = {got}, literature {value}", f.name());
        };
        for x in [[-PI, 12.275], [PI, 2.275], [9.42478, 2.475]] {
            close(TestFunction::Branin, &x, 0.397887, 1e-6);
        }
        close(TestFunction::Hartmann3, &[0.114614, 0.555649, 0.852547], -3.86278, 1e-5);
        close(
            TestFunction::Hartmann6,
            &[0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573],
            -3.32237,
            1e-5,
        );
        for d in [2, 6] {
            close(TestFunction::Ackley(d), &vec![0.0; d], 0.0, 1e-12);
        }
        close(TestFunction::Rosenbrock(4), &[1.0; 4], 0.0, 0.0);
        // The refined minimisers are at least as good as the literature's, and the minimum is
        // the literature's value.
        assert!(
            TestFunction::Hartmann3.minimum()
                <= TestFunction::Hartmann3.value(&[0.114614, 0.555649, 0.852547])
        );
        assert!((TestFunction::Hartmann3.minimum() + 3.86278).abs() < 1e-5);
        assert!((TestFunction::Hartmann6.minimum() + 3.32237).abs() < 1e-5);
        assert!((TestFunction::Branin.minimum() - 5.0 / (4.0 * PI)).abs() < 1e-14);
    }

    #[test]
    fn rewards_stay_within_one_and_the_minimiser_gives_the_largest() {
        let mut rng = SimRng::seed_from_u64(36);
        for f in ALL {
            let best = f.best_reward();
            assert!((best - 1.0).abs() < 1e-12, "{}: best reward {best}", f.name());
            for m in f.minimisers() {
                assert!((f.reward(&m) - best).abs() < 1e-12, "{}: {m:?}", f.name());
            }
            let (lower, upper) = f.bounds();
            let mut largest = f64::NEG_INFINITY;
            for _ in 0..100_000 {
                let x = uniform_point(&f, &mut rng);
                let r = f.reward(&x);
                assert!(r.abs() <= 1.0, "{}: reward {r} at {x:?}", f.name());
                largest = largest.max(r);
                // Near the minimiser too: a nudge of 10⁻³ of the box never beats it.
                let near: Vec<f64> = f.minimisers()[0]
                    .iter()
                    .zip(lower.iter().zip(&upper))
                    .map(|(m, (lo, hi))| (m + (rng.random::<f64>() - 0.5) * 1e-3 * (hi - lo)).clamp(*lo, *hi))
                    .collect();
                assert!(f.reward(&near) <= best, "{}: {near:?} beats the minimiser", f.name());
            }
            assert!(largest < best, "{}", f.name());
            // The corners, where Branin's and Rosenbrock's maxima are: still ≥ −1.
            for corner in 0..1usize << f.dimension() {
                let x: Vec<f64> = (0..f.dimension())
                    .map(|k| if corner >> k & 1 == 1 { upper[k] } else { lower[k] })
                    .collect();
                assert!(f.reward(&x) >= -1.0 - 1e-12, "{}: corner {x:?}", f.name());
            }
        }
        // Branin's bound is its maximum on a fine grid; Rosenbrock's is attained.
        let mut grid_max = f64::NEG_INFINITY;
        for i in 0..=1500 {
            for j in 0..=1500 {
                grid_max =
                    grid_max.max(TestFunction::Branin.value(&[-5.0 + 0.01 * i as f64, 0.01 * j as f64]));
            }
        }
        assert_eq!(grid_max, BRANIN_MAX);
        assert_eq!(TestFunction::Rosenbrock(4).reward(&[-2.0; 4]), -1.0);
    }

    /// Across seeds, g at one point is N(0, 1) (KS at 10⁻⁶) and g at two points ℓ apart have
    /// correlation e^{−1/2}, the kernel's (within 6 s.e.).
    #[test]
    fn a_prior_sample_has_the_kernels_covariance() {
        let (n, l) = (1000, 0.2);
        let (u, v) = ([0.3, 0.6], [0.3 + l, 0.6]);
        let pairs: Vec<(f64, f64)> = (0..n)
            .map(|s| {
                let f = PriorSample::features(2, l, 9000 + s);
                (f.value(&u), f.value(&v))
            })
            .collect();
        let mut a: Vec<f64> = pairs.iter().map(|p| p.0).collect();
        a.sort_by(f64::total_cmp);
        let ks = a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let c = normal_cdf(*x);
                (c - i as f64 / n as f64).abs().max(((i + 1) as f64 / n as f64 - c).abs())
            })
            .fold(0.0, f64::max);
        // P(D_n > x) ≈ 2 e^{−2 n x²}: 10⁻⁶ at x = √(ln(2·10⁶) / 2n).
        assert!(ks < ((2e6f64).ln() / (2.0 * n as f64)).sqrt(), "KS distance {ks}");
        let rho = pairs.iter().map(|(x, y)| x * y).sum::<f64>() / n as f64;
        let expected = (-0.5f64).exp();
        // The sd of x·y for a standard bivariate normal of correlation ρ is √(1 + ρ²).
        let se = (1.0 + expected * expected).sqrt() / (n as f64).sqrt();
        assert!((rho - expected).abs() < 6.0 * se, "correlation {rho} against {expected}");
    }

    /// Φ(x) by the complementary error function of libm.
    fn normal_cdf(x: f64) -> f64 {
        0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
    }

    #[test]
    fn a_prior_samples_rewards_stay_within_one_and_peak_at_its_best_point() {
        let mut rng = SimRng::seed_from_u64(3);
        for (d, l) in [(2, 0.05), (3, 0.2), (6, 0.5)] {
            let f = PriorSample::draw(d, l, 77).unwrap();
            assert!((f.reward(f.best_point()) - 1.0).abs() < 1e-12);
            for _ in 0..5_000 {
                let u: Vec<f64> = (0..d).map(|_| rng.random_range(0.0..=1.0)).collect();
                let r = f.reward(&u);
                assert!((-1.0..=1.0).contains(&r), "d {d}, l {l}: reward {r} at {u:?}");
            }
        }
        assert!(PriorSample::draw(0, 0.2, 1).is_none());
        assert!(PriorSample::draw(21, 0.2, 1).is_none());
        assert!(PriorSample::draw(2, 0.0, 1).is_none());
        assert!(PriorSample::draw(2, f64::NAN, 1).is_none());
    }

    #[test]
    fn the_sobol_mean_agrees_with_plain_monte_carlo() {
        // 10⁶ pseudo-random points: their mean is within 4 standard errors of the Sobol mean.
        let mut rng = SimRng::seed_from_u64(7);
        for f in
            [TestFunction::Branin, TestFunction::Hartmann3, TestFunction::Hartmann6, TestFunction::Ackley(2)]
        {
            let sobol = f.mean_reward();
            let n = 1_000_000;
            let (mut sum, mut squares) = (0.0, 0.0);
            for _ in 0..n {
                let r = f.reward(&uniform_point(&f, &mut rng));
                sum += r;
                squares += r * r;
            }
            let mean = sum / n as f64;
            let se = ((squares / n as f64 - mean * mean) / n as f64).sqrt();
            assert!(
                (sobol - mean).abs() < 4.0 * se,
                "{}: Sobol {sobol}, Monte Carlo {mean} ± {se}",
                f.name()
            );
            // And the estimate has converged: every single scramble gives the same to 10⁻³.
            for seed in 0..MEAN_SCRAMBLES {
                assert!(
                    (f.sobol_mean(MEAN_SAMPLE, seed) - sobol).abs() < 1e-3,
                    "{} scramble {seed}",
                    f.name()
                );
            }
        }
    }
}
