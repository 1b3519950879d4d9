//! Typed messages: what a frame means, with `parse` / `emit` / `buffer_len`.

use core::fmt;

use super::auth::{Auth, NONCE_LEN, TAG_LEN};
use super::frame::{CHECKSUM_LEN, HEADER_LEN, checksum};
use super::{DecodeError, EncodeError, Frame, VERSION};
use crate::budget::BudgetPolicy;
use crate::error::{BudgetError, ParamError, ReleaseError, ReportError};
use crate::mechanism::{MAX_RELEASE_INDEX, Release};
use crate::params::{Bound, Epsilon, TruncationLevel};
use crate::public::{DeviceConfig, Report};

/// The message-type byte. The high bit says the direction: clear learner → device, set
/// device → learner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum MessageType {
    /// Learner → device: "who are you?", with the learner's nonce. Answered with
    /// [`MessageType::Hello`].
    HelloRequest = 0x01,
    /// Learner → device: play an action and report its reward privately ([`Query`]).
    Query = 0x02,
    /// Learner → device, hardware-in-the-loop: a query with the raw reading the host's simulated
    /// world gives for it ([`FedQuery`]). Only a simulation image accepts it.
    FedQuery = 0x03,
    /// Device → learner: protocol version, identity, public configuration ([`Hello`]).
    Hello = 0x81,
    /// Device → learner: a privatised reward ([`Report`]).
    Report = 0x82,
    /// Device → learner: nothing was released, and why ([`Refusal`]).
    Refusal = 0x83,
}

impl MessageType {
    /// Every message type of this version.
    pub const ALL: [Self; 6] =
        [Self::HelloRequest, Self::Query, Self::FedQuery, Self::Hello, Self::Report, Self::Refusal];

    /// The type with this byte, if any.
    pub const fn from_byte(byte: u8) -> Option<Self> {
        Some(match byte {
            0x01 => Self::HelloRequest,
            0x02 => Self::Query,
            0x03 => Self::FedQuery,
            0x81 => Self::Hello,
            0x82 => Self::Report,
            0x83 => Self::Refusal,
            _ => return None,
        })
    }

    /// The payload length of this type: every message has a fixed size.
    pub const fn payload_len(self) -> usize {
        match self {
            Self::HelloRequest => NONCE_LEN,
            Self::Query => Query::PAYLOAD_LEN,
            Self::FedQuery => FedQuery::PAYLOAD_LEN,
            Self::Hello => Hello::PAYLOAD_LEN,
            Self::Report => REPORT_PAYLOAD_LEN,
            Self::Refusal => Refusal::PAYLOAD_LEN,
        }
    }

    /// The frame length of this type: header, payload, tag and checksum.
    pub const fn frame_len(self) -> usize {
        HEADER_LEN + self.payload_len() + TAG_LEN + CHECKSUM_LEN
    }

    /// What a frame of this type is authenticated under (`auth` holds the device's key and id,
    /// its session, the learner's nonce, the device's conversation number and, for a reply, the
    /// answered request's tag), and in which session:
    ///
    /// - hello request: session 0, no nonce, conversation 0, no request (its payload is the
    ///   nonce);
    /// - hello: session 0 and conversation 0 (it carries both in its payload), the nonce, the
    ///   request;
    /// - query, fed query: the session, the nonce and the conversation;
    /// - report, refusal: the session, the nonce, the conversation and the request.
    fn context(self, auth: &Auth) -> (u64, Auth) {
        let none = Auth::new(auth.key, auth.device_id);
        match self {
            Self::HelloRequest => (0, none),
            Self::Hello => (0, Auth { conversation: 0, ..*auth }),
            Self::Query | Self::FedQuery => (auth.session, Auth { answers: [0; TAG_LEN], ..*auth }),
            Self::Report | Self::Refusal => (auth.session, *auth),
        }
    }

    /// Whether the learner sends this type (to the device).
    pub const fn is_request(self) -> bool {
        (self as u8) & 0x80 == 0
    }
}

/// Learner → device: play `action` and report its reward at `epsilon`.
///
/// | offset | size | field | encoding |
/// |---|---|---|---|
/// | 0 | 4 | `round` | `u32` LE |
/// | 4 | 4 | `action` | `u32` LE |
/// | 8 | 8 | `epsilon` | `f64` IEEE-754 bits, LE; finite and > 0 |
/// | 16 | 8 | `level` | `f64` bits, LE; all zero = `None`, else finite and > 0 |
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Query {
    /// The learner's round t. Informative (logs); the device does not interpret it.
    pub round: u32,
    /// The action to play: an index into the device's finite action set (an arm, or a point of
    /// the learner's discretised domain, agreed out of band).
    pub action: u32,
    /// The ε to release at; the device refuses one weaker than its per-report limit.
    pub epsilon: Epsilon,
    /// The public truncation level b of Tao et al. Alg. 4 (truncate to zero outside `[−b, b]`),
    /// or `None` for CTL's clamp to `[−(B+R), B+R]` (Zhou & Tan).
    pub level: Option<TruncationLevel>,
}

impl Query {
    /// Payload length.
    pub const PAYLOAD_LEN: usize = 24;

    fn emit_payload(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.round)?;
        w.u32(self.action)?;
        w.f64(self.epsilon.get())?;
        w.f64(self.level.map_or(0.0, TruncationLevel::get))
    }

    fn parse_payload(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let round = r.u32()?;
        let action = r.u32()?;
        let epsilon = Epsilon::new(r.f64()?).map_err(DecodeError::Param)?;
        let level = match r.u64()? {
            0 => None,
            bits => Some(TruncationLevel::new(f64::from_bits(bits)).map_err(DecodeError::Param)?),
        };
        Ok(Self { round, action, epsilon, level })
    }
}

/// Learner → device, hardware-in-the-loop (HIL): a [`Query`] together with the raw reading
/// the host's simulated world gives for it, which the device privatises through exactly its
/// production path (sanitise, clamp or truncate, grid, noise, budget) instead of reading its
/// own sensor.
///
/// | offset | size | field | encoding |
/// |---|---|---|---|
/// | 0 | 24 | `query` | as a [`Query`] payload |
/// | 24 | 8 | `reading` | `f64` bits, LE: any finite value, ±∞, or the one NaN of `f64::NAN` (`0x7FF8_0000_0000_0000`) |
///
/// Only a device whose reward source is built for it
/// ([`RewardSource::accepts_fed`](crate::device::RewardSource::accepts_fed)) answers it with a
/// report; every other device answers [`Refusal::FeedRefused`], spending nothing. Equality
/// compares the reading's bits, so the one NaN equals itself.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FedQuery {
    /// The query.
    pub query: Query,
    /// The raw reading for the query's action, as the host's simulated world gave it. NaN and
    /// ±∞ are released as a sensor's would be ([`crate::reporter::sanitize`]).
    pub reading: f64,
}

impl PartialEq for FedQuery {
    fn eq(&self, other: &Self) -> bool {
        self.query == other.query && self.reading.to_bits() == other.reading.to_bits()
    }
}

impl FedQuery {
    /// Payload length.
    pub const PAYLOAD_LEN: usize = Query::PAYLOAD_LEN + 8;

    /// `query` fed with `reading`, any NaN made the one NaN the wire carries.
    pub fn new(query: Query, reading: f64) -> Self {
        Self { query, reading: if reading.is_nan() { f64::NAN } else { reading } }
    }

    /// Canonical: one NaN, so that every accepted frame re-emits to the same bytes.
    fn check(&self) -> Result<(), DecodeError> {
        let ok = !self.reading.is_nan() || self.reading.to_bits() == f64::NAN.to_bits();
        if ok { Ok(()) } else { Err(DecodeError::InvalidField) }
    }

    fn emit_payload(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.check().map_err(|_| EncodeError::InvalidField)?;
        self.query.emit_payload(w)?;
        w.f64(self.reading)
    }

    fn parse_payload(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let fed = Self { query: Query::parse_payload(r)?, reading: r.f64()? };
        fed.check()?;
        Ok(fed)
    }
}

/// Device → learner: who the device is and what it allows. The protocol version is the
/// frame's version byte.
///
/// | offset | size | field | encoding |
/// |---|---|---|---|
/// | 0 | 8 | `device_id` | `u64` LE |
/// | 8 | 8 | `config.b` | `f64` bits; finite, ≥ 0 |
/// | 16 | 8 | `config.r` | `f64` bits; finite, ≥ 0 |
/// | 24 | 8 | per-report ε limit | `f64` bits; finite, > 0, ≤ total |
/// | 32 | 8 | total ε | `f64` bits; finite, > 0 |
/// | 40 | 8 | `budget_remaining` | `f64` bits; finite, ≥ 0 |
/// | 48 | 8 | `session` | `u64` LE: the device's boot number, which every later frame's tag binds |
/// | 56 | 4 | `conversation` | `u32` LE: the device's number for the conversation the hello request offered (≥ 1; a retry: the open one's), which every later frame's tag binds |
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Hello {
    /// The device's identity (e.g. a hash of the MCU's unique ID).
    pub device_id: u64,
    /// Bounds B and R and the budget policy.
    pub config: DeviceConfig,
    /// The ε the device will still spend over its lifetime.
    pub budget_remaining: f64,
    /// The device's session: its boot number, never repeated. Queries and replies are
    /// authenticated in it, so none from an earlier boot is accepted.
    pub session: u64,
    /// The device's number for the conversation the hello request offered (for a retry of the
    /// open conversation's or the offer's hello request, that one's): the device counts the
    /// offers of a boot, so no two conversations of one boot share it. Queries and replies are
    /// authenticated under it (with the learner's nonce), so none of another conversation is
    /// accepted; the learner's first query under it opens the conversation, and a recorded hello
    /// request, whose offer its replayer cannot take, opens none.
    pub conversation: u32,
}

impl Hello {
    /// Payload length.
    pub const PAYLOAD_LEN: usize = 60;

    fn check(&self) -> Result<(), DecodeError> {
        if non_negative(self.budget_remaining) { Ok(()) } else { Err(DecodeError::InvalidField) }
    }

    fn emit_payload(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.check().map_err(|_| EncodeError::InvalidField)?;
        let c = &self.config;
        w.u64(self.device_id)?;
        w.f64(c.b.get())?;
        w.f64(c.r.get())?;
        w.f64(c.policy.per_report_limit().get())?;
        w.f64(c.policy.total().get())?;
        w.f64(self.budget_remaining)?;
        w.u64(self.session)?;
        w.u32(self.conversation)
    }

    fn parse_payload(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let p = DecodeError::Param;
        let device_id = r.u64()?;
        let b = Bound::new(r.f64()?).map_err(p)?;
        let rr = Bound::new(r.f64()?).map_err(p)?;
        let limit = Epsilon::new(r.f64()?).map_err(p)?;
        let total = Epsilon::new(r.f64()?).map_err(p)?;
        let policy = BudgetPolicy::new(limit, total).map_err(p)?;
        let hello = Self {
            device_id,
            config: DeviceConfig { b, r: rr, policy },
            budget_remaining: r.f64()?,
            session: r.u64()?,
            conversation: r.u32()?,
        };
        hello.check()?;
        Ok(hello)
    }
}

/// Payload length of a [`Report`].
const REPORT_PAYLOAD_LEN: usize = 34;

// Report (device → learner): `ldp_core::Report` itself, so device and learner share one type.
//
// | 0 | 8 | release.index | i64 LE; |index| ≤ 2^52
// | 8 | 2 | release.grid_log2 | i16 LE; index·2^k finite
// | 10 | 8 | epsilon | f64 bits; finite, > 0
// | 18 | 8 | epsilon_effective | f64 bits; finite, > 0, ≤ epsilon
// | 26 | 8 | budget_remaining | f64 bits; finite, ≥ 0
fn check_report(report: &Report) -> Result<i16, DecodeError> {
    let grid = i16::try_from(report.release.grid_log2).map_err(|_| DecodeError::InvalidField)?;
    // Every i16 exponent fits the type, but one above 1023 − 52 can make `index·2^k` infinite.
    if !report.release.value().is_finite() {
        return Err(DecodeError::NonFinite);
    }
    let ok = report.release.index.unsigned_abs() <= MAX_RELEASE_INDEX.unsigned_abs()
        && positive(report.epsilon)
        && positive(report.epsilon_effective)
        && report.epsilon_effective <= report.epsilon
        && non_negative(report.budget_remaining);
    if ok { Ok(grid) } else { Err(DecodeError::InvalidField) }
}

fn emit_report(report: &Report, w: &mut Writer<'_>) -> Result<(), EncodeError> {
    let grid = check_report(report).map_err(|_| EncodeError::InvalidField)?;
    w.put(report.release.index.to_le_bytes())?;
    w.put(grid.to_le_bytes())?;
    w.f64(report.epsilon)?;
    w.f64(report.epsilon_effective)?;
    w.f64(report.budget_remaining)
}

fn parse_report(r: &mut Reader<'_>) -> Result<Report, DecodeError> {
    let index = i64::from_le_bytes(r.take()?);
    let grid_log2 = i16::from_le_bytes(r.take()?).into();
    let report = Report {
        release: Release { index, grid_log2 },
        epsilon: r.f64()?,
        epsilon_effective: r.f64()?,
        budget_remaining: r.f64()?,
    };
    check_report(&report)?;
    Ok(report)
}

/// Device → learner: why nothing was released. One variant per outcome of
/// [`Reporter::report`](crate::reporter::Reporter::report) that is not a report, plus the
/// protocol's own refusals.
///
/// | offset | size | field | encoding |
/// |---|---|---|---|
/// | 0 | 1 | reason | code below |
/// | 1 | 1 | detail | [`ParamError`] code for reason 1, else 0 |
/// | 2 | 8 | a | `f64` bits: `requested` for reasons 3 and 4, else 0 |
/// | 10 | 8 | b | `f64` bits: `limit` (3), `remaining` (4), else 0 |
///
/// Reasons: 1 `Param`, 2 `NonFiniteReward`, 3 `AboveDeviceLimit`, 4 `BudgetExhausted`,
/// 5 `CorruptState`, 6 `StorageFailed`, 7 `UnsupportedVersion`, 8 `Malformed`, 9 `Unexpected`,
/// 10 `BelowDeviceFloor` (a = `requested`, b = `floor`), 11 `FeedRefused`, 12 `Unauthenticated`,
/// 13 `StaleSequence`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Refusal {
    /// A query parameter was invalid: ε or the level not finite or not positive, or ε too small
    /// for the sampler's range (below what the device can release at). No budget was spent.
    Param(ParamError),
    /// Not sent by this version's devices: a NaN or infinite reading is charged and released as
    /// a fixed value instead (a refusal would tell the learner something about the reading).
    /// Kept so that the code stays reserved.
    NonFiniteReward,
    /// The requested ε is weaker (larger) than the device's per-report limit. No budget spent.
    AboveDeviceLimit {
        /// What the learner asked for.
        requested: f64,
        /// The weakest ε this device releases at.
        limit: f64,
    },
    /// The requested ε is stronger (smaller) than the device's per-report floor. No budget spent.
    BelowDeviceFloor {
        /// What the learner asked for.
        requested: f64,
        /// The strongest ε this device releases at.
        floor: f64,
    },
    /// The lifetime budget would be exceeded. No budget was spent.
    BudgetExhausted {
        /// What the learner asked for.
        requested: f64,
        /// What is left.
        remaining: f64,
    },
    /// The device's stored budget state is invalid: it will not report.
    CorruptState,
    /// The device's budget store failed. The spend was counted anyway (fail closed).
    StorageFailed,
    /// The query's protocol version is not the device's; the refusal carries the device's.
    UnsupportedVersion,
    /// The query was intact (checksum matched) but could not be parsed.
    Malformed,
    /// The device received a message only a device sends.
    Unexpected,
    /// The device received a [`FedQuery`] but reads its own sensor: only a simulation image
    /// (hardware-in-the-loop) takes readings from the learner. Nothing was read, released or
    /// spent; the refusal depends on the frame the learner sent alone (a fed query with an
    /// invalid ε gets [`Refusal::Param`], one with a non-canonical NaN [`Refusal::Malformed`]),
    /// never on a private reading or the budget.
    FeedRefused,
    /// The request's tag did not verify under the device's key, id and current session, and
    /// the open conversation (or the offer): it was forged, sent with another key, replayed from
    /// an earlier session (boot) or conversation, or sent under an offer that a later hello
    /// request replaced. Nothing was read or spent. A learner never takes this as the answer to
    /// its own (authenticated) query; it greets the device again.
    Unauthenticated,
    /// The query is authenticated but its conversation is frozen (a hello request offered
    /// another since), or its sequence number is not after the last one the device answered
    /// afresh in the conversation (or the hello request that offered it), and it is not a retry
    /// of a remembered one. Nothing was read or spent; a learner says hello again and numbers
    /// its queries after that hello request.
    StaleSequence,
}

impl Refusal {
    /// Payload length.
    pub const PAYLOAD_LEN: usize = 18;

    fn fields(&self) -> (u8, u8, f64, f64) {
        match *self {
            Self::Param(e) => (1, param_code(e), 0.0, 0.0),
            Self::NonFiniteReward => (2, 0, 0.0, 0.0),
            Self::AboveDeviceLimit { requested, limit } => (3, 0, requested, limit),
            Self::BudgetExhausted { requested, remaining } => (4, 0, requested, remaining),
            Self::CorruptState => (5, 0, 0.0, 0.0),
            Self::StorageFailed => (6, 0, 0.0, 0.0),
            Self::UnsupportedVersion => (7, 0, 0.0, 0.0),
            Self::Malformed => (8, 0, 0.0, 0.0),
            Self::Unexpected => (9, 0, 0.0, 0.0),
            Self::BelowDeviceFloor { requested, floor } => (10, 0, requested, floor),
            Self::FeedRefused => (11, 0, 0.0, 0.0),
            Self::Unauthenticated => (12, 0, 0.0, 0.0),
            Self::StaleSequence => (13, 0, 0.0, 0.0),
        }
    }

    fn check(&self) -> Result<(), DecodeError> {
        let ok = match *self {
            Self::AboveDeviceLimit { requested, limit } => positive(requested) && positive(limit),
            Self::BelowDeviceFloor { requested, floor } => positive(requested) && positive(floor),
            Self::BudgetExhausted { requested, remaining } => positive(requested) && non_negative(remaining),
            _ => true,
        };
        if ok { Ok(()) } else { Err(DecodeError::InvalidField) }
    }

    fn emit_payload(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.check().map_err(|_| EncodeError::InvalidField)?;
        let (reason, detail, a, b) = self.fields();
        w.put([reason, detail])?;
        w.f64(a)?;
        w.f64(b)
    }

    fn parse_payload(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let [reason, detail] = r.take()?;
        let (a, b) = (r.f64()?, r.f64()?);
        let refusal = match reason {
            1 => Self::Param(param_from_code(detail).ok_or(DecodeError::InvalidField)?),
            2 => Self::NonFiniteReward,
            3 => Self::AboveDeviceLimit { requested: a, limit: b },
            4 => Self::BudgetExhausted { requested: a, remaining: b },
            5 => Self::CorruptState,
            6 => Self::StorageFailed,
            7 => Self::UnsupportedVersion,
            8 => Self::Malformed,
            9 => Self::Unexpected,
            10 => Self::BelowDeviceFloor { requested: a, floor: b },
            11 => Self::FeedRefused,
            12 => Self::Unauthenticated,
            13 => Self::StaleSequence,
            _ => return Err(DecodeError::InvalidField),
        };
        refusal.check()?;
        // Canonical form: unused bytes are zero, so every accepted frame re-emits identically.
        let (_, d, ea, eb) = refusal.fields();
        if d != detail || ea.to_bits() != a.to_bits() || eb.to_bits() != b.to_bits() {
            return Err(DecodeError::InvalidField);
        }
        Ok(refusal)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Param(e) => write!(f, "device refused: bad query: {e}"),
            Self::NonFiniteReward => f.write_str("device refused: the sensor reading is NaN or infinite"),
            Self::AboveDeviceLimit { requested, limit } => {
                write!(f, "device refused: epsilon {requested} is weaker than its limit {limit}")
            }
            Self::BelowDeviceFloor { requested, floor } => {
                write!(f, "device refused: epsilon {requested} is stronger than its floor {floor}")
            }
            Self::BudgetExhausted { requested, remaining } => {
                write!(f, "device refused: budget exhausted ({requested} requested, {remaining} left)")
            }
            Self::CorruptState => f.write_str("device refused: its stored budget state is invalid"),
            Self::StorageFailed => f.write_str("device refused: its budget store failed"),
            Self::UnsupportedVersion => f.write_str("device refused: unsupported protocol version"),
            Self::Malformed => f.write_str("device refused: the query could not be parsed"),
            Self::Unexpected => f.write_str("device refused: it only answers hello requests and queries"),
            Self::FeedRefused => f.write_str(
                "device refused a fed reading: it reads its own sensor; hardware-in-the-loop runs need a simulation image (the QEMU firmware)",
            ),
            Self::Unauthenticated => f.write_str(
                "device refused: the query's tag does not verify (another key, or a query from another session): check the device's key file",
            ),
            Self::StaleSequence => {
                f.write_str("device refused: the query's sequence number was already used (a replay)")
            }
        }
    }
}

impl core::error::Error for Refusal {}

/// The wire codes of [`ParamError`] (a [`Refusal::Param`] detail byte). A new `ParamError`
/// variant does not compile until it is given a code here; codes are never reused. A device
/// sends only 1–17 (what a query or the device's own configuration can get wrong); 18–39 are
/// the rest of the parameter layer, so every `ParamError` has a code.
const fn param_code(e: ParamError) -> u8 {
    match e {
        ParamError::EpsilonNotFinite => 1,
        ParamError::EpsilonNotPositive => 2,
        ParamError::EpsilonTooSmall => 3,
        ParamError::DeltaOutOfRange => 4,
        ParamError::BoundNotFinite => 5,
        ParamError::BoundNegative => 6,
        ParamError::SensitivityZero => 7,
        ParamError::SensitivityOutOfRange => 8,
        ParamError::TruncationNotFinite => 9,
        ParamError::TruncationNotPositive => 10,
        ParamError::GridOutOfRange => 11,
        ParamError::TailConstantInvalid => 12,
        ParamError::TailExponentInvalid => 13,
        ParamError::HorizonZero => 14,
        ParamError::PerReportAboveTotal => 15,
        ParamError::FloorAboveLimit => 16,
        ParamError::ChunkBelowLimit => 17,
        ParamError::ErrorBoundDeltaOutOfRange => 18,
        ParamError::RhoInvalid => 19,
        ParamError::BoundNotPositive => 20,
        ParamError::BoundOutOfRange => 21,
        ParamError::NoiseOutOfRange => 22,
        ParamError::HorizonAboveCapacity => 23,
        ParamError::DimensionInvalid => 24,
        ParamError::BufferLength => 25,
        ParamError::LambdaInvalid => 26,
        ParamError::ZetaInvalid => 27,
        ParamError::ConstantInvalid => 28,
        ParamError::ConfidenceOutOfRange => 29,
        ParamError::MomentOrderInvalid => 30,
        ParamError::MomentBoundInvalid => 31,
        ParamError::LearningRateInvalid => 32,
        ParamError::ExplorationInvalid => 33,
        ParamError::TooFewArms => 34,
        ParamError::LengthscaleInvalid => 35,
        ParamError::QuadratureFailed => 36,
        ParamError::BlockIndexOutOfRange => 37,
        ParamError::BlockIndexRepeated => 38,
        ParamError::ArmsAboveCapacity => 39,
    }
}

const fn param_from_code(code: u8) -> Option<ParamError> {
    Some(match code {
        1 => ParamError::EpsilonNotFinite,
        2 => ParamError::EpsilonNotPositive,
        3 => ParamError::EpsilonTooSmall,
        4 => ParamError::DeltaOutOfRange,
        5 => ParamError::BoundNotFinite,
        6 => ParamError::BoundNegative,
        7 => ParamError::SensitivityZero,
        8 => ParamError::SensitivityOutOfRange,
        9 => ParamError::TruncationNotFinite,
        10 => ParamError::TruncationNotPositive,
        11 => ParamError::GridOutOfRange,
        12 => ParamError::TailConstantInvalid,
        13 => ParamError::TailExponentInvalid,
        14 => ParamError::HorizonZero,
        15 => ParamError::PerReportAboveTotal,
        16 => ParamError::FloorAboveLimit,
        17 => ParamError::ChunkBelowLimit,
        18 => ParamError::ErrorBoundDeltaOutOfRange,
        19 => ParamError::RhoInvalid,
        20 => ParamError::BoundNotPositive,
        21 => ParamError::BoundOutOfRange,
        22 => ParamError::NoiseOutOfRange,
        23 => ParamError::HorizonAboveCapacity,
        24 => ParamError::DimensionInvalid,
        25 => ParamError::BufferLength,
        26 => ParamError::LambdaInvalid,
        27 => ParamError::ZetaInvalid,
        28 => ParamError::ConstantInvalid,
        29 => ParamError::ConfidenceOutOfRange,
        30 => ParamError::MomentOrderInvalid,
        31 => ParamError::MomentBoundInvalid,
        32 => ParamError::LearningRateInvalid,
        33 => ParamError::ExplorationInvalid,
        34 => ParamError::TooFewArms,
        35 => ParamError::LengthscaleInvalid,
        36 => ParamError::QuadratureFailed,
        37 => ParamError::BlockIndexOutOfRange,
        38 => ParamError::BlockIndexRepeated,
        39 => ParamError::ArmsAboveCapacity,
        _ => return None,
    })
}

/// The device's budget store failed. The wire does not carry the store's own error, so a
/// learner's [`ReportError`] rebuilt from a [`Refusal`] has this as its storage error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DeviceStorageError;

impl fmt::Display for DeviceStorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the device's persistent budget store failed")
    }
}

impl core::error::Error for DeviceStorageError {}

impl<E> From<ReportError<E>> for Refusal {
    /// The device's mapping from a refused report to the wire (the store's error is dropped).
    fn from(e: ReportError<E>) -> Self {
        match e {
            ReportError::Param(p) => Self::Param(p),
            ReportError::Release(ReleaseError::NonFiniteReward) => Self::NonFiniteReward,
            ReportError::Budget(BudgetError::AboveDeviceLimit { requested, limit }) => {
                Self::AboveDeviceLimit { requested, limit }
            }
            ReportError::Budget(BudgetError::Exhausted { requested, remaining }) => {
                Self::BudgetExhausted { requested, remaining }
            }
            ReportError::Budget(BudgetError::BelowDeviceFloor { requested, floor }) => {
                Self::BelowDeviceFloor { requested, floor }
            }
            ReportError::Budget(
                BudgetError::CorruptState | BudgetError::BlankedState | BudgetError::NotProvisioned,
            ) => Self::CorruptState,
            ReportError::Budget(BudgetError::Storage(_) | BudgetError::NotReserved) => Self::StorageFailed,
        }
    }
}

impl TryFrom<Refusal> for ReportError<DeviceStorageError> {
    /// The protocol's own refusals ([`Refusal::UnsupportedVersion`], [`Refusal::Malformed`],
    /// [`Refusal::Unexpected`], [`Refusal::FeedRefused`]) are not report errors; they are handed
    /// back.
    type Error = Refusal;

    /// The learner's mapping back to the device's error.
    fn try_from(r: Refusal) -> Result<Self, Refusal> {
        Ok(match r {
            Refusal::Param(p) => Self::Param(p),
            Refusal::NonFiniteReward => Self::Release(ReleaseError::NonFiniteReward),
            Refusal::AboveDeviceLimit { requested, limit } => {
                Self::Budget(BudgetError::AboveDeviceLimit { requested, limit })
            }
            Refusal::BudgetExhausted { requested, remaining } => {
                Self::Budget(BudgetError::Exhausted { requested, remaining })
            }
            Refusal::BelowDeviceFloor { requested, floor } => {
                Self::Budget(BudgetError::BelowDeviceFloor { requested, floor })
            }
            Refusal::CorruptState => Self::Budget(BudgetError::CorruptState),
            Refusal::StorageFailed => Self::Budget(BudgetError::Storage(DeviceStorageError)),
            Refusal::UnsupportedVersion
            | Refusal::Malformed
            | Refusal::Unexpected
            | Refusal::FeedRefused
            | Refusal::Unauthenticated
            | Refusal::StaleSequence => {
                return Err(r);
            }
        })
    }
}

impl From<DecodeError> for Refusal {
    /// What a device answers to an intact frame it cannot parse. (A frame that fails its length
    /// or checksum check is not answered: its sequence number cannot be trusted.)
    fn from(e: DecodeError) -> Self {
        match e {
            DecodeError::UnsupportedVersion => Self::UnsupportedVersion,
            DecodeError::Unauthenticated => Self::Unauthenticated,
            DecodeError::Param(p) => Self::Param(p),
            _ => Self::Malformed,
        }
    }
}

/// The body of a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Message {
    /// Learner → device: "who are you?", with the learner's nonce: a fresh random number, which
    /// the hello's tag and every later frame's tag of the conversation cover.
    HelloRequest([u8; NONCE_LEN]),
    /// Learner → device: report a reward.
    Query(Query),
    /// Learner → device, hardware-in-the-loop: privatise this fed reading.
    FedQuery(FedQuery),
    /// Device → learner: the answer to a hello request.
    Hello(Hello),
    /// Device → learner: a privatised reward.
    Report(Report),
    /// Device → learner: a refused query.
    Refusal(Refusal),
}

impl Message {
    /// The type byte of this message.
    pub const fn message_type(&self) -> MessageType {
        match self {
            Self::HelloRequest(_) => MessageType::HelloRequest,
            Self::Query(_) => MessageType::Query,
            Self::FedQuery(_) => MessageType::FedQuery,
            Self::Hello(_) => MessageType::Hello,
            Self::Report(_) => MessageType::Report,
            Self::Refusal(_) => MessageType::Refusal,
        }
    }
}

impl<E> From<Result<Report, ReportError<E>>> for Message {
    /// The device's answer to a query: the outcome of
    /// [`Reporter::report`](crate::reporter::Reporter::report).
    fn from(outcome: Result<Report, ReportError<E>>) -> Self {
        match outcome {
            Ok(report) => Self::Report(report),
            Err(e) => Self::Refusal(e.into()),
        }
    }
}

/// A typed frame: sequence number and message. The version is always [`VERSION`].
///
/// ```
/// use ldp_core::wire::{Auth, DecodeError, LinkKey, MAX_FRAME_LEN, Message, Repr};
/// let auth = Auth::new(LinkKey::new([7; 32]), 0xD1CE);
/// let hello = Repr::new(7, Message::HelloRequest([0xA5; 16])); // the learner's nonce
/// let mut buf = [0u8; MAX_FRAME_LEN];
/// let bytes = hello.emit(&mut buf, &auth)?;
/// assert_eq!(bytes[..6], [0x05, 0x01, 0x07, 0x00, 0x00, 0x00]); // version 5, type, seq
/// assert_eq!(bytes.len(), 6 + 16 + 16 + 4); // header, nonce, tag, CRC-32C
/// assert_eq!(Repr::from_bytes(bytes, &auth), Ok(hello));
/// let other = Auth::new(LinkKey::new([8; 32]), 0xD1CE);
/// assert_eq!(Repr::from_bytes(bytes, &other), Err(DecodeError::Unauthenticated));
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Repr {
    /// The sequence number. A learner gives each new query a new number and retries with the
    /// same number and the same query; a device answers with the number it was asked with.
    pub seq: u32,
    /// The message.
    pub message: Message,
}

impl Repr {
    /// A frame of `message` with sequence number `seq`.
    pub const fn new(seq: u32, message: Message) -> Self {
        Self { seq, message }
    }

    /// Parses a checked frame: version, type, length, the tag under `auth` (nothing of a frame
    /// whose tag does not verify is looked at: [`DecodeError::Unauthenticated`]), then every
    /// field.
    pub fn parse<T: AsRef<[u8]>>(frame: &Frame<T>, auth: &Auth) -> Result<Self, DecodeError> {
        if frame.version() != VERSION {
            return Err(DecodeError::UnsupportedVersion);
        }
        let ty = frame.message_type()?;
        let payload = frame.payload();
        if payload.len() != ty.payload_len() {
            return Err(DecodeError::Length);
        }
        let (session, auth) = ty.context(auth);
        if !auth.verify(session, frame.body(), frame.tag()) {
            return Err(DecodeError::Unauthenticated);
        }
        let mut r = Reader(payload);
        let message = match ty {
            MessageType::HelloRequest => Message::HelloRequest(r.take()?),
            MessageType::Query => Message::Query(Query::parse_payload(&mut r)?),
            MessageType::FedQuery => Message::FedQuery(FedQuery::parse_payload(&mut r)?),
            MessageType::Hello => Message::Hello(Hello::parse_payload(&mut r)?),
            MessageType::Report => Message::Report(parse_report(&mut r)?),
            MessageType::Refusal => Message::Refusal(Refusal::parse_payload(&mut r)?),
        };
        r.finish()?;
        Ok(Self { seq: frame.seq(), message })
    }

    /// Checks and parses the frame that is exactly `bytes` (no COBS, no delimiter).
    pub fn from_bytes(bytes: &[u8], auth: &Auth) -> Result<Self, DecodeError> {
        Self::parse(&Frame::new_checked(bytes)?, auth)
    }

    /// The length of the emitted frame.
    pub const fn buffer_len(&self) -> usize {
        self.message.message_type().frame_len()
    }

    /// Writes the frame (header, payload, tag under `auth`, CRC-32C; no COBS) to the front of
    /// `buf` and returns that part. Fails only if `buf` is shorter than [`Repr::buffer_len`] or
    /// a field cannot be represented ([`EncodeError::InvalidField`]); then the contents of `buf`
    /// are unspecified.
    pub fn emit<'a>(&self, buf: &'a mut [u8], auth: &Auth) -> Result<&'a mut [u8], EncodeError> {
        let len = self.buffer_len();
        let out = buf.get_mut(..len).ok_or(EncodeError::BufferTooSmall)?;
        let mut w = Writer(&mut *out);
        w.put([VERSION, self.message.message_type() as u8])?;
        w.u32(self.seq)?;
        match &self.message {
            Message::HelloRequest(nonce) => w.put(*nonce)?,
            Message::Query(q) => q.emit_payload(&mut w)?,
            Message::FedQuery(q) => q.emit_payload(&mut w)?,
            Message::Hello(h) => h.emit_payload(&mut w)?,
            Message::Report(r) => emit_report(r, &mut w)?,
            Message::Refusal(r) => r.emit_payload(&mut w)?,
        }
        let (body, trailer) =
            out.split_last_chunk_mut::<CHECKSUM_LEN>().ok_or(EncodeError::BufferTooSmall)?;
        let (header_payload, tag) =
            body.split_last_chunk_mut::<TAG_LEN>().ok_or(EncodeError::BufferTooSmall)?;
        let (session, auth) = self.message.message_type().context(auth);
        *tag = auth.tag(session, header_payload);
        *trailer = checksum(body).to_le_bytes();
        Ok(out)
    }

    /// Writes the frame COBS-encoded and followed by the `0x00` delimiter, ready for a byte
    /// stream, and returns that part of `buf` ([`MAX_ENCODED_LEN`](super::MAX_ENCODED_LEN)
    /// bytes always suffice).
    pub fn emit_framed<'a>(&self, buf: &'a mut [u8], auth: &Auth) -> Result<&'a mut [u8], EncodeError> {
        let mut raw = [0u8; super::MAX_FRAME_LEN];
        let raw = self.emit(&mut raw, auth)?;
        let n = cobs::try_encode(raw, buf).map_err(|_| EncodeError::BufferTooSmall)?;
        *buf.get_mut(n).ok_or(EncodeError::BufferTooSmall)? = 0;
        buf.get_mut(..=n).ok_or(EncodeError::BufferTooSmall)
    }
}

fn positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

fn non_negative(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

/// Reads fixed-size little-endian fields off the front of a payload.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const K: usize>(&mut self) -> Result<[u8; K], DecodeError> {
        let (head, tail) = self.0.split_first_chunk::<K>().ok_or(DecodeError::Length)?;
        self.0 = tail;
        Ok(*head)
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        self.take().map(u64::from_le_bytes)
    }
    fn f64(&mut self) -> Result<f64, DecodeError> {
        self.u64().map(f64::from_bits)
    }
    fn finish(self) -> Result<(), DecodeError> {
        if self.0.is_empty() { Ok(()) } else { Err(DecodeError::Length) }
    }
}

/// Writes fixed-size little-endian fields to the front of a buffer.
struct Writer<'a>(&'a mut [u8]);

impl Writer<'_> {
    fn put<const K: usize>(&mut self, bytes: [u8; K]) -> Result<(), EncodeError> {
        if self.0.len() < K {
            return Err(EncodeError::BufferTooSmall);
        }
        let (head, tail) =
            core::mem::take(&mut self.0).split_first_chunk_mut::<K>().ok_or(EncodeError::BufferTooSmall)?;
        *head = bytes;
        self.0 = tail;
        Ok(())
    }
    fn u32(&mut self, x: u32) -> Result<(), EncodeError> {
        self.put(x.to_le_bytes())
    }
    fn u64(&mut self, x: u64) -> Result<(), EncodeError> {
        self.put(x.to_le_bytes())
    }
    fn f64(&mut self, x: f64) -> Result<(), EncodeError> {
        self.u64(x.to_bits())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_codes_are_a_bijection() {
        let mut seen = 0;
        for code in 0..=u8::MAX {
            if let Some(e) = param_from_code(code) {
                assert_eq!(param_code(e), code);
                seen += 1;
            }
        }
        assert_eq!(seen, 39, "every ParamError variant has a code");
        assert_eq!(param_from_code(0), None);
    }

    /// A device sends only detail codes 1–17: every parameter refusal its reporter can make, over
    /// a grid of configurations, ε, levels and readings, is one of those (codes 18–39 are the
    /// rest of the parameter layer, which no query reaches).
    #[test]
    fn a_device_only_ever_refuses_with_codes_1_to_17() {
        use crate::budget::BudgetPolicy;
        use crate::reporter::Reporter;
        use crate::state::MemoryStore;
        let mut seen = [false; 18];
        for (b, r) in [(1.0, 1.0), (0.0, 0.0), (1e-13, 0.0), (1e30, 1.0), (0.5, 0.25)] {
            let (Ok(b), Ok(r)) = (Bound::new(b), Bound::new(r)) else { continue };
            let (Ok(limit), Ok(total)) = (Epsilon::new(1e300), Epsilon::new(1e300)) else { continue };
            let Ok(policy) = BudgetPolicy::new(limit, total) else { continue };
            let Ok(policy) = policy.with_floor(Epsilon::new(1e-300).unwrap_or(limit)) else { continue };
            let config = DeviceConfig { b, r, policy };
            let Ok(mut dev) = Reporter::open(config, MemoryStore::provisioned([3; 32]), [0; 32]) else {
                continue;
            };
            for eps in [1e-300, 1e-12, 1e-3, 1.0, 1e3] {
                for level in
                    [None, Some(1e-13), Some(2f64.powi(-40)), Some(1.5), Some(2f64.powi(41)), Some(1e20)]
                {
                    let level = level.map(TruncationLevel::new).and_then(Result::ok);
                    let Ok(epsilon) = Epsilon::new(eps) else { continue };
                    let query = Query { round: 1, action: 0, epsilon, level };
                    for reward in [0.3, f64::NAN, f64::INFINITY, -1e300] {
                        if let Message::Refusal(Refusal::Param(p)) = dev.answer(&query, reward) {
                            let code = param_code(p);
                            assert!((1..=17).contains(&code), "{p:?} has code {code}");
                            seen[code as usize] = true;
                        }
                    }
                }
            }
        }
        // The grid reaches the mechanism's refusals (ε too small, range zero, range too large).
        assert!(seen[3] && seen[7] && seen[8], "{seen:?}");
    }

    #[test]
    fn message_type_bytes_are_a_bijection_and_carry_the_direction() {
        let known: Vec<MessageType> = (0..=u8::MAX).filter_map(MessageType::from_byte).collect();
        assert_eq!(known, MessageType::ALL);
        for t in MessageType::ALL {
            assert_eq!(MessageType::from_byte(t as u8), Some(t));
        }
        let requests: Vec<bool> = MessageType::ALL.iter().map(|t| t.is_request()).collect();
        assert_eq!(requests, [true, true, true, false, false, false]);
    }

    #[test]
    fn readers_and_writers_report_short_buffers() {
        let mut r = Reader(&[1, 2, 3]);
        assert_eq!(r.u32(), Err(DecodeError::Length));
        assert_eq!(r.take::<3>(), Ok([1, 2, 3]));
        assert_eq!(r.finish(), Ok(()));
        let mut buf = [0u8; 3];
        let mut w = Writer(&mut buf);
        assert_eq!(w.u32(1), Err(EncodeError::BufferTooSmall));
        assert_eq!(w.put([9, 8]), Ok(()));
        assert_eq!(buf, [9, 8, 0]);
    }

    #[test]
    fn a_query_level_of_zero_bits_means_none() {
        let q = Query { round: 0, action: 0, epsilon: Epsilon::new(1.0).unwrap(), level: None };
        let mut buf = [0u8; 64];
        let auth = Auth::new(crate::wire::LinkKey::new([0; 32]), 0);
        let raw = Repr::new(0, Message::Query(q)).emit(&mut buf, &auth).unwrap();
        assert_eq!(&raw[HEADER_LEN + 16..HEADER_LEN + 24], &[0; 8]);
    }
}
