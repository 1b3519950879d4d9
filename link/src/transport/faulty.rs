//! Fault injection: a link that drops, corrupts, duplicates and reorders whole frames.

use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

use rand::RngExt;
use rand_core::SeedableRng;

use ldp_learn::env::SimRng;

use super::Link;

/// Fault rates for [`FaultyLink`], each a probability per frame and direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Faults {
    /// The frame vanishes.
    pub drop: f64,
    /// One byte of the frame is flipped (the CRC or the framing catches it).
    pub corrupt: f64,
    /// The frame arrives twice.
    pub duplicate: f64,
    /// The frame is held back and arrives after the next one (reordering, delay).
    pub reorder: f64,
}

/// What a [`FaultyLink`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// Frames passed on, in either direction.
    pub frames: u64,
    /// Frames dropped.
    pub dropped: u64,
    /// Frames corrupted.
    pub corrupted: u64,
    /// Frames duplicated.
    pub duplicated: u64,
    /// Frames held back behind a later one.
    pub reordered: u64,
}

/// A link wrapper that drops, corrupts, duplicates and reorders whole frames in both directions,
/// driven by its own seeded generator (fault-injection tests).
pub struct FaultyLink<L> {
    inner: L,
    faults: Faults,
    rng: SimRng,
    held_out: Option<Vec<u8>>,
    held_in: Option<Vec<u8>>,
    partial_in: Vec<u8>,
    inbound: VecDeque<u8>,
    /// What was done so far.
    pub counts: FaultCounts,
}

impl<L: Link> FaultyLink<L> {
    /// Wraps `inner` with `faults`, seeded by `seed`.
    pub fn new(inner: L, faults: Faults, seed: u64) -> Self {
        Self {
            inner,
            faults,
            rng: SimRng::seed_from_u64(seed),
            held_out: None,
            held_in: None,
            partial_in: Vec::new(),
            inbound: VecDeque::new(),
            counts: FaultCounts::default(),
        }
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.random::<f64>() < p
    }

    /// Applies the faults to one frame; returns the frames to deliver now, in order.
    fn mangle(&mut self, mut frame: Vec<u8>, inbound: bool) -> Vec<Vec<u8>> {
        self.counts.frames += 1;
        if self.chance(self.faults.drop) {
            self.counts.dropped += 1;
            return Vec::new();
        }
        if self.chance(self.faults.corrupt) && frame.len() > 1 {
            let i = self.rng.random_range(0..frame.len() - 1);
            frame[i] ^= 1 << self.rng.random_range(0..8);
            self.counts.corrupted += 1;
        }
        let mut out = vec![frame.clone()];
        if self.chance(self.faults.duplicate) {
            self.counts.duplicated += 1;
            out.push(frame);
        }
        let held = if inbound { &mut self.held_in } else { &mut self.held_out };
        if let Some(previous) = held.take() {
            out.push(previous); // the held frame arrives after this one
        } else if self.chance(self.faults.reorder) {
            self.counts.reordered += 1;
            let held = if inbound { &mut self.held_in } else { &mut self.held_out };
            *held = Some(out.remove(0));
        }
        out
    }

    /// The wrapped link.
    pub fn inner(&self) -> &L {
        &self.inner
    }
}

impl<L: Link> Link for FaultyLink<L> {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        for frame in self.mangle(bytes.to_vec(), false) {
            self.inner.send(&frame)?;
        }
        Ok(())
    }

    fn recv_byte(&mut self, timeout: Duration) -> io::Result<Option<u8>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(b) = self.inbound.pop_front() {
                return Ok(Some(b));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(b) = self.inner.recv_byte(left)? else {
                // Nothing more is coming now: a held-back reply is released late.
                return match self.held_in.take() {
                    Some(frame) => {
                        self.inbound.extend(frame);
                        Ok(self.inbound.pop_front())
                    }
                    None => Ok(None),
                };
            };
            self.partial_in.push(b);
            if b == 0 {
                let frame = std::mem::take(&mut self.partial_in);
                for f in self.mangle(frame, true) {
                    self.inbound.extend(f);
                }
            }
        }
    }
}
