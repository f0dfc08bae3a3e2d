#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz, makes seed corpora from the
# conformance corpus in .corpus/ (git-ignored) and runs each target for SECONDS (default 60).
# Exits nonzero when any target finds something: a crash, a sanitizer report, a foreign exception,
# a hang (-timeout), or memory over -rss_limit_mb. Reproducers land in .corpus/artifacts/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]        e.g. scripts/fuzz.sh 300 fuzz_chunk_decode
#   nice -n 10 scripts/fuzz.sh 60                what CI runs: a short pass over every target
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
all_targets=(fuzz_v3_metadata fuzz_v2_metadata fuzz_ome fuzz_shard_index fuzz_shard_update fuzz_chunk_decode fuzz_region
  fuzz_http_response fuzz_portable_decode fuzz_zstd_portable)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
conformance=${ZARRDIRECT_CONFORMANCE_DIR:-tests/data/conformance}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

cmake -S . -B build-fuzz -DCMAKE_C_COMPILER="${CC:-clang}" -DCMAKE_CXX_COMPILER="${CXX:-clang++}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZARRDIRECT_FUZZ=ON -DZARRDIRECT_TESTS=OFF -DZARRDIRECT_CUDA=OFF \
  -DZARRDIRECT_PYTHON=OFF -DZARRDIRECT_BENCH=OFF >/dev/null
cmake --build build-fuzz -j "$jobs" --target "${targets[@]}"

# ---- Seeds: regenerated each run, so they follow the corpus and the registered codecs ----------
seeds=.corpus/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{fuzz_v3_metadata,fuzz_v2_metadata,fuzz_ome,fuzz_shard_index,fuzz_shard_update,fuzz_chunk_decode,fuzz_region,fuzz_http_response,fuzz_portable_decode,fuzz_zstd_portable} .corpus/artifacts
seed() {  # seed TARGET NAME < bytes
  cat >"$seeds/$1/$2"
}
n=0
if [ -d "$conformance" ]; then
  while IFS= read -r -d '' file; do
    n=$((n + 1))
    case "$(basename "$file")" in
      zarr.json)
        if grep -q '"node_type": *"group"' "$file"; then
          { printf '\x01'; cat "$file"; } | seed fuzz_ome "v3group_$n"
        else
          seed fuzz_v3_metadata "zarr_json_$n" <"$file"
        fi ;;
      .zarray)
        dir=$(dirname "$file")
        if [ -f "$dir/.zattrs" ]; then
          { cat "$file"; printf '\0'; cat "$dir/.zattrs"; } | seed fuzz_v2_metadata "zarray_$n"
        else
          seed fuzz_v2_metadata "zarray_$n" <"$file"
        fi ;;
      .zattrs)
        [ -f "$(dirname "$file")/.zgroup" ] && { printf '\x00'; cat "$file"; } | seed fuzz_ome "v2group_$n" ;;
      .zgroup|.zmetadata|*.npy|case.json|manifest.json|README.md) ;;
      *)
        # A chunk or shard file: small ones seed the decoders as they are.
        if [ "$(stat -c %s "$file")" -le 65536 ]; then
          seed fuzz_chunk_decode "chunk_$n" <"$file"
          case "$file" in
            *sharded*) { printf '\x00'; cat "$file"; } | seed fuzz_shard_index "shard_$n" ;;
          esac
        fi ;;
    esac
  done < <(find "$conformance" -type f -print0)
fi
# One valid encoding per chain the decoder fuzzer runs, made by the target itself.
if [ -x build-fuzz/fuzz/fuzz_chunk_decode ]; then
  ZARRDIRECT_FUZZ_WRITE_SEEDS="$seeds/fuzz_chunk_decode/chains" build-fuzz/fuzz/fuzz_chunk_decode >/dev/null 2>&1 || true
  if [ -d "$seeds/fuzz_chunk_decode/chains" ]; then
    mv "$seeds/fuzz_chunk_decode/chains/"* "$seeds/fuzz_chunk_decode/" 2>/dev/null || true
    rmdir "$seeds/fuzz_chunk_decode/chains"
    i=0
    for file in "$seeds"/fuzz_chunk_decode/sharding*; do
      [ -f "$file" ] || continue
      for selector in 0 1 2 3 4; do
        { printf "\\x0$selector"; cat "$file"; } | seed fuzz_shard_index "chain_${i}_$selector"
      done
      i=$((i + 1))
    done
  fi
fi
# Shard updates: config byte, which inner chunks are replaced, garbage limit, join gap, then a
# stored shard (8x8 uint16, raw inner chunks) for fuzz_shard_update's configurations 0, 1 and 4:
# laid out in order, two entries sharing bytes, and one with a hole and empty entries.
python3 - "$seeds/fuzz_shard_update" <<'PY'
import struct, sys
def shard(count, nbytes, start, entries=None):
    index_len = 16 * count
    base = index_len if start else 0
    entries = entries or [(base + i * nbytes, nbytes) for i in range(count)]
    body = bytes(range(256)) * (count * nbytes // 256 + 1)
    body = body[: count * nbytes]
    index = b"".join(struct.pack("<QQ", o, n) for o, n in entries)
    return index + body if start else body + index
seeds = {
    "in_order_end": bytes([0, 0x0A, 128, 16]) + shard(4, 32, False),
    "in_order_start": bytes([1, 0x81, 128, 0]) + shard(8, 16, True),
    "shared_end": bytes([0, 0x01, 200, 1]) + shard(4, 32, False, [(0, 32), (0, 32), (64, 32), (2 ** 64 - 1, 2 ** 64 - 1)]),
    "holes_start": bytes([4, 0x55, 64, 8]) + shard(64, 2, True, [(1024 + 4 * i, 2 if i % 5 else 0) for i in range(64)]),
}
for name, data in seeds.items():
    open(f"{sys.argv[1]}/{name}", "wb").write(data)
PY
# OME-Zarr 0.4 (v2 .zattrs) and 0.5 (v3 zarr.json) groups, beyond what the corpus holds.
printf '\x00%s' '{"multiscales": [{"version": "0.4", "name": "cells", "axes": [{"name": "c", "type": "channel"},
  {"name": "y", "type": "space", "unit": "micrometer"}, {"name": "x", "type": "space"}], "datasets": [
  {"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1, 0.5, 0.5]}]},
  {"path": "1", "coordinateTransformations": [{"type": "scale", "scale": [1, 1, 1]}, {"type": "translation", "translation": [0, 0.5, 0.5]}]}]}]}' \
  | seed fuzz_ome v04
printf '\x01%s' '{"zarr_format": 3, "node_type": "group", "attributes": {"ome": {"version": "0.5", "multiscales": [
  {"name": "x", "axes": [{"name": "z", "type": "space"}, {"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
  "datasets": [{"path": "s0", "coordinateTransformations": [{"type": "scale", "scale": [2.0, 0.5, 0.5]}]},
  {"path": "s1/level", "coordinateTransformations": [{"type": "scale", "scale": [4.0, 1.0, 1.0]}]}]}]}}}' \
  | seed fuzz_ome v05
# Regions: rank byte, extents (uint64, little-endian), text.
region_seed() {  # region_seed NAME RANK "EXTENT..." TEXT
  local name=$1 rank=$2 extents=$3 text=$4
  {
    printf "\\x0$rank"
    for e in $extents; do python3 -c "import sys; sys.stdout.buffer.write(($e).to_bytes(8, 'little'))"; done
    printf '%s' "$text"
  } | seed fuzz_region "$name"
}
region_seed slices 3 "20 30 40" "0:10,:,5"
region_seed negatives 2 "100 7" "-5:,-1"
region_seed empty 1 "10" ""
region_seed huge 1 "2**64-1" "-9223372036854775808:-1"
region_seed scalar 0 "" ""
region_seed steps 3 "20 30 40" "::2,5,::-3"
region_seed ellipsis_step 3 "20 30 40" "...,::-1"
# HTTP: a response's status and header lines, and URLs.
printf 'HTTP/1.1 206 Partial Content\r\nContent-Length: 100\r\nContent-Range: bytes 0-99/1000\r\n' | seed fuzz_http_response ranged
printf 'HTTP/2 200\r\ncontent-length: 18446744073709551615\r\ncontent-range: bytes */1000\r\n' | seed fuzz_http_response whole
printf 'https://user:secret@example.org:8443/data/volume.zarr?x=1#f' | seed fuzz_http_response url
# Portable decoders: data the target compresses itself (mode 2 liblz4, 3 c-blosc with byte shuffle
# and typesize 2), unchanged, so mutations start from valid encodings.
{ printf '\x02\x00\x00\x00\x00'; head -c 3000 /dev/zero | tr '\0' 'a'; printf 'abcabcabd0123456789'; } |
  seed fuzz_portable_decode lz4_runs
{ printf '\x03\x00\x00\x00\x05'; seq 1 800 | tr '\n' ' '; } | seed fuzz_portable_decode blosc_shuffled
# zstd: data the target compresses itself (mode 1; level from byte 4: 0x07 is level 3, 0x17 level
# 19), unchanged, so mutations start from valid frames.
{ printf '\x01\x00\x00\x00\x07'; seq 1 3000 | tr '\n' ' '; } | seed fuzz_zstd_portable text_level3
{ printf '\x01\x00\x00\x00\x17'; head -c 2000 /dev/zero; seq 1 500; } | seed fuzz_zstd_portable runs_level19

# ---- Run ---------------------------------------------------------------------------------------
declare -A max_len=([fuzz_v3_metadata]=16384 [fuzz_v2_metadata]=16384 [fuzz_ome]=16384
                    [fuzz_shard_index]=65536 [fuzz_shard_update]=65536 [fuzz_chunk_decode]=65536 [fuzz_region]=512
                    [fuzz_http_response]=4096 [fuzz_portable_decode]=65536 [fuzz_zstd_portable]=65536)
export ASAN_OPTIONS="allocator_may_return_null=0:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
failed=()
for target in "${targets[@]}"; do
  corpus=.corpus/$target
  mkdir -p "$corpus"
  dict=()
  case "$target" in fuzz_v3_metadata|fuzz_v2_metadata|fuzz_ome) dict=(-dict=fuzz/zarr.dict) ;; esac
  echo "== $target: ${seconds}s (corpus $(ls "$corpus" | wc -l) files, seeds $(ls "$seeds/$target" | wc -l))"
  if ! build-fuzz/fuzz/"$target" "$corpus" "$seeds/$target" \
      -max_total_time="$seconds" -max_len="${max_len[$target]}" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
      -timeout=10 -print_final_stats=1 -artifact_prefix=".corpus/artifacts/$target-" "${dict[@]}" 2>".corpus/$target.log"; then
    failed+=("$target")
    echo "!! $target found something: see .corpus/$target.log and .corpus/artifacts/"
    grep -E "ERROR|SUMMARY|property violated|terminate|Test unit written" ".corpus/$target.log" | head -20 || true
  fi
  grep -E "DONE|^stat::number_of_executed_units|^stat::peak_rss_mb" ".corpus/$target.log" | tail -3 || true
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${seconds}s each, nothing found"
