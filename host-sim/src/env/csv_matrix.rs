//! A small loader for numeric CSV matrices (rows = samples, columns = arms), SPEC §2.3.
//!
//! The format is plain: comma-separated cells, no quoting, optional header line, optional leading
//! non-numeric columns to drop (`skip_columns`, e.g. the Date column of the stocks file), blank
//! lines ignored, whitespace around cells and a UTF-8 byte-order mark tolerated. Every cell that is
//! kept must parse as a finite `f64`. Errors name the 1-based line and column of the file.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use nalgebra::DMatrix;

/// Whether the first non-blank line is a header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Header {
    /// A header iff one of its kept cells is not a number.
    #[default]
    Auto,
    /// The first non-blank line is a header.
    Present,
    /// Every line is data.
    Absent,
}

/// How to read a CSV matrix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsvOptions {
    /// Header handling.
    pub header: Header,
    /// Number of leading columns to drop from every line (header included), e.g. 1 for a date.
    pub skip_columns: usize,
}

/// A numeric matrix read from CSV.
#[derive(Clone, Debug, PartialEq)]
pub struct CsvMatrix {
    /// Names of the kept columns, when the file had a header.
    pub column_names: Option<Vec<String>>,
    /// The values: one row per data line, one column per kept column.
    pub data: DMatrix<f64>,
}

/// Why a CSV matrix could not be read. Lines and columns are 1-based positions in the file.
#[derive(Clone, Debug, PartialEq)]
pub enum CsvError {
    /// The file could not be opened or read (or is not UTF-8).
    Io {
        /// The path given.
        path: PathBuf,
        /// The I/O error kind.
        kind: io::ErrorKind,
        /// The I/O error message.
        message: String,
    },
    /// The file has no non-blank line.
    Empty,
    /// The file has a header line but no data lines.
    NoDataRows,
    /// Every column would be skipped.
    NoNumericColumns {
        /// Columns on the first line.
        columns: usize,
        /// `skip_columns` asked for.
        skip_columns: usize,
    },
    /// A line with a different number of cells from the first line.
    Ragged {
        /// The offending line.
        line: usize,
        /// Its number of cells.
        found: usize,
        /// The number of cells of the first line.
        expected: usize,
        /// The first (header or data) line, which set `expected`.
        first_line: usize,
    },
    /// A cell that is not a number (empty cells included).
    NotANumber {
        /// Line of the cell.
        line: usize,
        /// Column of the cell.
        column: usize,
        /// The cell's text (trimmed).
        cell: String,
    },
    /// A cell that parses to NaN or ±∞.
    NonFinite {
        /// Line of the cell.
        line: usize,
        /// Column of the cell.
        column: usize,
        /// The cell's text (trimmed).
        cell: String,
    },
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, kind, message } => write!(
                f,
                "cannot read {} ({kind:?}: {message}); check the path (relative paths start at \
                 the working directory), the permissions, and that the file is UTF-8 text",
                path.display()
            ),
            Self::Empty => write!(
                f,
                "the file is empty; it must hold rows of comma-separated numbers \
                 (rows = samples, columns = arms)"
            ),
            Self::NoDataRows => {
                write!(f, "the file has a header line but no data rows; add rows of comma-separated numbers")
            }
            Self::NoNumericColumns { columns, skip_columns } => write!(
                f,
                "the first line has {columns} column(s) and the first {skip_columns} are labels, so no \
                 column of numbers is left; give one column per arm after the labels"
            ),
            Self::Ragged { line, found, expected, first_line } => write!(
                f,
                "line {line} has {found} cell(s) but line {first_line} has {expected}; every line \
                 must have the same number of columns"
            ),
            Self::NotANumber { line, column, cell } => write!(
                f,
                "line {line}, column {column}: '{cell}' is not a number; write a number there (the \
                 papers' data sets have no gaps; for your own data with gaps use host-sim run custom)"
            ),
            Self::NonFinite { line, column, cell } => write!(
                f,
                "line {line}, column {column}: '{cell}' is not a finite number; write a finite \
                 number there"
            ),
        }
    }
}

impl std::error::Error for CsvError {}

/// Reads a CSV matrix from a file.
pub fn read_csv_matrix(path: &Path, options: &CsvOptions) -> Result<CsvMatrix, CsvError> {
    let text = std::fs::read_to_string(path).map_err(|e| CsvError::Io {
        path: path.to_path_buf(),
        kind: e.kind(),
        message: e.to_string(),
    })?;
    parse_csv_matrix(&text, options)
}

/// Parses a CSV matrix from text (see the module documentation for the format).
pub fn parse_csv_matrix(text: &str, options: &CsvOptions) -> Result<CsvMatrix, CsvError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty());
    let (first_line, first) = lines.next().ok_or(CsvError::Empty)?;
    let first_cells: Vec<&str> = first.split(',').map(str::trim).collect();
    let expected = first_cells.len();
    if expected <= options.skip_columns {
        return Err(CsvError::NoNumericColumns { columns: expected, skip_columns: options.skip_columns });
    }
    let kept = &first_cells[options.skip_columns..];
    let is_header = match options.header {
        Header::Present => true,
        Header::Absent => false,
        Header::Auto => kept.iter().any(|c| c.parse::<f64>().is_err()),
    };
    let column_names = is_header.then(|| kept.iter().map(|c| (*c).to_string()).collect());

    let data_lines = std::iter::once((first_line, first)).filter(|_| !is_header).chain(lines);
    let mut values = Vec::new();
    let mut rows = 0;
    for (line, text) in data_lines {
        let cells: Vec<&str> = text.split(',').map(str::trim).collect();
        if cells.len() != expected {
            return Err(CsvError::Ragged { line, found: cells.len(), expected, first_line });
        }
        for (i, cell) in cells.iter().enumerate().skip(options.skip_columns) {
            values.push(parse_cell(cell, line, i + 1)?);
        }
        rows += 1;
    }
    if rows == 0 {
        return Err(CsvError::NoDataRows);
    }
    let cols = expected - options.skip_columns;
    Ok(CsvMatrix { column_names, data: DMatrix::from_row_slice(rows, cols, &values) })
}

fn parse_cell(cell: &str, line: usize, column: usize) -> Result<f64, CsvError> {
    match cell.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(CsvError::NonFinite { line, column, cell: cell.to_string() }),
        Err(_) => Err(CsvError::NotANumber { line, column, cell: cell.to_string() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUTO: CsvOptions = CsvOptions { header: Header::Auto, skip_columns: 0 };

    /// Writes `text` to a fresh file under the system temp dir and returns its path.
    fn temp_file(tag: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("host-sim-env-csv-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.csv");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn read(tag: &str, text: &str, options: &CsvOptions) -> Result<CsvMatrix, CsvError> {
        let path = temp_file(tag, text);
        let out = read_csv_matrix(&path, options);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
        out
    }

    #[test]
    fn env_csv_reads_header_blank_lines_crlf_and_bom() {
        let m = read("ok", "\u{feff}a, b\r\n1,2\r\n\r\n 3 ,4.5e0\r\n", &AUTO).unwrap();
        assert_eq!(m.column_names, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(m.data, DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 4.5]));
        let m = parse_csv_matrix("1,2\n3,4\n", &AUTO).unwrap();
        assert_eq!(m.column_names, None);
        assert_eq!(m.data.shape(), (2, 2));
    }

    #[test]
    fn env_csv_skips_leading_columns() {
        let text = "Date,X,Y\n2020-01-01,1,2\n2020-01-02,3,4\n";
        let opts = CsvOptions { header: Header::Present, skip_columns: 1 };
        let m = read("skip", text, &opts).unwrap();
        assert_eq!(m.column_names, Some(vec!["X".to_string(), "Y".to_string()]));
        assert_eq!(m.data, DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 4.0]));
        // Without skipping, the date is reported where it is.
        let opts = CsvOptions { header: Header::Present, skip_columns: 0 };
        assert_eq!(
            read("noskip", text, &opts),
            Err(CsvError::NotANumber { line: 2, column: 1, cell: "2020-01-01".to_string() })
        );
        let opts = CsvOptions { header: Header::Present, skip_columns: 3 };
        assert_eq!(
            parse_csv_matrix(text, &opts),
            Err(CsvError::NoNumericColumns { columns: 3, skip_columns: 3 })
        );
    }

    #[test]
    fn env_csv_malformed_files_give_located_errors() {
        assert_eq!(
            read("nan", "a,b\n1,2\n3,NaN\n", &AUTO),
            Err(CsvError::NonFinite { line: 3, column: 2, cell: "NaN".to_string() })
        );
        assert!(matches!(read("inf", "1,inf\n", &AUTO), Err(CsvError::NonFinite { line: 1, column: 2, .. })));
        assert!(matches!(
            read("overflow", "1,2\n1e400,2\n", &AUTO),
            Err(CsvError::NonFinite { line: 2, column: 1, .. })
        ));
        assert_eq!(
            read("text", "1,2\n\n3,x\n", &AUTO),
            Err(CsvError::NotANumber { line: 3, column: 2, cell: "x".to_string() })
        );
        assert_eq!(
            read("emptycell", "1,2\n,4\n", &AUTO),
            Err(CsvError::NotANumber { line: 2, column: 1, cell: String::new() })
        );
        assert_eq!(
            read("ragged", "a,b,c\n1,2,3\n4,5\n", &AUTO),
            Err(CsvError::Ragged { line: 3, found: 2, expected: 3, first_line: 1 })
        );
        assert_eq!(read("empty", "", &AUTO), Err(CsvError::Empty));
        assert_eq!(read("blank", "\n  \n", &AUTO), Err(CsvError::Empty));
        assert_eq!(read("header", "s1,s2\n", &AUTO), Err(CsvError::NoDataRows));
        // A header declared absent is parsed as data.
        let absent = CsvOptions { header: Header::Absent, skip_columns: 0 };
        assert!(matches!(
            read("absent", "s1,s2\n1,2\n", &absent),
            Err(CsvError::NotANumber { line: 1, column: 1, .. })
        ));
    }

    #[test]
    fn env_csv_unreadable_path_is_an_io_error() {
        let path =
            std::env::temp_dir().join(format!("host-sim-env-csv-{}-missing/none.csv", std::process::id()));
        let err = read_csv_matrix(&path, &AUTO).unwrap_err();
        assert!(matches!(&err, CsvError::Io { kind: io::ErrorKind::NotFound, .. }));
        assert!(err.to_string().contains("none.csv"));
        // A directory is not readable as a file either.
        let err = read_csv_matrix(&std::env::temp_dir(), &AUTO).unwrap_err();
        assert!(matches!(err, CsvError::Io { .. }));
    }

    #[test]
    fn env_csv_error_messages_name_the_place_and_the_fix() {
        let msg = CsvError::NotANumber { line: 4, column: 7, cell: "abc".to_string() }.to_string();
        assert!(msg.contains("line 4, column 7: 'abc' is not a number"), "{msg}");
        assert!(!msg.contains("skip_columns") && !msg.contains("Header::"), "{msg}");
    }
}
