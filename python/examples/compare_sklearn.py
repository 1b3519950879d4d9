"""LDP-TGP-UCB (ldp_bo) beside a scikit-learn GP-UCB loop on the same problem and the same
private reports.

The problem: 100 settings of a knob on [0, 1], a reward f(x) in [-1, 1] (a peak at 0.7, a
lesser one at 0.25) measured with uniform noise in [-R, R], R = 0.5. Every measurement reaches
the learners only as the device's release at eps (ldp_bo.privatise: CTL clamp to B + R, then
discrete Laplace noise). To give both learners the same reports, each trial draws one table of
releases, one per (action, pull): the k-th time a learner measures action a it gets release
[a, k], whichever learner it is.

The learners:
- ldp_bo LDP-TGP-UCB: the robust learner for private reports (truncated GP-UCB);
- ldp_bo GP-UCB: the same library's plain GP-UCB on the same reports;
- scikit-learn GP-UCB: GaussianProcessRegressor, refitted every round on the reports (each
  action's mean with variance c / n), RBF kernel with ldp_bo's default lengthscale (the median
  distance between two points) held fixed,
  alpha = c = R^2 + 8 (B + R)^2 / eps^2 (the reports' second moment about f, as ldp_bo uses),
  beta_t = 2 log(|D| t^2 pi^2 / (6 delta)) with delta = 0.1 (Srinivas et al., finite D);
- uniform play, for reference.

    pip install ./python scikit-learn
    python python/examples/compare_sklearn.py [--trials 5] [--horizon 1000] [--eps 1]

It prints the mean final cumulative regret (its standard error over trials), the ratio to
uniform play's, the simple regret of each learner's recommendation and the seconds per trial.
"""

import argparse
import math
import time
import warnings

import numpy as np

import ldp_bo

B, R = 1.0, 0.5
POINTS = np.linspace(0.0, 1.0, 100)


def f(x):
    return np.exp(-(((x - 0.7) / 0.1) ** 2)) - 0.5 * np.exp(-(((x - 0.25) / 0.15) ** 2))


MEANS = f(POINTS)


def releases(trial, horizon, eps):
    """One release per (action, pull): the device's CTL(eps) of f plus uniform noise."""
    rng = np.random.default_rng(trial)
    raw = MEANS[:, None] + R * rng.uniform(-1.0, 1.0, size=(len(POINTS), horizon))
    # A simulation: seeded so the table reproduces. Never seed a real device's noise.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ldp_bo.SeededNoiseWarning)
        return ldp_bo.privatise(raw, eps=eps, bound=B, noise_bound=R, seed=trial)


def run_ours(algorithm, table, horizon, eps, trial):
    opt = ldp_bo.Optimizer(POINTS, algorithm, eps=eps, bound=B, noise_bound=R, horizon=horizon, seed=trial)
    pulls = np.zeros(len(POINTS), dtype=int)
    regret = 0.0
    for _ in range(horizon):
        a = opt.ask()
        opt.tell(a, table[a, pulls[a]])
        pulls[a] += 1
        regret += MEANS.max() - MEANS[a]
    return regret, opt.recommend()


def median_distance(points):
    d = np.abs(points[:, None] - points[None, :])
    return float(np.median(d[np.triu_indices(len(points), 1)]))


def run_sklearn(table, horizon, eps, delta=0.1):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF

    c = R**2 + 8 * (B + R) ** 2 / eps**2
    kernel = RBF(length_scale=median_distance(POINTS), length_scale_bounds="fixed")
    pulls = np.zeros(len(POINTS), dtype=int)
    sums = np.zeros(len(POINTS))
    regret = 0.0
    mean, sd = np.zeros(len(POINTS)), np.ones(len(POINTS))
    for t in range(1, horizon + 1):
        beta = 2 * math.log(len(POINTS) * t**2 * math.pi**2 / (6 * delta))
        a = int(np.argmax(mean + math.sqrt(beta) * sd))
        sums[a] += table[a, pulls[a]]
        pulls[a] += 1
        regret += MEANS.max() - MEANS[a]
        # n reports of one action with noise variance c are one report of their mean with
        # variance c / n: the same posterior as a fit on every report, from at most |D| rows.
        seen = pulls > 0
        gp = GaussianProcessRegressor(kernel=kernel, alpha=c / pulls[seen], optimizer=None)
        gp.fit(POINTS[seen, None], sums[seen] / pulls[seen])
        mean, sd = gp.predict(POINTS[:, None], return_std=True)
    return regret, int(np.argmax(mean))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--eps", type=float, default=1.0)
    args = parser.parse_args()
    learners = {
        "ldp_bo LDP-TGP-UCB": lambda table, trial: run_ours("ldp-tgp-ucb", table, args.horizon, args.eps, trial),
        "ldp_bo GP-UCB": lambda table, trial: run_ours("gp-ucb", table, args.horizon, args.eps, trial),
        "scikit-learn GP-UCB": lambda table, trial: run_sklearn(table, args.horizon, args.eps),
    }
    rows = {name: ([], [], 0.0) for name in learners}
    uniform = args.horizon * (MEANS.max() - MEANS.mean())
    for trial in range(args.trials):
        table = releases(trial, args.horizon, args.eps)
        for name, learner in learners.items():
            start = time.perf_counter()
            regret, best = learner(table, trial)
            finals, simple, seconds = rows[name]
            rows[name] = (finals + [regret], simple + [MEANS.max() - MEANS[best]], seconds + time.perf_counter() - start)
    print(f"eps = {args.eps}, B = {B}, R = {R}, |D| = {len(POINTS)}, T = {args.horizon}, {args.trials} trials")
    print(f"{'learner':<22} {'final R_T':>10} {'s.e.':>7} {'vs uniform':>10} {'simple regret':>13} {'s/trial':>8}")
    for name, (finals, simple, seconds) in rows.items():
        finals = np.array(finals)
        se = finals.std(ddof=1) / math.sqrt(len(finals)) if len(finals) > 1 else float("nan")
        print(f"{name:<22} {finals.mean():>10.1f} {se:>7.1f} {finals.mean() / uniform:>10.3f} "
              f"{np.mean(simple):>13.3f} {seconds / args.trials:>8.3f}")
    print(f"{'uniform play':<22} {uniform:>10.1f} {'':>7} {1.0:>10.3f}")


if __name__ == "__main__":
    main()
