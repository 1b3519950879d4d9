"""ldp_bo.privatise: its releases follow the mechanism's exact law; bad input is refused;
seeds reproduce (and, as documented, share their noise)."""

import math
import warnings

import numpy as np
import pytest

import ldp_bo

# The false-alarm rate of every distribution test: a correct mechanism fails one in a million runs.
ALPHA = 1e-6


def mechanism_law(value, eps, bound, noise_bound):
    """The exact law of one CTL(eps) release of `value`, from the construction documented in
    core/src/mechanism.rs (not from the code under test): the grid 2^k, k = floor(log2 C) - 12
    with C = B + R; the clamped value's nearest index i; discrete Laplace noise
    P(Z = z) ∝ q^|z|, q = exp(-den/num), den = 1024, num = floor(2M·den/eps) + 1, M = ceil(C/2^k).
    Returns (grid, i, q): a release is (i + Z)·grid."""
    c = bound + noise_bound
    k = math.floor(math.log2(c)) - 12
    grid = 2.0**k
    m = math.ceil(c / grid)
    y = min(max(value, -c), c)
    i = max(-m, min(m, round(y / grid)))
    den = 1024
    num = math.floor(2 * m * den / eps) + 1
    return grid, i, math.exp(-den / num)


def discrete_laplace_cdf(z, q):
    """P(Z <= z) for integer arrays z."""
    z = np.asarray(z, dtype=np.float64)
    return np.where(z >= 0, 1.0 - q ** (z + 1) / (1.0 + q), q ** (-z) / (1.0 + q))


def ks_distance(indices, cdf):
    """sup |F_n - F| of an integer sample against the integer CDF `cdf`, taken on both sides of
    every jump (the exact supremum for a discrete law)."""
    support, counts = np.unique(indices, return_counts=True)
    n = len(indices)
    below = np.concatenate(([0], np.cumsum(counts)[:-1])) / n  # F_n just below each support point
    at = np.cumsum(counts) / n  # F_n at it
    return max(np.max(np.abs(at - cdf(support))), np.max(np.abs(below - cdf(support - 1))))


def dkw_threshold(n, alpha=ALPHA):
    """Dvoretzky–Kiefer–Wolfowitz with Massart's constant: P(sup |F_n - F| > t) <= 2 exp(-2nt²)
    for every law, discrete ones included."""
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * n))


@pytest.mark.parametrize(
    "value, eps, bound, noise_bound",
    [
        (0.25, 1.0, 1.0, 1.0),  # inside the range, on the grid
        (-0.3, 0.5, 1.0, 1.0),  # between two grid points: rounded
        (5.0, 2.0, 1.0, 1.0),  # above B + R: clamped to 2
        (-7.0, 1.0, 0.75, 0.5),  # below -(B + R), C = 1.25 (a grid 2^-12)
    ],
)
def test_releases_follow_the_mechanism_law(value, eps, bound, noise_bound):
    n = 40_000
    with pytest.warns(ldp_bo.SeededNoiseWarning):
        released = ldp_bo.privatise(np.full(n, value), eps, bound, noise_bound, seed=2028)
    grid, i, q = mechanism_law(value, eps, bound, noise_bound)
    steps = released / grid
    assert np.array_equal(steps, np.round(steps)), "every release is a multiple of the grid"
    noise = steps.astype(np.int64) - i
    d = ks_distance(noise, lambda z: discrete_laplace_cdf(z, q))
    assert d <= dkw_threshold(n), f"KS distance {d:.4f} above {dkw_threshold(n):.4f}"


def test_the_distribution_test_rejects_a_wrong_law():
    """The test above has power: the same sample fails against laws a buggy mechanism could have
    (no clamping, the noise scale 15 % off, the value shifted by a tenth of the noise's scale)."""
    n = 40_000
    value, eps, bound, noise_bound = 5.0, 2.0, 1.0, 1.0
    with pytest.warns(ldp_bo.SeededNoiseWarning):
        released = ldp_bo.privatise(np.full(n, value), eps, bound, noise_bound, seed=2028)
    grid, i, q = mechanism_law(value, eps, bound, noise_bound)
    steps = (released / grid).astype(np.int64)
    scale = -1.0 / math.log(q)
    unclamped = round(value / grid)
    for centre, wrong_q in [
        (unclamped, q),
        (i, math.exp(-1.0 / (1.15 * scale))),
        (i + round(0.1 * scale), q),
    ]:
        d = ks_distance(steps - centre, lambda z, wq=wrong_q: discrete_laplace_cdf(z, wq))
        assert d > dkw_threshold(n)


def test_shape_and_dtype_are_kept():
    with pytest.warns(ldp_bo.SeededNoiseWarning):
        out = ldp_bo.privatise(np.arange(6).reshape(2, 3), 1.0, 1.0, 1.0, seed=1)
    assert out.shape == (2, 3) and out.dtype == np.float64
    empty = ldp_bo.privatise([], 1.0, 1.0, 1.0)
    assert empty.shape == (0,)
    # A list of ints is converted; a Fortran-ordered array is read in logical order.
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    with pytest.warns(ldp_bo.SeededNoiseWarning):
        from_f = ldp_bo.privatise(a, 1.0, 1.0, 1.0, seed=9)
    with pytest.warns(ldp_bo.SeededNoiseWarning):
        from_list = ldp_bo.privatise([[0, 1, 2], [3, 4, 5]], 1.0, 1.0, 1.0, seed=9)
    assert np.array_equal(from_f, from_list)


def test_same_seed_same_array_other_seed_other_array():
    values = np.linspace(-1.0, 1.0, 500)
    with pytest.warns(ldp_bo.SeededNoiseWarning):
        a = ldp_bo.privatise(values, 1.0, 1.0, 1.0, seed=77)
        b = ldp_bo.privatise(values, 1.0, 1.0, 1.0, seed=77)
        c = ldp_bo.privatise(values, 1.0, 1.0, 1.0, seed=78)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_privatise_is_host_sims_privatise_table():
    """The same releases as `host-sim privatise --input` on the same cells (row by row), eps, B,
    R and seed: host-sim/src/privatise.rs `seeded_table_releases_are_the_python_packages` expects
    these values from `privatise_table` (the CLI refuses a seed; its library function takes one)."""
    cells = [[0.3, -0.7], [1.25, 2.5], [-3.5, 0.0625], [0.1, -0.2]]
    expected = [
        [1.094970703125, -5.22314453125],
        [-9.868408203125, 1.78955078125],
        [-6.274658203125, -1.424560546875],
        [-6.921630859375, 5.365966796875],
    ]
    with pytest.warns(ldp_bo.SeededNoiseWarning):
        assert ldp_bo.privatise(cells, 0.7, 1.0, 0.5, seed=4242).tolist() == expected


def test_without_a_seed_the_noise_is_fresh_and_nothing_warns():
    values = np.zeros(200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = ldp_bo.privatise(values, 1.0, 1.0, 1.0)
        b = ldp_bo.privatise(values, 1.0, 1.0, 1.0)
    assert not np.array_equal(a, b)


def test_one_seed_for_two_arrays_cancels_the_noise():
    """Why a seed is for tests only: two arrays released with one seed share their noise, so
    the difference of the releases is the raw difference, exactly (on the grid)."""
    x = np.linspace(-0.5, 0.5, 101)
    with pytest.warns(ldp_bo.SeededNoiseWarning):
        a = ldp_bo.privatise(x, 1.0, 1.0, 1.0, seed=5)
        b = ldp_bo.privatise(x + 0.25, 1.0, 1.0, 1.0, seed=5)
    assert np.array_equal(b - a, np.full_like(x, 0.25))


def test_seeded_noise_can_be_refused_by_the_warnings_filter():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ldp_bo.SeededNoiseWarning)
        with pytest.raises(ldp_bo.SeededNoiseWarning):
            ldp_bo.privatise([0.1], 1.0, 1.0, 1.0, seed=1)
        with pytest.raises(ldp_bo.SeededNoiseWarning):
            ldp_bo.Reporter(1.0, 1.0, 1.0, seed=1)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_non_finite_value_is_refused(bad):
    with pytest.raises(ldp_bo.NonFiniteValue, match="value 2 .* is NaN or infinite"):
        ldp_bo.privatise([0.0, 1.0, bad, 0.5], 1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    "eps, bound, noise_bound, message",
    [
        (0.0, 1.0, 1.0, "epsilon is zero or negative"),
        (-1.0, 1.0, 1.0, "epsilon is zero or negative"),
        (float("nan"), 1.0, 1.0, "epsilon is NaN or infinite"),
        (float("inf"), 1.0, 1.0, "epsilon is NaN or infinite"),
        (1.0, -1.0, 1.0, "a bound is negative"),
        (1.0, 1.0, -0.5, "a bound is negative"),
        (1.0, float("nan"), 1.0, "a bound is NaN or infinite"),
        (1.0, 0.0, 0.0, "the clamping range is zero"),
        (1.0, 2.0**41, 0.0, "the clamping range is outside \\[2\\^-40, 2\\^40\\]"),
    ],
)
def test_bad_settings_are_refused_with_the_cli_message(eps, bound, noise_bound, message):
    with pytest.raises(ldp_bo.InvalidParameter, match="^invalid setting: " + message) as info:
        ldp_bo.privatise([0.1, 0.2], eps, bound, noise_bound)
    assert isinstance(info.value, ldp_bo.LdpError)


def test_bound_zero_is_the_devices_rule():
    """B = 0 is a valid device (all of the range is noise, R); only B + R = 0 is refused."""
    out = ldp_bo.privatise([0.1], 1.0, 0.0, 1.0)
    assert out.shape == (1,)


@pytest.mark.parametrize("eps, n", [(1.0 / 3.0, 3000), (10.3, 814_429)])
def test_the_budget_pays_for_every_value(eps, n):
    """One report per value, each charged rounded up to 1e-9, the total rounded down: the
    device must still pay for the last value. (10.3 × 814 429 values: the first count at which
    `(units·n + 0.5)/1e9`, host-sim privatise_table's total, comes one unit short.)"""
    out = ldp_bo.privatise(np.zeros(n), eps, 1.0, 1.0)
    assert out.shape == (n,)


SECRET = "patient-42-positive"


@pytest.mark.parametrize(
    "values, position",
    [
        (["0.3", SECRET], "value 0"),
        ([0.3, SECRET], "value 1"),
        ([[0.3, 0.1], [0.2, SECRET]], "value 3"),
        ([0.3, True], "value 1"),
        ([0.3, 1 + 2j], "value 1"),
        ([0.3, np.datetime64("2020-01-01")], "value 1"),
        ([0.3, None], "value 1"),
        (np.array([0.3, SECRET]), "dtype kind 'U'"),
        (np.array([True, False]), "dtype kind 'b'"),
        (np.array([1 + 2j]), "dtype kind 'c'"),
        (np.array(["2020-01-01"], dtype="datetime64[D]"), "dtype kind 'M'"),
        (np.array([0.3, SECRET], dtype=object), "dtype kind 'O'"),
    ],
)
def test_a_value_that_is_not_a_real_number_is_refused_without_quoting_it(values, position):
    """Strings, bools, complex numbers, dates and objects are refused with InvalidValue naming the
    position or dtype, never the value (numpy's own errors quote it), and with no chained error
    that would carry it into a traceback."""
    with pytest.raises(ldp_bo.InvalidValue) as info:
        ldp_bo.privatise(values, 1.0, 1.0, 1.0)
    message = str(info.value)
    assert position in message and "nothing was released" in message
    assert SECRET not in message and "0.3" not in message
    assert info.value.__cause__ is None and info.value.__context__ is None
    with pytest.raises(ldp_bo.InvalidValue):
        ldp_bo.privatise([values] if isinstance(values, list) else values, 1.0, 1.0, 1.0)


def test_a_ragged_list_is_refused_as_an_ldp_error_without_quoting_values():
    with pytest.raises(ldp_bo.InvalidValue) as info:
        ldp_bo.privatise([[0.25, 0.5], [0.75]], 1.0, 1.0, 1.0)
    assert "0.25" not in str(info.value) and info.value.__context__ is None


@pytest.mark.parametrize("huge", [10**400, -(10**400)], ids=["+10**400", "-10**400"])
def test_an_int_beyond_the_float_range_is_refused_as_infinite(huge):
    """10**400 has no float: it counts as ±infinity and is refused like one (not a bare
    OverflowError, whose type alone told |x| >= 2^1024 from every other value)."""
    with pytest.raises(ldp_bo.NonFiniteValue, match="value 1 .*beyond the float range"):
        ldp_bo.privatise([0.5, huge], 1.0, 1.0, 1.0)
    with pytest.raises(ldp_bo.NonFiniteValue):
        ldp_bo.Reporter(1.0, 1.0, 1.0).report(huge, 1.0)


@pytest.mark.parametrize("value", ["0.3", True, np.bool_(True), 1j, None, np.array(0.3)])
def test_report_refuses_what_is_not_a_float_or_int(value):
    dev = ldp_bo.Reporter(1.0, 1.0, 1.0)
    with pytest.raises(ldp_bo.InvalidValue, match="the value is of type"):
        dev.report(value, 1.0)
    assert dev.budget_spent == 0.0


def test_floats_and_ints_of_every_kind_are_accepted():
    """Python floats and ints, numpy scalars and int, uint and float arrays of any width."""
    mixed = [0.5, 1, np.float32(0.25), np.int8(-1), np.uint64(2), np.float64(-0.5)]
    assert ldp_bo.privatise(mixed, 1.0, 1.0, 1.0).shape == (6,)
    for dtype in (np.float16, np.float32, np.float64, np.longdouble, np.int8, np.int64, np.uint32):
        out = ldp_bo.privatise(np.arange(4).astype(dtype).reshape(2, 2), 1.0, 1.0, 1.0)
        assert out.shape == (2, 2) and out.dtype == np.float64
    dev = ldp_bo.Reporter(6.0, 1.0, 1.0, eps_limit=1.0)
    for value in mixed:
        assert math.isfinite(dev.report(value, 1.0))


@pytest.mark.parametrize(
    "values",
    [
        np.ma.masked_array([0.3, 99.0], mask=[False, True]),
        np.ma.masked_array([0.3, 99.0], mask=[False, False]),
        [np.ma.masked_array([0.3, 99.0], mask=[False, True])],
        [0.3, np.ma.masked],
    ],
)
def test_a_masked_array_is_refused(values):
    """numpy reads the data under a mask as values: privatise released the masked 99.0 as if it
    had been observed. A masked array, or a list holding one, is refused."""
    with pytest.raises(ldp_bo.InvalidValue, match="masked array") as info:
        ldp_bo.privatise(values, 1.0, 1.0, 1.0)
    assert "99" not in str(info.value)
    assert ldp_bo.privatise(np.ma.masked_array([0.3, 99.0], mask=[False, True]).compressed(), 1.0, 1.0, 1.0).shape == (1,)
