//! A fleet with queries in flight is the sequential fleet, only concurrent: its queries are
//! outstanding at distinct members at once, and, collected in submission order with round-robin
//! routing, it gives the sequential fleet's reports, errors and ledger bit for bit, with as many
//! members as queries in flight or fewer, up to and past the fleet's exhaustion; a silent
//! member's rounds go to the others, and it is benched as long as one query at a time would
//! bench it; a fleet drained with queries outstanding counts what those sent spent, and sends
//! nothing more. A fleet with a record of its queries writes each before it is sent: killed with
//! queries in flight, its record holds exactly those as sent and not done; a query that cannot
//! be recorded is not sent.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use ldp_core::Epsilon;
use ldp_learn::env::{Environment, SensorEnv};
use ldp_link::client::WireClient;
use ldp_link::device::{Device, DeviceError, MemberRecord, Submitted};
use ldp_link::fleet::record::{QueryRecord, Unanswered, read_unanswered, record_start};
use ldp_link::fleet::{Fleet, InFlightFleet, Member, MemberLink, Routing, in_process};
use ldp_link::transport::Link;

type Sim = MemberLink<Arc<dyn Environment>>;

fn env() -> Arc<dyn Environment> {
    Arc::new(SensorEnv::new(10, 1.0).expect("a sensor environment"))
}

fn eps() -> Epsilon {
    Epsilon::new(1.0).expect("ε")
}

fn members(env: &Arc<dyn Environment>, n: usize, budget: f64) -> Vec<Member<Sim>> {
    in_process(Arc::clone(env), 42, n, eps(), budget).expect("members")
}

/// `rounds` queries with up to `in_flight` outstanding, each collected (oldest first) before
/// the next is submitted once `in_flight` are out: the run loop of `host-sim run --in-flight`.
fn pipelined(device: &mut dyn Device, rounds: usize, in_flight: usize) -> Result<Vec<u64>, DeviceError> {
    let mut out = Vec::new();
    let mut flight = std::collections::VecDeque::new();
    for t in 0..rounds {
        if flight.len() == in_flight {
            out.push(collected(device, flight.pop_front())?);
        }
        flight.push_back(device.submit(t % 10, None)?);
    }
    while let Some(s) = flight.pop_front() {
        out.push(collected(device, Some(s))?);
    }
    Ok(out)
}

fn collected(device: &mut dyn Device, s: Option<Submitted>) -> Result<u64, DeviceError> {
    match s {
        Some(Submitted::Answered(v)) => Ok(v.to_bits()),
        Some(Submitted::Pending(t)) => device.collect(t).map(f64::to_bits),
        None => Err(DeviceError::UnknownTicket(u64::MAX)),
    }
}

fn spent(ledger: &[MemberRecord]) -> Vec<(u64, u64, u64, u64)> {
    ledger.iter().map(|r| (r.id, r.spent.to_bits(), r.reports, r.skipped)).collect()
}

#[test]
fn in_flight_queries_give_the_sequential_fleets_reports_and_ledger() {
    let env = env();
    for (size, in_flight) in [(20, 8), (3, 8), (8, 8), (5, 1)] {
        let mut sequential = Fleet::new(members(&env, size, 50.0), eps(), Routing::RoundRobin, 7);
        let expected: Vec<u64> =
            (0..60).map(|t| sequential.query(t % 10, None).expect("a report").to_bits()).collect();
        let fleet = Fleet::new(members(&env, size, 50.0), eps(), Routing::RoundRobin, 7);
        let mut concurrent = InFlightFleet::new(fleet, in_flight).expect("workers");
        let got = pipelined(&mut concurrent, 60, in_flight).expect("every round answered");
        assert_eq!(got, expected, "{size} members, {in_flight} in flight");
        assert_eq!(
            spent(&concurrent.ledger().expect("a ledger")),
            spent(&sequential.ledger()),
            "{size} members, {in_flight} in flight"
        );
    }
}

/// Queries sent over the gated links, and how many must be out before any reply is read.
type Gate = Arc<(Mutex<(usize, usize)>, Condvar)>;

/// A member's link whose replies wait until the gate's count of queries is out (or 30 s have
/// passed, then a reply is withheld: the member looks silent).
struct Gated {
    inner: Sim,
    gate: Gate,
}

impl Link for Gated {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let (state, cv) = &*self.gate;
        state.lock().expect("gate").0 += 1;
        cv.notify_all();
        self.inner.send(bytes)
    }

    fn recv_byte(&mut self, timeout: Duration) -> io::Result<Option<u8>> {
        let (state, cv) = &*self.gate;
        let until = Instant::now() + Duration::from_secs(30);
        let mut s = state.lock().expect("gate");
        while s.0 < s.1 {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            s = cv.wait_timeout(s, left).expect("gate").0;
        }
        drop(s);
        self.inner.recv_byte(timeout)
    }
}

/// `m` on a new client over `link(m's link)`, greeted, trying once or `tries` times.
fn relinked<L: Link>(m: Member<Sim>, tries: u32, link: impl FnOnce(Sim, u64) -> L) -> Member<L> {
    let client = m.into_client().expect("no query in flight");
    let auth = *client.auth();
    let mut client = WireClient::new(link(client.into_link(), auth.device_id), auth);
    client.hello().expect("hello");
    client.tries = tries;
    client.timeout = Duration::from_millis(5);
    Member::new(client).expect("member")
}

#[test]
fn queries_in_flight_are_outstanding_at_distinct_members_at_once() {
    // Each reply waits until 8 queries are out: only a fleet that sends 8 before it waits for
    // any reply gets them all without a member falling silent.
    let env = env();
    let gate: Gate = Arc::new((Mutex::new((0, 0)), Condvar::new()));
    let gated: Vec<Member<Gated>> = members(&env, 8, 50.0)
        .into_iter()
        .map(|m| relinked(m, 1, |inner, _| Gated { inner, gate: Arc::clone(&gate) }))
        .collect();
    {
        let mut s = gate.0.lock().expect("gate");
        s.1 = s.0 + 8;
    }
    let mut concurrent =
        InFlightFleet::new(Fleet::new(gated, eps(), Routing::RoundRobin, 0), 8).expect("workers");
    let tickets: Vec<Submitted> = (0..8).map(|t| concurrent.submit(t, None).expect("sent")).collect();
    for s in tickets {
        collected(&mut concurrent, Some(s)).expect("a report");
    }
    let ledger = concurrent.ledger().expect("ledger");
    assert!(ledger.iter().all(|r| r.reports == 1 && r.skipped == 0), "{ledger:?}");
}

/// A member's link, cut for good when `dead` (frames vanish, nothing comes back).
struct Cut {
    inner: Sim,
    dead: bool,
}

impl Link for Cut {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.dead { Ok(()) } else { self.inner.send(bytes) }
    }

    fn recv_byte(&mut self, timeout: Duration) -> io::Result<Option<u8>> {
        if self.dead {
            std::thread::sleep(timeout); // as a silent device's link would wait
            Ok(None)
        } else {
            self.inner.recv_byte(timeout)
        }
    }
}

/// A round-robin fleet of `n` in-process members asked `tries` times each, the links of those
/// at `dead` (0-based) cut once they are greeted.
fn cut_fleet(env: &Arc<dyn Environment>, n: usize, dead: &[usize], tries: u32) -> Fleet<Cut> {
    let members: Vec<Member<Cut>> = members(env, n, 500.0)
        .into_iter()
        .map(|m| relinked(m, tries, |inner, _| Cut { inner, dead: false }))
        .collect();
    let mut fleet = Fleet::new(members, eps(), Routing::RoundRobin, 0);
    for &i in dead {
        drop(fleet.members_mut()[i].client_mut().replace_link(Cut { inner: placeholder(env), dead: true }));
    }
    fleet
}

#[test]
fn a_silent_members_rounds_in_flight_go_to_the_others() {
    let env = env();
    let mut concurrent = InFlightFleet::new(cut_fleet(&env, 6, &[1], 2), 4).expect("workers");
    let reports = pipelined(&mut concurrent, 40, 4).expect("every round answered");
    assert_eq!(reports.len(), 40);
    let ledger = concurrent.ledger().expect("ledger");
    assert_eq!(ledger[1].reports, 0, "{ledger:?}");
    assert!((1..=4).contains(&ledger[1].skipped), "asked, then benched: {ledger:?}");
    assert_eq!(ledger.iter().map(|r| r.reports).sum::<u64>(), 40);
    for r in &ledger {
        assert!((r.spent - r.reports as f64).abs() < 1e-9, "each report charged once: {r:?}");
    }
}

/// Another in-process device's link, to stand behind a cut one.
fn placeholder(env: &Arc<dyn Environment>) -> Sim {
    members(env, 1, 1.0).pop().and_then(Member::into_client).expect("a member").into_link()
}

/// `submitted` queries to a round-robin fleet of `size` in-process members with `in_flight`
/// workers, then drained: the fleet (its reports dropped).
fn drained(
    env: &Arc<dyn Environment>,
    size: usize,
    submitted: usize,
    in_flight: usize,
) -> InFlightFleet<Sim> {
    let fleet = Fleet::new(members(env, size, 50.0), eps(), Routing::RoundRobin, 0);
    let mut concurrent = InFlightFleet::new(fleet, in_flight).expect("workers");
    for t in 0..submitted {
        assert!(matches!(concurrent.submit(t, None), Ok(Submitted::Pending(_))));
    }
    concurrent.drain();
    concurrent
}

#[test]
fn a_drained_fleet_counts_what_its_outstanding_queries_spent() {
    let env = env();
    let mut concurrent = drained(&env, 10, 5, 8);
    let ledger = concurrent.ledger().expect("ledger");
    assert_eq!(ledger.iter().map(|r| r.reports).sum::<u64>(), 5, "{ledger:?}");
    assert!((ledger.iter().map(|r| r.spent).sum::<f64>() - 5.0).abs() < 1e-9, "{ledger:?}");
    assert!(
        matches!(concurrent.collect(0), Err(DeviceError::UnknownTicket(0))),
        "drained reports are dropped"
    );
    let fleet = concurrent.into_fleet();
    assert!(fleet.members().iter().all(|m| m.client().greeting().is_some()));
}

#[test]
fn a_ticket_never_issued_is_refused_at_once() {
    let env = env();
    let fleet = Fleet::new(members(&env, 10, 50.0), eps(), Routing::RoundRobin, 0);
    let mut concurrent = InFlightFleet::new(fleet, 8).expect("workers");
    for t in 0..5 {
        concurrent.submit(t, None).expect("submitted");
    }
    assert!(matches!(concurrent.collect(99), Err(DeviceError::UnknownTicket(99))));
    let settled = concurrent.ledger().expect("ledger").iter().map(|r| r.reports).sum::<u64>();
    assert_eq!(settled, 0, "the queries in flight were not waited for");
    for t in 0..5 {
        concurrent.collect(t).expect("a report");
    }
}

#[test]
fn an_exhausted_fleet_in_flight_fails_at_the_round_the_sequential_one_does() {
    let env = env();
    let mut sequential = Fleet::new(members(&env, 3, 2.0), eps(), Routing::RoundRobin, 0);
    let seq = pipelined(&mut sequential, 8, 1);
    let mut concurrent =
        InFlightFleet::new(Fleet::new(members(&env, 3, 2.0), eps(), Routing::RoundRobin, 0), 4)
            .expect("workers");
    let got = pipelined(&mut concurrent, 8, 4);
    for outcome in [seq, got] {
        match outcome {
            Err(DeviceError::FleetExhausted { round: 7, devices: 3, .. }) => {}
            other => panic!("expected the fleet exhausted at round 7, got {other:?}"),
        }
    }
    concurrent.drain();
    let ledger = concurrent.ledger().expect("ledger");
    assert_eq!(spent(&ledger), spent(&sequential.ledger()));
}

#[test]
fn round_robin_in_flight_is_one_at_a_time_up_to_and_past_exhaustion() {
    let env = env();
    let shown = |r: Result<u64, DeviceError>| match r {
        Ok(bits) => format!("{bits}"),
        Err(DeviceError::FleetExhausted { round, .. }) => format!("exhausted at {round}"),
        Err(e) => format!("{e:?}"),
    };
    for size in 1..=5 {
        for budget in [1.0, 2.0, 7.0] {
            for in_flight in [1, 2, 3, 5, 7] {
                let mut sequential = Fleet::new(members(&env, size, budget), eps(), Routing::RoundRobin, 3);
                let expected: Vec<String> =
                    (0..25).map(|t| shown(sequential.query(t % 10, None).map(f64::to_bits))).collect();
                let fleet = Fleet::new(members(&env, size, budget), eps(), Routing::RoundRobin, 3);
                let mut concurrent = InFlightFleet::new(fleet, in_flight).expect("workers");
                let mut flight = std::collections::VecDeque::new();
                let mut got = Vec::new();
                for t in 0..25 {
                    if flight.len() == in_flight {
                        got.push(shown(collected(&mut concurrent, flight.pop_front())));
                    }
                    flight.push_back(concurrent.submit(t % 10, None).expect("submitted"));
                }
                while let Some(s) = flight.pop_front() {
                    got.push(shown(collected(&mut concurrent, Some(s))));
                }
                let case = format!("{size} members, budget {budget}, {in_flight} in flight");
                assert_eq!(got, expected, "{case}");
                assert_eq!(
                    spent(&concurrent.ledger().expect("ledger")),
                    spent(&sequential.ledger()),
                    "{case}"
                );
            }
        }
    }
}

#[test]
fn queries_in_flight_do_not_bring_a_benched_member_back_sooner() {
    // 4 members, one silent, 4 in flight: while the 3 rested members are busy, a query waits for
    // one of them rather than going to the benched one.
    let env = env();
    let build = || cut_fleet(&env, 4, &[1], 2);
    let mut sequential = build();
    pipelined(&mut sequential, 300, 1).expect("one at a time");
    let mut concurrent = InFlightFleet::new(build(), 4).expect("workers");
    pipelined(&mut concurrent, 300, 4).expect("in flight");
    let (once, flying) = (sequential.ledger()[1].skipped, concurrent.ledger().expect("ledger")[1].skipped);
    assert!(
        once >= 2 && flying <= once + 1,
        "the silent member was asked {once} times one at a time, {flying} in flight"
    );
}

#[test]
fn a_drained_fleet_sends_nothing_more_and_asks_no_one_again() {
    let env = env();
    // 2 members, 4 submitted: 2 sent, 2 waiting. Draining spends only what the 2 sent spent.
    let ledger = drained(&env, 2, 4, 4).ledger().expect("ledger");
    assert_eq!(ledger.iter().map(|r| r.reports).sum::<u64>(), 2, "{ledger:?}");
    // 3 silent members, 8 in flight: the first query's error asks each member at most twice
    // (once for its own query, once for the failed round), and draining asks no one again.
    let fleet = cut_fleet(&env, 3, &[0, 1, 2], 1);
    let mut concurrent = InFlightFleet::new(fleet, 8).expect("workers");
    let tickets: Vec<Submitted> = (0..8).map(|t| concurrent.submit(t, None).expect("submitted")).collect();
    assert!(matches!(
        collected(&mut concurrent, Some(tickets[0])),
        Err(DeviceError::FleetExhausted { round: 1, .. })
    ));
    let asked = |f: &InFlightFleet<Cut>| f.ledger().expect("ledger").iter().map(|r| r.skipped).sum::<u64>();
    let after_error = asked(&concurrent);
    assert!(after_error <= 6, "{after_error} asks for one round of 3 members");
    concurrent.drain();
    assert_eq!(asked(&concurrent), after_error, "draining asked someone again");
}

#[test]
fn a_query_refused_for_its_level_still_counts_a_round() {
    let env = env();
    let mut fleet = Fleet::new(members(&env, 1, 2.0), eps(), Routing::RoundRobin, 0);
    assert!(fleet.query(0, Some(1e300)).is_err(), "no mechanism for that level");
    fleet.query(0, None).expect("round 2");
    fleet.query(0, None).expect("round 3");
    let e = fleet.query(0, None);
    assert!(matches!(e, Err(DeviceError::FleetExhausted { round: 4, .. })), "{e:?}");
}

/// A new, empty record of queries in flight in a fresh directory `tag`: its path.
fn record_file(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ldp-in-flight-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("trial0-learner0.queries");
    std::fs::write(&path, record_start(&BTreeMap::new())).expect("the record begun");
    path
}

/// `queries` unanswered at ε = 1 for each of `ids`.
fn one_each(ids: std::ops::RangeInclusive<u64>) -> BTreeMap<u64, Unanswered> {
    ids.map(|id| (id, Unanswered { queries: 1, eps: 1.0 })).collect()
}

/// The state of a run killed with queries in flight is what its record holds on disk at that
/// moment (a kill loses nothing written): 3 queries collected, then 5 submitted and not
/// collected — whatever the workers' timing, no reply of those 5 has reached the fleet, so the
/// record says each of their members has one query sent and not done. Drained, the fleet
/// settles them, and nothing is left unanswered.
#[test]
fn a_fleet_killed_with_queries_in_flight_leaves_exactly_those_sent_and_not_done_in_its_record() {
    let env = env();
    let path = record_file("killed");
    let record = QueryRecord::append(&path).expect("the record opens");
    let fleet = Fleet::new(members(&env, 10, 50.0), eps(), Routing::RoundRobin, 0).with_record(record);
    let mut concurrent = InFlightFleet::new(fleet, 8).expect("workers");
    for t in 0..3 {
        let s = concurrent.submit(t, None).expect("submitted");
        collected(&mut concurrent, Some(s)).expect("a report");
    }
    for t in 0..5 {
        concurrent.submit(t, None).expect("submitted");
    }
    // Round robin: members 1 to 3 answered, 4 to 8 have a query each in flight.
    assert_eq!(read_unanswered(&path).expect("the record reads"), one_each(4..=8));
    concurrent.drain();
    let settled = read_unanswered(&path).expect("the record reads");
    assert!(settled.values().all(|u| u.queries == 0), "drained, nothing is unanswered: {settled:?}");
    let ledger = concurrent.ledger().expect("ledger");
    assert_eq!(ledger.iter().map(|r| r.reports).sum::<u64>(), 8, "{ledger:?}");
    assert!(ledger.iter().all(|r| r.unanswered == 0), "the fleet labels nothing itself: {ledger:?}");
    let text = std::fs::read_to_string(&path).expect("the record");
    assert_eq!(text.lines().filter(|l| l.starts_with("sent ")).count(), 8, "{text}");
    assert_eq!(text.lines().filter(|l| l.starts_with("done ")).count(), 8, "{text}");
    let _ = std::fs::remove_dir_all(path.parent().expect("its directory"));
}

/// One query at a time, each query's lines are written around it: after every query the
/// record shows nothing unanswered, and it holds a `sent` and a `done` line per query.
#[test]
fn a_sequential_fleet_records_each_query_and_its_settlement() {
    let env = env();
    let path = record_file("sequential");
    let record = QueryRecord::append(&path).expect("the record opens");
    let mut fleet = Fleet::new(members(&env, 3, 2.0), eps(), Routing::RoundRobin, 0).with_record(record);
    for t in 0..6 {
        fleet.query(t % 10, None).expect("a report");
        let left = read_unanswered(&path).expect("the record reads");
        assert!(left.values().all(|u| u.queries == 0), "after query {t}: {left:?}");
    }
    // Exhausted: refused before anything is sent, so nothing more is recorded.
    assert!(matches!(fleet.query(0, None), Err(DeviceError::FleetExhausted { .. })));
    let text = std::fs::read_to_string(&path).expect("the record");
    assert_eq!(text.lines().count(), 1 + 2 * 6, "{text}");
    assert!(text.lines().nth(1).is_some_and(|l| l == "sent 1 1 1"), "{text}");
    assert!(text.lines().nth(2).is_some_and(|l| l == "done 1 1 report"), "{text}");
    let _ = std::fs::remove_dir_all(path.parent().expect("its directory"));
}

/// A query whose line cannot be written (a full disk: `/dev/full`) is not sent: the round
/// fails naming the record, no member is charged or asked, and nothing is sent after.
#[cfg(target_os = "linux")]
#[test]
fn a_query_that_cannot_be_recorded_is_not_sent() {
    let env = env();
    let full = Path::new("/dev/full");
    let record = QueryRecord::append(full).expect("/dev/full opens");
    let mut fleet = Fleet::new(members(&env, 3, 5.0), eps(), Routing::RoundRobin, 0).with_record(record);
    assert!(!fleet.record_failed());
    assert!(fleet.query(0, None).is_err());
    assert!(fleet.record_failed(), "the fleet says its record failed");
    for in_flight in [1, 4] {
        let record = QueryRecord::append(full).expect("/dev/full opens");
        let fleet = Fleet::new(members(&env, 3, 5.0), eps(), Routing::RoundRobin, 0).with_record(record);
        let mut device: Box<dyn Device> = if in_flight > 1 {
            Box::new(InFlightFleet::new(fleet, in_flight).expect("workers"))
        } else {
            Box::new(fleet)
        };
        for t in 0..2 {
            match device.query(t, None) {
                Err(DeviceError::Record { path, .. }) => assert_eq!(path, full),
                other => panic!("{in_flight} in flight: expected the record's error, got {other:?}"),
            }
        }
        let e = device.query(0, None).expect_err("refused");
        assert!(e.to_string().contains("/dev/full") && e.to_string().contains("not sent"), "{e}");
        device.drain();
        let ledger = device.ledger().expect("ledger");
        assert!(
            ledger.iter().all(|r| r.spent == 0.0 && r.reports == 0 && r.skipped == 0),
            "{in_flight} in flight: a member was charged or asked: {ledger:?}"
        );
    }
}
