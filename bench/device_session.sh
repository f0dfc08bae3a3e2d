#!/usr/bin/env bash
# One call on the GPU machine: build, GPU tests, Python GPU tests, system description, benchmark.
# Needs in the checkout (carried, git-ignored): .device/deps (scripts/pack_device_deps.sh) and
# the conformance corpus in tests/data/conformance. Results land in $OUT.
#
#   bench/device_session.sh [--skip-bench] [--bench-only] [--build-only] [gpu_bench.py options...]
# --bench-only reuses build-dev from a previous call on the same (warm) machine. A device call
# lasts at most 10 minutes, so a session is two calls on one warm machine:
#   bench/device_session.sh --skip-bench          (build, C++ and Python GPU tests: about 4 min)
#   bench/device_session.sh --bench-only          (the benchmark, capped by BENCH_SECONDS=540)
#   TUNE=1 BENCH_SECONDS=1 bench/device_session.sh --bench-only   (thread/ring sweep, if time is left)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/zd-out}
mkdir -p "$OUT"
bench_args=()
skip_bench=0
bench_only=0
build_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --skip-bench) skip_bench=1 ;;
    --bench-only) bench_only=1 ;;
    --build-only) build_only=1 ;;
    *) bench_args+=("$1") ;;
  esac
  shift
done
log() { echo "== $(date +%T) $*"; }
# The packed libraries' own dependencies (blosc needs snappy) are found through this path.
export LD_LIBRARY_PATH="$PWD/.device/deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# build_dev full|bench: configures and builds build-dev (Release, sm_90) against the packed
# dependencies; `full` with the tests and the Python module, `bench` only what the benchmark runs.
build_dev() {
  local options=(-DZARRDIRECT_TESTS=OFF -DZARRDIRECT_PYTHON=OFF) targets=(--target zarrdirect_cli bare_loop)
  if [ "$1" = full ] || [ "$1" = python ]; then
    local pybind_dir
    pybind_dir=$(python3 -c 'import pybind11; print(pybind11.get_cmake_dir())' 2>/dev/null)
    options=(-DZARRDIRECT_TESTS=ON -DZARRDIRECT_PYTHON=ON -DPython3_EXECUTABLE="$(command -v python3)"
             -Dpybind11_DIR="$pybind_dir")
    targets=()
    # `python`: the CLI, the module and the bound, for bench/device_benches.sh (no tests).
    [ "$1" = python ] && { options[0]=-DZARRDIRECT_TESTS=OFF; targets=(--target zarrdirect_cli zarrdirect_python bare_loop); }
  fi
  # libcurl: the packed headers with the machine's own library, when it has one.
  local curl=/usr/lib/x86_64-linux-gnu/libcurl.so
  [ -e "$curl" ] && options+=(-DCURL_INCLUDE_DIR="$PWD/.device/deps/include" -DCURL_LIBRARY="$curl")
  cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DZARRDIRECT_DEPS_DIR="$PWD/.device/deps" \
    -DCMAKE_CUDA_ARCHITECTURES=90 "${options[@]}" > "$OUT/configure.log" 2>&1 || { tail -40 "$OUT/configure.log"; exit 1; }
  grep -E "zarrdirect:" "$OUT/configure.log"
  cmake --build build-dev -j "$(nproc)" "${targets[@]}" > "$OUT/build.log" 2>&1 ||
    { grep -E "error|Error" -A5 "$OUT/build.log" | head -60; exit 1; }
}

if [ "$build_only" = 1 ]; then
  log "build (CLI, Python module, bound)"
  build_dev python
  log "built"
  exit 0
fi

if [ "$bench_only" = 0 ]; then
log "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nproc; free -g | head -2; df -h /tmp | tail -1
python3 -c 'import sys, numpy, cupy, torch; print(sys.version.split()[0], numpy.__version__, cupy.__version__, torch.__version__)'

log "build"
build_dev full
log "built"

log "system"
build-dev/zarrdirect info --system

log "C++ tests (GPU tests included)"
export ZARRDIRECT_CONFORMANCE_DIR="$PWD/tests/data/conformance"
# TEST_FILTER=... runs only those tests and prints what each failure said.
build-dev/tests/zarrdirect_tests --gtest_filter="${TEST_FILTER:-*}" 2>&1 | tee "$OUT/tests.log" |
  grep -E "^\[  (FAILED|PASSED|SKIPPED) |conformance|skipped|Failure|error" | head -80
[ -n "${TEST_FILTER:-}" ] && grep -B2 -A12 "Failure" "$OUT/tests.log" | head -150

if [ "${PYTEST:-1}" = 1 ]; then
log "Python tests"
pythonpath="$PWD/build-dev/python"
# The GPU machine lacks pytest and Dask: Debian's pure-Python copies travel in .device/pylib.
# Those the machine has itself are dropped first, so its own versions are the ones imported.
for entry in .device/pylib/*; do
  name=$(basename "$entry" .py)
  python3 -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('$name') else 1)" 2>/dev/null &&
    rm -rf "$entry"
done
pythonpath="$pythonpath:$PWD/.device/pylib"
PYTHONPATH="$pythonpath" timeout 420 python3 -m pytest -q -rf -p no:cacheprovider ${PYTEST_ARGS:-python/tests} > "$OUT/pytest.log" 2>&1
grep -E "^(FAILED|ERROR)" "$OUT/pytest.log" | head -30; tail -3 "$OUT/pytest.log"
fi  # PYTEST

fi  # bench_only

if [ "$skip_bench" = 0 ]; then
  if [ ! -x build-dev/zarrdirect ]; then
    # The machine went back between calls: build again (no tests) before measuring.
    log "build (fresh machine)"
    build_dev bench
  fi
  log "benchmark"
  timeout "${BENCH_SECONDS:-540}" python3 bench/gpu_bench.py --build build-dev --work /tmp/zd-bench --out "$OUT/bench.md" \
    "${bench_args[@]}"
fi
if [ "${TUNE:-0}" = 1 ]; then
  # The defaults' evidence: warm whole-array reads with other thread counts and staging rings.
  log "tuning"
  for array in raw-128 raw-64 zstd-128; do
    [ -f "/tmp/zd-bench/$array/zarr.json" ] || continue
    for threads in 8 16 24 32; do
      for slots in 2 4; do
        rate=$(ZARRDIRECT_SLOTS_PER_THREAD=$slots build-dev/zarrdirect bench "/tmp/zd-bench/$array" --device cuda \
               --repeat 5 --threads "$threads" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["median_gbps"])')
        echo "$array threads=$threads slots_per_thread=$slots median_gbps=$rate"
      done
    done
  done 2>&1 | tee "$OUT/tuning.log"
fi
log "done"
