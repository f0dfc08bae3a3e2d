#!/usr/bin/env bash
# Packs Debian's nginx with the shared libraries it loads into .device/nginx (git-ignored), for
# the HTTP benchmark on the GPU machine (Ubuntu 24.04, no nginx, nothing can be installed there):
#
#   .device/nginx/nginx       the executable (/usr/sbin/nginx)
#   .device/nginx/lib/*.so.*  every library ldd names except the C library and the loader (which
#                             the machine has, and must be its own), copied under their sonames
#
# Run it with LD_LIBRARY_PATH=.device/nginx/lib for nginx alone (bench/http_bench.py --nginx does
# so): Debian's OpenSSL in the Python process would clash with the machine's libcurl. The script
# ends by starting the packed nginx with only its own libraries on the path (`nginx -V`).
set -euo pipefail
cd "$(dirname "$0")/.."
nginx=${NGINX:-/usr/sbin/nginx}
out=.device/nginx
[ -x "$nginx" ] || { echo "pack_device_nginx: $nginx not found (Debian package nginx-light)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/lib"
cp -L "$nginx" "$out/nginx"
# ldd lines: "libssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x...)".
ldd "$nginx" | while read -r soname arrow path _; do
  [ "$arrow" = "=>" ] || continue
  case "$soname" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) continue ;;
  esac
  [ -f "$path" ] || { echo "pack_device_nginx: $soname not found ($path)" >&2; exit 1; }
  cp -L "$path" "$out/lib/$soname"
done
# Every library the packed nginx loads resolves into the pack (the C library aside).
missing=$(LD_LIBRARY_PATH="$out/lib" ldd "$out/nginx" | awk '$2 == "=>" && $3 !~ /^\.device\/nginx\/lib\// && $1 !~ /^(libc|libm|libdl|libpthread|librt)\.so/ {print $1 " -> " $3}')
if [ -n "$missing" ]; then
  echo "pack_device_nginx: libraries resolved outside the pack: $missing" >&2
  exit 1
fi
LD_LIBRARY_PATH="$out/lib" "$out/nginx" -V 2>&1 | head -1
ls -l "$out/lib"
du -sh "$out"
