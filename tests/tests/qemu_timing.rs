//! When a reply leaves says nothing about the noise in it.
//!
//! The firmware runs under QEMU with `-icount shift=0,sleep=off` (virtual time = instructions
//! executed, so the guest's clocks measure work, free of host noise). Its timing probe
//! (`ldp-timing.bin`, QEMU builds only) records, for every reply, the TIM2 ticks from the byte
//! that ended the query to the first byte of the reply: the latency a learner timing the link
//! would see. Over 10^4 reports of one arm, the latency must be uncorrelated with |Z| (Pearson
//! |r| < 0.02), where Z, the noise, is estimated by the release minus the arm's mean (the sensor
//! noise adds at most 2^11 grid steps to a Laplace scale of 2^17 · 1.25).
//!
//! Stronger, and what the slot is built for (`firmware-example/src/slot.rs`): under `-icount`
//! every reply leaves the same number of ticks after its query ended — one latency value in all
//! 10^4. The correlation test alone is weak against a few odd replies (a handful of slots one
//! SysTick period short, as QEMU's clock warp once made them, move r past 0.02 only when their
//! noise is extreme); any second latency value fails here, with the replies it came from printed.
//!
//! The same audit run on the broken fixture `fixture-unslotted` — the same firmware, replying as
//! soon as the reply is ready, i.e. with the sampler in the reply path — must find the
//! correlation (|r| ≥ 0.1). Its latencies also size the slot: the test prints the slowest work
//! against `ldp_core::device::REPLY_SLOT_CYCLES`.
//!
//! Skips with a printed reason when QEMU or the thumbv7em target is missing, unless
//! REQUIRE_QEMU=1 (CI), when that is a failure.

use std::path::Path;

use ldp_core::Epsilon;
use ldp_core::device::REPLY_SLOT_CYCLES;
use ldp_learn::env::{Environment, SensorEnv};
use ldp_link::client::WireClient;
use ldp_link::transport::QemuDevice;

use crate::common;

const REPLIES: usize = 10_000;
const ARM: u32 = 0;
/// 10^4 reports at 0.05 use 500 of the firmware's 1000 ε.
const EPSILON: f64 = 0.05;

/// Latencies (TIM2 ticks) and |Z| estimates (grid steps) of `REPLIES` reports of `ARM`.
fn measure(elf: &Path, name: &str) -> (Vec<f64>, Vec<f64>) {
    let workdir = common::fresh_dir(&format!("timing-{name}"));
    std::fs::create_dir_all(&workdir).unwrap();
    std::fs::write(workdir.join("ldp-timing.bin"), []).unwrap();
    let icount = ["-icount", "shift=0,sleep=off,align=off"];
    let mut qemu = QemuDevice::start_with(elf, &workdir, &icount, None).unwrap();
    let mut client = WireClient::new(qemu.connect().unwrap(), qemu.auth().unwrap());
    // The hello may need a resend (its first bytes can arrive before the firmware's UART is up);
    // after it, a resend would add a probe record: be patient.
    client.hello().unwrap();
    client.timeout = std::time::Duration::from_secs(30);
    client.resends = 0;
    let mean = SensorEnv::new(100, 1.0).unwrap().mean(ARM as usize);
    let eps = Epsilon::new(EPSILON).unwrap();
    let noise: Vec<f64> = (0..REPLIES)
        .map(|i| match client.query(i as u32, ARM, eps, None).unwrap() {
            Ok(report) => {
                let grid = libm::scalbn(1.0, report.release.grid_log2);
                (report.release.index as f64 - mean / grid).abs()
            }
            Err(refusal) => panic!("query {i} refused: {refusal}"),
        })
        .collect();
    assert_eq!(client.resends, 0, "a resend would add a probe record");
    // The probe writes a reply's record just after sending it: one more exchange makes sure
    // the last query's record is on disk before the emulator is killed.
    client.hello().unwrap();
    drop(client);
    qemu.kill();
    let bytes = std::fs::read(workdir.join("ldp-timing.bin")).unwrap();
    let latency: Vec<f64> = bytes
        .chunks_exact(4)
        .skip(1) // the first hello
        .take(REPLIES) // not the last hello's, if it was written
        .map(|c| f64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect();
    assert_eq!(latency.len(), REPLIES, "one probe record per reply");
    let _ = std::fs::remove_dir_all(&workdir);
    (latency, noise)
}

/// Pearson's r; 0 when either variable is constant (nothing to correlate).
fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 { 0.0 } else { sxy / (sxx * syy).sqrt() }
}

fn summary(latency: &[f64]) -> String {
    let mut sorted = latency.to_vec();
    sorted.sort_by(f64::total_cmp);
    let q = |p: f64| sorted[((sorted.len() - 1) as f64 * p) as usize];
    let mut distinct = sorted.clone();
    distinct.dedup();
    format!(
        "min {} median {} p99.99 {} max {} ({} distinct values)",
        q(0.0),
        q(0.5),
        q(0.9999),
        q(1.0),
        distinct.len()
    )
}

/// For each distinct latency (the first 4): how many replies, their mean |Z| and the first few
/// reply indices, to see where a second latency or a correlation comes from.
fn groups(latency: &[f64], noise: &[f64]) -> String {
    let mut distinct = latency.to_vec();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let mut out = String::new();
    for value in distinct.iter().take(4) {
        let at: Vec<usize> =
            (0..latency.len()).filter(|&i| latency[i].to_bits() == value.to_bits()).collect();
        let mean = at.iter().map(|&i| noise[i]).sum::<f64>() / at.len() as f64;
        let first: Vec<usize> = at.iter().copied().take(8).collect();
        out += &format!("  latency {value}: {} replies, mean |Z| {mean:.0}, first at {first:?}\n", at.len());
    }
    out
}

#[test]
fn reply_timing_is_uncorrelated_with_the_noise_and_the_unslotted_fixture_is_caught() {
    let Some(elf) = common::firmware(&[]) else { return };
    let Some(fixture) = common::firmware(&["fixture-unslotted"]) else { return };
    // The two firmware builds measured at once, each on its own emulator (one QEMU is one
    // thread; under `-icount` the ticks a reply takes do not depend on the host's load).
    let ((latency, noise), (leaky, leaky_noise)) = std::thread::scope(|s| {
        let unslotted = s.spawn(|| measure(&fixture, "unslotted"));
        let slotted = measure(&elf, "slotted");
        (slotted, unslotted.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    let r = pearson(&latency, &noise);
    eprintln!("slotted firmware, {REPLIES} replies: latency (TIM2 ticks) {}; r = {r:.4}", summary(&latency));
    let groups = groups(&latency, &noise);
    eprintln!("{groups}");
    assert!(r.abs() < 0.02, "reply latency correlates with |Z|: r = {r}");
    assert!(
        latency.iter().all(|l| l.to_bits() == latency[0].to_bits()),
        "slotted replies left at different times after their queries:\n{groups}"
    );
    let slot = latency.iter().copied().fold(f64::NAN, f64::max);

    let r_leaky = pearson(&leaky, &leaky_noise);
    eprintln!("FIXTURE unslotted, {REPLIES} replies: latency {}; r = {r_leaky:.4}", summary(&leaky));
    assert!(r_leaky.abs() >= 0.1, "the timing audit missed the unslotted fixture: r = {r_leaky}");
    let work = leaky.iter().copied().fold(f64::NAN, f64::max);
    eprintln!(
        "slot {REPLY_SLOT_CYCLES} cycles = {slot} ticks; the slowest unslotted reply took {work} ticks ({:.1}% of the slot)",
        100.0 * work / slot
    );
    assert!(work < slot, "the work overran the reply slot");
}
