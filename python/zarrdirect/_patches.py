"""Batches of patches for training loops: the framework-neutral core of zarrdirect.torch and
zarrdirect.jax.

A :class:`PatchSampler` yields batches of patches -- random ones (uniform over the array, from a
seed) or given ones (their corners) -- as one stacked array per batch: NumPy for
``device="cpu"``, a :class:`zarrdirect.DeviceArray` for ``"cuda"``. Each batch is one
``read_many`` (every chunk decoded once for the whole batch), and the next ``prefetch`` batches
are read in the background while the caller works on this one.

It holds only its options until iterated: it pickles (for multi-process data loaders) and each
process opens the array itself on first use.
"""

from __future__ import annotations

import collections
from typing import Any, Iterator, Sequence

import numpy as np

from ._errors import InvalidArgumentError

__all__ = ["PatchSampler"]


class PatchSampler:
    """Batches of `patch_shape` patches of the array at `path`.

    patch_shape: the extent of a patch in every dimension (at most the array's).
    batch_size: patches per batch.
    patches: corners (one integer per dimension) of the patches to read, in order; None: random
        corners, uniform over every position where a patch fits.
    num_batches: batches per iteration; None: endless for random patches, all given patches
        (the last batch shorter unless drop_last) otherwise.
    seed: random patches come from numpy's default_rng((seed, shard, epoch)): the same seed gives
        the same batches; each iteration (epoch) and each shard of a multi-worker loader differ.
    device: "cpu" (NumPy batches) or "cuda"/"cuda:N" (DeviceArray batches).
    prefetch: batches read ahead in the background (0: read each when asked for).
    cache_bytes: the decoded-chunk cache of the sampler's array handle (0: off).
    device_cache_bytes: its device cache (decoded chunks in GPU memory, for "cuda" batches: a
        patch of cached chunks is gathered on the GPU; 0: off).
    with_corners: yield (batch, corners) with corners an int64 array [batch, ndim].
    """

    def __init__(self, path: Any, patch_shape: Sequence[int], batch_size: int, *,
                 patches: Sequence[Sequence[int]] | None = None, num_batches: int | None = None, seed: int = 0,
                 device: Any = "cpu", prefetch: int = 2, cache_bytes: int = 0, threads: int | None = None,
                 drop_last: bool = False, with_corners: bool = False, device_cache_bytes: int = 0) -> None:
        import os

        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidArgumentError(f"batch_size must be a positive integer, not {batch_size!r}")
        if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 0:
            raise InvalidArgumentError(f"prefetch must be a non-negative integer, not {prefetch!r}")
        self.path = os.fsdecode(path)
        self.patch_shape = tuple(int(e) for e in patch_shape)
        self.batch_size = batch_size
        self.patches = None if patches is None else np.asarray(patches, dtype=np.int64).reshape(-1, len(self.patch_shape))
        self.num_batches = num_batches
        self.seed = seed
        self.device = str(device)
        self.prefetch = prefetch
        self.cache_bytes = cache_bytes
        self.device_cache_bytes = device_cache_bytes
        self.threads = threads
        self.drop_last = drop_last
        self.with_corners = with_corners
        self._array = None
        self._epoch = 0

    # -- pickling: options only; the array is opened again where the sampler is used ----------

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_array"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    @property
    def array(self):
        """The sampler's array handle, opened on first use (in this process)."""
        if self._array is None:
            from ._write import open as open_array

            array = open_array(self.path, cache_bytes=self.cache_bytes or None,
                               device_cache_bytes=self.device_cache_bytes or None)
            if len(self.patch_shape) != array.ndim:
                raise InvalidArgumentError(f"patch_shape {self.patch_shape} has {len(self.patch_shape)} dimensions, "
                                           f"the array {array.ndim}")
            for axis, (patch, extent) in enumerate(zip(self.patch_shape, array.shape)):
                if not 0 < patch <= extent:
                    raise InvalidArgumentError(f"patch_shape {self.patch_shape}: axis {axis} must be between 1 and "
                                               f"the array's extent {extent}")
            if self.patches is not None and len(self.patches):
                # A corner where the patch does not fit was read as a NumPy slice: a negative one
                # from the end, one past the edge as a shorter (or empty) patch.
                highest = np.asarray(array.shape, dtype=np.int64) - np.asarray(self.patch_shape, dtype=np.int64)
                outside = np.flatnonzero(((self.patches < 0) | (self.patches > highest)).any(axis=1))
                if outside.size:
                    index = int(outside[0])
                    raise InvalidArgumentError(
                        f"patches[{index}] = {self.patches[index].tolist()}: a patch of shape {self.patch_shape} "
                        f"there does not fit in the array's shape {array.shape} (corners go from 0 to "
                        f"{highest.tolist()})")
            self._array = array
        return self._array

    # -- which patches ---------------------------------------------------------------------------

    def _corner_batches(self, shard: int, shards: int, epoch: int) -> Iterator[np.ndarray]:
        """Corner arrays [n, ndim] of this shard's batches (batch k goes to shard k % shards)."""
        if self.patches is not None:
            count = len(self.patches)
            total = count // self.batch_size if self.drop_last else -(-count // self.batch_size)
            if self.num_batches is not None:
                total = min(total, self.num_batches)
            for k in range(shard, total, shards):
                yield self.patches[k * self.batch_size:(k + 1) * self.batch_size]
            return
        shape = np.asarray(self.array.shape, dtype=np.int64)
        highest = shape - np.asarray(self.patch_shape, dtype=np.int64) + 1  # exclusive bound of a corner
        rng = np.random.default_rng((self.seed, shard, epoch))
        k = shard
        while self.num_batches is None or k < self.num_batches:
            yield rng.integers(0, highest, size=(self.batch_size, len(highest)), dtype=np.int64)
            k += shards

    # -- how one batch is read: a framework's sampler (zarrdirect.torch) reads into its own batches

    def _start_read(self, array: Any, corners: np.ndarray) -> Any:
        """Starts reading the batch of patches at `corners` in the background; a future whose
        result() is the batch."""
        from ._many import read_boxes_async

        return read_boxes_async(array, corners, self.patch_shape, self.device, self.threads)

    def _finished(self, batch: Any) -> Any:
        """A batch whose read has finished, before the caller gets it (and before the next read
        is submitted)."""
        return batch

    # -- iteration ---------------------------------------------------------------------------------

    def batches(self, shard: int = 0, shards: int = 1) -> Iterator[Any]:
        """The batches of one shard (of `shards`, for data-loader workers), read ahead by
        `prefetch`. Each call starts a new epoch (new random patches)."""
        epoch = self._epoch
        self._epoch += 1
        array = self.array
        pending: collections.deque = collections.deque()
        corner_source = self._corner_batches(shard, shards, epoch)

        def submit() -> bool:
            corners = next(corner_source, None)
            if corners is None:
                return False
            pending.append((corners, self._start_read(array, corners)))
            return True

        try:
            for _ in range(max(self.prefetch, 1)):
                if not submit():
                    break
            while pending:
                corners, future = pending.popleft()
                batch = self._finished(future.result())
                if self.prefetch > 0:
                    submit()  # the next read runs while the caller trains on this batch
                yield (batch, corners) if self.with_corners else batch
                if self.prefetch == 0:
                    submit()
        finally:
            for _, future in pending:  # an abandoned iteration stops its reads
                future.cancel()

    def __iter__(self) -> Iterator[Any]:
        return self.batches()

    def __len__(self) -> int:
        if self.patches is not None:
            count = len(self.patches)
            total = count // self.batch_size if self.drop_last else -(-count // self.batch_size)
            return total if self.num_batches is None else min(total, self.num_batches)
        if self.num_batches is None:
            raise TypeError("an endless PatchSampler (random patches, num_batches=None) has no length")
        return self.num_batches
