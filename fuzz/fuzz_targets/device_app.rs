//! The whole device application on an arbitrary byte stream from a hostile learner: never a
//! panic, never a reply that is not exactly one intact frame (length and checksum; its tag binds
//! the request's tag and the conversation the device chose, which `core/tests/wire_device.rs`
//! checks), never more budget spent (or reserved) than the total. The first input byte chooses the source: odd, a simulation's that takes fed readings
//! (`FedSource`: fed queries reach the reporter); even, a real board's, which refuses them
//! (`FeedRefused`: the path every `hardware` and `adc` image takes).
#![no_main]

use ldp_core::device::{DeviceApp, FedSource, RewardSource, SensorModel, SimulatedSensor};
use ldp_core::wire::StreamReader;
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter, StateStore};
use libfuzzer_sys::fuzz_target;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, data)) = data.split_first() else { return };
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(5.0).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
    let reporter = Reporter::open(config, MemoryStore::provisioned([1; 32]), [0; 32]).unwrap();
    let source = SimulatedSensor::new(SensorModel::new(10, Bound::new(1.0).unwrap()).unwrap(), ChaCha20Rng::seed_from_u64(2));
    if kind % 2 == 1 {
        run(DeviceApp::new(reporter, FedSource(source), 1), data);
    } else {
        run(DeviceApp::new(reporter, source, 1), data);
    }
});

fn run<R: RewardSource>(mut app: DeviceApp<MemoryStore, R>, data: &[u8]) {
    for &b in data {
        if let Some(reply) = app.on_byte(b) {
            let mut reader = StreamReader::new();
            let mut frames = 0;
            for &x in reply {
                if let Some(frame) = reader.push(x) {
                    assert!(frame.is_ok(), "a reply is an intact frame");
                    frames += 1;
                }
            }
            assert_eq!(frames, 1, "a reply is exactly one frame");
            app.prepare(); // what the firmware does after each reply
        }
        assert!(app.reporter().accountant().spent() <= 5.0 + 1e-9);
        let mut store = *app.reporter().accountant().store();
        assert!(store.load().is_ok_and(|s| s.reserved_units <= 5_000_000_000));
    }
}
