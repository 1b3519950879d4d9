//! `host-sim privatise --input FILE`: a user's table through the device's mechanism.

use std::path::{Path, PathBuf};

use ldp_learn::env::table::ReadOptions;

use crate::cli::error::{CliError, FileOp, Usage, file};

/// `privatise --input FILE`: the user's table through the device's mechanism, cell by cell.
pub(crate) fn privatise_file(
    input: &Path,
    columns: Option<Vec<String>>,
    out: Option<PathBuf>,
    eps: f64,
    b: Option<f64>,
    r: Option<f64>,
    keep_label: bool,
) -> Result<(), CliError> {
    let b = b.ok_or(Usage::PrivatiseNeedsBound)?;
    let r = r.unwrap_or(0.0);
    let options = ReadOptions { columns, ..ReadOptions::default() };
    let (table, report) = ldp_learn::env::table::Table::read_with(input, &options)?;
    eprint!("{report}");
    let release = host_sim::privatise::privatise_table(&table, eps, b, r, None, keep_label)?;
    if let Some((name, _)) = table.labels.as_ref() {
        match keep_label {
            true => eprintln!("warning: column '{name}' is copied as it is, NOT privatised (--keep-label)"),
            false => eprintln!(
                "column '{name}' labels the rows and is left out (--keep-label copies it, unprivatised)"
            ),
        }
    }
    let out = out.unwrap_or_else(|| {
        let stem = input.file_stem().map_or("table".into(), |s| s.to_string_lossy().into_owned());
        input.with_file_name(format!("{stem}.private.csv"))
    });
    std::fs::write(&out, &release.csv).map_err(file(FileOp::Write, &out))?;
    eprintln!(
        "released {} observations at eps = {eps} each (effective {:.4}; a person behind k of them spent k·eps, \
         and privatising the table again spends it again; the header, rows and gaps are released as they are), \
         noise sd {:.4}, {} clipped to ±{}",
        release.reports,
        release.epsilon_effective,
        release.noise_sd,
        release.clipped,
        b + r
    );
    eprintln!("wrote {}", out.display());
    Ok(())
}
