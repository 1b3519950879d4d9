//! Review of wire format 4 (branch review3).
//!
//! 1. The device signs, for anyone, a refusal that answers any tag: a frame whose version or
//!    type byte is changed (CRC recomputed, no key needed) is refused *before* its tag is
//!    checked (`Repr::parse`: version, type, length, then tag), and `ReplyCache::respond` tags
//!    that refusal under the conversation's nonce and session, answering the frame's (unchecked)
//!    tag. The attacker takes the learner's query, sends the device a copy with the version
//!    byte changed, and passes back the device's `UnsupportedVersion` refusal: it verifies as the
//!    answer to the learner's very request, and the learner takes it as final (no closing
//!    hello). The attacker then delivers the genuine query and drops its report: the device
//!    spends ε that the learner believes was never spent.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use ldp_core::wire::Refusal;
use ldp_core::{Epsilon, MemoryStore};
use ldp_link::client::WireClient;
use ldp_link::transport::Link;

mod common;
use common::{Dev, boot, mutated, raw_frame};

/// The attacker on the link: for every query (type 0x02) it sends the device the learner's
/// frame with byte `at` set to `value` instead, forwards the device's refusal to the learner,
/// then delivers the genuine query and swallows the report.
struct RefusalOracle {
    inner: Dev,
    inbound: VecDeque<u8>,
    at: usize,
    value: u8,
    swallowed: u32,
}
impl Link for RefusalOracle {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        match raw_frame(bytes) {
            Some(raw) if raw[1] == 0x02 => {
                self.inner.send(&mutated(&raw, self.at, self.value))?;
                while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
                    self.inbound.push_back(b); // the device's refusal, tagged for the learner
                }
                self.inner.send(bytes)?; // the genuine query: answered and charged
                while self.inner.recv_byte(Duration::ZERO)?.is_some() {}
                self.swallowed += 1;
            }
            _ => {
                self.inner.send(bytes)?;
                while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
                    self.inbound.push_back(b);
                }
            }
        }
        Ok(())
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

fn attack(at: usize, value: u8) -> (Result<Result<ldp_core::Report, Refusal>, String>, f64, f64) {
    let dev = boot(MemoryStore::provisioned([3; 32]));
    let auth = dev.auth();
    let link = RefusalOracle { inner: dev, inbound: VecDeque::new(), at, value, swallowed: 0 };
    let mut c = WireClient::with_nonce_seed(link, auth, 11);
    c.timeout = Duration::from_millis(1);
    c.hello().unwrap();
    let shown_before = c.budget_shown();
    let device_before = c.link().inner.app().reporter().accountant().remaining();
    let got = c.query(1, 3, Epsilon::new(1.0).unwrap(), None).map_err(|e| e.to_string());
    let device_spent = device_before - c.link().inner.app().reporter().accountant().remaining();
    let learner_spent = shown_before - c.budget_shown();
    println!(
        "learner got {got:?}; device spent {device_spent}, learner saw {learner_spent} spent; {:?}",
        c.dropped
    );
    (got, device_spent, learner_spent)
}

/// Finding 1 (break): with the version byte changed (4 -> 3) the device's authenticated
/// `UnsupportedVersion` refusal is taken as the answer to the learner's query, while the device
/// spends ε on the genuine copy. The learner must never take, as the answer to its request, a
/// reply the device made without verifying that request.
#[test]

fn a_refusal_of_a_version_mutated_copy_is_not_the_answer() {
    let (got, device_spent, learner_spent) = attack(0, 3);
    assert_eq!(device_spent, 1.0, "the genuine query was answered and charged");
    assert!(
        !matches!(got, Ok(Err(Refusal::UnsupportedVersion))),
        "the learner took the attacker-provoked refusal as final ({got:?}) while the device spent {device_spent} \
         and the learner saw {learner_spent}"
    );
}

/// The same with the type byte changed (0x02 -> 0x03, a fed query of another length):
/// `Malformed`, which a fleet takes as "this device cannot serve this query" and drops the
/// member for good.
#[test]

fn a_refusal_of_a_type_mutated_copy_is_not_the_answer() {
    let (got, device_spent, _) = attack(1, 0x03);
    assert_eq!(device_spent, 1.0, "the genuine query was answered and charged");
    assert!(!matches!(got, Ok(Err(Refusal::Malformed))), "{got:?}");
}

/// Records every request frame the learner sends (encoded, as on the link).
struct Recorder {
    inner: Dev,
    inbound: VecDeque<u8>,
    sent: Vec<(u8, u32, Vec<u8>)>,
}
impl Link for Recorder {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        if let Some(raw) = raw_frame(bytes) {
            let seq = u32::from_le_bytes([raw[2], raw[3], raw[4], raw[5]]);
            self.sent.push((raw[1], seq, bytes.to_vec()));
        }
        self.inner.send(bytes)?;
        while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
            self.inbound.push_back(b);
        }
        Ok(())
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// Finding 2 (break): the freshness rule is serial-number order, a half-circle window, and a
/// hello request's number moves the device's floor forward. Learners that start at random
/// numbers (`host-sim` runs on the wire: `starting_after(session_start())`), or recorded hello
/// requests (tagged in session 0 with no device challenge: valid in every boot, forever), walk
/// the floor around the circle; then the recorded hello request of an old conversation of this
/// boot reopens its nonce, and every recorded query of it that has left the 8-entry reply
/// cache is *fresh* again: the device reads, releases and spends for each, and no learner takes
/// the reports.
#[test]

fn recorded_queries_are_not_spent_again_after_the_floor_wraps() {
    let eps = Epsilon::new(1.0).unwrap();
    let dev = boot(MemoryStore::provisioned([8; 32]));
    let auth = dev.auth();
    // Conversation A: a learner starting at 0 asks 12 queries (more than the reply cache holds).
    let mut a =
        WireClient::with_nonce_seed(Recorder { inner: dev, inbound: VecDeque::new(), sent: vec![] }, auth, 1);
    a.timeout = Duration::from_millis(1);
    for t in 0..12 {
        a.query(t, t % 100, eps, None).unwrap().unwrap();
    }
    let mut link = a.into_link();
    // Three later, honest runs on the same boot, each starting at a random number (these
    // three happen to lie less than half a circle apart): each only greets the device.
    for (i, start) in [0x6000_0000u32, 0xC000_0000, 0xFFFF_FF00].into_iter().enumerate() {
        let mut c = WireClient::with_nonce_seed(link, auth, 100 + i as u64).starting_after(start);
        c.timeout = Duration::from_millis(1);
        c.hello().unwrap();
        link = c.into_link();
    }
    let recorded: Vec<Vec<u8>> = link
        .sent
        .iter()
        .take_while(|(ty, seq, _)| *ty != 0x01 || *seq < 0x6000_0000)
        .map(|f| f.2.clone())
        .collect();
    let before = link.inner.app().reporter().accountant().remaining();
    // The attacker replays conversation A (its hello request, then its queries) to the device.
    let mut device = link.inner;
    let mut answered = 0;
    for frame in &recorded {
        device.send(frame).unwrap();
        while device.recv_byte(Duration::ZERO).unwrap().is_some() {}
        answered += 1;
    }
    let spent = before - device.app().reporter().accountant().remaining();
    println!("replayed {answered} recorded frames of conversation A; the device spent {spent} more");
    assert_eq!(spent, 0.0, "recorded queries were answered afresh and charged: {spent}");
}

/// Finding 4 (nit): `live --device qemu` and `fleet bridge --qemu` claim the board's directory
/// with `fleet::lock_device_dir` (main.rs `claim_board`), which creates it with
/// `create_dir_all` (mode 0777 & !umask, 0755 under the usual umask 022) *before*
/// `QemuDevice::start` calls `keys::create_private_dir`, which leaves an existing directory as
/// it is. The files in it are 0600, but the directory is not the documented 0700.
#[cfg(unix)]
#[test]

fn a_board_directory_claimed_before_qemu_starts_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("review3-board-{}", std::process::id())).join("board");
    let _ = std::fs::remove_dir_all(&dir);
    let _lock = ldp_link::fleet::lock_device_dir(&dir).unwrap(); // claim_board, first
    ldp_link::keys::create_private_dir(&dir).unwrap(); // QemuDevice::start, then
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
    assert_eq!(mode, 0o700, "the board's directory is {mode:o}");
}

/// Finding 3 (weakness, denial of service beyond the documented one): one replayed hello
/// request (any recorded one: its tag is in session 0, with no device challenge, so it is valid
/// in every boot) moves the device to another nonce; the device then refuses the learner's
/// query (12) under the *replayed* nonce, which the learner counts as a bad tag of the awaited
/// number and reports as `BadTags` — "wrong key?" — though its key is right. A fleet ends the
/// whole run on that error (`fleet.rs`, `Err(e) => return Err(DeviceError::Link(e))`), where a
/// member whose frames are merely dropped is only benched. Nothing is spent (checked).
///
/// Since wire format 5 this replay costs nothing: the replayed request carries the nonce of the
/// open conversation (the learner's first, frozen by its second hello, whose offer is not yet
/// taken), so it is a retry and changes nothing; the learner's query opens its offer and is
/// answered once: the device spends exactly the one report the learner takes. (A replayed hello
/// request of another conversation costs at most a new hello: `wire_v5.rs`.)
#[test]

fn a_replayed_hello_request_is_not_called_a_wrong_key() {
    use ldp_link::client::LinkError;
    struct Hijack {
        inner: Dev,
        inbound: VecDeque<u8>,
        first_hello: Option<Vec<u8>>,
        replay_before_next_query: std::rc::Rc<std::cell::Cell<bool>>,
    }
    impl Link for Hijack {
        fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
            let ty = raw_frame(bytes).map(|r| r[1]);
            if ty == Some(0x01) && self.first_hello.is_none() {
                self.first_hello = Some(bytes.to_vec());
            }
            if ty == Some(0x02) && self.replay_before_next_query.replace(false) {
                let old = self.first_hello.clone().unwrap_or_default();
                self.inner.send(&old)?;
                while self.inner.recv_byte(Duration::ZERO)?.is_some() {}
            }
            self.inner.send(bytes)?;
            while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
                self.inbound.push_back(b);
            }
            Ok(())
        }
        fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
            Ok(self.inbound.pop_front())
        }
    }
    let eps = Epsilon::new(1.0).unwrap();
    let dev = boot(MemoryStore::provisioned([9; 32]));
    let auth = dev.auth();
    let replay = std::rc::Rc::new(std::cell::Cell::new(false));
    let link = Hijack {
        inner: dev,
        inbound: VecDeque::new(),
        first_hello: None,
        replay_before_next_query: replay.clone(),
    };
    let mut c = WireClient::with_nonce_seed(link, auth, 5);
    c.timeout = Duration::from_millis(1);
    c.query(0, 1, eps, None).unwrap().unwrap();
    c.hello().unwrap(); // a second conversation of the same learner (e.g. after a stale refusal)
    let before = c.link().inner.app().reporter().accountant().remaining();
    replay.set(true);
    let e = c.query(1, 1, eps, None);
    let spent = before - c.link().inner.app().reporter().accountant().remaining();
    println!("after a replayed hello request: {e:?}; spent {spent}; {:?}", c.dropped);
    assert!(!matches!(e, Err(LinkError::BadTags { .. })), "a right key called wrong: {e:?}");
    assert!(matches!(e, Ok(Ok(_))), "the learner greets again and is answered: {e:?}");
    assert_eq!(spent, 1.0, "one report taken, one spent: the refused copy cost nothing");
    assert_eq!(c.conversations_lost, 0);
}

/// Finding 5 (nit): the key-file check looks at the file's own mode bits only. A key file in a
/// directory others may write (they can replace it by one of their own, mode 0600), a symlink
/// to such a file, or a 0644 file owned by another user, is taken. Here: `DIR/7/` is 0777 and
/// its `link.key` 0600: accepted.
#[cfg(unix)]
#[test]
fn a_key_file_in_a_world_writable_directory_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("review3-keys-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("7")).unwrap();
    let file = dir.join("7").join("link.key");
    ldp_link::keys::write(&file, 7, &ldp_core::wire::LinkKey::new([1; 32])).unwrap();
    std::fs::set_permissions(dir.join("7"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let got = ldp_link::keys::read(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(got.is_err(), "taken from a directory anyone may write: {:?}", got.map(|k| k.len()));
}

/// Finding 2, with no honest help: the hello requests that walk the floor were recorded in an
/// *earlier boot* (a hello request is tagged in session 0: valid in every boot). In the current
/// boot one learner (starting at 0, as `WireClient::new`) asks 12 queries; the attacker replays
/// three old-boot hello requests, then the learner's own hello request and queries.
#[test]

fn hello_requests_of_an_earlier_boot_do_not_reopen_this_boots_queries() {
    let eps = Epsilon::new(1.0).unwrap();
    // Boot 1: three runs greet the device, at random starting points; the attacker records.
    let dev = boot(MemoryStore::provisioned([10; 32]));
    let auth = dev.auth();
    let mut link = Recorder { inner: dev, inbound: VecDeque::new(), sent: vec![] };
    for (i, start) in [0x6000_0000u32, 0xC000_0000, 0xFFFF_FF00].into_iter().enumerate() {
        let mut c = WireClient::with_nonce_seed(link, auth, 200 + i as u64).starting_after(start);
        c.timeout = Duration::from_millis(1);
        c.hello().unwrap();
        link = c.into_link();
    }
    let old_hellos: Vec<Vec<u8>> = link.sent.iter().map(|f| f.2.clone()).collect();
    // Boot 2 (the same store, reopened): a learner's conversation.
    let store = *link.inner.app().reporter().accountant().store();
    let dev2 = boot(store);
    let mut a = WireClient::with_nonce_seed(
        Recorder { inner: dev2, inbound: VecDeque::new(), sent: vec![] },
        auth,
        300,
    );
    a.timeout = Duration::from_millis(1);
    for t in 0..12 {
        a.query(t, t % 100, eps, None).unwrap().unwrap();
    }
    let link = a.into_link();
    let conversation: Vec<Vec<u8>> = link.sent.iter().map(|f| f.2.clone()).collect();
    let mut device = link.inner;
    let before = device.app().reporter().accountant().remaining();
    for frame in old_hellos.iter().chain(&conversation) {
        device.send(frame).unwrap();
        while device.recv_byte(Duration::ZERO).unwrap().is_some() {}
    }
    let spent = before - device.app().reporter().accountant().remaining();
    println!("boot-1 hello requests + boot-2 conversation replayed; the device spent {spent} more");
    assert_eq!(spent, 0.0, "recorded queries were answered afresh and charged: {spent}");
}
