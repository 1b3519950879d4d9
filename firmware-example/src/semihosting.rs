//! Host files through semihosting (QEMU `-semihosting-config enable=on,target=native`), in
//! QEMU's working directory. On a real board these are flash and the hardware TRNG.
//!
//! | file | who writes it | what it is |
//! |---|---|---|
//! | `ldp-state.bin` | this firmware | the device state: two 64-byte record slots, each state written to both, neither blank after provisioning ([`FileMedium`]; `ldp_core::state`, *A medium overwritten in place*); then the configuration it was provisioned with: `LDPC`, B, R, per-report limit, total ε (four `f64` LE), a 4-byte seal of the 36 bytes before under the device's seed (`ldp_core::wire::seed_digest`; 40 bytes at offset 128; missing, damaged, or copied from another image: the device halts) |
//! | `ldp-provision.bin` | the host (`qemu-run.sh`, host-sim), only for a new device | 32 bytes of secret seed material; used once to provision a blank state, then deleted (host-sim deletes one it finds beside an existing `ldp-state.bin`) |
//! | `ldp-config.bin` | the host (host-sim), optionally, only for a new device | B, R, per-report ε limit and total ε (four `f64` LE): read and validated only while the state is blank (unreadable, not 32 bytes or invalid: the device halts without provisioning), copied into `ldp-state.bin`, deleted once copied; without it a new device gets the built-in configuration; a device that exists keeps its configuration |
//! | `ldp-entropy.bin` | the host, before every boot | 32 fresh bytes of OS entropy (QEMU's STM32 has no TRNG); read once and deleted |
//! | `ldp-timing.bin` | the host creates it empty to ask for it (tests) | per reply, the query → reply latency in TIM2 ticks (`u32` LE) |
//!
//! The configuration tail is sealed under the device's seed (HMAC-SHA256, 4 bytes): a truncated,
//! damaged or edited tail, or one copied from another image (another seed), halts the device
//! instead of handing it another configuration and budget. It binds the tail to this board; it
//! is not a secret against the host: the seed is in `ldp-provision.bin` and in every state
//! record, so whoever can read those files can seal a tail of their own.
#![allow(unsafe_code)] // semihosting is a trap into the debugger/emulator: raw pointers by design

use cortex_m_semihosting::{nr, syscall};
use ldp_core::LogMedium;
use ldp_core::state::RECORD_LEN;

const STATE_FILE: &[u8] = b"ldp-state.bin\0";
const PROVISION_FILE: &[u8] = b"ldp-provision.bin\0";
const ENTROPY_FILE: &[u8] = b"ldp-entropy.bin\0";
const CONFIG_FILE: &[u8] = b"ldp-config.bin\0";
const TIMING_FILE: &[u8] = b"ldp-timing.bin\0";

/// A host file, opened per operation (the file name must end in a NUL byte).
fn open(name: &[u8], mode: usize) -> Option<usize> {
    debug_assert!(name.last() == Some(&0));
    // SAFETY: OPEN reads `name.len() - 1` bytes from a valid, NUL-terminated buffer.
    let fd = unsafe { syscall!(OPEN, name.as_ptr(), mode, name.len() - 1) } as isize;
    (fd >= 0).then_some(fd as usize)
}

fn close(fd: usize) {
    // SAFETY: CLOSE takes a handle returned by OPEN.
    unsafe { syscall!(CLOSE, fd) };
}

/// Reads up to `buf.len()` bytes at `offset`; returns how many were read.
fn read_at(fd: usize, offset: usize, buf: &mut [u8]) -> Option<usize> {
    // SAFETY: SEEK takes a handle and an absolute offset.
    if unsafe { syscall!(SEEK, fd, offset) } != 0 {
        return None;
    }
    // SAFETY: READ writes at most `buf.len()` bytes into `buf`; it returns the bytes NOT read.
    let left = unsafe { syscall!(READ, fd, buf.as_mut_ptr(), buf.len()) };
    buf.len().checked_sub(left)
}

/// Writes all of `bytes` at `offset`.
fn write_at(fd: usize, offset: usize, bytes: &[u8]) -> Option<()> {
    // SAFETY: SEEK takes a handle and an absolute offset.
    if unsafe { syscall!(SEEK, fd, offset) } != 0 {
        return None;
    }
    // SAFETY: WRITE reads `bytes.len()` bytes from `bytes`; it returns the bytes NOT written.
    let left = unsafe { syscall!(WRITE, fd, bytes.as_ptr(), bytes.len()) };
    (left == 0).then_some(())
}

fn remove(name: &[u8]) {
    // SAFETY: REMOVE reads `name.len() - 1` bytes from a valid, NUL-terminated buffer.
    unsafe { syscall!(REMOVE, name.as_ptr(), name.len() - 1) };
}

/// 32 bytes from a one-use file, which is deleted: `None` if it is missing or short.
fn take(name: &[u8]) -> Option<[u8; 32]> {
    let fd = open(name, nr::open::R_BINARY)?;
    let mut bytes = [0u8; 32];
    let n = read_at(fd, 0, &mut bytes);
    close(fd);
    remove(name);
    (n == Some(32)).then_some(bytes)
}

/// This boot's entropy (`ldp-entropy.bin`, deleted once read). `None` if missing: the firmware
/// then refuses to start rather than run without fresh randomness.
pub fn entropy() -> Option<[u8; 32]> {
    take(ENTROPY_FILE)
}

/// The seed material of a provisioning request (`ldp-provision.bin`, deleted once read).
pub fn provisioning_seed() -> Option<[u8; 32]> {
    take(PROVISION_FILE)
}

/// Where `ldp-state.bin` keeps the device's configuration: after the two record slots.
const CONFIG_AT: usize = 2 * RECORD_LEN;
/// The configuration tail's first bytes.
const CONFIG_MAGIC: [u8; 4] = *b"LDPC";
/// The tail: magic, B, R, per-report limit and total ε (four `f64` LE), then the first 4 bytes
/// of `seed_digest(seed, "ldp-bo qemu config v1", all before)`: bound to this device's seed, so
/// a tail copied from another image, or edited by a host without the seed, does not verify.
const TAIL_LEN: usize = 4 + 32 + 4;

/// The host's provisioning configuration (`ldp-config.bin`, left in place): `Ok(None)` if there
/// is none, `Err` if it cannot be read or is not exactly 32 bytes (the firmware then refuses to
/// provision).
pub fn requested_config() -> Result<Option<[f64; 4]>, FileError> {
    let Some(fd) = open(CONFIG_FILE, nr::open::R_BINARY) else { return Ok(None) };
    let mut bytes = [0u8; 33]; // one more than a configuration: a longer file is refused
    let n = read_at(fd, 0, &mut bytes);
    close(fd);
    match n {
        Some(32) => Ok(Some(words(&bytes[..32]))),
        _ => Err(FileError),
    }
}

/// Four `f64` LE.
fn words(bytes: &[u8]) -> [f64; 4] {
    let mut out = [0.0; 4];
    for (x, chunk) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        *x = f64::from_le_bytes(word);
    }
    out
}

/// Writes `config` as the tail of a just-provisioned `ldp-state.bin`, then deletes
/// `ldp-config.bin` (only once the tail is written: a failure leaves the request in place and a
/// state without a tail, which every later boot refuses).
pub fn write_config(config: [f64; 4], seed: &[u8; 32]) -> Result<(), FileError> {
    let mut tail = [0u8; TAIL_LEN];
    tail[..4].copy_from_slice(&CONFIG_MAGIC);
    for (chunk, x) in tail[4..36].chunks_exact_mut(8).zip(config) {
        chunk.copy_from_slice(&x.to_le_bytes());
    }
    let seal = seal(&tail[..36], seed);
    tail[36..].copy_from_slice(&seal);
    let fd = open(STATE_FILE, nr::open::RW_BINARY).ok_or(FileError)?;
    let written = write_at(fd, CONFIG_AT, &tail);
    close(fd);
    written.ok_or(FileError)?;
    remove(CONFIG_FILE);
    Ok(())
}

/// The configuration this device was provisioned with (B, R, per-report limit, total ε), from
/// the tail of `ldp-state.bin`. A missing, short, wrong-magic or wrong-CRC tail is an error: the
/// state is corrupt, and the firmware halts as it does for a torn record, never falling back to
/// a built-in configuration. Like the records' CRC, this one guards against torn writes and
/// accidental damage, not against a host that rewrites the file on purpose: such a host can
/// recompute it (the emulated device's files are the host's; a board keeps them in its flash).
pub fn config(seed: &[u8; 32]) -> Result<[f64; 4], FileError> {
    let fd = open(STATE_FILE, nr::open::R_BINARY).ok_or(FileError)?;
    let mut tail = [0u8; TAIL_LEN];
    let n = read_at(fd, CONFIG_AT, &mut tail);
    close(fd);
    if n != Some(TAIL_LEN) || tail[..4] != CONFIG_MAGIC || tail[36..] != seal(&tail[..36], seed) {
        return Err(FileError);
    }
    Ok(words(&tail[4..36]))
}

/// The configuration tail's seal: bound to the device's seed (see [`TAIL_LEN`]).
fn seal(bytes: &[u8], seed: &[u8; 32]) -> [u8; 4] {
    let digest = ldp_core::wire::seed_digest(seed, b"ldp-bo qemu config v1", bytes);
    [digest[0], digest[1], digest[2], digest[3]]
}

/// The device state in `ldp-state.bin`: two slots of one record each, written alternately in
/// place (`r+b`: no truncation, so a cut write tears only its own slot). Every read loads the
/// whole file: a file never seen reads blank everywhere, bytes past the end of an existing file
/// read blank, and a failed read — or a failed open once the file has been seen — is an error,
/// never a blank. Only a blank medium's file is created (provisioning); afterwards a write that
/// cannot open the file fails.
pub struct FileMedium {
    image: [u8; 2 * RECORD_LEN],
    exists: bool,
}

impl FileMedium {
    /// The medium; nothing is read yet.
    pub const fn new() -> Self {
        Self { image: [0xFF; 2 * RECORD_LEN], exists: false }
    }
}

/// The host refused a file operation.
#[derive(Clone, Copy, Debug, defmt::Format)]
pub struct FileError;

impl core::fmt::Display for FileError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("state file not readable or writable")
    }
}

impl LogMedium for FileMedium {
    type Error = FileError;
    const SLOTS: usize = 1;
    const IN_PLACE: bool = true; // overwritten in place: every state written to both slots

    fn read(&mut self, sector: usize, _slot: usize, buf: &mut [u8; RECORD_LEN]) -> Result<(), FileError> {
        // Every read loads the whole file, so a read-back after a write sees the file itself.
        self.image.fill(0xFF);
        match open(STATE_FILE, nr::open::R_BINARY) {
            Some(fd) => {
                let n = read_at(fd, 0, &mut self.image);
                close(fd);
                let n = n.ok_or(FileError)?;
                self.image[n..].fill(0xFF); // a short file: the missing bytes read blank
                self.exists = true;
            }
            // Once the file has been seen, a failed open is an error, never a blank medium.
            None if self.exists => return Err(FileError),
            None => {}
        }
        let at = sector * RECORD_LEN;
        buf.copy_from_slice(&self.image[at..at + RECORD_LEN]);
        Ok(())
    }

    fn program(&mut self, sector: usize, _slot: usize, record: &[u8; RECORD_LEN]) -> Result<(), FileError> {
        let fd = match (open(STATE_FILE, nr::open::RW_BINARY), self.exists) {
            (Some(fd), _) => fd,
            (None, false) => open(STATE_FILE, nr::open::W_TRUNC_BINARY).ok_or(FileError)?,
            (None, true) => return Err(FileError),
        };
        let written = write_at(fd, sector * RECORD_LEN, record);
        close(fd);
        written.ok_or(FileError)?;
        self.exists = true;
        Ok(())
    }

    fn erase(&mut self, _sector: usize) -> Result<(), FileError> {
        Ok(()) // overwritable: `program` replaces the slot
    }
}

/// The timing probe of `tests/tests/qemu_timing.rs`: on if `ldp-timing.bin` exists at boot.
pub struct TimingProbe {
    offset: Option<usize>,
}

impl TimingProbe {
    /// Looks for `ldp-timing.bin`.
    pub fn new() -> Self {
        let offset = open(TIMING_FILE, nr::open::R_BINARY).map(|fd| {
            // SAFETY: FLEN takes a handle returned by OPEN.
            let len = unsafe { syscall!(FLEN, fd) };
            close(fd);
            len
        });
        Self { offset }
    }

    /// Appends one latency.
    pub fn record(&mut self, ticks: u32) {
        let Some(offset) = self.offset.as_mut() else { return };
        if let Some(fd) = open(TIMING_FILE, nr::open::RW_BINARY) {
            let _ = write_at(fd, *offset, &ticks.to_le_bytes());
            close(fd);
            *offset += 4;
        }
    }
}
