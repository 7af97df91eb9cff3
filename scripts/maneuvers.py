#!/usr/bin/env python3
"""Writes the standard-maneuver netlists (models/netlists/vd_iso*.json, vd_fmvss126*.json,
vd_brake_in_turn.json, vd_tcs_split_mu_launch.json, vd_cruise_hill.json) from one car.

Every maneuver drives the same car: a 1500 kg sedan (RigidBody `car`, WheelColliders `fl`,
`fr`, `rl`, `rr` with the Magic Formula tire of docs/vehicle.md without its ply-steer and
conicity shifts, a Steering block with Ackermann geometry, rear-wheel drive with equal
torque on both rear hubs as an open differential gives it, brakes on each hub). The
netlists are plain JSON and are committed; this script is how they were written, so a
change to the car is made once, here:

    python3 scripts/maneuvers.py            # rewrites the netlists in models/netlists/
"""

import copy
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "models", "netlists")

# The Magic Formula set of docs/vehicle.md (205/60R15 at 4000 N after Pacejka's MF-Tyre
# example), with the shifts (ply steer, conicity: phx*, phy*, pvx*, pvy*, rhx1, rhy1,
# rby3) set to 0 so a car steered straight runs straight.
MF = {
    "fz0": 4000,
    "pcx1": 1.685, "pdx1": 1.210, "pdx2": -0.037, "pex1": 0.344, "pex2": 0.095,
    "pex3": -0.020, "pex4": 0, "pkx1": 21.51, "pkx2": -0.163, "pkx3": 0.245,
    "rbx1": 12.35, "rbx2": -10.77, "rcx1": 1.092,
    "pcy1": 1.193, "pdy1": 0.990, "pdy2": -0.145, "pey1": -1.003, "pey2": -0.537,
    "pey3": 0, "pky1": -14.95, "pky2": 2.130,
    "rby1": 6.461, "rby2": 4.196, "rcy1": 1.081,
}

CAR_PARAMETERS = {
    "m": "1500 kg",
    "a": "1.2 m",
    "b": "1.5 m",
    "track": "1.6 m",
    "k_spring": "30000 N/m^2",
    "radius": "0.31 m",
    "steering_ratio": 16,
    "drive_torque": "1200 N*m",
    "brake_torque": "2500 N*m",
    "brake_front_share": 0.65,
}

LOG = [
    "car.x", "car.y", "car.yaw", "car.u", "car.v", "car.r", "car.ax", "car.ay", "car.beta",
    "car.roll", "car.speed",
    "fl.steer", "fr.steer",
]
for w in ("fl", "fr", "rl", "rr"):
    LOG += [f"{w}.fz", f"{w}.fx", f"{w}.fy", f"{w}.forward_slip", f"{w}.w"]


def wheel(name, front, left, rear_pdy1=None):
    mf = dict(MF)
    if rear_pdy1 is not None and not front:
        mf["pdy1"] = rear_pdy1
    return {
        "name": name,
        "type": "WheelCollider",
        "params": {
            "center": ["a" if front else "-b", "track/2" if left else "-track/2", "-0.1 m"],
            "radius": "radius",
            "suspension_distance": 0.3,
            "target_position": 0.3,
            "spring": "k_spring*b" if front else "k_spring*a",
            "damper": 4000,
            "tire": "magic_formula",
            "mf": mf,
        },
    }


def car(speed, rear_pdy1=None):
    """Blocks and connections of the car: steering input at `steering.wheel_angle`
    (steering-wheel angle, rad), drive and brake commands [0, 1] at `drive.u` and
    `pedal.u`; wheel brakes at `brake_fl.y` ... unless a controller takes them."""
    blocks = [
        {"name": "car", "type": "RigidBody",
         "params": {"m": "m", "inertia": [550, 2400, 2600], "z0": "0.55 m", "v0": speed}},
        wheel("fl", True, True, rear_pdy1),
        wheel("fr", True, False, rear_pdy1),
        wheel("rl", False, True, rear_pdy1),
        wheel("rr", False, False, rear_pdy1),
        {"name": "aero", "type": "Aero", "params": {"drag_area": 0.7, "lift_area": 0.3}},
        {"name": "steering", "type": "Steering",
         "params": {"ratio": "steering_ratio", "wheelbase": "a + b", "track": "track"}},
        # Rear-wheel drive: each rear hub gets half the drive torque (an open differential's
        # split, without its shaft dynamics).
        {"name": "drive", "type": "Gain", "params": {"k": "drive_torque/2"}},
        {"name": "motor_rl", "type": "TorqueSource"},
        {"name": "motor_rr", "type": "TorqueSource"},
        # Brake pedal [0, 1] to wheel brake torques.
        {"name": "pedal", "type": "Gain", "params": {"k": 1}},
        {"name": "brake_front", "type": "Gain",
         "params": {"k": "brake_torque*brake_front_share"}},
        {"name": "brake_rear", "type": "Gain",
         "params": {"k": "brake_torque*(1 - brake_front_share)"}},
    ]
    connections = [
        ["car.frame", "fl.body", "fr.body", "rl.body", "rr.body", "aero.frame"],
        ["steering.left", "fl.steer"],
        ["steering.right", "fr.steer"],
        ["drive.y", "motor_rl.tau", "motor_rr.tau"],
        ["motor_rl.flange", "rl.hub"],
        ["motor_rr.flange", "rr.hub"],
        ["pedal.y", "brake_front.u", "brake_rear.u"],
    ]
    return blocks, connections


def brakes_direct():
    """The pedal's torques straight to the four wheel brakes."""
    return [
        ["brake_front.y", "fl.brake", "fr.brake"],
        ["brake_rear.y", "rl.brake", "rr.brake"],
    ]


def netlist(name, description, parameters, blocks, connections, solver, log, scopes,
            metrics=None):
    n = {
        "drivelink": 1,
        "name": name,
        "description": description,
        "parameters": {**CAR_PARAMETERS, **parameters},
        "solver": solver,
        "blocks": blocks,
        "connections": connections,
        "log": log,
        "scopes": scopes,
    }
    if metrics:
        n["metrics"] = metrics
    return n


def write(n):
    path = os.path.join(OUT, n["name"] + ".json")
    with open(path, "w") as f:
        json.dump(n, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", os.path.relpath(path, ROOT))


def step_steer():
    blocks, conns = car("speed")
    blocks += [
        {"name": "steer_input", "type": "SignalBuilder",
         "params": {"points": [[0, 0], [1.0, 0], [1.15, "delta_sw"], [10, "delta_sw"]]}},
        {"name": "throttle", "type": "Constant", "params": {"value": 0}},
        {"name": "no_brake", "type": "Constant", "params": {"value": 0}},
    ]
    conns += brakes_direct() + [
        ["steer_input.y", "steering.wheel_angle"],
        ["throttle.y", "drive.u"],
        ["no_brake.y", "pedal.u"],
    ]
    return netlist(
        "vd_iso7401_step_steer",
        "ISO 7401 step steer at 80 km/h: the steering wheel turns to delta_sw in rise (0.15 s) at t = 1 s and is held.",
        {"speed": "80 km/h", "delta_sw": "20 deg"},
        blocks, conns,
        {"method": "dopri5", "stop_time": 5.0, "rtol": 1e-8, "atol": 1e-9, "output_interval": 0.01},
        LOG, [
            {"name": "yaw_rate", "title": "Yaw rate and road-wheel steer",
             "panels": [[{"signal": "car.r", "unit": "deg/s", "label": "yaw rate"}],
                        [{"signal": "fl.steer", "unit": "deg", "label": "left"},
                         {"signal": "fr.steer", "unit": "deg", "label": "right"}]]},
        ])


def main():
    for n in [step_steer()]:
        write(n)


if __name__ == "__main__":
    sys.exit(main())
