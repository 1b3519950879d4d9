"""Per-round cost of ask + tell from Python against the same in Rust (benches/ask_tell.rs):
GP-UCB at |D| = 100 points of [0, 1], eps = 1, the same reports in the same order.

    python python/benches/ask_tell.py          # the Python side, then the Rust side by cargo

Prints the median time per round (of 15 samples of 2000 rounds after one of warm-up) of each and
the difference: what a round costs more from Python (the target of issue #28 is <= 20 us). The
two sides must make the same actions (their checksums are compared). A benchmark, not a test:
run it on a quiet machine.
"""

import pathlib
import re
import subprocess
import sys
import time

import numpy as np

import ldp_bo

ROUNDS, SAMPLES, HORIZON = 2000, 15, 100_000


def report(k):
    return ((k * 7919) % 1000) / 500.0 - 1.0


def python_side():
    opt = ldp_bo.Optimizer(np.arange(100) / 99.0, "gp-ucb", horizon=HORIZON, seed=1)
    reports = [report(k) for k in range(ROUNDS * (SAMPLES + 1))]
    k, checksum, per_round = 0, 0, []
    for sample in range(SAMPLES + 1):
        start = time.perf_counter_ns()
        for _ in range(ROUNDS):
            a = opt.ask()
            opt.tell(a, reports[k])
            checksum = (checksum * 31 + a) % 2**64
            k += 1
        if sample > 0:
            per_round.append((time.perf_counter_ns() - start) / ROUNDS)
    return sorted(per_round)[SAMPLES // 2], checksum


def rust_side():
    manifest = pathlib.Path(__file__).resolve().parents[1] / "Cargo.toml"
    out = subprocess.run(["cargo", "bench", "--quiet", "--manifest-path", str(manifest), "--bench", "ask_tell"],
                         check=True, capture_output=True, text=True).stdout
    ns = float(re.search(r"rust ns_per_round (\d+)", out).group(1))
    checksum = int(re.search(r"rust checksum (\d+)", out).group(1))
    return ns, checksum


def main():
    py_ns, py_sum = python_side()
    print(f"python ns_per_round {py_ns:.0f}")
    if "--python-only" in sys.argv:
        return
    rust_ns, rust_sum = rust_side()
    print(f"rust ns_per_round {rust_ns:.0f}")
    if py_sum != rust_sum:
        sys.exit(f"the two sides made different actions (checksums {py_sum} and {rust_sum})")
    print(f"python - rust: {(py_ns - rust_ns) / 1000:.2f} us per round (target <= 20 us)")


if __name__ == "__main__":
    main()
