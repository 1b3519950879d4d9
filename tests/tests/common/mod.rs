//! What the QEMU and broker tests share: the firmware image to boot, or why the test skips, a
//! fresh working directory per emulated device, and a private MQTT broker.
#![allow(dead_code)] // each test binary includes this module and uses part of it

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use ldp_link::mqtt::{Broker, MqttFleet};
use ldp_link::transport::{FirmwareError, build_firmware};

/// The firmware built with `features` (see [`build_firmware`]), or `None` when QEMU or the
/// thumbv7em target is missing: the test then skips with the reason printed — unless
/// REQUIRE_QEMU=1 (CI), when that is a failure.
pub fn firmware(features: &[&str]) -> Option<PathBuf> {
    let reason = if Command::new("qemu-system-arm").arg("--version").output().is_err() {
        "qemu-system-arm is not installed (scripts/install-deps.sh --qemu)".to_string()
    } else {
        match build_firmware(features) {
            Ok(elf) => return Some(elf),
            Err(FirmwareError::TargetMissing) => FirmwareError::TargetMissing.to_string(),
            Err(e) => panic!("{e}"),
        }
    };
    if std::env::var_os("REQUIRE_QEMU").is_some_and(|v| v == "1") {
        panic!("REQUIRE_QEMU=1 but {reason}");
    }
    eprintln!("skipping this QEMU test: {reason}");
    None
}

/// An empty temporary directory named after `name` and this process.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ldp-qemu-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The default firmware ([`firmware`]) and a fresh working directory `name` ([`fresh_dir`]),
/// or `None` (the test skips, saying why).
pub fn firmware_and_dir(name: &str) -> Option<(PathBuf, PathBuf)> {
    let elf = firmware(&[])?;
    Some((elf, fresh_dir(name)))
}

/// A private broker on a free loopback port, or `None` (the test skips, saying why) when
/// mosquitto is missing and REQUIRE_BROKER is not 1 — with it (CI), a missing broker fails.
pub fn broker() -> Option<Broker> {
    if !Broker::available() {
        let reason = "mosquitto is not installed (scripts/broker.sh install)";
        if std::env::var_os("REQUIRE_BROKER").is_some_and(|v| v == "1") {
            panic!("REQUIRE_BROKER=1 but {reason}");
        }
        eprintln!("skipping this MQTT test: {reason}");
        return None;
    }
    Some(Broker::start().expect("mosquitto starts"))
}

/// Waits, at most `patience`, until device `id`'s latest hello satisfies `check`; that budget.
pub fn hello_until(fleet: &MqttFleet, id: u64, patience: Duration, check: impl Fn(f64) -> bool) -> f64 {
    let start = Instant::now();
    loop {
        let budget = fleet.latest_hello(id).map(|h| h.budget_remaining);
        match budget {
            Some(b) if check(b) => return b,
            _ if start.elapsed() > patience => panic!("device {id}: hello budget {budget:?}"),
            _ => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// The link keys under `dirs` (`ldp_link::keys::read` of each), once at least `n` are there:
/// device processes and emulated boards write theirs when they are provisioned, while the test
/// goes on.
#[allow(dead_code)] // not every test binary uses every helper
pub fn keys(dirs: &[&std::path::Path], n: usize) -> ldp_link::keys::Keys {
    let start = Instant::now();
    loop {
        let mut keys = ldp_link::keys::Keys::new();
        for dir in dirs {
            if let Ok(found) = ldp_link::keys::read(dir) {
                keys.extend(found);
            }
            // An emulated board's directory: its own key file (a directory of keys is read
            // as a fleet's, `DIR/<id>/link.key` only).
            if let Ok(found) = ldp_link::keys::read(&dir.join(ldp_link::keys::BOARD_KEY_FILE)) {
                keys.extend(found);
            }
        }
        if keys.len() >= n {
            return keys;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "only {} of {n} keys under {dirs:?}", keys.len());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// An MQTT client of the broker on `port` ("eve": anyone allowed to publish and subscribe) and
/// the first non-empty message it gets on `topic` (a device's retained hello, say), waiting up
/// to a minute for it.
pub fn record_first(port: u16, topic: &str) -> (rumqttc::Client, Vec<u8>) {
    use rumqttc::{Client, Event, MqttOptions, Packet, QoS};
    let (eve, mut connection) = Client::new(MqttOptions::new("eve", "127.0.0.1", port), 64);
    eve.subscribe(topic, QoS::AtLeastOnce).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for event in connection.iter() {
            match event {
                Ok(Event::Incoming(Packet::Publish(p))) if !p.payload.is_empty() => {
                    let _ = tx.send(p.payload.to_vec());
                }
                Ok(_) => {}
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    });
    let recorded =
        rx.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("a message on {topic}"));
    (eve, recorded)
}

/// A one-trial run of 10 rounds, seed 7, at `epsilon`, on the MQTT fleet at `url` (round robin).
pub fn mqtt_fleet_run(url: &str, epsilon: ldp_core::Epsilon) -> host_sim::experiments::runner::RunConfig {
    host_sim::experiments::runner::RunConfig {
        trials: 1,
        horizon: 10,
        seed: 7,
        epsilon: Some(epsilon),
        device: host_sim::experiments::runner::DeviceKind::Mqtt { url: url.to_string() },
        fleet: Some(host_sim::run::settings::FleetSpec {
            routing: ldp_link::fleet::Routing::RoundRobin,
            user_budget: None,
            ledger_dir: None,
        }),
        ..host_sim::experiments::runner::RunConfig::default()
    }
}
