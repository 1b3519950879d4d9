//! What can go wrong with a broker, a device process or a fleet over MQTT (`crate::mqtt`): its own
//! module, below the device layer that reports it.

use std::fmt;
use std::io;
use std::time::Duration;

use ldp_learn::env::EnvError;

/// Maps an I/O error to [`MqttError::Io`], saying `what` failed.
pub(crate) fn io_error(what: impl Into<String>) -> impl FnOnce(io::Error) -> MqttError {
    let what = what.into();
    move |source| MqttError::Io { what, source }
}

/// What went wrong with the broker, a device or the fleet.
#[derive(Debug)]
#[non_exhaustive]
pub enum MqttError {
    /// The broker URL could not be read.
    Url {
        /// The URL as given (without its password).
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An `mqtts://` URL, but this build has no TLS.
    TlsUnsupported,
    /// No connection to the broker.
    Unreachable {
        /// The broker (`host:port`).
        broker: String,
        /// The last error the client saw.
        reason: String,
    },
    /// Fewer devices said hello than were waited for.
    TooFewDevices {
        /// How many were expected (`None`: any number, and none came).
        expected: Option<usize>,
        /// How many said hello.
        found: usize,
        /// How long was waited.
        patience: Duration,
    },
    /// The connection's background thread ended (the fleet was dropped).
    Closed,
    /// A device could not be set up: its state store or its configuration.
    Device {
        /// The device id.
        id: u64,
        /// What failed.
        reason: String,
    },
    /// A file or process operation failed.
    Io {
        /// What was being done.
        what: String,
        /// The system's error.
        source: io::Error,
    },
    /// The devices' environment could not be built.
    Environment(EnvError),
    /// The experiment cannot serve as the devices' environment.
    Experiment {
        /// The experiment's name.
        name: String,
        /// Why not.
        reason: &'static str,
    },
    /// The `mosquitto` binary was not found.
    BrokerMissing,
    /// The broker did not acknowledge every publish in time.
    Unacknowledged {
        /// The broker (`host:port`).
        broker: String,
        /// Publishes sent.
        sent: usize,
        /// Of which acknowledged.
        acked: usize,
    },
}

impl fmt::Display for MqttError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Url { url, reason } => {
                write!(f, "bad broker URL `{url}`: {reason} (write mqtt://HOST:PORT, e.g. mqtt://127.0.0.1:1883)")
            }
            Self::TlsUnsupported => f.write_str(
                "mqtts:// needs TLS, which this build lacks: rebuild host-sim with --features mqtt-tls, or use mqtt://",
            ),
            Self::Unreachable { broker, reason } => write!(
                f,
                "cannot connect to the MQTT broker at {broker}: {reason} (is it running? scripts/broker.sh start)"
            ),
            Self::TooFewDevices { expected: Some(n), found, patience } => write!(
                f,
                "only {found} of {n} devices said hello within {patience:?}: start them \
                 (host-sim fleet devices --broker URL --count {n} --dir DIR) or wait longer"
            ),
            Self::TooFewDevices { expected: None, patience, .. } => write!(
                f,
                "no device said hello within {patience:?}: start some with host-sim fleet devices --broker URL ..."
            ),
            Self::Closed => f.write_str("the MQTT connection is closed (its fleet was dropped)"),
            Self::Device { id, reason } => write!(f, "device {id}: {reason}"),
            Self::Io { what, source } => write!(f, "{what}: {source}"),
            Self::Environment(e) => write!(f, "the devices' environment: {e}"),
            Self::Experiment { name, reason } => write!(f, "experiment {name} cannot run on fleet devices: {reason}"),
            Self::Unacknowledged { broker, sent, acked } => write!(
                f,
                "the MQTT broker at {broker} acknowledged {acked} of {sent} publishes in time: \
                 it is overloaded or restarting; try again"
            ),
            Self::BrokerMissing => {
                f.write_str("mosquitto is not installed (scripts/broker.sh install, or apt-get install mosquitto)")
            }
        }
    }
}

impl std::error::Error for MqttError {}
