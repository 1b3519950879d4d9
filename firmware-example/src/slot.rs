//! The reply slot: every reply leaves [`REPLY_SLOT_CYCLES`] core cycles after the byte that ended
//! its request, however long the work took (`ldp_core::device` explains why).
//!
//! SysTick counts the slot down from the frame's last byte; the core then sleeps (WFI) until its
//! interrupt, so the wake-up time is the deadline plus the fixed exception latency — no polling
//! loop whose phase would depend on how long the work took.
//!
//! The wait checks its flag and then sleeps, with interrupts on: were the SysTick to fire
//! between the two, the core would sleep one more period (SysTick reloads). That needs the work
//! to end within a few cycles of the deadline, i.e. an overrun, which `ldp_core::device`
//! bounds. (Masking interrupts around the check, the textbook cure, made the reply times under
//! QEMU irregular — one or two periods — in `tests/tests/qemu_timing.rs`.) QEMU also
//! models SysTick's first reload from zero as one extra period: there a slot lasts two periods.

use core::sync::atomic::{AtomicBool, Ordering};

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::{SCB, SYST};
use cortex_m_rt::exception;
use ldp_core::device::REPLY_SLOT_CYCLES;

static DUE: AtomicBool = AtomicBool::new(false);

#[exception]
fn SysTick() {
    DUE.store(true, Ordering::SeqCst);
}

/// The one-shot slot timer.
pub struct ReplySlot {
    syst: SYST,
}

impl ReplySlot {
    /// Takes SysTick, clocked by the core.
    pub fn new(mut syst: SYST) -> Self {
        syst.disable_counter();
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(REPLY_SLOT_CYCLES - 1);
        Self { syst }
    }

    /// Starts the slot: called when a frame's last byte arrives, before any of its work.
    pub fn start(&mut self) {
        self.syst.disable_counter();
        SCB::clear_pendst();
        DUE.store(false, Ordering::SeqCst);
        self.syst.clear_current();
        self.syst.enable_interrupt();
        self.syst.enable_counter();
    }

    /// Sleeps until the slot ends (at once if the work overran it), then stops the timer.
    pub fn wait(&mut self) {
        while !DUE.load(Ordering::SeqCst) {
            cortex_m::asm::wfi();
        }
        self.syst.disable_counter();
        self.syst.disable_interrupt();
    }
}
