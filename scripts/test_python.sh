#!/usr/bin/env bash
# The Python package's tests: a virtual environment under the cargo target directory
# ($CARGO_TARGET_DIR, else target/; created once, reused), with maturin, numpy, pandas,
# pyarrow, distributed, tqdm and pytest from PyPI; the package built from python/ with the
# dev profile (one abi3 wheel, in wheels/ of the target directory) and installed into it;
# then pytest on python/tests. The tests compare with the CLI, so the CLI is built
# too (exactly as `cargo test --workspace --all-targets` builds it: nothing to do after it).
#
# Needs only the Rust toolchain and Python 3 (>= 3.9, with its venv module).
# PYTHON=python3.12 picks another interpreter; extra arguments go to pytest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Where cargo puts its artifacts: $CARGO_TARGET_DIR (relative to the caller's directory,
# as cargo reads it), else target/ of the repository.
target=${CARGO_TARGET_DIR:-$root/target}
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
export CARGO_TARGET_DIR="$target"
cd "$root"

py=${PYTHON:-python3}
venv="$target/python-venv"
deps="maturin numpy pandas pyarrow distributed tqdm pytest"
if [ ! -x "$venv/bin/python" ]; then
    echo "== creating $venv"
    "$py" -m venv "$venv"
fi
stamp="$venv/.drivelink-deps"
if [ "$(cat "$stamp" 2>/dev/null)" != "$deps" ]; then
    echo "== pip install $deps"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $deps
    echo "$deps" > "$stamp"
fi

echo "== building the drivelink wheel (dev profile: shares the artifacts of cargo test)"
rm -f "$target"/wheels/drivelink-*.whl
"$venv/bin/maturin" build --profile dev --quiet -m python/Cargo.toml -i "$venv/bin/python" -o "$target/wheels"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$target"/wheels/drivelink-*.whl

echo "== building the CLI (for the comparison tests)"
# The same selection as `cargo test --workspace --all-targets` (scripts/test.sh runs it
# first): nothing to rebuild then, where `cargo build --bin drivelink` would unify features
# differently and recompile part of the dependency tree.
cargo test --quiet --workspace --all-targets --no-run
export DRIVELINK_CLI="$target/debug/drivelink"

echo "== pytest python/tests"
# From the repository root, so `import drivelink` is the installed package, not python/drivelink/.
"$venv/bin/python" -m pytest -q --import-mode=importlib python/tests "$@"
