#!/usr/bin/env bash
# Before/after on one machine: the wall time of `examples/time_runs` (compile once, run N
# times, fastest run) of a git revision against the working tree, in alternating rounds so
# that a noisy machine moves both sides alike; then whether the CLI's results.csv and
# events.csv of each netlist are bit-identical between the two builds.
#
#   bash benches/ab.sh REV RUNS ROUNDS NETLIST...
#   bash benches/ab.sh f3102b4 10 3 models/netlists/full_car.json models/netlists/vd_full_car.json
#
# REV is built in a git worktree under target/ab/ with its own target directory (the first
# build of a revision takes a few minutes; later calls reuse it). Needs git and cargo only.
set -euo pipefail
if [ $# -lt 4 ]; then
    echo "usage: bash benches/ab.sh REV RUNS ROUNDS NETLIST..." >&2
    exit 2
fi
rev=$1
runs=$2
rounds=$3
shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/ab
sha=$(git -C "$root" rev-parse --short "$rev^{commit}")
tree=$work/$sha
mkdir -p "$work"
if [ ! -d "$tree" ]; then
    git -C "$root" worktree add --detach "$tree" "$sha" >/dev/null
fi
echo "== building $sha (in $tree) and the working tree"
CARGO_TARGET_DIR=$work/target-$sha cargo build -q --release --example time_runs --bin drivelink \
    --manifest-path "$tree/Cargo.toml"
CARGO_TARGET_DIR=$target cargo build -q --release --example time_runs --bin drivelink \
    --manifest-path "$root/Cargo.toml"
a=$work/target-$sha/release
b=$target/release

for netlist in "$@"; do
    name=$(basename "$netlist" .json)
    for r in $(seq "$rounds"); do
        ta=$("$a/examples/time_runs" "$netlist" "$runs" | grep -o 'min [0-9.]* ms')
        tb=$("$b/examples/time_runs" "$netlist" "$runs" | grep -o 'min [0-9.]* ms')
        echo "$name round $r: $sha $ta | working tree $tb"
    done
    echo "$name statistics: $sha: $("$a/examples/time_runs" "$netlist" 1 | grep -o '[0-9]* steps.*')"
    echo "$name statistics: working tree: $("$b/examples/time_runs" "$netlist" 1 | grep -o '[0-9]* steps.*')"
    out=$work/out
    rm -rf "$out"
    "$a/drivelink" run "$netlist" --out "$out/a" --no-plots >/dev/null
    "$b/drivelink" run "$netlist" --out "$out/b" --no-plots >/dev/null
    if cmp -s "$out/a/results.csv" "$out/b/results.csv" && cmp -s "$out/a/events.csv" "$out/b/events.csv"; then
        echo "$name: results.csv and events.csv bit-identical"
    else
        echo "$name: results differ between $sha and the working tree"
    fi
done
