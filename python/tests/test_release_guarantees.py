"""What a caller of ldp_bo's public API cannot make it release: no noise replayed or budget spent
twice across a fork, no raw value in an error, no masked entry, no more than n·ε for n reports,
and no counter saturated into a free release. Each test is an attack a caller can mount; the
history (the Python package's review, #28) is in docs/security-reviews.md."""

import math
import os

import numpy as np
import pytest

import ldp_bo


def _in_forked_child(fn):
    """Run `fn()` in a forked child; return what it returned (repr/eval over a pipe), or the
    name of the exception type it raised."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        try:
            out = repr(("ok", fn()))
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            out = repr(("raised", type(e).__name__))
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    data = b""
    while chunk := os.read(r, 4096):
        data += chunk
    os.close(r)
    return eval(data.decode())  # noqa: S307 - our own child's repr of floats and strings


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_reporter_does_not_replay_its_noise():
    """An unseeded Reporter copied by fork (multiprocessing's default start method on Linux
    before 3.14, Gunicorn/Celery prefork workers, ...) holds the same ChaCha20 state: parent and
    child add the same noise, so the difference of their releases is the raw difference.
    With fresh noise the chance of an exact 0.25 difference is about 1/(2·scale) ≈ 6e-7
    (scale ≈ 819 200 grid steps at eps = 0.01)."""
    dev = ldp_bo.Reporter(1.0, 1.0, 1.0)  # seed=None: OS entropy
    x = 0.5
    child = _in_forked_child(lambda: dev.report(x + 0.25, 0.01))
    parent = dev.report(x, 0.01)
    if child[0] == "ok":
        assert child[1] - parent != 0.25, "the child's noise is the parent's: the raw difference leaks"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_reporter_does_not_spend_its_budget_twice():
    """eps_total = 1 pays for one report at eps = 1; parent and forked child together release two."""
    dev = ldp_bo.Reporter(1.0, 1.0, 1.0)
    child = _in_forked_child(lambda: dev.report(0.0, 1.0))
    try:
        dev.report(0.0, 1.0)
        parent_released = True
    except ldp_bo.LdpError:
        parent_released = False
    assert (child[0] == "ok") + parent_released <= 1, "two releases at eps = 1 from a budget of 1"


def test_a_conversion_error_carries_no_raw_value():
    """A value numpy cannot convert ends up verbatim in a ValueError (not an LdpError, against the
    module's 'every refusal raises a subclass of LdpError'): logs and error reports get the raw
    datum."""
    secret = "patient-42-positive"
    with pytest.raises(Exception) as info:
        ldp_bo.privatise(["0.3", secret], 1.0, 1.0, 1.0)
    assert isinstance(info.value, ldp_bo.LdpError), f"{type(info.value).__name__}: {info.value}"
    assert secret not in str(info.value)


@pytest.mark.parametrize("call", ["privatise", "report"])
def test_a_huge_value_is_clamped_or_refused_as_ldp_error(call):
    """10**400 is a finite raw value far above B + R: the mechanism clamps it (the core releases
    even +inf, clamped). The binding raises a bare OverflowError instead, so the exception type
    tells |value| >= 1.8e308 from every other value."""
    try:
        if call == "privatise":
            out = ldp_bo.privatise([10**400], 1.0, 1.0, 1.0)[0]
        else:
            out = ldp_bo.Reporter(1.0, 1.0, 1.0).report(10**400, 1.0)
    except ldp_bo.LdpError:
        return
    assert math.isfinite(out)


def test_masked_entries_are_not_released():
    """A numpy masked array marks missing values; privatise silently releases the data under the
    mask (here 99.0, clamped to B + R) as if it were observed."""
    values = np.ma.masked_array([0.3, 99.0], mask=[False, True])
    try:
        out = ldp_bo.privatise(values, 1.0, 1.0, 1.0)
    except ldp_bo.LdpError:
        return
    assert np.ma.is_masked(out) and np.ma.getmaskarray(out).tolist() == [False, True]


def test_n_reports_fit_a_budget_of_n_times_eps():
    """Reporter(eps_total=3 * 0.3, eps_limit=0.3) refuses the third report at 0.3: 0.3 * 3 is
    0.8999999999999999, which the accountant floors to 899 999 999 units, while each report is
    charged 300 000 000. Fail-closed, but the docs promise each report 'spends eps from the
    budget' and say nothing of the 1e-9 rounding.

    (Adjusted by the fix: the plain constructor keeps refusing — 0.8999999999999999 is less than
    three reports at 0.3, and the accountant is exact — now documented, and
    Reporter.for_reports(3, 0.3, ...) is the budget that pays exactly three.)"""
    eps = 0.3
    dev = ldp_bo.Reporter(3 * eps, 1.0, 1.0, eps_limit=eps)
    dev.report(0.0, eps)
    dev.report(0.0, eps)
    with pytest.raises(ldp_bo.BudgetExhausted, match="for_reports"):
        dev.report(0.0, eps)
    assert "for_reports" in ldp_bo.Reporter.__doc__
    dev = ldp_bo.Reporter.for_reports(3, eps, 1.0, 1.0)
    for _ in range(3):
        dev.report(0.0, eps)


@pytest.mark.parametrize("eps, n", [(1e6, 18_447), (2000.0, 10_000_000)])
def test_privatise_does_not_run_out_of_budget_for_large_eps_times_n(eps, n):
    """eps·n above 2^64 units (≈ 1.8e10) saturates total_for: privatise draws 18 446 e9 units' worth
    of releases and then raises BudgetExhausted, which its docs do not list (nothing is returned,
    so no leak)."""
    try:
        out = ldp_bo.privatise(np.zeros(n), eps, 1.0, 1.0)
    except ldp_bo.InvalidParameter:
        return
    assert out.shape == (n,)
