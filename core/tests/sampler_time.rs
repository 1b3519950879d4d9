//! The discrete Laplace sampler's running time has a geometric tail, which is what lets a fixed
//! reply slot hide it (`ldp_core::device::REPLY_SLOT_CYCLES`). Its work is counted in 64-bit
//! draws from the generator (each draw is most of the sampler's per-step cost).

use ldp_core::sampler::DiscreteLaplace;

use crate::common::Counting;

/// Over 10^6 samples at the firmware's scales (ε = 1 and its floor 1/1024), the tail of the
/// draw count D falls at least 8-fold per 10 draws (measured: about 12-fold), from
/// P(D ≥ 10) < 0.5 on. Extrapolated, P(D ≥ 10 + 10k) ≤ 8^-k: the reply slot, which holds more
/// than 600 draws (`ldp_core::device::REPLY_SLOT_CYCLES`), is overrun with probability below
/// 8^-59 ≈ 2^-177.
#[test]
fn draw_counts_have_a_geometric_tail() {
    // CTL with C = 2 (B = R = 1): M = 4096 grid steps, num = ⌊2M·1024/ε⌋ + 1, den = 1024.
    for eps in [1.0, 1.0 / 1024.0] {
        let num = (2.0 * 4096.0 * 1024.0 / eps) as u64 + 1;
        let laplace = DiscreteLaplace::new(num, 1024).unwrap();
        let mut rng = Counting::new(11);
        let n = 1_000_000;
        let mut counts = vec![0u64; 256];
        for _ in 0..n {
            rng.draws = 0;
            laplace.sample(&mut rng);
            counts[(rng.draws as usize).min(255)] += 1;
        }
        let tail = |d: usize| counts[d..].iter().sum::<u64>() as f64 / n as f64;
        let max = counts.iter().rposition(|&c| c > 0).unwrap();
        let mean = counts.iter().enumerate().map(|(d, &c)| d as f64 * c as f64).sum::<f64>() / n as f64;
        eprintln!(
            "eps {eps}: draws mean {mean:.2}, max {max}; P(D >= 10) = {:.2e}, P(D >= 20) = {:.2e}, P(D >= 30) = {:.2e}",
            tail(10),
            tail(20),
            tail(30)
        );
        assert!(tail(10) < 0.5, "P(D >= 10) = {}", tail(10));
        let mut d = 10;
        // Only where both tails are well estimated (≥ 100 samples beyond d + 10).
        while tail(d + 10) * n as f64 >= 100.0 {
            let ratio = tail(d) / tail(d + 10);
            assert!(ratio >= 8.0, "the tail falls only {ratio:.1}-fold from {d} to {} draws", d + 10);
            d += 10;
        }
        assert!(d >= 30, "too few samples to see the tail");
        assert!(max < 60, "a sample took {max} draws");
    }
}
