"""`supportgate check`: evaluate manifest files offline, resolving hardware refs among them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from supportgate.errors import UsageError
from supportgate.manifests import (
    DeploymentManifest,
    HardwareManifest,
    Manifest,
    decode_manifests,
    format_of,
)
from supportgate.reports import CheckedManifest, FailOn, gate_failed, render

from .evaluator import Evaluator, Subject


@dataclass(frozen=True, slots=True)
class SourcedManifest:
    source: str
    text: str
    document_index: int
    manifest: Manifest


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    output: str
    failed: bool


def read_manifest_files(paths: Sequence[str]) -> list[SourcedManifest]:
    """Every manifest in the files, in order; a broken file raises naming the file and field."""
    found: list[SourcedManifest] = []
    for source in paths:
        path = Path(source)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"{source}: cannot read: {exc.strerror}") from exc
        manifests = decode_manifests(data, fmt=format_of(source), source=source)
        text = data.decode("utf-8")
        found.extend(
            SourcedManifest(source=source, text=text, document_index=index, manifest=manifest)
            for index, manifest in enumerate(manifests)
        )
    _refuse_duplicates(found)
    return found


def check(
    items: Sequence[SourcedManifest],
    evaluator: Evaluator,
    *,
    evaluated_at: datetime,
    fmt: str,
    fail_on: FailOn,
    rule_titles: Mapping[str, str],
) -> CheckOutcome:
    """Hardware first (deployments may reference it), then deployments, reported in file order."""
    pools = {
        item.manifest.metadata.name: item.manifest
        for item in items
        if isinstance(item.manifest, HardwareManifest)
    }
    ordered = sorted(items, key=lambda item: isinstance(item.manifest, DeploymentManifest))
    evaluations = evaluator.evaluate_batch(
        [Subject(item.manifest) for item in ordered],
        evaluated_at=evaluated_at,
        hardware=pools.get,
    )
    by_item = {id(item): evaluation for item, evaluation in zip(ordered, evaluations, strict=True)}
    results = [
        CheckedManifest(
            source=item.source,
            decision=by_item[id(item)].decision,
            text=item.text,
            document_index=item.document_index,
        )
        for item in items
    ]
    failed = any(gate_failed(result.decision, fail_on) for result in results)
    output = render(results, fmt, fail_on=fail_on, rule_titles=rule_titles)
    return CheckOutcome(output=output, failed=failed)


def _refuse_duplicates(items: Sequence[SourcedManifest]) -> None:
    seen: dict[tuple[str, str], str] = {}
    for item in items:
        key = (item.manifest.kind, item.manifest.metadata.name)
        if key in seen:
            raise UsageError(
                f"{item.source}: {key[0]} {key[1]!r} is also defined in {seen[key]}; "
                "a manifest is identified by kind and name"
            )
        seen[key] = item.source
