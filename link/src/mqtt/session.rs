//! One client's connection to the broker: topics, subscriptions kept across reconnections,
//! the thread that drives the connection, and what it hands on; shared by the learner, the
//! device side and the bridge.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ldp_core::wire::{Auth, Hello, Message, Repr, StreamReader};
use rumqttc::{Client, Connection, Event, NetworkOptions, Packet, QoS};

use super::error::{MqttError, io_error};
use super::url::{BrokerUrl, REQUEST_QUEUE};

/// How long [`serve_devices`](super::serve_devices) waits for its first connection to the broker before giving up
/// (later outages are waited out for as long as it runs).
pub const FIRST_CONNECT_PATIENCE: Duration = Duration::from_secs(10);

/// Pause between reconnection attempts.
const RECONNECT_PAUSE: Duration = Duration::from_millis(200);

/// How often the device loop looks at its stop flag when idle.
pub(super) const IDLE_POLL: Duration = Duration::from_millis(50);

/// `m`'s guard, also after a thread panicked holding it (what it guards stays consistent).
pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A client of `url` named after `role`, with Nagle's algorithm off: a frame is one small
/// packet, which Nagle would hold back until the previous one is acknowledged (a delayed ACK
/// costs tens of milliseconds per round).
pub(super) fn new_client(url: &BrokerUrl, role: &str) -> (Client, Connection) {
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
pub(super) fn parse_hello(id: u64, payload: &[u8], auth: &Auth) -> Option<Hello> {
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
pub(super) fn spawn_connection(
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
pub(super) struct Driven {
    pub(super) client: Client,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) thread: Option<JoinHandle<()>>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::Epsilon;
    use ldp_core::wire::MAX_ENCODED_LEN;

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
}
