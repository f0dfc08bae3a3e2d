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

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from ._errors import InvalidArgumentError
from ._many import read_boxes_async
from ._patches import PatchSampler

__all__ = ["PatchDataset", "TorchPatchSampler", "to_tensor"]


def to_tensor(batch: Any) -> "torch.Tensor":
    """A zarrdirect batch as a tensor without a copy: a tensor as it is, NumPy through
    from_numpy, a DeviceArray through DLPack."""
    if isinstance(batch, torch.Tensor):
        return batch
    if hasattr(batch, "__dlpack__") and not hasattr(batch, "__array_interface__"):
        return torch.from_dlpack(batch)
    return torch.from_numpy(batch)


class TorchPatchSampler(PatchSampler):
    """A PatchSampler whose CUDA batches are tensors from PyTorch's caching allocator, read into
    on a side stream of the sampler's own.

    With the library allocating (``allocator="zarrdirect"``), every batch is a cudaMalloc, and the
    batch before it a cudaFree when the training loop drops it: a model step beside reads into new
    device memory ran at 0.84-0.88 of its time alone, beside reads into one reused batch at 0.99
    (H100, docs/BENCHMARKS.md, session 22). PyTorch's allocator recycles the memory of dropped
    batches instead. Its rule is that a block freed on a stream may be handed out again at once
    for work on that stream, so the read (on the side stream) first waits for the work queued on
    the current stream so far, the batch is recorded as used on the side stream (record_stream,
    so its block is not recycled while the read writes), and the current stream waits for the
    read before the batch is handed out.
    """

    def __init__(self, *args: Any, allocator: str = "torch", **options: Any) -> None:
        if allocator not in ("torch", "zarrdirect"):
            raise InvalidArgumentError(f'allocator must be "torch" or "zarrdirect", not {allocator!r}')
        super().__init__(*args, **options)
        self.allocator = allocator
        self._stream = None  # per process: a CUDA stream does not pickle
        self._target = None  # (torch dtype, torch device) of the batches, once known

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state["_stream"] = None
        state["_target"] = None
        return state

    def _torch_target(self) -> "tuple[torch.dtype, torch.device] | None":
        if self.allocator != "torch" or not self.device.startswith("cuda"):
            return None
        if self._target is None:
            try:
                dtype = torch.from_numpy(np.empty(0, dtype=self.array.dtype)).dtype
            except TypeError:  # an element type PyTorch lacks: the library's batches (DLPack says why)
                return None
            self._target = (dtype, torch.device(self.device))
        return self._target

    def _start_read(self, array: Any, corners: np.ndarray) -> Any:
        target = self._torch_target()
        if target is None:
            return super()._start_read(array, corners)
        dtype, device = target
        if self._stream is None:
            self._stream = torch.cuda.Stream(device)
        batch = torch.empty((len(corners),) + self.patch_shape, dtype=dtype, device=device)
        self._stream.wait_stream(torch.cuda.current_stream(device))
        batch.record_stream(self._stream)
        return read_boxes_async(array, corners, self.patch_shape, self.device, self.threads, out=batch,
                                stream=self._stream)

    def _finished(self, batch: Any) -> Any:
        if isinstance(batch, torch.Tensor) and batch.is_cuda:
            torch.cuda.current_stream(batch.device).wait_stream(self._stream)
        return batch


class PatchDataset(IterableDataset):
    """An IterableDataset of batches of patches (see zarrdirect.PatchSampler for the arguments),
    each a tensor [batch_size, *patch_shape] (with ``with_corners=True``, (tensor, corners)).

    allocator: for device="cuda", "torch" (the default: batches from PyTorch's caching allocator,
        read into on a side stream; see TorchPatchSampler) or "zarrdirect" (the library allocates
        each batch, handed over through DLPack).
    """

    def __init__(self, path: Any, patch_shape: Any, batch_size: int, *, allocator: str = "torch",
                 **options: Any) -> None:
        super().__init__()
        self.sampler = TorchPatchSampler(path, patch_shape, batch_size, allocator=allocator, **options)

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
