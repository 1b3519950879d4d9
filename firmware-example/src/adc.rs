//! Your own sensor, read by the STM32F405's ADC1: an example [`RewardSource`] for a board
//! (`docs/your-device.md`). Built into every `hardware` image (so CI compiles and lints it); the
//! firmware reads it instead of the simulated sensor when built with `--features adc`.
//!
//! Action `a` reads ADC1 channel [`CHANNELS`]`[a]`: PC0–PC5 (ADC123_IN10–IN15), e.g. six sensors
//! the learner chooses between (`actions()` = 6; the device refuses any other action as
//! malformed before looking at a reading). A conversion that does not end gives `None`, which
//! the device releases as a reading of 0.
//!
//! **Scaling.** The 12-bit code `n ∈ [0, 4095]` (0 V to VREF+) becomes the reward
//! `y = C·(2n/4095 − 1)` with `C = B + R`: 0 V reads −C, VREF+ reads +C, mid-scale ≈ 0. Every
//! reading thus lies in the clamping range `[−C, C]` and the clamp never changes it; the whole
//! analogue range costs sensitivity 2C, so the released noise has scale 2C/ε whatever part of the
//! range a sensor actually uses (`docs/your-device.md` on choosing B and R).
//!
//! **Timing.** A conversion takes a fixed 480 + 12 ADC cycles, whatever the voltage (ADCCLK =
//! PCLK2/2 = 8 MHz at the reset clock: 61.5 µs, about 1 000 core cycles). The read waits for it
//! at most [`MAX_POLLS`] status reads and then gives up with `None`, so a dead ADC cannot hang a
//! reply slot. Written against RM0090 §13 and compile-checked; not yet run on a board.
#![allow(unsafe_code)] // SQR3.SQ1 takes raw channel bits

use ldp_core::device::RewardSource;
use stm32f4::stm32f405::{ADC1, GPIOC, RCC};

/// The ADC1 channel each action reads: action `a` reads `CHANNELS[a]`, on pin PC`a`.
pub const CHANNELS: [u8; 6] = [10, 11, 12, 13, 14, 15];

/// Status reads a conversion may take before the read gives up. The conversion needs about
/// 1 000 core cycles and a status read takes a few, so this allows several times that. The
/// poll loop is six instructions, 10–14 cycles at zero flash wait states (read from the
/// disassembly, not measured on a board): the wait ends within about 56 000 cycles, a seventh
/// of the reply slot (`ldp_core::device::REPLY_SLOT_CYCLES`).
pub const MAX_POLLS: u32 = 4_000;

/// ADC1 on PC0–PC5, readings scaled to `[−C, C]` (module docs).
pub struct AdcSource {
    adc: ADC1,
    range: f64,
}

impl AdcSource {
    /// Clocks ADC1 and GPIOC, puts PC0–PC5 in analogue mode, sets the longest sample time (480
    /// cycles, for high-impedance sensors) on channels 10–15 and powers the ADC up. `range` is
    /// C = B + R of the device's configuration. Reset values give the rest: 12-bit,
    /// right-aligned, one conversion per start (SQR1.L = 0), ADCCLK = PCLK2/2.
    pub fn new(adc: ADC1, gpioc: GPIOC, rcc: &RCC, range: f64) -> Self {
        rcc.ahb1enr().modify(|_, w| w.gpiocen().set_bit());
        rcc.apb2enr().modify(|_, w| w.adc1en().set_bit());
        gpioc.moder().modify(|_, w| {
            for pin in 0..6 {
                w.moder(pin).analog();
            }
            w
        });
        adc.smpr1().modify(|_, w| {
            for field in 0..6 {
                w.smp(field).cycles480(); // field 0 is channel 10
            }
            w
        });
        adc.cr2().modify(|_, w| w.adon().set_bit());
        cortex_m::asm::delay(64); // tSTAB ≤ 3 µs after power-up: 4 µs at 16 MHz
        Self { adc, range }
    }
}

impl RewardSource for AdcSource {
    /// One action per channel.
    fn actions(&self) -> u32 {
        CHANNELS.len() as u32
    }

    fn read(&mut self, action: u32) -> Option<f64> {
        let channel = *CHANNELS.get(usize::try_from(action).ok()?)?;
        // SAFETY: channels 10–15 are valid ADC1 regular channels (0..=18).
        self.adc.sqr3().write(|w| unsafe { w.sq1().bits(channel) });
        self.adc.sr().write(|w| w.eoc().clear().ovr().clear());
        self.adc.cr2().modify(|_, w| w.swstart().start());
        for _ in 0..MAX_POLLS {
            if self.adc.sr().read().eoc().bit_is_set() {
                let code = self.adc.dr().read().data().bits() & 0x0FFF; // reading DR clears EOC
                return Some(self.range * (f64::from(code) * (2.0 / 4095.0) - 1.0));
            }
        }
        None // the conversion never ended: a fault, released as a reading of 0 by the device
    }
}
