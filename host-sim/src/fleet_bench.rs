//! `host-sim fleet bench`: how fast a learner gets reports from a fleet over a broker, and
//! whether the learner, the devices or the transport is the bottleneck.
//!
//! For each fleet size N it starts N simulated devices in this process
//! ([`Devices`](ldp_link::mqtt::Devices) in a thread, state in a temporary directory, simulated
//! keys, the `device` experiment's environment, a budget that does not run out), connects an
//! [`MqttFleet`] and measures:
//!
//! - **sequential rounds** through a round-robin [`Fleet`]: each round's latency (p50, p99,
//!   max) and rounds per second;
//! - **throughput** with queries in flight to many devices at once: `inflight` threads, each
//!   with its own [`WireClient`]s over a share of the devices, querying them in turn; reports
//!   per second;
//! - **the learner's own time per round**: the time inside `Fleet::query` that is not spent
//!   waiting for the link (a wall-clock upper bound on its CPU time: on a loaded machine it
//!   includes time the thread was not scheduled), and, separately, the GP learner's policy
//!   update (LDP-TGP-UCB's `select` + `observe` over as many rounds) — what a real learner
//!   adds per round.
//!
//! With no broker (`--broker none`) the same is measured over [`LoopbackLink`](ldp_link::transport::LoopbackLink): the device
//! application in the learner's thread, no reply slot, no broker, no disk — the floor.
//!
//! Every device replies [`REPLY_SLOT`](ldp_link::mqtt::REPLY_SLOT) after the query arrived, so a
//! sequential round over MQTT cannot be faster than that slot plus two trips through the
//! broker.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ldp_core::Epsilon;
use serde::Serialize;

use crate::experiments::experiment_env;
use crate::experiments::runner::{in_flight_loop, problem_for};
use crate::run::settings::RunConfig;
use ldp_learn::bo::ZHOU_TAN_ALGORITHMS;
use ldp_learn::env::{Environment, SimRng};
use ldp_learn::optimizer::Optimizer;
use ldp_learn::policy::Constants;
use ldp_link::client::{LinkError, WireClient};
use ldp_link::device::Submitted;
use ldp_link::device::{Device, DeviceError};
use ldp_link::fleet::{Fleet, InFlightFleet, Member, Routing, in_process};
use ldp_link::mqtt::{BrokerUrl, DevicesSpec, FleetWait, MqttError, MqttFleet, Seeds, ServeStats};
use ldp_link::transport::Link;

/// Round numbers of the throughput phase start here, far from the sequential phase's, so that
/// no query repeats an earlier one with the same sequence number (the device would answer it
/// from its reply cache without a new report).
const BURST_ROUND_BASE: u32 = 1 << 24;
/// A sequential round's p50 over MQTT at or above this (ms) is taken for Nagle's algorithm
/// delaying each small frame until the previous one's delayed acknowledgement (40 ms on Linux);
/// with `set_tcp_nodelay` a round on one machine takes a few ms.
const NAGLE_P50_MS: f64 = 30.0;
/// The longest wait for a fleet's hellos.
const HELLO_PATIENCE: Duration = Duration::from_secs(120);

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchSpec {
    /// The broker, or `None` for the in-process comparison only.
    pub broker: Option<BrokerUrl>,
    /// Fleet sizes.
    pub sizes: Vec<usize>,
    /// Sequential rounds measured per size.
    pub rounds: usize,
    /// Sequential rounds before measuring.
    pub warmup: usize,
    /// Queries in flight at once in the throughput phase (at most N).
    pub inflight: usize,
    /// Queries in the throughput phase [default: max(4 × rounds, 2 × N)].
    pub queries: Option<usize>,
    /// Also measure in process (always, without a broker).
    pub in_process: bool,
    /// Also measure learning ([`Learning`]).
    pub learn: bool,
}

/// One fleet size's measurements.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    /// `mqtt` or `in-process`.
    pub mode: &'static str,
    /// Devices in the fleet.
    pub devices: usize,
    /// Sequential rounds measured.
    pub rounds: usize,
    /// Median round latency (ms).
    pub p50_ms: f64,
    /// 99th percentile round latency (ms).
    pub p99_ms: f64,
    /// Slowest round (ms).
    pub max_ms: f64,
    /// Sequential rounds per second.
    pub rounds_per_s: f64,
    /// Time per round inside `Fleet::query` not spent waiting on the link (µs).
    pub learner_us_per_round: f64,
    /// Queries in flight at once in the throughput phase.
    pub inflight: usize,
    /// Queries in the throughput phase.
    pub queries: usize,
    /// Reports per second with `inflight` queries in flight.
    pub reports_per_s: f64,
    /// Resends by the learner's clients (both phases).
    pub resends: u64,
    /// Replies the devices sent after their slot (an overloaded host); 0 in process.
    pub late_replies: u64,
    /// Seconds to boot the devices and collect their hellos.
    pub setup_s: f64,
    /// With `--learn`: the learning phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learning: Option<Learning>,
}

/// A learner told every report of `queries` queries, `inflight` of them waiting at distinct
/// devices at once (an [`InFlightFleet`] over MQTT; in process the sequential fleet, whose
/// devices answer at once): LDP-TGP-UCB asks, the oldest report is told before each ask, as
/// `host-sim run --in-flight` does.
#[derive(Clone, Debug, Serialize)]
pub struct Learning {
    /// Reports told to the learner.
    pub reports: usize,
    /// Reports told per second of the phase.
    pub reports_per_s: f64,
    /// The phase's time not spent in the device's calls (the learner's `ask` and `tell`, and the
    /// loop), over the phase's time.
    pub learner_share: f64,
}

/// The GP learner's own cost per round.
#[derive(Clone, Debug, Serialize)]
pub struct PolicyCost {
    /// Rounds run.
    pub rounds: usize,
    /// Mean `select` + `observe` time per round (µs).
    pub mean_us: f64,
    /// Mean over the last tenth of the rounds (µs): the cost grows with the data.
    pub last_tenth_us: f64,
}

/// What `fleet bench` measured.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// One row per mode and size.
    pub rows: Vec<BenchRow>,
    /// LDP-TGP-UCB's update per round, over `rounds` rounds.
    pub policy: PolicyCost,
    /// `/proc/loadavg` before and after.
    pub load: [String; 2],
    /// Logical CPUs.
    pub cpus: usize,
}

/// The benchmark could not run.
#[derive(Debug)]
#[non_exhaustive]
pub enum BenchError {
    /// The broker or the devices.
    Mqtt(MqttError),
    /// A learner's query failed.
    Device(DeviceError),
    /// A throughput query failed.
    Link(LinkError),
    /// The settings.
    Settings(String),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Mqtt(e) => write!(f, "{e}"),
            Self::Device(e) => write!(f, "a fleet round failed: {e}"),
            Self::Link(e) => {
                write!(f, "a throughput query failed: {e} (fewer --inflight, or a less busy machine)")
            }
            Self::Settings(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for BenchError {}

impl From<MqttError> for BenchError {
    fn from(e: MqttError) -> Self {
        Self::Mqtt(e)
    }
}

/// A link that counts the time spent waiting in `recv_byte`.
struct TimedLink<L> {
    inner: L,
    waited_ns: Arc<AtomicU64>,
}

impl<L: Link> Link for TimedLink<L> {
    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.inner.send(bytes)
    }

    fn recv_byte(&mut self, timeout: Duration) -> std::io::Result<Option<u8>> {
        let start = Instant::now();
        let byte = self.inner.recv_byte(timeout);
        let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.waited_ns.fetch_add(ns, Ordering::Relaxed);
        byte
    }
}

/// Runs the benchmark; `progress` hears what it is doing.
pub fn run_bench(spec: &BenchSpec, mut progress: impl FnMut(&str)) -> Result<BenchReport, BenchError> {
    if spec.sizes.is_empty() || spec.sizes.contains(&0) {
        return Err(BenchError::Settings("--devices: give sizes of at least 1, e.g. 1,10,100".into()));
    }
    if spec.rounds == 0 || spec.inflight == 0 {
        return Err(BenchError::Settings("--rounds and --inflight must be at least 1".into()));
    }
    let load_before = load_average();
    let (env, eps) = experiment_env("device", 0, 0, None)?;
    // A budget no phase can use up: every query of every phase to one device, and then some.
    let per_device = (spec.warmup + spec.rounds + spec.queries.unwrap_or(0) + 4 * spec.rounds) as f64;
    let budget = eps.get() * (per_device + 10_000.0);
    let mut rows = Vec::new();
    for (index, &n) in spec.sizes.iter().enumerate() {
        if let Some(url) = &spec.broker {
            progress(&format!("mqtt, {n} devices ..."));
            // Ids of this process and size only: other devices' hellos on the broker are left out.
            let first_id = (u64::from(std::process::id()) << 32) + ((index as u64) << 24) + 1;
            rows.push(over_mqtt(spec, url, n, first_id, &env, eps, budget)?);
        }
        if spec.in_process || spec.broker.is_none() {
            progress(&format!("in process, {n} devices ..."));
            rows.push(in_memory(spec, n, &env, eps, budget)?);
        }
    }
    progress("the GP learner's update ...");
    let policy = policy_cost(env.as_ref(), eps, spec.warmup + spec.rounds)?;
    Ok(BenchReport {
        rows,
        policy,
        load: [load_before, load_average()],
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
    })
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map(|s| s.trim().to_string()).unwrap_or_else(|_| "?".into())
}

fn burst_queries(spec: &BenchSpec, n: usize) -> usize {
    spec.queries.unwrap_or((4 * spec.rounds).max(2 * n))
}

/// A fresh directory for a size's devices.
fn state_dir(n: usize) -> PathBuf {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    std::env::temp_dir().join(format!("ldp-fleet-bench-{}-{n}-{nanos}", std::process::id()))
}

fn over_mqtt(
    spec: &BenchSpec,
    url: &BrokerUrl,
    n: usize,
    first_id: u64,
    env: &Arc<dyn Environment>,
    eps: Epsilon,
    budget: f64,
) -> Result<BenchRow, BenchError> {
    let setup = Instant::now();
    let dir = state_dir(n);
    let mut devices = DevicesSpec::new(url.clone(), &dir, n, Arc::clone(env), eps, budget);
    devices.first_id = first_id;
    devices.seeds = Seeds::Simulated { trial_seed: n as u64 };
    devices.provision = true; // new devices in a fresh directory
    let booted = ldp_link::mqtt::Devices::open(&devices)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let serving = std::thread::Builder::new()
        .name("bench-devices".into())
        .spawn(move || booted.serve(&flag))
        .map_err(|e| BenchError::Settings(format!("cannot start the devices' thread: {e}")))?;
    // The devices wrote their keys when they were provisioned (`ldp_link::keys`).
    let result = ldp_link::keys::read(&dir)
        .map_err(|e| BenchError::Settings(e.to_string()))
        .and_then(|keys| measure_mqtt(spec, url, n, first_id, (env.as_ref(), eps), setup, &keys));
    stop.store(true, Ordering::Relaxed);
    let served: Result<ServeStats, MqttError> = serving.join().unwrap_or_else(|_| {
        Err(MqttError::Device { id: first_id, reason: "the devices' thread panicked".into() })
    });
    let _ = std::fs::remove_dir_all(&dir);
    let mut row = result?;
    row.late_replies = served?.late_replies; // the devices took their hellos off the broker
    Ok(row)
}

fn measure_mqtt(
    spec: &BenchSpec,
    url: &BrokerUrl,
    n: usize,
    first_id: u64,
    (env, eps): (&dyn Environment, Epsilon),
    setup: Instant,
    keys: &ldp_link::keys::Keys,
) -> Result<BenchRow, BenchError> {
    let ids = first_id..first_id + n as u64;
    let fleet = MqttFleet::connect(url, FleetWait { devices: Some(n), patience: HELLO_PATIENCE }, keys)?;
    // Other devices' hellos count towards `devices`: wait for ours.
    while ids.clone().any(|id| fleet.latest_hello(id).is_none()) {
        if setup.elapsed() > HELLO_PATIENCE {
            let found = ids.clone().filter(|&id| fleet.latest_hello(id).is_some()).count();
            return Err(
                MqttError::TooFewDevices { expected: Some(n), found, patience: HELLO_PATIENCE }.into()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let ours = |fleet: &MqttFleet| {
        fleet.members().into_iter().filter(|(hello, _)| ids.contains(&hello.device_id)).collect::<Vec<_>>()
    };
    let setup_s = setup.elapsed().as_secs_f64();
    let waited = Arc::new(AtomicU64::new(0));
    // Each member from its own answered hello (bound to this learner's nonce), not the
    // retained one, which anyone may replay from an earlier run of the device (review 13).
    let members = ours(&fleet)
        .into_iter()
        .map(|(_, link)| {
            let auth = link.auth();
            let client = WireClient::new(TimedLink { inner: link, waited_ns: Arc::clone(&waited) }, auth);
            Member::new(client).map_err(BenchError::Link)
        })
        .collect::<Result<Vec<_>, BenchError>>()?;
    let (mut row, mut resends) = sequential(spec, members, eps, &waited)?;
    let clients = ours(&fleet)
        .into_iter()
        .map(|(_, link)| {
            let auth = link.auth();
            WireClient::new(link, auth)
        })
        .collect();
    let (queries, reports_per_s, burst_resends) =
        throughput(clients, spec.inflight.min(n), burst_queries(spec, n), eps)?;
    resends += burst_resends;
    if spec.learn {
        // The sequence numbers go on from the throughput phase's, in a new conversation.
        let start = BURST_ROUND_BASE + (burst_queries(spec, n) as u32) + 1;
        let members = ours(&fleet)
            .into_iter()
            .map(|(_, link)| {
                let auth = link.auth();
                Member::new(WireClient::new(link, auth).starting_after(start)).map_err(BenchError::Link)
            })
            .collect::<Result<Vec<_>, BenchError>>()?;
        let fleet = Fleet::new(members, eps, Routing::RoundRobin, 0);
        let mut fleet = InFlightFleet::new(fleet, spec.inflight.min(n))
            .map_err(|e| BenchError::Settings(format!("cannot start the query threads: {e}")))?;
        row.learning = Some(learning(&mut fleet, env, eps, spec.inflight.min(n), burst_queries(spec, n))?);
    }
    row.queries = queries;
    row.reports_per_s = reports_per_s;
    row.inflight = spec.inflight.min(n);
    row.resends = resends;
    row.setup_s = setup_s;
    Ok(row)
}

fn in_memory(
    spec: &BenchSpec,
    n: usize,
    env: &Arc<dyn Environment>,
    eps: Epsilon,
    budget: f64,
) -> Result<BenchRow, BenchError> {
    let setup = Instant::now();
    let env: &dyn Environment = env.as_ref();
    let waited = Arc::new(AtomicU64::new(0));
    let build = || in_process(env, n as u64, n, eps, budget).map_err(BenchError::Device);
    let members = build()?
        .into_iter()
        .map(|m| m.into_client().ok_or_else(held))
        .map(|client| {
            let client = client?;
            let auth = *client.auth();
            let link = TimedLink { inner: client.into_link(), waited_ns: Arc::clone(&waited) };
            Member::new(WireClient::new(link, auth)).map_err(BenchError::Link)
        })
        .collect::<Result<Vec<_>, BenchError>>()?;
    let setup_s = setup.elapsed().as_secs_f64();
    let (mut row, resends) = sequential(spec, members, eps, &waited)?;
    let clients = build()?.into_iter().map(|m| m.into_client().ok_or_else(held)).collect::<Result<_, _>>()?;
    let inflight = spec.inflight.min(n);
    let (queries, reports_per_s, burst_resends) = throughput(clients, inflight, burst_queries(spec, n), eps)?;
    if spec.learn {
        let mut fleet = Fleet::new(build()?, eps, Routing::RoundRobin, 0);
        row.learning = Some(learning(&mut fleet, env, eps, inflight, burst_queries(spec, n))?);
    }
    row.mode = "in-process";
    row.queries = queries;
    row.reports_per_s = reports_per_s;
    row.inflight = inflight;
    row.resends = resends + burst_resends;
    row.setup_s = setup_s;
    Ok(row)
}

/// Sequential rounds through a round-robin fleet; the row with its latency figures (and the
/// learner's resends).
fn sequential<L: Link>(
    spec: &BenchSpec,
    members: Vec<Member<TimedLink<L>>>,
    eps: Epsilon,
    waited: &AtomicU64,
) -> Result<(BenchRow, u64), BenchError> {
    let devices = members.len();
    let mut fleet = Fleet::new(members, eps, Routing::RoundRobin, 0);
    let arms = 100;
    for t in 0..spec.warmup {
        fleet.query(t % arms, None).map_err(BenchError::Device)?;
    }
    let mut latencies = Vec::with_capacity(spec.rounds);
    waited.store(0, Ordering::Relaxed);
    let start = Instant::now();
    for t in 0..spec.rounds {
        let round = Instant::now();
        fleet.query(t % arms, None).map_err(BenchError::Device)?;
        latencies.push(round.elapsed());
    }
    let total = start.elapsed();
    let busy = total.saturating_sub(Duration::from_nanos(waited.load(Ordering::Relaxed)));
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let at = |q: f64| latencies[((q * latencies.len() as f64).ceil() as usize).clamp(1, latencies.len()) - 1];
    let resends = fleet.members().iter().map(|m| m.client().resends).sum();
    let row = BenchRow {
        mode: "mqtt",
        devices,
        rounds: spec.rounds,
        p50_ms: ms(at(0.5)),
        p99_ms: ms(at(0.99)),
        max_ms: ms(latencies[latencies.len() - 1]),
        rounds_per_s: spec.rounds as f64 / total.as_secs_f64(),
        learner_us_per_round: busy.as_secs_f64() * 1e6 / spec.rounds as f64,
        inflight: 0,
        queries: 0,
        reports_per_s: 0.0,
        resends: 0,
        late_replies: 0,
        setup_s: 0.0,
        learning: None,
    };
    Ok((row, resends))
}

/// A new member's client is its own (no query in flight holds it): the error if it were not.
fn held() -> BenchError {
    BenchError::Settings("a member's client is held by a query in flight".into())
}

/// [`Learning`]: LDP-TGP-UCB told `reports` reports from `device`, `inflight` queries
/// outstanding, the run loop's ([`in_flight_loop`]).
fn learning(
    device: &mut dyn Device,
    env: &dyn Environment,
    eps: Epsilon,
    inflight: usize,
    reports: usize,
) -> Result<Learning, BenchError> {
    let config = RunConfig { epsilon: Some(eps), horizon: reports, ..RunConfig::default() };
    let problem = problem_for(env, &config).map_err(|e| BenchError::Settings(e.to_string()))?;
    let mut learner = Optimizer::from_problem(ZHOU_TAN_ALGORITHMS[1], &problem, config.constants, 0)
        .map_err(|e| BenchError::Settings(e.to_string()))?;
    let mut timed = Timed { device, waited: Duration::ZERO };
    let start = Instant::now();
    let mut told = 0;
    let outcome = in_flight_loop(&mut learner, &mut timed, reports, inflight, |_| told += 1);
    timed.drain();
    outcome.map_err(|e| BenchError::Settings(format!("the learning phase stopped: {e}")))?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(Learning {
        reports: told,
        reports_per_s: told as f64 / seconds,
        learner_share: 1.0 - timed.waited.as_secs_f64() / seconds,
    })
}

/// A device whose calls are timed: what is not spent in them is the learner's (and the loop's).
struct Timed<'a> {
    device: &'a mut dyn Device,
    waited: Duration,
}

impl Timed<'_> {
    fn time<T>(&mut self, call: impl FnOnce(&mut dyn Device) -> T) -> T {
        let start = Instant::now();
        let out = call(&mut *self.device);
        self.waited += start.elapsed();
        out
    }
}

impl Device for Timed<'_> {
    fn query(&mut self, arm: usize, level: Option<f64>) -> Result<f64, DeviceError> {
        self.time(|d| d.query(arm, level))
    }
    fn submit(&mut self, arm: usize, level: Option<f64>) -> Result<Submitted, DeviceError> {
        self.time(|d| d.submit(arm, level))
    }
    fn collect(&mut self, ticket: u64) -> Result<f64, DeviceError> {
        self.time(|d| d.collect(ticket))
    }
    fn drain(&mut self) {
        self.time(|d| d.drain())
    }
}

/// `total` queries, `inflight` at once: `inflight` threads, each querying its share of the
/// clients in turn. (queries, reports per second, resends).
fn throughput<L: Link + Send>(
    clients: Vec<WireClient<L>>,
    inflight: usize,
    total: usize,
    eps: Epsilon,
) -> Result<(usize, f64, u64), BenchError> {
    let mut groups: Vec<Vec<WireClient<L>>> = (0..inflight).map(|_| Vec::new()).collect();
    for (i, client) in clients.into_iter().enumerate() {
        groups[i % inflight].push(client);
    }
    let per_group = total.div_ceil(inflight);
    let start = Instant::now();
    let results: Vec<Result<u64, LinkError>> = std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|mut group| {
                s.spawn(move || {
                    for k in 0..per_group {
                        let i = k % group.len();
                        let round = BURST_ROUND_BASE + (k / group.len()) as u32;
                        match group[i].query(round, (k % 100) as u32, eps, None)? {
                            Ok(_) => {}
                            Err(refusal) => {
                                return Err(LinkError::Unexpected(ldp_core::wire::Message::Refusal(refusal)));
                            }
                        }
                    }
                    Ok(group.iter().map(|c| c.resends).sum())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(Err(LinkError::Encode))).collect()
    });
    let elapsed = start.elapsed();
    let mut resends = 0;
    for r in results {
        resends += r.map_err(BenchError::Link)?;
    }
    let queries = per_group * inflight;
    Ok((queries, queries as f64 / elapsed.as_secs_f64(), resends))
}

/// LDP-TGP-UCB's `ask` + `tell` per round (the experiment loop's [`Optimizer`] calls) over
/// `rounds` rounds on `env`.
fn policy_cost(env: &dyn Environment, epsilon: Epsilon, rounds: usize) -> Result<PolicyCost, BenchError> {
    let config = RunConfig { epsilon: Some(epsilon), horizon: rounds, ..RunConfig::default() };
    let problem = problem_for(env, &config).map_err(|e| BenchError::Settings(e.to_string()))?;
    let mut policy = Optimizer::from_problem(ZHOU_TAN_ALGORITHMS[1], &problem, Constants::Practical, 0)
        .map_err(|e| BenchError::Settings(e.to_string()))?;
    let mut rng = <SimRng as rand_core::SeedableRng>::seed_from_u64(0);
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let mut reward = |arm| env.sample(arm, &mut rng);
        let start = Instant::now();
        let arm = policy.ask();
        let elapsed = start.elapsed();
        let report = reward(arm);
        let start = Instant::now();
        policy.tell(arm, report).map_err(|e| BenchError::Settings(e.to_string()))?;
        times.push(elapsed + start.elapsed());
    }
    let mean =
        |ts: &[Duration]| ts.iter().map(Duration::as_secs_f64).sum::<f64>() * 1e6 / ts.len().max(1) as f64;
    Ok(PolicyCost {
        rounds,
        mean_us: mean(&times),
        last_tenth_us: mean(&times[times.len() - times.len().div_ceil(10)..]),
    })
}

impl BenchReport {
    /// The table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{:<10} {:>7} {:>6} {:>8} {:>8} {:>8} {:>9} {:>12} {:>8} {:>7} {:>10} {:>7} {:>5} {:>7}\n",
            "mode",
            "devices",
            "rounds",
            "p50 ms",
            "p99 ms",
            "max ms",
            "rounds/s",
            "learner µs/r",
            "inflight",
            "queries",
            "reports/s",
            "resends",
            "late",
            "setup s"
        );
        for r in &self.rows {
            out += &format!(
                "{:<10} {:>7} {:>6} {:>8.3} {:>8.3} {:>8.3} {:>9.1} {:>12.1} {:>8} {:>7} {:>10.1} {:>7} {:>5} {:>7.2}\n",
                r.mode,
                r.devices,
                r.rounds,
                r.p50_ms,
                r.p99_ms,
                r.max_ms,
                r.rounds_per_s,
                r.learner_us_per_round,
                r.inflight,
                r.queries,
                r.reports_per_s,
                r.resends,
                r.late_replies,
                r.setup_s
            );
        }
        for r in &self.rows {
            if let Some(l) = &r.learning {
                out += &format!(
                    "learning ({}, {} devices, {} in flight): {:.1} reports/s told to LDP-TGP-UCB over {} reports, the learner {:.1} % of the time\n",
                    r.mode,
                    r.devices,
                    r.inflight,
                    l.reports_per_s,
                    l.reports,
                    100.0 * l.learner_share
                );
            }
            if r.mode == "mqtt" && r.p50_ms >= NAGLE_P50_MS {
                out += &format!(
                    "warning: a round's p50 of {:.1} ms over MQTT looks like Nagle's algorithm holding each frame until the previous one is acknowledged (about 40 ms): configure the broker with `set_tcp_nodelay true` (scripts/mosquitto.conf; docs/fleet.md)\n",
                    r.p50_ms
                );
            }
        }
        out += &format!(
            "LDP-TGP-UCB select+observe: {:.1} µs/round on average over {} rounds, {:.1} µs/round in the last tenth\n",
            self.policy.mean_us, self.policy.rounds, self.policy.last_tenth_us
        );
        out +=
            &format!("load average before: {}; after: {}; {} CPUs\n", self.load[0], self.load[1], self.cpus);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(learn: bool) -> BenchSpec {
        BenchSpec {
            broker: None,
            sizes: vec![6],
            rounds: 10,
            warmup: 2,
            inflight: 4,
            queries: Some(120),
            in_process: true,
            learn,
        }
    }

    #[test]
    fn learning_tells_the_learner_every_report_and_says_its_share() {
        let report = run_bench(&spec(true), |_| {}).expect("the bench runs in process");
        let learning = report.rows[0].learning.as_ref().expect("a learning phase");
        assert_eq!(learning.reports, 120);
        assert!(learning.reports_per_s.is_finite() && learning.reports_per_s > 0.0, "{learning:?}");
        assert!((0.0..=1.0).contains(&learning.learner_share), "{learning:?}");
        assert!(report.table().contains("120 reports"), "{}", report.table());
        let quiet = run_bench(&spec(false), |_| {}).expect("the bench runs in process");
        assert!(quiet.rows[0].learning.is_none());
        assert!(!serde_json::to_string(&quiet).expect("json").contains("learning"));
    }

    #[test]
    fn a_round_held_by_nagles_algorithm_is_warned_of() {
        let mut report = run_bench(&spec(false), |_| {}).expect("the bench runs in process");
        let mut row = report.rows[0].clone();
        row.mode = "mqtt";
        for (p50, warned) in [(41.2, true), (2.5, false)] {
            row.p50_ms = p50;
            report.rows = vec![row.clone()];
            assert_eq!(report.table().contains("set_tcp_nodelay"), warned, "{}", report.table());
        }
    }
}
