//! The reply slot: every reply leaves [`REPLY_SLOT_CYCLES`] core cycles after the byte that ended
//! its request, however long the work took (`ldp_core::device` explains why).
//!
//! # Design: a one-shot SysTick, awaited with interrupts masked
//!
//! [`ReplySlot::start`] runs at the frame's last byte, before any work:
//!
//! 1. SYST_RVR = slot − 1, SYST_CVR cleared, counter enabled. The counter loads RVR on the next
//!    clock and counts down; the SysTick exception becomes pending as it goes from 1 to 0,
//!    `REPLY_SLOT_CYCLES` cycles after the enable.
//! 2. Once SYST_CVR reads non-zero (it has loaded — one clock; the wait depends on nothing but
//!    the timer), SYST_RVR = 0: at 0 the counter now reloads 0 and stops. The slot is a one-shot:
//!    one pending exception, nothing after it.
//!
//! [`ReplySlot::wait`] masks interrupts (PRIMASK), then sleeps (WFI) until the SysTick is pending,
//! clears it and stops the counter. With PRIMASK set a pending exception still ends WFI but is
//! not taken, so no handler runs and there is no window between checking and sleeping: if the
//! slot ends just before the WFI, the WFI returns at once. The core leaves WFI a fixed time after
//! the deadline and then runs a fixed path to the reply — no polling loop whose phase would
//! depend on how long the work took. If the work overran the slot (`ldp_core::device` bounds
//! how rarely), the exception was taken during the work, with interrupts on, by a handler that
//! does nothing: the counter's COUNTFLAG, set when it reached 0 and cleared only by reading
//! SYST_CSR, says so, and `wait` returns at once instead of sleeping for a tick that never comes.
//!
//! # Why a one-shot: QEMU's clock warp
//!
//! Under `-icount shift=0,sleep=off`, QEMU before commit 02ae315467ce (10.0, backported to 9.2.3;
//! the 7.2 that CI runs has it) delivers a timer interrupt that wakes a sleeping core late: its
//! `timerlist_rearm()` "warps" virtual time to the next timer deadline whenever a timer is re-armed
//! while all vCPUs are idle, and the SysTick model (a `ptimer`) re-arms its next period *before*
//! raising the interrupt. A periodic SysTick that fires during WFI therefore woke the core at the
//! following reload, usually — but not when a host-side race (the main loop's pending vCPU work
//! item) or another timer deadline in between made the vCPU count as busy, so replies left after
//! one or two periods, and which one could depend on how long the work took in host time (QEMU
//! issue 2703). With RVR = 0 at expiry the model raises the interrupt and stops without re-arming,
//! so there is nothing to warp to: the core wakes at the deadline, and under QEMU every reply has
//! the same latency (`tests/tests/qemu_timing.rs` asserts it). A free-running SysTick counted by
//! its handler would not cure it: a tick that wakes the core arrives together with the next one, so
//! whether the slot's last tick is late would depend on how many ticks fell within the work.
//!
//! The handler, `SysTick`, does nothing: it runs only after an overrun and in the broken fixture
//! `fixture-unslotted`, which never waits.

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::{SCB, SYST};
use cortex_m_rt::exception;
use ldp_core::device::REPLY_SLOT_CYCLES;

/// Taken only when the slot ends while nobody waits for it (an overrun, `fixture-unslotted`):
/// [`ReplySlot::wait`] clears the pending SysTick with interrupts masked.
#[exception]
fn SysTick() {}

/// The one-shot slot timer.
pub struct ReplySlot {
    syst: SYST,
}

impl ReplySlot {
    /// Takes SysTick, clocked by the core, with its exception request on.
    pub fn new(mut syst: SYST) -> Self {
        syst.disable_counter();
        syst.set_clock_source(SystClkSource::Core);
        syst.enable_interrupt();
        Self { syst }
    }

    /// Starts the slot: called when a frame's last byte arrives, before any of its work.
    pub fn start(&mut self) {
        self.syst.disable_counter();
        self.syst.set_reload(REPLY_SLOT_CYCLES - 1);
        self.syst.clear_current();
        SCB::clear_pendst();
        self.syst.enable_counter();
        // The counter loads RVR on its first clock; from then on RVR is only read at 0.
        while SYST::get_current() == 0 {}
        self.syst.set_reload(0);
    }

    /// Sleeps until the slot ends (at once if the work overran it), then stops the timer.
    pub fn wait(&mut self) {
        cortex_m::interrupt::free(|_| {
            // Not yet at 0 when SYST_CSR is read: reaching it will leave the exception pending.
            if !self.syst.has_wrapped() {
                while !SCB::is_pendst_pending() {
                    cortex_m::asm::wfi();
                }
            }
            self.syst.disable_counter();
            SCB::clear_pendst();
        });
    }
}
