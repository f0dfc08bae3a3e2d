"""The multi-GPU benchmark (issue 19): every GPU of one host reading its slab at once.

For each 4 GiB uint16 array of the read benchmark (raw 128^3 and zstd-1 128^3, written with
`zarrdirect sample` when missing, where bench/gpu_bench.py puts them), measured in one run:
  zarrdirect 1 GPU        one process reads the whole array into cuda:0
  zarrdirect N procs      one process per GPU (CUDA_VISIBLE_DEVICES=K), each its own slab
  zarrdirect 1 proc       one process, one thread per GPU, slab K into cuda:K (device="cuda:K")
  bound 1 GPU / N GPUs    bench/bare_loop (16 threads per GPU: pread whole chunk files into
                          pinned memory + async copy), one process per GPU, each 1/N of the files
Each group of processes is started once; every process sets up (CUDA context, buffers), says
"ready", and then runs once per "go" the driver sends to all at the same moment, reporting its
wall-clock start and end. A run's aggregate is all bytes / (last end - first start). Warm: one
untimed run fills the page cache, then the median of --repeat runs; cold: the page cache is
dropped before each of --cold-repeat runs. Before that, every conformance case is read into each
GPU and compared with the host read. Prints a markdown table and writes it to --out.

    PYTHONPATH=build-dev/python python3 bench/multi_gpu.py --build build-dev --work /tmp/zd-bench \\
        --out /tmp/zd-out/multi_gpu.md

Runs with one GPU too (N = 1: every mode degenerates to one device), for a smoke test.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

ARRAYS = [  # name, chunks, codec: as bench/gpu_bench.py
    ("raw-128", "128,128,128", "none"),
    ("zstd-128", "128,128,128", "zstd"),
]
SHAPE = (1024, 1024, 2048)  # uint16: 4 GiB


# --- worker: one process, one or several devices ------------------------------------------------


def worker(args: argparse.Namespace) -> int:
    import zarrdirect

    array = zarrdirect.open(args.path)
    jobs = []  # (device, region)
    for item in args.read:
        device, region = item.split("=", 1)
        jobs.append((device, region))
    # Set-up outside the timed runs: a CUDA context and the staging pools on every device.
    for device, _ in jobs:
        array.read(",".join(["0:1"] * len(array.shape)), device=device, threads=args.threads)
    outputs: list = [None] * len(jobs)
    nbytes = 0
    for _, region in jobs:
        count = 1
        for axis, text in enumerate(region.split(",")):
            start, stop = (int(x) for x in text.split(":"))
            count *= stop - start
        nbytes += count * array.dtype.itemsize
    print("ready", flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        errors: list[BaseException] = []

        def one(index: int) -> None:
            device, region = jobs[index]
            try:
                if outputs[index] is None:  # the first run allocates; later ones read into it
                    outputs[index] = array.read(region, device=device, threads=args.threads)
                else:
                    array.read(region, device=device, out=outputs[index], threads=args.threads)
            except BaseException as error:  # reported to the driver, which fails the group
                errors.append(error)

        start = time.time()
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(jobs))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        end = time.time()
        if errors:
            print(json.dumps({"error": repr(errors[0])}), flush=True)
            return 1
        print(json.dumps({"bytes": nbytes, "start": start, "end": end}), flush=True)
    return 0


# --- driver -------------------------------------------------------------------------------------


class Group:
    """Processes that run together: started, awaited ready, then told "go" at once per run."""

    def __init__(self, commands: list[tuple[list[str], dict]], log) -> None:
        self.log = log
        self.processes = []
        for command, env in commands:
            print("$", " ".join(f"{k}={v}" for k, v in env.items() if k == "CUDA_VISIBLE_DEVICES"),
                  " ".join(command), file=log, flush=True)
            self.processes.append(subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                   stderr=log, text=True, env={**os.environ, **env}))
        for process in self.processes:
            line = self._line(process)
            if line != "ready":
                raise RuntimeError(f"a process of the group did not start: {line!r}")

    def _line(self, process) -> str:
        while True:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"process ended (exit {process.wait()}); see the log")
            line = line.strip()
            if line == "ready" or line.startswith("{"):
                return line
            self.log.write(line + "\n")

    def run(self) -> float:
        """One synchronised run; the aggregate GB/s."""
        for process in self.processes:
            process.stdin.write("go\n")
        for process in self.processes:
            process.stdin.flush()
        rows = [json.loads(self._line(process)) for process in self.processes]
        for row in rows:
            if "error" in row:
                raise RuntimeError(row["error"])
        self.log.write(json.dumps(rows) + "\n")
        total = sum(row["bytes"] for row in rows)
        return total / (max(row["end"] for row in rows) - min(row["start"] for row in rows)) / 1e9

    def close(self) -> None:
        for process in self.processes:
            try:
                process.stdin.close()
            except OSError:
                pass
        for process in self.processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()


def evict(path: Path) -> None:
    """Drops the array's files from the page cache (and every cache, where allowed)."""
    for file in path.rglob("*"):
        if file.is_file():
            fd = os.open(file, os.O_RDONLY)
            try:
                os.fdatasync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
    if os.geteuid() == 0:
        os.sync()
        try:
            Path("/proc/sys/vm/drop_caches").write_text("3\n")
        except OSError:
            pass


def slabs(extent: int, parts: int) -> list[tuple[int, int]]:
    return [(extent * k // parts, extent * (k + 1) // parts) for k in range(parts)]


def region_text(shape: tuple[int, ...], rows: tuple[int, int]) -> str:
    return ",".join([f"{rows[0]}:{rows[1]}"] + [f"0:{n}" for n in shape[1:]])


def measure(group_commands, path: Path, args, log) -> dict:
    group = Group(group_commands, log)
    try:
        group.run()  # untimed: fills the page cache, allocates the results
        warm = [group.run() for _ in range(args.repeat)]
        cold = []
        if not args.skip_cold:
            for _ in range(args.cold_repeat):
                evict(path)
                cold.append(group.run())
    finally:
        group.close()
    return {"warm": statistics.median(warm), "cold": statistics.median(cold) if cold else None,
            "warm_runs": warm, "cold_runs": cold}


def conformance(count: int) -> tuple[int, int, list[str]]:
    """Every conformance case read into each GPU against the host read: (cases, reads, failures)."""
    import numpy as np
    import zarrdirect

    root = Path(os.environ.get("ZARRDIRECT_CONFORMANCE_DIR", REPO / "tests" / "data" / "conformance"))
    refusals = {e["case"] for e in json.loads((root / "expected_refusals.json").read_text())["refusals"]}
    cases = sorted(case.parent for case in root.glob("*/*/case.json") if (case.parent / "array").is_dir())
    failures, reads = [], 0
    for case in cases:
        name = f"{case.parent.name}/{case.name}"
        try:
            array = zarrdirect.open(case / "array")
            host = array.read()
        except zarrdirect.UnsupportedError:
            if name not in refusals:
                failures.append(f"{name}: refused, not an expected refusal")
            continue
        for k in range(count):
            try:
                got = array.read(device=f"cuda:{k}")
                reads += 1
                if got.device_id != k or not np.array_equal(got.get(), host, equal_nan=host.dtype.kind in "fc"):
                    failures.append(f"{name} on cuda:{k}: differs from the host read")
            except Exception as error:  # noqa: BLE001 - every failure is listed
                failures.append(f"{name} on cuda:{k}: {error!r}")
    return len(cases), reads, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--read", action="append", default=[], help=argparse.SUPPRESS)
    parser.add_argument("--build", type=Path, default=Path("build-dev"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/zd-bench"))
    parser.add_argument("--out", type=Path, default=Path("multi-gpu-results.md"))
    parser.add_argument("--gpus", type=int, default=0, help="GPUs to use (default: all)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold-repeat", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None, help="zarrdirect threads per read (default: its own)")
    parser.add_argument("--bound-threads", type=int, default=16, help="bare_loop threads per GPU")
    parser.add_argument("--arrays", default=",".join(a[0] for a in ARRAYS))
    parser.add_argument("--shape", default=",".join(map(str, SHAPE)))
    parser.add_argument("--skip-cold", action="store_true")
    parser.add_argument("--skip-conformance", action="store_true")
    args = parser.parse_args()
    if args.worker:
        return worker(args)

    import zarrdirect

    available = zarrdirect.cuda_device_count()
    if available == 0:
        print("multi_gpu.py: zarrdirect sees no CUDA device", zarrdirect.system_info().get("io_path_reason"),
              file=sys.stderr)
        return 1
    count = min(args.gpus, available) if args.gpus > 0 else available
    for device in zarrdirect.system_info()["devices"][:count]:
        print(f"cuda:{device['index']}: {device.get('name')}, {device.get('memory', 0) / 2**30:.0f} GiB, "
              f"PCI {device.get('pci_bus_id')}", flush=True)
    args.work.mkdir(parents=True, exist_ok=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    log = open(args.out.with_suffix(".log"), "w")
    lines = [f"GPUs: {count}; zarrdirect threads per read: {args.threads or 'default'}; "
             f"bound: bare_loop, {args.bound_threads} threads per GPU", ""]

    if not args.skip_conformance:
        cases, reads, failures = conformance(count)
        verdict = "all equal" if not failures else f"{len(failures)} FAILED"
        lines += [f"Conformance: {cases} cases, {reads} reads into {count} GPU(s) against the host read: {verdict}", ""]
        lines += [f"- {failure}" for failure in failures[:20]]
        print(lines[-1] if not failures else "\n".join(failures), flush=True)

    zd = str(args.build / "zarrdirect")
    bare = str(args.build / "bench" / "bare_loop")
    me = [sys.executable, str(Path(__file__).resolve()), "--worker"]
    threads = ["--threads", str(args.threads)] if args.threads else []
    shape = tuple(int(n) for n in args.shape.split(","))
    table = []
    for name, chunks, codec in ARRAYS:
        if name not in args.arrays.split(","):
            continue
        path = args.work / name
        if not (path / "zarr.json").exists():
            started = time.perf_counter()
            subprocess.run([zd, "sample", str(path), "--shape", args.shape, "--chunks", chunks, "--codec", codec],
                           check=True, stdout=log, stderr=log)
            print(f"wrote {name} in {time.perf_counter() - started:.1f}s", flush=True)
        whole = region_text(shape, (0, shape[0]))
        parts = slabs(shape[0], count)
        visible = lambda k: {"CUDA_VISIBLE_DEVICES": str(k)}  # noqa: E731
        groups = {
            "zarrdirect, 1 GPU, 1 process": [(me + ["--path", str(path), "--read", f"cuda:0={whole}"] + threads,
                                              visible(0))],
            f"zarrdirect, {count} GPUs, a process per GPU (CUDA_VISIBLE_DEVICES)": [
                (me + ["--path", str(path), "--read", f"cuda:0={region_text(shape, rows)}"] + threads, visible(k))
                for k, rows in enumerate(parts)],
            f"zarrdirect, {count} GPUs, 1 process (cuda:K)": [
                (me + ["--path", str(path)] + sum((["--read", f"cuda:{k}={region_text(shape, rows)}"]
                                                   for k, rows in enumerate(parts)), []) + threads, {})],
            "bound, 1 GPU": [([bare, "--sync", "--threads", str(args.bound_threads), str(path)], visible(0))],
            f"bound, {count} GPUs": [([bare, "--sync", "--threads", str(args.bound_threads), "--part", f"{k}/{count}",
                                       str(path)], visible(k)) for k in range(count)],
        }
        results = {}
        for label, commands in groups.items():
            try:
                results[label] = measure(commands, path, args, log)
            except (RuntimeError, OSError) as error:
                print(f"{name}: {label}: FAILED: {error}", file=sys.stderr, flush=True)
                results[label] = {"warm": None, "cold": None}
            print(json.dumps({"array": name, "mode": label, **results[label]}), flush=True)
        table.append((name, results))
        write_table(lines, table, count, args.out)
    return 0


def write_table(head: list[str], table, count: int, out: Path) -> None:
    def fmt(value, digits=2):
        return "-" if value is None else f"{value:.{digits}f}"

    def ratio(a, b):
        return f"{a / b:.2f}" if a and b else "-"

    lines = list(head)
    lines += ["| array | mode | warm GB/s | cold GB/s | warm / (N x 1 GPU) | warm % of bound | cold % of bound |",
              "|---|---|---|---|---|---|---|"]
    for name, results in table:
        labels = list(results)
        one = results[labels[0]]["warm"]
        bound_one, bound_n = results[labels[3]], results[labels[4]]
        for i, label in enumerate(labels):
            row = results[label]
            n = 1 if i in (0, 3) else count
            bound = bound_one if n == 1 else bound_n
            scaling = ratio(row["warm"], n * one) if one and i < 3 else "-"
            share_w = f"{100 * row['warm'] / bound['warm']:.0f}%" if i < 3 and row["warm"] and bound["warm"] else "-"
            share_c = f"{100 * row['cold'] / bound['cold']:.0f}%" if i < 3 and row["cold"] and bound["cold"] else "-"
            lines.append(f"| {name} | {label} | {fmt(row['warm'])} | {fmt(row['cold'])} | {scaling} | {share_w} | "
                         f"{share_c} |")
    text = "\n".join(lines) + ("\n\nAggregate GB/s (10^9 bytes of decoded array per second, all GPUs together): "
                               "bytes of every slab / (last end - first start) of one synchronised run; warm the "
                               "median of the runs after an untimed one, cold with the page cache dropped.\n")
    print(text, flush=True)
    out.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
