#!/usr/bin/env python3
"""Writes synthetic reward tables (one column per arm, one row per observation) for
`host-sim run custom --arms FILE --family bandit`: the K-armed learners' test tables of other
kinds than the shipped stock and light-sensor data (docs/constants.md, "K-armed learners").

Usage: scripts/karmed-tables.py OUT_DIR [SEED]
  SEED 0 (default) writes the tables the K-armed measurements report; scripts/choose-kappa-karmed.sh
  writes the same kinds with other seeds and parameters (so that the multiplier is never chosen on
  a reported table). Deterministic: the same seed writes the same bytes.

Tables (SEED 0; other seeds move every mean and draw):
  close3.csv   3 arms near 10 (10.2, 10.5, 11.0) with uniform noise of half-width 0.05: values far
               from 0 with a small spread (a learner that truncates the signal locks in);
  heavy6.csv   6 arms, means 1.0 .. 2.0, Student-t(2.2) noise (heavy-tailed, a few huge readings:
               R is large, the variance small);
  clicks20.csv 20 arms of 0/1 readings with rates 0.02 .. 0.10 (sparse, skewed);
  stocks10.csv the first ten stock columns of ../shared/data/stocks_adjclose.csv (if DATA is set
               or the file is found), the date column kept.
"""
import math
import os
import random
import sys


def student_t(rng, nu):
    z = rng.gauss(0.0, 1.0)
    chi2 = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(int(nu))) + (
        2.0 * rng.gammavariate((nu - int(nu)) / 2.0, 1.0) if nu > int(nu) else 0.0)
    return z / math.sqrt(chi2 / nu)


def write(path, names, columns):
    rows = len(columns[0])
    with open(path, "w") as f:
        f.write(",".join(names) + "\n")
        for i in range(rows):
            f.write(",".join(f"{c[i]:.6g}" for c in columns) + "\n")


def main():
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    os.makedirs(out, exist_ok=True)
    rng = random.Random(seed)
    jitter = (lambda x, s: x) if seed == 0 else (lambda x, s: x + rng.uniform(-s, s))

    means = [jitter(m, 0.1) for m in (10.2, 10.5, 11.0)]
    write(os.path.join(out, "close3.csv"), ["a", "b", "c"],
          [[m + rng.uniform(-0.05, 0.05) for _ in range(500)] for m in means])

    means = [jitter(1.0 + 0.2 * a, 0.08) for a in range(6)]
    write(os.path.join(out, "heavy6.csv"), [f"h{a}" for a in range(6)],
          [[m + 0.3 * student_t(rng, 2.2) for _ in range(1000)] for m in means])

    rates = [max(0.005, jitter(0.02 + 0.08 * a / 19, 0.01)) for a in range(20)]
    write(os.path.join(out, "clicks20.csv"), [f"k{a}" for a in range(20)],
          [[1 if rng.random() < p else 0 for _ in range(2000)] for p in rates])

    data = os.environ.get("DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    stocks = os.path.join(data, "stocks_adjclose.csv")
    if seed == 0 and os.path.exists(stocks):
        with open(stocks) as f, open(os.path.join(out, "stocks10.csv"), "w") as g:
            for line in f:
                g.write(",".join(line.rstrip("\n").split(",")[:11]) + "\n")


if __name__ == "__main__":
    main()
