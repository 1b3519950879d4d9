//! The wire decoder on arbitrary bytes: never a panic, and whatever decodes re-encodes to the
//! same bytes (the encoding is canonical).
#![no_main]

use ldp_core::wire::{Auth, Frame, LinkKey, MAX_ENCODED_LEN, MAX_FRAME_LEN, Repr, StreamReader};
use libfuzzer_sys::fuzz_target;

/// A fixed key: arbitrary bytes pass its tag only by chance, so this target mostly exercises
/// everything up to the tag check (fields behind it: `core/tests/wire_props.rs`, valid tags).
const AUTH: Auth = Auth::new(LinkKey::new([0; 32]), 0);

fuzz_target!(|data: &[u8]| {
    // As one raw frame.
    if let Ok(repr) = Repr::from_bytes(data, &AUTH) {
        let mut buf = [0u8; MAX_FRAME_LEN];
        let out = repr.emit(&mut buf, &AUTH).expect("a decoded frame re-encodes");
        assert_eq!(out, data, "decoding is not canonical");
    }
    if let Ok(frame) = Frame::new_checked(data) {
        let _ = Repr::parse(&frame, &AUTH);
    }
    // As a byte stream.
    let mut reader = StreamReader::new();
    for &b in data {
        if let Some(Ok(frame)) = reader.push(b) {
            if let Ok(repr) = Repr::parse(&frame, &AUTH) {
                let mut buf = [0u8; MAX_ENCODED_LEN];
                let _ = repr.emit_framed(&mut buf, &AUTH).expect("a decoded frame re-encodes");
            }
        }
    }
});
