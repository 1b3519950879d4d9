//! The device's answer to a retried query: the same reply, without spending budget twice.

use super::auth::NONCE_LEN;
use super::{Auth, EncodeError, Frame, Hello, Message, Query, Refusal, Repr};

/// The device's memory of its last answered query: `(seq, query, reply)`.
///
/// **Sequence-number rule.** The learner gives every new query a new sequence number and, when
/// a reply is lost (timeout), resends the *same* query with the *same* number. The device
/// answers a query equal to its last one, with the same number, with the stored reply — the
/// same bytes, no new noise, no second spend. Anything else is a new query. Keying on the query
/// as well as the number means a learner that restarts its numbering never gets a stale reply to
/// a different query.
///
/// The cache lives in RAM: after a device reset a retried query is answered afresh and charged
/// again. That costs budget, never privacy (both spends are durably counted). The last
/// [`REPLY_CACHE_LEN`] queries are remembered, so a duplicate that a link delays behind a few
/// later queries is still answered without a second spend; the learner must not pipeline more
/// queries than that.
///
/// **Fed queries** ([`FedQuery`](super::FedQuery), hardware-in-the-loop) are keyed on the sequence number, the
/// query and the fact that they are fed — *not* on the reading. A fed query that repeats an
/// answered one with another reading is a retry: it gets the stored reply, never a second fresh
/// release under the same number. A plain query and a fed query never share an entry.
///
/// **Replays.** Beyond the remembered queries, the cache keeps the number of the last query it
/// answered afresh: a new query must have a larger number (`seq > last`, as plain unsigned
/// integers: the numbers do not wrap), else it is refused as [`Refusal::StaleSequence`],
/// reading and spending nothing. The number only rises within a boot — nothing, not even a
/// hello request, lowers it — so each number is answered afresh at most once per boot, and with
/// authenticated frames ([`Auth`]: the session is the boot number) a recorded query can never
/// be spent again, in this session or any later one, whatever hello requests are replayed. The
/// number is told in the device's [`Hello::last_seq`], so a learner continues after it. (Wire
/// format 4 as first written compared in serial-number order, a half circle: recorded hello
/// requests could walk the floor round the circle until an old conversation's queries were
/// fresh again; review 3, finding 2.) The price is a denial of service until the device
/// restarts: a replayed hello request (recorded in any boot: it is tagged in session 0) with a
/// number near `u32::MAX` raises the floor there, leaving a learner few or no numbers; the
/// numbers come back with the next boot.
///
/// **Conversations (wire format 4).** An authenticated hello request opens a conversation: the
/// cache keeps its nonce, under which every later query must be tagged (a query under another
/// learner's nonce is [`Refusal::Unauthenticated`]: one learner at a time), and the request's
/// sequence number becomes a floor for the freshness counter (`last_fresh` rises to it if it is
/// later), so a query the link withheld from an earlier learner, numbered before the hello
/// request, is stale once that learner (or any other) greeted the device again: it is never
/// spent after its learner gave up on it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReplyCache {
    /// `(seq, query, fed, reply)`.
    entries: [Option<(u32, Query, bool, Message)>; REPLY_CACHE_LEN],
    next: usize,
    /// The last sequence number answered afresh, or the floor a hello request set.
    last_fresh: Option<u32>,
    /// The nonce of the last authenticated hello request (all zero before any).
    nonce: [u8; NONCE_LEN],
}

/// The device's reply to one frame, with what its tag is made under: the device's key, id and
/// session, the conversation's nonce and the tag of the request it answers
/// ([`ReplyCache::respond`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reply {
    /// The reply.
    pub repr: Repr,
    /// Its authentication.
    pub auth: Auth,
}

impl Reply {
    /// [`Repr::emit_framed`] under the reply's own authentication.
    pub fn emit_framed<'a>(&self, buf: &'a mut [u8]) -> Result<&'a mut [u8], EncodeError> {
        self.repr.emit_framed(buf, &self.auth)
    }
}

/// How many recent queries the device remembers.
pub const REPLY_CACHE_LEN: usize = 8;

impl ReplyCache {
    /// An empty cache.
    pub const fn new() -> Self {
        Self { entries: [None; REPLY_CACHE_LEN], next: 0, last_fresh: None, nonce: [0; NONCE_LEN] }
    }

    fn find(&self, seq: u32, query: &Query, fed: bool) -> Option<Message> {
        self.entries
            .iter()
            .flatten()
            .find(|(s, q, f, _)| *s == seq && q == query && *f == fed)
            .map(|(_, _, _, reply)| *reply)
    }

    /// Answers query `seq`: the stored reply if it repeats one of the last
    /// [`REPLY_CACHE_LEN`] queries (same number, same query), [`Refusal::StaleSequence`] if its
    /// number is not after the last fresh one (type docs), else `fresh(query)`, which is then
    /// stored. `fresh` is where the device reads its sensor and spends budget, e.g.
    /// `|q| reporter.answer(q, sensor.read(q.action))`.
    pub fn answer(&mut self, seq: u32, query: &Query, fresh: impl FnOnce(&Query) -> Message) -> Repr {
        self.answer_keyed(seq, query, None, |q, _| fresh(q))
    }

    /// [`ReplyCache::answer`] for a query that is plain (`reading` `None`) or fed: a fed query is
    /// keyed without its reading (type docs), and `fresh` gets the reading.
    fn answer_keyed(
        &mut self,
        seq: u32,
        query: &Query,
        reading: Option<f64>,
        fresh: impl FnOnce(&Query, Option<f64>) -> Message,
    ) -> Repr {
        let fed = reading.is_some();
        if let Some(reply) = self.find(seq, query, fed) {
            return Repr::new(seq, reply);
        }
        if self.last_fresh.is_some_and(|last| seq <= last) {
            return Repr::new(seq, Message::Refusal(Refusal::StaleSequence));
        }
        self.last_fresh = Some(seq);
        let reply = fresh(query, reading);
        self.entries[self.next] = Some((seq, *query, fed, reply));
        self.next = (self.next + 1) % REPLY_CACHE_LEN;
        Repr::new(seq, reply)
    }

    /// Whether the plain query `(seq, query)` would be answered from the cache.
    pub fn is_retry(&self, seq: u32, query: &Query) -> bool {
        self.find(seq, query, false).is_some()
    }

    /// The last sequence number answered afresh (0 if none): [`Hello::last_seq`].
    pub fn last_seq(&self) -> u32 {
        self.last_fresh.unwrap_or(0)
    }

    /// The device's whole answer to a checked frame, authenticated under `auth` (the device's
    /// key, id and session: its boot number; its nonce is ignored, the cache keeps the
    /// conversation's), one mapping for every firmware:
    ///
    /// - a frame whose tag does not verify (under the conversation's nonce, for a query) →
    ///   [`Refusal::Unauthenticated`], reading and spending nothing (the refusal depends on the
    ///   frame alone);
    /// - a hello request → `Hello(hello)` with [`Hello::last_seq`] filled in (cheap to build each time:
    ///   [`Reporter::hello`](crate::reporter::Reporter::hello) copies the configuration and
    ///   the remaining budget); its nonce opens a new conversation and its number becomes a
    ///   floor for fresh queries (type docs);
    /// - a query → [`ReplyCache::answer`] with `fresh(query, None)`;
    /// - a fed query → the same, keyed as the type docs say, with `fresh(query, Some(reading))`
    ///   (the device decides whether it takes fed readings: [`Refusal::FeedRefused`] if not);
    /// - an intact frame that does not parse → a [`Refusal`] (see `From<DecodeError>`);
    /// - a device → learner message → [`Refusal::Unexpected`].
    ///
    /// The reply carries the frame's sequence number, and its tag binds the frame's tag and
    /// the conversation's nonce ([`Reply::auth`]) — except the refusal of a frame refused before
    /// its tag was verified ([`DecodeError::is_before_tag`](super::DecodeError::is_before_tag):
    /// reasons 7, 12 and a wrong type or length), which is tagged under the all-zero nonce: the
    /// frame may be a learner's request altered on the way, and its refusal must not verify
    /// as the answer to that request. Frames that fail their length or checksum
    /// check never get here ([`Frame::new_checked`]); the device stays silent and the learner's
    /// retry recovers.
    pub fn respond<T: AsRef<[u8]>>(
        &mut self,
        frame: &Frame<T>,
        auth: &Auth,
        hello: Hello,
        fresh: impl FnOnce(&Query, Option<f64>) -> Message,
    ) -> Reply {
        let seq = frame.seq();
        let conversation = Auth { nonce: self.nonce, answers: [0; super::TAG_LEN], ..*auth };
        let mut verified = true;
        let repr = match Repr::parse(frame, &conversation) {
            Ok(Repr { message: Message::HelloRequest(nonce), .. }) => {
                self.nonce = nonce;
                if self.last_fresh.is_none_or(|last| seq > last) {
                    self.last_fresh = Some(seq);
                }
                Repr::new(seq, Message::Hello(Hello { last_seq: self.last_seq(), ..hello }))
            }
            Ok(Repr { message: Message::Query(q), .. }) => self.answer_keyed(seq, &q, None, fresh),
            Ok(Repr { message: Message::FedQuery(f), .. }) => {
                self.answer_keyed(seq, &f.query, Some(f.reading), fresh)
            }
            Ok(_) => Repr::new(seq, Message::Refusal(Refusal::Unexpected)),
            Err(e) => {
                // Refused before its tag was verified: not bound to the conversation (below).
                verified = !e.is_before_tag();
                Repr::new(seq, Message::Refusal(e.into()))
            }
        };
        // A frame whose tag was never verified is anyone's (a learner's query with its version
        // or type byte changed, say): its refusal is tagged under the all-zero nonce, which no
        // learner's conversation has, so no learner takes it as the answer to its request.
        let nonce = if verified { self.nonce } else { [0; NONCE_LEN] };
        let auth = Auth { nonce, ..*auth }.answering(frame.tag());
        Reply { repr, auth }
    }

    /// Forgets every query.
    pub fn clear(&mut self) {
        *self = Self::new();
    }
}
