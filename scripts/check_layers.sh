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
    -h | --help) sed -n '2,14p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "check_layers.sh: unknown argument '$arg' (expected --all)" >&2; exit 2 ;;
  esac
done

rank_of() {  # the position of a layer in LAYERS, or nothing
  local i
  for i in "${!LAYERS[@]}"; do
    [[ "${LAYERS[$i]}" == "$1" ]] && { echo "$i"; return; }
  done
}

# Every project include: "folder/name" in double quotes.
includes_of() {
  grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "$1" |
    sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1 \2/'
}

offenders=()

check_layered_file() {  # file, its layer
  local file="$1" layer="$2" own line header folder header_rank
  own="$(rank_of "$layer")"
  while read -r line header; do
    [[ -z "$header" ]] && continue
    folder="${header%%/*}"
    [[ "$folder" == "$header" ]] && continue  # no folder: a test helper beside the tests
    [[ "$folder" == zarrdirect ]] && continue  # public API
    header_rank="$(rank_of "$folder")"
    [[ -z "$header_rank" ]] && continue  # not a layer of src/
    if ((header_rank > own)); then
      offenders+=("${file#"$root"/}:$line: $layer includes $header ($folder is above $layer)")
    fi
  done < <(includes_of "$file")
}

check_front_end_file() {  # file, the folder prefix its own headers carry ("" for none)
  local file="$1" own="$2" line header folder
  while read -r line header; do
    [[ -z "$header" ]] && continue
    folder="${header%%/*}"
    [[ "$folder" == "$header" || "$folder" == zarrdirect ]] && continue
    [[ -n "$own" && "$folder" == "$own" ]] && continue
    offenders+=("${file#"$root"/}:$line: front end includes $header (only zarrdirect/ and its own folder)")
  done < <(includes_of "$file")
}

sources() { find "$1" -type f \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort; }

for layer in "${LAYERS[@]}"; do
  [[ "$layer" == cli ]] && continue
  [[ -d "$root/src/$layer" ]] || continue
  while read -r file; do check_layered_file "$file" "$layer"; done < <(sources "$root/src/$layer")
done

if ((check_front_ends)); then
  [[ -d "$root/src/cli" ]] && while read -r file; do check_front_end_file "$file" cli; done < <(sources "$root/src/cli")
  [[ -d "$root/python/src" ]] && while read -r file; do check_front_end_file "$file" ""; done < <(sources "$root/python/src")
fi

if ((${#offenders[@]})); then
  echo "Layering violations (order: ${LAYERS[*]}):" >&2
  printf '  %s\n' "${offenders[@]}" >&2
  exit 1
fi
echo "check_layers: ok (order: ${LAYERS[*]}$( ((check_front_ends)) && echo "; cli and python checked"))"
