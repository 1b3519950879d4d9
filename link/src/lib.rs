//! # ldp-link: the learner's link to its devices
//!
//! A learner on a host reaches its devices through the wire format of `ldp-core`
//! (`ldp_core::wire`): a query names an action and an ε, the device answers with a report it
//! privatised itself, or a refusal. This crate is the host's side of that conversation: it
//! opens the links, authenticates every frame, drops what a device could not have sent, and
//! gives the learner a [`device::Device`] to query, whatever stands behind it.
//!
//! ## The path of a query
//!
//! ```text
//!  learner ─► Device::query(arm, level) ─► WireClient ─► Link ─► device (DeviceApp, firmware)
//!                                              ▲   frames: tagged, sequence-numbered, COBS   │
//!  report ◄── checked: tag, sequence, ε, grid, range, budget ◄──────────────────────────────┘
//! ```
//!
//! - [`client`]: the [`client::WireClient`], the protocol over any link: sequence numbers,
//!   resends, authentication, and the checks that drop (and count, [`client::Dropped`]) what a
//!   device could not have sent;
//! - [`transport`]: the [`transport::Link`] trait and one file per transport — in memory
//!   ([`transport::LoopbackLink`], the device application in this process), TCP, a serial port,
//!   the firmware under QEMU ([`transport::QemuDevice`]) — and fault injection for tests;
//! - [`keys`]: key files, how a device's link key reaches its learner;
//! - [`device`]: the learner's [`device::Device`]: a device on the wire, one fed readings from a
//!   simulated world (hardware in the loop), the in-process simulation (`ldp-core`'s reporter
//!   in front of an environment) and the non-private passthrough;
//! - [`fleet`]: many devices, each a user with its own budget, routed one round each;
//! - [`mqtt`]: a fleet over an MQTT broker, the learner's and the devices' sides, their errors
//!   ([`mqtt::MqttError`]) and a private Mosquitto for tests;
//! - [`bridge`]: a board on a serial port as a device on the broker.
//!
//! ```text
//!  link/src/
//!  ├── client.rs          WireClient, LinkError, Dropped
//!  ├── transport/         mod.rs (the Link trait), loopback, tcp, serial, qemu, faulty
//!  ├── keys.rs            key files, OS entropy
//!  ├── device.rs          Device: wire, fed, simulated, passthrough
//!  ├── fleet.rs           many devices, one round each
//!  ├── mqtt/              mod.rs, learner.rs, devices.rs, session.rs, url.rs, error.rs, broker.rs
//!  └── bridge.rs          a serial board on the broker
//! ```
//!
//! ## Features
//!
//! `mqtt` (the [`mqtt`] and [`bridge`] modules: rumqttc, with tokio) and `serial`
//! ([`transport::SerialLink`]: serialport) are on by default; `mqtt-tls` adds `mqtts://` URLs,
//! `clap` the fleet's routing as a value enum for host-sim's command line. Without the first
//! two, as the Python package builds it, the crate keeps the in-process, loopback, TCP and
//! QEMU devices and the fleet in process.
//!
//! ## What it is not
//!
//! It privatises nothing: every release is made by `ldp-core` on the device (or, in a
//! simulation, by the same reporter in this process), and a report is only checked here, never
//! altered. It chooses no action: the learners are `ldp-learn`'s, whose environments the
//! simulated devices read their rewards from. It runs no experiment: `host-sim` builds the
//! devices of a run from its settings.
//!
//! ## Rules kept throughout
//!
//! Nothing a device or a broker sends can make the learner panic or believe a forged frame; a
//! link that fails or a reply that is dropped is counted and typed ([`client::LinkError`],
//! [`client::Dropped`]). Files that hold keys or a device's state are written readable by
//! their owner only. A simulated device's randomness comes from an injected seed; a real or
//! emulated device's from the operating system.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::float_cmp))]

#[cfg(feature = "mqtt")]
pub mod bridge;
pub mod client;
pub mod connect;
pub mod device;
pub mod fleet;
pub mod keys;
#[cfg(feature = "mqtt")]
pub mod mqtt;
pub mod transport;
