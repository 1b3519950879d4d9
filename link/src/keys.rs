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
//! A learner reads a file, or, for a directory `DIR` (a whole fleet), `DIR/<id>/link.key` of
//! each device directory `<id>`, holding that device's key alone; nothing else under `DIR` is
//! read. The files are written readable by their owner only: the key lets whoever holds it
//! spend the device's budget and forge its reports. A key file that others may write, or one in
//! a directory they may write, is refused (whoever can write it could put their own key there).

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

/// The keys of a key file, or, for a directory `DIR`, of `DIR/<id>/link.key` for every
/// subdirectory named by a device id (`host-sim fleet devices --dir DIR`), each of which must
/// hold that device's key and no other. Nothing else under `DIR` is read. A key file that its
/// group or others may write, or that lies in a directory they may write, is refused
/// ([`check_not_writable_by_others`]).
pub fn read(path: &Path) -> Result<BTreeMap<u64, LinkKey>, KeyError> {
    let io_err = |p: &Path, e: io::Error| KeyError { path: p.to_path_buf(), message: e.to_string() };
    if !path.is_dir() {
        check_not_writable_by_others(path)?;
        let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
        return parse(&text, path);
    }
    let mut keys = BTreeMap::new();
    for entry in std::fs::read_dir(path).map_err(|e| io_err(path, e))? {
        let entry = entry.map_err(|e| io_err(path, e))?;
        let Some(id) = entry.file_name().to_str().and_then(|name| name.parse::<u64>().ok()) else { continue };
        let file = entry.path().join(DEVICE_KEY_FILE);
        if !entry.path().is_dir() || !file.is_file() {
            continue;
        }
        let found = read(&file)?;
        match found.get(&id) {
            Some(key) if found.len() == 1 => {
                keys.insert(id, *key);
            }
            _ => {
                return Err(KeyError {
                    path: file,
                    message: format!(
                        "holds a key for another device than {id}, whose directory it is in: each DIR/<id>/{DEVICE_KEY_FILE} holds device <id>'s key alone, as `host-sim fleet devices` writes it"
                    ),
                });
            }
        }
    }
    Ok(keys)
}

/// Refuses a key file that its group or others may write, or that lies in a directory they may
/// write (without the sticky bit, which keeps them from replacing another's entries): whoever
/// could write either could put their own key there, and the learner would then believe that
/// key's reports. Every directory from the file up to the root is checked, for the path as
/// given and for the file it resolves to (a symbolic link's target).
pub fn check_not_writable_by_others(path: &Path) -> Result<(), KeyError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let err = |message: String| KeyError { path: path.to_path_buf(), message };
        let mode_of =
            |p: &Path| std::fs::metadata(p).map(|m| m.permissions().mode()).map_err(|e| err(e.to_string()));
        let who = |mode: u32| if mode & 0o002 != 0 { "anyone" } else { "its group" };
        let mode = mode_of(path)? & 0o777;
        if mode & 0o022 != 0 {
            return Err(err(format!(
                "may be written by {} (mode {mode:03o}), who could put their own key in it: make it its owner's only with `chmod 600 {}`",
                who(mode),
                path.display()
            )));
        }
        let given = std::path::absolute(path).map_err(|e| err(e.to_string()))?;
        let real = std::fs::canonicalize(path).map_err(|e| err(e.to_string()))?;
        for dir in given.ancestors().skip(1).chain(real.ancestors().skip(1)) {
            let mode = mode_of(dir)? & 0o1777;
            if mode & 0o022 != 0 && mode & 0o1000 == 0 {
                return Err(err(format!(
                    "is in the directory {}, which {} may write (mode {:03o}), who could put their own key file in its place: make the directory writable by its owner only with `chmod go-w {}`",
                    dir.display(),
                    who(mode),
                    mode & 0o777,
                    dir.display()
                )));
            }
        }
    }
    Ok(())
}

/// Where the key of device `id` is read from when the learner's keys are `path`: the file
/// itself, or `path/<id>/link.key` for a directory (for messages).
pub fn origin(path: &Path, id: u64) -> PathBuf {
    if path.is_dir() { path.join(id.to_string()).join(DEVICE_KEY_FILE) } else { path.to_path_buf() }
}

/// The environment variable naming the learner's key file (or directory of key files) for
/// devices this process did not provision: a board on a serial port or TCP, an MQTT fleet.
pub const KEYS_VAR: &str = "LDP_KEYS";

/// The keys of [`KEYS_VAR`]; an error saying what to set when it is not set.
pub fn learner_keys() -> io::Result<Keys> {
    let Some(path) = std::env::var_os(KEYS_VAR) else {
        return Err(io::Error::other(format!(
            "no device keys: set {KEYS_VAR} to the key file the device's provisioning wrote (DIR for `host-sim fleet devices --dir DIR`, the line `cargo provision-board` printed, or ldp-link.key beside an emulated board)"
        )));
    };
    read(Path::new(&path)).map_err(|e| io::Error::other(e.to_string()))
}

/// Where [`KEYS_VAR`] has the key of device `id` from (for messages): the file, or
/// `DIR/<id>/link.key`.
pub fn keys_origin(id: u64) -> Option<PathBuf> {
    std::env::var_os(KEYS_VAR).map(|path| origin(Path::new(&path), id))
}

/// The one device of [`KEYS_VAR`]'s key file (a board on a serial port or TCP).
pub fn single_device_auth() -> io::Result<Auth> {
    let keys = learner_keys()?;
    match keys.iter().next() {
        Some((&id, &key)) if keys.len() == 1 => Ok(Auth::new(key, id)),
        _ => Err(io::Error::other(format!(
            "{KEYS_VAR} must name the key of exactly one device for a board on a serial port or TCP ({} found)",
            keys.len()
        ))),
    }
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
    write_private(path, line(id, key).as_bytes())
}

/// Writes `bytes` to `path` (created or truncated), readable and writable by its owner only
/// (mode 0600, also when the file was there with a wider mode), and syncs it: for every file
/// that holds a device's seed, entropy or key.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    make_private(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Makes the existing file `path` readable and writable by its owner only (0600); nothing if
/// it does not exist.
pub fn make_private(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        match std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => other?,
        }
    }
    let _ = path;
    Ok(())
}

/// Creates the directory `path` and its missing parents accessible by their owner only (0700):
/// for a directory that will hold a device's seed or key. A directory that exists is left as
/// it is.
pub fn create_private_dir(path: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path)
}

/// Where a learner keeps the highest boot number it has seen from device `id`, whose key it
/// reads from `key_file`: beside that file, `<key file>.<id>.boot` (for `LDP_KEYS=DIR`,
/// `DIR/<id>/link.key.<id>.boot`; for an emulated board, `ldp-link.key.<id>.boot` in its
/// directory). It lives where the key does: in a directory only its owner may write, whoever
/// may replace the key file may replace it too, and the key file's checks
/// ([`check_not_writable_by_others`]) cover the directory. In a sticky directory others may
/// write (such as /tmp) anyone may create its name first: [`update_boot_record`] then opens
/// no link and takes no file that is not the user's own.
pub fn boot_record(key_file: &Path, id: u64) -> PathBuf {
    let mut name = key_file.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{id}.{BOOT_RECORD_EXT}"));
    key_file.with_file_name(name)
}

/// The extension of a boot record ([`boot_record`]).
pub const BOOT_RECORD_EXT: &str = "boot";

/// What a boot record's tag is computed with (domain separation from frame tags, whose input
/// starts with the device id).
const BOOT_RECORD_LABEL: &[u8] = b"ldp-bo boot record v1";

fn boot_record_tag(id: u64, key: &LinkKey, boot: u64) -> String {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&id.to_le_bytes());
    bytes[8..].copy_from_slice(&boot.to_le_bytes());
    ldp_core::wire::seed_digest(&key.to_bytes(), BOOT_RECORD_LABEL, &bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The highest boot number of device `id` that the boot record at `path` holds, raised to
/// `seen` (and written, 0600) if that is higher; 0 if there is no record. The record is one line
/// `<id> <boot> <tag>`, the tag an HMAC-SHA256 of id and boot under the device's link `key`: a
/// record that does not verify (edited by someone without the key, torn, or of another key: a
/// device provisioned anew in the same place) counts as no record and is rewritten. Read and
/// written under an exclusive lock on the file, so that learners of the same device in other
/// processes never lower it.
///
/// What the record is for: a device's boot number never goes back, so a hello with a lower one
/// comes from a device whose state was rolled back (an older copy restored), which a learner
/// must not talk to. It is not what keeps recorded frames out: every reply a learner takes is
/// tagged under the fresh nonce of its own hello request and the device's conversation number
/// (wire format 5), so a recorded hello or report of any boot fails its tag whatever the record
/// says. Deleting or replacing the record therefore lets no recorded report in; it forgets only
/// the rollback check for boots the learner saw before, until the next hello is recorded.
pub fn update_boot_record(path: &Path, id: u64, key: &LinkKey, seen: Option<u64>) -> io::Result<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Never through a link: in a sticky directory (/tmp), where a key file is accepted,
        // anyone may plant the record's name first (review 6).
        options.mode(0o600).custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    let mut file = options.open(path).map_err(|e| match e.raw_os_error() {
        #[cfg(unix)]
        // ELOOP; EMLINK where BSDs say it for O_NOFOLLOW
        Some(code)
            if code == rustix::io::Errno::LOOP.raw_os_error() || code == rustix::io::Errno::MLINK.raw_os_error() =>
        {
            io::Error::other(format!(
            "{} is a symbolic link, not a boot record: someone else may have put it there; remove it, and keep keys in a directory only you may write",
            path.display()
        ))
        }
        _ => e,
    })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let planted = || {
            io::Error::other(format!(
                "{} is not a boot record of this user's (a regular file of this user's with one name): someone else may have put it there; remove it, and keep keys in a directory only you may write",
                path.display()
            ))
        };
        let meta = file.metadata()?;
        // This user's own (review 7: root may chmod anyone's file, so the mode change below
        // is no owner check).
        let me = rustix::process::geteuid().as_raw();
        if !meta.is_file() || meta.nlink() != 1 || meta.uid() != me {
            return Err(planted());
        }
        file.set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(|e| match e.kind() {
            io::ErrorKind::PermissionDenied => planted(),
            _ => e,
        })?;
    }
    file.lock()?;
    let mut text = String::new();
    // An unreadable (not UTF-8) record is no record.
    let _ = file.read_to_string(&mut text);
    let recorded = text
        .lines()
        .map(|line| line.split('#').next().unwrap_or("").split_whitespace().collect::<Vec<_>>())
        .find_map(|fields| match fields[..] {
            [i, boot, tag] if i.parse() == Ok(id) => {
                boot.parse::<u64>().ok().filter(|&boot| tag == boot_record_tag(id, key, boot))
            }
            _ => None,
        })
        .unwrap_or(0);
    let Some(seen) = seen.filter(|&seen| seen > recorded) else { return Ok(recorded) };
    let line = format!(
        "# the highest boot number this learner saw from device {id} (wire format 5: a lower one is a rolled-back device)\n{id} {seen} {}\n",
        boot_record_tag(id, key, seen)
    );
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(line.as_bytes())?;
    file.sync_all()?;
    Ok(seen)
}

/// 32 bytes of OS entropy: the nonces of a learner's hellos, an emulated board's seed
/// material and boot entropy.
pub(crate) fn os_random() -> io::Result<[u8; 32]> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("no OS entropy: {e}")))?;
    Ok(bytes)
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
        // Anything else under DIR is not read: a stray key file beside the devices, a second
        // key file in a device's directory, a directory that is not a device id.
        write(&dir.join("evil.key"), 41, &LinkKey::new([9; 32])).unwrap();
        write(&dir.join("42").join("other.key"), 42, &LinkKey::new([9; 32])).unwrap();
        std::fs::create_dir_all(dir.join("notes")).unwrap();
        write(&dir.join("notes").join(DEVICE_KEY_FILE), 41, &LinkKey::new([9; 32])).unwrap();
        let keys = read(&dir).unwrap();
        assert_eq!(keys.len(), 2);
        assert_eq!(auth_for(&keys, 41, &dir).unwrap().key, LinkKey::new([1; 32]));
        assert_eq!(auth_for(&keys, 42, &dir).unwrap().key, LinkKey::new([2; 32]));
        assert!(auth_for(&keys, 43, &dir).unwrap_err().to_string().contains("no key for device 43"));
        assert_eq!(origin(&dir, 42), dir.join("42").join(DEVICE_KEY_FILE));
        // A device's link.key naming another device is refused, saying which file.
        std::fs::create_dir_all(dir.join("43")).unwrap();
        write(&dir.join("43").join(DEVICE_KEY_FILE), 41, &LinkKey::new([9; 32])).unwrap();
        let e = read(&dir).unwrap_err().to_string();
        assert!(e.contains("43/link.key") && e.contains("another device"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_key_file_others_may_write_is_refused_and_key_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("ldp-keys-mode-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        create_private_dir(&dir.join("7")).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("7")), 0o700);
        let file = dir.join("7").join(DEVICE_KEY_FILE);
        // A file that was there with a wide mode is made private when written.
        std::fs::write(&file, "").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        write(&file, 7, &LinkKey::new([7; 32])).unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(read(&dir).unwrap().len(), 1);
        for (wide, who) in [(0o620, "its group"), (0o602, "anyone"), (0o666, "anyone")] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(wide)).unwrap();
            for e in [read(&file).unwrap_err(), read(&dir).unwrap_err()] {
                let e = e.to_string();
                assert!(e.contains(who) && e.contains(&format!("chmod 600 {}", file.display())), "{e}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Review 3 finding 5: a private key file in a directory its group or others may write (they
    /// can put their own file in its place), directly or further up, or reached through a
    /// symbolic link from one, is refused, saying which directory to `chmod go-w`; a directory
    /// with the sticky bit (as /tmp), where no one replaces another's entries, is not.
    #[cfg(unix)]
    #[test]
    fn a_key_file_in_a_directory_others_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let root = std::env::temp_dir().join(format!("ldp-keys-dirs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let set =
            |p: &Path, mode: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
        create_private_dir(&root.join("a").join("7")).unwrap();
        let file = root.join("a").join("7").join(DEVICE_KEY_FILE);
        write(&file, 7, &LinkKey::new([7; 32])).unwrap();
        assert_eq!(read(&file).unwrap().len(), 1);
        for (dir, mode, who) in
            [("a/7", 0o770, "its group"), ("a/7", 0o777, "anyone"), ("a", 0o722, "anyone")]
        {
            let d = root.join(dir);
            set(&d, mode);
            for e in [read(&file).unwrap_err(), read(&root.join("a")).unwrap_err()] {
                let e = e.to_string();
                assert!(
                    e.contains(who)
                        && e.contains(&format!("chmod go-w {}", d.display()))
                        && e.contains("in its place"),
                    "{dir} {mode:o}: {e}"
                );
            }
            set(&d, 0o700);
        }
        // Sticky: others may create entries, not replace this one.
        set(&root.join("a"), 0o1777);
        assert_eq!(read(&file).unwrap().len(), 1);
        set(&root.join("a"), 0o700);
        // A link from a private directory to a key file in a writable one.
        create_private_dir(&root.join("open")).unwrap();
        let target = root.join("open").join("k.key");
        write(&target, 8, &LinkKey::new([8; 32])).unwrap();
        set(&root.join("open"), 0o777);
        let link = root.join("a").join("link.key");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = read(&link).unwrap_err().to_string();
        assert!(e.contains(&format!("chmod go-w {}", root.join("open").display())), "{e}");
        let _ = std::fs::remove_dir_all(&root);
    }
}
