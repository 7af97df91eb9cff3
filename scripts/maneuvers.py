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

import json
import math
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
    "damper": "4000 N*s/m",
    "radius": "0.31 m",
    "steering_ratio": 16,
    "drive_torque": "1500 N*m",
    "brake_torque": "4000 N*m",
    "brake_front_share": 0.7,
    "rear_bar_stiffness": "20000 N/m",
}

# The rear tires are stiffer in cornering (a wider rear tire: pky1 -20 against -14.95),
# which gives the car a passenger car's understeer (about 1.5 deg/g); their peak friction
# is a little lower (pdy1 0.95), so at the limit the rear lets go first.
MF_REAR = {"pky1": -20.0, "pdy1": 0.95}


def understeer_gradient():
    """The car's single-track understeer gradient (rad per m/s^2) from the tires'
    cornering stiffness at the static loads: K = m/L·(b/C_f − a/C_r), the ESC's
    reference."""
    m, a, b, g = 1500.0, 1.2, 1.5, 9.80665
    big_l = a + b

    def ky(fz, pky1):
        return abs(pky1) * MF["fz0"] * math.sin(2 * math.atan(fz / (MF["pky2"] * MF["fz0"])))

    c_f = 2 * ky(m * g * b / big_l / 2, MF["pky1"])
    c_r = 2 * ky(m * g * a / big_l / 2, MF_REAR["pky1"])
    return m / big_l * (b / c_f - a / c_r)


K_CAR = round(understeer_gradient(), 6)

LOG = [
    "car.x", "car.y", "car.yaw", "car.u", "car.v", "car.r", "car.ax", "car.ay", "car.beta",
    "car.roll", "car.speed",
    "fl.steer", "fr.steer",
]
for w in ("fl", "fr", "rl", "rr"):
    LOG += [f"{w}.fz", f"{w}.fx", f"{w}.fy", f"{w}.forward_slip", f"{w}.w"]

WHEELS = ("fl", "fr", "rl", "rr")


def wheel(name, front, left):
    mf = dict(MF) if front else {**MF, **MF_REAR}
    return {
        "name": name,
        "type": "WheelCollider",
        "params": {
            "center": ["a" if front else "-b", "track/2" if left else "-track/2", "-0.1 m"],
            "radius": "radius",
            "suspension_distance": 0.3,
            "target_position": 0.3,
            "spring": "k_spring*b" if front else "k_spring*a",
            "damper": "damper",
            "tire": "magic_formula",
            "mf": mf,
        },
    }


class Car:
    """The car's blocks and connections, with the ends a maneuver wires:
    `steer_in` (steering-wheel angle, rad), `throttle_in` [0, 1], the wheel brakes (each
    wheel's brake input is driven by `brake_src[w]`, the pedal's torque by default)."""

    def __init__(self, speed):
        self.blocks = [
            {"name": "car", "type": "RigidBody",
             # At its static height: each wheel's compression is target_position·0.3 m
             # plus its share of the weight over its spring (k_spring·b front, k_spring·a
             # rear: the same for all four), the mounts 0.1 m below the centre of mass.
             "params": {"m": "m", "inertia": [550, 2400, 2600], "v0": speed,
                        "z0": "0.1 m + 0.3 m + radius - 0.3*0.3 m - m*9.80665 m/s^2/(2*(a + b)*k_spring)"}},
            wheel("fl", True, True),
            wheel("fr", True, False),
            wheel("rl", False, True),
            wheel("rr", False, False),
            {"name": "aero", "type": "Aero", "params": {"drag_area": 0.7, "lift_area": 0.3}},
            # A rear anti-roll bar: with the rear carrying more of the lateral load
            # transfer, the understeer gradient stays nearly constant up to 0.4 g (the
            # front's loss of cornering stiffness to load transfer and tire saturation is
            # balanced by the rear's).
            {"name": "rear_bar", "type": "AntiRollBar",
             "params": {"stiffness": "rear_bar_stiffness", "track": "track"}},
            {"name": "steering", "type": "Steering",
             "params": {"ratio": "steering_ratio", "wheelbase": "a + b", "track": "track"}},
            # Rear-wheel drive: the drive torque on a propeller shaft into an open
            # differential (ratio 1: drive_torque is the torque at the wheels).
            {"name": "drive", "type": "Gain", "params": {"k": "drive_torque"}},
            {"name": "motor", "type": "TorqueSource"},
            {"name": "prop_shaft", "type": "Inertia",
             "params": {"J": "0.1 kg*m^2", "w0": f"({speed})/radius"}},
            {"name": "diff", "type": "Differential", "params": {"type": "open", "gear_ratio": 1}},
            # Brake pedal [0, 1] to wheel brake torques.
            {"name": "brake_front", "type": "Gain",
             "params": {"k": "brake_torque*brake_front_share/2"}},
            {"name": "brake_rear", "type": "Gain",
             "params": {"k": "brake_torque*(1 - brake_front_share)/2"}},
        ]
        self.connections = [
            ["car.frame", "fl.body", "fr.body", "rl.body", "rr.body", "aero.frame",
             "rear_bar.body"],
            ["rl.compression", "rear_bar.c_left"], ["rr.compression", "rear_bar.c_right"],
            ["rear_bar.left", "rl.bar_force"], ["rear_bar.right", "rr.bar_force"],
            ["steering.left", "fl.steer"],
            ["steering.right", "fr.steer"],
            ["drive.y", "motor.tau"],
            ["motor.flange", "prop_shaft.flange", "diff.input"],
            ["diff.left", "rl.hub"],
            ["diff.right", "rr.hub"],
        ]
        self.brake_src = {"fl": "brake_front.y", "fr": "brake_front.y",
                          "rl": "brake_rear.y", "rr": "brake_rear.y"}
        self.steer_src = None
        self.throttle_in = "drive.u"
        self.pedal_in = ["brake_front.u", "brake_rear.u"]

    def steer_from(self, src):
        """Steer with the steering-wheel angle `src` (rad)."""
        self.steer_src = src
        self.wire([src, "steering.wheel_angle"])

    def add(self, *blocks):
        self.blocks += list(blocks)

    def wire(self, *lines):
        self.connections += [list(l) for l in lines]

    def speed_driver(self, v_ref_src, throttle=True, brake=True, u0=0):
        """A LongitudinalDriver holding `v_ref_src` (m/s) with car.u: accel to the
        drive, brake to the pedal (each unless told otherwise)."""
        self.add({"name": "driver", "type": "LongitudinalDriver",
                  "params": {"kp": "1 s/m", "ki": "0.3 m^-1", "kff": "0.3 s^2/m", "u0": u0}})
        self.wire([v_ref_src, "driver.v_ref"], ["car.u", "driver.v"])
        if brake:
            self.wire(["driver.brake"] + self.pedal_in)
        if throttle:
            self.wire(["driver.accel", self.throttle_in])

    def coast(self):
        """No throttle and no pedal."""
        self.add({"name": "no_pedal", "type": "Constant", "params": {"value": 0}})
        self.wire(["no_pedal.y", self.throttle_in] + self.pedal_in)

    def path_follower(self, **params):
        """A PathFollower on the car's position and heading, steering through the steering
        ratio (its road-wheel angle times the ratio is the steering-wheel angle)."""
        self.add({"name": "pf", "type": "PathFollower",
                  "params": {"wheelbase": "a + b", "rear_axle": "b", **params}},
                 {"name": "hand", "type": "Gain", "params": {"k": "steering_ratio"}})
        self.wire(["car.x", "pf.x"], ["car.y", "pf.y"], ["car.yaw", "pf.yaw"],
                  ["car.speed", "pf.speed"], ["pf.steer", "hand.u"])
        self.steer_from("hand.y")

    def esc(self, enabled="esc"):
        """An Esc between the brake demands and the wheels."""
        self.add({"name": "esc", "type": "Esc",
                  "params": {"enabled": enabled, "wheelbase": "a + b",
                             "understeer_gradient": K_CAR}},
                 {"name": "road_wheel", "type": "Gain", "params": {"k": "1/steering_ratio"}})
        self.wire([self.steer_src, "road_wheel.u"], ["road_wheel.y", "esc.steer"],
                  ["car.u", "esc.speed"], ["car.r", "esc.r"])
        for w in WHEELS:
            self.wire([self.brake_src[w], f"esc.demand_{w}"])
            self.brake_src[w] = f"esc.{w}"

    def finish(self):
        """Wire the wheel brakes from their sources."""
        by_src = {}
        for w in WHEELS:
            by_src.setdefault(self.brake_src[w], []).append(f"{w}.brake")
        for src, ins in by_src.items():
            self.wire([src] + ins)


def netlist(name, description, parameters, car, solver, scopes, metrics, log=()):
    car.finish()
    return {
        "drivelink": 1,
        "name": name,
        "description": description,
        "parameters": {**CAR_PARAMETERS, **parameters},
        "solver": solver,
        "blocks": car.blocks,
        "connections": car.connections,
        "log": LOG + [v for v in log if v not in LOG],
        "scopes": scopes,
        "metrics": metrics,
    }


def write(n):
    path = os.path.join(OUT, n["name"] + ".json")
    with open(path, "w") as f:
        json.dump(n, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", os.path.relpath(path, ROOT))


SOLVER = {"method": "radau5", "rtol": 1e-6, "atol": 1e-8, "output_interval": 0.01}

TRAJECTORY = {"name": "trajectory", "title": "Trajectory of the centre of mass",
              "x": "car.x", "signals": [{"signal": "car.y", "unit": "m", "label": "y"}]}


def yaw_scope(title, extra=()):
    return {"name": "yaw_rate", "title": title,
            "panels": [[{"signal": "car.r", "unit": "deg/s", "label": "yaw rate"}],
                       [{"signal": "fl.steer", "unit": "deg", "label": "left"},
                        {"signal": "fr.steer", "unit": "deg", "label": "right"}],
                       [{"signal": "car.ay", "unit": "m/s^2", "label": "lateral acceleration"}]]
            + list(extra)}


def step_steer():
    c = Car("speed")
    c.add({"name": "steer_input", "type": "SignalBuilder",
           "params": {"points": [[0, 0], [1.0, 0], [1.15, "delta_sw"], [10, "delta_sw"]]}},
          {"name": "v_ref", "type": "Constant", "params": {"value": "speed"}})
    c.steer_from("steer_input.y")
    c.speed_driver("v_ref.y")
    metrics = {
        "steady_yaw_rate": "mean(car.r, 4.5 s, 5 s)",
        "steady_steer": "mean((fl.steer + fr.steer)/2, 4.5 s, 5 s)",
        "yaw_rate_gain": "steady_yaw_rate/steady_steer",
        "yaw_rate_response_time":
            "first_time(car.r >= 0.9*steady_yaw_rate) - first_time((fl.steer + fr.steer)/2 >= 0.5*steady_steer)",
        "yaw_rate_overshoot": "max(car.r)/steady_yaw_rate - 1",
        "speed_at_steady": "mean(car.u, 4.5 s, 5 s)",
        "ay_steady": "mean(car.ay, 4.5 s, 5 s)",
    }
    return netlist(
        "vd_iso7401_step_steer",
        "ISO 7401 step steer at 80 km/h: the steering wheel turns to delta_sw in 0.15 s at t = 1 s and is held; a LongitudinalDriver holds the speed. Metrics: yaw-rate gain (steady yaw rate per road-wheel angle), response time (50 % of the steer input to 90 % of the steady yaw rate), overshoot.",
        {"speed": "80 km/h", "delta_sw": "20 deg"},
        c, {**SOLVER, "stop_time": 5.0},
        [yaw_scope("Step steer: yaw rate, road-wheel steer, lateral acceleration")],
        metrics)


def sine_with_dwell():
    c = Car("speed")
    c.add({"name": "steer", "type": "SineWithDwell",
           "params": {"amplitude": "amplitude", "frequency": "0.7 Hz", "dwell": "500 ms",
                      "start": "1 s", "ratio": "steering_ratio"}})
    c.steer_from("steer.steering_wheel")
    c.coast()
    c.esc()
    metrics = {
        "t_end": "final(steer.t_end)",
        # The first yaw-rate peak after the steering changes sign (at 1 s + half a
        # period): the second lobe turns the car right, so its peak is a minimum.
        "first_yaw_peak": "min(car.r, 1 s + 0.5/0.7 s, t_end + 0.5 s)",
        "yaw_ratio_1000ms": "abs(at(car.r, t_end + 1 s)/first_yaw_peak)",
        "yaw_ratio_1750ms": "abs(at(car.r, t_end + 1.75 s)/first_yaw_peak)",
        "lateral_displacement_1070ms": "at(car.y, 2.07 s) - at(car.y, 1 s)",
        "passes": "yaw_ratio_1000ms <= 0.35 and yaw_ratio_1750ms <= 0.2 and (amplitude < 180 deg or lateral_displacement_1070ms >= 1.83)",
        "max_side_slip_deg": "max(abs(car.beta))/1 deg",
    }
    return netlist(
        "vd_fmvss126_sine_dwell",
        "FMVSS 126 sine with dwell at 80 km/h, coasting: a 0.7 Hz steering sine of `amplitude` (steering wheel) from t = 1 s, held 500 ms at its negative peak; ESC on (esc = 1) or off (esc = 0). Metrics at the regulation's instants: yaw-rate ratios 1.0 s and 1.75 s after the end of steer over the first yaw-rate peak after the steering changes sign, the lateral displacement 1.07 s after the start of steer, and `passes`.",
        {"speed": "80 km/h", "amplitude": "180 deg", "esc": 1},
        c, {**SOLVER, "stop_time": 5.0},
        [yaw_scope("Sine with dwell: yaw rate, road-wheel steer, lateral acceleration"),
         TRAJECTORY,
         {"name": "esc_brakes", "title": "ESC brake torques",
          "signals": [{"signal": f"{w}.brake_tau", "unit": "N*m", "label": w} for w in WHEELS]}],
        metrics, log=[f"{w}.brake_tau" for w in WHEELS] + ["esc.r_ref", "esc.error"])


def slowly_increasing_steer():
    c = Car("speed")
    c.add({"name": "steer", "type": "SteerRamp",
           "params": {"rate": "13.5 deg/s", "start": "1 s", "ratio": "steering_ratio"}})
    c.steer_from("steer.steering_wheel")
    c.coast()
    metrics = {
        "t_0_3g": "first_time(abs(car.ay) >= 0.3*g_n)",
        "steering_wheel_at_0_3g_deg": "at(steer.steering_wheel, t_0_3g)/1 deg",
        "sine_dwell_amplitude_deg":
            "if(6.5*steering_wheel_at_0_3g_deg < 300, 6.5*steering_wheel_at_0_3g_deg, 300)",
    }
    return netlist(
        "vd_fmvss126_sis",
        "FMVSS 126 slowly increasing steer at 80 km/h, coasting: the steering wheel turns left at 13.5 deg/s from t = 1 s. Metrics: the steering-wheel angle A at which the lateral acceleration reaches 0.3 g and the sine-with-dwell amplitude the regulation derives from it (6.5·A, at most 300 deg): give it to vd_fmvss126_sine_dwell.json as --set amplitude=\"... deg\".",
        {"speed": "80 km/h"},
        c, {**SOLVER, "stop_time": 4.0},
        [yaw_scope("Slowly increasing steer: yaw rate, road-wheel steer, lateral acceleration")],
        metrics, log=["steer.steering_wheel"])


def constant_radius():
    c = Car("v_start")
    # On the circle from the start: the yaw rate of the circle at the starting speed.
    c.blocks[0]["params"]["r0"] = "v_start/radius_path"
    c.add({"name": "v_ref", "type": "Ramp",
           "params": {"start_time": "5 s", "duration": "(v_end - v_start)/accel_rate",
                      "height": "v_end - v_start", "offset": "v_start"}})
    c.speed_driver("v_ref.y")
    c.path_follower(generator="circle", radius="radius_path", lookahead_min="3 m",
                    k_integral="0.05 rad/(m*s)")
    # The limit: the run stops when the car can no longer hold the circle (1 m off it).
    c.add({"name": "off_path", "type": "Abs"},
          {"name": "limit", "type": "Constant", "params": {"value": "1 m"}},
          {"name": "beyond", "type": "Relational", "params": {"op": ">"}},
          {"name": "stop", "type": "StopSimulation"})
    c.wire(["pf.lateral_error", "off_path.u"], ["off_path.y", "beyond.u1"],
           ["limit.y", "beyond.u2"], ["beyond.y", "stop.u"])
    metrics = {
        # Over the speed ramp up to the limit (the largest lateral acceleration), not the
        # start nor what follows the limit.
        "t_limit": "time_of_max(car.ay)",
        "understeer_gradient":
            "slope((fl.steer + fr.steer)/2/(1 deg), if(time > 5 s and time < t_limit, car.ay/g_n, 0), 0.1, 0.4)",
        "ay_max": "max(car.ay)",
        "max_lateral_error_to_0_3g": "max(abs(pf.lateral_error), 5 s, first_time(car.ay >= 0.3*g_n and time > 5 s))",
    }
    return netlist(
        "vd_iso4138_constant_radius",
        "ISO 4138 steady-state circular driving on a 40 m circle: a PathFollower keeps the car on the circle while a LongitudinalDriver raises the speed slowly (accel_rate) to the limit. Metrics: the understeer gradient (slope of the mean road-wheel angle in deg against the lateral acceleration in g over 0.1-0.4 g: on a constant radius delta = L/R + K*ay) and the largest lateral acceleration.",
        {"v_start": "5 m/s", "v_end": "19 m/s", "accel_rate": "0.2 m/s^2", "radius_path": "40 m"},
        c, {**SOLVER, "stop_time": 90.0, "output_interval": 0.05},
        [TRAJECTORY,
         {"name": "steer_and_ay", "title": "Road-wheel steer and lateral acceleration as the speed rises",
          "panels": [[{"signal": "fl.steer", "unit": "deg", "label": "left"},
                      {"signal": "fr.steer", "unit": "deg", "label": "right"}],
                     [{"signal": "car.ay", "unit": "m/s^2", "label": "lateral acceleration"}]]},
         {"name": "tracking", "title": "Speed and path tracking",
          "panels": [[{"signal": "car.u", "unit": "km/h", "label": "speed"}],
                     [{"signal": "pf.lateral_error", "unit": "m", "label": "lateral error"}]]}],
        metrics, log=["pf.lateral_error", "pf.progress", "driver.accel", "driver.brake"])


def double_lane_change():
    c = Car("speed")
    c.add({"name": "v_ref", "type": "Constant", "params": {"value": "speed"}})
    c.speed_driver("v_ref.y")
    c.path_follower(generator="iso3888_2", vehicle_width="1.8 m", vehicle_length="4.5 m",
                    x0="50 m", lookahead_time="0.6 s")
    c.esc()
    metrics = {
        "cones_hit": "final(pf.cones_hit)",
        "max_lateral_error": "max(abs(pf.lateral_error), 0 s, first_time(car.x >= 111 m))",
        "exit_speed": "at(car.u, first_time(car.x >= 111 m))",
        "max_ay": "max(abs(car.ay))",
    }
    return netlist(
        "vd_iso3888_double_lane_change",
        "ISO 3888-2 double lane change (obstacle avoidance) at 60 km/h: a PathFollower (pure pursuit) steers along the centre line through the gates of a 1.8 m wide car from x = 50 m, a LongitudinalDriver holds the speed. Metrics: gates whose cone lines a corner of the car crossed (counted at located events), the largest lateral error, the speed at the exit of the course (x = 111 m).",
        {"speed": "60 km/h", "esc": 1},
        c, {**SOLVER, "stop_time": 8.0},
        [{"name": "gates", "title": "ISO 3888-2 at 60 km/h: the centre of mass through the gates",
          "x": "car.x", "ylim": [-2, 6],
          "signals": [{"signal": "car.y", "unit": "m", "label": "centre of mass"},
                      {"signal": "pf.cone_left", "unit": "m", "label": "left cones"},
                      {"signal": "pf.cone_right", "unit": "m", "label": "right cones"}]},
         yaw_scope("Lane change: yaw rate, road-wheel steer, lateral acceleration"),
         {"name": "clearance", "title": "Clearance of the car's corners to the cone lines",
          "signals": [{"signal": "pf.min_clearance", "unit": "m", "label": "smallest clearance"}]}],
        metrics, log=["pf.lateral_error", "pf.cones_hit", "pf.min_clearance", "pf.cone_left",
                      "pf.cone_right"])


def brake_in_turn():
    c = Car("speed")
    c.add({"name": "v_ref", "type": "Constant", "params": {"value": "speed"}},
          {"name": "pedal", "type": "Step",
           "params": {"time": "t_brake", "before": 0, "after": "pedal_brake"}},
          # The driver holds the speed until the brake, then lifts: throttle = accel·lift.
          {"name": "lift", "type": "Step", "params": {"time": "t_brake", "before": 1, "after": 0}},
          {"name": "throttle", "type": "Product"},
          # The steering wheel is held where it is at the brake onset (ISO 7975): the
          # PathFollower's command until t_brake, then its value sampled at t_brake.
          {"name": "held", "type": "ZeroOrderHold", "params": {"sample_time": "t_brake"}},
          {"name": "hold", "type": "Switch", "params": {"threshold": 0.5}})
    c.speed_driver("v_ref.y", throttle=False, brake=False, u0=0.1)
    c.wire(["pedal.y"] + c.pedal_in,
           ["driver.accel", "throttle.u1"], ["lift.y", "throttle.u2"],
           ["throttle.y", c.throttle_in])
    c.add({"name": "pf", "type": "PathFollower",
           "params": {"wheelbase": "a + b", "rear_axle": "b", "generator": "circle",
                      "radius": "radius_path"}},
          {"name": "hand", "type": "Gain", "params": {"k": "steering_ratio"}})
    c.wire(["car.x", "pf.x"], ["car.y", "pf.y"], ["car.yaw", "pf.yaw"], ["car.speed", "pf.speed"],
           ["pf.steer", "hand.u"], ["hand.y", "held.u", "hold.u3"], ["held.y", "hold.u1"],
           ["pedal_on.y", "hold.u2"])
    c.add({"name": "pedal_on", "type": "Step", "params": {"time": "t_brake", "before": 0, "after": 1}})
    c.steer_from("hold.y")
    metrics = {
        "ay_before": "mean(car.ay, t_brake - 0.5 s, t_brake)",
        "yaw_rate_before": "mean(car.r, t_brake - 0.5 s, t_brake)",
        "mean_deceleration": "-mean(car.ax, t_brake + 0.5 s, t_brake + 1.5 s)",
        "yaw_rate_ratio_1s": "at(car.r, t_brake + 1 s)/yaw_rate_before",
        "heading_change_1s_deg": "(at(car.yaw, t_brake + 1 s) - at(car.yaw, t_brake))/1 deg",
        "max_side_slip_deg": "max(if(car.speed > 5 m/s, abs(car.beta), 0), t_brake, end_time)/1 deg",
        "time_to_stop": "first_time(car.speed <= 0.5, t_brake, end_time) - t_brake",
    }
    return netlist(
        "vd_brake_in_turn",
        "ISO 7975 braking in a turn: steady on a 100 m circle at 80 km/h (a PathFollower steers, a LongitudinalDriver holds the speed), then at t_brake the driver lifts, brakes with pedal_brake and holds the steering wheel where it is. Metrics: the lateral acceleration before, the mean deceleration, the yaw-rate ratio and heading change 1 s after the brake onset, the largest side-slip angle.",
        {"speed": "80 km/h", "radius_path": "100 m", "t_brake": "4 s", "pedal_brake": 0.4},
        c, {**SOLVER, "stop_time": 11.0},
        [TRAJECTORY, yaw_scope("Brake in turn: yaw rate, road-wheel steer, lateral acceleration",
                               [[{"signal": "car.ax", "unit": "m/s^2", "label": "longitudinal acceleration"}]])],
        metrics, log=["pf.lateral_error"])


def tcs_split_mu_launch():
    c = Car("0 m/s")
    c.add({"name": "pedal_full", "type": "Constant", "params": {"value": 1}},
          {"name": "no_brake", "type": "Constant", "params": {"value": 0}},
          {"name": "mu_low", "type": "Constant", "params": {"value": "mu_left"}},
          {"name": "tcs", "type": "Tcs",
           "params": {"enabled": "tcs", "radius": "radius", "mode": "tcs_mode"}},
          {"name": "sum_rl", "type": "Sum"},
          {"name": "sum_rr", "type": "Sum"})
    # The driver keeps the car on its lane (the x axis) against the yaw moment of the
    # unequal drive forces.
    c.path_follower(generator="line")
    # The drive in first gear: full torque up to 30 rad/s of the propeller shaft (the
    # wheels' mean spin), falling to 0 at the rev limit, 50 rad/s (15.5 m/s).
    c.add({"name": "torque_curve", "type": "Lookup1D",
           "params": {"table": [[0, 1], [30, 1], [45, 0.6], [50, 0]]}},
          {"name": "shaped", "type": "Product"})
    c.wire(["prop_shaft.w", "torque_curve.u"], ["torque_curve.y", "shaped.u2"],
           ["shaped.y", c.throttle_in])
    c.throttle_in = "shaped.u1"
    c.wire(["no_brake.y"] + c.pedal_in,
           ["mu_low.y", "fl.mu_scale", "rl.mu_scale"],
           ["pedal_full.y", "tcs.throttle_demand"], ["tcs.throttle", c.throttle_in],
           ["rl.w", "tcs.w_left"], ["rr.w", "tcs.w_right"], ["car.u", "tcs.speed"],
           ["brake_rear.y", "sum_rl.u1", "sum_rr.u1"],
           ["tcs.brake_left", "sum_rl.u2"], ["tcs.brake_right", "sum_rr.u2"])
    c.brake_src["rl"] = "sum_rl.y"
    c.brake_src["rr"] = "sum_rr.y"
    metrics = {
        "peak_slip_left": "max(rl.forward_slip/hypot(car.u, 1 m/s), 0.5 s, end_time)",
        "peak_slip_right": "max(rr.forward_slip/hypot(car.u, 1 m/s), 0.5 s, end_time)",
        "speed_5s": "at(car.u, 5 s)",
        "distance_5s": "at(car.x, 5 s)",
    }
    return netlist(
        "vd_tcs_split_mu_launch",
        "Full-throttle launch from rest on split friction (left wheels on mu_left, right on dry road) with an open rear differential; traction control on (tcs = 1) or off (tcs = 0): TCS cuts the drive and brakes the spinning wheel, whose brake torque the open differential then passes to the gripping one. Metrics: the driven wheels' peak slip ratios after 0.5 s, the speed and distance at 5 s.",
        {"mu_left": 0.2, "tcs": 1, "tcs_mode": "brake"},
        c, {**SOLVER, "stop_time": 5.0},
        [{"name": "wheel_speeds", "title": "Driven wheels' rim speeds and the car's speed",
          "signals": [{"signal": "car.u", "unit": "m/s", "label": "car"},
                      {"signal": "rl.forward_slip", "unit": "m/s", "label": "slip rl"},
                      {"signal": "rr.forward_slip", "unit": "m/s", "label": "slip rr"}]},
         {"name": "tcs", "title": "Traction control",
          "panels": [[{"signal": "tcs.throttle", "unit": "1", "label": "throttle"}],
                     [{"signal": "tcs.brake_left", "unit": "N*m", "label": "brake rl"},
                      {"signal": "tcs.brake_right", "unit": "N*m", "label": "brake rr"}]]}],
        metrics, log=["tcs.slip_left", "tcs.slip_right", "tcs.throttle", "tcs.brake_left",
                      "tcs.brake_right"])


def cruise_hill():
    c = Car("speed")
    c.add({"name": "v_ref", "type": "Constant", "params": {"value": "speed"}},
          {"name": "straight", "type": "Constant", "params": {"value": 0}},
          {"name": "road", "type": "Road",
           "params": {"features": [{"type": "grade", "angle": "2.8624 deg", "x": [100, 2000]}]}})
    c.steer_from("straight.y")
    # Starting at cruise: the integral holds the flat road's drag from the start.
    c.speed_driver("v_ref.y", u0=0.11)
    c.wire(["road.surface", "fl.road", "fr.road", "rl.road", "rr.road"])
    metrics = {
        "t_grade": "first_time(car.x >= 100 m)",
        "speed_error_after_5s": "max(abs(car.u - speed), t_grade + 5 s, end_time)/speed",
        "largest_speed_drop": "speed - min(car.u)",
        "brake_onsets": "count(driver.brake > 0)",
        "mean_accel_pedal_on_grade": "mean(driver.accel, t_grade + 5 s, end_time)",
    }
    return netlist(
        "vd_cruise_hill",
        "Cruise control on a hill: a LongitudinalDriver holds 25 m/s on a flat road that turns into a 5 % grade (2.86 deg) at x = 100 m (a Road grade feature; its corner is a located event). Metrics: the largest relative speed error from 5 s after the grade starts, the largest speed drop, how often the brake came on, the mean accelerator pedal on the grade.",
        {"speed": "25 m/s"},
        c, {**SOLVER, "stop_time": 20.0, "output_interval": 0.02},
        [{"name": "cruise", "title": "Speed and pedals",
          "panels": [[{"signal": "car.u", "unit": "km/h", "label": "speed"}],
                     [{"signal": "driver.accel", "unit": "1", "label": "accelerator"},
                      {"signal": "driver.brake", "unit": "1", "label": "brake"}],
                     [{"signal": "car.z", "unit": "m", "label": "height"}]]}],
        metrics, log=["driver.accel", "driver.brake", "driver.error", "car.z"])


def road_car(features, speed):
    """The car at `speed` held by the driver, kept on the x axis, on a `Road` of
    `features`."""
    c = Car("speed")
    c.add({"name": "v_ref", "type": "Constant", "params": {"value": "speed"}},
          {"name": "road", "type": "Road", "params": {"features": features}})
    c.speed_driver("v_ref.y")
    c.path_follower(generator="line")
    c.wire(["road.surface", "fl.road", "fr.road", "rl.road", "rr.road"])
    return c


RIDE_LOG = ["car.z", "car.az", "car.pitch", "car.roll"] + [
    f"{w}.compression" for w in WHEELS]


def ride_scopes(title):
    return [{"name": "ride", "title": title,
             "panels": [[{"signal": "car.az", "unit": "m/s^2", "label": "vertical acceleration"}],
                        [{"signal": "car.pitch", "unit": "deg", "label": "pitch"},
                         {"signal": "car.roll", "unit": "deg", "label": "roll"}],
                        [{"signal": f"{w}.fz", "unit": "N", "label": w} for w in WHEELS]]},
            {"name": "suspension", "title": "Suspension compressions",
             "signals": [{"signal": f"{w}.compression", "unit": "mm", "label": w}
                         for w in WHEELS]}]


def bump():
    # A speed hump (75 mm, 3.7 m, cosine) across the road, then a kerb under the left
    # wheels: 8 cm up over 40 cm to x = 45 m, 10 m long, down again over 40 cm (a heightfield,
    # so the wheels roll up its face: a `step` feature would raise them at an event).
    kerb = {"type": "heightfield", "x": [44.6, 45.0, 55.0, 55.4], "y": [-5, 0.3, 0.35, 5],
            "z": [[0, 0, 0, 0], [0, 0, 0.08, 0.08], [0, 0, 0.08, 0.08], [0, 0, 0, 0]]}
    c = road_car([
        {"type": "bump", "x": 20, "length": 3.7, "height": 0.075, "shape": "cosine"},
        kerb,
    ], "speed")
    metrics = {
        "max_vertical_accel": "max(abs(car.az))",
        "max_pitch_deg": "max(abs(car.pitch))/1 deg",
        "max_roll_deg": "max(abs(car.roll))/1 deg",
        "max_wheel_load_fl": "max(fl.fz)",
        "min_wheel_load_fl": "min(fl.fz)",
        "kerb_up_time": "first_time(fl.hit_z > 0.04 m and car.x > 40 m)",
    }
    return netlist(
        "vd_bump",
        "A car at 36 km/h over a speed hump (75 mm high, 3.7 m long, cosine) at x = 20 m, then up an 8 cm kerb under its left wheels at x = 45 m (climbed over 40 cm, a heightfield) and down again 10 m later. Metrics: the largest vertical acceleration, pitch and roll, the front-left wheel's load range, the instant the front-left wheel climbs the kerb.",
        # Without the rear anti-roll bar: the energy audit books the work the kerb does
        # through the bar's twist to the bar (a known limit of the audit on uneven roads).
        {"speed": "36 km/h", "rear_bar_stiffness": "0 N/m"},
        c, {**SOLVER, "stop_time": 7.0, "output_interval": 0.005},
        ride_scopes("Over a bump and a kerb: vertical acceleration, pitch and roll, wheel loads"),
        metrics, log=RIDE_LOG + ["fl.hit_z"])


def rough_road():
    c = road_car([{"type": "iso8608", "class": "C", "x": [0, 300], "seed": 1, "dx": 0.1}],
                 "speed")
    metrics = {
        "body_accel_rms": "sqrt(mean(car.az^2, 2 s, end_time))",
        "mean_load_fl": "mean(fl.fz, 2 s, end_time)",
        "wheel_load_rms_variation_fl": "sqrt(mean((fl.fz - mean_load_fl)^2, 2 s, end_time))/mean_load_fl",
        "max_pitch_deg": "max(abs(car.pitch), 2 s, end_time)/1 deg",
    }
    return netlist(
        "vd_rough_road",
        "A car at 20 m/s on an ISO 8608 class C random road (both tracks the same profile, seed 1). Metrics: the body's vertical acceleration RMS and the front-left wheel load's RMS variation relative to its mean (ride comfort and road holding), from 2 s on.",
        {"speed": "20 m/s"},
        c, {**SOLVER, "method": "dopri5", "stop_time": 10.0, "output_interval": 0.005},
        ride_scopes("ISO 8608 class C at 72 km/h: vertical acceleration, pitch and roll, wheel loads"),
        metrics, log=RIDE_LOG)


def main():
    for n in [step_steer(), sine_with_dwell(), slowly_increasing_steer(), constant_radius(),
              double_lane_change(), brake_in_turn(), tcs_split_mu_launch(), cruise_hill(),
              bump(), rough_road()]:
        write(n)


if __name__ == "__main__":
    sys.exit(main())
