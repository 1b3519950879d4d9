//! The local-JDP client never allocates: a counting global allocator sees no allocation on the
//! client's thread during selection and reporting. (The crate has no allocator at all on the
//! Cortex-M targets, where `cargo build -p ldp-core --target thumbv7em-none-eabihf` compiles
//! the same code through the non-generic `DeviceClient`; this checks the host build too.) Also
//! the documented size of the state a device receives and returns.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use ldp_core::jdp::{ClientConfig, Confidence, DEVICE_FEATURES, DeviceClient, JdpState};
use ldp_core::{Bound, Delta, Epsilon};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: delegates every call to the system allocator unchanged; the counter is a
// thread-local `Cell` with a `const` initialiser, which itself never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn the_device_client_runs_a_hundred_rounds_without_allocating() {
    let conf = Confidence { rkhs_bound: 1.0, noise_scale: 0.5, approx_error: 1e-6, zeta: 0.1, scale: 0.1 };
    let device = DeviceClient::new(
        0.2,
        ClientConfig::new(
            Epsilon::new(1.0).unwrap(),
            Delta::new(0.1).unwrap(),
            Bound::new(1.0).unwrap(),
            100,
            conf,
        ),
    )
    .unwrap();
    let candidates: [[f64; 1]; 16] = core::array::from_fn(|i| [i as f64 / 15.0]);
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut state = device.initial_state();
    let before = allocations();
    for t in 0..100 {
        let pick = device.select(&state, &candidates).unwrap_or_else(|e| panic!("round {t}: {e}"));
        let reward = if t % 3 == 0 { 1.0 } else { 0.0 };
        device.report(&mut state, &candidates[pick.index], reward, &mut rng).unwrap();
    }
    let after = allocations();
    assert_eq!(after - before, 0, "the client allocated {} times", after - before);
    assert_eq!(state.rounds, 100);
    // The counter works: a heap allocation on this thread is counted.
    let boxed = Box::new([1u8; 10]);
    assert!(allocations() > after && boxed.len() == 10);
}

#[test]
fn the_device_state_has_its_documented_size() {
    // `8F² + 8F + 16` bytes (Gram matrix, moment vector, round count and grid exponent).
    const F: usize = DEVICE_FEATURES;
    assert_eq!(core::mem::size_of::<JdpState<F>>(), 8 * F * F + 8 * F + 16);
    assert_eq!(core::mem::size_of::<JdpState<F>>(), 6512);
}
