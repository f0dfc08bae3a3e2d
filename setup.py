"""Builds zarrdirect's Python extension with the project's CMake build, for setuptools.

pyproject.toml holds the package's metadata; this file only teaches setuptools to build the
extension `zarrdirect._native` by running CMake (the library static, so the extension is one
self-contained file) in a folder of its own, never in the source tree. Extra CMake options come
from the environment: ZARRDIRECT_CMAKE_ARGS="-DZARRDIRECT_CUDA=OFF ..." (for example the packed
dependencies of a machine where nothing can be installed: -DZARRDIRECT_DEPS_DIR=...).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        build_dir = Path(self.build_temp).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)
        configure = [
            "cmake", "-S", str(SOURCE), "-B", str(build_dir),
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DBUILD_SHARED_LIBS=OFF",
            "-DZARRDIRECT_TESTS=OFF", "-DZARRDIRECT_BENCH=OFF", "-DZARRDIRECT_PYTHON=ON",
        ]
        if shutil.which("ccache"):
            configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"]
        configure += shlex.split(os.environ.get("ZARRDIRECT_CMAKE_ARGS", ""))
        subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "zarrdirect_python", "-j", jobs], check=True)
        built = sorted((build_dir / "python" / "zarrdirect").glob("_native*.so"))
        if not built:
            raise RuntimeError(f"the CMake build produced no zarrdirect/_native extension under {build_dir}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    ext_modules=[CMakeExtension("zarrdirect._native")],
    cmdclass={"build_ext": CMakeBuild},
    # The xarray engine "zarrdirect", as pyproject.toml's [project.entry-points] declares it.
    entry_points={"xarray.backends": ["zarrdirect = zarrdirect.xarray:ZarrdirectBackendEntrypoint"]},
    # setuptools' own scratch space, apart from the CMake build folders (build/, build-*/).
    options={"build": {"build_base": "build-python"}},
)
