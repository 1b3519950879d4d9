//! A real STM32F405 board: entropy from the hardware TRNG and the device state in flash.
//!
//! Written against the reference manual (RM0090) and compile-checked in CI; not yet run on a
//! board (QEMU's netduinoplus2 emulates neither the RNG nor flash programming).
#![allow(unsafe_code)] // flash is programmed and read through raw addresses by design

use ldp_core::LogMedium;
use ldp_core::state::RECORD_LEN;
use stm32f4::stm32f405::{FLASH, RCC, RNG};

/// 64 bytes from the TRNG (RM0090 §24): this boot's entropy, and the seed material should the
/// device be provisioned now. The RNG needs the 48 MHz PLL48CLK: from the 16 MHz HSI,
/// M = 16, N = 192, Q = 4 gives 48 MHz (VCO 192 MHz; the system clock stays on HSI). The first
/// word after enabling is discarded; a seed or clock error (SECS/CECS) or a repeated word gives
/// `None` and the firmware refuses to start.
pub fn entropy(rcc: &RCC, rng: &RNG) -> Option<([u8; 32], [u8; 32])> {
    rcc.pllcfgr().write(|w| {
        w.pllsrc().hsi();
        w.pllp().div2();
        // SAFETY: M = 16 ∈ 2..=63, N = 192 ∈ 50..=432, Q = 4 ∈ 2..=15 (RM0090 §7.3.2).
        unsafe { w.pllm().bits(16).plln().bits(192).pllq().bits(4) }
    });
    rcc.cr().modify(|_, w| w.pllon().set_bit());
    while rcc.cr().read().pllrdy().bit_is_clear() {}
    rcc.ahb2enr().modify(|_, w| w.rngen().set_bit());
    rng.cr().modify(|_, w| w.rngen().set_bit());
    let next = || -> Option<u32> {
        loop {
            let sr = rng.sr().read();
            if sr.secs().bit_is_set() || sr.cecs().bit_is_set() {
                return None;
            }
            if sr.drdy().bit_is_set() {
                return Some(rng.dr().read().bits());
            }
        }
    };
    let mut bytes = [0u8; 64];
    let mut previous = next()?;
    for chunk in bytes.chunks_mut(4) {
        let word = next()?;
        if word == previous {
            return None; // a stuck generator (the RM's continuous test, repeated here)
        }
        chunk.copy_from_slice(&word.to_le_bytes());
        previous = word;
    }
    let (mut entropy, mut seed) = ([0u8; 32], [0u8; 32]);
    entropy.copy_from_slice(&bytes[..32]);
    seed.copy_from_slice(&bytes[32..]);
    Some((entropy, seed))
}

/// The two 128 KiB sectors (10 and 11) reserved for the device state; memory.x keeps the image
/// out.
const SECTORS: [(u8, usize); 2] = [(10, 0x080C_0000), (11, 0x080E_0000)];
const SECTOR_LEN: usize = 128 * 1024;

/// Flash sectors 10 and 11 as the log medium of `ldp_core::state::LogStore`: 2048 record slots
/// each. The store programs only blank slots, and erases a sector only when it starts it anew.
pub struct FlashMedium {
    flash: FLASH,
}

/// Flash programming failed (FLASH_SR error flags).
#[derive(Clone, Copy, Debug, defmt::Format)]
pub struct FlashError;

impl core::fmt::Display for FlashError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("flash programming failed")
    }
}

fn slot_address(sector: usize, slot: usize) -> usize {
    SECTORS[sector].1 + slot * RECORD_LEN
}

impl FlashMedium {
    /// Takes the flash controller.
    pub fn new(flash: FLASH) -> Self {
        Self { flash }
    }

    fn unlock(&self) {
        if self.flash.cr().read().lock().bit_is_set() {
            self.flash.keyr().write(|w| w.key().set(0x4567_0123));
            self.flash.keyr().write(|w| w.key().set(0xCDEF_89AB));
        }
    }

    fn wait(&self) -> Result<(), FlashError> {
        while self.flash.sr().read().bsy().bit_is_set() {}
        let sr = self.flash.sr().read();
        if sr.pgserr().bit_is_set()
            || sr.pgperr().bit_is_set()
            || sr.pgaerr().bit_is_set()
            || sr.wrperr().bit_is_set()
        {
            self.flash.sr().write(|w| {
                w.pgserr()
                    .clear_bit_by_one()
                    .pgperr()
                    .clear_bit_by_one()
                    .pgaerr()
                    .clear_bit_by_one()
                    .wrperr()
                    .clear_bit_by_one()
            });
            return Err(FlashError);
        }
        Ok(())
    }
}

impl LogMedium for FlashMedium {
    type Error = FlashError;
    const SLOTS: usize = SECTOR_LEN / RECORD_LEN;
    const IN_PLACE: bool = false; // an erase blanks a sector

    fn read(&mut self, sector: usize, slot: usize, buf: &mut [u8; RECORD_LEN]) -> Result<(), FlashError> {
        let base = slot_address(sector, slot);
        for (i, chunk) in buf.chunks_mut(4).enumerate() {
            // SAFETY: the address lies in sectors 10–11 of on-chip flash, word-aligned, readable.
            let word = unsafe { core::ptr::read_volatile((base + 4 * i) as *const u32) };
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        Ok(())
    }

    fn program(&mut self, sector: usize, slot: usize, record: &[u8; RECORD_LEN]) -> Result<(), FlashError> {
        let base = slot_address(sector, slot);
        self.unlock();
        self.wait()?;
        // `modify`, never `write`: FLASH_CR's reset value has LOCK set, and a write with LOCK set
        // is ignored (the command would silently not happen).
        self.flash.cr().modify(|_, w| w.ser().clear_bit().pg().set_bit().psize().psize32());
        let mut result = Ok(());
        for (i, chunk) in record.chunks(4).enumerate() {
            let word = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            // SAFETY: PG is set and the slot is erased; a 32-bit write to flash programs it.
            unsafe { core::ptr::write_volatile((base + 4 * i) as *mut u32, word) };
            result = result.and(self.wait());
        }
        self.flash.cr().modify(|_, w| w.pg().clear_bit());
        self.flash.cr().modify(|_, w| w.lock().set_bit());
        result
    }

    fn erase(&mut self, sector: usize) -> Result<(), FlashError> {
        self.unlock();
        self.wait()?;
        // SAFETY: SNB takes a sector number 0..=11; ours are 10 and 11.
        self.flash.cr().modify(|_, w| unsafe {
            w.pg().clear_bit().ser().set_bit().snb().bits(SECTORS[sector].0).psize().psize32()
        });
        self.flash.cr().modify(|_, w| w.strt().set_bit());
        let result = self.wait();
        self.flash.cr().modify(|_, w| w.ser().clear_bit());
        self.flash.cr().modify(|_, w| w.lock().set_bit());
        result
    }
}
