//! A fleet over an MQTT broker: many private devices, one learner.
//!
//! Wire frames (`ldp_core::wire`, COBS-stuffed and 0x00-terminated) travel unchanged as MQTT
//! payloads, QoS 1 everywhere, on three topics per device (`<id>` is the decimal `u64` device
//! id):
//!
//! | topic | direction | payload |
//! |---|---|---|
//! | `ldp/<id>/query` | learner → device | a request frame (hello request or query) |
//! | `ldp/<id>/report` | device → learner | the reply frame (hello, report or refusal) |
//! | `ldp/<id>/hello` | device → learner, **retained** | `Repr::new(0, Message::Hello(..))`: public config and budget left |
//!
//! QoS 1 delivers at least once, so a frame may arrive twice. That costs nothing: a device
//! answers a repeated request (same sequence number) from its reply cache without spending
//! again, and [`WireClient`](crate::client::WireClient) drops replies whose sequence number
//! is stale — each query yields exactly one report.
//!
//! - Learner side: [`MqttFleet::connect`] collects the devices' retained hellos and gives one
//!   [`MqttLink`] (a [`Link`]) per device.
//! - Device side: [`serve_devices`] runs N devices ([`DeviceApp`], the code the firmware runs)
//!   on one connection, each with its durable state in `DIR/<id>/state.bin`
//!   ([`FileMedium`]), so a restarted process never gets a device's budget back.
//! - [`Broker`]: a private Mosquitto on a free loopback port, for tests.
//!
//! # Reply timing
//!
//! As the firmware does ([`ldp_core::device`], *Timing*), a device here sends each reply
//! [`REPLY_SLOT`] after its query arrived, never earlier, so that the time a report takes to
//! compute does not show in when it leaves. Replies are sent by a thread of their own from a
//! deadline queue, so neither the work on other devices' queries nor a store write moves them.
//! A reply's time is fixed before its work, from public times only: the end of its slot, and
//! no sooner than [`WORK_BOUND`] after the previous reply's (one thread computes every
//! device's reports, so a burst is spaced by the bound, not by how long each report took).
//! Work that overran its bound (an overloaded host) moves the reply to the end of a later
//! slot, never to when the work ended; such slots are counted in [`ServeStats::late_replies`]. On a
//! host OS (scheduling, the broker, the network) this is approximate: it removes the report's
//! own computing time from the timing, not the host's jitter.
//!
//! A device answers one frame per message (a message carrying more, or none whole, is
//! dropped) and ignores retained queries (they were not sent now: anyone could leave one on
//! the broker to spend budget at every reconnection).
//!
//! # A device's state
//!
//! Each device keeps its state and its settings ([`DeviceSettings`]: B and R, limits, budget,
//! key mode) in `DIR/<id>/state.bin` ([`FileMedium`]), a copy of the settings for people in
//! `DIR/<id>/config.txt`, and holds `DIR/<id>/lock` while it runs. A device without state is
//! created only when asked ([`DevicesSpec::provision`]); a device reopened with other
//! settings than those in its state file, or while another process holds it, is refused.
//!
//! # What a broker sees
//!
//! The broker and anyone subscribed to `ldp/#` see every frame: queries, reports (already
//! privatised) and hellos. The privacy of a report does not depend on the broker, nor, since
//! wire format 3, its integrity: every frame is tagged under the device's link key
//! (`ldp_core::wire::Auth`). A publisher without the key (another client, a device's own login
//! on its topics) cannot spend a device's budget (its queries are refused, replays refused or
//! answered from the cache) nor have a report, a hello or a refusal believed: the learner
//! drops and counts them ([`crate::client::Dropped`], [`MqttFleet::unauthenticated_hellos`]).
//! Availability still depends on the broker.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use ldp_core::Epsilon;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ldp_core::Reporter;
use ldp_core::device::DeviceApp;
use ldp_core::state::{LogStore, StateStore};
use ldp_core::wire::{Auth, Hello, MAX_ENCODED_LEN, Message, Repr, StreamReader};
use rumqttc::{Client, Connection, Event, MqttOptions, NetworkOptions, Packet, QoS};

pub(crate) mod error;
pub use error::MqttError;

use crate::device::DeviceError;
use crate::device::device_config;
use crate::fleet::{
    DeviceSettings, EnvSource, FileMedium, MemberSeeds, lock_device_dir, may_provision, write_synced,
};
use crate::transport::Link;
use ldp_learn::env::Environment;

/// How long after a query arrived a device sends its reply (module docs, *Reply timing*).
/// 2 ms covers a report's computation on a host (tens of microseconds) with a wide margin.
pub const REPLY_SLOT: Duration = Duration::from_millis(2);

/// The longest a report's work may take on the device side (one thread computes every
/// device's reports): replies are spaced at least this far apart, fixed before the work
/// (module docs, *Reply timing*). A report takes tens of microseconds; work beyond the bound
/// (an overloaded host) moves its reply by whole slots and is counted.
pub const WORK_BOUND: Duration = Duration::from_micros(200);

/// How long [`serve_devices`] waits for its first connection to the broker before giving up
/// (later outages are waited out for as long as it runs).
pub const FIRST_CONNECT_PATIENCE: Duration = Duration::from_secs(10);

/// With [`FleetWait::devices`] `None`: the hellos are complete when none arrived for this long.
pub const HELLO_QUIET: Duration = Duration::from_secs(1);

/// MQTT keep-alive: a dead connection is noticed within about this.
const KEEP_ALIVE: Duration = Duration::from_secs(5);
/// Capacity of a client's request queue. A publish that finds it full (a long outage) is
/// dropped: the learner's [`WireClient`](crate::client::WireClient) resends.
const REQUEST_QUEUE: usize = 256;
/// Pause between reconnection attempts.
const RECONNECT_PAUSE: Duration = Duration::from_millis(200);
/// How often the device loop looks at its stop flag when idle.
const IDLE_POLL: Duration = Duration::from_millis(50);
/// How soon the device loop tries again to publish the hellos that found the client's queue
/// full.
const HELLO_RETRY: Duration = Duration::from_millis(1);

/// Username and password from the environment when the URL has none.
const USERNAME_VAR: &str = "LDP_MQTT_USERNAME";
/// See [`USERNAME_VAR`].
const PASSWORD_VAR: &str = "LDP_MQTT_PASSWORD";

pub(crate) fn io_error(what: impl Into<String>) -> impl FnOnce(io::Error) -> MqttError {
    let what = what.into();
    move |source| MqttError::Io { what, source }
}

/// A broker's address and login: `mqtt://[USER[:PASS]@]HOST[:PORT]` (port 1883 by default;
/// `mqtts://`, port 8883, with the `mqtt-tls` feature). Without a user in the URL, the login
/// comes from the environment variables `LDP_MQTT_USERNAME` and `LDP_MQTT_PASSWORD`, if set.
/// The user and password are taken literally (no percent-decoding).
#[derive(Clone, PartialEq, Eq)]
pub struct BrokerUrl {
    /// Host name or address (an IPv6 address without its brackets).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// TLS (`mqtts://`).
    pub tls: bool,
    username: Option<String>,
    password: Option<String>,
}

impl BrokerUrl {
    /// Reads `url`.
    ///
    /// ```
    /// use ldp_link::mqtt::BrokerUrl;
    /// let url = BrokerUrl::parse("mqtt://127.0.0.1:1883")?;
    /// assert_eq!((url.host.as_str(), url.port), ("127.0.0.1", 1883));
    /// assert!(BrokerUrl::parse("http://example.org").is_err());
    /// # Ok::<(), ldp_link::mqtt::MqttError>(())
    /// ```
    pub fn parse(url: &str) -> Result<Self, MqttError> {
        let bad = |reason| MqttError::Url { url: redact(url), reason };
        let (tls, rest) = if let Some(rest) = url.strip_prefix("mqtt://") {
            (false, rest)
        } else if let Some(rest) = url.strip_prefix("mqtts://") {
            if !cfg!(feature = "mqtt-tls") {
                return Err(MqttError::TlsUnsupported);
            }
            (true, rest)
        } else {
            return Err(bad("it must start with mqtt://"));
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '?', '#']) {
            return Err(bad("a broker URL has no path, query or fragment"));
        }
        let (userinfo, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, rest),
        };
        let (username, password) = match userinfo {
            None => (None, None),
            Some(u) => match u.split_once(':') {
                Some((user, pass)) => (Some(user.to_string()), Some(pass.to_string())),
                None => (Some(u.to_string()), None),
            },
        };
        if username.as_deref() == Some("") {
            return Err(bad("the user name before @ is empty"));
        }
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (host, after) =
                v6.split_once(']').ok_or_else(|| bad("an IPv6 address lacks its closing ]"))?;
            (host, after.strip_prefix(':').map(Some).unwrap_or((!after.is_empty()).then_some("")))
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.is_empty() {
            return Err(bad("the host is empty"));
        }
        let port = match port {
            None => {
                if tls {
                    8883
                } else {
                    1883
                }
            }
            Some(p) => match p.parse::<u16>() {
                Ok(p) if p > 0 => p,
                _ => return Err(bad("the port must be a number from 1 to 65535")),
            },
        };
        Ok(Self { host: host.to_string(), port, tls, username, password })
    }

    /// `host:port`.
    pub fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The login: the URL's, else the environment's (type docs), else none.
    pub fn credentials(&self) -> Option<(String, String)> {
        match &self.username {
            Some(user) => Some((user.clone(), self.password.clone().unwrap_or_default())),
            None => {
                let user = std::env::var(USERNAME_VAR).ok().filter(|u| !u.is_empty())?;
                Some((user, std::env::var(PASSWORD_VAR).unwrap_or_default()))
            }
        }
    }

    /// Client options for a client named `client_id`.
    fn options(&self, client_id: String) -> MqttOptions {
        let mut options = MqttOptions::new(client_id, self.host.clone(), self.port);
        options
            .set_keep_alive(KEEP_ALIVE)
            .set_clean_session(true)
            .set_request_channel_capacity(REQUEST_QUEUE);
        if let Some((user, pass)) = self.credentials() {
            options.set_credentials(user, pass);
        }
        #[cfg(feature = "mqtt-tls")]
        if self.tls {
            options.set_transport(rumqttc::Transport::tls_with_default_config());
        }
        options
    }
}

/// The URL without its password.
impl fmt::Display for BrokerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "mqtts" } else { "mqtt" };
        match &self.username {
            Some(user) => write!(f, "{scheme}://{user}@{}", self.address()),
            None => write!(f, "{scheme}://{}", self.address()),
        }
    }
}

/// As [`Display`](fmt::Display): never the password.
impl fmt::Debug for BrokerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BrokerUrl({self})")
    }
}

/// `url` with any password replaced by `***` (for error messages).
fn redact(url: &str) -> String {
    match (url.split_once("://"), url.rfind('@')) {
        (Some((scheme, rest)), Some(_)) => match rest.rsplit_once('@') {
            Some((userinfo, host)) => {
                let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
                format!("{scheme}://{user}:***@{host}")
            }
            None => url.to_string(),
        },
        _ => url.to_string(),
    }
}

/// A client of `url` named after `role`, with Nagle's algorithm off: a frame is one small
/// packet, which Nagle would hold back until the previous one is acknowledged (a delayed ACK
/// costs tens of milliseconds per round).
fn new_client(url: &BrokerUrl, role: &str) -> (Client, Connection) {
    let (client, mut connection) = Client::new(url.options(client_id(role)), REQUEST_QUEUE);
    let mut network = NetworkOptions::new();
    network.set_tcp_nodelay(true);
    connection.eventloop.set_network_options(network);
    (client, connection)
}

/// A client id no other client of this process or another uses at the same time.
fn client_id(role: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("ldp-{role}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

pub(crate) fn topic(id: u64, kind: &str) -> String {
    format!("ldp/{id}/{kind}")
}

/// `ldp/<id>/<kind>` → (id, kind).
pub(crate) fn parse_topic(topic: &str) -> Option<(u64, &str)> {
    let mut parts = topic.split('/');
    let (Some("ldp"), Some(id), Some(kind), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    Some((id.parse().ok()?, kind))
}

/// The hello in a retained payload, if it is one intact framed hello from device `id`,
/// authenticated under `auth` (that device's key).
fn parse_hello(id: u64, payload: &[u8], auth: &Auth) -> Option<Hello> {
    let mut reader = StreamReader::new();
    for &byte in payload {
        if let Some(frame) = reader.push(byte) {
            return match frame.ok().and_then(|f| Repr::parse(&f, auth).ok())?.message {
                Message::Hello(h) if h.device_id == id => Some(h),
                _ => None,
            };
        }
    }
    None
}

/// What the connection thread hands on.
pub(crate) enum Note {
    /// Connected (again); the subscriptions were renewed.
    Connected,
    /// A message arrived at `at` (`retain`: the broker kept it, so it was not sent now).
    Publish { topic: String, payload: Vec<u8>, at: Instant, retain: bool },
    /// The connection failed (it is retried).
    Error(String),
    /// The broker acknowledged a QoS 1 publish.
    Acked,
}

/// The subscriptions a client still has to ask for: every filter at every connection (a
/// restarted broker has forgotten them), retried until the client's request queue takes them.
/// The queue can be full when the broker comes back (a learner's resends wait there during an
/// outage); a subscription given up then would leave the client deaf for good.
#[derive(Debug)]
struct Subscriptions {
    filters: Vec<String>,
    pending: Vec<String>,
}

impl Subscriptions {
    fn new(filters: Vec<String>) -> Self {
        Self { filters, pending: Vec::new() }
    }

    /// Connected (again): every filter is to be asked for.
    fn connected(&mut self) {
        self.pending.clone_from(&self.filters);
    }

    /// Asks for each pending filter with `subscribe` (`false`: the queue did not take it), and
    /// keeps those not taken for the next call.
    fn renew(&mut self, mut subscribe: impl FnMut(&str) -> bool) {
        self.pending.retain(|filter| !subscribe(filter));
    }
}

/// Drives `connection` until `stop` is set and the connection ends: subscribes to `filters` at
/// every connection ([`Subscriptions`]), retries after failures, and hands every event to `on`.
fn spawn_connection(
    mut connection: Connection,
    client: Client,
    filters: Vec<String>,
    stop: Arc<AtomicBool>,
    mut on: impl FnMut(Note) + Send + 'static,
) -> io::Result<JoinHandle<()>> {
    let mut network = connection.eventloop.network_options();
    network.set_connection_timeout(2);
    connection.eventloop.set_network_options(network);
    let mut subscriptions = Subscriptions::new(filters);
    std::thread::Builder::new().name("ldp-mqtt".into()).spawn(move || {
        loop {
            if stop.load(Ordering::Relaxed) {
                // Leave cleanly if connected: the queued publishes go first, then Disconnect.
                let _ = client.try_disconnect();
            }
            // Each event of a live connection has taken a request off the queue, or will soon.
            subscriptions.renew(|filter| client.try_subscribe(filter, QoS::AtLeastOnce).is_ok());
            match connection.recv() {
                Err(_) => break, // every client handle is gone
                Ok(Ok(Event::Incoming(Packet::ConnAck(_)))) => {
                    subscriptions.connected();
                    subscriptions.renew(|filter| client.try_subscribe(filter, QoS::AtLeastOnce).is_ok());
                    on(Note::Connected);
                }
                Ok(Ok(Event::Incoming(Packet::Publish(p)))) => {
                    on(Note::Publish {
                        topic: p.topic,
                        payload: p.payload.to_vec(),
                        at: Instant::now(),
                        retain: p.retain,
                    });
                }
                Ok(Ok(Event::Incoming(Packet::PubAck(_)))) => on(Note::Acked),
                Ok(Ok(Event::Outgoing(rumqttc::Outgoing::Disconnect))) => break,
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    on(Note::Error(e.to_string()));
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    std::thread::sleep(RECONNECT_PAUSE);
                }
            }
        }
    })
}

/// One client's connection to a broker, driven by its thread ([`spawn_connection`]), with what
/// it receives handed on as [`Note`]s: what the device side and the bridge (`crate::bridge`)
/// share. Dropping it leaves cleanly: the queued publishes go first, then Disconnect.
pub(crate) struct Session {
    driven: Driven,
    /// What the connection thread hands on.
    pub(crate) notes: Receiver<Note>,
    broker: String,
}

/// A client and the thread driving its connection ([`spawn_connection`]). Dropping it stops
/// the thread and leaves cleanly: the queued publishes go first, then Disconnect.
struct Driven {
    client: Client,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Driven {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.client.try_disconnect();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Session {
    /// A client of `url` named after `role`, subscribed to `filters` at every connection.
    pub(crate) fn open(url: &BrokerUrl, role: &str, filters: Vec<String>) -> Result<Self, MqttError> {
        let (client, connection) = new_client(url, role);
        let (tx, notes) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = spawn_connection(connection, client.clone(), filters, Arc::clone(&stop), move |note| {
            let _ = tx.send(note);
        })
        .map_err(io_error("cannot start the MQTT thread"))?;
        Ok(Self { driven: Driven { client, stop, thread: Some(thread) }, notes, broker: url.address() })
    }

    /// The client, to publish with.
    pub(crate) fn client(&self) -> &Client {
        &self.driven.client
    }

    /// Waits for the first connection, within [`FIRST_CONNECT_PATIENCE`] (a wrong URL should
    /// say so, not wait forever): `Ok(true)` once connected, `Ok(false)` if `stop` was set
    /// first. Later outages are waited out by the connection thread.
    pub(crate) fn first_connection(&self, stop: &AtomicBool) -> Result<bool, MqttError> {
        let start = Instant::now();
        let mut last_error = None;
        loop {
            let left = FIRST_CONNECT_PATIENCE.checked_sub(start.elapsed());
            match left.map(|l| self.notes.recv_timeout(l.min(IDLE_POLL))) {
                Some(Ok(Note::Connected)) => return Ok(true),
                Some(Ok(Note::Error(e))) => last_error = Some(e),
                Some(Ok(Note::Publish { .. } | Note::Acked)) | Some(Err(RecvTimeoutError::Timeout)) => {}
                None | Some(Err(RecvTimeoutError::Disconnected)) => {
                    return Err(MqttError::Unreachable {
                        broker: self.broker.clone(),
                        reason: last_error.unwrap_or_else(|| "no answer".into()),
                    });
                }
            }
            if stop.load(Ordering::Relaxed) {
                return Ok(false);
            }
        }
    }
}

/// Publishes without blocking; `false` if the request queue is full or closed (module docs).
pub(crate) fn publish(client: &Client, topic: String, retain: bool, payload: &[u8]) -> bool {
    client.try_publish(topic, QoS::AtLeastOnce, retain, payload.to_vec()).is_ok()
}

/// How long [`MqttFleet::connect`] waits, and for how many devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FleetWait {
    /// Wait for this many hellos; `None`: until none arrived for [`HELLO_QUIET`].
    pub devices: Option<usize>,
    /// The longest wait (for the connection and the hellos together).
    pub patience: Duration,
}

/// The learner's state shared with the connection thread.
#[derive(Default)]
struct Shared {
    hellos: Mutex<BTreeMap<u64, Hello>>,
    /// Retained hellos dropped: from a device without a key here, or failing their tag.
    unauthenticated_hellos: AtomicU64,
    last_hello: Mutex<Option<Instant>>,
    routes: Mutex<HashMap<u64, Sender<Vec<u8>>>>,
    connections: AtomicU64,
    last_error: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The learner's connection to a fleet of devices over a broker (module docs): one MQTT client,
/// its connection driven by a background thread that ends when this is dropped.
pub struct MqttFleet {
    driven: Driven,
    shared: Arc<Shared>,
    keys: crate::keys::Keys,
}

impl MqttFleet {
    /// Connects to `url`, subscribes to every device's hello and reports, and waits as `wait`
    /// says for the devices' retained hellos. Only devices with a key in `keys` are members,
    /// and only hellos that verify under their key count (the others are dropped and counted:
    /// [`MqttFleet::unauthenticated_hellos`]).
    pub fn connect(url: &BrokerUrl, wait: FleetWait, keys: &crate::keys::Keys) -> Result<Self, MqttError> {
        let (client, connection) = new_client(url, "learner");
        let shared = Arc::new(Shared::default());
        let member_keys = keys.clone();
        let keys = keys.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&shared);
        let on = move |note: Note| match note {
            Note::Connected => {
                s.connections.fetch_add(1, Ordering::Relaxed);
            }
            Note::Error(e) => *lock(&s.last_error) = Some(e),
            Note::Acked => {}
            Note::Publish { topic, payload, .. } => match parse_topic(&topic) {
                Some((id, "hello")) => {
                    let auth = keys.get(&id).map(|key| Auth::new(*key, id));
                    match auth.and_then(|auth| parse_hello(id, &payload, &auth)) {
                        Some(hello) => {
                            if lock(&s.hellos).insert(id, hello).is_none() {
                                *lock(&s.last_hello) = Some(Instant::now());
                            }
                        }
                        None if payload.is_empty() => {} // a cleared hello
                        None => {
                            s.unauthenticated_hellos.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                Some((id, "report")) => {
                    if let Some(route) = lock(&s.routes).get(&id) {
                        let _ = route.send(payload); // a dropped link: nobody listens
                    }
                }
                _ => {}
            },
        };
        let filters = vec!["ldp/+/hello".to_string(), "ldp/+/report".to_string()];
        let thread = spawn_connection(connection, client.clone(), filters, Arc::clone(&stop), on)
            .map_err(io_error("cannot start the MQTT thread"))?;
        let fleet = Self { driven: Driven { client, stop, thread: Some(thread) }, shared, keys: member_keys };
        let start = Instant::now();
        let connected_by = start + wait.patience;
        while fleet.shared.connections.load(Ordering::Relaxed) == 0 {
            if Instant::now() > connected_by {
                let reason = lock(&fleet.shared.last_error).clone().unwrap_or_else(|| "no answer".into());
                return Err(MqttError::Unreachable { broker: url.address(), reason });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let connected = Instant::now();
        loop {
            let found = lock(&fleet.shared.hellos).len();
            let quiet_since = lock(&fleet.shared.last_hello).unwrap_or(connected);
            let done = match wait.devices {
                Some(n) => found >= n,
                None => quiet_since.elapsed() >= HELLO_QUIET && found > 0,
            };
            if done {
                return Ok(fleet);
            }
            if start.elapsed() > wait.patience {
                return Err(MqttError::TooFewDevices {
                    expected: wait.devices,
                    found,
                    patience: wait.patience,
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// One link per device that said hello, with its latest hello, sorted by device id. Each
    /// call makes new links: a device's replies go to its newest link only.
    pub fn members(&self) -> Vec<(Hello, MqttLink)> {
        let hellos = lock(&self.shared.hellos).clone();
        let mut routes = lock(&self.shared.routes);
        hellos
            .into_iter()
            .filter_map(|(id, hello)| {
                let key = *self.keys.get(&id)?;
                let (tx, rx) = mpsc::channel();
                routes.insert(id, tx);
                let link = MqttLink {
                    client: self.driven.client.clone(),
                    query_topic: topic(id, "query"),
                    rx,
                    pending: VecDeque::new(),
                    auth: Auth::new(key, id),
                    extra_frames: 0,
                };
                Some((hello, link))
            })
            .collect()
    }

    /// Retained hellos dropped because no key here verifies them (forged, or a device this
    /// learner has no key for).
    pub fn unauthenticated_hellos(&self) -> u64 {
        self.shared.unauthenticated_hellos.load(Ordering::Relaxed)
    }

    /// The latest retained hello seen from device `id` (devices renew it after every reply).
    pub fn latest_hello(&self, id: u64) -> Option<Hello> {
        lock(&self.shared.hellos).get(&id).copied()
    }

    /// How many times the client has connected (1 + reconnections).
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::Relaxed)
    }
}

/// The learner's link to one device of an [`MqttFleet`]: `send` publishes a frame to
/// `ldp/<id>/query`; received bytes are those of the device's `ldp/<id>/report` messages.
///
/// During a broker outage, sends are queued by the client (up to a bound, then dropped) and
/// delivered after it reconnects; the [`WireClient`](crate::client::WireClient) resends
/// after its timeout either way. After the fleet is dropped, every call is an error.
pub struct MqttLink {
    client: Client,
    query_topic: String,
    rx: Receiver<Vec<u8>>,
    pending: VecDeque<u8>,
    auth: Auth,
    extra_frames: u64,
}

impl Link for MqttLink {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self.client.try_publish(self.query_topic.clone(), QoS::AtLeastOnce, false, bytes.to_vec()) {
            Ok(()) => Ok(()),
            // A full queue (a long outage) loses this frame, as a lossy link would; the
            // learner resends. A closed one cannot recover.
            Err(_) if self.fleet_alive() => Ok(()),
            Err(_) => Err(io::Error::new(io::ErrorKind::NotConnected, MqttError::Closed.to_string())),
        }
    }

    fn recv_byte(&mut self, timeout: Duration) -> io::Result<Option<u8>> {
        if let Some(b) = self.pending.pop_front() {
            return Ok(Some(b));
        }
        match self.rx.recv_timeout(timeout) {
            Ok(payload) => {
                self.take(payload);
                Ok(self.pending.pop_front())
            }
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                Err(io::Error::new(io::ErrorKind::NotConnected, MqttError::Closed.to_string()))
            }
        }
    }
}

impl MqttLink {
    /// Whether the fleet still routes replies here (its thread holds the sender); a reply that
    /// was waiting is kept.
    fn fleet_alive(&mut self) -> bool {
        match self.rx.try_recv() {
            Ok(payload) => {
                self.take(payload);
                true
            }
            Err(e) => e == mpsc::TryRecvError::Empty,
        }
    }

    /// Queues a report message's first frame, ending it with a delimiter if it lacks one, so
    /// that a damaged message cannot run into the next one. A device sends one frame per
    /// message: whatever follows the first frame is dropped and counted, never kept for a
    /// later query (issue #25).
    fn take(&mut self, payload: Vec<u8>) {
        let end = payload.iter().position(|&b| b == 0).map_or(payload.len(), |i| i + 1);
        if payload[end..].iter().any(|&b| b != 0) {
            self.extra_frames += 1;
        }
        self.pending.extend(&payload[..end]);
        if payload.get(end.wrapping_sub(1)) != Some(&0) {
            self.pending.push_back(0);
        }
    }

    /// The device's key and id, for the [`WireClient`](crate::client::WireClient) on this link.
    pub fn auth(&self) -> Auth {
        self.auth
    }

    /// Report messages that carried more than one frame (the rest was dropped).
    pub fn extra_frames(&self) -> u64 {
        self.extra_frames
    }
}

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

/// A private Mosquitto broker on 127.0.0.1 and a free port, from a generated configuration in
/// a temporary directory (loopback only, anonymous clients, no persistence), for tests. Killed
/// when dropped.
pub struct Broker {
    child: Option<Child>,
    port: u16,
    config: PathBuf,
    binary: PathBuf,
}

impl Broker {
    /// Where the `mosquitto` binary is: on `PATH`, or `/usr/sbin/mosquitto` (Debian's place,
    /// often not on a user's `PATH`).
    pub fn binary() -> Option<PathBuf> {
        let on_path = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .map(|dir| dir.join("mosquitto"));
        on_path.chain([PathBuf::from("/usr/sbin/mosquitto")]).find(|p| p.is_file())
    }

    /// Whether `mosquitto` is installed.
    pub fn available() -> bool {
        Self::binary().is_some()
    }

    /// Starts a broker.
    pub fn start() -> Result<Self, MqttError> {
        let binary = Self::binary().ok_or(MqttError::BrokerMissing)?;
        static PORTS: Mutex<()> = Mutex::new(());
        let _guard = lock(&PORTS);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(io_error("cannot find a free port"))?
            .port();
        let dir = std::env::temp_dir().join(format!("ldp-mosquitto-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(io_error(format!("cannot create {}", dir.display())))?;
        let config = dir.join("mosquitto.conf");
        let text = format!(
            "listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nset_tcp_nodelay true\n"
        );
        std::fs::write(&config, text).map_err(io_error(format!("cannot write {}", config.display())))?;
        let mut broker = Self { child: None, port, config, binary };
        broker.launch()?;
        Ok(broker)
    }

    fn launch(&mut self) -> Result<(), MqttError> {
        let mut child = Command::new(&self.binary)
            .arg("-c")
            .arg(&self.config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(io_error(format!("cannot start {}", self.binary.display())))?;
        let start = Instant::now();
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                self.child = Some(child);
                return Ok(());
            }
            let exited = child.try_wait().map_err(io_error("mosquitto"))?;
            if exited.is_some() || start.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                return Err(MqttError::Unreachable {
                    broker: format!("127.0.0.1:{}", self.port),
                    reason: format!("mosquitto did not start listening ({exited:?})"),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `mqtt://127.0.0.1:<port>`.
    pub fn url(&self) -> BrokerUrl {
        BrokerUrl { host: "127.0.0.1".into(), port: self.port, tls: false, username: None, password: None }
    }

    /// Stops the broker (every client is cut off; with no persistence, retained messages are
    /// lost until the devices publish them again).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops and starts it again on the same port.
    pub fn restart(&mut self) -> Result<(), MqttError> {
        self.stop();
        self.launch()
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop();
        if let Some(dir) = self.config.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

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

    #[test]
    fn urls_parse_and_bad_ones_say_why() {
        let u = BrokerUrl::parse("mqtt://alice:s3cret@broker.example:1884").expect("parses");
        assert_eq!((u.host.as_str(), u.port, u.tls), ("broker.example", 1884, false));
        assert_eq!(u.credentials(), Some(("alice".into(), "s3cret".into())));
        assert!(!format!("{u} {u:?}").contains("s3cret"));
        assert_eq!(BrokerUrl::parse("mqtt://localhost").expect("default port").port, 1883);
        assert_eq!(BrokerUrl::parse("mqtt://[::1]:1885").expect("v6").address(), "[::1]:1885");
        for bad in [
            "tcp://x:1",
            "mqtt://",
            "mqtt://:1883",
            "mqtt://h:0",
            "mqtt://h:x",
            "mqtt://h:1/path",
            "mqtt://@h",
        ] {
            let e = BrokerUrl::parse(bad).expect_err(bad);
            assert!(e.to_string().contains("mqtt://"), "{bad}: {e}");
        }
        let e = BrokerUrl::parse("ftp://bob:pw@h").expect_err("scheme");
        assert!(!e.to_string().contains("pw"), "{e}");
        if !cfg!(feature = "mqtt-tls") {
            assert!(matches!(BrokerUrl::parse("mqtts://h:8883"), Err(MqttError::TlsUnsupported)));
        }
    }

    #[test]
    fn subscriptions_refused_by_a_full_queue_are_asked_for_again() {
        let mut subs = Subscriptions::new(vec!["ldp/+/hello".into(), "ldp/+/report".into()]);
        let mut asked = Vec::new();
        subs.renew(|f| {
            asked.push(f.to_string());
            true
        });
        assert!(asked.is_empty(), "nothing is asked for before a connection");
        subs.connected();
        // The queue is full: nothing is taken, everything stays pending.
        subs.renew(|_| false);
        assert_eq!(subs.pending, ["ldp/+/hello", "ldp/+/report"]);
        // Room for one.
        let mut room = 1;
        subs.renew(|f| {
            asked.push(f.to_string());
            room -= 1;
            room >= 0
        });
        assert_eq!(subs.pending, ["ldp/+/report"]);
        subs.renew(|f| {
            asked.push(f.to_string());
            true
        });
        assert!(subs.pending.is_empty());
        assert_eq!(asked, ["ldp/+/hello", "ldp/+/report", "ldp/+/report"]);
        // A new connection asks for every filter again.
        subs.connected();
        assert_eq!(subs.pending.len(), 2);
    }

    #[test]
    fn topics_and_hellos_parse_strictly() {
        assert_eq!(parse_topic("ldp/42/report"), Some((42, "report")));
        assert_eq!(parse_topic("ldp/x/report"), None);
        assert_eq!(parse_topic("ldp/1/report/extra"), None);
        assert_eq!(parse_topic("other/1/report"), None);
        let auth = Auth::new(ldp_core::wire::LinkKey::new([1; 32]), 1);
        assert_eq!(parse_hello(1, b"garbage\0", &auth), None);
        assert_eq!(parse_hello(1, b"", &auth), None);
        // A hello tagged under another key (a forger's) is not device 1's.
        let policy =
            ldp_core::BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(9.0).unwrap()).unwrap();
        let b = ldp_core::Bound::new(1.0).unwrap();
        let config = ldp_core::DeviceConfig { b, r: b, policy };
        let hello = Hello { device_id: 1, config, budget_remaining: 9.0, session: 3, conversation: 0 };
        let mut buf = [0u8; MAX_ENCODED_LEN];
        let forged = Auth::new(ldp_core::wire::LinkKey::new([2; 32]), 1);
        let bytes = Repr::new(0, Message::Hello(hello)).emit_framed(&mut buf, &forged).unwrap().to_vec();
        assert_eq!(parse_hello(1, &bytes, &auth), None);
        assert_eq!(parse_hello(1, &bytes, &forged), Some(hello));
    }

    /// A report message carrying several frames gives the learner its first one only: the
    /// rest is dropped and counted, never kept for a later query (issue #25: one message with
    /// forged reports for the next 30 sequence numbers).
    #[test]
    fn only_the_first_frame_of_a_report_message_is_kept() {
        let (client, _connection) = Client::new(MqttOptions::new("t", "127.0.0.1", 1), 1);
        let (_tx, rx) = mpsc::channel();
        let auth = Auth::new(ldp_core::wire::LinkKey::new([1; 32]), 1);
        let mut link = MqttLink {
            client,
            query_topic: topic(1, "query"),
            rx,
            pending: VecDeque::new(),
            auth,
            extra_frames: 0,
        };
        link.take(vec![1, 2, 0, 3, 4, 0, 5, 0]);
        assert_eq!(link.pending.iter().copied().collect::<Vec<_>>(), [1, 2, 0]);
        assert_eq!(link.extra_frames(), 1);
        link.take(vec![7, 8]);
        assert_eq!(link.pending.iter().copied().collect::<Vec<_>>(), [1, 2, 0, 7, 8, 0]);
        assert_eq!(link.extra_frames(), 1);
    }
}
