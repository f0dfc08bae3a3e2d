#!/usr/bin/env bash
# Huffman literals split over lanes and frames over blocks of threads (issue 18, session 20): the
# GPU zstd tests, the kernel-level timing with 1, 8 and 32 lanes a stream and 32 or 256 threads a
# frame on batches from 8 to 8,192 frames, then device reads of the 4 GiB zstd-1 sample (regions
# of 16-256 MiB, the sharded array's 256^3 region, whole reads) on the CPU path, the GPU and
# `auto`, with the lane count (ZARRDIRECT_ZSTD_LITERAL_LANES) and the frame team
# (ZARRDIRECT_ZSTD_FRAME_TEAM) forced where said.
# Run on the GPU machine with .device/deps carried (bench/device_build.sh); results in $OUT.
set -uo pipefail
source "$(dirname "$0")/device_build.sh"
nvidia-smi --query-gpu=name --format=csv,noheader
log "build"
device_build "${PYTHON:-OFF}" ON zarrdirect_tests zarrdirect_cli zstd_kernel_bench ${EXTRA_TARGETS:-} || exit 1
log "GPU tests"
timeout 240 build-dev/tests/zarrdirect_tests \
  --gtest_filter="${TEST_FILTER:-GpuZstd*:ZstdGpuJobs*:ZstdHuffmanLanes*:GpuDecode*:DeviceChunkDecoder*}" > "$OUT/tests.log" 2>&1
grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure" "$OUT/tests.log" | head -30
grep -A12 "Failure" "$OUT/tests.log" | head -40
log "kernels"
k=build-dev/bench/zstd_kernel_bench
{ for shape in "8 128 8" "16 128 16" "64 64 64" "64 128 16" "256 128 16" "8192 32 256"; do
    set -- $shape
    echo "### $1 frames of $2^3"
    timeout 60 $k --chunks $1 --edge $2 --distinct $3 --repeat 9
    echo
  done; } 2>&1 | tee "$OUT/kernels.md"
z=build-dev/zarrdirect
w=/tmp/zd-gb-patches
a=$w/zstd-128-1024x1024x2048
r=$w/raw-128-1024x1024x2048
s=$w/sharded-256-zstd-64
log "arrays"
mkdir -p $w
[ -d $r ] || $z sample $r --shape 1024,1024,2048 --chunks 128,128,128 --codec none > /dev/null
[ -d $a ] || $z convert $r $a --codec zstd:1 -q
[ -d $s ] || $z convert $r $s --codec zstd:1 --chunks 64,64,64 --shards 256,256,256 -q
rate() {  # array decode [extra bench args]: median GB/s, chunks on GPU, on CPU
  local arr=$1 side=$2; shift 2
  $z bench $arr --device cuda --decode $side "$@" --json |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(round(d["median_gbps"], 2), round(d["bytes_out"] / d["median_gbps"] / 1e6, 2), "ms", d["chunks_decoded_gpu"], d["chunks_decoded_cpu"])'
}
log "reads"
$z bench $a --device cuda --repeat 1 > /dev/null
$z bench $s --device cuda --repeat 1 > /dev/null
# Regions of 16 MiB to 256 MiB of the 128^3 array, the sharded array's 256^3 region, whole reads:
# the CPU path, the GPU alone, auto; the sharded region also with each lane count forced.
{ for region in 384:640,384:640,768:896 384:640,384:640,768:1024 384:640,384:640,768:1280 256:768,384:640,768:1280 256:768,256:768,768:1280; do
    for side in cpu gpu auto; do echo "region $region zstd $side $(rate $a $side --region $region --repeat 9)"; done
  done
  sr=384:640,384:640,896:1152
  for side in cpu gpu auto; do echo "region 256^3 sharded-64 $side $(rate $s $side --region $sr --repeat 9)"; done
  for lanes in 1 8 32; do
    echo "region 256^3 sharded-64 gpu lanes $lanes $(ZARRDIRECT_ZSTD_LITERAL_LANES=$lanes rate $s gpu --region $sr --repeat 9)"
  done
  for team in 32 256; do
    echo "region 384:640,384:640,768:1024 zstd gpu team $team $(ZARRDIRECT_ZSTD_FRAME_TEAM=$team rate $a gpu --region 384:640,384:640,768:1024 --repeat 9)"
  done
  for arr in $a $s; do
    for side in cpu gpu auto; do echo "whole $(basename $arr) $side $(rate $arr $side --repeat 3)"; done
  done; } 2>&1 | tee "$OUT/reads.txt"
log "done"
