"""drivelink.load / Model.run against closed-form physics and the CLI."""

import json

import numpy as np
import pandas as pd
import pytest

import drivelink


def test_brake_stops_the_flywheel_at_j_w0_over_t_and_dissipates_its_kinetic_energy(netlist):
    m = drivelink.load(netlist("mech_brake_stop.json"), log=["flywheel.w"])
    assert m.parameters == {"J": "2 kg*m^2", "w0": "30 rad/s", "T": "12 N*m"}
    r = m.run(set={"J": 3.0, "T": "15 N*m"})
    assert r.status == "completed" and r.end_time == 8.0
    ev = r.events
    assert list(ev.columns) == ["time", "block", "kind", "detail"]
    lock = ev[(ev.block == "brake") & (ev.kind == "lock")].time.iloc[0]
    assert lock == pytest.approx(3.0 * 30.0 / 15.0, abs=1e-9)
    w = r["flywheel.w"]
    assert isinstance(w, np.ndarray) and w.dtype == np.float64 and w.shape == r.time.shape
    assert w[0] == 30.0 and w[-1] == 0.0
    # Linear decay at T/J until the lock.
    k = (r.time > 0.1) & (r.time < lock - 0.1)
    np.testing.assert_allclose(w[k], 30.0 - 15.0 / 3.0 * r.time[k], rtol=0, atol=1e-9)
    assert r.energy["losses"]["brake"] == pytest.approx(0.5 * 3.0 * 30.0**2, rel=1e-6)
    assert abs(r.energy["relative_residual"]) < 1e-6
    assert r.summary["status"] == "completed" and r.summary["stats"]["steps"] > 0
    df = r.to_pandas()
    assert isinstance(df, pd.DataFrame) and list(df.columns) == ["time", *r.names]
    np.testing.assert_array_equal(df["flywheel.w"].to_numpy(), w)


def test_run_is_bit_identical_to_the_cli_run_with_set(netlist, cli, tmp_path):
    path = netlist("full_car.json")
    r = drivelink.load(path).run(stop_time=20, set={"throttle": 0.3, "clutchRise": "0.4 s"})
    cli("run", path, "--set", "throttle=0.3", "--set", "clutchRise=0.4 s", "--stop-time", "20",
        "--no-plots", "--no-report", "--out", tmp_path)
    csv = pd.read_csv(tmp_path / "results.csv")
    assert list(csv.columns) == ["time", *r.names]
    np.testing.assert_array_equal(csv["time"].to_numpy(), r.time)
    for n in r.names:
        np.testing.assert_array_equal(csv[n].to_numpy(), r[n], err_msg=n)


def test_errors_are_exceptions_with_the_cli_messages(netlist, cli, tmp_path):
    path = netlist("full_car.json")
    m = drivelink.load(path)
    with pytest.raises(drivelink.ModelError) as e:
        m.run(set={"throtle": 0.3})
    assert "parameters.throtle" in str(e.value) and "did you mean 'throttle'" in str(e.value)
    with pytest.raises(KeyError, match="not logged"):
        m.run(stop_time=1)["vehicle.vv"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"drivelink": 1, "name": "b", "blocks": [{"name": "c", "type": "FrictionClutch"}]}')
    with pytest.raises(drivelink.ModelError) as e:
        drivelink.load(bad)
    expected = cli("validate", bad, check=False).stderr.strip().removeprefix("error: ")
    assert str(e.value) == expected
    assert "did you mean 'Clutch'" in expected
    with pytest.raises(drivelink.ModelError, match="I/O error"):
        drivelink.load(tmp_path / "missing.json")
    assert issubclass(drivelink.ModelError, drivelink.DrivelinkError)


def test_a_failed_run_returns_its_partial_result(tmp_path):
    # A sine into an integrator at rtol 1e-10 needs far more than 20 steps for 10 s: the
    # solver gives up, and the run returns what it had.
    model = tmp_path / "too_few_steps.json"
    model.write_text(json.dumps({
        "drivelink": 1, "name": "too_few_steps",
        "solver": {"stop_time": 10, "rtol": 1e-10, "atol": 1e-12, "max_steps": 20},
        "blocks": [{"name": "s", "type": "Sine", "params": {"amplitude": 1, "frequency": 1}},
                   {"name": "i", "type": "Integrator"}],
        "connections": [["s.y", "i.u"]],
        "log": ["i.y"],
    }))
    r = drivelink.load(model).run()
    assert r.status == "failed" and "max" in r.message
    assert 0 < r.end_time < 10


def test_absurd_settings_from_set_raise_a_located_error_as_the_cli(netlist):
    """A sample time giving billions of time events is refused as by the CLI (exit 2,
    naming the block parameter), not an unlocated failed run."""
    m = drivelink.load(netlist("signal_discrete.json"))
    with pytest.raises(drivelink.ModelError) as e:
        m.run(set={"Ts": "1e-9 s"})
    text = str(e.value)
    assert "blocks[1].params.sample_time" in text and "max_time_events" in text, text



def test_a_solver_section_over_parameters_follows_set(long_run):
    """The fixture's stop time is its parameter t_end; run(set=...) kept the netlist's
    1e6 s (the settings were read once, at loading)."""
    m = drivelink.load(long_run)
    r = m.run(set={"t_end": "1.5 s"})
    assert r.status == "completed" and r.end_time == 1.5
    # An explicit stop_time still wins.
    assert m.run(set={"t_end": "1.5 s"}, stop_time=0.5).end_time == 0.5


def test_ctrl_c_interrupts_a_long_run_at_once(long_run, ctrl_c_when):
    """Ctrl-C ends Model.run at its next step (it waited for the whole run, here minutes)
    and KeyboardInterrupt carries the run so far. Ctrl-C comes once the run reports
    t >= 2000 s of its 1e6 s, however loaded the machine is."""
    m = drivelink.load(long_run)
    progress = ctrl_c_when(lambda t, stop: t >= 2000.0)
    with pytest.raises(KeyboardInterrupt) as e:
        m.run(progress=progress)
    assert progress.sent and progress.sent[0][1] == 1e6
    r = e.value.result
    assert r.status == "failed" and "interrupted" in r.message, r.message
    # Cut short after the point Ctrl-C came at, long before the stop time.
    assert progress.sent[0][0] <= r.end_time < 1e6
    assert r.time[-1] == r.end_time
    # The model is still usable: a short run afterwards completes.
    r = m.run(stop_time=2)
    assert r.status == "completed" and r.end_time == 2.0


def test_progress_reports_the_run_time_up_to_the_end(netlist, capsys):
    m = drivelink.load(netlist("mech_brake_stop.json"))
    seen = []
    r = m.run(progress=lambda t, stop: seen.append((t, stop)))
    assert seen and all(stop == 8.0 for _, stop in seen)
    times = [t for t, _ in seen]
    assert times == sorted(times) and times[-1] == r.end_time == 8.0
    pytest.importorskip("tqdm")
    m.run(progress=True)
    assert "100%" in capsys.readouterr().err


def test_to_pandas_carries_the_units_of_its_columns(netlist):
    r = drivelink.load(netlist("mech_brake_stop.json"), log=["flywheel.w"]).run()
    df = r.to_pandas()
    assert df.attrs["units"]["time"] == "s"
    assert df.attrs["units"]["flywheel.w"] == "rad/s"
    assert df.attrs["units"]["brake.tau"] == "N*m"
    assert set(df.attrs["units"]) <= set(df.columns)


def test_a_car_with_its_wheel_mounts_below_the_ground_warns(netlist, tmp_path):
    """As `drivelink run`: each wheel whose mount starts below the ground is named, in
    Result.warnings and as a UserWarning; the same car at its height says nothing."""
    d = json.loads(open(netlist("vd_static.json")).read())
    d["parameters"]["z_start"] = "0.55 m"
    d["blocks"][0]["params"]["z0"] = "z_start"
    path = tmp_path / "car.json"
    path.write_text(json.dumps(d))
    m = drivelink.load(path)
    assert m.warnings == []
    with pytest.warns(UserWarning) as issued:
        r = m.run(set={"z_start": "0.05 m"}, stop_time=0.2)
    assert len(r.warnings) == 4 and all("0.0500 m below the ground" in w for w in r.warnings)
    assert [str(w.message).split(": ", 1)[1] for w in issued] == r.warnings
    assert r.warnings[0].startswith("WheelCollider 'fl': its mount point")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert m.run(stop_time=0.2).warnings == []


def test_compile_warnings_are_listed_and_issued_at_load(tmp_path):
    path = tmp_path / "loose.json"
    path.write_text(json.dumps({
        "drivelink": 1, "name": "loose", "solver": {"stop_time": 1},
        "blocks": [{"name": "J", "type": "Inertia", "params": {"J": 1, "w0": 1}}],
        "connections": [],
    }))
    with pytest.warns(UserWarning, match="is not connected"):
        m = drivelink.load(path)
    assert m.warnings == [
        "flange 'J.flange' is not connected to anything; the block acts on a shaft of its own"
    ]
