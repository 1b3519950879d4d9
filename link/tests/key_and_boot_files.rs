//! Key files and boot records are taken only when no one but the user could have put them
//! there, and a planted file, link or FIFO at a boot record's name is refused without writing
//! through it, blocking, or creating anything.
//!
//! Covers: a board directory claimed before QEMU starts (made private), a key file in a
//! directory others may write, and at a boot record's name in a sticky directory (where a key
//! file is accepted): a symbolic link, a second name of another file, another user's file (also
//! for root), a FIFO and a dangling link.

#[cfg(unix)]
use std::path::{Path, PathBuf};

#[cfg(unix)]
use ldp_core::wire::LinkKey;

#[cfg(unix)]
use crate::common::sticky_dir;

/// Device 7's key, written in `dir/keys.txt`, and where its boot record goes.
#[cfg(unix)]
fn key_in(dir: &Path) -> (LinkKey, PathBuf) {
    let key = LinkKey::new([3; 32]);
    let key_file = dir.join("keys.txt");
    ldp_link::keys::write(&key_file, 7, &key).unwrap();
    (key, ldp_link::keys::boot_record(&key_file, 7))
}

/// Review 3, finding 4 (nit, fixed): `live --device qemu` and `fleet bridge --qemu` claim the board's directory
/// with `fleet::lock_device_dir` (main.rs `claim_board`), which creates it with
/// `create_dir_all` (mode 0777 & !umask, 0755 under the usual umask 022) *before*
/// `QemuDevice::start` calls `keys::create_private_dir`, which leaves an existing directory as
/// it is. The files in it are 0600, but the directory is not the documented 0700.
#[cfg(unix)]
#[test]

fn a_board_directory_claimed_before_qemu_starts_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("ldp-link-board-{}", std::process::id())).join("board");
    let _ = std::fs::remove_dir_all(&dir);
    let _lock = ldp_link::fleet::lock_device_dir(&dir).unwrap(); // claim_board, first
    ldp_link::keys::create_private_dir(&dir).unwrap(); // QemuDevice::start, then
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
    assert_eq!(mode, 0o700, "the board's directory is {mode:o}");
}

/// Review 3, finding 5 (nit, fixed): the key-file check looks at the file's own mode bits only. A key file in a
/// directory others may write (they can replace it by one of their own, mode 0600), a symlink
/// to such a file, or a 0644 file owned by another user, is taken. Here: `DIR/7/` is 0777 and
/// its `link.key` 0600: accepted.
#[cfg(unix)]
#[test]
fn a_key_file_in_a_world_writable_directory_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("ldp-link-keys-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("7")).unwrap();
    let file = dir.join("7").join("link.key");
    ldp_link::keys::write(&file, 7, &ldp_core::wire::LinkKey::new([1; 32])).unwrap();
    std::fs::set_permissions(dir.join("7"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let got = ldp_link::keys::read(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(got.is_err(), "taken from a directory anyone may write: {:?}", got.map(|k| k.len()));
}

/// **Review 6, break 2 (low: a false docs claim; denial of service or file clobbering for a key in a
/// sticky directory).**
///
/// `check_not_writable_by_others` accepts a key file in a sticky world-writable directory
/// (`/tmp`), and `boot_record` puts the record beside it, claiming "whoever may replace the
/// key file may replace it too". In a sticky directory anyone may *create* the record's name
/// first. `update_boot_record` opens it with `create(true)` (no `O_NOFOLLOW`, no owner check)
/// and `make_private` chmods the path, both through a symbolic link.
///
/// What happened on `merge-v5` (same user, `fs.protected_symlinks = 0` here): a symlink planted
/// at `keys.txt.7.boot` to `victim.txt` had the victim truncated and replaced by the boot
/// record, and its mode set to 0600. With another user's link and Linux's default
/// `protected_symlinks = 1`/`protected_regular`, the open fails instead: every hello of that
/// device fails ("cannot keep device 7's boot number"), a denial of service; with a planted
/// regular file of the attacker's (mode 0666, protections off), the chmod fails the same way,
/// or, if it were ignored, the attacker could put back old records at will.
///
/// A fix: refuse a key file in any directory others may write (sticky or not) when a record is
/// kept beside it, or open the record with `O_NOFOLLOW` and check its owner and mode.
#[cfg(unix)]
#[test]
fn a_boot_record_beside_a_key_in_a_sticky_directory_is_not_followed_through_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir = sticky_dir("sticky");
    let (key, record) = key_in(&dir);
    // The key file is accepted in the sticky directory.
    let accepted = ldp_link::keys::read(&dir.join("keys.txt")).map(|k| k.len());
    // Someone plants the record's name first.
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink(&victim, &record).unwrap();
    let got = ldp_link::keys::update_boot_record(&record, 7, &key, Some(3));
    let text = std::fs::read_to_string(&victim).unwrap_or_default();
    let mode = std::fs::metadata(&victim).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(accepted.ok(), Some(1), "precondition: a key in a sticky directory is accepted");
    assert!(
        text == "precious\n" && mode == 0o644,
        "the boot record wrote through a planted link ({got:?}): the victim now holds {text:?}, mode {mode:o}"
    );
    let message = got.expect_err("a planted link is refused").to_string();
    assert!(message.contains("is a symbolic link, not a boot record"), "{message}");
}

/// Held (review 6's fix): a record planted as a second name of one of the user's own files
/// (a hard link, where the system lets others make one) is refused, and the file is untouched.
#[cfg(unix)]
#[test]
fn a_boot_record_that_is_a_second_name_of_another_file_is_refused() {
    let dir = std::env::temp_dir().join(format!("ldp-link-hardlink-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    ldp_link::keys::create_private_dir(&dir).unwrap();
    let (key, record) = key_in(&dir);
    let other = dir.join("notes.txt");
    std::fs::write(&other, "precious\n").unwrap();
    std::fs::hard_link(&other, &record).unwrap();
    let got = ldp_link::keys::update_boot_record(&record, 7, &key, Some(3));
    let text = std::fs::read_to_string(&other).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(text, "precious\n", "the record wrote through a second name ({got:?})");
    let message = got.expect_err("a second name is refused").to_string();
    assert!(message.contains("is not a boot record of this user's"), "{message}");
}

/// **Review 7, break 4 (low: root only, and only with `fs.protected_regular = 0`; the planter can then
/// put back an older record, forgetting the rollback check, the documented cost of deleting
/// it).**
///
/// Attack: another user plants a regular file, theirs, mode 0666, at `<key file>.<id>.boot` in
/// a sticky directory (where a key file is accepted). The fix refuses it because fchmod fails
/// for a file not the user's — but root may fchmod any file, so a learner run as root (a
/// container, a service) takes it, and its owner keeps the right to chmod and rewrite it.
///
/// Outcome on merge-v5 (run as root here): `update_boot_record` returns `Ok(3)`, the record
/// written into the other user's file. Fixed: the file's owner is compared with the effective
/// uid (`rustix::process::geteuid`), rather than relying on fchmod.
#[cfg(unix)]
#[test]
fn a_planted_boot_record_of_another_user_is_refused_also_for_root() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = sticky_dir("owner");
    let (key, record) = key_in(&dir);
    std::fs::write(&record, "").unwrap();
    std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o666)).unwrap();
    // Another user's file: only root can make one here; otherwise the test shows nothing.
    if std::os::unix::fs::chown(&record, Some(65534), Some(65534)).is_err() {
        let _ = std::fs::remove_dir_all(&dir);
        eprintln!("not root: cannot plant another user's file; nothing to show");
        return;
    }
    let got = ldp_link::keys::update_boot_record(&record, 7, &key, Some(3));
    let owner = std::fs::metadata(&record).map(|m| m.uid()).unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(owner, 65534, "precondition: the record is another user's");
    let message = got.expect_err("another user's file is refused").to_string();
    assert!(message.contains("is not a boot record of this user's"), "{message}");
}

/// Held: a FIFO planted at the record's name (anyone may `mkfifo` in a sticky directory) is
/// refused, without blocking on the open.
#[cfg(unix)]
#[test]
fn a_planted_fifo_is_refused_without_blocking() {
    let dir = sticky_dir("fifo");
    let (key, record) = key_in(&dir);
    let made = std::process::Command::new("mkfifo").arg(&record).status();
    if !made.is_ok_and(|s| s.success()) {
        let _ = std::fs::remove_dir_all(&dir);
        eprintln!("no mkfifo here; nothing to show");
        return;
    }
    let got = ldp_link::keys::update_boot_record(&record, 7, &key, Some(3));
    let _ = std::fs::remove_dir_all(&dir);
    let message = got.expect_err("a FIFO is refused").to_string();
    assert!(message.contains("is not a boot record of this user's"), "{message}");
}

/// Held: a dangling symbolic link planted at the record's name is refused, and its target is
/// not created (`O_CREAT | O_NOFOLLOW`).
#[cfg(unix)]
#[test]
fn a_planted_dangling_link_is_refused_and_creates_nothing() {
    let dir = sticky_dir("dangling");
    let (key, record) = key_in(&dir);
    let target = dir.join("created-by-the-learner");
    std::os::unix::fs::symlink(&target, &record).unwrap();
    let got = ldp_link::keys::update_boot_record(&record, 7, &key, Some(3));
    let created = target.exists();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!created, "the learner created the link's target ({got:?})");
    let message = got.expect_err("a dangling link is refused").to_string();
    assert!(message.contains("is a symbolic link, not a boot record"), "{message}");
}
