#!/usr/bin/env bash
# Configures and builds zarrdirect in build/ (CUDA code too when the toolkit is present).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
# ccache (installed by setup.sh) makes the install check's and sanitizer's rebuilds of the same
# sources cheap.
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3 "${launcher[@]}" "$@" >/dev/null
cmake --build build -j "$jobs"
