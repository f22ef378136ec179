"""A synthetic fleet of tracked manifests for sweep benchmarks and tests, inserted fast.

`fleet(n)` makes n tracked manifests from six of the examples: one HardwareManifest in ten
(pools of H100 `sm90`, B200 `sm100`, H100 again and Ascend `950` in turn, some on old
compilers that are rejected), the rest DeploymentManifests referencing those pools by name
(trial and production stages, offline and online). Under the default matrix the sm90 half
is `experimental` or `rejected`; a matrix that makes sm90 official (`sm90_matrix`) changes
about a third of the verdicts (the issue's "a matrix change that flips a third"; the rest of
the sm90 half stays rejected for other reasons). `insert_fleet` writes them as tracked rows
with no decision yet (COPY on PostgreSQL, executemany on SQLite); a first sweep records their
decisions.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import Engine, insert

from bench.common import example_manifest
from supportgate.db import Manifest
from supportgate.manifests import Matrix, decode_matrix, to_builtins
from supportgate.policy.inputs import canonical_digest

POOL_EVERY = 10
_canonical = msgspec.json.Encoder(order="sorted")
_manifests = Manifest.__table__  # type: ignore[attr-defined]
_COLUMNS = (
    "kind",
    "name",
    "owner",
    "content",
    "content_digest",
    "hardware_ref",
    "created_at",
    "updated_at",
)
POLICIES = Path(__file__).resolve().parents[1] / "policies"


# The pools, by arch, and the deployments the fleet is made of: offline deployments whose
# verdicts follow the platform (an always-rejected template, such as an online one missing a
# service component, would never flip).
POOL_TEMPLATES = ("hw-h100-pool-a.yaml", "hw-b200-pool.yaml", "hw-ascend950-pool.yaml")
DEPLOYMENT_TEMPLATES = (
    "dep-b200-offline.yaml",
    "dep-h100-port-trial.yaml",
    "dep-h100-production.yaml",
)


def _templates() -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    pools = {}
    for name in POOL_TEMPLATES:
        pool = example_manifest(name)
        pools[str(pool.spec.accelerator.arch)] = to_builtins(pool)  # type: ignore[union-attr]
    return pools, [to_builtins(example_manifest(name)) for name in DEPLOYMENT_TEMPLATES]


def fleet(n: int) -> Iterator[dict[str, Any]]:
    """n tracked-manifest rows (kind, name, content, digest, hardware_ref, owner)."""
    pools, deployments = _templates()
    arches = ["sm90", "sm100", "sm90", "950"]
    pool_count = max(1, n // POOL_EVERY)
    for i in range(n):
        if i % POOL_EVERY == 0:
            number = i // POOL_EVERY
            content = msgspec.json.decode(msgspec.json.encode(pools[arches[number % len(arches)]]))
            content["metadata"]["name"] = f"pool-{number:06d}"
            if number % 20 == 19:  # an old compiler: rejected whatever the matrix says
                content["spec"]["compiler"]["version"] = "11.4.0"
            kind, ref = "HardwareManifest", None
        else:
            template = deployments[i % len(deployments)]
            content = msgspec.json.decode(msgspec.json.encode(template))
            content["metadata"]["name"] = f"dep-{i:06d}"
            ref = f"pool-{(i // POOL_EVERY + i) % pool_count:06d}"
            content["spec"]["hardware"] = {"ref": ref}
            kind = "DeploymentManifest"
        yield {
            "kind": kind,
            "name": content["metadata"]["name"],
            "owner": content["metadata"].get("owner"),
            "content": content,
            "content_digest": canonical_digest(_canonical.encode(content)),
            "hardware_ref": ref,
        }


def insert_fleet(db: Engine, n: int) -> None:
    now = datetime.now(UTC)
    rows = ({**row, "created_at": now, "updated_at": now} for row in fleet(n))
    with db.begin() as connection:
        if db.dialect.name != "postgresql":
            connection.execute(insert(_manifests), list(rows))
            return
        cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
        with cursor.copy(f"COPY manifests ({', '.join(_COLUMNS)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(
                    [
                        msgspec.json.encode(row[c]).decode() if c == "content" else row[c]
                        for c in _COLUMNS
                    ]
                )


def sm90_matrix(
    version: str, *, effective_from: str | None = None, official: bool = True
) -> Matrix:
    """The default matrix with sm90 (H100, CUDA 12.4 up to 14) an official platform (with
    `official=False`, the default matrix under another version: sm90 unlisted again)."""
    text = (POLICIES / "matrix" / "data.yaml").read_text()
    text = text.replace('version: "2026.11.1"', f'version: "{version}"')
    sm100 = '      - {vendor: nvidia, arch: sm100, toolkit: {name: cuda, min: "13.0", below: "14"}}'
    sm90 = '      - {vendor: nvidia, arch: sm90, toolkit: {name: cuda, min: "12.4", below: "14"}}'
    if official:
        text = text.replace(sm100, f"{sm100}\n{sm90}")
    moment = effective_from or "2026-11-01T00:00:00Z"
    text = text.replace('effective_from: "2026-11-01T00:00:00Z"', f'effective_from: "{moment}"')
    return decode_matrix(text.encode(), fmt="yaml")


def sm90_matrix_json(version: str, *, effective_from: str | None = None) -> bytes:
    return msgspec.json.encode(to_builtins(sm90_matrix(version, effective_from=effective_from)))
