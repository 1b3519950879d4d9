//! A checkpoint line cannot make memory grow beyond what a job of the run holds: a record whose
//! rounds inflate past the horizon (a decompression bomb: one 2.1 MB line made `merge` peak at
//! 4.8 GB) is refused, on resuming and on merging, after inflating at most 4 bytes per round.
//! Its own test binary: the allocator below counts every allocation of the process.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use host_sim::run::checkpoint::{Checkpoint, CheckpointError, JOBS_FILE};

/// The system allocator, keeping the peak of the bytes allocated at once.
struct Peak;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = NOW.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(now, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::SeqCst);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Peak = Peak;

/// Bytes of zeros the bomb inflates to: 64 MiB, from about 64 KB deflated.
const INFLATED: usize = 64 << 20;

/// A record of run `run` whose rounds inflate to [`INFLATED`] bytes (index 0 over and over).
fn bomb(run: &str) -> String {
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    let chunk = vec![0u8; 1 << 20];
    for _ in 0..INFLATED / chunk.len() {
        z.write_all(&chunk).unwrap();
    }
    let rounds = base64::engine::general_purpose::STANDARD.encode(z.finish().unwrap());
    format!(
        r#"{{"run":"{run}","trial":0,"algo":0,"seconds":1.0,"steps":{{"values":[0.5],"rounds":"{rounds}"}}}}"#
    )
}

#[test]
fn a_record_that_inflates_past_the_horizon_is_refused_without_inflating_it() {
    let base = std::env::temp_dir().join(format!("host-sim-bomb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (shard, out) = (base.join("shard"), base.join("out"));
    std::fs::create_dir_all(&shard).unwrap();
    let line = bomb("r");
    assert!(line.len() < 200_000, "the bomb line is {} bytes", line.len());
    std::fs::write(shard.join(JOBS_FILE), line + "\n").unwrap();
    let horizon = 1000;

    // Resuming in the bomb's directory.
    let before = NOW.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let resumed = Checkpoint::open(&shard, "r", horizon);
    let grew = PEAK.load(Ordering::SeqCst) - before;
    match resumed {
        Err(e @ CheckpointError::TooLong { line: 1, horizon: 1000, .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("jobs.jsonl line 1 holds more than a job of this run's 1000 rounds can"),
                "{msg}"
            );
        }
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(c) => panic!("accepted, with {} jobs", c.finished()),
    }
    assert!(grew < 4 << 20, "opening the checkpoint allocated {grew} bytes at its peak");

    // Merging it as a shard.
    let mut merged = Checkpoint::open(&out, "r", horizon).unwrap();
    let before = NOW.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let absorbed = merged.absorb(&shard);
    let grew = PEAK.load(Ordering::SeqCst) - before;
    assert!(matches!(absorbed, Err(CheckpointError::TooLong { .. })), "{absorbed:?}");
    assert!(grew < 4 << 20, "merging allocated {grew} bytes at its peak");
    assert_eq!(merged.finished(), 0);
    let _ = std::fs::remove_dir_all(&base);
}
