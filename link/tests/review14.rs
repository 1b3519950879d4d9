//! Review 14 (attacker's brief) of 71a7876: `Member::new(client)` takes no hello; a member joins
//! with its client's first answered hello (greeting the device if the client has none) and
//! the least budget the client was shown; `WireClient::pin_config` is gone.
//!
//! Held (passing tests):
//! - A recorded *answered* hello of an earlier run of the device (same key, other B and R)
//!   carries the number a new learner's first hello request has (1: the runner's
//!   `WireClient::new` starts there every run), so unlike the retained hello (number 0) only its
//!   binding to the learner's nonce keeps it out. Review 13's test replays the retained hello,
//!   whose number alone keeps it out: it passes with hellos tagged without the nonce at all
//!   (`MessageType::context` of `Hello` set to no nonce, on both ends); the test here fails then.
//! - A client that greeted, had its link replaced (the device rebooted) and joins a fleet after
//!   gives the member the least budget its device showed (finite, never the infinity of a client
//!   not greeted), and its first query greets the new boot, so the ledger counts what the reboot
//!   charged.
//!
//! Broke (fixed: `Fleet::query` benches the member; the test fails without the fix):
//! - Whoever carries one member's frames ends the whole fleet run, no key needed: a frame
//!   with the awaited number and another version byte (read before the tag, so anyone can
//!   make one) is `LinkError::Version`, which `Fleet::query` passed on as the run's error
//!   instead of benching the member. A run that fails is computed again from round 1 on
//!   resume, so every member's ε spent on it bought nothing.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use ldp_core::wire::{Auth, Frame, MAX_ENCODED_LEN, MAX_FRAME_LEN, Message, Repr};
use ldp_core::{Epsilon, MemoryStore};
use ldp_link::client::WireClient;
use ldp_link::device::Device;
use ldp_link::fleet::{Fleet, Member, Routing};
use ldp_link::transport::Link;

mod common;
use common::{Dev, Replayer, boot, device_answer, device_with, msg_type, mutated, raw_frame};

fn eps() -> Epsilon {
    Epsilon::new(1.0).unwrap()
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
    inbound: VecDeque<u8>,
}

impl Link for Bouncer {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.bounce && msg_type(bytes) == Some(0x02) {
            let raw = raw_frame(bytes).expect("the learner sends whole frames");
            self.inbound.extend(mutated(&raw, 0, 4));
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

fn member(id: u64, bounce: bool) -> Member<Bouncer> {
    let inner = device_with(id, 1.0, 1000.0);
    let auth = inner.auth();
    let mut client = WireClient::new(Bouncer { inner, bounce, inbound: VecDeque::new() }, auth);
    client.timeout = Duration::from_millis(1);
    client.tries = 2;
    Member::new(client).unwrap()
}

/// Broke: member 2's queries are answered, by whoever carries its frames, with their own
/// bytes under version 4. Member 1 is honest and answers every round, yet the run ended at
/// round 2 with "the device answered in wire format 4 … update the device's firmware".
#[test]
fn a_forged_version_byte_on_one_members_link_does_not_end_a_fleet_run() {
    let mut fleet = Fleet::new(vec![member(1, false), member(2, true)], eps(), Routing::RoundRobin, 0);
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
