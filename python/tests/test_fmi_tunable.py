"""Tunable parameters and the FMU state of exported FMUs, driven by fmpy's FMU3Slave and
FMU2Slave directly: a constant 1 through a gain K into the lag 1/(tau*s + 1) (tau = 0.2 s),
exported as FMI 3.0 and FMI 2.0 Co-Simulation FMUs. K is declared tunable; the importer
sets it from 2 to 5 between the steps at t1 = 0.4 s, and the lag's output must follow the
closed form y = K1 (1 - exp(-t/tau)) before t1 and y = K2 + (y(t1) - K2) exp(-(t - t1)/tau)
after it, to 1e-8 (drivelink's solver at rtol 1e-11). Then the FMU state taken at t1 and
set back repeats the steps to the end bit for bit.

Runs under pytest (skipped without fmpy or the CLI) and as a script (as
scripts/test_fmi.sh does). The CLI is $DRIVELINK_CLI, else target/debug/drivelink, else
target/release/drivelink.
"""

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Run as a script (scripts/test_fmi.sh) or collected by pytest in importlib mode: the
# shared helpers sit next to this file either way.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fmi_common import find_cli  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TAU, T1, K1, K2, STOP, H = 0.2, 0.4, 2.0, 5.0, 1.0, 0.01

NETLIST = {
    "drivelink": 1,
    "name": "gain_lag",
    "description": "A constant 1 through the gain K into the lag 1/(tau*s + 1).",
    "parameters": {"K": K1},
    "solver": {"method": "dopri5", "stop_time": STOP, "rtol": 1e-11, "atol": 1e-13},
    "blocks": [
        {"name": "one", "type": "Constant", "params": {"value": 1}},
        {"name": "gain", "type": "Gain", "params": {"k": "K"}},
        {"name": "lag", "type": "TransferFcn", "params": {"num": [1], "den": [TAU, 1]}},
    ],
    "connections": [["one.y", "gain.u"], ["gain.y", "lag.u"]],
    "log": ["lag.y"],
}


def exact(t):
    def lag(k, y0, dt):
        return k + (y0 - k) * math.exp(-dt / TAU)

    return lag(K1, 0.0, t) if t <= T1 + 1e-12 else lag(K2, lag(K1, 0.0, T1), t - T1)


def export(cli, out, version):
    net = Path(out) / "gain_lag.json"
    net.write_text(json.dumps(NETLIST, indent=1))
    fmu = Path(out) / f"gain_lag.fmi{version}.cs.fmu"
    subprocess.run([cli, "fmu", str(net), "--fmi", str(version), "--kind", "cs",
                    "--out", str(fmu)], check=True, stdout=subprocess.DEVNULL)
    return str(fmu)


def open_slave(fmu, version, unzipdir):
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave
    from fmpy.fmi3 import FMU3Slave

    md = read_model_description(fmu)
    extract(fmu, unzipdir=unzipdir)
    vrs = {v.name: v.valueReference for v in md.modelVariables}
    k = next(v for v in md.modelVariables if v.name == "K")
    assert (k.causality, k.variability) == ("parameter", "tunable"), (k.causality, k.variability)
    if version == 3:
        assert md.coSimulation.canGetAndSetFMUstate
        s = FMU3Slave(guid=md.instantiationToken, unzipDirectory=unzipdir,
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="tunable")
        s.instantiate()
        s.enterInitializationMode(startTime=0.0, stopTime=STOP)
        s.exitInitializationMode()
        get = lambda n: s.getFloat64([vrs[n]])[0]
        put = lambda n, x: s.setFloat64([vrs[n]], [x])
    else:
        assert md.coSimulation.canGetAndSetFMUstate
        s = FMU2Slave(guid=md.guid, unzipDirectory=unzipdir,
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="tunable")
        s.instantiate()
        s.setupExperiment(startTime=0.0, stopTime=STOP)
        s.enterInitializationMode()
        s.exitInitializationMode()
        get = lambda n: s.getReal([vrs[n]])[0]
        put = lambda n, x: s.setReal([vrs[n]], [x])
    return s, get, put


def check(cli, version):
    """The worst |y - exact| over the communication points."""
    from fmpy.validation import validate_fmu

    out = tempfile.mkdtemp()
    try:
        fmu = export(cli, out, version)
        problems = validate_fmu(fmu)
        assert not problems, f"fmpy validate: {problems}"
        s, get, put = open_slave(fmu, version, os.path.join(out, "unzipped"))
        n = round(STOP / H)
        worst, state, after_t1 = 0.0, None, []
        for i in range(n):
            t = i * H
            if i == round(T1 / H):
                put("K", K2)
                assert get("K") == K2
                state = s.getFMUState() if version == 3 else s.getFMUstate()
            s.doStep(currentCommunicationPoint=t, communicationStepSize=H)
            y = get("lag.y")
            worst = max(worst, abs(y - exact(t + H)))
            if state is not None:
                after_t1.append(y)
        assert worst <= 1e-8, f"FMI {version}: |y - exact| = {worst:.3e}"
        # The state taken at t1 (K already 5) set back: the same steps again, bit for bit.
        (s.setFMUState if version == 3 else s.setFMUstate)(state)
        again = []
        for i in range(round(T1 / H), n):
            s.doStep(currentCommunicationPoint=i * H, communicationStepSize=H)
            again.append(get("lag.y"))
        assert again == after_t1, f"FMI {version}: the steps after SetFMUState differ"
        (s.freeFMUState if version == 3 else s.freeFMUstate)(state)
        s.terminate()
        s.freeInstance()
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return worst


try:
    import pytest

    @pytest.mark.parametrize("version", [3, 2])
    def test_gain_tuned_between_steps_follows_the_closed_form(version):
        pytest.importorskip("fmpy")
        cli = find_cli()
        if cli is None:
            pytest.skip("the drivelink CLI is not built (cargo build -p drivelink -p drivelink-fmi)")
        check(cli, version)
except ImportError:
    pass


if __name__ == "__main__":
    cli = find_cli()
    if cli is None:
        sys.exit("the drivelink CLI is not built")
    for v in (3, 2):
        w = check(cli, v)
        print(f"tunable K in Co-Simulation, FMI {v}.0: |y - exact| <= {w:.2e}; FMU state set back: same steps")
