#!/usr/bin/env python3
"""A training loop fed by zarrdirect: random 3-D patches, batched, prefetched, on the GPU.

    python3 examples/train_loop.py                       # makes a small demo volume in a temp folder
    python3 examples/train_loop.py --path volume.zarr --patch 64 --batch 16 --steps 200 --device cuda

With PyTorch installed the loop trains a tiny 3-D convolutional model on batches from
zarrdirect.torch.PatchDataset; without it (or with --framework numpy) it runs the same loop on
zarrdirect.PatchSampler's NumPy batches with a stand-in step, so the data path can be tried
anywhere. Each batch is one read_many (each chunk decoded once per batch) and the next batches
are read in the background while the model trains on this one.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

import zarrdirect


def demo_volume(folder: str) -> str:
    path = os.path.join(folder, "demo.zarr")
    array = zarrdirect.create(path, shape=(96, 96, 96), dtype="uint16", chunks=(32, 32, 32), codec="zstd:1",
                              overwrite=True)
    rng = np.random.default_rng(0)
    array[...] = rng.integers(0, 4096, size=(96, 96, 96), dtype=np.uint16)
    return path


def torch_loop(args: argparse.Namespace, path: str) -> float:
    import torch

    from zarrdirect.torch import PatchDataset

    device = torch.device(args.device)
    data = PatchDataset(path, (args.patch,) * 3, args.batch, num_batches=args.steps, seed=args.seed,
                        device=args.device, cache_bytes=args.cache_mb << 20)
    # batch_size=None: the dataset yields whole batches.
    loader = torch.utils.data.DataLoader(data, batch_size=None, num_workers=0)
    model = torch.nn.Sequential(torch.nn.Conv3d(1, 4, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv3d(4, 1, 3, padding=1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss = torch.zeros(())
    for step, batch in enumerate(loader):
        x = batch.to(device, non_blocking=True).float().unsqueeze(1) / 4096.0
        loss = torch.nn.functional.mse_loss(model(x), x)  # an autoencoder's objective, as a stand-in
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % max(args.steps // 5, 1) == 0:
            print(f"step {step:5d}  loss {loss.item():.5f}")
    return float(loss.item())


def numpy_loop(args: argparse.Namespace, path: str) -> float:
    sampler = zarrdirect.PatchSampler(path, (args.patch,) * 3, args.batch, num_batches=args.steps, seed=args.seed,
                                      device=args.device, cache_bytes=args.cache_mb << 20)
    mean = 0.0
    for step, batch in enumerate(sampler):
        host = np.asarray(batch) if args.device == "cpu" else batch.to_host()
        mean = float(host.mean())  # the stand-in for a model step
        if step % max(args.steps // 5, 1) == 0:
            print(f"step {step:5d}  batch {host.shape} mean {mean:.1f}")
    return mean


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", help="a 3-D Zarr array (default: a small demo volume made here)")
    parser.add_argument("--patch", type=int, default=16)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda" if zarrdirect.cuda_available() else "cpu")
    parser.add_argument("--cache-mb", type=int, default=0, help="decoded-chunk cache of the array handle")
    parser.add_argument("--framework", choices=("auto", "torch", "numpy"), default="auto")
    args = parser.parse_args(argv)
    framework = args.framework
    if framework == "auto":
        try:
            import torch  # noqa: F401

            framework = "torch"
        except ImportError:
            framework = "numpy"
    with tempfile.TemporaryDirectory() as folder:
        path = args.path or demo_volume(folder)
        start = time.perf_counter()
        (torch_loop if framework == "torch" else numpy_loop)(args, path)
        seconds = time.perf_counter() - start
    print(f"{framework}: {args.steps} steps of {args.batch} patches of {args.patch}^3 in {seconds:.2f} s "
          f"({args.steps * args.batch / seconds:.0f} patches/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
