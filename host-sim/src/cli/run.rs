//! `host-sim list`, `run` (one run, or a sweep over ε) and `merge` (shards into one run).

use std::path::PathBuf;
use std::time::Instant;

use host_sim::experiments;
use host_sim::experiments::bandit;
use host_sim::experiments::runner;
use host_sim::run::checkpoint::OutLock;
use host_sim::run::executor::Shard;
use host_sim::run::output::{self, TableFormat};
use host_sim::run::pipeline::{self, Finished, Mode, Run, SHARD_SETTINGS};
use host_sim::run::plot::PlotOptions;
use host_sim::run::request::{self, DeviceRefusal, DeviceRequest, RequestError, RunRequest, Settled};
use host_sim::run::results::AlgorithmResult;
use ldp_learn::env::custom::{KernelChoice, Overrides, ProblemFiles};
use ldp_learn::env::table::ReadOptions;

use crate::cli::args::{ConstantsArg, EpsArg, FamilyArg, RunArgs, constants_of};
use crate::cli::error::{CliError, FileOp, Sign, Usage, file};

/// `list`: every experiment, its privacy model and its learners.
pub(crate) fn list() {
    say!("experiments (host-sim run <name>):");
    for e in experiments::all() {
        let privacy = match (e.epsilon, e.central) {
            (None, _) => "non-private".to_string(),
            (Some(eps), false) => format!("LDP, eps = {eps}"),
            (Some(eps), true) => format!("central DP, eps = {eps}"),
        };
        let mut names: Vec<String> =
            e.algorithms.iter().map(|a| a.label(e.epsilon.is_some()).to_string()).collect();
        if names.is_empty() {
            // The experiment's own task names its learners (e.g. a sweep's, once per name).
            let labels = experiments::task(e, e.env, &e.default_config(), None).map(|t| t.labels());
            for label in labels.unwrap_or_default() {
                if !names.contains(&label) {
                    names.push(label);
                }
            }
        }
        if e.name == "custom" {
            names.push("with --family bandit: Robust-UCB (LDP-UCB and LDP-RSE when private; LDP-RSE under paper and practical constants), UCB1".to_string());
        }
        say!("  {:<16} {} [{privacy}]\n  {:<16} algorithms: {}", e.name, e.description, "", names.join(", "));
    }
}

/// Holds the output directory `dir` for this command: another host-sim run writing there is
/// refused, and refuses this one.
pub(crate) fn lock_out(dir: &std::path::Path) -> Result<OutLock, CliError> {
    OutLock::acquire(dir).map_err(|e| runner::RunError::Checkpoint(e).into())
}

/// `run`, or with `merge_from` the merge of those shard directories (every job from their
/// checkpoints, none computed). A list of ε runs once per value (a sweep).
pub(crate) fn run(cli: RunArgs, merge_from: &[PathBuf]) -> Result<(), CliError> {
    let settings = match &cli.config {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(file(FileOp::ReadConfig, path))?;
            toml::from_str::<RunArgs>(&text)
                .map_err(|e| CliError::Settings { path: path.clone(), source: Box::new(e) })?
        }
        None => RunArgs::default(),
    };
    // The command line wins over the file, setting by setting.
    let args = cli.or(settings);
    let name = args.experiment.clone().ok_or(Usage::NoExperiment)?;
    let experiment = experiments::find(&name).ok_or(Usage::UnknownExperiment(name))?;
    // The user's files, read and parsed once for the run or the whole sweep (every ε's run
    // shares them), and what was read from the table, for the user to check.
    let problem = problem_files(&args, experiment)?;
    if let Some(files) = &problem
        && !args.quiet
    {
        eprint!("{}", files.report);
    }
    let values = match &args.eps {
        Some(e) => e.values()?,
        None => vec![experiment.epsilon],
    };
    if values.len() == 1 {
        return run_one(&args, experiment, problem, values[0], merge_from, true).map(|_| ());
    }
    if args.shard.is_some() || !merge_from.is_empty() {
        return Err(Usage::SweepSharded.into());
    }
    let base = args.out.clone().unwrap_or_else(|| PathBuf::from("results").join(experiment.name));
    let _lock = lock_out(&base)?; // each ε's run locks its own directory below it
    let json = args.format == Some(TableFormat::Json);
    let mut table =
        String::from("eps,algorithm,final_regret_mean,final_regret_std,final_regret_se,vs_uniform,vs_ucb1\n");
    let mut runs = Vec::new();
    for epsilon in values {
        let e = epsilon.map_or("none".to_string(), |e| e.to_string());
        let one =
            RunArgs { eps: Some(EpsArg(e.clone())), out: Some(base.join(format!("eps{e}"))), ..args.clone() };
        // A sweep's JSON is one document, printed at the end.
        let results = run_one(&one, experiment, problem.clone(), epsilon, &[], !json)?;
        let trials = results.first().map_or(1, |r| r.finals.len());
        let number = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
        for row in output::table_rows(&results, trials).iter().filter(|r| !r.reference) {
            let (ratio, ucb1) = (number(row.vs_uniform), number(row.vs_ucb1));
            table +=
                &format!("{e},{},{},{},{},{ratio},{ucb1}\n", row.algorithm, row.final_mean, row.sd, row.se);
        }
        let horizon = args.horizon.unwrap_or(experiment.default_config().horizon);
        runs.push(output::run_json(&results, &heading(experiment, &one, epsilon, trials, horizon)));
    }
    let path = base.join("sweep.csv");
    std::fs::write(&path, &table).map_err(file(FileOp::Write, &path))?;
    if json {
        say!(
            "{}",
            output::to_json(&serde_json::json!({ "experiment": experiment.name, "sweep": runs })).trim_end()
        );
    }
    eprintln!("wrote {} (final regret per ε and learner)", path.display());
    Ok(())
}

/// What a printed table of `experiment` run with `args` at `epsilon` is of.
pub(crate) fn heading(
    experiment: &experiments::Experiment,
    args: &RunArgs,
    epsilon: Option<ldp_core::Epsilon>,
    trials: usize,
    horizon: usize,
) -> output::TableHeading {
    let title = match &args.arms {
        Some(arms) if matches!(experiment.env, experiments::EnvKind::Table) => {
            format!(
                "your data: {}",
                arms.file_name().map_or(arms.display().to_string(), |n| n.to_string_lossy().into())
            )
        }
        _ => experiment.description.to_string(),
    };
    output::TableHeading {
        experiment: experiment.name.to_string(),
        title,
        eps: epsilon.map(ldp_core::Epsilon::get),
        trials,
        horizon,
    }
}

/// The user's problem files of `custom`, or an error if any of their settings is given to
/// another experiment.
pub(crate) fn problem_files(
    args: &RunArgs,
    experiment: &experiments::Experiment,
) -> Result<Option<ProblemFiles>, CliError> {
    let custom = matches!(experiment.env, experiments::EnvKind::Table);
    let given = [
        ("--arms", args.arms.is_some()),
        ("--delimiter", args.delimiter.is_some()),
        ("--label-column", args.label_column.is_some()),
        ("--columns", args.columns.is_some()),
        ("--long", args.long.is_some()),
        ("--minimise", args.minimise),
        ("--coords", args.coords.is_some()),
        ("--kernel", args.kernel.is_some()),
        ("--lengthscale", args.lengthscale.is_some()),
        ("--family", args.family.is_some()),
        ("--bound", args.b.is_some()),
        ("--noise-bound", args.r.is_some()),
        ("--moment", args.v.is_some()),
        ("--noise-moment", args.c.is_some()),
    ];
    if !custom {
        return match given.iter().find(|(_, g)| *g) {
            Some((flag, _)) => Err(Usage::NotCustom { flag, experiment: experiment.name }.into()),
            None => Ok(None),
        };
    }
    let arms = args.arms.clone().ok_or(Usage::NoArms)?;
    let kernel = (args.kernel.is_some() || args.lengthscale.is_some())
        .then(|| KernelChoice { name: args.kernel.unwrap_or_default(), lengthscale: args.lengthscale });
    if kernel.is_some() && args.coords.is_none() {
        return Err(Usage::KernelWithoutCoords.into());
    }
    check("--bound", args.b, Sign::Positive)?;
    check("--noise-bound", args.r, Sign::NonNegative)?;
    check("--moment", args.v, Sign::Positive)?;
    check("--noise-moment", args.c, Sign::Positive)?;
    check("--lengthscale", args.lengthscale, Sign::Positive)?;
    let overrides = Overrides { b: args.b, r: args.r, v: args.v, c: args.c };
    let read = ReadOptions {
        delimiter: args.delimiter.as_deref().map(delimiter).transpose()?,
        label_column: args.label_column.clone(),
        columns: args.columns.clone(),
        long: args.long.as_deref().map(|l| l.parse().map_err(Usage::Long)).transpose()?,
        minimise: args.minimise,
    };
    Ok(Some(ProblemFiles::new(arms, args.coords.clone(), kernel, overrides, read)?))
}

/// The delimiter `--delimiter` names: one ASCII character, or `tab`.
pub(crate) fn delimiter(text: &str) -> Result<char, Usage> {
    let mut chars = text.chars();
    match (text, chars.next(), chars.next()) {
        ("tab" | "\\t" | "TAB", _, _) => Ok('\t'),
        (_, Some(c), None) if c.is_ascii() && c != '"' && c != '\n' && c != '\r' => Ok(c),
        _ => Err(Usage::Delimiter(text.to_string())),
    }
}

/// A number flag, if given, must be finite and of its sign.
pub(crate) fn check(flag: &'static str, value: Option<f64>, sign: Sign) -> Result<(), Usage> {
    match value {
        Some(x) if !(x.is_finite() && (x > 0.0 || (sign == Sign::NonNegative && x == 0.0))) => {
            Err(Usage::Number { flag, value: x, sign })
        }
        _ => Ok(()),
    }
}

/// What `run`'s flags ask for and the run cannot use, in the flags' words.
pub(crate) fn request_error(e: RequestError) -> CliError {
    match e {
        RequestError::EpsNonPrivate(name) => Usage::EpsNonPrivate(name).into(),
        RequestError::EpsNone(name) => Usage::EpsNone(name).into(),
        RequestError::PriorNotTable(name) => Usage::PriorNotTable(name).into(),
        RequestError::PriorWithCoords => Usage::PriorWithCoords.into(),
        RequestError::BetaScale(value) => {
            Usage::Number { flag: "--beta-scale", value, sign: Sign::NonNegative }.into()
        }
        RequestError::BatchZero => Usage::BatchZero.into(),
        RequestError::BatchAndInFlight => Usage::BatchAndInFlight.into(),
        RequestError::BatchOwnTask(name) => Usage::BatchOwnTask(name).into(),
        RequestError::UnknownNoise(name) => Usage::UnknownNoise(name).into(),
        RequestError::NoiseNotSynthetic(name) => Usage::NoiseNotSynthetic(name).into(),
        RequestError::UnboundedPrivate => Usage::UnboundedPrivate.into(),
        RequestError::Config(e) => e.into(),
    }
}

/// What `run`'s device flags ask for and the device cannot do, in the flags' words.
pub(crate) fn device_refusal(e: DeviceRefusal) -> CliError {
    match e {
        DeviceRefusal::ShardOverMqtt => Usage::ShardOverMqtt.into(),
        DeviceRefusal::UserBudgetOverMqtt => Usage::UserBudgetOverMqtt.into(),
        DeviceRefusal::UserBudget(value) => {
            Usage::Number { flag: "--user-budget", value, sign: Sign::Positive }.into()
        }
        DeviceRefusal::FleetOnly => Usage::FleetOnly.into(),
        DeviceRefusal::Config(e) => e.into(),
    }
}

/// One run of `experiment` on `problem` (`custom`'s files, as [`problem_files`] read them) at
/// `epsilon`; its results unless it was a shard.
pub(crate) fn run_one(
    args: &RunArgs,
    experiment: &'static experiments::Experiment,
    problem: Option<ProblemFiles>,
    epsilon: Option<ldp_core::Epsilon>,
    merge_from: &[PathBuf],
    print_table: bool,
) -> Result<Vec<AlgorithmResult>, CliError> {
    let constants = constants_of(args.constants.unwrap_or(ConstantsArg::Calibrated));
    let algorithms = match (&problem, args.family) {
        (Some(files), Some(FamilyArg::Bandit)) => {
            let arms = files.report.arms.len();
            let max = bandit::policies::MAX_ARMS;
            if arms > max {
                return Err(Usage::TooManyArms { file: files.arms.clone(), arms, max }.into());
            }
            // `custom` (the one experiment with files) takes the ε given as it is.
            Some(bandit::table_learners(epsilon.is_some(), constants))
        }
        _ => None,
    };
    let noise_name = args.noise.clone();
    let request = RunRequest {
        epsilon,
        trials: args.trials,
        horizon: args.horizon,
        seed: args.seed,
        threads: args.threads,
        constants,
        beta_scale: args.beta_scale,
        batch: args.batch,
        in_flight: args.in_flight,
        prior: args.prior,
        coords: args.coords.is_some(),
        noise: noise_name.as_deref(),
        select: args.algorithms.clone().unwrap_or_default(),
        problem,
        algorithms,
        ..RunRequest::new(experiment)
    };
    let Settled { mut config, env, title } = request::settle(request).map_err(request_error)?;
    let epsilon = config.epsilon;
    let device = args.device.as_deref().map(runner::DeviceKind::parse).transpose()?;
    let on = DeviceRequest {
        device,
        routing: args.routing,
        user_budget: args.user_budget,
        sharded: args.shard.is_some(),
    };
    request::place(&mut config, experiment, on).map_err(device_refusal)?;
    let shard = match &args.shard {
        Some(text) => Shard::parse(text)?,
        None => Shard::WHOLE,
    };
    // What a shard's directory records for `merge`: every setting that changes results.
    let settings = RunArgs {
        trials: Some(config.trials),
        horizon: Some(config.horizon),
        seed: Some(config.seed),
        config: None,
        threads: None,
        out: None,
        data: None,
        shard: None,
        quiet: false,
        ..args.clone()
    };
    let out = args.out.clone().unwrap_or_else(|| {
        let dir = if shard.is_whole() {
            experiment.name.to_string()
        } else {
            format!("{}-shard{}of{}", experiment.name, shard.index, shard.count)
        };
        PathBuf::from("results").join(dir)
    });
    request::keep_ledgers_in(&mut config, &out);
    let data = args.data.clone();
    if args.verbose {
        let settings = serde_json::to_string_pretty(&config).unwrap_or_default();
        eprintln!("settings of {} ({}):\n{settings}", experiment.name, out.display());
    }
    let start = Instant::now();
    let shard_settings = if shard.is_whole() { None } else { Some(toml::to_string(&settings)?) };
    let run = Run { experiment, env, title: &title, config: &config, data: data.as_deref(), out: &out };
    let plot = PlotOptions { log_log: args.log_log };
    let mode = Mode {
        progress: !args.quiet,
        announce: true,
        shard,
        merge_from,
        plot,
        shard_settings: shard_settings.as_deref(),
        overwrite: args.overwrite,
    };
    match pipeline::run_experiment_as(&run, mode)? {
        Finished::Complete(results, files) => {
            if print_table {
                let heading = heading(experiment, args, epsilon, config.trials, config.horizon);
                let table = output::render_run(&results, &heading, args.format.unwrap_or_default());
                say!("{}", table.trim_end());
            }
            if let Some(warning) = host_sim::run::results::worse_than_uniform_warning(&results) {
                eprintln!("{warning}");
            }
            eprintln!(
                "{:.1} s; wrote {}",
                start.elapsed().as_secs_f64(),
                files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            );
            Ok(results)
        }
        Finished::Shard { jobs, total } => {
            say!(
                "shard {}/{}: {jobs} of the run's {total} jobs done in {:.1} s, in {}; when every shard is done: host-sim merge DIR... --out DIR",
                shard.index,
                shard.count,
                start.elapsed().as_secs_f64(),
                out.display()
            );
            Ok(Vec::new())
        }
    }
}

/// `merge`: the settings every shard directory recorded must agree; the run with those
/// settings is then finished from the shards' jobs alone.
pub(crate) fn merge(dirs: Vec<PathBuf>, out: Option<PathBuf>, data: Option<PathBuf>) -> Result<(), CliError> {
    let mut settings: Option<(PathBuf, RunArgs)> = None;
    for dir in &dirs {
        let path = dir.join(SHARD_SETTINGS);
        let text = std::fs::read_to_string(&path).map_err(file(FileOp::ReadShard, &path))?;
        let these: RunArgs = toml::from_str(&text)
            .map_err(|e| CliError::Settings { path: path.clone(), source: Box::new(e) })?;
        match &settings {
            None => settings = Some((dir.clone(), these)),
            Some((first, s)) if *s != these => {
                return Err(Usage::ShardsDiffer { first: first.clone(), other: dir.clone() }.into());
            }
            Some(_) => {}
        }
    }
    let (_, mut args) = settings.ok_or(Usage::NoShards)?;
    args.out = out;
    args.quiet = true;
    // `--data` is not recorded: the shards' machines may keep the data in other places.
    args.data = data.or_else(ldp_learn::env::data::default_dir);
    run(args, &dirs)
}
