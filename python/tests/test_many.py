"""read_many, background reads, the decoded-chunk cache, threads, and the patch datasets' core."""

from __future__ import annotations

import importlib.util
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import zarrdirect

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def volume(tmp_path):
    data = np.random.default_rng(1).integers(0, 60000, size=(40, 36, 30), dtype=np.uint16)
    array = zarrdirect.create(tmp_path / "v.zarr", shape=data.shape, dtype="uint16", chunks=(8, 8, 8), codec="zstd:1")
    array[...] = data
    return tmp_path / "v.zarr", data


@pytest.fixture
def sharded(tmp_path):
    data = np.random.default_rng(2).integers(0, 60000, size=(32, 20), dtype=np.uint16)
    array = zarrdirect.create(tmp_path / "s.zarr", shape=data.shape, dtype="uint16", chunks=(4, 5), shards=(16, 10),
                              codec="zstd:1")
    array[...] = data
    return tmp_path / "s.zarr", data


def random_regions(shape, count, seed):
    rng = np.random.default_rng(seed)
    regions = []
    for _ in range(count):
        key = []
        for extent in shape:
            a, b = sorted(rng.integers(0, extent + 1, size=2))
            key.append(slice(int(a), int(max(b, a + 1))))
        regions.append(tuple(key))
    return regions


@pytest.mark.parametrize("which", ["volume", "sharded"])
def test_read_many_equals_indexing(which, request):
    path, data = request.getfixturevalue(which)
    array = zarrdirect.open(path)
    regions = random_regions(data.shape, 25, 3) + [(0,) * data.ndim, "...", "1:3"]
    results, stats = array.read_many(regions, return_stats=True)
    assert len(results) == len(regions)
    for region, result in zip(regions, results):
        key = region if not isinstance(region, str) else {"...": (...,), "1:3": (slice(1, 3),)}[region]
        np.testing.assert_array_equal(result, data[key])
    assert stats["chunks_decoded"] == stats["chunks_total"] - stats["chunks_missing"]


def test_read_many_decodes_shared_chunks_once(volume):
    path, data = volume
    array = zarrdirect.open(path)
    # Eight patches inside the same 8^3 chunk, and one in another.
    regions = [(slice(i % 4, i % 4 + 4), slice(0, 4), slice(2, 6)) for i in range(8)] + ["16:20,16:20,16:20"]
    _, stats = array.read_many(regions, return_stats=True)
    assert stats["chunks_decoded"] == 2


def test_stack(volume):
    path, data = volume
    array = zarrdirect.open(path)
    regions = ["0:4,5:9,1:7", (slice(30, 34), slice(27, 31), slice(24, 30))]
    batch = array.read_many(regions, stack=True)
    assert batch.shape == (2, 4, 4, 6)
    np.testing.assert_array_equal(batch[1], data[30:34, 27:31, 24:30])
    with pytest.raises(zarrdirect.InvalidArgumentError, match="one shape"):
        array.read_many(["0:4", "0:5"], stack=True)
    with pytest.raises(zarrdirect.InvalidArgumentError):
        array.read_many("0:4")  # a region, not a list of them
    with pytest.raises(IndexError):
        array.read_many([(99,)])


def test_read_many_into_out(volume):
    path, data = volume
    array = zarrdirect.open(path)
    regions = ["0:4,5:9,1:7", (slice(30, 34), slice(27, 31), slice(24, 30))]
    batch = np.full((2, 4, 4, 6), 7, dtype=np.uint16)
    result, stats = array.read_many(regions, stack=True, out=batch, return_stats=True)
    assert result is batch
    np.testing.assert_array_equal(batch[0], data[0:4, 5:9, 1:7])
    np.testing.assert_array_equal(batch[1], data[30:34, 27:31, 24:30])
    assert stats["bytes_out"] == batch.nbytes
    # A list of outs, one a strided view (a column block of a wider array): strides are honoured.
    wide = np.zeros((4, 4, 10), dtype=np.uint16)
    first = np.zeros((4, 4, 6), dtype=np.uint16)
    outs = [first, wide[:, :, 2:8]]
    assert array.read_many(regions, out=outs) is outs
    np.testing.assert_array_equal(first, data[0:4, 5:9, 1:7])
    np.testing.assert_array_equal(wide[:, :, 2:8], data[30:34, 27:31, 24:30])
    assert not wide[:, :, :2].any() and not wide[:, :, 8:].any()
    # In the background: the future returns out, and its stats.
    again = np.zeros_like(batch)
    future = array.read_many_async(regions, stack=True, out=again)
    assert future.result(timeout=30) is again and future.stats["bytes_out"] == again.nbytes
    np.testing.assert_array_equal(again, batch)
    # Refused before anything is read, naming what is wrong.
    with pytest.raises(zarrdirect.InvalidArgumentError, match="leading axis of 2"):
        array.read_many(regions, stack=True, out=np.zeros((3, 4, 4, 6), np.uint16))
    with pytest.raises(zarrdirect.InvalidArgumentError, match="region 1: .*dtype"):
        array.read_many(regions, out=[first, np.zeros((4, 4, 6), np.int32)])
    with pytest.raises(zarrdirect.InvalidArgumentError, match="region 0: .*read-only"):
        frozen = np.zeros((4, 4, 6), np.uint16)
        frozen.flags.writeable = False
        array.read_many(regions, out=[frozen, first])
    with pytest.raises(zarrdirect.InvalidArgumentError, match="2 regions"):
        array.read_many(regions, out=[first])
    with pytest.raises(zarrdirect.InvalidArgumentError, match="stream"):
        array.read_many(regions, stream=0)


class _TensorLike:
    """What zarrdirect reads of a PyTorch tensor (data_ptr, stride in elements, element_size,
    dtype, is_cuda, requires_grad), over a NumPy array: the out= path for tensors, without torch."""

    __module__ = "torch.testing_stand_in"

    def __init__(self, array, dtype_name=None, requires_grad=False):
        self.array = array
        self.shape = array.shape
        self.dtype = f"torch.{dtype_name or array.dtype.name}"
        self.is_cuda = False
        self.device = "cpu"
        self.requires_grad = requires_grad

    def data_ptr(self):
        return self.array.__array_interface__["data"][0]

    def element_size(self):
        return self.array.itemsize

    def stride(self):
        return tuple(s // self.array.itemsize for s in self.array.strides)

    def __getitem__(self, index):
        return _TensorLike(self.array[index])


def test_read_many_into_a_tensor(volume):
    path, data = volume
    array = zarrdirect.open(path)
    regions = ["0:4,5:9,1:7", (slice(30, 34), slice(27, 31), slice(24, 30))]
    backing = np.zeros((2, 4, 4, 6), dtype=np.uint16)
    tensor = _TensorLike(backing)
    assert array.read_many(regions, stack=True, out=tensor) is tensor
    np.testing.assert_array_equal(backing[1], data[30:34, 27:31, 24:30])
    wide = np.zeros((4, 4, 9), dtype=np.uint16)
    array.read(regions[0], out=_TensorLike(wide[:, :, 3:]))  # strides in elements, honoured
    np.testing.assert_array_equal(wide[:, :, 3:], data[0:4, 5:9, 1:7])
    with pytest.raises(zarrdirect.InvalidArgumentError, match="bfloat16"):
        array.read(regions[0], out=_TensorLike(np.zeros((4, 4, 6), np.uint16), "bfloat16"))
    with pytest.raises(zarrdirect.InvalidArgumentError, match="requires grad"):
        array.read(regions[0], out=_TensorLike(np.zeros((4, 4, 6), np.uint16), requires_grad=True))
    with pytest.raises(zarrdirect.InvalidArgumentError, match="device='cuda'"):
        array.read(regions[0], out=_TensorLike(np.zeros((4, 4, 6), np.uint16)), device="cuda")


def test_boxes_from_a_corner_array(volume):
    """The samplers' call: boxes from an array of corners, into new memory or one batch out=."""
    from zarrdirect._many import read_boxes_async

    path, data = volume
    array = zarrdirect.open(path)
    corners = np.array([[0, 0, 0], [36, 30, 24], [5, 17, 11]])
    batch = read_boxes_async(array, corners, (4, 6, 6), "cpu", None).result(timeout=30)
    out = np.zeros((3, 4, 6, 6), np.uint16)
    assert read_boxes_async(array, corners, (4, 6, 6), "cpu", None, out=out).result(timeout=30) is out
    for i, (z, y, x) in enumerate(corners):
        np.testing.assert_array_equal(batch[i], data[z:z + 4, y:y + 6, x:x + 6])
        np.testing.assert_array_equal(out[i], batch[i])
    with pytest.raises(IndexError, match="box 1 at \\[37, 30, 24\\]"):
        read_boxes_async(array, corners + [[0, 0, 0], [1, 0, 0], [0, 0, 0]], (4, 6, 6), "cpu", None)
    with pytest.raises(IndexError, match="box 0"):
        read_boxes_async(array, -corners[1:2], (4, 6, 6), "cpu", None)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="shape"):
        read_boxes_async(array, corners, (4, 6, 6), "cpu", None, out=np.zeros((2, 4, 6, 6), np.uint16))
    with pytest.raises(zarrdirect.InvalidArgumentError, match="3-d array"):
        read_boxes_async(array, corners[:, :2], (4, 6), "cpu", None)
    # Into a tensor (the PyTorch dataset's call), read through the tensor's own accessors.
    backing = np.zeros((3, 4, 6, 6), np.uint16)
    tensor = _TensorLike(backing)
    assert read_boxes_async(array, corners, (4, 6, 6), "cpu", None, out=tensor).result(timeout=30) is tensor
    np.testing.assert_array_equal(backing, batch)


def test_an_unfinished_read_into_out_is_waited_for_when_dropped(volume):
    """Dropping the future of a read into out= cancels the read and waits for it: out's memory is
    never written after the future is gone (the test would see writes into a reused buffer)."""
    path, data = volume
    array = zarrdirect.open(path)
    out = np.zeros((8,) + data.shape, dtype=np.uint16)
    blockers = [array.read_many_async([(slice(None),)] * 4, stack=True, threads=1) for _ in range(8)]
    future = array.read_many_async([(slice(None),)] * 8, stack=True, threads=1, out=out)
    del future  # cancelled (or finished) and stopped by now
    snapshot = out.copy()
    for blocker in blockers:
        blocker.cancel()
    for blocker in blockers:
        try:
            blocker.result()
        except zarrdirect.CancelledError:
            pass
    np.testing.assert_array_equal(out, snapshot)


def test_steps_are_refused_not_read_as_their_box(volume):
    # read_many, read_many_async and read_async read boxes; a stepped region came back as its
    # bounding box (np.s_[::-1] forwards, np.s_[::2] as the first half), silently.
    path, data = volume
    array = zarrdirect.open(path)
    for region in [np.s_[::-1], np.s_[::2, 3], "0:8:2", (slice(None), slice(5, 0, -1))]:
        with pytest.raises(zarrdirect.InvalidIndexError, match="step"):
            array.read_many([(0,), region])
        with pytest.raises(zarrdirect.InvalidIndexError, match="step"):
            array.read_async(region)
        with pytest.raises(zarrdirect.InvalidIndexError, match="step"):
            array.read_many_async([region], stack=True)
    np.testing.assert_array_equal(array.read_many([np.s_[2:9:1, None]])[0], data[2:9, None])

def test_async_result_done_cancel_timeout(volume):
    path, data = volume
    array = zarrdirect.open(path)
    future = array.read_async((slice(3, 20), 5))
    np.testing.assert_array_equal(future.result(timeout=30), data[3:20, 5])
    assert future.done() and not future.cancel()
    assert future.stats["bytes_out"] == data[3:20, 5].nbytes
    many = array.read_many_async(["0:8,0:8,0:8", "8:16"], stack=False)
    first, second = many.result()
    np.testing.assert_array_equal(second, data[8:16])
    # Cancelling: a callback-free way to hold a read is a long queue; cancel every one of them.
    futures = [array.read_many_async([(slice(None),)] * 4, stack=True, threads=1) for _ in range(40)]
    cancelled = [f for f in futures if f.cancel()]
    for f in futures:
        if f in cancelled:
            with pytest.raises(zarrdirect.CancelledError):
                f.result()
        else:
            assert f.result().shape == (4,) + data.shape
    assert cancelled  # forty whole-array reads cannot all have finished already
    with pytest.raises(zarrdirect.InvalidArgumentError):
        future.result(timeout=-1)


def test_async_timeout(volume):
    path, _ = volume
    array = zarrdirect.open(path)
    blockers = [array.read_many_async([(slice(None),)] * 8, stack=True, threads=1) for _ in range(30)]
    late = array.read_many_async([(slice(None),)], threads=1)
    with pytest.raises(TimeoutError):
        late.result(timeout=0)
    for f in blockers + [late]:
        f.cancel()


def test_cache_hits_and_invalidation(tmp_path, volume):
    path, data = volume
    array = zarrdirect.open(path, mode="r+", cache_bytes=1 << 22)
    assert array.cache_bytes == 1 << 22
    _, first = array.read("0:16,0:16,0:8", return_stats=True)
    _, again = array.read("0:16,0:16,0:8", return_stats=True)
    assert (first["cache_hits"], again["cache_hits"], again["chunks_decoded"]) == (0, 4, 0)
    array[0:2, 0:2, 0:2] = 7  # a write through the handle drops its chunk
    np.testing.assert_array_equal(array[0:16, 0:16, 0:8][:2, :2, :2], np.full((2, 2, 2), 7))
    other = zarrdirect.open(path)  # a write through another handle: the file changed on disk
    other_writer = zarrdirect.open(path, mode="r+")
    other_writer[8:10, 8:10, 0:2] = 9
    np.testing.assert_array_equal(array[8:10, 8:10, 0:2], np.full((2, 2, 2), 9))
    assert array.cache_stats()["invalidations"] >= 2
    array.cache_bytes = 0
    assert array.cache_stats()["bytes"] == 0
    with pytest.raises(zarrdirect.InvalidArgumentError):
        array.cache_bytes = -1
    del other


def test_one_handle_many_threads(volume):
    path, data = volume
    array = zarrdirect.open(path, cache_bytes=1 << 20)  # smaller than the array: evictions too
    errors = []

    def work(seed):
        try:
            regions = random_regions(data.shape, 6, seed)
            for _ in range(3):
                for region, result in zip(regions, array.read_many(regions)):
                    np.testing.assert_array_equal(result, data[region])
                np.testing.assert_array_equal(array.read_async(regions[0]).result(), data[regions[0]])
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors


def test_patch_sampler_random_given_and_pickled(volume):
    path, data = volume
    sampler = zarrdirect.PatchSampler(path, (8, 6, 4), 5, num_batches=3, seed=4, with_corners=True)
    batches = list(sampler)
    assert len(batches) == 3 == len(sampler)
    for batch, corners in batches:
        assert batch.shape == (5, 8, 6, 4)
        for patch, (z, y, x) in zip(batch, corners):
            np.testing.assert_array_equal(patch, data[z:z + 8, y:y + 6, x:x + 4])
    # Same seed, same first epoch; the next epoch differs.
    clone = pickle.loads(pickle.dumps(zarrdirect.PatchSampler(path, (8, 6, 4), 5, num_batches=3, seed=4,
                                                              with_corners=True)))
    assert all((a[1] == b[1]).all() for a, b in zip(batches, clone))
    assert not all((a[1] == b[1]).all() for a, b in zip(batches, clone))
    # Pickling an iterated sampler leaves its open array behind.
    assert pickle.loads(pickle.dumps(sampler))._array is None
    # Given corners, split between two shards, last batch short.
    corners = [(0, 0, 0), (32, 30, 26), (1, 2, 3)]
    given = zarrdirect.PatchSampler(path, (8, 6, 4), 2, patches=corners, prefetch=0)
    shard0 = list(given.batches(0, 2))
    shard1 = list(given.batches(1, 2))
    assert [b.shape[0] for b in shard0 + shard1] == [2, 1]
    np.testing.assert_array_equal(shard1[0][0], data[1:9, 2:8, 3:7])
    with pytest.raises(zarrdirect.InvalidArgumentError):
        list(zarrdirect.PatchSampler(path, (99, 1, 1), 1, num_batches=1))
    # Given corners where the patch does not fit are refused: they were read as NumPy slices (a
    # negative corner from the end, one near the edge as a shorter patch, 2**40 as an empty one).
    for bad in [(-30, 0, 0), (33, 0, 0), (0, 0, 27), (2**40, 0, 0)]:
        with pytest.raises(zarrdirect.InvalidArgumentError, match=r"patches\[1\]"):
            list(zarrdirect.PatchSampler(path, (8, 6, 4), 2, patches=[(0, 0, 0), bad], prefetch=0))


def test_train_loop_example_runs():
    """The example on the CPU: with PyTorch when it is installed, else on the NumPy core."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(zarrdirect.__file__).parents[1]), env.get("PYTHONPATH", "")])
    result = subprocess.run([sys.executable, str(REPO / "examples" / "train_loop.py"), "--steps", "4", "--device", "cpu"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    framework = "torch" if importlib.util.find_spec("torch") else "numpy"
    assert f"{framework}: 4 steps of 8 patches" in result.stdout


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_torch_dataset_in_a_dataloader(volume):
    import torch

    from zarrdirect.torch import PatchDataset

    path, data = volume
    dataset = PatchDataset(path, (4, 4, 4), 3, num_batches=4, seed=1, with_corners=True)
    loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=2)
    seen = 0
    for batch, corners in loader:
        assert isinstance(batch, torch.Tensor) and batch.shape == (3, 4, 4, 4)
        z, y, x = corners[0].tolist()
        np.testing.assert_array_equal(batch[0].numpy(), data[z:z + 4, y:y + 4, x:x + 4])
        seen += 1
    assert seen == 4


@pytest.mark.skipif(not zarrdirect.cuda_available(), reason="no CUDA device")
def test_read_many_to_device(volume):
    path, data = volume
    array = zarrdirect.open(path)
    regions = random_regions(data.shape, 10, 9)
    for region, result in zip(regions, array.read_many(regions, device="cuda")):
        np.testing.assert_array_equal(result.get(), data[region])
    batch = array.read_many(["0:4,0:4,0:4", "9:13,2:6,0:4"], device="cuda", stack=True)
    np.testing.assert_array_equal(batch.get()[1], data[9:13, 2:6, 0:4])
    future = array.read_many_async(["0:4,0:4,0:4"], device="cuda", stack=True)
    np.testing.assert_array_equal(future.result().get()[0], data[0:4, 0:4, 0:4])
    # Into a CuPy or PyTorch batch the caller allocated.
    torch = pytest.importorskip("torch")
    out = torch.zeros((2, 4, 4, 4), dtype=torch.int32, device="cuda")
    with pytest.raises(zarrdirect.InvalidArgumentError, match="dtype"):
        array.read_many(["0:4,0:4,0:4", "9:13,2:6,0:4"], stack=True, out=out)
    out = torch.empty((2, 4, 4, 4), dtype=torch.uint16, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    future = array.read_many_async(["0:4,0:4,0:4", "9:13,2:6,0:4"], stack=True, out=out, stream=side)
    assert future.result() is out
    torch.cuda.current_stream().wait_stream(side)
    np.testing.assert_array_equal(out.cpu().numpy()[1], data[9:13, 2:6, 0:4])


def _shard_sums(args):
    sampler, shard = args
    return [int(batch.sum()) for batch in sampler.batches(shard, 2)]


def test_patch_sampler_in_forked_workers(volume):
    """As a multi-worker data loader uses it: pickled to forked workers that already had the
    parent's background threads, each reading its own shard."""
    import multiprocessing

    path, data = volume
    def fresh():
        return zarrdirect.PatchSampler(path, (4, 4, 4), 3, num_batches=4, seed=2)

    expected = [[int(b.sum()) for b in fresh().batches(shard, 2)] for shard in (0, 1)]  # epoch 0 of each
    sampler = fresh()
    list(zarrdirect.open(path).read_many_async(["0:2"]).result())  # the parent's drivers run now
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.map(_shard_sums, [(sampler, 0), (sampler, 1)], chunksize=1)
    assert got == expected


def test_host_reads_count_cpu_decodes(tmp_path) -> None:
    data = np.arange(40 * 30, dtype="<u2").reshape(40, 30)
    zarrdirect.save(tmp_path / "b.zarr", data, chunks=(16, 16), codec="blosc:lz4:5:shuffle")
    got, stats = zarrdirect.open(tmp_path / "b.zarr").read(return_stats=True)
    np.testing.assert_array_equal(got, data)
    assert stats["chunks_decoded_gpu"] == 0
    assert stats["chunks_decoded_cpu"] == stats["chunks_total"] == 6
    assert stats["bytes_decoded_cpu"] == 6 * 16 * 16 * 2


def test_device_cache_option(tmp_path, volume):
    path, data = volume
    array = zarrdirect.open(path, device_cache_bytes=1 << 22)
    assert array.device_cache_bytes == 1 << 22
    assert array.cache_bytes == 0  # the host cache is a separate option
    stats = array.device_cache_stats()
    assert (stats["capacity_bytes"], stats["entries"], stats["hits"]) == (1 << 22, 0, 0)
    # Host reads neither use nor fill it.
    np.testing.assert_array_equal(array[0:16, 0:16, 0:8], data[0:16, 0:16, 0:8])
    assert array.device_cache_stats()["misses"] == 0
    array.device_cache_bytes = 0
    assert array.device_cache_bytes == 0
    with pytest.raises(zarrdirect.InvalidArgumentError):
        array.device_cache_bytes = -1
    sampler = zarrdirect.PatchSampler(path, (4, 4, 4), 2, num_batches=1, device_cache_bytes=1 << 20)
    assert pickle.loads(pickle.dumps(sampler)).device_cache_bytes == 1 << 20
    assert sampler.array.device_cache_bytes == 1 << 20


@pytest.mark.skipif(not zarrdirect.cuda_available(), reason="no CUDA device")
def test_device_cache_on_the_gpu(volume):
    path, data = volume
    array = zarrdirect.open(path, mode="r+", device_cache_bytes=64 << 20)
    regions = random_regions(data.shape, 12, 4)
    for region, result in zip(regions, array.read_many(regions, device="cuda")):
        np.testing.assert_array_equal(result.get(), data[region])
    entries = array.device_cache_stats()["entries"]
    assert entries > 0
    for region, result in zip(regions, array.read_many(regions, device="cuda")):  # from GPU memory
        np.testing.assert_array_equal(result.get(), data[region])
    stats = array.device_cache_stats()
    assert stats["hits"] >= entries and stats["entries"] == entries
    np.testing.assert_array_equal(array.cuda[0:16, 0:16, 0:8].get(), data[0:16, 0:16, 0:8])
    array[0:2, 0:2, 0:2] = 7  # a write through the handle drops its chunk from the device cache too
    np.testing.assert_array_equal(array.cuda[0:4, 0:4, 0:4].get()[:2, :2, :2], np.full((2, 2, 2), 7))
    other_writer = zarrdirect.open(path, mode="r+")  # a write through another handle: stale entries missed
    other_writer[8:10, 8:10, 0:2] = 9
    np.testing.assert_array_equal(array.cuda[8:10, 8:10, 0:2].get(), np.full((2, 2, 2), 9))
    assert array.device_cache_stats()["invalidations"] >= 2
    array.device_cache_bytes = 0
    assert array.device_cache_stats()["bytes"] == 0


@pytest.mark.skipif(not zarrdirect.cuda_available(), reason="no CUDA device")
@pytest.mark.parametrize("allocator", ["torch", "zarrdirect"])
def test_torch_dataset_on_the_gpu(volume, allocator):
    """Both ways of allocating CUDA batches give the same patches; with "torch", the batches come
    from PyTorch's caching allocator (their memory is recycled: fewer distinct pointers than
    batches kept at most two at a time) and are read on the sampler's side stream."""
    torch = pytest.importorskip("torch")
    from zarrdirect.torch import PatchDataset

    path, data = volume
    dataset = PatchDataset(path, (4, 5, 6), 3, num_batches=12, seed=4, device="cuda", allocator=allocator,
                           with_corners=True, prefetch=2)
    pointers = set()
    for batch, corners in dataset:
        assert isinstance(batch, torch.Tensor) and batch.is_cuda and batch.shape == (3, 4, 5, 6)
        assert batch.dtype == torch.uint16
        pointers.add(batch.data_ptr())
        host = batch.cpu().numpy()
        for patch, (z, y, x) in zip(host, corners.tolist()):
            np.testing.assert_array_equal(patch, data[z:z + 4, y:y + 5, x:x + 6])
    if allocator == "torch":
        assert len(pointers) < 12
    with pytest.raises(ValueError, match="allocator"):
        PatchDataset(path, (4, 4, 4), 2, allocator="numpy")
    pickle.loads(pickle.dumps(dataset))  # the side stream stays behind
