//! # ldp-core: the device side of locally private Bayesian optimisation
//!
//! A user's device holds a private reward — a sensor reading, a patient's response, a click —
//! and a learner wants to optimise over many such devices. This crate is what runs on the
//! device: it turns the raw reward into a value that is safe to release, and refuses to release
//! anything else. It is `no_std`, allocates nothing, and contains no `unsafe`.
//!
//! ## The path of a reward
//!
//! ```text
//!  raw reward y ──► finite? ──► clamp to [−C, C] ──► round to the public grid 2^k
//!      (NaN/∞: refuse)          (C = B + R, or a                │
//!                                public level b)                ▼
//!  budget: ε ≤ per-report limit, Σε ≤ total, written   index + discrete Laplace(2C/ε)
//!  to persistent storage before anything is released  ──► Release { index, k } ──► learner
//! ```
//!
//! - [`params`]: validated ε, δ, bounds and truncation levels;
//! - [`mechanism`]: CTL(ε) of Zhou & Tan (seed 000, Curator 1) and the other Laplace
//!   releases, built on a **floating-point-safe** discrete Laplace on a power-of-two grid;
//! - [`sampler`]: the exact integer sampler (Canonne, Kamath & Steinke 2020);
//! - [`budget`]: the accountant and its storage trait;
//! - [`reporter`]: the one production path, which requires a cryptographically secure RNG;
//! - [`truncation`]: truncation helpers and the seeds' truncation schedules;
//! - [`tree`]: tree-based aggregation (continual release of private prefix sums) on the same
//!   float-safe path;
//! - [`features`]: fixed-size quadrature and random Fourier features;
//! - [`jdp`]: private GP-UCB in feature space (Dubey 2021): discrete-Gaussian releases, their
//!   zCDP accounting, the symmetric-matrix tree and the local-JDP client;
//! - [`bandit`]: K-armed bandit and experts policies with fixed memory;
//! - [`wire`]: the device ↔ learner frames (checked, checksummed, COBS-framed);
//! - [`device`]: the reporter application — bytes in, bytes out — that the firmware runs.
//!
//! ## Threat model
//!
//! The learner, the link and everyone behind them see every released value, every refusal and
//! the device's public configuration (B, R, the grid, the limits). They do not see the raw
//! reward, the RNG state or the device's memory. Against that adversary each report at ε is
//! ε-LDP (pure, with ε_eff ≤ ε as documented in [`mechanism`]), and a device's reports together
//! are (Σε)-LDP with Σε ≤ its total budget, across resets provided its [`BudgetStore`] is
//! persistent.
//!
//! ## What is *not* promised
//!
//! - **Timing.** The discrete Laplace sampler is a rejection sampler: its running time depends
//!   on the noise it draws. An adversary who times replies to the microsecond learns something
//!   about the noise, hence about the reward. Pad replies to a fixed time slot if that matters.
//! - **Faults are visible.** A NaN/∞ reading is refused with an error; the learner learns that
//!   the sensor failed (not the reading).
//! - **Randomness.** The guarantee assumes uniform bits. [`mechanism::LaplaceMechanism::release`]
//!   accepts any [`rand_core::Rng`] for simulation; only the [`Reporter`] insists on a
//!   [`rand_core::CryptoRng`]. Seed it from a hardware TRNG on a real device.
//! - **Correlated data.** Sequential composition covers adaptively chosen queries about the same
//!   user; it says nothing about other users whose data correlate with this one's.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(clippy::float_cmp)]

pub mod bandit;
pub mod budget;
pub mod device;
mod error;
pub mod features;
pub mod jdp;
pub mod mechanism;
pub mod params;
pub mod reporter;
pub mod sampler;
pub mod tree;
pub mod truncation;
pub mod wire;

pub use budget::{Accountant, BudgetPolicy, BudgetStore, MemoryStore};
pub use error::{BudgetError, ParamError, ReleaseError, ReportError};
pub use mechanism::{LaplaceMechanism, Preprocess, Release};
pub use params::{Bound, Delta, Epsilon, TruncationLevel};
pub use reporter::{ChaChaReporter, DeviceConfig, Report, Reporter};
