//! Frame authentication (wire format v5): every frame carries a tag, the first [`TAG_LEN`]
//! bytes of HMAC-SHA256 under the device's [`LinkKey`], over
//!
//! ```text
//! device_id (u64 LE) ‖ session (u64 LE) ‖ nonce (16) ‖ conversation (u32 LE) ‖ answers (16) ‖ version ‖ type ‖ seq ‖ payload
//! ```
//!
//! so a tag binds the device, the device's session (its boot number), the learner's nonce (the
//! random number of the hello request that offered the conversation), the device's number for
//! the conversation (a counter of the conversations it offered this boot, never repeated within
//! it), the request a reply answers (its tag), the sequence number, the direction (the type
//! byte's high bit) and every byte of the frame. Which of them a frame's tag covers depends on
//! its type (`MessageType::context`): a hello request carries its nonce in its payload and is
//! tagged with session, nonce, conversation and answers all zero; a hello is tagged with session
//! and conversation 0 (it carries both in its payload), the request's nonce and the request's
//! tag; a query with the session, the nonce and the conversation; a report or refusal with
//! those and the query's tag.
//!
//! The key is shared by the device and its learner alone. The device derives it from its secret
//! seed material ([`LinkKey::from_seed`]), so it is made when the device is provisioned, and the
//! provisioning host (or, for a board, the provisioning image) hands it to the learner
//! (`docs/wire-format.md`, *Keys*). Knowing the key tells nothing about the seed (HMAC is a PRF),
//! so the learner holding it cannot predict the device's noise.

use core::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Length of a frame's tag: HMAC-SHA256 truncated to 128 bits.
pub const TAG_LEN: usize = 16;
/// Length of a [`LinkKey`].
pub const KEY_LEN: usize = 32;
/// Length of a learner's nonce (the payload of a hello request).
pub const NONCE_LEN: usize = 16;

/// What the link key is derived from the seed with (domain separation from the noise keys,
/// which are ChaCha20 keystream blocks of the seed).
const KEY_LABEL: &[u8] = b"ldp-bo link key v1";

/// The secret that authenticates one device's frames, shared by the device and its learner.
/// Its `Debug` shows no byte of it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct LinkKey([u8; KEY_LEN]);

impl fmt::Debug for LinkKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LinkKey(..)")
    }
}

impl LinkKey {
    /// A key from its bytes (as a learner reads it from a key file).
    pub const fn new(bytes: [u8; KEY_LEN]) -> Self {
        Self(bytes)
    }

    /// The device's key: HMAC-SHA256(seed, "ldp-bo link key v1"). Whoever provisions a device
    /// with `seed` computes the same key for its learner.
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let mut key = [0u8; KEY_LEN];
        if let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(seed) {
            mac.update(KEY_LABEL);
            key.copy_from_slice(&mac.finalize().into_bytes());
        }
        Self(key)
    }

    /// The key's bytes (to hand to the learner; keep them secret).
    pub const fn to_bytes(&self) -> [u8; KEY_LEN] {
        self.0
    }
}

/// HMAC-SHA256 of `label ‖ bytes` under `seed`: a device's own seal over data it keeps where
/// the host can write (the emulated board's configuration), which only the holder of the seed
/// can make, and which differs from device to device (a sealed copy from another device does
/// not verify). Not the link key: a learner holding that cannot make it.
pub fn seed_digest(seed: &[u8; 32], label: &[u8], bytes: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    if let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(seed) {
        mac.update(label);
        mac.update(bytes);
        out.copy_from_slice(&mac.finalize().into_bytes());
    }
    out
}

/// Who a frame is between, as both ends authenticate it: the device's key and id, the
/// device's current session (its boot number, told in its [`Hello`](super::Hello)), the
/// learner's nonce of the conversation, the device's number for the conversation (also told in
/// its hello), and, for a reply, the tag of the request it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Auth {
    /// The device's link key.
    pub key: LinkKey,
    /// The device's id.
    pub device_id: u64,
    /// The device's session: its boot number (0 until a learner has seen a hello).
    pub session: u64,
    /// The learner's nonce: the payload of the hello request that offered the conversation
    /// (all zero before any; no learner picks it).
    pub nonce: [u8; NONCE_LEN],
    /// The device's number for the conversation ([`Hello::conversation`](super::Hello)): it
    /// counts the conversations the device offered this boot (0 before any), so no two of one
    /// boot share it, and a recorded hello request cannot reopen one.
    pub conversation: u32,
    /// For a reply: the tag of the request it answers (all zero for a request).
    pub answers: [u8; TAG_LEN],
}

impl Auth {
    /// The authentication of device `device_id` with `key`, before any hello (session 0, no
    /// nonce, conversation 0).
    pub const fn new(key: LinkKey, device_id: u64) -> Self {
        Self { key, device_id, session: 0, nonce: [0; NONCE_LEN], conversation: 0, answers: [0; TAG_LEN] }
    }

    /// This authentication for a reply to the request whose tag is `request_tag`.
    pub fn answering(&self, request_tag: &[u8]) -> Self {
        let mut answers = [0u8; TAG_LEN];
        if let Some(tag) = request_tag.first_chunk::<TAG_LEN>() {
            answers = *tag;
        }
        Self { answers, ..*self }
    }

    fn mac(&self, session: u64, body: &[u8]) -> Option<Hmac<Sha256>> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key.0).ok()?;
        mac.update(&self.device_id.to_le_bytes());
        mac.update(&session.to_le_bytes());
        mac.update(&self.nonce);
        mac.update(&self.conversation.to_le_bytes());
        mac.update(&self.answers);
        mac.update(body);
        Some(mac)
    }

    /// The tag of a frame whose header and payload are `body`, in session `session`, under
    /// this nonce, conversation and answered request.
    pub fn tag(&self, session: u64, body: &[u8]) -> [u8; TAG_LEN] {
        let mut tag = [0u8; TAG_LEN];
        if let Some(mac) = self.mac(session, body) {
            tag.copy_from_slice(&mac.finalize().into_bytes()[..TAG_LEN]);
        }
        tag
    }

    /// Whether `tag` is the tag of `body` in `session`, under this nonce, conversation and
    /// answered request (compared in constant time).
    pub fn verify(&self, session: u64, body: &[u8], tag: &[u8]) -> bool {
        tag.len() == TAG_LEN
            && self.mac(session, body).is_some_and(|mac| mac.verify_truncated_left(tag).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_bind_key_device_session_nonce_conversation_request_and_body() {
        let auth = Auth { session: 3, ..Auth::new(LinkKey::new([7; 32]), 41) };
        let tag = auth.tag(3, b"frame");
        assert!(auth.verify(3, b"frame", &tag));
        assert!(!auth.verify(4, b"frame", &tag));
        assert!(!auth.verify(3, b"framf", &tag));
        assert!(!Auth { device_id: 42, ..auth }.verify(3, b"frame", &tag));
        assert!(!Auth { key: LinkKey::new([8; 32]), ..auth }.verify(3, b"frame", &tag));
        assert!(!auth.verify(3, b"frame", &tag[..15]));
        assert!(!Auth { nonce: [1; NONCE_LEN], ..auth }.verify(3, b"frame", &tag));
        assert!(!Auth { conversation: 1, ..auth }.verify(3, b"frame", &tag));
        assert!(!auth.answering(&[1; TAG_LEN]).verify(3, b"frame", &tag));
        assert_eq!(auth.answering(&[0; TAG_LEN]), auth);
    }

    #[test]
    fn the_key_is_a_function_of_the_seed_and_shows_nothing_in_debug() {
        assert_eq!(LinkKey::from_seed(&[1; 32]), LinkKey::from_seed(&[1; 32]));
        assert_ne!(LinkKey::from_seed(&[1; 32]), LinkKey::from_seed(&[2; 32]));
        assert_ne!(LinkKey::from_seed(&[1; 32]).to_bytes(), [0; 32]);
        assert_eq!(format!("{:?}", LinkKey::new([9; 32])), "LinkKey(..)");
    }
}
