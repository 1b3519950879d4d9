//! The CSV reader of every data file — the papers' data sets and a user's own problem
//! (`host-sim run custom --arms FILE.csv [--coords FILE.csv]`, [`super::custom`]) — whose
//! errors name the file, the line and the column in the user's words.
//!
//! **The arms file** ([`Table::parse_with`], read with the `csv` crate): one column per arm,
//! one row per observation. Cells may be quoted (`"Smith, J"`, `"1.0"`); the delimiter is
//! sniffed among `,`, tab, `;` and `|` (the one that splits the first 20 rows into one number of
//! cells, the most of any; `--delimiter` chooses). A header line names the arms (it is a header
//! when a cell past its first is not a number, or its first cell is text over a number; without
//! one the arms are `arm0`, `arm1`, …). An empty cell, `NA`, `N/A`, `NaN`, `null` or `#N/A` is a
//! missing observation (the papers' data sets must have none: [`Table::complete`]); `inf` and
//! numbers out of double range are refused. Blank lines, spaces around cells, Windows line ends
//! and a UTF-8 byte-order mark are tolerated.
//!
//! **The label column**: the leading column labels the rows, and is not an arm, when its header
//! is an index's or a time's name (`''` as pandas writes an index, `index`, `id`, `year`,
//! `date`, `time`, `datetime`, `timestamp`, `month`, `day`, `week`, `quarter`, `period`, `t`,
//! any case), its first data cell is text, or its cells are integers rising by one each row
//! (0, 1, 2, … or 1950, 1951, …; three rows or more: a column of increasing counts is data, so
//! the rule stops at steps of one). `--label-column NAME|NUMBER|none` and `--columns A,B,…` choose explicitly.
//! What was read is reported ([`ReadReport`]: the delimiter, the label column and why, each
//! arm's name, count and mean).
//!
//! **Long format** (`--long ARM,VALUE[,TIME]`): one row per observation, a column naming the arm
//! and one holding the value; with a time column the arms' observations are aligned into rows
//! by time (the prior's correlations compare arms at one time), without one the k-th
//! observation of each arm makes row k. `--minimise` negates every value as it is read.
//!
//! **The problem** (Zhou & Tan §5.1's real-data recipe, [`super::RealData`]): f(a) is the mean of arm
//! a's observations divided by s, the largest such mean; a pull returns one of the arm's
//! observations (divided by s) at random; B = max |f|, R = the largest |observation/s − f|,
//! α = 1, v = the mean squared observation, c = the mean squared noise.
//!
//! **The prior** is the empirical covariance of the z-scored columns (each column centred and
//! scaled over its own observations; a missing cell counts as the column mean, i.e. 0 after
//! z-scoring, and the result is rescaled to a unit diagonal, which keeps it positive
//! semi-definite), or with a coordinates file a kernel over the arms' points: one row per arm
//! in the arms file's column order, optionally led by the arm's name (checked against the
//! header), one numeric column per dimension.

use std::fmt;
use std::path::{Path, PathBuf};

use nalgebra::DMatrix;

use serde::Serialize;

use crate::gp::{Kernel, KernelError, gram_matrix};

/// FNV-1a of bytes, as hex.
pub fn fnv1a(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The empirical covariance (n − 1 denominator) of the column-wise z-scored samples `m`; the
/// error is the index of a constant column, which cannot be z-scored.
pub fn zscore_covariance(m: &DMatrix<f64>) -> Result<DMatrix<f64>, usize> {
    let n = m.nrows() as f64;
    let mut z = m.clone();
    for (column, mut col) in z.column_iter_mut().enumerate() {
        let mean = col.mean();
        col.add_scalar_mut(-mean);
        let sd = (col.norm_squared() / (n - 1.0)).sqrt();
        if !(sd.is_finite() && sd > 0.0) {
            return Err(column);
        }
        col /= sd;
    }
    let cov = z.tr_mul(&z) / (n - 1.0);
    // Exactly symmetric.
    Ok((&cov + cov.transpose()) * 0.5)
}

/// The user's table: arm names and each arm's observations by row (`None` = missing).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// The arms' names (header cells, or `arm0`, `arm1`, …).
    pub names: Vec<String>,
    /// `columns[a][row]`: arm a's observation in data row `row`.
    pub columns: Vec<Vec<Option<f64>>>,
    /// The file line of each data row (1-based), for messages.
    pub lines: Vec<usize>,
    /// The label column's name and its cell in each data row, if the table has one.
    pub labels: Option<(String, Vec<String>)>,
}

/// Why a problem file cannot be used, in the words of the file: line numbers are 1-based lines
/// of the file, columns are named by the header (or numbered from 1 without one).
#[derive(Clone, Debug, PartialEq)]
pub struct TableError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub problem: TableProblem,
}

/// What is wrong with a problem file ([`TableError`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum TableProblem {
    /// The file cannot be read.
    Unreadable(String),
    /// No non-blank line.
    Empty,
    /// A header but no data row.
    NoRows,
    /// A row with another number of cells than the first line.
    Ragged {
        /// The row's line.
        line: usize,
        /// Its cells.
        found: usize,
        /// Cells of the first line.
        expected: usize,
        /// The first line.
        first_line: usize,
    },
    /// A cell that is not a number.
    NotANumber {
        /// The cell's line.
        line: usize,
        /// The cell's column name.
        column: String,
        /// The cell.
        cell: String,
    },
    /// An empty cell in a data set that must have none.
    Missing {
        /// The cell's line.
        line: usize,
        /// The cell's column name.
        column: String,
    },
    /// A cell that is a number but not a finite one.
    NotFinite {
        /// The cell's line.
        line: usize,
        /// The cell's column name.
        column: String,
        /// The cell.
        cell: String,
    },
    /// Fewer than two arm columns.
    OneArm {
        /// The arm columns found.
        names: Vec<String>,
    },
    /// Two columns with one name.
    DuplicateName(String),
    /// A column with fewer observations than needed.
    TooFewObservations {
        /// The column.
        column: String,
        /// Its observations.
        found: usize,
        /// Observations needed.
        needed: usize,
    },
    /// A column whose observations are all equal (no correlation with the others).
    Constant {
        /// The column.
        column: String,
        /// Its one value.
        value: f64,
    },
    /// A column whose observations differ but whose mean or spread is not a finite number in
    /// double precision: they are too large (or too close to 0).
    OutOfScale {
        /// The column.
        column: String,
        /// Its largest observation in magnitude.
        largest: f64,
    },
    /// The largest arm mean is not positive: the recipe divides by it.
    NonPositiveBest(f64),
    /// The coordinates file lists another number of arms.
    CoordinateRows {
        /// Rows of the coordinates file.
        rows: usize,
        /// Arms of the arms file.
        arms: usize,
    },
    /// A coordinates row's name is not the arm of that position.
    CoordinateName {
        /// The row's line.
        line: usize,
        /// The name there.
        found: String,
        /// The arm at that position.
        expected: String,
    },
    /// A coordinates row with no numeric column.
    NoCoordinates {
        /// The row's line.
        line: usize,
    },
    /// The kernel rejected its settings or the points.
    Kernel {
        /// What the kernel said.
        error: KernelError,
        /// The lengthscale it was given (`None`: the failure is not about it).
        lengthscale: Option<f64>,
    },
    /// A `--delimiter` that is not one ASCII character.
    Delimiter(char),
    /// A column named by `--label-column`, `--columns` or `--long` that the file does not have.
    NoSuchColumn {
        /// The name or number given.
        column: String,
        /// The header's names (empty without a header).
        columns: Vec<String>,
        /// The number of columns.
        count: usize,
    },
    /// A long-format row with an empty arm cell.
    NoArmName {
        /// The row's line.
        line: usize,
        /// The arm column's name.
        column: String,
    },
    /// A long-format table with two values for one arm at one time.
    TwoValues {
        /// The arm.
        arm: String,
        /// The time (empty without a time column).
        time: String,
        /// The second value's line.
        line: usize,
        /// The first value's line.
        first_line: usize,
    },
    /// The papers' recipe refused a table that passed every check above: a bug, not the
    /// user's (the checks are meant to catch all it refuses).
    Inconsistent,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.problem {
            TableProblem::Unreadable(why) => write!(
                f,
                "cannot read {path}: {why}; check the path (relative to the working directory) and that it is a text file"
            ),
            TableProblem::Empty => write!(
                f,
                "{path} is empty: give one column per arm and one row per observation, e.g. a header line \
                 'arm_a,arm_b' then lines like '0.3,0.5'"
            ),
            TableProblem::NoRows => {
                write!(f, "{path} has a header line but no rows of observations: add one row per observation")
            }
            TableProblem::Ragged { line, found, expected, first_line } => write!(
                f,
                "{path} line {line} has {found} cells but line {first_line} has {expected}: give every row one cell per \
                 column (leave a cell empty for a missing observation)"
            ),
            TableProblem::NotANumber { line, column, cell } => write!(
                f,
                "{path} line {line}, column {column}: '{cell}' is not a number; write a number, or leave the cell \
                 empty for a missing observation"
            ),
            TableProblem::Missing { line, column } => write!(
                f,
                "{path} line {line}, column {column}: the cell is empty, and this data set must have no gaps; for \
                 your own data with gaps use host-sim run custom --arms FILE.csv"
            ),
            TableProblem::NotFinite { line, column, cell } => write!(
                f,
                "{path} line {line}, column {column}: '{cell}' is not a finite number; leave the cell empty for a \
                 missing observation"
            ),
            TableProblem::OneArm { names } => write!(
                f,
                "{path} has {} arm column{} ({}): a learner needs at least two arms to choose from; add a column per arm",
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            ),
            TableProblem::DuplicateName(name) => {
                write!(f, "{path}: two columns are named '{name}': give every arm its own name")
            }
            TableProblem::TooFewObservations { column, found, needed } => write!(
                f,
                "{path}, column {column}: {found} observation(s), at least {needed} needed (the prior compares each \
                 arm's spread with the others'): add observations, drop the column, or give --coords"
            ),
            TableProblem::Constant { column, value } => write!(
                f,
                "{path}, column {column}: every observation is {value}, so its correlation with the other arms is \
                 undefined: drop the column, or give --coords"
            ),
            TableProblem::OutOfScale { column, largest } => write!(
                f,
                "{path}, column {column}: its observations, up to {largest:e} in magnitude, are too {} for their mean \
                 and spread to be computed in double precision: multiply or divide every cell of the file by one \
                 power of ten (rewards are scaled by the largest arm mean, so a common factor changes nothing)",
                if *largest > 1.0 { "large" } else { "small" }
            ),
            TableProblem::NonPositiveBest(m) => write!(
                f,
                "{path}: the largest arm mean is {m}, not positive, and rewards are scaled by it (the papers' \
                 recipe): shift the data to positive values"
            ),
            TableProblem::CoordinateRows { rows, arms } => write!(
                f,
                "{path} has {rows} rows of coordinates but the arms file has {arms} arms: give one row per arm, in \
                 the arms file's column order"
            ),
            TableProblem::CoordinateName { line, found, expected } => write!(
                f,
                "{path} line {line} names arm '{found}' but the arms file's arm at that position is '{expected}': \
                 list the arms in the arms file's column order"
            ),
            TableProblem::NoCoordinates { line } => {
                write!(f, "{path} line {line} has no coordinates: give one numeric column per dimension")
            }
            TableProblem::Kernel { error, lengthscale: Some(l) } => {
                write!(f, "{path}: {error} (lengthscale {l}; set it with --lengthscale)")
            }
            TableProblem::Kernel { error, lengthscale: None } => write!(f, "{path}: {error}"),
            TableProblem::Delimiter(d) => {
                write!(f, "--delimiter '{d}' is not one ASCII character: give e.g. ',' or ';' or tab")
            }
            TableProblem::NoSuchColumn { column, columns, count } if columns.is_empty() => write!(
                f,
                "{path} has no column '{column}': it has no header, so name a column by its number, 1 to {count}"
            ),
            TableProblem::NoSuchColumn { column, columns, .. } => write!(
                f,
                "{path} has no column '{column}': its columns are {} (or give a number, 1 to {})",
                columns.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(", "),
                columns.len()
            ),
            TableProblem::NoArmName { line, column } => {
                write!(f, "{path} line {line}: the arm column '{column}' is empty; name the arm of every row")
            }
            TableProblem::TwoValues { arm, time, line, first_line } if time.is_empty() => write!(
                f,
                "{path} lines {first_line} and {line} hold two values for arm '{arm}' in one row: this is a bug in host-sim; please report it with the file"
            ),
            TableProblem::TwoValues { arm, time, line, first_line } => write!(
                f,
                "{path} lines {first_line} and {line} both give arm '{arm}' a value at '{time}': keep one row per arm and time"
            ),
            TableProblem::Inconsistent => write!(
                f,
                "{path} passed every check but the model could not be built from it: this is a bug in host-sim; please report it with the file"
            ),
        }
    }
}

impl std::error::Error for TableError {}

/// How to read an arms file: the choices a user may make on the command line (`--delimiter`,
/// `--label-column`, `--columns`, `--long`, `--minimise`); the default reads the papers' data
/// sets exactly as before.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReadOptions {
    /// The cell delimiter [default: sniffed among `,` tab `;` `|`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<char>,
    /// The label (index, time) column, by header name or 1-based number, or `none` for no
    /// label column [default: detected, see the module documentation].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_column: Option<String>,
    /// The arm columns, by header name or 1-based number, in this order [default: every column
    /// but the label column].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<String>>,
    /// Long format: the columns naming the arm and holding the value, and optionally the time
    /// that aligns the arms' rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub long: Option<LongFormat>,
    /// Lower values are better: every value is negated as it is read.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub minimise: bool,
}

/// The columns of a long-format table (`--long ARM,VALUE[,TIME]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LongFormat {
    /// The column naming each row's arm.
    pub arm: String,
    /// The column holding each row's value.
    pub value: String,
    /// The column whose values align the arms' observations into rows (without one, the k-th
    /// observation of every arm makes row k).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
}

impl std::str::FromStr for LongFormat {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        match parts[..] {
            [arm, value] if !arm.is_empty() && !value.is_empty() => {
                Ok(Self { arm: arm.into(), value: value.into(), time: None })
            }
            [arm, value, time] if !arm.is_empty() && !value.is_empty() && !time.is_empty() => {
                Ok(Self { arm: arm.into(), value: value.into(), time: Some(time.into()) })
            }
            _ => Err(format!(
                "'{text}': give the arm column and the value column, optionally a time column, e.g. \
                 --long symbol,price or --long symbol,price,date"
            )),
        }
    }
}

/// Why a column was left out of the arms (it labels the rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelReason {
    /// Named by `--label-column`.
    Chosen,
    /// Its header names an index or a time (year, date, time, index, '', …).
    Name,
    /// It holds text (dates, names).
    Text,
    /// Its cells are integers rising by one each row (0, 1, 2, … or years).
    Increasing,
}

impl fmt::Display for LabelReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LabelReason::Chosen => "chosen with --label-column",
            LabelReason::Name => "its name is an index's or a time's",
            LabelReason::Text => "it holds text",
            LabelReason::Increasing => "its cells are integers rising by one each row",
        })
    }
}

/// One arm as read: its name, observations and their mean (after `--minimise`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArmRead {
    /// The arm's name.
    pub name: String,
    /// Its observations (missing cells left out).
    pub count: usize,
    /// Their mean.
    pub mean: f64,
}

/// What the reader made of a file, for the user to check (`run` prints it, `run.json` keeps it).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReadReport {
    /// The delimiter used.
    pub delimiter: char,
    /// The column left out as the rows' label, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_column: Option<(String, LabelReason)>,
    /// The arms read, in order.
    pub arms: Vec<ArmRead>,
    /// Values were negated (`--minimise`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub minimised: bool,
    /// The constant added to every value because the best arm's mean was not positive
    /// ([`super::custom::shift_of`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shift: Option<f64>,
}

impl fmt::Display for ReadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let delimiter = match self.delimiter {
            '\t' => "tab".to_string(),
            d => format!("'{d}'"),
        };
        write!(f, "read {} arms ({delimiter}-separated", self.arms.len())?;
        if let Some((name, why)) = &self.label_column {
            write!(f, "; column '{name}' labels the rows: {why}")?;
        }
        if self.minimised {
            write!(f, "; values negated by --minimise")?;
        }
        if let Some(shift) = self.shift {
            write!(
                f,
                "; every value shifted by {shift:+} so the worst is 0, as the best mean was not positive"
            )?;
        }
        writeln!(f, "):")?;
        let width = self.arms.iter().map(|a| a.name.chars().count()).max().unwrap_or(0).max(3);
        writeln!(f, "  {:<width$}  {:>6}  {:>12}", "arm", "count", "mean")?;
        for a in &self.arms {
            writeln!(f, "  {:<width$}  {:>6}  {:>12.6}", a.name, a.count, a.mean)?;
        }
        Ok(())
    }
}

/// Cells read as a missing observation (any case): empty, `NA`, `N/A`, `NaN`, `null`, `#N/A`.
const MISSING: [&str; 5] = ["na", "n/a", "nan", "null", "#n/a"];

/// Whether a cell is a missing observation.
fn is_missing(cell: &str) -> bool {
    cell.is_empty() || MISSING.iter().any(|m| cell.eq_ignore_ascii_case(m))
}

/// A cell as a finite number, if it is one.
fn finite(cell: &str) -> Option<f64> {
    cell.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Whether a cell is text — neither missing nor a number — as a header's or a label's. `inf`
/// and `1e309` are numbers (not finite ones): a data cell of them is refused, never taken for a
/// label.
fn is_text(cell: &str) -> bool {
    !is_missing(cell) && cell.parse::<f64>().is_err()
}

/// The value of the data cell `text` at `line` in column `column`: `None` if it is missing.
fn value(text: &str, line: usize, column: &str) -> Result<Option<f64>, TableProblem> {
    if is_missing(text) {
        return Ok(None);
    }
    let (line, column, cell) = (line, column.to_string(), text.to_string());
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Some(v)),
        Ok(_) => Err(TableProblem::NotFinite { line, column, cell }),
        Err(_) => Err(TableProblem::NotANumber { line, column, cell }),
    }
}

/// The largest |value| of `values` (0 for none).
pub(crate) fn largest_magnitude(values: &[f64]) -> f64 {
    values.iter().fold(0.0, |m, y| m.max(y.abs()))
}

/// A record of cells with its 1-based line.
type Row = (usize, Vec<String>);

/// The first `limit` non-blank records of `bytes` split at `delimiter` (quotes as in RFC 4180,
/// spaces around cells trimmed, a UTF-8 byte-order mark skipped), each with its 1-based line.
fn records(bytes: &[u8], delimiter: u8, limit: usize) -> Result<Vec<Row>, TableProblem> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let newlines: Vec<usize> =
        bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i).collect();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .delimiter(delimiter)
        .from_reader(bytes);
    let mut rows = Vec::new();
    for record in reader.records() {
        if rows.len() == limit {
            break;
        }
        let record = record.map_err(|e| match e.kind() {
            csv::ErrorKind::Utf8 { pos, .. } => TableProblem::Unreadable(format!(
                "line {} is not UTF-8 text; save the file as UTF-8 (CSV UTF-8 in a spreadsheet)",
                pos.as_ref().map_or(0, csv::Position::line)
            )),
            _ => TableProblem::Unreadable(e.to_string()),
        })?;
        if record.iter().all(str::is_empty) {
            continue;
        }
        // The reader's own line count skips blank lines and counts a Windows line end twice:
        // count the line ends before the record's first byte instead.
        let at = record.position().map_or(0, |p| p.byte() as usize);
        // (The position may sit on the line ends before the record.)
        let at = at
            + bytes
                .get(at..)
                .map_or(0, |rest| rest.iter().take_while(|b| matches!(b, b'\r' | b'\n')).count());
        let line = 1 + newlines.partition_point(|&n| n < at);
        rows.push((line, record.iter().map(str::to_string).collect()));
    }
    Ok(rows)
}

/// The delimiters tried when none is given, in order of preference.
const DELIMITERS: [u8; 4] = [b',', b'\t', b';', b'|'];

/// The delimiter that splits the first 20 records into one number of cells, the most of any
/// candidate ([`DELIMITERS`]); a comma if none does.
fn sniff(bytes: &[u8]) -> u8 {
    let mut best = (b',', 1);
    for d in DELIMITERS {
        let Ok(rows) = records(bytes, d, 20) else { continue };
        let Some((_, first)) = rows.first() else { continue };
        if first.len() > best.1 && rows.iter().all(|(_, r)| r.len() == first.len()) {
            best = (d, first.len());
        }
    }
    best.0
}

/// Header names of a leading column that labels the rows rather than being an arm (any case).
const LABEL_NAMES: [&str; 15] = [
    "",
    "index",
    "id",
    "year",
    "date",
    "time",
    "datetime",
    "timestamp",
    "month",
    "day",
    "week",
    "quarter",
    "period",
    "t",
    "unnamed: 0",
];

/// Why the leading column of `data` (named `name` in a header) labels the rows, if it does.
fn label_reason(name: Option<&str>, data: &[Row]) -> Option<LabelReason> {
    if name.is_some_and(|n| LABEL_NAMES.iter().any(|l| n.eq_ignore_ascii_case(l))) {
        return Some(LabelReason::Name);
    }
    let cells: Vec<&str> = data.iter().map(|(_, r)| r[0].as_str()).collect();
    if cells.first().is_some_and(|c| is_text(c)) {
        return Some(LabelReason::Text);
    }
    // Integers exactly representable in a double, as integers.
    let integers: Option<Vec<i64>> = cells
        .iter()
        .map(|c| finite(c).filter(|v| v.fract() == 0.0 && v.abs() < 2f64.powi(53)).map(|v| v as i64))
        .collect();
    match integers {
        Some(v) if v.len() >= 3 && v.windows(2).all(|w| w[1] == w[0] + 1) => Some(LabelReason::Increasing),
        _ => None,
    }
}

/// The column `reference` names — a header name (exact, else in any case) or a 1-based
/// number — among `names`.
fn column_of(reference: &str, names: &[String], header: bool) -> Result<usize, TableProblem> {
    let by_name = names
        .iter()
        .position(|n| n == reference)
        .or_else(|| names.iter().position(|n| n.eq_ignore_ascii_case(reference)));
    let by_number =
        reference.parse::<usize>().ok().filter(|&i| (1..=names.len()).contains(&i)).map(|i| i - 1);
    by_name.or(by_number).ok_or_else(|| TableProblem::NoSuchColumn {
        column: reference.to_string(),
        columns: if header { names.to_vec() } else { Vec::new() },
        count: names.len(),
    })
}

impl Table {
    /// Reads the arms file at `path` with the default choices (see the module documentation).
    pub fn read(path: &Path) -> Result<Self, TableError> {
        Self::read_with(path, &ReadOptions::default()).map(|(table, _)| table)
    }

    /// Reads the arms file at `path` as `options` say, with what the reader made of it.
    pub fn read_with(path: &Path, options: &ReadOptions) -> Result<(Self, ReadReport), TableError> {
        let err = |problem| TableError { path: path.to_path_buf(), problem };
        let bytes = std::fs::read(path).map_err(|e| err(TableProblem::Unreadable(e.to_string())))?;
        Self::parse_with(&bytes, options).map_err(err)
    }

    /// Parses the text of an arms file with the default choices.
    pub fn parse(text: &str) -> Result<Self, TableProblem> {
        Self::parse_with(text.as_bytes(), &ReadOptions::default()).map(|(table, _)| table)
    }

    /// Parses the bytes of an arms file as `options` say, with what the reader made of them.
    pub fn parse_with(bytes: &[u8], options: &ReadOptions) -> Result<(Self, ReadReport), TableProblem> {
        let delimiter = match options.delimiter {
            Some(d) => u8::try_from(d).map_err(|_| TableProblem::Delimiter(d))?,
            None => sniff(bytes),
        };
        let rows = records(bytes, delimiter, usize::MAX)?;
        let Some((first_line, first)) = rows.first() else { return Err(TableProblem::Empty) };
        let expected = first.len();
        for (line, cells) in &rows {
            if cells.len() != expected {
                return Err(TableProblem::Ragged {
                    line: *line,
                    found: cells.len(),
                    expected,
                    first_line: *first_line,
                });
            }
        }
        let (mut table, label_column) = match &options.long {
            Some(long) => (Self::pivot(&rows, long)?, None),
            None => Self::wide(&rows, options)?,
        };
        if let Some(columns) = options.columns.as_ref().filter(|_| options.long.is_some()) {
            let picked =
                columns.iter().map(|c| column_of(c, &table.names, true)).collect::<Result<Vec<_>, _>>()?;
            table.names = picked.iter().map(|&a| table.names[a].clone()).collect();
            table.columns = picked.iter().map(|&a| table.columns[a].clone()).collect();
        }
        if table.names.len() < 2 {
            return Err(TableProblem::OneArm { names: table.names });
        }
        for (i, name) in table.names.iter().enumerate() {
            if table.names[..i].contains(name) {
                return Err(TableProblem::DuplicateName(name.clone()));
            }
        }
        if options.minimise {
            for y in table.columns.iter_mut().flatten().flatten() {
                *y = -*y;
            }
        }
        let arms = table
            .names
            .iter()
            .zip(&table.columns)
            .map(|(name, column)| {
                let observed: Vec<f64> = column.iter().flatten().copied().collect();
                let mean = observed.iter().sum::<f64>() / observed.len().max(1) as f64;
                ArmRead { name: name.clone(), count: observed.len(), mean }
            })
            .collect();
        let report = ReadReport {
            delimiter: char::from(delimiter),
            label_column,
            arms,
            minimised: options.minimise,
            shift: None,
        };
        Ok((table, report))
    }

    /// A wide table: one column per arm, an optional header and label column.
    fn wide(
        rows: &[Row],
        options: &ReadOptions,
    ) -> Result<(Self, Option<(String, LabelReason)>), TableProblem> {
        let (_, first) = &rows[0];
        // A header has text past its first cell, or a text first cell over a numeric one (a
        // label column's name over its first label would make both text).
        let header = first[1..].iter().any(|c| is_text(c))
            || (is_text(&first[0]) && rows.get(1).is_none_or(|(_, next)| !is_text(&next[0])));
        let data = if header { &rows[1..] } else { rows };
        if data.is_empty() {
            return Err(TableProblem::NoRows);
        }
        let width = first.len();
        let names: Vec<String> = match header {
            true => first.clone(),
            false => (1..=width).map(|i| i.to_string()).collect(),
        };
        let label = match options.label_column.as_deref() {
            Some(none) if none.eq_ignore_ascii_case("none") => None,
            Some(reference) => Some((column_of(reference, &names, header)?, LabelReason::Chosen)),
            None if options.columns.is_some() => None,
            None => label_reason(header.then(|| names[0].as_str()), data).map(|why| (0, why)),
        };
        let picked: Vec<usize> = match &options.columns {
            Some(columns) => {
                columns.iter().map(|c| column_of(c, &names, header)).collect::<Result<_, _>>()?
            }
            None => (0..width).filter(|&i| Some(i) != label.map(|(l, _)| l)).collect(),
        };
        if let Some(i) = picked.iter().enumerate().find_map(|(k, i)| picked[..k].contains(i).then_some(*i)) {
            return Err(TableProblem::DuplicateName(if header {
                names[i].clone()
            } else {
                (i + 1).to_string()
            }));
        }
        let arm_names: Vec<String> = match header {
            true => picked.iter().map(|&i| names[i].clone()).collect(),
            false => (0..picked.len()).map(|a| format!("arm{a}")).collect(),
        };
        let mut columns = vec![Vec::with_capacity(data.len()); picked.len()];
        for (line, cells) in data {
            for (a, &i) in picked.iter().enumerate() {
                columns[a].push(value(&cells[i], *line, &arm_names[a])?);
            }
        }
        let lines = data.iter().map(|(line, _)| *line).collect();
        let labels = label.map(|(i, _)| {
            let name = if header { names[i].clone() } else { String::new() };
            (name, data.iter().map(|(_, cells)| cells[i].clone()).collect())
        });
        let label =
            label.map(|(i, why)| (if header { names[i].clone() } else { format!("column {}", i + 1) }, why));
        Ok((Self { names: arm_names, columns, lines, labels }, label))
    }

    /// A long table: one row per observation, a column naming its arm and one holding its
    /// value, optionally one whose values align the arms into rows.
    fn pivot(rows: &[Row], long: &LongFormat) -> Result<Self, TableProblem> {
        let (_, header) = &rows[0];
        let data = &rows[1..];
        if data.is_empty() {
            return Err(TableProblem::NoRows);
        }
        let arm = column_of(&long.arm, header, true)?;
        let value_at = column_of(&long.value, header, true)?;
        let time = long.time.as_deref().map(|t| column_of(t, header, true)).transpose()?;
        let mut names: Vec<String> = Vec::new();
        let mut columns: Vec<Vec<Option<f64>>> = Vec::new();
        let mut first_lines: Vec<Vec<usize>> = Vec::new();
        let mut times: Vec<&str> = Vec::new();
        let mut lines: Vec<usize> = Vec::new();
        for (line, cells) in data {
            let name = &cells[arm];
            if name.is_empty() {
                return Err(TableProblem::NoArmName { line: *line, column: header[arm].clone() });
            }
            let a = match names.iter().position(|n| n == name) {
                Some(a) => a,
                None => {
                    names.push(name.clone());
                    columns.push(Vec::new());
                    first_lines.push(Vec::new());
                    names.len() - 1
                }
            };
            let row = match time {
                Some(t) => match times.iter().position(|x| *x == cells[t]) {
                    Some(row) => row,
                    None => {
                        times.push(&cells[t]);
                        lines.push(*line);
                        times.len() - 1
                    }
                },
                None => {
                    if columns[a].len() == lines.len() {
                        lines.push(*line);
                    }
                    columns[a].len()
                }
            };
            if columns[a].len() <= row {
                columns[a].resize(row + 1, None);
                first_lines[a].resize(row + 1, 0);
            }
            if first_lines[a][row] != 0 {
                return Err(TableProblem::TwoValues {
                    arm: name.clone(),
                    time: time.map(|t| cells[t].clone()).unwrap_or_default(),
                    line: *line,
                    first_line: first_lines[a][row],
                });
            }
            first_lines[a][row] = *line;
            columns[a][row] = value(&cells[value_at], *line, name)?;
        }
        for column in &mut columns {
            column.resize(lines.len(), None);
        }
        let labels = time.map(|t| (header[t].clone(), times.iter().map(|x| x.to_string()).collect()));
        Ok(Self { names, columns, lines, labels })
    }

    /// Each arm's observations, missing cells left out; an error names a column with fewer
    /// than `needed`.
    pub fn observations(&self, needed: usize) -> Result<Vec<Vec<f64>>, TableProblem> {
        let columns: Vec<Vec<f64>> =
            self.columns.iter().map(|c| c.iter().flatten().copied().collect()).collect();
        for (a, c) in columns.iter().enumerate() {
            if c.len() < needed {
                return Err(TableProblem::TooFewObservations {
                    column: self.names[a].clone(),
                    found: c.len(),
                    needed,
                });
            }
        }
        Ok(columns)
    }

    /// The observations as a matrix (rows = data rows, columns = arms), for data sets that must
    /// have no gaps (the papers'); an error names the first missing cell.
    pub fn complete(&self) -> Result<DMatrix<f64>, TableProblem> {
        for (row, line) in self.lines.iter().enumerate() {
            if let Some(a) = self.columns.iter().position(|c| c[row].is_none()) {
                return Err(TableProblem::Missing { line: *line, column: self.names[a].clone() });
            }
        }
        Ok(DMatrix::from_fn(self.lines.len(), self.names.len(), |r, a| self.columns[a][r].unwrap_or(0.0)))
    }

    /// The empirical covariance of the z-scored columns (module documentation); exactly the
    /// real-data sets' prior when no cell is missing.
    pub fn zscore_covariance(&self) -> Result<DMatrix<f64>, TableProblem> {
        let observed = self.observations(2)?;
        // A column without spread: equal observations, or ones out of double precision's range.
        let constant = |a: usize| {
            let (column, values) = (self.names[a].clone(), &observed[a]);
            // Two finite doubles differ by exactly 0 only if they are equal (gradual underflow).
            match values.iter().all(|&y| y - values[0] == 0.0) {
                true => TableProblem::Constant { column, value: values[0] },
                false => TableProblem::OutOfScale { column, largest: largest_magnitude(values) },
            }
        };
        if let Ok(m) = self.complete() {
            // The real-data sets' computation, bit for bit.
            return zscore_covariance(&m).map_err(constant);
        }
        let n = self.lines.len();
        let mut z = DMatrix::zeros(n, self.names.len());
        for (a, column) in self.columns.iter().enumerate() {
            let values = &observed[a];
            let count = values.len() as f64;
            let mean = values.iter().fold(0.0, |s, y| s + y) / count;
            let sd = (values.iter().map(|y| (y - mean) * (y - mean)).sum::<f64>() / (count - 1.0)).sqrt();
            if !(sd.is_finite() && sd > 0.0) {
                return Err(constant(a));
            }
            for (row, cell) in column.iter().enumerate() {
                if let Some(y) = cell {
                    z[(row, a)] = (y - mean) / sd;
                }
            }
        }
        let cov = z.tr_mul(&z) / (n as f64 - 1.0);
        let scale: Vec<f64> = (0..cov.nrows()).map(|i| cov[(i, i)].sqrt()).collect();
        let cov = DMatrix::from_fn(cov.nrows(), cov.ncols(), |i, j| cov[(i, j)] / (scale[i] * scale[j]));
        Ok((&cov + cov.transpose()) * 0.5)
    }
}

/// Reads a coordinates file for `names` (one row per arm, in order; see the module
/// documentation) into points.
pub fn read_coordinates(path: &Path, names: &[String]) -> Result<Vec<Vec<f64>>, TableError> {
    read_points(path, Some(names))
}

/// The points of a coordinates file: one row per point, one column per dimension, an optional
/// header and an optional leading label column. With `names`, there is one row per name and a
/// row's label must be its name; without, any number of rows and any labels.
pub fn read_points(path: &Path, names: Option<&[String]>) -> Result<Vec<Vec<f64>>, TableError> {
    let err = |problem| TableError { path: path.to_path_buf(), problem };
    let text = std::fs::read_to_string(path).map_err(|e| err(TableProblem::Unreadable(e.to_string())))?;
    coordinates(&text, names).map_err(err)
}

fn coordinates(text: &str, names: Option<&[String]>) -> Result<Vec<Vec<f64>>, TableProblem> {
    let rows = records(text.as_bytes(), b',', usize::MAX)?;
    let Some((first_line, first)) = rows.first() else { return Err(TableProblem::Empty) };
    let expected = first.len();
    if let Some((line, cells)) = rows.iter().find(|(_, c)| c.len() != expected) {
        return Err(TableProblem::Ragged {
            line: *line,
            found: cells.len(),
            expected,
            first_line: *first_line,
        });
    }
    // A header has a cell that is not a number, other than a leading arm name (without names:
    // other than a leading label, unless it is the only cell).
    let header = first.iter().enumerate().any(|(i, c)| {
        finite(c).is_none()
            && match names {
                Some(names) => !(i == 0 && names.iter().any(|n| n == c)),
                None => i > 0 || first.len() == 1,
            }
    });
    let data = if header { &rows[1..] } else { &rows[..] };
    let Some((_, first_data)) = data.first() else { return Err(TableProblem::NoRows) };
    let named = first_data.first().is_some_and(|c| is_text(c));
    if let Some(names) = names
        && data.len() != names.len()
    {
        return Err(TableProblem::CoordinateRows { rows: data.len(), arms: names.len() });
    }
    let column_name = |i: usize| if header { first[i].to_string() } else { (i + 1).to_string() };
    let mut points = Vec::with_capacity(data.len());
    for (row, (line, cells)) in data.iter().enumerate() {
        let mut cells = cells.iter().enumerate();
        if named
            && let Some((_, name)) = cells.next()
            && let Some(expected) = names.and_then(|n| n.get(row))
            && name != expected
        {
            return Err(TableProblem::CoordinateName {
                line: *line,
                found: name.clone(),
                expected: expected.clone(),
            });
        }
        let mut point = Vec::new();
        for (i, cell) in cells {
            match value(cell, *line, &column_name(i))? {
                Some(x) => point.push(x),
                None => {
                    let (line, column, cell) = (*line, column_name(i), String::new());
                    return Err(TableProblem::NotANumber { line, column, cell });
                }
            }
        }
        if point.is_empty() {
            return Err(TableProblem::NoCoordinates { line: *line });
        }
        points.push(point);
    }
    Ok(points)
}

/// The Gram matrix of `kernel` over `points`, for the prior of a coordinates file.
pub fn kernel_covariance(kernel: &dyn Kernel, points: &[Vec<f64>]) -> Result<DMatrix<f64>, TableProblem> {
    gram_matrix(kernel, points).map_err(|error| TableProblem::Kernel { error, lengthscale: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_table_reads_labels_headers_and_missing_cells() {
        let t = Table::parse("\u{feff}Date,a,b\r\n2020-01-01,1,2\r\n\r\n2020-01-02,,4\r\n2020-01-03,3,\r\n")
            .unwrap();
        assert_eq!(t.names, ["a", "b"]);
        assert_eq!(t.columns, vec![vec![Some(1.0), None, Some(3.0)], vec![Some(2.0), Some(4.0), None]]);
        assert_eq!(t.lines, [2, 4, 5]);
        let t = Table::parse("1,2\n3,4\n").unwrap();
        assert_eq!(t.names, ["arm0", "arm1"]);
        assert_eq!(t.lines, [1, 2]);
    }

    #[test]
    fn env_table_errors_name_the_line_and_column() {
        let e = |text: &str| Table::parse(text).unwrap_err();
        assert_eq!(
            e("a,b\n1,2\n3,abc\n"),
            TableProblem::NotANumber { line: 3, column: "b".into(), cell: "abc".into() }
        );
        assert_eq!(
            e("a,b\n1,inf\n"),
            TableProblem::NotFinite { line: 2, column: "b".into(), cell: "inf".into() }
        );
        assert_eq!(
            e("a,b\n1,2\n3\n"),
            TableProblem::Ragged { line: 3, found: 1, expected: 2, first_line: 1 }
        );
        assert_eq!(e(""), TableProblem::Empty);
        assert_eq!(e("a,b\n"), TableProblem::NoRows);
        assert_eq!(e("a\n1\n2\n"), TableProblem::OneArm { names: vec!["a".into()] });
        assert_eq!(e("Date,a\nmon,1\n"), TableProblem::OneArm { names: vec!["a".into()] });
        assert_eq!(e("a,a\n1,2\n"), TableProblem::DuplicateName("a".into()));
        let msg = TableError {
            path: "arms.csv".into(),
            problem: TableProblem::NotANumber { line: 5, column: "arm5".into(), cell: "abc".into() },
        }
        .to_string();
        assert!(msg.starts_with("arms.csv line 5, column arm5: 'abc' is not a number"), "{msg}");
    }

    #[test]
    fn env_table_a_non_finite_first_cell_is_refused_like_any_other() {
        // Taken for a label, the cell used to drop its whole column without a word.
        for cell in ["inf", "-inf", "Infinity", "1e309", "-1e309"] {
            for text in [format!("north,south,east\n{cell},2,3\n1,2,3\n"), format!("{cell},2,3\n1,2,3\n")] {
                let line = if text.starts_with("north") { 2 } else { 1 };
                let column = if line == 2 { "north" } else { "arm0" };
                assert_eq!(
                    Table::parse(&text).unwrap_err(),
                    TableProblem::NotFinite { line, column: column.into(), cell: cell.into() },
                    "{text}"
                );
            }
            // As on a later line.
            assert_eq!(
                Table::parse(&format!("north,south,east\n1,2,3\n{cell},2,3\n")).unwrap_err(),
                TableProblem::NotFinite { line: 3, column: "north".into(), cell: cell.into() },
            );
        }
        // NaN, NA and friends are missing observations, in the column they are in.
        for cell in ["NaN", "nan", "NA", "N/A", "null", "#N/A"] {
            let t = Table::parse(&format!("north,south,east\n{cell},2,3\n1,2,3\n")).unwrap();
            assert_eq!(t.names, ["north", "south", "east"], "{cell}");
            assert_eq!(t.columns[0], [None, Some(1.0)], "{cell}");
        }
        let msg = TableError {
            path: "arms.csv".into(),
            problem: Table::parse("north,south\ninf,2\n").unwrap_err(),
        }
        .to_string();
        assert!(msg.starts_with("arms.csv line 2, column north: 'inf' is not a finite number"), "{msg}");
        // A label column stays one.
        assert_eq!(Table::parse("Date,a,b\nmon,1,2\n").unwrap().names, ["a", "b"]);
    }

    /// The arms read from `text` with `options`: (name, count, mean) each, and the label column.
    type Arms = Vec<(String, usize, f64)>;

    fn read(text: &str, options: &ReadOptions) -> (Arms, Option<(String, LabelReason)>) {
        let (table, report) = Table::parse_with(text.as_bytes(), options).unwrap();
        assert_eq!(table.names, report.arms.iter().map(|a| a.name.clone()).collect::<Vec<_>>());
        (report.arms.into_iter().map(|a| (a.name, a.count, a.mean)).collect(), report.label_column)
    }

    fn arms(list: &[(&str, usize, f64)]) -> Arms {
        list.iter().map(|(n, c, m)| (n.to_string(), *c, *m)).collect()
    }

    #[test]
    fn env_table_reads_tables_as_people_have_them() {
        let default = ReadOptions::default();
        // A numeric YEAR column before the months (it used to become an arm with f = 1).
        let (got, label) = read("YEAR,jan,feb\n1950,1,4\n1951,3,6\n1952,5,8\n", &default);
        assert_eq!(got, arms(&[("jan", 3, 3.0), ("feb", 3, 6.0)]));
        assert_eq!(label, Some(("YEAR".into(), LabelReason::Name)));
        // pandas' to_csv(): an unnamed index column.
        let (got, label) = read(",a,b\n0,1,2\n1,3,4\n", &default);
        assert_eq!(got, arms(&[("a", 2, 2.0), ("b", 2, 3.0)]));
        assert_eq!(label, Some((String::new(), LabelReason::Name)));
        // Integers rising by one under any name.
        let (got, label) = read("k,a,b\n10,1,2\n11,3,4\n12,5,6\n", &default);
        assert_eq!(got, arms(&[("a", 3, 3.0), ("b", 3, 4.0)]));
        assert_eq!(label, Some(("k".into(), LabelReason::Increasing)));
        // ... but not integers that rise by more, or fall somewhere: that is an arm.
        for (text, mean) in [("k,a\n10,1\n11,3\n15,5\n", 12.0), ("k,a\n10,1\n9,3\n11,5\n", 10.0)] {
            let (got, label) = read(text, &default);
            assert_eq!(got, arms(&[("k", 3, mean), ("a", 3, 3.0)]), "{text}");
            assert_eq!(label, None, "{text}");
        }
        // Quoted fields: a quoted number, a name with the delimiter in it.
        let (got, label) = read("\"Smith, J\",\"Doe, A\"\n\"1.0\",2\n3,\"4\"\n", &default);
        assert_eq!(got, arms(&[("Smith, J", 2, 2.0), ("Doe, A", 2, 3.0)]));
        assert_eq!(label, None);
        // NA, NaN and empty cells are missing.
        let (got, _) = read("a,b\n1,NA\nNaN,4\n3,\n", &default);
        assert_eq!(got, arms(&[("a", 2, 2.0), ("b", 1, 4.0)]));
        // TSV, semicolons (a decimal-comma locale's CSV), pipes; a BOM and Windows line ends.
        for text in [
            "\u{feff}date\ta\tb\r\n2020-01-01\t1\t2\r\n2020-01-02\t3\t4\r\n",
            "date;a;b\n2020-01-01;1;2\n2020-01-02;3;4\n",
            "date|a|b\n2020-01-01|1|2\n2020-01-02|3|4\n",
        ] {
            let (got, label) = read(text, &default);
            assert_eq!(got, arms(&[("a", 2, 2.0), ("b", 2, 3.0)]), "{text}");
            assert_eq!(label, Some(("date".into(), LabelReason::Name)), "{text}");
        }
        // A text label column without a header.
        let (got, label) = read("mon,1,2\ntue,3,4\n", &default);
        assert_eq!(got, arms(&[("arm0", 2, 2.0), ("arm1", 2, 3.0)]));
        assert_eq!(label, Some(("column 1".into(), LabelReason::Text)));
        // All negative (losses) and --minimise: values negated.
        let minimise = ReadOptions { minimise: true, ..ReadOptions::default() };
        let (got, _) = read("rmse_a,rmse_b\n-0.5,-0.25\n-1.5,-0.75\n", &minimise);
        assert_eq!(got, arms(&[("rmse_a", 2, 1.0), ("rmse_b", 2, 0.5)]));
    }

    #[test]
    fn env_table_columns_chosen_by_name_or_number() {
        let text = "YEAR,jan,feb,mar\n1950,1,4,7\n1951,3,6,9\n1952,5,8,11\n";
        let label = |l: &str| ReadOptions { label_column: Some(l.into()), ..ReadOptions::default() };
        // --label-column none: the year is an arm after all.
        let (got, label_column) = read(text, &label("none"));
        assert_eq!(got.len(), 4);
        assert_eq!(label_column, None);
        let (got, label_column) = read(text, &label("feb"));
        assert_eq!(got, arms(&[("YEAR", 3, 1951.0), ("jan", 3, 3.0), ("mar", 3, 9.0)]));
        assert_eq!(label_column, Some(("feb".into(), LabelReason::Chosen)));
        let columns = |c: &[&str]| ReadOptions {
            columns: Some(c.iter().map(|c| c.to_string()).collect()),
            ..ReadOptions::default()
        };
        let (got, _) = read(text, &columns(&["mar", "2"]));
        assert_eq!(got, arms(&[("mar", 3, 9.0), ("jan", 3, 3.0)]));
        let problem = Table::parse_with(text.as_bytes(), &columns(&["apr", "jan"])).unwrap_err();
        assert_eq!(
            problem,
            TableProblem::NoSuchColumn {
                column: "apr".into(),
                columns: vec!["YEAR".into(), "jan".into(), "feb".into(), "mar".into()],
                count: 4
            }
        );
        let msg = TableError { path: "t.csv".into(), problem }.to_string();
        assert!(msg.contains("no column 'apr': its columns are 'YEAR', 'jan', 'feb', 'mar'"), "{msg}");
    }

    #[test]
    fn env_table_reads_long_format() {
        let long = |spec: &str| ReadOptions { long: Some(spec.parse().unwrap()), ..ReadOptions::default() };
        let text = "symbol,date,price\nAAPL,d1,1\nMSFT,d1,10\nAAPL,d2,3\nMSFT,d3,20\n";
        let (table, report) = Table::parse_with(text.as_bytes(), &long("symbol,price,date")).unwrap();
        assert_eq!(table.names, ["AAPL", "MSFT"]);
        // Aligned by date: d1, d2, d3.
        assert_eq!(table.columns, vec![vec![Some(1.0), Some(3.0), None], vec![Some(10.0), None, Some(20.0)]]);
        assert_eq!(table.lines, [2, 4, 5]);
        assert_eq!(report.arms[1], ArmRead { name: "MSFT".into(), count: 2, mean: 15.0 });
        // Without a time column the k-th observation of each arm is row k.
        let (table, _) = Table::parse_with(text.as_bytes(), &long("symbol,price")).unwrap();
        assert_eq!(table.columns, vec![vec![Some(1.0), Some(3.0)], vec![Some(10.0), Some(20.0)]]);
        let twice = "symbol,date,price\nAAPL,d1,1\nAAPL,d1,2\nMSFT,d1,3\n";
        assert_eq!(
            Table::parse_with(twice.as_bytes(), &long("symbol,price,date")).unwrap_err(),
            TableProblem::TwoValues { arm: "AAPL".into(), time: "d1".into(), line: 3, first_line: 2 }
        );
        assert!("symbol".parse::<LongFormat>().is_err());
        assert!("a,b,c,d".parse::<LongFormat>().is_err());
    }

    #[test]
    fn env_table_values_too_large_for_their_spread_are_not_called_constant() {
        for text in ["a,b\n1e308,1\n1.5e308,2\n", "a,b\n1e308,1\n1.5e308,2\n,3\n"] {
            let problem = Table::parse(text).unwrap().zscore_covariance().unwrap_err();
            assert_eq!(problem, TableProblem::OutOfScale { column: "a".into(), largest: 1.5e308 }, "{text}");
            let msg = TableError { path: "arms.csv".into(), problem }.to_string();
            assert!(
                msg.contains("column a: its observations, up to 1.5e308 in magnitude, are too large"),
                "{msg}"
            );
        }
        // Equal ones are constant, however large.
        assert_eq!(
            Table::parse("a,b\n1e308,1\n1e308,2\n").unwrap().zscore_covariance().unwrap_err(),
            TableProblem::Constant { column: "a".into(), value: 1e308 }
        );
    }

    #[test]
    fn env_table_covariance_matches_the_real_data_recipe_and_handles_missing_cells() {
        let full = Table::parse("a,b,c\n1,2,0\n3,5,1\n4,4,7\n").unwrap();
        let m = DMatrix::from_row_slice(3, 3, &[1.0, 2.0, 0.0, 3.0, 5.0, 1.0, 4.0, 4.0, 7.0]);
        assert_eq!(full.zscore_covariance().unwrap(), super::zscore_covariance(&m).unwrap());
        let gappy = Table::parse("a,b,c\n1,2,0\n3,,1\n4,4,7\n6,1,\n").unwrap();
        let k = gappy.zscore_covariance().unwrap();
        assert!((0..3).all(|i| (k[(i, i)] - 1.0).abs() < 1e-12));
        assert_eq!(k, k.transpose());
        assert!(k.symmetric_eigenvalues().iter().all(|&l| l > -1e-12));
        let constant = Table::parse("a,b\n1,2\n1,3\n").unwrap();
        assert_eq!(
            constant.zscore_covariance().unwrap_err(),
            TableProblem::Constant { column: "a".into(), value: 1.0 }
        );
        let lonely = Table::parse("a,b\n1,2\n,3\n").unwrap();
        assert_eq!(
            lonely.zscore_covariance().unwrap_err(),
            TableProblem::TooFewObservations { column: "a".into(), found: 1, needed: 2 }
        );
    }

    #[test]
    fn env_table_coordinates_in_arm_order() {
        let names = ["a".to_string(), "b".to_string()];
        assert_eq!(
            coordinates("arm,x,y\na,0,1\nb,2,3\n", Some(&names)).unwrap(),
            vec![vec![0.0, 1.0], vec![2.0, 3.0]]
        );
        assert_eq!(coordinates("0.5\n0.7\n", Some(&names)).unwrap(), vec![vec![0.5], vec![0.7]]);
        assert_eq!(
            coordinates("b,0\na,1\n", Some(&names)).unwrap_err(),
            TableProblem::CoordinateName { line: 1, found: "b".into(), expected: "a".into() }
        );
        assert_eq!(
            coordinates("0\n1\n2\n", Some(&names)).unwrap_err(),
            TableProblem::CoordinateRows { rows: 3, arms: 2 }
        );
        assert_eq!(
            coordinates("x\n1\nq\n", Some(&names)).unwrap_err(),
            TableProblem::NotANumber { line: 3, column: "x".into(), cell: "q".into() }
        );
    }

    #[test]
    fn env_table_points_without_names_take_any_rows_and_labels() {
        let points = |text: &str| coordinates(text, None);
        assert_eq!(points("x\n0.1\n0.2\n0.3\n").unwrap(), vec![vec![0.1], vec![0.2], vec![0.3]]);
        assert_eq!(points("0.1\n0.2\n").unwrap(), vec![vec![0.1], vec![0.2]]);
        assert_eq!(points("name,x,y\nleft,0,1\nright,2,3\n").unwrap(), vec![vec![0.0, 1.0], vec![2.0, 3.0]]);
        assert_eq!(points("left,0,1\nright,2,3\n").unwrap(), vec![vec![0.0, 1.0], vec![2.0, 3.0]]);
        assert_eq!(points("x\n").unwrap_err(), TableProblem::NoRows);
        assert_eq!(points("left\nright\n").unwrap_err(), TableProblem::NoCoordinates { line: 2 });
        assert_eq!(
            points("x,y\n1,\n").unwrap_err(),
            TableProblem::NotANumber { line: 2, column: "y".into(), cell: String::new() }
        );
    }
}
