//! Review 13 (attacker's brief) of 7e6165b: `LinkError::ConfigChanged` and
//! `WireClient::pin_config` (`Member::new` pinned its client to the hello it was handed).
//!
//! Broke (conditional): a retained hello is tagged under the device's static learner auth (no
//! nonce), so every one the device ever published verifies for ever. A device run before with
//! another configuration under the same key (`fleet devices --dir` reuses keys and state while
//! B, R and ε come from each run's options; `--simulation` derives keys from --seed alone)
//! left such hellos; whoever may publish on `ldp/<id>/hello` replays one, a member built from
//! it (`fleet_bench`, the MQTT bridge test) is pinned to it, and the honest device's first
//! answered hello ends it as `ConfigChanged` ("someone holding its key"): no key needed.
//! Fixed: `Member::new` takes no hello; the member joins with its client's first answered one.

use ldp_core::Epsilon;
use ldp_core::wire::{MAX_ENCODED_LEN, Message, Repr, StreamReader};
use ldp_link::client::WireClient;
use ldp_link::device::Device;
use ldp_link::fleet::{Fleet, Member, Routing};
use std::time::Duration;

mod common;
use common::{Replayer, device_with};

/// Broke: `Member::new(client, &hello)` took the hello it was handed, and a retained one
/// replayed from yesterday's run pinned the member to yesterday's B, R; the honest device's
/// answered hello then dropped it. Since, a member joins with its client's first answered hello
/// (bound to the client's nonce): the replay is dropped as not answering it. (A retained hello
/// has number 0, which a learner never awaits, so this passes even with hellos tagged without
/// the nonce; `review14` replays an answered hello with the awaited number, which only the
/// nonce binding keeps out.)
#[test]
fn a_replayed_retained_hello_does_not_drop_an_honest_member() {
    // Yesterday's run of device 1 (B = R = 1): its retained hello, recorded off the broker.
    let yesterday = device_with(1, 1.0, 1000.0);
    let mut buf = [0u8; MAX_ENCODED_LEN];
    let hello = yesterday.app().reporter().hello(1);
    let recorded = Repr::new(0, Message::Hello(hello))
        .emit_framed(&mut buf, &yesterday.app().learner_auth())
        .unwrap()
        .to_vec();
    // Today's run, same key, B = R = 2: the replayed bytes verify under today's learner key
    // (as `MqttFleet` parses retained hellos).
    let today = device_with(1, 2.0, 1000.0);
    let auth = today.auth();
    let mut reader = StreamReader::new();
    let mut parsed = None;
    for &b in &recorded {
        if let Some(frame) = reader.push(b) {
            parsed = Some(Repr::parse(&frame.unwrap(), &today.app().learner_auth()).unwrap().message);
        }
    }
    let Some(Message::Hello(replayed)) = parsed else { panic!("the recorded hello does not verify today") };
    assert_eq!(replayed.config.b.get(), 1.0);
    let link = Replayer::new(today, recorded);
    let mut client = WireClient::new(link, auth);
    client.timeout = Duration::from_millis(20);
    let member = Member::new(client).expect("the device answers its hello");
    assert_eq!(member.config().b.get(), 2.0, "the member joined with the replayed hello");
    assert!(member.client().dropped.total() >= 1, "the replay was not seen: {:?}", member.client().dropped);
    let mut fleet = Fleet::new(vec![member], Epsilon::new(1.0).unwrap(), Routing::RoundRobin, 0);
    // The device is honest and answers every request; the replayer holds no key.
    for t in 0..5 {
        assert!(fleet.query(t, None).is_ok(), "round {t}: an honest device was dropped by a replayed hello");
    }
}
