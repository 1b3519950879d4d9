//! A private Mosquitto broker for tests.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::error::{MqttError, io_error};
use super::url::BrokerUrl;

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
        // Held until mosquitto listens (`launch`): the lock QEMU's ports are picked under too.
        let (_guard, port) =
            crate::transport::free_loopback_port().map_err(io_error("cannot find a free port"))?;
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
        BrokerUrl::loopback(self.port)
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
