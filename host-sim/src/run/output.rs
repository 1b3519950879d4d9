//! Results on disk: `regret.csv` (per-round mean and std of cumulative regret per algorithm),
//! `finals.csv` (final regret of every trial, its ratio to uniform play's in that trial and the
//! learner's `worse_than_uniform` flag, [`AlgorithmResult::worse_than_uniform`]),
//! `run.json` (every parameter, seed and derived constant), `regret.svg` and `regret.png` (see
//! [`crate::run::plot`]), and the summary table printed at the end, as text, Markdown or JSON
//! ([`render_table`]). A finished run's files are written by [`Writer`] and [`write_all`]
//! (`finished.rs`, with the `plots` feature); the ledgers of its jobs and the table are here.

use std::fmt;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::run::files::{write_whole, write_whole_synced};
use crate::run::results::AlgorithmResult;
pub use crate::run::settings::OutputError;
use ldp_link::device::MemberRecord;
use ldp_link::fleet::record::{
    QueryRecord, RECORD_HEADER, Unanswered, read_carried, read_unanswered, record_start,
};
use std::collections::BTreeMap;

#[cfg(feature = "plots")]
mod finished;
#[cfg(feature = "plots")]
pub use finished::{Writer, write_all, write_all_with};

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> OutputError + '_ {
    move |e| OutputError::write(path, e.to_string())
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
/// whose spent_eps is empty: unknown; then, only in the ledger of a job whose earlier attempt
/// was killed with queries in flight, unanswered and unanswered_eps: those queries, and their
/// ε, by device), whole or not at all.
pub fn write_ledger(
    dir: &Path,
    trial: usize,
    learner: usize,
    ledger: &[MemberRecord],
) -> Result<(), OutputError> {
    // Only where there is something to say: every other ledger is as it was before the column.
    let unanswered = ledger.iter().any(|r| r.unanswered > 0);
    let mut text = format!("device,spent_eps,reports,skipped,{},left_out", DROPPED_COLUMNS.join(","));
    text.push_str(if unanswered { ",unanswered,unanswered_eps\n" } else { "\n" });
    for r in ledger {
        let d = dropped_fields(&r.dropped);
        let d: Vec<String> = d.iter().map(u64::to_string).collect();
        let (id, reports, skipped, out) = (r.id, r.reports, r.skipped, u8::from(r.left_out));
        // What a device left out has spent is unknown: its cell is empty, not 0.
        let spent = if r.left_out { String::new() } else { r.spent.to_string() };
        let _ = write!(text, "{id},{spent},{reports},{skipped},{},{out}", d.join(","));
        if unanswered {
            let _ = write!(text, ",{},{}", r.unanswered, r.unanswered_eps);
        }
        text.push('\n');
    }
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    write_whole(&ledger_path(dir, trial, learner), text.as_bytes())
}

fn ledger_path(dir: &Path, trial: usize, learner: usize) -> PathBuf {
    dir.join(format!("trial{trial}-learner{learner}.csv"))
}

/// The record of a job's queries in flight (`ldp_link::fleet::record`), beside its ledger:
/// `trial<t>-learner<l>.queries`, there while the job runs or after it was killed or failed,
/// removed once the job finished ([`end_query_record`]).
pub fn queries_path(dir: &Path, trial: usize, learner: usize) -> PathBuf {
    dir.join(format!("trial{trial}-learner{learner}.queries"))
}

/// What earlier attempts of a job left unanswered, by device: its record's, if the job has
/// one (a killed or failed attempt's: it holds every attempt's since the job last finished);
/// else its ledger's (the job finished, and was killed before the run recorded it), if any.
fn unanswered_before(
    dir: &Path,
    trial: usize,
    learner: usize,
) -> Result<BTreeMap<u64, Unanswered>, OutputError> {
    let record = queries_path(dir, trial, learner);
    if record.is_file() {
        return read_unanswered(&record).map_err(|e| OutputError::read(&record, e.detail()));
    }
    let mut carried: BTreeMap<u64, Unanswered> = BTreeMap::new();
    let ledger = ledger_path(dir, trial, learner);
    if ledger.is_file() {
        for r in read_ledger(&ledger)?.iter().filter(|r| r.unanswered > 0) {
            carried.entry(r.id).or_default().add(r.unanswered, r.unanswered_eps).map_err(|e| {
                OutputError::read(&ledger, format!("device {}'s unanswered queries: {e}", r.id))
            })?;
        }
    }
    Ok(carried)
}

/// Begins the record of this attempt of a job's queries in flight in `dir`, before any is
/// sent: the file ([`queries_path`]) written whole, and synced, with what earlier attempts left unanswered
/// (carried: so that a kill of this attempt too loses none of it), then opened for the
/// fleet to append each query to.
pub fn begin_query_record(dir: &Path, trial: usize, learner: usize) -> Result<QueryRecord, OutputError> {
    let carried = unanswered_before(dir, trial, learner)?;
    let path = queries_path(dir, trial, learner);
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    // Synced before it is renamed into place: a power cut leaves the earlier attempt's record,
    // or this one whole, never an empty file (which reads as no record, and loses the label).
    write_whole_synced(&path, record_start(&carried).as_bytes())?;
    QueryRecord::append(&path).map_err(io_err(&path))
}

/// Which lines of a job's record label its ledger ([`with_unanswered`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Labels {
    /// Every line: what earlier attempts left unanswered, and this attempt's queries sent and
    /// not done.
    All,
    /// What earlier attempts left unanswered alone (the `carried` lines, written whole before
    /// this attempt sent anything): for a record a write to which failed, which may lack the
    /// `done` line of a query whose reply reached the learner
    /// ([`ldp_link::fleet::record::RecordHealth`]).
    Carried,
}

/// Labels `ledger`, of a job whose queries were recorded in `dir`, with each device's queries
/// that earlier attempts (or this one) left unanswered, from the job's record
/// ([`queries_path`]; nothing without one; its `labels` lines): on the device's first row in
/// the fleet (else its first row, else a row of its own, as left out); every other row shows
/// none, so each is counted once. A record that cannot be read leaves `ledger` as it was.
pub fn with_unanswered(
    dir: &Path,
    trial: usize,
    learner: usize,
    ledger: &mut Vec<MemberRecord>,
    labels: Labels,
) -> Result<(), OutputError> {
    let path = queries_path(dir, trial, learner);
    if !path.is_file() {
        return Ok(());
    }
    let read = match labels {
        Labels::All => read_unanswered(&path),
        Labels::Carried => read_carried(&path),
    };
    let unanswered = read.map_err(|e| OutputError::read(&path, e.detail()))?;
    for r in ledger.iter_mut() {
        (r.unanswered, r.unanswered_eps) = (0, 0.0);
    }
    for (id, u) in unanswered.into_iter().filter(|(_, u)| u.queries > 0) {
        let row = ledger
            .iter()
            .position(|r| r.id == id && !r.left_out)
            .or_else(|| ledger.iter().position(|r| r.id == id));
        let row = match row {
            Some(i) => &mut ledger[i],
            None => {
                ledger.push(MemberRecord { id, left_out: true, ..MemberRecord::default() });
                let last = ledger.len() - 1;
                &mut ledger[last]
            }
        };
        (row.unanswered, row.unanswered_eps) = (u.queries, u.eps);
    }
    Ok(())
}

/// Removes a finished job's record of its queries in flight ([`queries_path`]): its ledger,
/// written first, holds what the record said.
pub fn end_query_record(dir: &Path, trial: usize, learner: usize) -> Result<(), OutputError> {
    let path = queries_path(dir, trial, learner);
    match fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(&path)(e)),
        _ => Ok(()),
    }
}

/// Removes a failed job's record of its queries in flight ([`queries_path`]) if it holds
/// nothing but its header: nothing carried from earlier attempts, no query sent (the job failed
/// before it reached its devices), so nothing for an attempt that runs the job again to label.
pub fn end_empty_query_record(dir: &Path, trial: usize, learner: usize) -> Result<(), OutputError> {
    let path = queries_path(dir, trial, learner);
    let header = format!("{RECORD_HEADER}\n");
    // Its length first: a record of queries is not read whole for this.
    let empty = fs::metadata(&path).is_ok_and(|m| m.len() == header.len() as u64)
        && fs::read(&path).is_ok_and(|bytes| bytes == header.as_bytes());
    match empty {
        true => end_query_record(dir, trial, learner),
        false => Ok(()),
    }
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
            // before review 5 no left_out column; only a job whose earlier attempt was killed
            // with queries in flight has the unanswered columns (#37).
            let d = DROPPED_COLUMNS.len();
            let (head, dropped, left_out) = match f.len() {
                4 => (&f[..], Vec::new(), false),
                n if n == 4 + d => (&f[..4], f[4..].to_vec(), false),
                n if n == 5 + d || n == 7 + d => match f[4 + d] {
                    "0" => (&f[..4], f[4..4 + d].to_vec(), false),
                    "1" => (&f[..4], f[4..4 + d].to_vec(), true),
                    _ => return Err(bad()),
                },
                _ => return Err(bad()),
            };
            let (unanswered, unanswered_eps) = match f.get(5 + d..) {
                Some([queries, e]) => (
                    queries.parse().map_err(|_| bad())?,
                    e.parse::<f64>().ok().filter(|e| e.is_finite() && *e >= 0.0).ok_or_else(bad)?,
                ),
                _ => (0, 0.0),
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
                    unanswered,
                    unanswered_eps,
                }),
                _ => Err(bad()),
            }
        })
        .collect()
}

/// The format of the summary table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
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
        MemberRecord { id, left_out: true, ..Default::default() }
    }

    /// A ledger keeps each member's dropped replies by reason; one written before wire format 3
    /// (four columns) still reads, with none dropped.
    #[test]
    fn ledgers_carry_dropped_replies_and_old_ones_still_read() {
        let dir = std::env::temp_dir().join(format!("ldp-ledger-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let dropped =
            ldp_link::client::Dropped { bad_tag: 31, replayed: 2, budget_rose: 1, ..Default::default() };
        let record = MemberRecord { id: 7, spent: 1.5, reports: 3, dropped, ..Default::default() };
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

    /// A ledger as every version before #37 wrote it (14 columns) still reads, with nothing
    /// unanswered; one with the unanswered columns reads back as written, and a ledger with
    /// nothing unanswered is written without them, as before.
    #[test]
    fn ledgers_from_before_the_unanswered_columns_still_read() {
        let dir = std::env::temp_dir().join(format!("ldp-ledger-unanswered-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let old = "device,spent_eps,reports,skipped,bad_tag,replayed,malformed,non_finite,off_grid,out_of_range,wrong_epsilon,budget_rose,unauthenticated_refusals,left_out\n\
                   3,2.5,2,1,0,1,0,0,0,0,0,0,0,0\n9,,0,0,0,0,0,0,0,0,0,0,0,1\n";
        fs::write(dir.join("trial0-learner0.csv"), old).unwrap();
        let read = &read_ledgers(&dir).unwrap()[0];
        assert_eq!(
            read[0],
            MemberRecord {
                id: 3,
                spent: 2.5,
                reports: 2,
                skipped: 1,
                dropped: ldp_link::client::Dropped { replayed: 1, ..Default::default() },
                ..Default::default()
            }
        );
        assert_eq!(read[1], left_out(9));
        // Written again with nothing unanswered: the same bytes.
        write_ledger(&dir, 0, 0, read).unwrap();
        assert_eq!(fs::read_to_string(dir.join("trial0-learner0.csv")).unwrap(), old);
        let labelled = [MemberRecord { unanswered: 2, unanswered_eps: 1.5, ..read[0] }, read[1]];
        write_ledger(&dir, 0, 1, &labelled).unwrap();
        let text = fs::read_to_string(dir.join("trial0-learner1.csv")).unwrap();
        assert!(text.lines().next().unwrap().ends_with(",left_out,unanswered,unanswered_eps"), "{text}");
        assert_eq!(text.lines().nth(1), Some("3,2.5,2,1,0,1,0,0,0,0,0,0,0,0,2,1.5"), "{text}");
        assert_eq!(read_ledgers(&dir).unwrap()[1], labelled);
        fs::write(dir.join("trial0-learner2.csv"), format!("{}3,1,1,0,0,0,0,0,0,0,0,0,0,0,1,-1\n", old))
            .unwrap();
        assert!(read_ledgers(&dir).is_err(), "a negative ε unanswered");
        let _ = fs::remove_dir_all(&dir);
    }

    /// What earlier attempts left unanswered comes from the job's record while it has one, and
    /// from its ledger once it finished (the record removed) and was killed before the run
    /// recorded it: begun again, the record carries it either way. Each device's queries are on
    /// one row: its first in the fleet, else its first, else a row of its own, left out.
    #[test]
    fn unanswered_queries_come_from_the_record_or_else_the_ledger_and_are_counted_once() {
        let dir = std::env::temp_dir().join(format!("ldp-ledger-record-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let path = queries_path(&dir, 1, 2);
        fs::write(
            &path,
            "ldp-queries-in-flight 1\nsent 1 1 0.5\nsent 2 1 0.5\nsent 7 1 0.5\ndone 2 1 report\n",
        )
        .unwrap();
        drop(begin_query_record(&dir, 1, 2).unwrap());
        let carried = fs::read_to_string(&path).unwrap();
        assert_eq!(carried, "ldp-queries-in-flight 1\ncarried 1 1 0.5\ncarried 7 1 0.5\n");
        let row =
            |id, left_out| MemberRecord { id, spent: 1.0, left_out, unanswered: 5, ..Default::default() };
        // Device 1 twice (left out of this attempt, in the earlier one), 7 absent.
        let mut ledger = vec![row(1, true), row(2, false), row(1, false)];
        with_unanswered(&dir, 1, 2, &mut ledger, Labels::All).unwrap();
        let u = |r: &MemberRecord| (r.id, r.left_out, r.unanswered);
        assert_eq!(
            ledger.iter().map(u).collect::<Vec<_>>(),
            [(1, true, 0), (2, false, 0), (1, false, 1), (7, true, 1)]
        );
        // The job finished: its ledger written, its record removed; then killed before the
        // run recorded it. Run again, the ledger is the source.
        write_ledger(&dir, 1, 2, &ledger).unwrap();
        end_query_record(&dir, 1, 2).unwrap();
        assert!(!path.exists());
        drop(begin_query_record(&dir, 1, 2).unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), carried);
        let mut again = vec![row(1, false), row(2, false), row(7, false)];
        with_unanswered(&dir, 1, 2, &mut again, Labels::All).unwrap();
        assert_eq!(again.iter().map(u).collect::<Vec<_>>(), [(1, false, 1), (2, false, 0), (7, false, 1)]);
        end_query_record(&dir, 1, 2).unwrap();
        end_query_record(&dir, 1, 2).unwrap();
        let _ = fs::remove_dir_all(&dir);
    }

    /// What a job's ledger says earlier attempts left unanswered is summed by device, refusing
    /// (naming the ledger) a count past what a u64 holds or an ε sum that is not finite: a
    /// hostile or damaged ledger neither panics, nor wraps the label to 0, nor carries `inf`
    /// into the job's record, which would then no longer read.
    #[test]
    fn a_ledgers_unanswered_sum_past_its_type_is_refused_naming_the_ledger() {
        let dir = std::env::temp_dir().join(format!("ldp-ledger-overflow-{}", std::process::id()));
        let row = |unanswered, unanswered_eps| MemberRecord {
            id: 1,
            spent: 1.0,
            unanswered,
            unanswered_eps,
            ..Default::default()
        };
        for (rows, why) in
            [([row(u64::MAX, 0.5), row(1, 0.5)], "too many queries"), ([row(1, 1e308), row(1, 1e308)], "ε")]
        {
            let _ = fs::remove_dir_all(&dir);
            write_ledger(&dir, 0, 0, &rows).unwrap();
            let got = std::panic::catch_unwind(|| begin_query_record(&dir, 0, 0).map(drop));
            let Ok(Err(e)) = got else { panic!("{rows:?}: not refused: {got:?}") };
            let message = e.to_string();
            assert!(message.contains("trial0-learner0.csv") && message.contains(why), "{message}");
        }
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
            left_out,
            ..Default::default()
        };
        assert_eq!(with_earlier_attempt(&dir, 0, 0, vec![row(1, 1.0, false)]).unwrap(), [row(1, 1.0, false)]);
        write_ledger(&dir, 0, 0, &[row(1, 5.0, false), row(2, 3.0, false), row(3, 0.0, true)]).unwrap();
        let again = with_earlier_attempt(&dir, 0, 0, vec![row(1, 0.0, true), row(2, 4.0, false)]).unwrap();
        assert_eq!(again, [row(1, 0.0, true), row(2, 4.0, false), row(1, 5.0, false)]);
        let _ = fs::remove_dir_all(&dir);
    }
}
