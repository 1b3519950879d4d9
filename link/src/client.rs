//! Talking to a device over the wire format (`ldp_core::wire`): the learner's side.
//!
//! One [`WireClient`] speaks the protocol over any [`Link`] ([`crate::transport`]: in memory,
//! TCP, a serial port, the firmware under QEMU; [`crate::mqtt::MqttLink`] over a broker).
//!
//! Each query carries a fresh sequence number; on a timeout the client resends the *same* frame
//! (same sequence number), which the device answers from its reply cache without spending budget
//! twice. Replies with another sequence number are stale and skipped.
//!
//! Every frame is authenticated (`ldp_core::wire::Auth`: the device's link key, id, session and
//! conversation).
//! The client drops, and counts in [`Dropped`], every reply that fails its tag, answers another
//! sequence number, does not parse, or is a report the device could not have sent for the query
//! (another ε, off the device's grid, beyond its range by more than [`RANGE_MARGIN_SCALES`]
//! noise scales, a budget that rose); none of them ends a run or reaches a ledger.

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ldp_core::wire::{
    Auth, DecodeError, FedQuery, Frame, Hello, MAX_ENCODED_LEN, MAX_FRAME_LEN, Message, NONCE_LEN, Query,
    Refusal, Repr, StreamReader,
};
use ldp_core::{Epsilon, LaplaceMechanism, Report, TruncationLevel};
use rand_core::{Rng as _, SeedableRng};

use crate::keys::os_random;
use crate::transport::Link;

/// The link failed or the device did not answer.
#[derive(Debug)]
#[non_exhaustive]
pub enum LinkError {
    /// An I/O error on the link.
    Io(io::Error),
    /// No valid reply to `seq` after `tries` sends.
    Timeout {
        /// The sequence number.
        seq: u32,
        /// How many times the frame was sent.
        tries: u32,
    },
    /// The device answered with a message the request does not expect.
    Unexpected(Message),
    /// The request could not be encoded.
    Encode,
    /// The device refused the request as not of its conversation, in refusals that verify
    /// under the learner's key (so the key is right), also after the learner greeted it again
    /// [`CONVERSATION_RETRIES`] times: another learner, or someone replaying recorded hello
    /// requests, keeps sending the device hello requests between the learner's hello and its
    /// query.
    KeyRefused,
    /// The device refused the learner's query (as not of its conversation, or stale), and its
    /// next hello showed `spent` ε less left, in the same boot: its refusal was of a changed
    /// copy, and the query itself reached the device and was charged, its report kept from the
    /// learner (someone on the link), or another learner spent meanwhile. Not resent, so that
    /// it cannot be made to pay again.
    SpentUnanswered {
        /// The device asked.
        device_id: u64,
        /// ε the device shows spent since the query.
        spent: f64,
    },
    /// The device's hello, authenticated under its key, showed another configuration (B, R,
    /// ε limits) than the first hello this client took from it: a device's configuration is
    /// fixed when it is provisioned, so whoever holds the key is choosing the bounds its
    /// reports would be checked against, or the device was provisioned anew under the same key.
    ConfigChanged {
        /// The device asked.
        device_id: u64,
    },
    /// The device's hello told a boot number below one this learner saw from it before (kept
    /// in `record`, if the client keeps one): a device's boot number never goes back, so its
    /// state was rolled back (an older copy restored).
    SessionWentBack {
        /// The device asked.
        device_id: u64,
        /// The boot number its hello told.
        now: u64,
        /// The highest one seen before.
        seen: u64,
        /// The boot record that remembers it, if any.
        record: Option<PathBuf>,
    },
    /// The device answered the request in another version of the wire format (its frames
    /// carry their version in the header, which every version reads alike).
    Version {
        /// The device's version.
        device: u8,
    },
    /// The device answered, but none of its frames verified under the learner's key: the key
    /// is not the device's, or another learner or a replayed hello request took the device's
    /// conversation meanwhile.
    BadTags {
        /// The device asked.
        device_id: u64,
        /// How many frames failed.
        frames: u64,
        /// Where the learner's key for it came from, if known.
        key_file: Option<PathBuf>,
    },
}

impl std::fmt::Display for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => write!(f, "device link: {e}"),
            Self::Timeout { seq, tries } => {
                write!(
                    f,
                    "device did not answer request {seq} after {tries} tries: check the link and that it is running"
                )
            }
            Self::Unexpected(m) => write!(f, "device sent an unexpected message: {m:?}"),
            Self::Encode => f.write_str("request could not be encoded"),
            Self::SessionWentBack { device_id, now, seen, record } => write!(
                f,
                "device {device_id} is in boot {now}, but this learner saw its boot {seen} before{}: a device's boot number never goes back, so its state was rolled back (an older copy restored), which could repeat its noise or give it spent budget again; not talking to it (a device provisioned anew needs a new key, and a new key starts a new record)",
                record.as_ref().map_or(String::new(), |p| format!(" (recorded in {})", p.display()))
            ),
            Self::ConfigChanged { device_id } => write!(
                f,
                "device {device_id} showed another configuration (B, R or its ε limits) than in its first hello to this learner, under the same key: a device's configuration is fixed when it is provisioned, so someone holding its key is choosing the bounds its reports are checked against, or it was provisioned anew without a new key; not talking to it (provision it with a new key, and start a new run)"
            ),
            Self::Version { device } => write!(
                f,
                "the device answered in wire format {device}, and this learner speaks version {}: update the device's firmware or the learner so that both speak the same version (docs/wire-format.md)",
                ldp_core::wire::VERSION
            ),
            Self::BadTags { device_id, frames, key_file: Some(file) } => write!(
                f,
                "device {device_id} answered, but its frames ({frames}) fail authentication under the key in {}: wrong key (give the key file the device's provisioning wrote), or another learner or a replayed hello request took the device's conversation",
                file.display()
            ),
            Self::BadTags { device_id, frames, key_file: None } => write!(
                f,
                "device {device_id} answered, but its frames ({frames}) fail authentication under the key given for it: wrong key (give the key file the device's provisioning wrote), or another learner or a replayed hello request took the device's conversation"
            ),
            Self::SpentUnanswered { device_id, spent } => write!(
                f,
                "device {device_id} refused this learner's query, and then showed {spent} ε spent that no report reached this learner for: something on the link changed a copy of the query (drawing the refusal) and delivered the query itself, keeping its report, or another learner is using the device; the query is not resent, so that it cannot be charged again (check the link or broker, and that one learner at a time talks to the device)"
            ),
            Self::KeyRefused => write!(
                f,
                "the device refused this learner's query as not of its conversation, also after {CONVERSATION_RETRIES} new hellos: another learner, or someone replaying recorded hello requests or sending the device changed copies of this learner's frames, keeps talking to the device between this learner's hello and its query; the key is right (the refusals verify under it) and the device's hellos showed nothing spent on the refused queries (stop the other learner, or find who replays on the link)",
            ),
        }
    }
}

impl std::error::Error for LinkError {}

impl From<io::Error> for LinkError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

/// How far beyond the clamping range `[−(B+R), B+R]` (or `[−b, b]`) a report may lie, in
/// noise scales: the discrete Laplace noise exceeds 64 scales with probability about e^-64 ≈
/// 2^-92, so a genuine report is dropped essentially never, and a value further out is not one
/// the device released.
pub const RANGE_MARGIN_SCALES: f64 = 64.0;

/// Replies the learner dropped, by reason (issue #25). Counted per client; recorded in
/// `run.json` (`dropped_frames`). None of them ended a run or entered a ledger.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Dropped {
    /// Intact frames whose tag did not verify: forged, another device's or session's, or sent
    /// with another key.
    pub bad_tag: u64,
    /// Authenticated frames for a sequence number not awaited: replays and late duplicates
    /// (QoS 1, a link that duplicates); and hellos of a session (boot number) older than one
    /// the learner saw from the device (a recorded hello, or a device rolled back).
    pub replayed: u64,
    /// Authenticated frames that do not parse, or a reply of the wrong kind.
    pub malformed: u64,
    /// Reports whose value `index·2^k` is not finite.
    pub non_finite: u64,
    /// Reports off the grid the device's mechanism uses for the query.
    pub off_grid: u64,
    /// Reports beyond the clamping range by more than [`RANGE_MARGIN_SCALES`] noise scales.
    pub out_of_range: u64,
    /// Reports for another ε (or ε_eff) than the query asked.
    pub wrong_epsilon: u64,
    /// Reports showing more budget left than the device showed before.
    pub budget_rose: u64,
    /// The device's refusals of a frame it refused before verifying its tag (reason 12, 7, or
    /// a wrong type or length), which are never the answer to this learner's own request:
    /// someone else's query, this learner's under a wrong key or another conversation's nonce,
    /// or this learner's request altered on the way.
    pub unauthenticated_refusals: u64,
}

impl Dropped {
    /// All dropped frames.
    pub fn total(&self) -> u64 {
        let d = self;
        d.bad_tag
            + d.replayed
            + d.malformed
            + d.non_finite
            + d.off_grid
            + d.out_of_range
            + d.wrong_epsilon
            + d.budget_rose
            + d.unauthenticated_refusals
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &Dropped) {
        self.bad_tag += other.bad_tag;
        self.replayed += other.replayed;
        self.malformed += other.malformed;
        self.non_finite += other.non_finite;
        self.off_grid += other.off_grid;
        self.out_of_range += other.out_of_range;
        self.wrong_epsilon += other.wrong_epsilon;
        self.budget_rose += other.budget_rose;
        self.unauthenticated_refusals += other.unauthenticated_refusals;
    }
}

/// Why a reply that passed its tag was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reject {
    Malformed,
    OffGrid,
    OutOfRange,
    WrongEpsilon,
    BudgetRose,
    UnauthenticatedRefusal,
    OldSession,
    ConfigChanged,
}

/// Whether `report` is one the device of `hello` could have sent for `query` with `budget`
/// left before it: its ε, its mechanism's ε_eff and grid, within range plus margin, and no
/// more budget left than before.
fn check_report(hello: &Hello, query: &Query, report: &Report, budget: f64) -> Result<(), Reject> {
    if report.epsilon.to_bits() != query.epsilon.get().to_bits() {
        return Err(Reject::WrongEpsilon);
    }
    let mechanism = match query.level {
        None => LaplaceMechanism::ctl(query.epsilon, hello.config.b, hello.config.r),
        Some(level) => LaplaceMechanism::truncated(query.epsilon, level),
    }
    .map_err(|_| Reject::OffGrid)?; // the device refuses such a query: no report can be right
    if report.epsilon_effective.to_bits() != mechanism.epsilon_effective().to_bits() {
        return Err(Reject::WrongEpsilon);
    }
    if report.release.grid_log2 != mechanism.grid_log2() {
        return Err(Reject::OffGrid);
    }
    let margin = RANGE_MARGIN_SCALES * mechanism.noise().scale();
    if report.release.index.unsigned_abs() as f64 > mechanism.max_index() as f64 + margin {
        return Err(Reject::OutOfRange);
    }
    if report.budget_remaining > budget {
        return Err(Reject::BudgetRose);
    }
    Ok(())
}

/// How many of its last requests a [`WireClient`] remembers to recognise late replies to them.
const EARLIER_REQUESTS: usize = 16;

/// How many times a [`WireClient`] greets a device again and resends a query that the device
/// refused as stale or as not of its conversation ([`WireClient::request`]) before it gives up
/// (with [`LinkError::KeyRefused`], or the stale refusal): each time, someone else (another
/// learner, or a replayed hello request) sent the device a hello request after the learner's.
pub const CONVERSATION_RETRIES: u32 = 3;

/// The learner's protocol client.
pub struct WireClient<L> {
    link: L,
    reader: StreamReader,
    seq: u32,
    auth: Auth,
    /// The device's last hello (its configuration and session), once greeted.
    greeted: Option<Hello>,
    /// The configuration of the first hello this client took; every later one must show it.
    config: Option<ldp_core::DeviceConfig>,
    /// The highest session (boot number) seen from the device: a hello of a lower one is
    /// refused.
    highest_session: u64,
    /// Where the nonces of hello requests come from: OS entropy, or a seed in tests.
    nonces: rand_chacha::ChaCha20Rng,
    /// The file the key came from, for messages.
    key_file: Option<PathBuf>,
    /// Where the highest session seen from the device is kept across clients
    /// ([`crate::keys::boot_record`]), and whether it was read yet.
    boot_record: Option<(PathBuf, bool)>,
    /// The last requests sent: number, and what a reply to it is authenticated under (to tell
    /// a late copy of an earlier reply from a forgery).
    earlier: VecDeque<(u32, Auth)>,
    /// The least budget the device has shown (hello or report).
    budget: f64,
    /// How long to wait for a reply before resending.
    pub timeout: Duration,
    /// How many times a frame is sent before giving up.
    pub tries: u32,
    /// Frames that arrived damaged (failed CRC, length, COBS) and were dropped.
    pub damaged_frames: u64,
    /// Resends after a timeout.
    pub resends: u64,
    /// Hellos sent again because the device refused a query as stale or as not of its
    /// conversation (another learner's or a replayed hello request had frozen it, or replaced
    /// the offer this learner's hello got).
    pub conversations_lost: u64,
    /// Replies dropped, by reason.
    pub dropped: Dropped,
}

impl<L: Link> WireClient<L> {
    /// A client on `link` to the device `auth` names (its key and id; the session is learnt
    /// from its hello), with a 1 s timeout and 5 tries. The nonces of its hello requests come
    /// from OS entropy (if the OS has none, from the clock and the process id: a nonce needs to
    /// be fresh, not secret); [`WireClient::with_nonce_seed`] makes them reproducible in tests.
    pub fn new(link: L, auth: Auth) -> Self {
        let seed = os_random().unwrap_or_else(|_| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            let mut seed = [0u8; 32];
            seed[..16].copy_from_slice(&now.as_nanos().to_le_bytes());
            seed[16..20].copy_from_slice(&std::process::id().to_le_bytes());
            seed
        });
        Self::with_nonces(link, auth, rand_chacha::ChaCha20Rng::from_seed(seed))
    }

    /// [`WireClient::new`] with the nonces of its hello requests drawn from a generator seeded
    /// with `seed` (tests: two clients with the same seed use the same nonces, so only tests
    /// that mean to replay between them may share one).
    pub fn with_nonce_seed(link: L, auth: Auth, seed: u64) -> Self {
        Self::with_nonces(link, auth, rand_chacha::ChaCha20Rng::seed_from_u64(seed))
    }

    fn with_nonces(link: L, auth: Auth, nonces: rand_chacha::ChaCha20Rng) -> Self {
        Self {
            link,
            reader: StreamReader::new(),
            seq: 0,
            auth,
            greeted: None,
            config: None,
            highest_session: 0,
            nonces,
            key_file: None,
            boot_record: None,
            earlier: VecDeque::new(),
            budget: f64::INFINITY,
            timeout: Duration::from_secs(1),
            tries: 5,
            damaged_frames: 0,
            resends: 0,
            conversations_lost: 0,
            dropped: Dropped::default(),
        }
    }

    /// The device's key and id, and the session the client speaks in.
    pub fn auth(&self) -> &Auth {
        &self.auth
    }

    /// The client with its sequence numbers starting after `last` (the next request is
    /// `last + 1`). Since wire format 5 a device's reply cache belongs to one conversation, so
    /// a new session never gets an earlier session's cached replies whatever its numbers;
    /// runs on the wire still start at a random point (`fleet::session_start`), which keeps a
    /// late reply of an earlier session from carrying a number this one awaits.
    pub fn starting_after(mut self, last: u32) -> Self {
        self.seq = last;
        self
    }

    /// The client refusing any hello of a session (boot number) below `session`: the highest
    /// one a learner saw from this device before (persisted beside its other state of the
    /// device). A device's boot number never goes back, so a lower one is a recorded hello or
    /// a device whose state was rolled back.
    pub fn sessions_from(mut self, session: u64) -> Self {
        self.raise_session_floor(session);
        self
    }

    /// [`WireClient::sessions_from`] on a client in use: later hellos of a session below
    /// `session` are refused.
    pub fn raise_session_floor(&mut self, session: u64) {
        self.highest_session = self.highest_session.max(session);
    }

    /// The client naming `path` as where its key came from, in the error that says the device's
    /// frames fail authentication under it ([`LinkError::BadTags`]).
    pub fn with_key_file(mut self, path: &Path) -> Self {
        self.key_file = Some(path.to_path_buf());
        self
    }

    /// The client keeping the highest session (boot number) it sees from the device in the boot
    /// record `path` ([`crate::keys::update_boot_record`]; beside the key file:
    /// [`crate::keys::boot_record`]), read before its first hello: a later client refuses a
    /// device whose boot number went below one an earlier client saw (its state was rolled back),
    /// whatever process it runs in.
    pub fn with_boot_record(mut self, path: &Path) -> Self {
        self.boot_record = Some((path.to_path_buf(), false));
        self
    }

    /// The device's configuration, from the first hello this client took (answered to its own
    /// hello request, so bound to its nonce); every later hello must show it
    /// ([`LinkError::ConfigChanged`]). `None` before the first.
    pub fn config(&self) -> Option<ldp_core::DeviceConfig> {
        self.config
    }

    /// The device's last authenticated hello, once greeted.
    pub fn greeting(&self) -> Option<&Hello> {
        self.greeted.as_ref()
    }

    /// The least budget the device has shown left, in authenticated frames (its hellos and
    /// reports); infinite before any.
    pub fn budget_shown(&self) -> f64 {
        self.budget
    }

    /// The highest session (boot number) seen from the device so far, to persist.
    pub fn highest_session(&self) -> u64 {
        self.highest_session
    }

    /// The link.
    pub fn link(&self) -> &L {
        &self.link
    }

    /// Gives the link back.
    pub fn into_link(self) -> L {
        self.link
    }

    /// Swaps the link (e.g. after the device restarted): the next request first greets the
    /// device again, to learn its new session (a restarted device has a new boot number).
    pub fn replace_link(&mut self, link: L) -> L {
        self.reader = StreamReader::new();
        self.greeted = None;
        std::mem::replace(&mut self.link, link)
    }

    /// Sends the last query again and returns the reply: what a learner does when a query
    /// failed for good, e.g. because the device restarted mid-query. The query goes out afresh,
    /// with a new number: the learner gave up on the old one, and its closing hello
    /// ([`WireClient::request`]) froze the conversation the old one was tagged in, so the device
    /// refuses it from then on, and an answer lost for good is charged again (budget, never
    /// privacy: every spend is counted).
    pub fn retry_last(&mut self, message: Message) -> Result<Message, LinkError> {
        self.request(message)
    }

    /// Sends `message` with a new sequence number and returns the device's reply to it: an
    /// authenticated frame with that number (anything else is dropped and counted). A query is
    /// preceded by a hello if the device has not been greeted in its current session.
    ///
    /// A query the device refuses as [`Refusal::StaleSequence`] (its conversation was frozen by
    /// another hello request — a replayed one, or another learner's — or the number was stale),
    /// or as not of its conversation (its refusal 12 of this very frame, verifying under the
    /// learner's key: the offer this learner's hello got was replaced before its query came), is
    /// sent afresh after a new hello, up to [`CONVERSATION_RETRIES`] times (wire format 5), as
    /// long as that hello, in the same boot, shows no budget spent since: a refusal 12 also
    /// answers a copy of the query with a payload byte changed, and the query itself may have
    /// been delivered and charged before the new hello (then [`LinkError::SpentUnanswered`],
    /// not resent; review 6). The new hello freezes the conversation the refused query was
    /// tagged in, so it is never spent later.
    ///
    /// A query that gets no answer is given up with a closing hello: a hello request, which,
    /// once it reaches the device, freezes the conversation, so a copy of the query that the
    /// link withheld is refused and never spent after the learner moved on.
    ///
    /// If that closing hello shows a new session (the device restarted while the request was
    /// in flight: its replies to the retries were tagged in a session the learner did not know
    /// yet), the request is sent once more, afresh, in the new session; what the old boot spent
    /// on it shows in the budget the new hello reports.
    pub fn request(&mut self, message: Message) -> Result<Message, LinkError> {
        if let Message::HelloRequest(_) = message {
            return self.hello().map(Message::Hello);
        }
        if self.greeted.is_none() {
            self.hello()?;
        }
        let session = self.auth.session;
        let reply = self.request_once(message);
        // Once more in a new boot, unless the link failed or the device was seen to spend on
        // the query: `SpentUnanswered` is final (review 8: a resend could only add a release,
        // and its failure would replace the error that named the spend).
        let again = match &reply {
            Err(LinkError::Io(_) | LinkError::SpentUnanswered { .. }) => false,
            Err(_) | Ok(Message::Refusal(Refusal::StaleSequence)) => true,
            Ok(_) => false,
        };
        if again && self.auth.session > session { self.request_once(message) } else { reply }
    }

    /// [`WireClient::request`] in the greeted session, without the retry after a restart.
    fn request_once(&mut self, message: Message) -> Result<Message, LinkError> {
        let mut reply = self.exchange(message);
        for _ in 0..CONVERSATION_RETRIES {
            if !matches!(reply, Ok(Message::Refusal(Refusal::StaleSequence)) | Err(LinkError::KeyRefused)) {
                break;
            }
            self.conversations_lost += 1;
            let shown = (self.auth.session, self.budget);
            // A failed new hello fails the request like any other error (below): the learner
            // stays in no conversation it gave up on (review 7: with `?`, one a man in the
            // middle kept open took every later query, each spent with no frame showing it).
            if let Err(e) = self.hello() {
                reply = Err(e);
                break;
            }
            if let Some(e) = self.spent_since(shown) {
                reply = Err(e);
                break;
            }
            // A new boot: what the old one spent shows nowhere the check can compare (a boot
            // starts by reserving budget). The request is not resent here; `request` sends it
            // once more in the new boot (review 7: power cycles before each new hello let a
            // man in the middle charge every resend).
            if self.auth.session != shown.0 {
                break;
            }
            reply = self.exchange(message);
        }
        if let Err(e) = &reply {
            // No answer in this session: the device may have restarted (a new session, whose
            // replies do not verify in the old one). Greet it again before the next request.
            self.greeted = None;
            if !matches!(e, LinkError::Io(_)) {
                let shown = (self.auth.session, self.budget);
                let _ = self.hello(); // the closing hello (above); it may fail as well
                if matches!(reply, Err(LinkError::KeyRefused))
                    && let Some(e) = self.spent_since(shown)
                {
                    reply = Err(e);
                }
            }
        }
        reply
    }

    /// [`LinkError::SpentUnanswered`] if the device, in the same session, shows less budget
    /// left than `shown` (a session and the budget shown then): a refusal 12 verifies for a
    /// copy of the learner's query with a payload byte changed as well (it answers the copy's
    /// tag, which is the query's), so the query itself may have reached the device afterwards,
    /// been answered and charged, and its report kept from the learner. Resending it afresh
    /// would let the same be done again, once per resend.
    fn spent_since(&self, (session, budget): (u64, f64)) -> Option<LinkError> {
        (self.auth.session == session && self.budget < budget).then_some(LinkError::SpentUnanswered {
            device_id: self.auth.device_id,
            spent: budget - self.budget,
        })
    }

    /// Whether `reply` (authenticated, with the awaited number) answers `request`.
    fn check(&self, request: &Message, reply: &Message) -> Result<(), Reject> {
        let query = match request {
            Message::HelloRequest(_) => {
                return match reply {
                    Message::Hello(h) if h.device_id != self.auth.device_id => Err(Reject::Malformed),
                    Message::Hello(h) if h.session < self.highest_session => Err(Reject::OldSession),
                    // A device's configuration (B, R, its ε limits) is fixed when it is
                    // provisioned: a later hello showing another one comes from whoever holds
                    // its key, choosing the bounds its reports are checked against (review 11).
                    Message::Hello(h) if self.config.is_some_and(|c| c != h.config) => {
                        Err(Reject::ConfigChanged)
                    }
                    Message::Hello(_) => Ok(()),
                    _ => Err(Reject::Malformed),
                };
            }
            Message::Query(q) => q,
            Message::FedQuery(f) => &f.query,
            _ => return Ok(()),
        };
        match reply {
            // Refusals a device makes before it verifies a frame's tag are never bound to a
            // conversation (`ReplyCache::respond`); one under this learner's nonce is not the
            // answer to its request either way.
            Message::Refusal(Refusal::Unauthenticated | Refusal::UnsupportedVersion) => {
                Err(Reject::UnauthenticatedRefusal)
            }
            Message::Refusal(_) => Ok(()),
            Message::Report(r) => match &self.greeted {
                Some(hello) => check_report(hello, query, r, self.budget),
                None => Err(Reject::Malformed),
            },
            _ => Err(Reject::Malformed),
        }
    }

    fn count(&mut self, reject: Reject) {
        let d = &mut self.dropped;
        match reject {
            Reject::Malformed => d.malformed += 1,
            Reject::OffGrid => d.off_grid += 1,
            Reject::OutOfRange => d.out_of_range += 1,
            Reject::WrongEpsilon => d.wrong_epsilon += 1,
            Reject::BudgetRose => d.budget_rose += 1,
            Reject::UnauthenticatedRefusal => d.unauthenticated_refusals += 1,
            // A hello of a session older than one seen: recorded, or a device rolled back.
            Reject::OldSession => d.replayed += 1,
            Reject::ConfigChanged => d.malformed += 1,
        }
    }

    /// One request and its reply, with retries; no handshake. A reply is taken only if its
    /// tag verifies under the conversation's nonce (for a hello request, its own) and binds
    /// this request's tag.
    fn exchange(&mut self, message: Message) -> Result<Message, LinkError> {
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let mut sent = self.auth;
        if let Message::HelloRequest(nonce) = message {
            sent.nonce = nonce;
        }
        let mut raw = [0u8; MAX_FRAME_LEN];
        let raw = Repr::new(seq, message).emit(&mut raw, &sent).map_err(|_| LinkError::Encode)?;
        let request_tag = Frame::new_checked(&*raw).map_err(|_| LinkError::Encode)?.tag().to_vec();
        let mut buf = [0u8; MAX_ENCODED_LEN];
        let frame =
            Repr::new(seq, message).emit_framed(&mut buf, &sent).map_err(|_| LinkError::Encode)?.to_vec();
        let expect = sent.answering(&request_tag);
        // How the device tags its refusal of a frame it could not verify (this request altered
        // on the way, or of a conversation that is over): the all-zero nonce and conversation
        // 0, which are no conversation's. Such a refusal is never the answer; it is counted
        // and dropped.
        let unverified = Auth { nonce: [0; NONCE_LEN], conversation: 0, ..expect };
        let mut key_refused = false;
        let mut refused_tries = 0;
        // Frames that failed their tag while this request waited: of the awaited number, and
        // of others (replies to someone else's requests: another learner's, or replayed ones).
        let (mut bad_awaited, mut bad_other) = (0u64, 0u64);
        // The version of a frame answering this request in another version of the format.
        let mut other_version = None;
        if self.earlier.len() == EARLIER_REQUESTS {
            self.earlier.pop_front();
        }
        self.earlier.push_back((seq, expect));
        for attempt in 0..self.tries {
            if attempt > 0 {
                self.resends += 1;
            }
            self.link.send(&frame)?;
            let deadline = Instant::now() + self.timeout;
            // Bytes already waiting are read even once the deadline has passed (a learner
            // descheduled for longer than its timeout still takes a reply that came in time),
            // up to one frame's worth, so that a flood cannot hold it here. (TCP and serial
            // links wait up to 1 ms for each: a drip keeps a try at most that many ms longer.)
            let mut past_deadline = 0;
            loop {
                let left = match deadline.checked_duration_since(Instant::now()) {
                    Some(left) => left,
                    None if past_deadline < MAX_ENCODED_LEN => {
                        past_deadline += 1;
                        Duration::ZERO
                    }
                    None => break,
                };
                let Some(byte) = self.link.recv_byte(left)? else { break };
                let mut late = false;
                let reply = match self.reader.push(byte) {
                    None => continue,
                    Some(Err(_)) => {
                        self.damaged_frames += 1;
                        continue;
                    }
                    Some(Ok(frame)) => {
                        let reply = Repr::parse(&frame, &expect);
                        // A late copy of the device's reply to an earlier request of this
                        // conversation (QoS 1, a duplicating link) fails the tag of this one
                        // (it is bound to its own request): it is a replay, not a forgery.
                        if reply == Err(DecodeError::Unauthenticated) && frame.seq() != seq {
                            late = self
                                .earlier
                                .iter()
                                .any(|(s, auth)| *s == frame.seq() && Repr::parse(&frame, auth).is_ok());
                        }
                        if reply == Err(DecodeError::Unauthenticated) && frame.seq() == seq {
                            match Repr::parse(&frame, &unverified) {
                                Ok(Repr { message: Message::Refusal(r), .. }) => {
                                    self.dropped.unauthenticated_refusals += 1;
                                    key_refused |= r == Refusal::Unauthenticated;
                                    continue;
                                }
                                _ => bad_awaited += 1,
                            }
                        } else if reply == Err(DecodeError::Unauthenticated) && !late {
                            bad_other += 1;
                        }
                        if reply == Err(DecodeError::UnsupportedVersion) && frame.seq() == seq {
                            other_version = Some(frame.version());
                        }
                        reply
                    }
                };
                match reply {
                    Ok(reply) if reply.seq != seq => self.dropped.replayed += 1,
                    Err(DecodeError::Unauthenticated) if late => self.dropped.replayed += 1,
                    Ok(reply) => match self.check(&message, &reply.message) {
                        Ok(()) => {
                            self.auth.nonce = sent.nonce;
                            self.accept(seq, &reply.message);
                            return Ok(reply.message);
                        }
                        Err(reject) => {
                            self.count(reject);
                            // The device's own answer to this very request (it verified): no
                            // later one will say otherwise.
                            if reject == Reject::ConfigChanged {
                                return Err(LinkError::ConfigChanged { device_id: self.auth.device_id });
                            }
                            if let (Reject::OldSession, Message::Hello(h)) = (reject, &reply.message) {
                                return Err(LinkError::SessionWentBack {
                                    device_id: self.auth.device_id,
                                    now: h.session,
                                    seen: self.highest_session,
                                    record: self.boot_record.as_ref().map(|(path, _)| path.clone()),
                                });
                            }
                        }
                    },
                    Err(DecodeError::Unauthenticated) => self.dropped.bad_tag += 1,
                    Err(DecodeError::NonFinite) => self.dropped.non_finite += 1,
                    // Checked before the tag: damage, or not a frame of this version.
                    Err(DecodeError::UnsupportedVersion | DecodeError::UnknownType | DecodeError::Length) => {
                        self.damaged_frames += 1
                    }
                    Err(_) => self.dropped.malformed += 1,
                }
            }
            // Refused as not of the device's conversation: the rest of this try was waited
            // out, so that the answer to a genuine copy sent behind a mutated one (which draws
            // the same refusal) is still taken. The identical frame goes once more: if the
            // refusal was of a changed copy and the device's answer to this frame was lost,
            // its reply cache answers it again; a frame truly refused is refused again, and
            // more tries cannot help (review 7).
            if key_refused {
                refused_tries += 1;
                if refused_tries == 2 {
                    break;
                }
            }
        }
        if key_refused {
            return Err(LinkError::KeyRefused);
        }
        if let Some(device) = other_version {
            return Err(LinkError::Version { device });
        }
        // Frames came, but none was the answer: not a silent device (wire format 5: replies to
        // a replayed hello request, or to another learner, reach this learner's link too).
        if bad_awaited + bad_other > 0 {
            return Err(LinkError::BadTags {
                device_id: self.auth.device_id,
                frames: bad_awaited + bad_other,
                key_file: self.key_file.clone(),
            });
        }
        Err(LinkError::Timeout { seq, tries: self.tries })
    }

    /// Takes note of an accepted reply to request `seq`: the session and budget it shows.
    fn accept(&mut self, seq: u32, reply: &Message) {
        match reply {
            Message::Hello(h) => {
                self.auth.session = h.session;
                self.auth.conversation = h.conversation;
                self.highest_session = self.highest_session.max(h.session);
                // Go on after this hello request's number: the floor of the conversation it
                // offered (and a late copy of its reply must not meet a query of its number).
                self.seq = seq;
                self.budget = self.budget.min(h.budget_remaining);
                self.config.get_or_insert(h.config);
                self.greeted = Some(*h);
            }
            Message::Report(r) => self.budget = self.budget.min(r.budget_remaining),
            _ => {}
        }
    }

    /// The handshake: the device's identity, bounds, limits, session and the conversation it
    /// offers. Later requests are authenticated in that session and conversation (the first
    /// query opens it) and numbered after this hello request.
    pub fn hello(&mut self) -> Result<Hello, LinkError> {
        let (id, key) = (self.auth.device_id, self.auth.key);
        let record = |path: &Path, seen| {
            crate::keys::update_boot_record(path, id, &key, seen).map_err(|e| {
                LinkError::Io(io::Error::new(
                    e.kind(),
                    format!("cannot keep device {id}'s boot number in {}: {e}", path.display()),
                ))
            })
        };
        if let Some((path, read @ false)) = &mut self.boot_record {
            let recorded = record(path, None)?;
            *read = true;
            self.highest_session = self.highest_session.max(recorded);
        }
        let mut nonce = [0u8; NONCE_LEN];
        self.nonces.fill_bytes(&mut nonce);
        let hello = match self.exchange(Message::HelloRequest(nonce))? {
            Message::Hello(h) => h,
            other => return Err(LinkError::Unexpected(other)),
        };
        if let Some((path, _)) = &self.boot_record {
            record(path, Some(hello.session))?;
        }
        Ok(hello)
    }

    /// One query: the device's report, or its refusal.
    pub fn query(
        &mut self,
        round: u32,
        action: u32,
        epsilon: Epsilon,
        level: Option<TruncationLevel>,
    ) -> Result<Result<Report, Refusal>, LinkError> {
        Self::outcome(self.request(Message::Query(Query { round, action, epsilon, level }))?)
    }

    /// One fed query (hardware in the loop): the device privatises `reading` instead of reading
    /// its sensor, and answers with its report, or its refusal ([`Refusal::FeedRefused`] from a
    /// device that reads its own sensor). A retry resends the same reading.
    pub fn fed_query(&mut self, query: Query, reading: f64) -> Result<Result<Report, Refusal>, LinkError> {
        Self::outcome(self.request(Message::FedQuery(FedQuery::new(query, reading)))?)
    }

    fn outcome(reply: Message) -> Result<Result<Report, Refusal>, LinkError> {
        match reply {
            Message::Report(r) => Ok(Ok(r)),
            Message::Refusal(r) => Ok(Err(r)),
            other => Err(LinkError::Unexpected(other)),
        }
    }
}
