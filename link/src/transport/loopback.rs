//! The device application in this process, bytes passed in memory.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use ldp_core::StateStore;
use ldp_core::device::{DeviceApp, RewardSource};
use ldp_core::wire::Auth;

use super::Link;

/// The device application in this process: what the firmware runs, with bytes in memory.
pub struct LoopbackLink<S, R> {
    app: DeviceApp<S, R>,
    pending: VecDeque<u8>,
}

impl<S, R> LoopbackLink<S, R> {
    /// A link to `app`.
    pub fn new(app: DeviceApp<S, R>) -> Self {
        Self { app, pending: VecDeque::new() }
    }

    /// The device application (e.g. to inspect its budget).
    pub fn app(&self) -> &DeviceApp<S, R> {
        &self.app
    }
}

impl<S: StateStore, R: RewardSource> LoopbackLink<S, R> {
    /// What the learner beside this in-process device authenticates with.
    pub fn auth(&self) -> Auth {
        self.app.learner_auth()
    }
}

impl<S: StateStore, R: RewardSource> Link for LoopbackLink<S, R> {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        for &b in bytes {
            if let Some(reply) = self.app.on_byte(b) {
                self.pending.extend(reply);
                self.app.prepare(); // as the firmware does after each reply
            }
        }
        Ok(())
    }

    fn recv_byte(&mut self, _timeout: Duration) -> io::Result<Option<u8>> {
        Ok(self.pending.pop_front())
    }
}
