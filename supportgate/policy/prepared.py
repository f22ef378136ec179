"""What the policies read from a matrix in the form they use (`data.supportgate.prepared`,
docs/policy-interface.md), derived once per matrix rather than in every decision; organisation
policies read `data.matrix`, the matrix as posted (CONTRACT section 8).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any


def prepared_document(matrix: Mapping[str, Any]) -> dict[str, Any]:
    engines = matrix.get("engines", {})
    return {
        "engines": {name: _engine(engine) for name, engine in engines.items()},
        "known_engines_text": list_text(sorted(engines)),  # as Rego orders object keys
        "alternatives": _alternatives(matrix.get("alternatives", ())),
        "engine_names": {identity(name): name for name in engines},
        "alternative_runtimes": {
            identity(alternative["name"]): _alternative(index, alternative)
            for index, alternative in reversed(list(enumerate(matrix.get("alternatives", ()))))
        },
        "accelerators": _accelerators(matrix.get("accelerators", ())),
    }


def identity(name: str) -> str:
    """As lib/lib.rego (names) identity: lower case, each run of "-", "_" and spaces one "-", none
    at either end."""
    return re.sub(r"[-_ ]+", "-", name.lower()).strip("-")


def version_key(version: str) -> list[list[Any]]:
    """[digit count, digits] pairs without leading zeros or trailing zero parts ("12.8" ->
    [[2, "12"], [1, "8"]], "13.0" -> [[2, "13"]]): they compare as the versions do, with each
    other and with the library's version keys (lib/lib.rego; they keep trailing zeros)."""
    parts = [[len(digits), digits] for digits in (part.lstrip("0") for part in version.split("."))]
    while len(parts) > 1 and parts[-1] == [0, ""]:
        parts.pop()
    return parts


def list_text(values: Iterable[Any]) -> str:
    """As lib/lib.rego (report) list_text renders a list of matrix values."""
    return ", ".join(str(value) for value in values)


def range_text(version_range: Mapping[str, Any]) -> str:
    bounds = [
        f"{sign} {version_range[side]}"
        for side, sign in (("min", ">="), ("below", "<"))
        if side in version_range
    ]
    return ", ".join(bounds) or "any version"


def _engine(engine: Mapping[str, Any]) -> dict[str, Any]:
    platforms: dict[str, dict[str, list[dict[str, Any]]]] = {}
    prepared: dict[str, Any] = {"platforms": platforms, **_runtime(engine)}
    for platform in engine.get("platforms", ()):
        by_arch = platforms.setdefault(platform["vendor"], {})
        toolkit = _toolkit(platform["toolkit"], platform.get("tier", "official"))
        by_arch.setdefault(platform["arch"], []).append(toolkit)
    return prepared


def _alternative(index: int, alternative: Mapping[str, Any]) -> dict[str, Any]:
    documents: dict[str, dict[str, bool]] = {}
    for platform in alternative["platforms"]:
        documents.setdefault(platform["vendor"], {})[platform["arch"]] = True
    return {
        "index": index,
        "name": alternative["name"],
        "documents": documents,
        "judges_service": "provides" in alternative,
        **_runtime(alternative),
    }


def _runtime(runtime: Mapping[str, Any]) -> dict[str, Any]:
    host = runtime.get("host", {})
    prepared: dict[str, Any] = {
        "models": {identity(model): model for model in reversed(runtime.get("models", ()))},
        "texts": _texts(runtime),
    }
    for part in ("python", "compiler"):
        if part in host:
            prepared[part] = _bounds(host[part])
    return prepared


def _toolkit(toolkit: Mapping[str, Any], tier: str) -> dict[str, Any]:
    return {"name": toolkit["name"], "range": range_text(toolkit), "tier": tier, **_bounds(toolkit)}


def _accelerators(catalogue: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    by_vendor: dict[str, list[dict[str, Any]]] = {}
    for entry in catalogue:
        patterns = [pattern.lower() for pattern in entry["models"]]
        by_vendor.setdefault(entry["vendor"], []).append(
            {
                "arch": entry["arch"],
                "consumer": entry.get("consumer", False),
                "patterns": patterns,
                "glob": patterns[0] if len(patterns) == 1 else "{" + ",".join(patterns) + "}",
                "literal": _common_literal(patterns),
            }
        )
    return by_vendor


def _common_literal(patterns: list[str]) -> str:
    """The longest text every pattern matches only where the name contains it ("h100" for
    "*h100" and "*h100[- ]*"), or "": the policies test it with a cheap `contains` before
    they match the patterns themselves (a glob costs the engines far more)."""
    runs = [set(re.split(r"\*|\?|\[[^\]]*\]", pattern)) - {""} for pattern in patterns]
    common = set.intersection(*runs) if runs else set()
    return max(sorted(common), key=len, default="")


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
    """Both sides, an open one as the library's open_min or open_below (in_range reads both)."""
    return {
        "min": version_key(version_range["min"]) if "min" in version_range else [],
        "below": version_key(version_range["below"]) if "below" in version_range else [["open"]],
    }
