#!/usr/bin/env bash
# GPU against CPU decoding of compressed chunks (issue 18), one run: writes a uint16 sample
# (smooth signal plus noise, 128^3 chunks) uncompressed, then converts it to blosc-lz4 with byte
# shuffle, numcodecs lz4, 256^3 shards of 64^3 blosc-lz4 inner chunks, zstd-1 and 512^3 shards of
# 32^3 zstd-1 inner chunks (ARRAYS="..." picks among them), and reads each warm into
# GPU memory with ZARRDIRECT_DECODE=gpu and =cpu (`zarrdirect bench --decode`), the uncompressed
# array beside them. Median GB/s of --repeat runs after one warming read, of decoded bytes.
#
#   SIDES="gpu share" STAGINGS="256 1024" bench/decode_bench.sh [BUILD_DIR] [WORK_DIR] [SHAPE] [REPEAT]
# SIDES: the --decode settings that use the GPU (gpu: every chunk there; share: the GPU takes what
# its batches have room for, the CPU the rest), default gpu. STAGINGS: the staging budgets
# (ZARRDIRECT_STAGING_MB) they run under, a column each side and budget (a GPU decode batch holds
# up to it in stored bytes, at most 256 MiB).
set -euo pipefail
build=${1:-build-dev}
work=${2:-/tmp/zd-decode}
shape=${3:-1024,1024,1024}
repeat=${4:-3}
z="$build/zarrdirect"
mkdir -p "$work"
[ -e "$work/raw/zarr.json" ] || "$z" sample "$work/raw" --shape "$shape" --chunks 128,128,128 --codec none > /dev/null
[ -e "$work/blosc-lz4/zarr.json" ] || "$z" convert "$work/raw" "$work/blosc-lz4" --codec blosc:lz4:5:shuffle -q
[ -e "$work/lz4/zarr.json" ] || "$z" convert "$work/raw" "$work/lz4" --codec lz4 -q
[ -e "$work/sharded-blosc-lz4/zarr.json" ] ||
  "$z" convert "$work/raw" "$work/sharded-blosc-lz4" --codec blosc:lz4:5:shuffle --chunks 64,64,64 --shards 256,256,256 -q
# zstd-1: one GPU thread per frame (128^3: 4 MiB frames; shards of 32^3: 64 KiB frames, many more).
arrays=${ARRAYS:-raw blosc-lz4 lz4 sharded-blosc-lz4 zstd-1 sharded-zstd-1-32}
case " $arrays " in *" zstd-1 "*)
  [ -e "$work/zstd-1/zarr.json" ] || "$z" convert "$work/raw" "$work/zstd-1" --codec zstd:1 -q ;; esac
case " $arrays " in *" sharded-zstd-1-32 "*)
  [ -e "$work/sharded-zstd-1-32/zarr.json" ] ||
    "$z" convert "$work/raw" "$work/sharded-zstd-1-32" --codec zstd:1 --chunks 32,32,32 --shards 512,512,512 -q ;; esac
stagings=${STAGINGS:-256}
sides=${SIDES:-gpu}
header="| array | stored GiB |"
rule="|---|---:|"
for side in $sides; do
  for mb in $stagings; do header+=" --decode $side, staging $mb MiB |"; rule+="---:|"; done
done
echo "$header CPU decode GB/s | best GPU / CPU |"
echo "$rule---:|---:|"
rate() {
  "$z" bench "$1" --device cuda --decode "$2" --repeat "$repeat" --json |
    python3 -c 'import json, sys; print("%.2f" % json.load(sys.stdin)["median_gbps"])'
}
for name in $arrays; do
  stored=$(du -sb "$work/$name" | awk '{printf "%.2f", $1 / 2^30}')
  "$z" bench "$work/$name" --device cuda --repeat 1 > /dev/null  # warm
  row="| $name | $stored |"
  best=0
  for side in $sides; do
    for mb in $stagings; do
      gpu=$(ZARRDIRECT_STAGING_MB=$mb rate "$work/$name" "$side")
      row+=" $gpu |"
      best=$(python3 -c "print(max($best, $gpu))")
    done
  done
  cpu=$(rate "$work/$name" cpu)
  echo "$row $cpu | $(python3 -c "print(f'{$best / $cpu:.2f}x')") |"
done
