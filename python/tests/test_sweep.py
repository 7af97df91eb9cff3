"""drivelink.sweep: the CLI's table, locally, on a process pool and on a Dask cluster."""

import json
from concurrent.futures import Executor, ProcessPoolExecutor

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
    # Units, as pandas and Dask users expect them: in attrs, and in the CLI's Parquet file.
    units = df.attrs["units"]
    assert units["v_max"] == "m/s" and units["stop"] == "s" and units["w_mean"] == "rad/s"
    assert units["end_time"] == "s" and "throttle" not in units and "status" not in units
    import pyarrow.parquet as pq

    schema = pq.read_schema(tmp_path / "sweep.parquet")
    assert json.loads(schema.metadata[b"drivelink.study"])["units"] == units
    # Each column's unit is its Arrow field metadata, where pyarrow users look for it.
    field_units = {f.name: f.metadata[b"unit"].decode() for f in schema if f.metadata and b"unit" in f.metadata}
    assert field_units == units


def test_sweep_errors_are_the_cli_messages(netlist, cli, tmp_path):
    path = netlist("full_car.json")
    with pytest.raises(drivelink.ModelError) as e:
        drivelink.sweep(path, grid={"throtle": [0.2]}, metrics={"v": "max(vehicle.vv)"})
    p = cli("sweep", path, "--grid", "throtle=[0.2]", "--metric", "v=max(vehicle.vv)", "--out", tmp_path / "x",
            check=False)
    assert p.returncode == 2
    cli_lines = [l.removeprefix("error: ") for l in p.stderr.strip().splitlines()]
    # The same messages, naming the Python arguments where the CLI names its options.
    python_terms = [l.replace("--grid ", "grid ").replace("--metric ", "metrics ") for l in cli_lines]
    assert str(e.value).splitlines() == python_terms
    assert "did you mean 'throttle'" in str(e.value)
    assert "--" not in str(e.value)


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


def test_dask_local_cluster_with_two_worker_processes_gives_the_local_table(netlist, tmp_path):
    distributed = pytest.importorskip("distributed")
    import dask
    path = netlist("full_car.json")
    local = drivelink.sweep(path, grid=GRID, metrics=METRICS, stop_time=30)
    # The scheduler's and the workers' scratch space in the test's own directory (by
    # default a dask-scratch-space directory in the system's temporary directory, kept).
    with dask.config.set({"temporary-directory": str(tmp_path)}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        remote = drivelink.sweep(path, grid=GRID, metrics=METRICS, stop_time=30, executor=client.get_executor())
    assert len(remote) == 20
    same_table(local, remote)


def test_numpy_values_are_the_numbers_they_hold(netlist):
    """A numpy count in a grid tuple ran throttle = 0.15, 0.35 and 3.0 (the count read as
    a third value); np.float64 values were written as "np.float64(0.15)"; numpy integers
    in ``set`` raised a bare TypeError. They now mean what they hold."""
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


def test_ctrl_c_interrupts_a_sweep_at_once_and_keeps_the_finished_runs(long_run, ctrl_c_when, tmp_path):
    """Ctrl-C ends the runs going on within a step, skips the rest and raises
    KeyboardInterrupt carrying the finished runs (they were lost), written to ``out``
    marked interrupted as the CLI does. One thread: the 1 s run, then one of minutes
    (Ctrl-C comes once the study reports the first run done), then a 2 s run."""
    progress = ctrl_c_when(lambda done, total: done >= 1)
    out = tmp_path / "study"
    with pytest.raises(KeyboardInterrupt) as e:
        drivelink.sweep(long_run, grid={"t_end": ["1 s", "1e6 s", "2 s"]}, metrics=["m=max(lag.y)"], jobs=1,
                        progress=progress, out=out)
    assert progress.sent == [(1, 3)]
    table = e.value.table
    assert list(table.run) == [0] and list(table.status) == ["completed"] and list(table.end_time) == [1.0]
    assert table.attrs["interrupted"] is True
    assert table.attrs["study"]["interrupted"] is True and table.attrs["study"]["finished_runs"] == 1
    study = json.loads((out / "study.json").read_text())
    assert study["interrupted"] is True and study["finished_runs"] == 1
    assert list(pd.read_csv(out / "sweep.csv").run) == [0]


def test_dask_ctrl_c_cancels_outstanding_runs_without_tracebacks(long_run, ctrl_c_when, capfd, tmp_path):
    distributed = pytest.importorskip("distributed")
    import dask
    progress = ctrl_c_when(lambda done, total: done >= 1)
    submitted = []

    class Recording(Executor):
        """The cluster's executor, keeping the futures it hands out."""

        def __init__(self, inner):
            self.inner = inner

        def submit(self, fn, *args, **kwargs):
            f = self.inner.submit(fn, *args, **kwargs)
            submitted.append(f)
            return f

    # The scheduler's and the workers' scratch space in the test's own directory (by
    # default a dask-scratch-space directory in the system's temporary directory, kept).
    with dask.config.set({"temporary-directory": str(tmp_path)}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        with pytest.raises(KeyboardInterrupt) as e:
            drivelink.sweep(long_run, grid={"t_end": ["1 s", "1e6 s", "1e6 s", "1e6 s"]}, metrics=["m=max(lag.y)"],
                            executor=Recording(client.get_executor()), progress=progress)
        # Every run but the finished one was cancelled (a Dask future's cancel reaches the
        # scheduler; the runs already going on end with their workers, at the cluster's close).
        assert len(submitted) == 4 and submitted[0].done() and not submitted[0].cancelled()
        assert all(f.cancelled() for f in submitted[1:])
    assert list(e.value.table.run) == [0]
    assert e.value.table.attrs["interrupted"] is True
    err = capfd.readouterr().err
    assert "Traceback" not in err, err


def test_a_float_count_in_a_grid_tuple_is_refused_naming_the_parameter(netlist):
    path = netlist("mech_brake_stop.json")
    with pytest.raises(TypeError, match=r"grid\['J'\]: \(start, stop, count\) needs an int count, got 3\.0"):
        drivelink.sweep(path, grid={"J": (1.0, 3.0, 3.0)})
    with pytest.raises(TypeError, match=r"grid\['J'\]: expected \(start, stop, count\), a list"):
        drivelink.sweep(path, grid={"J": 2.0})


def test_metrics_given_as_one_text_is_one_metric(netlist):
    df = drivelink.sweep(netlist("mech_brake_stop.json"), grid={"J": [2.0]}, metrics="w=final(flywheel.w)")
    assert list(df.columns)[-2] == "w" and df.w.iloc[0] == 0.0


def test_python_errors_name_python_arguments_not_cli_flags(netlist):
    path = netlist("mech_brake_stop.json")
    with pytest.raises(drivelink.ModelError) as e:
        drivelink.sweep(path, grid={"J": [1.0]}, set={"J": 2.0})
    assert str(e.value) == "grid J: parameter 'J' is already given by set; give each parameter once"
    with pytest.raises(drivelink.ModelError) as e:
        drivelink.sweep(path, dist={"J": "uniform(1, 2)"})
    assert str(e.value).startswith("dist J=uniform(1, 2): sampled parameters need samples=N"), str(e.value)
    with pytest.raises(drivelink.ModelError) as e:
        drivelink.sweep(path)
    assert str(e.value).startswith("grid: a study needs at least one grid NAME=SPEC"), str(e.value)
    with pytest.raises(drivelink.ModelError) as e:
        drivelink.sweep(path, grid={"J": [1.0]}, shard="2/2")
    assert str(e.value).startswith("shard 2/2: expected I/N"), str(e.value)


def test_progress_counts_finished_runs_locally_and_on_an_executor(netlist):
    path = netlist("mech_brake_stop.json")
    for executor in (None, ProcessPoolExecutor(max_workers=2)):
        seen = []
        drivelink.sweep(path, grid={"J": (1.0, 3.0, 5)}, progress=lambda d, n: seen.append((d, n)), executor=executor)
        assert seen[-1] == (5, 5)
        assert [d for d, _ in seen] == sorted(d for d, _ in seen) and all(n == 5 for _, n in seen)
        if executor is not None:
            executor.shutdown()


def test_shards_written_with_out_merge_into_the_whole_study(netlist, cli, tmp_path):
    path = netlist("mech_brake_stop.json")
    kw = dict(grid={"J": (1.0, 3.0, 5)}, metrics={"stop": "event_time(brake, lock, 1)"})
    whole = drivelink.sweep(path, out=tmp_path / "whole", **kw)
    parts = [drivelink.sweep(path, shard=s, out=tmp_path / f"s{k}", **kw) for k, s in enumerate(["0/2", (1, 2)])]
    assert [list(p.run) for p in parts] == [[0, 1], [2, 3, 4]]
    assert parts[1].attrs["study"]["shard"] == {"index": 1, "count": 2, "first_run": 2, "end_run": 5}
    cli("sweep-merge", tmp_path / "s1", tmp_path / "s0", "--out", tmp_path / "m")
    merged = pd.read_csv(tmp_path / "m" / "sweep.csv")
    same_table(merged, pd.read_csv(tmp_path / "whole" / "sweep.csv"))
    same_table(whole, pd.read_csv(tmp_path / "whole" / "sweep.csv"))
    # The CLI's own table of the study: same id, same rows.
    cli("sweep", path, "--grid", "J=1.0:3.0:5", "--metric", "stop=event_time(brake, lock, 1)", "--out", tmp_path / "c")
    c = json.loads((tmp_path / "c" / "study.json").read_text())
    assert c["study_id"] == whole.attrs["study"]["study_id"]
    # A used directory is refused, naming it; force=True replaces the study.
    with pytest.raises(drivelink.ModelError) as e:
        drivelink.sweep(path, out=tmp_path / "whole", grid={"J": [5.0]})
    assert f"out {tmp_path / 'whole'}: the directory holds a study already" in str(e.value)
    assert "force=True" in str(e.value) and "--" not in str(e.value)
    drivelink.sweep(path, out=tmp_path / "whole", grid={"J": [5.0]}, force=True)
    assert list(pd.read_csv(tmp_path / "whole" / "sweep.csv").J) == [5.0]
