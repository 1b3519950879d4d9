//! Privacy audits: run a mechanism on neighbouring inputs at the extremes, find the attack set
//! that best separates them on a training sample, and bound ε from below on a fresh sample with
//! Clopper–Pearson intervals (in the spirit of DP-Sniper / Delta-Siege; Jagielski et al. 2020).
//!
//! For (ε, δ)-DP, every set E satisfies P(M(x) ∈ E) ≤ e^ε P(M(x') ∈ E) + δ, so with probability
//! ≥ 1 − α
//!
//! ```text
//! ε ≥ ε_lb = ln( (p̂₀,lower − δ) / p̂₁,upper ),      δ ≥ δ_lb = p̂₀,lower − e^ε p̂₁,upper
//! ```
//!
//! where the bounds are one-sided Clopper–Pearson at α/2 each, δ is the claimed δ in the first
//! and ε the claimed ε in the second (δ = 0 for the pure-ε mechanisms). A mechanism passes when
//! ε_lb ≤ its claimed ε, equivalently δ_lb ≤ its claimed δ on the same set. Attack sets are thresholds `{s > c}` or `{s < c}` on the statistics a
//! case exposes (the released value, and where it matters a floating-point "off-grid" indicator);
//! the threshold is chosen on a separate training sample so the test sample is not reused.
//!
//! The deliberately broken mechanisms below are kept as fixtures: an audit that passes them is
//! broken itself.

use std::path::Path;
use std::sync::OnceLock;

use ldp_core::bandit::{Exp3Params, PrivateExp3, PrivateHedge, PrivateSum};
use ldp_core::device::{DeviceApp, SensorModel, SimulatedSensor};
use ldp_core::features::FeatureMap;
use ldp_core::jdp::{ClientConfig, Confidence, LocalJdpClient, SymmetricTree, TreeConfig};

const FIXTURE_EPS: f64 = 3.0;

/// R = 0: the audited device's sensor reads its mean exactly.
const NOISELESS: Bound = match Bound::new(0.0) {
    Ok(b) => b,
    Err(_) => panic!("0 is a bound"),
};
/// The bounds of the audited releases.
const UNIT: Bound = match Bound::new(1.0) {
    Ok(b) => b,
    Err(_) => panic!("B = 1 is valid"),
};
const TWO: Bound = match Bound::new(2.0) {
    Ok(b) => b,
    Err(_) => panic!("B = 2 is valid"),
};
use ldp_core::sampler::{DiscreteGaussian, DiscreteLaplace};
use ldp_core::tree::{AdaptiveTree, Tree, VectorTree};
use ldp_core::{
    Bound, BudgetPolicy, Delta, DeviceConfig, Epsilon, LaplaceMechanism, MemoryStore, Reporter,
    TruncationLevel,
};
use rand_core::{Rng, SeedableRng};
use rayon::prelude::*;
use statrs::distribution::{Beta, ContinuousCDF};

use crate::experiments::runner::derive_seed;
use ldp_core::wire::Refusal;
use ldp_learn::env::SimRng;
use ldp_link::client::{LinkError, WireClient};
use ldp_link::transport::{LoopbackLink, QemuDevice};

/// The number of statistics a case exposes per draw.
pub const STATS: usize = 2;

/// One mechanism under audit: `draw(high, rng)` runs it once on the "high" or "low" neighbour and
/// returns the statistics an attacker may threshold.
pub struct Case {
    /// Name in the table.
    pub name: &'static str,
    /// The ε the mechanism claims.
    pub claimed_epsilon: f64,
    /// The δ it claims (0 for pure ε-DP).
    pub claimed_delta: f64,
    /// Whether this is one of our mechanisms (should pass) or a broken fixture (should fail).
    pub ours: bool,
    /// How to run it on a neighbour.
    pub draw: Draw,
}

/// Draws of a mechanism on a neighbour.
pub enum Draw {
    /// One independent run per call.
    One(fn(bool, &mut SimRng) -> [f64; STATS]),
    /// `n` independent runs at once, from a seed (a device that is slow to start, e.g. the
    /// firmware under QEMU). An error (the device failed) makes every statistic NaN.
    Batch(Box<BatchDraw>),
}

/// `(high, n, seed)` → `n` draws, or why the device failed.
pub type BatchDraw = dyn Fn(bool, u64, u64) -> Result<Vec<[f64; STATS]>, AuditError> + Send + Sync;

/// A device under audit failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum AuditError {
    /// QEMU, its files or the link to it failed.
    Link(LinkError),
    /// The firmware refused a query it should have answered.
    Refused(Refusal),
}

impl std::fmt::Display for AuditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Link(e) => write!(f, "the firmware under QEMU: {e}"),
            Self::Refused(r) => write!(f, "the firmware refused a query it should have answered: {r}"),
        }
    }
}

impl std::error::Error for AuditError {}

impl From<std::io::Error> for AuditError {
    fn from(e: std::io::Error) -> Self {
        Self::Link(LinkError::Io(e))
    }
}

impl Draw {
    /// `n` draws on the high neighbour, then `n` on the low one, from `rng` in that order. A
    /// batch (a device that is slow to start, e.g. the firmware under QEMU) takes its two seeds
    /// in that order and runs both at once, the low one on a thread of its own: a batch mostly
    /// waits for its device, so two at once keep two emulators busy where one would leave a core
    /// idle. Either way the seeds are those of running the two in turn (a device that draws its
    /// noise from its own entropy draws it as before).
    fn run_both(&self, n: u64, rng: &mut SimRng) -> (Vec<[f64; STATS]>, Vec<[f64; STATS]>) {
        match self {
            Self::One(draw) => {
                let high = (0..n).map(|_| draw(true, rng)).collect();
                (high, (0..n).map(|_| draw(false, rng)).collect())
            }
            Self::Batch(draws) => {
                let (high_seed, low_seed) = (rng.next_u64(), rng.next_u64());
                let batch = |high: bool, seed: u64| {
                    draws(high, n, seed).unwrap_or_else(|e| {
                        eprintln!("audit: {e}");
                        vec![[f64::NAN; STATS]; n as usize]
                    })
                };
                std::thread::scope(|s| {
                    let low = s.spawn(|| batch(false, low_seed));
                    let high = batch(true, high_seed);
                    (high, low.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                })
            }
        }
    }
}

/// The outcome of auditing one case.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Verdict {
    /// The case.
    pub name: String,
    /// Our mechanism or a broken fixture.
    pub ours: bool,
    /// Claimed ε.
    pub claimed_epsilon: f64,
    /// Claimed δ.
    pub claimed_delta: f64,
    /// The lower bound ε_lb at the claimed δ (may be +∞ when the low neighbour never hits the
    /// set; NaN when the device failed: a batch of its draws is NaN).
    pub epsilon_lower_bound: f64,
    /// The lower bound δ_lb at the claimed ε, on the same set (0 when negative).
    pub delta_lower_bound: f64,
    /// The attack set that achieved it, e.g. `s0 > 5.9`.
    pub attack: String,
    /// ε_lb ≤ claimed (false when the device failed: ε_lb is then NaN, see [`Verdict::failed`]).
    pub passed: bool,
    /// Test draws per neighbour.
    pub samples: u64,
}

impl Verdict {
    /// A draw failed during the audit (a device that errored, a release refused): there is no
    /// bound, and the case neither passes nor is caught.
    pub fn failed(&self) -> bool {
        self.epsilon_lower_bound.is_nan()
    }
}

/// Clopper–Pearson (lower, upper) bounds, each one-sided at level `alpha / 2`.
pub fn clopper_pearson(k: u64, n: u64, alpha: f64) -> (f64, f64) {
    let lower = if k == 0 {
        0.0
    } else {
        Beta::new(k as f64, (n - k + 1) as f64).map_or(0.0, |b| b.inverse_cdf(alpha / 2.0))
    };
    let upper = if k == n {
        1.0
    } else {
        Beta::new((k + 1) as f64, (n - k) as f64).map_or(1.0, |b| b.inverse_cdf(1.0 - alpha / 2.0))
    };
    (lower, upper)
}

#[derive(Clone, Copy, Debug)]
struct Attack {
    stat: usize,
    threshold: f64,
    above: bool,
}

impl Attack {
    fn hits(&self, s: &[f64; STATS]) -> bool {
        if self.above { s[self.stat] > self.threshold } else { s[self.stat] < self.threshold }
    }
}

/// ln((p0 − δ)/p1), or −∞ when p0 ≤ δ.
fn epsilon_bound(p0_lower: f64, p1_upper: f64, delta: f64) -> f64 {
    if p0_lower <= delta { f64::NEG_INFINITY } else { ((p0_lower - delta) / p1_upper).ln() }
}

/// The attack set whose training counts give the largest Clopper–Pearson lower bound.
fn choose_attack(high: &[[f64; STATS]], low: &[[f64; STATS]], delta: f64) -> Attack {
    let mut best = (f64::NEG_INFINITY, Attack { stat: 0, threshold: 0.0, above: true });
    for stat in 0..STATS {
        let mut pooled: Vec<f64> = high.iter().chain(low).map(|s| s[stat]).collect();
        pooled.sort_by(f64::total_cmp);
        pooled.dedup();
        let candidates: Vec<f64> = if pooled.len() <= 200 {
            pooled.windows(2).map(|w| 0.5 * (w[0] + w[1])).collect()
        } else {
            (1..200).map(|q| pooled[q * (pooled.len() - 1) / 200]).collect()
        };
        for &threshold in &candidates {
            for above in [true, false] {
                let attack = Attack { stat, threshold, above };
                let k0 = high.iter().filter(|s| attack.hits(s)).count() as u64;
                let k1 = low.iter().filter(|s| attack.hits(s)).count() as u64;
                // Score by the bound the test would give at these counts (a looser α, as a
                // prior): this prefers sets with enough mass over lucky tails.
                let n = high.len() as u64;
                let (p0_lower, _) = clopper_pearson(k0, n, 1e-2);
                let (_, p1_upper) = clopper_pearson(k1, n, 1e-2);
                let score = epsilon_bound(p0_lower, p1_upper, delta);
                if score > best.0 {
                    best = (score, attack);
                }
            }
        }
    }
    best.1
}

/// Audits one case with `samples` test draws per neighbour (and a fifth as many for training),
/// at confidence 1 − `alpha`.
pub fn audit(case: &Case, samples: u64, alpha: f64, seed: u64) -> Verdict {
    let mut rng = SimRng::seed_from_u64(seed);
    let train = (samples / 5).max(1000);
    let (high, low) = case.draw.run_both(train, &mut rng);
    let attack = choose_attack(&high, &low, case.claimed_delta);
    let (test_high, test_low) = case.draw.run_both(samples, &mut rng);
    let count = |draws: &[[f64; STATS]]| draws.iter().filter(|s| attack.hits(s)).count() as u64;
    let (k0, k1) = (count(&test_high), count(&test_low));
    let (p0_lower, _) = clopper_pearson(k0, samples, alpha);
    let (_, p1_upper) = clopper_pearson(k1, samples, alpha);
    // A draw that failed is NaN (a batch's error, a release refused): such a case has no bound,
    // since NaN hits no attack set, which alone would read as a private device, or catch a
    // private fixture.
    let failed = [&high, &low, &test_high, &test_low].iter().any(|d| d.iter().flatten().any(|x| x.is_nan()));
    let (bound, delta_bound) = if failed {
        (f64::NAN, f64::NAN)
    } else {
        (
            epsilon_bound(p0_lower, p1_upper, case.claimed_delta).max(0.0),
            (p0_lower - case.claimed_epsilon.exp() * p1_upper).max(0.0),
        )
    };
    Verdict {
        name: case.name.to_string(),
        ours: case.ours,
        claimed_epsilon: case.claimed_epsilon,
        claimed_delta: case.claimed_delta,
        epsilon_lower_bound: bound,
        delta_lower_bound: delta_bound,
        attack: format!("s{} {} {:.6e}", attack.stat, if attack.above { ">" } else { "<" }, attack.threshold),
        passed: bound <= case.claimed_epsilon,
        samples,
    }
}

/// Audits every case in parallel (results in case order, independent of the thread count).
pub fn audit_all(cases: &[Case], samples: u64, alpha: f64, seed: u64) -> Vec<Verdict> {
    cases
        .par_iter()
        .enumerate()
        .map(|(i, c)| audit(c, samples, alpha, derive_seed(seed, i as u64, 7)))
        .collect()
}

/// 1 if `x` is in (−1, 1) but not a multiple of 2^-53 — a floating-point fingerprint that
/// `fl(1 + noise)` never has (Zhou & Tan CTL with the naive sampler, Mironov 2012).
fn off_grid(x: f64) -> f64 {
    if x.abs() < 1.0 && (x * 2f64.powi(53)).fract() != 0.0 { 1.0 } else { 0.0 }
}

/// One release of `reward` by `m`: the released value and its off-grid indicator.
fn released(m: &LaplaceMechanism, reward: f64, rng: &mut SimRng) -> [f64; STATS] {
    let v = m.release(reward, rng).map_or(f64::NAN, |r| r.value());
    [v, off_grid(v)]
}

fn ctl(eps: f64, b: f64, r: f64) -> Option<LaplaceMechanism> {
    LaplaceMechanism::ctl(Epsilon::new(eps).ok()?, Bound::new(b).ok()?, Bound::new(r).ok()?).ok()
}

/// Φ(x) = x on two coordinates: the smallest feature map on which a local-JDP report has both a
/// Gram part (three entries) and a moment part (two), so the audit runs the real client fast.
struct Coordinates;

impl FeatureMap<2, 2> for Coordinates {
    fn features_into(&self, x: &[f64; 2], out: &mut [f64; 2]) {
        *out = *x;
    }

    fn kernel(&self, x: &[f64; 2], y: &[f64; 2]) -> f64 {
        x[0] * y[0] + x[1] * y[1]
    }

    fn approx_kernel(&self, x: &[f64; 2], y: &[f64; 2]) -> f64 {
        self.kernel(x, y)
    }
}

/// The (ε, δ) of the local-JDP cases.
const JDP_EPSILON: f64 = 1.0;
const JDP_DELTA: f64 = 1e-5;

/// Seed 003 Alg. 3's client at (ε, δ) = (1, 1e-5), b = 1, on its default grid 2^-16 (the noise
/// σ is 5.3·10^5 grid steps per Gram entry, 7.5·10^5 per moment entry; the exact sampler's cost
/// does not grow with it).
fn jdp_client() -> Option<&'static LocalJdpClient<2, 2, Coordinates>> {
    static CLIENT: OnceLock<Option<LocalJdpClient<2, 2, Coordinates>>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let conf =
                Confidence { rkhs_bound: 1.0, noise_scale: 0.1, approx_error: 0.0, zeta: 0.1, scale: 1.0 };
            let config = ClientConfig::new(
                Epsilon::new(JDP_EPSILON).ok()?,
                Delta::new(JDP_DELTA).ok()?,
                UNIT,
                1000,
                conf,
            );
            LocalJdpClient::new(Coordinates, config).ok()
        })
        .as_ref()
}

/// The neighbours at the extremes for Φ(x) = x: (x, y) = (e₁, 1) against (e₂, −1). The Gram
/// parts differ by diag(1, −1) (Frobenius √2, the largest possible) and the moments by (1, 1).
fn jdp_neighbour(high: bool) -> ([f64; 2], f64) {
    if high { ([1.0, 0.0], 1.0) } else { ([0.0, 1.0], -1.0) }
}

/// The Neyman–Pearson statistics of a report `(g₀₀, g₀₁, g₁₁, m₀, m₁)` in value units, for the
/// neighbours of [`jdp_neighbour`] and per-entry noise σ_X, σ_u: the log-likelihood ratio (up to
/// a constant) `(g₀₀ − g₁₁)/σ_X² + (m₀ + m₁)/σ_u²`, and the moment part alone.
fn jdp_statistics(report: [f64; 5], sigma_gram: f64, sigma_moment: f64) -> [f64; STATS] {
    let [g00, _, g11, m0, m1] = report;
    let moment = (m0 + m1) / (sigma_moment * sigma_moment);
    [(g00 - g11) / (sigma_gram * sigma_gram) + moment, moment]
}

/// The production path in process: a provisioned device application (reporter, accountant,
/// per-boot key, wire format) whose sensor reads f(arm) exactly (R = 0 in the model), configured
/// with B = R = 0.5 so that C = 1 bounds |f| ≤ 0.9.
const DEVICE_ARMS: u32 = 100;

fn device_config() -> Option<DeviceConfig> {
    let half = Bound::new(0.5).ok()?;
    let policy = BudgetPolicy::new(Epsilon::new(1.0).ok()?, Epsilon::new(100.0).ok()?).ok()?;
    Some(DeviceConfig { b: half, r: half, policy })
}

/// The arms where the device's sensor reads its largest and smallest value (neighbours 1.8
/// apart, against a sensitivity of 2C = 2).
fn extreme_arms() -> (u32, u32) {
    static ARMS: OnceLock<(u32, u32)> = OnceLock::new();
    *ARMS.get_or_init(|| {
        let Some(sensor) = SensorModel::new(DEVICE_ARMS, NOISELESS) else { return (0, 0) };
        let mean = |a: &u32| sensor.mean(*a).unwrap_or(0.0);
        let by = |a: &u32, b: &u32| mean(a).total_cmp(&mean(b));
        ((0..DEVICE_ARMS).max_by(by).unwrap_or(0), (0..DEVICE_ARMS).min_by(by).unwrap_or(0))
    })
}

fn random32(rng: &mut SimRng) -> [u8; 32] {
    let mut bytes = [0u8; 32];
    rng.fill_bytes(&mut bytes);
    bytes
}

/// A device booted on `store` with `entropy`, behind the learner's wire client: every query
/// goes through the wire bytes, as it would to the firmware.
type InProcess = WireClient<LoopbackLink<MemoryStore, SimulatedSensor<SimRng>>>;

fn boot(store: MemoryStore, entropy: [u8; 32]) -> Option<InProcess> {
    let reporter = Reporter::open(device_config()?, store, entropy).ok()?;
    let sensor = SensorModel::new(DEVICE_ARMS, NOISELESS)?;
    let source = SimulatedSensor::new(sensor, SimRng::seed_from_u64(0));
    let link = LoopbackLink::new(DeviceApp::new(reporter, source, 1));
    let auth = link.auth();
    Some(WireClient::new(link, auth))
}

/// One query at ε = 1 for `arm`: the released value.
fn ask(device: &mut InProcess, arm: u32) -> Option<f64> {
    let report = device.query(1, arm, Epsilon::new(1.0).ok()?, None).ok()?.ok()?;
    Some(report.release.value())
}

/// Two boots of one device, one query each: `arm_hi` before the reset, `arm_hi` (high) or
/// `arm_lo` (low) after. `rolled_back`: the broken fixture — a store that does not persist
/// (the second boot sees the provisioned state again) and no entropy source (the same bytes
/// every boot), so both boots key the same noise. Statistics: r₁ − r₂ and |r₁ − r₂|.
fn across_reset(high: bool, rng: &mut SimRng, rolled_back: bool) -> [f64; STATS] {
    let (hi, lo) = extreme_arms();
    let provisioned = MemoryStore::provisioned(random32(rng));
    let entropy = random32(rng);
    let Some(mut first) = boot(provisioned, entropy) else { return [f64::NAN; STATS] };
    let Some(r1) = ask(&mut first, hi) else { return [f64::NAN; STATS] };
    let (store, entropy) = match rolled_back {
        false => (*first.link().app().reporter().accountant().store(), random32(rng)),
        true => (provisioned, entropy),
    };
    let Some(mut second) = boot(store, entropy) else { return [f64::NAN; STATS] };
    let Some(r2) = ask(&mut second, if high { hi } else { lo }) else { return [f64::NAN; STATS] };
    [r1 - r2, (r1 - r2).abs()]
}

/// Four rounds of a continual-release mechanism: `round(t)` inserts round t's value and returns
/// the statistic of the release after it; the result sums the releases at t = 1, 2, 4, each of
/// which contains the first round's value. NaN if a round is refused.
fn over_four_rounds(mut round: impl FnMut(u64) -> Option<f64>) -> [f64; STATS] {
    let mut sum = 0.0;
    for t in 1..=4u64 {
        let Some(stat) = round(t) else { return [f64::NAN; STATS] };
        if t != 3 {
            sum += stat;
        }
    }
    [sum, 0.0]
}

/// Round t's value when only the first differs between the neighbours: ±1, then 0.
fn first_differs(t: u64, high: bool) -> f64 {
    match (t, high) {
        (1, true) => 1.0,
        (1, false) => -1.0,
        _ => 0.0,
    }
}

/// The tree of seeds 002/004 over four values, the first ±1. Built at `eps` (the claim is 1:
/// a fixture builds at 3 = the depth, i.e. without splitting ε across the levels).
fn tree_sum(high: bool, rng: &mut SimRng, eps: f64) -> [f64; STATS] {
    let Ok(mut tree) = Epsilon::new(eps).and_then(|e| Tree::<3>::new(e, UNIT, 4)) else {
        return [f64::NAN; STATS];
    };
    over_four_rounds(|t| tree.insert(first_differs(t, high), rng).ok().map(|r| r.value()))
}

/// As [`tree_sum`] on the adaptive tree (Tao et al. Alg. 2) with bounds 1, 1, 2, 2 (B_max = 2).
fn adaptive_tree_sum(high: bool, rng: &mut SimRng, eps: f64) -> [f64; STATS] {
    let Ok(mut tree) = Epsilon::new(eps).and_then(|e| AdaptiveTree::<3>::new(e, TWO, 4)) else {
        return [f64::NAN; STATS];
    };
    over_four_rounds(|t| {
        let bound = if t <= 2 { 1.0 } else { 2.0 };
        tree.insert(first_differs(t, high), bound, rng).ok().map(|r| r.value())
    })
}

/// As [`tree_sum`] on a two-coordinate vector tree: the first vector is (1, −1) or (−1, 1); the
/// statistic is coordinate 0 minus coordinate 1.
fn vector_tree_sum(high: bool, rng: &mut SimRng, eps: f64) -> [f64; STATS] {
    let Ok(mut tree) = Epsilon::new(eps).and_then(|e| VectorTree::<2, 3>::new(e, UNIT, 4)) else {
        return [f64::NAN; STATS];
    };
    over_four_rounds(|t| {
        let x = first_differs(t, high);
        let v = tree.insert(&[x, -x], rng).ok()?.values();
        Some(v[0] - v[1])
    })
}

/// Seed 004's private sum of four values truncated at B = 2, the first ±2. The fixture adds
/// noise calibrated to a sensitivity of M grid steps instead of 2M.
fn private_sum(high: bool, rng: &mut SimRng, broken: bool) -> [f64; STATS] {
    let (Ok(level), Ok(eps)) = (TruncationLevel::new(2.0), Epsilon::new(1.0)) else {
        return [f64::NAN; STATS];
    };
    let Ok(mut sum) = PrivateSum::new(level, eps) else { return [f64::NAN; STATS] };
    for x in [if high { 2.0 } else { -2.0 }, 0.5, -0.5, 1.0] {
        if sum.add(x).is_err() {
            return [f64::NAN; STATS];
        }
    }
    if !broken {
        return [sum.release(rng).value(), 0.0];
    }
    let Some(noise) = DiscreteLaplace::new((sum.max_index() as u64) * 1024, 1024) else {
        return [f64::NAN; STATS];
    };
    [libm::scalbn((sum.exact_index() + noise.sample(rng)) as f64, sum.grid_log2()), 0.0]
}

/// Private Hedge over four rounds, the first losses (1, 0) or (0, 1), then (½, ½); the
/// statistic sums L̃_t[0] − L̃_t[1] over t = 1, 2, 4.
fn hedge(high: bool, rng: &mut SimRng, eps: f64) -> [f64; STATS] {
    let Ok(mut hedge) = Epsilon::new(eps).and_then(|e| PrivateHedge::<2, 3>::new(e, 4, 0.1, rng)) else {
        return [f64::NAN; STATS];
    };
    over_four_rounds(|t| {
        let x = first_differs(t, high);
        hedge.observe(&[0.5 + x / 2.0, 0.5 - x / 2.0], rng).ok()?;
        let l = hedge.noisy_cumulative();
        Some(l[0] - l[1])
    })
}

/// Private EXP3 (Agarwal & Singh Alg. 4) for one round: the arm it chose sees loss 1 or 0; the
/// statistic is that arm's probability in round 2 (a function of the released loss). The
/// fixture runs at 2ε, i.e. noise for a loss range of ½ instead of 1.
fn exp3(high: bool, rng: &mut SimRng, eps: f64) -> [f64; STATS] {
    let Ok(eps) = Epsilon::new(eps) else { return [f64::NAN; STATS] };
    let Ok(params) = Exp3Params::new(0.1, 0.1) else { return [f64::NAN; STATS] };
    let Ok(mut exp3) = PrivateExp3::<2>::with_params(eps, params) else { return [f64::NAN; STATS] };
    let arm = exp3.select(rng);
    if exp3.observe(arm, if high { 1.0 } else { 0.0 }, rng).is_err() {
        return [f64::NAN; STATS];
    }
    [exp3.probabilities()[arm], 0.0]
}

/// The symmetric-matrix tree of Dubey (JDP) for T = 4 rows in R² (‖z‖ ≤ 1): the first row
/// is (1, 0) or (0, 1) (the largest Gram change, √2 in Frobenius norm), the rest 0; the
/// statistic sums N_t[0,0] − N_t[1,1] over the releases at t = 1, 2, 4. The fixture is built
/// at ε = 3 (ε not split across the levels).
fn symmetric_tree_sum(high: bool, rng: &mut SimRng, fixture: bool) -> [f64; STATS] {
    const LEN: usize = SymmetricTree::<[i64; 0]>::buffer_len(2, 4);
    type Template = Option<SymmetricTree<[i64; LEN]>>;
    // Building a tree calibrates its noise (a root search for ρ): once per ε, then cloned.
    static OURS: OnceLock<Template> = OnceLock::new();
    static BROKEN: OnceLock<Template> = OnceLock::new();
    let (cell, eps) = if fixture { (&BROKEN, FIXTURE_EPS) } else { (&OURS, JDP_EPSILON) };
    let template = cell.get_or_init(|| {
        let config = TreeConfig::new(Epsilon::new(eps).ok()?, Delta::new(JDP_DELTA).ok()?, UNIT, 4);
        SymmetricTree::new([0i64; LEN], 2, config).ok()
    });
    let Some(mut tree) = template.clone() else { return [f64::NAN; STATS] };
    let mut out = [0i64; 3];
    over_four_rounds(|t| {
        let row = match (t, high) {
            (1, true) => [1.0, 0.0],
            (1, false) => [0.0, 1.0],
            _ => [0.0, 0.0],
        };
        tree.insert(&row, rng).ok()?;
        tree.release_into(&mut out).ok()?;
        Some(tree.value(out[0]) - tree.value(out[2]))
    })
}

/// Our mechanisms and the broken fixtures.
pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "CTL device report (B = R = 1)",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: true,
            draw: Draw::One(|high, rng| {
                let Some(m) = ctl(1.0, 1.0, 1.0) else { return [f64::NAN; STATS] };
                released(&m, if high { 2.0 } else { -2.0 }, rng)
            }),
        },
        Case {
            name: "LDP-RSE report (truncate at 3)",
            claimed_epsilon: 0.5,
            claimed_delta: 0.0,
            ours: true,
            draw: Draw::One(|high, rng| {
                let m = Epsilon::new(0.5)
                    .and_then(|e| LaplaceMechanism::truncated(e, TruncationLevel::new(3.0)?));
                let Ok(m) = m else { return [f64::NAN; STATS] };
                released(&m, if high { 3.0 } else { -3.0 }, rng)
            }),
        },
        Case {
            name: "tree: S(1)+S(2)+S(4), T = 4",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: true,
            draw: Draw::One(|high, rng| tree_sum(high, rng, 1.0)),
        },
        Case {
            name: "adaptive tree, B_t = 1, 1, 2, 2",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: true,
            draw: Draw::One(|high, rng| adaptive_tree_sum(high, rng, 1.0)),
        },
        Case {
            name: "vector tree (D = 2), T = 4",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: true,
            draw: Draw::One(|high, rng| vector_tree_sum(high, rng, 1.0)),
        },
        Case {
            name: "symmetric JDP tree (m = 2), T = 4",
            claimed_epsilon: JDP_EPSILON,
            claimed_delta: JDP_DELTA,
            ours: true,
            draw: Draw::One(|high, rng| symmetric_tree_sum(high, rng, false)),
        },
        Case {
            name: "private sum (B = 2, 4 values)",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: true,
            draw: Draw::One(|high, rng| private_sum(high, rng, false)),
        },
        Case {
            name: "private Hedge (2 experts, T = 4)",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: true,
            draw: Draw::One(|high, rng| hedge(high, rng, 1.0)),
        },
        Case {
            name: "private EXP3 (2 arms, one loss)",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: true,
            draw: Draw::One(|high, rng| exp3(high, rng, 1.0)),
        },
        Case {
            name: "local-JDP report (Alg. 3, F = 2)",
            claimed_epsilon: JDP_EPSILON,
            claimed_delta: JDP_DELTA,
            ours: true,
            draw: Draw::One(|high, rng| {
                let Some(client) = jdp_client() else { return [f64::NAN; STATS] };
                let (x, y) = jdp_neighbour(high);
                let mut state = client.initial_state();
                if client.report(&mut state, &x, y, rng).is_err() {
                    return [f64::NAN; STATS];
                }
                let unit = 2f64.powi(client.grid_log2());
                let g = |i: usize, j: usize| state.gram[i][j] as f64 * unit;
                let m = |i: usize| state.moment[i] as f64 * unit;
                let report = [g(0, 0), g(0, 1), g(1, 1), m(0), m(1)];
                jdp_statistics(report, client.gram_sigma(), client.moment_sigma())
            }),
        },
        Case {
            name: "device app, wire bytes (in process)",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: true,
            draw: Draw::One(|high, rng| {
                let (hi, lo) = extreme_arms();
                let Some(mut app) = boot(MemoryStore::provisioned(random32(rng)), random32(rng)) else {
                    return [f64::NAN; STATS];
                };
                let r = ask(&mut app, if high { hi } else { lo }).unwrap_or(f64::NAN);
                [r, 0.0]
            }),
        },
        Case {
            name: "device app across a reset (in process)",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: true,
            draw: Draw::One(|high, rng| across_reset(high, rng, false)),
        },
        Case {
            name: "FIXTURE device that reuses its key after a reset",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: false,
            draw: Draw::One(|high, rng| across_reset(high, rng, true)),
        },
        Case {
            name: "FIXTURE tree, eps not split across levels",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: false,
            draw: Draw::One(|high, rng| tree_sum(high, rng, 3.0)),
        },
        Case {
            name: "FIXTURE adaptive tree, eps not split",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: false,
            draw: Draw::One(|high, rng| adaptive_tree_sum(high, rng, 3.0)),
        },
        Case {
            name: "FIXTURE vector tree, eps not split",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: false,
            draw: Draw::One(|high, rng| vector_tree_sum(high, rng, 3.0)),
        },
        Case {
            name: "FIXTURE symmetric JDP tree, eps not split",
            claimed_epsilon: JDP_EPSILON,
            claimed_delta: JDP_DELTA,
            ours: false,
            draw: Draw::One(|high, rng| symmetric_tree_sum(high, rng, true)),
        },
        Case {
            name: "FIXTURE private sum, sensitivity M not 2M",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: false,
            draw: Draw::One(|high, rng| private_sum(high, rng, true)),
        },
        Case {
            name: "FIXTURE private Hedge, eps not split (N depth)",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: false,
            // Node noise at N·depth/ε is the whole calibration; a build that forgets it runs at
            // 6ε here (N = 2, depth 3). The padding of L̃_t to `depth` noise terms makes the
            // mechanism far more private than claimed, so a smaller slip stays below the claim.
            draw: Draw::One(|high, rng| hedge(high, rng, 6.0)),
        },
        Case {
            name: "FIXTURE private EXP3, noise for range 1/2",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: false,
            draw: Draw::One(|high, rng| exp3(high, rng, 2.0)),
        },
        Case {
            name: "FIXTURE halved noise",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: false,
            draw: Draw::One(|high, rng| {
                let Some(m) = ctl(1.0, 1.0, 1.0) else { return [f64::NAN; STATS] };
                let (num, den) = m.noise().scale_fraction();
                let Some(half) = DiscreteLaplace::new(num / 2, den) else { return [f64::NAN; STATS] };
                let i = m.grid_index(if high { 2.0 } else { -2.0 }).unwrap_or(0) + half.sample(rng);
                [i as f64, 0.0]
            }),
        },
        Case {
            name: "FIXTURE missing clamp (reading 3x the bound)",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: false,
            draw: Draw::One(|high, rng| {
                let Some(m) = ctl(1.0, 1.0, 1.0) else { return [f64::NAN; STATS] };
                // A faulty sensor reads ±6 with B + R = 2; without the clamp it goes straight on.
                let y = if high { 6.0 } else { -6.0 };
                let index = (y / 2f64.powi(m.grid_log2())).round() as i64 + m.noise().sample(rng);
                [index as f64, 0.0]
            }),
        },
        Case {
            name: "FIXTURE naive float Laplace",
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours: false,
            draw: Draw::One(|high, rng| {
                // y + Lap(2/ε) by inverse CDF in f64 for neighbours 0 and 1 (sensitivity 1 … 2).
                let u = ((rng.next_u64() >> 11) + 1) as f64 * 2f64.powi(-53);
                let sign = if rng.next_u32() & 1 == 1 { 1.0 } else { -1.0 };
                let v = if high { 0.0 } else { 1.0 } + sign * 2.0 * u.ln();
                [v, off_grid(v)]
            }),
        },
        Case {
            name: "FIXTURE JDP Gaussian at Laplace scale Δ/ε",
            claimed_epsilon: JDP_EPSILON,
            claimed_delta: JDP_DELTA,
            ours: false,
            draw: Draw::One(|high, rng| {
                // The client's report with σ = Δ/ε per block instead of Δ/√ρ: the scale of a
                // Laplace mechanism, a common slip when switching to Gaussian noise.
                let Some(client) = jdp_client() else { return [f64::NAN; STATS] };
                let k = client.grid_log2();
                let steps = 2f64.powi(-k);
                let (gram_delta, moment_delta) =
                    (2f64.sqrt() * steps + 3f64.sqrt(), 2.0 * steps + 2f64.sqrt());
                let noise =
                    |delta: f64| DiscreteGaussian::with_variance_at_least((delta / JDP_EPSILON).powi(2));
                let (Some(gn), Some(mn)) = (noise(gram_delta), noise(moment_delta)) else {
                    return [f64::NAN; STATS];
                };
                let (x, y) = jdp_neighbour(high);
                let mean = [x[0] * x[0], x[0] * x[1], x[1] * x[1], y * x[0], y * x[1]];
                let mut report = [0.0; 5];
                for (i, r) in report.iter_mut().enumerate() {
                    let n = if i < 3 { &gn } else { &mn };
                    *r = ((mean[i] * steps).round() + n.sample(rng) as f64) / steps;
                }
                jdp_statistics(report, gn.sigma() / steps, mn.sigma() / steps)
            }),
        },
    ]
}

/// How a QEMU audit row uses the firmware.
#[derive(Clone, Copy)]
enum Firmware {
    /// One report per draw.
    Report,
    /// Two boots of one device, one report each (r₁ at the high arm, r₂ at the high or low arm):
    /// draws pair the i-th reports of the two boots. `rolled_back`: the fixture wipes the state
    /// file before the second boot and replays the same bytes as seed material and entropy (no
    /// persistent store, no TRNG).
    AcrossReset { rolled_back: bool },
}

/// Reports per device: the firmware's 1000 ε at ε = 1, less what resets and the reservation
/// chunk (16) may cost.
const FIRMWARE_REPORTS: u64 = 900;

/// `n` draws of `kind` from the firmware `elf` under QEMU, on as many new devices as the budget
/// needs. The firmware's sensor reads f(arm) + U[−1, 1] with B = R = 1.
fn firmware_draws(
    elf: &Path,
    kind: Firmware,
    high: bool,
    n: u64,
    seed: u64,
) -> Result<Vec<[f64; STATS]>, AuditError> {
    const EPS: Epsilon = match Epsilon::new(1.0) {
        Ok(eps) => eps,
        Err(_) => panic!("1 is a valid epsilon"), // evaluated at compile time
    };
    let (hi, lo) = extreme_arms();
    let per_device = match kind {
        Firmware::Report => FIRMWARE_REPORTS,
        Firmware::AcrossReset { .. } => FIRMWARE_REPORTS / 2,
    };
    // Virtual time = instructions, and the reply slot's sleep costs no real time.
    let icount = ["-icount", "shift=0,sleep=off,align=off"];
    let mut rng = SimRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n as usize);
    let mut device = 0;
    while (out.len() as u64) < n {
        let m = per_device.min(n - out.len() as u64);
        let dir = std::env::temp_dir()
            .join(format!("ldp-audit-{}-{seed:016x}-{high}-{device}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        device += 1;
        let ask = |qemu: &mut QemuDevice, arm: u32| -> Result<Vec<f64>, AuditError> {
            let mut client = WireClient::new(qemu.connect()?, qemu.auth()?);
            (0..m)
                .map(|i| match client.query(i as u32, arm, EPS, None) {
                    Ok(Ok(report)) => Ok(report.release.value()),
                    Ok(Err(refusal)) => Err(AuditError::Refused(refusal)),
                    Err(e) => Err(AuditError::Link(e)),
                })
                .collect()
        };
        // Every arm's error comes out as `result`, so that the directory, which holds the
        // device's seed from its first start, is removed whatever failed.
        let result = match kind {
            Firmware::Report => (|| {
                let mut qemu = QemuDevice::start_with(elf, &dir, &icount, None)?;
                ask(&mut qemu, if high { hi } else { lo }).map(|r| r.into_iter().map(|v| [v, 0.0]).collect())
            })(),
            Firmware::AcrossReset { rolled_back } => (|| {
                let replay = rolled_back.then(|| random32(&mut rng));
                let mut qemu = QemuDevice::start_with(elf, &dir, &icount, replay)?;
                let first = ask(&mut qemu, hi)?;
                qemu.kill();
                if rolled_back {
                    std::fs::remove_file(dir.join("ldp-state.bin"))?;
                }
                let mut qemu = QemuDevice::start_with(elf, &dir, &icount, replay)?;
                let second = ask(&mut qemu, if high { hi } else { lo })?;
                Ok(first.iter().zip(&second).map(|(a, b)| [a - b, (a - b).abs()]).collect::<Vec<_>>())
            })(),
        };
        let _ = std::fs::remove_dir_all(&dir);
        out.extend(result?);
    }
    Ok(out)
}

/// The production path on the real firmware under QEMU (`elf`), with its broken fixture.
pub fn firmware_cases(elf: &Path) -> Vec<Case> {
    let case = |name, ours, kind: Firmware| {
        let elf = elf.to_path_buf();
        Case {
            name,
            claimed_epsilon: 1.0,
            claimed_delta: 0.0,
            ours,
            draw: Draw::Batch(Box::new(move |high, n, seed| firmware_draws(&elf, kind, high, n, seed))),
        }
    };
    vec![
        case("firmware report (QEMU)", true, Firmware::Report),
        case("firmware across a reset (QEMU)", true, Firmware::AcrossReset { rolled_back: false }),
        case(
            "FIXTURE firmware, store wiped, no TRNG (QEMU)",
            false,
            Firmware::AcrossReset { rolled_back: true },
        ),
    ]
}

/// `0` as "0", anything else in scientific notation with `digits` decimals.
fn small(x: f64, digits: usize) -> String {
    if x == 0.0 { "0".to_string() } else { format!("{x:.digits$e}") }
}

/// The pass/fail table.
pub fn table(verdicts: &[Verdict]) -> String {
    let mut out = format!(
        "{:<44} {:>8} {:>10} {:>8} {:>10} {:>8}  {}\n",
        "mechanism", "claim ε", "ε lower", "claim δ", "δ lower", "verdict", "attack set"
    );
    for v in verdicts {
        let verdict = match (v.ours, v.passed) {
            _ if v.failed() => "FAILED",
            (true, true) => "pass",
            (true, false) => "FAIL",
            (false, false) => "caught",
            (false, true) => "MISSED",
        };
        out.push_str(&format!(
            "{:<44} {:>8.3} {:>10.4} {:>8} {:>10} {:>8}  {}\n",
            v.name,
            v.claimed_epsilon,
            v.epsilon_lower_bound,
            small(v.claimed_delta, 0),
            small(v.delta_lower_bound, 2),
            verdict,
            v.attack
        ));
    }
    out
}
