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
//!  raw reward y ──► NaN → 0, ±∞ → ±MAX ──► clamp to [−C, C] ──► round to the public grid 2^k
//!                                          (C = B + R, or a              │
//!                                           public level b)              ▼
//!  budget: floor ≤ ε ≤ limit, Σε ≤ total; boot number     index + discrete Laplace(2C/ε)
//!  and reservation written to the state store first  ──► Release { index, k } ──► learner
//! ```
//!
//! - [`params`]: validated ε, δ (of a release, and of an error bound), bounds and truncation
//!   levels;
//! - [`grid`]: the one public power-of-two grid every release lives on;
//! - [`mechanism`]: CTL(ε) of Zhou & Tan (Zhou & Tan, Curator 1) and the other Laplace
//!   releases, built on a **floating-point-safe** discrete Laplace on a power-of-two grid;
//! - [`sampler`]: the exact integer sampler (Canonne, Kamath & Steinke 2020);
//! - [`state`]: the persistent device state (seed material, boot counter, reserved budget) and
//!   a store for it that a power cut cannot roll back;
//! - [`budget`]: the accountant;
//! - [`reporter`]: the one production path, with a fresh noise key on every boot;
//! - [`public`]: what a device makes public (its configuration and reports), which the
//!   reporter produces and the wire carries;
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
//! The adversary is the learner together with whoever controls the link: it sees every byte
//! the device sends and when it is sent, chooses every query, and can cut the device's power at
//! any moment, as often as it likes. It does not see the raw reward, the device's memory, its
//! seed material or its true random source, and cannot write its flash. Against that adversary:
//!
//! - **Each report at ε is ε-LDP** (pure, with ε_eff ≤ ε as documented in [`mechanism`]), and a
//!   device's reports together are (Σε)-LDP with Σε ≤ its total budget.
//! - **Across resets.** The budget is reserved in the [`state`] store before anything is
//!   released, and the store cannot roll back (two generations and a CRC; missing, torn or
//!   corrupt state refuses to report; only an explicit provisioning starts a budget). Each boot
//!   that releases writes its number first and keys its noise from it ([`reporter`]): no noise
//!   stream is ever replayed. A reset costs at most one reservation chunk of budget — so an
//!   adversary who power-cycles the board can exhaust it in ⌈total/chunk⌉ cycles (a denial of
//!   service, never a privacy loss).
//! - **A store in the host's reach.** Where the store is a file the adversary can also write
//!   (an emulated board's `ldp-state.bin`, a host fleet device's `state.bin`: a medium
//!   overwritten in place), every state is written to both slots and no slot is blank after
//!   provisioning ([`state`], *A medium overwritten in place*): one slot torn, garbled or
//!   blanked by hand never rolls the budget or the boot counter back, and a blank one is
//!   refused ([`BudgetError::BlankedState`]). The configuration, total budget included, is
//!   kept under a CRC in the same file (the emulated board's, a host fleet device's), and a
//!   device is never reopened with another.
//! - **No free observables.** A refusal depends only on the query and the public budget state.
//!   A non-finite reading is *not* refused: it is charged and released as a fixed value
//!   ([`reporter::sanitize`]: NaN as 0, ±∞ as the extreme of its sign), and so is a missing
//!   one (`None` from [`device::RewardSource::read`], a fault: released as a reading of 0). An
//!   action outside the source's public, fixed action set ([`device::RewardSource::actions`])
//!   is refused whatever its reading: a reading never causes a refusal.
//! - **Timing.** The discrete Laplace sampler is a rejection sampler whose running time depends
//!   on the noise it draws, and reading the sensor and soft-float arithmetic take
//!   value-dependent time. [`device::DeviceApp`] does that work as soon as a query's last byte
//!   arrives; **the firmware must send every reply a fixed time after that byte**
//!   ([`device::REPLY_SLOT_CYCLES`], as `firmware-example` does), so that when a reply leaves
//!   depends on nothing private. The slot is overrun only if the work takes longer than the
//!   slot, which for the sampler has probability below about 2^-177 (see
//!   [`device::REPLY_SLOT_CYCLES`]); store writes are made while idle
//!   ([`device::DeviceApp::prepare`]), not in the reply path.
//! - **Length.** Every message type has one fixed length on the wire.
//! - **Authenticated frames** ([`wire::Auth`], wire format 5). A second adversary controls the
//!   link or the broker but is not the device's learner (it lacks the device's link key): it
//!   can read, record, drop, delay, duplicate and inject frames. Every frame carries a tag
//!   (HMAC-SHA256, 128 bits) binding device id, session (boot number), the learner's nonce (16
//!   random bytes its hello request carries), the device's conversation number (its count of
//!   the conversations of the boot), the request a reply answers, the sequence number and every
//!   byte. It cannot make a device spend budget: a forged query is refused
//!   ([`wire::Refusal::Unauthenticated`]), a replayed one is answered from the reply cache or
//!   refused as stale ([`wire::Refusal::StaleSequence`]: within a conversation the device
//!   answers each sequence number afresh at most once), a query of an earlier boot or of
//!   another conversation does not verify — none is read or charged, and the refusal depends
//!   on the frame alone, inside the same reply slot. A recorded hello request (tagged in
//!   session 0, it verifies in every boot) only offers a conversation, under a number no
//!   recorded query carries, which only a query under that number and its nonce — one the
//!   replayer cannot make — opens; it moves no floor. A query it withholds until the learner
//!   gives up is dead once the learner's closing hello has reached the device (the conversation
//!   is frozen); delivered before that, it is spent and counted by the device, and no learner
//!   takes its report. It cannot make a learner believe a report: a recorded hello or reply
//!   does not verify under a learner's fresh nonce, nor as the answer to another query; a
//!   refusal the device made
//!   before verifying a frame's tag (a learner's query with its version or type byte altered:
//!   reasons 7, 12, a wrong type or length) is tagged under the all-zero nonce and conversation
//!   0, no conversation's, so it is never taken as the answer to the learner's query (the
//!   learner drops and counts it); forged, replayed and re-numbered reports are dropped and
//!   counted; a hello of a boot number below one the learner saw is refused. It can also deny
//!   service (a replayed hello request freezes the open conversation: the learner's next
//!   fresh query is refused, nothing spent, and the learner greets the device again — one
//!   exchange and one hello per replayed frame, retries still answered from the cache; after
//!   2^32 − 1 offers in one boot the device makes no more until it restarts)
//!   and see every report, which LDP already allows. Whoever holds the key (the learner, or
//!   whoever reads the key file or the device's state file, which holds the seed: the host
//!   keeps both its owner's only, mode 0600 in 0700 directories) can spend the budget, within
//!   the device's limits.
//!
//! ## What is *not* promised
//!
//! - **Randomness.** The guarantee assumes uniform bits and a secret seed.
//!   [`mechanism::LaplaceMechanism::release`] accepts any [`rand_core::Rng`] for simulation;
//!   the [`Reporter`] always uses its own per-boot ChaCha20. A simulation that provisions its
//!   store from a public seed has no privacy against whoever knows that seed.
//! - **Physical access.** Reading the flash (the seed) or erasing it and reprovisioning is
//!   outside the model; so are power and electromagnetic side channels. The link key is a
//!   function of the seed: whoever reads the seed, or the key file on a host, can forge the
//!   device's frames.
//! - **A host that forges state.** A CRC stops damage and edits that do not know it, not a
//!   host that writes whole records of its own (it can compute the CRC) or puts back an older
//!   copy of a state file: either gives that device its budget back. A device that must hold
//!   its budget against whoever controls its storage needs a counter out of that party's reach
//!   (a TPM, a secure element, eMMC RPMB).
//! - **Correlated data.** Sequential composition covers adaptively chosen queries about the same
//!   user; it says nothing about other users whose data correlate with this one's.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(clippy::float_cmp)]

pub mod bandit;
pub mod budget;
pub mod checksum;
pub mod device;
mod error;
pub mod features;
pub mod grid;
pub mod jdp;
pub mod mechanism;
pub mod params;
pub mod public;
pub mod reporter;
pub mod sampler;
pub mod state;
pub mod tree;
pub mod truncation;
pub mod wire;

pub use budget::{Accountant, BudgetPolicy};
pub use error::{BudgetError, ParamError, ReleaseError, ReportError};
pub use mechanism::{LaplaceMechanism, Preprocess, Release};
pub use params::{Bound, Delta, Epsilon, ErrorBoundDelta, TruncationLevel};
pub use public::{DeviceConfig, Report};
pub use reporter::Reporter;
pub use state::{DeviceState, LogMedium, LogStore, MemoryStore, StateError, StateStore};
