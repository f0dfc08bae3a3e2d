# Sourced by the GPU-machine scripts (bench/device_zstd.sh, bench/decode_sides_bench.sh): the
# checkout's root as working folder, $OUT for results, the carried libraries (.device/deps, from
# scripts/pack_device_deps.sh) on the loader's path, log(), and device_build to configure and
# build build-dev (Release, sm_90) for the targets named.
#   device_build PYTHON(ON|OFF) TESTS(ON|OFF) TARGET...
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-/tmp/zd-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.device/deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
log() { echo "== $(date +%T) $SECONDS $*"; }

device_build() {
  local python=$1 tests=$2
  shift 2
  local options=(-DZARRDIRECT_PYTHON="$python" -DZARRDIRECT_TESTS="$tests")
  # libcurl: the packed headers with the machine's own library.
  [ -e /usr/lib/x86_64-linux-gnu/libcurl.so ] &&
    options+=(-DCURL_INCLUDE_DIR="$PWD/.device/deps/include" -DCURL_LIBRARY=/usr/lib/x86_64-linux-gnu/libcurl.so)
  [ "$python" = ON ] && options+=(-DPython3_EXECUTABLE="$(command -v python3)"
    -Dpybind11_DIR="$(python3 -c 'import pybind11; print(pybind11.get_cmake_dir())')")
  cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DZARRDIRECT_DEPS_DIR="$PWD/.device/deps" \
    -DCMAKE_CUDA_ARCHITECTURES=90 "${options[@]}" > "$OUT/configure.log" 2>&1 ||
    { tail -30 "$OUT/configure.log"; return 1; }
  cmake --build build-dev -j "$(nproc)" --target "$@" > "$OUT/build.log" 2>&1 ||
    { grep -E "error" -A5 "$OUT/build.log" | head -40; return 1; }
}
