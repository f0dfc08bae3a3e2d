#!/usr/bin/env bash
# Batched device placement (issue 17) against the per-chunk path, on the GPU machine: 4 GiB uint16
# arrays of 32^3, 64^3 and 128^3 raw chunks and 512^3 shards of raw 32^3 inner chunks, read warm
# into GPU memory with ZARRDIRECT_DEVICE_BATCH=1 (batches) and =0 (a copy and a kernel per chunk),
# and into host memory for scale. Each line: the array, the mode, then `zarrdirect bench`'s JSON.
#
#   bench/batch_bench.sh [build dir (default build)] [work dir (default /tmp/zd-batch)]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=${2:-/tmp/zd-batch}
zd="$build/zarrdirect"
shape=1024,1024,2048
mkdir -p "$work"
for chunk in 32 64 128; do
  [ -e "$work/raw-$chunk/zarr.json" ] || "$zd" sample "$work/raw-$chunk" --shape "$shape" --chunks "$chunk,$chunk,$chunk" --codec none
done
[ -e "$work/shard-512-raw-32/zarr.json" ] ||
  "$zd" convert "$work/raw-128" "$work/shard-512-raw-32" --chunks 32,32,32 --shards 512,512,512 --codec raw -q
for name in raw-32 raw-64 raw-128 shard-512-raw-32; do
  "$zd" bench "$work/$name" --device cpu --repeat 2 >/dev/null  # warm the page cache
  for batch in 1 0; do
    echo "$name cuda batch=$batch $(ZARRDIRECT_DEVICE_BATCH=$batch "$zd" bench "$work/$name" --device cuda --io-path staged --repeat 5 --json)"
  done
  echo "$name cpu $("$zd" bench "$work/$name" --device cpu --repeat 5 --json)"
done
