#!/usr/bin/env bash
# Packs Debian's pure-Python packages the GPU machine lacks into .device/pylib (git-ignored,
# carried to that machine): pytest and its helpers for the tests, setuptools and wheel so that
# `pip install --no-build-isolation .` can build the package there; Dask and distributed with
# their pure-Python dependencies for the Dask tests and benchmark. Compiled speed-ups whose
# packages fall back to pure Python (msgpack, tornado, yaml, markupsafe) travel without their
# shared objects, which were built for Debian's Python. xarray needs pandas, which cannot travel,
# so its tests skip there. zarr-python 2 travels with numcodecs' pure-Python modules and stand-ins
# for numcodecs' compiled ones (blosc, zstd, lz4, shuffle, vlen: built for Python 3.11) that
# import and refuse to encode or decode: enough for zarr-python to read an uncompressed array
# (the Dask benchmark's peer for the raw array); a compressed array there is refused by the
# stand-in, and the benchmark takes tensorstore as the peer for it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.device/pylib
rm -rf "$out"
mkdir -p "$out"
site=/usr/lib/python3/dist-packages
for name in pytest _pytest pluggy iniconfig packaging py.py exceptiongroup tomli \
            setuptools pkg_resources _distutils_hack wheel \
            dask distributed toolz tlz cloudpickle partd locket fsspec tblib zict msgpack \
            sortedcontainers tornado yaml click jinja2 markupsafe \
            zarr numcodecs asciitree fasteners; do
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
# numcodecs' compiled modules, stood in for (see above).
cat > "$out/numcodecs/blosc.py" <<'PY'
from .abc import Codec

NOSHUFFLE, SHUFFLE, BITSHUFFLE, AUTOSHUFFLE = 0, 1, 2, -1


def _refuse(*args, **kwargs):
    raise NotImplementedError("numcodecs' compiled codecs are not available on this machine")


class Blosc(Codec):
    codec_id = "blosc"
    NOSHUFFLE, SHUFFLE, BITSHUFFLE, AUTOSHUFFLE = 0, 1, 2, -1

    def __init__(self, cname="lz4", clevel=5, shuffle=SHUFFLE, blocksize=0):
        self.cname, self.clevel, self.shuffle, self.blocksize = cname, clevel, shuffle, blocksize

    encode = _refuse
    decode = _refuse


def init():
    pass


def destroy():
    pass


def set_nthreads(count):
    return 1


cbuffer_sizes = _refuse
cbuffer_metainfo = _refuse
PY
printf 'from .blosc import _refuse as _doShuffle, _refuse as _doUnshuffle\n' > "$out/numcodecs/_shuffle.py"
find "$out" -type d -name tests -prune -exec rm -rf {} +
du -sh "$out"
