#!/usr/bin/env bash
# Device reads of compressed arrays by decoding side (gpu, share, cpu, auto): whole 4 GiB reads and
# regions of 32-256 MiB, for the zstd-1, sharded zstd-1 and blosc-lz4 samples (session 19).
# Run on the GPU machine with .device/deps carried (bench/device_build.sh); results in $OUT. Builds
# the CLI only (about 50 s on 16 cores).
set -uo pipefail
source "$(dirname "$0")/device_build.sh"
nvidia-smi --query-gpu=name --format=csv,noheader
log "build"
device_build OFF OFF zarrdirect_cli || exit 1
z=build-dev/zarrdirect
w=/tmp/zd-gb-patches
a=$w/zstd-128-1024x1024x2048
r=$w/raw-128-1024x1024x2048
s=$w/sharded-256-zstd-64
b=$w/blosc-lz4-128
log "arrays"
mkdir -p $w
$z sample $r --shape 1024,1024,2048 --chunks 128,128,128 --codec none > /dev/null
$z convert $r $a --codec zstd:1 -q
$z convert $r $s --codec zstd:1 --chunks 64,64,64 --shards 256,256,256 -q
$z convert $r $b --codec blosc:lz4:5:shuffle -q
rate() {  # array decode [extra bench args]: median GB/s, chunks on GPU, on CPU
  local arr=$1 side=$2; shift 2
  $z bench $arr --device cuda --decode $side "$@" --json |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(round(d["median_gbps"], 2), d["chunks_decoded_gpu"], d["chunks_decoded_cpu"])'
}
log "whole reads"
for arr in $a $s; do
  $z bench $arr --device cuda --repeat 1 > /dev/null
  for side in gpu share cpu auto; do echo "whole $(basename $arr) $side $(rate $arr $side --repeat 3)"; done
done 2>&1 | tee "$OUT/whole.txt"
$z bench $b --device cuda --repeat 1 > /dev/null
for side in auto cpu; do echo "whole blosc-lz4-128 $side $(rate $b $side --repeat 3)"; done 2>&1 | tee -a "$OUT/whole.txt"
echo "whole raw $(rate $r auto --repeat 3)" | tee -a "$OUT/whole.txt"
log "regions"
for region in 384:640,384:640,768:1280 256:768,384:640,768:1280 256:768,256:768,768:1280; do
  for side in gpu cpu auto; do echo "region $region zstd $side $(rate $a $side --region $region --repeat 9)"; done
done 2>&1 | tee "$OUT/regions.txt"
for side in share cpu auto; do echo "region 256^3 sharded-64 $side $(rate $s $side --region 384:640,384:640,896:1152 --repeat 9)"; done 2>&1 | tee -a "$OUT/regions.txt"
log "done"
