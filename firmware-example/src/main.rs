//! The LDP reward reporter: answers learner queries on USART1 with `ldp-core` releases.
//!
//! Everything between bytes in and bytes out is [`ldp_core::device::DeviceApp`], the same code
//! the host's in-process device runs. This file only wires hardware to it: the UART, the reply
//! slot, the entropy source, provisioning, the persistent state store and the reward source
//! (the simulated sensor, or with `--features adc` the ADC of `src/adc.rs`).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use cortex_m_rt::entry;
#[cfg(feature = "hardware")]
use defmt_rtt as _;
#[cfg(feature = "qemu")]
use defmt_semihosting as _;
use ldp_core::device::DeviceApp;
#[cfg(not(feature = "adc"))]
use ldp_core::device::{SensorModel, SimulatedSensor};
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, LogMedium, LogStore, Reporter};
use panic_probe as _;
#[cfg(not(feature = "adc"))]
use rand_chacha::ChaCha20Rng;
#[cfg(not(feature = "adc"))]
use rand_core::SeedableRng;

#[cfg(feature = "hardware")]
#[cfg_attr(not(feature = "adc"), allow(dead_code))] // compiled in every hardware image, used with `adc`
mod adc;
#[cfg(feature = "hardware")]
mod hardware;
#[cfg(feature = "qemu")]
mod semihosting;
mod slot;
mod uart;

/// The device's public configuration: B = 1 bounds the sensor model's |f| ≤ 0.9, R = 1 its
/// noise (with `adc`: the ADC's readings are scaled to [−(B+R), B+R]); each report at most
/// ε = 1 (at least 1/1024); 1000 ε over the device's life, reserved 16 ε per state write (at
/// most 63 writes in the device's life).
#[cfg(not(feature = "adc"))]
const ARMS: u32 = 100;
const B: f64 = 1.0;
const R: f64 = 1.0;
const EPS_LIMIT: f64 = 1.0;
const EPS_TOTAL: f64 = 1000.0;
const DEVICE_ID: u64 = 0x4C44_5030_0000_0001;

/// Provisions a blank state store with `seed`, when this build or the host asked for it; a
/// store that is not blank is left alone (provisioning never resets a budget). Returns whether
/// it provisioned.
fn provision_if_blank<M: LogMedium>(store: &mut LogStore<M>, seed: Option<[u8; 32]>) -> bool {
    match store.is_blank() {
        Ok(false) => false,
        Ok(true) => match seed {
            Some(seed) => match store.provision(seed) {
                Ok(()) => {
                    defmt::info!("provisioned a new device state");
                    true
                }
                Err(_) => defmt::panic!("provisioning failed: the state store is not writable"),
            },
            None => defmt::panic!("the state store is blank: this device was never provisioned"),
        },
        Err(_) => defmt::panic!("the state store is not readable"),
    }
}

/// B, R, per-report limit and total ε as a validated configuration, or `None`.
fn device_config([b, r, limit, total]: [f64; 4]) -> Option<DeviceConfig> {
    let (Ok(b), Ok(r), Ok(limit), Ok(total)) =
        (Bound::new(b), Bound::new(r), Epsilon::new(limit), Epsilon::new(total))
    else {
        return None;
    };
    let policy = BudgetPolicy::new(limit, total).ok()?;
    Some(DeviceConfig { b, r, policy })
}

#[entry]
fn main() -> ! {
    let (Some(dp), Some(cp)) = (stm32f4::stm32f405::Peripherals::take(), cortex_m::Peripherals::take())
    else {
        defmt::panic!("peripherals taken twice");
    };
    let mut uart = uart::Uart::new(dp.USART1, dp.GPIOA, &dp.RCC);
    let mut slot = slot::ReplySlot::new(cp.SYST);

    #[cfg(feature = "hardware")]
    let (entropy, store, [b, r, limit, total]) = {
        let Some((entropy, seed)) = hardware::entropy(&dp.RCC, &dp.RNG) else {
            defmt::panic!("TRNG failed: refusing to run without fresh randomness");
        };
        let mut store = LogStore::new(hardware::FlashMedium::new(dp.FLASH));
        // Only an image built with `--features provision` (`cargo provision-board`) provisions,
        // and it prints the learner's key line once (docs/wire-format.md, "Keys"): save it.
        if provision_if_blank(&mut store, cfg!(feature = "provision").then_some(seed)) {
            let key = ldp_core::wire::LinkKey::from_seed(&seed).to_bytes();
            defmt::println!(
                "ldp link key (save as the board's key file): {=u64} {=[u8]:02x}",
                DEVICE_ID,
                key
            );
        }
        (Some(entropy), store, [B, R, EPS_LIMIT, EPS_TOTAL])
    };
    // Under QEMU the host may provision a new device with its own B, R and budget (a
    // hardware-in-the-loop run's); a device that exists keeps what it was provisioned with. The
    // configuration is checked before anything is provisioned, and kept in the state file with
    // a CRC: a missing or damaged one halts the device, as a torn record does.
    #[cfg(feature = "qemu")]
    let (entropy, store, [b, r, limit, total]) = {
        let mut store = LogStore::new(semihosting::FileMedium::new());
        let Ok(blank) = store.is_blank() else { defmt::panic!("the state store is not readable") };
        if blank {
            let config = match semihosting::requested_config() {
                Ok(Some(config)) => config,
                Ok(None) => [B, R, EPS_LIMIT, EPS_TOTAL],
                Err(_) => defmt::panic!("ldp-config.bin is unreadable or not 32 bytes: not provisioning"),
            };
            if device_config(config).is_none() {
                defmt::panic!("ldp-config.bin is not a valid configuration: not provisioning");
            }
            provision_if_blank(&mut store, semihosting::provisioning_seed());
            let Ok(state) = ldp_core::StateStore::load(&mut store) else {
                defmt::panic!("the state just provisioned is not readable");
            };
            if semihosting::write_config(config, &state.seed).is_err() {
                defmt::panic!("the configuration could not be written to the state file");
            }
        }
        let Ok(state) = ldp_core::StateStore::load(&mut store) else {
            defmt::panic!("device state unusable: its records are missing or corrupt");
        };
        let Ok(config) = semihosting::config(&state.seed) else {
            defmt::panic!("device state unusable: its configuration is missing or corrupt");
        };
        (semihosting::entropy(), store, config)
    };
    #[cfg(feature = "qemu")]
    let mut probe = (semihosting::TimingProbe::new(), uart::Ticks::start(dp.TIM2, &dp.RCC));
    let Some(entropy) = entropy else {
        defmt::panic!("no boot entropy: refusing to run without fresh randomness");
    };

    let Some(config) = device_config([b, r, limit, total]) else {
        defmt::panic!("invalid configuration");
    };
    #[cfg(not(feature = "adc"))]
    let Some(sensor) = SensorModel::new(ARMS, config.r) else {
        defmt::panic!("invalid built-in sensor model");
    };
    let reporter = match Reporter::open(config, store, entropy) {
        Ok(reporter) => reporter,
        Err(e) => defmt::panic!("device state unusable: {}", e),
    };
    defmt::info!(
        "ldp reporter up: boot {}, {} ε left",
        reporter.accountant().boot(),
        reporter.accountant().remaining()
    );
    // The simulated world's noise (a stand-in for the physical sensor): its own stream.
    #[cfg(not(feature = "adc"))]
    let source = {
        let mut world_rng = ChaCha20Rng::from_seed(entropy);
        world_rng.set_stream(u64::MAX);
        SimulatedSensor::new(sensor, world_rng)
    };
    // Under QEMU the device is a simulation: it also takes readings fed by a host that
    // simulates its world (hardware in the loop). A board's image never does: it refuses them.
    #[cfg(feature = "qemu")]
    let source = ldp_core::device::FedSource(source);
    // A real sensor: ADC1 on PC0–PC5, one channel per action (src/adc.rs).
    #[cfg(feature = "adc")]
    let source = adc::AdcSource::new(dp.ADC1, dp.GPIOC, &dp.RCC, B + R);
    let mut app = DeviceApp::new(reporter, source, DEVICE_ID);
    // Boot number and first reservation written now, outside any reply slot.
    app.prepare();
    loop {
        let Some(byte) = uart.read_byte() else { continue };
        if byte == 0 {
            // A frame ends: its reply, if any, leaves exactly one slot from now.
            slot.start();
            #[cfg(feature = "qemu")]
            probe.1.mark();
        }
        if let Some(reply) = app.on_byte(byte) {
            #[cfg(not(feature = "fixture-unslotted"))]
            slot.wait();
            #[cfg(feature = "qemu")]
            let latency = probe.1.since_mark();
            uart.write_all(reply);
            #[cfg(feature = "qemu")]
            probe.0.record(latency);
            app.prepare(); // the next reservation, if due, while the link is quiet
        }
    }
}

#[cfg(all(feature = "qemu", feature = "hardware"))]
compile_error!("choose one of the features `qemu` (default) and `hardware`");
#[cfg(not(any(feature = "qemu", feature = "hardware")))]
compile_error!("choose a feature: `qemu` (default) or `hardware` (with --no-default-features)");
#[cfg(all(feature = "hil", feature = "hardware"))]
compile_error!("`hil` releases readings fed by the host: never on hardware, whose reading is its sensor's");
#[cfg(all(feature = "provision", not(feature = "hardware")))]
compile_error!("`provision` is for the hardware build; under QEMU the host provisions (qemu-run.sh)");
#[cfg(all(feature = "fixture-unslotted", feature = "hardware"))]
compile_error!("`fixture-unslotted` is a broken test fixture (replies leak timing): never on hardware");
