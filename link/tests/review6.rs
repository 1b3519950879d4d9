//! Review 6 (branch review6): wire format 5 on the learner's side, attacked from the link.
//!
//! Breaks (ignored, so the suite stays green; each fails on `merge-v5` as it is):
//!
//! 1. `a_refusal_of_a_mutated_copy_does_not_make_the_learner_pay_a_query_four_times` (fixed,
//!    no longer ignored): the learner treated a refusal 12 of *a copy* of its query as "the
//!    query was not spent" and resent it afresh after a new hello, up to
//!    `CONVERSATION_RETRIES` times; the attacker delivered the genuine copy between the refusal
//!    and the learner's new hello. 4 spends per learner query, no report taken, and the
//!    learner's error said nothing was spent.
//! 2. `a_boot_record_beside_a_key_in_a_sticky_directory_is_not_followed_through_a_link` (fixed,
//!    no longer ignored): the boot record was opened with `create`, following symbolic links,
//!    and chmod'ed 0600 through them; a key file in a sticky directory (such as /tmp) is
//!    accepted, where anyone may plant `<key file>.<id>.boot` first. Now opened with
//!    `O_NOFOLLOW`, refused unless a regular file with one name that the user may chmod.
//!
//! Held (not ignored): power-cycling the board after every release makes at most two releases
//! per learner request (the documented resend in the new session), and the budget the learner
//! shows covers every release.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use ldp_core::{Epsilon, MemoryStore};
use ldp_link::client::{LinkError, WireClient};
use ldp_link::transport::Link;

mod common;
use common::{Dev, ID, boot, device_answer, mutated, raw_frame};

/// The attacker on the link: for each new query frame of the learner it sends the device a
/// copy with the action byte changed (CRC fixed up) and passes the device's refusal 12 on to the
/// learner, holding the genuine frame back. When the learner then sends a hello request (its
/// new greeting after "not of the device's conversation"), the attacker first delivers the
/// held genuine query — the device's conversation is still open, so it is answered and
/// charged — swallows the report, and only then passes the hello request.
struct Amplifier {
    inner: Dev,
    inbound: VecDeque<u8>,
    held: Option<Vec<u8>>,
    /// Genuine queries delivered behind the learner's back, their reports swallowed.
    swallowed: u32,
}

impl Link for Amplifier {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        match raw_frame(bytes) {
            Some(raw) if raw[1] == 0x02 => {
                if self.held.as_deref() != Some(bytes) {
                    let refusal = device_answer(&mut self.inner, &mutated(&raw, 10, raw[10] ^ 1))?;
                    self.inbound.extend(refusal);
                    self.held = Some(bytes.to_vec());
                }
                Ok(())
            }
            Some(raw) if raw[1] == 0x01 => {
                if let Some(genuine) = self.held.take() {
                    let _report = device_answer(&mut self.inner, &genuine)?;
                    self.swallowed += 1;
                }
                let hello = device_answer(&mut self.inner, bytes)?;
                self.inbound.extend(hello);
                Ok(())
            }
            _ => {
                let reply = device_answer(&mut self.inner, bytes)?;
                self.inbound.extend(reply);
                Ok(())
            }
        }
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// **Break 1 (medium: budget drain ×4 per learner query, false "nothing was spent").**
///
/// Attack: on the link (or the broker), for each query of the learner send the device a copy
/// with one payload byte changed (CRC recomputed; no key needed) and pass on the device's
/// refusal 12, which answers the learner's very tag under the all-zero conversation and so
/// verifies: the learner counts it as "refused as not of its conversation" (`KeyRefused`), and,
/// believing the query unspent, greets the device again. Hold that hello request, deliver the
/// genuine query (the device's conversation is still open: answered, charged), swallow the
/// report, then pass the hello request. The learner resends the query afresh in the new
/// conversation, and the attacker does it again, `CONVERSATION_RETRIES` times, and once more
/// before the closing hello.
///
/// What happened on `merge-v5`: one `WireClient::query` ended with `KeyRefused`, whose message
/// says "nothing was spent on the refused queries"; the device spent 4 ε and released the same
/// reading 4 times (each charged, so ε-LDP holds at 4ε), no report taken. Docs
/// (wire-format.md, "What the learner checks"; `WireClient::request`) say such a query was not
/// spent and a withheld query is spent at most once. A fleet benches the member and asks the
/// next, where the same is done: the attacker drains 4 ε per device per round while the
/// learner gets nothing (dropping replies alone costs the device 1 ε per round).
///
/// Fixed: the learner resends only while the device's next hello, in the same boot, shows no
/// budget spent since the refusal; here the first new hello shows 1 ε spent, and the learner
/// stops with `SpentUnanswered`, naming the spend: one release, as a withheld reply costs.
#[test]
fn a_refusal_of_a_mutated_copy_does_not_make_the_learner_pay_a_query_four_times() {
    let dev = boot(MemoryStore::provisioned([5; 32]));
    let auth = dev.auth();
    let link = Amplifier { inner: dev, inbound: VecDeque::new(), held: None, swallowed: 0 };
    let mut c = WireClient::with_nonce_seed(link, auth, 6);
    c.timeout = Duration::from_millis(1);
    let got = c.query(1, 1, Epsilon::new(1.0).unwrap(), None);
    let spent = c.link().inner.app().reporter().accountant().spent();
    let swallowed = c.link().swallowed;
    let message = match &got {
        Err(e) => e.to_string(),
        Ok(r) => format!("{r:?}"),
    };
    // The learner took no report; the docs allow at most the one spend of a withheld query.
    assert!(
        spent <= 1.0,
        "one learner query, no report taken, the device spent {spent} ε ({swallowed} releases swallowed); the learner said: {message}"
    );
    assert!(matches!(got, Err(LinkError::SpentUnanswered { device_id: ID, spent: 1.0 })), "{message}");
    assert!(message.contains("1 ε spent"), "{message}");
    assert_eq!(c.conversations_lost, 1, "resent after the spend showed");
}

/// **Break 2 (low: a false docs claim; denial of service or file clobbering for a key in a
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
    let dir = std::env::temp_dir().join(format!("review6-sticky-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let key = ldp_core::wire::LinkKey::new([3; 32]);
    let key_file = dir.join("keys.txt");
    ldp_link::keys::write(&key_file, 7, &key).unwrap();
    // The key file is accepted in the sticky directory.
    let accepted = ldp_link::keys::read(&key_file).map(|k| k.len());
    // Someone plants the record's name first.
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    let record = ldp_link::keys::boot_record(&key_file, 7);
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

/// The attacker power-cycles the board right after every report it makes, swallowing the
/// report, and passes everything else.
struct PowerCycler {
    inner: Dev,
    inbound: VecDeque<u8>,
    releases: u32,
}

impl Link for PowerCycler {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let reply = device_answer(&mut self.inner, bytes)?;
        if raw_frame(&reply).is_some_and(|raw| raw[1] == 0x82) {
            self.releases += 1;
            let store = *self.inner.app().reporter().accountant().store();
            self.inner = boot(store);
        } else {
            self.inbound.extend(reply);
        }
        Ok(())
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// Held: power-cycling the board after each release (the attacker can, and can swallow the
/// report) makes the learner resend a request once in the new session (documented), never
/// more: 2 releases per request, and the budget the learner shows covers every one of them
/// (its ledger does not under-report).
#[test]
fn power_cycling_after_every_release_costs_at_most_two_releases_per_request() {
    let dev = boot(MemoryStore::provisioned([6; 32]));
    let auth = dev.auth();
    let mut c = WireClient::with_nonce_seed(
        PowerCycler { inner: dev, inbound: VecDeque::new(), releases: 0 },
        auth,
        8,
    );
    c.timeout = Duration::from_millis(1);
    let eps = Epsilon::new(1.0).unwrap();
    for t in 0..3 {
        let got = c.query(t, 1, eps, None);
        assert!(got.is_err(), "round {t}: {got:?}");
    }
    let releases = c.link().releases;
    assert!((3..=6).contains(&releases), "{releases} releases for 3 requests");
    // Every release is charged, and shows in the budget the learner saw.
    let spent = c.link().inner.app().reporter().accountant().spent();
    assert!(spent >= f64::from(releases), "{spent} ε spent for {releases} releases");
    let total = 1000.0;
    assert!(total - c.budget_shown() >= f64::from(releases), "shown {} left", c.budget_shown());
}

/// Held (review 6's fix): a record planted as a second name of one of the user's own files
/// (a hard link, where the system lets others make one) is refused, and the file is untouched.
#[cfg(unix)]
#[test]
fn a_boot_record_that_is_a_second_name_of_another_file_is_refused() {
    let dir = std::env::temp_dir().join(format!("review6-hardlink-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    ldp_link::keys::create_private_dir(&dir).unwrap();
    let key = ldp_core::wire::LinkKey::new([3; 32]);
    let key_file = dir.join("keys.txt");
    ldp_link::keys::write(&key_file, 7, &key).unwrap();
    let other = dir.join("notes.txt");
    std::fs::write(&other, "precious\n").unwrap();
    let record = ldp_link::keys::boot_record(&key_file, 7);
    std::fs::hard_link(&other, &record).unwrap();
    let got = ldp_link::keys::update_boot_record(&record, 7, &key, Some(3));
    let text = std::fs::read_to_string(&other).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(text, "precious\n", "the record wrote through a second name ({got:?})");
    let message = got.expect_err("a second name is refused").to_string();
    assert!(message.contains("is not a boot record of this user's"), "{message}");
}
