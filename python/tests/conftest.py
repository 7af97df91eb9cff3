"""Shared fixtures: paths of the shipped netlists and the CLI built by scripts/test_python.sh."""

import os
import shutil
import subprocess
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
