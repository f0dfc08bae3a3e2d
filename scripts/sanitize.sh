#!/usr/bin/env bash
# The sanitizer build: AddressSanitizer + UndefinedBehaviorSanitizer (no recovery: the first report
# fails the run), Debug, host only. Configures build-asan, builds the test binary and the CLI (the
# CLI tests run the sanitized CLI too) and runs every test.
#
#   scripts/sanitize.sh [gtest arguments...]      e.g. --gtest_filter='BadInput*'
#   ZARRDIRECT_CMAKE_ARGS="-DZARRDIRECT_DEPS_DIR=..." scripts/sanitize.sh   (extra CMake options)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

cmake -S . -B build-asan -DZARRDIRECT_SANITIZE=ON -DZARRDIRECT_CUDA=OFF -DZARRDIRECT_PYTHON=OFF \
  -DZARRDIRECT_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug ${ZARRDIRECT_CMAKE_ARGS:-} >/dev/null
cmake --build build-asan -j "$jobs" --target zarrdirect_tests zarrdirect_cli

# detect_leaks: leaks fail the run too. allocator_may_return_null: a huge allocation is the
# library's to refuse (it must throw zarrdirect::Error), not a sanitizer abort.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:strict_string_checks=1:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
build-asan/tests/zarrdirect_tests "$@"
