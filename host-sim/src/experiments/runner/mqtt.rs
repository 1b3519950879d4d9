//! The devices on an MQTT broker as one fleet for one job of a run (`--device mqtt://…`).

use ldp_core::Epsilon;
use ldp_learn::env::Environment;
use ldp_link::client::LinkError;
use ldp_link::connect::keyed_client;
use ldp_link::device::{Device, DeviceError, MemberRecord, Submitted};
use ldp_link::fleet::record::QueryRecord;
use ldp_link::fleet::{Fleet, InFlightFleet, Member, Routing};
use ldp_link::mqtt::{BrokerUrl, FleetWait, MqttFleet};

use super::{check_bounds, keys_origin, learner_keys};
use crate::run::settings::RunError;

/// The devices on an MQTT broker as one fleet for one job: every device whose hello is on the
/// broker, each checked against the environment's B and R. The connection lives as long as
/// the job. With more than one query in flight (`--in-flight N`), N queries wait for their
/// replies at once, at distinct devices ([`InFlightFleet`]). Each query is written to
/// `record`, if given, before it is sent.
pub(super) struct MqttRun {
    fleet: Box<dyn Device>,
    _connection: MqttFleet,
}

impl MqttRun {
    pub(super) fn connect(
        env: &dyn Environment,
        url: &str,
        epsilon: Epsilon,
        routing: Routing,
        seed: u64,
        in_flight: usize,
        record: Option<QueryRecord>,
    ) -> Result<Self, RunError> {
        let mqtt = RunError::Mqtt;
        let url = BrokerUrl::parse(url).map_err(mqtt)?;
        let keys = learner_keys()?;
        let connection =
            MqttFleet::connect(&url, FleetWait { devices: None, patience: FLEET_PATIENCE }, &keys)
                .map_err(mqtt)?;
        let mut members = Vec::new();
        let mut silent: Vec<(u64, LinkError)> = Vec::new();
        for (_, link) in connection.members() {
            // The retained hello only says the device is there: its own, authenticated hello
            // gives the configuration checked here, its session and where its numbers go on.
            let auth = link.auth();
            let mut client = keyed_client(link, auth, keys_origin(auth.device_id).as_deref());
            match client.hello() {
                Ok(hello) => {
                    check_bounds(env, &hello)?;
                    members.push(Member::new(client).map_err(|e| RunError::Device(DeviceError::Link(e)))?);
                }
                // A retained hello outlives a killed device process, and anyone who may
                // publish it can leave one: one device that does not answer is left out of
                // the run, not the end of it.
                Err(e @ (LinkError::Io(_) | LinkError::Encode)) => {
                    return Err(RunError::Device(DeviceError::Link(e)));
                }
                Err(e) => silent.push((auth.device_id, e)),
            }
        }
        if members.is_empty()
            && let Some((_, e)) = silent.pop()
        {
            return Err(RunError::Device(DeviceError::Link(e)));
        }
        // Every device the learner holds a key for and does not use is named in the job's
        // ledger and run.json: a run on 1 of 100 keyed devices does not read as a 1-device fleet.
        let left_out: Vec<u64> =
            keys.keys().copied().filter(|id| !members.iter().any(|m: &Member<_>| m.id() == *id)).collect();
        for id in &left_out {
            let why = silent
                .iter()
                .find(|(s, _)| s == id)
                .map_or("it showed no hello".to_string(), |(_, e)| e.to_string());
            eprintln!("device {id} is left out of this run (the learner holds its key): {why}");
        }
        let mut fleet = Fleet::new(members, epsilon, routing, seed).with_left_out(left_out);
        if let Some(record) = record {
            fleet = fleet.with_record(record);
        }
        let fleet: Box<dyn Device> = if in_flight > 1 {
            let workers = InFlightFleet::new(fleet, in_flight).map_err(|source| {
                RunError::Device(DeviceError::Connect { target: "the fleet's query threads".into(), source })
            })?;
            Box::new(workers)
        } else {
            Box::new(fleet)
        };
        Ok(Self { fleet, _connection: connection })
    }
}

/// How long a run waits for an MQTT fleet's first hellos.
const FLEET_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

impl Device for MqttRun {
    fn query(&mut self, arm: usize, level: Option<f64>) -> Result<f64, DeviceError> {
        self.fleet.query(arm, level)
    }

    fn ledger(&self) -> Option<Vec<MemberRecord>> {
        self.fleet.ledger()
    }

    fn submit(&mut self, arm: usize, level: Option<f64>) -> Result<Submitted, DeviceError> {
        self.fleet.submit(arm, level)
    }

    fn collect(&mut self, ticket: u64) -> Result<f64, DeviceError> {
        self.fleet.collect(ticket)
    }

    fn drain(&mut self) {
        self.fleet.drain()
    }
}
