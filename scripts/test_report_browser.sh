#!/usr/bin/env bash
# Browser test of report.html: runs the full car, opens its report.html in headless
# Chromium (Debian's package, installed when missing) through Python Playwright (in a venv
# under target/), and fails on any console error, any request leaving the file, or a chart
# that did not render. Screenshots go to target/report-browser-test/.
#
# Needs: the Rust toolchain, Python 3 with venv, and (if Chromium is missing) apt-get.
# Environment: CHROMIUM=/path/to/chromium to use another browser binary.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/target/report-browser-test"
venv="$root/target/report-browser-venv"
mkdir -p "$out"

chromium=${CHROMIUM:-}
if [ -z "$chromium" ]; then
    for c in chromium chromium-browser; do
        if command -v "$c" >/dev/null 2>&1; then
            chromium=$(command -v "$c")
            break
        fi
    done
fi
if [ -z "$chromium" ]; then
    echo "Chromium not found: installing Debian's chromium package"
    sudo_cmd=""
    if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium >/dev/null
    chromium=/usr/bin/chromium
fi
echo "browser: $chromium ($("$chromium" --version 2>/dev/null || echo unknown version))"

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import playwright" 2>/dev/null; then
    "$venv/bin/pip" install -q playwright
fi

# The CLI as `cargo test --workspace --all-targets` builds it (a no-op after scripts/test.sh's
# Rust tests; `cargo run` would unify features differently and recompile much of it).
(cd "$root" && cargo test --quiet --workspace --all-targets --no-run)
"$root/target/debug/drivelink" run "$root/models/netlists/full_car.json" --no-plots --out "$out/full_car"
scopes=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['scopes']))" \
    "$root/models/netlists/full_car.json")

"$venv/bin/python" "$root/scripts/check_report_browser.py" \
    "$out/full_car/report.html" "$out" "$chromium" "$scopes"
echo "screenshots: $out/report.png, $out/report_top.png, $out/report_scope.png"
