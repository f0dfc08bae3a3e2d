#!/usr/bin/env bash
# Proves zarrdirect installs like a library (run by .ci/run after ./test.sh, from build/):
#  1. `cmake --install build` into a fresh prefix; a project outside the repository
#     (tests/consumer) finds it with find_package(zarrdirect), links zarrdirect::zarrdirect and
#     reads a conformance case; the same file builds with `pkg-config --cflags --libs zarrdirect`.
#  2. `pip install --no-build-isolation .` into a fresh virtual environment; pytest runs from /
#     against the installed package (nothing from the source folder on sys.path).
#  3. The source tree is as clean as before (git status).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status_before=$(git status --porcelain)
case_dir=tests/data/conformance/tensorstore/v3_sharded_u2

echo "check_install: cmake --install into $work/prefix"
cmake --install build --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/zarrdirect/array.hpp"
"$work/prefix/bin/zarrdirect" info "$case_dir/array" >/dev/null

echo "check_install: find_package(zarrdirect) from an outside project"
cmake -S tests/consumer -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer" "$case_dir/array" "$case_dir/expected.npy"

echo "check_install: pkg-config --cflags --libs zarrdirect"
pc_path=$(dirname "$(find "$work/prefix" -name zarrdirect.pc | head -1)")
flags=$(PKG_CONFIG_PATH="$pc_path" pkg-config --cflags --libs zarrdirect)
c++ -std=c++20 tests/consumer/consumer.cpp -o "$work/consumer_pc" $flags -Wl,-rpath,"$work/prefix/lib"
"$work/consumer_pc" "$case_dir/array" "$case_dir/expected.npy"

echo "check_install: pip install --no-build-isolation . into a fresh venv"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --no-build-isolation --no-index --quiet "$repo"
(cd / && "$work/venv/bin/python" -c 'import sys, zarrdirect; sys.exit(0 if "/site-packages/" in zarrdirect.__file__ else 1)')
(cd / && ZARRDIRECT_EXPECT_INSTALLED=1 "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/python/tests")

status_after=$(git status --porcelain)
if [ "$status_before" != "$status_after" ]; then
  echo "check_install: the build left files in the source tree:" >&2
  diff <(echo "$status_before") <(echo "$status_after") >&2 || true
  exit 1
fi
echo "check_install: passed"
