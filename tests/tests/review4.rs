//! Review 4 of wire format 4 and its second-round fixes (`0cdb41f`, branch v4fix), as an
//! attacker on the link who lacks the device key but may power-cycle the board.
//!
//! Held (tests that pass): a fleet benches a member whose frames fail authentication
//! (`BadTags`) or whose query was spent with its report withheld (`SpentUnanswered`, review 6),
//! instead of ending the run — the v4fix claim its author left untested — and asks it again
//! after the backoff; since wire format 5 a replayed hello request no longer takes a member's
//! conversation at all.
//!
//! Breaks (ignored, `BREAK: …`): see each test.

use std::cell::Cell;
use std::collections::VecDeque;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use ldp_core::device::{DeviceApp, SensorModel, SimulatedSensor};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use ldp_link::device::{Device, DeviceError, WireDevice};
use ldp_link::fleet::{Fleet, Member, Routing};
use ldp_link::transport::{Link, LinkError, LoopbackLink, WireClient};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

mod common;
use common::{mutated, raw_frame};

type Dev = LoopbackLink<MemoryStore, SimulatedSensor<ChaCha20Rng>>;

const TOTAL: f64 = 1000.0;

fn eps() -> Epsilon {
    Epsilon::new(1.0).unwrap()
}

/// Boots device `id` on `store` (a reboot: the same store, the boot counter moves on).
fn boot(id: u64, store: MemoryStore) -> Dev {
    let policy = BudgetPolicy::new(eps(), Epsilon::new(TOTAL).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
    let reporter = Reporter::open(config, store, [id as u8; 32]).unwrap();
    let world = ChaCha20Rng::seed_from_u64(id);
    let source = SimulatedSensor::new(SensorModel::new(100, Bound::new(1.0).unwrap()).unwrap(), world);
    LoopbackLink::new(DeviceApp::new(reporter, source, id))
}

/// The ε device `dev` has charged (everything reserved before this boot counts).
fn charged(dev: &Dev) -> f64 {
    dev.app().reporter().accountant().spent()
}

/// What the attacker does to each query (type 0x02) while armed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Attack {
    /// Before the query, replays the first hello request it saw (any recorded one verifies in
    /// every boot): in wire format 4 the device moved to that old nonce and refused the query
    /// (12); in format 5 it is a retry of the first conversation's offer and changes nothing.
    ReplayHello,
    /// Sends the device a copy of the query with one payload byte changed (its refusal 12
    /// answers the query's tag) and holds the query itself; before the learner's next hello
    /// request it delivers the query and swallows the report (review 6's amplifier).
    ChangedCopy,
    /// Sends the query with one tag byte changed: the device refuses it (12), answering the
    /// changed tag, so the learner can verify nothing it gets for that number.
    FlipTag,
    /// Delivers the query and swallows the device's report (the hello the learner sends next
    /// goes through).
    DropReport,
}

/// A man in the middle over an in-process device.
struct Mitm {
    inner: Dev,
    inbound: VecDeque<u8>,
    attack: Attack,
    armed: Rc<Cell<bool>>,
    first_hello: Option<Vec<u8>>,
    held: Option<Vec<u8>>,
}

impl Mitm {
    fn new(inner: Dev, attack: Attack) -> (Self, Rc<Cell<bool>>) {
        let armed = Rc::new(Cell::new(false));
        let link = Self {
            inner,
            inbound: VecDeque::new(),
            attack,
            armed: Rc::clone(&armed),
            first_hello: None,
            held: None,
        };
        (link, armed)
    }

    /// The device's output for `bytes`, frame by frame (each COBS-encoded and delimited).
    fn device(&mut self, bytes: &[u8]) -> io::Result<Vec<Vec<u8>>> {
        self.inner.send(bytes)?;
        let mut out = Vec::new();
        while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
            out.push(b);
        }
        Ok(out.split_inclusive(|&b| b == 0).map(<[u8]>::to_vec).collect())
    }
}

impl Link for Mitm {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let raw = raw_frame(bytes);
        let ty = raw.as_ref().map(|r| r[1]);
        if ty == Some(0x01) && self.first_hello.is_none() {
            self.first_hello = Some(bytes.to_vec());
        }
        if ty == Some(0x01)
            && let Some(query) = self.held.take()
        {
            self.device(&query)?; // the report is swallowed
        }
        let attacked = ty == Some(0x02) && self.armed.get();
        let replies = match (attacked, self.attack, raw) {
            (true, Attack::ChangedCopy, Some(raw)) => {
                self.held = Some(bytes.to_vec());
                self.device(&mutated(&raw, 10, 0x01))? // the action's first byte
            }
            (true, Attack::ReplayHello, _) => {
                let old = self.first_hello.clone().unwrap_or_default();
                self.device(&old)?;
                self.device(bytes)?
            }
            (true, Attack::FlipTag, Some(raw)) => {
                let at = raw.len() - 4 - 16; // the tag's first byte
                self.device(&mutated(&raw, at, 0x01))?
            }
            (true, Attack::DropReport, _) => {
                let replies = self.device(bytes)?;
                replies.into_iter().filter(|f| raw_frame(f).is_none_or(|r| r[1] != 0x82)).collect()
            }
            _ => self.device(bytes)?,
        };
        self.inbound.extend(replies.concat());
        Ok(())
    }

    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// A fleet member over `link`, greeted.
fn member(link: Mitm, nonce_seed: u64) -> Member<Mitm> {
    let auth = link.inner.auth();
    let mut client = WireClient::with_nonce_seed(link, auth, nonce_seed);
    client.timeout = Duration::from_millis(1);
    Member::new(client).unwrap()
}

/// A fleet of two: member 1 behind `attack`, member 2 untouched. Returns the fleet and the
/// switch of member 1's attacker.
fn two_members(attack: Attack) -> (Fleet<Mitm>, Rc<Cell<bool>>) {
    let (link, armed) = Mitm::new(boot(1, MemoryStore::provisioned([1; 32])), attack);
    let (clean, _) = Mitm::new(boot(2, MemoryStore::provisioned([2; 32])), attack);
    let fleet = Fleet::new(vec![member(link, 11), member(clean, 12)], eps(), Routing::RoundRobin, 0);
    (fleet, armed)
}

fn device_of(fleet: &Fleet<Mitm>, i: usize) -> &Dev {
    &fleet.members()[i].client().link().inner
}

/// Runs `attack` on member 1's query of round 3 and returns the fleet, round 3's outcome and
/// what member 1's device spent on that round.
fn attacked_round(attack: Attack) -> (Fleet<Mitm>, Result<f64, DeviceError>, f64) {
    let (mut fleet, armed) = two_members(attack);
    fleet.query(0, None).unwrap(); // round 1: member 1
    fleet.query(0, None).unwrap(); // round 2: member 2
    // A second conversation of member 1 (as after a stale refusal), so that its first hello
    // request, replayed, takes the device to another nonce.
    fleet.members_mut()[0].client_mut().hello().unwrap();
    let before = charged(device_of(&fleet, 0));
    armed.set(true);
    let got = fleet.query(0, None); // round 3: member 1, attacked
    armed.set(false);
    let spent = charged(device_of(&fleet, 0)) - before;
    (fleet, got, spent)
}

/// Held since wire format 5: a replayed hello request of the member's first conversation is a
/// retry of an old offer and takes nothing (in format 4 it took the conversation, the member
/// got `KeyRefused` and was benched): the member answers round 3 itself, charged once, for the
/// report it took.
#[test]
fn a_replayed_hello_request_costs_a_fleet_member_nothing() {
    let (fleet, got, spent) = attacked_round(Attack::ReplayHello);
    assert!(got.is_ok(), "one member's replayed hello request ended the run: {got:?}");
    assert_eq!(spent, 1.0, "member 1's own report, charged once");
    let ledger = fleet.ledger();
    assert_eq!((ledger[0].reports, ledger[0].skipped), (2, 0), "{ledger:?}");
    assert_eq!(fleet.members()[0].client().conversations_lost, 0);
}

/// Held (review 6's fix, in a fleet): the member whose query is drawn into a refusal by a
/// changed copy and then spent with its report withheld gets `SpentUnanswered` after one new
/// hello; the fleet benches it, another member answers the round, the device spent the one
/// release the attacker withheld (not one per resend), the ledger shows it, and the member is
/// asked again (and answers) after its backoff.
#[test]
fn a_fleet_benches_a_member_whose_query_was_spent_unanswered() {
    let (mut fleet, got, spent) = attacked_round(Attack::ChangedCopy);
    assert!(got.is_ok(), "one member's withheld report ended the run: {got:?}");
    assert_eq!(spent, 1.0, "the withheld query, charged once and not resent");
    let ledger = fleet.ledger();
    assert_eq!((ledger[0].reports, ledger[0].skipped), (1, 1), "{ledger:?}");
    assert_eq!(ledger[0].spent, 2.0, "the ledger counts the withheld release: {ledger:?}");
    assert_eq!(ledger[1].reports, 2, "member 2 answered round 3: {ledger:?}");
    assert!(ledger[0].dropped.unauthenticated_refusals > 0, "{:?}", ledger[0].dropped);
    // Benched for one pass (rounds 4), asked again in rounds 5 and 7.
    for _ in 0..4 {
        fleet.query(0, None).unwrap();
    }
    let ledger = fleet.ledger();
    assert_eq!((ledger[0].reports, ledger[0].skipped), (3, 1), "member 1 is asked again: {ledger:?}");
}

/// Held (v4fix's untested claim): the member whose query the attacker alters (one tag byte)
/// gets `BadTags`; the fleet benches it, another member answers, nothing is spent.
#[test]
fn a_fleet_benches_a_member_whose_frames_fail_authentication() {
    let (mut fleet, got, spent) = attacked_round(Attack::FlipTag);
    assert!(got.is_ok(), "one member's unverifiable frames ended the run: {got:?}");
    assert_eq!(spent, 0.0, "the refused query was charged");
    let ledger = fleet.ledger();
    assert_eq!((ledger[0].reports, ledger[0].skipped), (1, 1), "{ledger:?}");
    assert_eq!(ledger[1].reports, 2, "{ledger:?}");
    // Benched for one pass (rounds 4), asked again in rounds 5 and 7.
    for _ in 0..4 {
        fleet.query(0, None).unwrap();
    }
    let ledger = fleet.ledger();
    assert_eq!((ledger[0].reports, ledger[0].skipped), (3, 1), "member 1 is asked again: {ledger:?}");
}

/// The fleet's ledger (run.json's `spent_by_device`, `fleet/*.csv`) is documented as "as the
/// device itself counts it: its lifetime budget minus what it says is left". The attacker
/// delivers member 1's query and swallows its report; the learner gives the query up and its
/// closing hello — authenticated, let through — says the device has 1 ε less left. The fleet
/// takes a member's remaining budget from reports and `BudgetExhausted` refusals only
/// (`fleet.rs`, `Fleet::query`; `Member::new` takes the first hello's), so the ledger still says
/// 0 ε spent while the device charged 1 and the learner's own client knows it
/// (`WireClient::budget_shown`). Every swallowed report of a member that answers no later
/// query is missing from the ledger.
#[test]
fn a_fleet_ledger_counts_the_budget_a_closing_hello_showed_spent() {
    let (fleet, got, spent) = attacked_round(Attack::DropReport);
    assert!(got.is_ok(), "{got:?}");
    assert_eq!(spent, 1.0, "the device answered and charged the swallowed query");
    let device_spent = charged(device_of(&fleet, 0));
    let shown = TOTAL - fleet.members()[0].client().budget_shown();
    let ledger = fleet.ledger();
    println!(
        "member 1: device charged {device_spent}, its authenticated hello showed {shown} spent, ledger says {} ({} reports)",
        ledger[0].spent, ledger[0].reports
    );
    assert_eq!(shown, device_spent, "the closing hello showed the spend");
    assert_eq!(ledger[0].spent, device_spent, "the ledger under-counts what the device showed it spent");
}

/// The threat model lets the adversary cut the device's power at any moment; a reset is to
/// cost at most one reservation chunk. A single wire device (`run --device serial|tcp`,
/// `live`) that restarts between a query and its reply ends the run, and says the key is
/// wrong: its retries reach the new boot, whose refusals (12) are tagged in the new session,
/// so the learner counts them as bad tags of the awaited number (`LinkError::BadTags`: "wrong
/// key …"), though its closing hello has just verified under that key in the new session.
/// `WireClient::retry_last` ("what a learner does when … the device restarted mid-query") is
/// called by no product code (only `tests/tests/qemu_device.rs`). For `run`, the job then
/// fails and is computed again from round 1 on resume: every ε it had spent buys nothing.
#[test]
fn a_device_reset_mid_query_does_not_end_a_single_device_run() {
    /// Delivers the armed query, then cuts the power before the reply leaves: later bytes
    /// reach the next boot of the same device.
    struct Resetting {
        dev: Dev,
        inbound: VecDeque<u8>,
        armed: Rc<Cell<bool>>,
    }
    impl Link for Resetting {
        fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
            let query = raw_frame(bytes).is_some_and(|r| r[1] == 0x02);
            self.dev.send(bytes)?;
            let mut out = Vec::new();
            while let Some(b) = self.dev.recv_byte(Duration::ZERO)? {
                out.push(b);
            }
            if query && self.armed.replace(false) {
                let store = *self.dev.app().reporter().accountant().store();
                self.dev = boot(1, store); // the reply is lost with the power
            } else {
                self.inbound.extend(out);
            }
            Ok(())
        }
        fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
            Ok(self.inbound.pop_front())
        }
    }
    let dev = boot(1, MemoryStore::provisioned([1; 32]));
    let auth = dev.auth();
    let armed = Rc::new(Cell::new(false));
    let link = Resetting { dev, inbound: VecDeque::new(), armed: Rc::clone(&armed) };
    let mut client = WireClient::with_nonce_seed(link, auth, 3);
    client.timeout = Duration::from_millis(1);
    let mut device = WireDevice::new(client, eps());
    device.query(1, None).unwrap();
    armed.set(true);
    let got = device.query(2, None);
    let message = got.as_ref().err().map(ToString::to_string).unwrap_or_default();
    println!("after a reset mid-query: {got:?}\n  {message}");
    assert!(
        !matches!(got, Err(DeviceError::Link(LinkError::BadTags { .. }))),
        "a reset is reported as a wrong key and ends the run: {message}"
    );
    assert!(got.is_ok(), "a reset mid-query ended the run: {message}");
}
