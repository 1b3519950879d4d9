//! Wire format 5 on the learner's side (issue #25, the hello request without a device
//! challenge): a recorded hello request, replayed, opens only a new conversation of the device
//! that its replayer cannot use. It moves no floor (a learner after it has all its numbers), it
//! can end the open conversation (the learner greets the device again and is answered, the
//! device spending exactly the reports taken), and a replayer who keeps doing it is named as
//! such, as is a link on which the device's frames arrive but none is the learner's answer.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use ldp_core::wire::StreamReader;
use ldp_core::{Epsilon, MemoryStore};
use ldp_link::client::{CONVERSATION_RETRIES, LinkError, WireClient};
use ldp_link::transport::Link;

mod common;
use common::{Dev, boot, msg_type};

/// The device's link with a replayer in it: before every `every`-th query frame the learner
/// sends (resends included), it sends the device `recorded` (a hello request recorded earlier)
/// and passes the device's answer to it on to the learner, as a shared link does. With
/// `swallow_hellos` it also drops the learner's own hello requests, sending the recorded one in
/// their place.
struct Replayer {
    inner: Dev,
    inbound: VecDeque<u8>,
    recorded: Vec<u8>,
    every: u32,
    queries: u32,
    swallow_hellos: bool,
    replays: u32,
}

impl Replayer {
    fn new(inner: Dev, recorded: Vec<u8>, every: u32) -> Self {
        Self {
            inner,
            inbound: VecDeque::new(),
            recorded,
            every,
            queries: 0,
            swallow_hellos: false,
            replays: 0,
        }
    }

    fn pass(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.send(bytes)?;
        while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
            self.inbound.push_back(b);
        }
        Ok(())
    }
}

impl Link for Replayer {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let ty = msg_type(bytes);
        if ty == Some(0x02) {
            self.queries += 1;
            if self.queries.is_multiple_of(self.every) {
                self.replays += 1;
                self.pass(&self.recorded.clone())?;
            }
        }
        if ty == Some(0x01) && self.swallow_hellos {
            self.replays += 1;
            return self.pass(&self.recorded.clone());
        }
        self.pass(bytes)
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// Records the learner's hello requests (encoded, as on the link).
struct Recorder {
    inner: Dev,
    inbound: VecDeque<u8>,
    hellos: Vec<Vec<u8>>,
}
impl Link for Recorder {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        if msg_type(bytes) == Some(0x01) {
            self.hellos.push(bytes.to_vec());
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

/// A hello request of an earlier learner numbered `last + 1`, and the device (the same boot)
/// after it.
fn recorded_hello(dev: Dev, last: u32) -> (Vec<u8>, Dev) {
    let auth = dev.auth();
    let mut c = WireClient::with_nonce_seed(
        Recorder { inner: dev, inbound: VecDeque::new(), hellos: vec![] },
        auth,
        77,
    )
    .starting_after(last);
    c.timeout = Duration::from_millis(1);
    c.hello().unwrap();
    let link = c.into_link();
    (link.hellos[0].clone(), link.inner)
}

fn spent(dev: &Dev) -> f64 {
    dev.app().reporter().accountant().spent()
}

/// Failed on wire format 4: a recorded hello request numbered `u32::MAX`, replayed, raised the
/// boot's freshness floor to `u32::MAX`, and a learner greeting the device afterwards was told
/// to number after it: its queries (wrapped to 0, 1, …) were refused as stale until the device
/// restarted. In wire format 5 the number is the floor of the replayer's own conversation only.
#[test]
fn a_replayed_hello_request_numbered_u32_max_leaves_the_next_learner_its_numbers() {
    let (recorded, dev) = recorded_hello(boot(MemoryStore::provisioned([1; 32])), u32::MAX - 1);
    let auth = dev.auth();
    let mut link = Replayer::new(dev, recorded.clone(), u32::MAX);
    link.pass(&recorded).unwrap(); // the replay, before the learner comes
    link.inbound.clear();
    let mut c = WireClient::with_nonce_seed(link, auth, 2);
    c.timeout = Duration::from_millis(1);
    let eps = Epsilon::new(1.0).unwrap();
    for t in 0..20 {
        let got = c.query(t, t % 100, eps, None);
        assert!(matches!(got, Ok(Ok(_))), "round {t}: {got:?}");
    }
    assert_eq!(spent(&c.link().inner), 20.0);
}

/// A replayed hello request between a learner's queries freezes its conversation: the learner's
/// next query is refused as stale (nothing read or spent), it greets the device again and the
/// query is answered. Every round gets its report, the device spends exactly the reports taken,
/// and each replay cost one new hello.
#[test]
fn a_learner_goes_on_after_replayed_hello_requests_and_nothing_is_spent_twice() {
    let (recorded, dev) = recorded_hello(boot(MemoryStore::provisioned([2; 32])), 0);
    let auth = dev.auth();
    let before = spent(&dev);
    let mut c = WireClient::with_nonce_seed(Replayer::new(dev, recorded, 3), auth, 3);
    c.timeout = Duration::from_millis(1);
    let eps = Epsilon::new(1.0).unwrap();
    for t in 0..30 {
        let got = c.query(t, t % 100, eps, None);
        assert!(matches!(got, Ok(Ok(_))), "round {t}: {got:?}");
    }
    let link = c.link();
    println!("{} replays; {} conversations lost; {:?}", link.replays, c.conversations_lost, c.dropped);
    assert_eq!(spent(&link.inner) - before, 30.0, "one ε per report taken");
    assert!(link.replays >= 10, "{}", link.replays);
    // Each replay froze the conversation once; the device's hello to it reached the learner
    // and was dropped; no query was refused as unauthenticated or resent.
    assert_eq!(c.conversations_lost, u64::from(link.replays));
    assert_eq!(c.dropped.bad_tag, u64::from(link.replays), "{:?}", c.dropped);
    assert_eq!(c.dropped.total(), c.dropped.bad_tag, "{:?}", c.dropped);
    assert_eq!(c.resends, 0);
}

/// The reply to a query is lost on the link and a recorded hello request reaches the device
/// before the learner resends the query. The learner's resend still gets the lost reply from the
/// device's cache (a frozen conversation answers retries): one ε for one report. (In wire format
/// 4 the replay moved the device to another nonce, and the resend was refused; had the learner
/// sent the query afresh, it would have been charged twice.)
#[test]
fn a_reply_lost_around_a_replay_is_not_charged_twice() {
    struct LoseThenReplay {
        inner: Dev,
        inbound: VecDeque<u8>,
        recorded: Vec<u8>,
        queries: u32,
    }
    impl Link for LoseThenReplay {
        fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
            let lose = msg_type(bytes) == Some(0x02) && {
                self.queries += 1;
                self.queries == 5
            };
            self.inner.send(bytes)?;
            while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
                if !lose {
                    self.inbound.push_back(b);
                }
            }
            if lose {
                self.inner.send(&self.recorded.clone())?;
                while self.inner.recv_byte(Duration::ZERO)?.is_some() {}
            }
            Ok(())
        }
        fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
            Ok(self.inbound.pop_front())
        }
    }
    let (recorded, dev) = recorded_hello(boot(MemoryStore::provisioned([7; 32])), 0);
    let auth = dev.auth();
    let before = spent(&dev);
    let link = LoseThenReplay { inner: dev, inbound: VecDeque::new(), recorded, queries: 0 };
    let mut c = WireClient::with_nonce_seed(link, auth, 8);
    c.timeout = Duration::from_millis(1);
    let eps = Epsilon::new(1.0).unwrap();
    for t in 0..10 {
        let got = c.query(t, 1, eps, None);
        assert!(matches!(got, Ok(Ok(_))), "round {t}: {got:?}");
    }
    assert_eq!(spent(&c.link().inner) - before, 10.0, "ten reports, ten ε");
    assert_eq!(c.resends, 1, "the lost reply was asked for once more");
    assert_eq!(c.conversations_lost, 1, "the next fresh query found the conversation frozen");
}

/// A replayer who answers every new hello with a replay keeps the device from the learner: after
/// [`CONVERSATION_RETRIES`] new hellos the learner says so — the key is right, someone takes the
/// device's conversation — rather than that the device did not answer, and nothing was spent.
#[test]
fn a_replayer_who_keeps_taking_the_conversation_is_named() {
    let (recorded, dev) = recorded_hello(boot(MemoryStore::provisioned([3; 32])), 0);
    let auth = dev.auth();
    let before = spent(&dev);
    let mut c = WireClient::with_nonce_seed(Replayer::new(dev, recorded, 1), auth, 4);
    c.timeout = Duration::from_millis(1);
    let e = c.query(0, 1, Epsilon::new(1.0).unwrap(), None).unwrap_err();
    let text = e.to_string();
    println!("{text}");
    assert!(matches!(e, LinkError::KeyRefused), "{e:?}");
    assert!(
        text.contains("another learner, or someone replaying recorded hello requests")
            && text.contains("the key is right")
            && text.contains("showed nothing spent"),
        "{text}"
    );
    assert_eq!(c.conversations_lost, u64::from(CONVERSATION_RETRIES));
    assert_eq!(spent(&c.link().inner), before);
}

/// Failed on wire format 4 (issue #25): the learner's hello requests are dropped and a recorded
/// one reaches the device instead; the device's hello, answering the recorded request, reaches
/// the learner and fails its tag (another nonce, another request). The learner said the device
/// "did not answer"; it now says that the device's frames came but fail authentication, naming
/// a wrong key and a replayed hello request or another learner.
#[test]
fn frames_that_came_but_answer_someone_else_are_not_called_silence() {
    // Numbered unlike the learner's own hello request: not a frame of the awaited number.
    let (recorded, dev) = recorded_hello(boot(MemoryStore::provisioned([4; 32])), 1000);
    let auth = dev.auth();
    let mut link = Replayer::new(dev, recorded, u32::MAX);
    link.swallow_hellos = true;
    let mut c = WireClient::with_nonce_seed(link, auth, 5);
    c.timeout = Duration::from_millis(1);
    let e = c.hello().unwrap_err();
    let text = e.to_string();
    println!("{text}");
    assert!(!matches!(e, LinkError::Timeout { .. }), "{e:?}");
    assert!(
        text.contains("device 9 answered, but its frames")
            && text.contains("fail authentication")
            && text.contains("a replayed hello request"),
        "{text}"
    );
    assert_eq!(c.dropped.bad_tag, u64::from(c.tries));
}

/// Before each of the learner's queries, the link sends the device a copy with one payload
/// byte changed (CRC fixed up: no key needed), which the device refuses (12) as a frame whose tag
/// does not verify, then the genuine query; both answers reach the learner. The refusal answers
/// the learner's very tag, under the all-zero conversation: the learner drops it, waits for the
/// rest of its try, and takes the genuine report — the device spends once per round and the
/// learner greets no more often than at first (it does not give up on its conversation early).
#[test]
fn a_refusal_provoked_by_a_mutated_copy_does_not_cost_the_genuine_answer() {
    struct Mutator {
        inner: Dev,
        inbound: VecDeque<u8>,
    }
    impl Link for Mutator {
        fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
            let mut r = StreamReader::new();
            let raw =
                bytes.iter().find_map(|&b| r.push(b).and_then(Result::ok).map(|f| f.as_bytes().to_vec()));
            if let Some(mut raw) = raw.filter(|raw| raw[1] == 0x02) {
                raw[10] ^= 1; // the action
                let n = raw.len() - 4;
                let crc = ldp_core::wire::checksum(&raw[..n]).to_le_bytes();
                raw[n..].copy_from_slice(&crc);
                let mut mutated = cobs::encode_vec(&raw);
                mutated.push(0);
                self.inner.send(&mutated)?;
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
    let dev = boot(MemoryStore::provisioned([5; 32]));
    let auth = dev.auth();
    let mut c = WireClient::with_nonce_seed(Mutator { inner: dev, inbound: VecDeque::new() }, auth, 6);
    c.timeout = Duration::from_millis(1);
    let eps = Epsilon::new(1.0).unwrap();
    for t in 0..10 {
        let got = c.query(t, 1, eps, None);
        assert!(matches!(got, Ok(Ok(_))), "round {t}: {got:?}");
    }
    assert_eq!(spent(&c.link().inner), 10.0);
    assert_eq!(c.dropped.unauthenticated_refusals, 10, "{:?}", c.dropped);
    assert_eq!(c.conversations_lost, 0);
}

/// A device of wire format 4 answers a version-5 request with its refusal 7 in its own version
/// (the header is the same in every version): the learner names both versions and what to do,
/// rather than saying the device did not answer.
#[test]
fn a_device_of_wire_format_4_is_named_with_its_version() {
    struct Old {
        inbound: VecDeque<u8>,
    }
    impl Link for Old {
        fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
            let mut r = StreamReader::new();
            let Some(seq) = bytes.iter().find_map(|&b| r.push(b).and_then(Result::ok).map(|f| f.seq()))
            else {
                return Ok(());
            };
            // Version 4's refusal 7: header, reason 7 and 17 zero bytes, a tag, the CRC-32C.
            let mut raw = vec![4, 0x83];
            raw.extend_from_slice(&seq.to_le_bytes());
            raw.push(7);
            raw.extend_from_slice(&[0; 17]);
            raw.extend_from_slice(&[0x5A; 16]);
            let crc = ldp_core::wire::checksum(&raw).to_le_bytes();
            raw.extend_from_slice(&crc);
            self.inbound.extend(cobs::encode_vec(&raw));
            self.inbound.push_back(0);
            Ok(())
        }
        fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
            Ok(self.inbound.pop_front())
        }
    }
    let auth = boot(MemoryStore::provisioned([6; 32])).auth();
    let mut c = WireClient::with_nonce_seed(Old { inbound: VecDeque::new() }, auth, 7);
    c.timeout = Duration::from_millis(1);
    let e = c.hello().unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, LinkError::Version { device: 4 }), "{e:?}");
    assert!(
        text.contains("wire format 4") && text.contains("speaks version 5") && text.contains("firmware"),
        "{text}"
    );
}
