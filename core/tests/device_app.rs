//! The device application (what the firmware runs between UART bytes): handshake, reports, a
//! retry answered without a second spend, an out-of-range action refused, the sensor model, and
//! what it does with the readings of a user's own `RewardSource` — NaN, ±∞, huge values, `None`
//! — and with readings fed by a hardware-in-the-loop host (`FedQuery`; released only with the
//! `hil` feature, which `cargo test` at the workspace root enables through host-sim; refused
//! in `cargo test -p ldp-core`, a board's build).

#[cfg(feature = "hil")]
use ldp_core::device::FedSource;
use ldp_core::device::{DeviceApp, RewardSource, SensorModel, SimulatedSensor};
use ldp_core::wire::{
    self, Auth, FedQuery, LinkKey, MAX_ENCODED_LEN, Message, Query, Refusal, Repr, StreamReader,
};
use ldp_core::{
    Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter, StateStore, TruncationLevel,
};
use rand_chacha::rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

type App = DeviceApp<MemoryStore, SimulatedSensor<Xoshiro256PlusPlus>>;

fn app(total: f64) -> App {
    let source =
        SimulatedSensor::new(SensorModel::new(10, bound(1.0)).unwrap(), Xoshiro256PlusPlus::seed_from_u64(2));
    app_with(source, total)
}

fn bound(x: f64) -> Bound {
    Bound::new(x).unwrap()
}

/// A device with B = R = 1 (C = 2), per-report ε ≤ 1, lifetime `total`, reading `source`.
fn app_with<R: RewardSource>(source: R, total: f64) -> DeviceApp<MemoryStore, R> {
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(total).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
    let reporter = Reporter::open(config, MemoryStore::provisioned([1; 32]), [0; 32]).unwrap();
    DeviceApp::new(reporter, source, 42)
}

/// The learner's authentication for an app of [`app_with`] (seed material `[1; 32]`, id 42).
fn auth_of<S: StateStore, R: RewardSource>(app: &DeviceApp<S, R>) -> Auth {
    Auth { session: app.reporter().accountant().boot(), ..Auth::new(LinkKey::from_seed(&[1; 32]), 42) }
}

std::thread_local! {
    /// The conversation the learner's last hello was offered (nonce, number), which its queries
    /// are tagged in (wire format 5; the all-zero conversation before any hello).
    static OPEN: std::cell::Cell<([u8; 16], u32)> = const { std::cell::Cell::new(([0; 16], 0)) };
}

/// Sends one request, returns the decoded reply and its raw bytes. Queries go in the
/// conversation the last hello offered.
fn exchange<S: StateStore, R: RewardSource>(app: &mut DeviceApp<S, R>, request: &Repr) -> (Repr, Vec<u8>) {
    let (nonce, conversation) = OPEN.with(|o| o.get());
    let auth = Auth { nonce, conversation, ..auth_of(app) };
    let mut buf = [0u8; MAX_ENCODED_LEN];
    let bytes = request.emit_framed(&mut buf, &auth).unwrap().to_vec();
    // The reply's tag binds the request's (and, for a hello, the nonce it carries).
    let mut raw = [0u8; wire::MAX_FRAME_LEN];
    let raw = request.emit(&mut raw, &auth).unwrap();
    let auth = match request.message {
        Message::HelloRequest(nonce) => Auth { nonce, ..auth },
        _ => auth,
    }
    .answering(wire::Frame::new_checked(&*raw).unwrap().tag());
    let mut reply = None;
    for b in bytes {
        if let Some(r) = app.on_byte(b) {
            assert!(reply.is_none(), "one reply per frame");
            reply = Some(r.to_vec());
        }
    }
    let reply = reply.expect("an intact frame gets a reply");
    let mut reader = StreamReader::new();
    let mut parsed = None;
    for &b in &reply {
        if let Some(frame) = reader.push(b) {
            parsed = Some(Repr::parse(&frame.unwrap(), &auth).unwrap());
        }
    }
    let parsed = parsed.expect("the reply is one frame");
    if let (Message::HelloRequest(nonce), Message::Hello(h)) = (request.message, parsed.message) {
        OPEN.with(|o| o.set((nonce, h.conversation)));
    }
    (parsed, reply)
}

fn query(action: u32) -> Message {
    Message::Query(Query { round: 1, action, epsilon: Epsilon::new(1.0).unwrap(), level: None })
}

#[test]
fn handshake_report_retry_and_refusal() {
    let mut app = app(2.0);
    let (hello, _) = exchange(&mut app, &Repr::new(1, Message::HelloRequest([0; 16])));
    match hello.message {
        Message::Hello(h) => {
            assert_eq!(h.device_id, 42);
            assert_eq!(h.budget_remaining, 2.0);
        }
        other => panic!("expected Hello, got {other:?}"),
    }
    let (first, first_bytes) = exchange(&mut app, &Repr::new(2, query(3)));
    assert_eq!(first.seq, 2);
    assert!(matches!(first.message, Message::Report(r) if r.budget_remaining == 1.0));
    // A retry (same seq, same query) is answered with the same bytes and spends nothing.
    let (_, retry_bytes) = exchange(&mut app, &Repr::new(2, query(3)));
    assert_eq!(first_bytes, retry_bytes);
    assert!((app.reporter().accountant().spent() - 1.0).abs() < 1e-12);
    // An action outside the sensor's arms is refused without spending.
    let (bad, _) = exchange(&mut app, &Repr::new(3, query(10)));
    assert_eq!(bad.message, Message::Refusal(Refusal::Malformed));
    assert!((app.reporter().accountant().spent() - 1.0).abs() < 1e-12);
    // The last unit of budget, then refusals.
    assert!(matches!(exchange(&mut app, &Repr::new(4, query(0))).0.message, Message::Report(_)));
    for seq in 5..8 {
        let (r, _) = exchange(&mut app, &Repr::new(seq, query(0)));
        assert!(matches!(r.message, Message::Refusal(Refusal::BudgetExhausted { .. })), "{r:?}");
    }
}

#[test]
fn garbage_gets_no_reply_and_the_stream_recovers() {
    let mut app = app(5.0);
    for b in [0x13u8, 0x37, 0xFF, 0x00, 0x01, 0x02, 0x00] {
        assert!(app.on_byte(b).is_none());
    }
    let (reply, _) = exchange(&mut app, &Repr::new(9, query(1)));
    assert!(matches!(reply.message, Message::Report(_)));
}

#[test]
fn sensor_model_is_bounded_and_reads_around_its_mean() {
    let m = SensorModel::new(100, bound(0.5)).unwrap();
    assert!(SensorModel::new(1, bound(0.5)).is_none());
    let mut world = Xoshiro256PlusPlus::seed_from_u64(3);
    for arm in 0..100 {
        let f = m.mean(arm).unwrap();
        assert!(f.abs() <= 0.9, "|f({arm})| = {f}");
        for _ in 0..50 {
            let y = m.read(arm, &mut world).unwrap();
            assert!((y - f).abs() <= 0.5, "noise beyond R at arm {arm}");
        }
    }
    assert!(m.read(100, &mut world).is_none());
}

/// The simulated sensor is the model read with the world generator, one draw per read (an
/// out-of-range arm too): the QEMU firmware and the in-process device consume their world
/// generator exactly as before `RewardSource` existed.
#[test]
fn simulated_sensor_reads_as_its_model_and_draws_once_per_read() {
    let model = SensorModel::new(10, bound(1.0)).unwrap();
    let mut world = Xoshiro256PlusPlus::seed_from_u64(5);
    let mut sensor = SimulatedSensor::new(model, Xoshiro256PlusPlus::seed_from_u64(5));
    for arm in [0, 3, 9, 10, 1000, 4] {
        assert_eq!(sensor.read(arm), model.read(arm, &mut world), "arm {arm}");
    }
    // Lockstep through the out-of-range reads: the readings after them (noise R = 1) agree.
    assert!(sensor.read(10).is_none());
    assert!(model.read(10, &mut world).is_none());
    assert_eq!(sensor.read(2), model.read(2, &mut world));
    assert_eq!(sensor.model(), &model);
}

/// A user's source: a fixed reading for actions below `actions`, `None` above; counts its reads.
struct Fixed {
    reading: f64,
    actions: u32,
    reads: u32,
}

impl Fixed {
    fn new(reading: f64) -> Self {
        Self { reading, actions: 4, reads: 0 }
    }
}

impl RewardSource for Fixed {
    fn actions(&self) -> u32 {
        self.actions
    }

    fn read(&mut self, action: u32) -> Option<f64> {
        self.reads += 1;
        (action < self.actions).then_some(self.reading)
    }
}

fn query_at(action: u32, epsilon: f64, level: Option<f64>) -> Message {
    let level = level.map(|b| TruncationLevel::new(b).unwrap());
    Message::Query(Query { round: 1, action, epsilon: Epsilon::new(epsilon).unwrap(), level })
}

#[test]
fn a_custom_source_is_read_once_per_fresh_query_and_its_value_released() {
    let mut app = app_with(Fixed::new(0.25), 10.0);
    let _ = exchange(&mut app, &Repr::new(1, Message::HelloRequest([0; 16])));
    assert_eq!(app.source().reads, 0, "a hello reads nothing");
    let (first, bytes) = exchange(&mut app, &Repr::new(2, query_at(1, 1.0, None)));
    assert_eq!(app.source().reads, 1);
    assert!(matches!(first.message, Message::Report(r) if r.budget_remaining == 9.0));
    assert_eq!(exchange(&mut app, &Repr::new(2, query_at(1, 1.0, None))).1, bytes, "a retry is cached");
    assert_eq!(app.source().reads, 1, "a retry reads nothing");
    // A query the reporter refuses has read first (the read does not depend on the refusal).
    let (refused, _) = exchange(&mut app, &Repr::new(3, query_at(1, 2.0, None)));
    assert_eq!(refused.message, Message::Refusal(Refusal::AboveDeviceLimit { requested: 2.0, limit: 1.0 }));
    assert_eq!(app.source().reads, 2);
    // The reply is the reporter's release of the reading (same key, same noise stream).
    let mut reporter = {
        let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(10.0).unwrap()).unwrap();
        let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
        Reporter::open(config, MemoryStore::provisioned([1; 32]), [0; 32]).unwrap()
    };
    let direct = reporter.report(0.25, Epsilon::new(1.0).unwrap(), None).unwrap();
    assert_eq!(first.message, Message::Report(direct));
}

/// An action outside the source's action set is refused as malformed before the reporter sees
/// the query — nothing released, nothing spent, whatever the query's ε and the budget left.
#[test]
fn an_action_outside_the_set_is_refused_as_malformed_and_spends_nothing() {
    let mut app = app_with(Fixed::new(0.25), 1.0);
    for (seq, message) in
        [(1, query_at(4, 1.0, None)), (2, query_at(7, 2.0, None)), (3, query_at(u32::MAX, 0.5, Some(1.0)))]
    {
        let (reply, _) = exchange(&mut app, &Repr::new(seq, message));
        assert_eq!(reply.message, Message::Refusal(Refusal::Malformed));
        assert_eq!(app.reporter().accountant().spent(), 0.0);
    }
    // The budget is untouched: the one report it allows still goes out, then the budget refuses,
    // while an action outside the set is still refused as malformed.
    assert!(matches!(
        exchange(&mut app, &Repr::new(4, query_at(0, 1.0, None))).0.message,
        Message::Report(_)
    ));
    let (exhausted, _) = exchange(&mut app, &Repr::new(5, query_at(0, 1.0, None)));
    assert!(matches!(exhausted.message, Message::Refusal(Refusal::BudgetExhausted { .. })));
    let (none, _) = exchange(&mut app, &Repr::new(6, query_at(9, 1.0, None)));
    assert_eq!(none.message, Message::Refusal(Refusal::Malformed));
    assert_eq!(app.reporter().accountant().spent(), 1.0);
}

/// A source whose fault depends on the reading (`None` above 1.5: an over-range flag).
struct OverRange {
    readings: [f64; 4],
}

impl RewardSource for OverRange {
    fn actions(&self) -> u32 {
        4
    }
    fn read(&mut self, action: u32) -> Option<f64> {
        let y = *self.readings.get(action as usize)?;
        (y <= 1.5).then_some(y)
    }
}

/// A `None` for an action of the set is a fault, released as a reading of 0 is: a learner who
/// controls the link sees byte for byte what it would see from a reading of 0 — reports charged,
/// and the same refusals for an ε above the device's limit and after the budget is spent. (A
/// free `Malformed` there told the learner which readings were over range, at ε = ∞.)
#[test]
fn a_fault_that_depends_on_the_reading_shows_nothing_beyond_the_mechanism() {
    let mut faulty = app_with(OverRange { readings: [2.0, 0.0, 3.0, 1.9] }, 3.0);
    let mut zeros = app_with(OverRange { readings: [0.0; 4] }, 3.0);
    let queries =
        [query_at(0, 1.0, None), query_at(2, 4.0, None), query_at(3, 1.0, Some(1.0)), query_at(0, 1.0, None)]
            .into_iter()
            .chain((0..4).map(|a| query_at(a, 1.0, None)));
    for (seq, message) in (1..).zip(queries) {
        let request = Repr::new(seq, message);
        let (reply, bytes) = exchange(&mut faulty, &request);
        assert_eq!(bytes, exchange(&mut zeros, &request).1, "query {seq}: {reply:?}");
        assert_ne!(reply.message, Message::Refusal(Refusal::Malformed), "query {seq}");
    }
    assert_eq!(faulty.reporter().accountant().spent(), 3.0);
}

/// A NaN, infinite or huge reading from a user's source never passes through: every reply —
/// reports and refusals alike, through budget exhaustion — is byte for byte the one a device
/// reading the documented substitute sends (NaN → 0; ±∞ and huge values clamp to ±C = ±2, or
/// truncate to 0 outside a learner's level), and every report is charged.
#[test]
fn non_finite_and_huge_readings_reply_exactly_as_their_substitute() {
    let clamp = [
        (f64::NAN, 0.0),
        (f64::INFINITY, 2.0),
        (f64::NEG_INFINITY, -2.0),
        (f64::MAX, 2.0),
        (-1e300, -2.0),
        (2.5, 2.0),
        (f64::MIN_POSITIVE / 4.0, 0.0), // subnormal: rounds to the grid's 0
    ];
    let truncate =
        [(f64::NAN, 0.0), (f64::INFINITY, 0.0), (f64::NEG_INFINITY, 0.0), (1e300, 0.0), (1.6, 0.0)];
    let cases =
        clamp.iter().map(|&(x, y)| (x, y, None)).chain(truncate.iter().map(|&(x, y)| (x, y, Some(1.5))));
    for (bad, substitute, level) in cases {
        let mut a = app_with(Fixed::new(bad), 3.0);
        let mut b = app_with(Fixed::new(substitute), 3.0);
        let requests = [
            Repr::new(1, Message::HelloRequest([0; 16])),
            Repr::new(2, query_at(0, 1.0, level)),
            Repr::new(3, query_at(1, 2.0, level)), // above the device's limit
            Repr::new(4, query_at(2, 1.0, level)),
            Repr::new(4, query_at(2, 1.0, level)), // a retry
            Repr::new(5, query_at(9, 1.0, level)), // no reading for this action
            Repr::new(6, query_at(3, 1.0, level)),
            Repr::new(7, query_at(3, 1.0, level)), // budget exhausted
        ];
        for request in &requests {
            let (x, bytes_a) = exchange(&mut a, request);
            let (_, bytes_b) = exchange(&mut b, request);
            assert_eq!(bytes_a, bytes_b, "{bad} vs {substitute} at level {level:?}: {x:?}");
        }
        assert_eq!(a.reporter().accountant().spent(), 3.0, "{bad}: every report charged");
        assert_eq!(b.reporter().accountant().spent(), 3.0);
    }
}

fn fed_at(action: u32, epsilon: f64, level: Option<f64>, reading: f64) -> Message {
    let Message::Query(query) = query_at(action, epsilon, level) else { unreachable!() };
    Message::FedQuery(FedQuery::new(query, reading))
}

/// Readings a host may feed: ordinary, out of range, huge, non-finite, signed zero, subnormal.
const FED: [f64; 10] =
    [0.3, -0.7, 2.5, -1e300, f64::MAX, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 5e-324];

/// A device that reads its own sensor (every `RewardSource` unless it says otherwise, here a
/// user's source and the simulated sensor) refuses a fed query with the same `FeedRefused`,
/// byte for byte, whatever the reading, the ε, the level or the budget left: nothing is read,
/// released or spent, and the fed reading never stands in for the sensor's. A plain query that
/// reuses a fed query's number is a replay: refused, nothing read.
#[test]
fn a_production_source_refuses_fed_readings_whatever_the_reading() {
    let mut sensor = app(1.0);
    let mut app = app_with(Fixed::new(0.25), 1.0);
    let mut seq = 8;
    for (i, &reading) in FED.iter().enumerate() {
        for (epsilon, level) in [(1.0, None), (2.0, None), (0.5, Some(1.5)), (1e-300, None)] {
            for action in [0, 3, 10, u32::MAX] {
                seq += 1;
                let request = Repr::new(seq, fed_at(action, epsilon, level, reading));
                let (reply, bytes) = exchange(&mut app, &request);
                assert_eq!(reply, Repr::new(seq, Message::Refusal(Refusal::FeedRefused)), "{i}: {reading}");
                // Same key, id and boot: byte for byte the sensor device's refusal.
                assert_eq!(exchange(&mut sensor, &request).1, bytes, "{reading}");
            }
        }
    }
    assert_eq!(app.source().reads, 0, "a fed query reads nothing");
    assert_eq!(app.reporter().accountant().spent(), 0.0);
    assert_eq!(sensor.reporter().accountant().spent(), 0.0);
    let (replay, _) = exchange(&mut app, &Repr::new(9, query_at(0, 1.0, None)));
    assert_eq!(replay.message, Message::Refusal(Refusal::StaleSequence));
    assert_eq!(app.source().reads, 0, "a replayed number reads nothing");
    // The budget is whole: a plain query with a new number is answered fresh, from the
    // sensor; after it the budget is spent and a fed query is still refused the same way.
    let (report, _) = exchange(&mut app, &Repr::new(seq + 1, query_at(0, 1.0, None)));
    assert!(matches!(report.message, Message::Report(r) if r.budget_remaining == 0.0), "{report:?}");
    assert_eq!(app.source().reads, 1);
    let (after, _) = exchange(&mut app, &Repr::new(seq + 2, fed_at(0, 1.0, None, 0.3)));
    assert_eq!(after.message, Message::Refusal(Refusal::FeedRefused));
}

/// A simulation's source (`FedSource`) releases a fed reading `y` exactly as a device whose
/// sensor read `y` releases it — byte for byte, for NaN, ±∞ and huge readings too (the same
/// sanitising, clamp or truncation, grid, noise and charge) — and as the in-process reporter
/// releases the raw reward `y` with the same keys.
#[test]
#[cfg(feature = "hil")]
fn a_fed_reading_is_released_exactly_as_a_sensor_reading_of_it() {
    for level in [None, Some(1.5)] {
        let mut fed = app_with(FedSource(Fixed::new(0.0)), 100.0);
        let mut direct = {
            let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(100.0).unwrap()).unwrap();
            let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
            Reporter::open(config, MemoryStore::provisioned([1; 32]), [0; 32]).unwrap()
        };
        for (seq, &y) in (1..).zip(FED.iter()) {
            // A device whose sensor reads y, with the same keys and the same history.
            let mut sensor = app_with(Fixed::new(y), 100.0);
            for earlier in 1..seq {
                let _ = exchange(&mut sensor, &Repr::new(earlier, query_at(0, 1.0, level)));
            }
            // The same release (wire v4: the tags differ, each answering its own request's).
            let (reply, _) = exchange(&mut fed, &Repr::new(seq, fed_at(0, 1.0, level, y)));
            assert_eq!(reply, exchange(&mut sensor, &Repr::new(seq, query_at(0, 1.0, level))).0, "{y}");
            let eps = Epsilon::new(1.0).unwrap();
            let report = direct.report(y, eps, level.map(|b| TruncationLevel::new(b).unwrap())).unwrap();
            assert_eq!(reply, Repr::new(seq, Message::Report(report)), "{y} at level {level:?}");
        }
        assert_eq!(fed.source().0.reads, 0, "a fed query does not read the source");
        assert!((fed.reporter().accountant().spent() - FED.len() as f64).abs() < 1e-9, "ε per report");
    }
}

/// A fed query repeated with the same number is a retry whatever its reading: the cached reply,
/// no second release, no second spend. Its action is informative (not checked against the
/// source's set), plain queries still read the source, and a refused fed query spends nothing.
#[test]
#[cfg(feature = "hil")]
fn a_repeated_fed_query_with_another_reading_gets_the_cached_reply() {
    let mut app = app_with(FedSource(Fixed::new(0.25)), 3.0);
    let (first, _) = exchange(&mut app, &Repr::new(5, fed_at(7, 1.0, None, -0.9)));
    assert!(matches!(first.message, Message::Report(r) if r.budget_remaining == 2.0), "{first:?}");
    // The cached release, its tag answering the retry (wire v4 binds a reply to its request).
    for other in [0.9, f64::NAN, f64::INFINITY, -0.9] {
        assert_eq!(exchange(&mut app, &Repr::new(5, fed_at(7, 1.0, None, other))).0, first, "{other}");
    }
    assert_eq!(app.reporter().accountant().spent(), 1.0);
    // The plain query with that number is another query under a used number: refused as stale
    // (wire v3) before the source is read or anything spent.
    let (stale, _) = exchange(&mut app, &Repr::new(5, query_at(7, 1.0, None)));
    assert_eq!(stale.message, Message::Refusal(Refusal::StaleSequence));
    assert_eq!((app.source().0.reads, app.reporter().accountant().spent()), (0, 1.0));
    // Under a fresh number plain queries read the source.
    let (plain, _) = exchange(&mut app, &Repr::new(6, query_at(7, 1.0, None)));
    assert_eq!(plain.message, Message::Refusal(Refusal::Malformed), "action 7 is outside the source's set");
    let (plain, _) = exchange(&mut app, &Repr::new(7, query_at(1, 1.0, None)));
    assert!(matches!(plain.message, Message::Report(r) if r.budget_remaining == 1.0));
    assert_eq!(app.source().0.reads, 2);
    let (weak, _) = exchange(&mut app, &Repr::new(8, fed_at(1, 2.0, None, 0.1)));
    assert_eq!(weak.message, Message::Refusal(Refusal::AboveDeviceLimit { requested: 2.0, limit: 1.0 }));
    assert_eq!(app.reporter().accountant().spent(), 2.0);
}

/// A source that claims to take fed readings without `FedSource`.
struct Claims(Fixed);

impl RewardSource for Claims {
    fn actions(&self) -> u32 {
        self.0.actions()
    }

    fn read(&mut self, action: u32) -> Option<f64> {
        self.0.read(action)
    }

    fn accepts_fed(&self) -> bool {
        true
    }
}

/// Built without `hil` (a board's build), a source that says it takes fed readings is refused
/// like any other: only the feature lets a device release a learner's number. With `hil` the
/// claim is honoured, as `FedSource`'s is.
#[test]
fn only_the_hil_feature_lets_a_source_take_fed_readings() {
    let mut app = app_with(Claims(Fixed::new(0.25)), 3.0);
    let (reply, _) = exchange(&mut app, &Repr::new(1, fed_at(0, 1.0, None, 0.5)));
    if cfg!(feature = "hil") {
        assert!(matches!(reply.message, Message::Report(r) if r.budget_remaining == 2.0), "{reply:?}");
    } else {
        assert_eq!(reply.message, Message::Refusal(Refusal::FeedRefused));
        assert_eq!(app.reporter().accountant().spent(), 0.0);
    }
    assert_eq!(app.source().0.reads, 0, "a fed query never reads the source");
}
