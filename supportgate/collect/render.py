"""The collected manifest as YAML or JSON in the contract's field order; in YAML a value of only
digits and dots is double-quoted, so no reader takes `python: "3.10"` for the number 3.1."""

from __future__ import annotations

import json
import re
from typing import Any, Final

import yaml

from supportgate.manifests import HardwareManifest, to_builtins

from .options import OutputFormat

_NUMERIC: Final = re.compile(r"[0-9][0-9.]*\Z")
_TOP_LEVEL: Final = ("apiVersion", "kind", "metadata", "spec")


class _Quoted(str):
    __slots__ = ()


class _Dumper(yaml.SafeDumper):
    pass


def _quoted(dumper: yaml.SafeDumper, value: _Quoted) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style='"')


_Dumper.add_representer(_Quoted, _quoted)


def _quote_numeric_values(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _quote_numeric_values(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_quote_numeric_values(item) for item in value]
    if isinstance(value, str) and _NUMERIC.match(value):
        return _Quoted(value)
    return value


def ordered(manifest: HardwareManifest) -> dict[str, Any]:
    """The canonical form with `apiVersion, kind, metadata, spec` first, as in the contract."""
    document = to_builtins(manifest)
    return {key: document[key] for key in _TOP_LEVEL} | document


def render(manifest: HardwareManifest, fmt: OutputFormat = "yaml") -> str:
    document = ordered(manifest)
    if fmt == "json":
        return json.dumps(document, indent=2) + "\n"
    return yaml.dump(
        _quote_numeric_values(document),
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
    )
