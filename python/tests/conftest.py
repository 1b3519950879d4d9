"""What the tests that compare the package with the Rust side need: the repository beside
python/ and cargo, to run `host-sim` (the CLI) and its example `ask_tell_stdio`.

Outside the repository (the package tested from elsewhere) those tests skip; inside it they
run, and fail if cargo cannot build or run host-sim.
"""

import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repository():
    """The repository's root, or a skip when python/ is not in one."""
    if not (ROOT / "host-sim" / "Cargo.toml").is_file():
        pytest.skip("host-sim is not beside python/ (the package was tested outside the repository)")
    return ROOT


@pytest.fixture(scope="session")
def host_sim(repository):
    """Runs `cargo run -p host-sim [--example NAME] -- ARGS` in the repository (built once)."""
    subprocess.run(
        ["cargo", "build", "--quiet", "-p", "host-sim", "--bin", "host-sim", "--example", "ask_tell_stdio"],
        cwd=repository,
        check=True,
    )

    def command(*args, example=None):
        which = ["--example", example] if example else ["--bin", "host-sim"]
        return ["cargo", "run", "--quiet", "-p", "host-sim", *which, "--", *map(str, args)]

    return command
