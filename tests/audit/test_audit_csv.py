"""GET /v1/audit?format=csv: every matching decision, streamed, safe to open in a spreadsheet."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest

from supportgate.audit.csv_export import CSV_COLUMNS, rules_cell
from supportgate.audit.filters import AuditFilter
from supportgate.audit.services import AuditService
from supportgate.csv_cells import safe_cell

from ..api import Api
from ..api_support import post_examples
from .test_audit import AT, record, write


def csv_export(api: Api, **params: Any) -> list[dict[str, str]]:
    response = api.client.get(
        "/v1/audit", params={"format": "csv", **params}, headers=api.headers("procurement")
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    disposition = response.headers["content-disposition"]
    assert disposition.startswith("attachment; filename=")
    assert disposition.endswith('.csv"')
    assert response.content.endswith(b"\r\n")
    rows = list(csv.reader(io.StringIO(response.text, newline="")))
    assert tuple(rows[0]) == CSV_COLUMNS
    return [dict(zip(CSV_COLUMNS, row, strict=True)) for row in rows[1:]]


def test_csv_rows_are_the_decisions(api: Api) -> None:
    bodies = list(reversed(post_examples(api)))
    rows = csv_export(api, limit=1)  # limit (and cursor) do not apply to the export
    assert [row["id"] for row in rows] == [body["id"] for body in bodies]
    for row, body in zip(rows, bodies, strict=True):
        assert row["evaluated_at"] == body["evaluated_at"]
        assert (row["kind"], row["name"]) == (body["manifest"]["kind"], body["manifest"]["name"])
        assert row["verdict"] == body["verdict"]
        assert row["allowed"] == ("true" if body["allowed"] else "false")
        for column in ("cause", "matrix_version", "policy_revision", "input_digest"):
            assert row[column] == body[column]
        # each violation with its message: `rule (severity): message; ...`
        entries = sorted(
            {f"{v['rule']} ({v['severity']}): {v['message']}" for v in body["violations"]}
        )
        assert row["rules"] == "; ".join(entries)
        assert all(f": {v['message']}" in row["rules"] for v in body["violations"])
    rejected = csv_export(api, verdict="rejected", kind="DeploymentManifest")
    assert [row["id"] for row in rejected] == [
        body["id"]
        for body in bodies
        if body["verdict"] == "rejected" and body["manifest"]["kind"] == "DeploymentManifest"
    ]
    assert csv_export(api, rule="no.such-rule") == []


def test_csv_streams_every_match_across_chunks(api: Api) -> None:
    written = write(
        api,
        *(
            record(
                f"dep-{n % 7}",
                at=AT + timedelta(seconds=n),
                verdict=("rejected", "supported")[n % 2],
            )
            for n in range(2345)
        ),
    )
    rows = csv_export(api)
    assert [row["id"] for row in rows] == list(reversed(written))
    rejected = csv_export(api, verdict="rejected", since="2026-11-30T12:10:00Z")
    assert [row["id"] for row in rejected] == [
        i for n, i in reversed(list(enumerate(written))) if n % 2 == 0 and n >= 600
    ]


@pytest.mark.parametrize("chunk", [1, 3, 4, 100])
def test_csv_chunks_join_up(sqlite_api: Api, chunk: int) -> None:
    written = write(sqlite_api, *(record(f"dep-{n}") for n in range(12)))
    service = AuditService(sqlite_api.runtime.sessions, csv_chunk=chunk)
    body = b""
    before = None
    while True:
        part = service.csv_chunk(AuditFilter(), before)
        body += part.body
        if part.next_before is None:
            break
        before = part.next_before
    assert [line.split(",")[0] for line in body.decode().splitlines()] == written[::-1]


def test_csv_cells_cannot_become_formulas(api: Api) -> None:
    hostile = [
        '=HYPERLINK("http://evil.example","click")',
        "+1+2",
        "-2+3",
        "@SUM(A1:A9)",
        "\t=1",
        "\r=1",
        'a,"b"\nc',
    ]
    write(
        api,
        *(
            record("dep-a", matrix_version=v, rules=[("=cmd|'/c calc'!A0", "warn")])
            for v in hostile
        ),
    )
    rows = csv_export(api)
    assert [row["matrix_version"] for row in rows] == [
        "'" + v if v[0] in "=+-@\t\r" else v for v in reversed(hostile)
    ]
    assert {row["rules"] for row in rows} == {"'=cmd|'/c calc'!A0 (warn): =cmd|'/c calc'!A0 fired"}
    for row in rows:
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row.values())


def test_the_rules_cell_lists_each_violation_with_its_message(api: Api) -> None:
    write(api, record("dep-a", rules=[("b.rule", "warn"), ("a.rule", "deny"), ("a.rule", "deny")]))
    [row] = csv_export(api)
    assert row["rules"] == "a.rule (deny): a.rule fired; b.rule (warn): b.rule fired"
    assert rules_cell({"violations": None}) == ""  # an unreadable document: no entries


def test_safe_cell() -> None:
    assert safe_cell("=1+1") == "'=1+1"
    assert safe_cell("-1") == "'-1"
    assert safe_cell("2026.11.1") == "2026.11.1"
    assert safe_cell("") == ""
    assert safe_cell("a=b") == "a=b"


def test_empty_export_is_the_header(api: Api) -> None:
    assert csv_export(api) == []
