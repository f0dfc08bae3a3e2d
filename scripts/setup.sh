#!/usr/bin/env bash
# Installs what zarrdirect builds and tests with (clang and its runtime for the fuzz targets):
# Debian 12 packages only. Idempotent: does nothing
# when every package is already there.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libzstd-dev zlib1g-dev liblz4-dev libbz2-dev liblzma-dev libzfp-dev libblosc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-dev pybind11-dev python3-numpy python3-pytest python3-zarr python3-numcodecs python3-zfpy
  python3-pip python3-setuptools python3-wheel python3-venv python3-build ccache
  python3-dask python3-distributed python3-xarray python3-fsspec python3-aiohttp
  libcurl4-openssl-dev liburing-dev nginx-light
  clang libclang-rt-14-dev
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
