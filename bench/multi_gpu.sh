#!/usr/bin/env bash
# Issue 19 on a machine with several GPUs (works with one: every mode then uses that one):
# builds what the multi-GPU benchmark runs, describes the machine, runs the C++ and Python
# device-ordinal tests over every GPU, then bench/multi_gpu.py (conformance into each GPU, and
# aggregate throughput per process per GPU / one process for all GPUs / one GPU / host bound).
# Needs in the checkout what bench/device_session.sh needs (.device/deps, the conformance corpus).
# Results land in $OUT (multi_gpu.md, multi_gpu.log, build logs).
#
#   bench/multi_gpu.sh [--bench-only] [multi_gpu.py options: --gpus N --repeat R --skip-cold ...]
# --bench-only reuses build-dev from an earlier call on the same warm machine. The benchmark is
# capped by BENCH_SECONDS (default 480) so that one device call (10 minutes) holds it all once the
# build exists; the 4 GiB arrays are written on first use (about a minute each) into /tmp/zd-bench.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/zd-out}
mkdir -p "$OUT"
bench_only=0
bench_args=()
for arg in "$@"; do
  if [ "$arg" = --bench-only ]; then bench_only=1; else bench_args+=("$arg"); fi
done
log() { echo "== $(date +%T) $*"; }
export LD_LIBRARY_PATH="$PWD/.device/deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ZARRDIRECT_CONFORMANCE_DIR="$PWD/tests/data/conformance"
pythonpath="$PWD/build-dev/python"
python3 -c 'import pytest' 2>/dev/null || pythonpath="$pythonpath:$PWD/.device/pylib"

log "machine"
nvidia-smi --query-gpu=index,name,memory.total,pci.bus_id --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -20
echo "cores: $(nproc)"; free -g | head -2; df -h /tmp | tail -1

if [ "$bench_only" = 0 ] || [ ! -x build-dev/zarrdirect ] || [ ! -x build-dev/bench/bare_loop ]; then
  log "build"
  pybind_dir=$(python3 -c 'import pybind11; print(pybind11.get_cmake_dir())' 2>/dev/null)
  tests=OFF
  [ "$bench_only" = 0 ] && tests=ON
  cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DZARRDIRECT_DEPS_DIR="$PWD/.device/deps" \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DZARRDIRECT_TESTS=$tests -DZARRDIRECT_PYTHON=ON -DZARRDIRECT_BENCH=ON \
    -DPython3_EXECUTABLE="$(command -v python3)" -Dpybind11_DIR="$pybind_dir" > "$OUT/configure.log" 2>&1 ||
    { tail -40 "$OUT/configure.log"; exit 1; }
  targets=(--target zarrdirect_cli bare_loop zarrdirect_python)
  [ "$tests" = ON ] && targets+=(zarrdirect_tests)
  cmake --build build-dev -j "$(nproc)" "${targets[@]}" > "$OUT/build.log" 2>&1 ||
    { grep -E "error|Error" -A5 "$OUT/build.log" | head -60; exit 1; }
  log "built"
fi

log "system"
build-dev/zarrdirect info --system

if [ "$bench_only" = 0 ]; then
  log "device-ordinal tests (every GPU)"
  build-dev/tests/zarrdirect_tests --gtest_filter='DeviceOrdinals*:Device.*:DeviceChecks*:PrintSystem*' 2>&1 |
    tee "$OUT/ordinal_tests.log" | grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure" | head -40
  PYTHONPATH="$pythonpath" timeout 240 python3 -m pytest -q python/tests/test_devices.py 2>&1 | tail -8
  # The CLI on each device, and the refusal of one past the last.
  count=$(PYTHONPATH="$pythonpath" python3 -c 'import zarrdirect; print(zarrdirect.cuda_device_count())')
  sample=$(ls -d tests/data/conformance/zarr-python-3/*/array | head -1)
  for k in $(seq 0 $((count - 1))); do build-dev/zarrdirect read -q "$sample" --device "cuda:$k"; done
  build-dev/zarrdirect read -q "$sample" --device "cuda:$count"; echo "exit $? (expected 1: cuda:$count does not exist)"
fi

log "benchmark"
PYTHONPATH="$pythonpath" timeout "${BENCH_SECONDS:-480}" python3 bench/multi_gpu.py --build build-dev \
  --work /tmp/zd-bench --out "$OUT/multi_gpu.md" "${bench_args[@]}"
log "done"
