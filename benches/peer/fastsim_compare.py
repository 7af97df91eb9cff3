#!/usr/bin/env python3
"""The Renault Zoe ZE50 R135 on UDDS and HWFET: FASTSim 3 against drivelink.

FASTSim 3 (`pip install fastsim`) runs its own vehicle file
`2022_Renault_Zoe_ZE50_R135.yaml` on its `udds.csv` and `hwfet.csv`; drivelink runs
`models/netlists/cycle_ev.json` (rebuilt from that file's numbers) with
`--set cycle=udds|hwfet`. The script prints one table: distance, battery energy at the
terminals (kWh, net, discharge positive; FASTSim's `res.energy_out_electrical`),
chemical energy (from the state of charge), Wh/km, traction energy (the positive power into
the wheels), the machine's electrical energy split into motoring and regeneration, the
difference to FASTSim in %, and the run time of each: FASTSim's `SimDrive.walk()` and
drivelink's solver time (`summary.json` `wall_time_s`) and the whole CLI process.

Usage:
    python3 benches/peer/fastsim_compare.py target/release/drivelink [--repeat N]
"""

import argparse
import csv
import json
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import fastsim as fsim
import numpy as np

warnings.filterwarnings("ignore", category=DeprecationWarning)

ROOT = Path(__file__).resolve().parents[2]
NETLIST = ROOT / "models" / "netlists" / "cycle_ev.json"
VEHICLE = "2022_Renault_Zoe_ZE50_R135.yaml"
KWH = 3.6e6


def fastsim_run(cycle: str, repeat: int) -> dict:
    """Run FASTSim on `cycle`; energies in kWh, the fastest of `repeat` walks in s."""
    best = float("inf")
    for _ in range(repeat):
        veh = fsim.Vehicle.from_resource(VEHICLE)
        veh.set_save_interval(1)
        sd = fsim.SimDrive(veh, fsim.Cycle.from_resource(f"{cycle}.csv"))
        t0 = time.perf_counter()
        sd.walk()
        best = min(best, time.perf_counter() - t0)
    d = sd.to_dict()
    v = d["veh"]
    bev = v["pt_type"]["BEV"]
    hist = v["history"]
    times = hist["time_seconds"]
    dts = [0.0] + [b - a for a, b in zip(times, times[1:])]
    pos = lambda xs: sum(max(x, 0.0) * dt for x, dt in zip(xs, dts)) / KWH  # noqa: E731
    neg = lambda xs: sum(min(x, 0.0) * dt for x, dt in zip(xs, dts)) / KWH  # noqa: E731
    p_em = bev["em"]["history"]["pwr_elec_prop_in_watts"]
    res = bev["res"]["state"]
    dist_km = v["state"]["dist_meters"] / 1000.0
    e_bat = res["energy_out_electrical_joules"] / KWH
    return {
        "distance_km": dist_km,
        "battery_kwh": e_bat,
        "chemical_kwh": res["energy_out_chemical_joules"] / KWH,
        "wh_per_km": 1000.0 * e_bat / dist_km,
        "traction_kwh": pos(hist["pwr_tractive_watts"]),
        "motoring_kwh": pos(p_em),
        "regen_kwh": -neg(p_em),
        "trace_error_max_kmh": max(
            abs(a - b) * 3.6
            for a, b in zip(hist["speed_ach_meters_per_second"], d["cyc"]["speed_meters_per_second"])
        ),
        "wall_s": best,
    }


def trace_traction(cycle: str) -> float:
    """Traction energy (kWh) of the cycle's trace followed exactly, in continuous time.

    FASTSim's vehicle file and cycle, FASTSim's road-load physics (m·a, rolling resistance
    while moving with its g = 9.8 m/s², drag at `Air.get_density()`, the wheels' spin-up),
    the speed linear between the breakpoints and
    ∫ max(P, 0) dt on a 1 ms grid: neither FASTSim's 1 s steps nor a driver's corrections.
    """
    vd = fsim.Vehicle.from_resource(VEHICLE).to_dict()
    ch, m = vd["chassis"], vd["mass_kilograms"]
    cyc = fsim.Cycle.from_resource(f"{cycle}.csv").to_dict()
    t = np.array(cyc["time_seconds"])
    v = np.array(cyc["speed_meters_per_second"])
    h = 1e-3
    tf = np.arange(t[0], t[-1], h) + h / 2
    seg = np.searchsorted(t, tf) - 1
    acc = (v[seg + 1] - v[seg]) / (t[seg + 1] - t[seg])
    vf = v[seg] + acc * (tf - t[seg])
    j_wheels = ch["num_wheels"] * ch["wheel_inertia_kilogram_square_meters"]
    force = (
        (m + j_wheels / ch["wheel_radius_meters"] ** 2) * acc
        + ch["wheel_rr_coef"] * m * 9.8 * (vf > 0)
        + 0.5 * fsim.Air.get_density() * ch["drag_coef"] * ch["frontal_area_square_meters"] * vf**2
    )
    return float(np.sum(np.maximum(force * vf, 0.0)) * h / KWH)


def fastsim_regen_variant(tmp: Path) -> Path:
    """cycle_ev.json with FASTSim 3.1's regeneration efficiency, written into `tmp`.

    FASTSim 3.1.0 converts every regenerated kW at 0.84 (its efficiency table's value at
    zero power fraction, whatever the power: pwr_elec/pwr_mech = 0.84 at every braking
    step of its history), where cycle_ev.json uses the table at |P|/P_max in both
    quadrants. The variant drives with the machine `motor` (regen off) and brakes with a
    second machine `gen` of efficiency 0.84 on the same shaft.
    """
    net = json.loads(NETLIST.read_text())
    net["name"] = "cycle_ev_fastsim_regen"
    blocks = [b for b in net["blocks"] if b["name"] not in ("motor_cmd", "bus")]
    for b in blocks:
        if b["name"] == "motor":
            b["params"]["regen"] = False
            gen = {"name": "gen", "type": "ElectricMachine",
                   "params": {**{k: b["params"][k] for k in ("max_torque", "max_power")},
                              "efficiency": 0.84}}
    blocks += [gen,
               {"name": "neg", "type": "Gain", "params": {"k": -1}},
               {"name": "bus3", "type": "Sum", "params": {"signs": "+++"}}]
    rewired = {
        "driver.accel": ["driver.accel", "motor.cmd"],
        "regen.y": ["regen.y", "neg.u", "friction_cmd.u2"],
        "motor.flange": ["motor.flange", "gen.flange", "gear.flange_a"],
    }
    conns = []
    for c in net["connections"]:
        if c[0] in rewired:
            conns.append(rewired[c[0]])
        elif not any(p.startswith(("bus.", "motor_cmd.")) for p in c):
            conns.append(c)
    conns += [["neg.y", "gen.cmd"], ["motor.p_elec", "bus3.u1"], ["gen.p_elec", "bus3.u2"],
              ["aux.y", "bus3.u3"], ["bus3.y", "battery.p"]]
    net["blocks"], net["connections"] = blocks, conns
    net["log"] = net["log"] + ["gen.p_elec"]
    path = tmp / "cycle_ev_fastsim_regen.json"
    path.write_text(json.dumps(net))
    return path


def drivelink_run(binary: str, cycle: str, repeat: int, netlist: Path = NETLIST) -> dict:
    """Run a cycle netlist with `--set cycle=CYCLE`; the fastest of `repeat` runs."""
    best_solver = best_process = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            t0 = time.perf_counter()
            subprocess.run(
                [binary, "run", str(netlist), "--set", f"cycle={cycle}", "--out", tmp,
                 "--no-plots", "--no-report"],
                check=True, stdout=subprocess.DEVNULL,
            )
            best_process = min(best_process, time.perf_counter() - t0)
            summary = json.loads((Path(tmp) / "summary.json").read_text())
            best_solver = min(best_solver, summary["wall_time_s"])
        motoring = regen = 0.0
        with open(Path(tmp) / "results.csv", newline="") as f:
            rows = [(float(r["time"]), float(r["motor.p_elec"]) + float(r.get("gen.p_elec", 0)))
                    for r in csv.DictReader(f)]
        for (t0, p0), (t1, p1) in zip(rows, rows[1:]):
            # trapezoids on the output grid (event instants appear twice: dt = 0)
            motoring += 0.5 * (max(p0, 0.0) + max(p1, 0.0)) * (t1 - t0)
            regen -= 0.5 * (min(p0, 0.0) + min(p1, 0.0)) * (t1 - t0)
    m = summary["metrics"]
    return {
        "distance_km": m["distance_km"],
        "battery_kwh": m["battery_energy_kwh"],
        "chemical_kwh": m["battery_chemical_kwh"],
        "wh_per_km": m["wh_per_km"],
        "traction_kwh": m["traction_energy_kwh"],
        "motoring_kwh": motoring / KWH,
        "regen_kwh": regen / KWH,
        "trace_error_max_kmh": m["trace_error_max_kmh"],
        "wall_s": best_solver,
        "process_s": best_process,
        "status": summary["status"],
    }


ROWS = [
    ("distance_km", "distance (km)", "{:.3f}"),
    ("battery_kwh", "battery energy, terminals (kWh)", "{:.4f}"),
    ("chemical_kwh", "battery energy, chemical (kWh)", "{:.4f}"),
    ("wh_per_km", "Wh/km (terminals)", "{:.1f}"),
    ("traction_kwh", "traction energy (kWh)", "{:.4f}"),
    ("motoring_kwh", "machine electrical, motoring (kWh)", "{:.4f}"),
    ("regen_kwh", "machine electrical, regenerated (kWh)", "{:.4f}"),
    ("trace_error_max_kmh", "max |v - v_ref| (km/h)", "{:.2f}"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary", help="path of the drivelink release binary")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each; the fastest is timed")
    args = ap.parse_args()
    print(f"FASTSim {fsim.__version__}, vehicle {VEHICLE}; drivelink {NETLIST.relative_to(ROOT)}")
    print()
    print("| cycle | quantity | FASTSim 3 | drivelink | difference | drivelink, regen at 0.84 | difference |")
    print("|---|---|---|---|---|---|---|")
    pct = lambda a, b: f"{100.0 * (a - b) / b:+.2f} %" if b else "—"  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        variant = fastsim_regen_variant(Path(tmp))
        for cycle in ("udds", "hwfet"):
            fs = fastsim_run(cycle, args.repeat)
            dl = drivelink_run(args.binary, cycle, args.repeat)
            dv = drivelink_run(args.binary, cycle, 1, variant)
            for key, label, fmt in ROWS:
                f, d, w = (fmt.format(x[key]) for x in (fs, dl, dv))
                print(f"| {cycle} | {label} | {f} | {d} | {pct(dl[key], fs[key])} | {w} | {pct(dv[key], fs[key])} |")
            exact = trace_traction(cycle)
            print(f"| {cycle} | traction energy of the exact trace (kWh) | {exact:.4f} | {exact:.4f} | "
                  f"FASTSim {pct(fs['traction_kwh'], exact)}, drivelink {pct(dl['traction_kwh'], exact)} | | |")
            print(f"| {cycle} | run time (ms) | {1e3 * fs['wall_s']:.1f} (walk) | "
                  f"{1e3 * dl['wall_s']:.1f} (solver), {1e3 * dl['process_s']:.1f} (process) | | | |")


if __name__ == "__main__":
    main()
