"""The GPU benchmark: zarrdirect against its peers and the hardware bound, in one run.

Writes 4 GiB uint16 test volumes (the built-in sample: a smooth signal plus 5 bits of noise),
then for each reads the whole array into GPU memory with
  - bare_loop      the bound: threads pread whole chunk files into pinned memory + async copy
  - zarrdirect     `zarrdirect bench --device cuda`
  - tensorstore    read into host memory, then cupy.asarray
  - original_loop  the original kvikio module's loop (uncompressed arrays only)
warm (page cache filled; median of --repeat runs) and cold (page cache dropped before each run),
and a 256^3 region from the middle. Prints a markdown table and writes it with the raw JSON lines.

    python3 bench/gpu_bench.py --build build --work /tmp/zd-bench --out results.md
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

ARRAYS = [
    # name, chunks, codec
    ("raw-128", "128,128,128", "none"),
    ("raw-64", "64,64,64", "none"),
    ("zstd-128", "128,128,128", "zstd"),
    ("blosc-lz4-128", "128,128,128", "blosc"),
    ("sharded-256-zstd-64", "256,256,256", "sharded"),
]
SHAPE = "1024,1024,2048"  # uint16: 4 GiB
REGION = "384:640,384:640,896:1152"  # 256^3 from the middle


def run_json(command: list[str], log) -> list[dict]:
    print("$", " ".join(command), file=log, flush=True)
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    log.write(result.stdout + result.stderr)
    log.flush()
    if result.returncode != 0:
        print(f"FAILED ({result.returncode}) after {time.perf_counter() - started:.1f}s: {' '.join(command)}\n"
              f"{result.stdout[-2000:]}{result.stderr[-2000:]}", file=sys.stderr, flush=True)
        return []
    rows = []
    for line in result.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            rows.append(json.loads(line))
    return rows


def median_gbps(rows: list[dict]) -> float | None:
    rates = []
    for row in rows:
        if "gbps" in row and isinstance(row["gbps"], list):
            rates.extend(row["gbps"])
        elif "gbps" in row:
            rates.append(row["gbps"])
    return statistics.median(rates) if rates else None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", type=Path, default=Path("build"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/zd-bench"))
    parser.add_argument("--out", type=Path, default=Path("bench-results.md"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold-repeat", type=int, default=2)
    parser.add_argument("--arrays", default=",".join(a[0] for a in ARRAYS))
    parser.add_argument("--shape", default=SHAPE)
    parser.add_argument("--region", default=REGION)
    parser.add_argument("--skip-cold", action="store_true")
    args = parser.parse_args()

    zarrdirect = str(args.build / "zarrdirect")
    bare = str(args.build / "bench" / "bare_loop")
    python = sys.executable
    args.work.mkdir(parents=True, exist_ok=True)
    log = open(args.out.with_suffix(".log"), "w")
    wanted = set(args.arrays.split(","))
    table = []
    for name, chunks, codec in ARRAYS:
        if name not in wanted:
            continue
        path = args.work / name
        if not (path / "zarr.json").exists():
            started = time.perf_counter()
            subprocess.run([zarrdirect, "sample", str(path), "--shape", args.shape, "--chunks", chunks, "--codec", codec],
                           check=True, stdout=log, stderr=log)
            print(f"wrote {name} in {time.perf_counter() - started:.1f}s", flush=True)
        disk = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
        row = {"array": name, "disk_gib": disk / 2**30}
        tools = {
            "bare_loop": lambda cold, n: [bare, "--threads", "16", "--repeat", str(n)] + (["--cold"] if cold else []) + [str(path)],
            "zarrdirect": lambda cold, n: [zarrdirect, "bench", str(path), "--device", "cuda", "--repeat", str(n), "--json"]
            + (["--cold"] if cold else []),
            "tensorstore": lambda cold, n: [python, str(HERE / "peers" / "tensorstore_read.py"), str(path), "--repeat", str(n)]
            + (["--cold"] if cold else []),
        }
        if codec == "none":
            tools["original_loop"] = lambda cold, n: [python, str(HERE / "peers" / "original_loop.py"), str(path), "--repeat",
                                                     str(n)] + (["--cold"] if cold else [])
        # Warm: one untimed pass fills the page cache, then every tool in turn.
        subprocess.run([zarrdirect, "bench", str(path), "--repeat", "1"], stdout=log, stderr=log)
        for tool, command in tools.items():
            row[f"{tool}_warm"] = median_gbps(run_json(command(False, args.repeat), log))
        # zarrdirect allocating (and timing) a new device result in every run, as read() does.
        row["zarrdirect_fresh_warm"] = median_gbps(run_json(tools["zarrdirect"](False, args.repeat) + ["--fresh-output"], log))
        if not args.skip_cold:
            for tool, command in tools.items():
                row[f"{tool}_cold"] = median_gbps(run_json(command(True, args.cold_repeat), log))
        # A 256^3 region from the middle, warm: milliseconds per read.
        zd = run_json([zarrdirect, "bench", str(path), "--device", "cuda", "--repeat", "5", "--json", "--region", args.region], log)
        ts = run_json([python, str(HERE / "peers" / "tensorstore_read.py"), str(path), "--repeat", "5", "--region", args.region], log)
        region_bytes = 256**3 * 2
        if zd:
            row["zarrdirect_region_ms"] = region_bytes / (statistics.median(zd[0]["gbps"]) * 1e9) * 1e3
        if ts:
            row["tensorstore_region_ms"] = statistics.median(r["seconds"] for r in ts) * 1e3
        table.append(row)
        print(json.dumps(row), flush=True)
        # Written after every array, so a run cut short by the device's time limit keeps its rows.
        write_table(table, args.out)
    return 0


def write_table(table: list[dict], out: Path) -> None:
    def fmt(value, digits=2):
        return "-" if value is None else f"{value:.{digits}f}"

    lines = ["| array | on disk GiB | mode | bare loop (bound) | zarrdirect | % of bound | zarrdirect, new result per run | tensorstore | original loop |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in table:
        for mode in ("warm", "cold"):
            if f"zarrdirect_{mode}" not in row:
                continue
            bound, zd = row.get(f"bare_loop_{mode}"), row.get(f"zarrdirect_{mode}")
            share = f"{100 * zd / bound:.0f}%" if bound and zd else "-"
            lines.append(f"| {row['array']} | {row['disk_gib']:.2f} | {mode} | {fmt(bound)} | {fmt(zd)} | {share} | "
                         f"{fmt(row.get(f'zarrdirect_fresh_{mode}'))} | "
                         f"{fmt(row.get(f'tensorstore_{mode}'))} | {fmt(row.get(f'original_loop_{mode}'))} |")
    lines += ["", "Region 256^3 from the middle (32 MiB), warm, median of 5:", "",
              "| array | zarrdirect ms | tensorstore ms | speed-up |", "|---|---|---|---|"]
    for row in table:
        zd, ts = row.get("zarrdirect_region_ms"), row.get("tensorstore_region_ms")
        lines.append(f"| {row['array']} | {fmt(zd)} | {fmt(ts)} | {fmt(ts / zd if zd and ts else None, 1)}x |")
    text = "\n".join(lines) + "\n\nThroughput in GB/s (10^9 bytes of decoded array per second) into GPU memory.\n"
    print(text, flush=True)
    out.write_text(text + "\n```\n" + "\n".join(json.dumps(r) for r in table) + "\n```\n")


if __name__ == "__main__":
    sys.exit(main())
