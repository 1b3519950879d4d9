//! Frames recorded off the link and replayed — hello requests of this boot or an earlier one,
//! a hello of an earlier session, a device state rolled back — are never answered afresh nor
//! taken as new, and a replayer costs the learner at most a new hello.
//!
//! Covers: recorded hello requests that walk the freshness floor around the circle (with honest
//! help, or from an earlier boot), a hello request numbered `u32::MAX`, replays between a
//! learner's queries and around a lost reply, a replayer who keeps taking the conversation or
//! answers the learner's hello in its place (named as such), a replayed hello of an old session
//! to a new learner, and a device whose boot number went back.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::time::Duration;

use ldp_core::MemoryStore;
use ldp_core::wire::StreamReader;
use ldp_link::client::{CONVERSATION_RETRIES, LinkError, WireClient};
use ldp_link::transport::Link;

use crate::common::{
    Dev, HELLO_REQUEST, QUERY, Recorder, Tap, Tapped, boot, client, device_answer, eps, msg_type, raw_frame,
    spent,
};

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
    let eps = eps();
    let dev = boot(MemoryStore::provisioned([8; 32]));
    let auth = dev.auth();
    // Conversation A: a learner starting at 0 asks 12 queries (more than the reply cache holds).
    let mut a = client(Recorder::new(dev), auth, 1);
    for t in 0..12 {
        a.query(t, t % 100, eps, None).unwrap().unwrap();
    }
    let mut link = a.into_link();
    // Three later, honest runs on the same boot, each starting at a random number (these
    // three happen to lie less than half a circle apart): each only greets the device.
    for (i, start) in [0x6000_0000u32, 0xC000_0000, 0xFFFF_FF00].into_iter().enumerate() {
        let mut c = client(link, auth, 100 + i as u64).starting_after(start);
        c.hello().unwrap();
        link = c.into_link();
    }
    let recorded: Vec<Vec<u8>> = link
        .sent
        .iter()
        .take_while(|(ty, seq, _)| *ty != HELLO_REQUEST || *seq < 0x6000_0000)
        .map(|f| f.2.clone())
        .collect();
    let before = link.inner.app().reporter().accountant().remaining();
    // The attacker replays conversation A (its hello request, then its queries) to the device.
    let mut device = link.into_inner().inner;
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
/// request of another conversation costs at most a new hello: the tests below.)
#[test]
fn a_replayed_hello_request_is_not_called_a_wrong_key() {
    use ldp_link::client::LinkError;
    struct Hijack {
        inner: Dev,
        first_hello: Option<Vec<u8>>,
        replay_before_next_query: std::rc::Rc<std::cell::Cell<bool>>,
    }
    impl Tap for Hijack {
        fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
            let ty = raw_frame(bytes).map(|r| r[1]);
            if ty == Some(HELLO_REQUEST) && self.first_hello.is_none() {
                self.first_hello = Some(bytes.to_vec());
            }
            if ty == Some(QUERY) && self.replay_before_next_query.replace(false) {
                let old = self.first_hello.clone().unwrap_or_default();
                self.inner.send(&old)?;
                while self.inner.recv_byte(Duration::ZERO)?.is_some() {}
            }
            learner.extend(device_answer(&mut self.inner, bytes)?);
            Ok(())
        }
    }
    let eps = eps();
    let dev = boot(MemoryStore::provisioned([9; 32]));
    let auth = dev.auth();
    let replay = std::rc::Rc::new(std::cell::Cell::new(false));
    let link =
        Tapped::new(Hijack { inner: dev, first_hello: None, replay_before_next_query: replay.clone() });
    let mut c = client(link, auth, 5);
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

/// Finding 2, with no honest help: the hello requests that walk the floor were recorded in an
/// *earlier boot* (a hello request is tagged in session 0: valid in every boot). In the current
/// boot one learner (starting at 0, as `WireClient::new`) asks 12 queries; the attacker replays
/// three old-boot hello requests, then the learner's own hello request and queries.
#[test]
fn hello_requests_of_an_earlier_boot_do_not_reopen_this_boots_queries() {
    let eps = eps();
    // Boot 1: three runs greet the device, at random starting points; the attacker records.
    let dev = boot(MemoryStore::provisioned([10; 32]));
    let auth = dev.auth();
    let mut link = Recorder::new(dev);
    for (i, start) in [0x6000_0000u32, 0xC000_0000, 0xFFFF_FF00].into_iter().enumerate() {
        let mut c = client(link, auth, 200 + i as u64).starting_after(start);
        c.hello().unwrap();
        link = c.into_link();
    }
    let old_hellos: Vec<Vec<u8>> = link.sent.iter().map(|f| f.2.clone()).collect();
    // Boot 2 (the same store, reopened): a learner's conversation.
    let store = *link.inner.app().reporter().accountant().store();
    let dev2 = boot(store);
    let mut a = client(Recorder::new(dev2), auth, 300);
    for t in 0..12 {
        a.query(t, t % 100, eps, None).unwrap().unwrap();
    }
    let link = a.into_link();
    let conversation: Vec<Vec<u8>> = link.sent.iter().map(|f| f.2.clone()).collect();
    let mut device = link.into_inner().inner;
    let before = device.app().reporter().accountant().remaining();
    for frame in old_hellos.iter().chain(&conversation) {
        device.send(frame).unwrap();
        while device.recv_byte(Duration::ZERO).unwrap().is_some() {}
    }
    let spent = before - device.app().reporter().accountant().remaining();
    println!("boot-1 hello requests + boot-2 conversation replayed; the device spent {spent} more");
    assert_eq!(spent, 0.0, "recorded queries were answered afresh and charged: {spent}");
}

/// Records every reply frame (encoded, with delimiter) by its sequence number.
struct ReplyRecorder {
    inner: Dev,
    frames: HashMap<u32, Vec<u8>>,
}
impl Tap for ReplyRecorder {
    fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
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
        learner.extend(reply);
        Ok(())
    }
}

/// The attacker: forwards to the real device, but first injects the recorded frame with the
/// outgoing frame's sequence number.
struct Mitm {
    inner: Dev,
    recorded: HashMap<u32, Vec<u8>>,
}
impl Tap for Mitm {
    fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
        let mut r = StreamReader::new();
        for &b in bytes {
            if let Some(Ok(f)) = r.push(b)
                && let Some(old) = self.recorded.get(&f.seq())
            {
                learner.extend(old);
            }
        }
        learner.extend(device_answer(&mut self.inner, bytes)?);
        Ok(())
    }
}

/// Fails on 3b3f520 (review2 finding 1): the victim takes 20 reports, all session A's, and the
/// device spends nothing for them. Passes since wire format 4.
#[test]
fn a_replayed_old_session_hello_lets_no_old_report_into_a_new_learner() {
    let eps = eps();
    // Session A: a learner plays 20 rounds; the attacker records the link.
    let dev = boot(MemoryStore::provisioned([4; 32]));
    let auth = dev.auth();
    let mut rec = WireClient::new(Tapped::new(ReplyRecorder { inner: dev, frames: HashMap::new() }), auth);
    let first_hello = rec.hello().unwrap();
    let old: Vec<f64> =
        (0..20).map(|t| rec.query(t, t % 100, eps, None).unwrap().unwrap().release.value()).collect();
    let link = rec.into_link().into_inner();
    let recorded = link.frames;
    // The device reboots (session B).
    let store = *link.inner.app().reporter().accountant().store();
    let dev_b = boot(store);
    let session_b = dev_b.app().reporter().accountant().boot();
    assert_ne!(session_b, first_hello.session);
    let spent_before = dev_b.app().reporter().accountant().spent();
    // A new learner (a new job / process) asks device B, for *another* action every round.
    let mut victim = WireClient::new(Tapped::new(Mitm { inner: dev_b, recorded }), auth);
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

/// Review item 2: the learner keeps the highest session (boot number) it saw from a device and
/// refuses a hello of a lower one: a device whose state was rolled back to an earlier boot (or
/// a recorded hello) is not talked to, and the refusal is counted.
#[test]
fn a_session_that_went_back_is_refused() {
    let first = boot(MemoryStore::provisioned([6; 32]));
    let auth = first.auth();
    let saved = *first.app().reporter().accountant().store(); // the state of boot 1
    let second = boot(saved); // boot 2
    let mut c = client(second, auth, 2);
    let session = c.hello().unwrap().session;
    assert_eq!(c.highest_session(), session);
    // The device's state is rolled back to what it was before boot 2: it boots as boot 2 again
    // at most; a store from boot 1's time, opened anew, says a session no later than 2.
    let rolled_back = boot(MemoryStore::provisioned([6; 32])); // boot 1 again
    assert!(rolled_back.app().reporter().accountant().boot() < session);
    c.replace_link(rolled_back);
    let e = c.query(0, 1, eps(), None).unwrap_err();
    assert!(c.dropped.replayed >= 1, "{e}: {:?}", c.dropped);
    // A new client that was told the highest session (persisted) refuses it as well.
    let mut fresh = client(boot(MemoryStore::provisioned([6; 32])), auth, 3).sessions_from(session);
    assert!(fresh.hello().is_err());
    assert!(fresh.dropped.replayed >= 1);
}

/// The device's link with a replayer in it: before every `every`-th query frame the learner
/// sends (resends included), it sends the device `recorded` (a hello request recorded earlier)
/// and passes the device's answer to it on to the learner, as a shared link does. With
/// `swallow_hellos` it also drops the learner's own hello requests, sending the recorded one in
/// their place.
struct HelloReplayer {
    inner: Dev,
    inbound: VecDeque<u8>,
    recorded: Vec<u8>,
    every: u32,
    queries: u32,
    swallow_hellos: bool,
    replays: u32,
}

impl HelloReplayer {
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

impl Link for HelloReplayer {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let ty = msg_type(bytes);
        if ty == Some(QUERY) {
            self.queries += 1;
            if self.queries.is_multiple_of(self.every) {
                self.replays += 1;
                self.pass(&self.recorded.clone())?;
            }
        }
        if ty == Some(HELLO_REQUEST) && self.swallow_hellos {
            self.replays += 1;
            return self.pass(&self.recorded.clone());
        }
        self.pass(bytes)
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// A hello request of an earlier learner numbered `last + 1`, and the device (the same boot)
/// after it.
fn recorded_hello(dev: Dev, last: u32) -> (Vec<u8>, Dev) {
    let auth = dev.auth();
    let mut c = client(Recorder::new(dev), auth, 77).starting_after(last);
    c.hello().unwrap();
    let link = c.into_link();
    (link.hellos()[0].clone(), link.into_inner().inner)
}

/// A learner's client (its nonces from `nonce_seed`) on the device of key material `seed`,
/// through a replayer who sends the device, before every `every`-th query, a hello request of an
/// earlier learner of this boot; and what the device had spent before.
fn replayed_every(every: u32, seed: [u8; 32], nonce_seed: u64) -> (WireClient<HelloReplayer>, f64) {
    let (recorded, dev) = recorded_hello(boot(MemoryStore::provisioned(seed)), 0);
    let auth = dev.auth();
    let before = spent(&dev);
    (client(HelloReplayer::new(dev, recorded, every), auth, nonce_seed), before)
}

/// Failed on wire format 4: a recorded hello request numbered `u32::MAX`, replayed, raised the
/// boot's freshness floor to `u32::MAX`, and a learner greeting the device afterwards was told
/// to number after it: its queries (wrapped to 0, 1, …) were refused as stale until the device
/// restarted. In wire format 5 the number is the floor of the replayer's own conversation only.
#[test]
fn a_replayed_hello_request_numbered_u32_max_leaves_the_next_learner_its_numbers() {
    let (recorded, dev) = recorded_hello(boot(MemoryStore::provisioned([1; 32])), u32::MAX - 1);
    let auth = dev.auth();
    let mut link = HelloReplayer::new(dev, recorded.clone(), u32::MAX);
    link.pass(&recorded).unwrap(); // the replay, before the learner comes
    link.inbound.clear();
    let mut c = client(link, auth, 2);
    let eps = eps();
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
    let (mut c, before) = replayed_every(3, [2; 32], 3);
    let eps = eps();
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
        recorded: Vec<u8>,
        queries: u32,
    }
    impl Tap for LoseThenReplay {
        fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
            let lose = msg_type(bytes) == Some(QUERY) && {
                self.queries += 1;
                self.queries == 5
            };
            self.inner.send(bytes)?;
            while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
                if !lose {
                    learner.push_back(b);
                }
            }
            if lose {
                self.inner.send(&self.recorded.clone())?;
                while self.inner.recv_byte(Duration::ZERO)?.is_some() {}
            }
            Ok(())
        }
    }
    let (recorded, dev) = recorded_hello(boot(MemoryStore::provisioned([7; 32])), 0);
    let auth = dev.auth();
    let before = spent(&dev);
    let link = Tapped::new(LoseThenReplay { inner: dev, recorded, queries: 0 });
    let mut c = client(link, auth, 8);
    let eps = eps();
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
    let (mut c, before) = replayed_every(1, [3; 32], 4);
    let e = c.query(0, 1, eps(), None).unwrap_err();
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
    let mut link = HelloReplayer::new(dev, recorded, u32::MAX);
    link.swallow_hellos = true;
    let mut c = client(link, auth, 5);
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
