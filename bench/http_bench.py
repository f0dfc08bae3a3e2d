"""Reading over HTTP on loopback: zarrdirect against zarr-python 2 with fsspec's HTTPFileSystem
(Debian's python3-fsspec, python3-aiohttp) on the same server, and against zarrdirect's own read
of the same files from local disk (page cache warm).

Arrays (written once under --work):
  raw       1 GiB uint16 (512 x 1024 x 1024), 4 MiB chunks (2 x 1024 x 1024), zarr v2, no compressor
  sharded   the built-in sample (`zarrdirect sample --codec sharded`): zarr v3, 256 x 512 x 512 shards
            of 64 x 128 x 128 zstd-1 inner chunks. zarr-python 2 cannot read sharding: it reads the
            same values stored as v2 zstd-1 chunks of the inner chunk shape (zstd-v2) instead.
Then a 256^3 region of the sharded array, with the server's log of the requests it took.

The server: Debian's nginx (tests/http/nginx_server.py) where installed, or one given with
--nginx (Debian's, packed with its libraries by scripts/pack_device_nginx.sh for the GPU machine,
which has none), else a small range-capable Python server (bench/http_range_server.py):

    PYTHONPATH=build/python python3 bench/http_bench.py                  # here: nginx, host memory
    PYTHONPATH=build/python python3 bench/http_bench.py --device cuda --nginx .device/nginx/nginx  # GPU machine
    PYTHONPATH=build/python python3 bench/http_bench.py --device cuda --server python   # GPU machine, no nginx

--size-mib scales the arrays' first axis down (1024: 1 GiB).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests" / "http"))
sys.path.insert(0, str(HERE))

import zarrdirect  # noqa: E402


def volume(shape: tuple[int, ...]) -> np.ndarray:
    # The built-in sample's kind of signal (bench/host_bench.py): smooth plus 5 bits of noise.
    z = np.sin(np.arange(shape[0]) * 0.02)[:, None, None] * 250 + 1000
    y = np.cos(np.arange(shape[1]) * 0.03)[None, :, None]
    x = np.sin(np.arange(shape[2]) * 0.05)[None, None, :] * 600
    noise = np.random.default_rng(0).integers(0, 32, size=shape, dtype=np.uint16)
    return ((z + x * y).astype(np.uint16) + noise).astype(np.uint16)


def timed(call, repeat: int) -> tuple[float, object]:
    call()  # warm: connections, page cache
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        if hasattr(result, "synchronize"):
            result.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def start_server(kind: str, root: Path, nginx: str | None = None):
    if nginx:
        # A packed nginx (scripts/pack_device_nginx.sh): its libraries beside it, for it alone.
        from nginx_server import NginxServer
        library_path = Path(nginx).resolve().parent / "lib"
        return f"nginx ({nginx})", NginxServer(str(root), nginx=nginx,
                                               library_path=str(library_path) if library_path.is_dir() else None,
                                               workers="auto")
    if kind in ("auto", "nginx"):
        from nginx_server import NginxServer, find_nginx
        if find_nginx():
            return "nginx", NginxServer(str(root), workers="auto")
        if kind == "nginx":
            raise SystemExit("nginx not found")
    from http_range_server import RangeServer
    return "python range server", RangeServer(str(root))


def prepare(work: Path, planes: int, zarrdirect_cli: str) -> None:
    """The arrays, written by zarrdirect alone (the GPU machine has no zarr-python): raw as Zarr v2
    without a compressor, the sharded sample, and its values as v2 zstd-1 chunks of the inner
    chunk shape, which zarr-python 2 reads as it reads its own."""
    shape = (planes, 1024, 1024)
    stamp = work / "stamp.json"
    if stamp.exists() and json.loads(stamp.read_text()) == {"planes": planes, "version": 3}:
        return
    zarrdirect.save(work / "raw", volume(shape), chunks=(2, 1024, 1024), codec="raw", zarr_format=2, overwrite=True)
    subprocess.run([zarrdirect_cli, "sample", str(work / "sharded"), "--shape", str(planes), "1024", "1024",
                    "--chunks", str(min(256, planes)), "512", "512", "--codec", "sharded", "--overwrite"],
                   check=True, capture_output=True)
    zarrdirect.save(work / "zstd-v2", zarrdirect.open(work / "sharded").read(), chunks=(64, 128, 128), codec="zstd:1",
                    zarr_format=2, overwrite=True)
    stamp.write_text(json.dumps({"planes": planes, "version": 3}))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("/tmp/zd-http"))
    parser.add_argument("--zarrdirect", default=str(REPO / "build" / "zarrdirect"), help="the CLI (writes the sample)")
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--server", default="auto", choices=["auto", "nginx", "python"])
    parser.add_argument("--nginx", help="an nginx executable to serve with, e.g. .device/nginx/nginx from "
                        "scripts/pack_device_nginx.sh (LD_LIBRARY_PATH set to its lib/ folder for it alone)")
    parser.add_argument("--skip-zarr-python", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    planes = max(2, args.size_mib // 2) // 2 * 2
    prepare(args.work, planes, args.zarrdirect)
    server_name, server = start_server(args.server, args.work, args.nginx)
    rows = []
    try:
        pairs = [("raw", "raw", "raw"), ("sharded zstd", "sharded", "zstd-v2")]
        for label, ours, theirs in pairs:
            url = f"{server.url}/{ours}"
            remote = zarrdirect.open(url)
            nbytes = int(np.prod(remote.shape)) * remote.dtype.itemsize
            t_http, out = timed(lambda: remote.read(device=args.device), args.repeat)
            local = zarrdirect.open(args.work / ours)
            t_local, _ = timed(lambda: local.read(device=args.device), args.repeat)
            if args.device == "cpu":
                assert np.array_equal(out, local.read()), "HTTP read differs from the local read"
            t_zarr = float("nan")
            if not args.skip_zarr_python:
                import zarr
                z = zarr.open(f"{server.url}/{theirs}", mode="r")
                t_zarr, theirs_out = timed(lambda: z[:], args.repeat)
                if args.device == "cpu":
                    assert np.array_equal(theirs_out, out), "zarr-python read differs"
            row = {"array": label, "gib": nbytes / 2**30, "zarrdirect_http_gbps": nbytes / t_http / 1e9,
                   "zarrdirect_local_gbps": nbytes / t_local / 1e9, "zarr_python_http_gbps": nbytes / t_zarr / 1e9}
            rows.append(row)
            print(json.dumps(row), flush=True)

        # A 256^3 region of the sharded array: which requests did it take?
        sharded = zarrdirect.open(f"{server.url}/sharded")
        depth = min(256, sharded.shape[0])
        z0 = (sharded.shape[0] - depth) // 2
        region = (slice(z0, z0 + depth), slice(128, 384), slice(128, 384))
        server.clear_log()
        got = sharded.read(region)
        time.sleep(0.2)  # nginx writes its log after the response
        requests = server.requests()
        expected = zarrdirect.open(args.work / "sharded").read(region)
        assert np.array_equal(got, expected)
        heads = sum(1 for r in requests if r.startswith("HEAD"))
        gets = [r for r in requests if r.startswith("GET")]
        doc = json.loads((args.work / "sharded" / "zarr.json").read_text())
        inner = doc["codecs"][0]["configuration"]["chunk_shape"]
        needed = 1
        for s, n in zip(region, inner):
            needed *= (s.stop - 1) // n - s.start // n + 1
        shards = len({r.split()[1] for r in requests})
        print(json.dumps({"region": "256^3 of sharded", "shards_touched": shards, "inner_chunks_needed": needed,
                          "head_requests": heads, "get_requests": len(gets), "requests": requests}), flush=True)
    finally:
        server.stop()

    print(f"\nServer: {server_name} on 127.0.0.1; device {args.device}; median of {args.repeat}\n")
    print("| array | GiB | zarrdirect HTTP GB/s | zarr-python 2 + fsspec HTTP GB/s | speed-up | zarrdirect local GB/s | HTTP / local |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['array']} | {r['gib']:.2f} | {r['zarrdirect_http_gbps']:.2f} | {r['zarr_python_http_gbps']:.2f} | "
              f"{r['zarrdirect_http_gbps'] / r['zarr_python_http_gbps']:.1f}x | {r['zarrdirect_local_gbps']:.2f} | "
              f"{r['zarrdirect_http_gbps'] / r['zarrdirect_local_gbps']:.0%} |")
    print(f"\n{depth}x256x256 region of the sharded array (inner chunks {inner}): {shards} shards, {needed} inner chunks needed; "
          f"{heads} HEAD + {len(gets)} GET requests (index + merged inner-chunk ranges)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
