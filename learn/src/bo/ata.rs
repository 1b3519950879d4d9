//! ATA-GP-UCB and LDP-ATA-GP-UCB (Zhou & Tan Alg. 1, Thm 2; Chowdhury & Gopalan 2019).
//!
//! Every round t the learner rebuilds a Nyström embedding over the points played so far
//! (Zhou & Tan Appendix D, Alg. 4, each x_i kept with probability min(q σ̃²_{t−1}(x_i), 1)), and
//! estimates θ̃_t with the feature-adaptive truncation of TOFU (Shao et al. 2018):
//!
//! - Φ̃_t (t × m) has rows φ̃(x_τ)ᵀ, Ṽ_t = Φ̃_tᵀΦ̃_t + λI_m,
//! - u_i is the i-th row of Ṽ_t^{−1/2} Φ̃_tᵀ (symmetric inverse square root),
//! - r̂_i = Σ_{τ≤t} u_{i,τ} y_τ 1{|u_{i,τ} y_τ| ≤ b_τ} (re-truncating every past report),
//! - θ̃_t = Ṽ_t^{−1/2} r̂, μ̃_t(x) = φ̃(x)ᵀθ̃_t,
//! - σ̃²_t(x) = k(x, x) − φ̃(x)ᵀφ̃(x) + λ φ̃(x)ᵀ Ṽ_t^{−1} φ̃(x) (clamped ≥ 0),
//!
//! and plays argmax μ̃_{t−1}(x) + β_t σ̃_{t−1}(x) over the arms (μ̃_0 = 0, σ̃²_0 = k(x, x)).
//! LDP-ATA-GP-UCB is this policy fed CTL(ε)-privatised reports, with the [`Problem`]'s `v` set to
//! the privatised reward's second moment.
//!
//! **Deduplicated dictionary.** Arms are played many times, and Alg. 4 may keep several copies of
//! one arm. We keep each distinct arm once: arm a, played c_a times with σ̃²_{t−1}(a) (all copies
//! share it), is in the dictionary with probability 1 − (1 − min(q σ̃²_{t−1}(a), 1))^{c_a}, the
//! probability that Alg. 4 keeps at least one copy, so the set of distinct dictionary arms has
//! exactly Alg. 4's distribution (one uniform draw per played arm, in arm order). The Nyström
//! projection is invariant to duplicate dictionary points: φ̃(x)ᵀφ̃(y) = k_𝒟(x)ᵀ K_𝒟⁺ k_𝒟(y) is
//! the kernel of the orthogonal projection onto span{k(·, u) : u ∈ 𝒟}, so it, and with it the
//! untruncated posterior, is the same with or without copies. What copies would change is m
//! (here the number of distinct arms, which enters b_t and β_t) and the coordinates in which the
//! truncation acts (here one per distinct dictionary arm). Keeping copies would make m grow
//! like t and each round cost O(t³).
//!
//! **Truncated sums per arm.** Every level of Alg. 1 factors as b_τ = g(τ)·s(m_t) with
//! g(τ) = τ^{(1−α)/(2(1+α))} (1 at α = 1) and s depending on the constants and m_t only, so
//! |u_{i,τ} y_τ| ≤ b_τ ⇔ |y_τ|/g(τ) ≤ s/|u_{i,τ}|. Each arm keeps its reports sorted by the key
//! |y_τ|/g(τ), with prefix sums of y ([`ArmReports`]); then the re-truncated sum of every past
//! report at arm a in coordinate i is one binary search, u_{i,a}·Σ_{key ≤ s/|u_{i,a}|} y, and r̂
//! is exactly Alg. 1's (up to the order of floating-point additions) at O(m p log t) per round
//! instead of O(m t) (p the number of distinct arms played).
//!
//! Cost per round with n arms, m ≤ n dictionary arms, p played arms and t reports: O(n m² + m³)
//! for the features (only when the dictionary changed), Ṽ (built from per-arm play counts, never
//! from the t × m matrix Φ̃), its eigen-decomposition, Ṽ^{−1/2} and H = Φ̃Ṽ^{−1/2} (whose row a
//! is u_aᵀ = (Ṽ^{−1/2}φ̃(a))ᵀ, and which gives μ̃ = H r̂ and φ̃ᵀṼ⁻¹φ̃ = ‖H_a‖²), plus
//! O(m p log t) for the truncated sums and O(count) to insert a report in its arm's order.

use ldp_core::truncation::ata_practical_level;
use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::RngExt;
use rand_core::SeedableRng;

use super::calibrated::LevelRule;
use super::ucb_arm;
use crate::env::SimRng;
use crate::gp::{FiniteCovariance, NystromEmbedding};
use crate::policy::{Constants, Policy, PolicyError, Problem, check_report};

/// Default Nyström accuracy ε_N of the paper constants (our choice: the theorems need
/// ε_N ∈ (0, 1) and name no value; 0.5 gives ρ = 3 and 1 + 1/√(1 − ε_N) ≈ 2.41).
pub const DEFAULT_NYSTROM_ACCURACY: f64 = 0.5;

/// Settings of [`AtaGpUcb`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtaParams {
    /// Practical (default) or paper constants for q, b_t and β_t:
    ///
    /// - Practical (SPEC §2.2, Chowdhury & Gopalan's code): q = ln(T)/0.1²,
    ///   b_t = t^{(1−α)/(2(1+α))} (v / ln((m+1)T))^{1/(1+α)},
    ///   β_{t+1} = B√λ + √m_t v^{1/(1+α)} (ln((m_t+1)T))^{α/(1+α)} t^{(1−α)/(2(1+α))}.
    /// - Paper (Zhou & Tan Thm 2): q = 6ρ ln(4T/δ)/ε_N², ρ = (1+ε_N)/(1−ε_N),
    ///   b_t = (v / ln(4 m_t T/δ))^{1/(1+α)} t^{(1−α)/(2(1+α))},
    ///   β_{t+1} = B(1 + 1/√(1−ε_N)) + 4 √(m_t/λ) v^{1/(1+α)} (ln(4 m_t T/δ))^{α/(1+α)} t^{(1−α)/(2(1+α))}.
    ///   Thm 2 is stated for α = 1 (the LDP case), where these are exactly its
    ///   b_t = √(v/ln(4 m_t T/δ)) and β_{t+1} = B(1 + 1/√(1−ε_N)) + 4√(ln(4 m_t T/δ) v m_t/λ);
    ///   for α < 1 we use the same α-powers as the practical formulas. m_t is taken ≥ 1 inside
    ///   the logarithm.
    /// - Calibrated ([`super::calibrated`]): the paper's q; b_t = g(t)·(B + R + (c_u /
    ///   ln(4 m_t T/δ))^{1/(1+α)}) with g(t) = t^{(1−α)/(2(1+α))}, Thm 2's level for the moment
    ///   c_u of the noise without a known bound plus the bounds B and R
    ///   ([`super::calibrated::LevelRule::ata_scale`]); the calibrated β.
    ///
    /// Both the practical and the paper β_{t+1} are evaluated with t and m_t (t ≥ 1).
    pub constants: Constants,
    /// ε_N, the Nyström accuracy of the paper constants (default [`DEFAULT_NYSTROM_ACCURACY`]).
    pub nystrom_accuracy: f64,
    /// Overrides q, the dictionary sampling rate (`None`: the constants' q).
    pub q: Option<f64>,
    /// `false` disables the truncation (b_t = ∞): Nyström GP-UCB with ATA's β, for tests and
    /// ablations. Default `true`.
    pub truncate: bool,
}

impl Default for AtaParams {
    fn default() -> Self {
        Self::with_constants(Constants::Practical)
    }
}

impl AtaParams {
    /// The defaults with the given constants.
    pub fn with_constants(constants: Constants) -> Self {
        Self { constants, nystrom_accuracy: DEFAULT_NYSTROM_ACCURACY, q: None, truncate: true }
    }
}

/// The practical dictionary rate q = ln(T)/0.1² (SPEC §2.2); ≈ 690.8 at T = 1000.
pub fn practical_q(horizon: usize) -> f64 {
    (horizon.max(1) as f64).ln() / 0.01
}

/// The paper's dictionary rate q = 6ρ ln(4T/δ)/ε_N², ρ = (1+ε_N)/(1−ε_N) (Zhou & Tan Thm 2, 4).
pub fn paper_q(horizon: usize, delta: f64, nystrom_accuracy: f64) -> f64 {
    let e = nystrom_accuracy;
    let rho = (1.0 + e) / (1.0 - e);
    6.0 * rho * (4.0 * horizon.max(1) as f64 / delta).ln() / (e * e)
}

/// Validates what ATA and MoMA share; invalid settings give [`PolicyError::InvalidSetting`].
pub(crate) fn check_settings(
    problem: &Problem,
    constants: Constants,
    nystrom_accuracy: f64,
    q: Option<f64>,
) -> Result<(), PolicyError> {
    let finite_nonneg = |x: f64| x.is_finite() && x >= 0.0;
    let ok = problem.lambda.is_finite()
        && problem.lambda > 0.0
        && problem.horizon >= 1
        && problem.alpha > 0.0
        && problem.alpha <= 1.0
        && finite_nonneg(problem.b)
        && nystrom_accuracy > 0.0
        && nystrom_accuracy < 1.0
        && q.is_none_or(|q| q.is_finite() && q > 0.0)
        && (constants == Constants::Practical || (problem.delta > 0.0 && problem.delta <= 1.0));
    if ok {
        Ok(())
    } else {
        Err(PolicyError::InvalidSetting(
            "lambda, horizon, alpha, B, v, the Nystrom accuracy, q or delta is out of range",
        ))
    }
}

/// The Nyström feature map over the arms shared by ATA and MoMA: the deduplicated dictionary
/// (distinct arms) and the features φ̃(a) of every arm, row a of an n × m matrix.
#[derive(Clone, Debug)]
pub(crate) struct FeatureModel {
    covariance: FiniteCovariance,
    domain: Vec<Vec<f64>>,
    prior_variances: DVector<f64>,
    dictionary: Vec<usize>,
    features: DMatrix<f64>,
}

impl FeatureModel {
    /// The empty dictionary (m = 0).
    pub(crate) fn new(covariance: &FiniteCovariance) -> Self {
        let n = covariance.domain_size();
        Self {
            covariance: covariance.clone(),
            domain: covariance.domain_points(),
            prior_variances: covariance.matrix().diagonal(),
            dictionary: Vec::new(),
            features: DMatrix::zeros(n, 0),
        }
    }

    /// k(a, a) for every arm.
    pub(crate) fn prior_variances(&self) -> &DVector<f64> {
        &self.prior_variances
    }

    /// The distinct dictionary arms, increasing.
    pub(crate) fn dictionary(&self) -> &[usize] {
        &self.dictionary
    }

    /// The n × m feature matrix over all arms.
    pub(crate) fn features(&self) -> &DMatrix<f64> {
        &self.features
    }

    /// m.
    pub(crate) fn dim(&self) -> usize {
        self.features.ncols()
    }

    /// Alg. 4 on the played points, deduplicated (see the module docs): an arm a played
    /// c_a = `counts[a]` ≥ 1 times is kept with probability 1 − (1 − min(q σ̃²(a), 1))^{c_a},
    /// one uniform draw per played arm in arm order. The features are recomputed only when the
    /// dictionary changed.
    pub(crate) fn resample(
        &mut self,
        counts: &[usize],
        variances: &DVector<f64>,
        q: f64,
        rng: &mut SimRng,
    ) -> Result<(), PolicyError> {
        let mut dictionary = Vec::with_capacity(self.dictionary.len() + 1);
        for (arm, (&count, &var)) in counts.iter().zip(variances.iter()).enumerate() {
            if count == 0 {
                continue;
            }
            let p = (q * var.max(0.0)).min(1.0);
            let keep = 1.0 - (1.0 - p).powf(count as f64);
            let u: f64 = rng.random();
            if u < keep {
                dictionary.push(arm);
            }
        }
        if dictionary != self.dictionary {
            let points = dictionary.iter().map(|&a| self.domain[a].clone()).collect();
            let embedding = NystromEmbedding::from_dictionary(&self.covariance, points)
                .map_err(|_| PolicyError::Numerical)?;
            self.features = embedding.feature_matrix(&self.domain).map_err(|_| PolicyError::Numerical)?;
            self.dictionary = dictionary;
        }
        Ok(())
    }
}

/// Ṽ = Σ_a c_a φ̃(a)φ̃(a)ᵀ + λI = Φ̃ᵀΦ̃ + λI (Φ̃ has c_a rows φ̃(a)ᵀ) and its eigen-decomposition
/// Ṽ = Q diag(Λ) Qᵀ.
#[derive(Clone, Debug)]
pub(crate) struct Ridge {
    v: DMatrix<f64>,
    eigenvectors: DMatrix<f64>,
    eigenvalues: DVector<f64>,
}

impl Ridge {
    /// Builds Ṽ from the n × m features and per-arm multiplicities in O(n m² + m³).
    pub(crate) fn new(features: &DMatrix<f64>, counts: &[usize], lambda: f64) -> Result<Self, PolicyError> {
        let m = features.ncols();
        let mut weighted = features.clone();
        for (a, mut row) in weighted.row_iter_mut().enumerate() {
            row *= counts.get(a).copied().unwrap_or(0) as f64;
        }
        // An explicit transpose makes this a matrixmultiply gemm (`tr_mul` is dot-product based).
        let mut v = features.transpose() * weighted;
        for i in 0..m {
            v[(i, i)] += lambda;
        }
        let eig =
            SymmetricEigen::try_new(v.clone(), f64::EPSILON, 1000 + 100 * m).ok_or(PolicyError::Numerical)?;
        if eig.eigenvalues.iter().any(|l| !(l.is_finite() && *l > 0.0)) {
            return Err(PolicyError::Numerical);
        }
        Ok(Self { v, eigenvectors: eig.eigenvectors, eigenvalues: eig.eigenvalues })
    }

    /// Ṽ itself.
    pub(crate) fn matrix(&self) -> &DMatrix<f64> {
        &self.v
    }

    /// Ṽ^{−1/2} = Q diag(Λ^{−1/2}) Qᵀ (symmetric).
    fn inv_sqrt(&self) -> DMatrix<f64> {
        self.scaled(|l| 1.0 / l.sqrt())
    }

    /// Ṽ⁻¹ rhs.
    pub(crate) fn solve(&self, rhs: &DMatrix<f64>) -> DMatrix<f64> {
        self.scaled(|l| 1.0 / l) * rhs
    }

    fn scaled(&self, g: impl Fn(f64) -> f64) -> DMatrix<f64> {
        let q = &self.eigenvectors;
        let mut qg = q.clone();
        for (mut col, &l) in qg.column_iter_mut().zip(self.eigenvalues.iter()) {
            col *= g(l);
        }
        qg * q.transpose()
    }

    /// σ̃²(a) = k(a, a) − φ̃(a)ᵀφ̃(a) + λ φ̃(a)ᵀṼ⁻¹φ̃(a) for every arm, clamped ≥ 0 (Zhou & Tan
    /// Alg. 1 line 12, Alg. 3 line 14), with φ̃ᵀṼ⁻¹φ̃ = Σ_j (φ̃ᵀq_j)²/Λ_j.
    pub(crate) fn variances(
        &self,
        features: &DMatrix<f64>,
        prior: &DVector<f64>,
        lambda: f64,
    ) -> DVector<f64> {
        let g = features * &self.eigenvectors;
        nystrom_variances(features, prior, lambda, |a| {
            g.row(a).iter().zip(self.eigenvalues.iter()).map(|(x, l)| x * x / l).sum()
        })
    }
}

/// σ̃²(a) = k(a, a) − φ̃(a)ᵀφ̃(a) + λ·quad(a) for every arm, clamped ≥ 0, with
/// quad(a) = φ̃(a)ᵀṼ⁻¹φ̃(a) (Zhou & Tan Alg. 1 line 12, Alg. 3 line 14).
fn nystrom_variances(
    features: &DMatrix<f64>,
    prior: &DVector<f64>,
    lambda: f64,
    quad: impl Fn(usize) -> f64,
) -> DVector<f64> {
    DVector::from_fn(features.nrows(), |a, _| {
        (prior[a] - features.row(a).norm_squared() + lambda * quad(a)).max(0.0)
    })
}

/// One arm's reports sorted by their truncation key |y_τ|/g(τ) (see the module docs), with
/// prefix sums of the reports in that order: the sum of every report whose key is at most a
/// threshold is one binary search.
#[derive(Clone, Debug)]
pub struct ArmReports {
    keys: Vec<f64>,
    /// prefix[k] = the sum of the reports with the k smallest keys; prefix[0] = 0.
    prefix: Vec<f64>,
    reports: Vec<f64>,
}

impl Default for ArmReports {
    fn default() -> Self {
        Self { keys: Vec::new(), prefix: vec![0.0], reports: Vec::new() }
    }
}

impl ArmReports {
    /// Adds report `y` with key `key` (|y|/g(τ), finite and ≥ 0), after any equal keys.
    pub fn insert(&mut self, key: f64, y: f64) {
        let at = self.keys.partition_point(|&k| k <= key);
        self.keys.insert(at, key);
        self.reports.insert(at, y);
        self.prefix.truncate(at + 1);
        let mut sum = self.prefix[at];
        for &r in &self.reports[at..] {
            sum += r;
            self.prefix.push(sum);
        }
    }

    /// The number of reports.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Σ y over the reports with key ≤ `threshold` (none for a NaN threshold, all for +∞).
    pub fn sum_within(&self, threshold: f64) -> f64 {
        self.prefix[self.keys.partition_point(|&k| k <= threshold)]
    }
}

/// ATA-GP-UCB (Zhou & Tan Alg. 1); LDP-ATA-GP-UCB when fed privatised reports.
#[derive(Clone, Debug)]
pub struct AtaGpUcb {
    model: FeatureModel,
    constants: Constants,
    nystrom_accuracy: f64,
    truncate: bool,
    q: f64,
    b: f64,
    alpha: f64,
    v: f64,
    levels: LevelRule,
    lambda: f64,
    delta: f64,
    horizon: usize,
    rng: SimRng,
    rounds: usize,
    reports: Vec<ArmReports>,
    counts: Vec<usize>,
    means: DVector<f64>,
    variances: DVector<f64>,
    beta: f64,
    beta_scale: f64,
    tie_order: Option<Vec<usize>>,
    next: usize,
}

impl AtaGpUcb {
    /// The policy for `problem`; `seed` seeds its own RNG (the Nyström dictionary draws), so a
    /// run is reproducible. Invalid settings (λ ≤ 0, T = 0, α ∉ (0, 1], B or v negative or not
    /// finite, ε_N ∉ (0, 1), a q override ≤ 0, δ ∉ (0, 1] with paper constants) give
    /// [`PolicyError::InvalidSetting`].
    pub fn new(problem: &Problem, params: AtaParams, seed: u64) -> Result<Self, PolicyError> {
        check_settings(problem, params.constants, params.nystrom_accuracy, params.q)?;
        if !(problem.v.is_finite() && problem.v >= 0.0) {
            return Err(PolicyError::InvalidSetting("v must be finite and >= 0"));
        }
        let q = params.q.unwrap_or(match params.constants {
            Constants::Practical => practical_q(problem.horizon),
            Constants::Paper | Constants::Calibrated => {
                paper_q(problem.horizon, problem.delta, params.nystrom_accuracy)
            }
        });
        let model = FeatureModel::new(&problem.covariance);
        let n = problem.num_arms();
        let mut policy = Self {
            variances: model.prior_variances().clone(),
            model,
            constants: params.constants,
            nystrom_accuracy: params.nystrom_accuracy,
            truncate: params.truncate,
            q,
            b: problem.b,
            alpha: problem.alpha,
            v: problem.v,
            levels: LevelRule::new(problem),
            lambda: problem.lambda,
            delta: problem.delta,
            horizon: problem.horizon,
            rng: SimRng::seed_from_u64(seed),
            rounds: 0,
            reports: vec![ArmReports::default(); n],
            counts: vec![0; n],
            means: DVector::zeros(n),
            beta: 0.0,
            beta_scale: problem.beta_scale,
            tie_order: problem.tie_order.clone(),
            next: 0,
        };
        policy.choose_next();
        Ok(policy)
    }

    /// (1−α)/(2(1+α)), the exponent of t in b_t and β_t.
    fn t_exponent(&self) -> f64 {
        (1.0 - self.alpha) / (2.0 * (1.0 + self.alpha))
    }

    /// b_τ with the current dictionary size m (∞ when truncation is off).
    pub fn level(&self, tau: usize) -> f64 {
        self.level_with(tau, self.model.dim())
    }

    fn level_with(&self, tau: usize, m: usize) -> f64 {
        self.level_scale(m) * self.level_growth(tau)
    }

    /// g(τ) = τ^{(1−α)/(2(1+α))} (τ ≥ 1), the part of b_τ that depends on τ.
    fn level_growth(&self, tau: usize) -> f64 {
        (tau.max(1) as f64).powf(self.t_exponent())
    }

    /// s(m) = b_τ / g(τ), the part of b_τ that depends on m (∞ when truncation is off).
    fn level_scale(&self, m: usize) -> f64 {
        if !self.truncate {
            return f64::INFINITY;
        }
        match self.constants {
            Constants::Practical => ata_practical_level(1, self.alpha, self.v, m as u64, self.horizon as u64),
            Constants::Paper => (self.v / self.theorem_log(m)).powf(1.0 / (1.0 + self.alpha)),
            // Rule 3 of `calibrated`: B + R + Thm 2's level for the unbounded noise.
            Constants::Calibrated => self.levels.ata_scale(self.theorem_log(m), self.alpha),
        }
    }

    /// ln(4 m T/δ) of Thm 2's level and β (m taken ≥ 1).
    fn theorem_log(&self, m: usize) -> f64 {
        (4.0 * m.max(1) as f64 * self.horizon as f64 / self.delta).ln()
    }

    /// β for the round after `t` observations, with the current m (see [`AtaParams::constants`]).
    fn beta_after(&self, t: usize) -> f64 {
        let m = self.model.dim() as f64;
        let a = self.alpha;
        let v_pow = self.v.powf(1.0 / (1.0 + a));
        let h = self.horizon as f64;
        match self.constants {
            Constants::Practical => {
                // β_{t+1} from m_t and t, as the paper's (t is taken ≥ 1).
                let log = ((m + 1.0) * h).ln();
                self.b * self.lambda.sqrt()
                    + m.sqrt() * v_pow * log.powf(a / (1.0 + a)) * (t.max(1) as f64).powf(self.t_exponent())
            }
            // β for round t + 1.
            Constants::Calibrated => super::calibrated::beta(self.means.len(), t + 1, self.delta),
            Constants::Paper => {
                // β_{t+1} from m_t and t.
                let log = self.theorem_log(self.model.dim());
                self.b * (1.0 + 1.0 / (1.0 - self.nystrom_accuracy).sqrt())
                    + 4.0
                        * (m / self.lambda).sqrt()
                        * v_pow
                        * log.powf(a / (1.0 + a))
                        * (t.max(1) as f64).powf(self.t_exponent())
            }
        }
    }

    fn choose_next(&mut self) {
        self.beta = self.beta_scale * self.beta_after(self.rounds);
        self.next = ucb_arm(&self.means, &self.variances, self.beta, self.tie_order.as_deref());
    }

    /// Alg. 1 lines 6–12 after the t-th report.
    fn update(&mut self) -> Result<(), PolicyError> {
        self.model.resample(&self.counts, &self.variances, self.q, &mut self.rng)?;
        let m = self.model.dim();
        if m == 0 {
            self.means.fill(0.0);
            self.variances.copy_from(self.model.prior_variances());
        } else {
            let features = self.model.features();
            let ridge = Ridge::new(features, &self.counts, self.lambda)?;
            // Row a of H is u_aᵀ = (Ṽ^{−1/2} φ̃(a))ᵀ (Ṽ^{−1/2} is symmetric).
            let h = features * ridge.inv_sqrt();
            let scale = self.level_scale(m);
            let mut r_hat = DVector::zeros(m);
            for (a, reports) in self.reports.iter().enumerate().filter(|(_, r)| !r.is_empty()) {
                for (r_i, &u) in r_hat.iter_mut().zip(h.row(a).iter()) {
                    *r_i += u * reports.sum_within(scale / u.abs());
                }
            }
            self.means = &h * r_hat;
            // φ̃ᵀṼ⁻¹φ̃ = ‖Ṽ^{−1/2}φ̃‖² = ‖H_a‖².
            self.variances = nystrom_variances(features, self.model.prior_variances(), self.lambda, |a| {
                h.row(a).norm_squared()
            });
        }
        self.choose_next();
        Ok(())
    }

    /// μ̃_t over the arms.
    pub fn means(&self) -> &DVector<f64> {
        &self.means
    }

    /// σ̃²_t over the arms (clamped ≥ 0).
    pub fn variances(&self) -> &DVector<f64> {
        &self.variances
    }

    /// β for the next round.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// The distinct arms of the current dictionary, increasing.
    pub fn dictionary(&self) -> &[usize] {
        self.model.dictionary()
    }

    /// m_t, the feature dimension (number of distinct dictionary arms).
    pub fn dim(&self) -> usize {
        self.model.dim()
    }

    /// q, the dictionary sampling rate in use.
    pub fn q(&self) -> f64 {
        self.q
    }

    /// t, the number of reports observed.
    pub fn rounds(&self) -> usize {
        self.rounds
    }
}

impl Policy for AtaGpUcb {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        Some(Box::new(self.clone()))
    }

    fn select(&mut self) -> usize {
        self.next
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("lambda", self.lambda),
            ("delta", self.delta),
            ("q", self.q),
            ("nystrom_accuracy", self.nystrom_accuracy),
            ("beta_1", self.beta),
            ("level_1_m1", self.level_with(1, 1)),
        ]
    }

    /// μ̃_t, the Nyström posterior mean of the adaptively truncated reports.
    fn posterior_means(&self) -> Option<&DVector<f64>> {
        Some(&self.means)
    }

    /// σ̃²_t: it depends on the points played alone (their counts, and the dictionary drawn
    /// from them with the learner's own rng), never on the reports.
    fn posterior_variances(&self) -> Option<DVector<f64>> {
        Some(self.variances.clone())
    }

    /// GP-BUCB with Nyström features: μ̃ of the reports received, β of the round they make,
    /// the variances given (a copy's that was told every point selected).
    fn select_with_variances(&mut self, variances: &DVector<f64>) -> Option<usize> {
        (variances.len() == self.means.len())
            .then(|| ucb_arm(&self.means, variances, self.beta, self.tie_order.as_deref()))
    }

    /// Records (arm, report) and recomputes the posterior (Alg. 1 lines 6–12). On
    /// [`PolicyError::Numerical`] the report stays recorded and the previous posterior is kept.
    fn observe(&mut self, arm: usize, report: f64) -> Result<(), PolicyError> {
        check_report(arm, self.counts.len(), report)?;
        self.rounds += 1;
        let key = report.abs() / self.level_growth(self.rounds);
        self.reports[arm].insert(key, report);
        self.counts[arm] += 1;
        self.update()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::gp::{FinitePosterior, Matern, MaternNu, SquaredExponential, gram_matrix};

    /// A non-private problem with prior covariance `cov`, B = 1, α = 1, δ = 0.1.
    pub(crate) fn problem_with(cov: DMatrix<f64>, horizon: usize, lambda: f64, v: f64, c: f64) -> Problem {
        Problem {
            covariance: FiniteCovariance::new(cov).unwrap(),
            b: 1.0,
            noise_bound: None,
            alpha: 1.0,
            v,
            c,
            horizon,
            lambda,
            delta: 0.1,
            privacy: None,
            beta_scale: 1.0,
            central_epsilon: None,
            tie_order: None,
        }
    }

    pub(crate) fn grid(n: usize) -> Vec<Vec<f64>> {
        (0..n).map(|i| vec![i as f64 / (n - 1) as f64]).collect()
    }

    /// A fixed pseudo-random (arm, y) sequence with repeats (a small LCG, no RNG dependency).
    pub(crate) fn sequence(n: usize, len: usize) -> Vec<(usize, f64)> {
        let mut s: u64 = 12345;
        (0..len)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let arm = (s >> 33) as usize % n;
                let y = ((s >> 11) % 1000) as f64 / 250.0 - 2.0;
                (arm, y)
            })
            .collect()
    }

    /// f = k(·, x_star): a column of the prior covariance.
    pub(crate) fn kernel_section(k: &DMatrix<f64>, star: usize) -> Vec<f64> {
        k.column(star).iter().copied().collect()
    }

    /// A deterministic noise stream, uniform on [−1, 1) (a small LCG).
    pub(crate) fn noise_stream(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed;
        move || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }
    }

    /// The tiny noiseless problem of the `finds_the_best_arm_*` tests: 10 arms on [0, 1],
    /// SE l = 0.1, f = k(·, x*) for every x*, λ = 0.1, v = 1, moment bound `c`, T = 200, seeds
    /// 0..3. Asserts that the last 50 rounds' regret is below 0.5 (one play of a neighbour).
    pub(crate) fn assert_finds_the_best_arm(c: f64, make: impl Fn(&Problem, u64) -> Box<dyn Policy>) {
        let k = gram_matrix(&SquaredExponential::new(0.1).unwrap(), &grid(10)).unwrap();
        let problem = problem_with(k, 200, 0.1, 1.0, c);
        for star in 0..10 {
            let f = kernel_section(problem.covariance.matrix(), star);
            for seed in 0..3 {
                let mut p = make(&problem, seed);
                let arms = play(p.as_mut(), &f, 200, || 0.0);
                let regret: f64 = arms[150..].iter().map(|&a| 1.0 - f[a]).sum();
                assert!(regret < 0.5, "x* = {star}, seed {seed}: last-50 regret {regret}");
            }
        }
    }

    /// Runs `t` rounds with reports f(arm) + noise(); returns the arms played.
    pub(crate) fn play(
        policy: &mut dyn Policy,
        f: &[f64],
        t: usize,
        mut noise: impl FnMut() -> f64,
    ) -> Vec<usize> {
        (0..t)
            .map(|_| {
                let arm = policy.select();
                policy.observe(arm, f[arm] + noise()).unwrap();
                arm
            })
            .collect()
    }

    /// Plays `horizon` noisy rounds (20 arms on [0, 1], SE l = 0.2, f = k(·, x_13), λ = 1,
    /// v = 2, c = 1) and asserts that the arms played and the final `state` repeat for seed 4 and
    /// differ for seed 5. The policy should use q = 2, which makes the dictionary draws matter
    /// (p = min(2 σ̃², 1) < 1 for most points).
    pub(crate) fn assert_reproducible_for_a_fixed_seed<P: Policy, S: PartialEq + std::fmt::Debug>(
        horizon: usize,
        make: impl Fn(&Problem, u64) -> P,
        state: impl Fn(&P) -> S,
    ) {
        let k = gram_matrix(&SquaredExponential::new(0.2).unwrap(), &grid(20)).unwrap();
        let problem = problem_with(k, horizon, 1.0, 2.0, 1.0);
        let f = kernel_section(problem.covariance.matrix(), 13);
        let run = |seed| {
            let mut p = make(&problem, seed);
            let arms = play(&mut p, &f, horizon, noise_stream(9));
            (arms, state(&p))
        };
        assert_eq!(run(4), run(4));
        assert_ne!(run(4), run(5));
    }

    /// The truncated feature-space sums of Zhou & Tan Alg. 1 line 9, computed as written (O(m t)):
    /// the reference the per-arm sums of [`AtaGpUcb`] are tested against,
    /// r̂_i = Σ_τ u_{i,τ} y_τ 1{|u_{i,τ} y_τ| ≤ b_τ}.
    ///
    /// `u` is m × n with column a = Ṽ^{−1/2} φ̃(a), so the τ-th column of Ṽ^{−1/2}Φ̃ᵀ is
    /// `u.column(history[τ−1].0)`; `history[τ−1] = (x_τ, y_τ)` and `level(τ)` = b_τ (τ from 1). A
    /// NaN level cuts every term, an infinite one none. An arm ≥ n gives
    /// [`PolicyError::ArmOutOfRange`].
    fn truncated_feature_sums(
        u: &DMatrix<f64>,
        history: &[(usize, f64)],
        level: impl Fn(usize) -> f64,
    ) -> Result<DVector<f64>, PolicyError> {
        let arms = u.ncols();
        let mut r = DVector::zeros(u.nrows());
        for (i, &(arm, y)) in history.iter().enumerate() {
            if arm >= arms {
                return Err(PolicyError::ArmOutOfRange { arm, arms });
            }
            let b = level(i + 1);
            for (r_i, &u_i) in r.iter_mut().zip(u.column(arm).iter()) {
                let z = u_i * y;
                if z.abs() <= b {
                    *r_i += z;
                }
            }
        }
        Ok(r)
    }

    #[test]
    fn reproducible_for_a_fixed_seed() {
        let params = AtaParams { q: Some(2.0), ..AtaParams::default() };
        assert_reproducible_for_a_fixed_seed(
            150,
            |problem, seed| AtaGpUcb::new(problem, params, seed).unwrap(),
            |p| (p.means().clone(), p.dictionary().to_vec()),
        );
    }

    #[test]
    fn finds_the_best_arm_of_a_tiny_noiseless_problem() {
        // 10 arms on [0, 1], SE l = 0.1, f = k(·, x*) (max 1, nearest gap 1 − e^{−0.617} ≈ 0.46),
        // noiseless reports, v = 1, λ = 0.1, T = 200, practical constants. Over every position
        // of x* and seeds 0..20 the last 50 rounds had zero regret (also at λ = 0.05; at λ = 0.2,
        // or l = 0.15 with λ = 0.1, β_t ≈ 9 still explores after round 150); we allow < 0.5, one
        // play of a neighbour.
        assert_finds_the_best_arm(0.0, |problem, seed| {
            Box::new(AtaGpUcb::new(problem, AtaParams::default(), seed).unwrap())
        });
    }

    #[test]
    fn truncation_matches_a_hand_computed_case() {
        // Columns = arms 0, 1, 2.
        let u = DMatrix::from_row_slice(2, 3, &[0.5, 2.0, -0.4, 1.0, 0.25, 1.0]);
        let history = [(0, 2.0), (1, -1.0), (2, 3.0), (0, 1.0)];
        let levels = [1.0, 1.0, 2.0, 10.0];
        // Row 0: 0.5·2 = 1 (kept, |1| ≤ 1), 2·(−1) = −2 (cut), −0.4·3 = −1.2 (kept), 0.5·1 = 0.5.
        // Row 1: 1·2 = 2 (cut), 0.25·(−1) = −0.25, 1·3 = 3 (cut), 1·1 = 1.
        let r = truncated_feature_sums(&u, &history, |tau| levels[tau - 1]).unwrap();
        assert!((r[0] - 0.3).abs() < 1e-12, "{r}");
        assert!((r[1] - 0.75).abs() < 1e-12, "{r}");
        // No truncation: the plain sums Σ u_{i,τ} y_τ.
        let r = truncated_feature_sums(&u, &history, |_| f64::INFINITY).unwrap();
        assert!((r[0] + 1.7).abs() < 1e-12 && (r[1] - 5.75).abs() < 1e-12, "{r}");
        // A NaN level cuts everything; a bad arm is an error, not a panic.
        assert_eq!(truncated_feature_sums(&u, &history, |_| f64::NAN).unwrap(), DVector::zeros(2));
        assert_eq!(
            truncated_feature_sums(&u, &[(3, 1.0)], |_| 1.0),
            Err(PolicyError::ArmOutOfRange { arm: 3, arms: 3 })
        );
    }

    #[test]
    fn per_arm_sums_are_alg1_re_truncation_of_every_past_report() {
        // The sorted per-arm sums against the direct O(m t) loop of Alg. 1 line 9
        // (`truncated_feature_sums`) with μ̃ = Φ̃ Ṽ^{−1/2} r̂, after every report, for α = 1 (b
        // constant in τ) and α = 0.5 (b grows with τ), small q so the dictionary changes.
        let n = 12;
        let k = gram_matrix(&SquaredExponential::new(0.2).unwrap(), &grid(n)).unwrap();
        for alpha in [1.0, 0.5] {
            let problem = Problem { alpha, ..problem_with(k.clone(), 300, 0.3, 2.0, 1.0) };
            let params = AtaParams { q: Some(5.0), ..AtaParams::with_constants(Constants::Paper) };
            let mut ata = AtaGpUcb::new(&problem, params, 7).unwrap();
            let mut history = Vec::new();
            let (mut cut, mut kept) = (0, 0);
            for (arm, y) in sequence(n, 120) {
                let y = 3.0 * y; // reports up to 6 in size: the level (≈ 0.4) cuts many
                ata.observe(arm, y).unwrap();
                history.push((arm, y));
                let features = ata.model.features();
                if features.ncols() == 0 {
                    continue;
                }
                let w = Ridge::new(features, &ata.counts, problem.lambda).unwrap().inv_sqrt();
                let u = &w * features.transpose();
                let r = truncated_feature_sums(&u, &history, |tau| ata.level(tau)).unwrap();
                let means = features * (&w * r);
                for x in 0..n {
                    assert!((ata.means()[x] - means[x]).abs() < 1e-9, "α {alpha}, arm {x}");
                }
                for (tau, &(a, y)) in history.iter().enumerate() {
                    for i in 0..u.nrows() {
                        if (u[(i, a)] * y).abs() <= ata.level(tau + 1) { kept += 1 } else { cut += 1 }
                    }
                }
            }
            // Both branches of the truncation were exercised.
            assert!(cut > 1000 && kept > 1000, "α {alpha}: cut {cut}, kept {kept}");
        }
    }

    #[test]
    fn arm_reports_sum_the_reports_within_a_threshold() {
        let mut r = ArmReports::default();
        for (key, y) in [(2.0, -2.0), (0.5, 0.5), (2.0, 2.5), (1.0, -1.0)] {
            r.insert(key, y);
        }
        assert_eq!(r.len(), 4);
        assert_eq!(r.sum_within(0.4), 0.0);
        assert_eq!(r.sum_within(0.5), 0.5);
        assert_eq!(r.sum_within(1.5), -0.5);
        assert_eq!(r.sum_within(2.0), 0.0);
        assert_eq!(r.sum_within(f64::INFINITY), 0.0);
        assert_eq!(r.sum_within(f64::NAN), 0.0);
        r.insert(0.0, 7.0);
        assert_eq!(r.sum_within(0.0), 7.0);
        assert_eq!(r.sum_within(1.0), 6.5);
    }

    #[test]
    fn full_dictionary_without_truncation_is_the_exact_gp_posterior() {
        // Matérn-1/2 (well conditioned) on 8 points; q huge keeps every played arm, so the
        // features span k(·, x_τ) for every played x_τ and the ridge posterior in feature space
        // is the exact GP posterior. Tolerance 1e-6 (entries of K ≤ 1, λ = 0.5).
        let n = 8;
        let k = gram_matrix(&Matern::new(MaternNu::Half, 0.3).unwrap(), &grid(n)).unwrap();
        let problem = problem_with(k, 100, 0.5, 1.0, 1.0);
        let params = AtaParams { q: Some(1e12), truncate: false, ..AtaParams::default() };
        let mut ata = AtaGpUcb::new(&problem, params, 3).unwrap();
        let mut gp = FinitePosterior::new(&problem.covariance, problem.lambda).unwrap();
        let mut played = std::collections::BTreeSet::new();
        for (arm, y) in sequence(n, 40) {
            ata.observe(arm, y).unwrap();
            gp.observe(arm, y).unwrap();
            played.insert(arm);
            assert_eq!(ata.dictionary(), played.iter().copied().collect::<Vec<_>>());
            for x in 0..n {
                let (em, ev) = (gp.mean(x).unwrap(), gp.variance(x).unwrap());
                assert!((ata.means()[x] - em).abs() < 1e-6, "mean {x}: {} vs {em}", ata.means()[x]);
                assert!((ata.variances()[x] - ev).abs() < 1e-6, "var {x}: {} vs {ev}", ata.variances()[x]);
            }
        }
    }

    #[test]
    fn first_round_uses_the_prior() {
        // μ̃_0 = 0, σ̃²_0 = k(x, x): the first pick is the arm of largest prior variance.
        let cov = DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, 3.0, 2.0]));
        let mut ata = AtaGpUcb::new(&problem_with(cov, 10, 1.0, 1.0, 1.0), AtaParams::default(), 0).unwrap();
        assert_eq!(ata.means(), &DVector::zeros(3));
        assert_eq!(ata.variances(), &DVector::from_vec(vec![1.0, 3.0, 2.0]));
        assert_eq!(ata.select(), 1);
        assert_eq!(ata.dim(), 0);
    }

    #[test]
    fn practical_and_paper_constants() {
        let k = gram_matrix(&SquaredExponential::new(0.2).unwrap(), &grid(10)).unwrap();
        let problem = problem_with(k, 1000, 1.0, 4.0, 3.0);
        let ata = AtaGpUcb::new(&problem, AtaParams::default(), 0).unwrap();
        assert!((ata.q() - 1000f64.ln() / 0.01).abs() < 1e-9);
        // m = 0 before any report: b_τ = (4/ln 1000)^{1/2} (α = 1), β_1 = B√λ = 1.
        assert!((ata.level(5) - (4.0 / 1000f64.ln()).sqrt()).abs() < 1e-12);
        assert!((ata.beta() - 1.0).abs() < 1e-12);
        let paper = AtaGpUcb::new(&problem, AtaParams::with_constants(Constants::Paper), 0).unwrap();
        // ρ = 3, q = 18 ln(40000)/0.25; b = √(v/ln(4·1·1000/0.1)); β = B(1 + √2) at m = 0.
        assert!((paper.q() - 72.0 * 40000f64.ln()).abs() < 1e-9);
        assert!((paper.level(7) - (4.0 / 40000f64.ln()).sqrt()).abs() < 1e-12);
        assert!((paper.beta() - (1.0 + 2f64.sqrt())).abs() < 1e-12);
        let off = AtaGpUcb::new(&problem, AtaParams { truncate: false, ..AtaParams::default() }, 0).unwrap();
        assert_eq!(off.level(1), f64::INFINITY);
        // Invalid settings are rejected.
        for bad in [
            Problem { lambda: 0.0, ..problem.clone() },
            Problem { horizon: 0, ..problem.clone() },
            Problem { alpha: 1.5, ..problem.clone() },
            Problem { v: f64::NAN, ..problem.clone() },
        ] {
            assert!(matches!(
                AtaGpUcb::new(&bad, AtaParams::default(), 0).err(),
                Some(PolicyError::InvalidSetting(_))
            ));
        }
        let bad_q = AtaParams { q: Some(-1.0), ..AtaParams::default() };
        assert!(matches!(AtaGpUcb::new(&problem, bad_q, 0).err(), Some(PolicyError::InvalidSetting(_))));
        let bad_eps = AtaParams { nystrom_accuracy: 1.0, ..AtaParams::default() };
        assert!(matches!(AtaGpUcb::new(&problem, bad_eps, 0).err(), Some(PolicyError::InvalidSetting(_))));
    }

    #[test]
    fn bad_reports_are_errors_not_panics() {
        let k = gram_matrix(&SquaredExponential::new(0.2).unwrap(), &grid(5)).unwrap();
        let mut ata = AtaGpUcb::new(&problem_with(k, 10, 1.0, 1.0, 1.0), AtaParams::default(), 0).unwrap();
        assert_eq!(ata.observe(5, 1.0), Err(PolicyError::ArmOutOfRange { arm: 5, arms: 5 }));
        assert_eq!(ata.observe(0, f64::NAN), Err(PolicyError::NonFiniteReport));
        assert_eq!(ata.observe(0, f64::INFINITY), Err(PolicyError::NonFiniteReport));
        assert_eq!(ata.rounds(), 0);
        ata.observe(0, 1e300).unwrap();
        // The huge report is truncated, so the posterior stays finite.
        assert!(ata.means().iter().chain(ata.variances()).all(|v| v.is_finite()), "{:?}", ata.means());
    }
}
