//! Continuous domains: GP-UCB, LDP-TGP-UCB and LDP-MoMA-GP-UCB on a box `[lower, upper] ⊂ ℝᵈ`
//! (d ≤ 20), asked for points and told points.
//!
//! ```
//! use ldp_learn::domain::BoxOptimizer;
//! use ldp_learn::optimizer::{Domain, Settings};
//!
//! // Two continuous knobs; the learner sees only ε = 1 private reports of a noisy reward.
//! let domain = Domain::Box { lower: vec![-5.0, 0.0], upper: vec![10.0, 15.0] };
//! let settings = Settings { horizon: 200, ..Settings::default() };
//! let mut opt = BoxOptimizer::new("LDP-TGP-UCB", domain, settings)?;
//! for _ in 0..200 {
//!     let x = opt.ask(); // a point of the box, x.len() == 2
//!     let reward = 1.0 - ((x[0] - 2.0) / 15.0).powi(2) - ((x[1] - 9.0) / 15.0).powi(2);
//!     let report = reward; // ... released by your device at ε (ldp-core's reporter); here raw
//!     opt.tell(&x, report)?;
//! }
//! println!("best so far: {:?}", opt.recommend()); // the told point of best posterior mean
//! # Ok::<(), ldp_learn::domain::BoxError>(())
//! ```
//!
//! # The API
//!
//! A box is a [`Domain`] (`Domain::Box { lower, upper }`), driven by
//! its own type, [`BoxOptimizer`], whose [`ask`](BoxOptimizer::ask) returns a point
//! (`Vec<f64>` of length d), [`tell`](BoxOptimizer::tell) takes a point and its report, and
//! [`recommend`](BoxOptimizer::recommend) returns a point. The index-based
//! [`Optimizer`](crate::optimizer::Optimizer) of point sets, arms and covariances is unchanged;
//! given a box it refuses it, naming `BoxOptimizer`. Two types rather than one `ask()` that
//! returns either: a box's learner never has an index to give, and a finite set's learner
//! never needs a point checked against bounds, so neither carries a variant it cannot use.
//!
//! A point told need not be the one asked (a measured point nearby, or an initial design of
//! your own): any point of the box is accepted, and the next `ask` searches afresh.
//!
//! Many points can be in flight: [`ask_batch`](BoxOptimizer::ask_batch) gives q at once
//! (GP-BUCB: each chosen as if the pending ones had been told their posterior mean), their
//! reports are told in any order, and [`forget`](BoxOptimizer::forget) abandons one whose
//! report will never come.
//!
//! # Which learners
//!
//! - **GP-UCB** and **(LDP-)TGP-UCB**: on every box. TGP-UCB truncates each report once at
//!   its round's level, `ŷ_t = y_t 1{|y_t| ≤ b_t}`, with b_t exactly as the finite-set learner
//!   derives it (Zhou & Tan Alg. 2 under CTL(ε): B + R + 𝓛 ln t).
//! - **(LDP-)ATA-GP-UCB** is refused: its Nyström dictionary is sampled from a finite set of
//!   actions (Zhou & Tan Alg. 3), and a box has none.
//! - **(LDP-)MoMA-GP-UCB**: on every box ([`moma`]): epochs of k plays of one point, k
//!   estimates in the box's random features (one a play index), the median-of-means pick of
//!   Alg. 3, its own κ [`BOX_MOMA_KAPPA`]. A report counts toward the epoch of the ask it
//!   answers (the point told only chooses which ask).
//! - **UCB1, LDP-UCB, LDP-RSE, Robust-UCB** are refused: K-armed learners keep statistics per
//!   action, and a box has infinitely many.
//!
//! # The surrogate, the acquisition, the kernel
//!
//! - The posterior is a GP in m random Fourier features ([`feature_gp`]) with a constant prior
//!   mean, the mean of the reports told: **O(m² + m d)** a report, memory O(m² + m d + t d),
//!   independent of any domain size.
//! - The first [`initial_design`] asks (max(8, 2(d + 1))) are Sobol points spread over the box;
//!   the acquisition takes over after them.
//! - ask() maximises μ + β σ by Sobol candidates and Nelder–Mead ([`acquisition`]): O(N m² +
//!   starts · iterations · (m² + m d)) a round (Nelder–Mead's iterations take one or two
//!   evaluations, its start d + 1), plus O(P m d) at each fit for the pool's features.
//! - The kernel (squared exponential, a lengthscale per coordinate, a signal scale) is fitted by
//!   maximum marginal likelihood ([`fit`]) after 16 reports and again at every doubling
//!   (32, 64, …), from the released reports only: post-processing, no privacy cost. Each fit
//!   then rebuilds the posterior (O(t m² + m³)); amortised over the doubling, O(m²) a round.
//!   [`Lengthscale::Fixed`] fixes every lengthscale (and s = 1) instead. Before the first fit
//!   the lengthscale is the median rule's for a box: √(d/6) of its side, the root mean square
//!   distance between two uniform points of the unit cube.
//! - β_t = κ √(2 ln(|D_t| t² π² / 6δ)), the calibrated schedule ([`crate::bo::calibrated`])
//!   with |D| replaced by the discretisation Srinivas et al. (2010, Thm 2) use for a compact
//!   domain, |D_t| = (d t²)^d of the unit cube, and the box's own κ = [`BOX_KAPPA`] = 0.075,
//!   chosen as the finite sets' 0.3 was, on settings no reported run uses (functions drawn
//!   from a GP prior): at 0.3 the learners spent most of their rounds exploring. λ is the
//!   calibrated noise variance (R² + 2𝓛² under CTL(ε)); only the calibrated constants are
//!   offered on a box; [`BoxOptions::beta_scale`] multiplies β.
//!
//! Measured (release, the 2-core bench machine shared with other jobs, load 3–4; LDP-TGP-UCB
//! at ε = 1 on the unit box, ask + CTL release + tell, m = 128, N = 512 of a pool of 4096,
//! 2 × 30 Nelder–Mead iterations, fits at 16, 32, …): over T = 10⁴ rounds (`farm-bench`, the
//! example `box_rounds`, median of 3 whole processes) 1.07, 1.31 and 1.65 ms a round at d = 2, 6
//! and 10, peak memory 29, 31 and 34 MiB; over T = 1000 (criterion, `benches/box_domain.rs`)
//! 1.7, 2.3 and 2.2 ms a round, the fits weighing more in a short run.

use rand_core::SeedableRng;

use crate::bo::ZHOU_TAN_ALGORITHMS;
use crate::bo::gp_ucb::GpUcb;
use crate::env::SimRng;
use crate::optimizer::{Domain, Settings};
use crate::policy::{AlgorithmSpec, Constants, names_learner};
use crate::rules::derive_seed;

pub mod acquisition;
pub mod feature_gp;
pub mod fit;
pub mod functions;
pub mod moma;
pub mod points;

pub use acquisition::{Pool, Search};
use feature_gp::{FeatureGp, Hyperparameters};
pub use moma::BOX_MOMA_KAPPA;

/// The largest dimension a box may have.
pub const MAX_DIMENSION: usize = 20;

/// κ of the box learners' β (the finite sets' calibrated κ = 0.3 times 0.25): the β
/// multiplier of smallest geometric-mean regret over functions drawn from a GP prior, in
/// settings no reported run uses (`scripts/choose-box-kappa.sh`; `docs/boxes.md`, "The
/// constants").
pub const BOX_KAPPA: f64 = 0.075;

/// The first fit of the kernel comes after this many reports, then at every doubling.
pub const FIRST_FIT: usize = 16;

/// How the kernel's lengthscales are set.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Lengthscale {
    /// By maximum marginal likelihood of the reports, with the signal scale, on the schedule of
    /// the module documentation (the default).
    #[default]
    Fitted,
    /// This lengthscale in every coordinate, in units of the box's side there (0.2: a fifth of
    /// the box's width), and signal scale 1; never fitted.
    Fixed(f64),
}

/// The box learner's options beyond [`Settings`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxOptions {
    /// Fitted or fixed lengthscales.
    pub lengthscale: Lengthscale,
    /// m, the random Fourier features (even, 2 to 4096).
    pub features: usize,
    /// The acquisition's search.
    pub search: Search,
    /// β is multiplied by this (1: the calibrated schedule; `--beta-scale`).
    pub beta_scale: f64,
}

impl Default for BoxOptions {
    /// Fitted lengthscales, m = 128 features, the default [`Search`], β as calibrated.
    fn default() -> Self {
        Self { lengthscale: Lengthscale::Fitted, features: 128, search: Search::default(), beta_scale: 1.0 }
    }
}

/// What [`BoxOptimizer`] refuses, in the user's words. Nothing is changed by a refused call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum BoxError {
    /// No learner has that name.
    UnknownLearner {
        /// The name given.
        name: String,
        /// The names that work on a box.
        valid: Vec<&'static str>,
    },
    /// A learner that cannot run on a box.
    NotOnABox {
        /// The learner named.
        learner: &'static str,
        /// Why.
        why: &'static str,
    },
    /// The domain is not a box.
    NotABox,
    /// A box given to the index-based [`Optimizer`](crate::optimizer::Optimizer).
    NotIndexed,
    /// `lower` and `upper` have different lengths.
    BoundsLength {
        /// lower's length.
        lower: usize,
        /// upper's length.
        upper: usize,
    },
    /// d is 0 or above [`MAX_DIMENSION`].
    Dimension(usize),
    /// A bound is NaN or infinite.
    NonFiniteBound {
        /// The coordinate.
        index: usize,
    },
    /// lower ≥ upper in a coordinate.
    EmptyOrInverted {
        /// The coordinate.
        index: usize,
        /// Its lower bound.
        lower: f64,
        /// Its upper bound.
        upper: f64,
    },
    /// A setting or an option cannot be used (the message says which and what to do).
    Setting(String),
    /// A point told of another dimension than the box's.
    PointDimension {
        /// The box's d.
        expected: usize,
        /// The point's length.
        found: usize,
    },
    /// A point told with a NaN or infinite coordinate.
    NonFinitePoint {
        /// The coordinate.
        index: usize,
    },
    /// A point told outside the box.
    OutsideBox {
        /// The coordinate.
        index: usize,
        /// Its value.
        value: f64,
        /// The box's lower bound there.
        lower: f64,
        /// The box's upper bound there.
        upper: f64,
    },
    /// A report that is NaN or infinite.
    NonFiniteReport,
    /// [`BoxOptimizer::forget`] of a point that is not pending.
    NotPending,
}

impl std::fmt::Display for BoxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownLearner { name, valid } => {
                write!(f, "no learner on a box is called '{name}': choose one of {}", valid.join(", "))
            }
            Self::NotOnABox { learner, why } => write!(
                f,
                "{learner} cannot run on a box: {why}; use GP-UCB, LDP-TGP-UCB or LDP-MoMA-GP-UCB, or give the box as a set of points"
            ),
            Self::NotABox => f.write_str(
                "BoxOptimizer takes a box (Domain::Box { lower, upper }); for points, arms or a covariance use Optimizer",
            ),
            Self::NotIndexed => f.write_str(crate::optimizer::NOT_INDEXED),
            Self::BoundsLength { lower, upper } => write!(
                f,
                "the box's lower bounds have {lower} coordinates and its upper bounds {upper}: give one (lower, upper) pair a coordinate"
            ),
            Self::Dimension(0) => f.write_str("the box has no coordinates: give at least one (lower, upper) pair"),
            Self::Dimension(d) => write!(
                f,
                "the box has {d} coordinates; at most {MAX_DIMENSION} are supported: fix some, or give a set of points"
            ),
            Self::NonFiniteBound { index } => {
                write!(f, "the box's bound of coordinate {index} is NaN or infinite: give finite numbers")
            }
            Self::EmptyOrInverted { index, lower, upper } => write!(
                f,
                "coordinate {index} of the box runs from {lower} to {upper}, which is {}: give lower < upper",
                if lower > upper {
                    "inverted"
                } else if lower >= upper {
                    "empty"
                } else {
                    "wider than a double can hold"
                }
            ),
            Self::Setting(why) => f.write_str(why),
            Self::PointDimension { expected, found } => {
                write!(f, "told a point of {found} coordinates, but the box has {expected}")
            }
            Self::NonFinitePoint { index } => {
                write!(f, "told a point whose coordinate {index} is NaN or infinite: tell the point you measured")
            }
            Self::OutsideBox { index, value, lower, upper } => write!(
                f,
                "told a point outside the box: coordinate {index} is {value}, not within [{lower}, {upper}]"
            ),
            Self::NonFiniteReport => f.write_str("a report was NaN or infinite: the device must never send one"),
            Self::NotPending => {
                f.write_str("forgot a point that is not pending: give a point ask() or ask_batch() returned and not yet told")
            }
        }
    }
}

impl std::error::Error for BoxError {}

/// GP-UCB, (LDP-)TGP-UCB or (LDP-)MoMA-GP-UCB on a box. See the [module documentation](self).
pub struct BoxOptimizer {
    name: &'static str,
    lower: Vec<f64>,
    upper: Vec<f64>,
    gp: FeatureGp,
    /// TGP-UCB's levels, as the finite-set learner derives them; `None` for GP-UCB.
    levels: Option<GpUcb>,
    options: BoxOptions,
    bound: f64,
    delta: f64,
    horizon: usize,
    seed: u64,
    /// The points asked and not yet told, in the box's coordinates, in the order asked.
    pending: Vec<Vec<f64>>,
    /// The posterior told every pending point at its posterior mean: what chooses the next
    /// point while some are pending. `None` until needed, and after any change.
    shadow: Option<FeatureGp>,
    pool: Pool,
    next_fit: usize,
    fits: usize,
    /// κ of β: [`BOX_KAPPA`], or [`BOX_MOMA_KAPPA`] for MoMA-GP-UCB, times the options'
    /// `beta_scale`; fixed at construction.
    kappa: f64,
    /// (LDP-)MoMA-GP-UCB's epochs and estimates ([`moma`]); `None` for the other learners.
    moma: Option<moma::BoxMoma>,
}

/// The learners that run on a box.
fn box_learners() -> [AlgorithmSpec; 3] {
    [ZHOU_TAN_ALGORITHMS[0], ZHOU_TAN_ALGORITHMS[1], ZHOU_TAN_ALGORITHMS[3]]
}

impl BoxOptimizer {
    /// The learner called `algorithm` (GP-UCB, (LDP-)TGP-UCB or (LDP-)MoMA-GP-UCB; any case,
    /// `ldp-` optional) over the box `domain` with `settings` and the default [`BoxOptions`].
    pub fn new(algorithm: &str, domain: Domain, settings: Settings) -> Result<Self, BoxError> {
        Self::with_options(algorithm, domain, settings, BoxOptions::default())
    }

    /// As [`new`](Self::new), with `options`.
    pub fn with_options(
        algorithm: &str,
        domain: Domain,
        settings: Settings,
        options: BoxOptions,
    ) -> Result<Self, BoxError> {
        let private = settings.epsilon.is_some();
        let spec = find_learner(algorithm, private)?;
        let Domain::Box { lower, upper } = domain else {
            return Err(BoxError::NotABox);
        };
        check_box(&lower, &upper)?;
        let setting = |what: &str| BoxError::Setting(what.to_string());
        settings.check("the box").map_err(BoxError::Setting)?;
        if settings.constants != Constants::Calibrated {
            return Err(setting(
                "a box takes the calibrated constants only (the practical and paper constants are for finite sets)",
            ));
        }
        if !(options.features >= 2 && options.features <= 4096 && options.features.is_multiple_of(2)) {
            return Err(BoxError::Setting(format!(
                "the number of features must be even and from 2 to 4096, not {}",
                options.features
            )));
        }
        let search = options.search;
        if !(search.candidates >= 1 && search.candidates <= search.pool && search.pool <= 1 << 20) {
            return Err(BoxError::Setting(format!(
                "the acquisition scores 1 to {} candidates a round from a pool of at most 2^20: {} from {} will not do",
                search.pool, search.candidates, search.pool
            )));
        }
        if let Lengthscale::Fixed(l) = options.lengthscale
            && !(l.is_finite() && l > 0.0)
        {
            return Err(BoxError::Setting(format!(
                "the lengthscale must be a positive number (in units of the box's side), not {l}"
            )));
        }
        if !(options.beta_scale.is_finite() && options.beta_scale >= 0.0) {
            return Err(BoxError::Setting(format!(
                "the beta scale must be zero or a positive number (1: the calibrated schedule), not {}",
                options.beta_scale
            )));
        }
        let epsilon = settings.report_epsilon().map_err(BoxError::Setting)?;
        let constants = crate::optimizer::domain_free(spec, &settings, epsilon).map_err(BoxError::Setting)?;
        let (b, lambda) = (settings.bound, constants.lambda);
        let d = lower.len();
        let hyper = match options.lengthscale {
            Lengthscale::Fitted => {
                Hyperparameters { lengthscales: vec![(d as f64 / 6.0).sqrt(); d], signal: b }
            }
            Lengthscale::Fixed(l) => Hyperparameters { lengthscales: vec![l; d], signal: 1.0 },
        };
        let mut rng = SimRng::seed_from_u64(derive_seed(settings.seed, 0, 3));
        let is_moma = spec == ZHOU_TAN_ALGORITHMS[3];
        let k = crate::bo::calibrated::epoch_length(settings.horizon, constants.delta);
        // MoMA's estimates see one row an epoch, at the variance of its median-of-means pick.
        let gp_lambda = if is_moma { crate::bo::calibrated::moma_noise_variance(lambda, k) } else { lambda };
        let gp = FeatureGp::new(d, options.features / 2, gp_lambda, hyper, &mut rng);
        let pool = Pool::new(&gp, d, search.pool, pool_seed(settings.seed, 0));
        let moma = is_moma.then(|| moma::BoxMoma::new(&gp, k, lambda, &mut rng));
        let kappa = (if is_moma { BOX_MOMA_KAPPA } else { BOX_KAPPA }) * options.beta_scale;
        Ok(Self {
            name: spec.label(private),
            lower,
            upper,
            gp,
            levels: constants.levels,
            options,
            bound: b,
            delta: constants.delta,
            horizon: settings.horizon,
            seed: settings.seed,
            pending: Vec::new(),
            shadow: None,
            pool,
            next_fit: FIRST_FIT,
            fits: 0,
            kappa,
            moma,
        })
    }

    /// The learner's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// d, the box's dimension.
    pub fn dimension(&self) -> usize {
        self.lower.len()
    }

    /// The reports told so far.
    pub fn num_reports(&self) -> usize {
        self.moma.as_ref().map_or(self.gp.num_reports(), moma::BoxMoma::reports)
    }

    /// k, the plays of one of MoMA-GP-UCB's epochs (1 for the other learners).
    pub fn epoch_length(&self) -> usize {
        self.moma.as_ref().map_or(1, moma::BoxMoma::epoch_length)
    }

    /// β_t for round t (see the module documentation).
    pub fn beta(&self, t: usize) -> f64 {
        let d = self.dimension() as f64;
        let t = t.max(1) as f64;
        let pi2 = std::f64::consts::PI * std::f64::consts::PI;
        let log_domain = d * (d * t * t).ln();
        self.kappa() * (2.0 * (log_domain + (t * t * pi2 / (6.0 * self.delta)).ln())).sqrt()
    }

    /// κ: [`BOX_KAPPA`] ([`BOX_MOMA_KAPPA`] for MoMA-GP-UCB) times the options' `beta_scale`.
    pub fn kappa(&self) -> f64 {
        self.kappa
    }

    /// The truncation level b_t of round t (∞ for GP-UCB).
    pub fn level(&self, t: usize) -> f64 {
        self.levels.as_ref().map_or(f64::INFINITY, |l| l.level(t))
    }

    fn to_unit(&self, x: &[f64]) -> Vec<f64> {
        x.iter().zip(self.lower.iter().zip(&self.upper)).map(|(v, (lo, hi))| (v - lo) / (hi - lo)).collect()
    }

    fn to_box(&self, u: &[f64]) -> Vec<f64> {
        u.iter()
            .zip(self.lower.iter().zip(&self.upper))
            .map(|(v, (lo, hi))| (lo + v * (hi - lo)).clamp(*lo, *hi))
            .collect()
    }

    /// The point to measure next: a point of the box (within its bounds, clamped). Asked again
    /// before [`tell`](Self::tell), it gives the same point: with points pending (from
    /// [`ask_batch`](Self::ask_batch)), the earliest of them.
    pub fn ask(&mut self) -> Vec<f64> {
        match self.pending.first() {
            Some(x) => x.clone(),
            None => self.ask_batch(1).swap_remove(0),
        }
    }

    /// `q` more points to measure at once, whatever is already pending; tell their reports in
    /// any order, as they arrive. With nothing pending and `q = 1` it is [`ask`](Self::ask)'s
    /// point, bit for bit.
    ///
    /// Each point after the first is chosen by GP-BUCB's rule (Desautels, Krause & Burdick,
    /// JMLR 2014): the acquisition of a posterior told every pending point at its posterior
    /// mean (a stand-in that leaves the mean as it is, but for the shift of the plug-in prior
    /// mean, while the variance shrinks as the real reports will shrink it), with β of the
    /// reports actually told. The opening design's Sobol points are handed out in order.
    pub fn ask_batch(&mut self, q: usize) -> Vec<Vec<f64>> {
        if self.moma.is_some() {
            return self.ask_epochs(q);
        }
        let mut out = Vec::with_capacity(q.min(1 << 16));
        let told = self.gp.num_reports();
        let beta = self.beta(told + 1);
        for _ in 0..q {
            let t = told + self.pending.len() + 1;
            let u = if t <= initial_design(self.dimension()) {
                // The opening design: the pool's first Sobol points, spread over the box.
                self.shadow = None;
                self.pool.point(t - 1)
            } else if self.pending.is_empty() {
                acquisition::maximise(&self.gp, &mut self.pool, beta, self.options.search)
            } else {
                let mut shadow = match self.shadow.take() {
                    Some(shadow) => shadow,
                    None => self.told_at_means(&self.pending),
                };
                let u = acquisition::maximise(&shadow, &mut self.pool, beta, self.options.search);
                let mean = shadow.mean(&u);
                shadow.observe(&u, mean);
                self.shadow = Some(shadow);
                u
            };
            let x = self.to_box(&u);
            self.pending.push(x.clone());
            out.push(x);
        }
        out
    }

    /// [`ask_batch`](Self::ask_batch) for MoMA-GP-UCB: the running epochs' point while they
    /// need plays, then new epochs, each chosen by GP-BUCB over epochs (the kept estimate told
    /// every running epoch's point once at its mean), with β of the epochs completed.
    fn ask_epochs(&mut self, q: usize) -> Vec<Vec<f64>> {
        let mut out = Vec::with_capacity(q.min(1 << 16));
        // No report arrives while asking: β of the epochs completed holds for the whole batch.
        let beta = self.beta(self.moma.as_ref().map_or(0, moma::BoxMoma::epochs) + 1);
        let Some(mut moma) = self.moma.take() else { return out };
        for _ in 0..q {
            let pending = &self.pending;
            let running = moma.unfinished(|x| pending.iter().filter(|p| p.as_slice() == x).count());
            let x = match running {
                Some(x) => x,
                None => {
                    let n = moma.started();
                    let u = if n < initial_design(self.dimension()) {
                        self.pool.point(n)
                    } else if moma.open().is_empty() {
                        acquisition::maximise(&self.gp, &mut self.pool, beta, self.options.search)
                    } else {
                        let shadow = self.told_at_means(moma.open().iter().map(|(x, _)| x));
                        acquisition::maximise(&shadow, &mut self.pool, beta, self.options.search)
                    };
                    let x = self.to_box(&u);
                    moma.start(x.clone());
                    x
                }
            };
            self.pending.push(x.clone());
            out.push(x);
        }
        self.moma = Some(moma);
        out
    }

    /// The posterior told each of `points` (box coordinates) once at its posterior mean:
    /// GP-BUCB's stand-in for the reports still to come.
    fn told_at_means<'a>(&self, points: impl IntoIterator<Item = &'a Vec<f64>>) -> FeatureGp {
        let mut shadow = self.gp.clone();
        for x in points {
            let u = self.to_unit(x);
            let mean = shadow.mean(&u);
            shadow.observe(&u, mean);
        }
        shadow
    }

    /// Removes and returns the pending ask a report for `point` answers: the earliest ask of
    /// that point, else the earliest ask (a measured point near one asked); `None` if nothing
    /// is pending.
    fn answer(&mut self, point: &[f64]) -> Option<Vec<f64>> {
        let i = self.pending.iter().position(|x| x == point).or((!self.pending.is_empty()).then_some(0))?;
        Some(self.pending.remove(i))
    }

    /// The points asked and not yet told, in the order asked.
    pub fn pending(&self) -> &[Vec<f64>] {
        &self.pending
    }

    /// Abandons a point asked whose report will never come (the earliest pending one equal to
    /// `point`): the learner is never told of it.
    pub fn forget(&mut self, point: &[f64]) -> Result<(), BoxError> {
        let i = self.pending.iter().position(|x| x == point).ok_or(BoxError::NotPending)?;
        self.pending.remove(i);
        self.shadow = None;
        Ok(())
    }

    /// The report the device released for `point` (any point of the box, normally one
    /// [`ask`](Self::ask) or [`ask_batch`](Self::ask_batch) gave). It answers the earliest
    /// pending ask of that point; a point asked by none (a measured point near one asked)
    /// answers the earliest pending ask. A refused point or report changes nothing.
    pub fn tell(&mut self, point: &[f64], report: f64) -> Result<(), BoxError> {
        check_point(point, &self.lower, &self.upper)?;
        if !report.is_finite() {
            return Err(BoxError::NonFiniteReport);
        }
        if self.moma.is_some() {
            self.tell_epoch(point, report);
            return Ok(());
        }
        let t = self.gp.num_reports() + 1;
        let y = if report.abs() <= self.level(t) { report } else { 0.0 };
        let u: Vec<f64> = self.to_unit(point).iter().map(|v| v.clamp(0.0, 1.0)).collect();
        self.gp.observe(&u, y);
        self.answer(point);
        self.shadow = None;
        if t >= self.next_fit {
            self.refit();
            self.next_fit = self.next_fit.saturating_mul(2);
        }
        Ok(())
    }

    /// [`tell`](Self::tell) for MoMA-GP-UCB (point and report checked): the report counts
    /// toward the epoch of the ask it answers (whose point is the epoch's: the point told only
    /// chooses the ask), or a new epoch at `point` if nothing is pending; at an epoch's k-th
    /// report the estimates are updated and the kernel re-fitted on the schedule (in epochs).
    fn tell_epoch(&mut self, point: &[f64], report: f64) {
        let x = self.answer(point).unwrap_or_else(|| point.to_vec());
        let Some(moma) = self.moma.as_mut() else { return };
        let Some((x, ys)) = moma.add(&x, report) else { return };
        let u: Vec<f64> = self.to_unit(&x).iter().map(|v| v.clamp(0.0, 1.0)).collect();
        let Some(moma) = self.moma.as_mut() else { return };
        self.gp = moma.complete(&u, &ys).clone();
        if moma.epochs() >= self.next_fit {
            self.refit();
            self.next_fit = self.next_fit.saturating_mul(2);
        }
    }

    /// Re-fits the kernel (when fitted) and rebuilds the posterior from every report.
    fn refit(&mut self) {
        if let Some(moma) = self.moma.as_mut() {
            match self.options.lengthscale {
                Lengthscale::Fitted => {
                    let hyper = moma.fitted(self.bound);
                    moma.set_hyperparameters(&hyper);
                }
                Lengthscale::Fixed(_) => moma.rebuild(),
            }
            self.gp = moma.kept().clone();
            self.fits += 1;
            let seed = pool_seed(self.seed, self.fits);
            self.pool = Pool::new(&self.gp, self.dimension(), self.options.search.pool, seed);
            return;
        }
        let before = self.gp.clone();
        let result = match self.options.lengthscale {
            Lengthscale::Fitted => {
                let hyper = fit::fit(&self.gp, self.bound);
                self.gp.set_hyperparameters(hyper)
            }
            Lengthscale::Fixed(_) => self.gp.rebuild(),
        };
        // A failed rebuild (non-finite arithmetic only) keeps the rank-one-updated posterior.
        if result.is_err() {
            self.gp = before;
        }
        self.fits += 1;
        let seed = pool_seed(self.seed, self.fits);
        self.pool = Pool::new(&self.gp, self.dimension(), self.options.search.pool, seed);
    }

    /// The told point of best posterior mean (ties: the earliest told), in the box's
    /// coordinates; the box's centre before any report. O(t m d).
    pub fn recommend(&self) -> Vec<f64> {
        let d = self.dimension();
        let points = self.moma.as_ref().map_or(self.gp.points(), moma::BoxMoma::points);
        if points.is_empty() {
            return self.lower.iter().zip(&self.upper).map(|(lo, hi)| 0.5 * (lo + hi)).collect();
        }
        let best = crate::bo::argmax(points.len() / d, |k| self.gp.mean(&points[k * d..(k + 1) * d]));
        self.to_box(&points[best * d..(best + 1) * d])
    }

    /// (μ_t(x), σ²_t(x)) at a point of the box: the posterior of the reports as the learner
    /// used them (TGP-UCB: truncated).
    pub fn posterior(&self, x: &[f64]) -> Result<(f64, f64), BoxError> {
        check_point(x, &self.lower, &self.upper)?;
        Ok(self.gp.predict(&self.to_unit(x)))
    }

    /// The kernel's lengthscales in the box's units (one a coordinate) and its signal scale s.
    pub fn lengthscales(&self) -> (Vec<f64>, f64) {
        let h = self.gp.hyperparameters();
        let l =
            h.lengthscales.iter().zip(self.lower.iter().zip(&self.upper)).map(|(l, (lo, hi))| l * (hi - lo));
        (l.collect(), h.signal)
    }

    /// How many times the kernel has been fitted (or, fixed, the posterior rebuilt).
    pub fn fits(&self) -> usize {
        self.fits
    }

    /// The constants the learner derived, by name.
    pub fn constants(&self) -> Vec<(&'static str, f64)> {
        let mut constants = vec![
            ("lambda", self.gp.lambda()),
            ("delta", self.delta),
            ("kappa", self.kappa()),
            ("beta_1", self.beta(1)),
            ("beta_T", self.beta(self.horizon)),
            ("level_1", self.level(1)),
            ("level_T", self.level(self.horizon)),
            ("features", self.gp.num_features() as f64),
        ];
        if let Some(moma) = &self.moma {
            constants.push(("k", moma.epoch_length() as f64));
        }
        constants
    }
}

/// The rounds of the opening design: max(8, 2(d + 1)) Sobol points (Ax and BoTorch open with
/// 2(d + 1) or so), so the first fit reads reports spread over the box rather than the corners
/// and edges an uninformed UCB tends to.
pub fn initial_design(d: usize) -> usize {
    (2 * (d + 1)).max(8)
}

/// The Sobol scramble of the candidate pool after `fits` fits.
fn pool_seed(seed: u64, fits: usize) -> u32 {
    derive_seed(seed, fits as u64, 7) as u32
}

fn find_learner(algorithm: &str, private: bool) -> Result<AlgorithmSpec, BoxError> {
    if let Some(spec) = box_learners().into_iter().find(|a| names_learner(algorithm, a.label(private))) {
        return Ok(spec);
    }
    let refused =
        crate::optimizer::learners().into_iter().find(|a| names_learner(algorithm, a.label(private)));
    match refused {
        Some(spec) => {
            let why = if spec == ZHOU_TAN_ALGORITHMS[2] {
                "its Nyström dictionary is sampled from a finite set of actions (Zhou & Tan Alg. 3), and a box has none"
            } else {
                "it is a K-armed learner, keeping statistics per action, and a box has infinitely many"
            };
            Err(BoxError::NotOnABox { learner: spec.label(private), why })
        }
        None => Err(BoxError::UnknownLearner {
            name: algorithm.to_string(),
            valid: box_learners().iter().map(|a| a.label(private)).collect(),
        }),
    }
}

fn check_box(lower: &[f64], upper: &[f64]) -> Result<(), BoxError> {
    if lower.len() != upper.len() {
        return Err(BoxError::BoundsLength { lower: lower.len(), upper: upper.len() });
    }
    if lower.is_empty() || lower.len() > MAX_DIMENSION {
        return Err(BoxError::Dimension(lower.len()));
    }
    for (index, (&lo, &hi)) in lower.iter().zip(upper).enumerate() {
        if !(lo.is_finite() && hi.is_finite()) {
            return Err(BoxError::NonFiniteBound { index });
        }
        // A width that overflows is as unusable as an empty one.
        if !(lo < hi && (hi - lo).is_finite()) {
            return Err(BoxError::EmptyOrInverted { index, lower: lo, upper: hi });
        }
    }
    Ok(())
}

fn check_point(x: &[f64], lower: &[f64], upper: &[f64]) -> Result<(), BoxError> {
    if x.len() != lower.len() {
        return Err(BoxError::PointDimension { expected: lower.len(), found: x.len() });
    }
    if let Some(index) = x.iter().position(|v| !v.is_finite()) {
        return Err(BoxError::NonFinitePoint { index });
    }
    for (index, (&value, (&lower, &upper))) in x.iter().zip(lower.iter().zip(upper)).enumerate() {
        if !(lower..=upper).contains(&value) {
            return Err(BoxError::OutsideBox { index, value, lower, upper });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
