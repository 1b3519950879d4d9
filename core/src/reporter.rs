//! The production reporter: the one path from a raw reward to a released value on a device.
//!
//! ```text
//! boot: load state ──► boot = stored + 1 ──► key = PRF(seed, boot) ⊕ entropy ──► ChaCha20
//! query (ε, optional public level b, both validated where they enter) ──► build the mechanism
//!        ──► accountant.spend(ε) (floor, limit, total; boot and reservation written first)
//!        ──► reading: NaN → 0, ±∞ → ±MAX ──► clamp/truncate ──► grid ──► + discrete Laplace
//!        ──► Report
//! ```
//!
//! Every refusal happens before any randomness is drawn or any value leaves, and depends only on
//! the query and the device's public budget state — never on the reading.
//!
//! # A fresh noise stream on every boot
//!
//! The noise generator is ChaCha20 keyed with `PRF(seed, boot) ⊕ entropy`, where `PRF` is the
//! ChaCha20 keystream of the secret seed material on stream `boot` (its first 32 bytes), `boot`
//! is the boot counter of [`crate::state`] — written before this boot's first release, so no
//! two boots that release share a number — and `entropy` is 32 bytes from the device's true
//! random source (the STM32 TRNG; under QEMU, fresh OS entropy from the host). Either one alone
//! makes the key fresh: a reset never replays noise.

use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

use crate::budget::Accountant;
use crate::error::{BudgetError, ReportError};
use crate::mechanism::LaplaceMechanism;
use crate::params::{Epsilon, TruncationLevel};
pub use crate::public::{DeviceConfig, Report};
use crate::state::StateStore;
use crate::wire::{Hello, LinkKey, Message, Query};

/// The per-boot key: `PRF(seed, boot) ⊕ entropy` (module docs).
/// `purpose` separates the keys of different reporters over one store: block `purpose` of the
/// keystream (0: [`Reporter`], 1: the local-JDP reporter).
pub(crate) fn boot_key(seed: &[u8; 32], boot: u64, entropy: &[u8; 32], purpose: u8) -> [u8; 32] {
    let mut prf = ChaCha20Rng::from_seed(*seed);
    prf.set_stream(boot);
    prf.set_word_pos(16 * u128::from(purpose));
    let mut key = [0u8; 32];
    prf.fill_bytes(&mut key);
    for (k, e) in key.iter_mut().zip(entropy) {
        *k ^= e;
    }
    key
}

/// What a non-finite reading is released as: NaN as 0 (the centre of every clamping range, and
/// what truncation maps out-of-range values to), ±∞ as the largest finite value of its sign
/// (clamped to ±C, or truncated to 0). Charged like any reading: a faulty sensor is
/// indistinguishable from a reading of that value.
pub fn sanitize(reading: f64) -> f64 {
    if reading.is_nan() { 0.0 } else { reading.clamp(f64::MIN, f64::MAX) }
}

/// A device's reporter: configuration, accountant and its per-boot ChaCha20 generator.
#[derive(Debug)]
pub struct Reporter<S> {
    config: DeviceConfig,
    rng: ChaCha20Rng,
    accountant: Accountant<S>,
}

impl<S: StateStore> Reporter<S> {
    /// Boots the reporter: opens the accountant over `store` (see [`Accountant::open`]) and keys
    /// the generator for this boot from the stored seed, the boot number and `entropy` (module
    /// docs). Give 32 bytes from a true random source; a simulation may pass a constant, and
    /// then its noise is reproducible from the store's seed — and known to whoever knows it.
    ///
    /// ```
    /// use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
    /// let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(10.0).unwrap()).unwrap();
    /// let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
    /// let mut dev = Reporter::open(config, MemoryStore::provisioned([1; 32]), [0; 32]).unwrap();
    /// let report = dev.report(0.25, Epsilon::new(1.0).unwrap(), None).unwrap();
    /// assert_eq!(report.budget_remaining, 9.0);
    /// assert!(dev.report(0.25, Epsilon::new(2.0).unwrap(), None).is_err()); // weaker than the device allows
    /// ```
    pub fn open(config: DeviceConfig, store: S, entropy: [u8; 32]) -> Result<Self, BudgetError<S::Error>> {
        let accountant = Accountant::open(store, config.policy)?;
        let rng = ChaCha20Rng::from_seed(boot_key(accountant.seed(), accountant.boot(), &entropy, 0));
        Ok(Self { config, rng, accountant })
    }

    /// Answers one query: privatise `reward` at the requested `epsilon`, clamping to
    /// `[−(B+R), B+R]` (CTL, Zhou & Tan) or, when the learner sends a public level `b`,
    /// truncating to zero outside `[−b, b]` (Tao et al. Alg. 4). A non-finite reading is
    /// released as [`sanitize`] says.
    ///
    /// ε and the level come validated ([`Epsilon`], [`TruncationLevel`]: checked once, where they
    /// enter). Refusals — an ε or level the mechanism cannot use (ε too small for the sampler, a
    /// range outside [2^-40, 2^40]), ε outside the device's floor and limit, budget exhausted,
    /// storage failure — release nothing. Only the first three leave the budget untouched; a
    /// storage failure counts the spend (fail closed).
    pub fn report(
        &mut self,
        reward: f64,
        epsilon: Epsilon,
        level: Option<TruncationLevel>,
    ) -> Result<Report, ReportError<S::Error>> {
        self.report_with(reward, epsilon, level, true)
    }

    /// [`Reporter::report`] that never writes the store: the budget must have been reserved
    /// ahead ([`Reporter::prepare`]), else [`BudgetError::NotReserved`] with nothing spent. The
    /// device application answers queries this way, so no write happens in a reply.
    pub fn report_reserved(
        &mut self,
        reward: f64,
        epsilon: Epsilon,
        level: Option<TruncationLevel>,
    ) -> Result<Report, ReportError<S::Error>> {
        self.report_with(reward, epsilon, level, false)
    }

    fn report_with(
        &mut self,
        reward: f64,
        epsilon: Epsilon,
        level: Option<TruncationLevel>,
        may_write: bool,
    ) -> Result<Report, ReportError<S::Error>> {
        let mechanism = match level {
            None => LaplaceMechanism::ctl(epsilon, self.config.b, self.config.r)?,
            Some(b) => LaplaceMechanism::truncated(epsilon, b)?,
        };
        if may_write {
            self.accountant.spend(epsilon)?;
        } else {
            self.accountant.spend_reserved(epsilon)?;
        }
        let release = mechanism.release(sanitize(reward), &mut self.rng)?;
        Ok(Report {
            release,
            epsilon: epsilon.get(),
            epsilon_effective: mechanism.epsilon_effective(),
            budget_remaining: self.accountant.remaining(),
        })
    }

    /// Answers a wire query: privatise `reward` (the reading for the query's action) as
    /// [`Reporter::report`] does, at the query's ε and level, and map the outcome to a message
    /// (a report, or the refusal that says why nothing was released).
    ///
    /// Like `report`, this may write the store (a new budget chunk) while answering, so a reply
    /// can take as long as a store write. A device with a fixed reply slot answers
    /// with [`Reporter::report_reserved`] after [`Reporter::prepare`] instead, as
    /// [`DeviceApp`](crate::device::DeviceApp) does.
    pub fn answer(&mut self, query: &Query, reward: f64) -> Message {
        self.report(reward, query.epsilon, query.level).into()
    }

    /// The greeting of this device on the wire: its identity, public configuration, the
    /// budget it will still spend and its session (the boot number; `conversation` 0 — the
    /// device application's reply cache fills in the conversation the hello opens).
    pub fn hello(&self, device_id: u64) -> Hello {
        Hello {
            device_id,
            config: self.config,
            budget_remaining: self.accountant.remaining(),
            session: self.accountant.boot(),
            conversation: 0,
        }
    }

    /// The key that authenticates this device's frames ([`LinkKey::from_seed`] of its seed
    /// material): whoever provisioned the device computes the same for its learner.
    pub fn link_key(&self) -> LinkKey {
        LinkKey::from_seed(self.accountant.seed())
    }

    /// Idle-time work: reserves the next chunk of budget now if the next report would need a
    /// store write ([`Accountant::reserve_ahead`]), so no write happens in a reply.
    pub fn prepare(&mut self) -> Result<(), BudgetError<S::Error>> {
        self.accountant.reserve_ahead()
    }

    /// The accountant (spent and remaining budget, boot number).
    pub fn accountant(&self) -> &Accountant<S> {
        &self.accountant
    }

    /// The configuration.
    pub fn config(&self) -> &DeviceConfig {
        &self.config
    }

    /// Takes the reporter apart, giving the store back (e.g. to simulate a reset).
    pub fn into_store(self) -> S {
        self.accountant.into_store()
    }
}
