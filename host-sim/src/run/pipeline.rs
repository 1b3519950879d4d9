//! The run of one experiment: its task built from the registry, the output directory locked and
//! its checkpoint opened (resumed, or merged from shards), every job on the [`Executor`], the
//! result files written as jobs finish. `host-sim run`, `merge`, Python's `ldp_bo.run` and
//! every run of a reproduction go through [`run_experiment_as`].

use std::path::{Path, PathBuf};

use crate::experiments::{self, EnvKind, Experiment};
use crate::run::checkpoint::Checkpoint;
use crate::run::executor::{Executor, Outcome as Ran, Progress, Shard};
use crate::run::output;
use crate::run::results::AlgorithmResult;
use crate::run::settings::{RunConfig, RunError, run_id};

/// One experiment run: what to run, with which settings, where to write.
pub struct Run<'a> {
    /// The experiment.
    pub experiment: &'static Experiment,
    /// Its environment (the experiment's, or with another noise).
    pub env: EnvKind,
    /// Title of tables and plots.
    pub title: &'a str,
    /// The settings.
    pub config: &'a RunConfig,
    /// The real-data directory, if any.
    pub data: Option<&'a Path>,
    /// The output directory.
    pub out: &'a Path,
}

/// How [`run_experiment_as`] runs an experiment.
#[derive(Clone, Copy, Debug)]
pub struct Mode<'a> {
    /// Show a progress bar.
    pub progress: bool,
    /// Print the experiment's name, title and settings once its task is built (so a bad
    /// setting gives one line of error and nothing else).
    pub announce: bool,
    /// Compute only this share of the jobs.
    pub shard: Shard,
    /// Merge: take every job from these shard directories' checkpoints, compute none.
    pub merge_from: &'a [PathBuf],
    /// How the plots are drawn.
    pub plot: crate::run::plot::PlotOptions,
    /// A shard's settings (TOML), for `merge`: written to [`SHARD_SETTINGS`] once the output
    /// directory is locked and its checkpoint found to be this run's.
    pub shard_settings: Option<&'a str>,
    /// Replace the results of another run in the output directory (`--overwrite`).
    pub overwrite: bool,
}

/// The file of a shard's settings in its output directory, for `merge`.
pub const SHARD_SETTINGS: &str = "shard.toml";

impl Mode<'_> {
    /// A whole run.
    pub const WHOLE: Mode<'static> = Mode {
        progress: false,
        announce: false,
        shard: Shard::WHOLE,
        merge_from: &[],
        plot: crate::run::plot::PlotOptions { log_log: false },
        shard_settings: None,
        overwrite: false,
    };
}

/// What [`run_experiment_as`] did.
pub enum Finished {
    /// The whole run: its results and the files written.
    Complete(Vec<AlgorithmResult>, Vec<PathBuf>),
    /// A shard: the jobs it owns (all computed and checkpointed) of the run's total.
    Shard {
        /// Jobs of this shard.
        jobs: usize,
        /// Jobs of the whole run.
        total: usize,
    },
}

/// Runs one experiment with the [`Executor`], resuming from the output directory's checkpoint
/// and recording every job to it, and writes its CSV, JSON and plot; returns the results and
/// the files written.
pub fn run_experiment(
    run: &Run,
    progress: bool,
    announce: bool,
) -> Result<(Vec<AlgorithmResult>, Vec<PathBuf>), RunError> {
    match run_experiment_as(run, Mode { progress, announce, ..Mode::WHOLE })? {
        Finished::Complete(results, files) => Ok((results, files)),
        Finished::Shard { jobs, total } => Err(RunError::ShardOnly { jobs, total }),
    }
}

/// [`run_experiment`] as a shard, or as the merge of shards (see [`Mode`]).
pub fn run_experiment_as(run: &Run, mode: Mode) -> Result<Finished, RunError> {
    let task = experiments::task(run.experiment, run.env, run.config, run.data)?;
    if mode.announce {
        let c = run.config;
        let shard = if mode.shard.is_whole() {
            String::new()
        } else {
            format!(", shard {}/{}", mode.shard.index, mode.shard.count)
        };
        eprintln!(
            "{}: {} — {} trials, T = {}, seed {}{shard}",
            run.experiment.name, run.title, c.trials, c.horizon, c.seed
        );
    }
    let mut checkpoint = open_checkpoint(run, mode.overwrite)?;
    if let Some(text) = mode.shard_settings {
        crate::run::files::write_whole(&run.out.join(SHARD_SETTINGS), text.as_bytes())?;
    }
    for dir in mode.merge_from {
        checkpoint.absorb(dir)?;
        // The shards' per-job ledgers: a fleet's members, or the one device on the wire's.
        let ledgers = if run.config.fleet.is_some() {
            crate::run::files::LEDGER_DIR
        } else {
            crate::run::files::DEVICE_LEDGER_DIR
        };
        copy_ledgers(&dir.join(ledgers), &run.out.join(ledgers))?;
    }
    if checkpoint.finished() > 0 && mode.merge_from.is_empty() {
        eprintln!(
            "resuming: {} finished trial×algorithm runs found in {}",
            checkpoint.finished(),
            run.out.display()
        );
    }
    let bar = Progress::new(mode.progress);
    let writer =
        output::Writer::new(run.out, run.experiment.name, run.title, run.config).plot_options(mode.plot);
    let mut executor =
        Executor::new(run.config).checkpoint(&checkpoint).observe(&bar).observe(&writer).shard(mode.shard);
    if !mode.merge_from.is_empty() {
        executor = executor.from_checkpoint_only();
    }
    match executor.run(task.as_ref())? {
        Ran::Complete(results) => Ok(Finished::Complete(results, writer.files())),
        Ran::Shard { jobs, total } => Ok(Finished::Shard { jobs, total }),
    }
}

/// The checkpoint of `run` in its output directory, which it locks until the checkpoint is
/// dropped (no other run writes there meanwhile).
fn open_checkpoint(run: &Run, overwrite: bool) -> Result<Checkpoint, RunError> {
    let id = run_id(run.experiment.name, run.title, run.config);
    let mut settings = run.config.clone();
    settings.threads = None;
    let settings =
        serde_json::json!({ "experiment": run.experiment.name, "title": run.title, "config": settings });
    Ok(Checkpoint::open_with(run.out, &id, run.config.horizon, Some(&settings), overwrite)?)
}

/// The rows of `learners` alone (indices into the task's learners: the places of their rows
/// among the run's results that are not references), at `run.config.trials` trials, and the
/// run's reference rows at as many: the jobs the run's checkpoint holds are reused, the new ones
/// are recorded there, and the run's files (its tables, plots and `run.json`) are left as they
/// were.
pub fn rows_of(run: &Run, learners: &[usize]) -> Result<Vec<AlgorithmResult>, RunError> {
    let task = experiments::task(run.experiment, run.env, run.config, run.data)?;
    let checkpoint = open_checkpoint(run, false)?;
    Executor::new(run.config).checkpoint(&checkpoint).only(learners.to_vec()).results(task.as_ref())
}

/// A shard's ledgers (a fleet's, or one device's on the wire: `*.csv`) into the merged run's
/// (`merge`). Nothing else: a partial file is a killed writer's, and a record of queries in
/// flight belongs to a job that has not finished since, while every job of a merged run
/// finished (its ledger holds what its record said).
fn copy_ledgers(from: &Path, to: &Path) -> Result<(), RunError> {
    fn err(p: &Path) -> impl Fn(std::io::Error) -> RunError + '_ {
        move |e| RunError::Output(output::OutputError::write(p, e.to_string()))
    }
    let entries = match std::fs::read_dir(from) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(err(from)(e)),
    };
    std::fs::create_dir_all(to).map_err(err(to))?;
    for entry in entries {
        let path = entry.map_err(err(from))?.path();
        if let Some(name) = path.file_name()
            && path.extension().is_some_and(|x| x == "csv")
        {
            std::fs::copy(&path, to.join(name)).map_err(err(&path))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Merging copies a shard's ledgers (`*.csv`) alone: not a partial file a killed writer
    /// left, nor a record of queries in flight (every job of a merged run finished, and its
    /// ledger holds what its record said).
    #[test]
    fn merging_copies_a_shards_ledgers_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("host-sim-copy-ledgers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (from, to) = (dir.join("shard/fleet"), dir.join("merged/fleet"));
        std::fs::create_dir_all(&from).unwrap();
        for name in ["trial0-learner0.csv", "trial0-learner0.csv.7-0.partial", "trial1-learner0.queries"] {
            std::fs::write(from.join(name), "x").unwrap();
        }
        copy_ledgers(&from, &to).unwrap();
        let copied: Vec<String> = std::fs::read_dir(&to)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(copied, ["trial0-learner0.csv"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
