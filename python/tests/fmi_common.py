"""What the fmpy scripts of the FMI tests share (run with the FMI venv's Python by
scripts/test_fmi.sh, which has fmpy but not pytest): where the drivelink CLI is."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def find_cli():
    """The drivelink CLI: $DRIVELINK_CLI, else the debug or release build in target/;
    None when there is none."""
    given = os.environ.get("DRIVELINK_CLI")
    if given:
        return given if Path(given).is_file() else None
    for c in (ROOT / "target" / "debug" / "drivelink", ROOT / "target" / "release" / "drivelink"):
        if c.is_file():
            return str(c)
    return None
