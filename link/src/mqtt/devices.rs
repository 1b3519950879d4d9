//! The devices' side: many devices on one connection, each with its durable state, replies
//! sent at the end of their slot.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use ldp_core::Epsilon;
use ldp_core::Reporter;
use ldp_core::device::DeviceApp;
use ldp_core::state::{LogStore, StateStore};
use ldp_core::wire::{MAX_ENCODED_LEN, Message, Repr};
use ldp_learn::env::Environment;
use rumqttc::{Client, QoS};

use super::error::{MqttError, io_error};
use super::session::{IDLE_POLL, Note, Session, parse_topic, publish, topic};
use super::url::BrokerUrl;
use crate::device::{DeviceError, device_config};
use crate::fleet::{
    DeviceSettings, EnvSource, FileMedium, MemberSeeds, lock_device_dir, may_provision, write_synced,
};

/// How long after a query arrived a device sends its reply (module docs, *Reply timing*).
/// 2 ms covers a report's computation on a host (tens of microseconds) with a wide margin.
pub const REPLY_SLOT: Duration = Duration::from_millis(2);

/// The longest a report's work may take on the device side (one thread computes every
/// device's reports): replies are spaced at least this far apart, fixed before the work
/// (module docs, *Reply timing*). A report takes tens of microseconds; work beyond the bound
/// (an overloaded host) moves its reply by whole slots and is counted.
pub const WORK_BOUND: Duration = Duration::from_micros(200);

/// How soon the device loop tries again to publish the hellos that found the client's queue
/// full.
const HELLO_RETRY: Duration = Duration::from_millis(1);

/// Where the devices' keys come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seeds {
    /// Real devices: seed material, boot entropy and world noise from the OS, fresh per device
    /// and per boot ([`MemberSeeds::from_os`]).
    Os,
    /// A simulation: everything derived from the trial's seed ([`MemberSeeds::simulated`]),
    /// reproducible — and no privacy at all against whoever knows the seed. A restarted
    /// process reuses the boot entropy and the world's noise; the boot counter still makes
    /// each boot's key fresh.
    Simulated {
        /// The trial's seed.
        trial_seed: u64,
    },
}

/// What [`serve_devices`] runs.
#[derive(Clone)]
#[non_exhaustive]
pub struct DevicesSpec {
    /// The broker.
    pub broker: BrokerUrl,
    /// Where the devices' state lives: `dir/<id>/state.bin`.
    pub dir: PathBuf,
    /// How many devices.
    pub count: usize,
    /// The first device's id; device `i` has id `first_id + i`.
    pub first_id: u64,
    /// Every device's private world: its readings are this environment's rewards.
    pub env: Arc<dyn Environment>,
    /// Per-report ε limit.
    pub epsilon: Epsilon,
    /// Each device's lifetime budget (ε).
    pub user_budget: f64,
    /// Where keys come from.
    pub seeds: Seeds,
    /// Create the devices that have no state yet (new devices, each with a fresh budget).
    /// Without it a device without state is refused: a lost state file must not become a
    /// fresh budget unnoticed.
    pub provision: bool,
}

impl DevicesSpec {
    /// `count` devices with ids from 1, keys from the OS.
    pub fn new(
        broker: BrokerUrl,
        dir: &Path,
        count: usize,
        env: Arc<dyn Environment>,
        epsilon: Epsilon,
        user_budget: f64,
    ) -> Self {
        Self {
            broker,
            dir: dir.to_path_buf(),
            count,
            first_id: 1,
            env,
            epsilon,
            user_budget,
            seeds: Seeds::Os,
            provision: false,
        }
    }
}

/// One device of a [`Devices`] set.
type App = DeviceApp<LogStore<FileMedium>, EnvSource<Arc<dyn Environment>>>;

/// A device's public state.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceStatus {
    /// Device id.
    pub id: u64,
    /// This boot's number.
    pub boot: u64,
    /// ε it will still spend.
    pub budget_remaining: f64,
    /// Its state file.
    pub state_file: PathBuf,
}

/// What [`serve_devices`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServeStats {
    /// Each device at the end.
    pub devices: Vec<DeviceStatus>,
    /// Replies sent (reports, refusals, hellos; repeats from the reply cache included).
    pub replies: u64,
    /// Slots by which replies were moved because their work overran (a backlog): the reply
    /// left at the end of a later slot.
    pub late_replies: u64,
    /// Replies dropped because the client's queue was full (an outage); hellos wait for room
    /// instead.
    pub dropped_publishes: u64,
    /// Connections made (1 + reconnections).
    pub connections: u64,
}

/// A set of devices, opened (booted) and ready to serve.
pub struct Devices {
    first_id: u64,
    apps: Vec<App>,
    broker: BrokerUrl,
    /// Each device's lock file, held while the devices run: a second process on the same
    /// directory would spend the same budget twice.
    _locks: Vec<std::fs::File>,
}

/// A reply waiting for the end of its slot, with the device's hello to refresh after it and
/// the budget that hello shows.
struct Outgoing {
    due: Instant,
    id: u64,
    reply: Vec<u8>,
    hello: Option<Vec<u8>>,
    budget: f64,
}

/// The reply thread: publishes each reply when it is due (then the device's retained hello),
/// until the channel closes and every reply is out. Returns the publishes dropped.
fn send_when_due(client: &Client, outgoing: &Receiver<Outgoing>) -> u64 {
    let mut waiting: Vec<Outgoing> = Vec::new();
    // The budget of each device's last published hello: replies may leave out of the order in
    // which they were computed, and an older hello must not replace a newer one.
    let mut shown: HashMap<u64, f64> = HashMap::new();
    let mut dropped = 0;
    let mut open = true;
    while open || !waiting.is_empty() {
        let next = waiting.iter().map(|o| o.due).min();
        let wait = next.map_or(IDLE_POLL, |due| due.saturating_duration_since(Instant::now()).min(IDLE_POLL));
        match outgoing.recv_timeout(wait) {
            Ok(o) => waiting.push(o),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => open = false,
        }
        let now = Instant::now();
        let (ready, later): (Vec<Outgoing>, Vec<Outgoing>) = waiting.drain(..).partition(|o| o.due <= now);
        waiting = later;
        for o in ready {
            if !publish(client, topic(o.id, "report"), false, &o.reply) {
                dropped += 1;
            }
            let newer = shown.get(&o.id).is_none_or(|&b| o.budget <= b);
            if let Some(hello) = o.hello.filter(|_| newer) {
                shown.insert(o.id, o.budget);
                if !publish(client, topic(o.id, "hello"), true, &hello) {
                    dropped += 1;
                }
            }
        }
        if !open && !waiting.is_empty() {
            // Closing: wait for the last replies' slots rather than spin.
            if let Some(due) = waiting.iter().map(|o| o.due).min() {
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
            }
        }
    }
    dropped
}

impl Devices {
    /// Boots every device of `spec`: locks `dir/<id>/`, checks its settings against those it
    /// was provisioned with (kept in its state file), provisions a device without state if `spec.provision` says so (and
    /// refuses it otherwise), and opens its reporter with this boot's entropy (so the boot
    /// counter moves on and the reserved budget stays spent).
    pub fn open(spec: &DevicesSpec) -> Result<Self, MqttError> {
        let mut apps = Vec::with_capacity(spec.count);
        let mut locks = Vec::with_capacity(spec.count);
        for i in 0..spec.count as u64 {
            let id = spec
                .first_id
                .checked_add(i)
                .ok_or(MqttError::Device { id: u64::MAX, reason: "device ids overflow u64".into() })?;
            let fail = |reason: String| MqttError::Device { id, reason };
            let dir = spec.dir.join(id.to_string());
            // Owner only: the directory holds the device's seed (state.bin) and key (link.key).
            crate::keys::create_private_dir(&dir)
                .map_err(io_error(format!("cannot create {}", dir.display())))?;
            let lock = lock_device_dir(&dir).map_err(|e| fail(e.to_string()))?;
            locks.push(lock);
            let seeds = match spec.seeds {
                Seeds::Os => MemberSeeds::from_os().map_err(|e| fail(e.to_string()))?,
                Seeds::Simulated { trial_seed } => MemberSeeds::simulated(trial_seed, id),
            };
            let config = device_config(spec.env.as_ref(), spec.epsilon, spec.user_budget)
                .map_err(|e: DeviceError| fail(e.to_string()))?;
            let settings = DeviceSettings::of(&config, matches!(spec.seeds, Seeds::Simulated { .. }));
            let settings_path = dir.join("config.txt");
            let state = dir.join("state.bin");
            let new = may_provision(&state, &settings_path, spec.provision)
                .map_err(|why| fail(format!("{} {why}", dir.display())))?;
            let (store, seed) = if new {
                let mut store = LogStore::new(FileMedium::create(&state, settings, &seeds.material));
                store.provision(seeds.material).map_err(|e| fail(e.to_string()))?;
                // config.txt is a copy for people, and says that the device exists (a directory
                // with it and without state has lost its device); the settings that count are
                // those in its state file. Written once the state is: a crash before it leaves a
                // device whose state is whole.
                write_synced(&settings_path, &settings.text()).map_err(|e| fail(e.to_string()))?;
                (store, seeds.material)
            } else {
                let mut store = LogStore::new(FileMedium::new(&state));
                let seed = store.load().map_err(|e| fail(e.to_string()))?.seed;
                let recorded = store.medium().settings(&seed).map_err(|e| fail(e.to_string()))?;
                if recorded != settings {
                    let line = |s: &DeviceSettings| s.text().trim().replace('\n', ", ");
                    return Err(fail(format!(
                        "was provisioned with other settings ({}, kept in {}), not {}: a device keeps its limits and mode for life",
                        line(&recorded),
                        state.display(),
                        line(&settings)
                    )));
                }
                (store, seed)
            };
            // The learner's key (`crate::keys`): a function of the seed, so written again if lost.
            let key_path = dir.join(crate::keys::DEVICE_KEY_FILE);
            let key = ldp_core::wire::LinkKey::from_seed(&seed);
            if crate::keys::read(&key_path).ok().and_then(|k| k.get(&id).copied()) != Some(key) {
                crate::keys::write(&key_path, id, &key)
                    .map_err(|e| fail(format!("{}: {e}", key_path.display())))?;
            }
            let reporter = Reporter::open(config, store, seeds.entropy).map_err(|e| fail(e.to_string()))?;
            let source = EnvSource::new(Arc::clone(&spec.env), seeds.world);
            apps.push(DeviceApp::new(reporter, source, id));
        }
        Ok(Self { first_id: spec.first_id, apps, broker: spec.broker.clone(), _locks: locks })
    }

    /// Every device's public state.
    pub fn status(&self) -> Vec<DeviceStatus> {
        (self.first_id..)
            .zip(&self.apps)
            .map(|(id, app)| {
                let accountant = app.reporter().accountant();
                DeviceStatus {
                    id,
                    boot: accountant.boot(),
                    budget_remaining: accountant.remaining(),
                    state_file: accountant.store().medium().path().to_path_buf(),
                }
            })
            .collect()
    }

    fn hello_frame(&self, i: usize) -> Option<Vec<u8>> {
        let id = self.first_id + i as u64;
        let app = self.apps.get(i)?;
        let hello = app.reporter().hello(id);
        let mut buf = [0u8; MAX_ENCODED_LEN];
        Repr::new(0, Message::Hello(hello))
            .emit_framed(&mut buf, &app.learner_auth())
            .ok()
            .map(|b| b.to_vec())
    }

    /// Serves the devices on the broker until `stop` is set (module docs): answers queries,
    /// each reply at the end of its slot, and keeps every device's retained hello current.
    pub fn serve(mut self, stop: &AtomicBool) -> Result<ServeStats, MqttError> {
        let session = Session::open(&self.broker, "devices", vec!["ldp/+/query".to_string()])?;
        let result = self.run(&session, stop);
        drop(session); // leaves: the queued publishes go first
        let mut stats = result?;
        // A clean stop takes the devices' hellos off the broker: a learner does not wait on
        // devices that are gone. From a new connection, which waits for the broker to
        // acknowledge them: removals queued behind the last replies were lost about half the
        // time when the connection left at once.
        if stats.connections > 0 {
            let ids = self.first_id..self.first_id + self.apps.len() as u64;
            if forget_devices(&self.broker, ids).is_err() {
                stats.dropped_publishes += self.apps.len() as u64;
            }
        }
        Ok(stats)
    }

    fn run(&mut self, session: &Session, stop: &AtomicBool) -> Result<ServeStats, MqttError> {
        let (client, rx) = (session.client(), &session.notes);
        let mut stats = ServeStats::default();
        if !session.first_connection(stop)? {
            stats.devices = self.status();
            return Ok(stats);
        }
        stats.connections = 1;
        // The devices whose retained hello is owed: every one at each connection. More than
        // the client's queue holds wait for room (a fleet of thousands at its start), never
        // dropped.
        let mut owed: BTreeSet<usize> = (0..self.apps.len()).collect();
        // Replies are sent by their own thread, each at the end of its slot, so that neither
        // this thread's work on other queries nor its store writes (`prepare`) move them.
        let (out, outgoing) = mpsc::channel::<Outgoing>();
        let sender = {
            let client = client.clone();
            std::thread::Builder::new()
                .name("ldp-mqtt-replies".into())
                .spawn(move || send_when_due(&client, &outgoing))
                .map_err(io_error("cannot start the reply thread"))?
        };
        let mut last_due = Instant::now();
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            self.publish_hellos(client, &mut owed);
            let wait = if owed.is_empty() { IDLE_POLL } else { HELLO_RETRY };
            match rx.recv_timeout(wait) {
                Ok(Note::Connected) => {
                    stats.connections += 1;
                    owed.extend(0..self.apps.len());
                }
                Ok(Note::Publish { topic, payload, at, retain }) => {
                    // A retained query was not sent now (anyone may leave one on the broker to
                    // drain budget at every reconnection); a message is one frame, exactly.
                    if retain || payload.iter().position(|&b| b == 0) != Some(payload.len().wrapping_sub(1)) {
                        continue;
                    }
                    let Some((id, "query")) = parse_topic(&topic) else { continue };
                    let Some(index) = id.checked_sub(self.first_id).and_then(|i| usize::try_from(i).ok())
                    else {
                        continue;
                    };
                    let Some(app) = self.apps.get_mut(index) else { continue };
                    // When the reply leaves is fixed before the work, from public times only:
                    // its slot ends REPLY_SLOT after arrival, and no sooner than WORK_BOUND after
                    // the previous reply's (one thread computes every device's reports).
                    let mut due = (at + REPLY_SLOT).max(last_due + WORK_BOUND);
                    let mut reply = None;
                    for &byte in &payload {
                        if let Some(bytes) = app.on_byte(byte) {
                            reply = Some(bytes.to_vec());
                        }
                    }
                    let Some(reply) = reply else { continue };
                    // Work that overran its bound (an overloaded host) moves the reply to the
                    // end of a later slot, never to when the work ended.
                    let now = Instant::now();
                    while due < now {
                        due += REPLY_SLOT;
                        stats.late_replies += 1;
                    }
                    last_due = due;
                    app.prepare();
                    let budget = app.reporter().accountant().remaining();
                    let hello = self.hello_frame(index);
                    stats.replies += 1;
                    if out.send(Outgoing { due, id, reply, hello, budget }).is_err() {
                        break;
                    }
                }
                Ok(Note::Error(_) | Note::Acked) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        drop(out);
        if let Ok(dropped) = sender.join() {
            stats.dropped_publishes += dropped;
        }
        stats.devices = self.status();
        Ok(stats)
    }

    /// Publishes the owed hellos, in id order, while the client's queue has room.
    fn publish_hellos(&self, client: &Client, owed: &mut BTreeSet<usize>) {
        while let Some(&i) = owed.first() {
            if let Some(frame) = self.hello_frame(i)
                && !publish(client, topic(self.first_id + i as u64, "hello"), true, &frame)
            {
                return; // the queue is full: the rest wait for room
            }
            owed.remove(&i);
        }
    }
}

/// Runs the devices of `spec` on its broker until `stop` is set: [`Devices::open`], then
/// [`Devices::serve`].
pub fn serve_devices(spec: &DevicesSpec, stop: &AtomicBool) -> Result<ServeStats, MqttError> {
    Devices::open(spec)?.serve(stop)
}

/// Removes the retained hellos of devices `ids` from the broker at `url` (an empty retained
/// message on `ldp/<id>/hello`), so that a learner no longer counts devices that are gone
/// (e.g. a benchmark's). Waits for the connection as [`serve_devices`] does, and for the
/// broker to acknowledge every removal, for at most [`FORGET_PATIENCE`] (leaving earlier
/// loses some of them).
pub fn forget_devices(url: &BrokerUrl, ids: impl IntoIterator<Item = u64>) -> Result<(), MqttError> {
    let session = Session::open(url, "forget", Vec::new())?;
    if !session.first_connection(&AtomicBool::new(false))? {
        return Ok(());
    }
    let mut sent = 0usize;
    for id in ids {
        // Blocking: the connection thread drains the queue, however many ids.
        session
            .client()
            .publish(topic(id, "hello"), QoS::AtLeastOnce, true, Vec::new())
            .map_err(|_| MqttError::Closed)?;
        sent += 1;
    }
    let start = Instant::now();
    let mut acked = 0usize;
    while acked < sent {
        let unacknowledged = MqttError::Unacknowledged { broker: url.address(), sent, acked };
        let left = FORGET_PATIENCE.checked_sub(start.elapsed()).ok_or(unacknowledged)?;
        match session.notes.recv_timeout(left) {
            Ok(Note::Acked) => acked += 1,
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Err(MqttError::Closed),
        }
    }
    Ok(())
}

/// How long [`forget_devices`] waits for the broker's acknowledgements.
pub const FORGET_PATIENCE: Duration = Duration::from_secs(30);

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dir: &Path, budget: f64) -> DevicesSpec {
        let env: Arc<dyn Environment> =
            Arc::new(ldp_learn::env::SensorEnv::new(10, 1.0).expect("a sensor environment"));
        let url = BrokerUrl::parse("mqtt://127.0.0.1:1").expect("a URL");
        DevicesSpec::new(url, dir, 3, env, Epsilon::new(1.0).expect("eps"), budget)
    }

    fn temp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ldp-devices-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn refused(spec: &DevicesSpec) -> String {
        match Devices::open(spec) {
            Ok(_) => panic!("the devices opened"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_device_without_state_is_created_only_when_asked() {
        let dir = temp("provision");
        let mut s = spec(&dir, 50.0);
        assert!(refused(&s).contains("--provision"));
        s.provision = true;
        let devices = Devices::open(&s).expect("provisioned");
        assert!(devices.status().iter().all(|d| d.boot == 1 && (d.budget_remaining - 50.0).abs() < 1e-9));
        drop(devices);
        // Deleted state does not come back as a fresh device, with --provision or without.
        std::fs::remove_file(dir.join("2").join("state.bin")).expect("remove");
        assert!(refused(&s).contains("lost its state"));
        s.provision = false;
        assert!(refused(&s).contains("lost its state"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn one_process_per_device_and_a_device_keeps_its_settings() {
        let dir = temp("lock");
        let mut s = spec(&dir, 50.0);
        s.provision = true;
        let first = Devices::open(&s).expect("provisioned");
        assert!(refused(&s).contains("in use by another process"));
        drop(first);
        let again = Devices::open(&s).expect("reopened once the first let go");
        assert!(again.status().iter().all(|d| d.boot == 2));
        drop(again);
        for other in
            [spec(&dir, 5000.0), DevicesSpec { seeds: Seeds::Simulated { trial_seed: 1 }, ..s.clone() }]
        {
            assert!(refused(&other).contains("other settings"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Asks every device of `devices` for up to `n` reports (through the device application's
    /// bytes, as a broker would deliver them), stopping when it refuses for lack of budget: the
    /// reports and the boot each device answered in.
    fn report(devices: Devices, n: usize) -> Vec<(usize, u64)> {
        let eps = Epsilon::new(1.0).expect("eps");
        devices
            .apps
            .into_iter()
            .map(|app| {
                let boot = app.reporter().accountant().boot();
                let link = crate::transport::LoopbackLink::new(app);
                let auth = link.auth();
                let mut client = crate::client::WireClient::new(link, auth);
                let mut reports = 0;
                for round in 0..n as u32 {
                    match client.query(round, 0, eps, None).expect("the loopback answers") {
                        Ok(_) => reports += 1,
                        Err(ldp_core::wire::Refusal::BudgetExhausted { .. }) => break,
                        Err(other) => panic!("refused: {other}"),
                    }
                }
                (reports, boot)
            })
            .collect()
    }

    fn drain(devices: Devices) -> Vec<(usize, u64)> {
        report(devices, usize::MAX)
    }

    /// The newer of the two records of a state file (by generation): its offset.
    fn newer_slot(state: &[u8]) -> usize {
        let generation =
            |at: usize| u32::from_le_bytes([state[at + 4], state[at + 5], state[at + 6], state[at + 7]]);
        if generation(64) > generation(0) { 64 } else { 0 }
    }

    #[test]
    fn an_edited_settings_file_gives_no_budget_back() {
        // Issue 25, item 2: provisioned with a budget of 2, drained, `lifetime_budget = 2`
        // edited to 50 in config.txt, restarted with --user-budget 50: refused.
        let dir = temp("edited");
        let mut s = DevicesSpec { count: 1, ..spec(&dir, 2.0) };
        s.provision = true;
        assert_eq!(drain(Devices::open(&s).expect("provisioned")), [(2, 1)]);
        let settings = dir.join("1").join("config.txt");
        let text = std::fs::read_to_string(&settings).expect("settings");
        assert!(text.contains("lifetime_budget = 2\n"), "{text}");
        std::fs::write(&settings, text.replace("lifetime_budget = 2\n", "lifetime_budget = 50\n"))
            .expect("edit");
        let more = DevicesSpec { provision: false, ..spec(&dir, 50.0) };
        let more = DevicesSpec { count: 1, ..more };
        let why = refused(&more);
        assert!(why.contains("other settings") && why.contains("lifetime_budget = 2,"), "{why}");
        // The settings in state.bin: rewritten without their CRC, or cut off, refused too.
        let state = dir.join("1").join("state.bin");
        let bytes = std::fs::read(&state).expect("state");
        let total_at = 128 + 4 + 24;
        let mut rewritten = bytes.clone();
        rewritten[total_at..total_at + 8].copy_from_slice(&50f64.to_le_bytes());
        // Another device's settings (its CRC right for its own seed), copied in.
        let other = DevicesSpec { count: 1, first_id: 2, provision: true, ..spec(&dir, 50.0) };
        drop(Devices::open(&other).expect("another device"));
        let mut swapped = bytes.clone();
        swapped[128..]
            .copy_from_slice(&std::fs::read(dir.join("2").join("state.bin")).expect("state")[128..]);
        for (edit, says) in
            [(rewritten, "damaged"), (swapped, "another device's"), (bytes[..128].to_vec(), "128 bytes")]
        {
            std::fs::write(&state, edit).expect("edit");
            let why = refused(&more);
            assert!(why.contains(says), "{why}");
        }
        std::fs::write(&state, bytes).expect("restore");
        // With its own settings it opens, and its budget is still spent.
        let same = DevicesSpec { provision: false, ..s.clone() };
        let devices = Devices::open(&same).expect("reopened with its own settings");
        assert_eq!(devices.status()[0].budget_remaining, 0.0);
        assert_eq!(drain(devices), [(0, 2)]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_blanked_newest_record_is_refused() {
        // Issue 25, item 4: on an exhausted device, the newer slot of state.bin overwritten
        // with 0xFF gave "budget left 4" and 4 more reports, again and again.
        let dir = temp("blanked");
        let mut s = DevicesSpec { count: 1, ..spec(&dir, 50.0) };
        s.provision = true;
        assert_eq!(drain(Devices::open(&s).expect("provisioned")), [(50, 1)]);
        s.provision = false;
        let path = dir.join("1").join("state.bin");
        // Only tampering leaves a blank slot beside a written one: refused.
        let mut blanked = std::fs::read(&path).expect("state");
        let at = newer_slot(&blanked);
        blanked[at..at + 64].fill(0xFF);
        std::fs::write(&path, &blanked).expect("blank");
        let why = refused(&s);
        assert!(why.contains("blank"), "{why}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_torn_newest_record_gives_no_budget_back_and_repeats_no_boot() {
        // Torn (what a power cut mid-write also leaves) right after each boot's first report:
        // the boot's own write, its first reservation, was the newest record. Before, the
        // device fell back to the record before it: the report was free and the next boot had
        // the same number (with --simulation, the same noise key).
        let dir = temp("torn");
        let fresh = DevicesSpec { count: 1, provision: true, ..spec(&dir, 50.0) };
        let state = dir.join("1").join("state.bin");
        let (mut boots, mut released) = (Vec::new(), 0);
        for cycle in 0..4 {
            let spec = DevicesSpec { provision: cycle == 0, ..fresh.clone() };
            let devices = Devices::open(&spec).expect("a torn record is a power cut: the device boots");
            let left = devices.status()[0].budget_remaining;
            assert!(left <= 50.0 - released as f64, "budget came back: {left} left after {released} reports");
            let [(reports, boot)] = report(devices, 1)[..] else { panic!("one device") };
            assert_eq!(reports, 1);
            assert!(boots.iter().all(|&b| b < boot), "boot {boot} again after {boots:?}");
            boots.push(boot);
            released += reports;
            let mut torn = std::fs::read(&state).expect("state");
            let at = newer_slot(&torn);
            torn[at + 63] ^= 0xA5;
            std::fs::write(&state, &torn).expect("tear");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
