"""examples/dask_smooth.py on the CPU: its output equals a NumPy box mean of the whole volume."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrdirect

pytest.importorskip("dask.array")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dask_smooth.py"


def reference_box_mean(volume: np.ndarray, radius: int) -> np.ndarray:
    """The mean over each voxel's (2r+1)^3 neighbourhood, the edge repeated outward."""
    padded = np.pad(volume.astype(np.float64), radius, mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, (2 * radius + 1,) * 3)
    return windows.mean(axis=(-3, -2, -1))


def run_example(*args: str) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, str(EXAMPLE), *args], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def load_example():
    spec = importlib.util.spec_from_file_location("dask_smooth", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_smooths_like_numpy(tmp_path) -> None:
    source, target = str(tmp_path / "in.zarr"), str(tmp_path / "out.zarr")
    run_example("--make-input", source, "--shape", "40", "36", "30", "--input-chunks", "16", "16", "16")
    # Blocks of 16 with a halo of 2: every block needs its neighbours' voxels.
    out = run_example(source, target, "--radius", "2")
    assert "smoothed (40, 36, 30)" in out
    volume = zarrdirect.open(source)[:]
    smoothed = zarrdirect.open(target)
    assert smoothed.dtype == np.float32 and smoothed.chunks == (16, 16, 16)
    np.testing.assert_allclose(smoothed[:], reference_box_mean(volume, 2), rtol=1e-6, atol=1e-3)


def test_sharded_input_radius_1(tmp_path) -> None:
    example = load_example()
    volume = (np.random.default_rng(3).integers(0, 4000, size=(20, 24, 18))).astype(np.uint16)
    zarrdirect.save(tmp_path / "in.zarr", volume, chunks=(5, 6, 9), shards=(10, 12, 18))
    written = example.smooth(str(tmp_path / "in.zarr"), str(tmp_path / "out.zarr"), radius=1)
    assert written.chunks == (5, 6, 9) and written.shards == (10, 12, 18)
    np.testing.assert_allclose(written[:], reference_box_mean(volume, 1), rtol=1e-6, atol=1e-3)


def test_cupy_blocks(tmp_path) -> None:
    cupy = pytest.importorskip("cupy")
    if not zarrdirect.cuda_available():
        pytest.skip("no CUDA device")
    example = load_example()
    volume = (np.random.default_rng(4).integers(0, 4000, size=(32, 32, 32))).astype(np.uint16)
    zarrdirect.save(tmp_path / "in.zarr", volume, chunks=(16, 16, 16))
    block = example.box_mean(cupy.asarray(volume), 2)
    assert isinstance(block, cupy.ndarray)
    written = example.smooth(str(tmp_path / "in.zarr"), str(tmp_path / "out.zarr"), radius=2, device="cuda")
    np.testing.assert_allclose(written[:], reference_box_mean(volume, 2), rtol=1e-6, atol=1e-3)
