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
//! - Learner side (`learner.rs`): [`MqttFleet::connect`] collects the devices' retained hellos
//!   and gives one [`MqttLink`] (a [`Link`](crate::transport::Link)) per device.
//! - Device side (`devices.rs`): [`serve_devices`] runs N devices
//!   ([`DeviceApp`](ldp_core::device::DeviceApp), the code the firmware runs) on one connection,
//!   each with its durable state in `DIR/<id>/state.bin`
//!   ([`FileMedium`](crate::fleet::FileMedium)), so a restarted process never gets a device's
//!   budget back.
//! - What both sides (and `crate::bridge`) share (`session.rs`): the topics, one client's
//!   connection driven by its own thread, subscriptions renewed at every reconnection; the
//!   broker's address and login ([`BrokerUrl`], `url.rs`); the errors ([`MqttError`],
//!   `error.rs`).
//! - [`Broker`] (`broker.rs`): a private Mosquitto on a free loopback port, for tests.
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
//! Each device keeps its state and its settings ([`DeviceSettings`](crate::fleet::DeviceSettings): B and R, limits, budget,
//! key mode) in `DIR/<id>/state.bin` ([`FileMedium`](crate::fleet::FileMedium)), a copy of the settings for people in
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

mod broker;
mod devices;
pub(crate) mod error;
mod learner;
mod session;
mod url;

pub use broker::Broker;
pub use devices::{
    DeviceStatus, Devices, DevicesSpec, FORGET_PATIENCE, REPLY_SLOT, Seeds, ServeStats, WORK_BOUND,
    forget_devices, serve_devices,
};
pub use error::MqttError;
pub use learner::{FleetWait, HELLO_QUIET, MqttFleet, MqttLink};
pub use session::FIRST_CONNECT_PATIENCE;
pub(crate) use session::{Note, Session, parse_topic, publish, topic};
pub use url::BrokerUrl;
