//! Review 7 (branch review7): review 6's fixes attacked — `WireClient::request_once` stopping
//! with `SpentUnanswered` once a hello in the same boot shows a refused query spent, and boot
//! records opened with `O_NOFOLLOW`, one name, fchmod'ed through the handle.
//!
//! Breaks (each failed on `merge-v5` at 341ab2a; all four are fixed and their tests run: 1 in
//! review7's own commit, 2–4 by the lead after it):
//!
//! 1. `a_failed_new_hello_does_not_leave_the_learner_blind_to_what_its_queries_cost` (medium):
//!    the new hello inside the retry loop returns with `?`, skipping the closing hello, the
//!    spend check and `greeted = None`. A man in the middle draws a refusal 12 with a changed
//!    copy of the query, makes the new hello fail (a changed copy of the hello request: refusal
//!    12 again, or simply dropping it), and delivers the held query: the learner stays in the
//!    old conversation, which the device keeps open (no hello request of the learner's reached
//!    it), and sends every later query there. One release per query, no report, no
//!    authenticated frame showing it: the learner's budget (and a fleet's ledger) never moves
//!    and the error is `KeyRefused`, "the device's hellos showed nothing spent".
//! 2. `power_cycles_do_not_let_changed_copies_make_a_request_pay_more_than_twice` (low): the
//!    check compares budgets in the same boot only; an attacker who power-cycles the board
//!    before passing each new hello request escapes it: 8 releases per learner request
//!    (4 per `request_once`, and `request` runs it twice after a restart), against review 6's
//!    "at most two releases per request" under power cycling.
//! 3. `a_copy_injected_behind_a_query_whose_report_was_lost_does_not_cost_the_report` (low,
//!    availability): someone who can only inject (an MQTT publisher) copies each query with a
//!    byte changed; on a link that loses one report, the copy's refusal 12 stops the learner's
//!    resends of the identical frame (which the device's reply cache would have answered), the
//!    next hello shows the spend, and the learner stops with `SpentUnanswered` (a fleet benches
//!    the member): the report is lost, its ε spent.
//! 4. `a_planted_boot_record_of_another_user_is_refused_also_for_root` (low): the fix relies on
//!    fchmod failing to tell another user's file; for root it succeeds, so in a sticky
//!    directory (with `fs.protected_regular = 0`, as on this machine) a file another user
//!    planted at the record's name is taken, and its owner can rewrite it at will.
//!
//! Held (not ignored): the other orders of delivering the held query (after the new hello
//! request reached the device, or never) spend nothing; injecting changed copies on a lossless
//! link costs no report and draws no `SpentUnanswered`; a planted FIFO or dangling link is
//! refused without blocking or creating anything.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use ldp_core::{Epsilon, MemoryStore};
use ldp_link::client::{LinkError, WireClient};
use ldp_link::transport::Link;

mod common;
use common::{Dev, boot, device_answer, mutated, raw_frame};

const TOTAL: f64 = 1000.0;
const QUERY: u8 = 0x02;
const HELLO_REQUEST: u8 = 0x01;
const REPORT: u8 = 0x82;

fn spent(dev: &Dev) -> f64 {
    dev.app().reporter().accountant().spent()
}

fn is_report(bytes: &[u8]) -> bool {
    raw_frame(bytes).is_some_and(|raw| raw[1] == REPORT)
}

fn client<L: Link>(link: L, auth: ldp_core::wire::Auth, seed: u64) -> WireClient<L> {
    let mut c = WireClient::with_nonce_seed(link, auth, seed);
    c.timeout = Duration::from_millis(1);
    c
}

fn eps() -> Epsilon {
    Epsilon::new(1.0).unwrap()
}

/// The man in the middle of break 1: a changed copy of each new query draws the refusal 12
/// the learner gets, the genuine query is held; the learner's new hello request is answered
/// by the refusal of a changed copy of it (never reaching the device, whose conversation stays
/// open), after the held query was delivered and its report swallowed.
struct Blinder {
    inner: Dev,
    inbound: VecDeque<u8>,
    held: Option<Vec<u8>>,
    swallowed: u32,
}

impl Link for Blinder {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        match raw_frame(bytes) {
            Some(raw) if raw[1] == QUERY && self.held.as_deref() != Some(bytes) => {
                let refusal = device_answer(&mut self.inner, &mutated(&raw, 10, raw[10] ^ 1))?;
                self.inbound.extend(refusal);
                self.held = Some(bytes.to_vec());
            }
            Some(_) if self.held.as_deref() == Some(bytes) => {}
            Some(raw) if raw[1] == HELLO_REQUEST && self.held.is_some() => {
                if let Some(genuine) = self.held.take() {
                    let report = device_answer(&mut self.inner, &genuine)?;
                    self.swallowed += u32::from(is_report(&report));
                }
                // A changed copy of the hello request: refusal 12, answering its tag.
                let refusal = device_answer(&mut self.inner, &mutated(&raw, 6, raw[6] ^ 1))?;
                self.inbound.extend(refusal);
            }
            _ => {
                let reply = device_answer(&mut self.inner, bytes)?;
                self.inbound.extend(reply);
            }
        }
        Ok(())
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// **Break 1 (medium: unbounded releases the learner never sees; the spend check bypassed;
/// a ledger that under-reports).**
///
/// Attack (on the link, no key): for each query, send the device a copy with one payload byte
/// changed (CRC fixed) and pass its refusal 12 on (the learner: `KeyRefused`, greet again);
/// hold the genuine query. When the learner's new hello request comes, deliver the held query
/// (the device's conversation is open: answered, charged; swallow the report), then send the
/// device a changed copy of the hello request and pass *its* refusal 12 on (dropping the hello
/// request for its tries works too, slower). The learner's `hello()?` in `request_once` returns
/// `KeyRefused` at once: no closing hello, no spend check, and `greeted` stays set, so the next
/// query goes out in the old conversation — still open, since no hello request of the
/// learner's reached the device — and the same is done again.
///
/// Outcome on merge-v5: 6 queries, 6 ε spent, 6 releases swallowed; the learner shows the full
/// 1000 ε left (a fleet member's ledger row: nothing spent; `Fleet` benches it with backoff and
/// asks again, one ε each time), every error `KeyRefused` saying the hellos "showed nothing
/// spent". Withholding replies alone costs the same ε, but then the learner's next hello
/// shows it. ε-LDP holds (the device charges each release); the learner's accounting and the
/// fix's detection do not.
///
/// Fixed (review 7's second commit): a failed new hello fails the request like any other
/// error (`reply = Err(e); break` instead of `?`), so `greeted = None`, the closing hello is
/// tried and checked, and the next request greets first (a hello request that reaches the
/// device freezes the old conversation; one that never does lets no query out). Each query
/// still costs its one release (as a withheld reply does), now shown and named.
#[test]
fn a_failed_new_hello_does_not_leave_the_learner_blind_to_what_its_queries_cost() {
    let dev = boot(MemoryStore::provisioned([5; 32]));
    let auth = dev.auth();
    let mut c = client(Blinder { inner: dev, inbound: VecDeque::new(), held: None, swallowed: 0 }, auth, 6);
    let mut errors = Vec::new();
    for t in 0..6 {
        match c.query(t, 1, eps(), None) {
            Ok(r) => errors.push(format!("{r:?}")),
            Err(e) => errors.push(e.to_string()),
        }
    }
    let spent = spent(&c.link().inner);
    let swallowed = c.link().swallowed;
    let shown_spent = TOTAL - c.budget_shown();
    // What the learner can account for must cover what the device spent, up to the one
    // release of the last query (a withheld reply costs that much before the learner knows).
    assert!(
        shown_spent >= spent - 1.0,
        "the device spent {spent} ε ({swallowed} releases swallowed), the learner shows {shown_spent} ε spent; it said: {:?}",
        errors.last()
    );
    for e in &errors {
        assert!(e.contains("ε spent that no report reached"), "{e}");
    }
}

/// Break 2's attacker: as review 6's, and it power-cycles the board right after delivering a
/// held query, so that the learner's next hello is of a new boot.
struct CyclingAmplifier {
    inner: Dev,
    inbound: VecDeque<u8>,
    held: Option<Vec<u8>>,
    swallowed: u32,
}

impl Link for CyclingAmplifier {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        match raw_frame(bytes) {
            Some(raw) if raw[1] == QUERY => {
                if self.held.as_deref() != Some(bytes) {
                    let refusal = device_answer(&mut self.inner, &mutated(&raw, 10, raw[10] ^ 1))?;
                    self.inbound.extend(refusal);
                    self.held = Some(bytes.to_vec());
                }
            }
            Some(raw) if raw[1] == HELLO_REQUEST => {
                if let Some(genuine) = self.held.take() {
                    let report = device_answer(&mut self.inner, &genuine)?;
                    self.swallowed += u32::from(is_report(&report));
                    let store = *self.inner.app().reporter().accountant().store();
                    self.inner = boot(store);
                }
                let hello = device_answer(&mut self.inner, bytes)?;
                self.inbound.extend(hello);
            }
            _ => {
                let reply = device_answer(&mut self.inner, bytes)?;
                self.inbound.extend(reply);
            }
        }
        Ok(())
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// **Break 2 (low: needs power over the board; each power cycle already burns up to one
/// reservation chunk, 16 ε here, far more than the releases).**
///
/// Attack: review 6's amplifier (changed copy → refusal 12; deliver the held query before the
/// learner's new hello request, swallow the report), plus a power cycle of the board right
/// after each delivered query. `spent_since` compares budgets only within one boot (a new boot
/// shows less left anyway: the earlier boot's unused chunk counts as spent), so every new hello
/// passes, and `request` runs `request_once` once more after the closing hello showed a new
/// boot.
///
/// Outcome on merge-v5: one learner request, 8 releases of the same reading, each charged, no
/// report; the error is `KeyRefused`, "the device's hellos showed nothing spent", while they
/// showed 8 boots and 8 releases plus 8 chunks gone. Review 6's held test claims at most two
/// releases per request under power cycling.
///
/// Fixed: `request_once` stops resending once a new hello shows another boot (as after a
/// spend): the "resend once after a restart" in `request` is the one resend a restart earns.
#[test]
fn power_cycles_do_not_let_changed_copies_make_a_request_pay_more_than_twice() {
    let dev = boot(MemoryStore::provisioned([6; 32]));
    let auth = dev.auth();
    let link = CyclingAmplifier { inner: dev, inbound: VecDeque::new(), held: None, swallowed: 0 };
    let mut c = client(link, auth, 8);
    let got = c.query(1, 1, eps(), None);
    let releases = c.link().swallowed;
    let message = match &got {
        Err(e) => e.to_string(),
        Ok(r) => format!("{r:?}"),
    };
    assert!(got.is_err(), "{message}");
    assert!(releases <= 2, "one learner request, {releases} releases swallowed; the learner said: {message}");
}

/// How review 6's man in the middle may order things; all but `BeforeHello` spend nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Order {
    /// Deliver the held query before the learner's new hello request (review 6).
    BeforeHello,
    /// Deliver it after the new hello request reached the device, before passing its hello.
    AfterHelloRequest,
    /// Never deliver it.
    Never,
}

struct Amplifier {
    inner: Dev,
    inbound: VecDeque<u8>,
    held: Option<Vec<u8>>,
    order: Order,
    releases: u32,
}

impl Link for Amplifier {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        match raw_frame(bytes) {
            Some(raw) if raw[1] == QUERY => {
                if self.held.as_deref() != Some(bytes) {
                    let refusal = device_answer(&mut self.inner, &mutated(&raw, 10, raw[10] ^ 1))?;
                    self.inbound.extend(refusal);
                    self.held = Some(bytes.to_vec());
                }
            }
            Some(raw) if raw[1] == HELLO_REQUEST => {
                let genuine = self.held.take();
                if let (Some(q), Order::BeforeHello) = (&genuine, self.order) {
                    self.releases += u32::from(is_report(&device_answer(&mut self.inner, q)?));
                }
                let hello = device_answer(&mut self.inner, bytes)?;
                if let (Some(q), Order::AfterHelloRequest) = (&genuine, self.order) {
                    self.releases += u32::from(is_report(&device_answer(&mut self.inner, q)?));
                }
                self.inbound.extend(hello);
            }
            _ => {
                let reply = device_answer(&mut self.inner, bytes)?;
                self.inbound.extend(reply);
            }
        }
        Ok(())
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// Held: whatever the order, a learner request costs at most the one release of review 6's
/// order, which the learner then shows spent and names (`SpentUnanswered`); delivering the held
/// query once the new hello request reached the device, or never, spends nothing, and the
/// learner's `KeyRefused` ("showed nothing spent") is then true.
#[test]
fn no_order_of_delivering_the_held_query_costs_more_than_one_release() {
    for order in [Order::BeforeHello, Order::AfterHelloRequest, Order::Never] {
        let dev = boot(MemoryStore::provisioned([7; 32]));
        let auth = dev.auth();
        let link = Amplifier { inner: dev, inbound: VecDeque::new(), held: None, order, releases: 0 };
        let mut c = client(link, auth, 9);
        for t in 0..3 {
            let got = c.query(t, 1, eps(), None);
            match order {
                Order::BeforeHello => {
                    assert!(
                        matches!(got, Err(LinkError::SpentUnanswered { spent: 1.0, .. })),
                        "{order:?}: {got:?}"
                    )
                }
                _ => assert!(matches!(got, Err(LinkError::KeyRefused)), "{order:?}: {got:?}"),
            }
        }
        let spent = spent(&c.link().inner);
        let expected = if order == Order::BeforeHello { 3.0 } else { 0.0 };
        assert_eq!(spent, expected, "{order:?}: {} releases", c.link().releases);
        assert_eq!(TOTAL - c.budget_shown(), spent, "{order:?}: the learner shows every spend");
    }
}

/// Someone who can only add frames (an MQTT publisher): after each frame the learner sends, a
/// copy of it with a byte changed reaches the device too. `lose_first_report` drops the
/// device's first report (a lossy link, not the injector).
struct Injector {
    inner: Dev,
    inbound: VecDeque<u8>,
    inject: bool,
    lose_first_report: bool,
}

impl Link for Injector {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let reply = device_answer(&mut self.inner, bytes)?;
        if self.lose_first_report && is_report(&reply) {
            self.lose_first_report = false;
        } else {
            self.inbound.extend(reply);
        }
        if let Some(raw) = raw_frame(bytes).filter(|raw| self.inject && raw[1] == QUERY) {
            let refusal = device_answer(&mut self.inner, &mutated(&raw, 10, raw[10] ^ 1))?;
            self.inbound.extend(refusal);
        }
        Ok(())
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// Held: on a link that loses nothing, changed copies injected behind every query cost no
/// report and draw no `SpentUnanswered` (the device answers the genuine query first, and the
/// learner takes that answer), so a publisher who cannot drop frames cannot bench a member
/// this way.
#[test]
fn injected_changed_copies_on_a_lossless_link_cost_nothing() {
    let dev = boot(MemoryStore::provisioned([8; 32]));
    let auth = dev.auth();
    let link = Injector { inner: dev, inbound: VecDeque::new(), inject: true, lose_first_report: false };
    let mut c = client(link, auth, 10);
    for t in 0..8 {
        let got = c.query(t, 1, eps(), None);
        assert!(matches!(got, Ok(Ok(_))), "query {t}: {got:?}");
    }
    assert_eq!(spent(&c.link().inner), 8.0);
    assert_eq!(c.conversations_lost, 0);
}

/// **Break 3 (low, availability: an injector turns one lost report into a lost report, its ε
/// spent, and a benched member).**
///
/// Attack: inject, behind each query of the learner, a copy with a byte changed (no key, no
/// dropping). When the link loses the device's report (as a lossy link or a broker hiccup
/// does), the copy's refusal 12 arrives in the same try; `exchange` stops resending on it
/// ("resending the same frame cannot help"), the new hello shows the query spent, and the
/// learner stops with `SpentUnanswered` (a fleet benches the member). Without the injected
/// copy, the learner's resend of the identical frame is answered from the device's reply
/// cache and the report is taken (checked first below).
///
/// Outcome on merge-v5: `SpentUnanswered { spent: 1 }`, the report lost. Before review 6's fix
/// the same cost two releases and got a report, so this is no regression in ε, but the
/// refusal 12 of a changed copy is a reason to resend the identical frame once more (the cache
/// answers a spent query; a query never spent gets 12 again), not to stop. Fixed: `exchange`
/// sends the identical frame once more after a refusal 12.
#[test]
fn a_copy_injected_behind_a_query_whose_report_was_lost_does_not_cost_the_report() {
    for inject in [false, true] {
        let dev = boot(MemoryStore::provisioned([9; 32]));
        let auth = dev.auth();
        let link = Injector { inner: dev, inbound: VecDeque::new(), inject, lose_first_report: true };
        let mut c = client(link, auth, 11);
        let got = c.query(1, 1, eps(), None);
        assert!(matches!(got, Ok(Ok(_))), "injected copies: {inject}: {got:?}");
        assert_eq!(spent(&c.link().inner), 1.0, "injected copies: {inject}");
    }
}

#[cfg(unix)]
fn sticky_dir(name: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("review7-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    dir
}

/// **Break 4 (low: root only, and only with `fs.protected_regular = 0`; the planter can then
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
    let key = ldp_core::wire::LinkKey::new([3; 32]);
    let key_file = dir.join("keys.txt");
    ldp_link::keys::write(&key_file, 7, &key).unwrap();
    let record = ldp_link::keys::boot_record(&key_file, 7);
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
    let key = ldp_core::wire::LinkKey::new([3; 32]);
    let key_file = dir.join("keys.txt");
    ldp_link::keys::write(&key_file, 7, &key).unwrap();
    let record = ldp_link::keys::boot_record(&key_file, 7);
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
    let key = ldp_core::wire::LinkKey::new([3; 32]);
    let key_file = dir.join("keys.txt");
    ldp_link::keys::write(&key_file, 7, &key).unwrap();
    let record = ldp_link::keys::boot_record(&key_file, 7);
    let target = dir.join("created-by-the-learner");
    std::os::unix::fs::symlink(&target, &record).unwrap();
    let got = ldp_link::keys::update_boot_record(&record, 7, &key, Some(3));
    let created = target.exists();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!created, "the learner created the link's target ({got:?})");
    let message = got.expect_err("a dangling link is refused").to_string();
    assert!(message.contains("is a symbolic link, not a boot record"), "{message}");
}
