//! The workspace-level integration tests, one module per file, in one test binary (a binary
//! per file cost a link step each, of host-sim and everything under it). Three files stay
//! binaries of their own: `mqtt_adversary.rs` and `mqtt_record.rs` set a process-wide
//! environment variable (the keys' directory), which other tests' threads must not race, and
//! `qemu_run_script.rs` picks its emulator's port for another process (the script), which the
//! in-process port lock of `QemuDevice::start` does not reach.

mod common;

mod host_sim_uses_core;
mod mqtt_bridge;
mod mqtt_faults;
mod mqtt_fleet;
mod qemu_audit;
mod qemu_device;
mod qemu_hil;
mod qemu_timing;
