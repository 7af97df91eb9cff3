#!/usr/bin/env python3
"""The full car as an FMU in fmpy, next to `drivelink run`.

Exports models/netlists/full_car.json with `drivelink fmu` (FMI 3.0 by default, 2.0 with
--fmi 2), simulates the FMU in fmpy as Co-Simulation with a 10 ms communication step,
runs the same netlist natively with `drivelink run`, prints the largest differences of
the vehicle speed and the engine speed at the times both have (the native run's 20 ms
output grid), and draws both runs on one picture per signal with `drivelink plot`
(vehicle_speed.png in km/h, engine_speed.png in rpm: the curves lie on top of each
other) and their differences (difference.png, in m/s and rad/s).

From the repository root, with the venv that scripts/test_fmi.sh creates (it has fmpy):

    cargo build -p drivelink -p drivelink-fmi
    target/fmi-venv/bin/python examples/fmi/full_car_fmpy.py [--fmi 2] [--step 0.01] [--out DIR]

Output goes to target/fmi-example/ (fmpy/results.csv holds fmpy's signals, run/ the
native run). Exits 1 when a difference exceeds --tol of the signal's range.
"""

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

from fmpy import read_model_description, simulate_fmu

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "netlists" / "full_car.json"
# (variable, display unit, label)
SIGNALS = [("vehicle.v", "km/h", "vehicle speed"), ("engine.w", "rpm", "engine speed")]
TO_DISPLAY = {"km/h": 3.6, "rpm": 60.0 / (2.0 * 3.141592653589793)}


def run(cmd):
    """Run a drivelink command, failing loudly with its message."""
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout


def read_results(path):
    """A results.csv as (names, rows); at an event instant the last row wins."""
    rows = list(csv.reader(open(path)))
    names = rows[0]
    by_time = {}
    for r in rows[1:]:
        by_time[float(r[0])] = [float(v) for v in r]
    return names, by_time


def write_fmpy_results(res, out_dir, units):
    """fmpy's signals as a results.csv (with a summary.json naming their SI units), so
    that `drivelink plot` overlays them with the native run."""
    out_dir.mkdir(parents=True, exist_ok=True)
    names = ["time"] + [s for s, _, _ in SIGNALS]
    with open(out_dir / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        for row in res:
            w.writerow([repr(float(row[n])) for n in names])
    json.dump({"units": units}, open(out_dir / "summary.json", "w"), indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fmi", choices=["3", "2"], default="3", help="FMI version (default 3)")
    ap.add_argument("--step", type=float, default=0.01, help="communication step, s")
    ap.add_argument("--out", type=Path, default=ROOT / "target" / "fmi-example")
    ap.add_argument("--drivelink", type=Path, default=ROOT / "target" / "debug" / "drivelink")
    ap.add_argument("--tol", type=float, default=1e-3,
                    help="largest difference accepted, relative to each signal's range")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    fmu = a.out / f"full_car.fmi{a.fmi}.fmu"

    print(run([a.drivelink, "fmu", MODEL, "--fmi", a.fmi, "--out", fmu]).strip())
    run([a.drivelink, "run", MODEL, "--out", a.out / "run", "--no-plots", "--no-report"])
    names, native = read_results(a.out / "run" / "results.csv")

    md = read_model_description(str(fmu))
    units = {v.name: v.unit for v in md.modelVariables if v.unit}
    stop = float(md.defaultExperiment.stopTime)
    t0 = time.time()
    res = simulate_fmu(str(fmu), fmi_type="CoSimulation", output_interval=a.step,
                       stop_time=stop, output=[s for s, _, _ in SIGNALS])
    wall = time.time() - t0
    print(f"fmpy {md.fmiVersion} Co-Simulation, {a.step * 1e3:g} ms steps: {len(res)} points "
          f"to t = {res['time'][-1]:.6g} s in {wall:.2f} s")
    write_fmpy_results(res, a.out / "fmpy", units)

    # The times both have: fmpy's points that are native output times.
    by_key = {round(t / a.step): t for t in native if abs(t / a.step - round(t / a.step)) < 1e-6}
    common = []  # (time, fmpy row, native row)
    for row in res:
        t = by_key.get(round(row["time"] / a.step))
        if t is not None and abs(t - row["time"]) < 1e-9:
            common.append((t, row, native[t]))
    worst_rel = 0.0
    for sig, unit, label in SIGNALS:
        j = names.index(sig)
        col = [r[j] for r in native.values()]
        span = max(col) - min(col)
        worst, at = max((abs(f[sig] - r[j]), t) for t, f, r in common)
        k = TO_DISPLAY[unit]
        print(f"{label} ({sig}): largest |fmpy - run| = {worst * k:.3g} {unit} at t = {at:.4g} s "
              f"({worst / span:.2e} of its range {span * k:.4g} {unit}; {len(common)} common points)")
        worst_rel = max(worst_rel, worst / span)

    # The differences, fmpy - run, as results of their own (SI units: two axes).
    diff_dir = a.out / "difference"
    diff_dir.mkdir(parents=True, exist_ok=True)
    diff_names = [f"{sig}_fmpy_minus_run" for sig, _, _ in SIGNALS]
    with open(diff_dir / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time"] + diff_names)
        for t, fr, r in common:
            w.writerow([repr(t)] + [repr(float(fr[sig]) - r[names.index(sig)]) for sig, _, _ in SIGNALS])
    json.dump({"units": {d: units[sig] for d, (sig, _, _) in zip(diff_names, SIGNALS)}},
              open(diff_dir / "summary.json", "w"), indent=1)

    for sig, unit, label in SIGNALS:
        png = a.out / f"{label.replace(' ', '_')}.png"
        run([a.drivelink, "plot", a.out / "run" / "results.csv", a.out / "fmpy" / "results.csv",
             "--x", "time", "--signals", sig, "--unit", unit, "--out", png,
             "--title", f"full car, {label}: drivelink run and fmpy (FMI {md.fmiVersion} CS, "
                        f"{a.step * 1e3:g} ms)"])
        print(f"wrote {png}")
    png = a.out / "difference.png"
    run([a.drivelink, "plot", diff_dir / "results.csv", "--signals", ",".join(diff_names),
         "--out", png, "--title", f"full car: fmpy (FMI {md.fmiVersion} CS, {a.step * 1e3:g} ms) "
                                  f"minus drivelink run, at the run's output points"])
    print(f"wrote {png}")
    if worst_rel > a.tol:
        sys.exit(f"FAIL: a difference of {worst_rel:.2e} of a signal's range exceeds {a.tol:g}")


if __name__ == "__main__":
    main()
