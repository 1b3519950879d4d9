//! The checked view over the bytes of one frame (before COBS stuffing / after unstuffing).

use super::auth::TAG_LEN;
use super::{DecodeError, MAX_FRAME_LEN, MessageType};

/// Byte offsets of the header fields. The header is the same in every protocol version.
pub mod field {
    use core::ops::Range;

    /// Protocol version, `u8`.
    pub const VERSION: usize = 0;
    /// Message type, `u8` (see [`MessageType`](super::MessageType)).
    pub const TYPE: usize = 1;
    /// Sequence number, `u32` little-endian.
    pub const SEQ: Range<usize> = 2..6;
    /// First byte of the payload.
    pub const PAYLOAD: usize = 6;
}

/// Header length: version, type, sequence number.
pub const HEADER_LEN: usize = field::PAYLOAD;
/// Trailer length: CRC-32C, little-endian.
pub const CHECKSUM_LEN: usize = 4;
/// The shortest frame (a message without payload): header, tag, checksum.
pub const MIN_FRAME_LEN: usize = HEADER_LEN + TAG_LEN + CHECKSUM_LEN;

/// CRC-32C of `bytes` ([`crate::checksum::crc32c`]). A frame's trailer is this checksum of
/// everything before it.
///
/// ```
/// assert_eq!(ldp_core::wire::checksum(b"123456789"), 0xE306_9283);
/// ```
pub fn checksum(bytes: &[u8]) -> u32 {
    crate::checksum::crc32c(bytes)
}

/// A checked view over one frame: `MIN_FRAME_LEN ≤ len ≤ MAX_FRAME_LEN` and the CRC-32C
/// trailer matches. Only [`Frame::new_checked`] builds one, so no accessor can panic.
///
/// The version and message type are *not* checked here: the header is intact, so a device can
/// trust [`Frame::seq`] and answer a frame it cannot parse. [`Repr::parse`](super::Repr::parse)
/// does the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Checks the length and the checksum of the frame that is exactly `buffer`.
    ///
    /// ```
    /// use ldp_core::wire::{DecodeError, Frame, checksum};
    /// // a header (version 3, hello request, seq 7: the check reads no version), a (here
    /// // all-zero) tag, the CRC-32C
    /// let mut bytes = [0u8; 26];
    /// bytes[..6].copy_from_slice(&[0x03, 0x01, 0x07, 0x00, 0x00, 0x00]);
    /// let crc = checksum(&bytes[..22]);
    /// bytes[22..].copy_from_slice(&crc.to_le_bytes());
    /// let frame = Frame::new_checked(&bytes[..])?;
    /// assert_eq!(frame.seq(), 7);
    /// assert_eq!(frame.tag(), &[0; 16]);
    /// assert_eq!(Frame::new_checked(&bytes[..25]), Err(DecodeError::Truncated));
    /// # Ok::<(), DecodeError>(())
    /// ```
    pub fn new_checked(buffer: T) -> Result<Self, DecodeError> {
        let bytes = buffer.as_ref();
        if bytes.len() < MIN_FRAME_LEN {
            return Err(DecodeError::Truncated);
        }
        if bytes.len() > MAX_FRAME_LEN {
            return Err(DecodeError::Overlong);
        }
        let (body, trailer) = bytes.split_last_chunk::<CHECKSUM_LEN>().ok_or(DecodeError::Truncated)?;
        if checksum(body) != u32::from_le_bytes(*trailer) {
            return Err(DecodeError::Checksum);
        }
        Ok(Self { buffer })
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// All bytes of the frame, checksum included.
    pub fn as_bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    fn header(&self) -> [u8; HEADER_LEN] {
        // Cannot fall back: `new_checked` ensured `len ≥ MIN_FRAME_LEN`.
        self.as_bytes().first_chunk::<HEADER_LEN>().copied().unwrap_or([0; HEADER_LEN])
    }

    /// The protocol version byte.
    pub fn version(&self) -> u8 {
        self.header()[field::VERSION]
    }

    /// The raw message-type byte.
    pub fn msg_type(&self) -> u8 {
        self.header()[field::TYPE]
    }

    /// The message type, if this build knows it.
    pub fn message_type(&self) -> Result<MessageType, DecodeError> {
        MessageType::from_byte(self.msg_type()).ok_or(DecodeError::UnknownType)
    }

    /// The sequence number (trustworthy in any version: the checksum matched).
    pub fn seq(&self) -> u32 {
        let [_, _, a, b, c, d] = self.header();
        u32::from_le_bytes([a, b, c, d])
    }

    /// The payload: the bytes between header and tag.
    pub fn payload(&self) -> &[u8] {
        let bytes = self.as_bytes();
        bytes.get(HEADER_LEN..bytes.len().saturating_sub(TAG_LEN + CHECKSUM_LEN)).unwrap_or(&[])
    }

    /// What the tag authenticates: header and payload.
    pub fn body(&self) -> &[u8] {
        let bytes = self.as_bytes();
        bytes.get(..bytes.len().saturating_sub(TAG_LEN + CHECKSUM_LEN)).unwrap_or(&[])
    }

    /// The tag ([`TAG_LEN`] bytes before the checksum; see [`Auth`](super::Auth)).
    pub fn tag(&self) -> &[u8] {
        let bytes = self.as_bytes();
        let end = bytes.len().saturating_sub(CHECKSUM_LEN);
        bytes.get(end.saturating_sub(TAG_LEN)..end).unwrap_or(&[])
    }

    /// The checksum trailer.
    pub fn checksum(&self) -> u32 {
        u32::from_le_bytes(self.as_bytes().last_chunk::<CHECKSUM_LEN>().copied().unwrap_or([0; 4]))
    }
}
