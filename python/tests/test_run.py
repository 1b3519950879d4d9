"""ldp_bo.run: a named experiment as `host-sim run` runs it. Its finals and curves equal the
CLI's finals.csv and regret.csv for the same settings, to the bit."""

import csv
import math
import subprocess

import numpy as np
import pytest

import ldp_bo


def cli_run(host_sim, repository, out, *args):
    subprocess.run(host_sim("run", *args, "--out", out, "--quiet"), cwd=repository, check=True,
                   stdout=subprocess.DEVNULL)
    with open(out / "finals.csv", newline="") as f:
        finals = list(csv.DictReader(f))
    with open(out / "regret.csv", newline="") as f:
        regret = list(csv.DictReader(f))
    return finals, regret


def number(cell):
    return math.nan if cell == "" else float(cell)


def assert_same(result, finals, regret):
    """The run's finals are finals.csv's rows, its curves regret.csv's columns, exactly."""
    ours = result["finals"]
    assert ours["algorithm"] == [row["algorithm"] for row in finals]
    assert ours["trial"].tolist() == [int(row["trial"]) for row in finals]
    for column in ["final_regret", "vs_uniform", "vs_ucb1"]:
        theirs = np.array([number(row[column]) for row in finals])
        assert np.array_equal(ours[column], theirs, equal_nan=True), column
    assert ours["worse_than_uniform"].tolist() == [row["worse_than_uniform"] == "true" for row in finals]
    assert len(regret) == result["horizon"]
    for label in result["learners"]:
        for stat in ["mean", "std"]:
            theirs = np.array([float(row[f"{label}_{stat}"]) for row in regret])
            assert np.array_equal(result["curves"][label][stat], theirs), (label, stat)


def test_fig2a_equals_the_clis_finals_csv(host_sim, repository, tmp_path):
    finals, regret = cli_run(host_sim, repository, tmp_path / "cli", "fig2a", "--trials", 4, "--horizon", 300,
                             "--seed", 7)
    result = ldp_bo.run("fig2a", trials=4, horizon=300, seed=7)
    assert result["learners"] == ["GP-UCB", "LDP-TGP-UCB", "LDP-ATA-GP-UCB", "LDP-MoMA-GP-UCB", "UCB1",
                                  "uniform play"]
    assert (result["experiment"], result["eps"], result["trials"], result["horizon"], result["seed"]) == (
        "fig2a", 1.0, 4, 300, 7)
    assert_same(result, finals, regret)
    assert result["finals"]["final_regret"].shape == (24,)
    summary = result["summary"]
    assert summary["algorithm"] == result["learners"]
    tgp = result["finals"]["final_regret"][4:8]
    assert summary["final_regret_mean"][1] == pytest.approx(tgp.mean(), rel=1e-12)
    assert summary["final_regret_sd"][1] == pytest.approx(tgp.std(ddof=1), rel=1e-9)
    assert result["curves"]["LDP-TGP-UCB"]["mean"][-1] == summary["final_regret_mean"][1]
    assert {"lambda", "beta_T"} <= set(result["derived"]["LDP-TGP-UCB"])


def test_other_settings_equal_the_clis_too(host_sim, repository, tmp_path):
    """Another ε, the practical constants, a learner selection and the real light-sensor data
    (found in the repository's data/ as the CLI finds it, and through data=)."""
    finals, regret = cli_run(host_sim, repository, tmp_path / "a", "fig2a", "--trials", 2, "--horizon", 120,
                             "--eps", 0.5, "--constants", "practical", "--algorithms", "tgp-ucb,ucb1")
    result = ldp_bo.run("fig2a", trials=2, horizon=120, eps=0.5, constants="practical",
                        algorithms=["tgp-ucb", "ucb1"])
    assert result["learners"] == ["LDP-TGP-UCB", "UCB1", "uniform play"]
    assert_same(result, finals, regret)

    finals, regret = cli_run(host_sim, repository, tmp_path / "b", "fig2b", "--trials", 2, "--horizon", 100,
                             "--prior", "shrunk")
    assert_same(ldp_bo.run("fig2b", trials=2, horizon=100, prior="shrunk", data=repository / "data"), finals,
                regret)
    assert_same(ldp_bo.run("fig2b", trials=2, horizon=100, prior="shrunk"), finals, regret)


def test_the_results_do_not_depend_on_threads():
    one = ldp_bo.run("fig3a", trials=3, horizon=80, threads=1)
    two = ldp_bo.run("fig3a", trials=3, horizon=80, threads=2)
    assert np.array_equal(one["finals"]["final_regret"], two["finals"]["final_regret"])
    assert not np.array_equal(one["finals"]["final_regret"],
                              ldp_bo.run("fig3a", trials=3, horizon=80, seed=1)["finals"]["final_regret"])


def test_as_frame_gives_pandas_dataframes():
    pandas = pytest.importorskip("pandas")
    result = ldp_bo.run("fig2a", trials=2, horizon=50, as_frame=True)
    assert isinstance(result["finals"], pandas.DataFrame) and isinstance(result["summary"], pandas.DataFrame)
    assert list(result["finals"].columns) == ["algorithm", "trial", "final_regret", "vs_uniform",
                                              "worse_than_uniform", "vs_ucb1"]
    assert len(result["finals"]) == 12


def test_experiments_lists_what_run_takes():
    names = ldp_bo.experiments()
    assert "fig2a" in names and "custom" not in names
    assert names["fig2a"] == "LDP, synthetic f, Matern-5/2 kernel (seed 000 Fig. 2a)"


@pytest.mark.parametrize("kwargs, message", [
    (dict(experiment="fig2x"), "unknown experiment 'fig2x': did you mean 'fig2a'"),
    (dict(experiment="custom"), "custom runs on your own table"),
    (dict(experiment="fig2d", eps=1.0), "fig2d is non-private: eps does not apply"),
    (dict(experiment="fig2a", eps=-1.0), "eps must be a finite number > 0, got -1"),
    (dict(experiment="fig2a", prior="shrunk"), "prior chooses the prior over a data table's arms"),
    (dict(experiment="fig2b", prior="flat"), "prior 'flat': choose independent, shrunk or empirical"),
    (dict(experiment="fig2a", noise="cauchy"), "unknown noise 'cauchy'"),
    (dict(experiment="fig2b", noise="uniform"), "noise applies to synthetic experiments only, not fig2b"),
    (dict(experiment="fig2a", noise="student-t"), "a private run needs bounded noise"),
    (dict(experiment="fig2a", trials=0), "invalid setting: "),
    (dict(experiment="fig2a", beta_scale=-1.0), "beta_scale must be a finite number >= 0"),
    (dict(experiment="fig2a", constants="tuned"), "constants 'tuned'"),
    (dict(experiment="fig2a", algorithms=["gp-ucbb"]), "gp-ucbb"),
])
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ldp_bo.InvalidParameter, match=message):
        ldp_bo.run(**kwargs)


def test_missing_data_names_the_folder(tmp_path):
    with pytest.raises(ldp_bo.LdpError) as info:
        ldp_bo.run("fig2b", trials=1, horizon=10, data=tmp_path)
    assert str(tmp_path) in str(info.value)


def test_ctrl_c_stops_a_run():
    """Ctrl-C (simulated by interrupt_main) stops a run in progress: it raises KeyboardInterrupt
    well before the run could have ended (a run of 60 trials takes about 15 times one of 4; the
    interrupted one ends within 5 times that). Before, Python saw the signal only when the run
    returned.

    Python turns SIGINT into KeyboardInterrupt only if it found the signal not ignored when it
    started, and a shell ignores it in the jobs it starts in the background (`pytest &`), where
    interrupt_main does nothing: the test sets Python's handler for its own duration."""
    import _thread
    import signal
    import threading
    import time

    start = time.perf_counter()
    ldp_bo.run("fig2a", trials=4, horizon=3000)
    small = time.perf_counter() - start
    timer = threading.Timer(0.2, _thread.interrupt_main)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            ldp_bo.run("fig2a", trials=60, horizon=3000)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.perf_counter() - start < 5 * small + 0.2
    # the package still runs after an interrupted run
    assert ldp_bo.run("fig2a", trials=1, horizon=10)["trials"] == 1
