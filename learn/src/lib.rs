//! # ldp-learn: the learner side of locally private Bayesian optimisation
//!
//! A learner chooses which action a device measures next and learns only from what the device
//! releases: each report is the raw reward clamped and privatised at ε (`ldp-core`'s CTL(ε)),
//! so the learner must be robust to noise far heavier than the reward's own. This crate holds
//! the learners of the four seed papers, the Gaussian-process machinery under them, the rules
//! that set their constants from public settings, and the environments the experiments draw
//! rewards from. It does no I/O beyond reading data tables, starts no threads, and contains no
//! `unsafe`.
//!
//! ## The path of a round
//!
//! ```text
//!  public settings (B, R, ε, T, λ, δ, constants) ─┐
//!  the domain's prior covariance ─────────────────┴─► rules::problem ─► Problem ─► AlgorithmSpec::build
//!                                                                                      │
//!            ┌─────────────── Optimizer::ask ─► action ─► (a device releases y at ε) ──┤
//!            └── posterior / index update ◄── Optimizer::tell(action, report) ◄────────┘
//! ```
//!
//! Every loop drives its learner through [`optimizer::Optimizer`] (built by name from public
//! settings, or from a [`policy::Problem`] with [`optimizer::Optimizer::from_problem`]): host-sim's
//! experiments, `live` and the fleets, as a user's own loop does
//! (`examples/noisy_closure.rs`). The optimiser calls [`policy::Policy::select`] and
//! [`policy::Policy::observe`]; Dubey's feature-space learners ([`dubey`]) and the experts' Hedge
//! ([`bandit::experts`]) are not over a fixed set of actions told one scalar report, and keep
//! their own loops.
//!
//! - [`policy`]: the learner contract every learner meets, GP or K-armed: the public
//!   [`policy::Problem`] it is given, the [`policy::Policy`] trait (select, observe), the
//!   [`policy::AlgorithmSpec`] that names and builds it, the [`policy::Constants`] modes and
//!   [`policy::PolicyError`];
//! - [`gp`]: kernels, the exact finite posterior (rank-one updates), the Cholesky posterior at
//!   arbitrary points and the Nyström embedding;
//! - [`bo`]: Zhou & Tan's GP learners (GP-UCB, TGP-UCB, ATA-GP-UCB, MoMA-GP-UCB, UCB1) and the
//!   calibrated constants;
//! - [`bandit`]: the K-armed learners of Tao et al. and Agarwal & Singh (adapters over `ldp_core::bandit`)
//!   and LDP-UCB, their environments, and the experts' Hedge loop;
//! - [`dubey`]: Dubey's approximate GP-UCB in feature space, non-private, under joint DP and
//!   under local joint DP, with its environments;
//! - [`rules`]: the constants rules — the learner's [`policy::Problem`] from public settings only —
//!   and the one seed rule ([`rules::derive_seed`]);
//! - [`optimizer`]: ask/tell, every learner by name over a domain, driven by the caller;
//! - [`env`](mod@env): the environments (synthetic RKHS functions, the papers' real data, a user's table
//!   or objective, the firmware's sensor model), their noise models and priors;
//! - [`budget`]: how large a device's budget must be to pay for exactly n reports.
//!
//! ## What it is not
//!
//! It talks to no device: the device side is `ldp-core` (what a device runs) and `ldp-link`
//! (the wire client, transports, fleets over MQTT). It runs no experiment: the executor, the
//! result files, the plots and the command line are `host-sim`'s. What a learner is given is
//! public by construction: a [`policy::Problem`] holds bounds, the prior and ε, never f or a raw
//! reward; only [`env::Environment::sample`], the device's side of a simulation, draws those.
//!
//! ## Rules kept throughout
//!
//! Every random choice takes an injected, seeded generator (the same seed gives the same bits on
//! any number of threads); nothing panics on input (constructors and updates return typed errors
//! in the user's words); floating-point comparisons state their tolerance (`clippy::float_cmp`
//! is denied outside tests).
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::float_cmp))]

pub mod bandit;
pub mod bo;
pub mod budget;
pub mod domain;
pub mod dubey;
pub mod env;
pub mod gp;
pub mod optimizer;
pub mod policy;
pub mod rules;
