"""Shared fixtures: paths of the shipped netlists and the CLI built by scripts/test_python.sh."""

import _thread
import contextlib
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NETLISTS = ROOT / "models" / "netlists"


@pytest.fixture
def netlist():
    return lambda name: str(NETLISTS / name)


@pytest.fixture(scope="session")
def cli():
    """Run the drivelink CLI (DRIVELINK_CLI, else target/debug or target/release)."""
    candidates = [os.environ.get("DRIVELINK_CLI"), ROOT / "target/debug/drivelink", ROOT / "target/release/drivelink"]
    exe = next((str(c) for c in candidates if c and Path(c).is_file()), None) or shutil.which("drivelink")
    if exe is None:
        pytest.fail("the drivelink CLI is not built (scripts/test_python.sh builds it)")

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
def ctrl_c_after():
    """``with ctrl_c_after(s) as elapsed:`` sends Ctrl-C (KeyboardInterrupt) to the main
    thread after ``s`` seconds, expects the block to raise it, and ``elapsed()`` gives the
    seconds from the Ctrl-C to the end of the block."""

    @contextlib.contextmanager
    def ctx(seconds):
        sent = []

        def fire():
            sent.append(time.monotonic())
            _thread.interrupt_main()

        timer = threading.Timer(seconds, fire)
        timer.start()
        end = []
        try:
            with pytest.raises(KeyboardInterrupt):
                yield lambda: end[0] - sent[0]
        finally:
            end.append(time.monotonic())
            timer.cancel()

    return ctx
