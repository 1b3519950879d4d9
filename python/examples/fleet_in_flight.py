"""A simulated fleet of users, each answering once, with many queries in flight.

Each user holds a private reward on their device (a ldp_bo.Reporter that releases it once at
eps). The learner keeps `in_flight` queries outstanding at distinct users; reports come back
in a random order (users answer when they answer) and each is told as it arrives, and a new
query goes out. A user who never answers is forgotten. Run: python examples/fleet_in_flight.py
"""

import numpy as np

import ldp_bo

POINTS = np.linspace(0.0, 1.0, 100)


def reward(x):
    return 0.9 - 1.5 * abs(x - 0.65)


def main(users=10_000, in_flight=100, eps=1.0, seed=0):
    rng = np.random.default_rng(seed)
    opt = ldp_bo.Optimizer(POINTS, "ldp-tgp-ucb", eps=eps, bound=1.0, noise_bound=1.0, horizon=users, seed=seed)
    outstanding = []  # (action, the user's report once they answer)
    next_user, told, forgotten, regret = 0, 0, 0, 0.0
    best = reward(POINTS).max()
    while next_user < users or outstanding:
        # Fill the pipeline: one new user per free slot.
        free = min(in_flight - len(outstanding), users - next_user)
        if free > 0:
            for action in opt.ask(free):
                next_user += 1
                # The user's device: it releases its reward once, at eps (unseeded: private).
                device = ldp_bo.Reporter.for_reports(1, eps, bound=1.0, noise_bound=1.0)
                noisy = reward(POINTS[action]) + rng.uniform(-1.0, 1.0)
                if rng.random() < 0.01:
                    opt.forget(int(action))  # this user never answers
                    forgotten += 1
                    continue
                outstanding.append((int(action), device.report(noisy, eps=eps)))
        if not outstanding:
            continue
        # One user answers: any of those outstanding.
        action, report = outstanding.pop(int(rng.integers(len(outstanding))))
        opt.tell(action, report)
        told += 1
        regret += best - reward(POINTS[action])
    uniform = best - reward(POINTS).mean()
    return {"told": told, "forgotten": forgotten, "pending": len(opt.pending), "regret_ratio": regret / (told * uniform), "recommend": float(POINTS[opt.recommend()])}


if __name__ == "__main__":
    print(main())
