#!/usr/bin/env bash
# Kernel-level GPU LZ4 / blosc decode timing in one command on the GPU machine: configures
# build-dev if it is not (Release, sm_90, against the packed .device/deps when they are there),
# builds the lz4_kernel_bench target and runs it with the given options (see the header of
# bench/lz4_kernel_bench.cpp), e.g.
#   bench/lz4_kernel_bench.sh                      (512 chunks of 128^3 uint16 per kind, one launch)
#   bench/lz4_kernel_bench.sh --batch 8 --skip-old (launches of 8 chunks, as the read path's batches)
# BUILD=dir picks another build folder; TARGET=zstd_kernel_bench runs that benchmark instead
# (bench/zstd_kernel_bench.sh does).
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
target=${TARGET:-lz4_kernel_bench}
cmake --build "$build" -j "$(nproc)" --target "$target" > /dev/null
"$build/bench/$target" "$@"
