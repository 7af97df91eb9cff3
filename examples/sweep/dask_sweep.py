"""A parameter study on a Dask cluster.

Here a LocalCluster with two worker processes; on Slurm or Kubernetes, make the cluster
with dask-jobqueue (``SLURMCluster``) or dask-kubernetes instead: ``drivelink.sweep``
takes any ``concurrent.futures.Executor``, and a Dask client's ``get_executor()`` is one.

    pip install ./python distributed
    python examples/sweep/dask_sweep.py
"""

import distributed

import drivelink

GRID = {"throttle": (0.15, 0.35, 5), "clutchRise": [0.1, 0.3, 0.5]}
METRICS = {"v_max": "max(vehicle.v)", "stop": "event_time(stop, stop, 1)"}

if __name__ == "__main__":
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1) as cluster, \
            distributed.Client(cluster) as client:
        df = drivelink.sweep("models/netlists/full_car.json", grid=GRID, metrics=METRICS,
                             executor=client.get_executor())
    print(df[["throttle", "clutchRise", "status", "v_max", "stop"]])
