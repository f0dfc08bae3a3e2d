#!/usr/bin/env bash
# The zstd Huffman probe (bench/zstd_huffman_probe.cu) in one short GPU-machine call: built alone
# with nvcc against the packed dependencies (no library build: about 40 s), then run. Needs
# .device/deps (scripts/pack_device_deps.sh) carried. Output also in $OUT/zstd_huffman_probe.txt.
#   bench/zstd_huffman_probe.sh [--edge E]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/zd-out}
mkdir -p "$OUT" /tmp/zd-probe
export LD_LIBRARY_PATH="$PWD/.device/deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
# -ffunction-sections and --gc-sections: sample.cpp's writer half (which needs the library) drops out.
nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -DFMT_HEADER_ONLY -Isrc -Iinclude -I.device/deps/include \
  -Xcompiler -ffunction-sections -Xlinker --gc-sections \
  bench/zstd_huffman_probe.cu src/cuda/zstd_decode_kernels.cu src/cuda/zstd_gpu_jobs.cpp src/cli/sample.cpp \
  -L.device/deps/lib -lzstd -o /tmp/zd-probe/zstd_huffman_probe || exit 1
/tmp/zd-probe/zstd_huffman_probe "$@" 2>&1 | tee "$OUT/zstd_huffman_probe.txt"
