#!/usr/bin/env bash
# On the GPU machine: installs the Python package as a user would (pip, a fresh venv), runs every
# Python test against the installed copy (the GPU tests and the conformance corpus into device
# memory included), then the write benchmark (bench/gpu_write_bench.py) with it. Needs, carried:
# .device/deps (scripts/pack_device_deps.sh) and .device/pylib (scripts/pack_device_pylib.sh).
#
#   bench/device_installed.sh [--skip-bench] [gpu_write_bench.py options...]
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
OUT=${OUT:-/tmp/zd-out}
mkdir -p "$OUT"
skip_bench=0
[ "${1:-}" = --skip-bench ] && { skip_bench=1; shift; }
log() { echo "== $(date +%T) $*"; }
export LD_LIBRARY_PATH="$repo/.device/deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

log "pip install --no-build-isolation . into a fresh venv"
venv=/tmp/zd-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import zarrdirect' 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv --system-site-packages --without-pip "$venv"
  # setuptools, wheel and pytest from Debian when the machine's Python lacks them.
  pylib=""
  python3 -c 'import setuptools, wheel, pytest' 2>/dev/null || pylib="$repo/.device/pylib"
  echo "$pylib" > "$venv/pylib.txt"
  pybind_dir=$(python3 -c 'import pybind11; print(pybind11.get_cmake_dir())')
  export ZARRDIRECT_CMAKE_ARGS="-DZARRDIRECT_DEPS_DIR=$repo/.device/deps -DCMAKE_CUDA_ARCHITECTURES=90 -Dpybind11_DIR=$pybind_dir"
  PYTHONPATH="$pylib" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$venv/bin/python" -m pip install --no-build-isolation \
    --no-index --no-deps "$repo" > "$OUT/pip.log" 2>&1 || { tail -40 "$OUT/pip.log"; exit 1; }
fi
pylib=$(cat "$venv/pylib.txt")
# The machine's numpy, cupy, torch and tensorstore may sit outside the interpreter's own
# site-packages (a user site, which venvs leave out): name their folders in the venv too, after
# its own site-packages, so the installed zarrdirect still comes first.
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
python3 -c 'import importlib, os
for name in ("numpy", "cupy", "tensorstore", "torch"):
    try:
        print(os.path.dirname(os.path.dirname(importlib.import_module(name).__file__)))
    except Exception:
        pass' | sort -u > "$site/zz-machine-packages.pth"
cat "$site/zz-machine-packages.pth"
(cd / && "$venv/bin/python" -c 'import zarrdirect, sys; print(zarrdirect.__file__, zarrdirect.__version__, "cuda:", zarrdirect.cuda_available())')

log "pytest against the installed package (GPU tests included)"
(cd / && PYTHONPATH="$pylib" ZARRDIRECT_EXPECT_INSTALLED=1 timeout 400 "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  -rs "$repo/python/tests" 2>&1 | tail -30)

if [ "$skip_bench" = 0 ]; then
  log "write benchmark"
  (cd / && timeout "${BENCH_SECONDS:-420}" "$venv/bin/python" "$repo/bench/gpu_write_bench.py" --work /tmp/zd-write \
    --out "$OUT/write-bench.md" "$@")
fi
log "done"
