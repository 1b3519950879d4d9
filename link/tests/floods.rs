//! A link that floods the learner, with junk or with frames, holds a try no more than
//! `MAX_ENCODED_LEN` reads past its deadline, and a reply behind a flood is still taken once.
//!
//! Covers: an endless flood in process and on a real TCP socket, and a reply behind more than a
//! frame of junk. On `TcpLink` and `SerialLink` a zero timeout becomes a 1 ms read timeout, so
//! "bytes already waiting" is "bytes arriving within 1 ms of each other": a drip keeps a try
//! reading up to `MAX_ENCODED_LEN` ms past its deadline, and a genuine reply that came up to
//! that late is taken (bounded, and only genuine replies pass the checks; not tested: timing).

use std::collections::VecDeque;
use std::io;
use std::rc::Rc;
use std::time::{Duration, Instant};

use ldp_core::MemoryStore;
use ldp_core::wire::MAX_ENCODED_LEN;
use ldp_link::client::LinkError;
use ldp_link::transport::Link;

use crate::common::{Dev, boot, client, device_answer, eps, spent};

/// A link that floods: every read returns a byte at once (junk with a delimiter now and then,
/// so the reader sees damaged frames), for ever — up to `limit` reads, after which it fails, so
/// that a client that would read for ever fails this test instead of hanging it.
struct Flood {
    reads: u64,
    zero_reads: u64,
    limit: u64,
}

impl Link for Flood {
    fn send(&mut self, _: &[u8]) -> io::Result<()> {
        Ok(())
    }
    fn recv_byte(&mut self, timeout: Duration) -> io::Result<Option<u8>> {
        self.reads += 1;
        self.zero_reads += u64::from(timeout.is_zero());
        if self.reads > self.limit {
            return Err(io::Error::other("the client is still reading"));
        }
        Ok(Some(if self.reads.is_multiple_of(50) { 0 } else { 0x55 }))
    }
}

/// Held: a flood that never stops ends each try at its deadline plus at most
/// `MAX_ENCODED_LEN` zero-timeout reads; the request ends (no answer) rather than hangs.
#[test]
fn an_endless_flood_after_the_deadline_ends_the_try() {
    let dev = boot(MemoryStore::provisioned([31; 32]));
    let mut c = client(Flood { reads: 0, zero_reads: 0, limit: 50_000_000 }, dev.auth(), 31);
    c.tries = 3;
    let got = c.hello();
    assert!(matches!(got, Err(LinkError::Timeout { tries: 3, .. })), "{got:?}");
    let zero = c.link().zero_reads;
    assert!(zero <= 3 * (MAX_ENCODED_LEN as u64 + 1), "{zero} zero-timeout reads in 3 tries");
    assert!(c.damaged_frames > 0, "the flood was read");
}

/// Held, on a real socket: a peer that floods the learner's TCP link for 5 s does not keep
/// the client reading until it stops (a client reading for ever would see the connection close:
/// an I/O error).
#[test]
fn a_tcp_flood_does_not_hold_the_client() {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let peer = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let chunk = [0x55u8; 1024];
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if s.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let link = ldp_link::transport::TcpLink::connect(&addr.to_string(), Duration::from_secs(5)).unwrap();
    let dev = boot(MemoryStore::provisioned([32; 32]));
    let mut c = client(link, dev.auth(), 32);
    c.tries = 2;
    let got = c.hello();
    assert!(matches!(got, Err(LinkError::Timeout { .. })), "{got:?}");
    drop(c);
    peer.join().unwrap();
}

/// A link to the in-process device that, like a descheduled learner, makes the first read after
/// each send slow (past the client's deadline), and puts `junk` bytes before the device's
/// answer.
struct JunkFirst {
    inner: Dev,
    inbound: VecDeque<u8>,
    junk: Rc<std::cell::Cell<usize>>,
    fresh: bool,
}

impl Link for JunkFirst {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.fresh = true;
        // Junk ending with a delimiter, so that the answer after it is a frame of its own.
        let n = self.junk.get();
        self.inbound.extend((0..n).map(|i| if i + 1 == n { 0 } else { 0x55 }));
        let answer = device_answer(&mut self.inner, bytes)?;
        self.inbound.extend(answer);
        Ok(())
    }
    fn recv_byte(&mut self, _: Duration) -> io::Result<Option<u8>> {
        if std::mem::take(&mut self.fresh) {
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(self.inbound.pop_front())
    }
}

/// Held: a reply behind more junk than one frame is not read after the deadline (the bound is
/// what it says), and the next try takes it: its identical resend is a reply-cache hit, so the
/// query is spent once and its report taken.
#[test]
fn a_reply_behind_a_frame_sized_flood_is_taken_by_the_next_try_and_spent_once() {
    let dev = boot(MemoryStore::provisioned([33; 32]));
    let auth = dev.auth();
    let junk = Rc::new(std::cell::Cell::new(0));
    let link = JunkFirst { inner: dev, inbound: VecDeque::new(), junk: junk.clone(), fresh: false };
    let mut c = client(link, auth, 33);
    c.tries = 2;
    c.hello().unwrap();
    junk.set(MAX_ENCODED_LEN + 1);
    let got = c.query(1, 1, eps(), None);
    assert!(matches!(got, Ok(Ok(_))), "{got:?}");
    assert_eq!(c.resends, 1, "the first try, past its deadline, stopped before the reply");
    assert_eq!(spent(&c.link().inner), 1.0);
}
