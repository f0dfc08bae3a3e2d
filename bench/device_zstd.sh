#!/usr/bin/env bash
# One GPU-machine call for the zstd decoder (issue 18): builds build-dev without the Python module
# (Release, sm_90, tests on), runs the GPU decode tests, the kernel-level timing and the read-path
# GPU/CPU comparison; the tests include read_many's GPU decoding waves. Needs .device/deps
# (scripts/pack_device_deps.sh) carried.
#   bench/device_zstd.sh [SHAPE]        SHAPE of decode_bench's sample (default 512,512,512)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/zd-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.device/deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
log() { echo "== $(date +%T) $*"; }
log "build"
curl_options=()  # libcurl: the packed headers with the machine's own library, as device_session.sh
[ -e /usr/lib/x86_64-linux-gnu/libcurl.so ] &&
  curl_options=(-DCURL_INCLUDE_DIR="$PWD/.device/deps/include" -DCURL_LIBRARY=/usr/lib/x86_64-linux-gnu/libcurl.so)
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DZARRDIRECT_DEPS_DIR="$PWD/.device/deps" \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DZARRDIRECT_TESTS=ON -DZARRDIRECT_PYTHON=OFF "${curl_options[@]}" > "$OUT/configure.log" 2>&1 ||
  { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build-dev -j "$(nproc)" --target zarrdirect_tests zarrdirect_cli zstd_kernel_bench > "$OUT/build.log" 2>&1 ||
  { grep -E "error" -A5 "$OUT/build.log" | head -40; exit 1; }
log "GPU tests"
nvidia-smi --query-gpu=name --format=csv,noheader
ZARRDIRECT_CONFORMANCE_DIR="$PWD/tests/data/conformance" timeout 200 build-dev/tests/zarrdirect_tests \
  --gtest_filter="${TEST_FILTER:-GpuDecode*:GpuZstd*:ZstdGpuJobs*:DeviceRead.*:DeviceChunkDecoder*:DevicePlacer*}" > "$OUT/tests.log" 2>&1
grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure" "$OUT/tests.log" | head -30
grep -A12 "Failure" "$OUT/tests.log" | head -60
log "kernels"
{ timeout 60 build-dev/bench/zstd_kernel_bench --chunks 256 --edge 128
  timeout 60 build-dev/bench/zstd_kernel_bench --chunks 8192 --edge 32 --distinct 256; } 2>&1 | tee "$OUT/kernels.md"
log "read path"
ARRAYS="${ARRAYS:-raw zstd-1 sharded-zstd-1-32}" STAGINGS="${STAGINGS:-256 1024}" timeout "${READ_SECONDS:-200}" \
  bench/decode_bench.sh build-dev /tmp/zd-dz "${1:-512,512,512}" 2 2>&1 | tee "$OUT/read.md"
log "done"
