//! Errors of the wire format: one for bytes coming in, one for bytes going out.

use core::fmt;

use crate::error::ParamError;

/// Bytes could not be decoded into a message. Nothing was accepted.
///
/// The variants are listed in the order the checks run. After [`DecodeError::Checksum`] the
/// frame is known to be intact, so its sequence number can be trusted: a device answers the
/// later errors with a [`Refusal`](super::Refusal) (see [`ReplyCache::respond`]) and stays silent
/// on the earlier ones.
///
/// [`ReplyCache::respond`]: super::ReplyCache::respond
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DecodeError {
    /// More bytes arrived before a delimiter than a frame can have (or a decoded frame is longer
    /// than [`MAX_FRAME_LEN`](super::MAX_FRAME_LEN)); they were discarded.
    Overlong,
    /// The bytes between two delimiters are not valid COBS.
    Cobs,
    /// The frame is shorter than a header and a checksum.
    Truncated,
    /// The CRC-32C does not match: the frame was corrupted on the way, or is not a frame.
    Checksum,
    /// The frame is intact but of a protocol version this build does not speak.
    UnsupportedVersion,
    /// The message-type byte is not one of [`MessageType`](super::MessageType).
    UnknownType,
    /// The frame's length does not match its message type.
    Length,
    /// The frame is intact but its tag is not the one the device's key gives for this device,
    /// session, sequence number and bytes: forged, replayed from another session or device, or
    /// sent with another key. Nothing in it was looked at.
    Unauthenticated,
    /// A report's released value `index·2^k` is not finite (a grid exponent no device uses).
    NonFinite,
    /// A real-valued field failed `ldp-core`'s own validation (ε, truncation level, bound,
    /// budget policy).
    Param(ParamError),
    /// Another field is out of its range or not in canonical form: reserved bytes not zero, an
    /// unknown refusal code, a grid index beyond ±2^52, a grid exponent beyond `i16`, ε_eff > ε,
    /// a negative or non-finite budget.
    InvalidField,
}

impl DecodeError {
    /// Whether this error was found before the frame's tag was verified (damage, another
    /// version, type or length, or a tag that does not verify): the frame's claims, its tag
    /// among them, are unverified, so the device's refusal of it must not answer them
    /// ([`ReplyCache::respond`](super::ReplyCache::respond)).
    pub const fn is_before_tag(&self) -> bool {
        matches!(
            self,
            Self::Overlong
                | Self::Cobs
                | Self::Truncated
                | Self::Checksum
                | Self::UnsupportedVersion
                | Self::UnknownType
                | Self::Length
                | Self::Unauthenticated
        )
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Overlong => f.write_str("frame too long: discarded up to the next delimiter"),
            Self::Cobs => f.write_str("invalid COBS encoding: the frame was corrupted; discarded"),
            Self::Truncated => f.write_str("frame shorter than header and checksum: discarded"),
            Self::Checksum => f.write_str("CRC-32C mismatch: the frame was corrupted; discarded"),
            Self::UnsupportedVersion => {
                f.write_str("unsupported protocol version: update the learner or the device firmware")
            }
            Self::UnknownType => f.write_str("unknown message type"),
            Self::Length => f.write_str("frame length does not match its message type"),
            Self::Unauthenticated => f.write_str(
                "the frame's tag does not match: forged, replayed, or sent with another key (check the device's key file)",
            ),
            Self::NonFinite => f.write_str("a report's value is not finite: discarded"),
            Self::Param(e) => write!(f, "invalid field: {e}"),
            Self::InvalidField => f.write_str("a field is out of range or not in canonical form"),
        }
    }
}

impl core::error::Error for DecodeError {}

/// A message could not be encoded. Nothing was written that should be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum EncodeError {
    /// The output buffer is too small: give it [`Repr::buffer_len`](super::Repr::buffer_len)
    /// bytes ([`MAX_FRAME_LEN`](super::MAX_FRAME_LEN) always suffice), or
    /// [`MAX_ENCODED_LEN`](super::MAX_ENCODED_LEN) for a COBS-framed message.
    BufferTooSmall,
    /// A field cannot be represented, so the receiver would reject it (the conditions of
    /// [`DecodeError::InvalidField`]). Never happens for values produced by
    /// [`Reporter`](crate::Reporter).
    InvalidField,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::BufferTooSmall => {
                "output buffer too small: use MAX_FRAME_LEN (MAX_ENCODED_LEN framed) bytes"
            }
            Self::InvalidField => "a field is out of the wire format's range: nothing to send",
        })
    }
}

impl core::error::Error for EncodeError {}
