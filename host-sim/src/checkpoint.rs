//! Resumable runs: every finished (trial, algorithm) job is appended to `jobs.jsonl` in the output
//! directory as soon as it ends. Started again with the same settings, a run reuses those jobs
//! and computes only the missing ones; since each job is a deterministic function of the seeds,
//! the final tables equal an uninterrupted run's. A line cut short by a kill is ignored.
//!
//! A curve is stored as the steps that rebuild it bit for bit ([`Steps`]): round t adds one of a
//! few distinct values to the running total (a regret curve adds the gap of the arm played), so
//! the line holds those values once and, per round, the index of the one added, deflated. A
//! T = 10⁵ curve takes kilobytes instead of the two megabytes of its decimal text.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
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
    steps: Steps,
}

/// A curve as the steps that rebuild it exactly: `values`, and per round an index into them
/// (little-endian u32, deflated, base64). Index `i` adds `values[i]` to the running total;
/// index `i | ABSOLUTE` sets the total to `values[i]` (where adding would not give the exact
/// bits).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Steps {
    values: Vec<f64>,
    rounds: String,
}

const ABSOLUTE: u32 = 1 << 31;

impl Steps {
    /// The steps of `curve`.
    pub fn encode(curve: &[f64]) -> Result<Self, CheckpointError> {
        let mut values: Vec<f64> = Vec::new();
        let mut index: HashMap<u64, u32> = HashMap::new();
        let mut raw = Vec::with_capacity(4 * curve.len());
        let mut total = 0.0f64;
        for &x in curve {
            let d = x - total;
            let (value, flag) = if (total + d).to_bits() == x.to_bits() { (d, 0) } else { (x, ABSOLUTE) };
            // The flag belongs to the round, not to the value: one entry serves both uses.
            let i = match index.get(&value.to_bits()) {
                Some(&i) => i,
                None => {
                    let i = u32::try_from(values.len())
                        .ok()
                        .filter(|&n| n < ABSOLUTE)
                        .ok_or_else(|| CheckpointError::Encode("too many distinct steps".into()))?;
                    index.insert(value.to_bits(), i);
                    values.push(value);
                    i
                }
            };
            raw.extend_from_slice(&(i | flag).to_le_bytes());
            total = x;
        }
        let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&raw).map_err(|e| CheckpointError::Encode(e.to_string()))?;
        let deflated = z.finish().map_err(|e| CheckpointError::Encode(e.to_string()))?;
        Ok(Self { values, rounds: BASE64.encode(deflated) })
    }

    /// The curve, or `None` if the steps are damaged.
    pub fn decode(&self) -> Option<Vec<f64>> {
        let deflated = BASE64.decode(&self.rounds).ok()?;
        let mut raw = Vec::new();
        flate2::read::DeflateDecoder::new(deflated.as_slice()).read_to_end(&mut raw).ok()?;
        let mut total = 0.0f64;
        let mut curve = Vec::with_capacity(raw.len() / 4);
        for chunk in raw.chunks(4) {
            let i = u32::from_le_bytes(chunk.try_into().ok()?);
            let value = *self.values.get((i & !ABSOLUTE) as usize)?;
            total = if i & ABSOLUTE == 0 { total + value } else { value };
            curve.push(total);
        }
        Some(curve)
    }
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
    /// A directory to merge holds no jobs file.
    NoJobs {
        /// The directory.
        dir: PathBuf,
    },
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
            Self::NoJobs { dir } => write!(
                f,
                "{} holds no {JOBS_FILE}: give the --out directories of `host-sim run ... --shard i/n`",
                dir.display()
            ),
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
    horizon: usize,
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
                if let Some(curve) = job.steps.decode().filter(|c| c.len() == horizon) {
                    done.insert((job.trial, job.algo), (curve, job.seconds));
                }
            }
        }
        let file = OpenOptions::new().create(true).append(true).open(&path).map_err(io)?;
        Ok(Self { path, run: run.to_string(), horizon, done, file: Mutex::new(file) })
    }

    /// Appends the finished jobs of the checkpoint in `dir` (of the same run: a shard's) that
    /// this one lacks, in (trial, algorithm) order; returns how many.
    pub fn absorb(&mut self, dir: &Path) -> Result<usize, CheckpointError> {
        if !dir.join(JOBS_FILE).is_file() {
            return Err(CheckpointError::NoJobs { dir: dir.to_path_buf() });
        }
        let other = Self::open(dir, &self.run, self.horizon)?;
        let mut keys: Vec<&(usize, usize)> = other.done.keys().collect();
        keys.sort_unstable();
        let mut added = 0;
        for &(trial, algo) in keys {
            if self.done.contains_key(&(trial, algo)) {
                continue;
            }
            if let Some((curve, seconds)) = other.done.get(&(trial, algo)) {
                self.record(trial, algo, curve, *seconds)?;
                self.done.insert((trial, algo), (curve.clone(), *seconds));
                added += 1;
            }
        }
        Ok(added)
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
        let line = Line { run: self.run.clone(), trial, algo, seconds, steps: Steps::encode(curve)? };
        let mut text = serde_json::to_string(&line).map_err(|e| CheckpointError::Encode(e.to_string()))?;
        text.push('\n');
        let err = |source| CheckpointError::Append { path: self.path.clone(), source };
        let mut file = self.file.lock().map_err(|_| CheckpointError::Poisoned)?;
        file.write_all(text.as_bytes()).map_err(err)?;
        file.sync_data().map_err(err)
    }
}
