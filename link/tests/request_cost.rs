//! One learner request costs at most one release it does not take per boot, and at most two in
//! all, whatever a man in the middle without the key does across power cycles — and the budget
//! the learner shows covers every release.
//!
//! Covers: power cycles after every release or after each delivery of a held query; a spend a
//! hello showed, then a restart; a stale refusal cut short by a restart; a seeded random man in
//! the middle who holds, drops, delays, replays and changes frames (hello requests included) and
//! power-cycles the board at any point; a withheld query delivered after the learner moved on;
//! a device reset between a query and its reply.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::rc::Rc;
use std::time::Duration;

use ldp_core::MemoryStore;
use ldp_core::wire::StreamReader;
use ldp_link::client::{LinkError, WireClient};
use ldp_link::device::{Device, DeviceError, WireDevice};
use ldp_link::transport::Link;
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

use crate::common::{
    Amplifier, Dev, HELLO_REQUEST, Order, QUERY, Tap, Tapped, boot, boot_as, changed, client, device_answer,
    eps, power_cycle, raw_frame, spent,
};

/// The attacker power-cycles the board right after every report it makes, swallowing the
/// report, and passes everything else.
struct PowerCycler {
    inner: Dev,
    releases: u32,
}

impl Tap for PowerCycler {
    fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
        let reply = device_answer(&mut self.inner, bytes)?;
        if raw_frame(&reply).is_some_and(|raw| raw[1] == 0x82) {
            self.releases += 1;
            let store = *self.inner.app().reporter().accountant().store();
            self.inner = boot(store);
        } else {
            learner.extend(reply);
        }
        Ok(())
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
    let mut c = WireClient::with_nonce_seed(Tapped::new(PowerCycler { inner: dev, releases: 0 }), auth, 8);
    c.timeout = Duration::from_millis(1);
    let eps = eps();
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

/// **Review 7, break 2 (low: needs power over the board; each power cycle already burns up to one
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
    let link = Amplifier::new(dev, Order::BeforeHello, true);
    let mut c = client(link, auth, 8);
    let got = c.query(1, 1, eps(), None);
    let releases = c.link().releases;
    let message = match &got {
        Err(e) => e.to_string(),
        Ok(r) => format!("{r:?}"),
    };
    assert!(got.is_err(), "{message}");
    assert!(releases <= 2, "one learner request, {releases} releases swallowed; the learner said: {message}");
}

/// Review 8's break 1, the man in the middle. Boot 1: review 6's amplifier once (changed copy of the query →
/// refusal 12 to the learner, the query held; delivered before the learner's new hello request,
/// its report swallowed), then a power cycle before the closing hello. Boot 2: the changed copy
/// again for every query, the query itself never delivered (review 7's `Order::Never`).
struct SpendThenRestart {
    inner: Dev,
    held: Option<Vec<u8>>,
    /// Hello requests seen.
    hellos: u32,
    swallowed: u32,
}

impl Tap for SpendThenRestart {
    fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
        match raw_frame(bytes) {
            Some(raw) if raw[1] == QUERY => {
                let refusal = device_answer(&mut self.inner, &changed(&raw))?;
                learner.extend(refusal);
                if self.held.is_none() && self.hellos == 1 {
                    self.held = Some(bytes.to_vec());
                }
            }
            Some(raw) if raw[1] == HELLO_REQUEST => {
                self.hellos += 1;
                if let Some(q) = self.held.take() {
                    let before = spent(&self.inner);
                    let _report = device_answer(&mut self.inner, &q)?;
                    self.swallowed += u32::from(spent(&self.inner) > before);
                }
                // The third hello request is the closing hello of the first `request_once`.
                if self.hellos == 3 {
                    let store = *self.inner.app().reporter().accountant().store();
                    self.inner = boot(store);
                }
                let hello = device_answer(&mut self.inner, bytes)?;
                learner.extend(hello);
            }
            _ => learner.extend(device_answer(&mut self.inner, bytes)?),
        }
        Ok(())
    }
}

/// **Review 8, break 1 (low: needs power over the board; misreporting, no extra ε beyond the documented
/// two releases).**
///
/// Attack: review 6's amplifier in boot 1 (the query delivered behind the learner's back before
/// its new hello request, the report swallowed): the new hello shows 1 ε spent and
/// `request_once` stops with `SpentUnanswered`. Then power-cycle the board before the closing
/// hello request passes: the closing hello shows boot 2, and `request` — whose resend-after-a-
/// restart condition is any non-I/O error with a higher session — sends the query once more in
/// boot 2, where the man in the middle only draws refusals 12 with changed copies.
///
/// Outcome on merge-v5: 1 release, no report; the learner's error is `KeyRefused`: "… the
/// device's hellos showed nothing spent on the refused queries", though a hello it accepted in
/// boot 1 showed the 1 ε and `request_once` had said so. The query `SpentUnanswered` promises
/// is "not resent, so that it cannot be charged again" is resent (had the man in the middle
/// delivered it in boot 2 as in boot 1, a second release: within the documented two, but the
/// error then names only boot 2's).
///
/// Fix (suggested): `request` resends after a restart only for errors that do not say the
/// query was spent (not after `SpentUnanswered`), or keeps the first `SpentUnanswered` when the
/// resend fails.
#[test]
fn a_spend_a_hello_showed_is_not_reported_as_nothing_spent_after_a_restart() {
    let dev = boot(MemoryStore::provisioned([21; 32]));
    let auth = dev.auth();
    let link = Tapped::new(SpendThenRestart { inner: dev, held: None, hellos: 0, swallowed: 0 });
    let mut c = client(link, auth, 21);
    let got = c.query(1, 1, eps(), None);
    let swallowed = c.link().swallowed;
    assert_eq!(swallowed, 1, "precondition: the device released once behind the learner's back");
    assert!(
        matches!(got, Err(LinkError::SpentUnanswered { .. })),
        "1 release swallowed, shown by a hello the learner took in the same boot; the learner said: {}",
        match &got {
            Err(e) => e.to_string(),
            Ok(r) => format!("{r:?}"),
        }
    );
}

/// A man in the middle that freezes the learner's conversation with a recorded hello request
/// (the learner's first, of a conversation before the open one) before the learner's second
/// query, and power-cycles the board before the learner's new hello request.
struct FreezeThenRestart {
    inner: Dev,
    first_hello: Option<Vec<u8>>,
    queries: u32,
    hellos: u32,
}

impl Tap for FreezeThenRestart {
    fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
        match raw_frame(bytes) {
            Some(raw) if raw[1] == HELLO_REQUEST => {
                self.hellos += 1;
                if self.first_hello.is_none() {
                    self.first_hello = Some(bytes.to_vec());
                }
                if self.hellos == 3 {
                    let store = *self.inner.app().reporter().accountant().store();
                    self.inner = boot(store);
                }
            }
            Some(raw) if raw[1] == QUERY => {
                self.queries += 1;
                if let (2, Some(h)) = (self.queries, self.first_hello.clone()) {
                    device_answer(&mut self.inner, &h)?;
                }
            }
            _ => {}
        }
        let reply = device_answer(&mut self.inner, bytes)?;
        learner.extend(reply);
        Ok(())
    }
}

/// **Review 8, break 2 (very low: availability of one request, nothing spent; needs power over the
/// board).**
///
/// Attack: replay a recorded hello request of the learner's between two of its queries (the
/// device freezes the conversation: the next query is refused as stale, 13), then power-cycle
/// the board before the learner's new hello request passes.
///
/// Outcome on merge-v5: the new hello shows another boot, `request_once` stops resending (fix
/// (a)) with the reply it has, `Ok(Refusal::StaleSequence)`; as that is no error, there is no
/// closing hello and `request` does not send the query once more in the new boot, as the docs
/// say it does after a restart ("the request then goes once more in the new boot"): the caller
/// gets a stale refusal for a query the device, in its current boot, never saw (a fleet
/// benches the member). The query spent nothing.
///
/// Fix (suggested): break with the stale refusal turned into the restart case (e.g. let
/// `request` resend after a higher session whatever `request_once` returned that is not a
/// report or a refusal the device made in the new boot).
#[test]
fn a_stale_refusal_cut_short_by_a_restart_is_sent_again_in_the_new_boot() {
    let dev = boot(MemoryStore::provisioned([22; 32]));
    let auth = dev.auth();
    let link = Tapped::new(FreezeThenRestart { inner: dev, first_hello: None, queries: 0, hellos: 0 });
    let mut c = client(link, auth, 22);
    // Two greetings: the first one's hello request is the recorded one replayed (the learner's
    // current one would be a retry of the open conversation, freezing nothing).
    c.hello().unwrap();
    c.hello().unwrap();
    assert!(matches!(c.query(1, 1, eps(), None), Ok(Ok(_))));
    let got = c.query(2, 1, eps(), None);
    assert_eq!(c.link().hellos, 3, "precondition: one new hello, in the new boot");
    assert!(matches!(got, Ok(Ok(_))), "the query was never sent in the new boot: {got:?}");
}

fn seq_of(raw: &[u8]) -> u32 {
    u32::from_le_bytes([raw[2], raw[3], raw[4], raw[5]])
}

/// What the random man in the middle does before it handles a frame of the learner's.
#[derive(Clone, Copy, Debug)]
enum Before {
    Nothing,
    /// Deliver the frames it holds (oldest first), dropping the device's replies.
    DeliverHeldSwallow,
    /// Deliver the frames it holds and pass the device's replies on (late deliveries).
    DeliverHeldPass,
    /// Deliver one held frame chosen at random, dropping the device's reply.
    DeliverRandomHeld,
    /// Power-cycle the board.
    Cycle,
    /// Replay a recorded hello request of the learner's, chosen at random; pass its hello on
    /// or not.
    ReplayRecordedHello {
        pass: bool,
    },
    /// Power-cycle, then replay a recorded hello request (the new boot's conversation offer is
    /// an old nonce's).
    CycleThenReplay,
}

/// What it does with the frame.
#[derive(Clone, Copy, Debug)]
enum With {
    Pass,
    /// Deliver it, drop the device's reply.
    DropReply,
    /// Hold it, answer nothing.
    Hold,
    /// Hold it; deliver a changed copy and pass its refusal 12 on.
    HoldRefuse,
    /// Deliver it and pass the reply on, then a changed copy's refusal 12.
    PassRefuse,
    /// Deliver it, drop the reply, then a changed copy's refusal 12.
    DropReplyRefuse,
    /// Hold it and pass on a copy of the device's reply to the frame before it (a late reply).
    HoldLateReply,
    /// Replay a recorded hello request first (freezing the conversation), then deliver it and
    /// pass the reply (a stale refusal, for a fresh query).
    FreezeThenPass,
}

/// A fresh release: the request it belongs to (by the query's number), and the boot.
#[derive(Clone, Copy, Debug)]
struct Release {
    request: usize,
    boot: u32,
}

#[derive(Default)]
struct Log {
    /// The learner request running now (set by the test).
    request: usize,
    /// Query number → request that first sent it.
    owner: BTreeMap<u32, usize>,
    releases: Vec<Release>,
    /// Hellos answering the learner's own hello requests, passed on at once: (request, boot,
    /// releases logged by then).
    hellos_passed: Vec<(usize, u32, usize)>,
    cycles: Vec<usize>,
    events: Vec<String>,
}

struct Random {
    inner: Dev,
    boot: u32,
    inbound: VecDeque<u8>,
    held: VecDeque<Vec<u8>>,
    hellos: Vec<Vec<u8>>,
    last_reply: Vec<u8>,
    rng: ChaCha20Rng,
    log: Rc<RefCell<Log>>,
}

impl Random {
    /// Hands `bytes` to the device, noting a fresh release; the device's answer.
    fn deliver(&mut self, bytes: &[u8]) -> io::Result<Vec<u8>> {
        let before = spent(&self.inner);
        let answer = device_answer(&mut self.inner, bytes)?;
        if spent(&self.inner) > before {
            let seq = raw_frame(bytes).map(|raw| seq_of(&raw)).unwrap_or(0);
            let mut log = self.log.borrow_mut();
            let request = log.owner.get(&seq).copied().unwrap_or(usize::MAX);
            log.releases.push(Release { request, boot: self.boot });
        }
        Ok(answer)
    }

    fn replay_hello(&mut self, pass: bool) -> io::Result<()> {
        if self.hellos.is_empty() {
            return Ok(());
        }
        let i = self.rng.next_u32() as usize % self.hellos.len();
        let h = self.hellos[i].clone();
        let answer = self.deliver(&h)?;
        if pass {
            self.inbound.extend(answer);
        }
        Ok(())
    }

    fn cycle(&mut self) {
        power_cycle(&mut self.inner);
        self.boot += 1;
        let mut log = self.log.borrow_mut();
        let request = log.request;
        log.cycles.push(request);
    }

    fn before(n: u32) -> Before {
        match n {
            0..=5 => Before::Nothing,
            6..=8 => Before::Cycle,
            9 => Before::DeliverHeldSwallow,
            10 => Before::DeliverHeldPass,
            11 => Before::DeliverRandomHeld,
            12 => Before::ReplayRecordedHello { pass: false },
            13 => Before::ReplayRecordedHello { pass: true },
            _ => Before::CycleThenReplay,
        }
    }

    fn with(n: u32) -> With {
        match n {
            0..=3 => With::Pass,
            4 => With::DropReply,
            5 => With::Hold,
            6 | 7 => With::HoldRefuse,
            8 => With::PassRefuse,
            9 => With::DropReplyRefuse,
            10 => With::HoldLateReply,
            _ => With::FreezeThenPass,
        }
    }

    fn note_passed_hello(&self, raw: &[u8]) {
        if raw[1] != HELLO_REQUEST {
            return;
        }
        let mut log = self.log.borrow_mut();
        let (request, so_far) = (log.request, log.releases.len());
        log.hellos_passed.push((request, self.boot, so_far));
    }
}

impl Link for Random {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let Some(raw) = raw_frame(bytes) else { return Ok(()) };
        if raw[1] == QUERY {
            let mut log = self.log.borrow_mut();
            let request = log.request;
            log.owner.entry(seq_of(&raw)).or_insert(request);
        }
        if raw[1] == HELLO_REQUEST && !self.hellos.contains(&bytes.to_vec()) {
            self.hellos.push(bytes.to_vec());
        }
        let mut befores = Vec::new();
        for _ in 0..self.rng.next_u32() % 3 {
            befores.push(Self::before(self.rng.next_u32() % 16));
        }
        let with = Self::with(self.rng.next_u32() % 12);
        self.log.borrow_mut().events.push(format!(
            "boot {} type {:#x} seq {}: {befores:?}, {with:?}",
            self.boot,
            raw[1],
            seq_of(&raw)
        ));
        for before in befores {
            match before {
                Before::Nothing => {}
                Before::DeliverHeldSwallow | Before::DeliverHeldPass => {
                    while let Some(frame) = self.held.pop_front() {
                        let answer = self.deliver(&frame)?;
                        if let Before::DeliverHeldPass = before {
                            self.inbound.extend(answer);
                        }
                    }
                }
                Before::DeliverRandomHeld => {
                    if !self.held.is_empty() {
                        let i = self.rng.next_u32() as usize % self.held.len();
                        if let Some(frame) = self.held.remove(i) {
                            self.deliver(&frame)?;
                        }
                    }
                }
                Before::Cycle => self.cycle(),
                Before::ReplayRecordedHello { pass } => self.replay_hello(pass)?,
                Before::CycleThenReplay => {
                    self.cycle();
                    self.replay_hello(false)?;
                }
            }
        }
        match with {
            With::Pass => {
                let answer = self.deliver(bytes)?;
                self.last_reply = answer.clone();
                self.inbound.extend(answer);
                self.note_passed_hello(&raw);
            }
            With::DropReply => {
                self.last_reply = self.deliver(bytes)?;
            }
            With::Hold => self.held.push_back(bytes.to_vec()),
            With::HoldRefuse => {
                self.held.push_back(bytes.to_vec());
                let refusal = self.deliver(&changed(&raw))?;
                self.inbound.extend(refusal);
            }
            With::PassRefuse | With::DropReplyRefuse => {
                let answer = self.deliver(bytes)?;
                self.last_reply = answer.clone();
                if let With::PassRefuse = with {
                    self.inbound.extend(answer);
                    self.note_passed_hello(&raw);
                }
                let refusal = self.deliver(&changed(&raw))?;
                self.inbound.extend(refusal);
            }
            With::HoldLateReply => {
                self.held.push_back(bytes.to_vec());
                self.inbound.extend(self.last_reply.clone());
            }
            With::FreezeThenPass => {
                self.replay_hello(false)?;
                let answer = self.deliver(bytes)?;
                self.last_reply = answer.clone();
                self.inbound.extend(answer);
            }
        }
        Ok(())
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// What a search found: runs over the bound, requests at the bound (two untaken releases),
/// and those of them that paid in two boots after a stale refusal (the new path).
#[derive(Default)]
struct Found {
    over: Vec<String>,
    at_bound: u32,
    stale_then_boot: u32,
}

fn search(seed: u64, requests: usize, found: &mut Found) {
    let dev = boot(MemoryStore::provisioned([seed as u8; 32]));
    let auth = dev.auth();
    let log = Rc::new(RefCell::new(Log::default()));
    let link = Random {
        inner: dev,
        boot: 1,
        inbound: VecDeque::new(),
        held: VecDeque::new(),
        hellos: Vec::new(),
        last_reply: Vec::new(),
        rng: ChaCha20Rng::seed_from_u64(seed ^ 0x9e37_79b9),
        log: log.clone(),
    };
    let mut c = client(link, auth, seed);
    c.tries = 1 + (seed % 5) as u32;
    let mut results = Vec::new();
    for r in 0..requests {
        log.borrow_mut().request = r;
        let got = c.query(r as u32, 1, eps(), None);
        results.push(match got {
            Ok(Ok(_)) => None,
            Ok(Err(refusal)) => Some(format!("{refusal:?}")),
            Err(e) => Some(format!("{e:?}")),
        });
    }
    let log = log.borrow();
    for (r, result) in results.iter().enumerate() {
        let taken = u32::from(result.is_none());
        let mut by_boot = BTreeMap::<u32, u32>::new();
        for rel in log.releases.iter().filter(|rel| rel.request == r) {
            *by_boot.entry(rel.boot).or_default() += 1;
        }
        let total: u32 = by_boot.values().sum();
        let untaken = total.saturating_sub(taken);
        let cycled = !log.cycles.is_empty();
        let over_boot = by_boot.values().any(|&n| n > 1 + taken);
        let bound = if cycled { 2 } else { 1 };
        if untaken == 2 {
            found.at_bound += 1;
            let events = log.events.join("\n");
            found.stale_then_boot += u32::from(events.contains("FreezeThenPass") && by_boot.len() == 2);
        }
        // "nothing spent" although two hellos the learner took in one boot, during this
        // request, showed a release of it between them.
        let mut shown_spent = false;
        for (i, &(_, b, n0)) in log.hellos_passed.iter().enumerate() {
            for &(rq, b1, n1) in &log.hellos_passed[i + 1..] {
                shown_spent |= rq == r
                    && b1 == b
                    && log.releases[n0..n1].iter().any(|rel| rel.request == r && rel.boot == b);
            }
        }
        let says_nothing_spent = result.as_deref() == Some("KeyRefused");
        if over_boot || untaken > bound || (says_nothing_spent && shown_spent) {
            found.over.push(format!(
                "seed {seed} request {r}: {total} releases {by_boot:?}, {taken} taken, power cycles in requests {:?}; result {result:?}; hellos passed {:?}; events {:#?}",
                log.cycles, log.hellos_passed, log.events
            ));
        }
    }
    if log.releases.iter().any(|rel| rel.request == usize::MAX) {
        found.over.push(format!(
            "seed {seed}: a release of a frame no query of the learner's had: {:?}",
            log.releases
        ));
    }
}

/// Held: review 8's random man in the middle, extended with replays of any recorded hello
/// request (passed on or not), power cycles followed by a replay, random late deliveries, and
/// freezes just before a query passes (a stale refusal, the path 185c740 resends on).
#[test]
fn no_replay_of_any_recorded_hello_with_power_cycles_makes_a_request_pay_more() {
    let seeds: u64 = std::env::var("REQUEST_COST_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let mut found = Found::default();
    for seed in 0..seeds {
        search(seed, 4, &mut found);
    }
    assert!(found.at_bound > 0, "no request paid two releases: the search found nothing to check");
    assert!(found.over.is_empty(), "{} runs over the bound; the first:\n{}", found.over.len(), found.over[0]);
    eprintln!(
        "at bound: {}, of them through a freeze and two boots: {}",
        found.at_bound, found.stale_then_boot
    );
}

/// 3. The link withholds every copy of one query until the learner gives up on it and greets
///    the device again, then delivers it: the device answers it afresh (its number is still
///    after the last fresh one), spending ε on a report no learner takes. Failed on 3b3f520
///    (review2 finding 3, low: budget waste, the spend is counted by the device); passes since
///    wire format 4: the learner gives a query up with a closing hello, whose number the
///    device takes as a floor, so the late copy is stale (since wire format 5: the closing hello
///    opens a new conversation, in which the late copy, tagged in the old one, is refused).
#[test]
fn a_withheld_query_is_not_spent_after_the_learner_moved_on() {
    struct Withhold {
        inner: Dev,
        hold_next_query: std::rc::Rc<std::cell::Cell<bool>>,
        held: Vec<Vec<u8>>,
        release_on_hello: std::rc::Rc<std::cell::Cell<bool>>,
    }
    impl Tap for Withhold {
        fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
            let mut r = StreamReader::new();
            let ty = bytes.iter().find_map(|&b| r.push(b).and_then(Result::ok).map(|f| f.msg_type()));
            if ty == Some(QUERY) && self.hold_next_query.get() {
                self.held.push(bytes.to_vec());
                return Ok(());
            }
            if ty == Some(HELLO_REQUEST) && self.release_on_hello.get() && !self.held.is_empty() {
                self.inner.send(&self.held[0])?; // the late copy, answered by the device
                while self.inner.recv_byte(Duration::ZERO)?.is_some() {} // and dropped by the attacker
                self.held.clear();
            }
            learner.extend(device_answer(&mut self.inner, bytes)?);
            Ok(())
        }
    }
    let eps = eps();
    let dev = boot(MemoryStore::provisioned([4; 32]));
    let auth = dev.auth();
    let (hold, release) =
        (std::rc::Rc::new(std::cell::Cell::new(false)), std::rc::Rc::new(std::cell::Cell::new(false)));
    let link = Tapped::new(Withhold {
        inner: dev,
        hold_next_query: hold.clone(),
        held: Vec::new(),
        release_on_hello: release.clone(),
    });
    let mut c = WireClient::new(link, auth);
    c.timeout = Duration::from_millis(1);
    c.query(0, 0, eps, None).unwrap().unwrap();
    let rem0 = c.link().inner.app().reporter().accountant().remaining();
    // The next query never arrives: the learner gives up on it.
    hold.set(true);
    assert!(c.query(1, 0, eps, None).is_err());
    hold.set(false);
    release.set(true);
    // The learner goes on (a hello first); the attacker delivers the withheld query before it.
    c.query(2, 0, eps, None).unwrap().unwrap();
    let rem1 = c.link().inner.app().reporter().accountant().remaining();
    println!("learner took 1 report after the abandoned one; device budget fell by {}", rem0 - rem1);
    assert_eq!(rem0 - rem1, 1.0, "one report taken, one ε spent");
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
            let query = raw_frame(bytes).is_some_and(|r| r[1] == QUERY);
            self.dev.send(bytes)?;
            let mut out = Vec::new();
            while let Some(b) = self.dev.recv_byte(Duration::ZERO)? {
                out.push(b);
            }
            if query && self.armed.replace(false) {
                let store = *self.dev.app().reporter().accountant().store();
                self.dev = boot_as(1, store); // the reply is lost with the power
            } else {
                self.inbound.extend(out);
            }
            Ok(())
        }
        fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
            Ok(self.inbound.pop_front())
        }
    }
    let dev = boot_as(1, MemoryStore::provisioned([1; 32]));
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
