"""supportgate.package_data: the package directories on disk, or a clear error when not."""

from __future__ import annotations

import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from supportgate.package_data import (
    CONSOLE_PACKAGE,
    MIGRATIONS_PACKAGE,
    POLICIES_PACKAGE,
    package_directory,
)

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(
    ("package", "parts", "inside"),
    [
        (POLICIES_PACKAGE, (), "matrix/data.yaml"),
        (MIGRATIONS_PACKAGE, (), "env.py"),
        (CONSOLE_PACKAGE, ("static",), "console.css"),
    ],
)
def test_each_data_directory_is_a_real_directory(
    package: str, parts: tuple[str, ...], inside: str
) -> None:
    assert (package_directory(package, *parts) / inside).is_file()


@pytest.fixture
def zipped_package(tmp_path: Path) -> Iterator[str]:
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped_data/__init__.py", "")
        zipped.writestr("zipped_data/matrix/data.yaml", "{}")
    sys.path.insert(0, str(archive))
    try:
        yield "zipped_data"
    finally:
        sys.path.remove(str(archive))
        sys.modules.pop("zipped_data", None)


def test_a_package_inside_a_zip_is_refused_with_its_name(zipped_package: str) -> None:
    with pytest.raises(
        RuntimeError, match=r"zipped_data is not on the file system.*not from a zip"
    ):
        package_directory(zipped_package)
