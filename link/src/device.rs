//! The learner's view of a device: it sends a query (the arm) and gets back a report; the device
//! holds the private reward. Three kinds:
//! - [`InProcessDevice`]: `ldp-core`'s production [`Reporter`] in front of
//!   a simulated environment (the default). Its seed material and entropy come from the trial
//!   seed, so runs are reproducible — and the noise is known to anyone who knows that seed: a
//!   simulation, with no privacy against the learner;
//! - [`WireDevice`]: a device behind the wire format — the firmware under QEMU, a real board,
//!   or the loopback device application (see [`crate::transport`]);
//! - [`RawDevice`]: no privacy, the raw reward passed through (the non-private experiments).

use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, ParamError, ReportError, Reporter};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

use crate::client::{LinkError, WireClient};
use crate::transport::Link;
use ldp_core::TruncationLevel;
use ldp_core::wire::{Query, Refusal};
use ldp_learn::env::{Environment, SimRng};

/// A device refused or failed a query.
#[derive(Debug)]
#[non_exhaustive]
pub enum DeviceError {
    /// A device on the wire refused the query.
    Refusal(Refusal),
    /// The link to a device on the wire failed.
    Link(LinkError),
    /// A serial port could not be opened or a TCP device reached.
    Connect {
        /// The port or `host:port`.
        target: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// An arm index does not fit the wire's 32-bit action.
    ArmOutOfWire(usize),
    /// The in-process device refused (budget, ε limit, non-finite reward).
    Refused(ReportError<core::convert::Infallible>),
    /// The device could not be configured.
    Config(ParamError),
    /// The environment has no bound R on its noise, so CTL(ε) cannot be configured: use a bounded
    /// noise model for private experiments (Zhou & Tan §4.5 covers sub-Weibull noise).
    UnboundedNoise,
    /// A ticket the device did not give, or whose report was collected already.
    UnknownTicket(u64),
    /// No member of a fleet has budget left for the round (or none answers).
    FleetExhausted {
        /// The round (1-based).
        round: u64,
        /// Members in the fleet.
        devices: usize,
        /// The largest member's lifetime budget (ε).
        user_budget: f64,
    },
    /// A fleet's query could not be written to its record of queries in flight
    /// ([`crate::fleet::record`]), so it was not sent.
    Record {
        /// The record.
        path: std::path::PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

impl std::fmt::Display for DeviceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused(e) => write!(f, "device refused the query: {e}"),
            Self::Refusal(r) => write!(f, "{r}"),
            Self::Link(e) => write!(f, "{e}"),
            Self::Connect { target, source } => write!(f, "cannot connect to {target}: {source}"),
            Self::ArmOutOfWire(arm) => write!(f, "arm {arm} does not fit the wire's 32-bit action"),
            Self::Config(e) => write!(f, "device configuration: {e}"),
            Self::UnknownTicket(t) => {
                write!(
                    f,
                    "no query in flight has ticket {t} (it was never submitted, or its report was collected)"
                )
            }
            Self::FleetExhausted { round, devices, user_budget } => write!(
                f,
                "the fleet's budget is exhausted at round {round}: none of its {devices} devices (each with a lifetime budget of at most {user_budget} eps) has budget left or answers; use more devices (--device fleet:N), a larger --user-budget, or a shorter --horizon"
            ),
            Self::Record { path, source } => write!(
                f,
                "cannot write the query to {} ({source}), so it was not sent: a fleet records each query before it sends it, so that a run killed with queries in flight can say what they spent (free space on its disk, or make it writable, and run again)",
                path.display()
            ),
            Self::UnboundedNoise => f.write_str(
                "the environment's noise is unbounded, so CTL(eps) has no R: use a bounded-noise environment",
            ),
        }
    }
}

impl std::error::Error for DeviceError {}

/// A device the learner can query.
pub trait Device {
    /// Play `arm` and return the released report. `level`, when given, is a public truncation
    /// level for the device to apply before its noise (Tao et al. Alg. 4) instead of CTL's clamp.
    fn query(&mut self, arm: usize, level: Option<f64>) -> Result<f64, DeviceError>;

    /// What each user behind this device spent, for a fleet (`crate::fleet`); `None` otherwise.
    fn ledger(&self) -> Option<Vec<MemberRecord>> {
        None
    }

    /// Sends a query for `arm` and, where this device can have several queries outstanding at
    /// once ([`crate::fleet::InFlightFleet`]), returns without waiting for its report:
    /// [`Device::collect`] gives it. Every other device answers here and now ([`Submitted::Answered`]).
    fn submit(&mut self, arm: usize, level: Option<f64>) -> Result<Submitted, DeviceError> {
        self.query(arm, level).map(Submitted::Answered)
    }

    /// The report of the query `ticket` names ([`Device::submit`]), waiting for it.
    fn collect(&mut self, ticket: u64) -> Result<f64, DeviceError> {
        Err(DeviceError::UnknownTicket(ticket))
    }

    /// Waits for every query still outstanding and drops their reports, so that the ledger
    /// counts what they spent (a run that stops with queries in flight).
    fn drain(&mut self) {}
}

/// A submitted query ([`Device::submit`]): its report, or the ticket to collect it with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Submitted {
    /// The device answered at once.
    Answered(f64),
    /// In flight: [`Device::collect`] with this ticket gives the report.
    Pending(u64),
}

/// What one member of a fleet spent in a job, as the device showed it in its last
/// authenticated frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MemberRecord {
    /// The device's id.
    pub id: u64,
    /// ε the device has charged in all (its lifetime budget minus what it says is left).
    pub spent: f64,
    /// Reports the learner used from it.
    pub reports: u64,
    /// Rounds it was skipped for after not answering.
    pub skipped: u64,
    /// Replies from it the learner dropped (forged, replayed, malformed, impossible).
    pub dropped: crate::client::Dropped,
    /// The learner holds its key but it was not in the job's fleet: it showed no hello, or did
    /// not answer its first one (`spent` is then unknown and 0 here).
    pub left_out: bool,
    /// Queries sent to it by earlier attempts of the job, killed with them in flight, whose
    /// replies never reached the learner ([`crate::fleet::record`]): a label of what `spent`
    /// counts for a device that keeps its budget (over MQTT; an in-process fleet's simulated
    /// devices are made afresh for each attempt). 0 where no attempt was killed, and from the
    /// fleet itself (the run that runs the job again fills it in).
    pub unanswered: u64,
    /// The ε of those queries, summed.
    pub unanswered_eps: f64,
}

/// The public configuration of a device over `env`: its B and R, per-report limit `epsilon`
/// and lifetime budget `total` (both ε).
pub fn device_config(
    env: &dyn Environment,
    epsilon: Epsilon,
    total: f64,
) -> Result<DeviceConfig, DeviceError> {
    let bounds = env.bounds();
    let r = bounds.r.ok_or(DeviceError::UnboundedNoise)?;
    let c = DeviceError::Config;
    Ok(DeviceConfig {
        b: Bound::new(bounds.b).map_err(c)?,
        r: Bound::new(r).map_err(c)?,
        policy: BudgetPolicy::new(epsilon, Epsilon::new(total).map_err(c)?).map_err(c)?,
    })
}

/// The in-process LDP device: raw reward from the environment, released through CTL(ε) by the
/// production reporter. Each round stands for a different user with budget ε; the simulated
/// fleet shares one accountant with total `T·ε` and per-report limit ε.
pub struct InProcessDevice<'a> {
    env: &'a dyn Environment,
    world: SimRng,
    reporter: Reporter<MemoryStore>,
    epsilon: Epsilon,
}

impl<'a> InProcessDevice<'a> {
    /// A device over `env` releasing at `epsilon`, for at most `horizon` reports. `world_seed`
    /// drives the environment's noise, `device_seed` the reporter's ChaCha20.
    pub fn new(
        env: &'a dyn Environment,
        epsilon: Epsilon,
        horizon: usize,
        world_seed: u64,
        device_seed: u64,
    ) -> Result<Self, DeviceError> {
        let config = device_config(env, epsilon, epsilon.get() * horizon.max(1) as f64)?;
        let eps = config.policy.per_report_limit();
        let reporter = simulated_reporter(config, device_seed)
            .map_err(|e| DeviceError::Refused(ReportError::Budget(e)))?;
        Ok(Self { env, world: SimRng::seed_from_u64(world_seed), reporter, epsilon: eps })
    }
}

impl Device for InProcessDevice<'_> {
    fn query(&mut self, arm: usize, level: Option<f64>) -> Result<f64, DeviceError> {
        let level =
            level.map(TruncationLevel::new).transpose().map_err(|e| DeviceError::Refused(e.into()))?;
        let raw = self.env.sample(arm, &mut self.world);
        let report = self.reporter.report(raw, self.epsilon, level).map_err(DeviceError::Refused)?;
        Ok(report.release.value())
    }
}

/// A reporter provisioned in RAM from a public `seed` (seed material and entropy both derived
/// from it): reproducible, for simulation only — whoever knows `seed` knows its noise.
pub fn simulated_reporter(
    config: DeviceConfig,
    seed: u64,
) -> Result<Reporter<MemoryStore>, ldp_core::BudgetError<core::convert::Infallible>> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (mut material, mut entropy) = ([0u8; 32], [0u8; 32]);
    rng.fill_bytes(&mut material);
    rng.fill_bytes(&mut entropy);
    Reporter::open(config, MemoryStore::provisioned(material), entropy)
}

/// No privacy: the raw reward is passed through (the non-private heavy-tailed experiments).
pub struct RawDevice<'a> {
    env: &'a dyn Environment,
    world: SimRng,
}

impl<'a> RawDevice<'a> {
    /// A passthrough device over `env`.
    pub fn new(env: &'a dyn Environment, world_seed: u64) -> Self {
        Self { env, world: SimRng::seed_from_u64(world_seed) }
    }
}

impl Device for RawDevice<'_> {
    fn query(&mut self, arm: usize, _level: Option<f64>) -> Result<f64, DeviceError> {
        Ok(self.env.sample(arm, &mut self.world))
    }
}

/// A device on the wire (QEMU, a real board, or the loopback device application): the learner
/// sends the arm and ε, the device reads its own sensor and answers with a report. For a device
/// whose world the host simulates, see [`FedWireDevice`].
pub struct WireDevice<L> {
    client: WireClient<L>,
    epsilon: Epsilon,
    round: u32,
    /// Reports taken.
    reports: u64,
}

impl<L: Link> WireDevice<L> {
    /// A device behind `client`, queried at `epsilon`.
    pub fn new(client: WireClient<L>, epsilon: Epsilon) -> Self {
        Self { client, epsilon, round: 0, reports: 0 }
    }

    /// The protocol client (link statistics).
    pub fn client(&self) -> &WireClient<L> {
        &self.client
    }

    /// Gives the client back.
    pub fn into_client(self) -> WireClient<L> {
        self.client
    }

    /// The next round's query for `arm`: plain, or fed with `reading` (hardware in the loop),
    /// whose reading is drawn only once the query is known to be sendable.
    fn send(
        &mut self,
        arm: usize,
        level: Option<f64>,
        reading: Option<&mut dyn FnMut() -> f64>,
    ) -> Result<f64, DeviceError> {
        self.round = self.round.wrapping_add(1);
        let action = u32::try_from(arm).map_err(|_| DeviceError::ArmOutOfWire(arm))?;
        let level = level.map(TruncationLevel::new).transpose().map_err(DeviceError::Config)?;
        let query = Query { round: self.round, action, epsilon: self.epsilon, level };
        let outcome = match reading {
            None => self.client.query(query.round, action, query.epsilon, level),
            Some(read) => self.client.fed_query(query, read()),
        };
        match outcome {
            Ok(Ok(report)) => {
                self.reports += 1;
                Ok(report.release.value())
            }
            Ok(Err(refusal)) => Err(DeviceError::Refusal(refusal)),
            Err(e) => Err(DeviceError::Link(e)),
        }
    }
}

impl<L: Link> WireDevice<L> {
    /// The device's one-line ledger: what it has charged in all (its total budget minus the
    /// least it showed left, from authenticated frames only), the reports taken, and the
    /// replies the learner dropped (`run.json`'s `device.dropped_frames`).
    /// `None` before the device answered a hello; kept after a failed request (which forgets
    /// the greeting, not what the device showed).
    fn record(&self) -> Option<Vec<MemberRecord>> {
        let config = self.client.config()?;
        let spent = (config.policy.total().get() - self.client.budget_shown()).max(0.0);
        Some(vec![MemberRecord {
            id: self.client.auth().device_id,
            spent,
            reports: self.reports,
            skipped: 0,
            dropped: self.client.dropped,
            left_out: false,
            ..MemberRecord::default()
        }])
    }
}

impl<L: Link> Device for WireDevice<L> {
    fn query(&mut self, arm: usize, level: Option<f64>) -> Result<f64, DeviceError> {
        self.send(arm, level, None)
    }

    fn ledger(&self) -> Option<Vec<MemberRecord>> {
        self.record()
    }
}

/// A device on the wire in hardware-in-the-loop mode: the host simulates the device's world.
/// For each query it samples the raw reward of the arm from the environment — with the world
/// generator the in-process device uses (`world_seed`) — and sends it with the query
/// ([`FedQuery`](ldp_core::wire::FedQuery)); the device privatises it through its production
/// path and answers with an ordinary report. Only a simulation image (the QEMU firmware)
/// accepts fed readings: a board refuses them ([`Refusal::FeedRefused`]).
///
/// The reading travels to the device in the clear, so this is a test of the device, never a
/// private deployment: whoever simulates the world knows the rewards anyway.
pub struct FedWireDevice<'a, L> {
    device: WireDevice<L>,
    env: &'a dyn Environment,
    world: SimRng,
}

impl<'a, L: Link> FedWireDevice<'a, L> {
    /// `device` fed with the rewards of `env`, its noise drawn from `world_seed`.
    pub fn new(device: WireDevice<L>, env: &'a dyn Environment, world_seed: u64) -> Self {
        Self { device, env, world: SimRng::seed_from_u64(world_seed) }
    }

    /// The protocol client (link statistics).
    pub fn client(&self) -> &WireClient<L> {
        &self.device.client
    }
}

impl<L: Link> Device for FedWireDevice<'_, L> {
    fn query(&mut self, arm: usize, level: Option<f64>) -> Result<f64, DeviceError> {
        let (env, world) = (self.env, &mut self.world);
        self.device.send(arm, level, Some(&mut || env.sample(arm, world)))
    }

    fn ledger(&self) -> Option<Vec<MemberRecord>> {
        self.device.record()
    }
}
