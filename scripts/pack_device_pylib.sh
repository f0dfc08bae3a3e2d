#!/usr/bin/env bash
# Packs Debian's pure-Python packages the GPU machine lacks into .device/pylib (git-ignored,
# carried to that machine): pytest and its helpers for the tests, setuptools and wheel so that
# `pip install --no-build-isolation .` can build the package there.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.device/pylib
rm -rf "$out"
mkdir -p "$out"
site=/usr/lib/python3/dist-packages
for name in pytest _pytest pluggy iniconfig packaging py.py exceptiongroup tomli \
            setuptools pkg_resources _distutils_hack wheel; do
  [ -e "$site/$name" ] && cp -r "$site/$name" "$out/"
done
find "$out" -name __pycache__ -prune -exec rm -rf {} +
du -sh "$out"
