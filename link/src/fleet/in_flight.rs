//! A fleet with many queries in flight at once, each at a distinct member.
//!
//! A sequential [`Fleet`] waits for each report before it sends the next query, so a fleet of
//! 10⁴ users over a broker learns no faster than one device: the learner spends its time
//! waiting for round trips. An [`InFlightFleet`] sends a query ([`Device::submit`]) to a member
//! with no query outstanding and returns at once; a pool of worker threads waits for the
//! members' replies, each running the member's own [`WireClient`](crate::client::WireClient)
//! request, unchanged: the same resends, closing hellos and checks as a sequential fleet.
//!
//! What a member's answer does to the fleet (its budget, a skip and its backoff, a refusal) is
//! settled in the order the queries were submitted, whatever order the replies arrive in, and
//! a round whose member failed is asked again here, of the next member routing picks. So with
//! the learner collecting reports in submission order and no member failing, the routing and
//! every report are those of the sequential fleet, whatever the threads' timing.

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
    /// Queries submitted and not yet settled, by ticket: their round and the member asked
    /// (`None`: every member was busy when it was submitted).
    flights: BTreeMap<u64, (Round, Option<usize>)>,
    /// Replies that arrived before their query's turn to settle.
    arrived: HashMap<u64, Outcome>,
    /// Queries submitted while every member that could take them was busy, oldest first: each
    /// is sent as a member is freed, before any later query.
    waiting: VecDeque<u64>,
    /// Settled queries whose reports were not collected yet.
    settled: HashMap<u64, Result<f64, DeviceError>>,
    next_ticket: u64,
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
            settled: HashMap::new(),
            next_ticket: 0,
        })
    }

    /// The fleet, once every query in flight has settled.
    pub fn into_fleet(mut self) -> Fleet<L> {
        self.drain();
        self.fleet // the job queue is dropped with the rest: the workers end
    }

    /// The member to ask for `round` (not busy, not asked for it yet), sent its query; `None`
    /// if every member that could take it is busy (it is asked when it settles).
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

    /// Settles the query `ticket`: waits for its reply, applies it to the fleet, and asks other
    /// members here if it failed (or was never sent).
    fn settle(&mut self, ticket: u64) {
        let Some((mut round, member)) = self.flights.remove(&ticket) else { return };
        self.waiting.retain(|&t| t != ticket);
        let answered = member.and_then(|i| {
            let outcome = self.wait(ticket);
            self.fleet.members[i].busy = false;
            let answered = self.fleet.settle(i, round.number, outcome);
            self.send_waiting();
            answered
        });
        let result = match answered {
            Some(result) => result,
            None => self.ask_here(&mut round),
        };
        self.settled.insert(ticket, result);
    }

    /// Sends the waiting queries, oldest first, while members can take them.
    fn send_waiting(&mut self) {
        while let Some(&ticket) = self.waiting.front() {
            let Some((mut round, _)) = self.flights.remove(&ticket) else {
                self.waiting.pop_front();
                continue;
            };
            let member = self.dispatch(ticket, &mut round);
            self.flights.insert(ticket, (round, member));
            if member.is_none() {
                return;
            }
            self.waiting.pop_front();
        }
    }

    /// Asks members here until one answers `round`. When every member that could is busy with
    /// a later query, the oldest of those is settled first (early, so its member is free).
    fn ask_here(&mut self, round: &mut Round) -> Result<f64, DeviceError> {
        loop {
            if let Some(result) = self.fleet.ask_here(round) {
                return result;
            }
            match self.flights.iter().find(|(_, (_, member))| member.is_some()) {
                Some((&busy, _)) => self.settle(busy),
                None => return Err(self.fleet.unanswered(std::mem::take(round))),
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
        if member.is_none() {
            self.waiting.push_back(ticket);
        }
        self.flights.insert(ticket, (round, member));
        Ok(Submitted::Pending(ticket))
    }

    /// Settles every query submitted up to `ticket`, in submission order, and gives `ticket`'s
    /// report.
    fn collect(&mut self, ticket: u64) -> Result<f64, DeviceError> {
        while let Some((&oldest, _)) = self.flights.first_key_value().filter(|&(&t, _)| t <= ticket) {
            self.settle(oldest);
        }
        self.settled.remove(&ticket).unwrap_or(Err(DeviceError::UnknownTicket(ticket)))
    }

    fn drain(&mut self) {
        while let Some((&oldest, _)) = self.flights.first_key_value() {
            self.settle(oldest);
        }
        self.settled.clear();
    }
}
