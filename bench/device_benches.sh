#!/usr/bin/env bash
# The GPU machine's run of the benchmarks added with the batched reads, pyramids, Dask, HTTP and
# selections, each capped in time so one device call (10 minutes) holds several. Needs build-dev
# from bench/device_session.sh on the same (warm) machine, and .device/pylib for Dask.
#
#   bench/device_benches.sh patches pyramid dask http http-nginx selection read region
# (http-nginx needs .device/nginx from scripts/pack_device_nginx.sh)
# Each name's output goes to $OUT/<name>.log (and its table to $OUT/<name>.md where it writes one).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/zd-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.device/deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for entry in .device/pylib/*; do
  name=$(basename "$entry" .py)
  python3 -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('$name') else 1)" 2>/dev/null &&
    rm -rf "$entry"
done
export PYTHONPATH="$PWD/build-dev/python:$PWD/.device/pylib"
work=/tmp/zd-bench
mkdir -p "$work"
cap=${BENCH_CAP:-240}
run() {
  local name=$1; shift
  echo "== $(date +%T) $name: $*"
  timeout "$cap" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?  # before any expansion: $(date) would reset $?
  echo "== $(date +%T) $name rc=$rc"
  tail -25 "$OUT/$name.log"
}
for what in "$@"; do
  case "$what" in
    patches) run patches python3 bench/patch_bench.py --build build-dev --work "$work/patches" --out "$OUT/patches.md" --repeat 2 ;;
    pyramid) run pyramid python3 bench/pyramid_bench.py --gpu --work "$work/pyramid" --repeat 2 ;;
    dask) run dask python3 bench/dask_bench.py --gpu --zarrdirect build-dev/zarrdirect --work "$work/dask" --repeat 2 ;;
    http) run http python3 bench/http_bench.py --device cuda --server python --zarrdirect build-dev/zarrdirect --work "$work/http" --repeat 2 --skip-zarr-python ;;
    # Debian's nginx packed by scripts/pack_device_nginx.sh (carry .device/nginx).
    http-nginx) run http-nginx python3 bench/http_bench.py --device cuda --nginx .device/nginx/nginx --zarrdirect build-dev/zarrdirect --work "$work/http" --repeat 3 --skip-zarr-python ;;
    dask-large) run dask-large python3 bench/dask_bench.py --gpu --zarrdirect build-dev/zarrdirect --work "$work/dask" --repeat 3 --blocks 256 512 512 ;;
    dask-probe) run dask-probe python3 bench/dask_probe.py --zarrdirect build-dev/zarrdirect --work "$work/dask" ;;
    # The same with the pinned pool held to one read's staging (about the pool before its budget).
    dask-probe-small-pool) ZARRDIRECT_PINNED_POOL_MB=256 run dask-probe-small-pool python3 bench/dask_probe.py --zarrdirect build-dev/zarrdirect --work "$work/dask" ;;
    region) run region python3 bench/region_rewrite_probe.py --work "$work/region" ;;
    selection) run selection python3 bench/selection_bench.py --size 512 --chunk 64 ;;
    read) run read python3 bench/gpu_bench.py --build build-dev --work "$work/read" --out "$OUT/read.md" --arrays ${READ_ARRAYS:-raw-128,zstd-128} --repeat 3 --skip-cold ;;
    *) echo "unknown benchmark $what" ;;
  esac
done
rm -rf "$work"
