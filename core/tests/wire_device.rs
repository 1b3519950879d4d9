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
    /// nonce for a hello, under the last hello request's nonce otherwise). Set by
    /// [`Device::receive`], used by [`learner_read`].
    static EXPECT: std::cell::RefCell<std::collections::VecDeque<Auth>> = Default::default();
}

/// The firmware's side, minus the UART: bytes in, bytes out.
struct Device {
    reporter: Reporter<MemoryStore>,
    reader: StreamReader,
    cache: ReplyCache,
    sensor: fn(u32) -> f64,
    /// The nonce of the last hello request received (the learners' side of the test).
    nonce: [u8; 16],
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
            nonce: [0; 16],
        }
    }

    fn receive(&mut self, bytes: &[u8]) -> Vec<u8> {
        EXPECT.with(|e| e.borrow_mut().clear()); // replies of an earlier call are not read
        let mut out = Vec::new();
        for &b in bytes {
            let Some(Ok(frame)) = self.reader.push(b) else { continue };
            if let Ok(Repr { message: Message::HelloRequest(nonce), .. }) = Repr::parse(&frame, &auth()) {
                self.nonce = nonce;
            }
            let expect = Auth { nonce: self.nonce, ..auth() }.answering(frame.tag());
            EXPECT.with(|e| e.borrow_mut().push_back(expect));
            let (reporter, sensor) = (&mut self.reporter, self.sensor);
            let hello = reporter.hello(DEVICE_ID);
            let reply = self.cache.respond(&frame, &auth(), hello, |q, fed| match fed {
                None => reporter.answer(q, sensor(q.action)),
                Some(_) => Message::Refusal(Refusal::FeedRefused),
            });
            let mut buf = [0u8; MAX_ENCODED_LEN];
            out.extend_from_slice(reply.emit_framed(&mut buf).unwrap());
        }
        out
    }

    fn spent(&self) -> f64 {
        self.reporter.accountant().spent()
    }
}

fn framed(repr: Repr) -> Vec<u8> {
    let mut buf = [0u8; MAX_ENCODED_LEN];
    repr.emit_framed(&mut buf, &auth()).unwrap().to_vec()
}

/// COBS-frames raw bytes with a fixed-up tag and checksum (a frame this crate would never
/// emit, from a sender that has the key).
fn framed_raw(mut raw: Vec<u8>) -> Vec<u8> {
    let n = raw.len() - 4;
    let session = if matches!(raw[1], 0x01 | 0x81) { 0 } else { auth().session };
    let tag = auth().tag(session, &raw[..n - wire::TAG_LEN]);
    raw[n - wire::TAG_LEN..n].copy_from_slice(&tag);
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
    // (The hello request's own number is a floor for fresh queries: the learner goes on after 3.)
    let hello = learner_read(&dev.receive(&framed(Repr::new(3, Message::HelloRequest([0; 16])))));
    assert!(
        matches!(hello[..], [Repr { message: Message::Hello(h), .. }] if h.last_seq == 3 && h.session == 1)
    );
    let other_bytes = dev.receive(&framed(query(4, 3, 0.25, Some(1.0))));
    let other = learner_read(&other_bytes);
    let [Repr { seq: 4, message: Message::Report(r) }] = other[..] else { panic!("{other:?}") };
    assert_eq!(r.epsilon, 0.25);
    assert_eq!(dev.spent(), 1.25);

    // A hello in between does not disturb the cache.
    let _ = dev.receive(&framed(Repr::new(5, Message::HelloRequest([0; 16]))));
    assert_eq!(dev.receive(&framed(query(4, 3, 0.25, Some(1.0)))), other_bytes);
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
    let crc = wire::checksum(&raw[..n - 4]);
    raw[n - 4..].copy_from_slice(&crc.to_le_bytes());
    let mut stuffed = [0u8; MAX_ENCODED_LEN];
    let len = cobs::encode(&raw, &mut stuffed);
    let mut bytes = stuffed[..len].to_vec();
    bytes.push(0);
    assert_eq!(
        learner_read(&dev.receive(&bytes)),
        [Repr::new(20, Message::Refusal(Refusal::Unauthenticated))]
    );
    assert_eq!(dev.spent(), 0.0);
}

/// Wire format 4: a hello request's nonce opens a conversation. Afterwards a query tagged under
/// another nonce (an earlier learner's, or none) is refused as unauthenticated, nothing read or
/// spent, and the device's replies verify only under the new nonce and only as the answer to
/// the very request they answer.
#[test]
fn a_hello_request_binds_the_conversation_to_its_nonce() {
    let mut dev = Device::new(1.0, 10.0);
    let emit = |auth: &Auth, repr: Repr| {
        let mut buf = [0u8; MAX_ENCODED_LEN];
        repr.emit_framed(&mut buf, auth).unwrap().to_vec()
    };
    let (a, b) = ([0xA1; 16], [0xB2; 16]);
    // Learner A greets, asks once.
    let _ = dev.receive(&emit(&auth(), Repr::new(1, Message::HelloRequest(a))));
    let under_a = Auth { nonce: a, ..auth() };
    let a_bytes = dev.receive(&emit(&under_a, query(2, 1, 0.5, None)));
    let a_replies = learner_read(&a_bytes);
    assert!(matches!(a_replies[..], [Repr { seq: 2, message: Message::Report(_) }]), "{a_replies:?}");
    // The reply does not verify under another nonce, nor as the answer to another query.
    let frame = |bytes: &[u8]| {
        let mut r = StreamReader::new();
        bytes.iter().find_map(|&x| r.push(x).map(|f| f.unwrap().as_bytes().to_vec())).unwrap()
    };
    let a_reply = frame(&a_bytes);
    let a_query = frame(&emit(&under_a, query(2, 1, 0.5, None)));
    let a_query_tag = Frame::new_checked(&a_query[..]).unwrap().tag().to_vec();
    assert!(Repr::from_bytes(&a_reply, &under_a.answering(&a_query_tag)).is_ok());
    let other_query = frame(&emit(&under_a, query(2, 0, 0.5, None)));
    let other_tag = Frame::new_checked(&other_query[..]).unwrap().tag().to_vec();
    assert_eq!(Repr::from_bytes(&a_reply, &under_a.answering(&other_tag)), Err(DecodeError::Unauthenticated));
    assert_eq!(
        Repr::from_bytes(&a_reply, &Auth { nonce: b, ..auth() }.answering(&a_query_tag)),
        Err(DecodeError::Unauthenticated)
    );
    // Learner B greets: A's nonce is over. A query under A's (or no) nonce spends nothing.
    let _ = dev.receive(&emit(&auth(), Repr::new(3, Message::HelloRequest(b))));
    dev.sensor = |_| panic!("a query under a finished conversation's nonce must not read the sensor");
    for (seq, stale) in [(4, under_a), (5, auth())] {
        let bytes = dev.receive(&emit(&stale, query(seq, 1, 0.5, None)));
        let tag =
            Frame::new_checked(&frame(&emit(&stale, query(seq, 1, 0.5, None)))[..]).unwrap().tag().to_vec();
        // Refused before its tag verified: under the all-zero nonce, no conversation's.
        let expect = Auth { nonce: [0; 16], ..auth() }.answering(&tag);
        assert_eq!(
            Repr::from_bytes(&frame(&bytes), &expect),
            Ok(Repr::new(seq, Message::Refusal(Refusal::Unauthenticated)))
        );
        for nonce in [a, b] {
            let conversation = Auth { nonce, ..auth() }.answering(&tag);
            assert_eq!(Repr::from_bytes(&frame(&bytes), &conversation), Err(DecodeError::Unauthenticated));
        }
    }
    assert_eq!(dev.spent(), 0.5);
}

/// Wire format 4: an authenticated hello request's number is a floor for fresh queries. A query
/// the link withheld from a learner (numbered before that learner's next hello request) is
/// stale when it arrives afterwards: never spent after its learner gave up on it.
#[test]
fn a_hello_request_number_is_a_floor_for_fresh_queries() {
    let mut dev = Device::new(1.0, 10.0);
    let _ = dev.receive(&framed(Repr::new(1, Message::HelloRequest([0; 16]))));
    assert!(matches!(
        learner_read(&dev.receive(&framed(query(2, 1, 0.5, None))))[..],
        [Repr { seq: 2, message: Message::Report(_) }]
    ));
    // Query 3 is withheld; the learner gives up and greets the device again with number 4.
    let withheld = framed(query(3, 1, 0.5, None));
    let hello = learner_read(&dev.receive(&framed(Repr::new(4, Message::HelloRequest([0; 16])))));
    assert!(matches!(hello[..], [Repr { message: Message::Hello(h), .. }] if h.last_seq == 4), "{hello:?}");
    dev.sensor = |_| panic!("a withheld query must not read the sensor");
    assert_eq!(
        learner_read(&dev.receive(&withheld)),
        [Repr::new(3, Message::Refusal(Refusal::StaleSequence))]
    );
    assert_eq!(dev.spent(), 0.5);
    // A hello request with an older number (a recorded one) lowers nothing.
    let _ = dev.receive(&framed(Repr::new(2, Message::HelloRequest([0; 16]))));
    assert_eq!(
        learner_read(&dev.receive(&withheld)),
        [Repr::new(3, Message::Refusal(Refusal::StaleSequence))]
    );
    assert_eq!(dev.spent(), 0.5);
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
    let under_a = Auth { nonce: a, ..auth() };
    let mut buf = [0u8; MAX_FRAME_LEN];
    let raw = query(2, 1, 0.5, None).emit(&mut buf, &under_a).unwrap().to_vec();
    let tag = Frame::new_checked(&raw[..]).unwrap().tag().to_vec();
    for (at, value, reason) in [(0, 3, Refusal::UnsupportedVersion), (1, 0x03, Refusal::Malformed)] {
        let mut bad = raw.clone();
        bad[at] = value;
        let n = bad.len() - 4;
        let crc = wire::checksum(&bad[..n]);
        bad[n..].copy_from_slice(&crc.to_le_bytes());
        let mut stuffed = [0u8; MAX_ENCODED_LEN + 8];
        let len = cobs::encode(&bad, &mut stuffed);
        let mut enc = stuffed[..len].to_vec();
        enc.push(0);
        let out = dev.receive(&enc);
        let mut r = StreamReader::new();
        let frame = out.iter().find_map(|&x| r.push(x).map(|f| f.unwrap().as_bytes().to_vec())).unwrap();
        assert_eq!(Repr::from_bytes(&frame, &under_a.answering(&tag)), Err(DecodeError::Unauthenticated));
        let zero = Auth { nonce: [0; 16], ..auth() }.answering(&tag);
        assert_eq!(Repr::from_bytes(&frame, &zero), Ok(Repr::new(2, Message::Refusal(reason))));
    }
    assert_eq!(dev.spent(), 0.0);
    let replies = learner_read(&dev.receive(&emit(&under_a, query(2, 1, 0.5, None))));
    assert!(matches!(replies[..], [Repr { seq: 2, message: Message::Report(_) }]), "{replies:?}");
}
