//! host-sim's integration tests, one module per file, in one test binary (a binary per file
//! cost a link step each). `checkpoint_bomb.rs` stays a binary of its own: it installs a
//! peak-counting global allocator.

mod common;

mod ask_tell;
mod audit;
mod bandit;
mod boot_record;
mod box_experiments;
mod cli;
mod custom;
mod data;
mod dubey;
mod executor;
mod fleet;
mod ledgers;
mod live;
mod live_qemu;
mod own_objective;
mod plot;
mod prior;
mod privatise_table;
mod runner;
