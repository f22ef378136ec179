"""The fleet at a date (GET /v1/manifests?as_of=T, GET /v1/reports/fleet), on SQLite and
PostgreSQL: a history of posts, re-posts, a sweep after a matrix change, a waiver, an untrack
and a re-track is built on a FakeClock, and the fleet at many instants (each event's time, a
microsecond before it, between events) is checked against an oracle that replays the same
events in plain Python."""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest

from ..api import Api
from ..api_support import deployment, hardware, named, post
from ..clock import FakeClock
from ..matrix.test_matrix import publish, with_sm90

Key = tuple[str, str]
HW, DEP = "HardwareManifest", "DeploymentManifest"
STEP = timedelta(seconds=60)


def rfc3339(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@dataclass
class Oracle:
    """The events of the history, in the order the service recorded them, replayed: at T a
    manifest's decision is its last one recorded at or before T, unless an untracking of it
    came after that."""

    events: list[tuple[datetime, str, Key, dict[str, Any] | None, str | None]] = field(
        default_factory=list
    )
    matrices: list[tuple[datetime, str]] = field(default_factory=list)
    owners: dict[Key, str | None] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)

    def fleet(self, at: datetime) -> dict[Key, tuple[dict[str, Any], str | None]]:
        tracked: dict[Key, tuple[dict[str, Any], str | None]] = {}
        for moment, event, key, decision, owner in self.events:
            if moment > at:
                break
            if event == "untracked":
                tracked.pop(key, None)
            else:
                assert decision is not None
                tracked[key] = (decision, owner)
        return tracked

    def matrix_version(self, at: datetime) -> str | None:
        found = [version for moment, version in self.matrices if moment <= at]
        return found[-1] if found else None

    def policy_revision(self, at: datetime) -> str | None:
        found = [d for moment, _, _, d, _ in self.events if d is not None and moment <= at]
        return found[-1]["policy_revision"] if found else None

    def report(self, at: datetime) -> dict[str, Any]:
        fleet = self.fleet(at)

        def counts(members: list[dict[str, Any]]) -> dict[str, int]:
            verdicts = Counter(d["verdict"] for d in members)
            return {
                "manifests": len(members),
                **{v: verdicts[v] for v in ("supported", "experimental", "rejected")},
            }

        rules: dict[str, list[dict[str, Any]]] = {}
        owners: dict[str | None, list[dict[str, Any]]] = {}
        for decision, owner in fleet.values():
            for rule in {v["rule"] for v in decision["violations"]}:
                rules.setdefault(rule, []).append(decision)
            owners.setdefault(owner, []).append(decision)
        return {
            "as_of": at,
            "matrix_version": self.matrix_version(at),
            "policy_revision": self.policy_revision(at),
            "by_verdict": counts([d for d, _ in fleet.values()]),
            "by_rule": sorted(
                ({"rule": rule, **counts(members)} for rule, members in rules.items()),
                key=lambda row: (-row["manifests"], row["rule"]),
            ),
            "by_owner": sorted(
                ({"owner": owner, **counts(members)} for owner, members in owners.items()),
                key=lambda row: (row["owner"] is None, -row["manifests"], row["owner"] or ""),
            ),
        }


@dataclass
class History:
    api: Api
    clock: FakeClock
    oracle: Oracle = field(default_factory=Oracle)
    times: list[datetime] = field(default_factory=list)

    def step(self) -> datetime:
        """Move the clock to the next event's time."""
        self.clock.advance(STEP)
        self.times.append(self.clock.now())
        return self.clock.now()

    def collect(self) -> None:
        """The decisions recorded since the last look (a post's, and those of the sweeps it
        started), all at the clock's time, in log order, as oracle events."""
        assert self.api.runtime.reevaluation.wait_idle()
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            params: dict[str, Any] = {"limit": 500, **({"cursor": cursor} if cursor else {})}
            page = self.get("/v1/audit", **params)
            items += page["items"]
            if not (cursor := page["next_cursor"]):
                break
        for decision in sorted(items, key=lambda d: d["leaf_index"]):
            if decision["id"] in self.oracle.seen:
                continue
            self.oracle.seen.add(decision["id"])
            key = (decision["manifest"]["kind"], decision["manifest"]["name"])
            self.oracle.events.append(
                (self.clock.now(), "decision", key, decision, self.oracle.owners[key])
            )

    def post(self, doc: dict[str, Any], owner: str | None, role: str = "ci") -> None:
        self.step()
        doc["metadata"]["owner"] = owner
        if owner is None:
            del doc["metadata"]["owner"]
        self.oracle.owners[(doc["kind"], doc["metadata"]["name"])] = owner
        response = post(self.api, doc, role=role)
        assert response.status_code == 201, response.text
        self.collect()

    def untrack(self, key: Key) -> None:
        self.step()
        response = self.api.client.delete(
            f"/v1/manifests/{key[0]}/{key[1]}", headers=self.api.headers("admin")
        )
        assert response.status_code in (200, 204), response.text
        self.oracle.events.append((self.clock.now(), "untracked", key, None, None))
        self.collect()

    def get(self, path: str, role: str = "procurement", **params: Any) -> Any:
        response = self.api.client.get(path, params=params, headers=self.api.headers(role))
        assert response.status_code == 200, (path, params, response.text)
        return response.json()


def build_history(api: Api, clock: FakeClock) -> History:
    history = History(api, clock)
    history.oracle.matrices.append((clock.now(), "2026.11.1"))  # the default, at the start
    history.post(hardware("pool-a"), "infra")
    history.post(hardware("pool-b"), "infra")
    history.post(deployment("trial-a", ref="pool-a"), "ml")
    history.post(deployment("prod", ref="pool-a", stage="production"), "ml")
    history.post(hardware("pool-a"), "platform", "admin")  # re-posted, another owner
    history.step()  # a waiver: the prod deployment changes through the decision it causes
    waiver = {
        "rule": "port.production",
        "kind": DEP,
        "name": "prod",
        "justification": "H100 production pilot approved by the platform board (PLAT-12)",
        "expires_at": rfc3339(clock.now() + timedelta(days=30)),
    }
    response = api.client.post("/v1/waivers", json=waiver, headers=api.headers("admin"))
    assert response.status_code == 201, response.text
    history.collect()
    history.step()  # a new matrix: the sweep's decisions are current from its time on
    assert publish(api, with_sm90("2026.12.1")).status_code == 201
    history.oracle.matrices.append((clock.now(), "2026.12.1"))
    history.collect()
    history.untrack((HW, "pool-b"))
    history.post(deployment("trial-a", ref="pool-a"), "ml")  # the same content again
    history.post(hardware("pool-b", nodes=4), None)  # tracked again, now without an owner
    history.untrack((DEP, "trial-a"))
    clock.advance(STEP)  # every instant asked about is in the past
    return history


def instants(history: History) -> list[datetime]:
    first = history.times[0]
    found = [first - STEP, first - timedelta(microseconds=1)]
    for moment in history.times:
        found += [moment - timedelta(microseconds=1), moment, moment + STEP / 2]
    return found


def fleet_items(history: History, at: datetime, **params: Any) -> list[dict[str, Any]]:
    """Every item of GET /v1/manifests?as_of=at, following the cursor in pages of 2."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        paging: dict[str, str] = {"cursor": cursor} if cursor else {}
        page = history.get("/v1/manifests", as_of=rfc3339(at), limit=2, **params, **paging)
        assert page["as_of"] == rfc3339(at).replace("+00:00", "Z")
        items += page["items"]
        if not (cursor := page["next_cursor"]):
            return items


@pytest.fixture
def history(clocked_api: Api, clock: FakeClock) -> History:
    return build_history(clocked_api, clock)


def test_the_fleet_at_every_instant_is_what_the_events_replayed_say(history: History) -> None:
    oracle = history.oracle
    # the history holds what it is meant to test: a sweep, a waiver's decision, re-tracking
    causes = Counter(d["cause"] for _, event, _, d, _ in oracle.events if d)
    assert causes["matrix"] >= 2, causes
    assert causes["waiver"] >= 1, causes
    checked_verdicts = set()
    for at in instants(history):
        expected = oracle.fleet(at)
        items = fleet_items(history, at)
        got = {
            (item["kind"], item["name"]): (item["latest_decision"]["id"], item["owner"])
            for item in items
        }
        assert [(i["kind"], i["name"]) for i in items] == sorted(got), "(kind, name) order"
        assert got == {key: (d["id"], owner) for key, (d, owner) in expected.items()}, at
        for item in items:
            decision, _ = expected[(item["kind"], item["name"])]
            assert item["latest_decision"] == decision
            assert item["content"]["metadata"]["name"] == item["name"]
            checked_verdicts.add(decision["verdict"])

        report = history.get("/v1/reports/fleet", as_of=rfc3339(at))
        want = oracle.report(at)
        assert report == {**want, "as_of": rfc3339(at)}, at
    assert checked_verdicts == {"supported", "experimental", "rejected"}


def test_filters_and_now(history: History) -> None:
    at = history.times[4]  # pool-a re-posted by platform; prod rejected, no waiver yet
    rejected = fleet_items(history, at, verdict="rejected")
    assert [(i["name"], i["latest_decision"]["verdict"]) for i in rejected] == [
        ("prod", "rejected")
    ]
    owned = fleet_items(history, at, owner="platform")
    assert [(i["kind"], i["name"]) for i in owned] == [(HW, "pool-a")]
    pools = fleet_items(history, at, kind=HW)
    assert [i["name"] for i in pools] == ["pool-a", "pool-b"]

    now = history.clock.now()
    assert history.get("/v1/reports/fleet") == {
        **history.oracle.report(now),
        "as_of": rfc3339(now),
    }
    # without as_of: the tracked-manifest table, which the log leads to, says the same
    tracked = history.get("/v1/manifests", limit=500)["items"]
    assert {(i["kind"], i["name"]): i["latest_decision"]["id"] for i in tracked} == {
        (i["kind"], i["name"]): i["latest_decision"]["id"] for i in fleet_items(history, now)
    }


def test_the_report_as_csv(history: History) -> None:
    at = history.times[6]  # after the sweep of the new matrix
    report = history.get("/v1/reports/fleet", as_of=rfc3339(at))
    response = history.api.client.get(
        "/v1/reports/fleet",
        params={"as_of": rfc3339(at), "format": "csv"},
        headers=history.api.headers("procurement"),
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    assert response.text.count("\r\n") == response.text.count("\n")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    context = {
        "as_of": rfc3339(at),
        "matrix_version": report["matrix_version"],
        "policy_revision": report["policy_revision"],
    }

    def numbers(group: dict[str, Any]) -> dict[str, str]:
        return {k: str(group[k]) for k in ("manifests", "supported", "experimental", "rejected")}

    want = [{"group": "fleet", "key": "", **numbers(report["by_verdict"]), **context}]
    want += [
        {"group": "rule", "key": r["rule"], **numbers(r), **context} for r in report["by_rule"]
    ]
    want += [
        {"group": "owner", "key": o["owner"] or "", **numbers(o), **context}
        for o in report["by_owner"]
    ]
    assert rows == want
    assert report["matrix_version"] == "2026.12.1"


def test_procurement_reads_the_fleet_and_ci_does_not(clocked_api: Api) -> None:
    api = clocked_api
    asked: tuple[tuple[str, dict[str, str]], ...] = (
        ("/v1/reports/fleet", {}),
        ("/v1/manifests", {"as_of": "2026-01-01T00:00:00Z"}),
    )
    for path, params in asked:
        assert api.client.get(path, params=params).status_code == 401
        assert api.client.get(path, params=params, headers=api.headers("ci")).status_code == 403
        for role in ("procurement", "admin"):
            response = api.client.get(path, params=params, headers=api.headers(role))
            assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "as_of",
    [
        "yesterday",
        "2026-10-01",  # a date alone: which instant of it?
        "2026-10-01T00:00:00",  # no time zone
        "2026-13-01T00:00:00Z",
        "",
    ],
)
@pytest.mark.parametrize("path", ["/v1/reports/fleet", "/v1/manifests"])
def test_a_bad_as_of_is_400_naming_it(shared_api: Api, path: str, as_of: str) -> None:
    response = shared_api.client.get(
        path, params={"as_of": as_of}, headers=shared_api.headers("procurement")
    )
    assert response.status_code == 400, response.text
    assert named(response.json()) == "as_of"


def test_as_of_after_now_is_400(clocked_api: Api, clock: FakeClock) -> None:
    later = rfc3339(clock.now() + timedelta(seconds=1))
    for path in ("/v1/reports/fleet", "/v1/manifests"):
        response = clocked_api.client.get(
            path, params={"as_of": later}, headers=clocked_api.headers("procurement")
        )
        assert response.status_code == 400, response.text
        assert named(response.json()) == "as_of"
        assert "after now" in response.json()["detail"]
    now = clocked_api.client.get(
        "/v1/reports/fleet",
        params={"as_of": rfc3339(clock.now())},
        headers=clocked_api.headers("procurement"),
    )
    assert now.status_code == 200, now.text


def test_a_bad_format_is_400_naming_it(clocked_api: Api) -> None:
    response = clocked_api.client.get(
        "/v1/reports/fleet", params={"format": "xml"}, headers=clocked_api.headers("procurement")
    )
    assert response.status_code == 400
    assert named(response.json()) == "format"
