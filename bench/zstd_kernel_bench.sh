#!/usr/bin/env bash
# Kernel-level GPU zstd decode timing in one command on the GPU machine: configures
# build-dev if it is not (Release, sm_90, against the packed .device/deps when they are there),
# builds the zstd_kernel_bench target and runs it with the given options (see the header of
# bench/zstd_kernel_bench.cpp), e.g.
#   bench/zstd_kernel_bench.sh                          (256 chunks of 128^3 uint16, zstd-1)
#   bench/zstd_kernel_bench.sh --edge 32 --chunks 8192  (64 KiB frames, as shards of 32^3 hold)
# BUILD=dir picks another build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build-dev}
deps=()
if [ -d .device/deps ]; then
  deps=(-DZARRDIRECT_DEPS_DIR="$PWD/.device/deps")
  export LD_LIBRARY_PATH="$PWD/.device/deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DZARRDIRECT_TESTS=OFF \
    -DZARRDIRECT_PYTHON=OFF "${deps[@]}" > /dev/null
fi
cmake --build "$build" -j "$(nproc)" --target zstd_kernel_bench > /dev/null
"$build/bench/zstd_kernel_bench" "$@"
