#!/usr/bin/env bash
# A 1,000-run full-car study as a Slurm job array: each array task runs one shard of the
# study, then one job joins the shards (submit it with --dependency=afterok:<array job>).
#
#   sbatch examples/sweep/slurm_array.sh
#   sbatch --dependency=afterok:<JOBID> --wrap \
#       "drivelink sweep-merge out/study/shard_* --out out/study/all"
#
# Every shard computes the same study id from the model and the arguments; sweep-merge
# refuses shards of different studies and reports missing ones.
#SBATCH --job-name=drivelink-sweep
#SBATCH --array=0-9
#SBATCH --cpus-per-task=2
#SBATCH --time=00:10:00
set -euo pipefail
n_shards=10
drivelink sweep models/netlists/full_car.json \
    --grid throttle=0.15:0.35:40 --grid "clutchRise=0.1 s:0.5 s:25" \
    --metric "v_max=max(vehicle.v)" --metric "stop=event_time(stop, stop, 1)" \
    --jobs "${SLURM_CPUS_PER_TASK:-2}" \
    --shard "${SLURM_ARRAY_TASK_ID}/${n_shards}" \
    --out "out/study/shard_${SLURM_ARRAY_TASK_ID}"
