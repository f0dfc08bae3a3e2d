#!/usr/bin/env bash
# Kernel-level GPU zstd decode timing in one command on the GPU machine (options: the header of
# bench/zstd_kernel_bench.cpp), built and run as bench/lz4_kernel_bench.sh builds its own, e.g.
#   bench/zstd_kernel_bench.sh                          (256 chunks of 128^3 uint16, zstd-1)
#   bench/zstd_kernel_bench.sh --edge 32 --chunks 8192  (64 KiB frames, as shards of 32^3 hold)
TARGET=zstd_kernel_bench exec "$(dirname "$0")/lz4_kernel_bench.sh" "$@"
