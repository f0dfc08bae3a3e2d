"""Where the PatchDataset's time goes under a long model step (issue 16): the loop of
bench/patch_bench.py's dataset run, taken apart. For each variant, batches per second over
--batches batches (after a warm-up epoch), against the model step alone:

  step on the batch        the bench's loop: the model reads each batch (batches from PyTorch's
                           caching allocator, the dataset's default)
  library batches          the same with allocator="zarrdirect" (a cudaMalloc per batch, a
                           cudaFree when the loop drops it: the default before session 22)
  library batches kept     the same, every batch kept alive to the end (no cudaFree in the loop)
  step on a dummy          the same GPU work, the batch unused (does the batch's dtype cost?)
  stream sync              the step waits for its own stream (as loss.item() does), not for the
                           whole device (torch.cuda.synchronize also waits for the reads' copies)
  no step                  the dataset alone
  prefetch 4               the bench's loop with 4 batches read ahead

    PYTHONPATH=build/python python3 bench/dataset_probe.py ARRAY [--matmuls 4]
"""
from __future__ import annotations

import argparse
import time

import torch

import zarrdirect  # noqa: F401
from zarrdirect.torch import PatchDataset


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("array")
    parser.add_argument("--matmuls", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--patch", type=int, default=64)
    parser.add_argument("--batches", type=int, default=40)
    args = parser.parse_args()
    side = args.patch * args.patch
    weight = torch.randn(side, side, device="cuda")

    def step(batch, whole_device=True):
        x = batch.to("cuda").float().reshape(-1, side)
        for _ in range(args.matmuls):
            x = torch.tanh(x @ weight)
        loss = x.mean()
        if whole_device:
            torch.cuda.synchronize()
        else:
            torch.cuda.current_stream().synchronize()
        return loss

    dummy = torch.zeros((args.batch,) + (args.patch,) * 3, dtype=torch.int32, device="cuda")

    def dataset(prefetch=2, allocator="torch"):
        return PatchDataset(args.array, (args.patch,) * 3, args.batch, num_batches=args.batches, seed=0,
                            device="cuda", prefetch=prefetch, allocator=allocator)

    def timed_loop(data, body, keep=False):
        for batch in data:  # warm-up epoch
            body(batch)
        kept = []
        in_body = 0.0
        start = time.perf_counter()
        for batch in data:
            entered = time.perf_counter()
            body(batch)
            in_body += time.perf_counter() - entered
            if keep:
                kept.append(batch)
        seconds = time.perf_counter() - start
        del kept
        # ms a batch: all of it, in the step, and getting the batch (the loader's cost)
        return (seconds / args.batches, in_body / args.batches * 1e3,
                (seconds - in_body) / args.batches * 1e3)

    for _ in range(3):
        step(dummy)
    start = time.perf_counter()
    for _ in range(20):
        step(dummy)
    alone = (time.perf_counter() - start) / 20
    real = next(iter(dataset()))
    start = time.perf_counter()
    for _ in range(20):
        step(real)
    alone_real = (time.perf_counter() - start) / 20
    print(f"model step alone: dummy int32 {alone * 1e3:.2f} ms, a real batch ({real.dtype}) {alone_real * 1e3:.2f} ms")
    variants = [
        ("step on the batch", dataset(), step, False),
        ("library batches", dataset(allocator="zarrdirect"), step, False),
        ("library batches kept", dataset(allocator="zarrdirect"), step, True),
        ("step on a dummy", dataset(), lambda b: step(dummy), False),
        ("stream sync", dataset(), lambda b: step(b, whole_device=False), False),
        ("no step", dataset(), lambda b: None, False),
        ("prefetch 4", dataset(4), step, False),
    ]
    # The step beside reads that never stop, on another thread (no dataset, no handing over):
    # into host memory (CPU work only) and into device memory (copies on the GPU too). A slower
    # step there is interference, not the loader's pipeline.
    import threading

    import numpy as np

    array = zarrdirect.open(args.array)
    rng = np.random.default_rng(5)
    highest = np.asarray(array.shape) - args.patch + 1
    regions = [tuple(slice(int(c), int(c) + args.patch) for c in corner)
               for corner in rng.integers(0, highest, size=(args.batch, 3))]
    fixed = torch.empty((args.batch,) + (args.patch,) * 3, dtype=real.dtype, device="cuda")
    for where in ("cpu", "cuda", "cuda out="):
        stop = threading.Event()

        def reader():
            while not stop.is_set():
                if where == "cuda out=":  # one batch's memory, reused: no cudaMalloc/cudaFree
                    array.read_many(regions, stack=True, out=fixed)
                else:
                    array.read_many(regions, device=where, stack=True)

        thread = threading.Thread(target=reader)
        thread.start()
        time.sleep(0.05)
        start = time.perf_counter()
        for _ in range(20):
            step(dummy)
        beside = (time.perf_counter() - start) / 20
        stop.set()
        thread.join()
        print(f"step beside endless reads into {where}: {beside * 1e3:.2f} ms ({alone / beside:.3f} of alone)")
    # Where "getting the batch" goes: waiting for the read (ReadFuture.result) and starting the
    # next one (the sampler's _start_read), summed over the timed loop.
    from zarrdirect import _many
    from zarrdirect.torch import TorchPatchSampler

    spent = {"result": 0.0, "start": 0.0}

    def timing(owner, name, key):
        original = getattr(owner, name)

        def timed(*a, **k):
            entered = time.perf_counter()
            try:
                return original(*a, **k)
            finally:
                spent[key] += time.perf_counter() - entered
        setattr(owner, name, timed)

    timing(_many.ReadFuture, "result", "result")
    timing(TorchPatchSampler, "_start_read", "start")
    for name, data, body, keep in variants:
        for key in spent:
            spent[key] = 0.0
        per_batch, body_ms, outside_ms = timed_loop(data, body, keep)
        print(f"{name}: {per_batch * 1e3:.2f} ms a batch, {args.batch / per_batch:.1f} patches/s, "
              f"{alone_real / per_batch:.3f} of the step's rate (in the step {body_ms:.2f} ms, "
              f"getting the batch {outside_ms:.2f} ms: of it waiting "
              f"{spent['result'] / (2 * args.batches) * 1e3:.2f}, starting the next read "
              f"{spent['start'] / (2 * args.batches) * 1e3:.2f}, both epochs' mean)")


if __name__ == "__main__":
    main()
