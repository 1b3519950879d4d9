#!/usr/bin/env python3
"""A plain numpy loop of LDP-TGP-UCB on fig2a's setting: the speed reference of
`host-sim bench` (docs/results.md).

Setting as `host-sim run fig2a`: 100 arms evenly spaced on [0, 1], Matérn-5/2 kernel with
l = 0.2, f = sum_i a_i k(., x_i) with a_i ~ U[-1, 1] scaled to max|f| = 1, noise U[-1, 1],
CTL at eps = 1 (clamp to B + R = 2, Laplace of scale 2(B+R)/eps = 4), the calibrated constants
(lambda = R^2 + 2 L^2 = 33, beta_t = 0.2 sqrt(2 ln(|D| t^2 pi^2 / (6 delta))), level
B + R + L ln t). "Plain" means what a direct port of the paper's equations (2)-(3) does: each
round, the posterior over the arms is solved from the t observations so far with
numpy.linalg.solve, O(t^3) per round. It reports seconds and final regret; the regret is a
sanity check only (its random numbers are numpy's, not host-sim's).

Usage: python3 scripts/numpy_tgp_baseline.py [--horizon 1000] [--trials 10] [--seed 0]
"""

import argparse
import math
import time

import numpy as np


def matern52(x, y, length=0.2):
    r = np.abs(x[:, None] - y[None, :]) / length
    s = math.sqrt(5.0) * r
    return (1.0 + s + s * s / 3.0) * np.exp(-s)


def trial(rng, horizon, eps=1.0, delta=0.1):
    arms = np.linspace(0.0, 1.0, 100)
    k = matern52(arms, arms)
    f = k @ rng.uniform(-1.0, 1.0, 100)
    f /= np.max(np.abs(f))
    b, r = 1.0, 1.0
    scale = 2.0 * (b + r) / eps
    lam = r * r + 2.0 * scale * scale
    xs, ys = [], []
    regret, best = 0.0, f.max()
    for t in range(1, horizon + 1):
        if xs:
            idx = np.array(xs)
            kt = k[np.ix_(idx, idx)] + lam * np.eye(len(idx))
            kx = k[:, idx]
            mean = kx @ np.linalg.solve(kt, np.array(ys))
            var = np.clip(1.0 - np.sum(kx * np.linalg.solve(kt, kx.T).T, axis=1), 0.0, None)
        else:
            mean, var = np.zeros(100), np.ones(100)
        beta = 0.2 * math.sqrt(2.0 * math.log(100 * t * t * math.pi**2 / (6.0 * delta)))
        arm = int(np.argmax(mean + beta * np.sqrt(var)))
        raw = np.clip(f[arm] + rng.uniform(-1.0, 1.0), -(b + r), b + r)
        report = raw + rng.laplace(0.0, scale)
        level = b + r + scale * math.log(t)
        xs.append(arm)
        ys.append(report if abs(report) <= level else 0.0)
        regret += best - f[arm]
    return regret


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--horizon", type=int, default=1000)
    p.add_argument("--trials", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    start = time.perf_counter()
    finals = [trial(rng, a.horizon) for _ in range(a.trials)]
    seconds = time.perf_counter() - start
    print(f"numpy LDP-TGP-UCB, T = {a.horizon}, {a.trials} trials: {seconds:.2f} s "
          f"({seconds / a.trials:.3f} s per trial), mean final regret {np.mean(finals):.1f}")


if __name__ == "__main__":
    main()
