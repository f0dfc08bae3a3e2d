"""PyTorch datasets over zarrdirect arrays: ``zarrdirect.torch.PatchDataset``.

Importing this module imports torch; ``import zarrdirect`` alone never does.

    from zarrdirect.torch import PatchDataset
    data = PatchDataset("volume.zarr", patch_shape=(64, 64, 64), batch_size=16, device="cuda", seed=0,
                        num_batches=1000)
    for batch in data:              # torch.Tensor [16, 64, 64, 64] on the GPU
        loss = model(batch.float()).mean()

The dataset yields whole batches (one read_many each, prefetched in the background), so give it
to a DataLoader with ``batch_size=None``. It pickles (only its options travel; each worker opens
the array itself) and shards its batches over DataLoader workers, each with its own random
stream; for device="cuda" keep num_workers=0 (CUDA in forked workers is unsupported by PyTorch,
and the prefetching thread already overlaps reading with training).
"""

from __future__ import annotations

from typing import Any, Iterator

import torch
from torch.utils.data import IterableDataset, get_worker_info

from ._patches import PatchSampler

__all__ = ["PatchDataset", "to_tensor"]


def to_tensor(batch: Any) -> "torch.Tensor":
    """A zarrdirect batch as a tensor without a copy: NumPy through from_numpy, a DeviceArray
    through DLPack."""
    if hasattr(batch, "__dlpack__") and not hasattr(batch, "__array_interface__"):
        return torch.from_dlpack(batch)
    return torch.from_numpy(batch)


class PatchDataset(IterableDataset):
    """An IterableDataset of batches of patches (see zarrdirect.PatchSampler for the arguments),
    each a tensor [batch_size, *patch_shape] (with ``with_corners=True``, (tensor, corners))."""

    def __init__(self, path: Any, patch_shape: Any, batch_size: int, **options: Any) -> None:
        super().__init__()
        self.sampler = PatchSampler(path, patch_shape, batch_size, **options)

    def __iter__(self) -> Iterator[Any]:
        info = get_worker_info()
        shard, shards = (0, 1) if info is None else (info.id, info.num_workers)
        for item in self.sampler.batches(shard, shards):
            if self.sampler.with_corners:
                batch, corners = item
                yield to_tensor(batch), torch.from_numpy(corners)
            else:
                yield to_tensor(item)

    def __len__(self) -> int:
        return len(self.sampler)
