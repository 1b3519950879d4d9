//! The in-process device the link tests talk to and attack, and the frame helpers they share.
#![allow(dead_code)] // each test file uses its part

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use ldp_core::device::{DeviceApp, SensorModel, SimulatedSensor};
use ldp_core::wire::{StreamReader, checksum};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use ldp_link::transport::{Link, LoopbackLink};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

/// The device's id.
pub const ID: u64 = 9;

/// A simulated device on an in-process link.
pub type Dev = LoopbackLink<MemoryStore, SimulatedSensor<ChaCha20Rng>>;

/// B = R = 1, 1 ε per report, 1000 ε in all.
pub fn config() -> DeviceConfig {
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(1000.0).unwrap()).unwrap();
    DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy }
}

/// Boots device [`ID`] on `store` (a reboot if the store was used: the boot number moves on).
pub fn boot(store: MemoryStore) -> Dev {
    let reporter = Reporter::open(config(), store, [0; 32]).unwrap();
    let world = ChaCha20Rng::seed_from_u64(4);
    let source = SimulatedSensor::new(SensorModel::new(100, Bound::new(1.0).unwrap()).unwrap(), world);
    LoopbackLink::new(DeviceApp::new(reporter, source, ID))
}

/// The frame's raw bytes (no COBS, no delimiter), if `bytes` holds one.
pub fn raw_frame(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut r = StreamReader::new();
    bytes.iter().find_map(|&b| r.push(b).and_then(Result::ok).map(|f| f.as_bytes().to_vec()))
}

/// The type byte of the frame in `bytes`, if it holds one.
pub fn msg_type(bytes: &[u8]) -> Option<u8> {
    raw_frame(bytes).map(|raw| raw[1])
}

/// `raw` with byte `at` set to `value` and its CRC-32C recomputed (no key needed), COBS-stuffed
/// and delimited: what anyone on the link can make.
pub fn mutated(raw: &[u8], at: usize, value: u8) -> Vec<u8> {
    let mut m = raw.to_vec();
    m[at] = value;
    let n = m.len() - 4;
    let crc = checksum(&m[..n]).to_le_bytes();
    m[n..].copy_from_slice(&crc);
    let mut out = cobs::encode_vec(&m);
    out.push(0);
    out
}

/// Every byte the device sends for `bytes`.
pub fn device_answer(dev: &mut Dev, bytes: &[u8]) -> io::Result<Vec<u8>> {
    dev.send(bytes)?;
    let mut out = Vec::new();
    while let Some(b) = dev.recv_byte(Duration::ZERO)? {
        out.push(b);
    }
    Ok(out)
}

/// Device `id` (its seed material and sensor world from `id`), B = R = `bound`, 1 ε per
/// report, `total` ε in all.
pub fn device_with(id: u64, bound: f64, total: f64) -> Dev {
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(total).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(bound).unwrap(), r: Bound::new(bound).unwrap(), policy };
    let reporter = Reporter::open(config, MemoryStore::provisioned([id as u8; 32]), [0; 32]).unwrap();
    let world = ChaCha20Rng::seed_from_u64(id);
    let source = SimulatedSensor::new(SensorModel::new(100, Bound::new(bound).unwrap()).unwrap(), world);
    LoopbackLink::new(DeviceApp::new(reporter, source, id))
}

/// A device's link on which someone slips `recorded` in ahead of the device's answer to the
/// learner's first frame (a replay by whoever carries the frames or may publish on the topic).
pub struct Replayer {
    pub inner: Dev,
    pub recorded: Option<Vec<u8>>,
    inbound: VecDeque<u8>,
}

impl Replayer {
    /// `inner` with `recorded` to slip in.
    pub fn new(inner: Dev, recorded: Vec<u8>) -> Self {
        Self { inner, recorded: Some(recorded), inbound: VecDeque::new() }
    }
}

impl Link for Replayer {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.send(bytes)?;
        if let Some(recorded) = self.recorded.take() {
            self.inbound.extend(recorded);
        }
        while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
            self.inbound.push_back(b);
        }
        Ok(())
    }

    fn recv_byte(&mut self, _timeout: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}
