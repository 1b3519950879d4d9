//! The papers' data sets, shipped in the repository's `data/` folder with their provenance
//! (`data/README.md`) and a manifest of SHA-256 sums (`data/SHA256SUMS`), compiled into the
//! binary and checked every time one of those files is loaded: a changed or damaged copy would
//! silently give other figures.
//!
//! Where the data is found when no `--data DIR` is given ([`default_dir`]): `data/` in the
//! working directory if it holds the manifest (a clone's root), else the `data/` folder of the
//! checkout this binary was built from.

use std::fmt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// `data/SHA256SUMS`: `<hex sum>  <file name>` per line, as `sha256sum` writes it.
pub const MANIFEST: &str = include_str!("../../../data/SHA256SUMS");

/// The data folder of the checkout this binary was built from.
const BUILT_FROM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data");

/// The data folder to use without `--data` (module documentation), if there is one.
pub fn default_dir() -> Option<PathBuf> {
    let here = PathBuf::from("data");
    if here.join("SHA256SUMS").is_file() {
        return Some(here);
    }
    let built = PathBuf::from(BUILT_FROM);
    built.is_dir().then_some(built)
}

/// The manifest's SHA-256 (lower-case hex) of a data file, by file name.
pub fn expected_sum(file_name: &str) -> Option<&'static str> {
    MANIFEST.lines().find_map(|line| {
        let (sum, name) = line.split_once("  ")?;
        (name.trim() == file_name).then_some(sum.trim())
    })
}

/// A data file of the manifest whose bytes are not the ones it lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChecksumMismatch {
    /// The file.
    pub path: PathBuf,
    /// The manifest's sum.
    pub expected: &'static str,
    /// The file's sum.
    pub found: String,
}

impl fmt::Display for ChecksumMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is not the papers' data set: its SHA-256 is {}, data/SHA256SUMS lists {}; restore it \
             (git checkout data/) or, for your own table, use `host-sim run custom --arms FILE.csv`",
            self.path.display(),
            self.found,
            self.expected
        )
    }
}

impl std::error::Error for ChecksumMismatch {}

/// Checks `path` against the manifest when its file name is listed there (other files pass).
/// A file that cannot be read passes too: the reader reports that in its own words.
pub fn verify(path: &Path) -> Result<(), ChecksumMismatch> {
    let Some(expected) = path.file_name().and_then(|n| n.to_str()).and_then(expected_sum) else {
        return Ok(());
    };
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(());
    };
    let found: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    if found == expected {
        Ok(())
    } else {
        Err(ChecksumMismatch { path: path.to_path_buf(), expected, found })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_file_matches_the_manifest_and_a_changed_one_is_refused() {
        let dir = Path::new(BUILT_FROM);
        let names = [
            "lightsensor_train.csv",
            "lightsensor_test.csv",
            "lightsensor_coords.csv",
            "stocks_adjclose.csv",
        ];
        for name in names {
            assert!(expected_sum(name).is_some(), "{name} is not in the manifest");
            assert_eq!(verify(&dir.join(name)), Ok(()), "{name}");
        }
        assert_eq!(MANIFEST.lines().count(), names.len());
        let tmp = std::env::temp_dir().join(format!("host-sim-data-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let copy = tmp.join("stocks_adjclose.csv");
        let mut bytes = std::fs::read(dir.join("stocks_adjclose.csv")).unwrap();
        *bytes.last_mut().unwrap() ^= 1; // one bit
        std::fs::write(&copy, bytes).unwrap();
        let err = verify(&copy).unwrap_err();
        assert_eq!(err.expected, expected_sum("stocks_adjclose.csv").unwrap());
        assert!(err.to_string().contains("is not the papers' data set"), "{err}");
        // A file the manifest does not list is not checked.
        std::fs::write(tmp.join("mine.csv"), "a,b\n1,2\n").unwrap();
        assert_eq!(verify(&tmp.join("mine.csv")), Ok(()));
        let _ = std::fs::remove_dir_all(tmp);
        // The SHA-256 of "abc" (FIPS 180-2, appendix B.1).
        let abc: String = Sha256::digest(b"abc").iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(abc, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
