"""Soak: many reads of random regions of random conformance cases, from several threads and from
several processes at once, every result checked against the values NumPy saved, and the
process's memory sampled before and after (no growth beyond a stated bound).

Bounded: ZARRDIRECT_SOAK_READS reads per worker and round (default 300), so CI spends a few seconds."""

from __future__ import annotations

import multiprocessing
import os
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import zarrdirect
from conftest import conformance_cases, expected_refusals

READS = int(os.environ.get("ZARRDIRECT_SOAK_READS", "300"))
THREADS = 8
PROCESSES = 3
# Resident memory may grow by at most this much between the end of the warm-up and the end of an
# equal second round of 8 x 300 reads (measured: about 1.3 MiB); leaking one page-aligned result
# buffer per read would add at least 9.4 MiB.
GROWTH_BOUND_MIB = 6


def _cases() -> list[tuple[Path, np.ndarray]]:
    refused = expected_refusals()
    out = []
    for case in conformance_cases():
        if f"{case.parent.name}/{case.name}" in refused or not (case / "array").is_dir():
            continue
        out.append((case / "array", np.load(case / "expected.npy")))
    return out


def _random_box(rng: random.Random, shape: tuple[int, ...]) -> tuple[slice, ...]:
    box = []
    for extent in shape:
        start = rng.randrange(0, extent) if extent else 0
        stop = rng.randrange(start, extent + 1) if extent else 0
        box.append(slice(start, stop))
    return tuple(box)


def _read_many(seed: int, reads: int, cases) -> int:
    """`reads` random region reads, each compared with NumPy's slice; returns how many ran."""
    rng = random.Random(seed)
    arrays = {path: zarrdirect.open(path) for path, _ in cases}
    for _ in range(reads):
        path, expected = cases[rng.randrange(len(cases))]
        box = _random_box(rng, expected.shape)
        got = arrays[path][box] if expected.ndim else arrays[path][()]
        want = expected[box] if expected.ndim else expected[()]
        np.testing.assert_array_equal(np.asarray(got), want.astype(want.dtype.newbyteorder("="), copy=False))
    return reads


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _process_worker(seed: int) -> int:
    return _read_many(seed, READS, _cases())


def _threaded_soak(_: int) -> tuple[float, float, int]:
    """In a fresh process: a warm-up round, then an equal measured round; (RSS before, after, reads)."""
    cases = _cases()
    # The warm-up sizes what a long-running process keeps (engine threads, staging, the
    # allocator's per-thread arenas); a leak keeps growing after it.
    with ThreadPoolExecutor(THREADS) as pool:
        assert sum(pool.map(lambda seed: _read_many(seed, READS, cases), range(THREADS))) == READS * THREADS
    before = _rss_mib()
    with ThreadPoolExecutor(THREADS) as pool:
        done = sum(pool.map(lambda seed: _read_many(seed, READS, cases), range(100, 100 + THREADS)))
    return before, _rss_mib(), done


def test_random_regions_from_threads_and_processes() -> None:
    assert len(_cases()) >= 30
    # Measured in a fresh process: this one carries whatever earlier tests left behind.
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        before, after, done = pool.map(_threaded_soak, [0])[0]
    assert done == READS * THREADS
    print(f"soak: resident memory {before:.1f} -> {after:.1f} MiB over {done} reads")
    assert after - before <= GROWTH_BOUND_MIB, f"resident memory grew from {before:.0f} to {after:.0f} MiB"

    # Several processes reading the same arrays at once (forked: the engine's pool restarts in
    # each child, which is what Dask's process scheduler and multiprocessing loaders do).
    with multiprocessing.get_context("fork").Pool(PROCESSES) as pool:
        assert sum(pool.map(_process_worker, range(200, 200 + PROCESSES))) == READS * PROCESSES
