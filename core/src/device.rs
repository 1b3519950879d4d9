//! The device application: everything a reporter does between bytes in and bytes out, with no
//! hardware in it. The firmware feeds it UART bytes; the host's in-process device feeds it the
//! same bytes, so both run exactly this code.
//!
//! ```text
//! byte ─► StreamReader ─► Frame (CRC ok) ─► ReplyCache::respond ─► Query
//!   ─► RewardSource::read(action) (the private reward) ─► Reporter (clamp, budget, noise)
//!   ─► Report / Refusal ─► COBS frame ─► bytes out ... held until the reply slot ends
//! ```
//!
//! # Hardware in the loop
//!
//! A [`FedQuery`](crate::wire::FedQuery) carries the raw reading from a host that simulates the
//! world. A device whose source says [`RewardSource::accepts_fed`] (a simulation:
//! `FedSource`) releases it instead of reading its source, through the same
//! [`Reporter::report_reserved`] call a sensor reading takes; any other device answers
//! [`Refusal::FeedRefused`], reading, drawing and spending nothing. `FedSource` exists only
//! with the `hil` feature (emulated devices); built without it, every device refuses fed
//! readings, whatever its source says.
//!
//! # Timing
//!
//! [`DeviceApp::on_byte`] does all of a query's work when its last byte arrives: reading the
//! [`RewardSource`], soft-float arithmetic and the rejection sampler, whose running times depend on the
//! reading and the noise. The firmware must therefore send the reply it returns at a fixed time
//! after that byte — [`REPLY_SLOT_CYCLES`] core cycles — and never earlier, so that when a
//! reply leaves says nothing but that a reply was due. `firmware-example` starts a one-shot
//! SysTick when a frame ends and sends on its interrupt.

use rand_core::Rng;

use crate::params::Bound;
use crate::reporter::Reporter;
use crate::state::StateStore;
use crate::wire::{Auth, MAX_ENCODED_LEN, Message, Refusal, ReplyCache, StreamReader};

/// The reply slot, in core clock cycles: how long after the last byte of a request the firmware
/// sends its reply (module docs). 400 000 cycles is 25 ms at the STM32F405's reset clock of
/// 16 MHz (2.4 ms at 168 MHz).
///
/// What it must cover, measured under QEMU (`tests/tests/qemu_timing.rs`, 1 instruction = 1 ns
/// of virtual time): a whole report takes a median of 15 400 instructions, and the slowest of
/// 10^4 took 29 300. What varies is the sampler's generator draws, whose count has a geometric
/// tail (`core/tests/sampler_time.rs`: mean 9.6, P(D ≥ 10 + 10k) ≤ 8^-k). Charging every draw
/// beyond the median the whole spread to the slowest reply, (29 300 − 15 400)/(56 − 9) ≈ 300
/// instructions (an upper estimate, not a measurement of one draw), and 2 cycles per
/// instruction, the slot still holds more than 600 draws: it is overrun — the only way the
/// timing could depend on the noise — with probability below 8^-59 ≈ 2^-177 per reply (an
/// extrapolation of the measured tail, not a proof). State writes (and, on flash,
/// erases, which take seconds) are kept out of the reply path: [`DeviceApp::prepare`] reserves
/// budget ahead while the device is idle. Were a write ever needed inside a reply (a firmware
/// that does not call `prepare`), its overrun would expose the rest of the work's timing.
pub const REPLY_SLOT_CYCLES: u32 = 400_000;

/// Where the device's private reward comes from: a sensor, a measurement, a user's response.
///
/// [`DeviceApp`] calls [`RewardSource::read`] once for each fresh query (a retry answered from
/// the reply cache does not read again; a hello, an unparseable frame or a fresh fed query —
/// [`FedQuery`](crate::wire::FedQuery), answered or refused — never reads), with the
/// query's action — before the reporter checks the query's ε and the budget, so a query that
/// is then refused has read too. What happens to the value:
///
/// - `Some(y)`: `y` is the private reading. The [`Reporter`] releases it as
///   [`Reporter::report_reserved`] says: NaN as 0 and ±∞ as ±`f64::MAX`
///   ([`crate::reporter::sanitize`]), then clamped to `[−(B+R), B+R]` (or, when the learner
///   sent a public level `b`, truncated to zero outside `[−b, b]`), rounded to the public grid,
///   noised with discrete Laplace noise, and charged the query's ε. Any `f64` is safe to return:
///   a NaN, infinite or huge reading is charged and released exactly like its substitute, so it
///   tells the learner nothing the mechanism does not. Readings beyond B+R are biased by the clamp
///   (`docs/your-device.md`).
/// - `None`: no reading (a fault: a timed-out conversion, a bus error). It is released as a
///   reading of 0 would be — charged and noised — so a fault, even one that depends on the
///   quantity measured (an over-range flag, a conversion that times out at one end of the
///   range), shows the learner nothing the mechanism does not.
///
/// The action set is public and fixed: [`RewardSource::actions`]. An action outside it is
/// refused as [`Refusal::Malformed`] (nothing released, nothing spent) before its reading is
/// looked at — the source is still read, so that its own draws or side effects do not depend
/// on the answer. A refusal therefore depends on the query and the public budget state alone;
/// a reading can never cause one.
///
/// The read runs inside [`DeviceApp::on_byte`], after the request's last byte, so in a firmware
/// that sends its replies at the end of a fixed slot ([`REPLY_SLOT_CYCLES`], module docs; as
/// `firmware-example` does) how long it takes does not show in when the reply leaves, provided
/// the read and the report together end within the slot. The slot's margin was set for the
/// simulated sensor's negligible read; a slow source (a long conversion, a bus transaction with
/// retries) must bound its time well inside the slot, or an overrun exposes the work's timing.
///
/// ```
/// use ldp_core::device::RewardSource;
///
/// /// Eight readings held in memory (a stand-in for eight sensors).
/// struct Table([f64; 8]);
///
/// impl RewardSource for Table {
///     fn actions(&self) -> u32 {
///         8
///     }
///     fn read(&mut self, action: u32) -> Option<f64> {
///         self.0.get(usize::try_from(action).ok()?).copied()
///     }
/// }
///
/// let mut t = Table([0.5; 8]);
/// assert_eq!(t.read(7), Some(0.5));
/// assert_eq!(t.read(8), None);
/// ```
pub trait RewardSource {
    /// The number of actions: the device's public action set is `0..actions()`, read once when
    /// the [`DeviceApp`] is built (0 refuses every query; action `u32::MAX` is never in the set).
    fn actions(&self) -> u32;
    /// The private reading for `action` ([`Query::action`](crate::wire::Query::action)), or
    /// `None` if there is none (a fault, released as a reading of 0; see the trait docs). It is
    /// called with any action a learner sends, also outside `0..actions()` (whose reading is
    /// then dropped): it must accept any `u32` without panicking.
    fn read(&mut self, action: u32) -> Option<f64>;

    /// Whether the device takes readings fed by the learner with the query instead of reading
    /// this source (hardware-in-the-loop: [`FedQuery`](crate::wire::FedQuery)), read once when
    /// the [`DeviceApp`] is built. `false` unless a source says otherwise, and it must stay
    /// `false` for a real sensor: a device that accepted fed readings would release the
    /// learner's number in place of the sensor's. Only a simulation wraps its source in
    /// `FedSource` (feature `hil`); without that feature this is ignored and every fed query
    /// is refused.
    fn accepts_fed(&self) -> bool {
        false
    }
}

/// A simulation's reward source that also takes fed readings (hardware-in-the-loop): plain
/// queries read `R`; a [`FedQuery`](crate::wire::FedQuery) is released from its own reading
/// through the same reporter path. For emulated devices (the QEMU firmware, tests) only — never
/// around a real sensor. Only with the `hil` feature, which a board's build never enables.
#[cfg(feature = "hil")]
#[derive(Debug)]
pub struct FedSource<R>(pub R);

#[cfg(feature = "hil")]
impl<R: RewardSource> RewardSource for FedSource<R> {
    fn actions(&self) -> u32 {
        self.0.actions()
    }

    fn read(&mut self, action: u32) -> Option<f64> {
        self.0.read(action)
    }

    fn accepts_fed(&self) -> bool {
        true
    }
}

/// The private objective and noise the device alone knows, standing in for a sensor: arm `a` of
/// `n` sits at `x = a/(n−1)` ∈ [0, 1] and reads
///
/// ```text
/// f(x) = 0.6·sin(2π·1.3·x + 0.4) + 0.3·cos(2π·3.1·x)      (|f| ≤ 0.9, so B = 1 bounds it)
/// y    = f(x) + η,   η ~ U[−R, R]
/// ```
///
/// The uniform draw uses 53 random bits from the device's world generator.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SensorModel {
    arms: u32,
    noise_bound: f64,
}

impl SensorModel {
    /// A model with `arms ≥ 2` arms and noise bound `R`; `None` for fewer arms.
    ///
    /// ```
    /// use ldp_core::Bound;
    /// use ldp_core::device::SensorModel;
    /// let m = SensorModel::new(100, Bound::new(1.0)?).unwrap();
    /// assert!(m.mean(0).unwrap().abs() <= 0.9);
    /// assert!(m.mean(100).is_none());
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn new(arms: u32, noise_bound: Bound) -> Option<Self> {
        (arms >= 2).then_some(Self { arms, noise_bound: noise_bound.get() })
    }

    /// Number of arms.
    pub fn arms(&self) -> u32 {
        self.arms
    }

    /// R, the noise bound.
    pub fn noise_bound(&self) -> f64 {
        self.noise_bound
    }

    /// f(arm), or `None` for an arm out of range.
    pub fn mean(&self, arm: u32) -> Option<f64> {
        if arm >= self.arms {
            return None;
        }
        let x = f64::from(arm) / f64::from(self.arms - 1);
        let tau = 2.0 * core::f64::consts::PI;
        Some(0.6 * libm::sin(tau * 1.3 * x + 0.4) + 0.3 * libm::cos(tau * 3.1 * x))
    }

    /// One raw reading f(arm) + η, or `None` for an arm out of range.
    pub fn read<W: Rng + ?Sized>(&self, arm: u32, world: &mut W) -> Option<f64> {
        let u = (world.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64); // [0, 1)
        Some(self.mean(arm)? + self.noise_bound * (2.0 * u - 1.0))
    }
}

/// The simulated sensor: [`SensorModel`] read with noise from a world generator — the
/// [`RewardSource`] of the QEMU firmware and the host's in-process device. `world` stands in for
/// the physical world's noise; it has nothing to do with privacy (the reporter keys its own
/// generator).
#[derive(Debug)]
pub struct SimulatedSensor<W> {
    model: SensorModel,
    world: W,
}

impl<W> SimulatedSensor<W> {
    /// `model` read with noise drawn from `world`.
    pub fn new(model: SensorModel, world: W) -> Self {
        Self { model, world }
    }

    /// The model.
    pub fn model(&self) -> &SensorModel {
        &self.model
    }
}

impl<W: Rng> RewardSource for SimulatedSensor<W> {
    /// The model's arms.
    fn actions(&self) -> u32 {
        self.model.arms()
    }

    /// [`SensorModel::read`]: one draw from the world generator per read, even for an action
    /// out of range (which reads `None`).
    fn read(&mut self, action: u32) -> Option<f64> {
        self.model.read(action, &mut self.world)
    }
}

/// The reporter application: reporter, reward source, stream decoder and reply cache.
#[derive(Debug)]
pub struct DeviceApp<S, R> {
    reporter: Reporter<S>,
    source: R,
    /// The source's action set, fixed at construction.
    actions: u32,
    /// Whether the source takes fed readings, fixed at construction.
    accepts_fed: bool,
    device_id: u64,
    /// The device's key, id and session (its boot number): every frame in and out.
    auth: Auth,
    reader: StreamReader,
    cache: ReplyCache,
    out: [u8; MAX_ENCODED_LEN],
}

impl<S: StateStore, R: RewardSource> DeviceApp<S, R> {
    /// An application around an opened reporter, which reserves its first budget chunk (the
    /// boot write) now, and the source of its private readings.
    ///
    /// Frames are authenticated with the reporter's [`link_key`](Reporter::link_key), the
    /// device id and the boot number as session (`crate::wire::Auth`).
    pub fn new(mut reporter: Reporter<S>, source: R, device_id: u64) -> Self {
        let _ = reporter.prepare(); // a failure shows as refusals until a later prepare works
        let auth =
            Auth { session: reporter.accountant().boot(), ..Auth::new(reporter.link_key(), device_id) };
        Self {
            auth,
            reporter,
            actions: source.actions(),
            // Without `hil` no source can opt in, whatever it says.
            accepts_fed: cfg!(feature = "hil") && source.accepts_fed(),
            source,
            device_id,
            reader: StreamReader::new(),
            cache: ReplyCache::new(),
            out: [0; MAX_ENCODED_LEN],
        }
    }

    /// Feeds one received byte. When it completes an intact frame, returns the framed reply to
    /// send (COBS, 0x00-terminated). Damaged frames get no reply (the learner retries).
    pub fn on_byte(&mut self, byte: u8) -> Option<&[u8]> {
        let Some(Ok(frame)) = self.reader.push(byte) else {
            return None;
        };
        let hello = self.reporter.hello(self.device_id);
        let (reporter, source, actions) = (&mut self.reporter, &mut self.source, self.actions);
        let accepts_fed = self.accepts_fed;
        // Queries are answered from budget reserved ahead: no store write in a reply.
        let reply = self.cache.respond(&frame, &self.auth, hello, |query, fed| {
            if let Some(reading) = fed {
                // Public: the refusal depends on the frame sent and this build alone, and
                // nothing is read or spent. A fed reading takes the sensor reading's path
                // (sanitise, clamp/truncate, grid, noise, charge); its action is informative.
                if !accepts_fed {
                    return Message::Refusal(Refusal::FeedRefused);
                }
                return reporter.report_reserved(reading, query.epsilon, query.level).into();
            }
            // Read first, whatever the answer, so the source's own draws do not depend on it.
            let reading = source.read(query.action);
            if query.action >= actions {
                return Message::Refusal(Refusal::Malformed); // public: the action set is fixed
            }
            // No reading (a fault) is released as a reading of 0: never a refusal of its own.
            reporter.report_reserved(reading.unwrap_or(0.0), query.epsilon, query.level).into()
        });
        // Every reply fits MAX_ENCODED_LEN by construction; an encoding failure sends nothing.
        reply.emit_framed(&mut self.out).ok().map(|bytes| &*bytes)
    }

    /// Idle-time work, to call after boot and after each reply is sent: writes the next budget
    /// reservation ahead ([`Reporter::prepare`]) so the reply path never writes the store. A
    /// failure is not an error here: the next query writes again and refuses if it must.
    pub fn prepare(&mut self) {
        let _ = self.reporter.prepare();
    }

    /// What a learner of this device authenticates with: its key and id (session 0: the
    /// learner learns the session from the hello). For in-process devices and tests, whose
    /// learner runs beside them; a device never sends its key anywhere.
    pub fn learner_auth(&self) -> Auth {
        Auth::new(self.auth.key, self.auth.device_id)
    }

    /// The reporter (budget state).
    pub fn reporter(&self) -> &Reporter<S> {
        &self.reporter
    }

    /// The reward source.
    pub fn source(&self) -> &R {
        &self.source
    }
}
