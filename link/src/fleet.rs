//! A fleet: many devices, each a user with its own budget, answering one learner.
//!
//! Local DP exists because rewards come from many people's devices. In a fleet each round's
//! query goes to one device, chosen by a [`Routing`] among the devices with budget left, so a
//! user spends ε on the rounds routed to it, not T·ε. Every member runs the device application
//! (`ldp_core::device::DeviceApp`, the code the firmware runs) behind the wire format, over any
//! [`Link`]: in memory for the in-process fleet (`--device fleet:N`), or over MQTT
//! (`crate::mqtt`).
//!
//! The pieces:
//! - [`EnvSource`]: an experiment's environment as a device's [`RewardSource`] (a simulated
//!   user whose private reading is the environment's reward);
//! - [`FileMedium`]: a device's durable state (seed material, boot counter, reserved budget) in
//!   a file, so that a restarted device process never gets its budget back;
//! - [`Fleet`]: the learner's view, a [`Device`] that routes each query
//!   and records what every member spent;
//! - [`record`]: each query written to a file before it is sent, so that a run killed with
//!   queries in flight can say, running the job again, what they spent unanswered.

use std::borrow::Borrow;
use std::fs::OpenOptions;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ldp_core::Epsilon;
use ldp_core::device::RewardSource;
use ldp_core::state::{LogMedium, RECORD_LEN};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

use ldp_core::device::DeviceApp;
use ldp_core::wire::Refusal;
use ldp_core::{LaplaceMechanism, MemoryStore, ReportError, Reporter, TruncationLevel};
use rand::RngExt;

use crate::client::{Dropped, LinkError, WireClient};
use crate::device::{Device, DeviceError, MemberRecord, device_config};
use crate::transport::{Link, LoopbackLink};
use ldp_learn::env::{Environment, SimRng};
use ldp_learn::rules::derive_seed;

/// How each round's device is chosen among the members with budget left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Routing {
    /// In turn, by device id: with no faults each of N users answers ⌈T/N⌉ or ⌊T/N⌋ rounds.
    #[default]
    RoundRobin,
    /// Uniformly at random (from the run's seed).
    Random,
}

/// What a member device is keyed with: its secret seed material, its boot entropy and the seed
/// of its world's noise ([`EnvSource`]).
#[derive(Clone, Copy)]
pub struct MemberSeeds {
    /// Seed material to provision a blank store with.
    pub material: [u8; 32],
    /// Entropy for this boot.
    pub entropy: [u8; 32],
    /// Seed of the world generator.
    pub world: u64,
}

impl MemberSeeds {
    /// A simulated member: the member with id `id` of the fleet of the trial with seed
    /// `trial_seed`, everything derived from those — reproducible, and known to whoever knows the seed: a
    /// simulation, with no privacy against the learner. The in-process fleet and
    /// `host-sim fleet devices --simulation` derive the same seeds, so their runs match.
    pub fn simulated(trial_seed: u64, id: u64) -> Self {
        let fleet = derive_seed(trial_seed, FLEET_STREAM, 0);
        let mut rng = ChaCha20Rng::seed_from_u64(derive_seed(fleet, id, 1));
        let (mut material, mut entropy) = ([0u8; 32], [0u8; 32]);
        rng.fill_bytes(&mut material);
        rng.fill_bytes(&mut entropy);
        Self { material, entropy, world: derive_seed(fleet, id, 2) }
    }

    /// A real member: everything from the OS's entropy, which no one else knows.
    pub fn from_os() -> io::Result<Self> {
        let mut bytes = [0u8; 72];
        getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("no OS entropy: {e}")))?;
        let (mut material, mut entropy, mut world) = ([0u8; 32], [0u8; 32], [0u8; 8]);
        material.copy_from_slice(&bytes[..32]);
        entropy.copy_from_slice(&bytes[32..64]);
        world.copy_from_slice(&bytes[64..]);
        Ok(Self { material, entropy, world: u64::from_le_bytes(world) })
    }
}

/// A random starting point for a session's sequence numbers (OS entropy): two sessions with
/// one device reuse a number with probability about 2n/2³² for n queries each.
pub fn session_start() -> io::Result<u32> {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("no OS entropy: {e}")))?;
    // The lower half: a conversation's numbers only rise (they do not wrap), so a run leaves
    // itself at least 2^31 numbers.
    Ok(u32::from_le_bytes(bytes) >> 1)
}

/// Holds `dir/lock` for as long as the returned file lives: one device, one process (two
/// processes on one device's state would spend its budget twice). Fails if another holds it.
pub fn lock_device_dir(dir: &Path) -> io::Result<std::fs::File> {
    // 0700 when created here: it holds the device's seed and key (an existing directory is
    // left as it is, as `keys::create_private_dir` leaves it).
    crate::keys::create_private_dir(dir)?;
    let lock = std::fs::File::create(dir.join("lock"))?;
    lock.try_lock().map_err(|_| {
        io::Error::new(
            io::ErrorKind::WouldBlock,
            format!(
                "{} is in use by another process: one device, one process (stop the other first)",
                dir.display()
            ),
        )
    })?;
    Ok(lock)
}

/// Why a device may not be provisioned now ([`may_provision`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotProvisionable {
    /// Its marker is there, its state is not: provisioning it again would give the same device
    /// a fresh budget.
    LostState,
    /// It has no state, and no one asked for a new device.
    NotAsked,
}

impl std::fmt::Display for NotProvisionable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::LostState => {
                "has lost its state (it was provisioned, but its state file is gone): provisioning it again would give it a fresh budget; restore the state, or retire the device and start a new one in a new directory"
            }
            Self::NotAsked => "has no state: a new device is created only with --provision",
        })
    }
}

/// The provisioning rule for a device whose state is the file `state` and whose marker, written
/// when it was provisioned, is the file `marker`: `Ok(true)` if it is new and may be
/// provisioned now (`provision` asked for it), `Ok(false)` if it has state. A device whose
/// marker is there but whose state is not has lost its state: refused even with `provision`,
/// since provisioning it again would give the same device a fresh budget.
pub fn may_provision(state: &Path, marker: &Path, provision: bool) -> Result<bool, NotProvisionable> {
    match (state.exists(), marker.exists(), provision) {
        (true, _, _) => Ok(false),
        (false, true, _) => Err(NotProvisionable::LostState),
        (false, false, true) => Ok(true),
        (false, false, false) => Err(NotProvisionable::NotAsked),
    }
}

/// Writes `text` to `path` and syncs it and its directory (a device's settings must survive a
/// power cut as its state does).
pub fn write_synced(path: &Path, text: &str) -> io::Result<()> {
    let mut file = std::fs::File::create(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// The stream of [`derive_seed`] that a trial's fleet is derived from (apart from the
/// learners' streams 0–3).
const FLEET_STREAM: u64 = 0xF1EE7;

/// An environment as a device's reward source: action `a` reads one raw reward of arm `a`
/// (`Environment::sample`), with the world's noise drawn from the source's own generator.
/// The generator stands for the physical world: a device seeded from OS entropy has noise no
/// one else knows; one seeded from a run's seed is a reproducible simulation.
pub struct EnvSource<E> {
    env: E,
    world: SimRng,
}

impl<'e, E: Borrow<dyn Environment + 'e>> EnvSource<E> {
    /// `env` read with noise from a generator seeded with `world_seed`.
    pub fn new(env: E, world_seed: u64) -> Self {
        Self { env, world: SimRng::seed_from_u64(world_seed) }
    }

    /// The environment.
    pub fn env(&self) -> &(dyn Environment + 'e) {
        self.env.borrow()
    }
}

impl<'e, E: Borrow<dyn Environment + 'e>> RewardSource for EnvSource<E> {
    /// The environment's arms (saturating at `u32::MAX - 1`; the wire's actions are 32-bit).
    fn actions(&self) -> u32 {
        u32::try_from(self.env.borrow().num_arms()).unwrap_or(u32::MAX - 1).min(u32::MAX - 1)
    }

    /// One reward of arm `action`; `None` for an action outside the arms (which the device
    /// refuses without looking at the reading).
    fn read(&mut self, action: u32) -> Option<f64> {
        let arm = usize::try_from(action).ok()?;
        let env = self.env.borrow();
        (arm < env.num_arms()).then(|| env.sample(arm, &mut self.world))
    }
}

/// A fleet device's public settings, fixed at provisioning: B, R, its per-report ε limit, its
/// lifetime budget, and whether its keys come from a run's seed (`--simulation`) rather than
/// the OS. [`FileMedium`] keeps them in the device's state file, under a CRC, and a device is
/// never reopened with others: a larger total would be budget given back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceSettings {
    /// B.
    pub b: f64,
    /// R.
    pub r: f64,
    /// The largest ε of one report.
    pub per_report_limit: f64,
    /// The lifetime budget.
    pub total: f64,
    /// Keys from a run's seed (a simulation, no privacy) rather than from the OS.
    pub simulated_keys: bool,
}

/// The settings' first bytes in the state file (after the two record slots).
const SETTINGS_MAGIC: [u8; 4] = *b"LDPF";
/// The settings in the state file: magic, B, R, per-report limit, total (four `f64` LE), the key
/// mode (`u32` LE: 0 OS, 1 simulation), CRC-32C of the 40 bytes before followed by the device's
/// 32 bytes of seed material (so that another device's settings, copied in, do not pass).
const SETTINGS_LEN: usize = 4 + 32 + 4 + 4;

/// The settings' CRC: of their first 40 bytes and the device's seed material.
fn settings_crc(bytes: &[u8; SETTINGS_LEN], seed: &[u8; 32]) -> u32 {
    let mut covered = [0u8; 40 + 32];
    covered[..40].copy_from_slice(&bytes[..40]);
    covered[40..].copy_from_slice(seed);
    ldp_core::checksum::crc32c(&covered)
}

impl DeviceSettings {
    /// The settings of a device with `config`.
    pub fn of(config: &ldp_core::DeviceConfig, simulated_keys: bool) -> Self {
        let p = &config.policy;
        Self {
            b: config.b.get(),
            r: config.r.get(),
            per_report_limit: p.per_report_limit().get(),
            total: p.total().get(),
            simulated_keys,
        }
    }

    /// One `name = value` line per setting (the device directory's `config.txt`, messages).
    pub fn text(&self) -> String {
        let keys = if self.simulated_keys { "simulation" } else { "os" };
        format!(
            "b = {}\nr = {}\nper_report_limit = {}\nlifetime_budget = {}\nkeys = {keys}\n",
            self.b, self.r, self.per_report_limit, self.total
        )
    }

    fn encode(&self, seed: &[u8; 32]) -> [u8; SETTINGS_LEN] {
        let mut bytes = [0u8; SETTINGS_LEN];
        bytes[..4].copy_from_slice(&SETTINGS_MAGIC);
        for (chunk, x) in
            bytes[4..36].chunks_exact_mut(8).zip([self.b, self.r, self.per_report_limit, self.total])
        {
            chunk.copy_from_slice(&x.to_le_bytes());
        }
        bytes[36..40].copy_from_slice(&u32::from(self.simulated_keys).to_le_bytes());
        let crc = settings_crc(&bytes, seed);
        bytes[40..].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    /// `None` unless magic, key mode and CRC (with the device's `seed`) are right.
    fn decode(bytes: &[u8; SETTINGS_LEN], seed: &[u8; 32]) -> Option<Self> {
        let word = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        let float = |at: usize| f64::from_bits(u64::from(word(at)) | (u64::from(word(at + 4)) << 32));
        let simulated_keys = match word(36) {
            0 => false,
            1 => true,
            _ => return None,
        };
        (bytes[..4] == SETTINGS_MAGIC && word(40) == settings_crc(bytes, seed)).then(|| Self {
            b: float(4),
            r: float(12),
            per_report_limit: float(20),
            total: float(28),
            simulated_keys,
        })
    }
}

/// A device's state in a file: two 64-byte record slots written alternately (the ping-pong of
/// a medium overwritten in place, as the firmware's semihosting file), then the device's
/// [`DeviceSettings`] with a magic and a CRC-32C: the host's durable [`LogMedium`]. The file is
/// created whole (both slots blank, the settings written) by [`FileMedium::create`] and must
/// stay exactly [`FileMedium::LEN`] bytes: a missing file reads blank only until the file has
/// been seen, and a file of another length is an error, never a blank store or an older
/// record. Each write is synced to the disk (`sync_data`) before it returns, and the file's
/// directory entry when the file is created, so a release never waits on a write the OS could
/// lose.
///
/// The settings' CRC, like the records', is against damage and edits that do not recompute it
/// (a settings line edited, the file cut short); it also covers the device's seed material, so
/// another device's settings, copied in, do not pass. What a host file cannot do: stop whoever
/// controls the disk from writing a state of its own with the CRCs recomputed, or putting back
/// an older copy, which gives the budget back (a device with a monotonic counter out of the
/// OS's reach — a TPM, a secure element — can). `docs/fleet.md` says what is covered.
#[derive(Debug)]
pub struct FileMedium {
    path: PathBuf,
    seen: bool,
    /// What a new file is created with, and the seed material it will be provisioned with;
    /// `None`: the file must exist.
    create: Option<(DeviceSettings, [u8; 32])>,
}

impl FileMedium {
    /// The file's length: two record slots and the settings.
    pub const LEN: u64 = (2 * RECORD_LEN + SETTINGS_LEN) as u64;

    /// The state of an existing device in `path` (nothing is read yet). Writing to a missing
    /// file is an error.
    pub fn new(path: &Path) -> Self {
        Self { path: path.to_path_buf(), seen: false, create: None }
    }

    /// The state of a new device with `settings` in `path`, to be provisioned with `seed`: the
    /// file is created, blank, with the settings (their CRC covers `seed` too), at provisioning
    /// (the first write).
    pub fn create(path: &Path, settings: DeviceSettings, seed: &[u8; 32]) -> Self {
        Self { path: path.to_path_buf(), seen: false, create: Some((settings, *seed)) }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The settings the device with seed material `seed` (its loaded state's) was provisioned
    /// with, read from the file: an error if the file cannot be read, has another length, or
    /// its settings' magic or CRC is wrong (damaged, or another device's).
    pub fn settings(&self, seed: &[u8; 32]) -> io::Result<DeviceSettings> {
        let mut file = std::fs::File::open(&self.path)?;
        self.check_len(&file)?;
        let mut bytes = [0u8; SETTINGS_LEN];
        file.seek(SeekFrom::Start(2 * RECORD_LEN as u64))?;
        file.read_exact(&mut bytes)?;
        DeviceSettings::decode(&bytes, seed).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: the device's settings in it are damaged or another device's (their CRC fails): it will not report",
                    self.path.display()
                ),
            )
        })
    }

    fn check_len(&self, file: &std::fs::File) -> io::Result<()> {
        match file.metadata()?.len() {
            Self::LEN => Ok(()),
            len => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is {len} bytes, not {}: truncated, not a device's state, or (128 bytes) a device from before its settings were kept in its state file, which cannot be checked: retire it and provision a new one in a new directory",
                    self.path.display(),
                    Self::LEN
                ),
            )),
        }
    }
}

impl LogMedium for FileMedium {
    type Error = io::Error;
    const SLOTS: usize = 1;
    const IN_PLACE: bool = true; // overwritten in place: every state written to both slots

    fn read(&mut self, sector: usize, _slot: usize, buf: &mut [u8; RECORD_LEN]) -> io::Result<()> {
        buf.fill(0xFF);
        let mut file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound && !self.seen => return Ok(()),
            Err(e) => return Err(e),
        };
        self.seen = true;
        self.check_len(&file)?;
        file.seek(SeekFrom::Start((sector * RECORD_LEN) as u64))?;
        file.read_exact(buf)
    }

    fn program(&mut self, sector: usize, _slot: usize, record: &[u8; RECORD_LEN]) -> io::Result<()> {
        if !self.seen && !self.path.exists() {
            let Some((settings, seed)) = self.create else {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{} does not exist: no device to write to", self.path.display()),
                ));
            };
            // Created whole, blank, with its settings, and its directory entry made durable,
            // before any record.
            // Owner only: the records hold the device's seed.
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            let mut file = options.open(&self.path)?;
            file.write_all(&[0xFF; 2 * RECORD_LEN])?;
            file.write_all(&settings.encode(&seed))?;
            file.sync_all()?;
            // The file's directory, and the one holding it (both may be new).
            for dir in self.path.ancestors().skip(1).take(2).filter(|d| !d.as_os_str().is_empty()) {
                std::fs::File::open(dir)?.sync_all()?;
            }
        }
        let mut file = OpenOptions::new().write(true).open(&self.path)?;
        self.seen = true;
        self.check_len(&file)?;
        file.seek(SeekFrom::Start((sector * RECORD_LEN) as u64))?;
        file.write_all(record)?;
        file.sync_data()
    }

    fn erase(&mut self, _sector: usize) -> io::Result<()> {
        Ok(()) // overwritable: `program` replaces the slot
    }
}

/// One device of a fleet, from the learner's side.
pub struct Member<L> {
    id: u64,
    /// Locked by whoever queries it: the fleet's thread, or one of an [`InFlightFleet`]'s
    /// workers while the member's query is in flight.
    client: Arc<Mutex<WireClient<L>>>,
    /// A query of an [`InFlightFleet`] is outstanding at it: not asked again until it settles.
    busy: bool,
    /// The replies its client had dropped when its last query settled (the ledger's figure
    /// while someone holds the client).
    dropped_replies: Dropped,
    round: u32,
    total: f64,
    remaining: f64,
    reports: u64,
    skipped: u64,
    /// Not asked again before this round (after a timeout), unless no one else can answer.
    benched_until: u64,
    /// Cannot serve this fleet's queries (its limits, its state, its arms): never asked again.
    dropped: bool,
    backoff: u64,
    /// The configuration of the hello it joined with (its client refuses any other later).
    config: ldp_core::DeviceConfig,
}

impl<L: Link> Member<L> {
    /// A member behind `client`, as the device's own answered hellos describe it: the
    /// configuration of the first hello the client took (it holds the device to it), the least
    /// budget its authenticated frames showed left. A client that has taken no hello yet greets
    /// the device first. Never from a retained hello off the broker: anyone may replay one from
    /// an earlier run of the device under the same key, with other bounds (review 13).
    pub fn new(mut client: WireClient<L>) -> Result<Self, LinkError> {
        let config = match client.config() {
            Some(config) => config,
            None => client.hello()?.config,
        };
        Ok(Self {
            id: client.auth().device_id,
            remaining: client.budget_shown(),
            dropped_replies: client.dropped,
            client: Arc::new(Mutex::new(client)),
            busy: false,
            round: 0,
            total: config.policy.total().get(),
            reports: 0,
            skipped: 0,
            benched_until: 0,
            dropped: false,
            backoff: 0,
            config,
        })
    }

    /// The device's id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The configuration it joined with (its first answered hello's): the bounds its queries
    /// are judged by and its reports checked against.
    pub fn config(&self) -> ldp_core::DeviceConfig {
        self.config
    }

    /// The protocol client (link statistics); waits while a query of the member is in flight.
    /// The guard locks the client: take one at a time (`let c = m.client();` then use `c`), as
    /// a second `client()` while the first is held waits for ever.
    pub fn client(&self) -> MutexGuard<'_, WireClient<L>> {
        lock(&self.client)
    }

    /// The protocol client, to change its `timeout` and `tries` during a run (the routing
    /// state stays the fleet's).
    pub fn client_mut(&mut self) -> MutexGuard<'_, WireClient<L>> {
        lock(&self.client)
    }

    /// Gives the protocol client back (e.g. to query the device directly); `None` while a query
    /// of an [`InFlightFleet`] still holds it (settle or drain the fleet first).
    pub fn into_client(self) -> Option<WireClient<L>> {
        Arc::try_unwrap(self.client).ok().map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner))
    }

    fn can_pay(&self, epsilon: Epsilon) -> bool {
        // Half of the device's unit (nano-ε) absorbs the rounding of its remaining budget.
        !self.dropped && self.remaining + 0.5e-9 >= epsilon.get()
    }
}

/// The learner's view of a fleet: a [`Device`] that sends each query to one member with budget
/// left, chosen by the [`Routing`]. A member that does not answer (its [`WireClient`] gave up
/// after its tries) is skipped for the round, which goes to the next member, and is asked
/// again after a backoff; a member that refuses for lack of budget is not asked again. Each
/// round's report comes from exactly one member (replies carry their query's sequence number;
/// a late reply to a skipped round is dropped as stale).
pub struct Fleet<L> {
    members: Vec<Member<L>>,
    routing: Routing,
    rng: SimRng,
    epsilon: Epsilon,
    next: usize,
    round: u64,
    left_out: Vec<u64>,
    /// Where each query is written before it is sent, and its settlement after, if anywhere.
    record: Option<QueryRecord>,
}

impl<L: Link> Fleet<L> {
    /// A fleet of `members` (routed in the order given), queried at `epsilon`; `seed` drives
    /// random routing.
    pub fn new(members: Vec<Member<L>>, epsilon: Epsilon, routing: Routing, seed: u64) -> Self {
        Self {
            members,
            routing,
            rng: SimRng::seed_from_u64(seed),
            epsilon,
            next: 0,
            round: 0,
            left_out: Vec::new(),
            record: None,
        }
    }

    /// The fleet with each query written to `record` before it is sent to its member, and its
    /// settlement after ([`record`]): a query whose line cannot be written is not sent, and the
    /// round fails with [`DeviceError::Record`] once no member can be asked.
    pub fn with_record(mut self, record: QueryRecord) -> Self {
        self.record = Some(record);
        self
    }

    /// Whether a write to the fleet's record of queries in flight failed ([`with_record`](Self::with_record)):
    /// then no query was sent after it, and the record may lack the `done` line of a query that
    /// settled ([`record::RecordHealth`]).
    pub fn record_failed(&self) -> bool {
        self.record.as_ref().is_some_and(QueryRecord::failed)
    }

    /// The fleet with `ids` named in its ledger as left out: devices the learner holds keys for
    /// that are not among its members (no hello, or no answer to the first).
    pub fn with_left_out(mut self, ids: Vec<u64>) -> Self {
        self.left_out = ids;
        self
    }

    /// The members.
    pub fn members(&self) -> &[Member<L>] {
        &self.members
    }

    /// The members, mutably: only their clients can be changed ([`Member::client_mut`]).
    pub fn members_mut(&mut self) -> &mut [Member<L>] {
        &mut self.members
    }

    /// What every member spent so far.
    pub fn ledger(&self) -> Vec<MemberRecord> {
        self.members
            .iter()
            .map(|m| MemberRecord {
                id: m.id,
                spent: (m.total - m.remaining).max(0.0),
                reports: m.reports,
                skipped: m.skipped,
                // Never waits: a client held (by a query in flight, or by whoever holds
                // `Member::client`) shows what it had dropped when its last query settled.
                dropped: m.client.try_lock().map_or(m.dropped_replies, |c| c.dropped),
                left_out: false,
                ..MemberRecord::default()
            })
            .chain(self.left_out.iter().map(|&id| MemberRecord {
                id,
                spent: 0.0,
                reports: 0,
                skipped: 0,
                dropped: Dropped::default(),
                left_out: true,
                ..MemberRecord::default()
            }))
            .collect()
    }

    /// The member to ask next for a round that has asked those in `tried`: one with budget
    /// left, not benched and no query in flight, or, if there is none, one with budget left and
    /// no query in flight — unless a member with budget left and not benched is only busy with
    /// a query in flight ([`InFlightFleet`]): then none, and the round waits for it, so that
    /// queries in flight do not bring a benched (silent) member back sooner than one at a time
    /// would.
    fn pick(&mut self, tried: &[usize]) -> Option<usize> {
        let (eps, round) = (self.epsilon, self.round);
        let n = self.members.len();
        let open = |m: &Member<L>, i: usize, rested: bool| {
            !tried.contains(&i) && m.can_pay(eps) && (!rested || m.benched_until <= round)
        };
        for rested in [true, false] {
            let ok = |i: usize| !self.members[i].busy && open(&self.members[i], i, rested);
            match self.routing {
                Routing::RoundRobin => {
                    if let Some(i) = (0..n).map(|k| (self.next + k) % n).find(|&i| ok(i)) {
                        self.next = (i + 1) % n;
                        return Some(i);
                    }
                }
                Routing::Random => {
                    let open: Vec<usize> = (0..n).filter(|&i| ok(i)).collect();
                    if !open.is_empty() {
                        return Some(open[self.rng.random_range(0..open.len())]);
                    }
                }
            }
            if rested && self.members.iter().enumerate().any(|(i, m)| m.busy && open(m, i, true)) {
                return None;
            }
        }
        None
    }

    /// A new round's query for `arm`: its wire action and level, checked as the learner can
    /// judge them itself. A device releases through the mechanism its report is checked against
    /// (`check_report`), so where that mechanism cannot be built the device is not asked, and
    /// the round's error, if no one answers, is that refusal. A member's own parameter refusal
    /// of a query whose mechanism exists is that member's fault, never the run's error (review
    /// 10: a member holding its own key decided it; a bad query went to every member, offline
    /// ones too, and each honest refusal counted as a skip). A truncation level's mechanism is
    /// the same for every device; the clamp's depends on a device's B and R, taken from the
    /// hello it joined with (a later hello showing others is refused by its client; review 11):
    /// [`Fleet::start`].
    fn open_round(&mut self, arm: usize, level: Option<f64>) -> Result<Round, DeviceError> {
        let action = u32::try_from(arm).map_err(|_| DeviceError::ArmOutOfWire(arm))?;
        let level = level.map(TruncationLevel::new).transpose().map_err(DeviceError::Config)?;
        // A query refused here still counts a round, as it always has.
        self.round += 1;
        if let Some(level) = level {
            LaplaceMechanism::truncated(self.epsilon, level)
                .map_err(|e| DeviceError::Refusal(Refusal::Param(e)))?;
        }
        Ok(Round { number: self.round, action, level, tried: Vec::new(), bad_query: None, unrecorded: None })
    }

    /// Member `i` taken for `round`: its query's sequence number, or `None` if the query's
    /// mechanism cannot be built for its B and R (the round's error if no one answers).
    fn start(&mut self, i: usize, round: &mut Round) -> Option<u32> {
        round.tried.push(i);
        let m = &mut self.members[i];
        if round.level.is_none()
            && let Err(e) = LaplaceMechanism::ctl(self.epsilon, m.config.b, m.config.r)
        {
            round.bad_query = Some(Refusal::Param(e));
            return None;
        }
        let n = m.round.wrapping_add(1);
        // Written before the query can leave (module `record`): if it cannot be, it does not.
        if let Some(record) = self.record.as_mut()
            && let Err(source) = record.sent(m.id, n, self.epsilon.get())
        {
            round.unrecorded = Some((record.path().to_path_buf(), source));
            return None;
        }
        m.round = n;
        Some(n)
    }

    /// What member `i`'s answer (or silence) to round `round`'s query does: `Some` ends the
    /// round with a report or the run's error, `None` asks another member.
    fn settle(&mut self, i: usize, round: u64, outcome: Outcome) -> Option<Result<f64, DeviceError>> {
        let n = self.members.len() as u64;
        let m = &mut self.members[i];
        if let Some(record) = self.record.as_mut() {
            let how = match &outcome {
                Ok(Ok(_)) => Settlement::Report,
                Ok(Err(_)) => Settlement::Refused,
                Err(_) => Settlement::Failed,
            };
            record.settled(m.id, m.round, how);
        }
        // What the device showed it has left in any authenticated frame, a closing hello
        // included: a report the link swallowed is spent all the same.
        {
            let client = lock(&m.client);
            m.remaining = m.remaining.min(client.budget_shown());
            m.dropped_replies = client.dropped;
        }
        match outcome {
            Ok(Ok(report)) => {
                // A device's budget never comes back: a stale figure is not believed.
                m.remaining = m.remaining.min(report.budget_remaining);
                m.reports += 1;
                m.backoff = 0;
                return Some(Ok(report.release.value()));
            }
            Ok(Err(Refusal::BudgetExhausted { remaining, .. })) => m.remaining = remaining.min(m.remaining),
            // This device cannot serve this query at all (its limits, its state, its action
            // set): not asked again; another may.
            Ok(Err(
                Refusal::AboveDeviceLimit { .. }
                | Refusal::BelowDeviceFloor { .. }
                | Refusal::CorruptState
                | Refusal::UnsupportedVersion
                | Refusal::Malformed,
            )) => m.dropped = true,
            // Silent, failing its store, answering nonsense, refusing the query's parameters,
            // or its frames failing authentication (a wrong key, or another learner or a
            // replayed hello request took its conversation: one member's trouble, not the
            // run's), or answering in another wire version (read before the tag, so whoever
            // carries its frames can say so without its key; review 14): skipped for this
            // round and asked again after a backoff of one pass over the fleet, doubling up to
            // 64.
            Ok(Err(_))
            | Err(
                LinkError::Timeout { .. }
                | LinkError::Io(_)
                | LinkError::Unexpected(_)
                | LinkError::BadTags { .. }
                | LinkError::KeyRefused
                | LinkError::SpentUnanswered { .. }
                | LinkError::Version { .. },
            ) => {
                m.skipped += 1;
                m.backoff = (m.backoff * 2).clamp(n.max(1), 64 * n.max(1));
                // From the latest round opened (later than this one's with queries in flight).
                m.benched_until = round.max(self.round) + m.backoff;
            }
            // Its configuration changed under its key: never asked again.
            Err(LinkError::ConfigChanged { .. }) => m.dropped = true,
            Err(e) => return Some(Err(DeviceError::Link(e))),
        }
        None
    }

    /// Asks members in turn, here and now, until one answers `round` (each member at most once
    /// a round: the loop ends); `None` if no member is left to ask.
    fn ask_here(&mut self, round: &mut Round) -> Option<Result<f64, DeviceError>> {
        while let Some(i) = self.pick(&round.tried) {
            let Some(seq) = self.start(i, round) else { continue };
            let outcome = lock(&self.members[i].client).query(seq, round.action, self.epsilon, round.level);
            if let Some(result) = self.settle(i, round.number, outcome) {
                return Some(result);
            }
        }
        None
    }

    /// The error of a round no member answered: the refusal of its query, or the fleet's
    /// exhausted budget.
    fn unanswered(&self, round: Round) -> DeviceError {
        if let Some((path, source)) = round.unrecorded {
            return DeviceError::Record { path, source };
        }
        if let Some(refusal) = round.bad_query {
            return DeviceError::Refusal(refusal);
        }
        let budgets = self.members.iter().map(|m| m.total).fold(0.0, f64::max);
        DeviceError::FleetExhausted { round: round.number, devices: self.members.len(), user_budget: budgets }
    }
}

/// One round of a fleet: its query, the members asked so far, and the refusal to give if no
/// one answers.
#[derive(Default)]
struct Round {
    /// Its number (1-based), for backoffs and errors.
    number: u64,
    action: u32,
    level: Option<TruncationLevel>,
    tried: Vec<usize>,
    bad_query: Option<Refusal>,
    /// The record a query of the round could not be written to, and why: no member was sent it.
    unrecorded: Option<(PathBuf, io::Error)>,
}

/// A member's answer to a query, or why there was none.
type Outcome = Result<Result<ldp_core::Report, Refusal>, LinkError>;

/// The lock on a member's client; a worker that panicked holding it left it whole (a query
/// either ran to its end or was abandoned like a lost one).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<L: Link> Device for Fleet<L> {
    fn ledger(&self) -> Option<Vec<MemberRecord>> {
        Some(Fleet::ledger(self))
    }

    fn query(&mut self, arm: usize, level: Option<f64>) -> Result<f64, DeviceError> {
        let mut round = self.open_round(arm, level)?;
        self.ask_here(&mut round).unwrap_or_else(|| Err(self.unanswered(round)))
    }
}

mod in_flight;
pub use in_flight::InFlightFleet;

pub mod record;
use record::{QueryRecord, Settlement};

/// The in-process fleet of one trial: `devices` simulated users with ids 1 to `devices`, member
/// `id` the device application over `env` keyed with [`MemberSeeds::simulated`]`(trial_seed, id)`,
/// per-report limit `epsilon` and lifetime budget `user_budget`. `env` is a reference to the
/// environment, or an `Arc` of it for members that outlive the caller's borrow (an
/// [`InFlightFleet`]'s).
pub fn in_process<'e, E: Borrow<dyn Environment + 'e> + Clone>(
    env: E,
    trial_seed: u64,
    devices: usize,
    epsilon: Epsilon,
    user_budget: f64,
) -> Result<Vec<Member<MemberLink<E>>>, DeviceError> {
    let config = device_config(env.borrow(), epsilon, user_budget)?;
    (1..=devices as u64)
        .map(|id| {
            let seeds = MemberSeeds::simulated(trial_seed, id);
            let reporter = Reporter::open(config, MemoryStore::provisioned(seeds.material), seeds.entropy)
                .map_err(|e| DeviceError::Refused(ReportError::Budget(e)))?;
            let app = DeviceApp::new(reporter, EnvSource::new(env.clone(), seeds.world), id);
            let link = LoopbackLink::new(app);
            let auth = link.auth();
            Member::new(WireClient::new(link, auth)).map_err(DeviceError::Link)
        })
        .collect()
}

/// The link to an in-process fleet member over the environment `E` (a reference, or an `Arc`).
pub type MemberLink<E> = LoopbackLink<MemoryStore, EnvSource<E>>;

/// The link to an in-process fleet member.
pub type SimLink<'a> = MemberLink<&'a dyn Environment>;

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::state::{DeviceState, LogStore, StateStore};
    use std::time::Duration;

    fn sensor() -> Box<dyn Environment> {
        Box::new(ldp_learn::env::SensorEnv::new(10, 1.0).expect("a sensor environment"))
    }

    fn fleet<'a>(env: &'a dyn Environment, n: usize, budget: f64, routing: Routing) -> Fleet<SimLink<'a>> {
        let members = in_process(env, 42, n, Epsilon::new(1.0).expect("eps"), budget).expect("members");
        Fleet::new(members, Epsilon::new(1.0).expect("eps"), routing, 7)
    }

    #[test]
    fn round_robin_gives_every_user_an_even_share_and_each_round_one_report() {
        let env = sensor();
        let mut f = fleet(env.as_ref(), 7, 3.0, Routing::RoundRobin);
        for t in 0..20 {
            f.query(t % 10, None).expect("a report");
        }
        let ledger = f.ledger();
        assert_eq!(ledger.iter().map(|r| r.id).collect::<Vec<_>>(), (1..=7).collect::<Vec<u64>>());
        // 20 rounds over 7 users: 3, 3, 3, 3, 3, 3, 2 — each report charged once, as the device counts.
        let reports: Vec<u64> = ledger.iter().map(|r| r.reports).collect();
        assert_eq!(reports, [3, 3, 3, 3, 3, 3, 2]);
        for r in &ledger {
            assert!((r.spent - r.reports as f64).abs() < 1e-9, "{r:?}");
        }
        // The 22nd round finds no one with budget left.
        f.query(0, None).expect("round 21 goes to the last user");
        match f.query(0, None) {
            Err(DeviceError::FleetExhausted { round: 22, devices: 7, user_budget }) => {
                assert!((user_budget - 3.0).abs() < 1e-12)
            }
            other => panic!("expected an exhausted fleet, got {other:?}"),
        }
    }

    #[test]
    fn random_routing_is_seeded_and_spends_only_what_it_has() {
        let env = sensor();
        let run = || {
            let mut f = fleet(env.as_ref(), 5, 4.0, Routing::Random);
            let values: Vec<u64> =
                (0..20).map(|t| f.query(t % 10, None).expect("report").to_bits()).collect();
            (values, f.ledger())
        };
        let (a, ledger) = run();
        assert_eq!(a, run().0, "the same seeds give the same releases");
        // 20 rounds, 5 users with 4 ε each: every user is used up, none beyond.
        assert!(ledger.iter().all(|r| r.reports == 4 && (r.spent - 4.0).abs() < 1e-9), "{ledger:?}");
    }

    /// A link to a device that never answers.
    struct Silent;
    impl Link for Silent {
        fn send(&mut self, _bytes: &[u8]) -> io::Result<()> {
            Ok(())
        }
        fn recv_byte(&mut self, _timeout: Duration) -> io::Result<Option<u8>> {
            Ok(None)
        }
    }

    /// A member that is either the in-process device or silent.
    enum Either<'a> {
        Sim(Box<SimLink<'a>>),
        Dead,
    }
    impl Link for Either<'_> {
        fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
            match self {
                Self::Sim(l) => l.send(bytes),
                Self::Dead => Silent.send(bytes),
            }
        }
        fn recv_byte(&mut self, timeout: Duration) -> io::Result<Option<u8>> {
            match self {
                Self::Sim(l) => l.recv_byte(timeout),
                Self::Dead => Silent.recv_byte(timeout),
            }
        }
    }

    #[test]
    fn a_silent_member_is_skipped_and_its_rounds_answered_by_the_others() {
        let env = sensor();
        let members =
            in_process(env.as_ref(), 42, 4, Epsilon::new(1.0).expect("eps"), 100.0).expect("members");
        let members: Vec<Member<Either<'_>>> = members
            .into_iter()
            .map(|m| {
                // Greeted over the device's link; member 2's link is then cut for good.
                let old = m.into_client().expect("no query in flight");
                let auth = *old.auth();
                let mut client = WireClient::new(Either::Sim(Box::new(old.into_link())), auth);
                client.hello().expect("hello");
                if auth.device_id == 2 {
                    client.replace_link(Either::Dead);
                }
                client.timeout = Duration::from_millis(1);
                client.tries = 2;
                Member::new(client).expect("greeted")
            })
            .collect();
        let mut f = Fleet::new(members, Epsilon::new(1.0).expect("eps"), Routing::RoundRobin, 0);
        for t in 0..40 {
            f.query(t % 10, None).expect("every round gets a report");
        }
        let ledger = f.ledger();
        assert_eq!(ledger[1].reports, 0);
        assert!(ledger[1].skipped >= 1);
        // Backed off: asked far less often than its turn (10 of 40 rounds).
        assert!(ledger[1].skipped <= 4, "{ledger:?}");
        assert_eq!(ledger.iter().map(|r| r.reports).sum::<u64>(), 40);
    }

    /// A member's link that is cut (frames vanish, nothing comes back) while its switch is off.
    struct Switched<'a> {
        on: std::rc::Rc<std::cell::Cell<bool>>,
        link: Either<'a>,
    }
    impl Link for Switched<'_> {
        fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
            if self.on.get() { self.link.send(bytes) } else { Ok(()) }
        }
        fn recv_byte(&mut self, timeout: Duration) -> io::Result<Option<u8>> {
            if self.on.get() { self.link.recv_byte(timeout) } else { Ok(None) }
        }
    }

    #[test]
    fn a_round_asks_each_member_at_most_once_even_when_all_are_benched() {
        // Member 1 is cut off for a round (as by a broker outage), members 2 to 4 are dead. Once
        // 1 is back, every member is benched: a round must still find member 1, asking each
        // member at most once, rather than ask dead members again and give up.
        let env = sensor();
        for seed in 0..20 {
            let on = std::rc::Rc::new(std::cell::Cell::new(false));
            let members: Vec<Member<Switched<'_>>> =
                in_process(env.as_ref(), 42, 4, Epsilon::new(1.0).expect("eps"), 100.0)
                    .expect("members")
                    .into_iter()
                    .map(|m| {
                        // Greeted over the device's link; members 2 to 4 are then cut for good.
                        let old = m.into_client().expect("no query in flight");
                        let auth = *old.auth();
                        let link = Either::Sim(Box::new(old.into_link()));
                        let mut client = WireClient::new(Switched { on: on.clone(), link }, auth);
                        on.set(true);
                        client.hello().expect("hello");
                        on.set(false);
                        if auth.device_id != 1 {
                            client.replace_link(Switched { on: on.clone(), link: Either::Dead });
                        }
                        client.timeout = Duration::from_millis(1);
                        client.tries = 1;
                        Member::new(client).expect("greeted")
                    })
                    .collect();
            let mut f = Fleet::new(members, Epsilon::new(1.0).expect("eps"), Routing::Random, seed);
            assert!(matches!(f.query(0, None), Err(DeviceError::FleetExhausted { .. })), "no one answers");
            assert!(f.ledger().iter().all(|r| r.skipped == 1), "each asked once: {:?}", f.ledger());
            on.set(true);
            for round in 2..=4 {
                f.query(0, None).unwrap_or_else(|e| panic!("seed {seed}, round {round}: {e}"));
            }
            let ledger = f.ledger();
            assert_eq!(ledger[0].reports, 3, "seed {seed}: {ledger:?}");
            // Each dead member was asked at most once per round.
            assert!(ledger[1..].iter().all(|r| r.skipped <= 4), "seed {seed}: {ledger:?}");
        }
    }

    #[test]
    fn env_source_reads_the_environment_and_refuses_nothing_it_cannot_read() {
        let env = ldp_learn::env::SyntheticRkhs::new(
            ldp_learn::env::SyntheticKernel::PAPER_SE,
            ldp_learn::env::Noise::PAPER_LDP,
            &mut SimRng::seed_from_u64(1),
        )
        .expect("a paper environment builds");
        let env: &dyn Environment = &env;
        let mut a = EnvSource::new(env, 7);
        let mut world = SimRng::seed_from_u64(7);
        assert_eq!(a.actions() as usize, env.num_arms());
        for arm in [0u32, 3, 17] {
            assert_eq!(a.read(arm).map(f64::to_bits), Some(env.sample(arm as usize, &mut world).to_bits()));
        }
        assert_eq!(a.read(a.actions()), None);
        assert_eq!(a.read(u32::MAX), None);
    }

    #[test]
    fn file_medium_keeps_the_newest_state_across_reopening() {
        let dir = std::env::temp_dir().join(format!("ldp-file-medium-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("state.bin");
        let settings =
            DeviceSettings { b: 1.0, r: 0.5, per_report_limit: 1.0, total: 50.0, simulated_keys: false };
        // Without settings no file is made.
        assert!(LogStore::new(FileMedium::new(&path)).provision([9; 32]).is_err());
        assert!(!path.exists());
        let mut store = LogStore::new(FileMedium::create(&path, settings, &[9; 32]));
        assert!(store.is_blank().expect("a missing file reads blank"));
        store.provision([9; 32]).expect("provision");
        for boot in 1..=3 {
            let mut s = store.load().expect("load");
            s.boot = boot;
            s.reserved_units = boot * 10;
            store.save(&s).expect("save");
        }
        let mut again = LogStore::new(FileMedium::new(&path));
        let s = again.load().expect("reload");
        assert_eq!((s.boot, s.reserved_units, s.seed), (3, 30, [9; 32]));
        assert_eq!(again.medium().settings(&[9; 32]).expect("settings"), settings);
        assert!(again.medium().settings(&[8; 32]).is_err(), "another device's seed");
        assert_ne!(s, DeviceState::provisioned([9; 32]));
        // A file cut short is an error, not an older record or a blank store.
        let bytes = std::fs::read(&path).expect("read");
        assert_eq!(bytes.len() as u64, FileMedium::LEN);
        std::fs::write(&path, &bytes[..RECORD_LEN]).expect("truncate");
        assert!(LogStore::new(FileMedium::new(&path)).load().is_err());
        std::fs::write(&path, []).expect("empty");
        assert!(LogStore::new(FileMedium::new(&path)).load().is_err());
        // Once seen, a vanished file is an error, not a fresh device.
        std::fs::remove_file(&path).expect("remove");
        assert!(again.load().is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
