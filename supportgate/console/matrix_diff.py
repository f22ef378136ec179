"""A structural diff of two support matrix documents: what was added, removed or changed,
named by where it is (`engines.deepinfer.platforms[nvidia/sm100].toolkit.min`). Lists of
names compare as sets; platforms, alternatives and accelerator families match on their
identity, so a moved toolkit range is one change, not a removal and an addition.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from .decision_diff import Change

_IDENTITY: dict[str, tuple[str, ...]] = {
    "platforms": ("vendor", "arch"),
    "alternatives": ("name",),
    "accelerators": ("vendor", "models"),
}


@dataclass(frozen=True, slots=True)
class MatrixChange:
    change: Change
    section: str
    """`version` and other top-level fields, `engine deepinfer`, or `alternatives`."""
    path: str
    """Where in the section (empty for the section itself)."""
    before: str | None
    after: str | None


def diff_matrices(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[MatrixChange, ...]:
    found: list[MatrixChange] = []
    for key in _keys(old, new):
        if key == "engines":
            engines_old, engines_new = old.get(key) or {}, new.get(key) or {}
            for engine in _keys(engines_old, engines_new):
                _diff(
                    f"engine {engine}", "", engines_old.get(engine), engines_new.get(engine), found
                )
        else:
            _diff(key, "", old.get(key), new.get(key), found)
    return tuple(found)


def _diff(section: str, path: str, old: Any, new: Any, found: list[MatrixChange]) -> None:
    if old == new:
        return
    if old is None or new is None:
        change: Change = "added" if old is None else "removed"
        found.append(MatrixChange(change, section, path, _text(old), _text(new)))
    elif isinstance(old, dict) and isinstance(new, dict):
        for key in _keys(old, new):
            _diff(section, _join(path, key), old.get(key), new.get(key), found)
    elif isinstance(old, list) and isinstance(new, list):
        _diff_list(section, path, old, new, found)
    else:
        found.append(MatrixChange("changed", section, path, _text(old), _text(new)))


def _diff_list(section: str, path: str, old: list[Any], new: list[Any], found: list[Any]) -> None:
    name = path.rpartition(".")[2]
    identity = _IDENTITY.get(name) or _IDENTITY.get(section)
    if identity and all(isinstance(item, dict) for item in old + new):
        before = {_identity(item, identity): item for item in old}
        after = {_identity(item, identity): item for item in new}
        for key in sorted(before.keys() | after.keys()):
            _diff(section, f"{path}[{key}]", before.get(key), after.get(key), found)
    elif all(isinstance(item, str | int | float) for item in old + new):
        for item in sorted(set(map(str, new)) - set(map(str, old))):
            found.append(MatrixChange("added", section, path, None, item))
        for item in sorted(set(map(str, old)) - set(map(str, new))):
            found.append(MatrixChange("removed", section, path, item, None))
    else:
        found.append(MatrixChange("changed", section, path, _text(old), _text(new)))


def _identity(item: Mapping[str, Any], fields: tuple[str, ...]) -> str:
    values = (item.get(field, "?") for field in fields)
    return "/".join(",".join(map(str, v)) if isinstance(v, list) else str(v) for v in values)


def _keys(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Keys of both, in the old document's order, then the new keys in theirs."""
    return [*old, *(key for key in new if key not in old)]


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return msgspec.json.encode(value).decode()
