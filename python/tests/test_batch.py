"""Batches and asynchronous reports (issue #37): opt.ask(q) gives q actions at once, their
reports are told in any order (tell(actions, reports) takes arrays), forget() abandons one, and
q=1 is ask()'s action."""

import numpy as np
import pytest

import ldp_bo

pytestmark = pytest.mark.filterwarnings("ignore::ldp_bo.SeededNoiseWarning")

POINTS = np.linspace(0.0, 1.0, 40)


def f(x):
    return 0.9 - 1.5 * abs(x - 0.65)


def make(seed=3, **kw):
    return ldp_bo.Optimizer(POINTS, "ldp-tgp-ucb", eps=1.0, bound=1.0, noise_bound=1.0, horizon=500, seed=seed, **kw)


def test_a_batch_of_one_is_ask():
    one, batch = make(), make()
    dev = ldp_bo.Reporter.for_reports(100, 1.0, bound=1.0, noise_bound=1.0, seed=4)
    for _ in range(50):
        a = one.ask()
        (b,) = batch.ask(1)
        assert a == b
        r = dev.report(f(POINTS[a]), eps=1.0)
        one.tell(a, r)
        batch.tell(int(b), r)
    assert (one.pulls == batch.pulls).all()


def test_reports_told_in_any_order_and_as_arrays():
    opt = make()
    dev = ldp_bo.Reporter.for_reports(400, 1.0, bound=1.0, noise_bound=1.0, seed=5)
    rng = np.random.default_rng(0)
    for _ in range(20):
        actions = opt.ask(10)
        assert actions.dtype == np.int64 and actions.shape == (10,)
        assert (opt.pending == actions).all()
        reports = np.array([dev.report(f(POINTS[a]), eps=1.0) for a in actions])
        # actions asked twice take their reports in ask order: shuffle distinct ones only
        order = rng.permutation(10) if len(set(actions.tolist())) == 10 else np.arange(10)
        opt.tell(actions[order], reports[order])
        assert opt.pending.size == 0
    assert opt.pulls.sum() == 200


def test_forget_and_bad_batches_change_nothing():
    opt = make()
    actions = opt.ask(4)
    for q in (0, -1, True, 1.5, "2"):
        with pytest.raises(ldp_bo.InvalidParameter, match="q must be an int >= 1"):
            opt.ask(q)
    with pytest.raises(ldp_bo.InvalidValue, match="4 actions and 3 reports"):
        opt.tell(actions, [0.1, 0.2, 0.3])
    with pytest.raises(ldp_bo.NonFiniteValue, match="report 1 is NaN"):
        opt.tell(actions, [0.1, float("nan"), 0.3, 0.4])
    assert (opt.pending == actions).all(), "nothing was told"
    opt.forget(int(actions[0]))
    assert (opt.pending == actions[1:]).all()
    stray = next(a for a in range(40) if a not in actions.tolist())
    with pytest.raises(ldp_bo.NotAsked):
        opt.forget(stray)
    opt.tell(actions[1:], [0.1, 0.2, 0.3])
    assert opt.pending.size == 0 and opt.pulls.sum() == 3


def test_a_box_batch_is_an_array_of_points():
    box = [(0.0, 1.0), (-2.0, 2.0)]
    opt = ldp_bo.Optimizer(bounds=box, algorithm="gp-ucb", eps=None, bound=1.0, noise_bound=0.1, horizon=100, seed=1)
    points = opt.ask(5)
    assert points.shape == (5, 2) and points.dtype == np.float64
    assert (points[:, 0] >= 0).all() and (points[:, 1] <= 2).all()
    assert opt.pending.shape == (5, 2)
    opt.forget(points[4])
    opt.tell(points[:4][::-1], np.zeros(4))
    assert opt.pending.shape == (0, 2) and opt.told == 4


def test_the_fleet_example_runs():
    import runpy
    import pathlib

    example = pathlib.Path(__file__).parent.parent / "examples" / "fleet_in_flight.py"
    result = runpy.run_path(str(example), run_name="test")["main"](users=600, in_flight=20)
    assert result["told"] + result["forgotten"] == 600 and result["pending"] == 0, result
