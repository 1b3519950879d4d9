//! Resumable runs: every finished (trial, algorithm) job is appended to `jobs.jsonl` in the output
//! directory as soon as it ends. Started again with the same settings, a run reuses those jobs
//! and computes only the missing ones; since each job is a deterministic function of the seeds,
//! the final tables equal an uninterrupted run's. A line cut short by a kill is ignored, and
//! ended with a newline before anything is appended after it, so the next record starts a line
//! of its own.
//!
//! An output directory has one writer at a time: [`Checkpoint::open`] holds the directory's
//! [`OutLock`] for as long as the checkpoint lives, so a second run into it is refused whatever
//! the timing; commands that write a directory without a checkpoint take the lock themselves.
//!
//! A curve is stored as the steps that rebuild it bit for bit ([`Steps`]): round t adds one of a
//! few distinct values to the running total (a regret curve adds the gap of the arm played), so
//! the line holds those values once and, per round, the index of the one added, deflated. A
//! T = 10⁵ curve takes kilobytes instead of the two megabytes of its decimal text.

use std::collections::HashMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{BufRead, BufReader, Read, Write};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// The file name inside the output directory.
pub const JOBS_FILE: &str = "jobs.jsonl";

/// The settings of the run whose jobs the directory holds ([`Checkpoint::open_with`]), to name
/// what differs when a run with other settings meets them.
pub const SETTINGS_FILE: &str = "settings.json";

/// The directories of a run's per-job ledgers (`crate::run::files`): results of its settings, like
/// its jobs.
const LEDGER_DIRS: [&str; 2] = [crate::run::files::LEDGER_DIR, crate::run::files::DEVICE_LEDGER_DIR];

/// The lock file inside an output directory ([`OutLock`]).
pub const LOCK_FILE: &str = "run.lock";

/// How every record starts (serde writes the fields in order): where a record glued to a torn
/// line by versions before the newline fix begins.
const RECORD_START: &[u8] = b"{\"run\":";

#[derive(Serialize, Deserialize)]
struct Line {
    run: String,
    trial: usize,
    algo: usize,
    seconds: f64,
    steps: Steps,
    /// What the job computed beside its curve ([`crate::run::executor::Task::job_note`]: the
    /// box experiments' simple regret); absent for most tasks, so their lines are as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<f64>,
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

    /// The curve, of at most `max_rounds` rounds: inflation stops past `4 · max_rounds` bytes
    /// (a round's index is 4 bytes), so a line cannot make memory grow beyond what a job holds.
    pub fn decode(&self, max_rounds: usize) -> Result<Vec<f64>, StepsError> {
        if self.values.len() > max_rounds {
            return Err(StepsError::TooLong);
        }
        let deflated = BASE64.decode(&self.rounds).map_err(|_| StepsError::Damaged)?;
        let limit = max_rounds.saturating_mul(4);
        let mut raw = Vec::new();
        flate2::read::DeflateDecoder::new(deflated.as_slice())
            .take(limit as u64 + 1)
            .read_to_end(&mut raw)
            .map_err(|_| StepsError::Damaged)?;
        if raw.len() > limit {
            return Err(StepsError::TooLong);
        }
        let mut total = 0.0f64;
        let mut curve = Vec::with_capacity(raw.len() / 4);
        for chunk in raw.chunks(4) {
            let i = u32::from_le_bytes(chunk.try_into().map_err(|_| StepsError::Damaged)?);
            let value = *self.values.get((i & !ABSOLUTE) as usize).ok_or(StepsError::Damaged)?;
            total = if i & ABSOLUTE == 0 { total + value } else { value };
            curve.push(total);
        }
        Ok(curve)
    }
}

/// Why [`Steps::decode`] gave no curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepsError {
    /// Not steps this module wrote (bad base64 or deflate, an index out of range).
    Damaged,
    /// More rounds, or more distinct steps, than the bound: not a job of this run.
    TooLong,
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
        /// The settings that differ, as `name: there → here` (empty if the directory does not
        /// record its settings).
        differences: Vec<String>,
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
    /// Another process is writing into the output directory (it holds its [`OutLock`]).
    InUse {
        /// The output directory.
        dir: PathBuf,
        /// The process holding the lock, as it recorded itself (if it could be read).
        pid: Option<u32>,
    },
    /// A record holds more than a job of the run can: more rounds than the horizon.
    TooLong {
        /// The jobs file.
        path: PathBuf,
        /// Its line (1-based).
        line: usize,
        /// The run's horizon.
        horizon: usize,
    },
}

impl std::fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Open { dir, source } => write!(f, "{}: {source}", dir.display()),
            Self::OtherSettings { dir, differences } => {
                write!(f, "{} holds results of other settings", dir.display())?;
                if !differences.is_empty() {
                    write!(f, " ({})", differences.join("; "))?;
                }
                write!(f, ": add --overwrite to replace them, or choose another --out")
            }
            Self::Append { path, source } => write!(f, "cannot append to {}: {source}", path.display()),
            Self::Encode(e) => write!(f, "{e}"),
            Self::Poisoned => write!(f, "checkpoint lock poisoned"),
            Self::NoJobs { dir } => write!(
                f,
                "{} holds no {JOBS_FILE}: give the --out directories of `host-sim run ... --shard i/n`",
                dir.display()
            ),
            Self::InUse { dir, pid } => write!(
                f,
                "{} is being written by another host-sim run{}: one run per output directory; wait for it to \
                 end, or choose another --out",
                dir.display(),
                pid.map_or(String::new(), |p| format!(" (process {p})"))
            ),
            Self::TooLong { path, line, horizon } => write!(
                f,
                "{} line {line} holds more than a job of this run's {horizon} rounds can: it was not written by \
                 this run; delete the line (its job is computed again) or choose another --out",
                path.display()
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

/// An output directory held for one writer: an OS lock on its `run.lock`, released when this
/// is dropped or the process ends (a killed run leaves no stale lock).
#[derive(Debug)]
pub struct OutLock {
    _file: File,
}

impl OutLock {
    /// Locks `dir` (created if needed), or refuses with [`CheckpointError::InUse`] if another
    /// process holds it; never waits. Partial files a killed writer left there, or in its
    /// ledger directories, are removed.
    pub fn acquire(dir: &Path) -> Result<Self, CheckpointError> {
        let io = |source| CheckpointError::Open { dir: dir.to_path_buf(), source };
        std::fs::create_dir_all(dir).map_err(io)?;
        let path = dir.join(LOCK_FILE);
        let mut file =
            OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                // The holder writes "<pid>\n" once it has the lock; a half-written one is no pid.
                let mut text = String::new();
                let pid =
                    file.read_to_string(&mut text).ok().and_then(|_| text.strip_suffix('\n')?.parse().ok());
                return Err(CheckpointError::InUse { dir: dir.to_path_buf(), pid });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).and_then(|()| writeln!(file, "{}", std::process::id())).map_err(io)?;
        crate::run::files::remove_partials(dir).map_err(io)?;
        // And the ledgers' and records' (`write_whole` writes them there too). A ledger
        // directory that is not one is for the ledger's own writer to report.
        for ledgers in LEDGER_DIRS.map(|l| dir.join(l)).iter().filter(|l| l.is_dir()) {
            crate::run::files::remove_partials(ledgers).map_err(io)?;
        }
        Ok(Self { _file: file })
    }
}

/// Whether the ledger directory `dir` holds results of a run: a ledger (`*.csv`: what a job's
/// devices spent), or a record of queries in flight that holds more than its header (queries a
/// killed or failed job sent, or carried). A directory that holds neither (empty, or only the
/// record a job killed before its first query began) is no run's results; one that cannot be
/// read is taken to hold some.
fn holds_results(dir: &Path) -> bool {
    let header = ldp_link::fleet::record::RECORD_HEADER.len() as u64 + 1;
    match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(_) => true,
        Ok(entries) => entries.into_iter().any(|entry| {
            let Ok(entry) = entry else { return true };
            let path = entry.path();
            match path.extension().and_then(|x| x.to_str()) {
                Some("csv") => true,
                Some("queries") => entry.metadata().map_or(true, |m| m.len() > header),
                _ => false,
            }
        }),
    }
}

/// The finished jobs of a run, by (trial, algorithm): the curve, kept encoded (decoded when a
/// row is aggregated: a T = 10⁶ curve is 8 MB, and a raised run holds thousands), and its
/// seconds.
type Done = HashMap<(usize, usize), (Steps, f64)>;

/// The notes of the finished jobs that have one, by (trial, algorithm).
type Notes = HashMap<(usize, usize), f64>;

/// The finished jobs of run `run` (of `horizon` rounds) in the jobs file `path` of `dir`, and
/// whether the file ends with a whole line (or is empty). A line that does not parse is one cut
/// short by a kill and is skipped; a line may also hold a torn record with a whole one glued
/// after it (as versions that did not end a torn line wrote them): each record in it is read.
fn read_jobs(
    dir: &Path,
    path: &Path,
    run: &str,
    horizon: usize,
) -> Result<(Done, Notes, bool), CheckpointError> {
    let io = |source| CheckpointError::Open { dir: dir.to_path_buf(), source };
    let mut reader = BufReader::new(File::open(path).map_err(io)?);
    let mut done = HashMap::new();
    let mut notes = HashMap::new();
    let mut line = Vec::new();
    let mut ended = true;
    for number in 1.. {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(io)? == 0 {
            break;
        }
        ended = line.ends_with(b"\n");
        let mut starts: Vec<usize> = line
            .windows(RECORD_START.len())
            .enumerate()
            .filter(|(_, w)| *w == RECORD_START)
            .map(|(i, _)| i)
            .collect();
        starts.push(line.len());
        for record in starts.windows(2).map(|w| &line[w[0]..w[1]]) {
            let Ok(job) = serde_json::from_slice::<Line>(record) else { continue };
            if job.run != run {
                return Err(CheckpointError::OtherSettings {
                    dir: dir.to_path_buf(),
                    differences: Vec::new(),
                });
            }
            match job.steps.decode(horizon) {
                Ok(curve) if curve.len() == horizon => {
                    done.insert((job.trial, job.algo), (job.steps, job.seconds));
                    match job.note {
                        Some(note) => notes.insert((job.trial, job.algo), note),
                        None => notes.remove(&(job.trial, job.algo)),
                    };
                }
                Err(StepsError::TooLong) => {
                    return Err(CheckpointError::TooLong { path: path.to_path_buf(), line: number, horizon });
                }
                _ => {} // damaged: the job is computed again
            }
        }
    }
    Ok((done, notes, ended))
}

/// The settings that differ between two recorded settings, as `name: there → here` (at most
/// six, then how many more).
fn differences(there: &serde_json::Value, here: &serde_json::Value) -> Vec<String> {
    fn flatten(
        prefix: String,
        value: &serde_json::Value,
        out: &mut std::collections::BTreeMap<String, String>,
    ) {
        match value {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    flatten(key, v, out);
                }
            }
            other => {
                out.insert(prefix, other.to_string());
            }
        }
    }
    let (mut a, mut b) = (Default::default(), Default::default());
    flatten(String::new(), there, &mut a);
    flatten(String::new(), here, &mut b);
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let none = "(none)".to_string();
    let mut out: Vec<String> = keys
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            let name = k.strip_prefix("config.").unwrap_or(k);
            format!("{name}: {} there, {} here", a.get(k).unwrap_or(&none), b.get(k).unwrap_or(&none))
        })
        .collect();
    if out.len() > 6 {
        let more = out.len() - 6;
        out.truncate(6);
        out.push(format!("{more} more"));
    }
    out
}

/// The finished jobs of a run and the file new ones are appended to.
pub struct Checkpoint {
    path: PathBuf,
    run: String,
    horizon: usize,
    done: Done,
    notes: Notes,
    file: Mutex<File>,
    _lock: OutLock,
}

impl Checkpoint {
    /// Locks `dir` ([`OutLock`], held until the checkpoint is dropped) and opens (or creates)
    /// `dir/jobs.jsonl` for run `run`. Jobs of another run in the same directory are an error:
    /// results of different settings must not mix. A last line cut short is ended with a
    /// newline, so that the next record is a line of its own.
    pub fn open(dir: &Path, run: &str, horizon: usize) -> Result<Self, CheckpointError> {
        Self::open_with(dir, run, horizon, None, false)
    }

    /// [`Checkpoint::open`], recording `settings` in [`SETTINGS_FILE`] so that a run with other
    /// settings is told which differ (also when it finished no job but left ledgers); with
    /// `overwrite`, the jobs, settings, ledgers and `run.json` of whatever run the directory
    /// held are deleted first (once the directory is locked).
    pub fn open_with(
        dir: &Path,
        run: &str,
        horizon: usize,
        settings: Option<&serde_json::Value>,
        overwrite: bool,
    ) -> Result<Self, CheckpointError> {
        let lock = OutLock::acquire(dir)?;
        let io = |source| CheckpointError::Open { dir: dir.to_path_buf(), source };
        let path = dir.join(JOBS_FILE);
        let recorded = dir.join(SETTINGS_FILE);
        if overwrite {
            for file in [path.clone(), recorded.clone(), dir.join("run.json")] {
                match std::fs::remove_file(&file) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
                    _ => {}
                }
            }
            // The replaced run's ledgers (what its devices spent) are its results too.
            for ledgers in LEDGER_DIRS {
                match std::fs::remove_dir_all(dir.join(ledgers)) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
                    _ => {}
                }
            }
        }
        let (done, notes, ended) = match path.exists() {
            true => read_jobs(dir, &path, run, horizon).map_err(|e| match (e, settings) {
                (CheckpointError::OtherSettings { dir, .. }, Some(here)) => {
                    let there = std::fs::read(&recorded).ok().and_then(|b| serde_json::from_slice(&b).ok());
                    let differences = there.map(|there| differences(&there, here)).unwrap_or_default();
                    CheckpointError::OtherSettings { dir, differences }
                }
                (e, _) => e,
            })?,
            false => (HashMap::new(), HashMap::new(), true),
        };
        // A run that finished no job may still have left results: the ledgers of jobs that
        // failed after their devices spent. Another run's settings must not take them as its own
        // (review 15), so they pin the settings as finished jobs do.
        if done.is_empty()
            && let Some(here) = settings
            && LEDGER_DIRS.iter().any(|l| holds_results(&dir.join(l)))
            && let Some(there) = std::fs::read(&recorded).ok().and_then(|b| serde_json::from_slice(&b).ok())
            && there != *here
        {
            let differences = differences(&there, here);
            return Err(CheckpointError::OtherSettings { dir: dir.to_path_buf(), differences });
        }
        if let Some(settings) = settings {
            let text =
                serde_json::to_string_pretty(settings).map_err(|e| CheckpointError::Encode(e.to_string()))?;
            crate::run::files::write_whole(&recorded, text.as_bytes())
                .map_err(|e| io(std::io::Error::other(e.to_string())))?;
        }
        let mut file = OpenOptions::new().create(true).append(true).open(&path).map_err(io)?;
        if !ended {
            file.write_all(b"\n").and_then(|()| file.sync_data()).map_err(io)?;
        }
        Ok(Self { path, run: run.to_string(), horizon, done, notes, file: Mutex::new(file), _lock: lock })
    }

    /// Appends the finished jobs of the checkpoint in `dir` (of the same run: a shard's) that
    /// this one lacks, in (trial, algorithm) order; returns how many. `dir` is only read.
    pub fn absorb(&mut self, dir: &Path) -> Result<usize, CheckpointError> {
        let path = dir.join(JOBS_FILE);
        if !path.is_file() {
            return Err(CheckpointError::NoJobs { dir: dir.to_path_buf() });
        }
        let (other, notes, _) = read_jobs(dir, &path, &self.run, self.horizon)?;
        let mut keys: Vec<&(usize, usize)> = other.keys().collect();
        keys.sort_unstable();
        let mut added = 0;
        for &(trial, algo) in keys {
            if self.done.contains_key(&(trial, algo)) {
                continue;
            }
            if let Some((steps, seconds)) = other.get(&(trial, algo)) {
                let note = notes.get(&(trial, algo)).copied();
                self.record_steps(trial, algo, steps, *seconds, note)?;
                self.done.insert((trial, algo), (steps.clone(), *seconds));
                if let Some(note) = note {
                    self.notes.insert((trial, algo), note);
                }
                added += 1;
            }
        }
        Ok(added)
    }

    /// A finished job's curve (decoded afresh: O(T) memory a call) and seconds.
    pub fn get(&self, trial: usize, algo: usize) -> Option<(Vec<f64>, f64)> {
        let (steps, seconds) = self.done.get(&(trial, algo))?;
        steps.decode(self.horizon).ok().map(|curve| (curve, *seconds))
    }

    /// Whether the job is finished (without decoding its curve).
    pub fn contains(&self, trial: usize, algo: usize) -> bool {
        self.done.contains_key(&(trial, algo))
    }

    /// A finished job's note ([`crate::run::executor::Task::job_note`]), if it has one.
    pub fn note(&self, trial: usize, algo: usize) -> Option<f64> {
        self.notes.get(&(trial, algo)).copied()
    }

    /// How many jobs were already finished when the run started.
    pub fn finished(&self) -> usize {
        self.done.len()
    }

    /// Appends a finished job (with its note, if any) and flushes it to disk. A write that fails part-way (a full
    /// disk) is cut off again, so the file never holds a torn line another record follows.
    pub fn record(
        &self,
        trial: usize,
        algo: usize,
        curve: &[f64],
        seconds: f64,
        note: Option<f64>,
    ) -> Result<(), CheckpointError> {
        self.record_steps(trial, algo, &Steps::encode(curve)?, seconds, note)
    }

    /// [`Self::record`] of a curve already encoded.
    pub fn record_steps(
        &self,
        trial: usize,
        algo: usize,
        steps: &Steps,
        seconds: f64,
        note: Option<f64>,
    ) -> Result<(), CheckpointError> {
        let line = Line { run: self.run.clone(), trial, algo, seconds, steps: steps.clone(), note };
        let mut text = serde_json::to_string(&line).map_err(|e| CheckpointError::Encode(e.to_string()))?;
        text.push('\n');
        let err = |source| CheckpointError::Append { path: self.path.clone(), source };
        let mut file = self.file.lock().map_err(|_| CheckpointError::Poisoned)?;
        let before = file.metadata().map_err(err)?.len();
        file.write_all(text.as_bytes()).and_then(|()| file.sync_data()).map_err(|e| {
            let _ = file.set_len(before);
            err(e)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("host-sim-checkpoint-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// A checkpoint of `jobs` finished jobs (trial j, algorithm 0) of 50 rounds in `dir`, and its
    /// file's lines.
    fn recorded(dir: &Path, jobs: usize) -> Vec<String> {
        let checkpoint = Checkpoint::open(dir, "run", 50).unwrap();
        for j in 0..jobs {
            let curve: Vec<f64> = (0..50).map(|t| (t * (j + 1)) as f64 * 0.1).collect();
            checkpoint.record(j, 0, &curve, 1.0, None).unwrap();
        }
        std::fs::read_to_string(dir.join(JOBS_FILE)).unwrap().lines().map(String::from).collect()
    }

    #[test]
    fn checkpoint_a_torn_last_line_is_ended_before_the_next_record() {
        let dir = scratch("torn");
        let lines = recorded(&dir, 3);
        // A kill in the middle of the third record.
        let torn = format!("{}\n{}\n{}", lines[0], lines[1], &lines[2][..lines[2].len() / 2]);
        std::fs::write(dir.join(JOBS_FILE), &torn).unwrap();
        let checkpoint = Checkpoint::open(&dir, "run", 50).unwrap();
        assert_eq!(checkpoint.finished(), 2);
        let curve: Vec<f64> = (0..50).map(|t| (t * 3) as f64 * 0.1).collect();
        checkpoint.record(2, 0, &curve, 1.0, None).unwrap();
        drop(checkpoint);
        let text = std::fs::read_to_string(dir.join(JOBS_FILE)).unwrap();
        assert_eq!(text.lines().last(), Some(lines[2].as_str()), "the record has a line of its own");
        let checkpoint = Checkpoint::open(&dir, "run", 50).unwrap();
        assert_eq!(checkpoint.finished(), 3, "the job recorded after the torn line is found");
        assert_eq!(checkpoint.get(2, 0).map(|(c, _)| c), Some(curve.clone()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn checkpoint_a_record_glued_to_a_torn_line_is_read() {
        // What versions without the newline fix wrote after a torn line.
        let dir = scratch("glued");
        let lines = recorded(&dir, 3);
        let glued = format!("{}\n{}{}\n", lines[0], &lines[1][..lines[1].len() / 3], lines[2]);
        std::fs::write(dir.join(JOBS_FILE), glued).unwrap();
        let checkpoint = Checkpoint::open(&dir, "run", 50).unwrap();
        assert!(checkpoint.get(0, 0).is_some() && checkpoint.get(2, 0).is_some());
        assert!(checkpoint.get(1, 0).is_none(), "the torn record is not a job");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn checkpoint_a_directory_has_one_writer() {
        let dir = scratch("lock");
        let first = Checkpoint::open(&dir, "run", 50).unwrap();
        let refused = Checkpoint::open(&dir, "run", 50).err().map(|e| e.to_string()).unwrap_or_default();
        let pid = std::process::id();
        assert!(
            refused.contains("is being written by another host-sim run")
                && refused.contains(&format!("(process {pid})"))
                && refused.contains("choose another --out"),
            "{refused}"
        );
        assert!(
            matches!(OutLock::acquire(&dir), Err(CheckpointError::InUse { pid: Some(p), .. }) if p == pid)
        );
        drop(first);
        // A partial file of a writer killed part-way goes when the directory is next locked.
        std::fs::write(dir.join("regret.csv.1-0.partial"), "t,a\n1,").unwrap();
        let _second = Checkpoint::open(&dir, "run", 50).unwrap();
        assert!(!dir.join("regret.csv.1-0.partial").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The ledger directories' partial files (a ledger or a record of queries in flight a
    /// killed writer left part-way) go too when the output directory is next locked; their
    /// ledgers and records stay.
    #[test]
    fn the_ledger_directories_partial_files_go_when_the_directory_is_locked() {
        let dir = scratch("ledger-partials");
        for ledgers in LEDGER_DIRS {
            std::fs::create_dir_all(dir.join(ledgers)).unwrap();
            for name in [
                "trial0-learner0.csv.1-0.partial",
                "trial0-learner0.queries.1-1.partial",
                "trial0-learner0.csv",
            ] {
                std::fs::write(dir.join(ledgers).join(name), "x").unwrap();
            }
        }
        let _lock = OutLock::acquire(&dir).unwrap();
        for ledgers in LEDGER_DIRS {
            let mut left: Vec<String> = std::fs::read_dir(dir.join(ledgers))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            left.sort();
            assert_eq!(left, ["trial0-learner0.csv"], "{ledgers}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
