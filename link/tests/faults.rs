//! Fault injection on the device link (in process): with frames dropped, corrupted, duplicated
//! and reordered in both directions, every query still gets exactly one report, the reports are
//! the very values a clean link gives, and the device spends exactly one ε per round.

use std::time::Duration;

use ldp_core::device::{DeviceApp, SensorModel, SimulatedSensor};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use ldp_link::client::WireClient;
use ldp_link::transport::{Faults, FaultyLink, Link, LoopbackLink};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use crate::common::released_values;

const ROUNDS: u32 = 400;

fn device() -> LoopbackLink<MemoryStore, SimulatedSensor<ChaCha20Rng>> {
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(1000.0).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
    let reporter = Reporter::open(config, MemoryStore::provisioned([4; 32]), [0; 32]).unwrap();
    let mut world = ChaCha20Rng::seed_from_u64(4);
    world.set_stream(1);
    let source =
        SimulatedSensor::new(SensorModel::new(100, ldp_core::Bound::new(1.0).unwrap()).unwrap(), world);
    LoopbackLink::new(DeviceApp::new(reporter, source, 9))
}

#[test]
fn faulty_link_loses_nothing_and_counts_nothing_twice() {
    let clean_device = device();
    let auth = clean_device.auth();
    let clean = released_values(&mut WireClient::new(clean_device, auth), ROUNDS);

    let faults = Faults { drop: 0.10, corrupt: 0.05, duplicate: 0.05, reorder: 0.05 };
    let mut client = WireClient::new(FaultyLink::new(device(), faults, 77), auth);
    client.timeout = Duration::from_millis(1);
    client.tries = 50;
    let noisy = released_values(&mut client, ROUNDS);
    let link = client.link();
    let counts = link.counts;
    eprintln!(
        "faults: {counts:?}; learner resends {}, damaged frames {}",
        client.resends, client.damaged_frames
    );
    assert!(counts.dropped > 40 && counts.corrupted > 20 && counts.duplicated > 20 && counts.reordered > 20);
    assert!(client.resends > 0 && client.damaged_frames > 0);
    assert_eq!(noisy, clean, "the reports differ from a clean link's");
    let spent = link.inner().app().reporter().accountant().spent();
    assert!((spent - f64::from(ROUNDS)).abs() < 1e-9, "spent {spent} for {ROUNDS} rounds");
}

/// A learner descheduled for longer than its timeout (a loaded machine) still takes a reply
/// that came in time: the link below makes the first read after each send take 20 ms, twenty
/// times the client's 1 ms timeout. Before, the client read that one byte, found its deadline
/// passed and gave the try up, so every query timed out on an in-process device.
#[test]
fn a_reply_already_waiting_is_taken_after_the_deadline() {
    struct Slow<L> {
        inner: L,
        fresh: bool,
    }
    impl<L: Link> Link for Slow<L> {
        fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
            self.fresh = true;
            self.inner.send(bytes)
        }
        fn recv_byte(&mut self, timeout: Duration) -> std::io::Result<Option<u8>> {
            if std::mem::take(&mut self.fresh) {
                std::thread::sleep(Duration::from_millis(20));
            }
            self.inner.recv_byte(timeout)
        }
    }
    let dev = device();
    let auth = dev.auth();
    let mut client = WireClient::new(Slow { inner: dev, fresh: false }, auth);
    client.timeout = Duration::from_millis(1);
    client.tries = 1;
    let got = client.query(1, 3, Epsilon::new(1.0).unwrap(), None);
    assert!(matches!(got, Ok(Ok(_))), "{got:?}");
}
