//! Issue #25: the highest boot number a learner saw from a device is kept beside the device's
//! key (`<key file>.<id>.boot`, `ldp_link::keys::boot_record`), so every later client — a new
//! run, a new fleet connection — refuses a device whose boot number went back (its state was
//! rolled back), not only the client that saw the higher one. The record is tagged under the
//! device's key: one edited without it, or of another key, is no record. Neither deleting nor
//! editing it lets a recorded report in: replies are tagged under the learner's fresh nonce and
//! the device's conversation number.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use ldp_core::device::{DeviceApp, SensorModel, SimulatedSensor};
use ldp_core::wire::{LinkKey, StreamReader};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use ldp_link::client::{LinkError, WireClient};
use ldp_link::transport::{Link, LoopbackLink};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const SEED: [u8; 32] = [31; 32];
const ID: u64 = 9;

type Dev = LoopbackLink<MemoryStore, SimulatedSensor<ChaCha20Rng>>;

fn app(store: MemoryStore) -> DeviceApp<MemoryStore, SimulatedSensor<ChaCha20Rng>> {
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(1000.0).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
    let reporter = Reporter::open(config, store, [0; 32]).unwrap();
    let source = SimulatedSensor::new(
        SensorModel::new(100, Bound::new(1.0).unwrap()).unwrap(),
        ChaCha20Rng::seed_from_u64(4),
    );
    DeviceApp::new(reporter, source, ID)
}

/// The device's state after `boots` boots (each opening of a store is one).
fn store_after(boots: u64) -> MemoryStore {
    let mut store = MemoryStore::provisioned(SEED);
    for _ in 1..boots {
        store = *app(store).reporter().accountant().store();
    }
    store
}

/// The device in boot `boot`, and the state it boots from.
fn boot(boot: u64) -> Dev {
    let dev = LoopbackLink::new(app(store_after(boot)));
    assert_eq!(dev.app().reporter().accountant().boot(), boot);
    dev
}

fn private_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ldp-boot-record-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    ldp_link::keys::create_private_dir(&d).unwrap();
    d
}

fn client(dev: Dev, record: Option<&Path>, nonces: u64) -> WireClient<Dev> {
    let auth = dev.auth();
    let mut c = WireClient::with_nonce_seed(dev, auth, nonces);
    c.timeout = Duration::from_millis(1);
    match record {
        Some(path) => c.with_boot_record(path),
        None => c,
    }
}

/// Failed before the record (the highest boot number lived in one client, or in live.json):
/// a new client — a new run — talked to a device rolled back to an earlier boot.
#[test]
fn a_device_rolled_back_is_refused_by_every_later_client() {
    let dir = private_dir("rollback");
    let key_file = dir.join("device.key");
    ldp_link::keys::write(&key_file, ID, &LinkKey::from_seed(&SEED)).unwrap();
    let record = ldp_link::keys::boot_record(&key_file, ID);
    assert_eq!(record, dir.join("device.key.9.boot"));
    // A run sees the device in boot 3.
    assert_eq!(client(boot(3), Some(&record), 1).hello().unwrap().session, 3);
    // A later run meets it rolled back to boot 2: refused, naming the record.
    let mut later = client(boot(2), Some(&record), 2);
    let e = later.hello().unwrap_err();
    let text = e.to_string();
    println!("{text}");
    assert!(matches!(e, LinkError::SessionWentBack { device_id: ID, now: 2, seen: 3, .. }), "{e:?}");
    assert!(text.contains("rolled back") && text.contains(&record.display().to_string()), "{text}");
    assert!(later.dropped.replayed >= 1, "{:?}", later.dropped);
    // Boot 3 again, and a later boot, are fine; the record follows the highest.
    assert!(client(boot(3), Some(&record), 3).hello().is_ok());
    assert!(client(boot(4), Some(&record), 4).hello().is_ok());
    assert!(matches!(
        client(boot(3), Some(&record), 5).hello(),
        Err(LinkError::SessionWentBack { seen: 4, .. })
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The record is tagged under the device's key: raised by hand it is no record (no denial of
/// service by editing a number), as is one of another key (the device provisioned anew in the
/// same place); either is rewritten at the next hello. Its mode is 0600.
#[test]
fn a_record_edited_without_the_key_is_no_record() {
    let dir = private_dir("edited");
    let record = dir.join("device.key.9.boot");
    assert_eq!(client(boot(2), Some(&record), 1).hello().unwrap().session, 2);
    let text = std::fs::read_to_string(&record).unwrap();
    let line = text.lines().find(|l| !l.starts_with('#')).unwrap().to_string();
    let tag = line.split_whitespace().nth(2).unwrap().to_string();
    // Raised to 1000 without the key (the old tag kept): not believed, the device is served.
    std::fs::write(&record, format!("9 1000 {tag}\n")).unwrap();
    assert_eq!(client(boot(2), Some(&record), 2).hello().unwrap().session, 2);
    assert!(std::fs::read_to_string(&record).unwrap().contains(&line), "rewritten as it was");
    // A record made under another key: no record for this device.
    let other = LinkKey::new([1; 32]);
    assert_eq!(ldp_link::keys::update_boot_record(&record, ID, &other, None).unwrap(), 0);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&record).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The attacker between learner and device: records every reply frame (encoded) by its sequence
/// number, or (`replay`) before each of the learner's frames reaches the device, sends the
/// learner the recorded reply with the same number.
struct Attacker {
    inner: Dev,
    inbound: VecDeque<u8>,
    frames: HashMap<u32, Vec<u8>>,
    replay: bool,
}
impl Link for Attacker {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let seq = |frame: &[u8]| {
            let mut r = StreamReader::new();
            frame.iter().find_map(|&b| r.push(b).and_then(Result::ok).map(|f| f.seq()))
        };
        if self.replay
            && let Some(old) = seq(bytes).and_then(|n| self.frames.get(&n))
        {
            self.inbound.extend(old);
        }
        self.inner.send(bytes)?;
        let mut reply = Vec::new();
        while let Some(b) = self.inner.recv_byte(Duration::ZERO)? {
            reply.push(b);
        }
        if !self.replay
            && let Some(n) = seq(&reply)
        {
            self.frames.insert(n, reply.clone());
        }
        self.inbound.extend(reply);
        Ok(())
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

/// A learner whose record was deleted meets the device in a later boot, and an attacker who
/// answers each of its frames first with the recorded reply of boot 1 with the same number
/// (hello and reports): the learner takes none of them — every report it takes the device
/// released for it now — and records the new boot.
#[test]
fn deleting_the_record_lets_no_recorded_report_in() {
    let dir = private_dir("deleted");
    let record = dir.join("device.key.9.boot");
    let eps = Epsilon::new(1.0).unwrap();
    // Boot 1: a learner plays 10 rounds (numbers 1…), the attacker records every reply.
    let dev = boot(1);
    let auth = dev.auth();
    let mut first = WireClient::with_nonce_seed(
        Attacker { inner: dev, inbound: VecDeque::new(), frames: HashMap::new(), replay: false },
        auth,
        1,
    )
    .with_boot_record(&record);
    first.timeout = Duration::from_millis(1);
    let old: Vec<f64> =
        (0..10).map(|t| first.query(t, 7, eps, None).unwrap().unwrap().release.value()).collect();
    let recorded = first.into_link().frames;
    std::fs::remove_file(&record).unwrap();
    // Boot 2, a new learner numbering as the first did.
    let dev = boot(2);
    let before = dev.app().reporter().accountant().spent();
    let attacker = Attacker { inner: dev, inbound: VecDeque::new(), frames: recorded, replay: true };
    let mut second = WireClient::with_nonce_seed(attacker, auth, 2).with_boot_record(&record);
    second.timeout = Duration::from_millis(1);
    let got: Vec<f64> =
        (0..10).map(|t| second.query(t, 7, eps, None).unwrap().unwrap().release.value()).collect();
    let spent = second.link().inner.app().reporter().accountant().spent() - before;
    println!("boot 1: {old:?}\nboot 2: {got:?}\ndropped {:?}", second.dropped);
    assert_eq!(spent, got.len() as f64, "every report taken was released now");
    assert_eq!(second.dropped.bad_tag, 11, "the recorded hello and ten reports: {:?}", second.dropped);
    assert_eq!(ldp_link::keys::update_boot_record(&record, ID, &auth.key, None).unwrap(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A device on 127.0.0.1 in boot `boot` (each connection: that device afresh).
fn serve(boot: u64) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut app = app(store_after(boot));
            let mut buf = [0u8; 256];
            while let Ok(n @ 1..) = stream.read(&mut buf) {
                for &b in &buf[..n] {
                    if let Some(reply) = app.on_byte(b) {
                        let reply = reply.to_vec();
                        if stream.write_all(&reply).is_err() {
                            break;
                        }
                        app.prepare();
                    }
                }
            }
        }
    });
    addr
}

/// `run --device tcp:…` keeps the record beside `LDP_KEYS`: a later run refuses the device
/// rolled back, saying so (before, each run started with no memory of the device).
#[test]
fn a_later_run_refuses_a_device_rolled_back() {
    let dir = private_dir("cli");
    let keys = dir.join("device.key");
    ldp_link::keys::write(&keys, ID, &LinkKey::from_seed(&SEED)).unwrap();
    let run = |boot: u64| {
        let device = format!("tcp:{}", serve(boot));
        let out = dir.join(format!("out{boot}"));
        let args =
            ["run", "device", "--device", &device, "--trials", "1", "--horizon", "3", "--quiet", "--out"];
        let out = Command::new(env!("CARGO_BIN_EXE_host-sim"))
            .args(args)
            .arg(&out)
            .env("LDP_KEYS", &keys)
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (ok, err) = run(3);
    assert!(ok, "{err}");
    let record = ldp_link::keys::boot_record(&keys, ID);
    assert_eq!(ldp_link::keys::update_boot_record(&record, ID, &LinkKey::from_seed(&SEED), None).unwrap(), 3);
    let (ok, err) = run(2);
    assert!(!ok);
    assert!(
        err.contains("is in boot 2, but this learner saw its boot 3") && err.contains("rolled back"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
