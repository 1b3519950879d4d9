//! A learner's client of one device, keyed: the client that remembers, beside the device's key
//! file, the highest boot number it saw, so a later client (in any process) refuses a device
//! whose state was rolled back. Every front end that talks to one device on the wire (a run, a
//! live run, a fleet member on the broker) builds its client here.

use std::path::Path;

use ldp_core::wire::Auth;

use crate::client::WireClient;
use crate::keys::boot_record;
use crate::transport::Link;

/// The client of the device `auth` names over `link`; with `key_file` (the file its key came
/// from), the client keeps that key file and its boot record beside it
/// ([`crate::keys::boot_record`]).
pub fn keyed_client<L: Link>(link: L, auth: Auth, key_file: Option<&Path>) -> WireClient<L> {
    let client = WireClient::new(link, auth);
    match key_file {
        Some(file) => client.with_key_file(file).with_boot_record(&boot_record(file, auth.device_id)),
        None => client,
    }
}
