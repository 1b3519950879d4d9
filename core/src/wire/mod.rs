//! The device ↔ learner wire format (SPEC §1.7): versioned, length-bounded, checksummed frames,
//! COBS-stuffed for a byte stream. The full specification, with golden bytes, is
//! `docs/wire-format.md`.
//!
//! # Layers
//!
//! ```text
//!  Repr { seq, Message }  ──emit──►  frame: version │ type │ seq │ payload │ tag │ CRC-32C
//!        ▲                                 │
//!      parse                          COBS + 0x00 (emit_framed)
//!        │                                 ▼
//!  Frame::new_checked ◄── FrameReader ◄── UART bytes
//! ```
//!
//! - [`Frame`] is a checked view over the bytes of one frame (length and checksum), with the
//!   field offsets in [`field`]; [`Repr`] is the typed value, with [`Repr::parse`],
//!   [`Repr::emit`] and [`Repr::buffer_len`] (after smoltcp's packet/repr split).
//! - [`Repr::emit_framed`] adds COBS stuffing and the `0x00` delimiter; [`FrameReader`]
//!   accumulates a stream and hands out checked frames, resynchronising after garbage.
//! - Every message has a fixed size, so buffers are sized at compile time:
//!   [`MAX_FRAME_LEN`] for a frame, [`MAX_ENCODED_LEN`] for it stuffed and delimited.
//!
//! # Messages
//!
//! | type | byte | direction | payload |
//! |---|---|---|---|
//! | hello request | `0x01` | learner → device | the learner's nonce (16 random bytes) |
//! | [`Query`] | `0x02` | learner → device | round, action, ε, truncation level |
//! | [`FedQuery`] | `0x03` | learner → device | a query and the raw reading for it (hardware-in-the-loop) |
//! | [`Hello`] | `0x81` | device → learner | device id, B, R, ε limit, total ε, budget left, session, conversation |
//! | [`Report`](crate::Report) | `0x82` | device → learner | grid index, grid exponent, ε, ε_eff, budget left |
//! | [`Refusal`] | `0x83` | device → learner | reason, detail |
//!
//! # Numbers on the wire
//!
//! All integers are little-endian. The released value travels exactly as it leaves the
//! mechanism: the grid index (`i64`, |index| ≤ 2^52) and the grid exponent (`i16`, which covers
//! every exponent an `f64` has). Every real number — ε, ε_eff, the truncation level, the bounds,
//! the budget — travels as the raw IEEE-754 bits of an `f64`. That is the simplest *exact*
//! choice: `ldp-core`'s API is in `f64`, so bits round-trip with no rounding at either end,
//! while a fixed-point ε (say nano-ε) would be rounded when converted back to the `f64` the
//! [`Reporter`](crate::Reporter) takes, and the accountant rounds that up again (a learner
//! asking for `n` nano-ε could be charged `n + 1`). `to_bits`/`from_bits` are bit copies: no float formatting or
//! parsing happens anywhere, and they need no FPU (thumbv6m). Decoding validates every value
//! with `ldp-core`'s own constructors (NaN, ∞ and negative values are rejected), and the
//! encoding is canonical: a frame that parses re-emits to the same bytes.
//!
//! # Sequence numbers and retries
//!
//! Every frame carries a `u32` sequence number; a reply carries the number of the request it
//! answers. A learner retries a lost reply by resending the same query with the same number;
//! [`ReplyCache`] makes the device answer it with the same reply without spending budget again,
//! and refuses a new query whose number is not after the last one it answered in the
//! conversation ([`Refusal::StaleSequence`]).
//!
//! # Authentication
//!
//! Every frame carries a tag (HMAC-SHA256, truncated to 16 bytes) under the device's
//! [`LinkKey`], binding device id, session (the device's boot number), the learner's nonce (a
//! fresh random number its hello request carries), the device's conversation number (its count
//! of the conversations of the boot, told in its hello), the request a reply answers, the
//! sequence number and every byte of the frame ([`Auth`]). A device refuses a request whose tag
//! does not verify ([`Refusal::Unauthenticated`]) without reading or spending anything; a
//! learner drops a reply whose tag does not verify. With the sequence rule above, a recorded
//! query cannot be spent again, no recorded hello or reply verifies for a learner that picked a
//! new nonce, and a recorded hello request gets only an offer of a new conversation that its
//! replayer cannot take ([`ReplyCache`]).
//!
//! # Panics
//!
//! None. No function of this module panics on any input, trusted or not: decoding any byte
//! string returns a value or a [`DecodeError`], encoding into any buffer returns the bytes or an
//! [`EncodeError`]. (Property-tested on arbitrary bytes in `core/tests/wire_*.rs`.)
//!
//! # A device's main loop
//!
//! ```
//! use ldp_core::wire::{
//!     Auth, Frame, LinkKey, MAX_ENCODED_LEN, MAX_FRAME_LEN, Message, Query, Refusal, ReplyCache, Repr, StreamReader,
//! };
//! use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
//!
//! let policy = BudgetPolicy::new(Epsilon::new(1.0)?, Epsilon::new(10.0)?)?;
//! let config = DeviceConfig { b: Bound::new(1.0)?, r: Bound::new(1.0)?, policy };
//! let mut reporter = Reporter::open(config, MemoryStore::provisioned([1; 32]), [0; 32])?;
//! // Device and learner share the key; the session is the device's boot number.
//! let auth = Auth { session: reporter.accountant().boot(), ..Auth::new(reporter.link_key(), 0xD1CE) };
//! assert_eq!(auth.key, LinkKey::from_seed(&[1; 32]));
//! let (mut reader, mut cache) = (StreamReader::new(), ReplyCache::new());
//! let sensor = |action: u32| 0.1 * action as f64;
//!
//! // The learner picks a fresh nonce (16 random bytes) and greets the device, then queries.
//! let learner = Auth { nonce: [0xA5; 16], ..Auth::new(LinkKey::from_seed(&[1; 32]), 0xD1CE) };
//! let query = Query { round: 1, action: 3, epsilon: Epsilon::new(0.5)?, level: None };
//! let (mut session, mut conversation) = (0, 0);
//! for (seq, request) in [(41, Message::HelloRequest(learner.nonce)), (42, Message::Query(query))] {
//!     let sent = Auth { session, conversation, ..learner };
//!     let mut raw = [0u8; MAX_FRAME_LEN];
//!     let request_tag = Frame::new_checked(&*Repr::new(seq, request).emit(&mut raw, &sent)?)?.tag().to_vec();
//!     let mut uart = [0u8; MAX_ENCODED_LEN];
//!     let uart = Repr::new(seq, request).emit_framed(&mut uart, &sent)?;
//!     let (mut out, mut learner_reader) = ([0u8; MAX_ENCODED_LEN], StreamReader::new());
//!     for &byte in uart.iter() {
//!         let Some(Ok(frame)) = reader.push(byte) else { continue }; // bad frames: stay silent
//!         let hello = reporter.hello(0xD1CE);
//!         // A device that reads its own sensor refuses fed readings (hardware-in-the-loop).
//!         let reply = cache.respond(&frame, &auth, hello, |q, fed| match fed {
//!             None => reporter.answer(q, sensor(q.action)),
//!             Some(_) => Message::Refusal(Refusal::FeedRefused),
//!         });
//!         // Write the framed reply to the UART; here the learner reads it back, and takes it
//!         // only as the answer to this very request under its nonce.
//!         for &b in reply.emit_framed(&mut out)?.iter() {
//!             if let Some(frame) = learner_reader.push(b) {
//!                 let reply = Repr::parse(&frame?, &sent.answering(&request_tag))?;
//!                 assert_eq!(reply.seq, seq);
//!                 match reply.message {
//!                     Message::Hello(h) => (session, conversation) = (h.session, h.conversation),
//!                     Message::Report(r) => assert_eq!(r.epsilon, 0.5),
//!                     other => panic!("{other:?}"),
//!                 }
//!             }
//!         }
//!     }
//! }
//! assert_eq!(reporter.accountant().remaining(), 9.5);
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```

mod auth;
mod error;
mod frame;
mod replay;
mod repr;
mod stream;

pub use auth::{Auth, KEY_LEN, LinkKey, NONCE_LEN, TAG_LEN, seed_digest};
pub use error::{DecodeError, EncodeError};
pub use frame::{CHECKSUM_LEN, Frame, HEADER_LEN, MIN_FRAME_LEN, checksum, field};
pub use replay::{REPLY_CACHE_LEN, Reply, ReplyCache};
pub use repr::{DeviceStorageError, FedQuery, Hello, Message, MessageType, Query, Refusal, Repr};
pub use stream::{FrameReader, StreamReader};

/// The protocol version this build speaks. Bumped on any change to the layout of a frame; the
/// header (version, type, sequence number) and the CRC-32C trailer never change. Version 3 added
/// the tag ([`Auth`]) before the trailer and the session and last sequence number to the hello;
/// version 4 the learner's nonce (the hello request's payload), which every later tag covers,
/// and each reply's binding to the request it answers; version 5 the device's conversation
/// number, which the hello carries in place of the last sequence number and every later tag
/// covers.
pub const VERSION: u8 = 5;

/// The longest frame of this version (a [`Hello`]), before COBS stuffing.
pub const MAX_FRAME_LEN: usize = {
    let mut max = 0;
    let mut i = 0;
    while i < MessageType::ALL.len() {
        let len = MessageType::ALL[i].frame_len();
        if len > max {
            max = len;
        }
        i += 1;
    }
    max
};

/// The longest frame on the stream: [`MAX_FRAME_LEN`] after COBS stuffing, plus the `0x00`
/// delimiter.
pub const MAX_ENCODED_LEN: usize = cobs::max_encoding_length(MAX_FRAME_LEN) + 1;
