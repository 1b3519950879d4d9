"""Per-round cost of ask + tell on a box from Python against the same in Rust
(benches/box_ask_tell.rs): GP-UCB on [0, 1]^2, eps = 1, the same reports in the same order.

    python python/benches/box_ask_tell.py    # both sides, alternating (Rust by cargo bench)

Prints each side's time per round for 5 samples of 2000 rounds (after one of warm-up; sample i
of both sides does the same work, fits of the kernel included), twice, the sides alternating,
and the mean of the samples' differences: what a round costs more from Python (the target of
issue #36 is <= 20 us). A round is about 2 ms of learner work, so on a busy machine that
difference is mostly noise; the calls' own cost is measured apart, as the fastest of 9 batches
of 10^4 calls with little learner work (ask() again before tell, and posterior(x), which reads a
point as tell does). The two sides must ask the same points (their checksums are compared). A
benchmark, not a test: run it on a quiet machine. OPENBLAS_NUM_THREADS=1 before it shows the
share of numpy's OpenBLAS thread (docs/testing.md).
"""

import pathlib
import re
import subprocess
import sys
import time

import numpy as np

import ldp_bo

ROUNDS, SAMPLES, RUNS = 2000, 5, 2
HORIZON = ROUNDS * (SAMPLES + 1)
MASK = 2**64 - 1


def report(k):
    return ((k * 7919) % 1000) / 500.0 - 1.0


def python_side():
    opt = ldp_bo.Optimizer(bounds=[(0.0, 1.0), (0.0, 1.0)], algorithm="gp-ucb", horizon=HORIZON, seed=1)
    reports = [report(k) for k in range(HORIZON)]
    k, checksum, per_round = 0, 0, []
    for sample in range(SAMPLES + 1):
        start = time.perf_counter_ns()
        for _ in range(ROUNDS):
            x = opt.ask()
            opt.tell(x, reports[k])
            for bits in x.view(np.uint64).tolist():
                checksum = (checksum * 31 + bits) & MASK
            k += 1
        if sample > 0:
            per_round.append((time.perf_counter_ns() - start) / ROUNDS)
    # the calls' own cost, little learner work (as the Rust side times it)
    x = opt.ask()
    calls = {"asked_again": lambda: opt.ask(), "posterior": lambda: opt.posterior(x)}
    return per_round, checksum, {name: fastest(call) for name, call in calls.items()}


def fastest(call):
    """ns per call, the fastest of 9 batches of 10^4 calls."""
    best = float("inf")
    for _ in range(9):
        start = time.perf_counter_ns()
        for _ in range(10_000):
            call()
        best = min(best, (time.perf_counter_ns() - start) / 1e4)
    return best


def rust_side():
    manifest = pathlib.Path(__file__).resolve().parents[1] / "Cargo.toml"
    out = subprocess.run(["cargo", "bench", "--quiet", "--manifest-path", str(manifest), "--bench", "box_ask_tell"],
                         check=True, capture_output=True, text=True).stdout
    ns = [float(v) for v in re.findall(r"rust ns_per_round (\d+)", out)]
    checksum = int(re.search(r"rust checksum (\d+)", out).group(1))
    calls = {name: float(v) for name, v in re.findall(r"rust ns_per_(asked_again|posterior) (\d+)", out)}
    return ns, checksum, calls


def main():
    if "--python-only" in sys.argv:
        py_ns, _, py_calls = python_side()
        print("python ns_per_round", " ".join(f"{v:.0f}" for v in py_ns), py_calls)
        return
    # The sides alternate (Rust, Python, Rust, Python): the machine's load drifts over a minute
    # by more than the difference sought, and one side timed after the other reads that drift.
    differences, checksums = [], set()
    for run in range(RUNS):
        rust_ns, rust_sum, rust_calls = rust_side()
        py_ns, py_sum, py_calls = python_side()
        checksums |= {rust_sum, py_sum}
        print(f"run {run}: rust ns_per_round  ", " ".join(f"{v:.0f}" for v in rust_ns))
        print(f"run {run}: python ns_per_round", " ".join(f"{v:.0f}" for v in py_ns))
        for name in py_calls:
            print(f"run {run}: {name}: python {py_calls[name]:.0f} ns, rust {rust_calls[name]:.0f} ns a call")
        differences += [p - r for p, r in zip(py_ns, rust_ns)]
    if len(checksums) != 1:
        sys.exit(f"the two sides asked different points (checksums {sorted(checksums)})")
    mean = sum(differences) / len(differences)
    print(f"python - rust: {mean / 1000:.2f} us per round, the mean of {len(differences)} samples' differences "
          f"({min(differences) / 1000:.0f} to {max(differences) / 1000:.0f} us; target <= 20 us)")


if __name__ == "__main__":
    main()
