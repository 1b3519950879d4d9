//! The device application (what the firmware runs between UART bytes): handshake, reports, a
//! retry answered without a second spend, an out-of-range action refused, and the sensor model.

use ldp_core::device::{DeviceApp, SensorModel};
use ldp_core::wire::{MAX_ENCODED_LEN, Message, Query, Refusal, Repr, StreamReader};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use rand_chacha::rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

type App = DeviceApp<MemoryStore, Xoshiro256PlusPlus>;

fn app(total: f64) -> App {
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(total).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
    let reporter = Reporter::open(config, MemoryStore::provisioned([1; 32]), [0; 32]).unwrap();
    DeviceApp::new(reporter, SensorModel::new(10, 1.0).unwrap(), Xoshiro256PlusPlus::seed_from_u64(2), 42)
}

/// Sends one request, returns the decoded reply and its raw bytes.
fn exchange(app: &mut App, request: &Repr) -> (Repr, Vec<u8>) {
    let mut buf = [0u8; MAX_ENCODED_LEN];
    let bytes = request.emit_framed(&mut buf).unwrap().to_vec();
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
            parsed = Some(Repr::parse(&frame.unwrap()).unwrap());
        }
    }
    (parsed.expect("the reply is one frame"), reply)
}

fn query(action: u32) -> Message {
    Message::Query(Query { round: 1, action, epsilon: Epsilon::new(1.0).unwrap(), level: None })
}

#[test]
fn handshake_report_retry_and_refusal() {
    let mut app = app(2.0);
    let (hello, _) = exchange(&mut app, &Repr::new(1, Message::HelloRequest));
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
    let m = SensorModel::new(100, 0.5).unwrap();
    assert!(SensorModel::new(1, 0.5).is_none());
    assert!(SensorModel::new(10, f64::NAN).is_none());
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
