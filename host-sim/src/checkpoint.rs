//! Resumable runs: every finished (trial, algorithm) job is appended to `jobs.jsonl` in the output
//! directory as soon as it ends. Started again with the same settings, a run reuses those jobs
//! and computes only the missing ones; since each job is a deterministic function of the seeds,
//! the final tables equal an uninterrupted run's. A line cut short by a kill is ignored.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// The file name inside the output directory.
pub const JOBS_FILE: &str = "jobs.jsonl";

#[derive(Serialize, Deserialize)]
struct Line {
    run: String,
    trial: usize,
    algo: usize,
    seconds: f64,
    curve: Vec<f64>,
}

/// Why a checkpoint could not be opened or appended to.
#[derive(Debug)]
#[non_exhaustive]
pub enum CheckpointError {
    /// The output directory or its jobs file could not be created or read.
    Open {
        /// The output directory.
        dir: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The directory holds jobs of a run with other settings.
    OtherSettings {
        /// The output directory.
        dir: PathBuf,
    },
    /// A finished job could not be appended to the jobs file.
    Append {
        /// The jobs file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A finished job could not be encoded (a bug).
    Encode(String),
    /// A thread panicked while appending, so the file may hold a torn line.
    Poisoned,
}

impl std::fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Open { dir, source } => write!(f, "{}: {source}", dir.display()),
            Self::OtherSettings { dir } => write!(
                f,
                "{} holds results of other settings: choose another --out or delete the directory",
                dir.display()
            ),
            Self::Append { path, source } => write!(f, "cannot append to {}: {source}", path.display()),
            Self::Encode(e) => write!(f, "{e}"),
            Self::Poisoned => write!(f, "checkpoint lock poisoned"),
        }
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Open { source, .. } | Self::Append { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The finished jobs of a run and the file new ones are appended to.
pub struct Checkpoint {
    path: PathBuf,
    run: String,
    done: HashMap<(usize, usize), (Vec<f64>, f64)>,
    file: Mutex<File>,
}

impl Checkpoint {
    /// Opens (or creates) `dir/jobs.jsonl` for run `run`. Jobs of another run in the same
    /// directory are an error: results of different settings must not mix.
    pub fn open(dir: &Path, run: &str, horizon: usize) -> Result<Self, CheckpointError> {
        let io = |source| CheckpointError::Open { dir: dir.to_path_buf(), source };
        std::fs::create_dir_all(dir).map_err(io)?;
        let path = dir.join(JOBS_FILE);
        let mut done = HashMap::new();
        if path.exists() {
            let reader = BufReader::new(File::open(&path).map_err(io)?);
            for line in reader.lines() {
                let line = line.map_err(io)?;
                // A kill mid-write leaves a partial last line: skip anything unparsable.
                let Ok(job) = serde_json::from_str::<Line>(&line) else { continue };
                if job.run != run {
                    return Err(CheckpointError::OtherSettings { dir: dir.to_path_buf() });
                }
                if job.curve.len() == horizon {
                    done.insert((job.trial, job.algo), (job.curve, job.seconds));
                }
            }
        }
        let file = OpenOptions::new().create(true).append(true).open(&path).map_err(io)?;
        Ok(Self { path, run: run.to_string(), done, file: Mutex::new(file) })
    }

    /// A finished job's curve and seconds.
    pub fn get(&self, trial: usize, algo: usize) -> Option<&(Vec<f64>, f64)> {
        self.done.get(&(trial, algo))
    }

    /// How many jobs were already finished when the run started.
    pub fn finished(&self) -> usize {
        self.done.len()
    }

    /// Appends a finished job and flushes it to disk.
    pub fn record(
        &self,
        trial: usize,
        algo: usize,
        curve: &[f64],
        seconds: f64,
    ) -> Result<(), CheckpointError> {
        let line = Line { run: self.run.clone(), trial, algo, seconds, curve: curve.to_vec() };
        let mut text = serde_json::to_string(&line).map_err(|e| CheckpointError::Encode(e.to_string()))?;
        text.push('\n');
        let err = |source| CheckpointError::Append { path: self.path.clone(), source };
        let mut file = self.file.lock().map_err(|_| CheckpointError::Poisoned)?;
        file.write_all(text.as_bytes()).map_err(err)?;
        file.sync_data().map_err(err)
    }
}
