"""zarrdirect.write_multiscale: levels equal to a NumPy reference downsample, NGFF 0.4 read back by
zarr-python 2, NGFF 0.5 metadata, physical placement through open_multiscale, slabs of arrays on
storage with memory capped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

try:
    import zarr
except ImportError:  # the GPU machine has no zarr-python; the tests that read through it skip
    zarr = None

import zarrdirect


def stored_multiscales(path) -> list:
    """The multiscales attribute as zarr-python reads it (as stored, where zarr-python is absent)."""
    if zarr is None:
        return json.loads((path / ".zattrs").read_text())["multiscales"]
    return zarr.open_group(str(path), mode="r").attrs["multiscales"]


def stored_level(path):
    """A level's elements through zarr-python (through zarrdirect where zarr-python is absent)."""
    if zarr is None:
        return zarrdirect.open(path)[...]
    return zarr.open_array(str(path), mode="r")[...]


def reference_level(above: np.ndarray, method: str, halved: int) -> np.ndarray:
    """One level down, in NumPy: blocks of 2 along the last `halved` axes (odd ends dropped)."""
    lead = above.ndim - halved
    crop = tuple(slice(None) for _ in range(lead)) + tuple(slice(0, (n // 2) * 2) for n in above.shape[lead:])
    a = above[crop]
    shape = list(a.shape[:lead])
    for n in a.shape[lead:]:
        shape += [n // 2, 2]
    blocks = a.reshape(shape)
    block_axes = tuple(lead + 2 * i + 1 for i in range(halved))
    if method == "nearest":
        return blocks[tuple(slice(None) if i not in block_axes else 1 for i in range(blocks.ndim))]
    if method == "max":
        return blocks.max(axis=block_axes)
    n = 2 ** halved
    if a.dtype.kind in "iu":
        total = blocks.astype(np.int64).sum(axis=block_axes)
        return np.round(total / n).astype(a.dtype)  # round half to even, exact for these sums
    return (blocks.astype(np.float64).sum(axis=block_axes) / n).astype(a.dtype)


def reference_pyramid(data: np.ndarray, levels: int, method: str, halved: int) -> list[np.ndarray]:
    out = [data]
    for _ in range(levels - 1):
        out.append(reference_level(out[-1], method, halved))
    return out


@pytest.mark.parametrize("method", ["mean", "nearest", "max"])
@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint16", "int32", "float32"])
def test_levels_equal_numpy_reference_and_zarr_python_reads_them(tmp_path, method, dtype) -> None:
    rng = np.random.default_rng(7)
    shape = (2, 13, 37, 30)  # odd z and y: the last plane and row are left out below
    if np.dtype(dtype).kind == "f":
        data = rng.uniform(-100, 100, size=shape).astype(dtype)
    else:
        info = np.iinfo(dtype)
        data = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    path = tmp_path / "img.zarr"
    result = zarrdirect.write_multiscale(path, data, levels=3, method=method, downsample="zyx", axes="czyx",
                                         chunks=(1, 8, 16, 16))
    expected = reference_pyramid(data, 3, method, 3)
    assert [tuple(level["shape"]) for level in result["levels"]] == [e.shape for e in expected]
    multiscales = stored_multiscales(path)
    assert multiscales[0]["version"] == "0.4"
    assert [d["path"] for d in multiscales[0]["datasets"]] == ["0", "1", "2"]
    for k, want in enumerate(expected):
        got = stored_level(path / str(k))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want, err_msg=f"level {k}")


def test_yx_keeps_leading_axes_and_open_multiscale_places_levels(tmp_path) -> None:
    data = np.arange(3 * 5 * 40 * 24, dtype=np.uint16).reshape(3, 5, 40, 24)
    path = tmp_path / "img.zarr"
    zarrdirect.write_multiscale(path, data, levels=3, downsample="yx", axes="czyx",
                                units="micrometer", scale=(1, 3.0, 0.5, 0.25), translation=(0, 0, 10, 20))
    image = zarrdirect.open_multiscale(path)
    levels = image.levels
    assert [tuple(level["shape"]) for level in levels] == [(3, 5, 40, 24), (3, 5, 20, 12), (3, 5, 10, 6)]
    assert levels[1]["scale"] == [1, 3.0, 1.0, 0.5]
    assert levels[2]["scale"] == [1, 3.0, 2.0, 1.0]
    # Mean: translation += half a pixel of the level above on halved axes.
    assert levels[1]["translation"] == [0, 0, 10.25, 20.125]
    assert levels[2]["translation"] == [0, 0, 10.75, 20.375]
    axes = json.loads(json.dumps(stored_multiscales(path)[0]["axes"]))
    assert axes == [{"name": "c", "type": "channel"}, {"name": "z", "type": "space", "unit": "micrometer"},
                    {"name": "y", "type": "space", "unit": "micrometer"},
                    {"name": "x", "type": "space", "unit": "micrometer"}]
    np.testing.assert_array_equal(image.read(level=2), reference_pyramid(data, 3, "mean", 2)[2])


def test_ngff_05_on_zarr_v3(tmp_path) -> None:
    data = np.random.default_rng(1).integers(0, 1000, size=(32, 48, 40), dtype=np.uint16)
    path = tmp_path / "img.zarr"
    zarrdirect.write_multiscale(path, data, levels=2, downsample="zyx", ngff="0.5", chunks=(16, 16, 16),
                                shards=(32, 32, 32))
    group = json.loads((path / "zarr.json").read_text())
    assert group["node_type"] == "group"
    assert group["attributes"]["ome"]["version"] == "0.5"
    multiscale = group["attributes"]["ome"]["multiscales"][0]
    assert "version" not in multiscale
    assert [a["name"] for a in multiscale["axes"]] == ["z", "y", "x"]
    level1 = json.loads((path / "1" / "zarr.json").read_text())
    assert level1["dimension_names"] == ["z", "y", "x"]
    image = zarrdirect.open_multiscale(path)
    np.testing.assert_array_equal(image.read(level=1), reference_pyramid(data, 2, "mean", 3)[1])


def test_from_an_array_on_storage_in_slabs_equals_in_memory(tmp_path) -> None:
    data = np.random.default_rng(3).integers(0, 60000, size=(70, 50, 36), dtype=np.uint16)
    zarrdirect.save(tmp_path / "src.zarr", data, chunks=(8, 50, 36))
    whole = zarrdirect.write_multiscale(tmp_path / "a.zarr", data, levels=3, downsample="zyx", chunks=(8, 16, 16))
    slabs = zarrdirect.write_multiscale(tmp_path / "b.zarr", zarrdirect.open(tmp_path / "src.zarr"), levels=3,
                                        downsample="zyx", chunks=(8, 16, 16), slab_bytes=8 * 50 * 36 * 2)
    assert whole["slabs"] == 1 and slabs["slabs"] == 9
    for k in range(3):
        np.testing.assert_array_equal(zarrdirect.open(tmp_path / "a.zarr" / str(k))[...],
                                      zarrdirect.open(tmp_path / "b.zarr" / str(k))[...])


def test_bad_options_raise_clear_errors(tmp_path) -> None:
    data = np.zeros((8, 8), dtype=np.uint8)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="method"):
        zarrdirect.write_multiscale(tmp_path / "x", data, method="median")
    with pytest.raises(zarrdirect.InvalidArgumentError, match="downsample"):
        zarrdirect.write_multiscale(tmp_path / "x", data, downsample="xy")
    with pytest.raises(zarrdirect.InvalidArgumentError, match="levels"):
        zarrdirect.write_multiscale(tmp_path / "x", data, levels=5)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="shards"):
        zarrdirect.write_multiscale(tmp_path / "x", data, levels=2, shards=(8, 8))
    assert not (tmp_path / "x").exists()


CAPPED = textwrap.dedent("""
    import resource, sys, numpy as np, zarrdirect
    src, out, slab = sys.argv[1], sys.argv[2], int(sys.argv[3])
    # Warm up: pool threads started, codecs loaded, before the cap is measured from here.
    zarrdirect.write_multiscale(out + "-warm", np.zeros((64, 64, 64), np.uint16), levels=3, downsample="zyx")
    size = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
    cap = size + (96 << 20)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    stats = zarrdirect.write_multiscale(out, zarrdirect.open(src), levels=3, downsample="zyx", codec="raw",
                                        chunks=(16, 128, 128), slab_bytes=slab)
    print("peak", stats["peak_buffer_bytes"], "slabs", stats["slabs"])
""")


def test_slabs_keep_memory_bounded_under_an_address_space_cap(tmp_path) -> None:
    # 160 MiB on storage; the child may grow by 96 MiB: only slab by slab fits.
    shape = (320, 512, 512)
    src = zarrdirect.create(tmp_path / "src.zarr", shape=shape, dtype="uint16", chunks=(16, 512, 512), codec="raw")
    for z in range(0, shape[0], 32):
        src[z:z + 32] = np.full((32, 512, 512), z, dtype=np.uint16)
    env = dict(os.environ, MALLOC_ARENA_MAX="2", ZARRDIRECT_THREADS="2")
    run = lambda slab, name: subprocess.run(  # noqa: E731
        [sys.executable, "-c", CAPPED, str(tmp_path / "src.zarr"), str(tmp_path / name), str(slab)],
        env=env, capture_output=True, text=True, timeout=300)
    bounded = run(16 << 20, "bounded.zarr")
    assert bounded.returncode == 0, bounded.stderr[-2000:]
    peak = int(bounded.stdout.split()[1])
    # Two slab buffers (the next slab is read while this one is downsampled) plus the levels below it
    # (1/8 + 1/64 of a slab for zyx): more than one slab, far less than the array.
    assert 2 * (16 << 20) < peak <= 3 * (16 << 20), bounded.stdout
    level2 = zarrdirect.open(tmp_path / "bounded.zarr" / "2")[...]
    assert level2.shape == (80, 128, 128)
    np.testing.assert_array_equal(level2[:, 0, 0], (np.arange(80) * 4 // 32 * 32).astype(np.uint16))
    # The same cap with the whole array as one slab fails: the cap is what bounds it.
    whole = run(512 << 20, "whole.zarr")
    assert whole.returncode != 0
    assert "cannot allocate" in whole.stderr, whole.stderr[-2000:]


def test_device_data_downsampled_on_the_gpu_equals_host(tmp_path) -> None:
    cupy = pytest.importorskip("cupy")
    if not zarrdirect.cuda_available():
        pytest.skip("no CUDA device")
    data = np.random.default_rng(5).integers(0, 65535, size=(33, 66, 40), dtype=np.uint16)
    for method in ("mean", "nearest", "max"):
        zarrdirect.write_multiscale(tmp_path / f"gpu-{method}", cupy.asarray(data), levels=3, downsample="zyx",
                                    method=method)
        expected = reference_pyramid(data, 3, method, 3)
        for k in range(3):
            np.testing.assert_array_equal(zarrdirect.open(tmp_path / f"gpu-{method}" / str(k))[...], expected[k])


def test_nearest_samples_the_pixels_ome_zarr_py_nearest_samples(tmp_path) -> None:
    transform = pytest.importorskip("skimage.transform")  # ome-zarr-py's Scaler.nearest: resize(order=0)
    data = np.random.default_rng(6).integers(0, 65535, size=(2, 37, 30), dtype=np.uint16)  # odd y
    zarrdirect.write_multiscale(tmp_path / "n.zarr", data, levels=2, method="nearest", axes="cyx")
    expected = np.stack([transform.resize(plane, (plane.shape[0] // 2, plane.shape[1] // 2), order=0,
                                          preserve_range=True, anti_aliasing=False).astype(plane.dtype)
                         for plane in data])
    np.testing.assert_array_equal(zarrdirect.open(tmp_path / "n.zarr" / "1")[...], expected)
