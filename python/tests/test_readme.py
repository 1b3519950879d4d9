"""python/README.md's examples run as printed."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_examples_run(capsys):
    if not README.exists():
        pytest.skip("python/README.md is not beside tests/ (the package was tested outside its source tree)")
    section = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 3, "the ask/tell example, the box's and the device's"
    learner = {}
    exec(compile(blocks[0], "python/README.md (ask/tell)", "exec"), learner)
    assert learner["opt"].told == 300 and learner["dev"].budget_remaining < 1e-6
    assert re.fullmatch(r"best setting: [0-9.]+\n", capsys.readouterr().out)
    assert len(blocks[0].strip().splitlines()) <= 12, "a short example"
    knobs = {}
    exec(compile(blocks[1], "python/README.md (continuous knobs)", "exec"), knobs)
    assert knobs["opt"].told == 300 and knobs["dev"].budget_remaining < 1e-6
    assert re.fullmatch(r"best setting: \[[-0-9. e+]+\]\n", capsys.readouterr().out)
    assert len(blocks[1].strip().splitlines()) <= 12, "a short example"
    exec(compile(blocks[2], "python/README.md (the device)", "exec"), {})
    assert "privacy budget exhausted: 1 requested, 0 left" in capsys.readouterr().out
