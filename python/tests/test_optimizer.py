"""ldp_bo.Optimizer: the Rust ask/tell learner from Python. Same settings, seed and reports,
same actions as ldp_learn::optimizer::Optimizer (driven by host-sim's example ask_tell_stdio);
bad input refused with the package's exceptions."""

import math
import pydoc
import subprocess

import numpy as np
import pytest

import ldp_bo

pytestmark = pytest.mark.filterwarnings("ignore::ldp_bo.SeededNoiseWarning")


class RustOptimizer:
    """ldp_learn::optimizer::Optimizer in a process of its own (examples/ask_tell_stdio.rs)."""

    def __init__(self, host_sim, repository, domain_lines, algorithm, eps, bound, noise_bound, horizon, seed,
                 constants, kernel=None, lengthscale=None):
        args = [algorithm, "none" if eps is None else repr(eps), repr(bound), repr(noise_bound), horizon, seed,
                constants]
        if kernel is not None:
            args.append(kernel)
            if lengthscale is not None:
                args.append(repr(lengthscale))
        self.process = subprocess.Popen(host_sim(*args, example="ask_tell_stdio"), cwd=repository,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for line in domain_lines:
            self.process.stdin.write(line + "\n")

    def say(self, line):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"ask_tell_stdio ended (exit {self.process.wait()}) at {line!r}")
        return answer.strip()

    def close(self):
        self.process.stdin.close()
        assert self.process.wait() == 0


def lines(rows):
    return [f"points {len(rows)} {len(rows[0])}"] + [" ".join(repr(float(x)) for x in row) for row in rows]


def drive(host_sim, repository, domain, f, rounds, *, rust_seed=None, **settings):
    """Both optimisers in lockstep on the same reports (a seeded device's releases of f plus
    uniform noise, or the raw values when eps is None): the (Python, Rust) action pairs up to
    the first that differs."""
    py = ldp_bo.Optimizer(**domain, **settings)
    if "points" in domain:
        rows = np.asarray(domain["points"], dtype=float).reshape(len(domain["points"]), -1)
        domain_lines = lines(rows.tolist())
    elif "arms" in domain:
        domain_lines = [f"arms {domain['arms']}"]
    else:
        k = len(domain["covariance"])
        domain_lines = [f"covariance {k}"] + [" ".join(repr(float(x)) for x in row) for row in domain["covariance"]]
    s = {"eps": 1.0, "bound": 1.0, "noise_bound": 1.0, "horizon": 1000, "constants": "calibrated", **settings}
    rust = RustOptimizer(host_sim, repository, domain_lines, s["algorithm"], s["eps"], s["bound"],
                         s["noise_bound"], s["horizon"], s["seed"] if rust_seed is None else rust_seed,
                         s["constants"], s.get("kernel"), s.get("lengthscale"))
    eps = s["eps"]
    device = ldp_bo.Reporter.for_reports(rounds, eps, s["bound"], s["noise_bound"], seed=5) if eps else None
    rng = np.random.default_rng(2)
    pairs = []
    for _ in range(rounds):
        a, b = py.ask(), int(rust.say("ask"))
        pairs.append((a, b))
        if a != b:
            break
        level = py.device_level
        rust_level = rust.say("level")
        assert (level is None and rust_level == "none") or float(rust_level) == level
        y = f(a) + s["noise_bound"] * rng.uniform(-1, 1)
        report = float(device.report(y, eps, level=level) if eps else y)
        py.tell(a, report)
        assert rust.say(f"tell {a} {report!r}") == "ok"
    else:
        assert int(rust.say("recommend")) == py.recommend()
        assert py.told == rounds
    rust.close()
    return pairs


rng = np.random.default_rng(1)
POINTS_2D = rng.uniform(0, 1, size=(40, 2))
LINE = np.linspace(0, 1, 100)
COVARIANCE = np.exp(-np.abs(np.subtract.outer(np.arange(20), np.arange(20))) / 5.0)
MEANS = np.array([0.1, 0.5, -0.2, 0.8, 0.3, 0.6])


def bump(points, at):
    points = np.asarray(points, dtype=float).reshape(len(points), -1)
    return lambda i: 1.0 - 2.0 * float(np.linalg.norm(points[i] - at))


CASES = {
    "ldp-tgp-ucb, 2-D points": (dict(points=POINTS_2D), bump(POINTS_2D, [0.3, 0.7]), 150,
                                dict(algorithm="ldp-tgp-ucb", eps=1.0, noise_bound=0.5, horizon=150, seed=11)),
    "gp-ucb, matern, practical": (dict(points=LINE), bump(LINE, 0.62), 100,
                                  dict(algorithm="GP-UCB", eps=0.5, horizon=100, seed=3, kernel="matern",
                                       lengthscale=0.25, constants="practical")),
    "ldp-ata-gp-ucb, paper": (dict(points=LINE[:60]), bump(LINE[:60], 0.4), 120,
                              dict(algorithm="LDP-ATA-GP-UCB", eps=2.0, horizon=120, seed=5, constants="paper")),
    # (with the paper's constants MoMA's first batch holds action 0 for the whole of T = 120)
    "ldp-moma-gp-ucb": (dict(points=LINE[:50]), bump(LINE[:50], 0.3), 120,
                        dict(algorithm="ldp-moma-gp-ucb", horizon=120, seed=6, constants="practical")),
    "ucb1, arms": (dict(arms=6), lambda i: MEANS[i], 100, dict(algorithm="ucb1", horizon=100, seed=7)),
    "ldp-rse, arms (device level)": (dict(arms=6), lambda i: MEANS[i], 150,
                                     dict(algorithm="ldp-rse", horizon=150, seed=8)),
    "ldp-ucb, arms": (dict(arms=6), lambda i: MEANS[i], 100, dict(algorithm="LDP-UCB", horizon=100, seed=9)),
    "robust-ucb, arms": (dict(arms=6), lambda i: MEANS[i], 100, dict(algorithm="robust-ucb", horizon=100, seed=10)),
    "tgp-ucb, covariance, raw rewards": (dict(covariance=COVARIANCE), lambda i: math.sin(i / 3.0), 80,
                                         dict(algorithm="tgp-ucb", eps=None, horizon=80, seed=12)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_same_reports_give_the_rust_optimizers_actions(host_sim, repository, case):
    domain, f, rounds, settings = CASES[case]
    pairs = drive(host_sim, repository, domain, f, rounds, **settings)
    assert len(pairs) == rounds and all(a == b for a, b in pairs), pairs[-1]
    assert len({a for a, _ in pairs}) > 1, "the learner explores more than one action"


def test_the_comparison_sees_a_different_seed(host_sim, repository):
    """The check above can fail: the Rust learner with another seed leaves the Python one's
    actions (the seed orders the first round's ties)."""
    domain, f, rounds, settings = CASES["ldp-tgp-ucb, 2-D points"]
    pairs = drive(host_sim, repository, domain, f, rounds, rust_seed=12, **settings)
    assert pairs[-1][0] != pairs[-1][1]


def test_ask_is_idempotent_and_tell_takes_numpy_ints():
    opt = ldp_bo.Optimizer(LINE, "gp-ucb", horizon=10, seed=1)
    a = opt.ask()
    assert isinstance(a, int) and 0 <= a < 100 and opt.ask() == a
    opt.tell(np.int64(a), np.float32(0.25))
    assert opt.told == 1 and opt.pulls[a] == 1 and opt.pulls.sum() == 1
    assert opt.recommend() == a


def test_the_optimizer_describes_itself():
    opt = ldp_bo.Optimizer(POINTS_2D, "tgp-ucb", eps=0.5, bound=2.0, noise_bound=0.3, horizon=20, seed=4)
    assert opt.algorithm == "LDP-TGP-UCB" and opt.n_actions == 40
    assert opt.settings == {"eps": 0.5, "bound": 2.0, "noise_bound": 0.3, "horizon": 20, "constants": "calibrated",
                            "seed": 4}
    points = opt.points
    assert points.shape == (40, 2) and (points == POINTS_2D).all()
    points[0, 0] = 99.0
    assert opt.points[0, 0] == POINTS_2D[0, 0], "points is a copy"
    assert ldp_bo.Optimizer(arms=3).points is None
    assert {"lambda", "beta_T"} <= set(opt.constants)
    assert repr(opt) == 'Optimizer("LDP-TGP-UCB", 40 actions, eps=0.5, horizon=20, told=0)'
    assert ldp_bo.Optimizer(LINE).settings["seed"] != ldp_bo.Optimizer(LINE).settings["seed"], "seed=None draws one"
    text = pydoc.render_doc(ldp_bo.Optimizer, renderer=pydoc.plaintext)
    for words in ["never privatises", "ask()", "tell(action, report)", "recommend()", "Parameters", "noise_bound"]:
        assert words in text, words


def test_learners_are_named_in_any_case_and_the_list_is_the_rusts():
    assert ldp_bo.learners() == ["GP-UCB", "LDP-TGP-UCB", "LDP-ATA-GP-UCB", "LDP-MoMA-GP-UCB", "UCB1", "LDP-UCB",
                                 "LDP-RSE", "Robust-UCB"]
    assert "TGP-UCB" in ldp_bo.learners(private=False)
    for name in ["LDP-MoMA-GP-UCB", "ldp-moma-gp-ucb", "MOMA-GP-UCB", " moma-gp-ucb "]:
        assert ldp_bo.Optimizer(LINE, name).algorithm == "LDP-MoMA-GP-UCB"


def test_an_unknown_learner_lists_the_names():
    with pytest.raises(ldp_bo.InvalidParameter) as info:
        ldp_bo.Optimizer(LINE, "gp-ucbb")
    message = str(info.value)
    assert message.startswith("invalid setting: no learner is called 'gp-ucbb': choose one of GP-UCB, LDP-TGP-UCB")
    assert all(name in message for name in ldp_bo.learners())
    with pytest.raises(ldp_bo.InvalidParameter, match="eps=None: the learners see raw rewards"):
        ldp_bo.Optimizer(LINE, "ldp-tgp-ucb", eps=None)


def test_a_nan_report_is_refused_and_the_learner_is_unchanged():
    opt = ldp_bo.Optimizer(LINE, seed=2)
    a = opt.ask()
    for bad in [float("nan"), float("inf"), -np.inf, 10**400]:
        with pytest.raises(ldp_bo.NonFiniteValue, match="a report was NaN or infinite"):
            opt.tell(a, bad)
    for bad in ["0.5", True, None, 1j, [0.5]]:
        with pytest.raises(ldp_bo.InvalidValue, match="the report is .* not a real number.*nothing was told"):
            opt.tell(a, bad)
    assert opt.told == 0 and opt.ask() == a
    opt.tell(a, 0.5)
    assert opt.told == 1


def test_actions_outside_the_domain_or_not_asked_are_refused():
    opt = ldp_bo.Optimizer(LINE, seed=2)
    with pytest.raises(ldp_bo.NotAsked, match="before asking: call ask\\(\\) first"):
        opt.tell(0, 0.1)
    a = opt.ask()
    with pytest.raises(ldp_bo.NotAsked, match=f"told a report for action {(a + 1) % 100}, but the learner asked for action {a}"):
        opt.tell((a + 1) % 100, 0.1)
    for bad in [100, -1, 2**70]:
        with pytest.raises(ldp_bo.InvalidValue, match=f"action {bad} is not one of the domain's 100 actions \\(0 to 99\\)"):
            opt.tell(bad, 0.1)
    for bad in [True, float(a), str(a), None]:
        with pytest.raises(ldp_bo.InvalidValue, match="not an int: tell the index ask\\(\\) returned"):
            opt.tell(bad, 0.1)
    assert opt.told == 0
    assert issubclass(ldp_bo.NotAsked, ldp_bo.LdpError)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(points=np.zeros((3, 2, 2))), ldp_bo.InvalidValue, "points must be a 1-D array .* it has 3 dimensions"),
    (dict(points=[[0.0, 1.0], [2.0]]), ldp_bo.InvalidValue, "points cannot be read as an array of numbers"),
    (dict(points=[[0.0, np.nan], [1.0, 2.0]]), ldp_bo.NonFiniteValue, r"points\[0, 1\] is NaN or infinite"),
    (dict(points=["a", "b"]), ldp_bo.InvalidValue, "points must be an array of floats or ints, not of numpy dtype kind 'U'"),
    (dict(points=np.zeros((3, 0))), ldp_bo.InvalidValue, "points have no coordinates"),
    (dict(points=np.zeros(0)), ldp_bo.InvalidParameter, "the domain has no points"),
    (dict(points=np.ma.masked_array([0.0, 1.0], mask=[0, 1])), ldp_bo.InvalidValue, "masked array"),
    (dict(covariance=np.eye(3)[:2]), ldp_bo.InvalidValue, r"covariance must be square .* got 2 x 3"),
    (dict(covariance=np.eye(3).ravel()), ldp_bo.InvalidValue, "covariance must be a 2-D array"),
    (dict(covariance=[[1.0, 0.5], [0.1, 1.0]]), ldp_bo.InvalidParameter, "invalid setting: .*symmetric"),
    (dict(arms=0), ldp_bo.InvalidParameter, "arms must be an int >= 1"),
    (dict(arms=True), ldp_bo.InvalidParameter, "arms must be an int >= 1"),
    (dict(arms=100, algorithm="ldp-rse"), ldp_bo.InvalidParameter, "ldp-rse runs on at most 64 actions and the domain has 100"),
    # It read "ldp-rse runs on at most 64 actions and the domain has 1".
    (dict(arms=1, algorithm="ldp-rse"), ldp_bo.InvalidParameter, r"takes 2 to 64 actions, not 1 .*use LDP-UCB"),
    (dict(), ldp_bo.InvalidParameter, "give exactly one domain"),
    (dict(points=LINE, arms=3), ldp_bo.InvalidParameter, "give exactly one domain"),
    (dict(arms=3, kernel="se"), ldp_bo.InvalidParameter, "kernel and lengthscale make the prior over points"),
    (dict(points=LINE, kernel="rbf"), ldp_bo.InvalidParameter, "kernel 'rbf': choose se"),
    (dict(points=LINE, lengthscale=-1.0), ldp_bo.InvalidParameter, "lengthscale must be a finite number > 0"),
    (dict(points=LINE, constants="tuned"), ldp_bo.InvalidParameter, "constants 'tuned': choose calibrated"),
    (dict(points=LINE, bound=0.0), ldp_bo.InvalidParameter, "the bound B must be a positive number"),
    (dict(points=LINE, noise_bound=-1.0), ldp_bo.InvalidParameter, "the noise bound R must be zero or a positive"),
    (dict(points=LINE, eps=0.0), ldp_bo.InvalidParameter, "epsilon must be a positive finite number"),
    (dict(points=LINE, horizon=0), ldp_bo.InvalidParameter, "the horizon T must be at least 1"),
    (dict(points=LINE, seed=True), ldp_bo.InvalidParameter, "seed must be None or an int"),
    (dict(points=LINE, seed=-1), ldp_bo.InvalidParameter, "seed must be None or an int"),
])
def test_bad_settings_and_domains_are_refused(kwargs, error, message):
    with pytest.raises(error, match=message):
        ldp_bo.Optimizer(**kwargs)


def test_a_device_level_truncates_the_release():
    """LDP-RSE's level reaches the device: a value beyond the level is released as 0 plus noise
    of scale 2 * level / eps (without the level: the value plus noise of scale 2 (B + R) / eps)."""
    dev = ldp_bo.Reporter.for_reports(4000, 1.0, bound=1.0, noise_bound=1.0, seed=3)
    truncated = np.array([dev.report(0.5, 1.0, level=0.01) for _ in range(2000)])
    clamped = np.array([dev.report(0.5, 1.0) for _ in range(2000)])
    assert abs(truncated.mean()) < 0.005 and np.abs(truncated).max() < 1.0
    assert abs(clamped.mean() - 0.5) < 0.5 and np.abs(clamped).max() > 5.0
    for bad in [0.0, -1.0, float("nan"), float("inf")]:
        with pytest.raises(ldp_bo.InvalidParameter, match="invalid setting: a truncation level is (zero or negative|NaN or infinite)"):
            dev.report(0.5, 1.0, level=bad)
    assert dev.budget_spent == 4000.0, "a refused level spends nothing"
