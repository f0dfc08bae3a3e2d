"""JAX batches over zarrdirect arrays: ``zarrdirect.jax.PatchIterator``.

Importing this module imports jax; ``import zarrdirect`` alone never does. Device batches reach
JAX through DLPack (no copy); host batches through jax.numpy.asarray (JAX copies them to its
default device).

    from zarrdirect.jax import PatchIterator
    for batch in PatchIterator("volume.zarr", (64, 64, 64), batch_size=16, device="cuda", num_batches=100):
        params = step(params, batch)
"""

from __future__ import annotations

from typing import Any, Iterator

import jax
import jax.numpy as jnp

from ._patches import PatchSampler

__all__ = ["PatchIterator", "to_jax"]


def to_jax(batch: Any) -> "jax.Array":
    if hasattr(batch, "__dlpack__") and not hasattr(batch, "__array_interface__"):
        return jax.dlpack.from_dlpack(batch)
    return jnp.asarray(batch)


class PatchIterator:
    """Batches of patches as jax arrays (see zarrdirect.PatchSampler for the arguments). Picklable;
    ``shard``/``shards`` split the batches between processes (jax.process_index(), count)."""

    def __init__(self, path: Any, patch_shape: Any, batch_size: int, *, shard: int = 0, shards: int = 1,
                 **options: Any) -> None:
        self.sampler = PatchSampler(path, patch_shape, batch_size, **options)
        self.shard = shard
        self.shards = shards

    def __iter__(self) -> Iterator[Any]:
        for item in self.sampler.batches(self.shard, self.shards):
            if self.sampler.with_corners:
                batch, corners = item
                yield to_jax(batch), corners
            else:
                yield to_jax(item)

    def __len__(self) -> int:
        return len(self.sampler)
