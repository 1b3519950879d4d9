//! The box learner's properties: refusals that change nothing, bounds, determinism, the
//! truncation, the fitted kernel and learning against uniform random search.

use rand::RngExt;
use rand_core::SeedableRng;

use super::*;
use crate::env::custom::{KernelChoice, KernelName};
use crate::optimizer::{Optimizer, OptimizerError};

fn unit_box(d: usize) -> Domain {
    Domain::Box { lower: vec![0.0; d], upper: vec![1.0; d] }
}

fn raw(horizon: usize, seed: u64) -> Settings {
    Settings { epsilon: None, horizon, seed, ..Settings::default() }
}

#[test]
fn bad_boxes_and_learners_are_refused_in_the_users_words() {
    let s = Settings::default();
    let make =
        |lower: Vec<f64>, upper: Vec<f64>| BoxOptimizer::new("gp-ucb", Domain::Box { lower, upper }, s).err();
    assert_eq!(make(vec![], vec![]), Some(BoxError::Dimension(0)));
    assert_eq!(make(vec![0.0; 21], vec![1.0; 21]), Some(BoxError::Dimension(21)));
    assert!(make(vec![0.0; 20], vec![1.0; 20]).is_none());
    assert_eq!(make(vec![0.0], vec![1.0, 2.0]), Some(BoxError::BoundsLength { lower: 1, upper: 2 }));
    assert_eq!(make(vec![0.0, f64::NAN], vec![1.0, 1.0]), Some(BoxError::NonFiniteBound { index: 1 }));
    assert_eq!(make(vec![0.0, 0.0], vec![1.0, f64::INFINITY]), Some(BoxError::NonFiniteBound { index: 1 }));
    let inverted = make(vec![0.0, 2.0], vec![1.0, 1.0]).unwrap();
    assert_eq!(inverted, BoxError::EmptyOrInverted { index: 1, lower: 2.0, upper: 1.0 });
    assert!(
        inverted.to_string().contains("inverted") && inverted.to_string().contains("lower < upper"),
        "{inverted}"
    );
    let empty = make(vec![3.0], vec![3.0]).unwrap();
    assert!(empty.to_string().contains("empty"), "{empty}");
    assert!(matches!(make(vec![-1e308], vec![1e308]), Some(BoxError::EmptyOrInverted { .. })));
    assert!(make(vec![0.0; 21], vec![1.0; 21]).unwrap().to_string().contains("at most 20"));

    for (name, shown) in [("ata-gp-ucb", "Nyström"), ("ucb1", "K-armed"), ("ldp-rse", "K-armed")] {
        let e = BoxOptimizer::new(name, unit_box(2), s).err().unwrap();
        assert!(matches!(e, BoxError::NotOnABox { .. }) && e.to_string().contains(shown), "{name}: {e}");
    }
    let unknown = BoxOptimizer::new("gp-ucbb", unit_box(2), s).err().unwrap();
    assert!(unknown.to_string().contains("LDP-TGP-UCB"), "{unknown}");
    assert_eq!(BoxOptimizer::new("gp-ucb", Domain::Arms(3), s).err(), Some(BoxError::NotABox));
    for bad in [
        Settings { bound: 0.0, ..s },
        Settings { noise_bound: f64::NAN, ..s },
        Settings { epsilon: Some(-1.0), ..s },
        Settings { horizon: 0, ..s },
        Settings { constants: Constants::Paper, ..s },
    ] {
        assert!(
            matches!(BoxOptimizer::new("gp-ucb", unit_box(2), bad), Err(BoxError::Setting(_))),
            "{bad:?}"
        );
    }
    for options in [
        BoxOptions { features: 3, ..BoxOptions::default() },
        BoxOptions { lengthscale: Lengthscale::Fixed(-0.1), ..BoxOptions::default() },
        BoxOptions { lengthscale: Lengthscale::Fixed(f64::NAN), ..BoxOptions::default() },
        BoxOptions { beta_scale: -0.5, ..BoxOptions::default() },
        BoxOptions { beta_scale: f64::INFINITY, ..BoxOptions::default() },
    ] {
        assert!(matches!(
            BoxOptimizer::with_options("gp-ucb", unit_box(2), s, options),
            Err(BoxError::Setting(_))
        ));
    }
    // The index-based optimiser refuses a box, naming the type that takes it.
    match Optimizer::new("gp-ucb", unit_box(2), s) {
        Err(OptimizerError::Setting(why)) => assert!(why.contains("BoxOptimizer"), "{why}"),
        other => panic!("{:?}", other.err()),
    }
}

#[test]
fn a_refused_point_or_report_changes_nothing() {
    let domain = Domain::Box { lower: vec![-1.0, 10.0], upper: vec![1.0, 20.0] };
    let mut opt = BoxOptimizer::new("ldp-tgp-ucb", domain, Settings::default()).unwrap();
    assert_eq!(opt.name(), "LDP-TGP-UCB");
    let x = opt.ask();
    opt.tell(&x, 0.3).unwrap();
    let x = opt.ask();
    let before = (opt.posterior(&x).unwrap(), opt.num_reports());
    for (point, report, want) in [
        (vec![0.0], 0.1, BoxError::PointDimension { expected: 2, found: 1 }),
        (vec![0.0, f64::NAN], 0.1, BoxError::NonFinitePoint { index: 1 }),
        (vec![1.5, 15.0], 0.1, BoxError::OutsideBox { index: 0, value: 1.5, lower: -1.0, upper: 1.0 }),
        (vec![0.0, 9.99], 0.1, BoxError::OutsideBox { index: 1, value: 9.99, lower: 10.0, upper: 20.0 }),
        (x.clone(), f64::NAN, BoxError::NonFiniteReport),
        (x.clone(), f64::INFINITY, BoxError::NonFiniteReport),
    ] {
        let e = opt.tell(&point, report).unwrap_err();
        assert_eq!(e, want);
        assert!(!e.to_string().is_empty());
    }
    assert!(opt.tell(&[1.5, 15.0], 0.1).unwrap_err().to_string().contains("outside the box"));
    assert_eq!((opt.posterior(&x).unwrap(), opt.num_reports()), before);
    assert_eq!(opt.ask(), x, "the pending point is still the one asked");
    // The corners are in the box; a point not asked is accepted.
    opt.tell(&[-1.0, 20.0], 0.0).unwrap();
    opt.tell(&[1.0, 10.0], 0.0).unwrap();
    assert_eq!(opt.num_reports(), 3);
}

/// Every asked point is within the box, on boxes of very different scales and d up to 20,
/// and the recommendation is a told point.
#[test]
fn asked_points_respect_the_bounds() {
    let boxes = [
        (vec![-1e3, 1e-6], vec![1e3, 2e-6]),
        (vec![-5.0, 0.0], vec![10.0, 15.0]),
        ((0..6).map(|i| -(i as f64)).collect(), (0..6).map(|i| 1.0 + i as f64 * 100.0).collect()),
        (vec![0.0; 20], vec![1.0; 20]),
    ];
    let mut world = SimRng::seed_from_u64(1);
    for (lower, upper) in boxes {
        let domain = Domain::Box { lower: lower.clone(), upper: upper.clone() };
        let mut opt = BoxOptimizer::new("gp-ucb", domain, raw(100, 3)).unwrap();
        let mut told = Vec::new();
        for _ in 0..70 {
            let x = opt.ask();
            assert_eq!(x.len(), lower.len());
            assert!(x.iter().zip(lower.iter().zip(&upper)).all(|(v, (lo, hi))| lo <= v && v <= hi), "{x:?}");
            opt.tell(&x, world.random_range(-1.0..1.0)).unwrap();
            told.push(x);
        }
        assert!(told.contains(&opt.recommend()));
        assert!(opt.fits() >= 3, "fitted after 16, 32 and 64 reports");
    }
}

/// The points asked, the recommendation and the kernel (lengthscales, s) of a run.
type Run = (Vec<Vec<f64>>, Vec<f64>, (Vec<f64>, f64));

fn run(name: &str, settings: Settings, rounds: usize) -> Run {
    let domain = Domain::Box { lower: vec![-2.0, 0.0, 1.0], upper: vec![3.0, 1.0, 4.0] };
    let mut opt = BoxOptimizer::new(name, domain, settings).unwrap();
    let mut world = SimRng::seed_from_u64(settings.seed ^ 99);
    let mut asked = Vec::new();
    for _ in 0..rounds {
        let x = opt.ask();
        opt.tell(&x, (x[0] - x[2]).sin() + world.random_range(-1.0..1.0)).unwrap();
        asked.push(x);
    }
    (asked, opt.recommend(), opt.lengthscales())
}

/// Same seed, same reports: the same points, recommendation and fitted kernel, bit for bit;
/// another seed gives other points.
#[test]
fn the_same_seed_gives_the_same_run() {
    for name in ["gp-ucb", "ldp-tgp-ucb"] {
        let settings = Settings { horizon: 80, seed: 5, ..Settings::default() };
        let a = run(name, settings, 80);
        assert_eq!(a, run(name, settings, 80), "{name}");
        assert_ne!(a.0, run(name, Settings { seed: 6, ..settings }, 80).0, "{name}");
    }
}

/// LDP-TGP-UCB uses a report above its round's level as 0 (Zhou & Tan Alg. 2, as the finite-set
/// learner does); GP-UCB uses it whole.
#[test]
fn tgp_truncates_reports_above_the_level() {
    let settings = Settings::default();
    let tgp = BoxOptimizer::new("ldp-tgp-ucb", unit_box(2), settings).unwrap();
    // CTL at ε = 1, B = R = 1: 𝓛 ≈ 4 (the mechanism's grid, within 1e-3), b_t = 2 + 𝓛 ln t.
    assert!((tgp.level(1) - 2.0).abs() < 1e-12);
    assert!((tgp.level(100) - (2.0 + 4.0 * 100f64.ln())).abs() < 4e-3 * 100f64.ln(), "{}", tgp.level(100));
    let told = |name: &str, report: f64| {
        let mut opt = BoxOptimizer::new(name, unit_box(2), settings).unwrap();
        opt.tell(&[0.5, 0.5], report).unwrap();
        opt.posterior(&[0.5, 0.5]).unwrap().0
    };
    assert_eq!(told("ldp-tgp-ucb", 2.5), told("ldp-tgp-ucb", 0.0));
    assert_eq!(told("ldp-tgp-ucb", 1.9), told("gp-ucb", 1.9));
    assert!(told("gp-ucb", 2.5) > told("gp-ucb", 1.9));
    assert_eq!(BoxOptimizer::new("gp-ucb", unit_box(2), settings).unwrap().level(7), f64::INFINITY);
}

/// The fitted lengthscale follows the function: reports of sin(2πx/p) plus noise (raw,
/// R = 0.1) give a lengthscale about p/2π's order — smaller for the faster function — while
/// a fixed lengthscale stays fixed. The box's units: a box of width 10 reports 10× the unit
/// cube's lengthscale.
#[test]
fn the_kernel_is_fitted_to_the_reports() {
    let fitted = |period: f64, width: f64, lengthscale: Lengthscale| {
        let settings =
            Settings { epsilon: None, noise_bound: 0.1, horizon: 300, seed: 2, ..Settings::default() };
        let options = BoxOptions { lengthscale, ..BoxOptions::default() };
        let domain = Domain::Box { lower: vec![0.0, 0.0], upper: vec![width, 1.0] };
        let mut opt = BoxOptimizer::with_options("gp-ucb", domain, settings, options).unwrap();
        let mut world = SimRng::seed_from_u64(4);
        // A space-filling design of the user's own (any point of the box may be told).
        for _ in 0..256 {
            let x = vec![world.random::<f64>() * width, world.random::<f64>()];
            let y =
                (2.0 * std::f64::consts::PI * x[0] / (period * width)).sin() + world.random_range(-0.1..0.1);
            opt.tell(&x, y).unwrap();
        }
        opt.lengthscales()
    };
    let (fast, _) = fitted(0.25, 1.0, Lengthscale::Fitted);
    let (slow, _) = fitted(2.0, 1.0, Lengthscale::Fitted);
    assert!(fast[0] < 0.5 * slow[0], "fast {fast:?}, slow {slow:?}");
    // x₂ does not matter: its lengthscale is longer than x₁'s.
    assert!(fast[1] > 2.0 * fast[0], "{fast:?}");
    let (wide, _) = fitted(0.25, 10.0, Lengthscale::Fitted);
    assert!((wide[0] / fast[0] - 10.0).abs() < 1e-6 * 10.0, "{wide:?} vs {fast:?}");
    assert_eq!(fitted(0.25, 10.0, Lengthscale::Fixed(0.2)), (vec![2.0, 0.2], 1.0));
}

/// A bump of height 1 on the box [−2, 3] × [0, 1], −0.6 far from it (|f| ≤ 1).
fn bump(x: &[f64]) -> f64 {
    1.6 * (-((x[0] - 1.0) / 1.2).powi(2) - ((x[1] - 0.3) / 0.4).powi(2)).exp() - 0.6
}

/// Uniform random search's expected regret a round, max f − mean f over the box (the mean by
/// the 400 × 400 midpoint rule, within 1e-4 of the integral for this smooth f).
fn uniform_regret() -> f64 {
    let n = 400;
    let mut sum = 0.0;
    for i in 0..n {
        for j in 0..n {
            sum += bump(&[-2.0 + 5.0 * (i as f64 + 0.5) / n as f64, (j as f64 + 0.5) / n as f64]);
        }
    }
    1.0 - sum / (n * n) as f64
}

/// The learner's cumulative regret over `horizon` rounds on [`bump`] with U[−1, 1] noise, the
/// reports released by CTL(ε) at `epsilon` (raw for `None`), over uniform random search's
/// expected cumulative regret; and the simple regret of the recommendation. β is multiplied by
/// `beta_scale` (4: κ = 0.3, the box learners' κ before [`BOX_KAPPA`] was chosen).
fn regret_ratio(epsilon: Option<f64>, horizon: usize, seed: u64, beta_scale: f64) -> (f64, f64) {
    regret_ratio_of("tgp-ucb", epsilon, horizon, seed, beta_scale)
}

/// [`regret_ratio`] of the learner `name`.
fn regret_ratio_of(
    name: &str,
    epsilon: Option<f64>,
    horizon: usize,
    seed: u64,
    beta_scale: f64,
) -> (f64, f64) {
    use ldp_core::{Bound, Epsilon, LaplaceMechanism};
    let one = Bound::new(1.0).unwrap();
    let ctl = epsilon.map(|e| LaplaceMechanism::ctl(Epsilon::new(e).unwrap(), one, one).unwrap());
    let settings = Settings { epsilon, horizon, seed, ..Settings::default() };
    let domain = Domain::Box { lower: vec![-2.0, 0.0], upper: vec![3.0, 1.0] };
    let options = BoxOptions { beta_scale, ..BoxOptions::default() };
    let mut opt = BoxOptimizer::with_options(name, domain, settings, options).unwrap();
    let mut world = SimRng::seed_from_u64(seed ^ 0x5eed);
    let mut regret = 0.0;
    for _ in 0..horizon {
        let x = opt.ask();
        let reward = bump(&x) + world.random_range(-1.0..=1.0);
        regret += 1.0 - bump(&x);
        let report = match &ctl {
            Some(ctl) => ctl.release(reward, &mut world).unwrap().value(),
            None => reward,
        };
        opt.tell(&x, report).unwrap();
    }
    (regret / (horizon as f64 * uniform_regret()), 1.0 - bump(&opt.recommend()))
}

/// Without privacy (raw reports, U[−1, 1] noise), T = 500, κ = 0.3: the cumulative regret is
/// at most 0.45× uniform random search's (mean of 4 seeds; each at most 0.6×), and every
/// recommendation is within 0.1 of the maximum. Measured on seeds 0–7 while choosing these
/// bounds: ratios 0.15–0.33 (mean 0.21, sd ≈ 0.05; the mean of 4 has sd ≈ 0.025, so 0.45 is
/// about 9 sd away), simple regrets ≤ 0.05. The seeds below (100–103) were not among them.
#[test]
fn learns_a_bump_far_better_than_uniform_search_without_privacy() {
    let runs: Vec<(f64, f64)> = (100..104).map(|seed| regret_ratio(None, 500, seed, 4.0)).collect();
    let mean = runs.iter().map(|r| r.0).sum::<f64>() / runs.len() as f64;
    assert!(mean <= 0.45 && runs.iter().all(|r| r.0 <= 0.6 && r.1 <= 0.1), "{runs:?}");
}

/// The same regret bounds at the default κ = [`BOX_KAPPA`]. Measured on seeds 0–7: ratios
/// 0.08–0.22 (mean 0.15), simple regrets 0.008–0.115: less exploration costs less regret but
/// leaves the recommendation less sure at T = 500 (on seeds 100–103: simple regrets 0.005,
/// 0.215, 0.005, 0.145), so the recommendation is not bounded here.
#[test]
fn learns_a_bump_far_better_than_uniform_search_without_privacy_at_the_default_kappa() {
    let runs: Vec<(f64, f64)> = (100..104).map(|seed| regret_ratio(None, 500, seed, 1.0)).collect();
    let mean = runs.iter().map(|r| r.0).sum::<f64>() / runs.len() as f64;
    assert!(mean <= 0.45 && runs.iter().all(|r| r.0 <= 0.6), "{runs:?}");
}

/// At ε = 1 (CTL(ε) reports, noise sd ≈ 5.7 against a bump of height 1.6), T = 2000, κ = 0.3: the
/// mean cumulative regret of 8 seeds is at most 0.95× uniform random search's, and the mean
/// simple regret of the recommendation at most 0.6 (uniform search's is ≈ 1.2). Measured on
/// seeds 100–111 while choosing the bounds: 11 of 12 ratios 0.51–0.90, one 1.16 (a run that
/// settled at the box's edges; simple regrets 0.05–0.45, that run's 0.99): mean 0.71. Taking
/// a run as such a failure with probability 1/8 and otherwise N(0.67, 0.12²), the mean of 8
/// has mean ≈ 0.73 and sd ≈ 0.07; above 0.95 needs about 5 failures in 8 or a 3-sd draw:
/// a false alarm of about 0.3%. The seeds below (200–207) were not among those measured.
/// At the default κ = [`BOX_KAPPA`] the same seeds 100–111 give the same mean ratio (0.71) but
/// a wider spread: 8 of 12 at 0.26–0.88 and four at 1.08–1.32 (runs that kept to a spurious
/// maximum on the floor for most of the 2000 rounds; mean simple regret 0.59): less
/// exploration pays at T = 10⁴ (`docs/boxes.md`), not reliably at T = 2000 and ε = 1.
#[test]
fn learns_a_bump_better_than_uniform_search_at_epsilon_one() {
    assert!((uniform_regret() - 1.2).abs() < 0.1, "{}", uniform_regret());
    // The eight seeded runs are independent: each on a thread of its own (the slowest test of
    // this crate, it would otherwise leave a core idle), their results in seed order.
    let runs: Vec<(f64, f64)> = std::thread::scope(|s| {
        let runs: Vec<_> =
            (200..208).map(|seed| s.spawn(move || regret_ratio(Some(1.0), 2000, seed, 4.0))).collect();
        runs.into_iter().map(|run| run.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let mean = runs.iter().map(|r| r.0).sum::<f64>() / runs.len() as f64;
    let simple = runs.iter().map(|r| r.1).sum::<f64>() / runs.len() as f64;
    assert!(mean <= 0.95 && simple <= 0.6, "{runs:?}");
}

/// A batch of one with nothing pending is ask()'s point, bit for bit: the same reports give
/// the same points and kernel.
#[test]
fn a_batch_of_one_is_the_sequential_box_learner() {
    let settings = Settings { horizon: 60, seed: 5, ..Settings::default() };
    let sequential = run("ldp-tgp-ucb", settings, 60);
    let domain = Domain::Box { lower: vec![-2.0, 0.0, 1.0], upper: vec![3.0, 1.0, 4.0] };
    let mut opt = BoxOptimizer::new("ldp-tgp-ucb", domain, settings).unwrap();
    let mut world = SimRng::seed_from_u64(settings.seed ^ 99);
    let mut asked = Vec::new();
    for _ in 0..60 {
        let x = opt.ask_batch(1).swap_remove(0);
        opt.tell(&x, (x[0] - x[2]).sin() + world.random_range(-1.0..1.0)).unwrap();
        asked.push(x);
    }
    assert_eq!(sequential, (asked, opt.recommend(), opt.lengthscales()));
}

/// GP-BUCB on a box: past the opening design, a batch's points are distinct points of the
/// box (each pending point's stand-in shrinks the variance near it), told in any order; a
/// forgotten point is never told; a point told that none asked answers the earliest ask.
/// At κ = 0.3: how far apart the stand-ins push a batch's points grows with β, and at the
/// default κ = [`BOX_KAPPA`] two of this batch's points are 5·10⁻⁴ of the box apart.
#[test]
fn a_box_batch_spreads_and_takes_reports_in_any_order() {
    let domain = Domain::Box { lower: vec![-2.0, 0.0], upper: vec![3.0, 1.0] };
    let options = BoxOptions { beta_scale: 4.0, ..BoxOptions::default() };
    let mut opt = BoxOptimizer::with_options("gp-ucb", domain, raw(200, 3), options).unwrap();
    let mut world = SimRng::seed_from_u64(17);
    for _ in 0..20 {
        let x = opt.ask();
        opt.tell(&x, bump(&x) + world.random_range(-1.0..=1.0)).unwrap();
    }
    let batch = opt.ask_batch(6);
    assert_eq!(opt.pending(), &batch[..]);
    for (i, x) in batch.iter().enumerate() {
        assert!(x[0] >= -2.0 && x[0] <= 3.0 && x[1] >= 0.0 && x[1] <= 1.0, "{x:?}");
        for y in &batch[..i] {
            let gap = ((x[0] - y[0]) / 5.0).hypot(x[1] - y[1]);
            assert!(gap > 1e-3, "a repeated point: {x:?} {y:?}");
        }
    }
    assert_eq!(opt.forget(&[9.0, 9.0]), Err(BoxError::NotPending));
    opt.forget(&batch[2]).unwrap();
    for x in batch.iter().rev().filter(|x| *x != &batch[2]) {
        opt.tell(x, bump(x)).unwrap();
    }
    assert!(opt.pending().is_empty());
    assert_eq!(opt.num_reports(), 25);
    let again = opt.ask_batch(2);
    opt.tell(&[0.0, 0.5], 0.2).unwrap();
    assert_eq!(opt.pending(), &again[1..], "a point none asked answers the earliest ask");
}

/// `n` points of the cube [−1, 2]³ (a seeded uniform draw).
fn cloud(n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = SimRng::seed_from_u64(seed);
    (0..n).map(|_| (0..3).map(|_| rng.random_range(-1.0..2.0)).collect()).collect()
}

/// A bump of height 1 at (0.5, 1, 0) on [−1, 2]³, −0.5 far from it (|f| ≤ 1).
fn bump3(x: &[f64]) -> f64 {
    let r2 = (x[0] - 0.5).powi(2) + (x[1] - 1.0).powi(2) + x[2].powi(2);
    1.5 * (-r2 / 0.5).exp() - 0.5
}

/// Above [`points::LARGE_SET`] points the learners that need the set's |D| × |D| matrices,
/// the Matérn kernel, other constants and bad points are refused in the user's words; GP-UCB
/// and LDP-TGP-UCB run.
#[test]
fn a_large_point_set_refuses_what_it_cannot_run() {
    let n = points::LARGE_SET + 1;
    let set = cloud(n, 1);
    let s = Settings::default();
    let refused = |name: &str, domain: Domain, settings: Settings| -> String {
        match Optimizer::new(name, domain, settings) {
            Err(OptimizerError::Setting(why)) => why,
            Err(other) => panic!("{name}: {other}"),
            Ok(_) => panic!("{name} accepted"),
        }
    };
    for name in ["ldp-ata-gp-ucb", "ldp-moma-gp-ucb", "ucb1", "ldp-ucb"] {
        let why = refused(name, Domain::points(set.clone()), s);
        assert!(why.contains("only GP-UCB and LDP-TGP-UCB") && why.contains(&n.to_string()), "{why}");
    }
    let matern = KernelChoice { name: KernelName::Matern, lengthscale: None };
    assert!(refused("gp-ucb", Domain::Points { points: set.clone(), kernel: matern }, s).contains("Matérn"));
    let practical = Settings { constants: Constants::Practical, ..s };
    assert!(refused("gp-ucb", Domain::points(set.clone()), practical).contains("calibrated"));
    let mut mixed = set.clone();
    mixed[4000].push(0.0);
    let why = refused("gp-ucb", Domain::points(mixed), s);
    assert!(why.contains("point 4000 has 4 coordinates but point 0 has 3"), "{why}");
    let mut nan = set.clone();
    nan[17][2] = f64::NAN;
    assert!(refused("gp-ucb", Domain::points(nan), s).contains("coordinate 2 of point 17"));
    for name in ["gp-ucb", "ldp-tgp-ucb"] {
        let mut opt = Optimizer::new(name, Domain::points(set.clone()), s).unwrap();
        let a = opt.ask();
        assert!(a < n);
        opt.tell(a, 0.3).unwrap();
    }
}

/// On 20,000 points of a cube, raw reports with U[−1, 1] noise, T = 1000: TGP-UCB's and
/// GP-UCB's cumulative regret is at most 0.7× uniform play's over the set (its exact expected
/// regret), and the recommendation is within 0.25 of the best point. Measured on seeds 0–7
/// while choosing the bounds (κ = [`points::POINT_SET_KAPPA`]): ratios 0.20–0.49 (mean 0.32, sd
/// 0.09), simple regrets ≤ 0.11; the seeds below are others. (At κ = 0.3, before the large
/// sets had their own κ, T = 400 gave 0.12–0.2; at 0.15 T = 400 gives 0.37–0.65 with
/// simple regrets up to 0.47: the smaller κ chosen at T = 10⁴ explores less early.)
#[test]
fn a_large_point_set_is_learned_without_its_kernel_matrix() {
    let set = cloud(20_000, 7);
    let values: Vec<f64> = set.iter().map(|x| bump3(x)).collect();
    let best = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let uniform = best - values.iter().sum::<f64>() / values.len() as f64;
    for (name, seed) in [("gp-ucb", 20), ("tgp-ucb", 21)] {
        let settings = Settings { epsilon: None, horizon: 1000, seed, ..Settings::default() };
        let mut opt = Optimizer::new(name, Domain::points(set.clone()), settings).unwrap();
        assert!(opt.constants().contains(&("kappa", points::POINT_SET_KAPPA)), "{:?}", opt.constants());
        let mut world = SimRng::seed_from_u64(seed);
        let mut regret = 0.0;
        for _ in 0..1000 {
            let a = opt.ask();
            regret += best - values[a];
            opt.tell(a, values[a] + world.random_range(-1.0..=1.0)).unwrap();
        }
        let ratio = regret / (1000.0 * uniform);
        let simple = best - values[opt.recommend()];
        assert!(ratio <= 0.7 && simple <= 0.25, "{name}: ratio {ratio}, simple regret {simple}");
    }
}

/// The same seed gives the same actions on a large set; a batch of one is ask()'s action.
#[test]
fn a_large_point_set_is_deterministic() {
    let set = cloud(5000, 3);
    let run = |batch: bool| {
        let settings = Settings { horizon: 60, seed: 4, ..Settings::default() };
        let mut opt = Optimizer::new("ldp-tgp-ucb", Domain::points(set.clone()), settings).unwrap();
        let mut world = SimRng::seed_from_u64(1);
        let mut actions = Vec::new();
        for _ in 0..60 {
            let a = if batch { opt.ask_batch(1)[0].action } else { opt.ask() };
            opt.tell(a, bump3(&set[a]) + world.random_range(-1.0..=1.0)).unwrap();
            actions.push(a);
        }
        (actions, opt.recommend())
    };
    assert_eq!(run(false), run(true));
}

/// MoMA-GP-UCB on a box plays each point k times (an epoch), opens with the Sobol design as
/// the other learners do (one epoch a design point), counts every report, and asked again
/// before a report gives the same point.
#[test]
fn moma_on_a_box_plays_each_point_k_times() {
    let domain = Domain::Box { lower: vec![-2.0, 0.0], upper: vec![3.0, 1.0] };
    let mut opt = BoxOptimizer::new("moma-gp-ucb", domain.clone(), raw(300, 9)).unwrap();
    let gp = BoxOptimizer::new("gp-ucb", domain, raw(300, 9)).unwrap();
    let k = opt.epoch_length();
    assert_eq!(k, crate::bo::calibrated::epoch_length(300, 0.1));
    assert!(opt.constants().contains(&("k", k as f64)));
    let mut world = SimRng::seed_from_u64(2);
    let mut asked = Vec::new();
    for _ in 0..300 {
        let x = opt.ask();
        assert_eq!(opt.ask(), x);
        opt.tell(&x, bump(&x) + world.random_range(-1.0..=1.0)).unwrap();
        asked.push(x);
    }
    assert_eq!(opt.num_reports(), 300);
    let epochs: Vec<&[Vec<f64>]> = asked.chunks(k).collect();
    for e in &epochs {
        assert!(e.iter().all(|x| x == &e[0]), "an epoch moved: {e:?}");
    }
    let design = initial_design(2);
    for (n, e) in epochs.iter().take(design).enumerate() {
        assert_eq!(e[0], gp.to_box(&gp.pool.point(n)), "design epoch {n}");
    }
    assert!(epochs.windows(2).skip(design).any(|w| w[0][0] != w[1][0]));
}

/// Without privacy (raw reports, U[−1, 1] noise), T = 1000: MoMA-GP-UCB's cumulative regret
/// is at most 0.5× uniform random search's (mean of 8 seeds; each at most 0.8×). Measured on
/// seeds 0–7 and 100–103 while choosing the bounds: 10 of 12 at 0.17–0.36, two at 0.63–0.64 (runs
/// that kept to a spurious maximum; simple regret 0.06 and 0.71), mean 0.31 (TGP-UCB on seeds
/// 0–7: 0.05–0.19). Taking a run as stuck at 0.65 with probability 1/6 and otherwise N(0.24,
/// 0.05²), the mean of 8 passes 0.5 only with 5 stuck runs or more (4 give 0.45): a false
/// alarm of about 0.3%.
/// Its epochs cost it: the opening design alone takes 8 epochs of k = 13 rounds. The seeds below
/// (200–207) were not measured.
#[test]
fn moma_learns_a_bump_better_than_uniform_search_without_privacy() {
    let runs: Vec<(f64, f64)> =
        (200..208).map(|seed| regret_ratio_of("moma-gp-ucb", None, 1000, seed, 1.0)).collect();
    let mean = runs.iter().map(|r| r.0).sum::<f64>() / runs.len() as f64;
    assert!(mean <= 0.5 && runs.iter().all(|r| r.0 <= 0.8), "{runs:?}");
}

/// A MoMA batch hands out the running epoch's point until its k plays are asked, then new
/// epochs' points (GP-BUCB over epochs: distinct points); reports told in any order complete
/// each epoch at its k-th; a forgotten play is asked again.
#[test]
fn a_moma_batch_plays_whole_epochs_and_takes_reports_in_any_order() {
    let domain = Domain::Box { lower: vec![-2.0, 0.0], upper: vec![3.0, 1.0] };
    let mut opt = BoxOptimizer::new("moma-gp-ucb", domain, raw(2000, 4)).unwrap();
    let k = opt.epoch_length();
    let mut world = SimRng::seed_from_u64(5);
    for _ in 0..(initial_design(2) + 2) * k + 3 {
        let x = opt.ask();
        opt.tell(&x, bump(&x) + world.random_range(-1.0..=1.0)).unwrap();
    }
    let running = opt.ask();
    let batch = opt.ask_batch(2 * k + 2);
    assert_eq!(opt.pending().len(), 2 * k + 3);
    // The running epoch's k − 3 plays (one already asked by ask()), then two new epochs.
    assert!(batch[..k - 4].iter().all(|x| x == &running), "{batch:?}");
    let (second, third) = (&batch[k - 4], &batch[2 * k - 4]);
    assert!(second != &running && third != second && third != &running);
    assert!(batch[k - 4..2 * k - 4].iter().all(|x| x == second));
    assert!(batch[2 * k - 4..].iter().all(|x| x == third));
    opt.forget(third).unwrap();
    assert_eq!(opt.ask_batch(1)[0], *third, "a forgotten play is asked again");
    let told = opt.num_reports();
    for x in opt.pending().to_vec().iter().rev() {
        opt.tell(x, bump(x)).unwrap();
    }
    assert_eq!(opt.num_reports(), told + 2 * k + 3);
    assert!(opt.pending().is_empty());
    // Two epochs ended (the running one and the second); the third has 6 of its k reports.
    assert_eq!(opt.ask(), *third);
}

/// Past the design, MoMA's next epoch is the acquisition's maximiser over the kept estimate
/// with β_{n+1} of MoMA's own κ = [`BOX_MOMA_KAPPA`] (computed here from the formula), not the
/// other learners' [`BOX_KAPPA`].
#[test]
fn moma_chooses_its_epochs_with_its_own_kappa() {
    let mut opt = BoxOptimizer::new("moma-gp-ucb", unit_box(2), raw(1000, 3)).unwrap();
    let k = opt.epoch_length();
    let mut world = SimRng::seed_from_u64(8);
    for _ in 0..(initial_design(2) + 3) * k {
        let x = opt.ask();
        opt.tell(&x, bump(&[5.0 * x[0] - 2.0, x[1]]) + world.random_range(-1.0..=1.0)).unwrap();
    }
    let n = opt.moma.as_ref().unwrap().epochs();
    assert_eq!(n, initial_design(2) + 3);
    let t = (n + 1) as f64;
    let pi2 = std::f64::consts::PI.powi(2);
    let beta = |kappa: f64| kappa * (2.0 * (2.0 * (2.0 * t * t).ln() + (t * t * pi2 / 0.6).ln())).sqrt();
    let choice = |kappa: f64| {
        let mut pool = opt.pool.clone();
        acquisition::maximise(&opt.gp, &mut pool, beta(kappa), opt.options.search)
    };
    let (own, other) = (choice(BOX_MOMA_KAPPA), choice(BOX_KAPPA));
    assert_ne!(own, other, "the two κ choose the same point: the test cannot tell them apart");
    assert_eq!(opt.ask(), own);
}
