//! Golden bytes of every message type (the examples of `docs/wire-format.md`), and every
//! truncated or corrupted frame of them is rejected, raw and on the stream.

use ldp_core::wire::{
    self, Auth, DecodeError, FedQuery, FrameReader, Hello, LinkKey, MAX_ENCODED_LEN, MAX_FRAME_LEN, Message,
    Refusal, Repr, StreamReader,
};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, ParamError, Release, Report, TruncationLevel};

fn eps(x: f64) -> Epsilon {
    Epsilon::new(x).unwrap()
}

/// The golden frames' authentication: the key of seed material `[0x11; 32]`, device
/// 0x0123456789ABCDEF, session (boot) 5, the learner's nonce `00 01 … 0F`, the device's
/// conversation 0x01020304, and, for the replies, the answered request's tag `A5 A5 … A5`.
fn auth() -> Auth {
    Auth {
        session: 5,
        nonce: NONCE,
        conversation: 0x0102_0304,
        answers: [0xA5; 16],
        ..Auth::new(LinkKey::from_seed(&[0x11; 32]), 0x0123_4567_89AB_CDEF)
    }
}

const NONCE: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

/// `auth()` as a request is tagged: no answered request.
fn request_auth() -> Auth {
    Auth { answers: [0; 16], ..auth() }
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
            Repr::new(1, Message::HelloRequest(NONCE)),
            "05 01 01 00 00 00 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F EC 9A FD FD 6F 66 59 FD \
             1D 6D EB 83 2B E9 4D B6 A0 5D BF 7E",
            "04 05 01 01 01 01 01 24 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F EC 9A FD FD 6F 66 59 \
             FD 1D 6D EB 83 2B E9 4D B6 A0 5D BF 7E 00",
        ),
        (
            Repr::new(
                1,
                Message::Hello(Hello {
                    device_id: 0x0123_4567_89AB_CDEF,
                    config,
                    budget_remaining: 10.0,
                    session: 5,
                    conversation: 0x0102_0304,
                }),
            ),
            "05 81 01 00 00 00 EF CD AB 89 67 45 23 01 00 00 00 00 00 00 F0 3F 00 00 00 00 00 00 F0 3F \
             00 00 00 00 00 00 F0 3F 00 00 00 00 00 00 24 40 00 00 00 00 00 00 24 40 05 00 00 00 00 00 \
             00 00 04 03 02 01 C1 FD E3 C0 58 D7 A8 7B AB 96 78 1F 5C 60 5D 9D 71 65 BC F5",
            "04 05 81 01 01 01 09 EF CD AB 89 67 45 23 01 01 01 01 01 01 03 F0 3F 01 01 01 01 01 03 F0 \
             3F 01 01 01 01 01 03 F0 3F 01 01 01 01 01 03 24 40 01 01 01 01 01 04 24 40 05 01 01 01 01 \
             01 01 19 04 03 02 01 C1 FD E3 C0 58 D7 A8 7B AB 96 78 1F 5C 60 5D 9D 71 65 BC F5 00",
        ),
        (
            Repr::new(2, Message::Query(wire::Query { round: 1, action: 3, epsilon: eps(0.5), level: None })),
            "05 02 02 00 00 00 01 00 00 00 03 00 00 00 00 00 00 00 00 00 E0 3F 00 00 00 00 00 00 00 00 \
             D6 A7 BB 62 DC DD B8 44 94 54 0B 72 F6 CB 39 90 D4 14 47 71",
            "04 05 02 02 01 01 02 01 01 01 02 03 01 01 01 01 01 01 01 01 03 E0 3F 01 01 01 01 01 01 01 \
             15 D6 A7 BB 62 DC DD B8 44 94 54 0B 72 F6 CB 39 90 D4 14 47 71 00",
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
            "05 02 03 00 00 00 07 00 00 00 00 00 00 00 00 00 00 00 00 00 F0 3F 00 00 00 00 00 00 04 40 \
             34 5A D4 FF ED B4 D3 1D 7C 6D 7E 9E 22 B6 70 76 EC CD A0 8B",
            "04 05 02 03 01 01 02 07 01 01 01 01 01 01 01 01 01 01 01 01 03 F0 3F 01 01 01 01 01 17 04 \
             40 34 5A D4 FF ED B4 D3 1D 7C 6D 7E 9E 22 B6 70 76 EC CD A0 8B 00",
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
            "05 82 02 00 00 00 2E FB FF FF FF FF FF FF F5 FF 00 00 00 00 00 00 E0 3F 00 00 00 00 00 F8 \
             DF 3F 00 00 00 00 00 00 23 40 B4 51 B0 80 62 90 B7 5A 0D A7 EA AF 16 9D 7F 2C 4A D9 2F FE",
            "04 05 82 02 01 01 0B 2E FB FF FF FF FF FF FF F5 FF 01 01 01 01 01 03 E0 3F 01 01 01 01 04 \
             F8 DF 3F 01 01 01 01 01 17 23 40 B4 51 B0 80 62 90 B7 5A 0D A7 EA AF 16 9D 7F 2C 4A D9 2F \
             FE 00",
        ),
        (
            Repr::new(4, Message::Refusal(Refusal::BudgetExhausted { requested: 1.0, remaining: 0.25 })),
            "05 83 04 00 00 00 04 00 00 00 00 00 00 00 F0 3F 00 00 00 00 00 00 D0 3F 22 A8 98 CC E3 8A \
             94 B4 E6 48 FD A8 FE D6 38 64 3D 14 DD 1A",
            "04 05 83 04 01 01 02 04 01 01 01 01 01 01 03 F0 3F 01 01 01 01 01 17 D0 3F 22 A8 98 CC E3 \
             8A 94 B4 E6 48 FD A8 FE D6 38 64 3D 14 DD 1A 00",
        ),
        (
            Repr::new(5, Message::Refusal(Refusal::Param(ParamError::EpsilonNotFinite))),
            "05 83 05 00 00 00 01 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 AC E8 CD 25 33 A6 \
             2A 23 1B B8 C7 DB DC F7 91 B1 72 6D 89 C7",
            "04 05 83 05 01 01 03 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 15 AC E8 CD 25 33 \
             A6 2A 23 1B B8 C7 DB DC F7 91 B1 72 6D 89 C7 00",
        ),
        (
            Repr::new(6, Message::FedQuery(FedQuery::new(query(1), 0.75))),
            "05 03 06 00 00 00 01 00 00 00 03 00 00 00 00 00 00 00 00 00 E0 3F 00 00 00 00 00 00 00 00 \
             00 00 00 00 00 00 E8 3F 52 0E 5E F3 19 54 10 CB 75 66 7B AE 53 40 56 77 35 FF 3D 43",
            "04 05 03 06 01 01 02 01 01 01 02 03 01 01 01 01 01 01 01 01 03 E0 3F 01 01 01 01 01 01 01 \
             01 01 01 01 01 01 17 E8 3F 52 0E 5E F3 19 54 10 CB 75 66 7B AE 53 40 56 77 35 FF 3D 43 00",
        ),
        (
            Repr::new(7, Message::FedQuery(FedQuery::new(query(2), f64::NAN))),
            "05 03 07 00 00 00 02 00 00 00 03 00 00 00 00 00 00 00 00 00 E0 3F 00 00 00 00 00 00 00 00 \
             00 00 00 00 00 00 F8 7F 04 C2 A5 F6 EB 8D 4A 0E F4 75 15 6C B3 AC EB 86 E7 11 3F F0",
            "04 05 03 07 01 01 02 02 01 01 02 03 01 01 01 01 01 01 01 01 03 E0 3F 01 01 01 01 01 01 01 \
             01 01 01 01 01 01 17 F8 7F 04 C2 A5 F6 EB 8D 4A 0E F4 75 15 6C B3 AC EB 86 E7 11 3F F0 00",
        ),
        (
            Repr::new(6, Message::Refusal(Refusal::FeedRefused)),
            "05 83 06 00 00 00 0B 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 8F CC 8D 63 A0 CC \
             0B C7 42 16 EB 4B 2C 64 14 34 2B 6A 28 9E",
            "04 05 83 06 01 01 02 0B 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 15 8F CC 8D 63 A0 \
             CC 0B C7 42 16 EB 4B 2C 64 14 34 2B 6A 28 9E 00",
        ),
        (
            Repr::new(8, Message::Refusal(Refusal::Unauthenticated)),
            "05 83 08 00 00 00 0C 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 43 F7 3E AB B7 93 \
             36 33 C7 A2 F0 CC 7F 18 2F 75 79 99 3C 77",
            "04 05 83 08 01 01 02 0C 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 15 43 F7 3E AB B7 \
             93 36 33 C7 A2 F0 CC 7F 18 2F 75 79 99 3C 77 00",
        ),
        (
            Repr::new(9, Message::Refusal(Refusal::StaleSequence)),
            "05 83 09 00 00 00 0D 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 FE 05 B2 65 4E 31 \
             1D 0B B7 35 EF 78 3B 45 1A 5F 3F 91 81 72",
            "04 05 83 09 01 01 02 0D 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 15 FE 05 B2 65 4E \
             31 1D 0B B7 35 EF 78 3B 45 1A 5F 3F 91 81 72 00",
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
            Some(Ok(frame)) => match Repr::parse(&frame, &auth()) {
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
    const _: () = assert!(MAX_FRAME_LEN == 86 && MAX_ENCODED_LEN == 88);
    let lens: Vec<usize> = wire::MessageType::ALL.iter().map(|t| t.frame_len()).collect();
    assert_eq!(lens, [42, 50, 58, 86, 60, 44]);
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
        assert_eq!(repr.emit(&mut buf, &auth()).unwrap(), &raw[..], "{repr:?}");
        assert_eq!(repr.buffer_len(), raw.len());
        let mut buf = [0u8; MAX_ENCODED_LEN];
        assert_eq!(repr.emit_framed(&mut buf, &auth()).unwrap(), &framed[..], "{repr:?}");
        assert_eq!(Repr::from_bytes(&raw, &auth()), Ok(repr));
        assert_eq!(read_stream(&framed), (vec![repr], vec![]));
        at_least_one_per_type.insert(repr.message.message_type());
    }
    assert_eq!(at_least_one_per_type.len(), wire::MessageType::ALL.len());
}

#[test]
fn every_truncated_frame_is_rejected() {
    for (repr, raw, framed) in golden() {
        for k in 0..raw.len() {
            assert!(Repr::from_bytes(&raw[..k], &auth()).is_err(), "{repr:?} cut to {k}");
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
            assert!(Repr::from_bytes(&bad, &auth()).is_err(), "{repr:?}: byte {i} = {v:#04x}");
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
            "05 03 07 00 00 00 02 00 00 00 03 00 00 00 00 00 00 00 00 00 E0 3F 00 00 00 00 00 00 00 00",
        );
        raw.extend_from_slice(&bits.to_le_bytes());
        raw.extend_from_slice(&request_auth().tag(5, &raw));
        raw.extend_from_slice(&wire::checksum(&raw).to_le_bytes());
        raw
    };
    let fed = |x: f64| Ok(Repr::new(7, Message::FedQuery(FedQuery { query: query(2), reading: x })));
    for x in [f64::INFINITY, f64::NEG_INFINITY, -0.0, 5e-324, f64::MAX, -1e300, f64::NAN] {
        assert_eq!(Repr::from_bytes(&frame(x.to_bits()), &auth()), fed(x), "{x}");
    }
    for bits in [0x7FF8_0000_0000_0001, 0xFFF8_0000_0000_0000, 0x7FF0_0000_0000_0001, u64::MAX] {
        assert!(f64::from_bits(bits).is_nan());
        assert_eq!(Repr::from_bytes(&frame(bits), &auth()), Err(DecodeError::InvalidField), "{bits:#x}");
        let other =
            Repr::new(7, Message::FedQuery(FedQuery { query: query(2), reading: f64::from_bits(bits) }));
        assert_eq!(other.emit(&mut [0u8; MAX_FRAME_LEN], &auth()), Err(wire::EncodeError::InvalidField));
    }
    // `FedQuery::new` makes any NaN the one the wire carries.
    let made = FedQuery::new(query(2), f64::from_bits(0xFFF8_0000_0000_0001));
    assert_eq!(made.reading.to_bits(), f64::NAN.to_bits());
}

/// A version-2 learner's query (before tags) is answered "unsupported version", as the
/// stability rule says: the old golden query, seq 2. Its hello request (10 bytes) is now
/// shorter than any frame, and gets no answer.
#[test]
fn a_version_2_frame_is_unsupported() {
    let old = unhex(
        "02 02 02 00 00 00 01 00 00 00 03 00 00 00 00 00 00 00 00 00 E0 3F 00 00 00 00 00 00 00 00 \
         17 E8 F5 32",
    );
    assert_eq!(Repr::from_bytes(&old, &auth()), Err(DecodeError::UnsupportedVersion));
    let hello = unhex("02 01 01 00 00 00 5D 19 F2 69");
    assert_eq!(Repr::from_bytes(&hello, &auth()), Err(DecodeError::Truncated));
}

/// A version-3 frame (tags without the learner's nonce) is answered "unsupported version":
/// version 3's golden query, seq 2, and its hello request.
#[test]
fn a_version_3_frame_is_unsupported() {
    assert_unsupported(&[
        "03 02 02 00 00 00 01 00 00 00 03 00 00 00 00 00 00 00 00 00 E0 3F 00 00 00 00 00 00 00 00 \
         F0 C9 6A 2C E7 F0 6B 8E 18 AD 45 2E 1F 54 64 5B CE 69 21 86",
        "03 01 01 00 00 00 E2 47 18 9B E4 BE 8E 1C B7 41 B8 3D AC 5C D6 5D 53 E2 86 09",
    ]);
}

/// Each frame (in hex) is refused as of an unsupported version.
fn assert_unsupported(frames: &[&str]) {
    for hex in frames {
        assert_eq!(Repr::from_bytes(&unhex(hex), &auth()), Err(DecodeError::UnsupportedVersion), "{hex}");
    }
}

/// A version-4 frame (tags without the device's conversation number) is answered
/// "unsupported version": version 4's golden query, seq 2, and its hello request.
#[test]
fn a_version_4_frame_is_unsupported() {
    assert_unsupported(&[
        "04 02 02 00 00 00 01 00 00 00 03 00 00 00 00 00 00 00 00 00 E0 3F 00 00 00 00 00 00 00 00 \
         D6 0C 34 FE 68 96 D0 52 B6 66 28 4C F0 44 E3 52 AC 8C 05 D2",
        "04 01 01 00 00 00 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 47 08 56 26 25 7B 77 7F \
         74 CD 98 80 7A 2F 14 90 C8 06 37 A5",
    ]);
}

/// The link key of seed material `[0x11; 32]` (HMAC-SHA256(seed, "ldp-bo link key v1")), and
/// the golden frames' tags, were checked against Python's `hmac` module: see
/// docs/wire-format.md, *Tags*.
#[test]
fn golden_link_key() {
    let key = LinkKey::from_seed(&[0x11; 32]).to_bytes();
    assert_eq!(
        key.to_vec(),
        unhex(
            "FF C5 21 DC D5 A1 3F 9F 81 6B 27 55 52 0F 57 24 62 92 5F C9 C1 91 AD EC 21 7E CB B4 22 48 AB 71"
        )
    );
}

/// A golden frame is refused under another key, another device id, another session (except
/// the hellos, which carry their session inside), another learner's nonce (except the hello
/// request, which carries it inside), another conversation of the device (except the hellos:
/// the request opens one, the hello carries its number inside), or, for a reply, as the answer
/// to another request: so no reply recorded under one learner's hello verifies for another, and
/// no query or reply of one conversation verifies in another.
#[test]
fn golden_frames_need_their_key_device_session_nonce_conversation_and_request() {
    for (repr, raw, _) in golden() {
        let mut other_nonce = NONCE;
        other_nonce[15] ^= 1;
        let others = [
            Auth { key: LinkKey::from_seed(&[0x12; 32]), ..auth() },
            Auth { device_id: auth().device_id ^ 1, ..auth() },
            Auth { session: 6, ..auth() },
            Auth { nonce: other_nonce, ..auth() },
            auth().answering(&[0x5A; 16]),
            Auth { conversation: 0x0102_0305, ..auth() },
        ];
        let ty = repr.message.message_type();
        for (i, other) in others.iter().enumerate() {
            let still = match i {
                2 => matches!(repr.message, Message::HelloRequest(_) | Message::Hello(_)),
                3 => matches!(repr.message, Message::HelloRequest(_)),
                4 => ty.is_request(),
                5 => matches!(repr.message, Message::HelloRequest(_) | Message::Hello(_)),
                _ => false,
            };
            let got = Repr::from_bytes(&raw, other);
            if still {
                assert_eq!(got, Ok(repr));
            } else {
                assert_eq!(got, Err(DecodeError::Unauthenticated), "{repr:?} under {other:?}");
            }
        }
    }
}

/// A report whose grid exponent makes its value infinite is refused with a tag that verifies
/// (issue #25: exponent 1024 decoded to +∞ and ended a run).
#[test]
fn a_report_that_decodes_to_infinity_is_refused() {
    for (grid, ok) in [(971i16, true), (972, false), (1024, false), (i16::MAX, false)] {
        let mut raw = unhex("05 82 02 00 00 00 00 00 00 00 00 00 10 00");
        raw.extend_from_slice(&grid.to_le_bytes());
        for x in [0.5f64, 0.5, 9.5] {
            raw.extend_from_slice(&x.to_le_bytes());
        }
        raw.extend_from_slice(&auth().tag(5, &raw));
        raw.extend_from_slice(&wire::checksum(&raw).to_le_bytes());
        let got = Repr::from_bytes(&raw, &auth());
        if ok {
            assert!(
                matches!(got, Ok(Repr { message: Message::Report(r), .. }) if r.release.value().is_finite())
            );
        } else {
            assert_eq!(got, Err(DecodeError::NonFinite), "exponent {grid}");
        }
    }
}
