"""Shared fixtures: paths of the shipped netlists, the CLI to compare with, Ctrl-C at a reported point."""

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NETLISTS = ROOT / "models" / "netlists"


@pytest.fixture
def netlist():
    return lambda name: str(NETLISTS / name)


def find_cli():
    """The drivelink CLI to compare with: $DRIVELINK_CLI, else the debug or release build
    in the cargo target directory ($CARGO_TARGET_DIR, else target/ of this repository),
    else `drivelink` on the PATH; None when there is none."""
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    if not target.is_absolute():
        target = Path.cwd() / target
    given = os.environ.get("DRIVELINK_CLI")
    if given:
        return given if Path(given).is_file() else None
    for c in (target / "debug" / "drivelink", target / "release" / "drivelink"):
        if c.is_file():
            return str(c)
    return shutil.which("drivelink")


@pytest.fixture(scope="session")
def cli():
    """Run the drivelink CLI (see find_cli); the tests that compare with it are skipped,
    saying why, when it is not built."""
    exe = find_cli()
    if exe is None:
        given = os.environ.get("DRIVELINK_CLI")
        where = f"DRIVELINK_CLI={given} is no file" if given else "no drivelink in $CARGO_TARGET_DIR or target/ (debug, release) nor on the PATH"
        pytest.skip(f"no drivelink CLI to compare with: {where}; build it (cargo build) or set DRIVELINK_CLI")

    def run(*args, check=True):
        p = subprocess.run([exe, *map(str, args)], capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError(f"drivelink {' '.join(map(str, args))}: exit {p.returncode}\n{p.stderr}")
        return p

    return run


@pytest.fixture
def long_run():
    """A netlist that runs for minutes: a sine through a lag for 1e6 s at rtol 1e-8."""
    return str(ROOT / "tests" / "fixtures" / "long_run.json")


@pytest.fixture
def ctrl_c_when():
    """``ctrl_c_when(ready)``: a progress callback that sends the process SIGINT, as
    Ctrl-C does, the first time ``ready(a, b)`` holds for what the run or study reports
    (``(t, stop_time)`` of a run, ``(done, total)`` of a study): the interruption comes at
    a point the run reports, whatever the load of the machine."""

    def make(ready):
        sent = []

        def progress(a, b):
            if not sent and ready(a, b):
                sent.append((a, b))
                signal.raise_signal(signal.SIGINT)

        progress.sent = sent
        return progress

    return make
