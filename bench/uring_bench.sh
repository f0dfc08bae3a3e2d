#!/usr/bin/env bash
# io_uring against the thread pool's pread per chunk (Settings::io_engine), into host memory,
# warm page cache: a uint16 array of raw 32^3 chunks (default 512 MiB, 8192 files of 64 KiB),
# read alternately with ZARRDIRECT_IO=threads and =uring, several rounds, at each thread count.
# Prints each round's median GB/s and the median over rounds; `auto` (kAutoUsesUring in
# src/engine/uring_reads.hpp) should take io_uring only where it wins here.
#
#   bench/uring_bench.sh [build dir (default build)] [work dir (default /tmp/zd-uring)] [shape (default 512,512,1024)]
#                        [chunk edge (default 32)] [rounds (default 5)] [thread counts (default "4 16")]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=${2:-/tmp/zd-uring}
shape=${3:-512,512,1024}
chunk=${4:-32}
rounds=${5:-5}
thread_counts=${6:-4 16}
zd="$build/zarrdirect"
array="$work/raw-$chunk-${shape//,/x}"
mkdir -p "$work"
[ -e "$array/zarr.json" ] || "$zd" sample "$array" --shape "$shape" --chunks "$chunk,$chunk,$chunk" --codec none >/dev/null
"$zd" bench "$array" --device cpu --repeat 2 >/dev/null  # warm the page cache
for threads in $thread_counts; do
  declare -A all=([threads]="" [uring]="")
  for round in $(seq "$rounds"); do
    for engine in threads uring; do
      line=$(ZARRDIRECT_IO=$engine "$zd" bench "$array" --device cpu --threads "$threads" --repeat 5 --json)
      median=$(echo "$line" | /usr/bin/env python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.3f %s" % (d["median_gbps"], d["io_engine"]))')
      echo "threads=$threads round=$round $engine: $median GB/s"
      all[$engine]+="${median%% *} "
    done
  done
  for engine in threads uring; do
    echo "threads=$threads $engine: median over rounds $(echo "${all[$engine]}" | tr ' ' '\n' | grep . | sort -n |
      awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}') GB/s"
  done
  unset all
done
