//! A TCP socket to a device: QEMU's emulated USART1.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::Link;

/// A TCP connection (QEMU's `-serial tcp:…` chardev).
pub struct TcpLink {
    stream: TcpStream,
    buf: Vec<u8>,
    pos: usize,
}

impl TcpLink {
    /// Connects to `addr`, retrying until `patience` runs out (QEMU needs a moment to listen).
    pub fn connect(addr: &str, patience: Duration) -> io::Result<Self> {
        let start = Instant::now();
        loop {
            match TcpStream::connect(addr) {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    return Ok(Self { stream, buf: Vec::new(), pos: 0 });
                }
                Err(e) if start.elapsed() > patience => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

impl Link for TcpLink {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)
    }

    fn recv_byte(&mut self, timeout: Duration) -> io::Result<Option<u8>> {
        if self.pos < self.buf.len() {
            self.pos += 1;
            return Ok(Some(self.buf[self.pos - 1]));
        }
        self.stream.set_read_timeout(Some(timeout.max(Duration::from_millis(1))))?;
        let mut chunk = [0u8; 256];
        match self.stream.read(&mut chunk) {
            Ok(0) => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the device closed the connection")),
            Ok(n) => {
                self.buf.clear();
                self.buf.extend_from_slice(&chunk[..n]);
                self.pos = 1;
                Ok(Some(self.buf[0]))
            }
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => Ok(None),
            Err(e) => Err(e),
        }
    }
}
