"""GPU reads and the zero-copy hand-off to CuPy and PyTorch.

Skipped, test by test, where zarrdirect has no CUDA device or where CuPy / PyTorch are not
installed; everything else in this file runs on any machine with one of them and a GPU."""

from __future__ import annotations

import ctypes
import gc
from pathlib import Path

import numpy as np
import pytest

import zarrdirect
from conftest import assert_same, case_id, conformance_cases, read_case, write_v2_array

pytestmark = pytest.mark.skipif(not zarrdirect.cuda_available(),
                                reason="zarrdirect has no usable CUDA device here (CPU-only build or no GPU)")

ARRAY_CASES = [case for case in conformance_cases() if (case / "array").is_dir()]
DATA = (np.arange(96 * 80, dtype="<f4") * 0.5).reshape(96, 80)


@pytest.fixture(scope="module")
def cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy sees no CUDA device")
    except cupy.cuda.runtime.CUDARuntimeError as error:
        pytest.skip(f"CuPy cannot use CUDA: {error}")
    return cupy


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


@pytest.fixture(scope="module")
def path(tmp_path_factory) -> Path:
    return write_v2_array(tmp_path_factory.mktemp("gpu") / "a.zarr", DATA, (32, 24), "zlib")


def pointer(x) -> int:
    return x.__cuda_array_interface__["data"][0]


def capsule_name(capsule) -> bytes:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    return get_name(capsule)


# --- values ------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ARRAY_CASES, ids=case_id)
def test_conformance_on_the_device(case: Path) -> None:
    expected = np.load(case / "expected.npy")
    array = zarrdirect.open(case / "array")
    on_device = read_case(case, array.read, device="cuda")
    assert isinstance(on_device, zarrdirect.DeviceArray)
    assert on_device.shape == expected.shape and on_device.dtype == array.dtype
    assert_same(on_device.get(), expected)
    box = tuple(slice(n // 4, n - n // 4) for n in expected.shape)
    assert_same(array.cuda[box].get(), expected[box])


def test_indexing_on_the_device(path) -> None:
    array = zarrdirect.open(path)
    np.testing.assert_array_equal(array.cuda[5].get(), DATA[5])
    np.testing.assert_array_equal(array.cuda[-3:, ..., 7].get(), DATA[-3:, ..., 7])
    scalar = array.cuda[4, 5]
    assert scalar.shape == () and scalar.get()[()] == DATA[4, 5]
    assert array.read("10:20,30", device="cuda").shape == (10,)
    assert "cuda:" in repr(array.cuda[:2])


# --- hand-off without copies -------------------------------------------------------------------


def test_cupy_shares_the_memory(cupy, path) -> None:
    x = zarrdirect.open(path).read(device="cuda")
    interface = x.__cuda_array_interface__
    assert interface["version"] == 3 and interface["strides"] is None and interface["stream"] is None
    assert interface["typestr"] == "<f4" and interface["shape"] == DATA.shape and interface["data"][1] is False
    assert cupy.asarray(x).data.ptr == pointer(x)
    from_dlpack = cupy.from_dlpack(x)
    assert from_dlpack.data.ptr == pointer(x)
    np.testing.assert_array_equal(from_dlpack.get(), DATA)
    assert x.__dlpack_device__() == (2, x.device_id) and x.device_id == cupy.cuda.runtime.getDevice()


def test_torch_shares_the_memory(torch, path) -> None:
    x = zarrdirect.open(path).read(device="cuda")
    tensor = torch.from_dlpack(x)
    assert tensor.data_ptr() == pointer(x) and tensor.is_cuda and tensor.dtype == torch.float32
    assert torch.as_tensor(x, device="cuda").data_ptr() == pointer(x)  # through the interface
    np.testing.assert_array_equal(tensor.cpu().numpy(), DATA)


def test_consumers_keep_the_memory_alive(cupy, torch, path) -> None:
    array = zarrdirect.open(path)
    tensor = torch.from_dlpack(array.read(device="cuda"))
    view = cupy.asarray(array.read(device="cuda"))
    gc.collect()
    churn = [cupy.full(DATA.shape, 7, dtype=cupy.float32) for _ in range(4)]  # reuse freed memory if any
    torch.cuda.synchronize()
    np.testing.assert_array_equal(tensor.cpu().numpy(), DATA)
    np.testing.assert_array_equal(view.get(), DATA)
    del churn


def test_dlpack_protocol(path) -> None:
    x = zarrdirect.open(path).read(device="cuda")
    legacy = x.__dlpack__()
    assert capsule_name(legacy) == b"dltensor"
    versioned = x.__dlpack__(max_version=(1, 0), stream=None)
    assert capsule_name(versioned) == b"dltensor_versioned"
    assert capsule_name(x.__dlpack__(max_version=(0, 8))) == b"dltensor"
    del legacy, versioned  # never consumed: their destructors free the tensors
    gc.collect()
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(1, 0))
    with pytest.raises(BufferError):
        x.__dlpack__(copy=True)
    with pytest.raises(TypeError, match="get"):
        np.asarray(x)


# --- reading into the caller's memory -------------------------------------------------------------


def test_out_cupy(cupy, path) -> None:
    array = zarrdirect.open(path)
    out = cupy.empty(DATA.shape, dtype=cupy.float32)
    assert array.read(out=out) is out
    np.testing.assert_array_equal(out.get(), DATA)
    big = cupy.full((100, 200), -1, dtype=cupy.float32)
    block = big[2:98, 50:130]  # not contiguous
    array.read(out=block)
    np.testing.assert_array_equal(block.get(), DATA)
    assert (big[:2].get() == -1).all() and (big[:, :50].get() == -1).all() and (big[:, 130:].get() == -1).all()
    column = cupy.zeros((96,), dtype=cupy.float32)
    array.read((slice(None), 11), out=column)
    np.testing.assert_array_equal(column.get(), DATA[:, 11])
    transposed = cupy.zeros((80, 96), dtype=cupy.float32).T
    array.read(out=transposed)
    np.testing.assert_array_equal(transposed.get(), DATA)


def test_out_torch(torch, path) -> None:
    array = zarrdirect.open(path)
    out = torch.empty(DATA.shape, dtype=torch.float32, device="cuda")
    assert array.read(out=out) is out
    np.testing.assert_array_equal(out.cpu().numpy(), DATA)
    batch = torch.zeros((3, 96, 100), dtype=torch.float32, device="cuda")
    array.read(out=batch[1, :, 10:90])
    np.testing.assert_array_equal(batch[1, :, 10:90].cpu().numpy(), DATA)
    assert batch[0].abs().sum().item() == 0 and batch[2].abs().sum().item() == 0
    transposed = torch.zeros((80, 96), dtype=torch.float32, device="cuda").t()
    array.read(out=transposed)
    np.testing.assert_array_equal(transposed.cpu().numpy(), DATA)


def test_streams(cupy, torch, path) -> None:
    array = zarrdirect.open(path)
    stream = cupy.cuda.Stream(non_blocking=True)
    out = cupy.zeros(DATA.shape, dtype=cupy.float32)
    array.read(out=out, stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(out.get(), DATA)

    on_stream = array.read(device="cuda", stream=stream)
    assert on_stream.__cuda_array_interface__["stream"] in (stream.ptr, None)
    np.testing.assert_array_equal(cupy.asarray(on_stream).get(), DATA)
    np.testing.assert_array_equal(torch.from_dlpack(array.read(device="cuda", stream=stream)).cpu().numpy(), DATA)

    torch_stream = torch.cuda.Stream()
    tensor = torch.zeros(DATA.shape, dtype=torch.float32, device="cuda")
    array.read(out=tensor, stream=torch_stream)
    torch_stream.synchronize()
    np.testing.assert_array_equal(tensor.cpu().numpy(), DATA)


def test_out_is_checked(cupy, path) -> None:
    array = zarrdirect.open(path)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="dtype"):
        array.read(out=cupy.zeros(DATA.shape, dtype=cupy.float64))
    with pytest.raises(zarrdirect.InvalidArgumentError, match="shape"):
        array.read(out=cupy.zeros((96, 81), dtype=cupy.float32))
    with pytest.raises(zarrdirect.InvalidArgumentError, match="device='cpu'"):
        array.read(device="cpu", out=cupy.zeros(DATA.shape, dtype=cupy.float32))


class _HostBehindCudaInterface:
    """Host memory published as a CUDA array: what a careless wrapper (or a bug) hands over."""

    def __init__(self, host: np.ndarray) -> None:
        self.host = host
        self.__cuda_array_interface__ = {"shape": host.shape, "typestr": host.dtype.str,
                                         "data": (host.ctypes.data, False), "strides": None, "version": 3}


@pytest.mark.parametrize("key", [(slice(None), slice(None)), (slice(None, None, 2), slice(None))],
                         ids=["box", "stepped selection"])
def test_out_that_is_host_memory_is_refused(path, key) -> None:
    # Box reads and selection reads check out= the same way: host memory posing as device memory
    # is refused by name, never written by the GPU.
    array = zarrdirect.open(path)
    shape = np.empty(DATA.shape)[key].shape
    host = np.zeros(shape, dtype=np.float32)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="not CUDA device memory"):
        array.read(key, out=_HostBehindCudaInterface(host))
    assert not host.any()


# --- the original module's functions -------------------------------------------------------------


def test_drop_ins_return_cupy_arrays(cupy, path) -> None:
    for function in (zarrdirect.read_zarr_to_gpu, zarrdirect.read_zarr_via_kvikio):
        result = function(path)
        assert isinstance(result, cupy.ndarray) and result.dtype == cupy.float32
        np.testing.assert_array_equal(result.get(), DATA)


@pytest.mark.parametrize("case", [c for c in ARRAY_CASES if "shard" in c.name or "blosc" in c.name or "zstd" in c.name],
                         ids=case_id)
def test_drop_ins_read_compressed_and_sharded(cupy, case: Path) -> None:
    result = read_case(case, zarrdirect.read_zarr_via_kvikio, case / "array")
    assert isinstance(result, cupy.ndarray)
    assert_same(result.get(), np.load(case / "expected.npy"))


# --- decoding on the GPU (ZARRDIRECT_DECODE) ---------------------------------------------------


@pytest.mark.parametrize("codec,shards", [("blosc:lz4:5:shuffle", None), ("blosc:lz4:5:bitshuffle", None),
                                          ("lz4", None), ("blosc:lz4:5:shuffle", (32, 48)), ("zstd:1", None),
                                          ("zstd:3", (32, 48))])
def test_gpu_decode_matches_the_host_read(tmp_path, monkeypatch, codec, shards) -> None:
    data = (np.arange(96 * 96, dtype="<u2") % 1000).reshape(96, 96)
    zarrdirect.save(tmp_path / "a.zarr", data, chunks=(16, 24), shards=shards, codec=codec)
    # share: the first chunk finds the GPU's batches empty; the rest go where there is room.
    for side, on_gpu in (("gpu", True), ("cpu", False), ("share", True)):
        monkeypatch.setenv("ZARRDIRECT_DECODE", side)
        array = zarrdirect.open(tmp_path / "a.zarr")
        got, stats = array.read(device="cuda", return_stats=True)
        np.testing.assert_array_equal(got.get(), data)
        np.testing.assert_array_equal(array.read((slice(5, 90), slice(7, 61)), device="cuda").get(), data[5:90, 7:61])
        assert (stats["chunks_decoded_gpu"] > 0) == on_gpu, stats
        assert stats["chunks_decoded_gpu"] + stats["chunks_decoded_cpu"] == stats["chunks_total"], stats
