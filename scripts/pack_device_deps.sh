#!/usr/bin/env bash
# Packs the headers and libraries zarrdirect builds with into .device/deps, for the GPU machine,
# where nothing can be installed. The compression libraries travel as Debian 12's shared objects
# (its static archives are not position-independent, so the Python module could not link them);
# builds there find them through their run path. GoogleTest is linked statically into the test
# program; fmt is used header-only.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.device/deps
rm -rf "$out"
mkdir -p "$out/include" "$out/lib"
inc=/usr/include
lib=/usr/lib/x86_64-linux-gnu
cp -r "$inc/nlohmann" "$inc/CLI" "$inc/fmt" "$inc/gtest" "$inc/gmock" "$out/include/"
# libcurl's headers only: the GPU machine's own libcurl.so.4 (Ubuntu's) is linked there.
cp -r "$inc/x86_64-linux-gnu/curl" "$out/include/"
cp -r "$inc/lzma" "$inc/zfp" "$out/include/"
cp "$inc"/{zstd.h,zstd_errors.h,zdict.h,lz4.h,lz4hc.h,lz4frame.h,zlib.h,zconf.h,bzlib.h,lzma.h,zfp.h,blosc.h,blosc-export.h} "$out/include/"
cp "$lib"/{libgtest.a,libgtest_main.a,libgmock.a} "$out/lib/"
# Each shared library under its soname (what the loader asks for) and its link name (what the
# linker asks for); copies, since symbolic links do not travel to that machine.
for soname in libzstd.so.1 liblz4.so.1 libz.so.1 libbz2.so.1.0 liblzma.so.5 libzfp.so.1 libblosc.so.1 libsnappy.so.1; do
  cp -L "$lib/$soname" "$out/lib/$soname"
  cp -L "$lib/$soname" "$out/lib/${soname%%.so*}.so"
done
du -sh "$out"
