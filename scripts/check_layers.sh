#!/usr/bin/env bash
# Fails (exit 1, listing each offending include) when a file in src/ includes a header from a
# layer above its own. The layer order, written down here once, lowest first:
LAYERS=(util store metadata codec engine cuda cli)
#
# A file in layer L may include headers of layers at or below L, the public headers
# (zarrdirect/...), system and third-party headers, and the tests' helpers (test_support.hpp,
# *_test_support.hpp). src/cli and python/src may include only public headers and their own
# folder; those two are checked only with --all (the front ends are being moved onto the public
# API separately).
#
# Usage: scripts/check_layers.sh [--all]   (from anywhere; paths are taken from the script's repo)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
check_front_ends=0
for arg in "$@"; do
  case "$arg" in
    --all) check_front_ends=1 ;;
    -h | --help) sed -n '2,13p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "check_layers.sh: unknown argument '$arg' (expected --all)" >&2; exit 2 ;;
  esac
done

declare -A RANK  # layer -> its position in LAYERS
for i in "${!LAYERS[@]}"; do RANK[${LAYERS[$i]}]=$i; done

offenders=()

# Every project include under a folder, one "path line header" a line (one grep for all files).
includes_under() {
  grep -rnE --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.cu' --include='*.cuh' \
    '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "$1" |
    sed -E 's/^([^:]+):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1 \2 \3/' || true
}

check_layer() {  # layer
  local layer="$1" own="${RANK[$1]}" file line header folder header_rank
  while read -r file line header; do
    folder="${header%%/*}"
    [[ "$folder" == "$header" ]] && continue  # no folder: a test helper beside the tests
    [[ "$folder" == zarrdirect ]] && continue  # public API
    header_rank="${RANK[$folder]:-}"
    [[ -z "$header_rank" ]] && continue  # not a layer of src/
    if ((header_rank > own)); then
      offenders+=("${file#"$root"/}:$line: $layer includes $header ($folder is above $layer)")
    fi
  done < <(includes_under "$root/src/$layer")
}

check_front_end() {  # folder, the folder prefix its own headers carry ("" for none)
  local dir="$1" own="$2" file line header folder
  while read -r file line header; do
    folder="${header%%/*}"
    [[ "$folder" == "$header" || "$folder" == zarrdirect ]] && continue
    [[ -n "$own" && "$folder" == "$own" ]] && continue
    offenders+=("${file#"$root"/}:$line: front end includes $header (only zarrdirect/ and its own folder)")
  done < <(includes_under "$dir")
}

for layer in "${LAYERS[@]}"; do
  [[ "$layer" == cli ]] && continue
  [[ -d "$root/src/$layer" ]] && check_layer "$layer"
done

if ((check_front_ends)); then
  [[ -d "$root/src/cli" ]] && check_front_end "$root/src/cli" cli
  [[ -d "$root/python/src" ]] && check_front_end "$root/python/src" ""
fi

if ((${#offenders[@]})); then
  echo "Layering violations (order: ${LAYERS[*]}):" >&2
  printf '  %s\n' "${offenders[@]}" >&2
  exit 1
fi
echo "check_layers: ok (order: ${LAYERS[*]}$( ((check_front_ends)) && echo "; cli and python checked"))"
