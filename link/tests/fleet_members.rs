//! A fleet member is judged by what it does to its own rounds: a member whose link is attacked,
//! or whose owner holds its key, is benched or dropped, never ends the run, never spends
//! another's budget, and never decides the run's error while another member can answer; the
//! ledger counts what each device showed spent.
//!
//! Covers: members answering with their own refusals or reports, re-greeting with bounds no
//! mechanism fits, greeted or not when a genuinely invalid query comes, checked against the
//! bounds they joined with; replayed retained and answered hellos of an earlier run; a member
//! joined after its link was replaced; a forged version byte, a replayed hello request, a
//! changed copy, a flipped tag and a swallowed report on one member's link.

use std::cell::Cell;
use std::collections::VecDeque;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use ldp_core::wire::{Auth, Frame, MAX_ENCODED_LEN, MAX_FRAME_LEN, Message, Refusal, Repr, StreamReader};
use ldp_core::{Bound, Epsilon, LaplaceMechanism, MemoryStore, ParamError, Release, Report};
use ldp_link::client::{RANGE_MARGIN_SCALES, WireClient};
use ldp_link::device::{Device, DeviceError};
use ldp_link::fleet::{Fleet, Member, Routing};
use ldp_link::transport::Link;

use crate::common::{
    Dev, HELLO_REQUEST, QUERY, REPORT, Replayer, Reprovisioned, TOTAL, Tap, Tapped, boot, boot_as,
    device_answer, device_with, eps, hello_in, msg_type, mutated, raw_frame, spent,
};

/// A truncation level the host accepts (finite, positive) and every device refuses as a bad
/// query: above the grid's largest range 2^40 (`ParamError::SensitivityOutOfRange`).
const BAD_LEVEL: f64 = 2_199_023_255_552.0; // 2^41

fn framed(repr: Repr, auth: &Auth) -> Vec<u8> {
    let mut buf = [0u8; MAX_ENCODED_LEN];
    repr.emit_framed(&mut buf, auth).unwrap().to_vec()
}

/// A link that counts the frames sent over it, and while `silent` is set swallows them
/// (a device gone offline).
struct Watched {
    inner: Dev,
    sent: Rc<Cell<u32>>,
    silent: Rc<Cell<bool>>,
    inbound: VecDeque<u8>,
}

impl Link for Watched {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.sent.set(self.sent.get() + 1);
        if self.silent.get() {
            return Ok(());
        }
        self.inbound.extend(device_answer(&mut self.inner, bytes)?);
        Ok(())
    }

    fn recv_byte(&mut self, _timeout: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

struct Watch {
    sent: Rc<Cell<u32>>,
    silent: Rc<Cell<bool>>,
}

/// A fleet member over `link`: its client waits 1 ms per try and tries `tries` times (the
/// client's default if `None`).
fn join(link: Either, auth: Auth, tries: Option<u32>) -> Member<Either> {
    let mut client = WireClient::new(link, auth);
    client.timeout = Duration::from_millis(1);
    if let Some(tries) = tries {
        client.tries = tries;
    }
    Member::new(client).unwrap()
}

/// Device `id`, honest, with `total` ε, on a watched link.
fn watched(id: u64, total: f64, tries: Option<u32>) -> (Member<Either>, Watch) {
    let inner = device_with(id, 1.0, total);
    let auth = inner.auth();
    let (sent, silent) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(false)));
    let link = Watched { inner, sent: sent.clone(), silent: silent.clone(), inbound: VecDeque::new() };
    (join(Either::Honest(Box::new(link)), auth, tries), Watch { sent, silent })
}

/// What a member holding its own key answers to every query, instead of its device.
#[derive(Clone, Copy)]
enum Rogue {
    /// A refusal of the query's parameters.
    Param,
    /// A report shaped like one for ε = 1 under CTL with B = R = 1.
    Report,
}

/// A member's link whose owner (holding the device's key) answers every query itself: the
/// device greets, but never sees a query (so never spends).
struct RogueLink {
    inner: Dev,
    rogue: Rogue,
    device: Auth,
    session: u64,
    nonce: [u8; 16],
    conversation: u32,
    inbound: VecDeque<u8>,
    reader: StreamReader,
}

impl Link for RogueLink {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let (mut seq, mut query, mut tag) = (0, false, Vec::new());
        for &b in bytes {
            if let Some(Ok(frame)) = self.reader.push(b) {
                (seq, query, tag) = (frame.seq(), frame.msg_type() == QUERY, frame.tag().to_vec());
                if let Ok(Repr { message: Message::HelloRequest(nonce), .. }) =
                    Repr::parse(&frame, &self.device)
                {
                    self.nonce = nonce;
                }
            }
        }
        if query {
            let key_holder = Auth {
                session: self.session,
                nonce: self.nonce,
                conversation: self.conversation,
                ..self.device
            }
            .answering(&tag);
            let message = match self.rogue {
                Rogue::Param => Message::Refusal(Refusal::Param(ParamError::EpsilonNotPositive)),
                Rogue::Report => {
                    let one = Bound::new(1.0).unwrap();
                    let ctl = LaplaceMechanism::ctl(Epsilon::new(1.0).unwrap(), one, one).unwrap();
                    Message::Report(Report {
                        release: Release { index: 3, grid_log2: ctl.grid_log2() },
                        epsilon: 1.0,
                        epsilon_effective: ctl.epsilon_effective(),
                        budget_remaining: 0.0,
                    })
                }
            };
            self.inbound.extend(framed(Repr::new(seq, message), &key_holder));
            return Ok(());
        }
        let reply = device_answer(&mut self.inner, bytes)?;
        let answer = Auth { nonce: self.nonce, ..self.device }.answering(&tag);
        if let Some(hello) = hello_in(&reply, &answer) {
            (self.session, self.conversation) = hello;
        }
        self.inbound.extend(reply);
        Ok(())
    }

    fn recv_byte(&mut self, _timeout: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

fn rogue(id: u64, rogue: Rogue) -> Member<Either> {
    let inner = device_with(id, 1.0, 1000.0);
    let auth = inner.auth();
    let link = RogueLink {
        inner,
        rogue,
        device: auth,
        session: 0,
        nonce: [0; 16],
        conversation: 0,
        inbound: VecDeque::new(),
        reader: StreamReader::new(),
    };
    join(Either::Rogue(Box::new(link)), auth, Some(1))
}

fn regreeter(id: u64) -> Member<Either> {
    let inner = device_with(id, 1.0, 1000.0);
    let auth = inner.auth();
    // Its owner, holding the device's key, never lets a query through (the device never
    // spends) and, from its second hello on, rewrites the device's hello to say B = R = 0:
    // bounds under which no CTL mechanism exists (`ParamError::SensitivityZero`).
    let link = Reprovisioned::new(inner, 0.0, true);
    let member = join(Either::Regreeter(Box::new(link)), auth, Some(2));
    let b = member.client().config().unwrap().b.get();
    assert_eq!(b, 1.0, "the first hello is the device's own (it passes check_bounds)");
    member
}

/// Members of one fleet: an honest device, or a link its key holder answers on.
enum Either {
    Honest(Box<Watched>),
    Rogue(Box<RogueLink>),
    Regreeter(Box<Tapped<Reprovisioned>>),
}

impl Link for Either {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Self::Honest(l) => l.send(bytes),
            Self::Rogue(l) => l.send(bytes),
            Self::Regreeter(l) => l.send(bytes),
        }
    }

    fn recv_byte(&mut self, timeout: Duration) -> io::Result<Option<u8>> {
        match self {
            Self::Honest(l) => l.recv_byte(timeout),
            Self::Rogue(l) => l.recv_byte(timeout),
            Self::Regreeter(l) => l.recv_byte(timeout),
        }
    }
}

/// Held: a key-holding member refusing every query spends nothing and ends nothing while an
/// honest member answers; its refusals cost one round trip each, benched for up to 64 passes.
#[test]
fn a_rogue_param_member_is_benched_and_spends_no_ones_budget() {
    let (honest, watch) = watched(1, 1000.0, None);
    let members = vec![honest, rogue(2, Rogue::Param)];
    let mut fleet = Fleet::new(members, eps(), Routing::RoundRobin, 0);
    let before = watch.sent.get();
    let rounds = 200;
    for t in 0..rounds {
        assert!(fleet.query(t % 100, None).is_ok(), "round {t}");
    }
    let ledger = fleet.ledger();
    assert_eq!(ledger[0].reports, rounds as u64, "{ledger:?}");
    assert!((ledger[0].spent - rounds as f64).abs() < 1e-9, "one ε per round, no more: {ledger:?}");
    assert_eq!(ledger[0].skipped, 0, "{ledger:?}");
    assert_eq!(watch.sent.get() - before, rounds as u32, "one query per round to the honest member");
    // Asked in rounds 1, 3, 7, 15, 31, 63, 127 (backoff 2, 4, .., 128 = 64 passes): 7 times.
    assert_eq!((ledger[1].reports, ledger[1].skipped), (0, 7), "{ledger:?}");
    assert_eq!(ledger[1].spent, 0.0, "the rogue's device never saw a query: {ledger:?}");
}

/// Held: a key-holding member cannot answer a genuinely invalid query in place of the honest
/// members that refuse it (the learner checks the report against the query's own mechanism,
/// which does not exist): the run still ends with the honest refusal, nothing spent.
#[test]
fn a_rogue_report_does_not_carry_a_genuinely_invalid_query() {
    let (honest, _watch) = watched(1, 1000.0, None);
    let members = vec![honest, rogue(2, Rogue::Report)];
    let mut fleet = Fleet::new(members, eps(), Routing::RoundRobin, 0);
    let got = fleet.query(0, Some(BAD_LEVEL));
    assert!(
        matches!(got, Err(DeviceError::Refusal(Refusal::Param(ParamError::SensitivityOutOfRange)))),
        "{got:?}"
    );
    assert!(fleet.ledger().iter().all(|r| r.spent == 0.0 && r.reports == 0), "{:?}", fleet.ledger());
}

/// Broke: a query every device refuses (a level above 2^40, which the host lets through) used
/// to end the run at the first refusal (this test passes on 641a216^). It is now sent to every
/// member, offline ones too (here 10 frames to the offline one, each waiting out its client's
/// timeout, 1 s by default) before the run ends, and every
/// member that refused it correctly is counted in the ledger as skipped ("rounds it was skipped
/// for after not answering") and benched. The host can tell such a query itself (the same
/// `LaplaceMechanism::truncated`/`ctl` the device and `check_report` build) and end the run
/// without asking anyone.
#[test]
fn a_genuinely_invalid_query_ends_the_run_at_once_and_blames_no_member() {
    let (a, wa) = watched(1, 1000.0, None);
    let (b, wb) = watched(2, 1000.0, None);
    let (c, wc) = watched(3, 1000.0, None);
    let mut fleet = Fleet::new(vec![a, b, c], eps(), Routing::RoundRobin, 0);
    assert!(fleet.query(0, None).is_ok(), "round 1 goes to member 1");
    wc.silent.set(true); // member 3 goes offline
    let sent = |w: &[&Watch]| w.iter().map(|w| w.sent.get()).collect::<Vec<_>>();
    let before = sent(&[&wa, &wb, &wc]);
    let got = fleet.query(0, Some(BAD_LEVEL));
    assert!(
        matches!(got, Err(DeviceError::Refusal(Refusal::Param(ParamError::SensitivityOutOfRange)))),
        "{got:?}"
    );
    let after = sent(&[&wa, &wb, &wc]);
    let asked: u32 = after.iter().zip(&before).map(|(a, b)| a - b).sum();
    assert_eq!(after[2], before[2], "the offline member is not waited for: {before:?} -> {after:?}");
    assert!(asked <= 1, "one refusal of a bad query is enough: {before:?} -> {after:?}");
    let ledger = fleet.ledger();
    assert!(ledger.iter().all(|r| r.skipped == 0), "no member failed the learner's bad query: {ledger:?}");
}

/// Broke: when no one else can answer (here the honest member's budget is spent), one member
/// holding its own key decides the run's error: a valid query ends as "device refused: bad
/// query" instead of "the fleet's budget is exhausted" (likewise it hides a link outage of the
/// others). The host can tell that the query is valid (the mechanism it would check a report
/// against exists), so a parameter refusal of it is a member's fault, never the run's error.
#[test]
fn a_rogue_param_refusal_of_a_valid_query_never_becomes_the_runs_error() {
    let (honest, _watch) = watched(1, 1.0, None); // one report's budget
    let members = vec![honest, rogue(2, Rogue::Param)];
    let mut fleet = Fleet::new(members, eps(), Routing::RoundRobin, 0);
    assert!(fleet.query(0, None).is_ok(), "round 1: the honest member spends its budget");
    let got = fleet.query(0, None);
    assert!(matches!(got, Err(DeviceError::FleetExhausted { .. })), "a valid query, blamed: {got:?}");
}

/// Held: a member whose latest hello makes every query unbuildable for it is passed over
/// without a frame, and the honest member is asked and answers every round.
#[test]
fn a_members_hello_decides_only_its_own_check() {
    let (a, wa) = watched(1, 1000.0, Some(2));
    let mut fleet = Fleet::new(vec![regreeter(2), a], eps(), Routing::RoundRobin, 0);
    for t in 0..50 {
        assert!(fleet.query(t % 100, None).is_ok(), "round {t}");
    }
    // Since the fix the rogue's re-greeting with B = 0 is refused by its client (a device's
    // configuration never changes): no greeting is taken, the frame is counted as malformed.
    let rogue = fleet.members()[0].client();
    assert_eq!(rogue.greeting().map(|h| h.config.b.get()), None, "a changed configuration was taken");
    assert!(rogue.dropped.malformed > 0, "{:?}", rogue.dropped);
    let ledger = fleet.ledger();
    assert_eq!(ledger[1].reports, 50, "{ledger:?}");
    assert!((ledger[1].spent - 50.0).abs() < 1e-9, "{ledger:?}");
    assert_eq!((ledger[0].reports, ledger[0].spent), (0, 0.0), "{ledger:?}");
    assert!(wa.sent.get() >= 50);
}

/// Broke: the run's error is decided by one key-holding member again. Its first hello is the
/// device's own (what `runner::check_bounds` checks); it stays silent once, and its closing
/// hello says B = R = 0. From then on the fleet "cannot build the mechanism" of every valid
/// query for it and keeps that as the round's error: once the honest member's budget is spent,
/// round 2 ends "the fleet's budget is exhausted" but round 3 (the same fleet, the same query)
/// ends "bad query parameters (SensitivityZero)". The check judges the query against bounds
/// the member chose after it joined; a member whose bounds change should be dropped (or its
/// failed check never be the run's error), not believed.
#[test]
fn a_member_re_greeting_with_unbuildable_bounds_does_not_decide_the_runs_error() {
    let (a, _wa) = watched(1, 1.0, Some(2)); // one report's budget
    let mut fleet = Fleet::new(vec![a, regreeter(2)], eps(), Routing::RoundRobin, 0);
    assert!(fleet.query(0, None).is_ok(), "round 1: the honest member spends its budget");
    let round2 = fleet.query(0, None);
    assert!(matches!(round2, Err(DeviceError::FleetExhausted { .. })), "round 2: {round2:?}");
    // The rogue's closing hello of round 2 said B = 0; its client refused it (the fix).
    {
        let rogue = fleet.members()[1].client();
        assert_eq!(rogue.greeting().map(|h| h.config.b.get()), None, "a changed configuration was taken");
        assert!(rogue.dropped.malformed > 0, "{:?}", rogue.dropped);
    }
    let round3 = fleet.query(0, None);
    assert!(
        matches!(round3, Err(DeviceError::FleetExhausted { .. })),
        "a valid query (ε = 1, CTL with the environment's B = R = 1), blamed: {round3:?}"
    );
}

/// Broke: the check is skipped when the member has no greeting (`greeting()` is `None` after a
/// request failed and its closing hello failed too, and after `replace_link`), although a
/// truncated query's mechanism does not depend on the hello at all. Here the only member was
/// offline for one round and is back: a level every device refuses (2^41) is sent to it
/// (a hello and the query), its correct refusal is counted as a skip and benches it, and the
/// run ends "the fleet's budget is exhausted" with 999 ε left, instead of with the query's
/// refusal and no frame sent (what a greeted member gets,
/// `a_genuinely_invalid_query_ends_the_run_at_once_and_blames_no_member`).
#[test]
fn a_genuinely_invalid_query_is_refused_without_asking_an_ungreeted_member() {
    let (a, wa) = watched(1, 1000.0, Some(2));
    let mut fleet = Fleet::new(vec![a], eps(), Routing::RoundRobin, 0);
    assert!(fleet.query(0, None).is_ok(), "round 1");
    wa.silent.set(true);
    assert!(matches!(fleet.query(0, None), Err(DeviceError::FleetExhausted { .. })), "round 2: offline");
    wa.silent.set(false);
    assert!(fleet.members()[0].client().greeting().is_none(), "its closing hello failed: no greeting");
    let skipped = fleet.ledger()[0].skipped;
    let before = wa.sent.get();
    let got = fleet.query(0, Some(BAD_LEVEL));
    let (sent, ledger) = (wa.sent.get() - before, fleet.ledger());
    assert!(
        matches!(got, Err(DeviceError::Refusal(Refusal::Param(ParamError::SensitivityOutOfRange)))),
        "{got:?} (frames sent: {sent}, ledger {ledger:?})"
    );
    assert_eq!(sent, 0, "the learner can judge a truncated query alone");
    assert_eq!(ledger[0].skipped, skipped, "no member failed the learner's bad query: {ledger:?}");
}

/// Broke: the fleet's "joined" B, R and the client's pinned ones were two different hellos
/// (the retained one handed to `Member::new`, and the client's first answered one).
#[test]
fn a_member_is_checked_against_the_bounds_it_joined_with() {
    let big = 100_000.0;
    let inner = device_with(1, big, 1000.0);
    let auth = inner.auth();
    let mut client = WireClient::new(inner, auth);
    client.timeout = Duration::from_millis(1);
    let member = Member::new(client).unwrap();
    // The bounds the fleet judges by are the ones the client checks reports against: the
    // device's answered hello's (B = R = 10^5), whatever its retained hellos said.
    assert_eq!(Some(member.config()), member.client().config());
    assert_eq!((member.config().b.get(), member.config().r.get()), (big, big));
    let mut fleet = Fleet::new(vec![member], eps(), Routing::RoundRobin, 0);
    // What a report of the joined device can be: within B + R plus the client's margin.
    let limit = 2.0 * big + RANGE_MARGIN_SCALES * 2.0 * 2.0 * big / 1.0;
    let mut taken = 0;
    for t in 0..20 {
        if let Ok(v) = fleet.query(t % 100, None) {
            assert!(v.abs() <= limit, "round {t}: {v} beyond what a device with B = R = 10^5 reports");
            taken += 1;
        }
    }
    assert_eq!(taken, 20, "an honest device's reports are taken");
}

/// Broke: `Member::new(client, &hello)` took the hello it was handed, and a retained one
/// replayed from yesterday's run pinned the member to yesterday's B, R; the honest device's
/// answered hello then dropped it. Since, a member joins with its client's first answered hello
/// (bound to the client's nonce): the replay is dropped as not answering it. (A retained hello
/// has number 0, which a learner never awaits, so this passes even with hellos tagged without
/// the nonce; `a_recorded_answered_hello_with_the_awaited_number_does_not_pin_a_member` replays
/// an answered hello with the awaited number, which only the nonce binding keeps out.)
#[test]
fn a_replayed_retained_hello_does_not_drop_an_honest_member() {
    // Yesterday's run of device 1 (B = R = 1): its retained hello, recorded off the broker.
    let yesterday = device_with(1, 1.0, 1000.0);
    let mut buf = [0u8; MAX_ENCODED_LEN];
    let hello = yesterday.app().reporter().hello(1);
    let recorded = Repr::new(0, Message::Hello(hello))
        .emit_framed(&mut buf, &yesterday.app().learner_auth())
        .unwrap()
        .to_vec();
    // Today's run, same key, B = R = 2: the replayed bytes verify under today's learner key
    // (as `MqttFleet` parses retained hellos).
    let today = device_with(1, 2.0, 1000.0);
    let auth = today.auth();
    let mut reader = StreamReader::new();
    let mut parsed = None;
    for &b in &recorded {
        if let Some(frame) = reader.push(b) {
            parsed = Some(Repr::parse(&frame.unwrap(), &today.app().learner_auth()).unwrap().message);
        }
    }
    let Some(Message::Hello(replayed)) = parsed else { panic!("the recorded hello does not verify today") };
    assert_eq!(replayed.config.b.get(), 1.0);
    let link = Replayer::new(today, recorded);
    let mut client = WireClient::new(link, auth);
    client.timeout = Duration::from_millis(20);
    let member = Member::new(client).expect("the device answers its hello");
    assert_eq!(member.config().b.get(), 2.0, "the member joined with the replayed hello");
    assert!(member.client().dropped.total() >= 1, "the replay was not seen: {:?}", member.client().dropped);
    let mut fleet = Fleet::new(vec![member], Epsilon::new(1.0).unwrap(), Routing::RoundRobin, 0);
    // The device is honest and answers every request; the replayer holds no key.
    for t in 0..5 {
        assert!(fleet.query(t, None).is_ok(), "round {t}: an honest device was dropped by a replayed hello");
    }
}

/// Held: yesterday's run of device 1 (B = R = 1) answered its learner's first hello request
/// (number 1); whoever carried its frames recorded the answer. Today's device has the same key
/// and B = R = 2, and today's learner's first hello request is number 1 again. The recorded
/// answer, slipped in first, verifies under the key and has the awaited number: only its
/// binding to yesterday's nonce tells it apart.
#[test]
fn a_recorded_answered_hello_with_the_awaited_number_does_not_pin_a_member() {
    let mut yesterday = device_with(1, 1.0, 1000.0);
    let learner = yesterday.auth();
    let nonce = [0x5A; 16];
    let request = Repr::new(1, Message::HelloRequest(nonce));
    let mut raw = [0u8; MAX_FRAME_LEN];
    let tag = Frame::new_checked(&*request.emit(&mut raw, &learner).unwrap()).unwrap().tag().to_vec();
    let mut buf = [0u8; MAX_ENCODED_LEN];
    let recorded = device_answer(&mut yesterday, request.emit_framed(&mut buf, &learner).unwrap()).unwrap();
    // It is yesterday's device's authenticated answer, B = R = 1, number 1.
    let frame = raw_frame(&recorded).expect("a frame");
    let answer = Repr::from_bytes(&frame, &Auth { nonce, ..learner }.answering(&tag)).unwrap();
    let Message::Hello(old) = answer.message else { panic!("not a hello: {answer:?}") };
    assert_eq!((answer.seq, old.config.b.get()), (1, 1.0));

    let today = device_with(1, 2.0, 1000.0);
    let auth = today.auth();
    assert_eq!(auth.key, learner.key, "the same key");
    let link = Replayer::new(today, recorded);
    let mut client = WireClient::new(link, auth);
    client.timeout = Duration::from_millis(20);
    let member = Member::new(client).expect("the device answers its hello");
    assert_eq!(member.config().b.get(), 2.0, "the member joined with yesterday's answer");
    assert_eq!(member.client().dropped.bad_tag, 1, "the replay was not seen: {:?}", member.client().dropped);
    let mut fleet = Fleet::new(vec![member], eps(), Routing::RoundRobin, 0);
    for t in 0..5 {
        assert!(fleet.query(t, None).is_ok(), "round {t}: an honest device was dropped by a replay");
    }
}

/// Held: a client greets device 9 and spends 1 ε; the device reboots (the same store, the next
/// boot number: what it had reserved is charged) and the client's link is replaced; only then
/// is it made a member. Its ledger never reads less than its device showed this learner (an
/// infinite budget would read 0) nor more than the device charged, and after its first query,
/// which greets the new boot, it reads what the device charged.
#[test]
fn a_member_joined_after_replace_link_starts_from_what_its_device_showed() {
    let total = 1000.0;
    let dev = boot(MemoryStore::provisioned([3; 32]));
    let auth = dev.auth();
    let mut client = WireClient::new(dev, auth);
    client.timeout = Duration::from_millis(1);
    client.hello().unwrap();
    assert!(client.query(1, 0, eps(), None).unwrap().is_ok());
    let shown = client.budget_shown();
    assert!(shown.is_finite() && shown < total, "{shown}");
    let store = *client.link().app().reporter().accountant().store();
    let old = client.replace_link(boot(store));
    let charged_before = old.app().reporter().accountant().spent();
    let charged = client.link().app().reporter().accountant().spent();
    assert!(
        charged > charged_before,
        "the reboot charged the old reservation: {charged} vs {charged_before}"
    );
    let mut fleet = Fleet::new(vec![Member::new(client).unwrap()], eps(), Routing::RoundRobin, 0);
    let joined = fleet.ledger()[0].spent;
    assert!(
        joined >= total - shown - 1e-9,
        "{joined}: less than the device showed spent ({})",
        total - shown
    );
    assert!(joined <= charged + 1e-9, "{joined}: more than the device charged ({charged})");
    fleet.query(0, None).expect("the rebooted device answers");
    let device = fleet.members()[0].client().link().app().reporter().accountant().spent();
    assert!((fleet.ledger()[0].spent - device).abs() < 1e-9, "{:?} vs the device's {device}", fleet.ledger());
}

/// One member's link: honest, or, with `bounce`, one that keeps every query from the device
/// and sends the learner its own query back with the version byte set to 4 (the CRC is no
/// key's: anyone can recompute it). Hellos pass.
struct Bouncer {
    inner: Dev,
    bounce: bool,
}

impl Tap for Bouncer {
    fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
        if self.bounce && msg_type(bytes) == Some(QUERY) {
            let raw = raw_frame(bytes).expect("the learner sends whole frames");
            learner.extend(mutated(&raw, 0, 4));
            return Ok(());
        }
        learner.extend(device_answer(&mut self.inner, bytes)?);
        Ok(())
    }
}

fn bouncer(id: u64, bounce: bool) -> Member<Tapped<Bouncer>> {
    let inner = device_with(id, 1.0, 1000.0);
    let auth = inner.auth();
    let mut client = WireClient::new(Tapped::new(Bouncer { inner, bounce }), auth);
    client.timeout = Duration::from_millis(1);
    client.tries = 2;
    Member::new(client).unwrap()
}

/// Broke: member 2's queries are answered, by whoever carries its frames, with their own
/// bytes under version 4. Member 1 is honest and answers every round, yet the run ended at
/// round 2 with "the device answered in wire format 4 … update the device's firmware".
#[test]
fn a_forged_version_byte_on_one_members_link_does_not_end_a_fleet_run() {
    let mut fleet = Fleet::new(vec![bouncer(1, false), bouncer(2, true)], eps(), Routing::RoundRobin, 0);
    for t in 0..6 {
        if let Err(e) = fleet.query(t, None) {
            panic!("round {}: one member's link ended the run: {e}", t + 1);
        }
    }
    let ledger = fleet.ledger();
    assert_eq!(ledger[0].reports, 6, "member 1 answered every round: {ledger:?}");
    assert!(ledger[1].skipped >= 1 && ledger[1].reports == 0, "member 2 was benched: {ledger:?}");
    assert_eq!(ledger[1].spent, 0.0, "no query of member 2 reached its device");
    let device = fleet.members()[1].client().link().inner.app().reporter().accountant().spent();
    assert_eq!(device, 0.0);
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
        if ty == Some(HELLO_REQUEST) && self.first_hello.is_none() {
            self.first_hello = Some(bytes.to_vec());
        }
        if ty == Some(HELLO_REQUEST)
            && let Some(query) = self.held.take()
        {
            self.device(&query)?; // the report is swallowed
        }
        let attacked = ty == Some(QUERY) && self.armed.get();
        let replies = match (attacked, self.attack, raw) {
            (true, Attack::ChangedCopy, Some(raw)) => {
                self.held = Some(bytes.to_vec());
                self.device(&mutated(&raw, 10, raw[10] ^ 0x01))? // the action's first byte
            }
            (true, Attack::ReplayHello, _) => {
                let old = self.first_hello.clone().unwrap_or_default();
                self.device(&old)?;
                self.device(bytes)?
            }
            (true, Attack::FlipTag, Some(raw)) => {
                let at = raw.len() - 4 - 16; // the tag's first byte
                self.device(&mutated(&raw, at, raw[at] ^ 0x01))?
            }
            (true, Attack::DropReport, _) => {
                let replies = self.device(bytes)?;
                replies.into_iter().filter(|f| raw_frame(f).is_none_or(|r| r[1] != REPORT)).collect()
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
fn mitm_member(link: Mitm, nonce_seed: u64) -> Member<Mitm> {
    let auth = link.inner.auth();
    let mut client = WireClient::with_nonce_seed(link, auth, nonce_seed);
    client.timeout = Duration::from_millis(1);
    Member::new(client).unwrap()
}

/// A fleet of two: member 1 behind `attack`, member 2 untouched. Returns the fleet and the
/// switch of member 1's attacker.
fn two_members(attack: Attack) -> (Fleet<Mitm>, Rc<Cell<bool>>) {
    let (link, armed) = Mitm::new(boot_as(1, MemoryStore::provisioned([1; 32])), attack);
    let (clean, _) = Mitm::new(boot_as(2, MemoryStore::provisioned([2; 32])), attack);
    let fleet =
        Fleet::new(vec![mitm_member(link, 11), mitm_member(clean, 12)], eps(), Routing::RoundRobin, 0);
    (fleet, armed)
}

/// What member `i`'s device has spent, as it counts.
fn device_spent(fleet: &Fleet<Mitm>, i: usize) -> f64 {
    spent(&fleet.members()[i].client().link().inner)
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
    let before = device_spent(&fleet, 0);
    armed.set(true);
    let got = fleet.query(0, None); // round 3: member 1, attacked
    armed.set(false);
    let spent = device_spent(&fleet, 0) - before;
    (fleet, got, spent)
}

/// Member 1, benched for one pass (round 4), is asked again in rounds 5 and 7, and answers.
fn asked_again_after_one_pass(mut fleet: Fleet<Mitm>) {
    for _ in 0..4 {
        fleet.query(0, None).unwrap();
    }
    let ledger = fleet.ledger();
    assert_eq!((ledger[0].reports, ledger[0].skipped), (3, 1), "member 1 is asked again: {ledger:?}");
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
    let (fleet, got, spent) = attacked_round(Attack::ChangedCopy);
    assert!(got.is_ok(), "one member's withheld report ended the run: {got:?}");
    assert_eq!(spent, 1.0, "the withheld query, charged once and not resent");
    let ledger = fleet.ledger();
    assert_eq!((ledger[0].reports, ledger[0].skipped), (1, 1), "{ledger:?}");
    assert_eq!(ledger[0].spent, 2.0, "the ledger counts the withheld release: {ledger:?}");
    assert_eq!(ledger[1].reports, 2, "member 2 answered round 3: {ledger:?}");
    assert!(ledger[0].dropped.unauthenticated_refusals > 0, "{:?}", ledger[0].dropped);
    asked_again_after_one_pass(fleet);
}

/// Held (v4fix's untested claim): the member whose query the attacker alters (one tag byte)
/// gets `BadTags`; the fleet benches it, another member answers, nothing is spent.
#[test]
fn a_fleet_benches_a_member_whose_frames_fail_authentication() {
    let (fleet, got, spent) = attacked_round(Attack::FlipTag);
    assert!(got.is_ok(), "one member's unverifiable frames ended the run: {got:?}");
    assert_eq!(spent, 0.0, "the refused query was charged");
    let ledger = fleet.ledger();
    assert_eq!((ledger[0].reports, ledger[0].skipped), (1, 1), "{ledger:?}");
    assert_eq!(ledger[1].reports, 2, "{ledger:?}");
    asked_again_after_one_pass(fleet);
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
    let device_spent = device_spent(&fleet, 0);
    let shown = TOTAL - fleet.members()[0].client().budget_shown();
    let ledger = fleet.ledger();
    println!(
        "member 1: device charged {device_spent}, its authenticated hello showed {shown} spent, ledger says {} ({} reports)",
        ledger[0].spent, ledger[0].reports
    );
    assert_eq!(shown, device_spent, "the closing hello showed the spend");
    assert_eq!(ledger[0].spent, device_spent, "the ledger under-counts what the device showed it spent");
}
