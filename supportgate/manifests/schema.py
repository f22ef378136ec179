r"""JSON Schemas generated from the Structs, checked in under schemas/.

    python -m supportgate.manifests.schema --write   regenerate schemas/*.schema.json
    python -m supportgate.manifests.schema --check   exit 1 when a checked-in schema has drifted

Run from the repository's root (or name `--dir`). A schema accepts exactly the documents the
decoder accepts (tests/manifests/test_schema_agreement.py), save what JSON Schema cannot say
(an empty version range, an unpaired surrogate): the descriptions say so.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from supportgate.manifests.common import STORABLE_TEXT_RE, Contract
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
DEFAULT_DIR: Final = Path("schemas")  # relative to the working directory: the repository's root


def _contracts(base: type[Contract] = Contract) -> Iterator[type[Contract]]:
    for struct in base.__subclasses__():
        yield struct
        yield from _contracts(struct)


def _merge_struct_rules(defs: dict[str, Any]) -> None:
    for struct in _contracts():
        rules = struct.json_schema_rules
        if struct.__name__ not in defs or not rules or "json_schema_rules" not in vars(struct):
            continue
        definition = defs[struct.__name__]
        clash = set(rules) & set(definition)
        if clash:
            raise ValueError(f"{struct.__name__}.json_schema_rules would replace {sorted(clash)}")
        definition.update(rules)


def _storable_text(node: Any) -> Any:
    if isinstance(node, list):
        return [_storable_text(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _storable_text(value) for key, value in node.items()}
    if out.get("type") == "string" and "pattern" not in out:
        out["pattern"] = STORABLE_TEXT_RE
    if out.get("type") == "object" and isinstance(out.get("additionalProperties"), dict):
        keys = out.get("propertyNames", {})
        out["propertyNames"] = keys if "pattern" in keys else {**keys, "pattern": STORABLE_TEXT_RE}
    return out


def schema(target: Any) -> dict[str, Any]:
    generated = msgspec.json.schema(target)
    _merge_struct_rules(generated.get("$defs", {}))
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **_storable_text(generated)}


def render(target: Any) -> str:
    return json.dumps(schema(target), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def expected() -> dict[str, str]:
    return {f"{name}.schema.json": render(target) for name, target in SCHEMAS.items()}


def drifted(directory: Path) -> list[str]:
    return [
        name
        for name, text in expected().items()
        if not (directory / name).is_file() or (directory / name).read_text("utf-8") != text
    ]


def write(directory: Path) -> list[str]:
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
    parser.add_argument(
        "--dir",
        type=Path,
        default=DEFAULT_DIR,
        help="the schemas' directory (default: %(default)s, relative to the working directory)",
    )
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
