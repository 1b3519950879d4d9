//! Review (issue #25 item 1, branch review2).
//!
//! 1. A recorded Hello (tagged in session 0, bound only to the hello
//!    request's sequence number) is replayed to a *new* learner whose first hello has the same
//!    number (every `WireClient::new` starts at seq 1). The learner adopts the old session, and then
//!    accepts the old session's recorded reports as answers to its own, different, queries while the
//!    real (rebooted) device spends nothing (failed on 3b3f520; passes since wire format 4, whose
//!    hello request carries the learner's nonce).
//! 2. A stranger's refusal 12 carrying the awaited number is not the answer (passes; no test of
//!    the branch fails when that check is removed).

use std::collections::{HashMap, VecDeque};
use std::io;
use std::time::Duration;

use ldp_core::wire::StreamReader;
use ldp_core::{Epsilon, MemoryStore};
use ldp_link::client::WireClient;
use ldp_link::transport::Link;

mod common;
use common::{Dev, ID, boot};

const SEED: [u8; 32] = [4; 32];
/// Records every reply frame (encoded, with delimiter) by its sequence number.
struct Recorder {
    inner: Dev,
    inbound: VecDeque<u8>,
    frames: HashMap<u32, Vec<u8>>,
}
impl Link for Recorder {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.send(bytes)?;
        let mut reply = Vec::new();
        while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
            reply.push(b);
        }
        let mut r = StreamReader::new();
        let mut start = 0;
        for (i, &b) in reply.iter().enumerate() {
            if let Some(Ok(f)) = r.push(b) {
                self.frames.insert(f.seq(), reply[start..=i].to_vec());
                start = i + 1;
            }
        }
        self.inbound.extend(reply);
        Ok(())
    }
    fn recv_byte(&mut self, _t: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// The attacker: forwards to the real device, but first injects the recorded frame with the
/// outgoing frame's sequence number.
struct Mitm {
    inner: Dev,
    inbound: VecDeque<u8>,
    recorded: HashMap<u32, Vec<u8>>,
}
impl Link for Mitm {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut r = StreamReader::new();
        for &b in bytes {
            if let Some(Ok(f)) = r.push(b)
                && let Some(old) = self.recorded.get(&f.seq())
            {
                self.inbound.extend(old);
            }
        }
        self.inner.send(bytes)?;
        while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
            self.inbound.push_back(b);
        }
        Ok(())
    }
    fn recv_byte(&mut self, _t: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// Fails on 3b3f520 (review2 finding 1): the victim takes 20 reports, all session A's, and the
/// device spends nothing for them. Passes since wire format 4.
#[test]
fn a_replayed_old_session_hello_lets_no_old_report_into_a_new_learner() {
    let eps = Epsilon::new(1.0).unwrap();
    // Session A: a learner plays 20 rounds; the attacker records the link.
    let dev = boot(MemoryStore::provisioned(SEED));
    let auth = dev.auth();
    let mut rec =
        WireClient::new(Recorder { inner: dev, inbound: VecDeque::new(), frames: HashMap::new() }, auth);
    let first_hello = rec.hello().unwrap();
    let old: Vec<f64> =
        (0..20).map(|t| rec.query(t, t % 100, eps, None).unwrap().unwrap().release.value()).collect();
    let link = rec.into_link();
    let recorded = link.frames;
    // The device reboots (session B).
    let store = *link.inner.app().reporter().accountant().store();
    let dev_b = boot(store);
    let session_b = dev_b.app().reporter().accountant().boot();
    assert_ne!(session_b, first_hello.session);
    let spent_before = dev_b.app().reporter().accountant().spent();
    // A new learner (a new job / process) asks device B, for *another* action every round.
    let mut victim = WireClient::new(Mitm { inner: dev_b, inbound: VecDeque::new(), recorded }, auth);
    victim.timeout = Duration::from_millis(1);
    let hello = victim.hello();
    let got: Vec<f64> = (0..20)
        .filter_map(|t| victim.query(1000 + t, 7, eps, None).ok()?.ok())
        .map(|r| r.release.value())
        .collect();
    let spent = victim.link().inner.app().reporter().accountant().spent() - spent_before;
    println!("victim's hello: {hello:?} (device is in session {session_b}); dropped {:?}", victim.dropped);
    println!(
        "victim took {} reports, {} of them session A's; the device spent {spent}",
        got.len(),
        got.iter().zip(&old).filter(|(a, b)| a == b).count()
    );
    assert_eq!(spent, got.len() as f64, "every report the learner took was released (and charged) now");
}

/// A stranger (no key) sends a query with the learner's next sequence number just before the
/// learner does: the device refuses it (12) with that number. The learner must not take that
/// refusal as the answer to its own query. No test in the branch covered this.
#[test]
fn a_strangers_refusal_with_the_awaited_number_is_not_the_answer() {
    use ldp_core::wire::{Auth, LinkKey, MAX_ENCODED_LEN, Message, Query, Repr};
    use ldp_link::client::LinkError;
    struct Front {
        inner: Dev,
        inbound: VecDeque<u8>,
        stranger: Auth,
    }
    impl Link for Front {
        fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
            let mut r = StreamReader::new();
            for &b in bytes {
                if let Some(Ok(f)) = r.push(b)
                    && f.msg_type() == 0x02
                {
                    let q = Query { round: 0, action: 0, epsilon: Epsilon::new(1.0).unwrap(), level: None };
                    let mut buf = [0u8; MAX_ENCODED_LEN];
                    let forged = Repr::new(f.seq(), Message::Query(q))
                        .emit_framed(&mut buf, &self.stranger)
                        .unwrap()
                        .to_vec();
                    self.inner.send(&forged)?;
                }
            }
            self.inner.send(bytes)?;
            while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
                self.inbound.push_back(b);
            }
            Ok(())
        }
        fn recv_byte(&mut self, _t: Duration) -> io::Result<Option<u8>> {
            Ok(self.inbound.pop_front())
        }
    }
    let dev = boot(MemoryStore::provisioned(SEED));
    let auth = dev.auth();
    let stranger = Auth { key: LinkKey::new([0xEE; 32]), ..auth };
    let mut c = WireClient::new(Front { inner: dev, inbound: VecDeque::new(), stranger }, auth);
    c.timeout = Duration::from_millis(1);
    let eps = Epsilon::new(1.0).unwrap();
    for t in 0..10 {
        assert!(matches!(c.query(t, 1, eps, None), Ok(Ok(_))), "round {t}");
    }
    // Wire format 4 binds each reply's tag to the request it answers: the device's refusal of
    // the stranger's frame does not even verify as a reply to the learner's (it answers the
    // stranger's tag), so it is dropped as a bad tag rather than as an authenticated refusal 12.
    assert_eq!(c.dropped.bad_tag, 10, "{:?}", c.dropped);
    assert_eq!(c.dropped.total(), 10, "{:?}", c.dropped);
    // And a learner with the wrong key is told so.
    let dev = boot(MemoryStore::provisioned([5; 32]));
    let wrong = Auth { key: LinkKey::new([1; 32]), ..dev.auth() };
    let mut c = WireClient::new(dev, wrong);
    c.timeout = Duration::from_millis(1);
    let e = c.hello().unwrap_err();
    println!("hello with a wrong key: {e}");
    let e = WireClient::new(boot(MemoryStore::provisioned([5; 32])), Auth { session: 0, ..wrong })
        .query(0, 0, eps, None)
        .unwrap_err();
    println!("query with a wrong key: {e}");
    // Wire format 4 (review item 6): a wrong key is named as such, not as a silent device.
    assert!(matches!(e, LinkError::BadTags { device_id: ID, .. }), "{e:?}");
    assert!(e.to_string().contains("fail authentication") && e.to_string().contains("wrong key"), "{e}");
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
        inbound: VecDeque<u8>,
        hold_next_query: std::rc::Rc<std::cell::Cell<bool>>,
        held: Vec<Vec<u8>>,
        release_on_hello: std::rc::Rc<std::cell::Cell<bool>>,
    }
    impl Link for Withhold {
        fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
            let mut r = StreamReader::new();
            let ty = bytes.iter().find_map(|&b| r.push(b).and_then(Result::ok).map(|f| f.msg_type()));
            if ty == Some(0x02) && self.hold_next_query.get() {
                self.held.push(bytes.to_vec());
                return Ok(());
            }
            if ty == Some(0x01) && self.release_on_hello.get() && !self.held.is_empty() {
                self.inner.send(&self.held[0])?; // the late copy, answered by the device
                while self.inner.recv_byte(Duration::ZERO)?.is_some() {} // and dropped by the attacker
                self.held.clear();
            }
            self.inner.send(bytes)?;
            while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
                self.inbound.push_back(b);
            }
            Ok(())
        }
        fn recv_byte(&mut self, _t: Duration) -> io::Result<Option<u8>> {
            Ok(self.inbound.pop_front())
        }
    }
    let eps = Epsilon::new(1.0).unwrap();
    let dev = boot(MemoryStore::provisioned(SEED));
    let auth = dev.auth();
    let (hold, release) =
        (std::rc::Rc::new(std::cell::Cell::new(false)), std::rc::Rc::new(std::cell::Cell::new(false)));
    let link = Withhold {
        inner: dev,
        inbound: VecDeque::new(),
        hold_next_query: hold.clone(),
        held: Vec::new(),
        release_on_hello: release.clone(),
    };
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
