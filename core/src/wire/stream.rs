//! The byte-stream side: COBS-stuffed frames between `0x00` delimiters.

use super::{DecodeError, Frame, MAX_ENCODED_LEN};

/// Accumulates bytes from a stream (a UART) until a `0x00` delimiter, then unstuffs and checks
/// the frame. Fixed capacity `N` (the longest stuffed frame it keeps, delimiter excluded); no
/// allocation; never panics.
///
/// - Resynchronises by itself: garbage or a torn frame ends at the next `0x00` and is reported
///   as one error; the frame after it is read normally.
/// - Rejects over-long input: more than `N` bytes without a delimiter are dropped up to the
///   next `0x00`, then reported as [`DecodeError::Overlong`].
/// - Ignores empty frames, so a sender may send a lone `0x00` to flush a receiver's partial
///   frame (e.g. after a reset) before its first message.
///
/// `N` must be at least [`MAX_ENCODED_LEN`] (checked at compile time); [`StreamReader`] is the
/// reader with exactly that capacity.
///
/// ```
/// use ldp_core::wire::{Auth, LinkKey, MAX_ENCODED_LEN, Message, Repr, StreamReader};
/// let auth = Auth::new(LinkKey::new([3; 32]), 1);
/// let mut out = [0u8; MAX_ENCODED_LEN];
/// let bytes = Repr::new(1, Message::HelloRequest([7; 16])).emit_framed(&mut out, &auth)?;
/// let mut reader = StreamReader::new();
/// let mut got = None;
/// for &b in [0x42, 0x13, 0x00].iter().chain(bytes.iter()) {
///     // the garbage before the first delimiter is reported and skipped
///     if let Some(Ok(frame)) = reader.push(b) {
///         got = Some(Repr::parse(&frame, &auth)?);
///     }
/// }
/// assert_eq!(got, Some(Repr::new(1, Message::HelloRequest([7; 16]))));
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct FrameReader<const N: usize> {
    buf: [u8; N],
    len: usize,
    discarding: bool,
}

/// A [`FrameReader`] sized for every message of this version.
pub type StreamReader = FrameReader<MAX_ENCODED_LEN>;

impl<const N: usize> FrameReader<N> {
    /// An empty reader.
    pub const fn new() -> Self {
        const { assert!(N >= MAX_ENCODED_LEN, "FrameReader<N>: N must be at least MAX_ENCODED_LEN") };
        Self { buf: [0; N], len: 0, discarding: false }
    }

    /// Takes one byte off the stream. At a delimiter that ends a non-empty frame, returns the
    /// checked frame (length and CRC-32C; see [`Frame::new_checked`]) or why it was rejected.
    pub fn push(&mut self, byte: u8) -> Option<Result<Frame<&[u8]>, DecodeError>> {
        if byte != 0 {
            if !self.discarding {
                match self.buf.get_mut(self.len) {
                    Some(slot) => {
                        *slot = byte;
                        self.len += 1;
                    }
                    None => self.discarding = true,
                }
            }
            return None;
        }
        let (len, discarding) = (self.len, self.discarding);
        self.reset();
        if discarding {
            return Some(Err(DecodeError::Overlong));
        }
        if len == 0 {
            return None;
        }
        let stuffed = self.buf.get_mut(..len)?;
        Some(match cobs::decode_in_place(stuffed) {
            Ok(n) => match stuffed.get(..n) {
                Some(frame) => Frame::new_checked(frame),
                None => Err(DecodeError::Cobs),
            },
            Err(_) => Err(DecodeError::Cobs),
        })
    }

    /// Drops any partial frame.
    pub fn reset(&mut self) {
        self.len = 0;
        self.discarding = false;
    }

    /// Whether no partial frame is buffered.
    pub fn is_idle(&self) -> bool {
        self.len == 0 && !self.discarding
    }
}

impl<const N: usize> Default for FrameReader<N> {
    fn default() -> Self {
        Self::new()
    }
}
