//! The in-process device the link tests talk to and attack, the client they attack it through,
//! and the frame helpers they share.
#![allow(dead_code)] // each test module uses its part

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use ldp_core::device::{DeviceApp, SensorModel, SimulatedSensor};
use ldp_core::wire::{Auth, Hello, MAX_ENCODED_LEN, Message, Repr};
use ldp_core::wire::{StreamReader, checksum};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, MemoryStore, Reporter};
use ldp_link::client::WireClient;
use ldp_link::transport::{Link, LoopbackLink};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

/// The device's id.
pub const ID: u64 = 9;

/// The type byte of a hello request, a query and a report.
pub const HELLO_REQUEST: u8 = 0x01;
pub const QUERY: u8 = 0x02;
pub const REPORT: u8 = 0x82;

/// The device's budget in all ([`config`]).
pub const TOTAL: f64 = 1000.0;

/// ε = 1, what every query here asks.
pub fn eps() -> Epsilon {
    Epsilon::new(1.0).unwrap()
}

/// A simulated device on an in-process link.
pub type Dev = LoopbackLink<MemoryStore, SimulatedSensor<ChaCha20Rng>>;

/// B = R = 1, 1 ε per report, 1000 ε in all.
pub fn config() -> DeviceConfig {
    let policy = BudgetPolicy::new(eps(), Epsilon::new(TOTAL).unwrap()).unwrap();
    DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy }
}

/// Boots device [`ID`] on `store` (a reboot if the store was used: the boot number moves on).
pub fn boot(store: MemoryStore) -> Dev {
    let reporter = Reporter::open(config(), store, [0; 32]).unwrap();
    let world = ChaCha20Rng::seed_from_u64(4);
    let source = SimulatedSensor::new(SensorModel::new(100, Bound::new(1.0).unwrap()).unwrap(), world);
    LoopbackLink::new(DeviceApp::new(reporter, source, ID))
}

/// Boots device `id` on `store` with key material and sensor world from `id` (a reboot if the
/// store was used).
pub fn boot_as(id: u64, store: MemoryStore) -> Dev {
    let reporter = Reporter::open(config(), store, [id as u8; 32]).unwrap();
    let world = ChaCha20Rng::seed_from_u64(id);
    let source = SimulatedSensor::new(SensorModel::new(100, Bound::new(1.0).unwrap()).unwrap(), world);
    LoopbackLink::new(DeviceApp::new(reporter, source, id))
}

/// Cuts the power of `dev` and boots it again on the same store.
pub fn power_cycle(dev: &mut Dev) {
    let store = *dev.app().reporter().accountant().store();
    *dev = boot(store);
}

/// The ε `dev` has charged (everything reserved before this boot counts).
pub fn spent(dev: &Dev) -> f64 {
    dev.app().reporter().accountant().spent()
}

/// A learner's client on `link`, its nonces from `seed`, waiting 1 ms per try (the links here
/// answer at once or never).
pub fn client<L: Link>(link: L, auth: Auth, seed: u64) -> WireClient<L> {
    let mut c = WireClient::with_nonce_seed(link, auth, seed);
    c.timeout = Duration::from_millis(1);
    c
}

/// The frame's raw bytes (no COBS, no delimiter), if `bytes` holds one.
pub fn raw_frame(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut r = StreamReader::new();
    bytes.iter().find_map(|&b| r.push(b).and_then(Result::ok).map(|f| f.as_bytes().to_vec()))
}

/// The type byte of the frame in `bytes`, if it holds one.
pub fn msg_type(bytes: &[u8]) -> Option<u8> {
    raw_frame(bytes).map(|raw| raw[1])
}

/// `raw` with byte `at` set to `value` and its CRC-32C recomputed (no key needed), COBS-stuffed
/// and delimited: what anyone on the link can make.
pub fn mutated(raw: &[u8], at: usize, value: u8) -> Vec<u8> {
    let mut m = raw.to_vec();
    m[at] = value;
    let n = m.len() - 4;
    let crc = checksum(&m[..n]).to_le_bytes();
    m[n..].copy_from_slice(&crc);
    let mut out = cobs::encode_vec(&m);
    out.push(0);
    out
}

/// `raw` with a byte of its payload flipped, CRC fixed: its refusal 12 answers `raw`'s tag.
pub fn changed(raw: &[u8]) -> Vec<u8> {
    let at = if raw[1] == HELLO_REQUEST { 6 } else { 10 };
    mutated(raw, at, raw[at] ^ 1)
}

/// Whether `bytes` holds a report.
pub fn is_report(bytes: &[u8]) -> bool {
    msg_type(bytes) == Some(REPORT)
}

/// Every byte the device on `dev` sends for `bytes`.
pub fn device_answer<L: Link>(dev: &mut L, bytes: &[u8]) -> io::Result<Vec<u8>> {
    dev.send(bytes)?;
    let mut out = Vec::new();
    while let Some(b) = dev.recv_byte(Duration::ZERO)? {
        out.push(b);
    }
    Ok(out)
}

/// The session and conversation of the (last) hello in `reply` that `answer` authenticates: the
/// device's key answering the request's tag, under the learner's nonce (neither is secret).
pub fn hello_in(reply: &[u8], answer: &Auth) -> Option<(u64, u32)> {
    let mut reader = StreamReader::new();
    let mut hello = None;
    for &b in reply {
        if let Some(Ok(frame)) = reader.push(b)
            && let Ok(Repr { message: Message::Hello(h), .. }) = Repr::parse(&frame, answer)
        {
            hello = Some((h.session, h.conversation));
        }
    }
    hello
}

/// The released values of `rounds` queries at ε = 1 (round t asks arm t mod 100); any refusal
/// or error fails the test.
pub fn released_values<L: Link>(client: &mut WireClient<L>, rounds: u32) -> Vec<f64> {
    (0..rounds)
        .map(|t| match client.query(t, t % 100, eps(), None) {
            Ok(Ok(report)) => report.release.value(),
            other => panic!("round {t}: {other:?}"),
        })
        .collect()
}

/// Device `id` (its seed material and sensor world from `id`), B = R = `bound`, 1 ε per
/// report, `total` ε in all.
pub fn device_with(id: u64, bound: f64, total: f64) -> Dev {
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(total).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(bound).unwrap(), r: Bound::new(bound).unwrap(), policy };
    let reporter = Reporter::open(config, MemoryStore::provisioned([id as u8; 32]), [0; 32]).unwrap();
    let world = ChaCha20Rng::seed_from_u64(id);
    let source = SimulatedSensor::new(SensorModel::new(100, Bound::new(bound).unwrap()).unwrap(), world);
    LoopbackLink::new(DeviceApp::new(reporter, source, id))
}

/// A device's link on which someone slips `recorded` in ahead of the device's answer to the
/// learner's first frame (a replay by whoever carries the frames or may publish on the topic).
pub struct Replayer {
    pub inner: Dev,
    pub recorded: Option<Vec<u8>>,
}

impl Replayer {
    /// `inner` with `recorded` to slip in.
    pub fn new(inner: Dev, recorded: Vec<u8>) -> Tapped<Self> {
        Tapped::new(Self { inner, recorded: Some(recorded) })
    }
}

impl Tap for Replayer {
    fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
        let answer = device_answer(&mut self.inner, bytes)?;
        if let Some(recorded) = self.recorded.take() {
            learner.extend(recorded);
        }
        learner.extend(answer);
        Ok(())
    }
}

/// Records every request frame the learner sends (type, number, the bytes as on the link) and
/// passes everything.
pub struct Recorder {
    pub inner: Dev,
    pub sent: Vec<(u8, u32, Vec<u8>)>,
}

impl Recorder {
    pub fn new(inner: Dev) -> Tapped<Self> {
        Tapped::new(Self { inner, sent: Vec::new() })
    }

    /// The hello requests recorded, in order.
    pub fn hellos(&self) -> Vec<Vec<u8>> {
        self.sent.iter().filter(|f| f.0 == HELLO_REQUEST).map(|f| f.2.clone()).collect()
    }
}

impl Tap for Recorder {
    fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
        if let Some(raw) = raw_frame(bytes) {
            let seq = u32::from_le_bytes([raw[2], raw[3], raw[4], raw[5]]);
            self.sent.push((raw[1], seq, bytes.to_vec()));
        }
        learner.extend(device_answer(&mut self.inner, bytes)?);
        Ok(())
    }
}

/// An empty directory named after `name` and this process, sticky and writable by anyone (as
/// /tmp is): where anyone may plant a file at a boot record's name first.
#[cfg(unix)]
pub fn sticky_dir(name: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("ldp-link-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    dir
}

/// When the man in the middle of [`Amplifier`] delivers the query it holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Order {
    /// Before the learner's new hello request (review 6's order): the device's conversation is
    /// still open, so the query is answered and charged, its report swallowed.
    BeforeHello,
    /// After the new hello request reached the device, before passing its hello.
    AfterHelloRequest,
    /// Never.
    Never,
}

/// The man in the middle who draws refusals with changed copies: for each new query of the
/// learner it sends the device a copy with the action byte changed (CRC fixed up, no key
/// needed) and passes the device's refusal 12 on to the learner, holding the genuine query
/// back; it delivers the held query as `order` says, swallowing the report, and with `cycle`
/// power-cycles the board right after such a delivery (so the learner's next hello is of a new
/// boot).
pub struct Amplifier {
    pub inner: Dev,
    held: Option<Vec<u8>>,
    order: Order,
    cycle: bool,
    /// Held queries delivered behind the learner's back that the device answered with a report.
    pub releases: u32,
}

impl Amplifier {
    pub fn new(inner: Dev, order: Order, cycle: bool) -> Tapped<Self> {
        Tapped::new(Self { inner, held: None, order, cycle, releases: 0 })
    }
}

impl Tap for Amplifier {
    fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
        match raw_frame(bytes) {
            Some(raw) if raw[1] == QUERY => {
                if self.held.as_deref() != Some(bytes) {
                    let refusal = device_answer(&mut self.inner, &mutated(&raw, 10, raw[10] ^ 1))?;
                    learner.extend(refusal);
                    self.held = Some(bytes.to_vec());
                }
            }
            Some(raw) if raw[1] == HELLO_REQUEST => {
                let genuine = self.held.take();
                if let (Some(q), Order::BeforeHello) = (&genuine, self.order) {
                    self.releases += u32::from(is_report(&device_answer(&mut self.inner, q)?));
                    if self.cycle {
                        power_cycle(&mut self.inner);
                    }
                }
                let hello = device_answer(&mut self.inner, bytes)?;
                if let (Some(q), Order::AfterHelloRequest) = (&genuine, self.order) {
                    self.releases += u32::from(is_report(&device_answer(&mut self.inner, q)?));
                }
                learner.extend(hello);
            }
            _ => learner.extend(device_answer(&mut self.inner, bytes)?),
        }
        Ok(())
    }
}

/// What a man in the middle does with each frame the learner sends: what reaches the device
/// (through its own fields) and what the learner reads next (pushed on `learner`).
pub trait Tap {
    fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()>;
}

/// The learner's link through the man in the middle `T`: the learner reads, at once, what `T`
/// pushed for it, and nothing once that is read. Reads through to `T`'s fields.
pub struct Tapped<T> {
    tap: T,
    learner: VecDeque<u8>,
}

impl<T> Tapped<T> {
    pub fn new(tap: T) -> Self {
        Self { tap, learner: VecDeque::new() }
    }

    pub fn into_inner(self) -> T {
        self.tap
    }
}

impl<T: Tap> Link for Tapped<T> {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.tap.send(bytes, &mut self.learner)
    }

    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        Ok(self.learner.pop_front())
    }
}

impl<T> std::ops::Deref for Tapped<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.tap
    }
}

impl<T> std::ops::DerefMut for Tapped<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.tap
    }
}

/// A device's link that, from its second hello on, shows B = R = `bound` (a device
/// re-provisioned under the same key, or whoever holds it, rewriting the device's hello); with
/// `swallow_queries` no other frame reaches the device (nothing is spent, nothing answered).
pub struct Reprovisioned {
    pub inner: Dev,
    bound: f64,
    swallow_queries: bool,
    reader: StreamReader,
    hellos: u32,
    /// The rewritten hellos the learner was sent.
    pub answered: u32,
}

impl Reprovisioned {
    pub fn new(inner: Dev, bound: f64, swallow_queries: bool) -> Tapped<Self> {
        let reader = StreamReader::new();
        Tapped::new(Self { inner, bound, swallow_queries, reader, hellos: 0, answered: 0 })
    }
}

impl Tap for Reprovisioned {
    fn send(&mut self, bytes: &[u8], learner: &mut VecDeque<u8>) -> io::Result<()> {
        let device = self.inner.auth();
        let mut hello_request = None;
        for &b in bytes {
            if let Some(Ok(frame)) = self.reader.push(b)
                && let Ok(Repr { seq, message: Message::HelloRequest(nonce) }) = Repr::parse(&frame, &device)
            {
                hello_request = Some((seq, nonce, frame.tag().to_vec()));
            }
        }
        if hello_request.is_none() && self.swallow_queries {
            return Ok(());
        }
        let reply = device_answer(&mut self.inner, bytes)?;
        let Some((seq, nonce, tag)) = hello_request else {
            learner.extend(reply);
            return Ok(());
        };
        self.hellos += 1;
        if self.hellos == 1 {
            learner.extend(reply);
            return Ok(());
        }
        let answer = Auth { nonce, ..device }.answering(&tag);
        let mut reader = StreamReader::new();
        for &b in &reply {
            if let Some(Ok(frame)) = reader.push(b)
                && let Ok(Repr { message: Message::Hello(h), .. }) = Repr::parse(&frame, &answer)
            {
                let bound = Bound::new(self.bound).unwrap();
                let h = Hello { config: DeviceConfig { b: bound, r: bound, ..h.config }, ..h };
                let mut buf = [0u8; MAX_ENCODED_LEN];
                learner
                    .extend(Repr::new(seq, Message::Hello(h)).emit_framed(&mut buf, &answer).unwrap().iter());
                self.answered += 1;
            }
        }
        Ok(())
    }
}
