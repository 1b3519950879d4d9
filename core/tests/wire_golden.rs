//! Golden bytes of every message type (the examples of `docs/wire-format.md`), and every
//! truncated or corrupted frame of them is rejected, raw and on the stream.

use ldp_core::wire::{
    self, DecodeError, FedQuery, FrameReader, Hello, MAX_ENCODED_LEN, MAX_FRAME_LEN, Message, Refusal, Repr,
    StreamReader,
};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, ParamError, Release, Report, TruncationLevel};

fn eps(x: f64) -> Epsilon {
    Epsilon::new(x).unwrap()
}

fn unhex(s: &str) -> Vec<u8> {
    s.split_whitespace().map(|b| u8::from_str_radix(b, 16).unwrap()).collect()
}

/// Round `round`, action 3, ε = 0.5, no level.
fn query(round: u32) -> wire::Query {
    wire::Query { round, action: 3, epsilon: eps(0.5), level: None }
}

/// (message, raw frame, COBS-framed bytes), as in docs/wire-format.md.
fn golden() -> Vec<(Repr, Vec<u8>, Vec<u8>)> {
    let config = DeviceConfig {
        b: Bound::new(1.0).unwrap(),
        r: Bound::new(1.0).unwrap(),
        policy: BudgetPolicy::new(eps(1.0), eps(10.0)).unwrap(),
    };
    let cases = [
        (
            Repr::new(1, Message::HelloRequest),
            "02 01 01 00 00 00 5D 19 F2 69",
            "04 02 01 01 01 01 05 5D 19 F2 69 00",
        ),
        (
            Repr::new(
                1,
                Message::Hello(Hello { device_id: 0x0123_4567_89AB_CDEF, config, budget_remaining: 10.0 }),
            ),
            "02 81 01 00 00 00 EF CD AB 89 67 45 23 01 00 00 00 00 00 00 F0 3F 00 00 00 00 00 00 F0 3F \
             00 00 00 00 00 00 F0 3F 00 00 00 00 00 00 24 40 00 00 00 00 00 00 24 40 0F 1B C5 81",
            "04 02 81 01 01 01 09 EF CD AB 89 67 45 23 01 01 01 01 01 01 03 F0 3F 01 01 01 01 01 03 F0 \
             3F 01 01 01 01 01 03 F0 3F 01 01 01 01 01 03 24 40 01 01 01 01 01 07 24 40 0F 1B C5 81 00",
        ),
        (
            Repr::new(2, Message::Query(wire::Query { round: 1, action: 3, epsilon: eps(0.5), level: None })),
            "02 02 02 00 00 00 01 00 00 00 03 00 00 00 00 00 00 00 00 00 E0 3F 00 00 00 00 00 00 00 00 \
             17 E8 F5 32",
            "04 02 02 02 01 01 02 01 01 01 02 03 01 01 01 01 01 01 01 01 03 E0 3F 01 01 01 01 01 01 01 \
             05 17 E8 F5 32 00",
        ),
        (
            Repr::new(
                3,
                Message::Query(wire::Query {
                    round: 7,
                    action: 0,
                    epsilon: eps(1.0),
                    level: Some(TruncationLevel::new(2.5).unwrap()),
                }),
            ),
            "02 02 03 00 00 00 07 00 00 00 00 00 00 00 00 00 00 00 00 00 F0 3F 00 00 00 00 00 00 04 40 \
             AF C5 F4 D8",
            "04 02 02 03 01 01 02 07 01 01 01 01 01 01 01 01 01 01 01 01 03 F0 3F 01 01 01 01 01 07 04 \
             40 AF C5 F4 D8 00",
        ),
        (
            Repr::new(
                2,
                Message::Report(Report {
                    release: Release { index: -1234, grid_log2: -11 },
                    epsilon: 0.5,
                    epsilon_effective: 0.49951171875,
                    budget_remaining: 9.5,
                }),
            ),
            "02 82 02 00 00 00 2E FB FF FF FF FF FF FF F5 FF 00 00 00 00 00 00 E0 3F 00 00 00 00 00 F8 \
             DF 3F 00 00 00 00 00 00 23 40 6C CF 30 E2",
            "04 02 82 02 01 01 0B 2E FB FF FF FF FF FF FF F5 FF 01 01 01 01 01 03 E0 3F 01 01 01 01 04 \
             F8 DF 3F 01 01 01 01 01 07 23 40 6C CF 30 E2 00",
        ),
        (
            Repr::new(4, Message::Refusal(Refusal::BudgetExhausted { requested: 1.0, remaining: 0.25 })),
            "02 83 04 00 00 00 04 00 00 00 00 00 00 00 F0 3F 00 00 00 00 00 00 D0 3F FA DE 25 6C",
            "04 02 83 04 01 01 02 04 01 01 01 01 01 01 03 F0 3F 01 01 01 01 01 07 D0 3F FA DE 25 6C 00",
        ),
        (
            Repr::new(5, Message::Refusal(Refusal::Param(ParamError::EpsilonNotFinite))),
            "02 83 05 00 00 00 01 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 F0 04 D5 3C",
            "04 02 83 05 01 01 03 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 05 F0 04 D5 3C 00",
        ),
        (
            Repr::new(6, Message::FedQuery(FedQuery::new(query(1), 0.75))),
            "02 03 06 00 00 00 01 00 00 00 03 00 00 00 00 00 00 00 00 00 E0 3F 00 00 00 00 00 00 00 00 \
             00 00 00 00 00 00 E8 3F E6 A2 DD 58",
            "04 02 03 06 01 01 02 01 01 01 02 03 01 01 01 01 01 01 01 01 03 E0 3F 01 01 01 01 01 01 01 \
             01 01 01 01 01 01 07 E8 3F E6 A2 DD 58 00",
        ),
        (
            Repr::new(7, Message::FedQuery(FedQuery::new(query(2), f64::NAN))),
            "02 03 07 00 00 00 02 00 00 00 03 00 00 00 00 00 00 00 00 00 E0 3F 00 00 00 00 00 00 00 00 \
             00 00 00 00 00 00 F8 7F 3A 84 44 53",
            "04 02 03 07 01 01 02 02 01 01 02 03 01 01 01 01 01 01 01 01 03 E0 3F 01 01 01 01 01 01 01 \
             01 01 01 01 01 01 07 F8 7F 3A 84 44 53 00",
        ),
        (
            Repr::new(6, Message::Refusal(Refusal::FeedRefused)),
            "02 83 06 00 00 00 0B 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 7D FE 95 E2",
            "04 02 83 06 01 01 02 0B 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 05 7D FE 95 E2 00",
        ),
    ];
    cases.into_iter().map(|(m, raw, framed)| (m, unhex(raw), unhex(framed))).collect()
}

/// Feeds `bytes` to a fresh reader; returns every accepted message and every error.
fn read_stream(bytes: &[u8]) -> (Vec<Repr>, Vec<DecodeError>) {
    let mut reader = StreamReader::new();
    let (mut ok, mut err) = (Vec::new(), Vec::new());
    for &b in bytes {
        match reader.push(b) {
            Some(Ok(frame)) => match Repr::parse(&frame) {
                Ok(r) => ok.push(r),
                Err(e) => err.push(e),
            },
            Some(Err(e)) => err.push(e),
            None => {}
        }
    }
    (ok, err)
}

/// Every copy of `bytes` with one byte changed: `(position, new value, copy)`.
fn single_byte_corruptions(bytes: &[u8]) -> impl Iterator<Item = (usize, u8, Vec<u8>)> + '_ {
    (0..bytes.len()).flat_map(move |i| {
        (0..=255u8).filter(move |&v| v != bytes[i]).map(move |v| {
            let mut bad = bytes.to_vec();
            bad[i] = v;
            (i, v, bad)
        })
    })
}

#[test]
fn sizes_are_known_at_compile_time() {
    const _: () = assert!(MAX_FRAME_LEN == 58 && MAX_ENCODED_LEN == 60);
    let lens: Vec<usize> = wire::MessageType::ALL.iter().map(|t| t.frame_len()).collect();
    assert_eq!(lens, [10, 34, 42, 58, 44, 28]);
}

#[test]
fn checksum_is_crc32c() {
    assert_eq!(wire::checksum(b"123456789"), 0xE306_9283);
}

#[test]
fn golden_bytes_emit_and_parse() {
    let mut at_least_one_per_type = std::collections::HashSet::new();
    for (repr, raw, framed) in golden() {
        let mut buf = [0u8; MAX_FRAME_LEN];
        assert_eq!(repr.emit(&mut buf).unwrap(), &raw[..], "{repr:?}");
        assert_eq!(repr.buffer_len(), raw.len());
        let mut buf = [0u8; MAX_ENCODED_LEN];
        assert_eq!(repr.emit_framed(&mut buf).unwrap(), &framed[..], "{repr:?}");
        assert_eq!(Repr::from_bytes(&raw), Ok(repr));
        assert_eq!(read_stream(&framed), (vec![repr], vec![]));
        at_least_one_per_type.insert(repr.message.message_type());
    }
    assert_eq!(at_least_one_per_type.len(), wire::MessageType::ALL.len());
}

#[test]
fn every_truncated_frame_is_rejected() {
    for (repr, raw, framed) in golden() {
        for k in 0..raw.len() {
            assert!(Repr::from_bytes(&raw[..k]).is_err(), "{repr:?} cut to {k}");
        }
        // Cut on the stream: the prefix is delimited early (a torn frame), then the reader must
        // still read the next intact frame.
        for k in 0..framed.len() - 1 {
            let mut stream = framed[..k].to_vec();
            stream.push(0);
            stream.extend_from_slice(&framed);
            let (ok, err) = read_stream(&stream);
            assert_eq!(ok, vec![repr], "{repr:?} cut to {k}");
            assert_eq!(err.len(), usize::from(k > 0), "{repr:?} cut to {k}: {err:?}");
        }
    }
}

#[test]
fn every_single_byte_corruption_is_rejected() {
    for (repr, raw, framed) in golden() {
        for (i, v, bad) in single_byte_corruptions(&raw) {
            assert!(Repr::from_bytes(&bad).is_err(), "{repr:?}: byte {i} = {v:#04x}");
        }
        // On the stream: no corrupted frame (nor the pieces of one split by a corrupted 0x00)
        // is ever accepted.
        for (i, v, bad) in single_byte_corruptions(&framed) {
            let (ok, err) = read_stream(&bad);
            assert!(ok.is_empty(), "{repr:?}: stuffed byte {i} = {v:#04x} accepted as {ok:?}");
            // A corrupted delimiter leaves the frame incomplete: nothing to report yet.
            assert!(!err.is_empty() || i == framed.len() - 1, "{repr:?}: byte {i} = {v:#04x}");
        }
    }
}

#[test]
fn every_single_bit_flip_in_a_stream_of_frames_loses_at_most_two_frames() {
    let frames = golden();
    let stream: Vec<u8> = frames.iter().flat_map(|(_, _, f)| f.clone()).collect();
    for bit in 0..stream.len() * 8 {
        let mut bad = stream.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let (ok, _) = read_stream(&bad);
        // Every accepted message is one of the sent ones, in order; a flip destroys the frame it
        // hits and, if it hits a delimiter, the one after.
        let sent: Vec<Repr> = frames.iter().map(|(r, _, _)| *r).collect();
        assert!(ok.len() + 2 >= sent.len(), "bit {bit}: only {} frames survived", ok.len());
        let mut it = sent.iter();
        for r in &ok {
            assert!(it.any(|s| s == r), "bit {bit}: {r:?} was not sent (or out of order)");
        }
    }
}

#[test]
fn over_long_input_is_rejected_and_the_reader_resynchronises() {
    let (repr, _, framed) = golden().swap_remove(1); // the longest message, a Hello
    let mut stream = vec![0x55; MAX_ENCODED_LEN * 3];
    stream.push(0);
    stream.extend_from_slice(&framed);
    assert_eq!(read_stream(&stream), (vec![repr], vec![DecodeError::Overlong]));

    // A reader exactly as large as the longest frame accepts it; one byte more of payload
    // (a frame this version never sends) would be rejected by length.
    let mut reader = FrameReader::<MAX_ENCODED_LEN>::new();
    let got: Vec<_> =
        framed.iter().filter_map(|&b| reader.push(b).map(|r| r.map(|f| f.as_bytes().len()))).collect();
    assert_eq!(got, vec![Ok(MAX_FRAME_LEN)]);
}

#[test]
fn empty_frames_are_ignored_and_garbage_is_one_error() {
    let (repr, _, framed) = golden().swap_remove(0);
    let mut stream = vec![0, 0, 0, 0x17, 0x2A, 0xFF, 0, 0];
    stream.extend_from_slice(&framed);
    stream.extend_from_slice(&[0, 0]);
    let (ok, err) = read_stream(&stream);
    assert_eq!(ok, vec![repr]);
    assert_eq!(err.len(), 1, "{err:?}");
}

/// A fed reading travels as any `f64` bits except a NaN other than `f64::NAN`'s: ±∞ and
/// subnormals are accepted (the device sanitises them as it does a sensor's), every other NaN
/// bit pattern is rejected, so an accepted frame re-emits to the same bytes.
#[test]
fn a_fed_reading_has_one_nan_and_any_other_value() {
    let frame = |bits: u64| {
        let mut raw = unhex(
            "02 03 07 00 00 00 02 00 00 00 03 00 00 00 00 00 00 00 00 00 E0 3F 00 00 00 00 00 00 00 00",
        );
        raw.extend_from_slice(&bits.to_le_bytes());
        raw.extend_from_slice(&wire::checksum(&raw).to_le_bytes());
        raw
    };
    let fed = |x: f64| Ok(Repr::new(7, Message::FedQuery(FedQuery { query: query(2), reading: x })));
    for x in [f64::INFINITY, f64::NEG_INFINITY, -0.0, 5e-324, f64::MAX, -1e300, f64::NAN] {
        assert_eq!(Repr::from_bytes(&frame(x.to_bits())), fed(x), "{x}");
    }
    for bits in [0x7FF8_0000_0000_0001, 0xFFF8_0000_0000_0000, 0x7FF0_0000_0000_0001, u64::MAX] {
        assert!(f64::from_bits(bits).is_nan());
        assert_eq!(Repr::from_bytes(&frame(bits)), Err(DecodeError::InvalidField), "{bits:#x}");
        let other =
            Repr::new(7, Message::FedQuery(FedQuery { query: query(2), reading: f64::from_bits(bits) }));
        assert_eq!(other.emit(&mut [0u8; MAX_FRAME_LEN]), Err(wire::EncodeError::InvalidField));
    }
    // `FedQuery::new` makes any NaN the one the wire carries.
    let made = FedQuery::new(query(2), f64::from_bits(0xFFF8_0000_0000_0001));
    assert_eq!(made.reading.to_bits(), f64::NAN.to_bits());
}

/// A version-1 learner's frame (before fed queries) is answered "unsupported version", as the
/// stability rule says: the old golden hello request, seq 1.
#[test]
fn a_version_1_frame_is_unsupported() {
    let old = unhex("01 01 01 00 00 00 87 D2 4E 5D");
    assert_eq!(Repr::from_bytes(&old), Err(DecodeError::UnsupportedVersion));
}
