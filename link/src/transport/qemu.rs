//! The firmware under QEMU: building its image, booting it as a device in a working directory,
//! and the key a learner of that board authenticates with.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ldp_core::DeviceConfig;
use ldp_core::wire::{Auth, LinkKey};

use super::TcpLink;
use crate::keys::os_random;

/// The emulated board's state in its working directory (`firmware-example/src/semihosting.rs`):
/// without it, [`QemuDevice::start`] provisions a new board.
pub const STATE_FILE: &str = "ldp-state.bin";
/// The device id of the firmware image (`DEVICE_ID` in `firmware-example/src/main.rs`).
pub const QEMU_DEVICE_ID: u64 = 0x4C44_5030_0000_0001;

/// What a learner of the emulated board in `workdir` authenticates with: the key its
/// provisioning wrote there ([`crate::keys::BOARD_KEY_FILE`]) and the firmware's device id.
pub fn board_auth(workdir: &Path) -> io::Result<Auth> {
    let path = workdir.join(crate::keys::BOARD_KEY_FILE);
    let keys = crate::keys::read(&path).map_err(|e| {
        io::Error::other(format!(
            "{e} (the board's key is written when the host provisions it; a board provisioned before wire format 3 has none: provision a new one)"
        ))
    })?;
    crate::keys::auth_for(&keys, QEMU_DEVICE_ID, &path).map_err(|e| io::Error::other(e.to_string()))
}

/// Written in a board's working directory when the host makes the board (`fleet bridge --qemu`,
/// `live --device qemu`): a directory with it and without [`STATE_FILE`] has lost its board,
/// which is never made again (`fleet::may_provision`).
pub const BOARD_MARKER: &str = "board.txt";

/// A firmware image running under `qemu-system-arm -M netduinoplus2`, its USART1 on a loopback
/// TCP port. The working directory is the device: it holds the semihosting files of
/// `firmware-example/src/semihosting.rs`. [`QemuDevice::start`] plays the host's part of them,
/// as `qemu-run.sh` does: fresh OS entropy for every boot (`ldp-entropy.bin`), and, for a
/// directory with no device state yet, secret seed material to provision it with
/// (`ldp-provision.bin`). Both come from the OS, never from a run's seed: the learner cannot know
/// the device's noise. Restarting in the same directory boots the same device again (same
/// budget, next boot number); a directory without [`STATE_FILE`] gets a new device, so a caller
/// that must not make one for a lost board checks first (`fleet::may_provision` with
/// [`BOARD_MARKER`], as `fleet bridge --qemu` and `live --device qemu` do). The process is
/// killed when this is dropped.
pub struct QemuDevice {
    child: Child,
    port: u16,
    workdir: PathBuf,
}

impl QemuDevice {
    /// Boots `elf` in `workdir` (created if needed).
    pub fn start(elf: &Path, workdir: &Path) -> io::Result<Self> {
        Self::start_with(elf, workdir, &[], None)
    }

    /// [`start`](Self::start), and, if `workdir` holds no device yet, provisions the new one
    /// with `config` (B, R, per-report limit, total ε: `ldp-config.bin`, which the firmware
    /// reads only while its state is blank) instead of the firmware's built-in configuration.
    /// A device that exists keeps the configuration it was provisioned with.
    pub fn start_provisioned(elf: &Path, workdir: &Path, config: &DeviceConfig) -> io::Result<Self> {
        if !workdir.join(STATE_FILE).exists() {
            crate::keys::create_private_dir(workdir)?;
            let p = &config.policy;
            let words = [config.b.get(), config.r.get(), p.per_report_limit().get(), p.total().get()];
            let bytes: Vec<u8> = words.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::fs::write(workdir.join("ldp-config.bin"), bytes)?;
        }
        Self::start(elf, workdir)
    }

    /// [`start`](Self::start) with extra QEMU arguments (e.g. `-icount shift=0`), and, for the
    /// audit's broken fixture only, `replay`: 32 bytes to use as the boot entropy and, for a
    /// new device, as its seed material, instead of fresh OS entropy (a device without a TRNG
    /// whose store is wiped: it boots the same way every time).
    pub fn start_with(
        elf: &Path,
        workdir: &Path,
        extra: &[&str],
        replay: Option<[u8; 32]>,
    ) -> io::Result<Self> {
        if !elf.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "no firmware image at {}: build it with (cd firmware-example && cargo build --release)",
                    elf.display()
                ),
            ));
        }
        // The directory holds the board's seed (its state records, the provisioning request)
        // and key: owner only, as every file in it that holds a secret.
        crate::keys::create_private_dir(workdir)?;
        let random = || match replay {
            Some(bytes) => Ok(bytes),
            None => os_random(),
        };
        if workdir.join(STATE_FILE).exists() {
            // A board exists: a provisioning request beside it was never the host's (it writes
            // one only for a new board). The firmware reads one only while its records are
            // blank, which only damage or tampering makes them: it must then halt, not start
            // afresh with a new budget.
            for request in ["ldp-provision.bin", "ldp-config.bin"] {
                match std::fs::remove_file(workdir.join(request)) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                }
            }
        } else {
            // The board's seed, and the learner's key from it (`crate::keys`), before it boots.
            let seed = random()?;
            let key = LinkKey::from_seed(&seed);
            crate::keys::write(&workdir.join(crate::keys::BOARD_KEY_FILE), QEMU_DEVICE_ID, &key)?;
            crate::keys::write_private(&workdir.join("ldp-provision.bin"), &seed)?;
        }
        crate::keys::write_private(&workdir.join("ldp-entropy.bin"), &random()?)?;
        // A state file of a board made before files were kept private (the firmware's own writes
        // keep the mode; a new one is created by QEMU under umask 077, below).
        crate::keys::make_private(&workdir.join(STATE_FILE))?;
        // Until QEMU holds its port, no other thread of this process may pick one: two emulators
        // on one port would have one learner talk to the other's device (a reset connection).
        let (_guard, port) = super::free_loopback_port()?;
        // Through `sh` for `umask 077`: the firmware's state file, which QEMU creates for it
        // (semihosting), holds the board's seed and must be its owner's only.
        let mut child = Command::new("sh")
            .args(["-c", "umask 077 && exec \"$0\" \"$@\"", "qemu-system-arm"])
            .current_dir(workdir)
            .args(["-M", "netduinoplus2", "-display", "none", "-monitor", "none"])
            .args(["-semihosting-config", "enable=on,target=native"])
            .args(extra)
            .arg("-serial")
            .arg(format!("tcp:127.0.0.1:{port},server=on,wait=on,nodelay=on"))
            .arg("-kernel")
            .arg(elf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                io::Error::new(e.kind(), format!("cannot start qemu-system-arm (through sh): {e}"))
            })?;
        // Hold the lock until QEMU listens (or exits: `connect` then reports why). Where
        // /proc/net/tcp cannot be read, the wait is skipped.
        let start = Instant::now();
        while child.try_wait()?.is_none() && start.elapsed() < Duration::from_secs(10) && !listening(port) {
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(Self { child, port, workdir: workdir.to_path_buf() })
    }

    /// Connects to the emulated USART1. If QEMU exits first (a bad image, a bad option), the
    /// error carries QEMU's own message.
    pub fn connect(&mut self) -> io::Result<TcpLink> {
        let addr = format!("127.0.0.1:{}", self.port);
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait()? {
                let mut message = String::new();
                if let Some(mut stderr) = self.child.stderr.take() {
                    let _ = stderr.read_to_string(&mut message);
                }
                return Err(io::Error::other(format!(
                    "qemu-system-arm exited ({status}): {}",
                    message.trim()
                )));
            }
            match TcpLink::connect(&addr, Duration::ZERO) {
                Ok(link) => return Ok(link),
                Err(e) if start.elapsed() > Duration::from_secs(10) => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// If the emulator has exited: its exit status and what it printed on stderr (for an error
    /// message when the link to it failed).
    pub fn exited(&mut self) -> Option<String> {
        let status = self.child.try_wait().ok()??;
        let mut message = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = stderr.read_to_string(&mut message);
        }
        Some(format!("qemu-system-arm exited ({status}): {}", message.trim()))
    }

    /// What a learner of this board authenticates with ([`board_auth`]).
    pub fn auth(&self) -> io::Result<Auth> {
        board_auth(&self.workdir)
    }

    /// The working directory (the device's files).
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// Stops the emulator (a power cut: nothing is flushed beyond what the firmware wrote).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for QemuDevice {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The firmware could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum FirmwareError {
    /// The bare-metal target is not installed.
    TargetMissing,
    /// cargo could not be run, or printed no image.
    Cargo(String),
    /// The firmware does not compile.
    Build(String),
}

impl std::fmt::Display for FirmwareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TargetMissing => {
                f.write_str("the thumbv7em-none-eabihf target is not installed (scripts/install-deps.sh)")
            }
            Self::Cargo(e) => write!(f, "cannot build the firmware: {e}"),
            Self::Build(e) => write!(f, "the firmware does not build:\n{e}"),
        }
    }
}

impl std::error::Error for FirmwareError {}

/// Builds `firmware-example` (release) with `features` added to its default ones and returns a
/// copy of the image that no later build overwrites, named after the features. Asks cargo where
/// the image is (so `CARGO_TARGET_DIR` and `.cargo/config.toml` are honoured). Builds in one
/// process are serialised.
pub fn build_firmware(features: &[&str]) -> Result<PathBuf, FirmwareError> {
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = BUILD.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../firmware-example");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(&dir).args(["build", "--release", "--message-format=json-render-diagnostics"]);
    if !features.is_empty() {
        command.args(["--features", &features.join(",")]);
    }
    let out = command.env_remove("RUSTFLAGS").output().map_err(|e| FirmwareError::Cargo(e.to_string()))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        if err.contains("target may not be installed") || err.contains("can't find crate for `core`") {
            return Err(FirmwareError::TargetMissing);
        }
        return Err(FirmwareError::Build(err.into_owned()));
    }
    let image = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "ldp-firmware-example")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| FirmwareError::Cargo("cargo reported no firmware image".into()))?;
    let name = match features {
        [] => "ldp-firmware-example".to_string(),
        f => format!("ldp-firmware-example+{}", f.join("+")),
    };
    // Copied beside it and renamed into place: a QEMU of another test (or process) may be
    // loading the image at this moment, and `fs::copy` onto it would truncate it first (QEMU
    // then boots a partial image: "Lockup: can't escalate 3 to HardFault" at PC 0). A rename
    // is atomic; a reader keeps the image it opened.
    let copy = image.with_file_name(format!("{name}.elf"));
    let partial = image.with_file_name(format!("{name}.elf.{}.partial", std::process::id()));
    std::fs::copy(&image, &partial).and_then(|_| std::fs::rename(&partial, &copy)).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        FirmwareError::Cargo(format!("{}: {e}", copy.display()))
    })?;
    Ok(copy)
}

/// Whether something listens on 127.0.0.1:`port` (Linux: /proc/net/tcp; elsewhere `true`).
fn listening(port: u16) -> bool {
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else { return true };
    let local = format!("0100007F:{port:04X}");
    table.lines().any(|line| {
        let mut fields = line.split_whitespace();
        fields.nth(1) == Some(local.as_str()) && fields.nth(1) == Some("0A")
    })
}
