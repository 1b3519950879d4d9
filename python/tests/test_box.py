"""ldp_bo.Optimizer(bounds=...): GP-UCB, LDP-TGP-UCB and LDP-MoMA-GP-UCB on a box of continuous knobs
(ldp_learn::domain::BoxOptimizer) from Python, issue #36. Asks are points of the box, bad input
is refused with ldp-learn's message and changes nothing, and the learner finds an optimum."""

import pydoc

import numpy as np
import pytest

import ldp_bo

pytestmark = pytest.mark.filterwarnings("ignore::ldp_bo.SeededNoiseWarning")

BOX = [(0.0, 1.0), (-5.0, 5.0), (10.0, 20.0)]
LOWER, UPPER = np.array(BOX).T


def f(x):
    """A smooth reward in [-1, 1] over BOX."""
    u = (np.asarray(x) - LOWER) / (UPPER - LOWER)
    return 2.0 * np.exp(-2.0 * np.sum((u - 0.3) ** 2)) - 1.0


def test_ask_returns_float64_points_of_the_box_of_length_d():
    opt = ldp_bo.Optimizer(bounds=BOX, eps=1.0, bound=1.0, noise_bound=0.5, horizon=30, seed=1)
    dev = ldp_bo.Reporter.for_reports(30, 1.0, bound=1.0, noise_bound=0.5, seed=2)
    told = []
    for t in range(30):
        x = opt.ask()
        assert isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == (3,)
        assert (LOWER <= x).all() and (x <= UPPER).all(), x
        assert (opt.ask() == x).all(), "asked again before tell: the same point"
        # a list is told as well as the array ask() returned
        opt.tell(x if t % 2 else list(x), dev.report(f(x), eps=1.0))
        told.append(x)
    assert opt.told == 30
    best = opt.recommend()
    assert isinstance(best, np.ndarray) and best.shape == (3,)
    assert any((best == x).all() for x in told), "recommend() is a told point"


def test_moma_plays_each_point_of_the_box_k_times():
    opt = ldp_bo.Optimizer(bounds=BOX, algorithm="ldp-moma-gp-ucb", eps=1.0, bound=1.0, noise_bound=0.5,
                           horizon=200, seed=2)
    dev = ldp_bo.Reporter.for_reports(200, 1.0, bound=1.0, noise_bound=0.5, seed=3)
    k = int(opt.constants["k"])
    asks = []
    for _ in range(200):
        x = opt.ask()
        assert (LOWER <= x).all() and (x <= UPPER).all(), x
        asks.append(x)
        opt.tell(x, dev.report(f(x), eps=1.0))
    assert opt.algorithm == "LDP-MoMA-GP-UCB" and opt.told == 200 and k > 1
    epochs = [np.array(asks[i:i + k]) for i in range(0, 200 - 200 % k, k)]
    assert all((e == e[0]).all() for e in epochs), "an epoch plays one point"
    assert len({tuple(e[0]) for e in epochs}) > len(epochs) // 2
    best = opt.recommend()
    assert any((best == e[0]).all() for e in epochs), "recommend() is an epoch's point"


def test_before_any_report_recommend_is_the_boxs_centre():
    opt = ldp_bo.Optimizer(bounds=BOX, seed=1)
    assert (opt.recommend() == (LOWER + UPPER) / 2).all()


def run(seed, rounds=40, **settings):
    opt = ldp_bo.Optimizer(bounds=BOX, algorithm="gp-ucb", eps=None, horizon=rounds, seed=seed, **settings)
    asks = []
    for _ in range(rounds):
        x = opt.ask()
        asks.append(x)
        opt.tell(x, f(x))
    return np.array(asks)


def test_the_same_seed_gives_the_same_asks():
    # 40 rounds: past the opening design (8 asks) and the first fit of the kernel (16 reports)
    first, again = run(7), run(7)
    assert (first == again).all()
    assert not (first == run(8)).all(), "another seed asks other points"


def test_a_fixed_lengthscale_is_used_and_never_fitted():
    opt = ldp_bo.Optimizer(bounds=BOX, eps=None, algorithm="gp-ucb", lengthscale=0.25, horizon=40, seed=1)
    fitted = ldp_bo.Optimizer(bounds=BOX, eps=None, algorithm="gp-ucb", horizon=40, seed=1)
    for o in (opt, fitted):
        for _ in range(20):
            x = o.ask()
            o.tell(x, f(x))
    lengthscales, signal = opt.lengthscales
    assert np.allclose(lengthscales, 0.25 * (UPPER - LOWER)) and signal == 1.0
    assert opt.fits == 1 and fitted.fits == 1, "16 reports: one fit (fixed: a rebuild)"
    assert not np.allclose(fitted.lengthscales[0], lengthscales), "the default lengthscales are fitted"


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(bounds=[]), ldp_bo.InvalidParameter, "the box has no coordinates"),
    (dict(bounds=[(1.0, 0.0)]), ldp_bo.InvalidParameter, "coordinate 0 of the box runs from 1 to 0, which is inverted"),
    (dict(bounds=[(0.0, 1.0), (2.0, 2.0)]), ldp_bo.InvalidParameter,
     "coordinate 1 of the box runs from 2 to 2, which is empty"),
    (dict(bounds=[(0.0, np.nan)]), ldp_bo.InvalidParameter, "bound of coordinate 0 is NaN or infinite"),
    (dict(bounds=[(0.0, 1.0)] * 21), ldp_bo.InvalidParameter, "the box has 21 coordinates; at most 20"),
    (dict(bounds=[(0.0, 1.0, 2.0)]), ldp_bo.InvalidValue, r"bounds must be \(lower, upper\) pairs.*\[1, 3\]"),
    (dict(bounds=[0.0, 1.0]), ldp_bo.InvalidValue, r"bounds must be \(lower, upper\) pairs"),
    (dict(bounds=[("a", "b")]), ldp_bo.InvalidValue, "bounds must be an array of floats or ints"),
    (dict(bounds=BOX, algorithm="ldp-ata-gp-ucb"), ldp_bo.InvalidParameter,
     "LDP-ATA-GP-UCB cannot run on a box: its Nyström dictionary is sampled from a finite set"),
    (dict(bounds=BOX, algorithm="ldp-ucb"), ldp_bo.InvalidParameter, "LDP-UCB cannot run on a box: it is a K-armed"),
    (dict(bounds=BOX, algorithm="sgd"), ldp_bo.InvalidParameter,
     "no learner on a box is called 'sgd': choose one of GP-UCB, LDP-TGP-UCB"),
    (dict(bounds=BOX, algorithm="ldp-tgp-ucb", eps=None), ldp_bo.InvalidParameter, "eps=None: the learners see raw"),
    (dict(bounds=BOX, constants="paper"), ldp_bo.InvalidParameter, "a box takes the calibrated constants only"),
    (dict(bounds=BOX, kernel="se"), ldp_bo.InvalidParameter, "drop kernel"),
    (dict(bounds=BOX, lengthscale=-1.0), ldp_bo.InvalidParameter, "the lengthscale must be a positive number"),
    (dict(bounds=BOX, eps=0.0), ldp_bo.InvalidParameter, "epsilon must be a positive finite number"),
    (dict(bounds=BOX, points=[0.0, 1.0]), ldp_bo.InvalidParameter, "give exactly one domain: .* or bounds="),
    (dict(bounds=BOX, arms=3), ldp_bo.InvalidParameter, "give exactly one domain"),
])
def test_bad_boxes_and_settings_are_refused(kwargs, error, message):
    with pytest.raises(error, match=message):
        ldp_bo.Optimizer(**kwargs)


BAD_TELLS = [
    ([0.5, 0.0, 25.0], 0.1, ldp_bo.InvalidValue,
     r"told a point outside the box: coordinate 2 is 25, not within \[10, 20\]"),
    ([0.5, 0.0], 0.1, ldp_bo.InvalidValue, "told a point of 2 coordinates, but the box has 3"),
    ([0.5, 0.0, 15.0, 0.0], 0.1, ldp_bo.InvalidValue, "told a point of 4 coordinates, but the box has 3"),
    ([0.5, np.nan, 15.0], 0.1, ldp_bo.NonFiniteValue, "told a point whose coordinate 1 is NaN or infinite"),
    ([[0.5, 0.0, 15.0]], 0.1, ldp_bo.InvalidValue, "the point must be a 1-D array .* it has 2 dimensions"),
    (["a", "b", "c"], 0.1, ldp_bo.InvalidValue, "the point must be an array of floats or ints"),
    ([0.5, 0.0, 15.0], float("nan"), ldp_bo.NonFiniteValue, "a report was NaN or infinite"),
    ([0.5, 0.0, 15.0], -np.inf, ldp_bo.NonFiniteValue, "a report was NaN or infinite"),
    ([0.5, 0.0, 15.0], "0.1", ldp_bo.InvalidValue, "the report is of type str, not a real number"),
]


def test_bad_tells_are_refused_and_change_nothing():
    """Each round, every bad tell is refused on one learner; a twin never told them asks the
    same points throughout (past the first fit at 16 reports)."""
    opt = ldp_bo.Optimizer(bounds=BOX, eps=None, algorithm="gp-ucb", horizon=24, seed=3)
    twin = ldp_bo.Optimizer(bounds=BOX, eps=None, algorithm="gp-ucb", horizon=24, seed=3)
    for t in range(24):
        x = opt.ask()
        for point, report, error, message in BAD_TELLS:
            with pytest.raises(error, match=message):
                opt.tell(point, report)
        with pytest.raises(ldp_bo.InvalidValue, match="told a point outside the box: coordinate 0 is -1"):
            opt.posterior([-1.0, 0.0, 15.0])
        assert opt.told == t
        assert (twin.ask() == x).all() and (opt.ask() == x).all()
        assert opt.posterior(x) == twin.posterior(x)
        opt.tell(x, f(x))
        twin.tell(x, f(x))


def test_a_2d_quadratic_is_optimised_from_raw_rewards():
    """GP-UCB on raw rewards (eps=None) of a concave quadratic with uniform noise of +-0.1,
    300 rounds: the recommendation lands near the optimum (1.1, 0.2), far from the box's centre
    (0, 1) at 1.36. Measured with learner seeds 0-29 (noise seeded alike): 0.016 to 0.179,
    median 0.07; the tolerance 0.2 is above all 30, while the best of 300 uniform random points
    (by their noisy rewards) is beyond 0.2 in 19 of 30 runs."""
    optimum = np.array([1.1, 0.2])
    noise = np.random.default_rng(0)
    opt = ldp_bo.Optimizer(bounds=[(-2.0, 2.0), (-1.0, 3.0)], algorithm="gp-ucb", eps=None, bound=8.0,
                           noise_bound=0.1, horizon=300, seed=0)
    for _ in range(300):
        x = opt.ask()
        reward = 1.0 - np.sum((x - optimum) ** 2) / 2.0  # from -7.7 (corner (-2, 3)) to 1
        opt.tell(x, reward + noise.uniform(-0.1, 0.1))
    best = opt.recommend()
    assert np.linalg.norm(best - optimum) < 0.2, best
    mean_there, _ = opt.posterior(best)
    mean_corner, _ = opt.posterior([-2.0, 3.0])
    assert mean_there > mean_corner + 4.0, "the model knows the corner (-7.7) is far below the optimum (1)"


def test_the_box_optimizer_describes_itself():
    opt = ldp_bo.Optimizer(bounds=BOX, algorithm="tgp-ucb", eps=0.5, bound=2.0, noise_bound=0.3, horizon=20, seed=4)
    assert opt.algorithm == "LDP-TGP-UCB" and opt.dimension == 3 and opt.points is None
    assert opt.settings == {"eps": 0.5, "bound": 2.0, "noise_bound": 0.3, "horizon": 20, "constants": "calibrated",
                            "seed": 4}
    bounds = opt.bounds
    assert bounds.shape == (3, 2) and (bounds == np.array(BOX)).all()
    bounds[0, 0] = 99.0
    assert opt.bounds[0, 0] == 0.0, "bounds is a copy"
    assert {"lambda", "beta_T", "level_T", "features"} <= set(opt.constants)
    assert opt.device_level is None and opt.fits == 0 and opt.lengthscales[0].shape == (3,)
    assert repr(opt) == 'Optimizer("LDP-TGP-UCB", a box of 3 coordinates, eps=0.5, horizon=20, told=0)'
    for name in ["n_actions", "pulls"]:
        with pytest.raises(AttributeError, match=f"{name} is not defined on a box"):
            getattr(opt, name)
    indexed = ldp_bo.Optimizer(np.zeros((4, 2)))
    assert indexed.bounds is None and indexed.dimension == 2 and ldp_bo.Optimizer(arms=3).dimension is None
    with pytest.raises(AttributeError, match="posterior is not defined on points, arms or a covariance"):
        indexed.posterior([0.0, 0.0])
    text = pydoc.render_doc(ldp_bo.Optimizer, renderer=pydoc.plaintext)
    for words in ["bounds : array_like of float, shape (d, 2)", "posterior(x)", "lengthscales"]:
        assert words in text, words
