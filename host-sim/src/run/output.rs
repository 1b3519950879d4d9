//! Results on disk: `regret.csv` (per-round mean and std of cumulative regret per algorithm),
//! `finals.csv` (final regret of every trial, its ratio to uniform play's in that trial and the
//! learner's `worse_than_uniform` flag, [`AlgorithmResult::worse_than_uniform`]),
//! `run.json` (every parameter, seed and derived constant), `regret.svg` and `regret.png` (see
//! [`crate::run::plot`]), and the summary table printed at the end, as text, Markdown or JSON
//! ([`render_table`]).

use std::fmt;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::run::executor::Observer;
use crate::run::files::{DEVICE_LEDGER_DIR, LEDGER_DIR, write_whole};
pub use crate::run::plot::{MAX_PLOTTED_ROUNDS, PlotOptions, plotted_rounds};
use crate::run::results::AlgorithmResult;
pub use crate::run::settings::OutputError;
use crate::run::settings::{RunConfig, RunError};
use ldp_link::device::MemberRecord;

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

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> OutputError + '_ {
    move |e| OutputError::write(path, e.to_string())
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
}

/// The ledger's columns of dropped replies ([`ldp_link::client::Dropped`]'s fields, in order).
pub const DROPPED_COLUMNS: [&str; 9] = [
    "bad_tag",
    "replayed",
    "malformed",
    "non_finite",
    "off_grid",
    "out_of_range",
    "wrong_epsilon",
    "budget_rose",
    "unauthenticated_refusals",
];

fn dropped_fields(d: &ldp_link::client::Dropped) -> [u64; 9] {
    [
        d.bad_tag,
        d.replayed,
        d.malformed,
        d.non_finite,
        d.off_grid,
        d.out_of_range,
        d.wrong_epsilon,
        d.budget_rose,
        d.unauthenticated_refusals,
    ]
}

fn dropped_from(c: [u64; 9]) -> ldp_link::client::Dropped {
    ldp_link::client::Dropped {
        bad_tag: c[0],
        replayed: c[1],
        malformed: c[2],
        non_finite: c[3],
        off_grid: c[4],
        out_of_range: c[5],
        wrong_epsilon: c[6],
        budget_rose: c[7],
        unauthenticated_refusals: c[8],
    }
}

/// Writes what each member of a job's fleet spent as `trial<t>-learner<l>.csv` in `dir`
/// (columns device, spent_eps, reports, skipped, then the dropped replies by reason in the
/// order of [`DROPPED_COLUMNS`], then left_out: 1 for a keyed device not in the job's fleet,
/// whose spent_eps is empty: unknown), whole or not at all.
pub fn write_ledger(
    dir: &Path,
    trial: usize,
    learner: usize,
    ledger: &[MemberRecord],
) -> Result<(), OutputError> {
    let mut text = format!("device,spent_eps,reports,skipped,{},left_out\n", DROPPED_COLUMNS.join(","));
    for r in ledger {
        let d = dropped_fields(&r.dropped);
        let d: Vec<String> = d.iter().map(u64::to_string).collect();
        let (id, reports, skipped, out) = (r.id, r.reports, r.skipped, u8::from(r.left_out));
        // What a device left out has spent is unknown: its cell is empty, not 0.
        let spent = if r.left_out { String::new() } else { r.spent.to_string() };
        let _ = writeln!(text, "{id},{spent},{reports},{skipped},{},{out}", d.join(","));
    }
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    write_whole(&ledger_path(dir, trial, learner), text.as_bytes())
}

fn ledger_path(dir: &Path, trial: usize, learner: usize) -> PathBuf {
    dir.join(format!("trial{trial}-learner{learner}.csv"))
}

/// `ledger`, of a job run again, with the rows of the job's earlier attempt (its ledger in
/// `dir`, if any) of devices that `ledger` shows no spending for: a device that spent in a
/// failed attempt and is not in the fleet of the job run again (gone, or its hello kept off the
/// broker) spent all the same (review 15: overwritten, its spending was recorded nowhere).
pub fn with_earlier_attempt(
    dir: &Path,
    trial: usize,
    learner: usize,
    mut ledger: Vec<MemberRecord>,
) -> Result<Vec<MemberRecord>, OutputError> {
    let path = ledger_path(dir, trial, learner);
    if !path.is_file() {
        return Ok(ledger);
    }
    for r in read_ledger(&path)? {
        if !r.left_out && !ledger.iter().any(|n| n.id == r.id && !n.left_out) {
            ledger.push(r);
        }
    }
    Ok(ledger)
}

/// Every job's ledger in `dir` (none if it does not exist).
pub fn read_ledgers(dir: &Path) -> Result<Vec<Vec<MemberRecord>>, OutputError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(dir)(e)),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    paths.sort();
    paths.iter().map(|path| read_ledger(path)).collect()
}

/// One job's ledger.
fn read_ledger(path: &Path) -> Result<Vec<MemberRecord>, OutputError> {
    let text = fs::read_to_string(path).map_err(io_err(path))?;
    text.lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            let bad = || OutputError::write(path, format!("not a ledger line: '{line}'"));
            // A ledger written before wire format 3 has no dropped columns, one written
            // before review 5 no left_out column.
            let d = DROPPED_COLUMNS.len();
            let (head, dropped, left_out) = match f.len() {
                4 => (&f[..], Vec::new(), false),
                n if n == 4 + d => (&f[..4], f[4..].to_vec(), false),
                n if n == 5 + d => match f[4 + d] {
                    "0" => (&f[..4], f[4..4 + d].to_vec(), false),
                    "1" => (&f[..4], f[4..4 + d].to_vec(), true),
                    _ => return Err(bad()),
                },
                _ => return Err(bad()),
            };
            let mut counts = [0u64; DROPPED_COLUMNS.len()];
            for (c, x) in counts.iter_mut().zip(dropped) {
                *c = x.parse().map_err(|_| bad())?;
            }
            match head[..] {
                [id, spent, reports, skipped] => Ok(MemberRecord {
                    id: id.parse().map_err(|_| bad())?,
                    spent: match spent {
                        "" if left_out => 0.0,
                        _ => spent.parse().map_err(|_| bad())?,
                    },
                    reports: reports.parse().map_err(|_| bad())?,
                    skipped: skipped.parse().map_err(|_| bad())?,
                    dropped: dropped_from(counts),
                    left_out,
                }),
                _ => Err(bad()),
            }
        })
        .collect()
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

/// The format of the summary table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TableFormat {
    /// Aligned columns for a terminal ([`summary_table`]).
    #[default]
    Text,
    /// A Markdown (GitHub) table with the text table's columns and rounding.
    Markdown,
    /// A JSON object: the trials and one object per row, numbers unrounded.
    Json,
}

/// One row of the summary table, as [`render_table`] writes it in JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableRow {
    /// The algorithm's label.
    pub algorithm: String,
    /// Mean final cumulative regret R_T over the trials.
    pub final_mean: f64,
    /// Its sample standard deviation over the trials.
    pub sd: f64,
    /// Its standard error, sd/√trials.
    pub se: f64,
    /// Mean final regret over uniform play's in the same trials (`null` without one).
    pub vs_uniform: Option<f64>,
    /// Mean final regret over UCB1's in the same run (`null` where UCB1 did not run or has no
    /// regret).
    pub vs_ucb1: Option<f64>,
    /// Final regret above uniform play's by more than 2 s.e. of the paired difference
    /// ([`AlgorithmResult::worse_than_uniform`]).
    pub worse_than_uniform: bool,
    /// Compute seconds per trial (summed over threads, divided by the trials).
    pub seconds_per_trial: f64,
    /// `true` for the uniform-play reference row.
    pub reference: bool,
}

/// The summary table's rows, one per result in order.
pub fn table_rows(results: &[AlgorithmResult], trials: usize) -> Vec<TableRow> {
    let ucb1 = ucb1_final(results);
    results
        .iter()
        .map(|r| {
            let last = r.mean.len().saturating_sub(1);
            let (mean, sd) =
                (r.mean.get(last).copied().unwrap_or(0.0), r.std.get(last).copied().unwrap_or(0.0));
            TableRow {
                algorithm: r.label.clone(),
                final_mean: mean,
                sd,
                se: sd / (trials.max(1) as f64).sqrt(),
                vs_uniform: r.vs_uniform(),
                vs_ucb1: ucb1.filter(|u| *u > 0.0 && !r.reference).map(|u| mean / u),
                worse_than_uniform: r.worse_than_uniform(),
                seconds_per_trial: r.seconds / trials.max(1) as f64,
                reference: r.reference,
            }
        })
        .collect()
}

/// The label of UCB1, the baseline every learner is shown beside.
pub const UCB1_LABEL: &str = "UCB1";

/// UCB1's result among `results`, if it ran.
fn ucb1(results: &[AlgorithmResult]) -> Option<&AlgorithmResult> {
    results.iter().find(|r| r.label == UCB1_LABEL && !r.reference)
}

/// UCB1's mean final regret, if it ran.
fn ucb1_final(results: &[AlgorithmResult]) -> Option<f64> {
    ucb1(results).and_then(|r| r.mean.last().copied())
}

/// The summary table: final cumulative regret, mean ± sd and its standard error, the ratio of
/// the mean to uniform play's over the same trials, and the compute seconds per trial (summed
/// over threads, divided by the trials), per algorithm; a learner worse than uniform play by more
/// than 2 s.e. ([`AlgorithmResult::worse_than_uniform`]) ends its row with `! worse than uniform`.
pub fn summary_table(results: &[AlgorithmResult], trials: usize) -> String {
    let width = results.iter().map(|r| r.label.len()).max().unwrap_or(0).max(18);
    let mut out = format!(
        "{:<width$} {:>12} {:>10} {:>10} {:>10} {:>8} {:>9}\n",
        "algorithm", "final R_T", "sd", "s.e.", "vs uniform", "vs UCB1", "s/trial"
    );
    for row in table_rows(results, trials) {
        let [mean, sd, se, ratio, ucb1, seconds] = cells(&row);
        let flag = if row.worse_than_uniform { "  ! worse than uniform" } else { "" };
        let _ = writeln!(
            out,
            "{:<width$} {mean:>12} {sd:>10} {se:>10} {ratio:>10} {ucb1:>8} {seconds:>9}{flag}",
            row.algorithm
        );
    }
    out
}

/// A row's numbers as the text and Markdown tables print them: final regret, sd and s.e. to 2
/// decimals, the ratios to uniform play and UCB1 to 3 (`-` without one), seconds per trial to 3.
fn cells(row: &TableRow) -> [String; 6] {
    [
        format!("{:.2}", row.final_mean),
        format!("{:.2}", row.sd),
        format!("{:.2}", row.se),
        row.vs_uniform.map_or("-".to_string(), |x| format!("{x:.3}")),
        row.vs_ucb1.map_or("-".to_string(), |x| format!("{x:.3}")),
        format!("{:.3}", row.seconds_per_trial),
    ]
}

/// What a printed table is of: the run it summarises.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableHeading {
    /// The experiment's name.
    pub experiment: String,
    /// The run's title (the experiment's description or the user's file, and the privacy).
    pub title: String,
    /// ε per report (`null`: non-private).
    pub eps: Option<f64>,
    /// Trials.
    pub trials: usize,
    /// Horizon T.
    pub horizon: usize,
}

impl fmt::Display for TableHeading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let privacy = self.eps.map_or("non-private".to_string(), |e| format!("ε = {e}"));
        write!(
            f,
            "{}: {} ({privacy}) — {} trials, T = {}",
            self.experiment, self.title, self.trials, self.horizon
        )
    }
}

/// The table of one run as `format` prints it on stdout: text as [`render_table`]; Markdown led
/// by a heading line naming the run (its experiment, title, ε, trials and T); JSON one document,
/// `{"experiment", "title", "eps", "trials", "horizon", "rows"}`.
pub fn render_run(results: &[AlgorithmResult], heading: &TableHeading, format: TableFormat) -> String {
    match format {
        TableFormat::Text => render_table(results, heading.trials, format),
        TableFormat::Markdown => {
            format!("**{heading}**\n\n{}", render_table(results, heading.trials, format))
        }
        TableFormat::Json => to_json(&run_json(results, heading)),
    }
}

/// One run's JSON value (see [`render_run`]).
pub fn run_json(results: &[AlgorithmResult], heading: &TableHeading) -> serde_json::Value {
    let mut value = serde_json::json!(heading);
    value["rows"] = serde_json::json!(table_rows(results, heading.trials));
    value
}

/// `value` pretty-printed with a final newline.
pub fn to_json(value: &serde_json::Value) -> String {
    // A tree of plain values and string keys serialises without error.
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// The summary table of [`summary_table`] in `format`: text (that table), Markdown (its columns
/// and rounding, a `|` in a label escaped) or JSON (`{"trials": n, "rows": [`[`TableRow`]`...]}`,
/// pretty-printed, numbers unrounded, non-finite ones `null`). Each ends with a newline.
pub fn render_table(results: &[AlgorithmResult], trials: usize, format: TableFormat) -> String {
    match format {
        TableFormat::Text => summary_table(results, trials),
        TableFormat::Markdown => {
            let mut out = String::from(
                "| algorithm | final R_T | sd | s.e. | vs uniform | vs UCB1 | s/trial | flag |\n|---|---:|---:|---:|---:|---:|---:|---|\n",
            );
            for row in table_rows(results, trials) {
                let flag = if row.worse_than_uniform { "worse than uniform" } else { "" };
                let _ = writeln!(
                    out,
                    "| {} | {} | {flag} |",
                    row.algorithm.replace('|', "\\|"),
                    cells(&row).join(" | ")
                );
            }
            out
        }
        TableFormat::Json => {
            let table = serde_json::json!({ "trials": trials, "rows": table_rows(results, trials) });
            // A tree of plain values and string keys serialises without error.
            serde_json::to_string_pretty(&table).unwrap_or_default() + "\n"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Device `id` left out of a job: nothing known spent, no report, nothing dropped.
    fn left_out(id: u64) -> MemberRecord {
        MemberRecord { id, spent: 0.0, reports: 0, skipped: 0, dropped: Default::default(), left_out: true }
    }

    /// A ledger keeps each member's dropped replies by reason; one written before wire format 3
    /// (four columns) still reads, with none dropped.
    #[test]
    fn ledgers_carry_dropped_replies_and_old_ones_still_read() {
        let dir = std::env::temp_dir().join(format!("ldp-ledger-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let dropped =
            ldp_link::client::Dropped { bad_tag: 31, replayed: 2, budget_rose: 1, ..Default::default() };
        let record = MemberRecord { id: 7, spent: 1.5, reports: 3, skipped: 0, dropped, left_out: false };
        let absent = left_out(9);
        write_ledger(&dir, 0, 1, &[record, absent]).unwrap();
        // What the device left out spent is unknown: an empty cell, never 0.
        let text = fs::read_to_string(dir.join("trial0-learner1.csv")).unwrap();
        assert_eq!(text.lines().nth(2), Some("9,,0,0,0,0,0,0,0,0,0,0,0,1"), "{text}");
        fs::write(dir.join("trial1-learner1.csv"), "device,spent_eps,reports,skipped\n8,2,4,1\n").unwrap();
        let ledgers = read_ledgers(&dir).unwrap();
        assert_eq!(ledgers[0], [record, absent]);
        assert_eq!(ledgers[1][0].dropped, ldp_link::client::Dropped::default());
        assert_eq!(ledgers[1][0].reports, 4);
        let _ = fs::remove_dir_all(&dir);
    }

    /// A job run again keeps the rows of its earlier attempt's devices that it shows no
    /// spending for (left out, or absent), and its own for the others.
    #[test]
    fn a_job_run_again_keeps_the_earlier_attempts_devices_it_did_not_reach() {
        let dir = std::env::temp_dir().join(format!("ldp-ledger-again-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let row = |id, spent, left_out| MemberRecord {
            id,
            spent,
            reports: spent as u64,
            skipped: 0,
            dropped: Default::default(),
            left_out,
        };
        assert_eq!(with_earlier_attempt(&dir, 0, 0, vec![row(1, 1.0, false)]).unwrap(), [row(1, 1.0, false)]);
        write_ledger(&dir, 0, 0, &[row(1, 5.0, false), row(2, 3.0, false), row(3, 0.0, true)]).unwrap();
        let again = with_earlier_attempt(&dir, 0, 0, vec![row(1, 0.0, true), row(2, 4.0, false)]).unwrap();
        assert_eq!(again, [row(1, 0.0, true), row(2, 4.0, false), row(1, 5.0, false)]);
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
        let record = MemberRecord { id: 7, spent: 20.0, reports: 20, skipped: 0, dropped, left_out: false };
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
        let absent = left_out(9);
        write_ledger(&dir.join(DEVICE_LEDGER_DIR), 1, 1, &[record, absent]).unwrap();
        let json = serde_json::to_value(device_summary(&dir, &config).unwrap().expect("a summary")).unwrap();
        assert_eq!(json["left_out"], serde_json::json!([9]));
        assert!(json["spent_by_device"].get("9").is_none(), "{json}");
        let _ = fs::remove_dir_all(&dir);
        assert!(device_summary(&dir, &RunConfig::default()).unwrap().is_none());
    }
}
