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

/// A free loopback port for a child process to listen on (an emulator, a test broker), and the
/// lock that keeps every other thread of this process from picking one until the child
/// listens: the port is released before the child binds it, so two children picking at once
/// could be given the same one (one learner would then talk to the other's device or broker).
/// One lock for every kind of child, since a port is a port. Hold the guard until the child
/// listens or has exited.
pub(crate) fn free_loopback_port() -> io::Result<(std::sync::MutexGuard<'static, ()>, u16)> {
    static PORTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let guard = PORTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    Ok((guard, port))
}
