"""drivelink.sweep: the CLI's table, locally, on a process pool and on a Dask cluster."""

from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd
import pytest

import drivelink

GRID = {"throttle": (0.15, 0.35, 4), "clutchRise": [0.1, 0.2, 0.3, 0.4, 0.5]}
METRICS = {
    "v_max": "max(vehicle.v)",
    "stop": "event_time(stop, stop, 1)",
    "w_mean": "mean(engine.w)",
}


def same_table(a: pd.DataFrame, b: pd.DataFrame):
    """Equal column for column (NaN equal to NaN), wall_time aside."""
    assert list(a.columns) == list(b.columns)
    for c in a.columns:
        if c != "wall_time":
            pd.testing.assert_series_equal(a[c], b[c], check_dtype=False, obj=c)


def test_sweep_gives_the_cli_table(netlist, cli, tmp_path):
    path = netlist("full_car.json")
    df = drivelink.sweep(path, grid=GRID, metrics=METRICS, stop_time=30)
    assert len(df) == 20
    assert list(df.columns) == ["run", "throttle", "clutchRise", "status", "end_time", "wall_time",
                                "v_max", "stop", "w_mean", "message"]
    cli("sweep", path, "--grid", "throttle=0.15:0.35:4", "--grid", "clutchRise=[0.1,0.2,0.3,0.4,0.5]",
        *[a for k, v in METRICS.items() for a in ("--metric", f"{k}={v}")], "--stop-time", "30", "--out", tmp_path)
    csv = pd.read_csv(tmp_path / "sweep.csv", keep_default_na=False,
                      na_values={c: ["NaN"] for c in df.columns if c not in ("status", "message")})
    same_table(df, csv)
    parquet = pd.read_parquet(tmp_path / "sweep.parquet")
    same_table(parquet, csv)
    # Grid order: the last grid varies fastest.
    assert list(df.clutchRise[:5]) == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert df.throttle.iloc[0] == 0.15 and df.throttle.iloc[-1] == 0.35
    # A harder throttle reaches a higher top speed at every clutch rise time.
    for rise, g in df.groupby("clutchRise"):
        assert g.v_max.is_monotonic_increasing, rise
    assert df.attrs["study"]["runs"] == 20


def test_sweep_errors_are_the_cli_messages(netlist, cli, tmp_path):
    path = netlist("full_car.json")
    with pytest.raises(drivelink.ModelError) as e:
        drivelink.sweep(path, grid={"throtle": [0.2]}, metrics={"v": "max(vehicle.vv)"})
    p = cli("sweep", path, "--grid", "throtle=[0.2]", "--metric", "v=max(vehicle.vv)", "--out", tmp_path / "x",
            check=False)
    assert p.returncode == 2
    cli_lines = [l.removeprefix("error: ") for l in p.stderr.strip().splitlines()]
    assert str(e.value).splitlines() == cli_lines
    assert "did you mean 'throttle'" in str(e.value)


def test_sampled_study_on_a_process_pool_equals_the_local_one(netlist):
    path = netlist("mech_brake_stop.json")
    kw = dict(samples=12, dist={"T": "uniform(10 N*m, 14 N*m)", "J": ("normal", 2.0, 0.1)}, seed=5,
              metrics={"stop": "event_time(brake, lock, 1)", "heat": "energy(brake)"})
    local = drivelink.sweep(path, **kw)
    with ProcessPoolExecutor(max_workers=2) as ex:
        pooled = drivelink.sweep(path, executor=ex, **kw)
    same_table(local, pooled)
    # Closed form: the brake stops the flywheel at J*w0/T and turns J*w0^2/2 into heat.
    np.testing.assert_allclose(local.stop, local.J * 30.0 / local["T"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(local.heat, 0.5 * local.J * 30.0**2, rtol=1e-6)


def test_dask_local_cluster_with_two_worker_processes_gives_the_local_table(netlist):
    distributed = pytest.importorskip("distributed")
    path = netlist("full_car.json")
    local = drivelink.sweep(path, grid=GRID, metrics=METRICS, stop_time=30)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        remote = drivelink.sweep(path, grid=GRID, metrics=METRICS, stop_time=30, executor=client.get_executor())
    assert len(remote) == 20
    same_table(local, remote)


def test_numpy_values_are_the_numbers_they_hold(netlist):
    """Regression: a numpy count in a grid tuple ran throttle = 0.15, 0.35 and 3.0 (the
    count read as a third value); np.float64 values were written as "np.float64(0.15)";
    numpy integers in ``set`` raised a bare TypeError. They now mean what they hold."""
    path = netlist("mech_brake_stop.json")
    want = drivelink.sweep(path, grid={"J": (1.0, 3.0, 3)}, metrics={"w": "final(flywheel.w)"})
    assert list(want["J"]) == [1.0, 2.0, 3.0]
    for grid in ({"J": (1.0, 3.0, np.int64(3))}, {"J": np.linspace(1.0, 3.0, 3)}, {"J": (np.float64(1.0), 3.0, 3)}):
        got = drivelink.sweep(path, grid=grid, metrics={"w": "final(flywheel.w)"}, set={"T": np.int64(12)})
        same_table(got, drivelink.sweep(path, grid={"J": (1.0, 3.0, 3)}, metrics={"w": "final(flywheel.w)"}, set={"T": 12}))
    m = drivelink.load(path)
    assert m.run(set={"T": np.int64(12)}).end_time == m.run(set={"T": 12}).end_time


def test_bad_python_arguments_are_model_errors_naming_them(netlist):
    path = netlist("mech_brake_stop.json")
    m = drivelink.load(path, log="flywheel.w")  # one name, not its characters
    assert "flywheel.w" in m.logged
    with pytest.raises(drivelink.ModelError, match="parameter 'T' is nan"):
        m.run(set={"T": float("nan")})
    with pytest.raises(drivelink.ModelError, match="jobs: expected an integer"):
        drivelink.sweep(path, grid={"J": [1.0]}, jobs=-1)
    with pytest.raises(drivelink.ModelError, match="samples: expected an integer"):
        drivelink.sweep(path, samples=3.5, dist={"J": "uniform(1, 2)"})
    # stop_time with a unit, as --stop-time; a unit that is no time is named.
    assert m.run(stop_time="2 s").end_time == 2.0
    with pytest.raises(drivelink.ModelError, match="stop_time"):
        m.run(stop_time="2 N")


def test_ctrl_c_interrupts_a_sweep_at_once(long_run, ctrl_c_after):
    """A local sweep could not be interrupted either: Ctrl-C now ends the runs going on
    within a step, skips the rest and raises KeyboardInterrupt."""
    with ctrl_c_after(0.3) as elapsed:
        drivelink.sweep(long_run, grid={"amp": [1, 2, 3, 4]}, metrics=["m=max(lag.y)"], jobs=2)
    assert elapsed() < 5.0, f"the sweep went on for {elapsed():.1f} s after Ctrl-C"
