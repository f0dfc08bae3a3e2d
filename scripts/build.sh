#!/usr/bin/env bash
# Configures and builds zarrdirect in build/ (CUDA code too when the toolkit is present).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3 "$@" >/dev/null
cmake --build build -j "$jobs"
