//! ldp-core's integration tests, one module per file, in one test binary (a binary per file
//! cost a link step each). `jdp_alloc.rs` stays a binary of its own: it installs a counting
//! global allocator.

mod common;

mod bandit;
mod bandit_arms;
mod bandit_calibrated;
mod bandit_privacy;
mod boot_numbers;
mod budget;
mod device_app;
mod distribution;
mod features;
mod gaussian_distribution;
mod jdp_client;
mod jdp_tree;
mod params;
mod power_cut;
mod privacy;
mod rse_elimination_rate;
mod sampler_time;
mod tree;
mod tree_accuracy;
mod tree_privacy;
mod truncation_level;
mod wire_device;
mod wire_golden;
mod wire_props;
