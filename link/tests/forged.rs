//! Issue #25, item 1, on the learner's side (in process): before every genuine reply the link
//! delivers frames an attacker made — forged reports (another key), a report of +∞, a replay
//! of an earlier genuine report, and reports under the device's own key (a faulty or
//! compromised device) that are off its grid, beyond its range, for another ε, or show a budget
//! that rose. The learner takes exactly the genuine reports (the values a clean link gives),
//! counts each dropped frame under its reason, and the device spends ε once per round.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use ldp_core::device::{DeviceApp, SensorModel, SimulatedSensor};
use ldp_core::wire::{Auth, LinkKey, MAX_ENCODED_LEN, Message, Refusal, Repr, StreamReader};
use ldp_core::{
    Bound, BudgetPolicy, DeviceConfig, Epsilon, LaplaceMechanism, MemoryStore, Release, Report, Reporter,
};
use ldp_link::client::WireClient;
use ldp_link::device::{Device, DeviceError};
use ldp_link::fleet::{Fleet, Member, Routing};
use ldp_link::transport::{Link, LoopbackLink};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use crate::common::{device_answer, hello_in, released_values};

const ROUNDS: u32 = 50;
const SEED: [u8; 32] = [4; 32];
const ID: u64 = 9;

fn device() -> LoopbackLink<MemoryStore, SimulatedSensor<ChaCha20Rng>> {
    device_of(ID, SEED)
}

fn device_of(id: u64, seed: [u8; 32]) -> LoopbackLink<MemoryStore, SimulatedSensor<ChaCha20Rng>> {
    let policy = BudgetPolicy::new(Epsilon::new(1.0).unwrap(), Epsilon::new(1000.0).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(1.0).unwrap(), r: Bound::new(1.0).unwrap(), policy };
    let reporter = Reporter::open(config, MemoryStore::provisioned(seed), [0; 32]).unwrap();
    let world = ChaCha20Rng::seed_from_u64(4);
    let source = SimulatedSensor::new(SensorModel::new(100, Bound::new(1.0).unwrap()).unwrap(), world);
    LoopbackLink::new(DeviceApp::new(reporter, source, id))
}

/// What the attacker sends before each genuine reply to a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Attack {
    /// A report for the query's number under another key, value 2^52·2^960, budget 100.
    Forged,
    /// Grid exponent 1024 (+∞ on main), under another key and under the device's key.
    Infinite,
    /// The previous genuine report, replayed.
    Replayed,
    /// Under the device's key: one grid step off its mechanism's grid.
    OffGrid,
    /// Under the device's key: far beyond B + R plus its noise.
    OutOfRange,
    /// Under the device's key: for ε/2 when ε was asked.
    WrongEpsilon,
    /// Under the device's key: more budget left than before.
    BudgetRose,
    /// Under the device's key: a refusal of the query's parameters (a member that holds its
    /// own key claiming every query is malformed).
    Param,
}

/// The device's link with an attacker in it (module docs).
struct Attacked<L> {
    inner: L,
    attack: Attack,
    device: Auth,
    session: u64,
    /// The learner's nonce, read off its last hello request (wire format 4: not secret).
    nonce: [u8; 16],
    /// The device's conversation number, read off its last hello (wire format 5: not secret).
    conversation: u32,
    inbound: VecDeque<u8>,
    last_genuine: Option<Vec<u8>>,
    reader: StreamReader,
}

impl<L> Attacked<L> {
    /// `inner` with `attack` in it, before any hello: `device` is the device's own key.
    fn on(inner: L, attack: Attack, device: Auth) -> Self {
        Attacked {
            inner,
            attack,
            device,
            session: 0,
            nonce: [0; 16],
            conversation: 0,
            inbound: VecDeque::new(),
            last_genuine: None,
            reader: StreamReader::new(),
        }
    }
}

fn framed(repr: Repr, auth: &Auth) -> Vec<u8> {
    let mut buf = [0u8; MAX_ENCODED_LEN];
    repr.emit_framed(&mut buf, auth).unwrap().to_vec()
}

impl<L: Link> Attacked<L> {
    /// Forged replies to the query `seq` whose tag is `request_tag`: the key holder's are made
    /// as the device would make them (its session, the learner's nonce, the conversation, bound
    /// to the request).
    fn forgeries(&self, seq: u32, request_tag: &[u8]) -> Vec<Vec<u8>> {
        let key_holder =
            Auth { session: self.session, nonce: self.nonce, conversation: self.conversation, ..self.device }
                .answering(request_tag);
        let stranger = Auth { key: LinkKey::new([0xEE; 32]), ..key_holder };
        // A report this device could send for the query (ε = 1, B = R = 1), to alter one field.
        let one = Bound::new(1.0).unwrap();
        let ctl = LaplaceMechanism::ctl(Epsilon::new(1.0).unwrap(), one, one).unwrap();
        let genuine = Report {
            release: Release { index: 3, grid_log2: ctl.grid_log2() },
            epsilon: 1.0,
            epsilon_effective: ctl.epsilon_effective(),
            budget_remaining: 0.0,
        };
        let report = |r: Report| Repr::new(seq, Message::Report(r));
        match self.attack {
            Attack::Forged => {
                let huge = Report {
                    release: Release { index: 1 << 52, grid_log2: 960 },
                    budget_remaining: 100.0,
                    ..genuine
                };
                vec![framed(report(huge), &stranger)]
            }
            Attack::Infinite => {
                // Built by hand: no encoder emits a non-finite value.
                let mut raw = vec![ldp_core::wire::VERSION, 0x82];
                raw.extend_from_slice(&seq.to_le_bytes());
                raw.extend_from_slice(&1i64.to_le_bytes());
                raw.extend_from_slice(&1024i16.to_le_bytes());
                for x in [1.0f64, 0.9990234375, 0.0] {
                    raw.extend_from_slice(&x.to_le_bytes());
                }
                [stranger, key_holder]
                    .iter()
                    .map(|auth| {
                        let mut frame = raw.clone();
                        frame.extend_from_slice(&auth.tag(auth.session, &raw));
                        frame.extend_from_slice(&ldp_core::wire::checksum(&frame).to_le_bytes());
                        let mut out = vec![0u8; MAX_ENCODED_LEN];
                        let n = cobs::encode(&frame, &mut out);
                        out.truncate(n);
                        out.push(0);
                        out
                    })
                    .collect()
            }
            Attack::Replayed => self.last_genuine.clone().into_iter().collect(),
            Attack::OffGrid => {
                let r = Report {
                    release: Release { grid_log2: ctl.grid_log2() + 1, ..genuine.release },
                    ..genuine
                };
                vec![framed(report(r), &key_holder)]
            }
            Attack::OutOfRange => {
                let r = Report { release: Release { index: 1 << 40, ..genuine.release }, ..genuine };
                vec![framed(report(r), &key_holder)]
            }
            Attack::WrongEpsilon => {
                vec![framed(report(Report { epsilon: 0.5, epsilon_effective: 0.5, ..genuine }), &key_holder)]
            }
            Attack::BudgetRose => {
                vec![framed(report(Report { budget_remaining: 1e9, ..genuine }), &key_holder)]
            }
            Attack::Param => {
                let refusal = Refusal::Param(ldp_core::ParamError::EpsilonNotPositive);
                vec![framed(Repr::new(seq, Message::Refusal(refusal)), &key_holder)]
            }
        }
    }
}

impl<L: Link> Link for Attacked<L> {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        // The attacker reads the query's number off the link (frames are not secret).
        let mut seq = None;
        let mut query = false;
        let mut tag = Vec::new();
        for &b in bytes {
            if let Some(Ok(frame)) = self.reader.push(b) {
                seq = Some(frame.seq());
                query = frame.msg_type() == 0x02;
                tag = frame.tag().to_vec();
                if let Ok(Repr { message: Message::HelloRequest(nonce), .. }) =
                    Repr::parse(&frame, &self.device)
                {
                    self.nonce = nonce;
                }
            }
        }
        if let (Some(seq), true) = (seq, query) {
            for f in self.forgeries(seq, &tag) {
                self.inbound.extend(f);
            }
        }
        // The genuine reply, read off the link after the forgeries (and kept for a replay).
        let reply = device_answer(&mut self.inner, bytes)?;
        let answer = Auth { nonce: self.nonce, ..self.device }.answering(&tag);
        if let Some(hello) = hello_in(&reply, &answer) {
            (self.session, self.conversation) = hello;
        }
        if query {
            self.last_genuine = Some(reply.clone());
        }
        self.inbound.extend(reply);
        Ok(())
    }

    fn recv_byte(&mut self, _timeout: Duration) -> io::Result<Option<u8>> {
        Ok(self.inbound.pop_front())
    }
}

#[test]
fn every_forged_replayed_or_impossible_report_is_dropped_and_counted() {
    let clean_link = device();
    let auth = clean_link.auth();
    assert_eq!(auth, Auth::new(LinkKey::from_seed(&SEED), ID), "the key is the seed's");
    let clean = released_values(&mut WireClient::new(clean_link, auth), ROUNDS);
    for attack in [
        Attack::Forged,
        Attack::Infinite,
        Attack::Replayed,
        Attack::OffGrid,
        Attack::OutOfRange,
        Attack::WrongEpsilon,
        Attack::BudgetRose,
    ] {
        let link = Attacked::on(device(), attack, auth);
        let mut client = WireClient::new(link, auth);
        // The loopback answers at once, and with no byte waiting the client stops waiting
        // whatever the timeout: a long one only keeps a stalled (loaded) machine from counting
        // a resend. With 1 ms, one run under load resent once.
        client.timeout = Duration::from_secs(3600);
        let got = released_values(&mut client, ROUNDS);
        assert_eq!(got, clean, "{attack:?}: the learner took only the device's reports");
        let spent = client.link().inner.app().reporter().accountant().spent();
        assert_eq!(spent, f64::from(ROUNDS), "{attack:?}: one ε per round");
        let d = client.dropped;
        let n = u64::from(ROUNDS);
        let expected = match attack {
            Attack::Forged => d.bad_tag == n,
            Attack::Infinite => d.bad_tag == n && d.non_finite == n,
            // The first round has nothing to replay yet. (Wire format 4 binds a reply to the
            // request it answers: the previous round's reply fails this one's tag, and the
            // learner recognises it as its earlier request's reply, a replay.)
            Attack::Replayed => d.replayed == n - 1 && d.total() == n - 1,
            Attack::OffGrid => d.off_grid == n,
            Attack::OutOfRange => d.out_of_range == n,
            Attack::WrongEpsilon => d.wrong_epsilon == n,
            Attack::BudgetRose => d.budget_rose == n,
            Attack::Param => unreachable!("not a report: its own test"),
        };
        assert!(expected, "{attack:?}: {d:?}");
        assert_eq!(client.resends, 0, "{attack:?}: no forgery cost a resend");
    }
}

/// A fleet member holding its own key refuses every query as malformed (`Param`, under its
/// key): it is benched like a silent member, and the run goes on with the others. Before, a
/// parameter refusal from any member ended the run ("every device would refuse").
#[test]
fn a_member_refusing_every_query_as_malformed_does_not_end_a_fleet_run() {
    let auth = device().auth();
    let attacked = |attack| Attacked::on(device(), attack, auth);
    let member = |link: Attacked<_>, auth| {
        let mut client = WireClient::new(link, auth);
        client.timeout = Duration::from_secs(3600);
        Member::new(client).unwrap()
    };
    let eps = Epsilon::new(1.0).unwrap();
    // Member 2 is honest (an attacker link that forges nothing it would be believed for: a
    // replay of its own last reply, dropped as such).
    let honest = device_of(10, [5; 32]);
    let honest_auth = honest.auth();
    let honest = Attacked { inner: honest, device: honest_auth, ..attacked(Attack::Replayed) };
    let mut fleet = Fleet::new(
        vec![member(attacked(Attack::Param), auth), member(honest, honest_auth)],
        eps,
        Routing::RoundRobin,
        0,
    );
    for round in 0..6 {
        let got = fleet.query(round % 100, None);
        assert!(got.is_ok(), "round {round}: {got:?}");
    }
    let ledger = fleet.ledger();
    assert_eq!(ledger[1].reports, 6, "the honest member answered every round: {ledger:?}");
    assert!(ledger[0].skipped >= 1 && ledger[0].reports == 0, "{ledger:?}");
    // A valid query (the learner builds its mechanism) refused as malformed by every member:
    // the members' fault, never the run's error (review 10); a query the learner itself
    // finds invalid is refused without asking anyone (fleet_members.rs).
    let mut all_rogue = Fleet::new(vec![member(attacked(Attack::Param), auth)], eps, Routing::RoundRobin, 0);
    let got = all_rogue.query(0, None);
    assert!(matches!(got, Err(DeviceError::FleetExhausted { .. })), "a valid query, blamed: {got:?}");
}
