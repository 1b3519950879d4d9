//! When a request fails, the learner says what happened — a wrong key (naming its file), a
//! device of another wire format, a device whose configuration changed — rather than that the
//! device did not answer, and a run on one device keeps a ledger of what it dropped.
//!
//! Covers: a wrong key against a silent device, a device of wire format 4, a device that shows
//! other bounds in a later hello, and forged frames counted in a wire device's ledger.

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::time::Duration;

use ldp_core::MemoryStore;
use ldp_core::wire::{Auth, LinkKey, StreamReader};
use ldp_link::client::{LinkError, WireClient};
use ldp_link::device::{Device, WireDevice};
use ldp_link::transport::Link;

use crate::common::{Dev, ID, Reprovisioned, Tap, Tapped, boot, client, device_answer, device_with, eps};

/// A learner with the wrong key is told that the device answered but its frames
/// fail authentication under the key in the named file, not that the device did not answer.
#[test]
fn a_wrong_key_is_named_with_its_file() {
    let dev = boot(MemoryStore::provisioned([5; 32]));
    let wrong = Auth::new(LinkKey::new([1; 32]), ID);
    let mut c = client(dev, wrong, 1).with_key_file(Path::new("/keys/9/link.key"));
    let e = c.hello().unwrap_err();
    assert!(matches!(e, LinkError::BadTags { device_id: ID, .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("device 9 answered, but its frames")
            && text.contains("fail authentication under the key in /keys/9/link.key")
            && text.contains("wrong key (give the key file"),
        "{text}"
    );
    // A silent device is still "did not answer".
    struct Silent;
    impl Link for Silent {
        fn send(&mut self, _: &[u8]) -> io::Result<()> {
            Ok(())
        }
        fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
            Ok(None)
        }
    }
    let mut c = client(Silent, wrong, 1);
    assert!(matches!(c.hello(), Err(LinkError::Timeout { .. })));
}

/// A link that, before each of the learner's frames reaches the device, delivers a forged
/// reply (a frame tagged under another key): the learner drops it and counts it.
struct Forger {
    inner: Dev,
}
impl Tap for Forger {
    fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
        let forged = Auth::new(LinkKey::new([0xEE; 32]), ID);
        let mut buf = [0u8; ldp_core::wire::MAX_ENCODED_LEN];
        let report = ldp_core::Report {
            release: ldp_core::Release { index: 1, grid_log2: 0 },
            epsilon: 1.0,
            epsilon_effective: 1.0,
            budget_remaining: 1e6,
        };
        let mut r = ldp_core::wire::StreamReader::new();
        let seq = bytes.iter().find_map(|&b| r.push(b).and_then(Result::ok).map(|f| f.seq())).unwrap_or(0);
        let frame = ldp_core::wire::Repr::new(seq, ldp_core::wire::Message::Report(report))
            .emit_framed(&mut buf, &forged)
            .unwrap();
        learner.extend(frame.iter());
        learner.extend(device_answer(&mut self.inner, bytes)?);
        Ok(())
    }
}

/// A run on one device on the wire records the device's ledger — what it spent
/// (from authenticated frames), the reports taken and the replies dropped by reason — as a
/// fleet's members do, for `run.json`.
#[test]
fn a_single_wire_device_keeps_a_ledger_with_its_dropped_frames() {
    let dev = boot(MemoryStore::provisioned([7; 32]));
    let auth = dev.auth();
    let mut device = WireDevice::new(client(Tapped::new(Forger { inner: dev }), auth, 4), eps());
    for arm in 0..5 {
        device.query(arm, None).unwrap();
    }
    let ledger = device.ledger().expect("a wire device keeps a ledger");
    let [record] = ledger[..] else { panic!("{ledger:?}") };
    assert_eq!(record.id, ID);
    assert_eq!(record.reports, 5);
    assert_eq!(record.spent, 5.0);
    // One forged frame before the hello and before each query, none believed.
    assert_eq!(record.dropped.bad_tag, 6, "{:?}", record.dropped);
    assert_eq!(record.dropped.total(), 6);
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
    let mut c = client(Old { inbound: VecDeque::new() }, auth, 7);
    let e = c.hello().unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, LinkError::Version { device: 4 }), "{e:?}");
    assert!(
        text.contains("wire format 4") && text.contains("speaks version 5") && text.contains("firmware"),
        "{text}"
    );
}

/// Broke: the device answered every try; the learner says it timed out.
#[test]
fn a_changed_configuration_is_named_not_a_timeout() {
    let inner = device_with(1, 1.0, 1000.0);
    let auth = inner.auth();
    let link = Reprovisioned::new(inner, 2.0, false);
    let mut client = WireClient::new(link, auth);
    client.timeout = Duration::from_millis(1);
    client.tries = 3;
    assert_eq!(client.hello().unwrap().config.b.get(), 1.0);
    let err = client.hello().expect_err("a changed configuration is refused");
    assert!(client.link().answered >= 1, "the device answered");
    assert!(
        !matches!(err, LinkError::Timeout { .. }),
        "the device answered {} hellos showing B = R = 2, the learner says: {err}",
        client.link().answered
    );
}
