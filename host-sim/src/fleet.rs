//! A fleet: many devices, each a user with its own budget, answering one learner.
//!
//! Local DP exists because rewards come from many people's devices. In a fleet each round's
//! query goes to one device, chosen by a [`Routing`] among the devices with budget left, so a
//! user spends ε on the rounds routed to it, not T·ε. Every member runs the device application
//! (`ldp_core::device::DeviceApp`, the code the firmware runs) behind the wire format, over any
//! [`Link`]: in memory for the in-process fleet (`--device fleet:N`), or over MQTT
//! (`crate::mqtt`).
//!
//! The pieces:
//! - [`EnvSource`]: an experiment's environment as a device's [`RewardSource`] (a simulated
//!   user whose private reading is the environment's reward);
//! - [`FileMedium`]: a device's durable state (seed material, boot counter, reserved budget) in
//!   a file, so that a restarted device process never gets its budget back;
//! - [`Fleet`]: the learner's view, a [`Device`](crate::device::Device) that routes each query
//!   and records what every member spent.

use std::borrow::Borrow;
use std::fs::OpenOptions;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use ldp_core::device::RewardSource;
use ldp_core::state::{LogMedium, RECORD_LEN};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

use crate::device::DeviceError;
use crate::env::{Environment, SimRng};
use crate::settings::derive_seed;

/// The public configuration of a fleet member over `env`: its B and R, per-report limit
/// `epsilon` and lifetime budget `user_budget` (both ε).
pub fn member_config(
    env: &dyn Environment,
    epsilon: f64,
    user_budget: f64,
) -> Result<DeviceConfig, DeviceError> {
    let bounds = env.bounds();
    let r = bounds.r.ok_or(DeviceError::UnboundedNoise)?;
    let c = DeviceError::Config;
    Ok(DeviceConfig {
        b: Bound::new(bounds.b).map_err(c)?,
        r: Bound::new(r).map_err(c)?,
        policy: BudgetPolicy::new(Epsilon::new(epsilon).map_err(c)?, Epsilon::new(user_budget).map_err(c)?)
            .map_err(c)?,
    })
}

/// What a member device is keyed with: its secret seed material, its boot entropy and the seed
/// of its world's noise ([`EnvSource`]).
#[derive(Clone, Copy)]
pub struct MemberSeeds {
    /// Seed material to provision a blank store with.
    pub material: [u8; 32],
    /// Entropy for this boot.
    pub entropy: [u8; 32],
    /// Seed of the world generator.
    pub world: u64,
}

impl MemberSeeds {
    /// A simulated member: member `index` of the fleet of the trial with seed `trial_seed`,
    /// everything derived from those — reproducible, and known to whoever knows the seed: a
    /// simulation, with no privacy against the learner. The in-process fleet and
    /// `host-sim fleet devices --simulation` derive the same seeds, so their runs match.
    pub fn simulated(trial_seed: u64, index: u64) -> Self {
        let fleet = derive_seed(trial_seed, FLEET_STREAM, 0);
        let mut rng = ChaCha20Rng::seed_from_u64(derive_seed(fleet, index, 1));
        let (mut material, mut entropy) = ([0u8; 32], [0u8; 32]);
        rng.fill_bytes(&mut material);
        rng.fill_bytes(&mut entropy);
        Self { material, entropy, world: derive_seed(fleet, index, 2) }
    }

    /// A real member: everything from the OS's entropy, which no one else knows.
    pub fn from_os() -> io::Result<Self> {
        let mut bytes = [0u8; 72];
        getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("no OS entropy: {e}")))?;
        let (mut material, mut entropy, mut world) = ([0u8; 32], [0u8; 32], [0u8; 8]);
        material.copy_from_slice(&bytes[..32]);
        entropy.copy_from_slice(&bytes[32..64]);
        world.copy_from_slice(&bytes[64..]);
        Ok(Self { material, entropy, world: u64::from_le_bytes(world) })
    }
}

/// The stream of [`derive_seed`] that a trial's fleet is derived from (apart from the
/// learners' streams 0–3).
const FLEET_STREAM: u64 = 0xF1EE7;

/// An environment as a device's reward source: action `a` reads one raw reward of arm `a`
/// (`Environment::sample`), with the world's noise drawn from the source's own generator.
/// The generator stands for the physical world: a device seeded from OS entropy has noise no
/// one else knows; one seeded from a run's seed is a reproducible simulation.
pub struct EnvSource<E> {
    env: E,
    world: SimRng,
}

impl<E: Borrow<dyn Environment>> EnvSource<E> {
    /// `env` read with noise from a generator seeded with `world_seed`.
    pub fn new(env: E, world_seed: u64) -> Self {
        Self { env, world: SimRng::seed_from_u64(world_seed) }
    }

    /// The environment.
    pub fn env(&self) -> &dyn Environment {
        self.env.borrow()
    }
}

impl<E: Borrow<dyn Environment>> RewardSource for EnvSource<E> {
    /// The environment's arms (saturating at `u32::MAX - 1`; the wire's actions are 32-bit).
    fn actions(&self) -> u32 {
        u32::try_from(self.env.borrow().num_arms()).unwrap_or(u32::MAX - 1).min(u32::MAX - 1)
    }

    /// One reward of arm `action`; `None` for an action outside the arms (which the device
    /// refuses without looking at the reading).
    fn read(&mut self, action: u32) -> Option<f64> {
        let arm = usize::try_from(action).ok()?;
        let env = self.env.borrow();
        (arm < env.num_arms()).then(|| env.sample(arm, &mut self.world))
    }
}

/// A device's state record in a file of two 64-byte slots written alternately (the ping-pong
/// of an overwritable medium, as the firmware's semihosting file): the host's durable
/// [`LogMedium`]. A missing file reads blank; once the file has been seen, failing to open it
/// is an error, never a blank (fresh) store. Each write is flushed to the disk (`sync_data`)
/// before it returns, so a release never waits on a write the OS could still lose.
#[derive(Debug)]
pub struct FileMedium {
    path: PathBuf,
    seen: bool,
}

impl FileMedium {
    /// The medium in `path` (nothing is read yet).
    pub fn new(path: &Path) -> Self {
        Self { path: path.to_path_buf(), seen: false }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl LogMedium for FileMedium {
    type Error = io::Error;
    const SLOTS: usize = 1;

    fn read(&mut self, sector: usize, _slot: usize, buf: &mut [u8; RECORD_LEN]) -> io::Result<()> {
        buf.fill(0xFF);
        let mut file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound && !self.seen => return Ok(()),
            Err(e) => return Err(e),
        };
        self.seen = true;
        file.seek(SeekFrom::Start((sector * RECORD_LEN) as u64))?;
        let mut filled = 0;
        while filled < RECORD_LEN {
            match file.read(&mut buf[filled..])? {
                0 => break, // a short file: the missing bytes read blank
                n => filled += n,
            }
        }
        Ok(())
    }

    fn program(&mut self, sector: usize, _slot: usize, record: &[u8; RECORD_LEN]) -> io::Result<()> {
        let mut file = OpenOptions::new().write(true).create(!self.seen).truncate(false).open(&self.path)?;
        self.seen = true;
        file.seek(SeekFrom::Start((sector * RECORD_LEN) as u64))?;
        file.write_all(record)?;
        file.sync_data()
    }

    fn erase(&mut self, _sector: usize) -> io::Result<()> {
        Ok(()) // overwritable: `program` replaces the slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::state::{DeviceState, LogStore, StateStore};

    #[test]
    fn env_source_reads_the_environment_and_refuses_nothing_it_cannot_read() {
        let env = crate::env::SyntheticRkhs::new(
            crate::env::SyntheticKernel::PAPER_SE,
            crate::env::Noise::PAPER_LDP,
            &mut SimRng::seed_from_u64(1),
        )
        .expect("a paper environment builds");
        let env: &dyn Environment = &env;
        let mut a = EnvSource::new(env, 7);
        let mut world = SimRng::seed_from_u64(7);
        assert_eq!(a.actions() as usize, env.num_arms());
        for arm in [0u32, 3, 17] {
            assert_eq!(a.read(arm).map(f64::to_bits), Some(env.sample(arm as usize, &mut world).to_bits()));
        }
        assert_eq!(a.read(a.actions()), None);
        assert_eq!(a.read(u32::MAX), None);
    }

    #[test]
    fn file_medium_keeps_the_newest_state_across_reopening() {
        let dir = std::env::temp_dir().join(format!("ldp-file-medium-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("state.bin");
        let mut store = LogStore::new(FileMedium::new(&path));
        assert!(store.is_blank().expect("a missing file reads blank"));
        store.provision([9; 32]).expect("provision");
        for boot in 1..=3 {
            let mut s = store.load().expect("load");
            s.boot = boot;
            s.reserved_units = boot * 10;
            store.save(&s).expect("save");
        }
        let mut again = LogStore::new(FileMedium::new(&path));
        let s = again.load().expect("reload");
        assert_eq!((s.boot, s.reserved_units, s.seed), (3, 30, [9; 32]));
        assert_ne!(s, DeviceState::provisioned([9; 32]));
        // Once seen, a vanished file is an error, not a fresh device.
        std::fs::remove_file(&path).expect("remove");
        assert!(again.load().is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
