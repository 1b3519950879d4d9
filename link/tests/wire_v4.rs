//! Wire format 4 on the learner's side (the security review of wire format 3): a wrong key is
//! named as such, a device whose session (boot number) went back is refused, and a run on one
//! device on the wire keeps a ledger with the replies it dropped.

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::time::Duration;

use ldp_core::wire::{Auth, LinkKey};
use ldp_core::{Epsilon, MemoryStore};
use ldp_link::client::{LinkError, WireClient};
use ldp_link::device::{Device, WireDevice};
use ldp_link::transport::Link;

mod common;
use common::{Dev, ID, boot};

/// Review item 6: a learner with the wrong key is told that the device answered but its frames
/// fail authentication under the key in the named file, not that the device did not answer.
#[test]
fn a_wrong_key_is_named_with_its_file() {
    let dev = boot(MemoryStore::provisioned([5; 32]));
    let wrong = Auth::new(LinkKey::new([1; 32]), ID);
    let mut c = WireClient::with_nonce_seed(dev, wrong, 1).with_key_file(Path::new("/keys/9/link.key"));
    c.timeout = Duration::from_millis(1);
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
    let mut c = WireClient::with_nonce_seed(Silent, wrong, 1);
    c.timeout = Duration::from_millis(1);
    assert!(matches!(c.hello(), Err(LinkError::Timeout { .. })));
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
    let mut c = WireClient::with_nonce_seed(second, auth, 2);
    c.timeout = Duration::from_millis(1);
    let session = c.hello().unwrap().session;
    assert_eq!(c.highest_session(), session);
    // The device's state is rolled back to what it was before boot 2: it boots as boot 2 again
    // at most; a store from boot 1's time, opened anew, says a session no later than 2.
    let rolled_back = boot(MemoryStore::provisioned([6; 32])); // boot 1 again
    assert!(rolled_back.app().reporter().accountant().boot() < session);
    c.replace_link(rolled_back);
    let e = c.query(0, 1, Epsilon::new(1.0).unwrap(), None).unwrap_err();
    assert!(c.dropped.replayed >= 1, "{e}: {:?}", c.dropped);
    // A new client that was told the highest session (persisted) refuses it as well.
    let mut fresh =
        WireClient::with_nonce_seed(boot(MemoryStore::provisioned([6; 32])), auth, 3).sessions_from(session);
    fresh.timeout = Duration::from_millis(1);
    assert!(fresh.hello().is_err());
    assert!(fresh.dropped.replayed >= 1);
}

/// A link that, before each of the learner's frames reaches the device, delivers a forged
/// reply (a frame tagged under another key): the learner drops it and counts it.
struct Forger {
    inner: Dev,
    inbound: VecDeque<u8>,
}
impl Link for Forger {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
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
        self.inbound.extend(frame.iter());
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

/// Review item 7: a run on one device on the wire records the device's ledger — what it spent
/// (from authenticated frames), the reports taken and the replies dropped by reason — as a
/// fleet's members do, for `run.json`.
#[test]
fn a_single_wire_device_keeps_a_ledger_with_its_dropped_frames() {
    let dev = boot(MemoryStore::provisioned([7; 32]));
    let auth = dev.auth();
    let mut client = WireClient::with_nonce_seed(Forger { inner: dev, inbound: VecDeque::new() }, auth, 4);
    client.timeout = Duration::from_millis(1);
    let mut device = WireDevice::new(client, Epsilon::new(1.0).unwrap());
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
