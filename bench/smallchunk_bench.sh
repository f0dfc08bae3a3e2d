#!/usr/bin/env bash
# Small chunks at the bus's speed (issue 17), in one command: writes 4 GiB uint16 arrays (raw
# 32^3, 64^3 and 128^3 chunks; 16 shards of 512^3 with raw 32^3 inner chunks; the same shards
# with zstd-1 inner chunks), then reads each warm and prints one markdown table:
#
#   GPU batched / per chunk   zarrdirect into GPU memory, ZARRDIRECT_DEVICE_BATCH=1 and =0, with
#                             the CUDA calls per chunk its counters report (ReadStats::cuda_calls)
#   host threads / io_uring   zarrdirect into host memory, ZARRDIRECT_IO=threads and =uring
#   bare GPU / bare host      bench/bare_loop: 16 threads pread whole files and copy them to the
#                             GPU (or, --host, memcpy them into host memory): the bound
#   tensorstore               bench/peers/tensorstore_read.py (host read, then CuPy for GPU),
#                             where python3 imports tensorstore (and cupy for GPU)
#
# Medians of --repeat runs, GB/s of the array's bytes (the bare loop: of its files' bytes).
#
#   bench/smallchunk_bench.sh [--device cuda|cpu] [--shape A,B,C] [--shard N] [--repeat R]
#                             [--build DIR] [--work DIR] [--no-peers]
#
# On the GPU machine: `bench/smallchunk_bench.sh` (defaults: cuda, 1024,1024,2048, shards of 512,
# 3 runs; about 5 minutes with writing the arrays, which a second run reuses). Without a GPU,
# for checking the script: `bench/smallchunk_bench.sh --device cpu --shape 128,128,256 --shard 64`.
set -euo pipefail
cd "$(dirname "$0")/.."
device=cuda shape=1024,1024,2048 shard=512 repeat=3 build=build work=/tmp/zd-smallchunk peers=1
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --shape) shape=$2; shift 2 ;;
    --shard) shard=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --no-peers) peers=0; shift ;;
    *) echo "smallchunk_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$device" in cuda | cpu) ;; *) echo "smallchunk_bench.sh: --device cuda or cpu" >&2; exit 2 ;; esac
zd="$build/zarrdirect"
bare="$build/bench/bare_loop"
[ -x "$zd" ] || { echo "smallchunk_bench.sh: no $zd (build first: scripts/build.sh)" >&2; exit 1; }
mkdir -p "$work"
# Arrays from another shape are written again.
if [ "$(cat "$work/shape" 2>/dev/null)" != "$shape/$shard" ]; then
  rm -rf "$work"/raw-* "$work"/shard-*
  echo "$shape/$shard" >"$work/shape"
fi

started=$SECONDS
for chunk in 32 64 128; do
  [ -e "$work/raw-$chunk/zarr.json" ] ||
    "$zd" sample "$work/raw-$chunk" --shape "$shape" --chunks "$chunk,$chunk,$chunk" --codec none >/dev/null
done
[ -e "$work/shard-raw-32/zarr.json" ] ||
  "$zd" convert "$work/raw-128" "$work/shard-raw-32" --chunks 32,32,32 --shards "$shard,$shard,$shard" --codec raw -q
[ -e "$work/shard-zstd1-32/zarr.json" ] ||
  "$zd" convert "$work/raw-128" "$work/shard-zstd1-32" --chunks 32,32,32 --shards "$shard,$shard,$shard" --codec zstd:1 -q
echo "arrays ready after $((SECONDS - started)) s" >&2

have_tensorstore=0
if [ "$peers" = 1 ] && [ -e bench/peers/tensorstore_read.py ]; then
  if [ "$device" = cuda ]; then
    python3 -c 'import tensorstore, cupy' 2>/dev/null && have_tensorstore=1
  else
    python3 -c 'import tensorstore' 2>/dev/null && have_tensorstore=1
  fi
fi
have_bare=0
[ -x "$bare" ] && have_bare=1

results="$work/results.txt"
: >"$results"
# record NAME MODE COMMAND...: the command's JSON lines, tagged, into the results.
record() {
  local name=$1 mode=$2
  shift 2
  # A failing measurement leaves its cells empty ("-") instead of ending the whole run.
  { "$@" || echo "smallchunk_bench.sh: $name $mode failed" >&2; } | sed "s|^|$name\t$mode\t|" >>"$results"
}
for name in raw-32 raw-64 raw-128 shard-raw-32 shard-zstd1-32; do
  array="$work/$name"
  "$zd" bench "$array" --device cpu --repeat 1 >/dev/null  # warm the page cache
  if [ "$device" = cuda ]; then
    for batch in 1 0; do
      record "$name" "gpu-batch$batch" env ZARRDIRECT_DEVICE_BATCH=$batch \
        "$zd" bench "$array" --device cuda --io-path staged --repeat "$repeat" --json
    done
  fi
  for engine in threads uring; do
    record "$name" "host-$engine" env ZARRDIRECT_IO=$engine "$zd" bench "$array" --device cpu --repeat "$repeat" --json
  done
  if [ "$have_bare" = 1 ]; then
    [ "$device" = cuda ] && record "$name" bare-gpu "$bare" --threads 16 --repeat "$repeat" "$array"
    record "$name" bare-host "$bare" --host --threads 16 --repeat "$repeat" "$array"
  fi
  if [ "$have_tensorstore" = 1 ]; then
    record "$name" tensorstore python3 bench/peers/tensorstore_read.py "$array" --device "$device" --repeat 2
  fi
  echo "$name done after $((SECONDS - started)) s" >&2
done

/usr/bin/env python3 - "$results" "$device" "$shape" <<'PY'
import json, statistics, sys
path, device, shape = sys.argv[1:4]
rows, order = {}, []
for line in open(path):
    name, mode, text = line.rstrip("\n").split("\t", 2)
    try:
        doc = json.loads(text)
    except ValueError:
        continue
    if name not in rows:
        rows[name] = {}
        order.append(name)
    entry = rows[name].setdefault(mode, {"gbps": [], "doc": doc})
    if "median_gbps" in doc:  # zarrdirect bench: one line with every run
        entry["gbps"] = [doc["median_gbps"]]
        entry["doc"] = doc
    else:  # one line per run
        entry["gbps"].append(doc["gbps"])

def rate(name, mode):
    entry = rows[name].get(mode)
    return f"{statistics.median(entry['gbps']):.2f}" if entry and entry["gbps"] else "-"

def calls(name, mode):
    entry = rows[name].get(mode)
    if not entry or "cuda_calls" not in entry["doc"]:
        return "-"
    chunks = entry["doc"].get("chunks_total") or 0
    return f"{entry['doc']['cuda_calls']['total'] / chunks:.3f}" if chunks else "-"

def chunks(name):
    for entry in rows[name].values():
        if "chunks_total" in entry["doc"]:
            return str(entry["doc"]["chunks_total"])
    return "-"

def engine(name):
    entry = rows[name].get("host-uring")
    return entry["doc"].get("io_engine", "-") if entry else "-"

print(f"\nshape {shape}, uint16, warm page cache, median GB/s\n")
columns = ["array", "chunks"]
if device == "cuda":
    columns += ["GPU batched", "calls/chunk", "GPU per chunk", "calls/chunk"]
columns += ["host threads", "host uring", "(uring engine)", "bare host"]
if device == "cuda":
    columns += ["bare GPU"]
columns += ["tensorstore"]
print("| " + " | ".join(columns) + " |")
print("|" + "|".join("---" for _ in columns) + "|")
for name in order:
    cells = [name, chunks(name)]
    if device == "cuda":
        cells += [rate(name, "gpu-batch1"), calls(name, "gpu-batch1"), rate(name, "gpu-batch0"), calls(name, "gpu-batch0")]
    cells += [rate(name, "host-threads"), rate(name, "host-uring"), engine(name), rate(name, "bare-host")]
    if device == "cuda":
        cells += [rate(name, "bare-gpu")]
    cells += [rate(name, "tensorstore")]
    print("| " + " | ".join(cells) + " |")
PY
echo "total $((SECONDS - started)) s" >&2
