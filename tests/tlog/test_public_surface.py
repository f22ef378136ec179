"""supportgate.tlog's public surface: every name of `__all__` is there, from the package itself,
and the errors come without `cryptography` (supportgate/errors.py imports them on the path of
`supportgate check`, which never signs)."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from supportgate import tlog

pytestmark = pytest.mark.fast


def test_every_public_name_is_the_packages_own() -> None:
    for name in tlog.__all__:
        value = getattr(tlog, name)
        if inspect.isclass(value) or inspect.isfunction(value):  # not a constant or an alias
            assert value.__module__.startswith("supportgate.tlog."), name
    assert len(set(tlog.__all__)) == len(tlog.__all__)


def test_the_errors_load_without_the_signing_code() -> None:
    probe = (
        "import sys; import supportgate.errors, supportgate.tlog; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'cryptography', 'msgspec'})); "
        "supportgate.tlog.NoteSigner; print('cryptography' in sys.modules)"
    )
    said = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split("\n")
    assert said[:2] == ["[]", "True"]
