//! The byte pipes between a learner and a device: one [`Link`] trait, one file per transport
//! (smoltcp's `phy/` in shape).
//!
//! - [`LoopbackLink`]: the device application in this process (`ldp_core::device::DeviceApp`,
//!   the code the firmware runs), bytes passed in memory;
//! - [`TcpLink`]: a TCP socket, e.g. QEMU's emulated USART1 ([`QemuDevice`] starts one, and
//!   [`build_firmware`] builds the image it boots);
//! - [`SerialLink`]: a real board on a serial port;
//! - [`FaultyLink`]: any of them with frames dropped, corrupted, duplicated and reordered, for
//!   tests.
//!
//! A link only moves bytes: the protocol over it (frames, sequence numbers, authentication,
//! resends) is the [`WireClient`](crate::client::WireClient)'s; an MQTT fleet's links are
//! [`crate::mqtt`]'s.

use std::io;
use std::time::Duration;

mod faulty;
mod loopback;
mod qemu;
#[cfg(feature = "serial")]
mod serial;
mod tcp;

pub use faulty::{FaultCounts, Faults, FaultyLink};
pub use loopback::LoopbackLink;
pub use qemu::{
    BOARD_MARKER, FirmwareError, QEMU_DEVICE_ID, QemuDevice, STATE_FILE, board_auth, build_firmware,
};
#[cfg(feature = "serial")]
pub use serial::SerialLink;
pub use tcp::TcpLink;

/// A byte pipe to a device.
pub trait Link {
    /// Sends all of `bytes`.
    fn send(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// The next received byte, or `None` if none arrives within `timeout`.
    fn recv_byte(&mut self, timeout: Duration) -> io::Result<Option<u8>>;
}
