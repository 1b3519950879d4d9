//! A run on one device on the wire (`--device tcp:…`, as `serial:` and `qemu`) keeps a ledger per
//! job in `device-ledgers/` and sums them in `run.json` (`device`); `merge` of a sharded run's
//! directories combines the shards' ledgers, so the merged run records what the whole run does.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use ldp_core::device::{DeviceApp, SensorModel, SimulatedSensor};
use ldp_core::wire::LinkKey;
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const SEED: [u8; 32] = [21; 32];
const ID: u64 = 77;

/// A device on 127.0.0.1: every connection is served by a new device of the same seeds (a job
/// sees the same device whether the run is whole or sharded), the firmware's sensor model with
/// B = R = 1. Returns the address.
fn serve() -> String {
    serve_for(usize::MAX)
}

/// [`serve`], each connection closed after the device sent `replies` frames (a device that
/// dies, or a link cut, mid-run).
fn serve_for(replies: usize) -> String {
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

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("host-sim-device-ledgers-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn host_sim(args: &[&str], keys: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_host-sim")).args(args).env("LDP_KEYS", keys).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn merged_shards_of_a_run_on_one_device_keep_every_jobs_ledger() {
    let root = dir("root");
    host_sim::keys::create_private_dir(&root).unwrap();
    let keys = root.join("device.key");
    host_sim::keys::write(&keys, ID, &LinkKey::from_seed(&SEED)).unwrap();
    let device = format!("tcp:{}", serve());
    let run = |out: &Path, extra: &[&str]| {
        let out = out.to_string_lossy();
        let base = [
            "run",
            "device",
            "--device",
            &device,
            "--trials",
            "2",
            "--horizon",
            "12",
            "--quiet",
            "--out",
            &out,
        ];
        host_sim(&[&base[..], extra].concat(), &keys)
    };
    let whole = root.join("whole");
    let (ok, err) = run(&whole, &[]);
    assert!(ok, "{err}");
    let shards: Vec<PathBuf> = (0..2).map(|i| root.join(format!("s{i}"))).collect();
    for (i, s) in shards.iter().enumerate() {
        let (ok, err) = run(s, &["--shard", &format!("{i}/2")]);
        assert!(ok, "{err}");
    }
    let merged = root.join("merged");
    let shard_args: Vec<String> = shards.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    let merged_s = merged.to_string_lossy().into_owned();
    let args: Vec<&str> = ["merge"]
        .into_iter()
        .chain(shard_args.iter().map(String::as_str))
        .chain(["--out", &merged_s])
        .collect();
    let (ok, err) = host_sim(&args, &keys);
    assert!(ok, "{err}");
    let ledgers = |d: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d.join("device-ledgers"))
            .unwrap_or_else(|e| panic!("{}: no device-ledgers/ ({e})", d.display()))
            .map(|e| e.unwrap().path())
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
            .collect();
        v.sort();
        v
    };
    let whole_ledgers = ledgers(&whole);
    assert!(whole_ledgers.len() >= 2, "one ledger per job: {}", whole_ledgers.len());
    assert_eq!(ledgers(&merged), whole_ledgers);
    let device_summary = |d: &Path| {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("run.json")).unwrap()).unwrap();
        v["device"].clone()
    };
    let summary = device_summary(&merged);
    assert_eq!(summary, device_summary(&whole));
    assert_eq!(summary["jobs"], whole_ledgers.len());
    assert_eq!(summary["ledgers"], "device-ledgers");
    let _ = std::fs::remove_dir_all(&root);
}

/// A job that fails once the device has spent on it still leaves its ledger: the ε its device
/// showed spent, in `device-ledgers/`. Before, the job's error returned before the ledger was
/// written, and what the failed job spent was recorded nowhere.
#[test]
fn a_job_that_fails_mid_run_keeps_what_its_device_spent() {
    let root = dir("failed");
    host_sim::keys::create_private_dir(&root).unwrap();
    let keys = root.join("device.key");
    host_sim::keys::write(&keys, ID, &LinkKey::from_seed(&SEED)).unwrap();
    // The hello, then 5 reports; the link is cut on the 6th query.
    let device = format!("tcp:{}", serve_for(6));
    let out = root.join("out");
    let out_s = out.to_string_lossy().into_owned();
    let args = ["run", "device", "--device", &device, "--trials", "1", "--horizon", "12", "--quiet"];
    let (ok, err) = host_sim(&[&args[..], &["--out", &out_s]].concat(), &keys);
    assert!(!ok, "a run whose device went away mid-job succeeded");
    let ledgers: Vec<PathBuf> = std::fs::read_dir(out.join("device-ledgers"))
        .unwrap_or_else(|e| panic!("no device-ledgers/ after a failed job ({e}); the run said: {err}"))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(ledgers.len(), 1, "{ledgers:?}");
    let text = std::fs::read_to_string(&ledgers[0]).unwrap();
    let row: Vec<&str> = text.lines().nth(1).expect("a device's row").split(',').collect();
    assert_eq!(row[0], ID.to_string(), "{text}");
    assert_eq!(row[2], "5", "5 reports taken before the link was cut: {text}");
    let spent: f64 = row[1].parse().unwrap();
    // What authenticated frames showed: 5 reports at ε = 1. The device charged the 6th query
    // as well (its reply was cut, and no closing hello reached it): a ledger is a lower bound
    // until the device's next hello shows the rest.
    assert!((spent - 5.0).abs() < 1e-6, "5 reports at ε = 1 showed 5 spent: {text}");
    let _ = std::fs::remove_dir_all(&root);
}
