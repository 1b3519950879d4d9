//! A board joins an MQTT fleet: the bridge moves wire frames between a board's byte link (the
//! QEMU firmware's emulated USART1, a serial port, a TCP socket) and the broker's topics
//! (`crate::mqtt`), so that a learner's [`MqttFleet`](crate::mqtt::MqttFleet) sees the board as
//! one more device.
//!
//! What it does:
//! 1. asks the board for its [`Hello`] (a hello request with sequence number
//!    [`HANDSHAKE_SEQ`]), which gives the device id `<id>`;
//! 2. connects to the broker, publishes that hello **retained** on `ldp/<id>/hello` and
//!    subscribes to `ldp/<id>/query`;
//! 3. writes every query message to the board, byte for byte, under the rules the device
//!    processes of `crate::mqtt` follow: a message is one frame exactly (one 0x00, its last
//!    byte, and at most [`MAX_ENCODED_LEN`] bytes), and a retained query is ignored (it was not
//!    sent now: anyone could leave one on the broker to drain the board's budget at every
//!    reconnection); other messages are dropped and counted;
//! 4. publishes every complete frame the board sends (the bytes up to each 0x00, unchanged) on
//!    `ldp/<id>/report`, QoS 1, and right after each one the retained hello again;
//! 5. at a clean stop, takes the hello off the broker ([`forget_devices`]), as the device
//!    processes do: a learner does not wait on a board that is gone.
//!
//! Frames pass through unchanged, so the board's reply cache, its sequence numbers and its
//! reply slot work as over a serial line: a learner's resend carries the same sequence number
//! and the board answers it from its cache without spending twice.
//!
//! # The retained hello, without a second conversation
//!
//! The bridge never asks the board for a hello after the handshake: such a request would need
//! a sequence number of its own, and while a learner's query is in flight the board's replies
//! to both would share the link (a learner's session starts its numbers at a random point,
//! [`WireClient::starting_after`](crate::client::WireClient::starting_after), so no number
//! is safe from it). Instead the retained hello is refreshed from what the board already says
//! publicly: the `budget_remaining` of each report (the same figure a hello would carry,
//! `Reporter::hello`), the `remaining` of a budget refusal, and any hello the board sends to
//! the learner. The handshake itself ([`HANDSHAKE_SEQ`]) is over before the bridge subscribes,
//! hello requests are not kept in the board's reply cache (`ldp_core::wire::ReplyCache::respond`),
//! and whatever the board sends before the first query reaches it (a late duplicate of the
//! handshake's reply) is not published: the handshake cannot collide with a learner's query.
//!
//! # What an observer of the broker learns
//!
//! The bridge adds nothing that depends on a private reading: it publishes each frame when the
//! board's final byte of it arrives (the board sends its replies at a fixed slot after the
//! request, [`crate::mqtt::REPLY_SLOT`] on the host side), and the retained hello after
//! *every* frame, whatever the frame says, so neither the number nor the timing of its
//! publishes depends on a report's content. The hello carries only the public remaining
//! budget. A frame's bytes are the board's; the bridge does not decode the release.
//!
//! # Outages
//!
//! The connection thread of `crate::mqtt` reconnects after a broker restart and subscribes
//! again; the bridge then publishes its hello again (a broker without persistence forgot it).
//! Replies the board sends during the outage are queued by the client up to a bound and then
//! dropped (counted); the learner resends, and the board answers from its reply cache.

use std::fmt;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::TryRecvError;
use std::time::{Duration, Instant};

use std::collections::VecDeque;

use ldp_core::wire::{
    Auth, Frame, Hello, MAX_ENCODED_LEN, Message, NONCE_LEN, Refusal, Repr, StreamReader, TAG_LEN,
};

use crate::mqtt::{BrokerUrl, MqttError, Note, Session, forget_devices, parse_topic, publish, topic};
use crate::transport::Link;

/// The sequence number of the bridge's own hello request (module docs).
pub const HANDSHAKE_SEQ: u32 = 0;
/// How long the handshake waits for the board's hello per try.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(1);
/// How many times the handshake asks (a board may still be booting).
const HANDSHAKE_TRIES: u32 = 10;
/// How long one pass of the bridge's loop waits for a byte from the board: the most a query
/// waits on the broker's side before it is written to the board.
const POLL: Duration = Duration::from_millis(1);
/// The most bytes read from the board in one pass before the broker's side is looked at again.
const BYTES_PER_PASS: usize = 4 * MAX_ENCODED_LEN;

/// The bridge could not start or go on.
#[derive(Debug)]
#[non_exhaustive]
pub enum BridgeError {
    /// The board did not answer the hello request.
    NoHello {
        /// How many times it was asked.
        tries: u32,
    },
    /// The link to the board failed.
    Board(io::Error),
    /// The broker: unreachable at the start, or the connection's thread ended.
    Mqtt(MqttError),
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoHello { tries } => write!(
                f,
                "the board did not answer a hello request ({tries} tries): check that it runs the \
                 firmware and that the link (--serial PATH, --tcp HOST:PORT) is the board's"
            ),
            Self::Board(e) => write!(
                f,
                "the link to the board failed: {e} (restart the bridge; for --qemu, with the same \
                 --dir to boot the same board)"
            ),
            Self::Mqtt(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BridgeError {}

impl From<MqttError> for BridgeError {
    fn from(e: MqttError) -> Self {
        Self::Mqtt(e)
    }
}

/// What a bridge did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BridgeStats {
    /// The board's device id.
    pub device_id: u64,
    /// Query payloads written to the board.
    pub queries: u64,
    /// Query messages dropped: retained, or not one frame exactly (module docs).
    pub dropped_queries: u64,
    /// Frames the board sent, each published on the report topic (unless the client's queue
    /// was full: [`BridgeStats::dropped_publishes`]).
    pub reports: u64,
    /// Frames of the board not published: longer than [`MAX_ENCODED_LEN`], empty (a lone
    /// 0x00), or sent before the first query reached it (module docs).
    pub dropped_frames: u64,
    /// Retained hellos published.
    pub hellos: u64,
    /// Reports dropped because the client's queue was full (an outage; the learner resends and
    /// the board answers from its reply cache). A hello waits for room instead.
    pub dropped_publishes: u64,
    /// Connections made (1 + reconnections).
    pub connections: u64,
    /// The board's remaining budget, as it last said.
    pub budget_remaining: f64,
}

/// A board on a [`Link`], ready to join a fleet (module docs).
pub struct Bridge<L> {
    link: L,
    hello: Hello,
    /// The board's key and id, in the session its hello told, under the nonce and number of the
    /// conversation the board is in (the last hello request that reached it): the bridge reads
    /// the board's replies and republishes its hello, authenticated as the board's.
    auth: Auth,
    /// The last requests passed to the board: sequence number, tag (each reply's tag binds
    /// its request's) and, for a hello request, its nonce.
    requests: VecDeque<(u32, [u8; TAG_LEN], Option<[u8; NONCE_LEN]>)>,
}

impl<L: Link> Bridge<L> {
    /// Asks the board on `link` for its hello (the handshake, module docs).
    pub fn new(mut link: L, auth: Auth) -> Result<Self, BridgeError> {
        let (hello, nonce) = handshake(&mut link, &auth)?;
        Ok(Self {
            link,
            hello,
            auth: Auth { session: hello.session, nonce, conversation: hello.conversation, ..auth },
            requests: VecDeque::new(),
        })
    }

    /// The board's hello: the handshake's, or its latest.
    pub fn hello(&self) -> &Hello {
        &self.hello
    }

    /// [`Bridge::new`], then [`Bridge::serve`].
    pub fn run(
        link: L,
        auth: Auth,
        broker: &BrokerUrl,
        stop: &AtomicBool,
    ) -> Result<BridgeStats, BridgeError> {
        Self::new(link, auth)?.serve(broker, stop)
    }

    /// Bridges the board to `broker` until `stop` is set (module docs). Waits for the first
    /// connection to the broker for at most [`crate::mqtt::FIRST_CONNECT_PATIENCE`]; later
    /// outages are waited out.
    pub fn serve(mut self, broker: &BrokerUrl, stop: &AtomicBool) -> Result<BridgeStats, BridgeError> {
        let id = self.hello.device_id;
        let session = Session::open(broker, &format!("bridge-{id}"), vec![topic(id, "query")])?;
        let mut stats = BridgeStats {
            device_id: id,
            budget_remaining: self.hello.budget_remaining,
            ..BridgeStats::default()
        };
        if !session.first_connection(stop)? {
            return Ok(stats);
        }
        stats.connections = 1;
        let result = self.pump(&session, stop, &mut stats);
        drop(session); // leaves: the queued publishes go first
        result?;
        // A clean stop takes the hello off the broker (module docs), from a new connection
        // that waits for the broker's acknowledgement.
        if forget_devices(broker, [id]).is_err() {
            stats.dropped_publishes += 1;
        }
        Ok(stats)
    }

    /// The loop: queries to the board, frames to the broker, until `stop`.
    fn pump(
        &mut self,
        session: &Session,
        stop: &AtomicBool,
        stats: &mut BridgeStats,
    ) -> Result<(), BridgeError> {
        let id = self.hello.device_id;
        let mut frame: Vec<u8> = Vec::with_capacity(MAX_ENCODED_LEN);
        let mut overlong = false;
        // The retained hello is owed at each connection and after each frame; one that finds
        // the client's queue full (an outage) is tried again at the next pass.
        let mut hello_owed = true;
        while !stop.load(Ordering::Relaxed) {
            let pass = Instant::now();
            let mut busy = false;
            if hello_owed {
                hello_owed = !self.publish_hello(session, stats);
            }
            // The broker's side: everything that arrived, without waiting.
            loop {
                match session.notes.try_recv() {
                    Ok(Note::Connected) => {
                        stats.connections += 1;
                        hello_owed = !self.publish_hello(session, stats);
                    }
                    Ok(Note::Publish { topic, payload, retain, .. }) => {
                        if parse_topic(&topic) != Some((id, "query")) {
                            continue;
                        }
                        // One frame exactly, sent now (module docs).
                        let one_frame = payload.len() <= MAX_ENCODED_LEN
                            && payload.iter().position(|&b| b == 0) == Some(payload.len().wrapping_sub(1));
                        if retain || !one_frame {
                            stats.dropped_queries += 1;
                            continue;
                        }
                        self.note_request(&payload);
                        self.link.send(&payload).map_err(BridgeError::Board)?;
                        stats.queries += 1;
                        busy = true;
                    }
                    Ok(Note::Error(_) | Note::Acked) => {} // the connection thread retries errors
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return Err(BridgeError::Mqtt(MqttError::Closed)),
                }
            }
            // The board's side: the bytes that came, a bounded number per pass.
            let started = Instant::now();
            for _ in 0..BYTES_PER_PASS {
                let wait = POLL.saturating_sub(started.elapsed());
                let Some(byte) = self.link.recv_byte(wait).map_err(BridgeError::Board)? else { break };
                busy = true;
                if byte != 0 {
                    if frame.len() < MAX_ENCODED_LEN {
                        frame.push(byte);
                    } else {
                        overlong = true;
                    }
                    continue;
                }
                if frame.is_empty() || overlong || stats.queries == 0 {
                    stats.dropped_frames += 1;
                } else {
                    frame.push(0);
                    if !publish(session.client(), topic(id, "report"), false, &frame) {
                        stats.dropped_publishes += 1;
                    }
                    stats.reports += 1;
                    self.learn(&frame);
                    stats.budget_remaining = self.hello.budget_remaining;
                    // After every frame, whatever it says (module docs).
                    hello_owed = !self.publish_hello(session, stats);
                }
                frame.clear();
                overlong = false;
            }
            // A link that does not wait (an in-memory one) must not make this a busy loop.
            if !busy || hello_owed {
                std::thread::sleep(POLL.saturating_sub(pass.elapsed()));
            }
        }
        Ok(())
    }

    /// Keeps the tag of a request passed to the board (and the nonce of a hello request), to
    /// authenticate the board's reply to it.
    fn note_request(&mut self, payload: &[u8]) {
        let Some(bytes) = one_frame(payload) else { return };
        let Ok(frame) = Frame::new_checked(&bytes[..]) else { return };
        let Some(tag) = frame.tag().first_chunk::<TAG_LEN>().copied() else { return };
        let nonce = match Repr::parse(&frame, &Auth::new(self.auth.key, self.auth.device_id)) {
            Ok(Repr { message: Message::HelloRequest(nonce), .. }) => Some(nonce),
            _ => None,
        };
        if self.requests.len() == 16 {
            self.requests.pop_front();
        }
        self.requests.push_back((frame.seq(), tag, nonce));
    }

    /// Updates the hello from what a frame of the board says publicly (module docs): a frame
    /// that verifies as the board's reply to a request the bridge passed on.
    fn learn(&mut self, frame: &[u8]) {
        let Some(bytes) = one_frame(frame) else { return };
        let Ok(frame) = Frame::new_checked(&bytes[..]) else { return };
        let Some(&(_, tag, nonce)) = self.requests.iter().rev().find(|(seq, ..)| *seq == frame.seq()) else {
            return;
        };
        let auth = Auth { nonce: nonce.unwrap_or(self.auth.nonce), ..self.auth }.answering(&tag);
        let message = Repr::parse(&frame, &auth).ok().map(|r| r.message);
        match message {
            // A budget never comes back: a late duplicate's older figure is not shown.
            Some(Message::Report(report)) => {
                self.hello.budget_remaining = self.hello.budget_remaining.min(report.budget_remaining);
            }
            Some(Message::Refusal(Refusal::BudgetExhausted { remaining, .. })) => {
                self.hello.budget_remaining = self.hello.budget_remaining.min(remaining);
            }
            Some(Message::Hello(hello)) if hello.device_id == self.hello.device_id => {
                let remaining = self.hello.budget_remaining.min(hello.budget_remaining);
                self.hello = Hello { budget_remaining: remaining, ..hello };
                self.auth.session = hello.session;
                self.auth.nonce = auth.nonce;
                self.auth.conversation = hello.conversation;
            }
            _ => {}
        }
    }

    /// Publishes the retained hello; `false` if the client's queue is full.
    fn publish_hello(&self, session: &Session, stats: &mut BridgeStats) -> bool {
        let mut buf = [0u8; MAX_ENCODED_LEN];
        // A hello the board sent always encodes again; if not, there is nothing to publish.
        // Tagged as a device process tags its retained hello: session 0, no nonce, no request
        // (a presence notice, which no learner's nonce makes the answer to its hello).
        let notice = Auth::new(self.auth.key, self.auth.device_id);
        let Ok(frame) = Repr::new(0, Message::Hello(self.hello)).emit_framed(&mut buf, &notice) else {
            return true;
        };
        let sent = publish(session.client(), topic(self.hello.device_id, "hello"), true, frame);
        stats.hellos += u64::from(sent);
        sent
    }
}

/// The first intact frame on a stream of bytes (unstuffed), if any.
fn one_frame(stream: &[u8]) -> Option<Vec<u8>> {
    let mut reader = StreamReader::new();
    for &b in stream {
        if let Some(Ok(frame)) = reader.push(b) {
            return Some(frame.as_bytes().to_vec());
        }
    }
    None
}

/// Asks the board for its hello with [`HANDSHAKE_SEQ`] and a fresh nonce (OS entropy); other
/// frames are skipped. Returns the hello and the nonce.
fn handshake<L: Link>(link: &mut L, auth: &Auth) -> Result<(Hello, [u8; NONCE_LEN]), BridgeError> {
    let mut nonce = [0u8; NONCE_LEN];
    getrandom::fill(&mut nonce)
        .map_err(|e| BridgeError::Board(io::Error::other(format!("no OS entropy: {e}"))))?;
    let message = Message::HelloRequest(nonce);
    let mut raw = [0u8; ldp_core::wire::MAX_FRAME_LEN];
    let raw = Repr::new(HANDSHAKE_SEQ, message)
        .emit(&mut raw, auth)
        .map_err(|_| BridgeError::NoHello { tries: 0 })?;
    let tag = Frame::new_checked(&*raw).map_err(|_| BridgeError::NoHello { tries: 0 })?.tag().to_vec();
    let expect = Auth { nonce, ..*auth }.answering(&tag);
    let mut buf = [0u8; MAX_ENCODED_LEN];
    let request = Repr::new(HANDSHAKE_SEQ, message)
        .emit_framed(&mut buf, auth)
        .map_err(|_| BridgeError::NoHello { tries: 0 })?
        .to_vec();
    let mut reader = StreamReader::new();
    for _ in 0..HANDSHAKE_TRIES {
        link.send(&request).map_err(BridgeError::Board)?;
        let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let Some(byte) = link.recv_byte(left).map_err(BridgeError::Board)? else { break };
            let Some(Ok(frame)) = reader.push(byte) else { continue };
            if let Ok(Repr { seq: HANDSHAKE_SEQ, message: Message::Hello(hello) }) =
                Repr::parse(&frame, &expect)
            {
                return Ok((hello, nonce));
            }
        }
    }
    Err(BridgeError::NoHello { tries: HANDSHAKE_TRIES })
}
