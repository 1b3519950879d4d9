//! What the tests of host-sim share: a TCP device, its key, the CLI (a run on one device on the
//! wire), a fresh directory, and the bytes of the files a run writes.
#![allow(dead_code)] // each test binary includes this module and uses part of it

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use host_sim::experiments::runner::{AlgorithmResult, RunConfig};
use host_sim::run::output::write_all;
use ldp_core::device::{DeviceApp, SensorModel, SimulatedSensor};
use ldp_core::wire::LinkKey;
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

/// The TCP device's key material.
pub const SEED: [u8; 32] = [21; 32];
/// The TCP device's id.
pub const ID: u64 = 77;

/// A device on 127.0.0.1: every connection is served by a new device of the same seeds (a job
/// sees the same device whether the run is whole or sharded), the firmware's sensor model with
/// B = R = 1, ε limit 1, 10⁴ ε in all; each connection closed after the device sent `replies`
/// frames (a device that dies, or a link cut, mid-run). Returns the address.
pub fn serve_for(replies: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(1e4).unwrap()).unwrap();
            let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
            let reporter = Reporter::open(config, MemoryStore::provisioned(SEED), [3; 32]).unwrap();
            let model = SensorModel::new(100, Bound::new(1.0).unwrap()).unwrap();
            let source = SimulatedSensor::new(model, ChaCha20Rng::seed_from_u64(5));
            let mut app = DeviceApp::new(reporter, source, ID);
            let mut buf = [0u8; 256];
            let mut sent = 0;
            'conn: while let Ok(n @ 1..) = stream.read(&mut buf) {
                for &b in &buf[..n] {
                    if let Some(reply) = app.on_byte(b) {
                        let reply = reply.to_vec();
                        if sent == replies || stream.write_all(&reply).is_err() {
                            break 'conn;
                        }
                        sent += 1;
                        app.prepare();
                    }
                }
            }
        }
    });
    addr
}

/// A fresh directory `host-sim-<file>-<pid>-<tag>` in the temporary directory.
pub fn dir(file: &str, tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("host-sim-{file}-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The TCP device's key, written in `root` (created private).
pub fn device_key(root: &Path) -> PathBuf {
    ldp_link::keys::create_private_dir(root).unwrap();
    let keys = root.join("device.key");
    ldp_link::keys::write(&keys, ID, &LinkKey::from_seed(&SEED)).unwrap();
    keys
}

/// Runs the CLI with `LDP_KEYS` = `keys`: whether it succeeded, and its stderr.
pub fn host_sim(args: &[&str], keys: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_host-sim")).args(args).env("LDP_KEYS", keys).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into())
}

/// The bytes of the files a run writes into `dir`, `run.json` without its lines of the keys
/// `dropped` (wall-clock seconds, say, which differ between runs).
pub fn run_files(
    dir: &Path,
    config: &RunConfig,
    results: &[AlgorithmResult],
    dropped: &[&str],
) -> Vec<(String, Vec<u8>)> {
    write_all(dir, "x", "test", config, results).unwrap();
    ["regret.csv", "finals.csv", "regret.svg", "regret.png", "run.json"]
        .iter()
        .map(|f| {
            let mut bytes = std::fs::read(dir.join(f)).unwrap();
            if *f == "run.json" {
                let text = String::from_utf8(bytes).unwrap();
                let kept =
                    text.lines().filter(|l| !dropped.iter().any(|key| l.contains(&format!("\"{key}\""))));
                bytes = kept.collect::<String>().into_bytes();
            }
            (f.to_string(), bytes)
        })
        .collect()
}
