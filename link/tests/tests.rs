//! ldp-link's integration tests, one module per property, in one test binary (a binary per
//! file cost a link step each).

mod common;

mod client_errors;
mod faults;
mod fleet_members;
mod floods;
mod forged;
mod in_flight;
mod key_and_boot_files;
mod mutated_copies;
mod replay;
mod request_cost;
mod resend_after_restart;
