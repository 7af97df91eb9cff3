#!/usr/bin/env bash
# drivelink against its hand-written scipy peer, in one run on the same machine:
# the 1,000-lag TransferFcn chain (benches/netlists/tf_chain_1000.json), 10 s, Dopri5 /
# RK45 at rtol 1e-6, atol 1e-8. Both sides time only the integration (the model compiled
# once, numpy arrays allocated once) and report the fastest of REPEATS runs, alternating
# drivelink and scipy ROUNDS times so machine load hits both alike.
#
# drivelink runs the chain twice per round: with output at the solver steps, as the
# netlist asks (the peer's solve_ivp returns its steps), and with the default output of
# a netlist that gives no output setting (a grid of 2,001 points, the last lag logged):
# the same netlist without "output_interval", written to target/tf_chain_1000_grid.json.
# Both are compared with the same scipy run.
#
# Each round also times the same chain written by hand in Rust (benches/hand/lag_chain.rs,
# drivelink's solver with the same settings) and prints drivelink's time over it.
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
hand=$(cargo build -q --release --bench lag_chain_hand --message-format=json |
    grep -o '"executable":"[^"]*lag_chain_hand[^"]*"' | sed 's/.*:"//; s/"$//' | tail -1)
steps_net=benches/netlists/tf_chain_1000.json
grid_net=target/tf_chain_1000_grid.json
python3 - "$steps_net" "$grid_net" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
del d["solver"]["output_interval"]
json.dump(d, open(sys.argv[2], "w"), indent=1)
EOF
# "min X ms" of a time_runs report, and its "N steps, M rhs, ... K outputs, L model evals".
ms() { echo "$1" | sed -E 's/.*min ([0-9.]+) ms.*/\1/'; }
counts() { echo "$1" | sed -E 's/.*; ([0-9]+ steps, [0-9]+ rhs).*, ([0-9]+ outputs, [0-9]+ model evals).*/\1, \2/'; }
ratio() { python3 -c "print(f'{$1/$2:.1f}')"; }
for r in $(seq "$rounds"); do
    d=$("$bin" "$steps_net" "$repeats" | grep " min ")
    g=$("$bin" "$grid_net" "$repeats" | grep " min ")
    s=$("$venv/bin/python" benches/peer/tf_chain_scipy.py 1000 "$repeats")
    h=$("$hand" --runs "$repeats")
    dm=$(ms "$d")
    gm=$(ms "$g")
    sm=$(echo "$s" | sed -nE 's/wall_ms = ([0-9.]+)/\1/p')
    echo "round $r: scipy $sm ms ($(echo "$s" | sed -n 2p))"
    echo "  drivelink, output at steps:     $dm ms ($(counts "$d")); scipy/drivelink = $(ratio "$sm" "$dm")x"
    echo "  drivelink, default output grid: $gm ms ($(counts "$g")); scipy/drivelink = $(ratio "$sm" "$gm")x"
    hm=$(ms "$h")
    echo "  written by hand in Rust, output at steps: $hm ms ($(echo "$h" | sed -E 's/^hand: ([^;]*);.*/\1/')); drivelink/hand = $(python3 -c "print(f'{$dm/$hm:.2f}')")x"
done
