//! Review 10 (attacker's brief) of 641a216: a fleet member's `Refusal::Param` benches it, and
//! the run ends with that refusal only when no member answers the round.
//!
//! Held (passing tests): a member holding its own key that refuses every query as malformed
//! spends nothing of anyone's and cannot end the run while someone answers; it cannot answer a
//! genuinely invalid query with a report instead (the learner's own check of the mechanism
//! drops it), so such a query still ends the run.
//!
//! Broke (ignored tests): a genuinely invalid query is now sent to every member, offline ones
//! included, before the run ends, and every member that refused it correctly is counted as
//! skipped; and one key-holding member still picks the run's error when no one else answers.

use std::cell::Cell;
use std::collections::VecDeque;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use ldp_core::wire::{Auth, MAX_ENCODED_LEN, Message, Refusal, Repr, StreamReader};
use ldp_core::{Bound, Epsilon, LaplaceMechanism, ParamError, Release, Report};
use ldp_link::client::WireClient;
use ldp_link::device::{Device, DeviceError};
use ldp_link::fleet::{Fleet, Member, Routing};
use ldp_link::transport::Link;

mod common;
use common::{Dev, device_with};

/// A truncation level the host accepts (finite, positive) and every device refuses as a bad
/// query: above the grid's largest range 2^40 (`ParamError::SensitivityOutOfRange`).
const BAD_LEVEL: f64 = 2_199_023_255_552.0; // 2^41

/// A link that counts the frames sent over it, and after `go_silent` is set swallows them
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
        self.inner.send(bytes)?;
        while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
            self.inbound.push_back(b);
        }
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

fn watched(id: u64, total: f64) -> (Member<Either>, Watch) {
    let inner = device_with(id, 1.0, total);
    let auth = inner.auth();
    let (sent, silent) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(false)));
    let link = Watched { inner, sent: sent.clone(), silent: silent.clone(), inbound: VecDeque::new() };
    let mut client = WireClient::new(Either::Honest(Box::new(link)), auth);
    client.timeout = Duration::from_millis(1);
    (Member::new(client).unwrap(), Watch { sent, silent })
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

fn framed(repr: Repr, auth: &Auth) -> Vec<u8> {
    let mut buf = [0u8; MAX_ENCODED_LEN];
    repr.emit_framed(&mut buf, auth).unwrap().to_vec()
}

impl Link for RogueLink {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let (mut seq, mut query, mut tag) = (0, false, Vec::new());
        for &b in bytes {
            if let Some(Ok(frame)) = self.reader.push(b) {
                (seq, query, tag) = (frame.seq(), frame.msg_type() == 0x02, frame.tag().to_vec());
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
        self.inner.send(bytes)?;
        let mut reply = Vec::new();
        while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
            reply.push(b);
        }
        let mut reader = StreamReader::new();
        let answer = Auth { nonce: self.nonce, ..self.device }.answering(&tag);
        for &b in &reply {
            if let Some(Ok(frame)) = reader.push(b)
                && let Ok(Repr { message: Message::Hello(h), .. }) = Repr::parse(&frame, &answer)
            {
                (self.session, self.conversation) = (h.session, h.conversation);
            }
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
    let mut client = WireClient::new(Either::Rogue(Box::new(link)), auth);
    client.timeout = Duration::from_millis(1);
    client.tries = 1;
    Member::new(client).unwrap()
}

/// Members of one fleet: an honest device, or a rogue link.
enum Either {
    Honest(Box<Watched>),
    Rogue(Box<RogueLink>),
}

impl Link for Either {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Self::Honest(l) => l.send(bytes),
            Self::Rogue(l) => l.send(bytes),
        }
    }

    fn recv_byte(&mut self, timeout: Duration) -> io::Result<Option<u8>> {
        match self {
            Self::Honest(l) => l.recv_byte(timeout),
            Self::Rogue(l) => l.recv_byte(timeout),
        }
    }
}

fn eps() -> Epsilon {
    Epsilon::new(1.0).unwrap()
}

/// Held: a key-holding member refusing every query spends nothing and ends nothing while an
/// honest member answers; its refusals cost one round trip each, benched for up to 64 passes.
#[test]
fn a_rogue_param_member_is_benched_and_spends_no_ones_budget() {
    let (honest, watch) = watched(1, 1000.0);
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
    let (honest, _watch) = watched(1, 1000.0);
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
    let (a, wa) = watched(1, 1000.0);
    let (b, wb) = watched(2, 1000.0);
    let (c, wc) = watched(3, 1000.0);
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
    let (honest, _watch) = watched(1, 1.0); // one report's budget
    let members = vec![honest, rogue(2, Rogue::Param)];
    let mut fleet = Fleet::new(members, eps(), Routing::RoundRobin, 0);
    assert!(fleet.query(0, None).is_ok(), "round 1: the honest member spends its budget");
    let got = fleet.query(0, None);
    assert!(matches!(got, Err(DeviceError::FleetExhausted { .. })), "a valid query, blamed: {got:?}");
}
