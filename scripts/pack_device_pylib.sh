#!/usr/bin/env bash
# Packs Debian's pure-Python packages the GPU machine lacks into .device/pylib (git-ignored,
# carried to that machine): pytest and its helpers for the tests, setuptools and wheel so that
# `pip install --no-build-isolation .` can build the package there; Dask and distributed with
# their pure-Python dependencies for the Dask tests and benchmark. Compiled speed-ups whose
# packages fall back to pure Python (msgpack, tornado, yaml, markupsafe) travel without their
# shared objects, which were built for Debian's Python. (xarray needs pandas and zarr-python
# needs numcodecs' compiled core: neither can travel, so those tests skip there.)
set -euo pipefail
cd "$(dirname "$0")/.."
out=.device/pylib
rm -rf "$out"
mkdir -p "$out"
site=/usr/lib/python3/dist-packages
for name in pytest _pytest pluggy iniconfig packaging py.py exceptiongroup tomli \
            setuptools pkg_resources _distutils_hack wheel \
            dask distributed toolz tlz cloudpickle partd locket fsspec tblib zict msgpack \
            sortedcontainers tornado yaml click jinja2 markupsafe; do
  [ -e "$site/$name" ] && cp -r "$site/$name" "$out/"
done
find "$out" -name __pycache__ -prune -exec rm -rf {} +
find "$out" -name '*.so' -delete
find "$out" -type d -name tests -prune -exec rm -rf {} +
du -sh "$out"
