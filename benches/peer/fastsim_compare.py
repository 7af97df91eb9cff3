#!/usr/bin/env python3
"""FASTSim 3 against drivelink on UDDS and HWFET: the Renault Zoe (EV) and the Ford Fusion (conventional).

FASTSim 3 (`pip install fastsim`) runs its own vehicle files on its `udds.csv` and
`hwfet.csv`; drivelink runs the netlists rebuilt from those files' numbers with
`--set cycle=udds|hwfet`:

- `2022_Renault_Zoe_ZE50_R135.yaml` against `models/netlists/cycle_ev.json`: distance,
  battery energy at the terminals (kWh, net, discharge positive; FASTSim's
  `res.energy_out_electrical`), chemical energy (from the state of charge), Wh/km,
  traction energy (the positive power into the wheels), the machine's electrical energy
  split into motoring and regeneration;
- `2012_Ford_Fusion.yaml` against `models/netlists/cycle_conv.json`: distance, fuel (kg,
  FASTSim's `fc.energy_fuel` over its fuel's specific energy), fuel per km, l/100 km at
  0.749 kg/l, traction energy and per km, the engine's output energy (propulsion, without
  the accessories), the trace error.

Each table gives the difference to FASTSim in % and the run time of each: FASTSim's
`SimDrive.walk()` and drivelink's solver time (`summary.json` `wall_time_s`) and the whole
CLI process.

Usage:
    python3 benches/peer/fastsim_compare.py target/release/drivelink [--repeat N]
        [--vehicle ev|conv|both] [--write-fixture PATH]

`--write-fixture` (with `--vehicle ev` or `conv`) records FASTSim's figures (per cycle:
for the Zoe distance, battery energy and Wh/km, traction per km; for the Fusion distance,
fuel, fuel per km, traction per km), with the FASTSim version and this command, as the
peer reference `tests/cycle_ev.rs` and `tests/cycle_conv.rs` check drivelink against
(`tests/fixtures/fastsim_zoe_2022.json`, `tests/fixtures/fastsim_fusion_2012.json`).
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
CONV_NETLIST = ROOT / "models" / "netlists" / "cycle_conv.json"
CONV_VEHICLE = "2012_Ford_Fusion.yaml"
GASOLINE_KG_PER_L = 0.749
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


def trace_traction(cycle: str, vehicle: str = VEHICLE) -> float:
    """Traction energy (kWh) of the cycle's trace followed exactly, in continuous time.

    FASTSim's vehicle file and cycle, FASTSim's road-load physics (m·a, rolling resistance
    while moving with its g = 9.8 m/s², drag at `Air.get_density()`, the wheels' spin-up),
    the speed linear between the breakpoints and
    ∫ max(P, 0) dt on a 1 ms grid: neither FASTSim's 1 s steps nor a driver's corrections.
    """
    vd = fsim.Vehicle.from_resource(vehicle).to_dict()
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


def map_regen_variant(tmp: Path) -> Path:
    """cycle_ev.json regenerating through the machine's efficiency table, written into `tmp`.

    The shipped netlist regenerates at 0.84 (`regen_efficiency`), as FASTSim 3.1.0 does:
    it converts every regenerated kW at its table's value at zero power fraction, whatever
    the power (pwr_elec/pwr_mech = 0.84 at every braking step of its history). The variant
    drops `regen_efficiency`, so the table serves both quadrants at |P|/P_max.
    """
    net = json.loads(NETLIST.read_text())
    net["name"] = "cycle_ev_map_regen"
    for b in net["blocks"]:
        if b["name"] == "motor":
            b["params"].pop("regen_efficiency", None)
    path = tmp / "cycle_ev_map_regen.json"
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
            rows = [(float(r["time"]), float(r["motor.p_elec"])) for r in csv.DictReader(f)]
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


def fastsim_conv_run(cycle: str, repeat: int) -> dict:
    """Run FASTSim's Ford Fusion on `cycle`; fuel in kg, energies in kWh, the fastest walk in s."""
    best = float("inf")
    for _ in range(repeat):
        veh = fsim.Vehicle.from_resource(CONV_VEHICLE)
        veh.set_save_interval(1)
        sd = fsim.SimDrive(veh, fsim.Cycle.from_resource(f"{cycle}.csv"))
        t0 = time.perf_counter()
        sd.walk()
        best = min(best, time.perf_counter() - t0)
    d = sd.to_dict()
    v = d["veh"]
    conv = v["pt_type"]["Conv"]
    hist = v["history"]
    times = hist["time_seconds"]
    dts = [0.0] + [b - a for a, b in zip(times, times[1:])]
    dist_km = v["state"]["dist_meters"] / 1000.0
    fuel_kg = conv["fc"]["state"]["energy_fuel_joules"] / conv["fs"]["specific_energy_joules_per_kilogram"]
    traction = sum(max(p, 0.0) * dt for p, dt in zip(hist["pwr_tractive_watts"], dts)) / KWH
    return {
        "distance_km": dist_km,
        "fuel_kg": fuel_kg,
        "fuel_g_per_km": 1000.0 * fuel_kg / dist_km,
        "l_per_100km": 100.0 * fuel_kg / GASOLINE_KG_PER_L / dist_km,
        "traction_kwh": traction,
        "traction_wh_per_km": 1000.0 * traction / dist_km,
        "engine_kwh": conv["fc"]["state"]["energy_prop_joules"] / KWH,
        "trace_error_max_kmh": max(
            abs(a - b) * 3.6
            for a, b in zip(hist["speed_ach_meters_per_second"], d["cyc"]["speed_meters_per_second"])
        ),
        # the fuel power of the first step the car stands still (the accessories at idle)
        "idle_fuel_power_w": next(
            p for p, v, t in zip(conv["fc"]["history"]["pwr_fuel_watts"],
                                 hist["speed_ach_meters_per_second"], times) if t > 0 and v == 0.0
        ),
        "wall_s": best,
    }


def drivelink_conv_run(binary: str, cycle: str, repeat: int) -> dict:
    """Run cycle_conv.json with `--set cycle=CYCLE`; the fastest of `repeat` runs."""
    best_solver = best_process = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            t0 = time.perf_counter()
            subprocess.run(
                [binary, "run", str(CONV_NETLIST), "--set", f"cycle={cycle}", "--out", tmp,
                 "--no-plots", "--no-report"],
                check=True, stdout=subprocess.DEVNULL,
            )
            best_process = min(best_process, time.perf_counter() - t0)
            summary = json.loads((Path(tmp) / "summary.json").read_text())
            best_solver = min(best_solver, summary["wall_time_s"])
    m = summary["metrics"]
    return {
        "distance_km": m["distance_km"],
        "fuel_kg": m["fuel_kg"],
        "fuel_g_per_km": m["fuel_g_per_km"],
        "l_per_100km": m["l_per_100km"],
        "traction_kwh": m["traction_energy_kwh"],
        "traction_wh_per_km": 1000.0 * m["traction_energy_kwh"] / m["distance_km"],
        "engine_kwh": m["engine_energy_kwh"],
        "trace_error_max_kmh": m["trace_error_max_kmh"],
        "wall_s": best_solver,
        "process_s": best_process,
        "status": summary["status"],
    }


CONV_ROWS = [
    ("distance_km", "distance (km)", "{:.3f}"),
    ("fuel_kg", "fuel (kg)", "{:.4f}"),
    ("fuel_g_per_km", "fuel per km (g/km)", "{:.3f}"),
    ("l_per_100km", "l/100 km (0.749 kg/l)", "{:.3f}"),
    ("traction_kwh", "traction energy (kWh)", "{:.4f}"),
    ("traction_wh_per_km", "traction energy per km (Wh/km)", "{:.2f}"),
    ("engine_kwh", "engine output, propulsion (kWh)", "{:.4f}"),
    ("trace_error_max_kmh", "max |v - v_ref| (km/h)", "{:.2f}"),
]


def pct(a: float, b: float) -> str:
    return f"{100.0 * (a - b) / b:+.2f} %" if b else "—"


def ev_table(binary: str, repeat: int, fixture: str | None) -> None:
    print(f"FASTSim {fsim.__version__}, vehicle {VEHICLE}; drivelink {NETLIST.relative_to(ROOT)}")
    print()
    print("| cycle | quantity | FASTSim 3 | drivelink | difference | drivelink, regen from the table | difference |")
    print("|---|---|---|---|---|---|---|")
    record = {}
    with tempfile.TemporaryDirectory() as tmp:
        variant = map_regen_variant(Path(tmp))
        for cycle in ("udds", "hwfet"):
            fs = fastsim_run(cycle, repeat)
            dl = drivelink_run(binary, cycle, repeat)
            dv = drivelink_run(binary, cycle, 1, variant)
            for key, label, fmt in ROWS:
                f, d, w = (fmt.format(x[key]) for x in (fs, dl, dv))
                print(f"| {cycle} | {label} | {f} | {d} | {pct(dl[key], fs[key])} | {w} | {pct(dv[key], fs[key])} |")
            exact = trace_traction(cycle)
            print(f"| {cycle} | traction energy of the exact trace (kWh) | {exact:.4f} | {exact:.4f} | "
                  f"FASTSim {pct(fs['traction_kwh'], exact)}, drivelink {pct(dl['traction_kwh'], exact)} | | |")
            print(f"| {cycle} | run time (ms) | {1e3 * fs['wall_s']:.1f} (walk) | "
                  f"{1e3 * dl['wall_s']:.1f} (solver), {1e3 * dl['process_s']:.1f} (process) | | | |")
            record[cycle] = {
                "distance_km": fs["distance_km"],
                "battery_kwh": fs["battery_kwh"],
                "wh_per_km": fs["wh_per_km"],
                "traction_wh_per_km": 1e3 * fs["traction_kwh"] / fs["distance_km"],
            }
    if fixture:
        write_fixture(fixture, VEHICLE, "ev", repeat, record,
                      "fsim.SimDrive(fsim.Vehicle.from_resource(vehicle), fsim.Cycle.from_resource(cycle + '.csv')).walk(); "
                      "battery_kwh = res.energy_out_electrical (net, discharge positive) in kWh; "
                      "traction = sum of max(pwr_tractive, 0)·dt")


def write_fixture(path: str, vehicle: str, kind: str, repeat: int, record: dict, how: str) -> None:
    """FASTSim's figures as the peer reference a test checks drivelink against."""
    out = {
        "peer": f"FASTSim {fsim.__version__} (pip install fastsim=={fsim.__version__})",
        "vehicle": vehicle,
        "command": "python3 benches/peer/fastsim_compare.py target/release/drivelink "
                   f"--vehicle {kind} --repeat {repeat} --write-fixture {path}",
        "how": how,
        "cycles": record,
    }
    Path(path).write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nFASTSim's figures written to {path}")


def conv_table(binary: str, repeat: int, fixture: str | None) -> None:
    print(f"FASTSim {fsim.__version__}, vehicle {CONV_VEHICLE}; drivelink {CONV_NETLIST.relative_to(ROOT)}")
    print()
    print("| cycle | quantity | FASTSim 3 | drivelink | difference |")
    print("|---|---|---|---|---|")
    record = {}
    for cycle in ("udds", "hwfet"):
        fs = fastsim_conv_run(cycle, repeat)
        dl = drivelink_conv_run(binary, cycle, repeat)
        for key, label, fmt in CONV_ROWS:
            print(f"| {cycle} | {label} | {fmt.format(fs[key])} | {fmt.format(dl[key])} | {pct(dl[key], fs[key])} |")
        exact = trace_traction(cycle, CONV_VEHICLE)
        print(f"| {cycle} | traction energy of the exact trace (kWh) | {exact:.4f} | {exact:.4f} | "
              f"FASTSim {pct(fs['traction_kwh'], exact)}, drivelink {pct(dl['traction_kwh'], exact)} |")
        print(f"| {cycle} | run time (ms) | {1e3 * fs['wall_s']:.1f} (walk) | "
              f"{1e3 * dl['wall_s']:.1f} (solver), {1e3 * dl['process_s']:.1f} (process) | |")
        record[cycle] = {k: fs[k] for k in ("distance_km", "fuel_kg", "fuel_g_per_km",
                                            "traction_wh_per_km", "idle_fuel_power_w")}
    if fixture:
        write_fixture(fixture, CONV_VEHICLE, "conv", repeat, record,
                      "fsim.SimDrive(fsim.Vehicle.from_resource(vehicle), fsim.Cycle.from_resource(cycle + '.csv')).walk(); "
                      "fuel_kg = fc.energy_fuel / fs.specific_energy_joules_per_kilogram; traction = sum of max(pwr_tractive, 0)·dt; "
                      "idle_fuel_power_w = fc.history.pwr_fuel at the first step with the car standing")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary", help="path of the drivelink release binary")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each; the fastest is timed")
    ap.add_argument("--vehicle", choices=("ev", "conv", "both"), default="both")
    ap.add_argument("--write-fixture", metavar="PATH",
                    help="record FASTSim's figures of the one --vehicle (ev or conv) as JSON")
    args = ap.parse_args()
    if args.write_fixture and args.vehicle == "both":
        ap.error("--write-fixture records one vehicle: give --vehicle ev or --vehicle conv")
    t0 = time.perf_counter()
    if args.vehicle in ("ev", "both"):
        ev_table(args.binary, args.repeat, args.write_fixture)
        print()
    if args.vehicle in ("conv", "both"):
        conv_table(args.binary, args.repeat, args.write_fixture)
        print()
    print(f"whole comparison: {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
