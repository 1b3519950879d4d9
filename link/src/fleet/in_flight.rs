//! A fleet with many queries in flight at once, each at a distinct member.
//!
//! A sequential [`Fleet`] waits for each report before it sends the next query, so a fleet of
//! 10⁴ users over a broker learns no faster than one device: the learner spends its time
//! waiting for round trips. An [`InFlightFleet`] sends a query ([`Device::submit`]) to a member
//! with no query outstanding and returns at once; a pool of worker threads waits for the
//! members' replies, each running the member's own [`WireClient`](crate::client::WireClient)
//! request, unchanged: the same resends, closing hellos and checks as a sequential fleet.
//!
//! Each report is given for the query it answers, in the order the learner collects them. A
//! query whose member failed is asked again of another member when the learner collects it,
//! here and now: in submission order, so with the learner collecting in submission order, the
//! routing is decided as one query at a time would decide it. With round-robin routing and no
//! member failing, the reports and the ledger are those of the sequential fleet, whatever the
//! threads' timing. A member busy with a query is never asked another, and a benched (silent)
//! member is not asked while a rested one is only busy: queries in flight wait for it instead.
//! A fleet drained with queries outstanding ([`Device::drain`]) waits for those sent and counts
//! what they spent; it sends nothing more and asks no one again.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

use super::{Fleet, Outcome, Round, lock};
use crate::client::{LinkError, WireClient};
use crate::device::{Device, DeviceError, MemberRecord, Submitted};
use crate::transport::Link;
use ldp_core::Epsilon;

/// A [`Fleet`] with up to `n` queries outstanding at distinct members (module docs).
pub struct InFlightFleet<L> {
    fleet: Fleet<L>,
    jobs: Sender<Job<L>>,
    replies: Receiver<(u64, Outcome)>,
    /// Queries submitted and not yet collected, by ticket.
    flights: BTreeMap<u64, Flight>,
    /// Replies that arrived before their query was waited for.
    arrived: HashMap<u64, Outcome>,
    /// Queries submitted while every member that could take them was busy, oldest first: each
    /// is sent as a member is freed, before any later query.
    waiting: VecDeque<u64>,
    /// Reports of queries collected before the learner asked for them (it collected a later
    /// one first).
    early: HashMap<u64, Result<f64, DeviceError>>,
    next_ticket: u64,
}

/// A query submitted and not yet collected: its round, and where it is.
struct Flight {
    round: Round,
    state: State,
}

enum State {
    /// Not sent yet: every member that could take it was busy.
    Waiting,
    /// Sent to member `i`, its reply awaited.
    Sent(usize),
    /// Its reply applied to the fleet: the round's report or error, or `None` if the member
    /// failed and another is to be asked when the query is collected.
    Landed(Option<Result<f64, DeviceError>>),
}

/// One member's query for a worker: its ticket, the client, the sequence number, the action,
/// ε and the level.
struct Job<L> {
    ticket: u64,
    client: Arc<Mutex<WireClient<L>>>,
    seq: u32,
    action: u32,
    epsilon: Epsilon,
    level: Option<ldp_core::TruncationLevel>,
}

impl<L: Link + Send + 'static> InFlightFleet<L> {
    /// `fleet` with `n` worker threads, so up to `n` queries wait for replies at once.
    pub fn new(fleet: Fleet<L>, n: usize) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<Job<L>>();
        let (reply, replies) = mpsc::channel();
        let queue = Arc::new(Mutex::new(queue));
        for k in 0..n.max(1) {
            let (queue, reply) = (Arc::clone(&queue), reply.clone());
            std::thread::Builder::new().name(format!("ldp-query-{k}")).spawn(move || work(&queue, &reply))?;
        }
        Ok(Self {
            fleet,
            jobs,
            replies,
            flights: BTreeMap::new(),
            arrived: HashMap::new(),
            waiting: VecDeque::new(),
            early: HashMap::new(),
            next_ticket: 0,
        })
    }

    /// The fleet, once every query sent has landed (the others are dropped unsent).
    pub fn into_fleet(mut self) -> Fleet<L> {
        self.drain();
        self.fleet // the job queue is dropped with the rest: the workers end
    }

    /// The member to ask for `round` (not busy, not asked for it yet), sent its query; `None`
    /// if no member can take it now.
    fn dispatch(&mut self, ticket: u64, round: &mut Round) -> Option<usize> {
        while let Some(i) = self.fleet.pick(&round.tried) {
            let Some(seq) = self.fleet.start(i, round) else { continue };
            let m = &mut self.fleet.members[i];
            let (action, epsilon, level) = (round.action, self.fleet.epsilon, round.level);
            let job = Job { ticket, client: Arc::clone(&m.client), seq, action, epsilon, level };
            if self.jobs.send(job).is_err() {
                // No worker left (none ends while `self` holds the queue): asked here instead.
                let outcome = lock(&m.client).query(seq, action, epsilon, level);
                self.arrived.insert(ticket, outcome);
            }
            m.busy = true;
            return Some(i);
        }
        None
    }

    /// Sends the waiting queries, oldest first, while members can take them.
    fn send_waiting(&mut self) {
        while let Some(&ticket) = self.waiting.front() {
            let Some(flight) = self.flights.get_mut(&ticket) else {
                self.waiting.pop_front();
                continue;
            };
            let mut round = std::mem::take(&mut flight.round);
            let member = self.dispatch(ticket, &mut round);
            if let Some(flight) = self.flights.get_mut(&ticket) {
                flight.round = round;
                if let Some(i) = member {
                    flight.state = State::Sent(i);
                }
            }
            if member.is_none() {
                return;
            }
            self.waiting.pop_front();
        }
    }

    /// Waits for the reply to the sent query `ticket`, frees its member and applies the reply
    /// to the fleet (budget, skip, backoff); asks no one else.
    fn land(&mut self, ticket: u64) {
        let Some(flight) = self.flights.get(&ticket) else { return };
        let (State::Sent(i), number) = (&flight.state, flight.round.number) else { return };
        let i = *i;
        let outcome = self.wait(ticket);
        self.fleet.members[i].busy = false;
        let landed = self.fleet.settle(i, number, outcome);
        if let Some(flight) = self.flights.get_mut(&ticket) {
            flight.state = State::Landed(landed);
        }
    }

    /// The report of `ticket` (every earlier query collected): its reply, or, if its member
    /// failed or it was never sent, another member's, asked here.
    fn finish(&mut self, ticket: u64) -> Result<f64, DeviceError> {
        self.land(ticket);
        self.waiting.retain(|&t| t != ticket);
        let Some(Flight { mut round, state }) = self.flights.remove(&ticket) else {
            return Err(DeviceError::UnknownTicket(ticket));
        };
        if let State::Landed(Some(result)) = state {
            return result;
        }
        loop {
            if let Some(result) = self.fleet.ask_here(&mut round) {
                return result;
            }
            // Every member that could answer is busy with a later query: the oldest of those
            // lands (its member freed; its own retry, if it failed, waits for its turn).
            let busy = self.flights.iter().find(|(_, f)| matches!(f.state, State::Sent(_)));
            match busy.map(|(&t, _)| t) {
                Some(t) => self.land(t),
                None => return Err(self.fleet.unanswered(round)),
            }
        }
    }

    /// The reply to `ticket`, waiting for it.
    fn wait(&mut self, ticket: u64) -> Outcome {
        loop {
            if let Some(outcome) = self.arrived.remove(&ticket) {
                return outcome;
            }
            match self.replies.recv() {
                Ok((t, outcome)) => {
                    self.arrived.insert(t, outcome);
                }
                // Every worker is gone (none can be while `self` holds the job queue).
                Err(_) => {
                    return Err(LinkError::Io(std::io::Error::other("the fleet's query threads stopped")));
                }
            }
        }
    }
}

/// A worker: runs each job's query on its member's client and sends the outcome back.
fn work<L: Link>(queue: &Mutex<Receiver<Job<L>>>, reply: &Sender<(u64, Outcome)>) {
    loop {
        let job = match lock(queue).recv() {
            Ok(job) => job,
            Err(_) => return, // the fleet is gone
        };
        let query = std::panic::AssertUnwindSafe(|| {
            lock(&job.client).query(job.seq, job.action, job.epsilon, job.level)
        });
        let outcome = std::panic::catch_unwind(query)
            .unwrap_or_else(|_| Err(LinkError::Io(std::io::Error::other("a query thread panicked"))));
        drop(job.client); // before the reply: a settled member's client is the fleet's alone
        if reply.send((job.ticket, outcome)).is_err() {
            return;
        }
    }
}

impl<L: Link + Send + 'static> Device for InFlightFleet<L> {
    /// One query, waited for (after every query submitted before it has settled).
    fn query(&mut self, arm: usize, level: Option<f64>) -> Result<f64, DeviceError> {
        match self.submit(arm, level)? {
            Submitted::Answered(report) => Ok(report),
            Submitted::Pending(ticket) => self.collect(ticket),
        }
    }

    fn ledger(&self) -> Option<Vec<MemberRecord>> {
        Some(self.fleet.ledger())
    }

    fn submit(&mut self, arm: usize, level: Option<f64>) -> Result<Submitted, DeviceError> {
        let mut round = self.fleet.open_round(arm, level)?;
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        // Behind a waiting query, a new one waits too: queries are sent in submission order.
        let member = if self.waiting.is_empty() { self.dispatch(ticket, &mut round) } else { None };
        let state = match member {
            Some(i) => State::Sent(i),
            None => {
                self.waiting.push_back(ticket);
                State::Waiting
            }
        };
        self.flights.insert(ticket, Flight { round, state });
        Ok(Submitted::Pending(ticket))
    }

    /// Collects every query submitted up to `ticket`, in submission order (an earlier one's
    /// report is kept for its own `collect`), and gives `ticket`'s report.
    fn collect(&mut self, ticket: u64) -> Result<f64, DeviceError> {
        if let Some(result) = self.early.remove(&ticket) {
            return result;
        }
        if !self.flights.contains_key(&ticket) {
            return Err(DeviceError::UnknownTicket(ticket)); // never issued, or collected
        }
        while let Some((&oldest, _)) = self.flights.first_key_value().filter(|&(&t, _)| t < ticket) {
            let result = self.finish(oldest);
            self.early.insert(oldest, result);
        }
        let result = self.finish(ticket);
        // Members freed take the waiting queries; not once a round has failed (the run is
        // likely to stop: what is sent now would be spent for nothing).
        let failed = result.is_err()
            || self.early.values().any(Result::is_err)
            || self.flights.values().any(|f| matches!(f.state, State::Landed(Some(Err(_)))));
        if !failed {
            self.send_waiting();
        }
        result
    }

    /// Waits for every query sent and applies their replies (what they spent); drops their
    /// reports and every query not sent, sending nothing more and asking no one again.
    fn drain(&mut self) {
        let sent: Vec<u64> =
            self.flights.iter().filter(|(_, f)| matches!(f.state, State::Sent(_))).map(|(&t, _)| t).collect();
        for ticket in sent {
            self.land(ticket);
        }
        self.flights.clear();
        self.waiting.clear();
        self.early.clear();
    }
}
