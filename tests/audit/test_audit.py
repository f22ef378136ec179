"""GET /v1/audit on SQLite and PostgreSQL: filters, keyset pages, bad parameters, roles."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from supportgate.audit import repository
from supportgate.ledger.batches import Batch, DecisionWrite
from supportgate.manifests.decision import Checklist, Claims, Decision, ManifestRef, Violation
from supportgate.pagination import MAX_SEQ
from supportgate.policy.inputs import PolicyInput, format_time

from ..api import Api
from ..api_support import post_examples
from ..examples import expected

AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
REVISION = "sha256:" + "e" * 64


def record(
    name: str = "dep-a",
    *,
    kind: str = "DeploymentManifest",
    verdict: str = "experimental",
    at: datetime = AT,
    rules: Sequence[tuple[str, str]] = (),
    matrix_version: str = "2026.11.1",
) -> DecisionWrite:
    """A decision to append with `runtime.ledger.write`, made without a policy engine."""
    policy_input = PolicyInput.from_document(
        {
            "manifest": {"kind": kind, "metadata": {"name": name}},
            "evaluated_at": format_time(at),
            "waivers": [],
        }
    )
    decision = Decision(
        id=str(uuid.uuid4()),
        manifest=ManifestRef(kind=kind, name=name),  # type: ignore[arg-type]
        verdict=verdict,  # type: ignore[arg-type]
        allowed=verdict != "rejected",
        violations=tuple(
            Violation(rule=rule, severity=severity, message=f"{rule} fired", path="$.spec")  # type: ignore[arg-type]
            for rule, severity in rules
        ),
        claims=Claims(builds="proven", correct="unproven", performant="unproven"),
        checklist=Checklist(
            official_support=False,
            kernels_and_correctness="unproven",
            distributed_performance="unproven",
            service_completeness="not-applicable",
        ),
        recommendations=(),
        matrix_version=matrix_version,
        policy_revision=REVISION,
        input_digest=policy_input.digest,
        evaluated_at=at,
        cause="submission",
    )
    return DecisionWrite(decision=decision, policy_input=policy_input.canonical.decode())


def write(api: Api, *records: DecisionWrite) -> list[str]:
    """Append the decisions (in this order) and return their ids."""
    api.runtime.ledger.write(Batch(decisions=list(records)))
    return [r.decision.id for r in records]


def audit(api: Api, role: str = "procurement", **params: Any) -> Any:
    response = api.client.get("/v1/audit", params=params, headers=api.headers(role))
    assert response.status_code == 200, response.text
    return response.json()


def ids(api: Api, **params: Any) -> list[str]:
    return [item["id"] for item in audit(api, limit=500, **params)["items"]]


def without_leaf(decision: dict[str, Any]) -> dict[str, Any]:
    """A decision document without `leaf_index`, which a 201 body has only once the writer
    sets it."""
    return {key: value for key, value in decision.items() if key != "leaf_index"}


def test_examples_newest_first_and_each_filter(api: Api) -> None:
    bodies = post_examples(api)
    newest_first = list(reversed(bodies))
    page = audit(api)
    # the very documents the 201s answered, each with its leaf in the log, newest last
    assert [without_leaf(item) for item in page["items"]] == [without_leaf(b) for b in newest_first]
    leaves = [item["leaf_index"] for item in page["items"]]
    assert leaves == sorted(set(leaves), reverse=True)
    assert page["next_cursor"] is None

    def expect(keep: Any) -> list[str]:
        return [body["id"] for body in newest_first if keep(body)]

    assert ids(api, kind="HardwareManifest") == expect(
        lambda b: b["manifest"]["kind"] == "HardwareManifest"
    )
    for verdict in ("supported", "experimental", "rejected"):
        assert ids(api, verdict=verdict) == expect(lambda b, v=verdict: b["verdict"] == v)
    assert ids(api, name="h100-pool-a") == expect(lambda b: b["manifest"]["name"] == "h100-pool-a")
    fired = {v["rule"] for body in bodies for v in body["violations"]}
    assert fired >= set().union(*(want.rules for want in expected().decisions.values()))
    for rule in sorted(fired):
        assert ids(api, rule=rule) == expect(
            lambda b, r=rule: r in {v["rule"] for v in b["violations"]}
        )
    assert ids(api, rule="no.such-rule") == []
    assert ids(api, matrix_version="2026.11.1") == expect(lambda _b: True)
    assert ids(api, matrix_version="1999.1.1") == []
    assert ids(api, kind="DeploymentManifest", verdict="rejected", rule="support.platform") == (
        expect(
            lambda b: (
                b["manifest"]["kind"] == "DeploymentManifest"
                and b["verdict"] == "rejected"
                and "support.platform" in {v["rule"] for v in b["violations"]}
            )
        )
    )


def test_filters_on_recorded_decisions(api: Api) -> None:
    hours = [AT + timedelta(hours=h) for h in range(4)]
    (a, b, c, d, e) = write(
        api,
        record("pool", kind="HardwareManifest", verdict="supported", at=hours[0]),
        record(
            "pool",
            verdict="rejected",
            at=hours[1],
            rules=[("port.production", "deny"), ("support.platform", "warn")],
        ),
        record(
            "other",
            verdict="experimental",
            at=hours[2],
            rules=[("port.production", "waived"), ("port.production", "deny")],
            matrix_version="2026.12.1",
        ),
        record("pool", kind="HardwareManifest", verdict="rejected", at=hours[3]),
        record("other", verdict="supported", at=hours[3], matrix_version="2026.12.1"),
    )
    # A name without a kind finds both kinds, newest first.
    assert ids(api, name="pool") == [d, b, a]
    assert ids(api, name="pool", kind="HardwareManifest") == [d, a]
    assert ids(api, name="pool", verdict="rejected") == [d, b]
    # Any severity counts, and a rule named twice (deny and waived) lists the decision once.
    assert ids(api, rule="port.production") == [c, b]
    assert ids(api, rule="support.platform") == [b]
    assert ids(api, matrix_version="2026.12.1") == [e, c]
    assert ids(api, matrix_version="2026.12.1", verdict="supported") == [e]
    # since is inclusive, until exclusive, on evaluated_at; any offset names the same instant.
    assert ids(api, since=format_time(hours[2])) == [e, d, c]
    assert ids(api, until=format_time(hours[1])) == [a]
    assert ids(api, since=format_time(hours[1]), until=format_time(hours[3])) == [c, b]
    assert ids(api, since="2026-11-30T14:00:00+01:00", until="2026-11-30T13:59:59.999999Z") == [b]
    assert ids(api, since="2026-11-30T13:00:00.000001Z") == [e, d, c]
    assert ids(api, since=format_time(hours[3]), until=format_time(hours[3])) == []
    assert ids(api, verdict="rejected", since=format_time(hours[2])) == [d]


@pytest.mark.parametrize("probe", ["probed", "unaided"])
def test_time_windows_when_times_and_seqs_disagree(
    api: Api, monkeypatch: pytest.MonkeyPatch, probe: str
) -> None:
    """Sweeps and late writers record decisions out of evaluated_at order: a window still
    holds exactly its decisions, whether its seq range is probed or walked unaided."""
    if probe == "unaided":
        monkeypatch.setattr(repository, "WINDOW_PROBE", 1)
        monkeypatch.setattr(repository, "RECENT_WINDOW_PROBE", 1)
    offsets = [5, 1, 9, 3, 7, 0, 8, 2, 6, 4, 5, 1]
    written = write(
        api,
        *(
            record(
                f"dep-{n}", at=AT + timedelta(minutes=m), verdict=("rejected", "supported")[n % 2]
            )
            for n, m in enumerate(offsets)
        ),
    )
    newest_first = list(reversed(list(zip(written, offsets, strict=True))))

    def window(since: int | None, until: int | None, **params: Any) -> list[str]:
        if since is not None:
            params["since"] = format_time(AT + timedelta(minutes=since))
        if until is not None:
            params["until"] = format_time(AT + timedelta(minutes=until))
        found: list[str] = []
        cursor = None
        while True:  # in pages of 2, to walk the cursor through the window as well
            page = audit(api, limit=2, **params, **({"cursor": cursor} if cursor else {}))
            found += [item["id"] for item in page["items"]]
            cursor = page["next_cursor"]
            if cursor is None:
                return found

    for since, until in [(3, 6), (None, 4), (5, None), (0, 10), (9, None), (None, 1), (4, 5)]:
        expected = [
            i
            for i, m in newest_first
            if (since is None or m >= since) and (until is None or m < until)
        ]
        assert window(since, until) == expected, (since, until)
    assert (
        window(3, 6, verdict="rejected")
        == [
            i
            for n, (i, m) in enumerate(zip(written, offsets, strict=True))
            if 3 <= m < 6 and n % 2 == 0
        ][::-1]
    )
    assert window(10, None) == []
    assert window(20, 30) == []


def test_filters_that_match_nothing(api: Api) -> None:
    write(api, record("pool", kind="HardwareManifest"), record("dep", verdict="rejected"))
    assert ids(api, name="nobody") == []
    assert ids(api, verdict="supported") == []
    assert ids(api, rule="host.os") == []
    assert ids(api, name="pool", verdict="rejected") == []
    assert ids(api, matrix_version="2026.11.1", name="dep", kind="HardwareManifest") == []


def test_keyset_pages_hold_while_decisions_are_inserted(api: Api, examples_dir: Path) -> None:
    old = write(
        api, *(record(f"dep-{n}", verdict=("rejected", "supported")[n % 2]) for n in range(23))
    )
    newest_first = list(reversed(old))
    first = audit(api, limit=10)
    assert [item["id"] for item in first["items"]] == newest_first[:10]
    # New decisions between page fetches: later pages neither shift nor repeat.
    write(api, *(record(f"new-{n}") for n in range(7)))
    assert api.post_manifest(examples_dir / "hw-b200-pool.yaml").status_code == 201
    second = audit(api, limit=10, cursor=first["next_cursor"])
    write(api, record("newer"))
    third = audit(api, limit=10, cursor=second["next_cursor"])
    assert [item["id"] for item in second["items"]] == newest_first[10:20]
    assert [item["id"] for item in third["items"]] == newest_first[20:]
    assert third["next_cursor"] is None
    # A fresh first page starts with the new ones.
    assert audit(api, limit=1)["items"][0]["manifest"]["name"] == "newer"

    # Filtered pages (the rejected half) page the same way.
    rejected = [i for n, i in enumerate(old) if n % 2 == 0][::-1]
    seen: list[str] = []
    cursor = None
    while True:
        page = audit(api, verdict="rejected", limit=5, **({"cursor": cursor} if cursor else {}))
        seen += [item["id"] for item in page["items"]]
        write(api, record("during", verdict="rejected"))
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == rejected


def test_name_pages_merge_both_kinds(api: Api) -> None:
    written = write(
        api,
        *(
            record("same", kind=("HardwareManifest", "DeploymentManifest")[n % 3 == 0])
            for n in range(9)
        ),
    )
    seen: list[str] = []
    cursor = None
    while True:
        page = audit(api, name="same", limit=2, **({"cursor": cursor} if cursor else {}))
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == list(reversed(written))


def test_default_limit_is_50(api: Api) -> None:
    write(api, *(record(f"dep-{n}") for n in range(51)))
    page = audit(api)
    assert len(page["items"]) == 50
    assert page["next_cursor"] is not None
    assert len(audit(api, cursor=page["next_cursor"])["items"]) == 1


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"verdict": "maybe"}, "verdict"),
        ({"verdict": ""}, "verdict"),
        ({"kind": "Pod"}, "kind"),
        ({"since": "yesterday"}, "since"),
        ({"since": "2026-11-30"}, "since"),
        ({"since": "2026-11-30T00:00:00"}, "since"),
        ({"until": "2026-13-01T00:00:00Z"}, "until"),
        ({"until": "2026-11-30T25:00:00Z"}, "until"),
        ({"since": "0001-01-01T00:00:00+01:00"}, "since"),
        ({"since": "2026-11-30T00:00:00 01:00"}, "since"),  # an unencoded `+`
        ({"since": "2026-11-30T00:00:00Z", "until": "2026-11-29T00:00:00Z"}, "until"),
        ({"format": "xml"}, "format"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"cursor": "WyJ4Il0"}, "cursor"),  # ["x"]
        ({"cursor": "WzEwMDAwMDAwMDAwMDAwMDAwMDAwMDAwXQ"}, "cursor"),  # beyond BIGINT
        ({"cursor": "Wy0xXQ"}, "cursor"),  # [-1]
        ({"format": "csv", "verdict": "maybe"}, "verdict"),
        ({"name": "pool\x00"}, "name"),  # PostgreSQL text cannot hold NUL: never a 5xx
        ({"rule": "\x00"}, "rule"),
        ({"matrix_version": "a\x00"}, "matrix_version"),
    ],
)
def test_bad_parameters_are_400_naming_the_field(
    shared_api: Api, params: dict[str, str], field: str
) -> None:
    response = shared_api.client.get(
        "/v1/audit", params=params, headers=shared_api.headers("procurement")
    )
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["field"] == field
    assert field in body["detail"]


@pytest.mark.parametrize("limit", ["0", "501", "ten", "-1", "1" + "0" * 30])
def test_bad_limit_is_400_naming_it(sqlite_api: Api, limit: str) -> None:
    response = sqlite_api.client.get(
        "/v1/audit", params={"limit": limit}, headers=sqlite_api.headers("procurement")
    )
    assert response.status_code == 400, response.text
    assert "limit" in response.text


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_needs_the_procurement_role(sqlite_api: Api, fmt: str) -> None:
    get = sqlite_api.client.get
    params = {"format": fmt}
    assert get("/v1/audit", params=params).status_code == 401
    assert (
        get("/v1/audit", params=params, headers={"Authorization": "Bearer sg_x"}).status_code == 401
    )
    assert get("/v1/audit", params=params, headers=sqlite_api.headers("ci")).status_code == 403
    for role in ("procurement", "admin"):
        assert get("/v1/audit", params=params, headers=sqlite_api.headers(role)).status_code == 200


def test_the_index_probes_narrow_pages_without_changing_them(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probes' plain path is the page query bounded by the cursor alone: every filter,
    walked in pages of 2, lists the same decisions both ways."""
    write(
        api,
        *(
            record(
                f"{('dep', 'pool')[n % 2]}-{n % 3}",
                kind=("DeploymentManifest", "HardwareManifest")[n % 2],
                verdict=("rejected", "supported", "experimental")[n % 3],
                at=AT + timedelta(minutes=(7 * n) % 11),
                rules=[("port.production", "deny")] if n % 4 == 0 else [],
                matrix_version=("2026.10.1", "2026.11.1")[n >= 8],
            )
            for n in range(16)
        ),
    )
    filters: list[dict[str, Any]] = [
        {"name": "dep-0"},
        {"name": "pool-1", "kind": "HardwareManifest"},
        {"verdict": "rejected"},
        {"rule": "port.production"},
        {"matrix_version": "2026.10.1"},
        {"matrix_version": "2026.10.1", "verdict": "supported"},
        {"since": format_time(AT + timedelta(minutes=4)), "rule": "port.production"},
        {"until": format_time(AT + timedelta(minutes=3)), "name": "dep-2"},
    ]

    def walk(params: dict[str, Any]) -> list[str]:
        found: list[str] = []
        cursor = None
        while True:
            page = audit(api, limit=2, **params, **({"cursor": cursor} if cursor else {}))
            found += [item["id"] for item in page["items"]]
            cursor = page["next_cursor"]
            if cursor is None:
                return found

    probed = [walk(params) for params in filters]
    monkeypatch.setattr(
        repository,
        "seq_range",
        lambda session, where, *, before_seq: (
            1,
            MAX_SEQ if before_seq is None else before_seq - 1,
        ),
    )
    assert [walk(params) for params in filters] == probed
    assert all(probed), probed
