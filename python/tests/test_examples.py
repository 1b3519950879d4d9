"""python/examples/ run (briefly): compare_sklearn.py where scikit-learn is installed (it is not
in CI's requirements: a full run takes minutes, see its docstring)."""

import pathlib
import runpy
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def test_compare_sklearn_prints_its_table(monkeypatch, capsys):
    pytest.importorskip("sklearn")
    if not (EXAMPLES / "compare_sklearn.py").exists():
        pytest.skip("the examples are not beside the tests")
    monkeypatch.setattr(sys, "argv", ["compare_sklearn.py", "--trials", "2", "--horizon", "30"])
    runpy.run_path(str(EXAMPLES / "compare_sklearn.py"), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "eps = 1.0, B = 1.0, R = 0.5, |D| = 100, T = 30, 2 trials"
    names = [line[:22].strip() for line in out[2:]]
    assert names == ["ldp_bo LDP-TGP-UCB", "ldp_bo GP-UCB", "scikit-learn GP-UCB", "uniform play"]
