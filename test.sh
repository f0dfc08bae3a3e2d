#!/usr/bin/env bash
# Quick start, step 2: install, build, and run every test: the C++ unit, conformance, bad-input
# and CLI tests, and the Python tests (GPU tests skip cleanly without a GPU).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
scripts/build.sh
ctest --test-dir build --output-on-failure
