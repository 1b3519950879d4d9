//! A finished run's files, written whole into its directory: `regret.csv`, `finals.csv`,
//! `run.json` and the figures ([`crate::run::plot`]), hence only with the `plots` feature.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{io_err, read_ledgers, ucb1};
use crate::run::executor::Observer;
use crate::run::files::{DEVICE_LEDGER_DIR, LEDGER_DIR, write_whole};
use crate::run::plot::PlotOptions;
use crate::run::results::AlgorithmResult;
use crate::run::settings::{OutputError, RunConfig, RunError};

/// The observer that writes a finished run's files ([`write_all`]) into its directory.
pub struct Writer<'a> {
    dir: &'a Path,
    experiment: &'a str,
    description: &'a str,
    config: &'a RunConfig,
    plot: PlotOptions,
    files: std::sync::Mutex<Vec<PathBuf>>,
}

impl<'a> Writer<'a> {
    /// Writes into `dir` the results of `experiment` (titled `description`) run with `config`.
    pub fn new(dir: &'a Path, experiment: &'a str, description: &'a str, config: &'a RunConfig) -> Self {
        Self {
            dir,
            experiment,
            description,
            config,
            plot: PlotOptions::default(),
            files: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Draws the plots with `options` (default: linear axes).
    pub fn plot_options(mut self, options: PlotOptions) -> Self {
        self.plot = options;
        self
    }

    /// The files written (none before the run finished).
    pub fn files(&self) -> Vec<PathBuf> {
        self.files.lock().map(|f| f.clone()).unwrap_or_default()
    }
}

impl Observer for Writer<'_> {
    fn finished(&self, results: &[AlgorithmResult]) -> Result<(), RunError> {
        let files =
            write_all_with(self.dir, self.experiment, self.description, self.config, results, &self.plot)?;
        if let Ok(mut f) = self.files.lock() {
            *f = files;
        }
        Ok(())
    }
}

/// The JSON record of a run.
#[derive(Serialize)]
struct Record<'a> {
    experiment: &'a str,
    description: &'a str,
    config: &'a RunConfig,
    #[serde(skip_serializing_if = "Option::is_none")]
    fleet: Option<FleetSummary>,
    /// A run on one device on the wire (QEMU, serial, TCP): what it spent and the replies the
    /// learner dropped, from the jobs' ledgers (`device-ledgers/*.csv`), as for a fleet.
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<FleetSummary>,
    /// `custom`: what was read from the arms file (delimiter, label column, arms).
    #[serde(skip_serializing_if = "Option::is_none")]
    table: Option<&'a ldp_learn::env::table::ReadReport>,
    results: Vec<Summary<'a>>,
}

/// What a fleet's users spent, from the ledgers of the run's jobs (`fleet/*.csv`).
#[derive(Serialize)]
struct FleetSummary {
    /// The directory of the per-job ledgers, relative to the output directory.
    ledgers: &'static str,
    /// Jobs whose ledger was found.
    jobs: usize,
    /// The largest total ε any one user (device) spent in any job.
    max_user_eps: f64,
    /// Each device's largest total over the jobs, by device id.
    spent_by_device: std::collections::BTreeMap<u64, f64>,
    /// Rounds skipped because a device did not answer, over all jobs.
    skipped: u64,
    /// Replies the learner dropped, by reason, over all jobs and devices (issue #25): none of
    /// them entered a ledger.
    dropped_frames: ldp_link::client::Dropped,
    /// Devices the learner holds keys for that were left out of at least one job (no hello, or
    /// no answer to the first); absent when there were none.
    #[serde(skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    left_out: std::collections::BTreeSet<u64>,
    /// Queries sent by attempts of jobs that were killed with them in flight, whose replies
    /// never reached the learner, and their ε, by device, summed over the jobs (the ledgers'
    /// unanswered columns, #37); absent when there were none.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    unanswered: std::collections::BTreeMap<u64, ldp_link::fleet::record::Unanswered>,
}

fn fleet_summary(dir: &Path, config: &RunConfig) -> Result<Option<FleetSummary>, OutputError> {
    if config.fleet.is_none() {
        return Ok(None);
    }
    ledger_summary(dir, LEDGER_DIR)
}

/// The summary of a run on one device on the wire, if its jobs wrote ledgers.
fn device_summary(dir: &Path, config: &RunConfig) -> Result<Option<FleetSummary>, OutputError> {
    if config.fleet.is_some() || !dir.join(DEVICE_LEDGER_DIR).is_dir() {
        return Ok(None);
    }
    ledger_summary(dir, DEVICE_LEDGER_DIR)
}

fn ledger_summary(dir: &Path, ledger_dir: &'static str) -> Result<Option<FleetSummary>, OutputError> {
    let ledgers = read_ledgers(&dir.join(ledger_dir))?;
    let mut spent_by_device = std::collections::BTreeMap::new();
    for r in ledgers.iter().flatten().filter(|r| !r.left_out) {
        let e = spent_by_device.entry(r.id).or_insert(0.0f64);
        *e = e.max(r.spent);
    }
    let left_out = ledgers.iter().flatten().filter(|r| r.left_out).map(|r| r.id).collect();
    let mut unanswered = std::collections::BTreeMap::new();
    for r in ledgers.iter().flatten().filter(|r| r.unanswered > 0) {
        let u: &mut ldp_link::fleet::record::Unanswered = unanswered.entry(r.id).or_default();
        u.add(r.unanswered, r.unanswered_eps).map_err(|e| {
            OutputError::read(&dir.join(ledger_dir), format!("device {}'s unanswered queries: {e}", r.id))
        })?;
    }
    let mut dropped_frames = ldp_link::client::Dropped::default();
    for r in ledgers.iter().flatten() {
        dropped_frames.add(&r.dropped);
    }
    Ok(Some(FleetSummary {
        dropped_frames,
        ledgers: ledger_dir,
        jobs: ledgers.len(),
        max_user_eps: spent_by_device.values().copied().fold(0.0, f64::max),
        skipped: ledgers.iter().flatten().map(|r| r.skipped).sum(),
        spent_by_device,
        left_out,
        unanswered,
    }))
}

#[derive(Serialize)]
struct Summary<'a> {
    label: &'a str,
    final_mean: f64,
    final_std: f64,
    /// Mean final regret over uniform play's in the same trials.
    vs_uniform: Option<f64>,
    /// Final regret above uniform play's by more than 2 s.e. of the paired difference
    /// ([`AlgorithmResult::worse_than_uniform`]).
    worse_than_uniform: bool,
    reference: bool,
    /// Constants derived in trial 0 (non-finite values are written as null).
    constants: serde_json::Map<String, serde_json::Value>,
    finals: &'a [f64],
    seconds: f64,
    /// Reports told per second of the learner's loops (set-up excluded), where recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    reports_per_s: Option<f64>,
}

/// Writes all files into `dir` (created if needed), the plots with linear axes, and returns
/// their paths.
pub fn write_all(
    dir: &Path,
    experiment: &str,
    description: &str,
    config: &RunConfig,
    results: &[AlgorithmResult],
) -> Result<Vec<PathBuf>, OutputError> {
    write_all_with(dir, experiment, description, config, results, &PlotOptions::default())
}

/// [`write_all`], the plots drawn with `plot`.
pub fn write_all_with(
    dir: &Path,
    experiment: &str,
    description: &str,
    config: &RunConfig,
    results: &[AlgorithmResult],
    plot: &PlotOptions,
) -> Result<Vec<PathBuf>, OutputError> {
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    // run.json marks a complete set of results: a stale one goes first, the new one is
    // written last, so a failure part-way leaves no run.json beside half-written files.
    let json_path = dir.join("run.json");
    match fs::remove_file(&json_path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_err(&json_path)(e)),
        _ => {}
    }
    let mut csv = String::from("t");
    for r in results {
        let _ = write!(csv, ",{0}_mean,{0}_std", r.label);
    }
    csv.push('\n');
    for t in 0..config.horizon {
        let _ = write!(csv, "{}", t + 1);
        for r in results {
            let _ = write!(csv, ",{},{}", r.mean[t], r.std[t]);
        }
        csv.push('\n');
    }
    let regret = dir.join("regret.csv");
    write_whole(&regret, csv.as_bytes())?;

    let mut finals = String::from("algorithm,trial,final_regret,vs_uniform,worse_than_uniform,vs_ucb1\n");
    let ucb1_finals = ucb1(results).map(|u| &u.finals[..]).unwrap_or_default();
    for r in results {
        let worse = r.worse_than_uniform();
        for (i, f) in r.finals.iter().enumerate() {
            let ratio = match r.uniform_finals.get(i) {
                Some(&u) if u > 0.0 => (f / u).to_string(),
                _ => String::new(),
            };
            let vs_ucb1 = match ucb1_finals.get(i) {
                Some(&u) if u > 0.0 && !r.reference => (f / u).to_string(),
                _ => String::new(),
            };
            let _ = writeln!(finals, "{},{i},{f},{ratio},{worse},{vs_ucb1}", r.label);
        }
    }
    let finals_path = dir.join("finals.csv");
    write_whole(&finals_path, finals.as_bytes())?;

    let record = Record {
        experiment,
        description,
        config,
        fleet: fleet_summary(dir, config)?,
        device: device_summary(dir, config)?,
        table: config.problem.as_ref().map(|p| &p.report),
        results: results
            .iter()
            .map(|r| Summary {
                label: &r.label,
                final_mean: r.mean[config.horizon - 1],
                final_std: r.std[config.horizon - 1],
                vs_uniform: r.vs_uniform(),
                worse_than_uniform: r.worse_than_uniform(),
                reference: r.reference,
                constants: r.constants.iter().map(|(k, v)| (k.clone(), serde_json::json!(v))).collect(),
                finals: &r.finals,
                seconds: r.seconds,
                reports_per_s: r.reports_per_s,
            })
            .collect(),
    };
    let json =
        serde_json::to_string_pretty(&record).map_err(|e| OutputError::write(&json_path, e.to_string()))?;
    let title = format!("{experiment}: {description}");
    let plots = crate::run::plot::write_plots(dir, &title, results, config.trials, plot)?;
    write_whole(&json_path, json.as_bytes())?;
    Ok([regret, finals_path, json_path].into_iter().chain(plots).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::output::write_ledger;
    use ldp_link::device::MemberRecord;

    /// The ledgers' unanswered columns are summed by device for `run.json` refusing a count
    /// past what a u64 holds or an ε sum that is not finite: hostile or damaged ledgers neither
    /// panic nor wrap the label to 0.
    #[test]
    fn a_sum_of_unanswered_queries_past_its_type_is_refused() {
        let dir = std::env::temp_dir().join(format!("ldp-summary-overflow-{}", std::process::id()));
        let row = |unanswered, unanswered_eps| MemberRecord {
            id: 1,
            spent: 1.0,
            unanswered,
            unanswered_eps,
            ..Default::default()
        };
        let config = RunConfig { fleet: Some(Default::default()), ..RunConfig::default() };
        for (rows, why) in
            [([row(u64::MAX, 0.5), row(1, 0.5)], "too many queries"), ([row(1, 1e308), row(1, 1e308)], "ε")]
        {
            let _ = fs::remove_dir_all(&dir);
            for (trial, r) in rows.iter().enumerate() {
                write_ledger(&dir.join(LEDGER_DIR), trial, 0, &[*r]).unwrap();
            }
            let got = std::panic::catch_unwind(|| fleet_summary(&dir, &config).map(drop));
            let Ok(Err(e)) = got else { panic!("{rows:?}: not refused: {got:?}") };
            assert!(e.to_string().contains(why) && e.to_string().contains("device 1"), "{e}");
        }
        let _ = fs::remove_dir_all(&dir);
    }

    /// A run on one device on the wire (QEMU, serial, TCP) summarises its jobs' ledgers in
    /// `run.json` as `device`, with the dropped replies by reason (review of wire format 3,
    /// item 7); an in-process run has none.
    #[test]
    fn a_single_wire_device_run_records_its_dropped_frames() {
        let dir = std::env::temp_dir().join(format!("ldp-device-ledger-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let dropped = ldp_link::client::Dropped { bad_tag: 4, malformed: 1, ..Default::default() };
        let record = MemberRecord { id: 7, spent: 20.0, reports: 20, dropped, ..Default::default() };
        write_ledger(&dir.join(DEVICE_LEDGER_DIR), 0, 1, &[record]).unwrap();
        let config = RunConfig {
            device: crate::run::settings::DeviceKind::Tcp { addr: "x:1".into() },
            ..RunConfig::default()
        };
        let summary = device_summary(&dir, &config).unwrap().expect("a device summary");
        let json = serde_json::to_value(&summary).unwrap();
        assert_eq!(json["ledgers"], DEVICE_LEDGER_DIR);
        assert_eq!(json["jobs"], 1);
        assert_eq!(json["dropped_frames"]["bad_tag"], 4);
        assert_eq!(json["dropped_frames"]["malformed"], 1);
        assert_eq!(json["spent_by_device"]["7"], 20.0);
        assert!(json.get("left_out").is_none(), "no device left out: {json}");
        assert!(fleet_summary(&dir, &config).unwrap().is_none());
        // A keyed device left out of a job is named, and not counted as having spent 0.
        let absent = MemberRecord {
            id: 9,
            spent: 0.0,
            reports: 0,
            dropped: Default::default(),
            left_out: true,
            ..record
        };
        write_ledger(&dir.join(DEVICE_LEDGER_DIR), 1, 1, &[record, absent]).unwrap();
        let json = serde_json::to_value(device_summary(&dir, &config).unwrap().expect("a summary")).unwrap();
        assert_eq!(json["left_out"], serde_json::json!([9]));
        assert!(json["spent_by_device"].get("9").is_none(), "{json}");
        let _ = fs::remove_dir_all(&dir);
        assert!(device_summary(&dir, &RunConfig::default()).unwrap().is_none());
    }
}
