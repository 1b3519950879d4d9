//! A real board on a serial port.

use std::io::{self, Read, Write};
use std::time::Duration;

use super::Link;

/// A real board on a serial port (115200 8N1).
pub struct SerialLink {
    port: Box<dyn serialport::SerialPort>,
}

impl SerialLink {
    /// Opens `path` (e.g. `/dev/ttyACM0`).
    pub fn open(path: &str) -> io::Result<Self> {
        let port = serialport::new(path, 115_200)
            .timeout(Duration::from_millis(100))
            .open()
            .map_err(|e| io::Error::other(format!("cannot open serial port {path}: {e}")))?;
        Ok(Self { port })
    }
}

impl Link for SerialLink {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.port.write_all(bytes)
    }

    fn recv_byte(&mut self, timeout: Duration) -> io::Result<Option<u8>> {
        self.port.set_timeout(timeout.max(Duration::from_millis(1))).map_err(io::Error::other)?;
        let mut b = [0u8; 1];
        match self.port.read(&mut b) {
            Ok(1) => Ok(Some(b[0])),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::TimedOut => Ok(None),
            Err(e) => Err(e),
        }
    }
}
