//! Review 11 (attacker's brief) of b283b4c: before asking a member, the fleet builds the
//! mechanism the member's report would be checked against, from the member's last hello
//! (`WireClient::greeting`); where it cannot be built the member is not asked and that refusal
//! is the round's error if no one answers.
//!
//! Held (passing test): a member's hello decides only its own check — the other members are
//! still asked, nothing is spent by a member that is not asked.
//!
//! Broke (ignored tests): the check trusts whatever the member's *latest* hello says (only the
//! first is checked against the environment, `runner::check_bounds`), so a member holding its
//! own key re-greets with bounds no mechanism fits and again decides the run's error when the
//! others are exhausted (review 10's second break, through the hello instead of a refusal);
//! and a member whose greeting was lost (a round it did not answer, a restarted link) is not
//! checked at all, so a genuinely invalid query goes to it and its honest refusal is counted
//! as a skip, the run ending "exhausted" instead of with the query's refusal (review 10's
//! first break, back).

use std::cell::Cell;
use std::collections::VecDeque;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use ldp_core::wire::{Auth, Hello, MAX_ENCODED_LEN, Message, Refusal, Repr, StreamReader};
use ldp_core::{Bound, DeviceConfig, Epsilon, ParamError};
use ldp_link::client::WireClient;
use ldp_link::device::{Device, DeviceError};
use ldp_link::fleet::{Fleet, Member, Routing};
use ldp_link::transport::Link;

mod common;
use common::{Dev, device_with};

/// A truncation level the host accepts (finite, positive) and every device refuses as a bad
/// query: above the grid's largest range 2^40 (`ParamError::SensitivityOutOfRange`).
const BAD_LEVEL: f64 = 2_199_023_255_552.0; // 2^41

fn framed(repr: Repr, auth: &Auth) -> Vec<u8> {
    let mut buf = [0u8; MAX_ENCODED_LEN];
    repr.emit_framed(&mut buf, auth).unwrap().to_vec()
}

/// An honest device's link that counts the frames sent over it and, while `silent`, swallows
/// them (a device gone offline).
struct Watched {
    inner: Dev,
    sent: Rc<Cell<u32>>,
    silent: Rc<Cell<bool>>,
    inbound: VecDeque<u8>,
}

/// A member's link whose owner (holding the device's key) never lets a query through (the
/// device never spends) and, from its second hello on, rewrites the device's hello to say
/// B = R = 0: bounds under which no CTL mechanism exists (`ParamError::SensitivityZero`).
struct Regreeter {
    inner: Dev,
    device: Auth,
    hellos: u32,
    inbound: VecDeque<u8>,
    reader: StreamReader,
}

enum Either {
    Honest(Box<Watched>),
    Rogue(Box<Regreeter>),
}

impl Link for Either {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Self::Honest(l) => {
                l.sent.set(l.sent.get() + 1);
                if l.silent.get() {
                    return Ok(());
                }
                l.inner.send(bytes)?;
                while let Some(b) = l.inner.recv_byte(Duration::ZERO)? {
                    l.inbound.push_back(b);
                }
                Ok(())
            }
            Self::Rogue(l) => {
                let mut hello_request = None;
                for &b in bytes {
                    if let Some(Ok(frame)) = l.reader.push(b)
                        && let Ok(Repr { seq, message: Message::HelloRequest(nonce) }) =
                            Repr::parse(&frame, &l.device)
                    {
                        hello_request = Some((seq, nonce, frame.tag().to_vec()));
                    }
                }
                // A query: swallowed (no answer, nothing spent).
                let Some((seq, nonce, tag)) = hello_request else { return Ok(()) };
                l.inner.send(bytes)?;
                let mut reply = Vec::new();
                while let Some(b) = l.inner.recv_byte(Duration::ZERO)? {
                    reply.push(b);
                }
                l.hellos += 1;
                if l.hellos == 1 {
                    l.inbound.extend(reply);
                    return Ok(());
                }
                let answer = Auth { nonce, ..l.device }.answering(&tag);
                let mut reader = StreamReader::new();
                for &b in &reply {
                    if let Some(Ok(frame)) = reader.push(b)
                        && let Ok(Repr { message: Message::Hello(h), .. }) = Repr::parse(&frame, &answer)
                    {
                        let zero = Bound::new(0.0).unwrap();
                        let h = Hello { config: DeviceConfig { b: zero, r: zero, ..h.config }, ..h };
                        l.inbound.extend(framed(Repr::new(seq, Message::Hello(h)), &answer));
                    }
                }
                Ok(())
            }
        }
    }

    fn recv_byte(&mut self, _timeout: Duration) -> io::Result<Option<u8>> {
        Ok(match self {
            Self::Honest(l) => l.inbound.pop_front(),
            Self::Rogue(l) => l.inbound.pop_front(),
        })
    }
}

struct Watch {
    sent: Rc<Cell<u32>>,
    silent: Rc<Cell<bool>>,
}

fn client(link: Either, auth: Auth) -> WireClient<Either> {
    let mut client = WireClient::new(link, auth);
    client.timeout = Duration::from_millis(1);
    client.tries = 2;
    client
}

fn honest(id: u64, total: f64) -> (Member<Either>, Watch) {
    let inner = device_with(id, 1.0, total);
    let auth = inner.auth();
    let (sent, silent) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(false)));
    let link = Watched { inner, sent: sent.clone(), silent: silent.clone(), inbound: VecDeque::new() };
    let client = client(Either::Honest(Box::new(link)), auth);
    (Member::new(client).unwrap(), Watch { sent, silent })
}

fn regreeter(id: u64) -> Member<Either> {
    let inner = device_with(id, 1.0, 1000.0);
    let auth = inner.auth();
    let link =
        Regreeter { inner, device: auth, hellos: 0, inbound: VecDeque::new(), reader: StreamReader::new() };
    let client = client(Either::Rogue(Box::new(link)), auth);
    let member = Member::new(client).unwrap();
    let b = member.client().config().unwrap().b.get();
    assert_eq!(b, 1.0, "the first hello is the device's own (it passes check_bounds)");
    member
}

fn eps() -> Epsilon {
    Epsilon::new(1.0).unwrap()
}

/// Held: a member whose latest hello makes every query unbuildable for it is passed over
/// without a frame, and the honest member is asked and answers every round.
#[test]
fn a_members_hello_decides_only_its_own_check() {
    let (a, wa) = honest(1, 1000.0);
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
    let (a, _wa) = honest(1, 1.0); // one report's budget
    let mut fleet = Fleet::new(vec![a, regreeter(2)], eps(), Routing::RoundRobin, 0);
    assert!(fleet.query(0, None).is_ok(), "round 1: the honest member spends its budget");
    let round2 = fleet.query(0, None);
    assert!(matches!(round2, Err(DeviceError::FleetExhausted { .. })), "round 2: {round2:?}");
    // The rogue's closing hello of round 2 said B = 0; its client refused it (the fix).
    let rogue = fleet.members()[1].client();
    assert_eq!(rogue.greeting().map(|h| h.config.b.get()), None, "a changed configuration was taken");
    assert!(rogue.dropped.malformed > 0, "{:?}", rogue.dropped);
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
/// refusal and no frame sent (what a greeted member gets, review10.rs).
#[test]
fn a_genuinely_invalid_query_is_refused_without_asking_an_ungreeted_member() {
    let (a, wa) = honest(1, 1000.0);
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
