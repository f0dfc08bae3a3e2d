"""Host results are NumPy views of the engine's memory (no copy), alive as long as any view is;
the package imports GPU libraries only inside the functions that need them."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
import zarrdirect
from conftest import write_v2_array

DATA = np.arange(64 * 48, dtype="<f8").reshape(64, 48)


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return write_v2_array(tmp_path_factory.mktemp("host") / "a.zarr", DATA, (16, 16), "zlib")


def test_results_view_engine_memory(path) -> None:
    result = zarrdirect.open(path).read()
    assert not result.flags.owndata and type(result.base).__name__ == "PyCapsule"
    assert result.flags.writeable and result.flags.c_contiguous
    assert result.ctypes.data % 4096 == 0  # the engine's page-aligned buffer itself, not a copy
    result[0, 0] = -1.0  # it is the caller's to change


def test_memory_outlives_the_array_and_the_first_view(path) -> None:
    array = zarrdirect.open(path)
    result = array[8:40]
    view = result[4:, 3:]
    del array, result
    gc.collect()
    np.testing.assert_array_equal(view, DATA[12:40, 3:])


def test_integer_indices_keep_the_view_zero_copy(path) -> None:
    row = zarrdirect.open(path)[5]
    assert row.shape == (48,) and not row.flags.owndata
    np.testing.assert_array_equal(row, DATA[5])


def test_reads_from_many_threads(path) -> None:
    array = zarrdirect.open(path)
    errors = []

    def work(start: int) -> None:
        try:
            for _ in range(20):
                np.testing.assert_array_equal(array[start:start + 9, 2:30], DATA[start:start + 9, 2:30])
        except Exception as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i * 7,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors


def test_reads_off_the_main_thread_raise_fill_out_and_report_progress(path) -> None:
    """Reads from worker threads (as Dask's and data loaders' are): errors, out= and a progress
    callable behave as on the main thread."""
    from concurrent.futures import ThreadPoolExecutor

    array = zarrdirect.open(path)

    def out_read(start: int) -> np.ndarray:
        out = np.empty((9, 28), dtype=DATA.dtype)
        assert array.read((slice(start, start + 9), slice(2, 30)), out=out) is out
        return out

    def bad_read() -> None:
        array.read((64,))

    calls = []

    def progress_read() -> np.ndarray:
        return array.read(progress=lambda done, total: calls.append((done, total)) or True)

    with ThreadPoolExecutor(4) as pool:
        for start, got in zip(range(0, 50, 7), pool.map(out_read, range(0, 50, 7))):
            np.testing.assert_array_equal(got, DATA[start:start + 9, 2:30])
        with pytest.raises(IndexError, match="64"):
            pool.submit(bad_read).result()
        np.testing.assert_array_equal(pool.submit(progress_read).result(), DATA)
    assert calls and calls[-1][0] == calls[-1][1]


def test_read_into_views_and_new_axes(path) -> None:
    array = zarrdirect.open(path)
    big = np.full((100, 100), -1.0)
    block = big[10:42, 20:68]  # rows of 48 inside rows of 100: strided
    array.read((slice(0, 32),), out=block)
    np.testing.assert_array_equal(block, DATA[:32])
    assert (big[:10] == -1).all() and (big[:, :20] == -1).all()
    column = np.zeros((64, 1))
    array.read((slice(None), slice(7, 8)), out=column)
    np.testing.assert_array_equal(column[:, 0], DATA[:, 7])
    expanded = np.zeros((1, 48))
    array.read((None, 3), out=expanded)
    np.testing.assert_array_equal(expanded[0], DATA[3])
    flipped = np.zeros((64, 48))[::-1]
    array.read(out=flipped)
    np.testing.assert_array_equal(flipped, DATA)


def run_python(code: str, env_path: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=env_path)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True)


def test_import_loads_no_gpu_library(tmp_path, path) -> None:
    """cupy and torch that explode on import: zarrdirect must still import and read."""
    for name in ("cupy", "torch"):
        (tmp_path / f"{name}.py").write_text(f"raise RuntimeError('{name} was imported')\n")
    package = os.path.dirname(os.path.dirname(zarrdirect.__file__))
    result = run_python(
        f"""
        import sys, zarrdirect
        assert zarrdirect.open({str(path)!r})[1, 2] == {DATA[1, 2]}
        zarrdirect.open_group
        assert "cupy" not in sys.modules and "torch" not in sys.modules
        print("ok")
        """,
        os.pathsep.join([str(tmp_path), package]),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_drop_ins_name_cupy_when_it_is_missing(path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    for function in (zarrdirect.read_zarr_to_gpu, zarrdirect.read_zarr_via_kvikio):
        with pytest.raises(ImportError, match="cupy"):
            function(path)


def test_system_information() -> None:
    """In a fresh process: describing the system loads cuFile where CUDA is, and a crash there
    should fail this test, not end the whole test run."""
    package = os.path.dirname(os.path.dirname(zarrdirect.__file__))
    result = run_python(
        """
        import zarrdirect
        info = zarrdirect.system_info()
        assert isinstance(info["cuda_built"], bool) and "io_path" in info, info
        assert zarrdirect.cuda_available() in (True, False)
        assert isinstance(zarrdirect.__version__, str)
        print(info["io_path"])
        """,
        package,
    )
    assert result.returncode == 0, f"exit status {result.returncode}: {result.stderr[-2000:]}"
    assert result.stdout.strip() in ("host", "staged", "gds")
