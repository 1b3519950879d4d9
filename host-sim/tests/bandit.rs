//! The bandit experiments end to end, on small seeded runs.
//!
//! The paper claims are checked statistically: a claim "A's regret is below B's" passes when
//! `mean_B − mean_A > 3·√(se_A² + se_B²)` (a one-sided z-test at 3 standard errors) on trials
//! with fixed seeds. The expected gaps, measured on 48 trials at T = 10⁵, are stated at each
//! test; trial counts are chosen so that a true gap of that size passes with probability
//! ≥ 99.5 %. Seeds were not tuned.

use host_sim::experiments::EnvFactory;
use host_sim::experiments::bandit::{
    BANDIT_EXPERIMENTS, DP_RSE, DP_RUCB, EXP3, ExpertsAlgorithm, KArmedEnv, LDP_RSE_S3, PRIVATE_EXP3,
    ParetoInstance, ROBUST_UCB, pareto_factory, run_experts_with, sweep_epsilons,
};
use host_sim::experiments::runner::{self, AlgorithmResult, RunConfig, problem_for};
use ldp_core::Epsilon;
use ldp_core::bandit::{HeavyTail, LdpRobustSe, PRACTICAL_LDP_RSE_KAPPA, RseParams};
use ldp_learn::policy::Constants;
use ldp_learn::policy::{AlgorithmSpec, PolicyError};
use ldp_link::device::{Device, InProcessDevice};

fn config(
    trials: usize,
    horizon: usize,
    epsilon: Option<f64>,
    central: bool,
    algorithms: &[AlgorithmSpec],
) -> RunConfig {
    RunConfig {
        trials,
        horizon,
        seed: 2024,
        threads: None,
        epsilon: epsilon.map(|e| Epsilon::new(e).unwrap()),
        constants: Constants::Practical,
        algorithms: algorithms.to_vec(),
        central,
        // The in-process device, λ = 1, δ = 0.1, no fleet, table or prior.
        ..RunConfig::default()
    }
}

fn run(config: &RunConfig, factory: &EnvFactory) -> Vec<AlgorithmResult> {
    runner::run(config, factory.as_ref(), false, None).unwrap()
}

/// The results of an experiment's own task under `config`.
fn run_own(e: &host_sim::experiments::Experiment, config: &RunConfig) -> Vec<AlgorithmResult> {
    let task = (e.own_task.unwrap())(config).unwrap();
    host_sim::run::executor::Executor::new(config).results(task.as_ref()).unwrap()
}

/// Mean and standard error of the final regrets.
fn mean_se(r: &AlgorithmResult) -> (f64, f64) {
    let n = r.finals.len() as f64;
    let mean = r.finals.iter().sum::<f64>() / n;
    let var = r.finals.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// `low`'s regret is below `high`'s by more than 3 standard errors of the difference.
fn assert_below(low: &AlgorithmResult, high: &AlgorithmResult) {
    let ((a, sa), (b, sb)) = (mean_se(low), mean_se(high));
    let margin = 3.0 * (sa * sa + sb * sb).sqrt();
    eprintln!("{}: {a:.1} ± {sa:.1}  vs  {}: {b:.1} ± {sb:.1}  (margin {margin:.1})", low.label, high.label);
    assert!(
        b - a > margin,
        "{} ({a:.1}) is not below {} ({b:.1}) by 3 s.e. ({margin:.1})",
        low.label,
        high.label
    );
}

#[test]
fn dp_rse_has_lower_regret_than_dp_rucb_on_s1() {
    // Expected (48 trials, T = 10⁵, v = 0.9, ε = 1): DP-RSE 7.9k ± 1.5k (sd), DP-RUCB 23.6k ± 15.2k.
    // With 32 trials the gap is ≈ 5.8 s.e., so the 3-s.e. test passes with probability ≈ 99.7 %.
    let factory = pareto_factory(ParetoInstance::S1, 0.9).unwrap();
    let results = run(&config(32, 100_000, Some(1.0), true, &[DP_RUCB, DP_RSE]), &factory);
    assert_eq!((results[0].label.as_str(), results[1].label.as_str()), ("DP-RUCB", "DP-RSE"));
    assert_below(&results[1], &results[0]);
}

#[test]
fn dp_rse_regret_falls_as_epsilon_grows() {
    // Expected (48 trials, T = 10⁵, S1, v = 0.9): ε = 0.5: 15.6k ± 2.3k; ε = 1: 7.9k ± 1.5k (sd).
    let factory = pareto_factory(ParetoInstance::S1, 0.9).unwrap();
    let by_eps: Vec<AlgorithmResult> = [0.5, 1.0, 2.0]
        .iter()
        .map(|&e| run(&config(16, 100_000, Some(e), true, &[DP_RSE]), &factory).remove(0))
        .collect();
    assert_below(&by_eps[1], &by_eps[0]);
    assert_below(&by_eps[2], &by_eps[1]);
}

#[test]
fn the_non_private_baseline_learns_and_privacy_costs_regret() {
    // Robust-UCB (practical constant) ≈ 0.6k at T = 10⁵, v = 0.9; DP-RSE at ε = 1 ≈ 7.9k.
    let factory = pareto_factory(ParetoInstance::S1, 0.9).unwrap();
    let baseline = run(&config(8, 100_000, None, false, &[ROBUST_UCB]), &factory).remove(0);
    let private = run(&config(8, 100_000, Some(1.0), true, &[DP_RSE]), &factory).remove(0);
    assert_below(&baseline, &private);
}

#[test]
fn ldp_rse_runs_through_the_in_process_device_with_its_public_level() {
    // Until the first epoch ends LDP-RSE is a round robin: on S3 its regret after 5000 rounds is
    // exactly 1000·(0 + 0.05 + 0.2 + 0.45 + 0.8), whatever the reports.
    let factory = pareto_factory(ParetoInstance::S3, 0.9).unwrap();
    let results = run(&config(2, 5000, Some(20.0), false, &[LDP_RSE_S3]), &factory);
    assert_eq!(results[0].label, "LDP-RSE");
    for f in &results[0].finals {
        assert!((f - 1500.0).abs() < 1e-6, "{f}");
    }
}

#[test]
fn ldp_rse_eliminates_a_bad_arm_on_privatised_reports() {
    // Two Bernoulli arms (0.9, 0.1), u = v = 1, ε = 10, practical κ = 6, β = 0.01: R_1 ≈ 1540,
    // B_1 ≈ 12, threshold 3·err_1 ≈ D_1/2 = 0.25. The mean of R_1 reports has noise sd ≈ 0.09, so
    // the gap 0.8 clears the threshold by ≈ 4.5 sd of the difference.
    let env = KArmedEnv::bernoulli(&[0.9, 0.1]).unwrap();
    let eps = Epsilon::new(10.0).unwrap();
    let params =
        RseParams::new(eps, HeavyTail::new(1.0, 1.0).unwrap(), 0.01, PRACTICAL_LDP_RSE_KAPPA).unwrap();
    let mut learner = LdpRobustSe::<2>::new(params);
    let pulls = learner.epoch().pulls;
    assert!((1000..3000).contains(&pulls), "R_1 = {pulls}");
    let mut device = InProcessDevice::new(&env, Epsilon::new(10.0).unwrap(), 10_000, 1, 2).unwrap();
    let mut levels = Vec::new();
    for _ in 0..2 * pulls {
        let arm = learner.select();
        let level = learner.device_level();
        levels.push(level);
        let report = device.query(arm, Some(level)).unwrap();
        learner.observe(arm, report).unwrap();
    }
    assert!(levels.iter().all(|&l| l == levels[0]), "B_τ is constant within an epoch");
    assert_eq!(learner.committed(), Some(0));
    let release = learner.last_release().unwrap();
    assert_eq!(release.eliminated, [false, true]);
}

#[test]
fn private_exp3_pays_for_privacy_and_less_so_as_epsilon_grows() {
    // This setting through the CLI (`run agarwal-bandit --trials 8 --horizon 20000 --seed 2024`):
    // EXP3 688, private ε = 0.5: 4386, ε = 2: 1584 (sd ≤ 336).
    let env = || -> EnvFactory {
        let kind = host_sim::experiments::find("agarwal-bandit").unwrap().env;
        host_sim::experiments::env_factory(kind, None).unwrap()
    };
    let exp3 = run(&config(8, 20_000, None, false, &[EXP3]), &env()).remove(0);
    let low = run(&config(8, 20_000, Some(0.5), true, &[PRIVATE_EXP3]), &env()).remove(0);
    let high = run(&config(8, 20_000, Some(2.0), true, &[PRIVATE_EXP3]), &env()).remove(0);
    assert_below(&exp3, &high);
    assert_below(&high, &low);
}

#[test]
fn private_hedge_pays_for_privacy_and_less_so_as_epsilon_grows() {
    // This setting through the CLI (`run agarwal-experts --trials 8 --horizon 5000 --seed 2024`):
    // Hedge 46 ± 1.4, private ε = 0.5: 257 ± 49 (sd).
    let cfg = config(8, 5000, Some(1.0), true, &[]);
    let algorithms = [
        ExpertsAlgorithm::Hedge,
        ExpertsAlgorithm::PrivateHedge { epsilon: Epsilon::new(0.5).unwrap() },
        ExpertsAlgorithm::PrivateHedge { epsilon: Epsilon::new(20.0).unwrap() },
    ];
    let results = run_experts_with(&cfg, &algorithms).unwrap();
    assert_eq!(results[2].label, "Private-Hedge eps=20");
    assert_below(&results[0], &results[1]);
    assert_below(&results[2], &results[1]);
    // The regret curve is against the best expert in hindsight: it starts at most at 1.
    assert!(results[0].mean[0] <= 1.0 && results[0].mean.len() == 5000);
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let factory = pareto_factory(ParetoInstance::S2, 0.5).unwrap();
    let mut one = config(3, 3000, Some(1.0), true, &[DP_RUCB, DP_RSE]);
    one.threads = Some(1);
    let two = RunConfig { threads: Some(2), ..one.clone() };
    let (a, b) = (run(&one, &factory), run(&two, &factory));
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.finals, y.finals);
    }
    let experts = [ExpertsAlgorithm::PrivateHedge { epsilon: Epsilon::new(1.0).unwrap() }];
    let (c, d) = (run_experts_with(&one, &experts).unwrap(), run_experts_with(&two, &experts).unwrap());
    assert_eq!(c[0].mean, d[0].mean);
}

#[test]
fn every_bandit_experiment_runs_its_sweep() {
    for e in &BANDIT_EXPERIMENTS {
        let cfg = config(2, 300, e.epsilon.map(Epsilon::get), e.central, e.algorithms);
        let results = run_own(e, &cfg);
        // Plus one uniform-play row per distinct uniform curve (labelled without ε).
        let (expected, uniform) = match e.name {
            // S1–S3 keep their means for every v, so uniform play is one curve.
            "tao-s1" | "tao-s2" | "tao-s3" => (2 * (1 + 2 * 2), vec!["uniform play"]),
            "tao-ldp" => (2 * 3, vec!["uniform play"]),
            "agarwal-bandit" => (1 + 3, vec!["uniform play"]),
            "agarwal-experts" => (1 + 4, vec!["uniform play"]),
            other => panic!("unexpected experiment {other}"),
        };
        assert_eq!(results.len(), expected + uniform.len(), "{}", e.name);
        let references: Vec<&str> =
            results.iter().filter(|r| r.reference).map(|r| r.label.as_str()).collect();
        assert_eq!(references, uniform, "{}", e.name);
        for r in &results {
            assert_eq!(r.uniform_finals.len(), 2, "{} {}", e.name, r.label);
            assert!(r.uniform_finals.iter().all(|u| *u > 0.0), "{} {}", e.name, r.label);
        }
        if e.name == "agarwal-bandit" {
            // The grid point without a suffix keeps the bare label.
            assert_eq!(results[0].label, "EXP3");
            assert_eq!(results[1].label, "Private-EXP3 eps=0.5");
        }
        assert!(results.iter().all(|r| r.mean.len() == 300 && r.finals.len() == 2), "{}", e.name);
        assert!(host_sim::experiments::find(e.name).is_some(), "{} is listed", e.name);
    }
    // --eps restricts a sweep to one ε; the listed ε runs the grid.
    let cfg = config(1, 10, Some(0.7), true, &[]);
    let values = |cfg: &RunConfig| -> Vec<f64> {
        sweep_epsilons(cfg, 1.0, &[0.5, 1.0]).unwrap().iter().map(|e| e.get()).collect()
    };
    assert_eq!(values(&cfg), vec![0.7]);
    let cfg = config(1, 10, Some(1.0), true, &[]);
    assert_eq!(values(&cfg), vec![0.5, 1.0]);
    let labels: Vec<String> = run_own(&BANDIT_EXPERIMENTS[0], &config(1, 50, Some(0.5), true, &[]))
        .into_iter()
        .map(|r| r.label)
        .collect();
    assert!(labels.contains(&"DP-RSE v=0.9 eps=0.5".to_string()), "{labels:?}");
}

#[test]
fn specs_refuse_the_wrong_privacy_mode() {
    let env = KArmedEnv::pareto(ParetoInstance::S1, 0.5).unwrap();
    let non_private = problem_for(&env, &config(1, 100, None, false, &[])).unwrap();
    for spec in [DP_RUCB, DP_RSE, PRIVATE_EXP3, LDP_RSE_S3] {
        assert!(
            matches!(
                (spec.build)(&non_private, Constants::Practical, 1).err(),
                Some(PolicyError::InvalidSetting(_))
            ),
            "{}",
            spec.name
        );
    }
    for spec in [ROBUST_UCB, EXP3] {
        assert!((spec.build)(&non_private, Constants::Paper, 1).is_ok(), "{}", spec.name);
    }
    // Above MAX_ARMS = 64 the adapters refuse the arm count (see also
    // the_k_armed_learners_run_on_more_than_ten_arms).
    let wide = KArmedEnv::bernoulli(&[0.5; 65]).unwrap();
    let problem = problem_for(&wide, &config(1, 100, None, false, &[])).unwrap();
    assert!(matches!(
        (EXP3.build)(&problem, Constants::Practical, 1).err(),
        Some(PolicyError::ArmCount { arms: 65, min: 2, max: 64 })
    ));
}

/// `config` under the calibrated constants.
fn calibrated(config: RunConfig) -> RunConfig {
    RunConfig { constants: Constants::Calibrated, ..config }
}

/// A data table's environment: `k` arms whose readings are `10 + 3·a/k` plus a small spread
/// (values far from 0 with a small spread, as a temperature or a price).
fn table_env(k: usize) -> ldp_learn::env::RealData {
    let columns: Vec<Vec<f64>> = (0..k)
        .map(|a| (0..40).map(|i| 10.0 + 3.0 * a as f64 / k as f64 + 0.01 * (i % 7) as f64).collect())
        .collect();
    ldp_learn::env::RealData::from_columns("table", columns, nalgebra::DMatrix::identity(k, k)).unwrap()
}

/// Whether a run's final regret is exactly uniform play's in every trial (a round robin over
/// the K arms until T, T a multiple of K).
fn is_round_robin(results: &[AlgorithmResult], learner: usize) -> bool {
    let r = &results[learner];
    r.finals.iter().zip(&r.uniform_finals).all(|(f, u)| (f - u).abs() <= 1e-9 * u)
}

#[test]
fn calibrated_dp_rse_leaves_round_robin_on_the_pareto_instances_before_t_1e5() {
    // Seed 004's DP-RSE at v = 0.5, ε = 1 (κ = 2) needs 145,325 pulls for its first epoch on
    // S1–S3: round robin to T = 10⁵. The calibrated schedule checks after 5, 15, 35, … pulls.
    for instance in [ParetoInstance::S1, ParetoInstance::S2, ParetoInstance::S3] {
        let factory = pareto_factory(instance, 0.5).unwrap();
        let practical = run(&config(1, 100_000, Some(1.0), true, &[DP_RSE]), &factory);
        assert!(is_round_robin(&practical, 0), "{instance:?}: practical DP-RSE left round robin");
        let ours = run(&calibrated(config(2, 100_000, Some(1.0), true, &[DP_RSE])), &factory);
        assert!(!is_round_robin(&ours, 0), "{instance:?}: calibrated DP-RSE is a round robin");
        let ratio = ours[0].vs_uniform().unwrap();
        assert!(ratio < 1.0, "{instance:?}: {ratio}");
    }
}

#[test]
fn calibrated_k_armed_learners_learn_on_a_table_whose_values_sit_near_10() {
    // Robust-UCB (practical) zeroes early rewards above √(u n/ln T²) and locks in on the
    // lowest arm; LDP-RSE (practical) is a round robin to T. The calibrated learners keep the
    // signal: Robust-UCB centres on each arm's own rewards, LDP-RSE's level covers B + R.
    let factory = ldp_learn::env::shared(table_env(3));
    let raw = |constants| {
        let c = RunConfig {
            constants,
            ..config(4, 3000, None, false, &[host_sim::experiments::bandit::ROBUST_UCB_TABLE])
        };
        run(&c, &factory).remove(0)
    };
    let (practical, ours) = (raw(Constants::Practical).vs_uniform(), raw(Constants::Calibrated).vs_uniform());
    assert!(practical.unwrap() > 1.0, "practical Robust-UCB: {practical:?}");
    assert!(ours.unwrap() < 0.2, "calibrated Robust-UCB: {ours:?}");
    let private = run(
        &calibrated(config(2, 30_000, Some(4.0), false, &[host_sim::experiments::bandit::LDP_RSE])),
        &factory,
    );
    assert!(!is_round_robin(&private, 0));
    let ratio = private[0].vs_uniform().unwrap();
    assert!(ratio < 1.0, "calibrated LDP-RSE: {ratio}");
}

#[test]
fn the_k_armed_learners_run_on_more_than_ten_arms() {
    // The stock table has 29 columns, the light sensors 41: every K-armed learner is built for
    // them (and 64 arms is the cap).
    let factory = ldp_learn::env::shared(table_env(41));
    for constants in [Constants::Calibrated, Constants::Practical] {
        for (eps, central, spec) in [
            (None, false, host_sim::experiments::bandit::ROBUST_UCB_TABLE),
            (Some(1.0), false, host_sim::experiments::bandit::LDP_RSE),
            (Some(1.0), true, DP_RSE),
            (Some(1.0), true, DP_RUCB),
        ] {
            let c = RunConfig { constants, ..config(1, 500, eps, central, &[spec]) };
            let results = run(&c, &factory);
            assert_eq!(results[0].finals.len(), 1, "{} {constants:?}", spec.name);
        }
    }
    let many = table_env(65);
    let problem = problem_for(&many, &config(1, 10, Some(1.0), false, &[])).unwrap();
    let built = (host_sim::experiments::bandit::LDP_RSE.build)(&problem, Constants::Calibrated, 0);
    assert!(matches!(built, Err(PolicyError::ArmCount { arms: 65, min: 2, max: 64 })));
}

#[test]
fn the_calibrated_constants_are_the_rules_from_public_quantities() {
    // The table of `table_env(3)`: f = mean/max mean, B = 1, R = the largest |reading − f|.
    let env = table_env(3);
    let bounds = ldp_learn::env::Environment::bounds(&env);
    let (b, r) = (bounds.b, bounds.r.unwrap());
    let problem = problem_for(&env, &calibrated(config(1, 1000, Some(2.0), false, &[]))).unwrap();
    let policy = (host_sim::experiments::bandit::LDP_RSE.build)(&problem, Constants::Calibrated, 0).unwrap();
    let constants: std::collections::HashMap<_, _> = policy.constants().into_iter().collect();
    // κ = KAPPA (beta scale 1); the level covers the signal: B + R; the variance R².
    assert_eq!(constants["kappa"], ldp_core::bandit::KAPPA);
    assert_eq!(constants["B"], b);
    assert_eq!(constants["R"], r);
    assert_eq!(constants["c"], r * r);
    assert_eq!(constants["level_1"], b + r);
    assert_eq!(policy.device_level(), Some(b + r));
    // Seed 004's DP-RSE: heavy tails with c = 2^v(u + B^{1+v}) of the Pareto instance; its first
    // epoch (one pull, z_1 = √(2 ln(5π²/0.6))) is clamped at B + (c/(z_1·2√2/ε))^{1/(1+v)}.
    let pareto = KArmedEnv::pareto(ParetoInstance::S1, 0.5).unwrap();
    let problem = problem_for(&pareto, &calibrated(config(1, 1000, Some(1.0), true, &[]))).unwrap();
    let policy = (DP_RSE.build)(&problem, Constants::Calibrated, 0).unwrap();
    let constants: std::collections::HashMap<_, _> = policy.constants().into_iter().collect();
    let u = ParetoInstance::S1.moment_bound(0.5);
    let c = 2f64.sqrt() * (u + 0.9f64.powf(1.5));
    assert!((constants["c"] - c).abs() < 1e-12 && constants["v"] == 0.5);
    let z1 = (2.0 * (5.0 * std::f64::consts::PI.powi(2) / 0.6).ln()).sqrt();
    let level = 0.9 + (c / (z1 * 2.0 * 2f64.sqrt())).powf(1.0 / 1.5);
    assert!((constants["level_1"] / level - 1.0).abs() < 1e-12, "{} vs {level}", constants["level_1"]);
}

#[test]
fn ldp_ucb_takes_the_devices_mechanism_scale_and_learns_where_ldp_rse_is_a_round_robin() {
    use host_sim::experiments::bandit::ldp_ucb::{LdpUcb, ReportNoise};
    use host_sim::experiments::bandit::{LDP_UCB, table_learners};
    // The private table family's calibrated default is LDP-UCB; paper and practical keep
    // Tao et al.'s LDP-RSE (and UCB1) exactly.
    let labels = |c| table_learners(true, c).iter().map(|s| s.name).collect::<Vec<_>>();
    assert_eq!(labels(Constants::Calibrated), ["LDP-UCB", "LDP-RSE", "UCB1"]);
    assert_eq!(labels(Constants::Practical), ["LDP-RSE", "UCB1"]);
    assert_eq!(labels(Constants::Paper), ["LDP-RSE", "UCB1"]);
    // Its noise is the device's: CTL's Laplace scale 𝓛 ≈ 2(B + R)/ε at the problem's B and R.
    let env = table_env(41);
    let problem = problem_for(&env, &calibrated(config(1, 100, Some(0.5), false, &[]))).unwrap();
    let (b, r) = (problem.b, problem.noise_bound.unwrap());
    let scale = problem.privacy.unwrap().laplace_scale;
    assert!((scale / (2.0 * (b + r) / 0.5) - 1.0).abs() < 0.02, "𝓛 = {scale}, B = {b}, R = {r}");
    assert_eq!(LdpUcb::new(&problem, 0.4).unwrap().noise(), ReportNoise::ctl(r, scale));
    // Ten arms near 10 (scaled 0.79 .. 1, gaps 0.024), ε = 4, T = 30000: LDP-RSE's equal pulls
    // per surviving arm leave it at about 0.7× uniform play; LDP-UCB (measured 0.13×) below 0.5×.
    let factory = ldp_learn::env::shared(table_env(10));
    let results = run(
        &calibrated(config(3, 30_000, Some(4.0), false, &[LDP_UCB, host_sim::experiments::bandit::LDP_RSE])),
        &factory,
    );
    assert!(!is_round_robin(&results, 0));
    let (ucb, rse) = (results[0].vs_uniform().unwrap(), results[1].vs_uniform().unwrap());
    assert!(ucb < 0.5 && ucb < rse, "LDP-UCB {ucb}, LDP-RSE {rse}");
}
