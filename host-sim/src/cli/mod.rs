//! The `host-sim` command: its arguments ([`args`]), one file per command family, and its
//! errors in the words of its flags ([`error`]).

pub(crate) mod args;
pub(crate) mod devices;
pub(crate) mod error;
pub(crate) mod privatise;
pub(crate) mod reproduce;
pub(crate) mod run;
