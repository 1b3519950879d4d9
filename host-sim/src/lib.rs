//! # host-sim: the experiments, and the command line that runs them
//!
//! The learners (`ldp-learn`) choose actions from private reports; the devices (`ldp-core`, in
//! this process or behind `ldp-link`) release them. This crate puts the two together into
//! experiments whose results can be trusted and compared: it runs every (trial, learner) job of
//! a run on its threads, resumes a killed run, writes the result files and figures, checks the
//! papers' claims against our runs, and offers it all as the `host-sim` command.
//!
//! ## The path of a run
//!
//! ```text
//!  cli (host-sim run) / Python's ldp_bo.run ─► run::request::settle ─► run::settings::RunConfig
//!         run::pipeline ─► experiments::task ─► a Task (experiments::runner::LoopTask,
//!                                               experiments::bandit::{Sweep, ExpertsTask},
//!                                               experiments::dubey::Variants)
//!         run::executor ─► job(trial, learner) on rayon's threads ─► run::checkpoint (resume)
//!         experiments::runner: Problem (rules) ─► Optimizer (ask/tell) ◄─► Device (in process, QEMU, serial, TCP, fleet, MQTT)
//!  run::results ─► run::output (CSV, JSON, run.json) ─► run::plot (SVG, PNG)
//!  reproduce: every experiment through run::pipeline ─► claims ─► diagnoses ─► report (REPORT.md)
//! ```
//!
//! ## The rooms, from the bottom up
//!
//! - [`run`]: one run of one experiment. [`run::files`] (files written whole, the ledger
//!   directories' names), [`run::checkpoint`] (resume, the output directory's lock),
//!   [`run::settings`] (what a run is set up with, [`run::settings::RunConfig`], and why it stops,
//!   [`run::settings::RunError`]), [`run::request`] (what `host-sim run` and `ldp_bo.run` ask for,
//!   settled once: [`run::request::settle`], and on which device: [`run::request::place`]),
//!   [`run::executor`] (every job on a thread pool, shardable), [`run::results`],
//!   [`run::output`] and [`run::plot`] (curves, result files, figures), and [`run::pipeline`],
//!   which stands on [`experiments`] and puts them together for `run`, `merge` and every run
//!   of a reproduction;
//! - [`experiments`]: the registry of named experiments (Zhou & Tan's figures and the user's own,
//!   `custom`), what an experiment is ([`experiments::definition`]), the other papers' families
//!   ([`experiments::bandit`]: Tao et al. and Agarwal & Singh; [`experiments::dubey`]: Dubey's
//!   QFF), and the bandit loop with the devices a run's settings name ([`experiments::runner`]);
//! - [`reproduce`]: every experiment, each paper claim checked ([`reproduce::claims`]), why a
//!   claim does not hold ([`reproduce::diagnoses`]) and `REPORT.md` ([`reproduce::report`]);
//! - [`audit`], [`live`], [`fleet_bench`], [`privatise`]: the statistical audit of the device's
//!   releases, a learner against the user's own device, the fleet's benchmark, and `host-sim
//!   privatise`;
//! - the `host-sim` binary (`src/main.rs`, `src/cli/`): the arguments, one file per command
//!   family, and the errors in the words of the flags.
//!
//! ## Features
//!
//! All on by default, so `cargo run`, `cargo test`, clippy and the docs see the whole crate:
//! `cli` (the `host-sim` command: clap, indicatif's progress bar, toml; it needs the others),
//! `audit` ([`audit`]: statrs),
//! `plots` (plotters: [`run::plot`], and what writes figures: a run's files, [`run::pipeline`],
//! the reproduction, live runs) and `network` (a board on a serial port, a fleet over MQTT, the
//! fleet's benchmark: ldp-link's `serial` and `mqtt`, with tokio). The Python package takes the
//! library without them: the experiments, the executor and the summary table. A run that asks
//! such a build for a device it lacks is refused as
//! [`run::settings::ConfigError::DeviceNotBuilt`].
//!
//! ## What it is not
//!
//! No learner lives here, nor any device code: a learner's constants come from
//! `ldp_learn::rules`, its reports from an `ldp_link::device::Device`. Code that needs a learner or
//! a device names the crate that defines it (`ldp_learn::bo`, `ldp_link::transport`, …); this crate
//! re-exports neither.
//!
//! Floating-point comparisons in the library state their tolerance (`clippy::float_cmp` is
//! denied); unit tests may compare exactly, where they check that the same seed gives the same
//! bits.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::float_cmp))]

#[cfg(feature = "audit")]
pub mod audit;
pub mod experiments;
#[cfg(feature = "network")]
pub mod fleet_bench;
#[cfg(feature = "plots")]
pub mod live;
pub mod privatise;
#[cfg(feature = "plots")]
pub mod reproduce;
pub mod run;
