#!/usr/bin/env bash
# Quick start, step 1: install, build, and read the built-in sample into the GPU (host memory
# when there is no GPU), saying which.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
scripts/build.sh
build/zarrdirect demo build/sample.zarr
