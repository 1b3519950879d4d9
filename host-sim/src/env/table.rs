//! The CSV reader of every data file — the papers' data sets and a user's own problem
//! (`host-sim run custom --arms FILE.csv [--coords FILE.csv]`, [`super::custom`]) — whose
//! errors name the file, the line and the column in the user's words.
//!
//! **The arms file**: one column per arm, one row per observation, comma-separated (the papers'
//! data sets must have no empty cell: [`Table::complete`]). A header
//! line names the arms (it is a header when one of its cells is not a number; without one the
//! arms are `arm0`, `arm1`, …). A leading column whose first data cell is not a number (a date,
//! a label) is ignored. An empty cell is a missing observation. Blank lines, spaces around
//! cells, Windows line ends and a UTF-8 byte-order mark are tolerated; cells are not quoted.
//!
//! **The problem** (seed 000 §5.1's real-data recipe, [`super::RealData`]): f(a) is the mean of arm
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
            TableProblem::Inconsistent => write!(
                f,
                "{path} passed every check but the model could not be built from it: this is a bug in host-sim; please report it with the file"
            ),
        }
    }
}

impl std::error::Error for TableError {}

/// A cell as a finite number, if it is one.
fn finite(cell: &str) -> Option<f64> {
    cell.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Whether a cell is text — neither empty nor a number — as a header's or a label's. `NaN`,
/// `inf` and `1e309` are numbers (not finite ones): a data cell of them is refused, never taken
/// for a label.
fn is_text(cell: &str) -> bool {
    !cell.is_empty() && cell.parse::<f64>().is_err()
}

/// The value of the data cell `text` at `line` in column `column`: `None` if it is empty.
fn value(text: &str, line: usize, column: &str) -> Result<Option<f64>, TableProblem> {
    if text.is_empty() {
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

/// The cells of the non-blank lines, each with its 1-based line number.
fn rows(text: &str) -> Vec<(usize, Vec<&str>)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, l.split(',').map(str::trim).collect()))
        .collect()
}

impl Table {
    /// Reads the arms file at `path` (see the module documentation for the format).
    pub fn read(path: &Path) -> Result<Self, TableError> {
        let text = std::fs::read_to_string(path).map_err(|e| TableError {
            path: path.to_path_buf(),
            problem: TableProblem::Unreadable(e.to_string()),
        })?;
        Self::parse(&text).map_err(|problem| TableError { path: path.to_path_buf(), problem })
    }

    /// Parses the text of an arms file.
    pub fn parse(text: &str) -> Result<Self, TableProblem> {
        let rows = rows(text);
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
        let header = first.iter().any(|c| is_text(c));
        let data = if header { &rows[1..] } else { &rows[..] };
        let Some((_, first_data)) = data.first() else { return Err(TableProblem::NoRows) };
        // A leading label column (a date, a name): its first data cell is text.
        let skip = usize::from(first_data.first().is_some_and(|c| is_text(c)));
        let names: Vec<String> = if header {
            first[skip..].iter().map(|c| c.trim_matches('"').to_string()).collect()
        } else {
            (0..expected - skip).map(|a| format!("arm{a}")).collect()
        };
        if names.len() < 2 {
            return Err(TableProblem::OneArm { names });
        }
        for (i, name) in names.iter().enumerate() {
            if names[..i].contains(name) {
                return Err(TableProblem::DuplicateName(name.clone()));
            }
        }
        let mut columns = vec![Vec::with_capacity(data.len()); names.len()];
        for (line, cells) in data {
            for (a, cell) in cells[skip..].iter().enumerate() {
                columns[a].push(value(cell, *line, &names[a])?);
            }
        }
        Ok(Self { names, columns, lines: data.iter().map(|(line, _)| *line).collect() })
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
    let rows = rows(text);
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
        if named {
            let (_, name) = cells.next().unwrap_or((0, &""));
            if let Some(expected) = names.and_then(|n| n.get(row))
                && name.trim_matches('"') != expected
            {
                return Err(TableProblem::CoordinateName {
                    line: *line,
                    found: (*name).to_string(),
                    expected: expected.clone(),
                });
            }
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
        for cell in ["NaN", "nan", "inf", "-inf", "Infinity", "1e309", "-1e309"] {
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
        let msg = TableError {
            path: "arms.csv".into(),
            problem: Table::parse("north,south\nNaN,2\n").unwrap_err(),
        }
        .to_string();
        assert!(msg.starts_with("arms.csv line 2, column north: 'NaN' is not a finite number"), "{msg}");
        // A label column stays one.
        assert_eq!(Table::parse("Date,a,b\nmon,1,2\n").unwrap().names, ["a", "b"]);
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
