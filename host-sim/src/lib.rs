//! The learner side of the LDP Bayesian-optimisation stack.
//!
//! Floating-point comparisons in the library state their tolerance (`clippy::float_cmp` is
//! denied); unit tests may compare exactly, where they check that the same seed gives the same
//! bits.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::float_cmp))]

pub mod audit;
pub mod bandit;
pub mod bo;
pub mod bridge;
pub mod checkpoint;
pub mod demo;
pub mod device;
pub mod dubey;
pub mod env;
pub mod executor;
pub mod experiment;
pub mod experiments;
pub mod files;
pub mod fleet;
pub mod fleet_bench;
pub mod gp;
pub mod keys;
pub mod live;
pub mod mqtt;
pub mod mqtt_error;
pub mod optimizer;
pub mod output;
pub mod plot;
pub mod reproduce;
pub mod results;
pub mod runner;
pub mod settings;
pub mod transport;
