"""The Python package's run against the CLI's: the full car, same build profile (release).

For each of REPEATS rounds: `drivelink run` of the netlist (no plots, no report; its solver
time from summary.json) and `drivelink.load(...).run()` in this process (its wall time
around the call, and the solver time it reports). Prints the medians and the ratio of
the Python call's wall time to the CLI's solver time.

Run (after `pip install ./python` in a venv, release wheel):
    python benches/peer/python_vs_cli.py target/release/drivelink [REPEATS]
"""
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import drivelink

MODEL = "models/netlists/full_car.json"


def main():
    cli = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    m = drivelink.load(MODEL)
    cli_solver, py_wall, py_solver = [], [], []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(repeats):
            subprocess.run([cli, "run", MODEL, "--no-plots", "--no-report", "--out", d],
                           check=True, capture_output=True)
            cli_solver.append(json.loads((Path(d) / "summary.json").read_text())["wall_time_s"])
            t0 = time.perf_counter()
            r = m.run()
            py_wall.append(time.perf_counter() - t0)
            py_solver.append(r.summary["wall_time_s"])
    c, w, s = (statistics.median(v) * 1e3 for v in (cli_solver, py_wall, py_solver))
    print(f"CLI solver time      median {c:.2f} ms (min {min(cli_solver) * 1e3:.2f})")
    print(f"Python run() wall    median {w:.2f} ms (min {min(py_wall) * 1e3:.2f})")
    print(f"Python solver time   median {s:.2f} ms")
    print(f"Python run() / CLI solver = {w / c:.3f}; status {r.status}, end {r.end_time}")


if __name__ == "__main__":
    main()
