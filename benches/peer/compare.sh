#!/usr/bin/env bash
# drivelink against its hand-written scipy peer, in one run on the same machine:
# the 1,000-lag TransferFcn chain (benches/netlists/tf_chain_1000.json), 10 s, Dopri5 /
# RK45 at rtol 1e-6, atol 1e-8. Both sides time only the integration (the model compiled
# once, numpy arrays allocated once) and report the fastest of REPEATS runs, alternating
# drivelink and scipy ROUNDS times so machine load hits both alike.
#
# Needs the Rust toolchain and Python 3: numpy and scipy go into target/bench-venv.
# Usage: bash benches/peer/compare.sh [REPEATS] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
repeats=${1:-20}
rounds=${2:-3}
venv=target/bench-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check numpy scipy
fi
cargo build --quiet --release --example time_runs
bin=target/release/examples/time_runs
for r in $(seq "$rounds"); do
    d=$("$bin" benches/netlists/tf_chain_1000.json "$repeats" | grep " min ")
    s=$("$venv/bin/python" benches/peer/tf_chain_scipy.py 1000 "$repeats")
    dm=$(echo "$d" | sed -E 's/.*min ([0-9.]+) ms.*/\1/')
    sm=$(echo "$s" | sed -nE 's/wall_ms = ([0-9.]+)/\1/p')
    echo "round $r: drivelink $dm ms ($(echo "$d" | sed -E 's/.*; ([0-9]+ steps, [0-9]+ rhs).*/\1/')), scipy $sm ms ($(echo "$s" | sed -n 2p)); scipy/drivelink = $(python3 -c "print(f'{$sm/$dm:.1f}')")x"
done
