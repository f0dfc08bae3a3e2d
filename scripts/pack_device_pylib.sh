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
# Debian's Dask (2022.12) predates NumPy 2, which the GPU machine has: the few names NumPy 2
# removed that Dask touches when imported get their NumPy 2 spellings.
sed -i 's/^from numpy.compat import basestring$/basestring = str/' "$out/dask/array/einsumfuncs.py"
sed -i 's/@implements(np.round, np.round_)/@implements(np.round)/' "$out/dask/array/routines.py"
sed -i 's/np\.unicode_(/np.str_(/; s/np\.float_\b/np.float64/; s/np\.NaN\b/np.nan/g' \
  "$out/dask/dataframe/utils.py" "$out/dask/dataframe/partitionquantiles.py" "$out/dask/dataframe/core.py" \
  "$out/dask/dataframe/groupby.py"
find "$out" -type d -name tests -prune -exec rm -rf {} +
du -sh "$out"
