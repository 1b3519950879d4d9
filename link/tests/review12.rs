//! Review 12 (attacker's brief) of 7915d2d: a `WireClient` pins the configuration of the first
//! hello it takes and refuses (as malformed) a later one showing another; the fleet checks the
//! clamp's mechanism with the B, R a member joined with (`Member::new`'s hello).
//!
//! Broke (both fixed by the lead; the tests fail without the fix): `Member::new` now pins its
//! client to the hello it is handed (then `WireClient::pin_config`, since review 13 gone), and a changed configuration is
//! `LinkError::ConfigChanged` at once (a fleet drops that member).
//! - `Member::new` takes the joined configuration from the hello it is handed, not from its
//!   client: a client not yet greeted (as `fleet_bench` and the MQTT bridge tests build members
//!   from the broker's retained hellos) pins whatever its own first hello says, so a key holder
//!   whose retained hello shows B = R = 1 and whose answered hello shows B = R = 10^5 has its
//!   reports checked against 10^5 while the fleet believes 1. Since review 13 no hello is
//!   handed to `Member::new`: a member joins with its client's first answered hello, so the
//!   two cannot differ; the test holds that.
//! - A device showing a changed configuration (re-provisioned under the same key, or a key
//!   holder) gets no error saying so: its hellos are counted as malformed, every try is waited
//!   out, and the learner reports a timeout of a device that answered each time.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use ldp_core::wire::{Auth, Hello, MAX_ENCODED_LEN, Message, Repr, StreamReader};
use ldp_core::{Bound, DeviceConfig, Epsilon};
use ldp_link::client::{LinkError, RANGE_MARGIN_SCALES, WireClient};
use ldp_link::device::Device;
use ldp_link::fleet::{Fleet, Member, Routing};
use ldp_link::transport::Link;

mod common;
use common::{Dev, device_with};

fn eps() -> Epsilon {
    Epsilon::new(1.0).unwrap()
}

/// Broke: the fleet's "joined" B, R and the client's pinned ones were two different hellos
/// (the retained one handed to `Member::new`, and the client's first answered one).
#[test]
fn a_member_is_checked_against_the_bounds_it_joined_with() {
    let big = 100_000.0;
    let inner = device_with(1, big, 1000.0);
    let auth = inner.auth();
    let mut client = WireClient::new(inner, auth);
    client.timeout = Duration::from_millis(1);
    let member = Member::new(client).unwrap();
    // The bounds the fleet judges by are the ones the client checks reports against: the
    // device's answered hello's (B = R = 10^5), whatever its retained hellos said.
    assert_eq!(Some(member.config()), member.client().config());
    assert_eq!((member.config().b.get(), member.config().r.get()), (big, big));
    let mut fleet = Fleet::new(vec![member], eps(), Routing::RoundRobin, 0);
    // What a report of the joined device can be: within B + R plus the client's margin.
    let limit = 2.0 * big + RANGE_MARGIN_SCALES * 2.0 * 2.0 * big / 1.0;
    let mut taken = 0;
    for t in 0..20 {
        if let Ok(v) = fleet.query(t % 100, None) {
            assert!(v.abs() <= limit, "round {t}: {v} beyond what a device with B = R = 10^5 reports");
            taken += 1;
        }
    }
    assert_eq!(taken, 20, "an honest device's reports are taken");
}

/// A device's link that, from its second hello on, shows B = R = 2 (a device re-provisioned
/// under the same key, or whoever holds it).
struct Reprovisioned {
    inner: Dev,
    device: Auth,
    hellos: u32,
    inbound: VecDeque<u8>,
    reader: StreamReader,
    answered: u32,
}

impl Link for Reprovisioned {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut hello_request = None;
        for &b in bytes {
            if let Some(Ok(frame)) = self.reader.push(b)
                && let Ok(Repr { seq, message: Message::HelloRequest(nonce) }) =
                    Repr::parse(&frame, &self.device)
            {
                hello_request = Some((seq, nonce, frame.tag().to_vec()));
            }
        }
        self.inner.send(bytes)?;
        let mut reply = Vec::new();
        while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
            reply.push(b);
        }
        let Some((seq, nonce, tag)) = hello_request else {
            self.inbound.extend(reply);
            return Ok(());
        };
        self.hellos += 1;
        if self.hellos == 1 {
            self.inbound.extend(reply);
            return Ok(());
        }
        let answer = Auth { nonce, ..self.device }.answering(&tag);
        let mut reader = StreamReader::new();
        for &b in &reply {
            if let Some(Ok(frame)) = reader.push(b)
                && let Ok(Repr { message: Message::Hello(h), .. }) = Repr::parse(&frame, &answer)
            {
                let two = Bound::new(2.0).unwrap();
                let h = Hello { config: DeviceConfig { b: two, r: two, ..h.config }, ..h };
                let mut buf = [0u8; MAX_ENCODED_LEN];
                self.inbound
                    .extend(Repr::new(seq, Message::Hello(h)).emit_framed(&mut buf, &answer).unwrap().iter());
                self.answered += 1;
            }
        }
        Ok(())
    }

    fn recv_byte(&mut self, _timeout: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// Broke: the device answered every try; the learner says it timed out.
#[test]
fn a_changed_configuration_is_named_not_a_timeout() {
    let inner = device_with(1, 1.0, 1000.0);
    let auth = inner.auth();
    let link = Reprovisioned {
        inner,
        device: auth,
        hellos: 0,
        inbound: VecDeque::new(),
        reader: StreamReader::new(),
        answered: 0,
    };
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
