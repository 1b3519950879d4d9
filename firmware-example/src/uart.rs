//! USART1 by register (PA9 TX, PA10 RX, AF7), polled. No HAL clock tree: after reset the core
//! runs on the 16 MHz HSI, and QEMU's netduinoplus2 model ignores clocks and baud rates.

use stm32f4::stm32f405::{GPIOA, RCC, USART1};

/// The learner's serial line.
pub struct Uart {
    usart: USART1,
}

impl Uart {
    /// Enables the clocks, routes PA9/PA10 to USART1 and starts it at 115200 8N1 (16 MHz HSI:
    /// USARTDIV = 16e6 / (16 · 115200) = 8.68 → mantissa 8, fraction 11).
    pub fn new(usart: USART1, gpioa: GPIOA, rcc: &RCC) -> Self {
        rcc.ahb1enr().modify(|_, w| w.gpioaen().set_bit());
        rcc.apb2enr().modify(|_, w| w.usart1en().set_bit());
        gpioa.afrh().modify(|_, w| w.afrh9().af7().afrh10().af7());
        gpioa.moder().modify(|_, w| w.moder9().alternate().moder10().alternate());
        usart.brr().write(|w| w.div_mantissa().set(8).div_fraction().set(11));
        usart.cr1().write(|w| w.ue().set_bit().te().set_bit().re().set_bit());
        Self { usart }
    }

    /// Sends bytes, waiting for the transmit register each time.
    pub fn write_all(&mut self, bytes: &[u8]) {
        for &b in bytes {
            while self.usart.sr().read().txe().bit_is_clear() {}
            self.usart.dr().write(|w| w.dr().set(u16::from(b)));
        }
    }

    /// A received byte, if one is waiting.
    pub fn read_byte(&mut self) -> Option<u8> {
        let sr = self.usart.sr().read();
        if sr.ore().bit_is_set() {
            // Overrun: reading DR after SR clears it; the lost byte shows up as a bad frame.
            let _ = self.usart.dr().read();
            return None;
        }
        if sr.rxne().bit_is_set() { Some(self.usart.dr().read().dr().bits() as u8) } else { None }
    }
}

/// TIM2 as a free-running tick counter (the QEMU timing probe: under `-icount` it counts
/// virtual time, i.e. instructions).
#[cfg(feature = "qemu")]
pub struct Ticks {
    tim: stm32f4::stm32f405::TIM2,
    mark: u32,
}

#[cfg(feature = "qemu")]
impl Ticks {
    /// Starts TIM2 counting up from 0 at the timer clock, wrapping at 2^32.
    pub fn start(tim: stm32f4::stm32f405::TIM2, rcc: &RCC) -> Self {
        rcc.apb1enr().modify(|_, w| w.tim2en().set_bit());
        tim.psc().write(|w| w.psc().set(0));
        tim.arr().write(|w| w.arr().set(u32::MAX));
        tim.cr1().write(|w| w.cen().set_bit());
        Self { tim, mark: 0 }
    }

    fn now(&self) -> u32 {
        self.tim.cnt().read().bits()
    }

    /// Remembers now.
    pub fn mark(&mut self) {
        self.mark = self.now();
    }

    /// Ticks since the mark.
    pub fn since_mark(&self) -> u32 {
        self.now().wrapping_sub(self.mark)
    }
}
