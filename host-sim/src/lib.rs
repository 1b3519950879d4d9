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
//!  CLI / RunConfig ─► experiments::find ─► a Task (runner::LoopTask, bandit::Sweep,
//!                                           bandit::ExpertsTask, dubey::Variants)
//!        executor::Executor ─► job(trial, learner) on rayon's threads ─► checkpoint (resume)
//!        runner: Problem (rules) ─► Optimizer (ask/tell) ◄─► Device (in process, QEMU, serial, TCP, fleet, MQTT)
//!  results::AlgorithmResult ─► output (CSV, JSON, run.json) ─► plot (SVG, PNG) ─► reproduce (REPORT.md)
//! ```
//!
//! - [`settings`], [`run_request`]: how a run is set up ([`settings::RunConfig`]; from what
//!   `host-sim run` and Python's `ldp_bo.run` ask for: [`run_request::settle`]) and why it
//!   stops ([`settings::RunError`]);
//! - [`experiment`], [`experiments`], [`bandit`], [`dubey`]: the named experiments of the four
//!   seeds and the user's own (`custom`), each a task of the executor;
//! - [`runner`]: the bandit loop — ask the learner (`ldp_learn::optimizer::Optimizer`), query
//!   the device, tell the learner the report — and the devices a run's settings name;
//! - [`executor`], [`checkpoint`]: every job of a run on a thread pool, resumable and shardable;
//! - [`results`], [`output`], [`plot`], [`files`]: curves and their aggregates, the result files
//!   and the figures;
//! - [`reproduce`], [`audit`]: every experiment with each paper claim checked, and the
//!   statistical audit of the device's releases;
//! - [`live`], [`fleet_bench`], [`demo`]: a learner against the user's own device, the fleet's
//!   benchmark, and `host-sim privatise`.
//!
//! ## What it is not
//!
//! No learner lives here, nor any device code: a learner's constants come from
//! `ldp_learn::rules`, its reports from an `ldp_link::device::Device`. The learners' and the
//! link's modules are re-exported under their former paths (`ldp_learn::bo`,
//! `ldp_link::transport`, …), so code written against host-sim keeps compiling; new code may
//! depend on `ldp-learn` or `ldp-link` alone, without this crate's plots, threads and CLI.
//!
//! Floating-point comparisons in the library state their tolerance (`clippy::float_cmp` is
//! denied); unit tests may compare exactly, where they check that the same seed gives the same
//! bits.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::float_cmp))]

pub mod audit;
pub mod experiments;
pub mod fleet_bench;
pub mod live;
pub mod privatise;
pub mod reproduce;
pub mod run;
