"""Choosing the device of a read: ``device="cpu" | "cuda" | "cuda:N" | N`` and out='s own device.

The argument parsing and the refusals run everywhere (CI has no GPU); the reads into each GPU
are skipped without a CUDA device and run over every device there is, so the N-device paths run
with one GPU here and with all of them on a multi-GPU machine (bench/multi_gpu.sh)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import zarrdirect
from conftest import assert_same, case_id, conformance_cases, read_case, write_v2_array
from zarrdirect._options import parse_device

DATA = (np.arange(48 * 40, dtype="<u2") * 7).reshape(48, 40)
COUNT = zarrdirect.cuda_device_count()
gpu = pytest.mark.skipif(COUNT == 0, reason="zarrdirect has no usable CUDA device here (CPU-only build or no GPU)")


@pytest.fixture(scope="module")
def path(tmp_path_factory) -> Path:
    return write_v2_array(tmp_path_factory.mktemp("devices") / "a.zarr", DATA, (16, 16), "zlib")


class _TorchLikeDevice:
    """What str(torch.device("cuda", 1)) gives, without needing torch."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


@pytest.mark.parametrize("given, expected", [
    ("cpu", ("cpu", -1)), ("cuda", ("cuda", -1)), ("gpu", ("cuda", -1)), (" CUDA:1 ", ("cuda", 1)),
    ("cuda:0", ("cuda", 0)), ("cuda:12", ("cuda", 12)), (0, ("cuda", 0)), (3, ("cuda", 3)),
    (np.int64(2), ("cuda", 2)), (_TorchLikeDevice("cuda:1"), ("cuda", 1)), (_TorchLikeDevice("cpu"), ("cpu", -1)),
])
def test_device_arguments(given, expected) -> None:
    assert parse_device(given) == expected


@pytest.mark.parametrize("given", ["cuda:-1", "cuda:x", "cuda:", "gpu:1", "cpu:0", "tpu", "", "cuda:\u0663",
                                   -1, True, 1.5, "cuda:1x"])
def test_bad_device_arguments_are_value_errors(given, path) -> None:
    with pytest.raises(zarrdirect.InvalidArgumentError) as raised:
        parse_device(given)
    assert isinstance(raised.value, ValueError)
    # A read refuses it the same way, before reading.
    with pytest.raises(ValueError):
        zarrdirect.open(path).read(device=given)


def test_device_count_matches_the_system_description() -> None:
    info = zarrdirect.system_info()
    assert COUNT == info["cuda_devices"]
    assert [device["index"] for device in info["devices"]] == list(range(COUNT))


@pytest.mark.parametrize("as_text", [True, False])
def test_a_device_this_machine_lacks_is_refused_naming_it_and_the_count(path, as_text) -> None:
    array = zarrdirect.open(path)
    device = f"cuda:{COUNT}" if as_text else COUNT
    if COUNT > 0:
        with pytest.raises(ValueError, match=rf"cuda:{COUNT}: this machine has {COUNT} CUDA device"):
            array.read(device=device)
        with pytest.raises(ValueError, match=rf"cuda:{COUNT}: this machine has {COUNT} CUDA device"):
            array.read("0:4", device=device)
    elif zarrdirect._native.cuda_built:
        with pytest.raises(zarrdirect.CudaError, match="no usable CUDA device"):
            array.read(device=device)
    else:
        with pytest.raises(zarrdirect.UnsupportedError, match="no CUDA support"):
            array.read(device=device)


def test_host_reads_ignore_nothing_about_the_device(path) -> None:
    np.testing.assert_array_equal(zarrdirect.open(path).read(device="cpu"), DATA)


# --- on the GPU(s) -------------------------------------------------------------------------------


@gpu
@pytest.mark.parametrize("case", [c for c in conformance_cases() if (c / "array").is_dir()], ids=case_id)
def test_conformance_read_into_each_device_equals_the_host_read(case: Path) -> None:
    array = zarrdirect.open(case / "array")
    host = read_case(case, array.read)
    for k in range(COUNT):
        on_device = read_case(case, array.read, device=f"cuda:{k}")
        assert on_device.device_id == k and on_device.device == f"cuda:{k}"
        assert on_device.__dlpack_device__() == (2, k)
        assert_same(on_device.get(), host)


@gpu
def test_each_device_by_text_and_by_number(path) -> None:
    array = zarrdirect.open(path)
    for k in range(COUNT):
        for device in (f"cuda:{k}", k):
            result = array.read("8:40, 3", device=device)
            assert result.device_id == k, device
            np.testing.assert_array_equal(result.get(), DATA[8:40, 3])
    assert array.read(device="cuda").device_id == 0  # the current device of a fresh thread


@pytest.fixture(scope="module")
def cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy sees no CUDA device")
    except cupy.cuda.runtime.CUDARuntimeError as error:
        pytest.skip(f"CuPy cannot use CUDA: {error}")
    return cupy


@gpu
def test_cupy_out_on_each_device_and_a_mismatch(path, cupy) -> None:
    array = zarrdirect.open(path)
    for k in range(COUNT):
        with cupy.cuda.Device(k):
            out = cupy.zeros((48, 40), dtype="<u2")
        assert array.read(out=out) is out  # out='s own device, whatever is current
        np.testing.assert_array_equal(cupy.asnumpy(out), DATA)
        out[...] = 0
        array.read(out=out, device=f"cuda:{k}")
        np.testing.assert_array_equal(cupy.asnumpy(out), DATA)
        array.read(out=out, device=cupy.cuda.Device(k))
        for other in range(COUNT + 1):
            if other != k:
                with pytest.raises(ValueError, match=rf"cuda:{other}"):
                    array.read(out=out, device=f"cuda:{other}")
        # Written back from device k: the source's device is its pointer's.
        target = zarrdirect.create(path.parent / f"w{k}.zarr", shape=(48, 40), chunks=(16, 16), dtype="<u2")
        target[8:40] = out[8:40]
        np.testing.assert_array_equal(zarrdirect.open(path.parent / f"w{k}.zarr")[8:40], DATA[8:40])


@gpu
def test_torch_out_on_device_zero(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    values = DATA.astype("<f4")
    array = zarrdirect.open(write_v2_array(tmp_path / "f.zarr", values, (16, 16), "zlib"))
    out = torch.zeros((48, 40), dtype=torch.float32, device="cuda:0")
    array.read(out=out)
    np.testing.assert_array_equal(out.cpu().numpy(), values)
    out.zero_()
    array.read(out=out, device=torch.device("cuda", 0))
    np.testing.assert_array_equal(out.cpu().numpy(), values)
    with pytest.raises(ValueError, match=rf"cuda:{COUNT}"):
        array.read(out=out, device=COUNT)
    result = array.read(device=torch.device("cuda", 0))
    assert result.device_id == 0
    np.testing.assert_array_equal(torch.from_dlpack(result).cpu().numpy(), values)


def test_decode_policy_in_system_info(monkeypatch) -> None:
    monkeypatch.setenv("ZARRDIRECT_DECODE", "fpga")
    info = zarrdirect.system_info()
    assert info["decode"] == "invalid" and "ZARRDIRECT_DECODE" in info["decode_reason"]
    monkeypatch.setenv("ZARRDIRECT_DECODE", "cpu")
    assert zarrdirect.system_info()["decode"] == "cpu"
    monkeypatch.delenv("ZARRDIRECT_DECODE")
    assert zarrdirect.system_info()["decode"] == "auto"
