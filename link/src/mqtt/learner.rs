//! The learner's side: one client that collects the devices' retained hellos and gives a
//! [`MqttLink`] per device.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ldp_core::wire::{Auth, Hello};
use rumqttc::{Client, QoS};

use super::error::{MqttError, io_error};
use super::session::{Driven, Note, lock, new_client, parse_hello, parse_topic, spawn_connection, topic};
use super::url::BrokerUrl;
use crate::transport::Link;

/// With [`FleetWait::devices`] `None`: the hellos are complete when none arrived for this long.
pub const HELLO_QUIET: Duration = Duration::from_secs(1);

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

#[cfg(test)]
mod tests {
    use super::*;
    use rumqttc::MqttOptions;

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
