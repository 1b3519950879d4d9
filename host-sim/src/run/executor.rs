//! The one executor (argmin's `Executor` with observers). Every experiment — GP BO, K-armed
//! bandits, experts, Dubey's sweeps, device runs — is a [`Task`]: the labels of its learners,
//! one (trial, learner) job, and how the rows aggregated per learner become the results. The
//! [`Executor`] runs the jobs: in parallel on the run's threads, collected in job order (so
//! results do not depend on the thread count), skipping the jobs a [`Checkpoint`] already holds
//! (so every experiment resumes after a kill), and only a [`Shard`]'s share of them when the run
//! is split across machines. Progress, checkpointing and writing the outputs are [`Observer`]s.
//!
//! Jobs are numbered trial-major: job `j` is trial `j / L` of learner `j % L` (L learners).
//! Shard `i/n` runs the jobs with `j % n == i`; `host-sim merge` gathers the shards' checkpoints
//! and finishes the run from them alone, so its outputs are byte for byte a one-machine run's.

use std::borrow::Cow;
use std::sync::Mutex;
use std::time::Instant;

use rayon::prelude::*;

use crate::run::checkpoint::{Checkpoint, CheckpointError, Steps};
use crate::run::results::{AlgorithmResult, aggregate_by};
use crate::run::settings::{ConfigError, RunConfig, RunError};
pub use ldp_learn::policy::names_learner;

/// What the executor runs: an experiment's learners, its jobs and how its results are made.
pub trait Task: Sync {
    /// The label of each learner; the run has one job per trial and learner.
    fn labels(&self) -> Vec<String>;
    /// The cumulative regret after each round of trial `trial` of learner `learner`: a
    /// deterministic function of the run's settings and the two indices.
    fn job(&self, trial: usize, learner: usize) -> Result<Vec<f64>, RunError>;
    /// The results from the rows aggregated per learner (in label order): e.g. with the
    /// uniform-play reference rows and the derived constants added. Its rows that are not
    /// references are one per learner, in label order (a task may relabel them: a sweep adds
    /// its point to each).
    fn finish(&self, rows: Vec<AlgorithmResult>) -> Result<Vec<AlgorithmResult>, RunError>;
    /// A number job (`trial`, `learner`) computed beside its curve, asked just after the job
    /// ends (the box experiments' simple regret): kept in the checkpoint, so a resumed or
    /// merged run gives it back by [`restore_note`](Self::restore_note). `None` for most tasks.
    fn job_note(&self, _trial: usize, _learner: usize) -> Option<f64> {
        None
    }
    /// The note of a job finished in an earlier run, from the checkpoint, before `finish`.
    fn restore_note(&self, _trial: usize, _learner: usize, _note: f64) {}
    /// Stack of each worker thread (`None`: rayon's default).
    fn stack_bytes(&self) -> Option<usize> {
        None
    }
    /// Whether a fleet (`--device fleet:N`, `mqtt://`) can answer every job: each queries a
    /// device that privatises. Tasks that run their own devices, or none, say no.
    fn fleet_ready(&self) -> bool {
        false
    }
}

/// A task with only some of another's learners (`--algorithms`). Each selected learner keeps
/// its index in the full task, so its seeds and curves are the full run's.
pub struct Select {
    inner: Box<dyn Task>,
    names: Vec<String>,
    /// Full-task index of each selected learner.
    keep: Vec<usize>,
}

impl Select {
    /// The learners of `inner` that one of `names` names ([`names_learner`]); an unknown name
    /// is an error listing the valid ones.
    pub fn new(inner: Box<dyn Task>, names: &[String]) -> Result<Self, ConfigError> {
        let labels = inner.labels();
        let unknown: Vec<String> =
            names.iter().filter(|n| !labels.iter().any(|l| names_learner(n, l))).cloned().collect();
        if !unknown.is_empty() {
            let mut valid: Vec<String> = Vec::new();
            for l in &labels {
                if !valid.contains(l) {
                    valid.push(l.clone());
                }
            }
            return Err(ConfigError::UnknownAlgorithms { unknown, valid });
        }
        let keep =
            (0..labels.len()).filter(|&i| names.iter().any(|n| names_learner(n, &labels[i]))).collect();
        Ok(Self { inner, names: names.to_vec(), keep })
    }
}

impl Task for Select {
    fn labels(&self) -> Vec<String> {
        let labels = self.inner.labels();
        self.keep.iter().map(|&i| labels[i].clone()).collect()
    }

    fn job(&self, trial: usize, learner: usize) -> Result<Vec<f64>, RunError> {
        let &index = self.keep.get(learner).ok_or(RunError::NoSuchJob { trial, learner })?;
        self.inner.job(trial, index)
    }

    /// The inner task finishes the selected rows with rows without trials standing in for the
    /// others, which are then dropped (its uniform-play references are kept).
    fn finish(&self, rows: Vec<AlgorithmResult>) -> Result<Vec<AlgorithmResult>, RunError> {
        let horizon = rows.first().map_or(0, |r| r.mean.len());
        let mut rows = rows.into_iter();
        let full = self
            .inner
            .labels()
            .into_iter()
            .enumerate()
            .map(|(i, label)| match self.keep.contains(&i) {
                true => rows.next().ok_or(RunError::NoSuchJob { trial: 0, learner: i }),
                false => Ok(stand_in(label, horizon)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let finished = self.inner.finish(full)?;
        Ok(finished
            .into_iter()
            .filter(|r| r.reference || self.names.iter().any(|n| names_learner(n, &r.label)))
            .collect())
    }

    fn job_note(&self, trial: usize, learner: usize) -> Option<f64> {
        self.inner.job_note(trial, *self.keep.get(learner)?)
    }

    fn restore_note(&self, trial: usize, learner: usize, note: f64) {
        if let Some(&index) = self.keep.get(learner) {
            self.inner.restore_note(trial, index, note);
        }
    }

    fn stack_bytes(&self) -> Option<usize> {
        self.inner.stack_bytes()
    }

    fn fleet_ready(&self) -> bool {
        self.inner.fleet_ready()
    }
}

/// The row of a learner that was not run, for a task's `finish`: zero curves and no trials (a
/// table a task prints shows it as missing, not as zero regret).
fn stand_in(label: String, horizon: usize) -> AlgorithmResult {
    AlgorithmResult {
        label,
        mean: vec![0.0; horizon],
        std: vec![0.0; horizon],
        finals: Vec::new(),
        seconds: 0.0,
        uniform_finals: Vec::new(),
        reference: false,
        constants: Vec::new(),
        reports_per_s: None,
    }
}

/// One job: a trial of a learner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Job {
    /// The trial.
    pub trial: usize,
    /// The learner's index in [`Task::labels`].
    pub learner: usize,
}

/// Watches a run. Every method has a default that does nothing.
pub trait Observer: Sync {
    /// The run starts: `todo` jobs to compute, `done` found finished (resumed).
    fn started(&self, _todo: usize, _done: usize) {}
    /// A job was computed (called from the worker thread, as soon as the job ends): its curve as
    /// the checkpoint's steps ([`Steps::decode`] gives it back), with its [`Task::job_note`].
    fn job_done(&self, _job: Job, _steps: &Steps, _seconds: f64, _note: Option<f64>) -> Result<(), RunError> {
        Ok(())
    }
    /// Every job of the run (or of the shard) has ended, successfully or not.
    fn jobs_ended(&self) {}
    /// The results of a whole run (not called for a shard).
    fn finished(&self, _results: &[AlgorithmResult]) -> Result<(), RunError> {
        Ok(())
    }
}

/// Which share of the jobs a run computes: `index` of `count` (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard, `0..count`.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl Shard {
    /// The whole run.
    pub const WHOLE: Self = Self { index: 0, count: 1 };

    /// Parses `i/n` with `0 ≤ i < n` (Slurm: `--array=0-(n-1)` and
    /// `$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT`).
    pub fn parse(text: &str) -> Result<Self, RunError> {
        let bad = || RunError::Config(ConfigError::Shard(text.to_string()));
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if index < count { Ok(Self { index, count }) } else { Err(bad()) }
    }

    /// Whether job number `j` is this shard's.
    pub fn owns(self, j: usize) -> bool {
        j % self.count == self.index
    }

    /// Whether this is the whole run.
    pub fn is_whole(self) -> bool {
        self.count == 1
    }
}

/// How a run ended.
#[derive(Debug)]
pub enum Outcome {
    /// Every job is done: the results.
    Complete(Vec<AlgorithmResult>),
    /// A shard's jobs are done (and checkpointed); `merge` makes the results.
    Shard {
        /// Jobs this shard owns.
        jobs: usize,
        /// Jobs of the whole run.
        total: usize,
    },
}

/// A finished job: its curve and the seconds it took.
type Finished = (Vec<f64>, f64);

/// A computed job: its curve as steps, the curve's rounds, its seconds.
type Kept = (Steps, usize, f64);

/// Runs a [`Task`] under a run's settings.
pub struct Executor<'a> {
    config: &'a RunConfig,
    checkpoint: Option<&'a Checkpoint>,
    observers: Vec<&'a dyn Observer>,
    shard: Shard,
    compute: bool,
    only: Option<Vec<usize>>,
}

impl<'a> Executor<'a> {
    /// An executor for `config` (trials, threads), with no checkpoint and no observer.
    pub fn new(config: &'a RunConfig) -> Self {
        Self {
            config,
            checkpoint: None,
            observers: Vec::new(),
            shard: Shard::WHOLE,
            compute: true,
            only: None,
        }
    }

    /// Runs only these learners (indices into [`Task::labels`]): their jobs alone are computed
    /// (or taken from the checkpoint, whose jobs keep the whole task's numbering), the task
    /// finishes with rows without trials standing in for the others, and the results are the
    /// chosen learners' rows and the reference rows. How a reproduction gives one claim's rows more
    /// trials than the rest of their run. Not for a shard: a shard's jobs are numbered over
    /// every learner.
    pub fn only(mut self, learners: Vec<usize>) -> Self {
        self.only = Some(learners);
        self
    }

    /// Reuses the jobs `checkpoint` holds and appends every new one to it.
    pub fn checkpoint(mut self, checkpoint: &'a Checkpoint) -> Self {
        self.checkpoint = Some(checkpoint);
        self.observers.push(checkpoint);
        self
    }

    /// Adds an observer.
    pub fn observe(mut self, observer: &'a dyn Observer) -> Self {
        self.observers.push(observer);
        self
    }

    /// Computes only `shard`'s jobs. A shard keeps no results of its own: give it a
    /// [`Executor::checkpoint`], which is where its jobs go for `merge`.
    pub fn shard(mut self, shard: Shard) -> Self {
        self.shard = shard;
        self
    }

    /// Computes nothing: every job must be in the checkpoint (`merge`), else
    /// [`RunError::Incomplete`].
    pub fn from_checkpoint_only(mut self) -> Self {
        self.compute = false;
        self
    }

    /// Runs `task`: the outcome, or the first error in job order (no job starts after an error).
    pub fn run(&self, task: &dyn Task) -> Result<Outcome, RunError> {
        let config = self.config;
        if config.trials == 0 || config.horizon == 0 {
            return Err(ConfigError::NothingToRun.into());
        }
        let labels = task.labels();
        let chosen = |learner: &usize| self.only.as_ref().is_none_or(|only| only.contains(learner));
        let learners: Vec<usize> = (0..labels.len()).filter(chosen).collect();
        if self.only.as_ref().is_some_and(|only| only.iter().any(|&l| l >= labels.len())) {
            return Err(RunError::NoSuchJob { trial: 0, learner: labels.len() });
        }
        let jobs: Vec<Job> = (0..config.trials)
            .flat_map(|trial| learners.iter().map(move |&learner| Job { trial, learner }))
            .collect();
        let mine: Vec<usize> = (0..jobs.len()).filter(|&j| self.shard.owns(j)).collect();
        let done = |trial: usize, learner: usize| self.checkpoint.and_then(|c| c.get(trial, learner));
        let todo: Vec<usize> = mine
            .iter()
            .copied()
            .filter(|&j| !self.checkpoint.is_some_and(|c| c.contains(jobs[j].trial, jobs[j].learner)))
            .collect();
        if let Some(checkpoint) = self.checkpoint {
            for &j in &mine {
                if let Some(note) = checkpoint.note(jobs[j].trial, jobs[j].learner) {
                    task.restore_note(jobs[j].trial, jobs[j].learner, note);
                }
            }
        }
        if !self.compute
            && let Some(&first) = todo.first()
        {
            let job = jobs[first];
            return Err(RunError::Incomplete {
                missing: todo.len(),
                total: jobs.len(),
                first: (job.trial, labels[job.learner].clone()),
            });
        }
        for o in &self.observers {
            o.started(todo.len(), mine.len() - todo.len());
        }
        let mut threads = rayon::ThreadPoolBuilder::new().num_threads(config.threads.unwrap_or(0));
        if let Some(bytes) = task.stack_bytes() {
            threads = threads.stack_size(bytes);
        }
        let threads = threads
            .build()
            .map_err(|e| ConfigError::Threads { threads: config.threads, message: e.to_string() })?;
        // Learner by learner (each learner's trials in parallel), so that a learner's row is
        // aggregated, and its curves dropped, as soon as its last trial ends: memory holds a few
        // learners' curves, not the whole run's. After the first error no new job starts (the
        // ones running finish and are recorded, so a resumed run does not compute them again).
        let whole = self.shard.is_whole();
        let mut order = todo.clone();
        order.sort_by_key(|&j| (jobs[j].learner, jobs[j].trial));
        let mut open: Vec<Open> = (0..labels.len()).map(|_| Open::new(config.trials)).collect();
        for &j in &todo {
            open[jobs[j].learner].missing += 1;
        }
        let open: Vec<Mutex<Open>> = open.into_iter().map(Mutex::new).collect();
        let failed: Mutex<Option<(usize, RunError)>> = Mutex::new(None);
        threads.install(|| {
            order.par_iter().for_each(|&j| {
                if failed.lock().map_or(true, |f| f.is_some()) {
                    return;
                }
                let job = jobs[j];
                match self.compute_one(task, job) {
                    Err(e) => {
                        if let Ok(mut f) = failed.lock()
                            && f.as_ref().is_none_or(|(k, _)| j < *k)
                        {
                            *f = Some((j, e));
                        }
                    }
                    Ok(kept) if whole => {
                        if let Ok(mut slot) = open[job.learner].lock() {
                            slot.computed[job.trial] = Some(kept);
                            slot.missing -= 1;
                            if slot.missing == 0 {
                                slot.close(&labels[job.learner], job.learner, &done);
                            }
                        }
                    }
                    Ok(_) => {} // a shard's jobs live in its checkpoint
                }
            });
        });
        for o in &self.observers {
            o.jobs_ended();
        }
        // A job that panicked has already unwound through rayon, so a poisoned lock only means
        // its data is as complete as it got: read it anyway.
        if let Some((_, e)) = failed.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
            return Err(e);
        }
        if !whole {
            // Every job of the shard is in its checkpoint: `merge` makes the results.
            return Ok(Outcome::Shard { jobs: mine.len(), total: jobs.len() });
        }
        let mut rows: Vec<Option<AlgorithmResult>> = Vec::with_capacity(labels.len());
        for (learner, slot) in open.into_iter().enumerate() {
            if !chosen(&learner) {
                rows.push(None);
                continue;
            }
            let mut slot = slot.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
            if slot.row.is_none() {
                slot.close(&labels[learner], learner, &done); // every trial was in the checkpoint
            }
            rows.push(Some(slot.row.ok_or(RunError::NoSuchJob { trial: 0, learner })??));
        }
        let horizon = rows.iter().flatten().next().map_or(config.horizon, |r| r.mean.len());
        let rows = rows
            .into_iter()
            .zip(&labels)
            .map(|(row, label)| row.unwrap_or_else(|| stand_in(label.clone(), horizon)))
            .collect();
        let mut results = task.finish(rows)?;
        if self.only.is_some() {
            // The rows that are not references are one per learner, in label order.
            let mut learner = 0;
            results.retain(|r| {
                let keep = r.reference || learners.contains(&learner);
                learner += usize::from(!r.reference);
                keep
            });
        }
        for o in &self.observers {
            o.finished(&results)?;
        }
        Ok(Outcome::Complete(results))
    }

    /// Computes one job and tells the observers. The curve is encoded once, as the checkpoint's
    /// steps, for the checkpoint and for its row (kilobytes where the curve is megabytes).
    fn compute_one(&self, task: &dyn Task, job: Job) -> Result<Kept, RunError> {
        let start = Instant::now();
        let curve = task.job(job.trial, job.learner)?;
        let seconds = start.elapsed().as_secs_f64();
        let note = task.job_note(job.trial, job.learner);
        let steps = Steps::encode(&curve)?;
        for o in &self.observers {
            o.job_done(job, &steps, seconds, note)?;
        }
        Ok((steps, curve.len(), seconds))
    }

    /// Runs the whole of `task` and returns its results.
    pub fn results(&self, task: &dyn Task) -> Result<Vec<AlgorithmResult>, RunError> {
        match self.run(task)? {
            Outcome::Complete(results) => Ok(results),
            Outcome::Shard { jobs, total } => Err(RunError::ShardOnly { jobs, total }),
        }
    }
}

/// A learner's row while its trials are being computed.
struct Open {
    /// The computed trials (the others are in the checkpoint): their steps, rounds and seconds.
    computed: Vec<Option<Kept>>,
    /// How many trials are still being computed.
    missing: usize,
    /// The aggregated row, once every trial is in (or a trial missing from both).
    row: Option<Result<AlgorithmResult, RunError>>,
}

impl Open {
    fn new(trials: usize) -> Self {
        Self { computed: (0..trials).map(|_| None).collect(), missing: 0, row: None }
    }

    /// Aggregates the row from the computed trials and the checkpoint's (`done(trial)`), in
    /// trial order, one curve decoded at a time ([`aggregate_by`]), and drops the computed
    /// steps.
    fn close(&mut self, label: &str, learner: usize, done: &impl Fn(usize, usize) -> Option<Finished>) {
        let computed = std::mem::take(&mut self.computed);
        let mut seconds: Vec<f64> = vec![0.0; computed.len()];
        let curve = |trial: usize| -> Result<Cow<'static, [f64]>, RunError> {
            let (curve, secs) = match &computed[trial] {
                Some((steps, rounds, secs)) => {
                    let curve = steps.decode(*rounds).map_err(|e| {
                        RunError::Checkpoint(CheckpointError::Encode(format!(
                            "trial {trial} of {label} does not decode from its own steps: {e:?}"
                        )))
                    })?;
                    (curve, *secs)
                }
                None => done(trial, learner).ok_or(RunError::NoSuchJob { trial, learner })?,
            };
            seconds[trial] = secs;
            Ok(Cow::Owned(curve))
        };
        let row = aggregate_by(label.to_string(), computed.len(), curve, 0.0).map(|mut row| {
            row.seconds = seconds.iter().fold(0.0, |total, s| total + s);
            row
        });
        self.row = Some(row);
    }
}

pub use progress::Progress;

/// The progress bar: one step per computed job (indicatif's, with the `cli` feature).
#[cfg(feature = "cli")]
mod progress {
    use indicatif::{ProgressBar, ProgressStyle};

    use super::{Job, Observer, RunError};

    /// The progress bar on standard error.
    pub struct Progress {
        bar: ProgressBar,
    }

    impl Progress {
        /// A progress bar on standard error, hidden unless `show`.
        pub fn new(show: bool) -> Self {
            let bar = if show { ProgressBar::new(0) } else { ProgressBar::hidden() };
            bar.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:40}] {pos}/{len} trial×algorithm runs, eta {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            Self { bar }
        }
    }

    impl Observer for Progress {
        fn started(&self, todo: usize, _done: usize) {
            self.bar.set_length(todo as u64);
        }
        fn job_done(
            &self,
            _job: Job,
            _steps: &super::Steps,
            _seconds: f64,
            _note: Option<f64>,
        ) -> Result<(), RunError> {
            self.bar.inc(1);
            Ok(())
        }
        fn jobs_ended(&self) {
            self.bar.finish_and_clear();
        }
    }
}

/// Without the `cli` feature (as the Python package builds the library) no bar is drawn.
#[cfg(not(feature = "cli"))]
mod progress {
    /// No progress bar: this build has no indicatif, so nothing is shown.
    pub struct Progress;

    impl Progress {
        /// Nothing is shown, whatever `show` asks.
        pub fn new(_show: bool) -> Self {
            Self
        }
    }

    impl super::Observer for Progress {}
}

impl Observer for Checkpoint {
    fn job_done(&self, job: Job, steps: &Steps, seconds: f64, note: Option<f64>) -> Result<(), RunError> {
        Ok(self.record_steps(job.trial, job.learner, steps, seconds, note)?)
    }
}
