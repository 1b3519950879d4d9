//! A device and a learner talking through the wire format: handshake, reports, retries without
//! a second spend, and one refusal per way a query can fail.

use ldp_core::wire::{
    self, Auth, DecodeError, DeviceStorageError, Frame, LinkKey, MAX_ENCODED_LEN, MAX_FRAME_LEN, Message,
    Refusal, ReplyCache, Repr, StreamReader,
};
use ldp_core::{
    Bound, BudgetError, BudgetPolicy, DeviceConfig, DeviceState, Epsilon, MemoryStore, ParamError,
    ReleaseError, ReportError, Reporter, StateError, StateStore, TruncationLevel,
};

const DEVICE_ID: u64 = 0xC0FF_EE00_D15E_A5E5;

/// Both ends' authentication: the key of seed material `[7; 32]`, the device's id, boot 1.
fn auth() -> Auth {
    Auth { session: 1, ..Auth::new(LinkKey::from_seed(&[7; 32]), DEVICE_ID) }
}

std::thread_local! {
    /// What the learner authenticates the device's replies under, one per request the device
    /// received, in order: `auth()` answering the request's tag (under a hello request's own
    /// nonce for a hello, under the open conversation's nonce and number otherwise). Set by
    /// [`Device::receive`], used by [`learner_read`].
    static EXPECT: std::cell::RefCell<std::collections::VecDeque<Auth>> = Default::default();
    /// The device's open conversation (nonce, number), as its last hello told the learner: what
    /// [`framed`] tags a query under. Set by [`Device::receive`].
    static OPEN: std::cell::Cell<([u8; 16], u32)> = const { std::cell::Cell::new(([0; 16], 0)) };
}

/// `auth()` in the open conversation: what the learner's queries are tagged under.
fn learner() -> Auth {
    let (nonce, conversation) = OPEN.with(|o| o.get());
    Auth { nonce, conversation, ..auth() }
}

/// The firmware's side, minus the UART: bytes in, bytes out.
struct Device {
    reporter: Reporter<MemoryStore>,
    reader: StreamReader,
    cache: ReplyCache,
    sensor: fn(u32) -> f64,
}

impl Device {
    fn new(per_report: f64, total: f64) -> Self {
        let policy =
            BudgetPolicy::new(Epsilon::new(per_report).unwrap(), Epsilon::new(total).unwrap()).unwrap();
        let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(0.5).unwrap(), policy };
        let reporter = Reporter::open(config, MemoryStore::provisioned([7; 32]), [0; 32]).unwrap();
        Self {
            reporter,
            reader: StreamReader::new(),
            cache: ReplyCache::new(),
            sensor: |a| 0.25 * f64::from(a),
        }
    }

    fn receive(&mut self, bytes: &[u8]) -> Vec<u8> {
        EXPECT.with(|e| e.borrow_mut().clear()); // replies of an earlier call are not read
        let mut out = Vec::new();
        for &b in bytes {
            let Some(Ok(frame)) = self.reader.push(b) else { continue };
            let (reporter, sensor) = (&mut self.reporter, self.sensor);
            let hello = reporter.hello(DEVICE_ID);
            let reply = self.cache.respond(&frame, &auth(), hello, |q, fed| match fed {
                None => reporter.answer(q, sensor(q.action)),
                Some(_) => Message::Refusal(Refusal::FeedRefused),
            });
            let hello_request = Repr::parse(&frame, &auth()).ok().map(|r| r.message);
            let expect = match (hello_request, reply.repr.message) {
                (Some(Message::HelloRequest(nonce)), Message::Hello(h)) => {
                    OPEN.with(|o| o.set((nonce, h.conversation)));
                    Auth { nonce, ..auth() }
                }
                _ => learner(),
            };
            EXPECT.with(|e| e.borrow_mut().push_back(expect.answering(frame.tag())));
            let mut buf = [0u8; MAX_ENCODED_LEN];
            out.extend_from_slice(reply.emit_framed(&mut buf).unwrap());
        }
        out
    }

    fn spent(&self) -> f64 {
        self.reporter.accountant().spent()
    }
}

/// `repr` framed as the learner sends it, in the open conversation.
fn framed(repr: Repr) -> Vec<u8> {
    let mut buf = [0u8; MAX_ENCODED_LEN];
    repr.emit_framed(&mut buf, &learner()).unwrap().to_vec()
}

/// COBS-frames raw bytes with a fixed-up tag and checksum (a frame this crate would never
/// emit, from a sender that has the key).
fn framed_raw(mut raw: Vec<u8>) -> Vec<u8> {
    let n = raw.len() - 4;
    let session = if matches!(raw[1], 0x01 | 0x81) { 0 } else { auth().session };
    let tag = learner().tag(session, &raw[..n - wire::TAG_LEN]);
    raw[n - wire::TAG_LEN..n].copy_from_slice(&tag);
    checksummed_and_framed(raw)
}

/// COBS-frames raw bytes with a fixed-up checksum (their last four bytes).
fn checksummed_and_framed(mut raw: Vec<u8>) -> Vec<u8> {
    let n = raw.len() - 4;
    let crc = wire::checksum(&raw[..n]);
    raw[n..].copy_from_slice(&crc.to_le_bytes());
    let mut buf = [0u8; MAX_ENCODED_LEN + 8];
    let len = cobs::encode(&raw, &mut buf);
    let mut out = buf[..len].to_vec();
    out.push(0);
    out
}

fn learner_read(bytes: &[u8]) -> Vec<Repr> {
    let mut reader = StreamReader::new();
    bytes
        .iter()
        .filter_map(|&b| {
            let frame = reader.push(b)?.unwrap();
            let expect = EXPECT.with(|e| e.borrow_mut().pop_front()).expect("a reply per request");
            Some(Repr::parse(&frame, &expect).unwrap())
        })
        .collect()
}

fn query(seq: u32, action: u32, epsilon: f64, level: Option<f64>) -> Repr {
    Repr::new(
        seq,
        Message::Query(wire::Query {
            round: seq,
            action,
            epsilon: Epsilon::new(epsilon).unwrap(),
            level: level.map(|b| TruncationLevel::new(b).unwrap()),
        }),
    )
}

fn refusal_of(replies: &[Repr]) -> Refusal {
    match replies {
        [Repr { message: Message::Refusal(r), .. }] => *r,
        other => panic!("expected one refusal, got {other:?}"),
    }
}

#[test]
fn handshake_reports_the_public_configuration() {
    let mut dev = Device::new(1.0, 10.0);
    let replies = learner_read(&dev.receive(&framed(Repr::new(9, Message::HelloRequest([0; 16])))));
    let [Repr { seq: 9, message: Message::Hello(hello) }] = replies[..] else { panic!("{replies:?}") };
    assert_eq!(hello.device_id, DEVICE_ID);
    assert_eq!(hello.config, *dev.reporter.config());
    assert_eq!(hello.budget_remaining, 10.0);
    assert_eq!(dev.spent(), 0.0);
}

#[test]
fn a_query_gets_a_report_and_a_retry_gets_the_same_bytes_without_a_second_spend() {
    let mut dev = Device::new(1.0, 10.0);
    let q = framed(query(1, 2, 0.5, None));
    let first = dev.receive(&q);
    assert_eq!(dev.spent(), 0.5);
    let replies = learner_read(&first);
    let [Repr { seq: 1, message: Message::Report(report) }] = replies[..] else { panic!("{replies:?}") };
    assert_eq!(report.epsilon, 0.5);
    assert!(report.epsilon_effective <= 0.5);
    assert_eq!(report.budget_remaining, 9.5);

    // The reply was lost; the learner resends the very same frame, twice.
    assert_eq!(dev.receive(&q), first);
    assert_eq!(dev.receive(&q), first);
    assert_eq!(dev.spent(), 0.5);

    // A new sequence number is a new query, even if it asks the same.
    let again = learner_read(&dev.receive(&framed(query(2, 2, 0.5, None))));
    assert!(matches!(again[..], [Repr { seq: 2, message: Message::Report(_) }]));
    assert_eq!(dev.spent(), 1.0);

    // A reused number with a different query is a replay (or a learner that lost count): refused,
    // nothing spent. The learner's hello tells it where to continue.
    let stale = learner_read(&dev.receive(&framed(query(2, 3, 0.25, Some(1.0)))));
    assert_eq!(stale, [Repr::new(2, Message::Refusal(Refusal::StaleSequence))]);
    assert_eq!(dev.spent(), 1.0);
    let other_bytes = dev.receive(&framed(query(4, 3, 0.25, Some(1.0))));
    let other = learner_read(&other_bytes);
    let [Repr { seq: 4, message: Message::Report(r) }] = other[..] else { panic!("{other:?}") };
    assert_eq!(r.epsilon, 0.25);
    assert_eq!(dev.spent(), 1.25);

    // The last REPLY_CACHE_LEN replies are kept: a late duplicate of an older query is still
    // answered from the cache, without a spend…
    assert_eq!(dev.receive(&q), first);
    assert_eq!(dev.spent(), 1.25);
    // …until REPLY_CACHE_LEN newer queries have pushed it out; then it is a new query.
    for seq in 10..10 + wire::REPLY_CACHE_LEN as u32 {
        let _ = dev.receive(&framed(query(seq, 1, 0.125, None)));
    }
    assert_eq!(dev.spent(), 2.25);
    // A replay of it is refused: a recorded query is never spent twice.
    assert_eq!(learner_read(&dev.receive(&q)), [Repr::new(1, Message::Refusal(Refusal::StaleSequence))]);
    assert_eq!(dev.spent(), 2.25);
}

/// A query with a forged tag, with another key, another device's id, or from an earlier boot
/// (session) is refused as unauthenticated: nothing read, nothing spent (issue #25).
#[test]
fn unauthenticated_queries_spend_nothing() {
    let mut dev = Device::new(1.0, 10.0);
    dev.sensor = |_| panic!("an unauthenticated query must not read the sensor");
    let emit = |auth: &Auth, seq| {
        let mut buf = [0u8; MAX_ENCODED_LEN];
        query(seq, 1, 0.5, None).emit_framed(&mut buf, auth).unwrap().to_vec()
    };
    let others = [
        Auth { key: LinkKey::from_seed(&[8; 32]), ..auth() },
        Auth { device_id: DEVICE_ID + 1, ..auth() },
        Auth { session: 0, ..auth() },
        Auth { session: 2, ..auth() },
    ];
    for (i, other) in others.iter().enumerate() {
        let replies = learner_read(&dev.receive(&emit(other, 10 + i as u32)));
        assert_eq!(replies, [Repr::new(10 + i as u32, Message::Refusal(Refusal::Unauthenticated))]);
    }
    // A tag with one bit flipped (checksum fixed up).
    let mut buf = [0u8; MAX_FRAME_LEN];
    let mut raw = query(20, 1, 0.5, None).emit(&mut buf, &auth()).unwrap().to_vec();
    let n = raw.len();
    raw[n - 5] ^= 1;
    let bytes = checksummed_and_framed(raw);
    assert_eq!(
        learner_read(&dev.receive(&bytes)),
        [Repr::new(20, Message::Refusal(Refusal::Unauthenticated))]
    );
    assert_eq!(dev.spent(), 0.0);
}

/// The frame in `bytes` (COBS-framed), unstuffed.
fn frame_of(bytes: &[u8]) -> Vec<u8> {
    let mut r = StreamReader::new();
    bytes.iter().find_map(|&x| r.push(x).map(|f| f.unwrap().as_bytes().to_vec())).unwrap()
}

/// The tag of the frame in `bytes`.
fn tag_of(bytes: &[u8]) -> Vec<u8> {
    Frame::new_checked(&frame_of(bytes)[..]).unwrap().tag().to_vec()
}

/// `repr` framed under `auth`.
fn emit(auth: &Auth, repr: Repr) -> Vec<u8> {
    let mut buf = [0u8; MAX_ENCODED_LEN];
    repr.emit_framed(&mut buf, auth).unwrap().to_vec()
}

/// Whether `reply` is the device's refusal 12 of the request `sent`, tagged as a refusal of a
/// frame it could not verify: under the all-zero nonce and conversation 0 (boot 1).
fn refused_unverified(reply: &[u8], sent: &[u8]) -> bool {
    let unverified = Auth { session: 1, ..Auth::new(auth().key, DEVICE_ID) }.answering(&tag_of(sent));
    matches!(
        Repr::from_bytes(&frame_of(reply), &unverified),
        Ok(Repr { message: Message::Refusal(Refusal::Unauthenticated), .. })
    )
}

/// The device's answer to `sent`, if it is its refusal 13 in the conversation `(nonce,
/// number)`: the open conversation is frozen (or the number stale), nothing read or spent.
fn refused_stale(reply: &[u8], sent: &[u8], nonce: [u8; 16], number: u32) -> bool {
    let open = Auth { nonce, conversation: number, ..auth() }.answering(&tag_of(sent));
    matches!(
        Repr::from_bytes(&frame_of(reply), &open),
        Ok(Repr { message: Message::Refusal(Refusal::StaleSequence), .. })
    )
}

/// The hello answering the hello request `seq` with `nonce`, read by the learner.
fn hello(dev: &mut Device, seq: u32, nonce: [u8; 16]) -> wire::Hello {
    match learner_read(&dev.receive(&framed(Repr::new(seq, Message::HelloRequest(nonce)))))[..] {
        [Repr { message: Message::Hello(h), .. }] => h,
        ref other => panic!("{other:?}"),
    }
}

/// Whether the learner's query `seq` (in the conversation the last hello told it) is answered
/// with a report.
fn reported(dev: &mut Device, seq: u32) -> bool {
    let replies = learner_read(&dev.receive(&framed(query(seq, 1, 0.5, None))));
    matches!(replies[..], [Repr { message: Message::Report(_), .. }])
}

/// Wire format 5: a hello request offers a conversation, numbered by the device (1, 2, …), and
/// the learner's first query under the offer opens it, with the request's number as its floor.
/// A hello request with the nonce of the open conversation or of the offer (a retry) changes
/// nothing, not even the reply cache. One with a new nonce makes a new offer and freezes the
/// open conversation: its fresh queries are refused (13), its retries still answered from the
/// cache, nothing spent twice.
#[test]
fn a_hello_request_offers_a_conversation_and_the_first_query_opens_it() {
    let mut dev = Device::new(1.0, 10.0);
    let h = hello(&mut dev, 3, [0xA1; 16]);
    assert_eq!((h.session, h.conversation), (1, 1));
    assert_eq!(dev.cache.conversation(), 0, "offered, not yet open");
    // The first query opens it; numbered after the hello request (3 is the floor).
    assert_eq!(
        learner_read(&dev.receive(&framed(query(3, 1, 0.5, None)))),
        [Repr::new(3, Message::Refusal(Refusal::StaleSequence))]
    );
    assert_eq!(dev.cache.conversation(), 1);
    let q = framed(query(4, 1, 0.5, None));
    let first = dev.receive(&q);
    assert!(matches!(learner_read(&first)[..], [Repr { seq: 4, message: Message::Report(_) }]));
    assert_eq!(dev.spent(), 0.5);
    // The learner's hello request again (a retry, or a copy on the link): the same conversation,
    // and the cache still answers the retried query without a spend.
    assert_eq!(hello(&mut dev, 3, [0xA1; 16]).conversation, 1);
    assert_eq!(dev.receive(&q), first);
    assert!(reported(&mut dev, 5));
    assert_eq!(dev.spent(), 1.0);
    // A new nonce: offer 2, conversation 1 frozen. A retry of it still gets its reply; a fresh
    // query of it is refused, nothing read or spent.
    let under_1 = Auth { nonce: [0xA1; 16], conversation: 1, ..auth() };
    assert_eq!(hello(&mut dev, 2, [0xB2; 16]).conversation, 2);
    assert_eq!(hello(&mut dev, 2, [0xB2; 16]).conversation, 2, "a retry of the offer's hello");
    assert_eq!(dev.receive(&q), first);
    dev.sensor = |_| panic!("a frozen conversation must not read the sensor");
    let fresh = emit(&under_1, query(6, 1, 0.5, None));
    assert!(refused_stale(&dev.receive(&fresh), &fresh, [0xA1; 16], 1));
    assert_eq!(dev.spent(), 1.0);
    // The offer's first query opens conversation 2 (numbered after its hello request, 2).
    dev.sensor = |a| 0.25 * f64::from(a);
    assert!(reported(&mut dev, 3));
    assert_eq!((dev.cache.conversation(), dev.spent()), (2, 1.5));
    // Conversation 1 is over: its retry is now refused as not of the open conversation.
    assert!(refused_unverified(&dev.receive(&q), &q));
    assert_eq!(dev.spent(), 1.5);
}

/// Wire format 4, kept in 5: a conversation is its learner's. A query tagged under another
/// nonce or number (an earlier learner's, or none) is refused as unauthenticated, nothing read
/// or spent, and the device's replies verify only under the conversation's nonce and number and
/// only as the answer to the very request they answer.
#[test]
fn a_conversation_is_bound_to_its_nonce_and_number() {
    let mut dev = Device::new(1.0, 10.0);
    let (a, b) = ([0xA1; 16], [0xB2; 16]);
    // Learner A greets (offer 1), asks once (opening it).
    let _ = dev.receive(&emit(&auth(), Repr::new(1, Message::HelloRequest(a))));
    let under_a = Auth { nonce: a, conversation: 1, ..auth() };
    let a_bytes = dev.receive(&emit(&under_a, query(2, 1, 0.5, None)));
    let a_replies = learner_read(&a_bytes);
    assert!(matches!(a_replies[..], [Repr { seq: 2, message: Message::Report(_) }]), "{a_replies:?}");
    // The reply does not verify under another nonce or number, nor as the answer to another
    // query.
    let a_reply = frame_of(&a_bytes);
    let a_query_tag = tag_of(&emit(&under_a, query(2, 1, 0.5, None)));
    assert!(Repr::from_bytes(&a_reply, &under_a.answering(&a_query_tag)).is_ok());
    let other_tag = tag_of(&emit(&under_a, query(2, 0, 0.5, None)));
    assert_eq!(Repr::from_bytes(&a_reply, &under_a.answering(&other_tag)), Err(DecodeError::Unauthenticated));
    for other in [Auth { nonce: b, ..under_a }, Auth { conversation: 2, ..under_a }] {
        assert_eq!(
            Repr::from_bytes(&a_reply, &other.answering(&a_query_tag)),
            Err(DecodeError::Unauthenticated)
        );
    }
    // Learner B greets (offer 2) and asks (opening it): A's conversation is over. A query under
    // A's nonce and number, under B's nonce with A's number, or under none, spends nothing.
    let _ = dev.receive(&emit(&auth(), Repr::new(3, Message::HelloRequest(b))));
    let _ = dev.receive(&emit(&Auth { nonce: b, conversation: 2, ..auth() }, query(4, 1, 0.5, None)));
    assert_eq!(dev.spent(), 1.0);
    dev.sensor = |_| panic!("a query of a finished conversation must not read the sensor");
    let stale = [under_a, Auth { nonce: b, ..under_a }, auth()];
    for (seq, stale) in (5..).zip(stale) {
        let sent = emit(&stale, query(seq, 1, 0.5, None));
        let bytes = dev.receive(&sent);
        // Refused before its tag verified: under the all-zero nonce and conversation 0.
        assert!(refused_unverified(&bytes, &sent), "{stale:?}");
        for (nonce, conversation) in [(a, 1), (b, 2)] {
            let open = Auth { nonce, conversation, ..auth() }.answering(&tag_of(&sent));
            assert_eq!(Repr::from_bytes(&frame_of(&bytes), &open), Err(DecodeError::Unauthenticated));
        }
    }
    assert_eq!(dev.spent(), 1.0);
}

/// Wire format 5 (issue #25): a recorded hello request opens no conversation and moves no
/// floor. Replayed before a learner comes — numbered `u32::MAX`, which in wire format 4 raised the
/// boot's one floor there so that no query was fresh until the device restarted — it leaves the
/// learner all its numbers. Replayed in the middle of a conversation it freezes it: the
/// learner's next fresh query is refused (nothing spent) and the learner greets again, while a
/// retry of a query whose reply was lost still gets that reply (nothing spent twice). A query
/// the link withheld from a learner is dead once the learner has greeted the device again.
#[test]
fn a_replayed_hello_request_opens_nothing_and_costs_at_most_a_new_hello() {
    let mut dev = Device::new(1.0, 10.0);
    let recorded = emit(&auth(), Repr::new(u32::MAX, Message::HelloRequest([0xEE; 16])));
    let _ = dev.receive(&recorded); // an offer no one takes
    // The learner greets at 1 and asks at 2: answered.
    let _ = hello(&mut dev, 1, [0xA1; 16]);
    assert!(reported(&mut dev, 2));
    let lost = framed(query(3, 1, 0.5, None));
    let answer = dev.receive(&lost); // answered, charged, and lost on the way back
    assert_eq!(dev.spent(), 1.0);
    // The replay again, now inside the conversation.
    let _ = dev.receive(&recorded);
    assert_eq!(dev.cache.conversation(), 2, "nothing opened");
    // The learner resends the query whose reply was lost: the same reply, no second spend.
    assert_eq!(dev.receive(&lost), answer);
    // Its next fresh query is refused, nothing read or spent.
    dev.sensor = |_| panic!("a query of a frozen conversation must not read the sensor");
    let sent = emit(&Auth { nonce: [0xA1; 16], conversation: 2, ..auth() }, query(4, 1, 0.5, None));
    assert!(refused_stale(&dev.receive(&sent), &sent, [0xA1; 16], 2));
    assert_eq!(dev.spent(), 1.0);
    // The learner greets again and asks afresh.
    dev.sensor = |a| 0.25 * f64::from(a);
    let _ = hello(&mut dev, 5, [0xA2; 16]);
    assert!(reported(&mut dev, 6));
    // Query 7 is withheld; the learner gives up on it and greets again (closing hello, 8).
    let withheld = framed(query(7, 1, 0.5, None));
    let _ = hello(&mut dev, 8, [0xA3; 16]);
    dev.sensor = |_| panic!("a withheld query must not read the sensor");
    let stale = dev.receive(&withheld);
    assert!(refused_stale(&stale, &withheld, [0xA2; 16], 4));
    assert_eq!(dev.spent(), 1.5);
}

/// Wire format 5: a recorded conversation replayed whole — its hello request, then its queries —
/// spends nothing, whether its learner's conversation is still the open one (its hello request
/// is then a retry, its queries retries or stale) or another learner's is (its hello request
/// then makes an offer under a new number, which none of its recorded queries carries).
/// Without the number in the tag, the offer would take them, its floor being the recorded
/// hello request's.
#[test]
fn a_recorded_conversation_replayed_whole_spends_nothing() {
    let mut dev = Device::new(1.0, 100.0);
    let mut recorded = vec![emit(&auth(), Repr::new(1, Message::HelloRequest([0xA1; 16])))];
    let _ = dev.receive(&recorded[0]);
    let under_a = Auth { nonce: [0xA1; 16], conversation: 1, ..auth() };
    for seq in 2..14 {
        recorded.push(emit(&under_a, query(seq, 1, 0.5, None)));
        let _ = dev.receive(recorded.last().unwrap());
    }
    assert_eq!(dev.spent(), 6.0);
    dev.sensor = |_| panic!("a recorded query must not read the sensor");
    for frame in &recorded {
        let _ = dev.receive(frame);
    }
    assert_eq!(dev.spent(), 6.0);
    // Another learner's conversation, then the replay.
    dev.sensor = |a| 0.25 * f64::from(a);
    let _ = dev.receive(&emit(&auth(), Repr::new(1, Message::HelloRequest([0xB2; 16]))));
    let _ =
        dev.receive(&emit(&Auth { nonce: [0xB2; 16], conversation: 2, ..auth() }, query(2, 1, 0.5, None)));
    assert_eq!((dev.cache.conversation(), dev.spent()), (2, 6.5));
    dev.sensor = |_| panic!("a recorded query must not read the sensor");
    for frame in &recorded {
        let _ = dev.receive(frame);
    }
    assert_eq!(dev.spent(), 6.5);
}

/// Offers are numbered 1, 2, 3, … in the order of their hello requests, a nonce seen before
/// included (it makes a new offer unless it is the open conversation's or the offer's): no
/// number repeats within a boot. (That the count stops at `u32::MAX` instead of wrapping is a
/// unit test of `ReplyCache`.)
#[test]
fn conversations_are_numbered_in_order_and_never_repeat() {
    let mut dev = Device::new(1.0, 10.0);
    for (i, nonce) in [[1; 16], [2; 16], [1; 16], [3; 16]].into_iter().enumerate() {
        assert_eq!(hello(&mut dev, i as u32, nonce).conversation, i as u32 + 1);
    }
    assert!(reported(&mut dev, 4));
    assert_eq!(dev.cache.conversation(), 4);
}

#[test]
fn every_refused_report_maps_to_its_refusal() {
    // ε weaker than the device's limit.
    let mut dev = Device::new(1.0, 1.5);
    let r = refusal_of(&learner_read(&dev.receive(&framed(query(1, 0, 2.0, None)))));
    assert_eq!(r, Refusal::AboveDeviceLimit { requested: 2.0, limit: 1.0 });

    // ε too small for the sampler ("below" what the device can release).
    let r = refusal_of(&learner_read(&dev.receive(&framed(query(2, 0, 1e-300, None)))));
    assert_eq!(r, Refusal::Param(ParamError::EpsilonTooSmall));

    // Budget exhausted.
    let _ = dev.receive(&framed(query(3, 0, 1.0, None)));
    let r = refusal_of(&learner_read(&dev.receive(&framed(query(4, 0, 1.0, None)))));
    assert_eq!(r, Refusal::BudgetExhausted { requested: 1.0, remaining: 0.5 });
    assert_eq!(dev.spent(), 1.0);

    // ε below the device's floor (1/1024 of its limit).
    let mut dev = Device::new(1.0, 10.0);
    let r = refusal_of(&learner_read(&dev.receive(&framed(query(1, 0, 1e-4, None)))));
    assert_eq!(r, Refusal::BelowDeviceFloor { requested: 1e-4, floor: 1.0 / 1024.0 });
    assert_eq!(dev.spent(), 0.0);

    // A faulty sensor is not refused (that would be a free probe of the reading): the report is
    // charged, and its bytes are those of a reading of 0.
    let mut faulty = Device::new(1.0, 10.0);
    faulty.sensor = |_| f64::NAN;
    let mut zero = Device::new(1.0, 10.0);
    zero.sensor = |_| 0.0;
    let q = framed(query(1, 0, 1.0, None));
    assert_eq!(faulty.receive(&q), zero.receive(&q));
    assert_eq!(faulty.spent(), 1.0);
}

#[test]
fn intact_frames_that_do_not_parse_are_refused_with_their_sequence_number() {
    let mut dev = Device::new(1.0, 10.0);
    let mut buf = [0u8; MAX_FRAME_LEN];
    let raw = query(77, 1, 0.5, None).emit(&mut buf, &auth()).unwrap().to_vec();

    // A NaN ε in an otherwise valid query.
    let mut bad = raw.clone();
    bad[14..22].copy_from_slice(&f64::NAN.to_bits().to_le_bytes());
    let replies = learner_read(&dev.receive(&framed_raw(bad)));
    assert_eq!(replies, [Repr::new(77, Message::Refusal(Refusal::Param(ParamError::EpsilonNotFinite)))]);

    // A negative truncation level.
    let mut bad = raw.clone();
    bad[22..30].copy_from_slice(&(-1.0f64).to_bits().to_le_bytes());
    let replies = learner_read(&dev.receive(&framed_raw(bad)));
    assert_eq!(replies, [Repr::new(77, Message::Refusal(Refusal::Param(ParamError::TruncationNotPositive)))]);

    // A future protocol version: the refusal goes out in the device's version.
    let mut bad = raw.clone();
    bad[0] = wire::VERSION + 1;
    let out = dev.receive(&framed_raw(bad));
    assert_eq!(learner_read(&out), [Repr::new(77, Message::Refusal(Refusal::UnsupportedVersion))]);

    // An unknown type, and a wrong length.
    let mut bad = raw.clone();
    bad[1] = 0x7F;
    assert_eq!(refusal_of(&learner_read(&dev.receive(&framed_raw(bad)))), Refusal::Malformed);
    let mut bad = raw.clone();
    bad.insert(6, 0xAA);
    assert_eq!(refusal_of(&learner_read(&dev.receive(&framed_raw(bad)))), Refusal::Malformed);

    // A message only a device sends.
    let report = Repr::new(5, Message::Refusal(Refusal::Malformed));
    assert_eq!(refusal_of(&learner_read(&dev.receive(&framed(report)))), Refusal::Unexpected);
    assert_eq!(dev.spent(), 0.0);

    // Corrupted frames (bad checksum) are not answered at all.
    let mut bad = framed(query(78, 1, 0.5, None));
    bad[10] ^= 0x40;
    assert!(dev.receive(&bad).is_empty());
    assert_eq!(dev.spent(), 0.0);
}

#[test]
fn decode_errors_are_checked_in_order() {
    let mut buf = [0u8; MAX_FRAME_LEN];
    let raw = query(1, 1, 0.5, None).emit(&mut buf, &auth()).unwrap().to_vec();
    assert_eq!(Frame::new_checked(&raw[..9]), Err(DecodeError::Truncated));
    assert_eq!(Frame::new_checked(&[0u8; MAX_FRAME_LEN + 1][..]), Err(DecodeError::Overlong));
    let mut bad = raw.clone();
    bad[0] = wire::VERSION + 1;
    assert_eq!(Frame::new_checked(&bad[..]), Err(DecodeError::Checksum));
    let fix_crc = |mut b: Vec<u8>| {
        let n = b.len() - 4;
        let crc = wire::checksum(&b[..n]);
        b[n..].copy_from_slice(&crc.to_le_bytes());
        b
    };
    let fix = |mut b: Vec<u8>| {
        let n = b.len() - 4;
        let tag = auth().tag(auth().session, &b[..n - wire::TAG_LEN]);
        b[n - wire::TAG_LEN..n].copy_from_slice(&tag);
        Repr::from_bytes(&fix_crc(b), &auth())
    };
    // Intact and of the right length, but the tag does not verify: nothing else is looked at.
    let mut forged = raw.clone();
    forged[14..22].copy_from_slice(&0.0f64.to_bits().to_le_bytes());
    assert_eq!(Repr::from_bytes(&fix_crc(forged), &auth()), Err(DecodeError::Unauthenticated));
    assert_eq!(fix(bad), Err(DecodeError::UnsupportedVersion));
    let mut bad = raw.clone();
    bad[1] = 0x04;
    assert_eq!(fix(bad), Err(DecodeError::UnknownType));
    let mut bad = raw.clone();
    bad[1] = 0x01; // a hello request with a query's payload
    assert_eq!(fix(bad), Err(DecodeError::Length));
    let mut bad = raw;
    bad[14..22].copy_from_slice(&0.0f64.to_bits().to_le_bytes());
    assert_eq!(fix(bad), Err(DecodeError::Param(ParamError::EpsilonNotPositive)));
}

#[test]
fn refusals_map_to_and_from_report_errors() {
    type E = ReportError<DeviceStorageError>;
    let cases: [(E, Refusal); 7] = [
        (ReportError::Param(ParamError::EpsilonTooSmall), Refusal::Param(ParamError::EpsilonTooSmall)),
        (ReportError::Release(ReleaseError::NonFiniteReward), Refusal::NonFiniteReward),
        (
            ReportError::Budget(BudgetError::BelowDeviceFloor { requested: 1e-4, floor: 1e-3 }),
            Refusal::BelowDeviceFloor { requested: 1e-4, floor: 1e-3 },
        ),
        (
            ReportError::Budget(BudgetError::AboveDeviceLimit { requested: 3.0, limit: 1.0 }),
            Refusal::AboveDeviceLimit { requested: 3.0, limit: 1.0 },
        ),
        (
            ReportError::Budget(BudgetError::Exhausted { requested: 1.0, remaining: 0.0 }),
            Refusal::BudgetExhausted { requested: 1.0, remaining: 0.0 },
        ),
        (ReportError::Budget(BudgetError::CorruptState), Refusal::CorruptState),
        (ReportError::Budget(BudgetError::Storage(DeviceStorageError)), Refusal::StorageFailed),
    ];
    for (err, refusal) in cases {
        assert_eq!(Refusal::from(err), refusal);
        assert_eq!(E::try_from(refusal), Ok(err));
    }
    for r in [Refusal::UnsupportedVersion, Refusal::Malformed, Refusal::Unexpected] {
        assert_eq!(E::try_from(r), Err(r));
    }
    // The device's own store error is dropped on the wire.
    let e: ReportError<&str> = ReportError::Budget(BudgetError::Storage("flash"));
    assert_eq!(Refusal::from(e), Refusal::StorageFailed);
}

/// A store whose every write fails: the device fails closed and says so.
struct FlakyStore;

impl StateStore for FlakyStore {
    type Error = &'static str;
    fn load(&mut self) -> Result<DeviceState, StateError<Self::Error>> {
        Ok(DeviceState::provisioned([1; 32]))
    }
    fn save(&mut self, _: &DeviceState) -> Result<(), StateError<Self::Error>> {
        Err(StateError::Medium("flash worn out"))
    }
}

#[test]
fn a_storage_failure_is_refused_and_counted() {
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(10.0).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
    let mut reporter = Reporter::open(config, FlakyStore, [0; 32]).unwrap();
    let wire::Message::Query(q) = query(1, 0, 1.0, None).message else { unreachable!() };
    assert_eq!(reporter.answer(&q, 0.3), Message::Refusal(Refusal::StorageFailed));
    // Fail closed: the reservation it tried to write (capped at the total, 10) counts as spent.
    assert_eq!(reporter.accountant().spent(), 10.0);
}

/// Review 3, finding 1: a learner's query altered on the way (version or type byte changed,
/// checksum fixed, no key needed) is refused before its tag is verified, and that refusal is
/// tagged under the all-zero nonce: it does not verify as the answer to the learner's query
/// in its conversation, so an attacker cannot pass it off as one.
#[test]
fn a_refusal_of_an_unverified_frame_is_not_bound_to_the_conversation() {
    let mut dev = Device::new(1.0, 10.0);
    let emit = |auth: &Auth, repr: Repr| {
        let mut buf = [0u8; MAX_ENCODED_LEN];
        repr.emit_framed(&mut buf, auth).unwrap().to_vec()
    };
    let a = [0xA5; 16];
    let _ = dev.receive(&emit(&auth(), Repr::new(1, Message::HelloRequest(a))));
    let under_a = Auth { nonce: a, conversation: 1, ..auth() };
    let mut buf = [0u8; MAX_FRAME_LEN];
    let raw = query(2, 1, 0.5, None).emit(&mut buf, &under_a).unwrap().to_vec();
    let tag = Frame::new_checked(&raw[..]).unwrap().tag().to_vec();
    for (at, value, reason) in [(0, 3, Refusal::UnsupportedVersion), (1, 0x03, Refusal::Malformed)] {
        let mut bad = raw.clone();
        bad[at] = value;
        let out = dev.receive(&checksummed_and_framed(bad));
        let mut r = StreamReader::new();
        let frame = out.iter().find_map(|&x| r.push(x).map(|f| f.unwrap().as_bytes().to_vec())).unwrap();
        assert_eq!(Repr::from_bytes(&frame, &under_a.answering(&tag)), Err(DecodeError::Unauthenticated));
        let zero = Auth { nonce: [0; 16], conversation: 0, ..auth() }.answering(&tag);
        assert_eq!(Repr::from_bytes(&frame, &zero), Ok(Repr::new(2, Message::Refusal(reason))));
    }
    assert_eq!(dev.spent(), 0.0);
    let replies = learner_read(&dev.receive(&emit(&under_a, query(2, 1, 0.5, None))));
    assert!(matches!(replies[..], [Repr { seq: 2, message: Message::Report(_) }]), "{replies:?}");
}
