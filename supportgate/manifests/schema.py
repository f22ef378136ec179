"""JSON Schemas generated from the Structs, checked in under schemas/.

    python -m supportgate.manifests.schema --write   regenerate schemas/*.schema.json
    python -m supportgate.manifests.schema --check   exit 1 when a checked-in schema has drifted

The Structs are the single source of truth; the files are pretty-printed with sorted keys
and a trailing newline, so regenerating them is deterministic. Checks that JSON Schema cannot
express (an NVIDIA arch is `sm` + digits, exactly one of `hardware.ref` and `hardware.spec`,
non-empty version ranges, `default_engine` among `engines`) are named in the descriptions.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from supportgate.manifests.common import END_GUARD
from supportgate.manifests.decision import Decision
from supportgate.manifests.deployment import DeploymentManifest
from supportgate.manifests.hardware import HardwareManifest
from supportgate.manifests.matrix import Matrix

SCHEMAS: Final[dict[str, Any]] = {
    "hardware": HardwareManifest,
    "deployment": DeploymentManifest,
    "matrix": Matrix,
    "decision": Decision,
}
DEFAULT_DIR: Final = Path(__file__).resolve().parents[2] / "schemas"


def _ecma(node: object) -> object:
    """Patterns as JSON Schema (ECMA-262) writes them, without Python's END_GUARD."""
    if isinstance(node, dict):
        return {
            key: value.removesuffix(END_GUARD)
            if key == "pattern" and isinstance(value, str)
            else _ecma(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_ecma(item) for item in node]
    return node


def render(target: Any) -> str:
    """The schema document for `target`, as the text checked in."""
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema"}
    schema.update(msgspec.json.schema(target))
    return json.dumps(_ecma(schema), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def expected() -> dict[str, str]:
    """File name to text, for every schema."""
    return {f"{name}.schema.json": render(target) for name, target in SCHEMAS.items()}


def drifted(directory: Path) -> list[str]:
    """The schema files in `directory` that are missing or differ from the Structs."""
    return [
        name
        for name, text in expected().items()
        if not (directory / name).is_file() or (directory / name).read_text("utf-8") != text
    ]


def write(directory: Path) -> list[str]:
    """Write the schemas that changed; returns their names."""
    directory.mkdir(parents=True, exist_ok=True)
    changed = drifted(directory)
    texts = expected()
    for name in changed:
        (directory / name).write_text(texts[name], encoding="utf-8")
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m supportgate.manifests.schema", description=__doc__
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="regenerate the schema files")
    action.add_argument("--check", action="store_true", help="exit 1 if any file has drifted")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="default: %(default)s")
    args = parser.parse_args(argv)
    if args.write:
        changed = write(args.dir)
        sys.stdout.write(
            "".join(f"wrote {args.dir / name}\n" for name in changed) or "up to date\n"
        )
        return 0
    stale = drifted(args.dir)
    for name in stale:
        sys.stderr.write(f"{args.dir / name} has drifted; run: {parser.prog} --write\n")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
