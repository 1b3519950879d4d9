"""The README's "From Python" example runs as printed."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_example_runs(capsys):
    if not README.exists():
        pytest.skip("README.md is not beside python/ (the package was tested outside the repository)")
    section = README.read_text(encoding="utf-8").split("## From Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "one python example in the section"
    exec(compile(blocks[0], "README.md (From Python)", "exec"), {})
    assert "privacy budget exhausted: 1 requested, 0 left" in capsys.readouterr().out
