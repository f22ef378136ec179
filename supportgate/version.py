"""`supportgate --version`: the version pip recorded for the installed distribution.

supportgate.__version__ holds the version, pyproject.toml reads it from there at build time,
and importlib.metadata reads what pip installed. The lookup waits until --version is given:
importing importlib.metadata costs every other command start-up time.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

DISTRIBUTION = "supportgate"


def installed_version() -> str:
    from importlib.metadata import version  # noqa: PLC0415 - see the module docstring

    return version(DISTRIBUTION)


class PrintVersion(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.update(nargs=0, default=argparse.SUPPRESS)
        kwargs.setdefault("help", "print the version and exit")
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(f"{DISTRIBUTION} {installed_version()}")  # stdout, as argparse's own version action
        parser.exit()
