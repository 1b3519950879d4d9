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
/// answered afresh in the conversation: a new query must have a larger number (`seq > last`, as
/// plain unsigned integers: the numbers do not wrap), else it is refused as
/// [`Refusal::StaleSequence`], reading and spending nothing. Within a conversation the number
/// only rises, so each number is answered afresh at most once per conversation, and with
/// authenticated frames ([`Auth`]: the session is the boot number, the conversation the
/// device's count of the conversations of the boot) a recorded query can never be spent again,
/// in this conversation or any other of any boot.
///
/// **Conversations (wire format 5).** An authenticated hello request opens a conversation: the
/// cache counts it (the device's conversation number, 1 for the boot's first, never repeated
/// within the boot: [`Hello::conversation`]), keeps its nonce, forgets the queries of the
/// conversation before, and takes the request's sequence number as the floor for fresh queries.
/// Every later query must be tagged under that nonce *and* that number (a query of another
/// conversation — an earlier learner's, or an earlier one of this learner — is
/// [`Refusal::Unauthenticated`]: one learner at a time). A hello request carrying the nonce of
/// the open conversation (the learner's retry, or a copy of it) is answered with the open
/// conversation, changing nothing. So a recorded hello request — tagged in session 0, it
/// verifies in every boot — opens a *new* conversation, under a number that no recorded query
/// carries and that the replayer, lacking the key, cannot use: it cannot reopen an old
/// conversation, make an old query fresh again or move the floor of another conversation. What
/// it can do is end the open conversation: the learner's next query is refused (12), nothing
/// spent, and the learner greets the device again — a denial of service of one exchange per
/// replayed frame. A query that the link withheld from a learner is likewise dead once that
/// learner's next hello request has reached the device: never spent after the learner gave up
/// on it. (Wire format 4 took every hello request's number as a floor for the whole boot, so a
/// recorded one numbered near `u32::MAX` left learners no fresh numbers until a restart.)
///
/// The conversation number is a `u32`: after 2^32 − 1 conversations in one boot (days of
/// hello requests without a pause) the device opens no more until it restarts; a hello
/// request is then answered with the open conversation's number, under which only the open
/// conversation's learner can query.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReplyCache {
    /// `(seq, query, fed, reply)`.
    entries: [Option<(u32, Query, bool, Message)>; REPLY_CACHE_LEN],
    next: usize,
    /// The last sequence number answered afresh in the conversation, or the floor its hello
    /// request set.
    last_fresh: Option<u32>,
    /// The nonce of the hello request that opened the conversation (all zero before any).
    nonce: [u8; NONCE_LEN],
    /// The conversation's number: how many the device opened this boot (0 before any).
    conversation: u32,
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
        Self {
            entries: [None; REPLY_CACHE_LEN],
            next: 0,
            last_fresh: None,
            nonce: [0; NONCE_LEN],
            conversation: 0,
        }
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

    /// The last sequence number answered afresh in the conversation, or the number of the hello
    /// request that opened it (0 if none).
    pub fn last_seq(&self) -> u32 {
        self.last_fresh.unwrap_or(0)
    }

    /// The open conversation's number ([`Hello::conversation`]; 0 before any hello request).
    pub fn conversation(&self) -> u32 {
        self.conversation
    }

    /// The device's whole answer to a checked frame, authenticated under `auth` (the device's
    /// key, id and session: its boot number; its nonce and conversation are ignored, the cache
    /// keeps the open conversation's), one mapping for every firmware:
    ///
    /// - a frame whose tag does not verify (under the open conversation's nonce and number, for
    ///   a query) → [`Refusal::Unauthenticated`], reading and spending nothing (the refusal
    ///   depends on the frame alone);
    /// - a hello request → `Hello(hello)` with [`Hello::conversation`] filled in (cheap to build
    ///   each time: [`Reporter::hello`](crate::reporter::Reporter::hello) copies the
    ///   configuration and the remaining budget); unless it carries the open conversation's
    ///   nonce (a retry), it opens a new conversation (type docs);
    /// - a query → [`ReplyCache::answer`] with `fresh(query, None)`;
    /// - a fed query → the same, keyed as the type docs say, with `fresh(query, Some(reading))`
    ///   (the device decides whether it takes fed readings: [`Refusal::FeedRefused`] if not);
    /// - an intact frame that does not parse → a [`Refusal`] (see `From<DecodeError>`);
    /// - a device → learner message → [`Refusal::Unexpected`].
    ///
    /// The reply carries the frame's sequence number, and its tag binds the frame's tag, the
    /// conversation's nonce and number ([`Reply::auth`]; a hello: the request's nonce) — except
    /// the refusal of a frame refused before its tag was verified
    /// ([`DecodeError::is_before_tag`](super::DecodeError::is_before_tag): reasons 7, 12 and a
    /// wrong type or length), which is tagged under the all-zero nonce and conversation 0: the
    /// frame may be a learner's request altered on the way, and its refusal must not verify as
    /// the answer to that request. Frames that fail their length or checksum check never get
    /// here ([`Frame::new_checked`]); the device stays silent and the learner's retry recovers.
    pub fn respond<T: AsRef<[u8]>>(
        &mut self,
        frame: &Frame<T>,
        auth: &Auth,
        hello: Hello,
        fresh: impl FnOnce(&Query, Option<f64>) -> Message,
    ) -> Reply {
        let seq = frame.seq();
        let open = Auth {
            nonce: self.nonce,
            conversation: self.conversation,
            answers: [0; super::TAG_LEN],
            ..*auth
        };
        let mut reply_to = open;
        let repr = match Repr::parse(frame, &open) {
            Ok(Repr { message: Message::HelloRequest(nonce), .. }) => {
                // A new nonce opens a new conversation, if the count allows (type docs); the
                // open conversation's own nonce is a retry and changes nothing.
                if (nonce != self.nonce || self.conversation == 0)
                    && let Some(next) = self.conversation.checked_add(1)
                {
                    *self = Self { nonce, conversation: next, last_fresh: Some(seq), ..Self::new() };
                }
                reply_to.nonce = nonce;
                Repr::new(seq, Message::Hello(Hello { conversation: self.conversation, ..hello }))
            }
            Ok(Repr { message: Message::Query(q), .. }) => self.answer_keyed(seq, &q, None, fresh),
            Ok(Repr { message: Message::FedQuery(f), .. }) => {
                self.answer_keyed(seq, &f.query, Some(f.reading), fresh)
            }
            Ok(_) => Repr::new(seq, Message::Refusal(Refusal::Unexpected)),
            Err(e) => {
                // A frame whose tag was never verified is anyone's (a learner's query with its
                // version or type byte changed, say): its refusal is tagged under the all-zero
                // nonce and conversation 0, which no learner's conversation has, so no learner
                // takes it as the answer to its request.
                if e.is_before_tag() {
                    (reply_to.nonce, reply_to.conversation) = ([0; NONCE_LEN], 0);
                }
                Repr::new(seq, Message::Refusal(e.into()))
            }
        };
        Reply { repr, auth: reply_to.answering(frame.tag()) }
    }

    /// Forgets every query.
    pub fn clear(&mut self) {
        *self = Self::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{LinkKey, MAX_FRAME_LEN};

    /// After `u32::MAX` conversations in one boot the count stops instead of wrapping to a
    /// number used before: a new nonce is answered with the open conversation's number, and the
    /// open conversation goes on (its learner's queries verify, no other's can).
    #[test]
    fn the_conversation_count_stops_at_its_end_and_never_wraps() {
        let auth = Auth { session: 1, ..Auth::new(LinkKey::new([7; 32]), 3) };
        let mut cache = ReplyCache { conversation: u32::MAX - 1, nonce: [9; NONCE_LEN], ..ReplyCache::new() };
        let hello = Hello {
            device_id: 3,
            config: crate::public::DeviceConfig {
                b: crate::params::Bound::new(1.0).unwrap(),
                r: crate::params::Bound::new(1.0).unwrap(),
                policy: crate::budget::BudgetPolicy::new(
                    crate::params::Epsilon::new(1.0).unwrap(),
                    crate::params::Epsilon::new(2.0).unwrap(),
                )
                .unwrap(),
            },
            budget_remaining: 2.0,
            session: 1,
            conversation: 0,
        };
        let send = |cache: &mut ReplyCache, repr: Repr, under: &Auth| {
            let mut buf = [0u8; MAX_FRAME_LEN];
            let raw = repr.emit(&mut buf, under).unwrap();
            let frame = Frame::new_checked(&*raw).unwrap();
            cache.respond(&frame, &auth, hello, |_, _| Message::Refusal(Refusal::FeedRefused)).repr.message
        };
        let conversation_of = |m: Message| match m {
            Message::Hello(h) => h.conversation,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            conversation_of(send(&mut cache, Repr::new(1, Message::HelloRequest([1; 16])), &auth)),
            u32::MAX
        );
        let open = Auth { nonce: [1; 16], conversation: u32::MAX, ..auth };
        for (seq, nonce) in [(2, [2; 16]), (3, [9; 16]), (4, [0; 16])] {
            assert_eq!(
                conversation_of(send(&mut cache, Repr::new(seq, Message::HelloRequest(nonce)), &auth)),
                u32::MAX
            );
            assert_eq!((cache.conversation, cache.nonce), (u32::MAX, [1; 16]), "nothing reopened");
        }
        let q =
            Query { round: 0, action: 0, epsilon: crate::params::Epsilon::new(1.0).unwrap(), level: None };
        assert_eq!(
            send(&mut cache, Repr::new(5, Message::Query(q)), &open),
            Message::Refusal(Refusal::FeedRefused)
        );
        let other = Auth { nonce: [2; 16], ..open };
        assert_eq!(
            send(&mut cache, Repr::new(6, Message::Query(q)), &other),
            Message::Refusal(Refusal::Unauthenticated)
        );
    }
}
