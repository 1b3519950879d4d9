//! The device's answer to a retried query: the same reply, without spending budget twice.

use super::auth::NONCE_LEN;
use super::{Auth, DecodeError, EncodeError, Frame, Hello, Message, Query, Refusal, Repr};

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
/// **Conversations (wire format 5).** A hello request *offers* a conversation and the learner's
/// first query in it *opens* it: the device counts the offers of a boot (1, 2, …, never
/// repeated: [`Hello::conversation`] tells the number), and every query, report and refusal is
/// tagged under the learner's nonce *and* that number. In detail:
///
/// - An authenticated hello request with a new nonce makes an offer (the nonce, the next number,
///   and the request's sequence number as the floor for fresh queries; it replaces an earlier
///   offer) and **freezes** the open conversation: that one takes no fresh query any more
///   ([`Refusal::StaleSequence`]), but still answers retries of its remembered queries from the
///   cache. A hello request with the nonce of the open conversation or of the offer (the
///   learner's retry, or a copy of it) is answered with that conversation's number and changes
///   nothing.
/// - A query that verifies under the open conversation is answered as above. One that verifies
///   under the offer opens it: it becomes the open conversation (the cache of the one before is
///   forgotten) and the query is answered in it. Anything else is [`Refusal::Unauthenticated`]:
///   one learner at a time.
///
/// So a recorded hello request — tagged in session 0, it verifies in every boot — opens
/// nothing: its offer is taken only by a query under its nonce and new number, which its
/// replayer, lacking the key, cannot make. It cannot reopen an old conversation, make an old
/// query fresh again or move the floor of any conversation. What it can do is freeze the open
/// conversation, so that its learner's next fresh query is refused (nothing read or spent) and
/// the learner greets the device again: a denial of service of one exchange and one hello per
/// replayed frame. Retries stay answered from the cache, so even a reply lost on the link
/// costs nothing more than without the replay: the learner's resend gets it. A query that the
/// link withheld from a learner is dead once the learner's next hello request has reached the
/// device (the conversation is frozen), so it is never spent after the learner gave up on it.
/// (Wire format 4 moved the device to a hello request's nonce at once and took its number as a
/// floor for the whole boot: a recorded one ended the learner's conversation, and one numbered
/// near `u32::MAX` left learners no fresh numbers until a restart.)
///
/// The count is a `u32`: after 2^32 − 1 offers in one boot (days of hello requests without a
/// pause) the device makes no more until it restarts; a hello request with a new nonce is then
/// answered with the open conversation's number, freezing nothing, and the open conversation's
/// learner goes on.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReplyCache {
    /// `(seq, query, fed, reply)`.
    entries: [Option<(u32, Query, bool, Message)>; REPLY_CACHE_LEN],
    next: usize,
    /// The last sequence number answered afresh in the conversation, or the floor its hello
    /// request set.
    last_fresh: Option<u32>,
    /// The nonce of the hello request that offered the open conversation (all zero before
    /// any).
    nonce: [u8; NONCE_LEN],
    /// The open conversation's number (0 before any).
    conversation: u32,
    /// Whether a hello request since made an offer: the open conversation takes no fresh query.
    frozen: bool,
    /// The offer: nonce, number (0: none) and floor for fresh queries.
    offer: ([u8; NONCE_LEN], u32, u32),
    /// How many offers this boot: the last number handed out.
    count: u32,
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
            frozen: false,
            offer: ([0; NONCE_LEN], 0, 0),
            count: 0,
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
        if self.frozen || self.last_fresh.is_some_and(|last| seq <= last) {
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

    /// The open conversation's number ([`Hello::conversation`]; 0 before any learner's first
    /// query under an offer).
    pub fn conversation(&self) -> u32 {
        self.conversation
    }

    /// The device's whole answer to a checked frame, authenticated under `auth` (the device's
    /// key, id and session: its boot number; its nonce and conversation are ignored, the cache
    /// keeps the conversations'), one mapping for every firmware:
    ///
    /// - a hello request → `Hello(hello)` with [`Hello::conversation`] filled in (cheap to build
    ///   each time: [`Reporter::hello`](crate::reporter::Reporter::hello) copies the
    ///   configuration and the remaining budget): the number of the conversation it offers,
    ///   or of the open one or the offer whose nonce it carries (type docs);
    /// - a query → [`ReplyCache::answer`] with `fresh(query, None)`, if its tag verifies under
    ///   the open conversation or opens the offer (type docs);
    /// - a fed query → the same, keyed as the type docs say, with `fresh(query, Some(reading))`
    ///   (the device decides whether it takes fed readings: [`Refusal::FeedRefused`] if not);
    /// - a frame whose tag does not verify → [`Refusal::Unauthenticated`], reading and spending
    ///   nothing (the refusal depends on the frame alone);
    /// - an intact frame that does not parse → a [`Refusal`] (see `From<DecodeError>`);
    /// - a device → learner message → [`Refusal::Unexpected`].
    ///
    /// The reply carries the frame's sequence number, and its tag binds the frame's tag and the
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
        let mut reply_to = Auth {
            nonce: self.nonce,
            conversation: self.conversation,
            answers: [0; super::TAG_LEN],
            ..*auth
        };
        let mut parsed = Repr::parse(frame, &reply_to);
        let (offer_nonce, offer_number, offer_floor) = self.offer;
        if parsed == Err(DecodeError::Unauthenticated) && offer_number != 0 {
            // The learner's first query in the conversation it was offered opens it.
            let offered = Auth { nonce: offer_nonce, conversation: offer_number, ..reply_to };
            if let Ok(r @ Repr { message: Message::Query(_) | Message::FedQuery(_), .. }) =
                Repr::parse(frame, &offered)
            {
                *self = Self {
                    nonce: offer_nonce,
                    conversation: offer_number,
                    last_fresh: Some(offer_floor),
                    count: self.count,
                    ..Self::new()
                };
                (reply_to, parsed) = (offered, Ok(r));
            }
        }
        let repr = match parsed {
            Ok(Repr { message: Message::HelloRequest(nonce), .. }) => {
                // The open conversation's or the offer's own nonce: a retry, nothing changes.
                // A new one: a new offer, if the count allows, which freezes the open one.
                let number = if nonce == self.nonce && self.conversation != 0 {
                    self.conversation
                } else if nonce == offer_nonce && offer_number != 0 {
                    offer_number
                } else if let Some(next) = self.count.checked_add(1) {
                    (self.count, self.offer, self.frozen) = (next, (nonce, next, seq), true);
                    next
                } else {
                    self.conversation
                };
                reply_to.nonce = nonce;
                Repr::new(seq, Message::Hello(Hello { conversation: number, ..hello }))
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

    /// After `u32::MAX` offers in one boot the count stops instead of wrapping to a number used
    /// before: a hello request with a new nonce is then answered with the open conversation's
    /// number, freezing nothing, and the open conversation goes on (its learner's queries
    /// verify and are answered, no other's).
    #[test]
    fn the_conversation_count_stops_at_its_end_and_never_wraps() {
        let auth = Auth { session: 1, ..Auth::new(LinkKey::new([7; 32]), 3) };
        let mut cache = ReplyCache { count: u32::MAX - 1, ..ReplyCache::new() };
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
        let number = |m: Message| match m {
            Message::Hello(h) => h.conversation,
            other => panic!("{other:?}"),
        };
        let q =
            Query { round: 0, action: 0, epsilon: crate::params::Epsilon::new(1.0).unwrap(), level: None };
        // The last number: offered, then opened by its learner's first query.
        assert_eq!(number(send(&mut cache, Repr::new(1, Message::HelloRequest([1; 16])), &auth)), u32::MAX);
        let open = Auth { nonce: [1; 16], conversation: u32::MAX, ..auth };
        assert_eq!(
            send(&mut cache, Repr::new(2, Message::Query(q)), &open),
            Message::Refusal(Refusal::FeedRefused)
        );
        // No more offers: new nonces get the open number, nothing frozen or reopened.
        for (seq, nonce) in [(3, [2; 16]), (4, [9; 16]), (5, [0; 16])] {
            assert_eq!(
                number(send(&mut cache, Repr::new(seq, Message::HelloRequest(nonce)), &auth)),
                u32::MAX
            );
            assert_eq!((cache.conversation, cache.nonce, cache.frozen), (u32::MAX, [1; 16], false));
        }
        assert_eq!(
            send(&mut cache, Repr::new(6, Message::Query(q)), &open),
            Message::Refusal(Refusal::FeedRefused)
        );
        let other = Auth { nonce: [2; 16], ..open };
        assert_eq!(
            send(&mut cache, Repr::new(7, Message::Query(q)), &other),
            Message::Refusal(Refusal::Unauthenticated)
        );
    }
}
