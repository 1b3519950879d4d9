//! The learner side of the LDP Bayesian-optimisation stack.
#![forbid(unsafe_code)]

pub mod audit;
pub mod bandit;
pub mod bo;
pub mod checkpoint;
pub mod demo;
pub mod device;
pub mod dubey;
pub mod env;
pub mod executor;
pub mod experiment;
pub mod experiments;
pub mod gp;
pub mod output;
pub mod reproduce;
pub mod results;
pub mod runner;
pub mod settings;
pub mod transport;
