"""What the policies read from a matrix in the form they compare: made once per matrix.

The matrix's version ranges become version keys (four numbers, compared as arrays), so a
decision reads the bounds instead of parsing them. The policies find the result at
`data.supportgate.prepared` (docs/policy-interface.md); `data.matrix` stays the matrix as
posted, which is what organisation policies read (CONTRACT section 8).

    {"engines": {name: {"python": bounds, "compiler": bounds, "toolkits": [bounds, ...]}}}

`bounds` holds `min` and `below` as keys where the range states them; `python` and
`compiler` where the engine states them; `toolkits` one per platform, in matrix order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

VERSION_PARTS = 4
"""Versions have 1 to 4 parts (supportgate/manifests/common.py VERSION_RE)."""


def prepared_document(matrix: Mapping[str, Any]) -> dict[str, Any]:
    engines = matrix.get("engines", {})
    return {"engines": {name: _engine(engine) for name, engine in engines.items()}}


def version_key(version: str) -> list[int]:
    """The version's parts as numbers, padded with zeros: "12.8" -> [12, 8, 0, 0]."""
    parts = [int(part) for part in version.split(".")]
    return parts + [0] * (VERSION_PARTS - len(parts))


def _engine(engine: Mapping[str, Any]) -> dict[str, Any]:
    host = engine.get("host", {})
    ranges: dict[str, Any] = {
        "toolkits": [_bounds(platform["toolkit"]) for platform in engine.get("platforms", ())]
    }
    for part in ("python", "compiler"):
        if part in host:
            ranges[part] = _bounds(host[part])
    return ranges


def _bounds(version_range: Mapping[str, Any]) -> dict[str, list[int]]:
    return {
        side: version_key(version_range[side]) for side in ("min", "below") if side in version_range
    }
