#!/usr/bin/env bash
# On the GPU machine: what cuFile does there (bench/cufile_probe.cpp), with cuFile's own trace
# log, and whether opening its driver from a fresh Python process works, with and without
# zarrdirect. Output in $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/zd-out}
mkdir -p "$OUT"
cuda=${CUDA_HOME:-/usr/local/cuda}
g++ -std=c++20 -O1 bench/cufile_probe.cpp -I"$cuda/include" -L"$cuda/lib64" -lcufile -lcudart \
  -Wl,-rpath,"$cuda/lib64" -o /tmp/cufile_probe || exit 1
head -c 4194304 /dev/urandom > /tmp/probe.bin
# cuFile's settings: the defaults, then compatibility mode allowed explicitly, tracing on.
cat > /tmp/cufile.json <<'JSON'
{ "logging": { "dir": "/tmp", "level": "TRACE" },
  "properties": { "allow_compat_mode": true } }
JSON
echo "== defaults"; /tmp/cufile_probe /tmp/probe.bin
echo "== allow_compat_mode, trace"; CUFILE_ENV_PATH_JSON=/tmp/cufile.json /tmp/cufile_probe /tmp/probe.bin
ls /tmp/cufile*.log >/dev/null 2>&1 && tail -c 12000 "$(ls -t /tmp/cufile*.log | head -1)" > "$OUT/cufile_trace.log"
echo "== python: ctypes alone"
python3 - <<'PY'
import ctypes
class Err(ctypes.Structure):
    _fields_ = [("err", ctypes.c_int), ("cu_err", ctypes.c_int)]
ctypes.CDLL("libcudart.so", mode=ctypes.RTLD_GLOBAL).cudaFree(None) if False else None
lib = ctypes.CDLL("libcufile.so.0")
lib.cuFileDriverOpen.restype = Err
e = lib.cuFileDriverOpen()
print("ctypes cuFileDriverOpen", e.err, e.cu_err, flush=True)
PY
echo "exit $?"
