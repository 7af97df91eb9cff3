#!/usr/bin/env python3
"""Generate the vehicle-dynamics demonstration netlists models/netlists/vd_*.json.

One car (RigidBody + four WheelColliders) shared by all of them; run from the repository
root: python3 scripts/gen_vd_netlists.py. The JSON files are committed; this script only
keeps them consistent with each other.
"""
import copy
import json
import os

A, B, HALF_TRACK = 1.2, 1.5, 0.8
WHEELS = [("fl", A, HALF_TRACK), ("fr", A, -HALF_TRACK), ("rl", -B, HALF_TRACK), ("rr", -B, -HALF_TRACK)]
PARAMS = {
    "m": "1500 kg",
    "a": "1.2 m",
    "b": "1.5 m",
    "k_spring": "30000 N/m^2",
    "radius": "0.33 m",
}


def car(v0=0.0, aero=True):
    blocks = [{
        "name": "car", "type": "RigidBody",
        "params": {"m": "m", "inertia": [550, 2400, 2600], "z0": "0.55 m", "v0": v0},
    }]
    conns = []
    for name, x, y in WHEELS:
        spring = "k_spring*b" if x > 0 else "k_spring*a"
        blocks.append({
            "name": name, "type": "WheelCollider",
            "params": {"center": [x, y, -0.1], "radius": "radius", "suspension_distance": 0.3,
                       "target_position": 0.3, "spring": spring, "damper": 4000},
        })
        conns.append(["car.frame", f"{name}.body"])
    if aero:
        blocks.append({"name": "aero", "type": "Aero", "params": {"drag_area": 0.7, "lift_area": 0.3}})
        conns.append(["car.frame", "aero.frame"])
    # One line joins every frame port: the body.
    conns = [sum((c[1:] for c in conns), ["car.frame"])]
    return blocks, conns


def sig(s, unit=None, label=None):
    d = {"signal": s}
    if unit:
        d["unit"] = unit
    if label:
        d["label"] = label
    return d


def trajectory():
    return {"name": "trajectory", "title": "Trajectory of the centre of mass (y against x)",
            "x": "car.x", "signals": [sig("car.y", "m", "y")]}


def common_scopes():
    return [
        trajectory(),
        {"name": "yaw", "title": "Yaw rate and side-slip angle",
         "panels": [[sig("car.r", "rad/s", "yaw rate")], [sig("car.beta", "deg", "side-slip β")]]},
        {"name": "accel", "title": "Accelerations (body axes)",
         "signals": [sig("car.ax", "m/s^2", "ax"), sig("car.ay", "m/s^2", "ay")]},
        {"name": "speed", "title": "Speed", "signals": [sig("car.speed", "km/h", "speed")]},
        {"name": "slips", "title": "Wheel slips",
         "panels": [[sig(f"{w}.forward_slip", "m/s", w) for w, _, _ in WHEELS],
                    [sig(f"{w}.sideways_slip", "m/s", w) for w, _, _ in WHEELS]]},
        {"name": "loads", "title": "Normal loads", "signals": [sig(f"{w}.fz", "N", w) for w, _, _ in WHEELS]},
        {"name": "suspension", "title": "Suspension compression",
         "signals": [sig(f"{w}.compression", "m", w) for w, _, _ in WHEELS]},
        {"name": "attitude", "title": "Roll and pitch",
         "signals": [sig("car.roll", "deg", "roll"), sig("car.pitch", "deg", "pitch")]},
    ]


LOG = ["car.x", "car.y", "car.z", "car.vx", "car.vy", "car.u", "car.v", "car.speed", "car.yaw", "car.r", "car.ax",
       "car.ay", "car.beta", "car.roll", "car.pitch"] + \
      [f"{w}.{v}" for w, _, _ in WHEELS for v in ["w", "fz", "fx", "fy", "compression", "forward_slip", "sideways_slip"]]


def netlist(name, description, blocks, conns, stop, scopes=None, params=None, max_step=None, extra_log=(), method="dopri5", rtol=1e-7, guard_samples=None, atol=1e-8):
    solver = {"method": method, "stop_time": stop, "rtol": rtol, "atol": atol, "output_interval": 0.01}
    if guard_samples is not None:
        solver["guard_samples"] = guard_samples
    if max_step:
        solver["max_step"] = max_step
    p = dict(PARAMS)
    p.update(params or {})
    return {"drivelink": 1, "name": name, "description": description, "parameters": p,
            "solver": solver, "blocks": blocks, "connections": conns,
            "log": LOG + list(extra_log), "scopes": scopes or common_scopes()}


def steering(blocks, conns, angle, at=0.5):
    blocks += [
        {"name": "steering_wheel", "type": "Step", "params": {"time": at, "before": 0, "after": angle}},
        {"name": "steering", "type": "Steering", "params": {"ratio": 16, "wheelbase": "a + b", "track": "1.6 m"}},
    ]
    conns += [["steering_wheel.y", "steering.wheel_angle"], ["steering.left", "fl.steer"], ["steering.right", "fr.steer"]]


def write(d):
    path = os.path.join("models", "netlists", d["name"] + ".json")
    with open(path, "w") as f:
        json.dump(d, f, indent=2, ensure_ascii=False)
        f.write("\n")


def static():
    b, c = car()
    return netlist("vd_static", "A 1500 kg car (RigidBody + 4 WheelColliders) released at 0.55 m settles on its suspension: springs 45 kN/m front, 36 kN/m rear carry the static axle loads at equal compression (c = target·distance + Fz/spring), so it settles level and stays put.", b, c, 5.0)


def turn(diff):
    b, c = car(v0="v0")
    b += [
        {"name": "throttle", "type": "Constant", "params": {"value": "drive_torque"}},
        {"name": "motor", "type": "TorqueSource", "params": {}},
        {"name": "prop_shaft", "type": "Inertia", "params": {"J": 0.05, "w0": "3.7*v0/radius"}},
        {"name": "diff", "type": "Differential", "params": {"type": diff, "gear_ratio": 3.7}},
    ]
    c += [["throttle.y", "motor.tau"], ["motor.flange", "prop_shaft.flange", "diff.input"],
          ["diff.left", "rl.hub"], ["diff.right", "rr.hub"]]
    steering(b, c, "45 deg")
    desc = {"open": "with an open differential: the inner and outer rear wheels turn at their own speeds",
            "locked": "with a locked differential: both rear wheels turn at one speed, the inner one pushes and the outer one drags, a yaw moment against the turn (Vehicle Physics Pro: the car 'refuses to steer') and a wider circle"}[diff]
    return netlist(f"vd_turn_{diff}", f"A rear-drive car from 10 m/s, steering wheel at 45 deg (16:1, Ackermann) from 0.5 s, constant drive torque on the differential input (3.7:1), {desc}.", b, c, 12.0, params={"drive_torque": "40 N*m", "v0": "10 m/s"})


ABS_DESC = "with ABS on every wheel (simple mode, trigger at the wheel's peak slip + 0.3 m/s, 10 ms cycle): no wheel locks, the front tires keep side force and the car turns while it stops (Vehicle Physics Pro: ABS 'allows steering on emergency braking'). abs_ratio (the ABS min_pressure_ratio) is calibrated as VPP advises, the highest value that does not lock a wheel while braking and steering: at 0.2 the unloaded inside wheels lock, because 0.2 x 2500 N·m exceeds the torque their sliding tires return (try --set abs_ratio=0.2)."


def brake_turn(abs_on):
    b, c = car(v0=20.0)
    steering(b, c, "60 deg", at=1.0)
    b += [{"name": "pedal_front", "type": "Step", "params": {"time": 1.0, "before": 0, "after": 2500}},
          {"name": "pedal_rear", "type": "Step", "params": {"time": 1.0, "before": 0, "after": 1500}}]
    for w, x, _ in WHEELS:
        pedal = "pedal_front.y" if x > 0 else "pedal_rear.y"
        if abs_on:
            b.append({"name": f"abs_{w}", "type": "Abs", "params": {"enabled": True, "mode": "simple", "min_slip_offset": 0.3, "min_pressure_ratio": "abs_ratio", "cycle_time": 0.01}})
            c += [[pedal, f"abs_{w}.demand"], [f"{w}.forward_slip", f"abs_{w}.slip"], [f"{w}.peak_slip", f"abs_{w}.peak_slip"], [f"abs_{w}.torque", f"{w}.brake"]]
        else:
            c.append([pedal, f"{w}.brake"])
    c = merge_signal_lines(c)
    name = "vd_brake_turn_abs" if abs_on else "vd_brake_turn_no_abs"
    if abs_on:
        # abs_ratio (min_pressure_ratio) calibrated as VPP advises: the highest value that
        # locks no wheel while braking and steering (0.2 lets the inside wheels lock).
        desc = ("per wheel, about twice what the tires can take) "
                + ABS_DESC)
        return netlist(name, f"A car running straight at 20 m/s steers (60 deg at the steering wheel) and brakes hard at the same instant, 1 s (2500 N·m front, 1500 N·m rear {desc}", b, c, 6.0, params={"abs_ratio": 0.1}, extra_log=[f"{w}.brake_mode" for w, _, _ in WHEELS])
    desc = "without ABS: the wheels lock and the car ploughs on, ending 3.8 m off the straight line after 58 m instead of turning. It does not keep its heading: the locked front wheels slide a few degrees off their steered heading, and the friction circle (on slips normalized by each curve's extremum slip, sideways 0.2 m/s against forward 0.4 m/s) leaves them a side force of 20-50 % of their braking force, which yaws the body 27 deg (0.48 rad) by the stop"
    return netlist(name, f"A car running straight at 20 m/s steers (60 deg at the steering wheel) and brakes hard at the same instant, 1 s (2500 N·m front, 1500 N·m rear per wheel) {desc}.", b, c, 5.0, extra_log=[f"{w}.brake_mode" for w, _, _ in WHEELS])


def merge_signal_lines(c):
    """Join connections that share their first (driving) port."""
    out = {}
    for line in c:
        if line[0].endswith(".frame"):
            out.setdefault(line[0] + "#frame", []).append(line)
            continue
        out.setdefault(line[0], [line[0]])
        out[line[0]] += [p for p in line[1:] if p not in out[line[0]]]
    res = []
    for k, v in out.items():
        if k.endswith("#frame"):
            res += v
        else:
            res.append(v)
    return res


def split_mu():
    b, c = car(v0=20.0)
    b += [{"name": "ice", "type": "Constant", "params": {"value": 0.2}},
          {"name": "pedal_front", "type": "Step", "params": {"time": 0.5, "before": 0, "after": 1000}},
          {"name": "pedal_rear", "type": "Step", "params": {"time": 0.5, "before": 0, "after": 500}}]
    c += [["ice.y", "fl.mu_scale", "rl.mu_scale"], ["pedal_front.y", "fl.brake", "fr.brake"], ["pedal_rear.y", "rl.brake", "rr.brake"]]
    return netlist("vd_split_mu_brake", "Straight-line braking from 20 m/s with the left wheels on ice (mu_scale 0.2), no steering correction: the right (high-grip) wheels brake harder, a yaw moment turns the car towards the high-grip side (yaw rate negative: to the right) while the low-grip side locks.", b, c, 4.0, extra_log=[f"{w}.brake_mode" for w, _, _ in WHEELS])


def full_car():
    src = json.load(open(os.path.join("models", "netlists", "full_car.json")))
    keep = {"throttle", "master_base", "shift1", "shift2", "shift3", "master", "sched_A", "hyd_A", "sched_B", "hyd_B",
            "sched_C", "hyd_C", "sched_D", "hyd_D", "reverse", "sched_lockup", "hyd_lockup", "engine",
            "engine_inertia", "converter", "turbine", "lockup", "gearbox"}
    blocks = [copy.deepcopy(x) for x in src["blocks"] if x["name"] in keep]
    for x in blocks:
        if x["name"] in ("shift1", "shift2", "shift3"):
            x["params"]["time"] = {"shift1": "4 s", "shift2": "8 s", "shift3": "12 s"}[x["name"]]
    blocks = [x for x in blocks]
    conns = []
    for line in src["connections"]:
        if all(p.split(".")[0] in keep for p in line):
            conns.append(line)
    # master = base + shift1..3 (4 inputs now).
    for x in blocks:
        if x["name"] == "master":
            x["params"]["signs"] = "++++"
    conns = [l for l in conns if l != ["shift4.y", "master.u5"]]
    params = {k: v for k, v in src["parameters"].items() if k not in ("radiusWheel", "vehicleMass", "wheelInertia", "roadA", "roadC")}
    # Brake hydraulics: the ABS valve sets the pressure ratio, the wheel cylinder follows it
    # through a first-order lag, as the clutch hydraulics shape the shift signals (the seed's
    # Transfer Fcn s0/(s + s0)); 10 ms is the hydraulic lag of Simulink's ABS example.
    params.update({"throttle": 0.35, "brakeRise": "10 ms"})
    b, c = car(v0=0.0)
    b += blocks
    c += conns
    b += [
        {"name": "diff", "type": "Differential", "params": {"type": "open", "gear_ratio": "ratioForwDrive"}},
        {"name": "pedal", "type": "SignalBuilder", "params": {"points": [[0, 0], [15, 0], [15.3, 2000], [20, 2000]]}},
        {"name": "steering_wheel", "type": "SignalBuilder", "params": {"points": [[0, 0], [6, 0], [7, "45 deg"], [9, "45 deg"], [10, 0], [20, 0]]}},
        {"name": "steering", "type": "Steering", "params": {"ratio": 16, "wheelbase": "a + b", "track": "1.6 m"}},
    ]
    c += [["gearbox.output", "diff.input"], ["diff.left", "rl.hub"], ["diff.right", "rr.hub"],
          ["steering_wheel.y", "steering.wheel_angle"], ["steering.left", "fl.steer"], ["steering.right", "fr.steer"]]
    for w, _, _ in WHEELS:
        b.append({"name": f"abs_{w}", "type": "Abs", "params": {"enabled": True, "mode": "simple", "min_slip_offset": 0.3, "min_pressure_ratio": 0.2, "cycle_time": 0.01}})
        b.append({"name": f"brake_{w}", "type": "TransferFcn", "params": {"num": ["1/brakeRise"], "den": [1, "1/brakeRise"]}})
        c += [["pedal.y", f"abs_{w}.demand"], [f"{w}.forward_slip", f"abs_{w}.slip"], [f"{w}.peak_slip", f"abs_{w}.peak_slip"],
              [f"abs_{w}.torque", f"brake_{w}.u"], [f"brake_{w}.y", f"{w}.brake"]]
    c = merge_signal_lines(c)
    scopes = common_scopes() + [
        {"name": "engine", "title": "Engine speed and gear", "panels": [[sig("engine.w", "rpm", "engine")], [sig("gearbox.ratio", None, "gear ratio")]]},
        {"name": "brakes", "title": "Front-left ABS: valve and wheel-cylinder brake torque, forward slip",
         "panels": [[sig("abs_fl.torque", "N*m", "valve"), sig("brake_fl.y", "N*m", "cylinder")],
                    [sig("fl.forward_slip", "m/s", "forward slip")]]},
    ]
    return netlist("vd_full_car", "The full-car demo's powertrain (gasoline engine, torque converter with lock-up, CR-CR 4-speed shifting at 4, 8, 12 s, open differential 3.23) driving the rear wheels of a 4-wheel car (RigidBody + WheelColliders + Aero): launch at 35 % throttle, a steering input from 6 to 10 s, ABS braking from 15 s (brake hydraulics: a 10 ms lag from each ABS valve to its brake).", b, c, 20.0, scopes=scopes, params=params, extra_log=["engine.w", "gearbox.ratio", "lockup.mode"],
                   # The wheel spin on the rising branch is a fast mode (~1000 1/s) that bounds
                   # Dopri5's step at ~3 ms; auto runs Radau5 there (BENCHMARKS.md). rtol 1e-6:
                   # the energy audit still closes to better than 1e-6 relative (the test in
                   # blocks/tests/vd_netlists.rs), with about a quarter fewer evaluations.
                   # guard_samples 1 (default 4, docs/solver.md): the car's steps are bounded by
                   # its states (ms), and 1 interior sample still catches a double crossing
                   # spanning the step's middle; 0, 1, 2 and 4 find the same 109 logged events
                   # (times within 2.8e-6 s, with atol 1e-8).
                   # atol 1e-6, as the full car (1e-8 bounds the steps through the components
                   # near zero, the pitch and roll rates among them): against a tight run (rtol 1e-9,
                   # atol 1e-10) the trajectory is as close as with 1e-8 (position within
                   # 3e-5 m, speed within 1.8e-4 m/s, yaw within 2.1e-7 rad), 5.8 % fewer
                   # instructions (BENCHMARKS.md, "grid points as guard samples").
                   method="auto", rtol=1e-6, guard_samples=1, atol=1e-6)


def parked_slope():
    """A car braked on a 10 % grade with static friction at the patches: it settles a few
    millimetres into the patch springs and stays put (without static_friction it creeps
    downhill at 0.037 m/s)."""
    import math
    theta = math.atan(0.1)
    g = 9.80665
    b, c = car(aero=False)
    b[0]["params"]["gravity"] = [round(-g * math.sin(theta), 9), 0, round(-g * math.cos(theta), 9)]
    for blk in b[1:]:
        blk["params"]["static_friction"] = True
    b.append({"name": "pedal", "type": "Constant", "params": {"value": "3000 N*m"}})
    c.append(["pedal.y"] + [f"{w}.brake" for w, _, _ in WHEELS])
    scopes = [
        {"name": "position", "title": "Position along the grade (downhill is -x)",
         "signals": [sig("car.x", "mm", "x")]},
        {"name": "patches", "title": "Patch stuck (1) and longitudinal patch forces",
         "panels": [[sig(f"{w}.patch_stuck", None, w) for w, _, _ in WHEELS],
                    [sig(f"{w}.fx", "N", w) for w, _, _ in WHEELS]]},
        {"name": "loads", "title": "Normal loads", "signals": [sig(f"{w}.fz", "N", w) for w, _, _ in WHEELS]},
    ]
    return netlist("vd_parked_slope", "A 1500 kg car braked (3000 N·m per wheel) on a 10 % grade (RigidBody.gravity tilted by atan 0.1) with static friction at the contact patches (WheelCollider.static_friction): the patches stick at t = 0, settle a few millimetres into their springs and hold; the loads follow the inclined-plane moment balance. Without static_friction the same car creeps downhill at 0.037 m/s.", b, c, 10.0, scopes=scopes, extra_log=[f"{w}.patch_stuck" for w, _, _ in WHEELS])


def awd():
    """A four-wheel drive (centre TorqueSplitter, two open axle Differentials) pulling away
    on split mu: the left wheels on ice spin, the open differentials hold the right wheels'
    torque to what the left ones can take."""
    b, c = car(v0="v0")
    w0 = "3.7*v0/radius"
    b += [
        {"name": "throttle", "type": "Constant", "params": {"value": "drive_torque"}},
        {"name": "motor", "type": "TorqueSource", "params": {}},
        {"name": "input_shaft", "type": "Inertia", "params": {"J": 0.1, "w0": w0}},
        {"name": "centre", "type": "TorqueSplitter", "params": {"type": "open", "front_share": "front_share"}},
        {"name": "front_shaft", "type": "Inertia", "params": {"J": 0.02, "w0": w0}},
        {"name": "rear_shaft", "type": "Inertia", "params": {"J": 0.02, "w0": w0}},
        {"name": "front_diff", "type": "Differential", "params": {"type": "open", "gear_ratio": 3.7}},
        {"name": "rear_diff", "type": "Differential", "params": {"type": "open", "gear_ratio": 3.7}},
        {"name": "ice", "type": "Constant", "params": {"value": "mu_left"}},
    ]
    c += [["throttle.y", "motor.tau"], ["motor.flange", "input_shaft.flange", "centre.input"],
          ["centre.front", "front_shaft.flange", "front_diff.input"], ["centre.rear", "rear_shaft.flange", "rear_diff.input"],
          ["front_diff.left", "fl.hub"], ["front_diff.right", "fr.hub"], ["rear_diff.left", "rl.hub"], ["rear_diff.right", "rr.hub"],
          ["ice.y", "fl.mu_scale", "rl.mu_scale"]]
    scopes = [
        {"name": "wheel_speeds", "title": "Wheel speeds", "signals": [sig(f"{w}.w", "rpm", w) for w, _, _ in WHEELS]},
        {"name": "shaft_torques", "title": "Centre differential: input and front/rear shaft torques",
         "signals": [sig("centre.tau_input", "N*m", "input"), sig("centre.tau_front", "N*m", "front"), sig("centre.tau_rear", "N*m", "rear")]},
        {"name": "yaw", "title": "Yaw rate and yaw angle",
         "panels": [[sig("car.r", "rad/s", "yaw rate")], [sig("car.yaw", "deg", "yaw")]]},
        {"name": "slips", "title": "Forward slips",
         "signals": [sig(f"{w}.forward_slip", "m/s", w) for w, _, _ in WHEELS]},
        {"name": "speed", "title": "Speed", "signals": [sig("car.speed", "km/h", "speed")]},
        trajectory(),
    ]
    return netlist("vd_awd", "A four-wheel drive car from 5 m/s: a constant torque on the centre differential (TorqueSplitter, open, 40 % to the front) and two open axle differentials (3.7:1), the left wheels on ice (mu_scale 0.2). The centre differential splits the torque 40/60 whatever the wheels do; each open axle differential gives its wheels equal torques, so the iced left wheels spin up and hold the right wheels' drive to what they can take. Set the centre's type to locked to tie the front and rear shafts together.", b, c, 4.0, scopes=scopes,
                   params={"drive_torque": "450 N*m", "v0": "5 m/s", "front_share": 0.4, "mu_left": 0.2},
                   extra_log=["centre.tau_input", "centre.tau_front", "centre.tau_rear", "centre.w_front", "centre.w_rear", "centre.w_rel"])


if __name__ == "__main__":
    for d in [static(), turn("open"), turn("locked"), brake_turn(True), brake_turn(False), split_mu(), full_car(), parked_slope(), awd()]:
        write(d)
        print("wrote", d["name"])
