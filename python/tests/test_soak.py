"""Soak: many reads of random regions of random conformance cases, from several threads and from
several processes at once, every result checked against the values NumPy saved, and the
process's memory sampled before and after (no growth beyond a stated bound).

Bounded: ZARRDIRECT_SOAK_READS reads per worker (default 150), so CI spends a few seconds."""

from __future__ import annotations

import multiprocessing
import os
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import zarrdirect
from conftest import conformance_cases, expected_refusals

READS = int(os.environ.get("ZARRDIRECT_SOAK_READS", "150"))
THREADS = 8
PROCESSES = 3
# Resident memory may grow by at most this much between the warm-up and the end: the engine's
# pools (threads, staging) are kept for the life of the process and are filled by the warm-up.
GROWTH_BOUND_MIB = 48


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


def test_random_regions_from_threads_and_processes() -> None:
    cases = _cases()
    assert len(cases) >= 30
    # Warm-up: the pools and caches a long-running process keeps.
    with ThreadPoolExecutor(THREADS) as pool:
        assert sum(pool.map(lambda seed: _read_many(seed, 20, cases), range(THREADS))) == 20 * THREADS
    before = _rss_mib()
    with ThreadPoolExecutor(THREADS) as pool:
        done = sum(pool.map(lambda seed: _read_many(seed, READS, cases), range(100, 100 + THREADS)))
    assert done == READS * THREADS
    after = _rss_mib()
    assert after - before <= GROWTH_BOUND_MIB, f"resident memory grew from {before:.0f} to {after:.0f} MiB"

    # Several processes reading the same arrays at once (forked: the engine's pool restarts in
    # each child, which is what Dask's process scheduler and multiprocessing loaders do).
    context = multiprocessing.get_context("fork")
    with context.Pool(PROCESSES) as pool:
        assert sum(pool.map(_process_worker, range(200, 200 + PROCESSES))) == READS * PROCESSES
