"""What the tests that compare the package with the Rust side need: the repository beside
python/ and cargo, to run `host-sim` (the CLI) and its example `ask_tell_stdio`.

Outside the repository (the package tested from elsewhere) those tests skip; inside it they
run, and fail if cargo cannot build or run host-sim.
"""

import json
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
    """The command line of `host-sim ARGS` (or of the example NAME), built once by cargo in its
    test profile (optimised, as the workspace's Cargo.toml sets it) with the workspace's
    features: the very binaries `cargo test` builds, so after it (as in CI) nothing is compiled
    again."""
    built = subprocess.run(
        ["cargo", "build", "--quiet", "--profile", "test", "--workspace", "--bin", "host-sim"]
        + ["--example", "ask_tell_stdio", "--message-format", "json-render-diagnostics"],
        cwd=repository,
        stdout=subprocess.PIPE,
        text=True,
    )
    if built.returncode != 0:
        pytest.fail("cargo could not build host-sim (its errors are above)")
    executables = {}
    for line in built.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("executable"):
            executables[message["target"]["name"]] = message["executable"]

    def command(*args, example=None):
        return [executables[example or "host-sim"], *map(str, args)]

    return command
