"""Inputs of exported FMUs, driven by fmpy: a top-level `Inport` block `u` feeds the
first-order lag 1/(tau*s + 1) (tau = 0.5 s); exported with `drivelink fmu` as FMI 3.0
and FMI 2.0 FMUs, Co-Simulation and Model Exchange, validated by fmpy, and simulated by
`fmpy.simulate_fmu(..., input=...)` with a unit step of `u` at t = 0.3 s. The lag's
output must follow the closed form y = 1 - exp(-(t - 0.3)/tau) after the step (0
before): to 1e-9 in Co-Simulation (drivelink's own solver at rtol 1e-12; fmpy steps to the
input's discontinuity exactly) and 1e-6 in Model Exchange (fmpy's CVODE at rtol 1e-9,
the step a time event of fmpy's input).

Runs under pytest (skipped without fmpy or the CLI) and as a script
(`target/fmi-venv/bin/python python/tests/test_fmi_inputs.py`, as scripts/test_fmi.sh
does). The CLI is $DRIVELINK_CLI, else target/debug/drivelink, else target/release/drivelink.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# Run as a script (scripts/test_fmi.sh) or collected by pytest in importlib mode: the
# shared helpers sit next to this file either way.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fmi_common import find_cli  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TAU, T_STEP, STOP = 0.5, 0.3, 1.5

NETLIST = {
    "drivelink": 1,
    "name": "inport_lag",
    "description": "An input u into the first-order lag 1/(tau*s + 1).",
    "parameters": {"tau": f"{TAU} s"},
    "solver": {"method": "dopri5", "stop_time": STOP, "rtol": 1e-12, "atol": 1e-14},
    "blocks": [
        {"name": "u", "type": "Inport", "params": {"value": 0}},
        {"name": "lag", "type": "TransferFcn", "params": {"num": [1], "den": ["tau", 1]}},
    ],
    "connections": [["u.y", "lag.u"]],
    "log": ["lag.y"],
}


def exact(t):
    return 0.0 if t < T_STEP else 1.0 - math.exp(-(t - T_STEP) / TAU)


def step_input():
    import numpy as np

    # Two rows at the step time: fmpy takes it as a discontinuity (a time event).
    return np.array([(0.0, 0.0), (T_STEP, 0.0), (T_STEP, 1.0), (STOP, 1.0)],
                    dtype=[("time", np.float64), ("u", np.float64)])


def export(cli, out, version, kind):
    net = Path(out) / "inport_lag.json"
    net.write_text(json.dumps(NETLIST, indent=1))
    fmu = Path(out) / f"inport_lag.fmi{version}.{kind}.fmu"
    subprocess.run([cli, "fmu", str(net), "--fmi", str(version), "--kind", kind,
                    "--out", str(fmu)], check=True, stdout=subprocess.DEVNULL)
    return str(fmu)


def check(cli, version, kind):
    """Export, validate and simulate one FMU; the worst |y - exact| over the points."""
    from fmpy import read_model_description, simulate_fmu
    from fmpy.validation import validate_fmu

    with tempfile.TemporaryDirectory() as out:
        fmu = export(cli, out, version, kind)
        problems = validate_fmu(fmu)
        assert not problems, f"fmpy validate: {problems}"
        md = read_model_description(fmu)
        u = next(v for v in md.modelVariables if v.name == "u")
        assert (u.causality, u.variability, float(u.start)) == ("input", "continuous", 0.0)
        if kind == "cs":
            res = simulate_fmu(fmu, fmi_type="CoSimulation", input=step_input(),
                               output_interval=0.01, stop_time=STOP, output=["lag.y"])
            tol = 1e-9
        else:
            res = simulate_fmu(fmu, fmi_type="ModelExchange", input=step_input(),
                               relative_tolerance=1e-9, output_interval=0.01,
                               stop_time=STOP, output=["lag.y"])
            tol = 1e-6
    worst, where = 0.0, None
    times = list(res["time"])
    for i, (t, y) in enumerate(zip(times, res["lag.y"])):
        # At the step instant fmpy's ME result holds the left- and right-hand rows (both
        # 0: the lag's output is continuous); elsewhere one value.
        e = abs(y - exact(t))
        if e > worst:
            worst, where = e, (t, y)
    assert times[-1] >= STOP - 1e-9
    assert res["lag.y"][-1] > 0.85, res["lag.y"][-1]  # 1 - exp(-2.4) = 0.909
    assert worst <= tol, f"FMI {version} {kind}: |y - exact| = {worst:.3e} at {where}"
    return worst


def cases():
    return [(v, k) for v in (3, 2) for k in ("cs", "me")]


try:
    import pytest

    @pytest.mark.parametrize("version,kind", cases())
    def test_fmu_input_step_follows_the_lag_closed_form(version, kind):
        pytest.importorskip("fmpy")
        cli = find_cli()
        if cli is None:
            pytest.skip("the drivelink CLI is not built (cargo build -p drivelink -p drivelink-fmi)")
        check(cli, version, kind)
except ImportError:  # run as a script without pytest
    pass


if __name__ == "__main__":
    cli = find_cli()
    if cli is None:
        sys.exit("the drivelink CLI is not built")
    for version, kind in cases():
        worst = check(cli, version, kind)
        print(f"inport_lag FMI {version}.0 {kind}: fmpy validate clean, "
              f"max |y - closed form| = {worst:.3e}")
