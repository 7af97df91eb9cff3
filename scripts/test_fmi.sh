#!/usr/bin/env bash
# FMI export check: build drivelink and its FMU runtime, export mech_clutch_lock.json,
# full_car.json and two vehicle netlists (a rigid body on tires braking in a turn with
# ABS, a quarter car stopping with ABS) as FMI 3.0 and FMI 2.0 FMUs of every kind
# (Co-Simulation, Model Exchange, both), validate them with fmpy,
# simulate the Co-Simulation FMUs with fmpy at 1 ms and 100 ms communication steps and
# compare every output at the communication points with `drivelink run` of the same
# netlist (output grid = the communication step), both at rtol = atol = 1e-11
# (FMI_RTOL): each signal must agree to 1e-5 of its range. Then the Model Exchange
# FMUs (both versions) of mech_clutch_lock, full_car, vd_brake_turn_abs and
# vehicle_emergency_stop_abs (FMI_ME_MODELS): fmpy integrates them with CVODE at rtol 1e-9 and 10 ms output points;
# every output must agree with the native run to 1e-5 of its range at the output
# points, and every clutch event of the native run (lock, unlock, engage, free) must be
# an event instant of fmpy's within 1e-6 s (vd_brake_turn_abs's tire forces under ABS come
# closest, 7.4e-6: CVODE's own error at 1e-9). FMI_MODELS="a b" checks other netlists of
# models/netlists/, FMI_VERSIONS="3" or "2" one version only. Then the inputs of exported
# FMUs (python/tests/test_fmi_inputs.py: an Inport into a first-order lag, a step input
# from fmpy, CS and ME of both versions, against the closed form), the tunable parameters
# (python/tests/test_fmi_tunable.py: a gain set between Co-Simulation steps through fmpy's
# FMU3Slave/FMU2Slave against the closed form, and the FMU state set back), then
# examples/fmi/full_car_fmpy.py (the full car in fmpy at 10 ms steps, plotted).
# fmpy lives in a venv, target/fmi-venv unless FMI_VENV names another (created on first
# use, needs network once).
set -euo pipefail
cd "$(dirname "$0")/.."
# The CLI and the runtime library, built with the same selection as scripts/test.sh's build
# (nothing to rebuild after it; `-p drivelink -p drivelink-fmi` alone would unify features
# differently and recompile much of the dependency tree).
cargo build -q --workspace --all-targets
VENV="${FMI_VENV:-target/fmi-venv}"
if [ ! -x "$VENV/bin/fmpy" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q fmpy
fi
OUT=target/fmi-check
rm -rf "$OUT"
mkdir -p "$OUT"
MODELS="${FMI_MODELS:-mech_clutch_lock full_car vd_brake_turn_abs vehicle_emergency_stop_abs}"
VERSIONS="${FMI_VERSIONS:-3 2}"
for v in $VERSIONS; do
    for m in $MODELS; do
        for k in cs me both; do
            f="$OUT/$m.fmi$v.$k.fmu"
            ./target/debug/drivelink fmu "models/netlists/$m.json" --fmi "$v" --kind "$k" --out "$f"
            "$VENV/bin/fmpy" validate "$f" | tee "$f.validate.txt"
            grep -q "No problems found" "$f.validate.txt"
        done
    done
done
"$VENV/bin/python" - "$OUT" "$VERSIONS" $MODELS <<'PY'
import csv, json, math, os, subprocess, sys, time
from fmpy import simulate_fmu

out = sys.argv[1]
versions = sys.argv[2].split()
TOL = 1e-5
RTOL = float(os.environ.get("FMI_RTOL", "1e-11"))
worst_all = 0.0
for model in sys.argv[3:]:
    net = json.load(open(f"models/netlists/{model}.json"))
    stop = float(net.get("solver", {}).get("stop_time", 10))
    for h in [1e-3, 0.1]:
        tag = f"{model}_{h:g}"
        # The native run on the communication grid (the event instants add their pairs).
        # Both at a tolerance far below the one checked: at rtol 1e-6 (the netlists' own)
        # or even 1e-9 the native run is itself off the exact trajectory by more than
        # 1e-5 of a signal's range (full_car at 1e-6: 1.9e-4 for lockup.w_rel, a clutch
        # release 5 ms late; vd_brake_turn_abs at 1e-9: 8e-4 for the tire forces under
        # ABS), which would hide what the FMU's stepping adds.
        n2 = json.loads(json.dumps(net))
        s = n2.setdefault("solver", {})
        s.pop("output_points", None)
        s["output_interval"] = h
        s["rtol"] = s["atol"] = RTOL
        path = f"{out}/{tag}.json"
        json.dump(n2, open(path, "w"), indent=1)
        subprocess.run(["./target/debug/drivelink", "run", path, "--out", f"{out}/{tag}",
                        "--no-plots", "--no-report"], check=True, stdout=subprocess.DEVNULL)
        rows = list(csv.reader(open(f"{out}/{tag}/results.csv")))
        head, data = rows[0], [[float(v) for v in r] for r in rows[1:]]
        # Time -> the last native row at it (an event instant's right-hand value).
        native = {}
        for r in data:
            k = round(r[0] / h)
            if abs(r[0] - k * h) < 1e-9:
                native[k] = r
        for v in versions:
            # The FMU ignores the netlist's output grid: one export per model and version.
            fmu = f"{out}/{model}_tight.fmi{v}.fmu"
            if not os.path.exists(fmu):
                subprocess.run(["./target/debug/drivelink", "fmu", path, "--fmi", v, "--out", fmu],
                               check=True, stdout=subprocess.DEVNULL)
            t0 = time.time()
            res = simulate_fmu(fmu, fmi_type="CoSimulation", output_interval=h, stop_time=stop)
            wall = time.time() - t0
            worst, where, n = 0.0, "", 0
            for j, name in enumerate(head[1:], start=1):
                col = [r[j] for r in data]
                span = max(col) - min(col)
                scale = span if span > 0 else max(1.0, abs(col[0]))
                for i, row in enumerate(res):
                    k = round(row["time"] / h)
                    ref = native.get(k) if abs(row["time"] - k * h) < 1e-9 else None
                    if ref is None and i == len(res) - 1 and row["time"] >= data[-1][0] - 1e-9:
                        # A block stopped the run: FMI 3.0 fmpy stamps the values it
                        # stopped with at its next communication point, FMI 2.0 fmpy at
                        # fmi2LastSuccessfulTime (the stop time).
                        ref = data[-1]
                    if ref is None:
                        raise SystemExit(f"{tag} FMI {v}: no native row at t = {row['time']}")
                    e = abs(row[name] - ref[j]) / scale
                    n += 1
                    if not e <= worst:
                        worst, where = e, f"{name} at t = {row['time']:.6g} (fmu {row[name]!r}, run {ref[j]!r})"
            print(f"{tag} FMI {v}.0: {len(res)} communication points x {len(head) - 1} outputs, "
                  f"fmpy {wall:.2f} s, max |fmu - run| / range = {worst:.3e}"
                  + (f"  [{where}]" if worst > 0 else ""))
            worst_all = max(worst_all, worst)
            if not worst <= TOL:
                raise SystemExit(f"FAIL {tag} FMI {v}: {worst:.3e} > {TOL:g}")
print(f"fmi: all outputs within {TOL:g} of their range (worst {worst_all:.3e})")
PY
"$VENV/bin/python" - "$OUT" "$VERSIONS" ${FMI_ME_MODELS:-mech_clutch_lock full_car vd_brake_turn_abs vehicle_emergency_stop_abs} <<'PY'
# Model Exchange: fmpy's CVODE at rtol 1e-9 against the native run.
import csv, json, os, subprocess, sys, time
from collections import Counter
from fmpy import simulate_fmu

out = sys.argv[1]
versions = sys.argv[2].split()
TOL, EVENT_TOL, H = 1e-5, 1e-6, 0.01
RTOL = float(os.environ.get("FMI_RTOL", "1e-11"))
worst_all = 0.0
for model, v in [(m, v) for m in sys.argv[3:] for v in versions]:
    net = json.load(open(f"models/netlists/{model}.json"))
    stop = float(net.get("solver", {}).get("stop_time", 10))
    tag = f"{model}_me"
    n2 = json.loads(json.dumps(net))
    s = n2.setdefault("solver", {})
    s.pop("output_points", None)
    s["output_interval"] = H
    s["rtol"] = s["atol"] = RTOL
    path = f"{out}/{tag}.json"
    json.dump(n2, open(path, "w"), indent=1)
    if not os.path.exists(f"{out}/{tag}/results.csv"):  # once for both versions
        subprocess.run(["./target/debug/drivelink", "run", path, "--out", f"{out}/{tag}",
                        "--no-plots", "--no-report"], check=True, stdout=subprocess.DEVNULL)
    rows = list(csv.reader(open(f"{out}/{tag}/results.csv")))
    head, data = rows[0], [[float(v) for v in r] for r in rows[1:]]
    # Grid point -> the last row at it (an event instant's right-hand value), both sides.
    def on_grid(times):
        grid = {}
        for i, t in enumerate(times):
            k = round(t / H)
            if abs(t - k * H) < 1e-9:
                grid[k] = i
        return grid
    native = on_grid([r[0] for r in data])
    fmu = f"{out}/{model}_tight.fmi{v}.me.fmu"
    subprocess.run(["./target/debug/drivelink", "fmu", path, "--fmi", v, "--kind", "me",
                    "--out", fmu], check=True, stdout=subprocess.DEVNULL)
    t0 = time.time()
    res = simulate_fmu(fmu, fmi_type="ModelExchange", relative_tolerance=1e-9,
                       output_interval=H, stop_time=stop)
    wall = time.time() - t0
    mine = on_grid(list(res["time"]))
    missing = sorted(set(native) - set(mine))
    if missing:
        raise SystemExit(f"FAIL {tag} FMI {v}: no fmpy row at t = {missing[0] * H:g}")
    worst, where = 0.0, ""
    for j, name in enumerate(head[1:], start=1):
        col = [r[j] for r in data if r[j] == r[j]] or [0.0]
        span = max(col) - min(col)
        scale = span if span > 0 else max(1.0, abs(col[0]))
        for k, i in native.items():
            got, ref = float(res[name][mine[k]]), data[i][j]
            if got != got and ref != ref:
                continue  # undefined on both sides (a ratio at standstill)
            e = abs(got - ref) / scale
            if not e <= worst:
                worst, where = e, f"{name} at t = {k * H:.6g} (fmu {got!r}, run {ref!r})"
    # Event instants: fmpy records an event's left- and right-hand values at one time.
    # The initial event has one row, and a run a block stops ends at its last event,
    # whose right-hand row fmpy leaves out.
    instants = [t for t, n in Counter(res["time"].tolist()).items() if n > 1]
    instants += [float(res["time"][0]), float(res["time"][-1])]
    events = list(csv.DictReader(open(f"{out}/{tag}/events.csv")))
    clutch = [float(e["time"]) for e in events
              if e["kind"] in ("lock", "unlock", "engage", "free")]
    late = max((min(abs(t - u) for u in instants) if instants else float("inf")
                for t in clutch), default=0.0)
    print(f"{tag} FMI {v}.0: {len(native)} output points x {len(head) - 1} outputs, fmpy CVODE {wall:.2f} s, "
          f"max |fmu - run| / range = {worst:.3e}" + (f"  [{where}]" if worst > 0 else "")
          + f"; {len(clutch)} clutch events, worst |t_fmu - t_run| = {late:.3e} s")
    worst_all = max(worst_all, worst)
    if not worst <= TOL:
        raise SystemExit(f"FAIL {tag} FMI {v}: {worst:.3e} > {TOL:g}")
    if not late <= EVENT_TOL:
        raise SystemExit(f"FAIL {tag} FMI {v}: a clutch event {late:.3e} s off")
print(f"fmi ME: all outputs within {TOL:g} of their range (worst {worst_all:.3e}), "
      f"clutch events within {EVENT_TOL:g} s")
PY
# Inputs: a step input from fmpy into an exported lag, against the closed form.
DRIVELINK_CLI=./target/debug/drivelink "$VENV/bin/python" python/tests/test_fmi_inputs.py
DRIVELINK_CLI=./target/debug/drivelink "$VENV/bin/python" python/tests/test_fmi_tunable.py
# The example that runs the exported full car in fmpy next to `drivelink run` (docs/fmi.md).
"$VENV/bin/python" examples/fmi/full_car_fmpy.py --fmi "${VERSIONS%% *}" --out "$OUT/example"
