"""A netlist's metrics: Result.metrics is summary.json's "metrics" of the CLI run, computed
with the run's parameter values; a sweep takes them as its default columns."""

import json
import math

import drivelink
import pytest


def netlist(tmp_path):
    """s.y = amp·sin(2π t), r.y a ramp from 0 at 1 s to 4 at 3 s; only s.y is logged."""
    v = {
        "drivelink": 1, "name": "m",
        "parameters": {"amp": 2},
        "solver": {"stop_time": 3, "output_interval": "1 ms"},
        "blocks": [
            {"name": "s", "type": "Sine", "params": {"amplitude": "amp", "frequency": 1}},
            {"name": "r", "type": "Ramp", "params": {"start_time": 1, "duration": 2, "height": 4}},
        ],
        "log": ["s.y"],
        "metrics": {
            "peak": "max(s.y)",
            "mean_half": "mean(s.y, 0 s, 500 ms)",
            "cross": "first_time(r.y >= 2)",
            "ratio": "peak / amp",
            "never": "first_time(r.y > 10)",
        },
    }
    p = tmp_path / "net.json"
    p.write_text(json.dumps(v))
    return str(p)


def test_result_metrics_equal_the_cli_summary(tmp_path, cli):
    path = netlist(tmp_path)
    r = drivelink.load(path).run()
    m = r.metrics
    assert list(m) == ["peak", "mean_half", "cross", "ratio", "never"]
    assert m["peak"] == pytest.approx(2.0, abs=1e-9)
    # Mean of 2 sin over half a period: 4/π (trapezoids with a 1 ms step: within 7e-6).
    assert m["mean_half"] == pytest.approx(4 / math.pi, abs=1e-5)
    assert m["cross"] == pytest.approx(2.0, abs=1e-9)
    assert m["never"] is None
    # r.y was logged for the metrics.
    assert "r.y" in r
    cli("run", path, "--out", tmp_path / "out", "--no-report", "--no-plots")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert m == summary["metrics"]
    assert r.summary["metrics"] == summary["metrics"]


def test_metrics_use_the_runs_parameter_values(tmp_path):
    m = drivelink.load(netlist(tmp_path)).run(set={"amp": 5}).metrics
    assert m["peak"] == pytest.approx(5.0, abs=1e-9)
    assert m["ratio"] == pytest.approx(1.0, abs=1e-9)


def test_sweep_columns_default_to_the_netlists_metrics(tmp_path):
    df = drivelink.sweep(netlist(tmp_path), grid={"amp": [1, 3]})
    assert list(df.columns[-6:-1]) == ["peak", "mean_half", "cross", "ratio", "never"]
    assert list(df["peak"]) == pytest.approx([1.0, 3.0], abs=1e-9)
    df = drivelink.sweep(netlist(tmp_path), grid={"amp": [1, 3]}, metrics={"peak": "min(s.y)"})
    assert list(df["ratio"]) == pytest.approx([-1.0, -1.0], abs=1e-9)


def test_a_bad_metric_is_a_located_model_error(tmp_path):
    p = tmp_path / "bad.json"
    v = json.loads(open(netlist(tmp_path)).read())
    v["metrics"] = {"a": "max(s.yy)"}
    p.write_text(json.dumps(v))
    with pytest.raises(drivelink.ModelError, match=r"metrics\.a: at column 5: unknown signal 's\.yy' \(did you mean 's\.y'\?\)"):
        drivelink.load(str(p))
