"""Where the installed package keeps its data. The callers need real directories that outlive
any `with` block (Alembic reads the migrations by path, OPA gets the policy files uploaded,
Litestar serves the static files), so these are the package directories themselves: pip
always unpacks a wheel, and a zipped install gets a clear error instead.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

POLICIES_PACKAGE = "supportgate.policies"
MIGRATIONS_PACKAGE = "supportgate.migrations"
CONSOLE_PACKAGE = "supportgate.console"


def package_directory(package: str, *parts: str) -> Path:
    spec = find_spec(package)
    locations = list(spec.submodule_search_locations or ()) if spec else []
    if not locations or not Path(locations[0]).is_dir():
        raise RuntimeError(
            f"{package} is not on the file system ({locations}): install supportgate unpacked "
            "(pip install), not from a zip"
        )
    return Path(locations[0], *parts)
