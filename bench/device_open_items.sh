#!/usr/bin/env bash
# The GPU measurements the open issues still wait for, in one device call (about 8 minutes):
# build; whole reads of the raw, blosc-lz4 and sharded zstd arrays in the same run (issue 18);
# the sharded array's 256^3 region and blosc-lz4 regions per decode side, in rounds; the dataset
# probe and patch_bench on the raw array (issue 16); then the GPU and batched-read Python tests.
# Needs .device/deps and .device/pylib (scripts/pack_device_deps.sh, scripts/pack_device_pylib.sh)
# carried: the device tool's call is `bash bench/device_open_items.sh` with carry [".device"].
set -uo pipefail
source bench/device_build.sh
log build
device_build ON OFF zarrdirect_cli zarrdirect_python bare_loop || exit 1
log built
export PYTHONPATH=$PWD/build-dev/python
Z=build-dev/zarrdirect
W=/tmp/zd-w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
for spec in "raw 128,128,128 none" "blosc 128,128,128 blosc" "sharded 256,256,256 sharded"; do
  set -- $spec
  [ -e $W/$1/zarr.json ] || $Z sample $W/$1 --shape 1024,1024,2048 --chunks $2 --codec $3 > /dev/null
  $Z bench $W/$1 --repeat 1 > /dev/null
done
log arrays
med() { grep -E "^median|median" | tail -1; }
for round in 1 2; do
  echo "-- whole reads, round $round"
  echo "raw: $($Z bench $W/raw --device cuda --repeat 5 | med)"
  for side in auto gpu cpu; do
    echo "blosc $side: $($Z bench $W/blosc --device cuda --repeat 5 --decode $side | med)"
    echo "sharded $side: $($Z bench $W/sharded --device cuda --repeat 5 --decode $side | med)"
  done
done
log regions
for round in 1 2 3; do
  for side in cpu gpu auto; do
    echo "sharded 384:640^3 $side r$round: $($Z bench $W/sharded --device cuda --repeat 9 --decode $side --region 384:640,384:640,896:1152 | med)"
  done
done
echo "-- the sharded region traced (--decode gpu, the last of 4 runs is warm)"
ZARRDIRECT_TRACE=1 $Z bench $W/sharded --device cuda --repeat 4 --decode gpu --region 384:640,384:640,896:1152 2>&1 | tail -24
for region in 0:512,0:512,0:256 0:512,0:512,0:512 0:1024,0:512,0:512; do
  for side in cpu gpu auto; do
    echo "blosc $region $side: $($Z bench $W/blosc --device cuda --repeat 7 --decode $side --region $region | med)"
  done
done
log probe
timeout 200 python3 bench/dataset_probe.py $W/raw --matmuls 4 --batches 30 2>&1 | tail -20
log patches
mkdir -p $W/patches && ln -sfn $W/raw $W/patches/raw-128-1024x1024x2048
timeout 200 python3 bench/patch_bench.py --build build-dev --work $W/patches --out $OUT/patches.md --arrays raw-128 --repeat 3 2>&1 | tail -4
log tests
for entry in .device/pylib/*; do  # the machine's own packages win over the carried copies
  name=$(basename "$entry" .py)
  python3 -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('$name') else 1)" 2>/dev/null && rm -rf "$entry"
done
PYTHONPATH="$PYTHONPATH:$PWD/.device/pylib" timeout 150 python3 -m pytest -q -rf -p no:cacheprovider \
  python/tests/test_gpu.py python/tests/test_many.py 2>&1 | tail -8
log done
