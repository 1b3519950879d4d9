//! The device's persistent state — its secret seed material, its boot counter and the budget it
//! has reserved — and a store for it that a power cut cannot roll back.
//!
//! # What is stored
//!
//! [`DeviceState`]: 32 bytes of secret seed material (written once, when the device is
//! provisioned), the number of the last boot that may have released a value, and the ε reserved
//! so far (an upper bound on what has been released). The [`Accountant`](crate::Accountant)
//! writes it **before** a release ever depends on it (write-ahead):
//!
//! - the boot counter, so that the next boot derives a different noise key
//!   ([`Reporter::open`](crate::Reporter::open)) and a reset never replays a noise stream;
//! - the reserved budget, in chunks, so that a reset never restores spent budget and flash is
//!   written far less than once per report.
//!
//! # One record, two media
//!
//! A state is one [`RECORD_LEN`]-byte record:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `LDPS` |
//! | 4 | 4 | generation (`u32` LE, ≥ 1, +1 per write) |
//! | 8 | 8 | boot counter (`u64` LE) |
//! | 16 | 8 | reserved budget in nano-ε (`u64` LE) |
//! | 24 | 32 | seed material |
//! | 56 | 4 | zero |
//! | 60 | 4 | CRC-32C of bytes 0..60 (`u32` LE) |
//!
//! [`LogStore`] keeps records in a [`LogMedium`]: two sectors of one or more record slots. A
//! write goes to the next blank slot after the newest record, or, when its sector is full, to
//! the first slot of the other sector (erased first). The newest valid record wins. The same
//! algorithm serves
//!
//! - NOR flash (the STM32's sectors 10 and 11, thousands of slots each): programming only
//!   turns bits from 1 to 0, erasing sets a whole sector to `0xFF`;
//! - a medium overwritten in place ([`LogMedium::IN_PLACE`]) with one slot per sector (the
//!   semihosting file under QEMU, a host's state file, an EEPROM): two slots written
//!   alternately, the classic ping-pong.
//!
//! # Failing closed
//!
//! A write that is cut short leaves a record whose CRC fails; the older record it did not touch
//! is then the newest, and nothing was released on the strength of the cut write (a release
//! waits for the write to return). On load, **only** a medium that is blank everywhere reads as
//! "never provisioned"; anything else without a valid record — a short file, a torn first
//! record, garbage — is [`StateError::Corrupt`]. Neither ever becomes a fresh budget: a device
//! is provisioned by an explicit [`LogStore::provision`], which refuses a medium that is not
//! blank. `core/tests/power_cut.rs` cuts the power at every byte of every write and shows that
//! the reserved budget and the boot counter never go back.
//!
//! # A medium overwritten in place
//!
//! Such a medium (a file) is in reach of whoever controls the host, who can overwrite one slot
//! with anything without knowing the CRC. Two rules keep one damaged slot from rolling the
//! state back:
//!
//! - **Every state is written twice**, into two different slots, before [`StateStore::save`]
//!   returns. A slot torn or garbled afterwards — by a power cut or by hand — leaves the same
//!   state in the other. (A cut between the two writes leaves the new state in one slot and
//!   the state before it in the other; damaging the new one then falls back to a state from
//!   before a save that never returned, on which nothing was released.)
//! - **No slot is ever blank again once provisioned**: provisioning writes every slot, and a
//!   write never blanks one (`erase` does nothing; a torn write mixes the old record with the
//!   new one, neither of which is blank). So a blank slot beside a written one is
//!   [`StateError::Blanked`], except while provisioning may have been cut: blank slots only
//!   after every written one, in write order, and the newest record the provisioned state
//!   (boot 0, nothing reserved), which has nothing to roll back.
//!
//! What no CRC can stop is a host that writes whole records of its own (it can recompute the
//! CRC) or puts back an older copy of the medium: against its own operator a device needs a
//! counter out of the host's reach (a TPM, a secure element). On flash, whose `erase` blanks a
//! sector in the normal course, neither rule applies: a blank slot is where the log goes next.

use crate::checksum::crc32c as checksum;

/// Bytes in one stored record.
pub const RECORD_LEN: usize = 64;
const MAGIC: [u8; 4] = *b"LDPS";
const CRC_AT: usize = RECORD_LEN - 4;

/// What a device keeps across resets.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct DeviceState {
    /// Secret seed material, provisioned once. Never leaves the device.
    pub seed: [u8; 32],
    /// The last boot that may have released a value (0: none yet).
    pub boot: u64,
    /// Budget reserved so far, in nano-ε ([`crate::budget::UNITS_PER_EPSILON`]): at least what has
    /// been released.
    pub reserved_units: u64,
}

impl core::fmt::Debug for DeviceState {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DeviceState")
            .field("seed", &"<secret>")
            .field("boot", &self.boot)
            .field("reserved_units", &self.reserved_units)
            .finish()
    }
}

impl DeviceState {
    /// A freshly provisioned state: no boot has released, nothing reserved.
    pub const fn provisioned(seed: [u8; 32]) -> Self {
        Self { seed, boot: 0, reserved_units: 0 }
    }

    /// The record for generation `generation`.
    pub fn encode(&self, generation: u32) -> [u8; RECORD_LEN] {
        let mut r = [0u8; RECORD_LEN];
        r[0..4].copy_from_slice(&MAGIC);
        r[4..8].copy_from_slice(&generation.to_le_bytes());
        r[8..16].copy_from_slice(&self.boot.to_le_bytes());
        r[16..24].copy_from_slice(&self.reserved_units.to_le_bytes());
        r[24..56].copy_from_slice(&self.seed);
        let crc = checksum(&r[..CRC_AT]);
        r[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
        r
    }

    /// Reads a record: `(generation, state)`, or `None` unless magic, zero padding, generation
    /// and CRC are all right.
    pub fn decode(r: &[u8; RECORD_LEN]) -> Option<(u32, Self)> {
        let word = |at: usize| u32::from_le_bytes([r[at], r[at + 1], r[at + 2], r[at + 3]]);
        let long = |at: usize| u64::from(word(at)) | (u64::from(word(at + 4)) << 32);
        let generation = word(4);
        let ok =
            r[0..4] == MAGIC && generation >= 1 && word(56) == 0 && word(CRC_AT) == checksum(&r[..CRC_AT]);
        if !ok {
            return None;
        }
        let mut seed = [0u8; 32];
        seed.copy_from_slice(&r[24..56]);
        Some((generation, Self { seed, boot: long(8), reserved_units: long(16) }))
    }

    /// Whether `next` may follow `self`: same seed, and neither counter goes back.
    pub fn may_precede(&self, next: &Self) -> bool {
        self.seed == next.seed && next.boot >= self.boot && next.reserved_units >= self.reserved_units
    }
}

/// The persistent store of a [`DeviceState`].
pub trait StateStore {
    /// The medium's own error.
    type Error;
    /// The newest durable state. Fails closed: see [`StateError`].
    fn load(&mut self) -> Result<DeviceState, StateError<Self::Error>>;
    /// Durably replaces the state. Must not return `Ok` before the new state would survive a
    /// power cut, and a cut at any point must leave the old state or the new one readable.
    fn save(&mut self, state: &DeviceState) -> Result<(), StateError<Self::Error>>;
}

/// The state could not be loaded or saved. In every case the device releases nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum StateError<E> {
    /// The medium is blank: the device was never provisioned (see [`LogStore::provision`]).
    NotProvisioned,
    /// No valid state, or states that contradict each other, or (on provisioning) a medium that
    /// is not blank. The device will not guess.
    Corrupt,
    /// A medium overwritten in place ([`LogMedium::IN_PLACE`]) has a blank slot beside written
    /// ones where neither a write nor a power cut leaves one: someone blanked a record (or the
    /// file was cut short), which may roll the state back. The device will not guess.
    Blanked,
    /// The medium failed.
    Medium(E),
}

impl<E: core::fmt::Display> core::fmt::Display for StateError<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NotProvisioned => f.write_str("the device was never provisioned: provision its state store first"),
            Self::Corrupt => f.write_str(
                "the device's stored state is missing, torn or inconsistent: it will not report (re-provision it)",
            ),
            Self::Blanked => f.write_str(
                "a record of the device's stored state was blanked (a power cut never does that: the file was edited or cut short), which may roll its budget back: it will not report (restore the state, or retire the device)",
            ),
            Self::Medium(e) => write!(f, "the state store's medium failed: {e}"),
        }
    }
}

impl<E: core::fmt::Debug + core::fmt::Display> core::error::Error for StateError<E> {}

/// A state kept in RAM: it does **not** survive a reset of the process. For simulation and
/// tests (a simulated reset reuses the value).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStore {
    /// The stored state; `None` if never provisioned.
    pub state: Option<DeviceState>,
}

impl MemoryStore {
    /// A store provisioned with `seed`.
    pub const fn provisioned(seed: [u8; 32]) -> Self {
        Self { state: Some(DeviceState::provisioned(seed)) }
    }
}

impl StateStore for MemoryStore {
    type Error = core::convert::Infallible;
    fn load(&mut self) -> Result<DeviceState, StateError<Self::Error>> {
        self.state.ok_or(StateError::NotProvisioned)
    }
    fn save(&mut self, state: &DeviceState) -> Result<(), StateError<Self::Error>> {
        self.state = Some(*state);
        Ok(())
    }
}

/// Where records live: two sectors of [`LogMedium::SLOTS`] record slots each. Bytes never
/// written (or erased) read as `0xFF`; a missing file reads the same way.
pub trait LogMedium {
    /// The medium's error.
    type Error;
    /// Record slots per sector (≥ 1).
    const SLOTS: usize;
    /// `true` for a medium that [`program`](Self::program) overwrites in place and whose
    /// [`erase`](Self::erase) does nothing (a file, an EEPROM); `false` for flash, whose erase
    /// blanks a sector. On a medium overwritten in place every state is written twice and no
    /// slot is blank after provisioning, so a blank slot there is refused
    /// ([`StateError::Blanked`]; module docs). Flash that said `true` would be refused after a
    /// power cut between an erase and the write after it.
    const IN_PLACE: bool;
    /// Reads slot `slot` of sector `sector` (0 or 1).
    fn read(&mut self, sector: usize, slot: usize, buf: &mut [u8; RECORD_LEN]) -> Result<(), Self::Error>;
    /// Writes a record into a slot that reads blank (or, on an overwritable medium, any slot of
    /// a sector just passed to [`erase`](Self::erase)). A power cut may leave it partly written.
    fn program(&mut self, sector: usize, slot: usize, record: &[u8; RECORD_LEN]) -> Result<(), Self::Error>;
    /// Makes every slot of `sector` programmable again (flash: erase to `0xFF`; an overwritable
    /// medium may do nothing).
    fn erase(&mut self, sector: usize) -> Result<(), Self::Error>;
}

enum Slot {
    Blank,
    Invalid,
    Valid(u32, DeviceState),
}

/// A [`StateStore`] over a [`LogMedium`] (module docs: the algorithm and why it cannot roll
/// back).
#[derive(Debug)]
pub struct LogStore<M> {
    medium: M,
    /// The last scan, kept up to date by successful writes, so that a save costs one program
    /// (and a read-back), not a scan of every slot; dropped after any error.
    cursor: Option<Scan>,
}

/// The newest record and where the next one goes.
#[derive(Clone, Copy, Debug)]
struct Scan {
    newest: Option<(u32, DeviceState)>,
    sector: usize,
    next_slot: Option<usize>,
    blank: bool,
}

impl<M: LogMedium> LogStore<M> {
    /// A store over `medium`.
    pub const fn new(medium: M) -> Self {
        Self { medium, cursor: None }
    }

    /// The medium (e.g. to inspect it in tests).
    pub fn medium(&self) -> &M {
        &self.medium
    }

    /// Gives the medium back.
    pub fn into_medium(self) -> M {
        self.medium
    }

    fn slot(&mut self, sector: usize, slot: usize) -> Result<Slot, StateError<M::Error>> {
        let mut buf = [0u8; RECORD_LEN];
        self.medium.read(sector, slot, &mut buf).map_err(StateError::Medium)?;
        Ok(if buf.iter().all(|&b| b == 0xFF) {
            Slot::Blank
        } else {
            DeviceState::decode(&buf).map_or(Slot::Invalid, |(g, s)| Slot::Valid(g, s))
        })
    }

    fn scan(&mut self) -> Result<Scan, StateError<M::Error>> {
        let mut newest: Option<(u32, DeviceState, usize, usize)> = None;
        let mut blank = true;
        // Whether some slot is blank, and whether a written slot follows a blank one (in write
        // order: sector 0, then sector 1).
        let (mut some_blank, mut gap) = (false, false);
        // First pass: the newest record; two different records of one generation are corrupt.
        for sector in 0..2 {
            for slot in 0..M::SLOTS {
                let found = self.slot(sector, slot)?;
                gap |= some_blank && !matches!(found, Slot::Blank);
                match found {
                    Slot::Blank => some_blank = true,
                    Slot::Invalid => blank = false,
                    Slot::Valid(g, s) => {
                        blank = false;
                        match newest {
                            Some((ng, ns, ..)) if g == ng && s != ns => return Err(StateError::Corrupt),
                            Some((ng, ..)) if g <= ng => {}
                            _ => newest = Some((g, s, sector, slot)),
                        }
                    }
                }
            }
        }
        let Some((generation, state, sector, slot)) = newest else {
            return Ok(Scan { newest: None, sector: 0, next_slot: None, blank });
        };
        // In place, a blank slot is left only by a provisioning that was cut (module docs).
        if M::IN_PLACE && some_blank && (gap || state.boot != 0 || state.reserved_units != 0) {
            return Err(StateError::Blanked);
        }
        // Second pass: every older record must be able to precede the newest.
        for s in 0..2 {
            for i in 0..M::SLOTS {
                if let Slot::Valid(_, older) = self.slot(s, i)?
                    && !older.may_precede(&state)
                {
                    return Err(StateError::Corrupt);
                }
            }
        }
        let next_slot = self.next_blank(sector, slot + 1)?;
        Ok(Scan { newest: Some((generation, state)), sector, next_slot, blank })
    }

    /// The first blank slot of `sector` from `from` on.
    fn next_blank(&mut self, sector: usize, from: usize) -> Result<Option<usize>, StateError<M::Error>> {
        for i in from..M::SLOTS {
            if matches!(self.slot(sector, i)?, Slot::Blank) {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// Programs `record` and reads it back: a write that reports success but did not stick
    /// (a weak cell, a controller that ignored the command) is an error, not a state to boot
    /// from later.
    fn program_checked(
        &mut self,
        sector: usize,
        slot: usize,
        record: &[u8; RECORD_LEN],
    ) -> Result<(), StateError<M::Error>> {
        self.medium.program(sector, slot, record).map_err(StateError::Medium)?;
        let mut back = [0u8; RECORD_LEN];
        self.medium.read(sector, slot, &mut back).map_err(StateError::Medium)?;
        if back == *record { Ok(()) } else { Err(StateError::Corrupt) }
    }

    /// Writes `state` as the record after the newest of `scan`, into the next blank slot of its
    /// sector or else the first slot of the other sector (erased first), and returns the scan
    /// that follows.
    fn append(&mut self, scan: Scan, state: &DeviceState) -> Result<Scan, StateError<M::Error>> {
        // The generation cannot wrap.
        let Some(next) = scan.newest.and_then(|(generation, _)| generation.checked_add(1)) else {
            return Err(StateError::Corrupt);
        };
        let record = state.encode(next);
        let (sector, slot) = match scan.next_slot {
            Some(slot) => (scan.sector, slot),
            None => {
                // This sector is full: the other one holds only older records. Erase it and
                // start it with the new record; the full sector keeps the previous state until
                // the write is complete.
                let other = 1 - scan.sector;
                self.medium.erase(other).map_err(StateError::Medium)?;
                (other, 0)
            }
        };
        self.program_checked(sector, slot, &record)?;
        let next_slot = self.next_blank(sector, slot + 1)?;
        Ok(Scan { newest: Some((next, *state)), sector, next_slot, blank: false })
    }

    /// Provisions a blank medium with `seed` (32 bytes from a true random source, kept secret).
    /// Refuses ([`StateError::Corrupt`]) a medium that is not blank everywhere: provisioning never
    /// resets a device's budget or its boot counter. A medium overwritten in place gets the
    /// provisioned state in every slot, so that none is blank again (module docs).
    pub fn provision(&mut self, seed: [u8; 32]) -> Result<(), StateError<M::Error>> {
        if !self.scan()?.blank {
            return Err(StateError::Corrupt);
        }
        let state = DeviceState::provisioned(seed);
        self.cursor = None;
        self.program_checked(0, 0, &state.encode(1))?;
        if M::IN_PLACE {
            let mut scan =
                Scan { newest: Some((1, state)), sector: 0, next_slot: self.next_blank(0, 1)?, blank: false };
            for _ in 1..2 * M::SLOTS {
                scan = self.append(scan, &state)?;
            }
        }
        Ok(())
    }

    /// Whether the medium is blank everywhere (never provisioned).
    pub fn is_blank(&mut self) -> Result<bool, StateError<M::Error>> {
        Ok(self.scan()?.blank)
    }
}

impl<M: LogMedium> StateStore for LogStore<M> {
    type Error = M::Error;

    fn load(&mut self) -> Result<DeviceState, StateError<M::Error>> {
        self.cursor = None;
        let scan = self.scan()?;
        match scan.newest {
            Some((_, state)) => {
                self.cursor = Some(scan);
                Ok(state)
            }
            None if scan.blank => Err(StateError::NotProvisioned),
            None => Err(StateError::Corrupt),
        }
    }

    fn save(&mut self, state: &DeviceState) -> Result<(), StateError<M::Error>> {
        let scan = match self.cursor.take() {
            Some(scan) => scan,
            None => self.scan()?,
        };
        let Some((_, current)) = scan.newest else {
            return Err(if scan.blank { StateError::NotProvisioned } else { StateError::Corrupt });
        };
        // Never write a state that goes back.
        if !current.may_precede(state) {
            return Err(StateError::Corrupt);
        }
        let mut scan = self.append(scan, state)?;
        if M::IN_PLACE {
            // A second copy in another slot: one slot damaged later never loses this state.
            scan = self.append(scan, state)?;
        }
        self.cursor = Some(scan);
        Ok(())
    }
}
