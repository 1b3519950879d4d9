//! Properties of the wire format: parse ∘ emit = id on every valid message, decoding never
//! panics on any bytes, the encoding is canonical, and the stream reader resynchronises.

use ldp_core::wire::{
    self, Auth, EncodeError, FedQuery, Frame, Hello, LinkKey, MAX_ENCODED_LEN, MAX_FRAME_LEN, Message,
    MessageType, Refusal, Repr, StreamReader, TAG_LEN,
};
use ldp_core::{
    Bound, BudgetPolicy, DeviceConfig, Epsilon, ParamError, Release, Report, TruncationLevel,
    mechanism::MAX_RELEASE_INDEX,
};
use proptest::prelude::*;

/// Both ends' authentication, in session 0 (so that any frame built here can carry a valid tag).
const AUTH: Auth = Auth::new(LinkKey::new([5; 32]), 9);

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        Just(0.0),
        Just(-0.0),
        Just(f64::MIN_POSITIVE),
        Just(f64::MAX),
        (-1e6f64..1e6),
    ]
}

fn positive() -> impl Strategy<Value = f64> {
    any_f64().prop_map(f64::abs).prop_filter("finite and > 0", |x| x.is_finite() && *x > 0.0)
}

fn non_negative() -> impl Strategy<Value = f64> {
    any_f64().prop_filter("finite and >= 0", |x| x.is_finite() && *x >= 0.0)
}

fn epsilon() -> impl Strategy<Value = Epsilon> {
    positive().prop_map(|x| Epsilon::new(x).unwrap())
}

fn query() -> impl Strategy<Value = wire::Query> {
    (any::<u32>(), any::<u32>(), epsilon(), proptest::option::of(positive())).prop_map(
        |(round, action, epsilon, level)| wire::Query {
            round,
            action,
            epsilon,
            level: level.map(|b| TruncationLevel::new(b).unwrap()),
        },
    )
}

fn fed_query() -> impl Strategy<Value = FedQuery> {
    (query(), prop_oneof![any_f64(), Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)])
        .prop_map(|(query, reading)| FedQuery::new(query, reading))
}

fn hello() -> impl Strategy<Value = Hello> {
    (any::<u64>(), non_negative(), non_negative(), positive(), positive(), non_negative()).prop_map(
        |(device_id, b, r, x, y, budget_remaining)| {
            let (limit, total) = if x <= y { (x, y) } else { (y, x) };
            let policy =
                BudgetPolicy::new(Epsilon::new(limit).unwrap(), Epsilon::new(total).unwrap()).unwrap();
            let config = DeviceConfig { b: Bound::new(b).unwrap(), r: Bound::new(r).unwrap(), policy };
            Hello {
                device_id,
                config,
                budget_remaining,
                session: device_id.rotate_left(7),
                conversation: device_id as u32,
            }
        },
    )
}

fn report() -> impl Strategy<Value = Report> {
    // Exponents up to 1023 − 52: above, `index·2^k` can be infinite, which no device sends.
    (-MAX_RELEASE_INDEX..=MAX_RELEASE_INDEX, i16::MIN..=971, positive(), positive(), non_negative()).prop_map(
        |(index, grid, x, y, budget_remaining)| {
            let (epsilon_effective, epsilon) = if x <= y { (x, y) } else { (y, x) };
            Report {
                release: Release { index, grid_log2: grid.into() },
                epsilon,
                epsilon_effective,
                budget_remaining,
            }
        },
    )
}

const PARAM_ERRORS: [ParamError; 17] = [
    ParamError::EpsilonNotFinite,
    ParamError::EpsilonNotPositive,
    ParamError::EpsilonTooSmall,
    ParamError::DeltaOutOfRange,
    ParamError::BoundNotFinite,
    ParamError::BoundNegative,
    ParamError::SensitivityZero,
    ParamError::SensitivityOutOfRange,
    ParamError::TruncationNotFinite,
    ParamError::TruncationNotPositive,
    ParamError::GridOutOfRange,
    ParamError::TailConstantInvalid,
    ParamError::TailExponentInvalid,
    ParamError::HorizonZero,
    ParamError::PerReportAboveTotal,
    ParamError::FloorAboveLimit,
    ParamError::ChunkBelowLimit,
];

fn refusal() -> impl Strategy<Value = Refusal> {
    prop_oneof![
        proptest::sample::select(&PARAM_ERRORS[..]).prop_map(Refusal::Param),
        Just(Refusal::NonFiniteReward),
        (positive(), positive())
            .prop_map(|(requested, limit)| Refusal::AboveDeviceLimit { requested, limit }),
        (positive(), positive())
            .prop_map(|(requested, floor)| Refusal::BelowDeviceFloor { requested, floor }),
        (positive(), non_negative())
            .prop_map(|(requested, remaining)| Refusal::BudgetExhausted { requested, remaining }),
        Just(Refusal::CorruptState),
        Just(Refusal::StorageFailed),
        Just(Refusal::UnsupportedVersion),
        Just(Refusal::Malformed),
        Just(Refusal::Unexpected),
        Just(Refusal::FeedRefused),
    ]
}

fn repr() -> impl Strategy<Value = Repr> {
    let message = prop_oneof![
        any::<[u8; 16]>().prop_map(Message::HelloRequest),
        query().prop_map(Message::Query),
        fed_query().prop_map(Message::FedQuery),
        hello().prop_map(Message::Hello),
        report().prop_map(Message::Report),
        refusal().prop_map(Message::Refusal),
    ];
    (any::<u32>(), message).prop_map(|(seq, message)| Repr::new(seq, message))
}

/// Header and payload `body` with a valid tag (session 0) and checksum appended.
fn with_checksum(mut body: Vec<u8>) -> Vec<u8> {
    body.extend_from_slice(&AUTH.tag(0, &body));
    let crc = wire::checksum(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

/// A frame with a *correct* checksum, so that decoding gets past the CRC and exercises the
/// header and field checks: either a valid frame with a few bytes overwritten, or a random
/// header and payload (usually of its type's length).
fn checksummed_frame() -> impl Strategy<Value = Vec<u8>> {
    let mutated = (repr(), proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4))
        .prop_map(|(repr, edits)| {
            let mut buf = [0u8; MAX_FRAME_LEN];
            let mut body = repr.emit(&mut buf, &AUTH).unwrap().to_vec();
            body.truncate(body.len() - TAG_LEN - 4);
            for (i, v) in edits {
                let i = i.index(body.len());
                body[i] = v;
            }
            with_checksum(body)
        });
    let ty = prop_oneof![
        4 => proptest::sample::select(&MessageType::ALL[..]),
        1 => Just(MessageType::Query),
        1 => Just(MessageType::FedQuery),
    ];
    let random = (
        prop_oneof![4 => Just(wire::VERSION), 1 => any::<u8>()],
        ty,
        any::<u8>(),
        any::<u32>(),
        any::<bool>(),
    )
        .prop_flat_map(|(v, ty, raw_ty, seq, keep_type)| {
            let t = if keep_type { ty as u8 } else { raw_ty };
            let len = prop_oneof![4 => Just(ty.payload_len()), 1 => 0..=MAX_FRAME_LEN - 26];
            let field = prop_oneof![Just(0u8), Just(0xFF), Just(0x3F), any::<u8>()];
            len.prop_flat_map(move |len| proptest::collection::vec(field.clone(), len)).prop_map(
                move |payload| {
                    let mut body = vec![v, t];
                    body.extend_from_slice(&seq.to_le_bytes());
                    body.extend_from_slice(&payload);
                    with_checksum(body)
                },
            )
        });
    prop_oneof![mutated, random]
}

fn read_all(reader: &mut StreamReader, bytes: &[u8]) -> Vec<Result<Repr, wire::DecodeError>> {
    let mut out = Vec::new();
    for &b in bytes {
        if let Some(frame) = reader.push(b) {
            out.push(frame.and_then(|f| Repr::parse(&f, &AUTH)));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn parse_after_emit_is_identity(repr in repr()) {
        let mut buf = [0u8; MAX_FRAME_LEN];
        let raw = repr.emit(&mut buf, &AUTH).unwrap();
        prop_assert_eq!(raw.len(), repr.buffer_len());
        prop_assert_eq!(Repr::from_bytes(raw, &AUTH), Ok(repr));

        let mut buf = [0u8; MAX_ENCODED_LEN];
        let framed = repr.emit_framed(&mut buf, &AUTH).unwrap();
        prop_assert_eq!(framed.iter().filter(|&&b| b == 0).count(), 1);
        prop_assert_eq!(framed.last(), Some(&0));
        prop_assert_eq!(read_all(&mut StreamReader::new(), framed), vec![Ok(repr)]);
    }

    #[test]
    fn emit_into_a_short_buffer_fails_cleanly(repr in repr(), cut in 0usize..MAX_ENCODED_LEN) {
        let mut buf = vec![0u8; cut];
        let raw = repr.emit(&mut buf, &AUTH);
        prop_assert_eq!(raw.is_ok(), cut >= repr.buffer_len());
        if cut < repr.buffer_len() {
            prop_assert_eq!(raw, Err(EncodeError::BufferTooSmall));
        }
        let mut full = [0u8; MAX_ENCODED_LEN];
        let need = repr.emit_framed(&mut full, &AUTH).unwrap().len();
        let mut buf = vec![0u8; cut];
        let framed = repr.emit_framed(&mut buf, &AUTH);
        prop_assert_eq!(framed.is_ok(), cut >= need);
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
        let _ = Repr::from_bytes(&bytes, &AUTH);
        let _ = read_all(&mut StreamReader::new(), &bytes);
    }

    #[test]
    fn every_accepted_frame_re_emits_identically(bytes in checksummed_frame()) {
        let frame = Frame::new_checked(&bytes[..]).unwrap();
        match Repr::parse(&frame, &AUTH) {
            Ok(repr) => {
                let mut buf = [0u8; MAX_FRAME_LEN];
                prop_assert_eq!(repr.emit(&mut buf, &AUTH).unwrap(), &bytes[..]);
                prop_assert_eq!(repr.seq, frame.seq());
            }
            // The device answers these, so the sequence number must be readable.
            Err(e) => prop_assert_eq!(u32::from_le_bytes(bytes[2..6].try_into().unwrap()), frame.seq(), "{:?}", e),
        }
    }

    #[test]
    fn the_reader_resynchronises_after_any_garbage(
        garbage in proptest::collection::vec(any::<u8>(), 0..200),
        repr in repr(),
    ) {
        let mut buf = [0u8; MAX_ENCODED_LEN];
        let framed = repr.emit_framed(&mut buf, &AUTH).unwrap().to_vec();
        let mut reader = StreamReader::new();
        let _ = read_all(&mut reader, &garbage);
        // A lone delimiter flushes whatever the garbage left; then the frame is read.
        let got = read_all(&mut reader, &[&[0u8][..], &framed].concat());
        prop_assert_eq!(got.last(), Some(&Ok(repr)));
        prop_assert!(reader.is_idle());
    }

    #[test]
    fn invalid_values_are_refused_by_emit_not_sent(
        seq in any::<u32>(),
        index in any::<i64>(),
        grid in any::<i32>(),
        x in any_f64(),
        y in any_f64(),
        z in any_f64(),
    ) {
        let report = Report { release: Release { index, grid_log2: grid }, epsilon: x, epsilon_effective: y, budget_remaining: z };
        let repr = Repr::new(seq, Message::Report(report));
        let mut buf = [0u8; MAX_FRAME_LEN];
        let valid = index.unsigned_abs() <= MAX_RELEASE_INDEX.unsigned_abs()
            && i16::try_from(grid).is_ok()
            && Release { index, grid_log2: grid }.value().is_finite()
            && x.is_finite() && x > 0.0
            && y.is_finite() && y > 0.0 && y <= x
            && z.is_finite() && z >= 0.0;
        match repr.emit(&mut buf, &AUTH) {
            Ok(raw) => {
                prop_assert!(valid);
                prop_assert_eq!(Repr::from_bytes(raw, &AUTH), Ok(repr));
            }
            Err(e) => {
                prop_assert!(!valid);
                prop_assert_eq!(e, EncodeError::InvalidField);
            }
        }
    }
}
