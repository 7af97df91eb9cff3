#!/usr/bin/env bash
# The limit: drivelink's full car (models/netlists/full_car.json) against the same model
# written by hand (benches/hand/, one HybridSystem on the same solver and settings).
#
#   bash benches/full_car_hand.sh [ROUNDS] [IN_PROCESS_RUNS]     (defaults 21 and 50)
#
# 1. Builds both in release, runs `drivelink run` once and `full_car_hand --compare` on its
#    output: the trajectories, the friction mode changes and the end time side by side.
# 2. ROUNDS alternating rounds of (hand-written run, `drivelink run full_car.json --no-plots
#    --no-report`), each a process timed with `date +%s%N`; also each run's own integration
#    time (drivelink: summary.json wall_time_s; hand: its wall_time_s). Prints the medians,
#    the ratios and the time per model evaluation (derivatives + guards + outputs).
# 3. ROUNDS alternating rounds in process (no process start, no netlist compile, no files):
#    `full_car_hand --runs N` against `examples/time_runs full_car.json N`, the medians of
#    their median run times and the ratio.
# Needs bash, cargo, date, sort, awk, grep, sed.
set -euo pipefail
rounds=${1:-21}
inproc=${2:-50}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
netlist=models/netlists/full_car.json
export CARGO_INCREMENTAL=0
echo "== building (release)"
hand=$(cargo build -q --release --bench full_car_hand --bin drivelink --example time_runs \
    --message-format=json |
    grep -o '"executable":"[^"]*full_car_hand[^"]*"' | sed 's/.*:"//; s/"$//' | tail -1)
target=$(dirname "$(dirname "$hand")")
drivelink=$target/drivelink
time_runs=$target/examples/time_runs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== the same trajectory"
"$drivelink" run "$netlist" --no-plots --no-report --out "$work/cmp"
"$hand" --compare "$work/cmp"

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
now() { date +%s%N; }
field() { grep -o "\"$1\": *[0-9.e+-]*" | head -1 | sed 's/.*: *//'; }

echo "== $rounds alternating rounds: hand-written process, drivelink run process"
: >"$work/hand_proc"; : >"$work/hand_wall"; : >"$work/dl_proc"; : >"$work/dl_wall"
for _ in $(seq "$rounds"); do
    t0=$(now)
    line=$("$hand")
    t1=$(now)
    echo "$(( t1 - t0 ))" >>"$work/hand_proc"
    echo "$line" | grep -o 'wall_time_s [0-9.e-]*' | sed 's/.* //' >>"$work/hand_wall"
    t0=$(now)
    "$drivelink" run "$netlist" --no-plots --no-report --out "$work/run" >/dev/null
    t1=$(now)
    echo "$(( t1 - t0 ))" >>"$work/dl_proc"
    field wall_time_s <"$work/run/summary.json" >>"$work/dl_wall"
done
# Model evaluations as the solver asks for them (derivatives + guards + outputs) on both
# sides; also each side's own count of full evaluations (drivelink: its cache hits left
# out, outputs evaluate the logged signals; hand: its outputs read two states only).
hand_evals=$(echo "$line" | grep -o 'model_evals [0-9]*' | sed 's/.* //')
hand_own=$(echo "$line" | grep -o 'equations [0-9]*' | sed 's/.* //')
hand_steps=$(echo "$line" | grep -o 'steps [0-9]*' | head -1 | sed 's/.* //')
dl_own=$(field model_evals <"$work/run/summary.json")
dl_evals=$(( $(field rhs_evals <"$work/run/summary.json") + $(field guard_evals <"$work/run/summary.json") \
    + $(field output_points <"$work/run/summary.json") ))
dl_steps=$(field steps <"$work/run/summary.json")
hp=$(median <"$work/hand_proc"); dp=$(median <"$work/dl_proc")
hw=$(median <"$work/hand_wall"); dw=$(median <"$work/dl_wall")
awk -v hp="$hp" -v dp="$dp" -v hw="$hw" -v dw="$dw" -v he="$hand_evals" -v de="$dl_evals" \
    -v hs="$hand_steps" -v ds="$dl_steps" -v ho="$hand_own" -v dow="$dl_own" 'BEGIN {
    printf "steps: hand %d, drivelink %d; model evaluations (derivatives + guards + outputs): hand %d, drivelink %d; full evaluations each side counts itself: hand %d, drivelink %d (summary.json model_evals)\n", hs, ds, he, de, ho, dow
    printf "process wall time, median: hand %.3f ms, drivelink run %.3f ms, ratio %.2f\n", hp / 1e6, dp / 1e6, dp / hp
    printf "integration wall time, median: hand %.3f ms, drivelink %.3f ms (summary.json), ratio %.2f\n", hw * 1e3, dw * 1e3, dw / hw
    printf "per model evaluation: hand %.1f ns, drivelink %.1f ns, ratio %.2f\n", hw / he * 1e9, dw / de * 1e9, (dw / de) / (hw / he)
}'

echo "== $rounds alternating rounds in process: full_car_hand --runs $inproc, time_runs $inproc"
: >"$work/hand_in"; : >"$work/dl_in"
for _ in $(seq "$rounds"); do
    "$hand" --runs "$inproc" | grep -o 'median [0-9.]* ms' | sed 's/median //; s/ ms//' >>"$work/hand_in"
    "$time_runs" "$netlist" "$inproc" | grep -o 'median [0-9.]* ms' | sed 's/median //; s/ ms//' >>"$work/dl_in"
done
hi=$(median <"$work/hand_in"); di=$(median <"$work/dl_in")
awk -v hi="$hi" -v di="$di" -v he="$hand_evals" -v de="$dl_evals" 'BEGIN {
    printf "in-process run, median of medians: hand %.3f ms, drivelink %.3f ms, ratio %.2f\n", hi, di, di / hi
    printf "per model evaluation: hand %.1f ns, drivelink %.1f ns, ratio %.2f\n", hi / he * 1e6, di / de * 1e6, (di / de) / (hi / he)
}'
