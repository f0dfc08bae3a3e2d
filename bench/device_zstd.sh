#!/usr/bin/env bash
# One GPU-machine call for the zstd decoder (issue 18): builds build-dev without the Python module
# (Release, sm_90, tests on), runs the GPU decode tests, the kernel-level timing and the read-path
# GPU/CPU comparison; the tests include read_many's GPU decoding waves. Needs .device/deps
# (scripts/pack_device_deps.sh) carried.
#   bench/device_zstd.sh [SHAPE]        SHAPE of decode_bench's sample (default 512,512,512)
set -uo pipefail
source "$(dirname "$0")/device_build.sh"
log "build"
device_build OFF ON zarrdirect_tests zarrdirect_cli zstd_kernel_bench || exit 1
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
