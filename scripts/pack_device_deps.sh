#!/usr/bin/env bash
# Packs the headers and static libraries zarrdirect builds with into .device/deps, for the GPU
# machine, where nothing can be installed. Debian 12's static libraries link there (older glibc
# symbols, position-independent code); fmt is used header-only. Needs libsnappy-dev here, because
# Debian's libblosc.a calls snappy.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.device/deps
rm -rf "$out"
mkdir -p "$out/include" "$out/lib"
inc=/usr/include
lib=/usr/lib/x86_64-linux-gnu
cp -r "$inc/nlohmann" "$inc/CLI" "$inc/fmt" "$inc/gtest" "$inc/gmock" "$out/include/"
cp "$inc"/{zstd.h,zstd_errors.h,zdict.h,lz4.h,lz4hc.h,lz4frame.h,zlib.h,zconf.h,bzlib.h,blosc.h,blosc-export.h} "$out/include/"
cp "$lib"/{libzstd.a,liblz4.a,libz.a,libbz2.a,libblosc.a,libsnappy.a,libgtest.a,libgtest_main.a,libgmock.a} "$out/lib/"
du -sh "$out"
