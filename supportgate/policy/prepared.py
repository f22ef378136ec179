"""What the policies read from a matrix in the form they use: made once per matrix.

Everything here depends on the matrix alone, so Python derives it once per matrix instead of
every decision deriving it again: version ranges as version keys (the decision compares
them instead of parsing them), the engine's platforms as a lookup by (vendor, arch), and the
texts the messages quote. The policies find the result at `data.supportgate.prepared`
(docs/policy-interface.md); `data.matrix` stays the matrix as posted, which is what
organisation policies read (CONTRACT section 8).

    {"engines": {name: {"python": bounds, "compiler": bounds,
                        "platforms": {vendor: {arch: [toolkit, ...]}}, "texts": {...}}},
     "known_engines_text": "...", "alternatives": {vendor: {arch: "vllm, sglang"}}}

`bounds` holds `min` and `below` as keys where the range states them; `python` and `compiler`
where the engine states them. `platforms[vendor][arch]` lists the toolkit each matrix entry
of that (vendor, arch) requires, in matrix order, with its bounds and range text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def prepared_document(matrix: Mapping[str, Any]) -> dict[str, Any]:
    engines = matrix.get("engines", {})
    return {
        "engines": {name: _engine(engine) for name, engine in engines.items()},
        "known_engines_text": list_text(sorted(engines)),  # as Rego orders object keys
        "alternatives": _alternatives(matrix.get("alternatives", ())),
    }


def version_key(version: str) -> list[list[Any]]:
    """The version as [digit count, digits] pairs, leading zeros dropped, and trailing zero
    parts too: "12.8" -> [[2, "12"], [1, "8"]], "13.0" -> [[2, "13"]]. Keys of versions
    compare as the versions compare, and the key of a version the policies make
    (lib/versions.rego key, trailing zeros kept) compares with such a key as the versions do:
    arrays compare part by part, and a shorter one first when it is the other's start."""
    parts = [[len(digits), digits] for digits in (part.lstrip("0") for part in version.split("."))]
    while len(parts) > 1 and parts[-1] == [0, ""]:
        parts.pop()
    return parts


def list_text(values: Iterable[Any]) -> str:
    """As lib/report.rego list_text renders a list of matrix values."""
    return ", ".join(str(value) for value in values)


def range_text(version_range: Mapping[str, Any]) -> str:
    """A version range of the matrix as messages quote it: ">= 13, < 14", ">= 13", "< 14" or
    "any version"."""
    bounds = [
        f"{sign} {version_range[side]}"
        for side, sign in (("min", ">="), ("below", "<"))
        if side in version_range
    ]
    return ", ".join(bounds) or "any version"


def _engine(engine: Mapping[str, Any]) -> dict[str, Any]:
    host = engine.get("host", {})
    platforms: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for platform in engine.get("platforms", ()):
        by_arch = platforms.setdefault(platform["vendor"], {})
        by_arch.setdefault(platform["arch"], []).append(_toolkit(platform["toolkit"]))
    prepared: dict[str, Any] = {"platforms": platforms, "texts": _texts(engine)}
    for part in ("python", "compiler"):
        if part in host:
            prepared[part] = _bounds(host[part])
    return prepared


def _toolkit(toolkit: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": toolkit["name"], "range": range_text(toolkit), **_bounds(toolkit)}


def _texts(engine: Mapping[str, Any]) -> dict[str, str]:
    host = engine.get("host", {})
    dependencies = engine.get("arch_dependencies", ())
    provides = engine.get("provides", ())
    reference = engine.get("reference_topology")
    return {
        "platforms": ", ".join(f"{p['vendor']} {p['arch']}" for p in engine.get("platforms", ())),
        "models": list_text(engine.get("models", ())),
        "os": list_text(host.get("os", ())),
        "compiler_range": range_text(host.get("compiler", {})),
        "python_range": range_text(host.get("python", {})),
        "provides": list_text(provides) if provides else "nothing",
        "arch_dependencies": (
            list_text(dependencies) if dependencies else "the architecture-dependent dependencies"
        ),
        "reference_topology": (
            f"the reference topology of {reference['prefill_gpus']} prefill and "
            f"{reference['decode_gpus']} decode GPUs"
            if reference
            else "the engine's reference topology"
        ),
    }


def _alternatives(alternatives: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """For each (vendor, arch), the alternatives that document it, in matrix order."""
    names: dict[tuple[str, str], list[str]] = {}
    for alternative in alternatives:
        documented = {(p["vendor"], p["arch"]) for p in alternative["platforms"]}
        for key in sorted(documented):
            names.setdefault(key, []).append(alternative["name"])
    result: dict[str, dict[str, str]] = {}
    for (vendor, arch), listed in names.items():
        result.setdefault(vendor, {})[arch] = list_text(listed)
    return result


def _bounds(version_range: Mapping[str, Any]) -> dict[str, list[list[Any]]]:
    return {
        side: version_key(version_range[side]) for side in ("min", "below") if side in version_range
    }
