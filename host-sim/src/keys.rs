//! Key files: how a device's link key (`ldp_core::wire::LinkKey`) reaches its learner.
//!
//! A key file is text, one device per line: its id in decimal and its 32-byte key in 64 hex
//! digits, separated by a space; `#` starts a comment.
//!
//! ```text
//! # written when the device was provisioned
//! 5495605612387500033 ffc521dcd5a13f9f816b2755520f572462925fc9c191adec217ecbb42248ab71
//! ```
//!
//! Whoever provisions a device writes its file: `QemuDevice` writes `ldp-link.key` in the
//! emulated board's directory (as `qemu-run.sh` does), `host-sim fleet devices` writes
//! `DIR/<id>/link.key`, and `cargo provision-board` prints the line for a board on its log once.
//! A learner reads a file, or every `*.key` file of a directory and of its subdirectories
//! (`--keys DIR` for a whole fleet). The files are written readable by their owner only: the key
//! lets whoever holds it spend the device's budget and forge its reports.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use ldp_core::wire::{Auth, KEY_LEN, LinkKey};

/// Device id → link key.
pub type Keys = BTreeMap<u64, LinkKey>;

/// A fleet device's key file in its directory (`DIR/<id>/link.key`).
pub const DEVICE_KEY_FILE: &str = "link.key";
/// An emulated board's key file in its working directory.
pub const BOARD_KEY_FILE: &str = "ldp-link.key";

/// A key file could not be read or has a bad line.
#[derive(Debug)]
pub struct KeyError {
    /// The file.
    pub path: PathBuf,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "key file {}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for KeyError {}

/// The line of a key file for device `id`.
pub fn line(id: u64, key: &LinkKey) -> String {
    let hex: String = key.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
    format!("{id} {hex}\n")
}

/// The keys in `text` (read from `path`, for messages).
pub fn parse(text: &str, path: &Path) -> Result<BTreeMap<u64, LinkKey>, KeyError> {
    let bad = |n: usize, what: &str| KeyError {
        path: path.to_path_buf(),
        message: format!(
            "line {n}: {what}; expected '<device id> <64 hex digits>' as the device's provisioning wrote it"
        ),
    };
    let mut keys = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let mut fields = content.split_whitespace();
        let (Some(id), Some(hex), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(bad(i + 1, "not two fields"));
        };
        let id: u64 = id.parse().map_err(|_| bad(i + 1, "the device id is not a decimal u64"))?;
        if hex.len() != 2 * KEY_LEN || !hex.is_ascii() {
            return Err(bad(i + 1, "the key is not 64 hex digits"));
        }
        let mut key = [0u8; KEY_LEN];
        for (k, pair) in key.iter_mut().zip(hex.as_bytes().chunks(2)) {
            let digits = std::str::from_utf8(pair).map_err(|_| bad(i + 1, "the key is not hex"))?;
            *k = u8::from_str_radix(digits, 16).map_err(|_| bad(i + 1, "the key is not hex"))?;
        }
        if keys.insert(id, LinkKey::new(key)).is_some_and(|old| old != LinkKey::new(key)) {
            return Err(bad(i + 1, "a second, different key for the same device"));
        }
    }
    Ok(keys)
}

/// The keys of a key file, or of every `*.key` file in a directory and its subdirectories
/// (one level down: `DIR/<id>/link.key`).
pub fn read(path: &Path) -> Result<BTreeMap<u64, LinkKey>, KeyError> {
    let io_err = |p: &Path, e: io::Error| KeyError { path: p.to_path_buf(), message: e.to_string() };
    if !path.is_dir() {
        let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
        return parse(&text, path);
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| io_err(path, e))? {
        let p = entry.map_err(|e| io_err(path, e))?.path();
        if p.is_dir() {
            for sub in std::fs::read_dir(&p).map_err(|e| io_err(&p, e))? {
                files.push(sub.map_err(|e| io_err(&p, e))?.path());
            }
        } else {
            files.push(p);
        }
    }
    files.retain(|p| p.extension().is_some_and(|e| e == "key") && p.is_file());
    files.sort();
    let mut keys = BTreeMap::new();
    for file in files {
        for (id, key) in read(&file)? {
            if keys.insert(id, key).is_some_and(|old| old != key) {
                return Err(KeyError {
                    path: file,
                    message: format!("a second, different key for device {id}"),
                });
            }
        }
    }
    Ok(keys)
}

/// The authentication of device `id` from `keys`, or an error naming what is missing.
pub fn auth_for(keys: &BTreeMap<u64, LinkKey>, id: u64, origin: &Path) -> Result<Auth, KeyError> {
    keys.get(&id).map(|key| Auth::new(*key, id)).ok_or_else(|| KeyError {
        path: origin.to_path_buf(),
        message: format!("no key for device {id}: give the key file its provisioning wrote (--keys)"),
    })
}

/// Writes the key file `path` for device `id`, readable by its owner only, and syncs it.
pub fn write(path: &Path, id: u64, key: &LinkKey) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(line(id, key).as_bytes())?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_files_round_trip_and_bad_lines_say_why() {
        let key = LinkKey::from_seed(&[0x11; 32]);
        let text = format!("# a comment\n\n{}", line(5495605612387500033, &key));
        let keys = parse(&text, Path::new("k")).unwrap();
        assert_eq!(keys.get(&5495605612387500033), Some(&key));
        for bad in ["1", "x 00", "1 0011", "1 zz", &format!("1 {}", "0".repeat(63) + "é")] {
            let e = parse(bad, Path::new("k")).unwrap_err().to_string();
            assert!(e.contains("line 1") && e.contains("64 hex digits"), "{e}");
        }
        let two = format!("{}{}", line(1, &key), line(1, &LinkKey::new([0; 32])));
        assert!(parse(&two, Path::new("k")).is_err());
    }

    #[test]
    fn a_directory_gives_every_device_key_below_it() {
        let dir = std::env::temp_dir().join(format!("ldp-keys-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("41")).unwrap();
        std::fs::create_dir_all(dir.join("42")).unwrap();
        write(&dir.join("41").join(DEVICE_KEY_FILE), 41, &LinkKey::new([1; 32])).unwrap();
        write(&dir.join("42").join(DEVICE_KEY_FILE), 42, &LinkKey::new([2; 32])).unwrap();
        std::fs::write(dir.join("42").join("state.bin"), b"not a key").unwrap();
        let keys = read(&dir).unwrap();
        assert_eq!(keys.len(), 2);
        assert_eq!(auth_for(&keys, 42, &dir).unwrap().key, LinkKey::new([2; 32]));
        assert!(auth_for(&keys, 43, &dir).unwrap_err().to_string().contains("no key for device 43"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
