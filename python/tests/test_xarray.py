"""The xarray backend: engine "zarrdirect" (installed) or the entry point class (build tree)."""

from __future__ import annotations

import importlib.metadata
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrdirect

xarray = pytest.importorskip("xarray")
from zarrdirect.xarray import ZarrdirectBackendEntrypoint  # noqa: E402

from test_pickle import write_ome_image  # noqa: E402

ENGINE = ZarrdirectBackendEntrypoint
REPO = Path(__file__).resolve().parents[2]


def volume(shape=(6, 20, 30), dtype="u2") -> np.ndarray:
    return (np.arange(int(np.prod(shape))) % 997).astype(dtype).reshape(shape)


class CountingReads:
    """Counts zarrdirect reads (Array._read) and the elements they return."""

    def __init__(self, monkeypatch) -> None:
        self.calls, self.elements = 0, 0
        original = zarrdirect.Array._read

        def counted(array, *args, **kwargs):
            data, stats = original(array, *args, **kwargs)
            self.calls += 1
            self.elements += int(np.size(data))
            return data, stats

        monkeypatch.setattr(zarrdirect.Array, "_read", counted)


def test_opens_an_array_lazily_with_its_dimension_names(tmp_path, monkeypatch) -> None:
    expected = volume()
    zarrdirect.save(tmp_path / "vol.zarr", expected, chunks=(2, 10, 10), dimension_names=["z", "y", "x"],
                    attributes={"long_name": "intensity"})
    reads = CountingReads(monkeypatch)
    ds = xarray.open_dataset(tmp_path / "vol.zarr", engine=ENGINE)
    assert list(ds.data_vars) == ["vol"] and ds["vol"].dims == ("z", "y", "x")
    assert ds["vol"].attrs == {"long_name": "intensity"} and reads.calls == 0  # nothing read yet
    assert ds["vol"].encoding["preferred_chunks"] == {"z": 2, "y": 10, "x": 10}

    part = ds["vol"].isel(z=3, y=slice(2, 18, 4), x=slice(5, 9)).values
    np.testing.assert_array_equal(part, expected[3, 2:18:4, 5:9])
    assert reads.calls == 1 and reads.elements <= 16 * 4  # the box of the selection, not the array
    np.testing.assert_array_equal(ds["vol"].values, expected)

    dataarray = xarray.open_dataarray(tmp_path / "vol.zarr", engine=ENGINE, name="renamed")
    assert dataarray.name == "renamed" and dataarray.shape == expected.shape


def test_default_dimension_names_and_pickled_lazy_variables(tmp_path) -> None:
    expected = volume((4, 5))
    zarrdirect.save(tmp_path / "plain", expected, chunks=(2, 5), zarr_format=2)
    dataarray = xarray.open_dataarray(tmp_path / "plain", engine=ENGINE)
    assert dataarray.dims == ("dim_0", "dim_1") and dataarray.name == "plain"
    copy = pickle.loads(pickle.dumps(dataarray))  # lazy: the pickle holds the path, not the data
    np.testing.assert_array_equal(copy.values, expected)


def test_ome_level_with_axes_and_coordinates(tmp_path) -> None:
    level0 = volume((2, 16, 24))
    write_ome_image(tmp_path / "cells.ome.zarr", level0, chunks=(1, 8, 8))
    ds = xarray.open_dataset(tmp_path / "cells.ome.zarr", engine=ENGINE, level=1)
    image = ds["cells"]
    assert image.dims == ("c", "y", "x") and image.shape == (2, 8, 12)
    assert "c" not in ds.coords  # a channel axis has no physical coordinate
    np.testing.assert_allclose(ds["y"].values, 10.25 + 1.0 * np.arange(8))
    np.testing.assert_allclose(ds["x"].values, 20.125 + 0.5 * np.arange(12))
    assert ds["x"].attrs["units"] == "micrometer"
    np.testing.assert_array_equal(image.sel(y=slice(12, 14.5)).values, level0[:, ::2, ::2][:, 2:5])
    full = xarray.open_dataarray(tmp_path / "cells.ome.zarr", engine=ENGINE)  # level 0 by default
    assert full.shape == level0.shape
    np.testing.assert_allclose(full["x"].values, 20.0 + 0.25 * np.arange(24))
    with pytest.raises(IndexError):
        xarray.open_dataset(tmp_path / "cells.ome.zarr", engine=ENGINE, level=2)


def test_chunks_give_dask_arrays_read_by_zarrdirect(tmp_path, monkeypatch) -> None:
    pytest.importorskip("dask.array")
    expected = volume()
    zarrdirect.save(tmp_path / "s.zarr", expected, chunks=(1, 5, 10), shards=(2, 10, 30))
    dataarray = xarray.open_dataarray(tmp_path / "s.zarr", engine=ENGINE, chunks={})
    assert dataarray.chunks == ((2, 2, 2), (10, 10), (30,))  # the shards
    reads = CountingReads(monkeypatch)
    assert int(dataarray.sum().compute(scheduler="threads")) == int(expected.sum())
    assert reads.calls == 6  # one zarrdirect read per block
    chunked = xarray.open_dataarray(tmp_path / "s.zarr", engine=ENGINE, chunks={"dim_0": 4})
    assert chunked.chunks[0] == (4, 2)
    assert int(chunked.sum().compute(scheduler="processes", num_workers=2)) == int(expected.sum())


def _installed() -> bool:
    try:
        importlib.metadata.distribution("zarrdirect")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _installed(), reason="zarrdirect is not installed as a distribution (build tree): "
                    "scripts/check_install.sh runs this over the installed package")
def test_installed_engine_name(tmp_path) -> None:
    assert "zarrdirect" in xarray.backends.list_engines()
    expected = volume((3, 4))
    zarrdirect.save(tmp_path / "a.zarr", expected)
    np.testing.assert_array_equal(xarray.open_dataarray(tmp_path / "a.zarr", engine="zarrdirect").values, expected)


def test_entry_point_is_declared_and_names_the_backend(tmp_path) -> None:
    tomllib = pytest.importorskip("tomllib")
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["xarray.backends"]
    assert declared == {"zarrdirect": "zarrdirect.xarray:ZarrdirectBackendEntrypoint"}
    assert '"xarray.backends": ["zarrdirect = zarrdirect.xarray:ZarrdirectBackendEntrypoint"]' in \
        (REPO / "setup.py").read_text()
    if _installed():
        return  # the installed distribution's own entry point: test_installed_engine_name
    # A distribution declaring that entry point, as pip would install it, found by xarray by name.
    info = tmp_path / "site" / "zarrdirect_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zarrdirect-probe\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[xarray.backends]\nzarrdirect = {declared['zarrdirect']}\n")
    zarrdirect.save(tmp_path / "a.zarr", volume((3, 4)))
    script = ("import sys, xarray; sys.path.insert(0, sys.argv[1]); "
              "assert 'zarrdirect' in xarray.backends.list_engines(); "
              "print(int(xarray.open_dataarray(sys.argv[2], engine='zarrdirect').sum()))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "site"), str(tmp_path / "a.zarr")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == int(volume((3, 4)).sum())


def xarray_written_dataset() -> "xarray.Dataset":
    """A Dataset as climate and imaging users write them: coordinates, times, a scaled integer
    variable with a fill value, a float variable with NaN, a 2-d mask, attributes."""
    rng = np.random.default_rng(3)
    temperature = rng.normal(280, 5, (5, 7, 9)).astype("f4")
    temperature[0, 0, :3] = np.nan
    counts = rng.integers(0, 1000, (5, 7, 9)).astype("f8")
    counts[1, 2, 3] = np.nan  # becomes the integer fill value on disk
    return xarray.Dataset(
        {"temperature": (("time", "lat", "lon"), temperature, {"units": "K"}),
         "counts": (("time", "lat", "lon"), counts),
         "land": (("lat", "lon"), rng.integers(0, 2, (7, 9)).astype("u1"))},
        coords={"time": np.array("2026-01-01", dtype="datetime64[ns]") + np.arange(5) * np.timedelta64(6, "h"),
                "lat": np.linspace(-30, 30, 7), "lon": np.linspace(0, 80, 9), "station": ("lon", np.arange(9) * 10)},
        attrs={"title": "sample", "history": "written by xarray"})


@pytest.mark.parametrize("consolidated", [True, False])
def test_opens_an_xarray_written_group_as_the_zarr_engine_does(tmp_path, consolidated: bool) -> None:
    pytest.importorskip("zarr")
    source = xarray_written_dataset()
    encoding = {"counts": {"dtype": "i2", "scale_factor": 0.5, "_FillValue": -1}}
    source.to_zarr(tmp_path / "ds.zarr", consolidated=consolidated, encoding=encoding)
    reference = xarray.open_dataset(tmp_path / "ds.zarr", engine="zarr", consolidated=consolidated)
    opened = xarray.open_dataset(tmp_path / "ds.zarr", engine=ENGINE)
    xarray.testing.assert_identical(opened.load(), reference.load())
    assert opened["time"].dtype == np.dtype("datetime64[ns]") and set(opened.coords) == {"time", "lat", "lon", "station"}
    assert np.isnan(opened["counts"].values[1, 2, 3])  # the fill value masked, the scale applied
    raw = xarray.open_dataset(tmp_path / "ds.zarr", engine=ENGINE, mask_and_scale=False, decode_times=False)
    reference_raw = xarray.open_dataset(tmp_path / "ds.zarr", engine="zarr", consolidated=consolidated,
                                        mask_and_scale=False, decode_times=False)
    xarray.testing.assert_identical(raw.load(), reference_raw.load())
    dropped = xarray.open_dataset(tmp_path / "ds.zarr", engine=ENGINE, drop_variables=["land"])
    assert "land" not in dropped and "temperature" in dropped


def test_xarray_group_with_dask_chunks_reads_through_zarrdirect(tmp_path, monkeypatch) -> None:
    pytest.importorskip("zarr")
    pytest.importorskip("dask")
    source = xarray_written_dataset()
    source.to_zarr(tmp_path / "ds.zarr", encoding={"temperature": {"chunks": (2, 7, 9)}})
    reads = CountingReads(monkeypatch)
    opened = xarray.open_dataset(tmp_path / "ds.zarr", engine=ENGINE, chunks={})
    # Lazy: only the coordinates xarray loads to index by (and a time or two to decode) are read.
    assert reads.elements <= 5 + 7 + 9 + 2
    reads.calls = 0
    assert opened["temperature"].chunks == ((2, 2, 1), (7,), (9,))
    mean = opened["temperature"].mean("time").compute()
    np.testing.assert_allclose(mean.values, source["temperature"].mean("time").values, rtol=1e-6)
    assert reads.calls >= 3


@pytest.mark.parametrize("consolidated", [True, False])
def test_string_coordinates_come_through_zarr_python(tmp_path, consolidated: bool) -> None:
    # xarray writes string coordinates (channel names, labels) as "<U" and "|S" arrays, which
    # zarrdirect does not read: the engine reads those variables through zarr-python, lazily.
    pytest.importorskip("zarr")
    source = xarray.Dataset({"signal": (("channel", "x"), np.arange(12.0).reshape(3, 4))},
                            coords={"channel": ["DAPI", "GFP", "mCherry"], "x": np.arange(4),
                                    "tag": ("x", np.array([b"a", b"bb", b"c", b"dd"]))})
    source.to_zarr(tmp_path / "ds.zarr", consolidated=consolidated)
    opened = xarray.open_dataset(tmp_path / "ds.zarr", engine=ENGINE)
    reference = xarray.open_dataset(tmp_path / "ds.zarr", engine="zarr", consolidated=consolidated)
    xarray.testing.assert_identical(opened.load(), reference.load())
    np.testing.assert_array_equal(opened["signal"].sel(channel="GFP").values, [4.0, 5.0, 6.0, 7.0])
    assert opened["channel"].dtype == np.dtype("<U7")


def test_a_group_variable_without_dimension_names_is_named_in_the_error(tmp_path) -> None:
    group = tmp_path / "g.zarr"
    zarrdirect.create_group(group, zarr_format=2)
    zarrdirect.save(group / "nameless", volume((3, 4)), zarr_format=2)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="'nameless' has no dimension names"):
        xarray.open_dataset(group, engine=ENGINE)


def test_the_engine_name_works_from_the_build_tree() -> None:
    names = [entry.name for entry in importlib.metadata.entry_points(group="xarray.backends")]
    assert "zarrdirect" in names
