//! The record of a fleet's queries in flight: each query written to a file before it is sent,
//! its settlement after, so that a run killed with queries in flight can say, when it runs the
//! job again, which members spent ε on queries whose replies never reached it.
//!
//! A [`Fleet`](super::Fleet) given a [`QueryRecord`] ([`Fleet::with_record`](super::Fleet::with_record))
//! appends one line per query, before the query leaves for its member (a query whose line
//! cannot be written is not sent: the round fails with [`DeviceError::Record`](crate::device::DeviceError::Record)),
//! and one line when the member's reply (a report, a refusal) or its failure reaches the fleet.
//! Each line is one `write` on a file opened for appending, not synced: a killed process loses
//! none of what it wrote (the bytes are the kernel's), a power cut may. The file is text:
//!
//! ```text
//! ldp-queries-in-flight 1            the format, on the first line
//! carried <device> <queries> <eps>   left unanswered by earlier attempts of the job
//! sent <device> <n> <eps>            query n of this attempt to the device, at ε, about to leave
//! done <device> <n> <how>            its reply or failure reached the fleet: report, refused, failed
//! ```
//!
//! [`read_unanswered`] sums, per device, the carried queries and the queries sent and not done,
//! reading one line at a time. A last line without its newline (a kill cut the write short) is
//! passed over: a query whose `sent` line is cut was never sent, and one whose `done` line is
//! cut counts as unanswered. The header is always whole (the caller writes it with the carried
//! lines, synced, and renames it into place): a record without it, empty or cut inside it, is
//! damaged, as is a line longer than [`MAX_LINE`].
//! Nothing here changes what a device spent or what the fleet counts as spent: it labels.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The first line of a record.
pub const RECORD_HEADER: &str = "ldp-queries-in-flight 1";

/// Queries a member was sent that no reply or failure of reached the learner, and the ε they
/// were sent at, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Unanswered {
    /// How many.
    pub queries: u64,
    /// Their ε, summed.
    pub eps: f64,
}

impl Unanswered {
    /// `queries` more, at `eps` in all: an error, and `self` unchanged, if their count passes
    /// what a `u64` holds or their ε sums to more than a finite number (a record or ledger no
    /// run writes: a hostile or damaged one), so that a label never wraps to 0 nor is written
    /// as `inf`, which no record or ledger reads.
    pub fn add(&mut self, queries: u64, eps: f64) -> Result<(), SumError> {
        let queries = self.queries.checked_add(queries).ok_or(SumError::TooManyQueries)?;
        let eps = self.eps + eps;
        if !eps.is_finite() {
            return Err(SumError::EpsNotFinite);
        }
        *self = Self { queries, eps };
        Ok(())
    }
}

/// Why queries left unanswered cannot be summed ([`Unanswered::add`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SumError {
    /// Their count passes what a `u64` holds.
    TooManyQueries,
    /// Their ε sums to more than a finite number.
    EpsNotFinite,
}

impl std::fmt::Display for SumError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::TooManyQueries => "too many queries: their count passes 18446744073709551615",
            Self::EpsNotFinite => "the ε of the queries sums to more than a finite number",
        })
    }
}

impl std::error::Error for SumError {}

/// How a query recorded as sent settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settlement {
    /// Its member's report reached the fleet.
    Report,
    /// Its member refused it.
    Refused,
    /// Its member failed (silent, a broken link, frames that do not verify).
    Failed,
}

impl Settlement {
    fn word(self) -> &'static str {
        match self {
            Self::Report => "report",
            Self::Refused => "refused",
            Self::Failed => "failed",
        }
    }
}

/// The text a job's record starts with: the header, then one `carried` line per device of
/// `carried` with queries in it (what earlier attempts of the job left unanswered). The caller
/// writes it whole (through a partial file synced and renamed into place: a record without its
/// whole header is damaged) before [`QueryRecord::append`] opens it.
pub fn record_start(carried: &BTreeMap<u64, Unanswered>) -> String {
    let mut text = format!("{RECORD_HEADER}\n");
    for (id, u) in carried.iter().filter(|(_, u)| u.queries > 0) {
        let _ = writeln!(text, "carried {id} {} {}", u.queries, u.eps);
    }
    text
}

/// A job's record of its queries in flight, open for appending (module docs).
#[derive(Debug)]
pub struct QueryRecord {
    file: File,
    path: PathBuf,
    line: Vec<u8>,
    /// The last ε written (its bits) and its text.
    eps: (u64, String),
    /// The first write that failed: nothing is written after it, and no query is sent.
    failed: Option<io::ErrorKind>,
    /// Whether a write failed, for whoever labels from the record.
    health: RecordHealth,
}

/// Whether a write to a [`QueryRecord`] failed, seen from outside the fleet it was given to
/// ([`QueryRecord::health`]). A record whose write failed may lack the `done` line of a query
/// that settled (that write is the one that failed, and nothing is written after it): it
/// says such a query is unanswered though its reply reached the fleet, so only the lines it
/// began with (carried, written whole before any query) are to be trusted.
#[derive(Clone, Debug, Default)]
pub struct RecordHealth(Arc<AtomicBool>);

impl RecordHealth {
    /// Whether a write to the record failed.
    pub fn failed(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

impl QueryRecord {
    /// The record in `path`, which must exist (begun with [`record_start`]'s text), opened for
    /// appending.
    pub fn append(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new().append(true).open(path)?;
        let eps = (f64::NAN.to_bits(), String::new());
        let line = Vec::with_capacity(64);
        Ok(Self { file, path: path.to_path_buf(), line, eps, failed: None, health: RecordHealth::default() })
    }

    /// Whether a write to the record failed, now and after the record is given to a fleet.
    pub fn health(&self) -> RecordHealth {
        self.health.clone()
    }

    /// Whether a write to the record failed.
    pub fn failed(&self) -> bool {
        self.failed.is_some()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes that query `n` of this attempt is about to leave for `device` at `eps`; an error
    /// (this write's, or an earlier one's) means the query must not be sent.
    pub(super) fn sent(&mut self, device: u64, n: u32, eps: f64) -> io::Result<()> {
        // A fleet's ε is the same for every query: its text is made once.
        if self.eps.0 != eps.to_bits() {
            self.eps = (eps.to_bits(), eps.to_string());
        }
        self.line.clear();
        self.line.extend_from_slice(b"sent ");
        push_number(&mut self.line, device);
        self.line.push(b' ');
        push_number(&mut self.line, u64::from(n));
        self.line.push(b' ');
        self.line.extend_from_slice(self.eps.1.as_bytes());
        self.line.push(b'\n');
        self.write()
    }

    /// Writes that query `n` to `device` settled `how`. A failure is kept: the next query is
    /// not sent, and [`Self::health`] says so.
    pub(super) fn settled(&mut self, device: u64, n: u32, how: Settlement) {
        self.line.clear();
        self.line.extend_from_slice(b"done ");
        push_number(&mut self.line, device);
        self.line.push(b' ');
        push_number(&mut self.line, u64::from(n));
        self.line.push(b' ');
        self.line.extend_from_slice(how.word().as_bytes());
        self.line.push(b'\n');
        let _ = self.write();
    }

    fn write(&mut self) -> io::Result<()> {
        if let Some(kind) = self.failed {
            return Err(io::Error::new(kind, "an earlier write to the record failed"));
        }
        self.file.write_all(&self.line).inspect_err(|e| {
            self.failed = Some(e.kind());
            self.health.0.store(true, Ordering::Release);
        })
    }
}

/// `x` in decimal at the end of `line` (the record's numbers, without the formatting machinery:
/// two lines a query).
fn push_number(line: &mut Vec<u8>, mut x: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    line.extend_from_slice(&digits[i..]);
}

/// A record that cannot be read: which file, where, and what to do.
#[derive(Debug)]
pub struct RecordError {
    /// The file.
    pub path: PathBuf,
    /// The line (1-based), if the fault is in one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl RecordError {
    /// What is wrong and what to do, without the file's name (for a message that names it).
    pub fn detail(&self) -> String {
        let at = self.line.map_or(String::new(), |line| format!("line {line}: "));
        format!(
            "{at}{}; this record of a killed run's queries in flight is damaged: remove it to run the job again without labelling the queries its earlier attempts left unanswered (what devices that keep their budget spent on them still shows in spent_eps)",
            self.message
        )
    }
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.detail())
    }
}

impl std::error::Error for RecordError {}

/// What the record in `path` says was left unanswered, by device: its carried queries, and
/// those sent and not done, read a line at a time. A last line without its newline is passed
/// over (module docs); a missing or cut header, a line longer than [`MAX_LINE`], any other line
/// that is not a record's and a sum past its type ([`Unanswered::add`]) are errors naming the
/// file and the line, quoting at most its start.
pub fn read_unanswered(path: &Path) -> Result<BTreeMap<u64, Unanswered>, RecordError> {
    let (mut totals, outstanding) = read_record(path)?;
    for ((device, n), e) in outstanding {
        totals.entry(device).or_default().add(1, e).map_err(|s| RecordError {
            path: path.to_path_buf(),
            line: None,
            message: format!("device {device}, with query {n} sent and not done: {s}"),
        })?;
    }
    Ok(totals)
}

/// What the record in `path` carried from earlier attempts, by device: its `carried` lines
/// alone, for a record whose writing failed ([`RecordHealth`]). The whole record is read, and
/// refused, as [`read_unanswered`] reads it.
pub fn read_carried(path: &Path) -> Result<BTreeMap<u64, Unanswered>, RecordError> {
    read_record(path).map(|(carried, _)| carried)
}

/// The queries each device's record carried, summed, and the queries sent and not done: ε by
/// (device, query number).
type RecordRead = (BTreeMap<u64, Unanswered>, BTreeMap<(u64, u32), f64>);

/// The record in `path`: what it carried, and the queries it says were sent and not done.
fn read_record(path: &Path) -> Result<RecordRead, RecordError> {
    let error =
        |line: Option<usize>, message: String| RecordError { path: path.to_path_buf(), line, message };
    let file = File::open(path).map_err(|e| error(None, e.to_string()))?;
    let mut reader = BufReader::new(file);
    let mut bytes = Vec::with_capacity(MAX_LINE + 1);
    let mut totals: BTreeMap<u64, Unanswered> = BTreeMap::new();
    // Ordered, so that each device's ε is summed in one order whatever the platform.
    let mut outstanding: BTreeMap<(u64, u32), f64> = BTreeMap::new();
    for number in 1.. {
        bytes.clear();
        // One line at a time, at most MAX_LINE bytes and its newline: a damaged record is
        // never read whole.
        (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut bytes)
            .map_err(|e| error(Some(number), e.to_string()))?;
        let Some(line) = bytes.strip_suffix(b"\n") else {
            if bytes.len() > MAX_LINE {
                return Err(error(
                    Some(number),
                    format!("a line longer than {MAX_LINE} bytes: '{}'", quoted(&bytes)),
                ));
            }
            if number == 1 {
                return Err(error(
                    Some(1),
                    format!("not a record of queries in flight (no whole first line '{RECORD_HEADER}')"),
                ));
            }
            // The end: nothing, or a last line a kill cut short, passed over.
            break;
        };
        let line = std::str::from_utf8(line).map_err(|e| error(Some(number), format!("not text ({e})")))?;
        let bad = |why: &str| error(Some(number), format!("{why}: '{}'", quoted(line.as_bytes())));
        if number == 1 {
            if line != RECORD_HEADER {
                return Err(bad(&format!(
                    "not a record of queries in flight (its first line is not '{RECORD_HEADER}')"
                )));
            }
            continue;
        }
        let words: Vec<&str> = line.split(' ').collect();
        let id = |w: &str| w.parse::<u64>().map_err(|_| bad("not a device id"));
        let n = |w: &str| w.parse::<u32>().map_err(|_| bad("not a query number"));
        let eps = |w: &str| match w.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
            _ => Err(bad("not an ε")),
        };
        match words[..] {
            ["carried", device, queries, e] => {
                let queries = queries.parse::<u64>().map_err(|_| bad("not a count of queries"))?;
                totals
                    .entry(id(device)?)
                    .or_default()
                    .add(queries, eps(e)?)
                    .map_err(|s| bad(&s.to_string()))?;
            }
            ["sent", device, q, e] => {
                if outstanding.insert((id(device)?, n(q)?), eps(e)?).is_some() {
                    return Err(bad("a query sent twice"));
                }
            }
            ["done", device, q, "report" | "refused" | "failed"] => {
                if outstanding.remove(&(id(device)?, n(q)?)).is_none() {
                    return Err(bad("a query settled that was not sent"));
                }
            }
            _ => return Err(bad("not a line of the record")),
        }
    }
    Ok((totals, outstanding))
}

/// The longest line a record holds, its newline excluded; a longer one is damage. The longest
/// a record writes is under 400 bytes: two `u64`s and an ε as `f64`'s `Display` writes it, which
/// for the largest and the smallest finite ones is over 300 digits (a usual line is under 30).
pub const MAX_LINE: usize = 512;

/// How much of a damaged line an error quotes.
const QUOTED: usize = 60;

/// The start of `line` as an error quotes it: at most [`QUOTED`] bytes, as text.
fn quoted(line: &[u8]) -> String {
    let shown = String::from_utf8_lossy(&line[..line.len().min(QUOTED)]).into_owned();
    if line.len() > QUOTED { shown + "…" } else { shown }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record with `text` in a fresh file `tag`: its path.
    fn file(tag: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ldp-record-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let path = dir.join("trial0-learner0.queries");
        std::fs::write(&path, text).expect("written");
        path
    }

    fn clean(path: &Path) {
        let _ = std::fs::remove_dir_all(path.parent().expect("its directory"));
    }

    const HEAD: &str = "ldp-queries-in-flight 1\n";

    /// Carried queries and those sent and not done are summed by device; those done are not.
    #[test]
    fn sent_and_not_done_and_carried_queries_are_unanswered() {
        let carried = BTreeMap::from([(4, Unanswered { queries: 2, eps: 1.5 })]);
        let text = record_start(&carried)
            + "sent 1 1 0.5\nsent 2 1 0.5\ndone 1 1 report\nsent 4 1 0.5\nsent 1 2 0.5\ndone 2 1 failed\n";
        let path = file("sums", &text);
        let got = read_unanswered(&path).expect("reads");
        let want = BTreeMap::from([
            (1, Unanswered { queries: 1, eps: 0.5 }),
            (4, Unanswered { queries: 3, eps: 2.0 }),
        ]);
        assert_eq!(got, want);
        clean(&path);
    }

    /// A last line cut short by a kill is passed over: a `sent` cut short was never sent; a
    /// `done` cut short leaves its query unanswered.
    #[test]
    fn a_last_line_cut_short_is_passed_over() {
        for (tail, unanswered) in [("sent 3 1 0.", 1), ("sent 3 1 0.5\ndone 3 1 rep", 2), ("se", 1)] {
            let path = file("cut", &format!("{HEAD}sent 2 1 0.5\n{tail}"));
            let got = read_unanswered(&path).expect("a cut last line is no error");
            assert_eq!(got.values().map(|u| u.queries).sum::<u64>(), unanswered, "{tail:?}: {got:?}");
            clean(&path);
        }
    }

    /// A record always begins with its whole header (the job's attempt writes it whole, synced,
    /// and renames it into place before any query): an empty file, or one cut inside its
    /// header, is a damaged record, not one of nothing unanswered.
    #[test]
    fn a_record_without_its_whole_header_is_an_error() {
        for text in ["", "ldp-queries-in", "ldp-queries-in-flight 1"] {
            let path = file("no-header", text);
            let got = read_unanswered(&path);
            clean(&path);
            let e = got.expect_err(&format!("{text:?} read as nothing unanswered"));
            assert!(e.line == Some(1) && e.to_string().contains(RECORD_HEADER), "{e}");
        }
    }

    /// A damaged line that a kill cannot have made (a whole line, not the last one cut short) is
    /// an error naming the file, the line and what to do; so is a file of another kind.
    #[test]
    fn a_damaged_record_is_an_error_naming_the_file_and_the_line() {
        for (text, line) in [
            (format!("{HEAD}sent 1 1 0.5\nsent x 2 0.5\ndone 1 1 report\n"), 3),
            (format!("{HEAD}sent 1 1 0.5\nsent 1 1 0.5\n"), 3),
            (format!("{HEAD}done 1 1 report\n"), 2),
            (format!("{HEAD}sent 1 1 -1\n"), 2),
            (format!("{HEAD}sent 1 1 NaN\n"), 2),
            (format!("{HEAD}done 1 1 maybe\n"), 2),
            ("device,spent_eps\n1,2\n".to_string(), 1),
        ] {
            let path = file("damaged", &text);
            let e = read_unanswered(&path).expect_err("a damaged record");
            assert_eq!(e.line, Some(line), "{text:?}: {e}");
            let message = e.to_string();
            assert!(message.contains(&path.display().to_string()), "{message}");
            assert!(message.contains(&format!("line {line}")) && message.contains("remove it"), "{message}");
            clean(&path);
        }
        let path = file("binary", "");
        std::fs::write(&path, b"ldp-queries-in-flight 1\n\xff\xfe\n").expect("written");
        assert!(read_unanswered(&path).is_err_and(|e| e.to_string().contains("not text")));
        clean(&path);
        let missing = std::env::temp_dir().join(format!("ldp-record-{}-missing.queries", std::process::id()));
        assert!(read_unanswered(&missing).is_err_and(|e| e.path == missing));
    }

    /// A line longer than a record's lines can be ([`MAX_LINE`]) is damage, whole or cut short,
    /// and the error quotes no more than the start of a line.
    #[test]
    fn a_line_too_long_is_an_error_quoting_only_its_start() {
        let long = "9".repeat(10_000);
        for text in [
            format!("{HEAD}sent 1 1 0.5\nsent 1 2 {long}\nsent 1 3 0.5\n"),
            format!("{HEAD}sent 1 1 0.5\nsent 1 2 {long}"),
            format!("{HEAD}sent 1 1 0.5\nsent 1 2 0.{long}\n"),
        ] {
            let path = file("long", &text);
            let got = read_unanswered(&path);
            clean(&path);
            let e = got.expect_err("a line too long");
            assert_eq!(e.line, Some(3), "{e}");
            assert!(e.to_string().len() < 1_000, "{e}");
        }
        // MAX_LINE bytes is a line; a cut one is passed over.
        let eps = format!("0.{}", "5".repeat(MAX_LINE - "sent 1 2 0.".len()));
        let path = file("long", &format!("{HEAD}sent 1 1 0.5\nsent 1 2 {eps}\nsent 1 3 0.5"));
        let got = read_unanswered(&path);
        clean(&path);
        assert_eq!(got.expect("MAX_LINE bytes a line")[&1].queries, 2);
    }

    /// The longest lines a record writes (the largest numbers, the ε whose text is longest)
    /// read back as they were written.
    #[test]
    fn the_longest_lines_written_read_back() {
        for eps in [
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::from_bits(0x000F_FFFF_FFFF_FFFF),
            1.2345678901234567e-300,
        ] {
            let carried = BTreeMap::from([(u64::MAX, Unanswered { queries: u64::MAX, eps })]);
            let id = u64::MAX - 1;
            let text = record_start(&carried) + &format!("sent {id} {} {eps}\n", u32::MAX);
            assert!(text.lines().all(|l| l.len() < 400), "{text}");
            let path = file("longest", &text);
            let got = read_unanswered(&path);
            clean(&path);
            let want = BTreeMap::from([(id, Unanswered { queries: 1, eps }), (u64::MAX, carried[&u64::MAX])]);
            assert_eq!(got.expect("reads"), want);
        }
    }

    /// A count of queries past what a u64 holds (a hostile or damaged record) is an error
    /// naming the file, not a panic (debug) nor a wrap to 0 that drops the label (release).
    #[test]
    fn a_count_of_queries_past_u64_is_an_error_not_an_overflow() {
        for text in [
            format!("{HEAD}carried 1 18446744073709551615 0.5\nsent 1 1 0.5\n"),
            format!("{HEAD}carried 1 18446744073709551615 0.5\ncarried 1 1 0.5\n"),
        ] {
            let path = file("overflow", &text);
            let got = std::panic::catch_unwind(|| read_unanswered(&path));
            clean(&path);
            let Ok(Err(e)) = got else { panic!("{text:?}: not refused: {got:?}") };
            let message = e.to_string();
            assert!(
                message.contains("too many queries") && message.contains(&path.display().to_string()),
                "{message}"
            );
        }
    }

    /// A sum of finite ε that is not finite (it would be carried as `inf`, which no record
    /// reads, and written into the ledger, which then no longer reads) is refused when read.
    #[test]
    fn a_sum_of_eps_that_is_not_finite_is_refused() {
        for text in [
            format!("{HEAD}carried 1 1 1e308\ncarried 1 1 1e308\n"),
            format!("{HEAD}carried 1 1 1.7e308\nsent 1 1 1.7e308\n"),
        ] {
            let path = file("inf", &text);
            let got = read_unanswered(&path);
            clean(&path);
            let e = got.expect_err("an ε sum that is not finite");
            assert!(e.to_string().contains("ε"), "{e}");
        }
    }

    /// A failed `done` write is not silent: the record's health, which outlives its move into
    /// a fleet, says so, and nothing is sent after it. Its lines carried from earlier attempts
    /// still read alone, without the query whose `done` line is missing.
    #[test]
    fn a_failed_done_write_is_seen_from_outside() {
        let carried = BTreeMap::from([(3, Unanswered { queries: 1, eps: 0.5 })]);
        let path = file("failed-done", &record_start(&carried));
        let mut record = QueryRecord::append(&path).expect("opens");
        let health = record.health();
        record.sent(1, 1, 0.5).expect("written");
        assert!(!health.failed() && !record.failed());
        // The file, read-only: every write fails from here on.
        record.file = File::open(&path).expect("opens");
        record.settled(1, 1, Settlement::Report);
        assert!(health.failed() && record.failed(), "a failed done write passed over in silence");
        assert!(record.sent(1, 2, 0.5).is_err(), "nothing is sent after it");
        assert_eq!(read_carried(&path).expect("reads"), carried);
        assert_eq!(read_unanswered(&path).expect("reads")[&1].queries, 1, "its done line is missing");
        clean(&path);
    }

    /// The numbers are written as `Display` writes them.
    #[test]
    fn numbers_are_written_in_decimal() {
        for x in [0, 7, 10, 12_345, u64::from(u32::MAX), u64::MAX] {
            let mut line = Vec::new();
            push_number(&mut line, x);
            assert_eq!(line, x.to_string().into_bytes());
        }
    }
}
