"""drivelink: block-diagram simulation of drivelines and vehicles, from Python.

Load a netlist, run it with other parameter values, and run parameter studies (on this
machine's cores, or on any :class:`concurrent.futures.Executor`, for example a Dask
cluster)::

    import drivelink
    m = drivelink.load("models/netlists/full_car.json")
    r = m.run(stop_time=20, set={"throttle": 0.3})
    r.time, r["vehicle.v"]          # numpy arrays (SI units)
    r.events, r.summary, r.energy   # DataFrame, dict, dict
    df = drivelink.sweep("models/netlists/full_car.json",
                         grid={"throttle": (0.15, 0.35, 5)},
                         metrics={"v_max": "max(vehicle.v)"})

Errors in the model, a parameter value or a study raise :class:`ModelError` with the
messages of the ``drivelink`` command line (file, JSON path, block, parameter, what was
expected), one line per problem, naming the Python arguments (``grid``, ``set``,
``metrics``) where the command line names its options. A run that fails in the solver
does not raise: its result has ``status == "failed"`` and the reason in ``message``, as
with the CLI.

Ctrl-C (or an exception raised by a ``progress`` callback) ends a run or a study at its
next step and raises: the ``KeyboardInterrupt`` carries what was finished, ``e.result``
(the run so far) for :meth:`Model.run`, ``e.table`` (the finished runs, with
``attrs["interrupted"] = True``) for :func:`sweep`.
"""

from __future__ import annotations

import json
import os
import sys
import warnings as _warnings
from concurrent.futures import as_completed
from concurrent.futures import Executor
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _drivelink
from ._drivelink import DrivelinkError, ModelError

__all__ = [
    "load",
    "sweep",
    "study_args",
    "run_work_item",
    "Model",
    "Result",
    "WorkItem",
    "DrivelinkError",
    "ModelError",
]
__version__: str = _drivelink.__version__

Value = Union[float, int, bool, str]
GridSpec = Union[str, Sequence[Value], Tuple[Value, Value, int]]
#: ``True`` (a tqdm bar when tqdm is installed, else a line on stderr) or a callable:
#: ``progress(t, stop_time)`` for :meth:`Model.run`, ``progress(done, total)`` for
#: :func:`sweep`.
Progress = Union[bool, Callable[[Any, Any], Any], None]


def _progress(progress: Progress, unit: str) -> Tuple[Optional[Callable[[Any, Any], Any]], Callable[[], None]]:
    """The callback for ``progress`` and a function that closes what it opened."""
    if progress is None or progress is False:
        return None, lambda: None
    if callable(progress):
        return progress, lambda: None
    if progress is not True:
        raise TypeError(f"progress: expected True, False, None or a callable, got {type(progress).__name__}")
    bar: List[Any] = []
    try:
        from tqdm.auto import tqdm
    except ImportError:
        tqdm = None

    def show(done: Any, total: Any) -> None:
        if tqdm is not None:
            if not bar:
                bar.append(tqdm(total=total, unit=unit))
            bar[0].n = done
            bar[0].refresh()
        else:
            sys.stderr.write(f"\r{done:g}/{total:g} {unit}")
            sys.stderr.flush()
            bar.append(None)

    def close() -> None:
        if bar and bar[0] is not None:
            bar[0].close()
        elif bar:
            sys.stderr.write("\n")

    return show, close


def _f64(b: bytes) -> np.ndarray:
    # A copy, so the array is writeable and owns its memory.
    return np.frombuffer(b, dtype="<f8").astype(np.float64, copy=True)


class Result:
    """The results of one run (what ``drivelink run`` writes, in memory).

    ``r.time`` and ``r["block.var"]`` are numpy arrays in SI units; every event instant is
    recorded twice (the value before and after the event).
    """

    def __init__(self, native: Any) -> None:
        self._n = native
        self._cache: Dict[str, np.ndarray] = {}
        self._summary: Optional[Dict[str, Any]] = None

    @property
    def names(self) -> List[str]:
        """The logged variables, in column order."""
        return list(self._n.names())

    @property
    def time(self) -> np.ndarray:
        """The sample times, s."""
        if "\0time" not in self._cache:
            self._cache["\0time"] = _f64(self._n.time_bytes())
        return self._cache["\0time"]

    def __getitem__(self, name: str) -> np.ndarray:
        """The samples of a logged variable (``KeyError`` naming the logged ones)."""
        if name not in self._cache:
            b = self._n.column_bytes(name)
            if b is None:
                raise KeyError(
                    f"'{name}' is not logged; logged: {', '.join(self.names)} "
                    "(log more with drivelink.load(path, log=[...]))"
                )
            self._cache[name] = _f64(b)
        return self._cache[name]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names

    @property
    def warnings(self) -> List[str]:
        """Problems with the run's starting pose that it would otherwise hide, each naming
        its block (a wheel whose mount starts below the ground), as ``drivelink run``
        prints them; :meth:`Model.run` also issues each as a ``UserWarning``."""
        return list(self._n.warnings())

    @property
    def status(self) -> str:
        """``completed``, ``stopped`` or ``failed``."""
        return str(self._n.status())

    @property
    def end_time(self) -> float:
        """Time the run ended, s."""
        return float(self._n.end_time())

    @property
    def message(self) -> str:
        """Why the run ended (the solver's message when it failed)."""
        return str(self._n.message())

    @property
    def events(self) -> "pandas.DataFrame":  # noqa: F821
        """The event log (``events.csv``): columns time, block, kind, detail."""
        import pandas as pd

        return pd.DataFrame(self._n.events(), columns=["time", "block", "kind", "detail"])

    @property
    def summary(self) -> Dict[str, Any]:
        """``summary.json``: model, status, end time, message, solver stats, wall time,
        energy audit, the netlist's metrics."""
        if self._summary is None:
            self._summary = json.loads(self._n.summary_json())
        return self._summary

    @property
    def energy(self) -> Dict[str, Any]:
        """The energy audit, J: ``sources`` and ``losses`` by element, kinetic and spring
        energy at start and end, impact loss, residual."""
        return self.summary["energy"]

    @property
    def metrics(self) -> Dict[str, Optional[float]]:
        """The netlist's ``metrics``, by name, in its order: ``summary.json``'s
        ``"metrics"`` (``None`` where a value is undefined, NaN; empty without a
        ``metrics`` section)."""
        return dict(self.summary.get("metrics", {}))

    @property
    def units(self) -> Dict[str, str]:
        """The SI unit of each column whose unit is known (``time`` in ``s``)."""
        return {"time": "s", **self.summary.get("units", {})}

    def to_pandas(self) -> "pandas.DataFrame":  # noqa: F821
        """``results.csv`` as a DataFrame: ``time`` then one column per logged variable;
        ``attrs["units"]`` maps each column whose unit is known to its SI unit."""
        import pandas as pd

        data = {"time": self.time}
        for n in self.names:
            data[n] = self[n]
        df = pd.DataFrame(data)
        df.attrs["units"] = self.units
        return df

    def __repr__(self) -> str:
        return f"<drivelink.Result {self.status} at t = {self.end_time} s, {len(self.names)} signals>"


class Model:
    """A netlist compiled once; :meth:`run` runs it with other parameter values (the plan
    is shared, the netlist is not read again)."""

    def __init__(self, path: Union[str, os.PathLike], log: Union[str, Sequence[str]] = ()) -> None:
        self.path = os.fspath(path)
        # One name is a list of one (a string is not split into its characters).
        names = [log] if isinstance(log, str) else list(log)
        self._n = _drivelink.NativeModel(self.path, names)
        for w in self.warnings:
            _warnings.warn(f"{self.path}: {w}", UserWarning, stacklevel=2)

    @property
    def name(self) -> str:
        """The model name."""
        return str(self._n.name())

    @property
    def parameters(self) -> Dict[str, Any]:
        """Top-level parameters, as written in the netlist (numbers in SI, or text with
        units such as ``"800 rpm"``)."""
        return dict(json.loads(self._n.parameters_json()))

    @property
    def variables(self) -> List[str]:
        """Every loggable variable (``block.var``)."""
        return list(self._n.variables())

    @property
    def logged(self) -> List[str]:
        """The variables a run records."""
        return list(self._n.logged())

    @property
    def warnings(self) -> List[str]:
        """What compiling found (an unconnected flange acts on a shaft of its own), as
        ``drivelink validate`` prints it; issued as ``UserWarning`` when the model loads."""
        return list(self._n.compile_warnings())

    def run(
        self,
        stop_time: Optional[Value] = None,
        set: Optional[Mapping[str, Value]] = None,
        progress: Progress = None,
    ) -> Result:
        """Run once. ``set`` gives top-level parameter values (numbers in SI units, or text
        with a unit such as ``"250 ms"``, or a word for a choice parameter), as
        ``drivelink run --set``; ``stop_time`` overrides the netlist's (seconds, or a
        text with a unit such as ``"2 min"``, as ``--stop-time``). The same values
        give bit-identical results to the CLI. Raises :class:`ModelError` for an unknown
        parameter or a value a block refuses.

        ``progress=True`` shows a bar (tqdm when installed); a callable is called as
        ``progress(t, stop_time)`` (seconds) on this thread as the run reaches its output
        points. Ctrl-C, or an exception the callable raises, ends the run at its next step
        and is raised with the run so far as its ``result`` attribute (status
        ``failed``, ``message`` saying it was interrupted)."""
        show, close = _progress(progress, "s")
        try:
            native, stopped = self._n.run(_set_json(set), None if stop_time is None else _fmt(stop_time), show)
        finally:
            close()
        r = Result(native)
        if stopped is not None:
            stopped.result = r
            raise stopped
        for w in r.warnings:
            _warnings.warn(f"{self.path}: {w}", UserWarning, stacklevel=2)
        return r

    def __repr__(self) -> str:
        return f"<drivelink.Model {self.name!r} from {self.path!r}>"


def load(path: Union[str, os.PathLike], log: Union[str, Sequence[str]] = ()) -> Model:
    """Load and compile a netlist; ``log`` adds variables to its log. Raises
    :class:`ModelError` with the CLI's located messages if the model is invalid."""
    return Model(path, log)


def _plain(v: Any) -> Any:
    """A numpy scalar as the Python number it holds (``np.float64(0.15)`` -> ``0.15``,
    ``np.int64(3)`` -> ``3``); anything else unchanged."""
    return v.item() if isinstance(v, np.generic) else v


def _fmt(v: Value) -> str:
    v = _plain(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _is_count(v: Any) -> bool:
    v = _plain(v)
    return isinstance(v, int) and not isinstance(v, bool)


def _set_json(set: Optional[Mapping[str, Value]]) -> str:
    """The ``set`` overrides as the native module takes them: numpy scalars as plain
    numbers, NaN and infinities refused with the parameter named."""
    if set is not None and not isinstance(set, Mapping):
        raise ModelError(f"set: expected a dict of parameter name -> value, got {type(set).__name__}")
    out: Dict[str, Any] = {}
    for k, v in (set or {}).items():
        v = _plain(v)
        if isinstance(v, float) and not np.isfinite(v):
            raise ModelError(f"set: parameter '{k}' is {v}; expected a finite number, a text with a unit or a word")
        out[k] = v
    return json.dumps(out)


def _count(what: str, v: Any, lo: int, hi: int) -> int:
    v = _plain(v)
    if not _is_count(v) or not lo <= v <= hi:
        raise ModelError(f"{what}: expected an integer from {lo} to {hi}, got {v!r}")
    return int(v)


def study_args(
    grid: Optional[Mapping[str, GridSpec]] = None,
    samples: Optional[int] = None,
    dist: Optional[Mapping[str, Union[str, Tuple[str, Value, Value]]]] = None,
    metrics: Optional[Union[Mapping[str, str], Sequence[str]]] = None,
    seed: int = 0,
    sampling: str = "lhs",
    set: Optional[Mapping[str, Value]] = None,
    stop_time: Optional[Value] = None,
) -> Dict[str, Any]:
    """The study's arguments in the CLI's syntax (what ``study.json`` records).

    ``grid`` maps a parameter to ``(start, stop, count)``, a list of values, or the CLI's
    text (``"0.1 s:0.5 s:25"``); ``dist`` to ``"uniform(a, b)"`` or ``("normal", mu,
    sigma)``; ``metrics`` maps column names to expressions (or is a list of
    ``"NAME=EXPR"``)."""
    g = [_grid_arg(name, spec) for name, spec in (grid or {}).items()]
    d = []
    for name, spec in (dist or {}).items():
        if isinstance(spec, str):
            d.append(f"{name}={spec}")
        else:
            kind, a, b = spec
            d.append(f"{name}={kind}({_fmt(a)},{_fmt(b)})")
    if metrics is None:
        m: List[str] = []
    elif isinstance(metrics, str):
        m = [metrics]  # one metric, not its characters
    elif isinstance(metrics, Mapping):
        m = [f"{k}={v}" for k, v in metrics.items()]
    else:
        m = list(metrics)
    if sampling not in ("lhs", "random"):
        raise ModelError(f"sampling: expected 'lhs' or 'random', got {sampling!r}")
    sets = json.loads(_set_json(set))
    return {
        "grid": g,
        "dist": d,
        "samples": None if samples is None else _count("samples", samples, 0, 10**9),
        "seed": _count("seed", seed, 0, 2**64 - 1),
        "sampling": sampling,
        "metrics": m,
        "set": [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in sets.items()],
        "stop_time": None if stop_time is None else _fmt(stop_time),
    }


def _grid_arg(name: str, spec: Any) -> str:
    """One ``grid`` entry in the CLI's syntax. A 3-tuple is ``(start, stop, count)``: a
    count that is no int (``3.0``) is refused rather than read as a third value."""
    if isinstance(spec, str):
        return f"{name}={spec}"
    if isinstance(spec, tuple) and len(spec) == 3:
        if not _is_count(spec[2]):
            raise TypeError(
                f"grid['{name}']: (start, stop, count) needs an int count, got {spec[2]!r}; "
                f"give a list for explicit values, e.g. [{', '.join(map(repr, map(_plain, spec)))}]"
            )
        return f"{name}={_fmt(spec[0])}:{_fmt(spec[1])}:{_plain(spec[2])}"
    if isinstance(_plain(spec), (int, float, bool)) or not hasattr(spec, "__iter__"):
        raise TypeError(
            f"grid['{name}']: expected (start, stop, count), a list of values or the CLI's text, got {spec!r}"
        )
    return f"{name}=[{','.join(_fmt(v) for v in spec)}]"


class WorkItem:
    """What a worker needs to run one point of a study: the netlist text (so workers need
    not share a file system; subsystem files are resolved from ``base_dir``), the study's
    arguments and the run index. Picklable; a worker compiles the study once per process
    and reuses it (see :func:`run_work_item`)."""

    __slots__ = ("study_id", "text", "origin", "base_dir", "args_json", "index")

    def __init__(self, study_id: str, text: str, origin: str, base_dir: str, args_json: str, index: int) -> None:
        self.study_id = study_id
        self.text = text
        self.origin = origin
        self.base_dir = base_dir
        self.args_json = args_json
        self.index = index

    def __getstate__(self) -> Tuple[Any, ...]:
        return tuple(getattr(self, k) for k in self.__slots__)

    def __setstate__(self, state: Tuple[Any, ...]) -> None:
        for k, v in zip(self.__slots__, state):
            setattr(self, k, v)


_STUDIES: Dict[str, Any] = {}


def run_work_item(item: WorkItem) -> List[Any]:
    """Run one point of a study (on a worker): compiles the study on first use in this
    process, then reuses it. Returns the table row (``None`` for NaN)."""
    study = _STUDIES.get(item.study_id)
    if study is None:
        study = _drivelink.NativeStudy(item.text, item.origin, item.base_dir, item.args_json)
        _STUDIES.clear()  # keep one study per worker process
        _STUDIES[item.study_id] = study
    return json.loads(study.run_one(item.index))


def _frame(columns: List[Dict[str, str]], rows: List[List[Any]]) -> "pandas.DataFrame":  # noqa: F821
    import pandas as pd

    data: Dict[str, Any] = {}
    for j, c in enumerate(columns):
        col = [r[j] for r in rows]
        if c["type"] == "int":
            data[c["name"]] = np.array(col, dtype=np.int64)
        elif c["type"] == "float":
            data[c["name"]] = np.array([np.nan if v is None else v for v in col], dtype=np.float64)
        else:
            data[c["name"]] = pd.Series(col, dtype=object)
    return pd.DataFrame(data, columns=[c["name"] for c in columns])


def _shard(study: Any, shard: Union[None, str, Tuple[int, int]]) -> Tuple[int, int, Optional[Tuple[int, int]]]:
    """The runs of ``shard`` (``"I/N"`` or ``(I, N)``): first, end, ``(I, N)``."""
    n = study.n_runs()
    if shard is None:
        return 0, n, None
    if isinstance(shard, tuple) and len(shard) == 2 and all(_is_count(x) for x in shard):
        shard = f"{_plain(shard[0])}/{_plain(shard[1])}"
    if not isinstance(shard, str):
        raise TypeError(f"shard: expected \"I/N\" or (I, N) with 0 <= I < N, got {shard!r}")
    start, end, i, k = study.shard(shard)
    return start, end, (i, k)


def _run_on_executor(
    executor: Executor, items: List[WorkItem], show: Optional[Callable[[Any, Any], Any]]
) -> Tuple[List[List[Any]], Optional[BaseException]]:
    """Run ``items`` on ``executor``; the rows of the finished runs in run order, and the
    exception (Ctrl-C, or raised by ``show``) that ended the study early. Then the
    outstanding futures are cancelled (those already running on a worker end there)."""
    futures = [executor.submit(run_work_item, item) for item in items]
    rows: List[Optional[List[Any]]] = [None] * len(futures)
    where = {f: k for k, f in enumerate(futures)}
    done = 0
    try:
        for f in as_completed(futures):
            rows[where[f]] = f.result()
            done += 1
            if show is not None:
                show(done, len(futures))
    except BaseException as e:  # Ctrl-C, or a failed worker: cancel what is left, keep what finished
        for f in futures:
            f.cancel()
        for k, f in enumerate(futures):
            if rows[k] is None and f.done() and not f.cancelled() and f.exception() is None:
                rows[k] = f.result()
        return [r for r in rows if r is not None], e
    return [r for r in rows if r is not None], None


def sweep(
    path: Union[str, os.PathLike],
    grid: Optional[Mapping[str, GridSpec]] = None,
    samples: Optional[int] = None,
    metrics: Optional[Union[Mapping[str, str], Sequence[str], str]] = None,
    executor: Optional[Executor] = None,
    *,
    dist: Optional[Mapping[str, Union[str, Tuple[str, Value, Value]]]] = None,
    seed: int = 0,
    sampling: str = "lhs",
    set: Optional[Mapping[str, Value]] = None,
    stop_time: Optional[Value] = None,
    jobs: Optional[int] = None,
    progress: Progress = None,
    out: Union[str, os.PathLike, None] = None,
    shard: Union[None, str, Tuple[int, int]] = None,
    keep_results: bool = False,
    force: bool = False,
) -> "pandas.DataFrame":  # noqa: F821
    """Run a parameter study; the table of ``drivelink sweep`` (``sweep.csv``) as a
    DataFrame: ``run``, every swept parameter (SI), ``status``, ``end_time``,
    ``wall_time`` (solver seconds), every metric, ``message``; one row per run in run
    order. A failed run is a row with status ``failed`` and its message.
    ``attrs["study"]`` is ``study.json``; ``attrs["units"]`` maps each column whose unit
    is known to its SI unit.

    Without ``executor`` the runs go on this machine's cores (``jobs`` threads, default
    all). With any :class:`concurrent.futures.Executor` (a ``ProcessPoolExecutor``, or a
    Dask cluster's ``distributed.Client(...).get_executor()``) each run is shipped as a
    picklable :class:`WorkItem`; each worker compiles the study once and reuses it.

    ``metrics`` maps column names to expressions, or is a list of ``"NAME=EXPR"`` (or one
    such text); the netlist's own ``metrics`` are the default columns, and one given here
    with the name of one of them replaces its expression (the others are added after
    them). ``progress=True`` shows a bar (tqdm when installed); a callable is called
    as ``progress(done, total)`` on this thread as runs finish. ``out`` writes the study
    directory as ``drivelink sweep --out`` does (``sweep.csv``, ``sweep.parquet``,
    ``study.json``; with ``keep_results`` each run's results under ``runs/``, without an
    executor only); a directory that holds a study already is refused unless ``force``.
    ``shard="I/N"`` (or ``(I, N)``) runs only slice I of N, as ``--shard``.

    Ctrl-C (or an exception ``progress`` raises) ends the runs going on at their next
    step, cancels the rest (an executor's outstanding futures are cancelled) and is
    raised with the finished runs' table as its ``table`` attribute (``attrs
    ["interrupted"]`` is True; with ``out`` it is written, marked interrupted, as the CLI
    does).

    Example::

        df = drivelink.sweep("full_car.json",
                             grid={"throttle": (0.15, 0.35, 5), "clutchRise": [0.1, 0.3]},
                             metrics={"stop": "event_time(stop, stop, 1)"})
        df = drivelink.sweep("full_car.json", samples=50, seed=1,
                             dist={"coeffFric": "normal(0.3, 0.02)"},
                             metrics=["v_max=max(vehicle.v)"], progress=True)
    """
    path = os.fspath(path)
    args = study_args(grid, samples, dist, metrics, seed, sampling, set, stop_time)
    args_json = json.dumps(args)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ModelError(f"I/O error on {path}: {e.strerror or e}") from None
    base_dir = os.path.dirname(os.path.abspath(path))
    study = _drivelink.NativeStudy(text, path, base_dir, args_json)
    columns = json.loads(study.columns_json())
    start, end, part = _shard(study, shard)
    out = None if out is None else os.fspath(out)
    if keep_results and (out is None or executor is not None):
        raise ValueError("keep_results: needs out= and runs without an executor (the runs write into out/runs/)")
    if out is not None:
        study.prepare_out(out, bool(force))
    show, close = _progress(progress, "runs")
    try:
        if executor is None:
            rows_json, stopped = study.run(
                start, end, _count("jobs", jobs or 0, 0, 4096), show, out if keep_results else None
            )
            rows = json.loads(rows_json)
        else:
            sid = study.id()
            items = [WorkItem(sid, text, path, base_dir, args_json, i) for i in range(start, end)]
            rows, stopped = _run_on_executor(executor, items, show)
    finally:
        close()
    df = _frame(columns, rows)
    df.attrs["study"] = json.loads(study.study_json(part))
    df.attrs["units"] = json.loads(study.units_json())
    if out is not None:
        study.write(out, json.dumps(rows), part, stopped is not None)
    if stopped is not None:
        df.attrs["interrupted"] = True
        df.attrs["study"].update(interrupted=True, finished_runs=len(rows))
        stopped.table = df
        raise stopped
    return df
