"""The package as users get it: a version, and (when CI installs it) the installed copy, not the
source folder."""

from __future__ import annotations

import os
from pathlib import Path

import zarrdirect

REPO = Path(__file__).resolve().parents[2]


def test_version_is_the_projects() -> None:
    text = (REPO / "pyproject.toml").read_text()
    assert f'version = "{zarrdirect.__version__}"' in text


def test_the_package_imported_is_not_the_source_folder() -> None:
    location = Path(zarrdirect.__file__).resolve()
    # The extension is never built into the sources; the package comes from a build tree or an
    # installation.
    assert not (REPO / "python" / "zarrdirect").samefile(location.parent)
    if os.environ.get("ZARRDIRECT_EXPECT_INSTALLED"):
        assert "site-packages" in location.parts, location
