"""ldp_bo.Reporter: a simulated device that spends its budget report by report and refuses,
with the CLI's messages, what it cannot pay."""

import copy
import math
import os
import pickle

import numpy as np
import pytest

import ldp_bo


def test_reports_spend_the_budget_until_it_is_exhausted():
    dev = ldp_bo.Reporter(3.0, 1.0, 1.0)
    assert (dev.eps_total, dev.budget_remaining, dev.budget_spent) == (3.0, 3.0, 0.0)
    for left in (2.0, 1.0, 0.0):
        y = dev.report(0.4, 1.0)
        assert math.isfinite(y)
        assert dev.budget_remaining == left
    with pytest.raises(ldp_bo.BudgetExhausted) as info:
        dev.report(0.4, 1.0)
    assert isinstance(info.value, ldp_bo.LdpError)
    assert str(info.value) == (
        "the device refused: privacy budget exhausted: 1 requested, 0 left; nothing was released; "
        "this device will not report again (what is left is below its smallest report, "
        "eps = 0.0029296875)"
    )
    assert (dev.budget_remaining, dev.budget_spent) == (0.0, 3.0)


def test_a_refused_report_spends_nothing():
    dev = ldp_bo.Reporter(2.5, 1.0, 1.0)
    dev.report(0.0, 1.0)
    dev.report(0.0, 1.0)
    with pytest.raises(ldp_bo.BudgetExhausted, match="1 requested, 0.5 left") as info:
        dev.report(0.0, 1.0)
    # Review: the message said "this device will not report again" while 0.5 still pays.
    assert str(info.value).endswith("a smaller report can still be paid (eps in units of 1e-9, rounded up, within the 0.5 left)")
    assert dev.budget_remaining == 0.5
    dev.report(0.0, 0.5)  # what is left still pays a smaller report
    assert dev.budget_remaining == 0.0


def test_epsilon_outside_the_devices_range_is_refused_and_spends_nothing():
    dev = ldp_bo.Reporter(10.0, 1.0, 1.0, eps_limit=1.0)
    assert (dev.eps_limit, dev.eps_floor) == (1.0, 1.0 / 1024)
    with pytest.raises(ldp_bo.EpsilonOutOfRange, match="weaker than this device's per-report limit 1"):
        dev.report(0.0, 2.0)
    with pytest.raises(ldp_bo.EpsilonOutOfRange, match="stronger than this device's per-report floor"):
        dev.report(0.0, 1e-4)
    assert dev.budget_remaining == 10.0


@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), float("inf")])
def test_a_bad_epsilon_in_a_report_is_refused(eps):
    dev = ldp_bo.Reporter(1.0, 1.0, 1.0)
    with pytest.raises(ldp_bo.InvalidParameter, match="^invalid setting: epsilon"):
        dev.report(0.0, eps)
    assert dev.budget_remaining == 1.0


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_non_finite_value_is_refused_and_spends_nothing(value):
    dev = ldp_bo.Reporter(1.0, 1.0, 1.0)
    with pytest.raises(ldp_bo.NonFiniteValue):
        dev.report(value, 1.0)
    assert dev.budget_remaining == 1.0


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((0.0, 1.0, 1.0), {}, "epsilon is zero or negative"),
        ((1.0, -1.0, 1.0), {}, "a bound is negative"),
        ((1.0, 0.0, 0.0), {}, "the clamping range is zero"),
        ((1.0, 1.0, 1.0), {"eps_limit": 2.0}, "the per-report epsilon limit exceeds the total budget"),
        ((1.0, 1.0, 1.0), {"eps_limit": float("nan")}, "epsilon is NaN or infinite"),
    ],
)
def test_bad_settings_are_refused(args, kwargs, message):
    with pytest.raises(ldp_bo.InvalidParameter, match="^invalid setting: " + message):
        ldp_bo.Reporter(*args, **kwargs)


def test_a_seeded_reporter_is_the_device_privatise_uses():
    """One code path: a seeded Reporter reporting value by value releases what privatise
    releases for the whole array with that seed (and so shares its noise: tests only)."""
    values = np.linspace(-3.0, 3.0, 64)
    with pytest.warns(ldp_bo.SeededNoiseWarning):
        dev = ldp_bo.Reporter(64.0, 1.0, 0.5, seed=11, eps_limit=1.0)
        whole = ldp_bo.privatise(values, 1.0, 1.0, 0.5, seed=11)
    assert np.array_equal([dev.report(y, 1.0) for y in values], whole)
    assert "seeded" in repr(dev)


def test_same_seed_same_reports():
    with pytest.warns(ldp_bo.SeededNoiseWarning):
        a, b = ldp_bo.Reporter(5.0, 1.0, 1.0, seed=3), ldp_bo.Reporter(5.0, 1.0, 1.0, seed=3)
    assert [a.report(0.1, 1.0) for _ in range(5)] == [b.report(0.1, 1.0) for _ in range(5)]


@pytest.mark.parametrize("clone", [copy.copy, copy.deepcopy, pickle.dumps])
def test_a_device_cannot_be_cloned(clone):
    """A copy would hold the same noise key and the same budget: its reports would replay the
    original's noise (which then cancels) and spend the budget twice."""
    dev = ldp_bo.Reporter(2.0, 1.0, 1.0)
    with pytest.raises(TypeError):
        clone(dev)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_reporter_copied_by_fork_refuses_to_report_in_the_child():
    """os.fork copies the device (its noise key, sampler state and budget): the child's report
    is refused with ForkedReporter, saying where to make the Reporter; the parent reports."""
    dev = ldp_bo.Reporter(1.0, 1.0, 1.0)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report the outcome over the pipe, never run the rest of pytest
        try:
            dev.report(0.0, 1.0)
            out = "released"
        except ldp_bo.ForkedReporter as e:
            out = "ForkedReporter: " + str(e)
        except BaseException as e:  # noqa: BLE001
            out = type(e).__name__
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    with os.fdopen(r, "rb") as pipe:
        child = pipe.read().decode()
    assert child.startswith("ForkedReporter: "), child
    assert "create the Reporter in the process that uses it" in child
    assert isinstance(ldp_bo.ForkedReporter("x"), ldp_bo.LdpError)
    assert math.isfinite(dev.report(0.0, 1.0))  # the parent's device is untouched
    assert dev.budget_remaining == 0.0


def test_the_docs_say_a_reports_time_depends_on_the_noise():
    """No fixed reply slot in Python (the device has one): the docstring, the stubs and the
    README say that timing a reply tells about |noise|."""
    import pathlib

    assert "depends on the noise drawn" in ldp_bo.Reporter.report.__doc__
    assert "fixed reply slot" in ldp_bo.Reporter.report.__doc__
    stubs = (pathlib.Path(ldp_bo.__file__).parent / "__init__.pyi").read_text(encoding="utf-8")
    assert "depends on the noise drawn" in stubs
    readme = pathlib.Path(__file__).resolve().parents[1] / "README.md"
    if readme.is_file():
        assert "`report`'s time depends on the noise drawn" in readme.read_text(encoding="utf-8")


@pytest.mark.parametrize("reports, eps", [(3, 0.3), (3, 1 / 3), (10, 0.1), (7, 10.3), (1, 2.5), (50, 0.07)])
def test_for_reports_pays_exactly_n_reports(reports, eps):
    dev = ldp_bo.Reporter.for_reports(reports, eps, 1.0, 1.0)
    assert dev.eps_limit == eps
    for _ in range(reports):
        assert math.isfinite(dev.report(0.0, eps))
    with pytest.raises(ldp_bo.BudgetExhausted):
        dev.report(0.0, eps)
    assert dev.budget_remaining < dev.eps_floor  # nothing worth a report is left over


@pytest.mark.parametrize("reports", [0, -1, True, 2.0, "3", 2**64])
def test_for_reports_refuses_a_count_that_is_not_an_int_of_at_least_one(reports):
    with pytest.raises(ldp_bo.InvalidParameter, match="reports must be an int >= 1"):
        ldp_bo.Reporter.for_reports(reports, 1.0, 1.0, 1.0)


@pytest.mark.parametrize("seed", [True, False, -1, 2**64, 1.0, "1", np.bool_(True)])
def test_a_seed_that_is_not_an_int_in_range_is_refused(seed):
    """seed=True was read as seed 1 (bool is an int in Python): refused, as are negative, too
    large and non-int seeds, with an LdpError (was TypeError/OverflowError or silently 1)."""
    for make in (
        lambda: ldp_bo.Reporter(1.0, 1.0, 1.0, seed=seed),
        lambda: ldp_bo.Reporter.for_reports(2, 1.0, 1.0, 1.0, seed=seed),
        lambda: ldp_bo.privatise([0.0], 1.0, 1.0, 1.0, seed=seed),
    ):
        with pytest.raises(ldp_bo.InvalidParameter, match="seed must be None or an int in"):
            make()


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: ldp_bo.Reporter(2e10, 1.0, 1.0), "eps_total = 20000000000"),
        (lambda: ldp_bo.Reporter(4e10, 1.0, 1.0, eps_limit=2e10), "eps_total = 40000000000"),
        (lambda: ldp_bo.Reporter.for_reports(1, 2e10, 1.0, 1.0), "eps = 20000000000"),
        (lambda: ldp_bo.privatise([0.0], 2e10, 1.0, 1.0), "eps = 20000000000"),
        (lambda: ldp_bo.privatise(np.zeros(18_447), 1e6, 1.0, 1.0), "eps \\* 18447 reports"),
        (lambda: ldp_bo.Reporter.for_reports(20_000, 1e6, 1.0, 1.0), "eps \\* 20000 reports"),
    ],
)
def test_an_eps_beyond_the_budget_counters_range_is_refused_naming_it(make, name):
    """The device counts eps in 2^64 units of 1e-9 (about 1.8e10): a larger total or report
    saturated the counter (a report at 2e10 spent a budget of 4e10, and the refusal that followed
    said '0 left'); privatise with eps * n beyond it drew releases, then raised BudgetExhausted."""
    with pytest.raises(ldp_bo.InvalidParameter, match=name + ".* beyond the budget counter's range") as info:
        make()
    assert "2^64 units of 1e-9" in str(info.value) and "1.8447e10" in str(info.value)


def test_an_eps_within_the_budget_counters_range_is_accepted():
    dev = ldp_bo.Reporter(1.8e10, 1.0, 1.0)
    assert math.isfinite(dev.report(0.0, 1.8e10))
    assert ldp_bo.privatise(np.zeros(18_446), 1e6, 1.0, 1.0).shape == (18_446,)
