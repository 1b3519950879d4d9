#!/usr/bin/env python3
"""Writes the project's own test tables (none of them a paper's or a reported setting) into DIR.

Used to choose and check the defaults on data no figure reports (docs/constants.md):
  trend.csv     20 series sharing one random-walk trend plus their own drift (like monthly
                employment series that move together), 240 rows, a leading date column;
  seasonal.csv  12 series with a shared yearly cycle around 15 and their own offsets (like
                monthly sea temperatures), 60 rows;
  near10.csv    3 arms with means 10.2 / 10.5 / 11.0, uniform noise of half-width 0.05, 500 rows;
  heavy.csv     8 arms, means 1.0 .. 1.7, Student-t(2.5) noise of scale 0.3, 2000 rows;
  trap.csv      10 arms whose low-mean columns move independently while the good ones share a
                common factor, 400 rows.
Deterministic (Python's Mersenne Twister from fixed seeds); standard library only.
Usage: scripts/own-tables.py DIR
"""
import math
import os
import random
import sys


def write(path, header, rows):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(x if isinstance(x, str) else repr(round(x, 6)) for x in r) + "\n")


def student_t(rng, nu):
    z = rng.gauss(0, 1)
    chi2 = sum(rng.gauss(0, 1) ** 2 for _ in range(int(nu))) + (
        rng.gammavariate((nu - int(nu)) / 2, 2) if nu != int(nu) else 0.0)
    return z / math.sqrt(chi2 / nu)


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20261126)
    # trend: common random walk + own slope + own noise; levels 50..150.
    k, n = 20, 240
    level = [rng.uniform(50, 150) for _ in range(k)]
    slope = [rng.uniform(-0.05, 0.25) for _ in range(k)]
    common, rows = 0.0, []
    for t in range(n):
        common += rng.gauss(0.1, 1.0)
        date = f"{2000 + t // 12}-{t % 12 + 1:02d}"
        rows.append([date] + [level[a] + slope[a] * t + common + rng.gauss(0, 2.0) for a in range(k)])
    write(os.path.join(out, "trend.csv"), ["date"] + [f"s{a}" for a in range(k)], rows)
    # seasonal: shared cycle, offsets within 1 degree.
    k, n = 12, 60
    offset = [rng.uniform(-0.5, 0.5) for _ in range(k)]
    rows = []
    for t in range(n):
        season = 4.0 * math.sin(2 * math.pi * t / 12)
        rows.append([season + 15.0 + offset[a] + rng.gauss(0, 0.6) for a in range(k)])
    write(os.path.join(out, "seasonal.csv"), [f"m{a}" for a in range(k)], rows)
    # near10
    means = [10.2, 10.5, 11.0]
    rows = [[m + rng.uniform(-0.05, 0.05) for m in means] for _ in range(500)]
    write(os.path.join(out, "near10.csv"), ["a", "b", "c"], rows)
    # heavy
    means = [1.0 + 0.1 * a for a in range(8)]
    rows = [[m + 0.3 * student_t(rng, 2.5) for m in means] for _ in range(2000)]
    write(os.path.join(out, "heavy.csv"), [f"h{a}" for a in range(8)], rows)
    # trap: good arms (high mean) share a factor; bad arms independent.
    k, n = 10, 400
    means = [1.0 - 0.06 * a for a in range(k)]
    rows = []
    for _ in range(n):
        f = rng.gauss(0, 0.3)
        rows.append([means[a] + (f if a < 5 else 0.0) + rng.gauss(0, 0.15 if a < 5 else 0.3) for a in range(k)])
    write(os.path.join(out, "trap.csv"), [f"x{a}" for a in range(k)], rows)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
