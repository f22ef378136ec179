"""Bad input, on SQLite and PostgreSQL: every kind the contract names is a 4xx whose JSON body
names the failing field in `field` (Litestar's own validation errors too), and
writes no row; nothing a client sends is a 5xx; bodies over 1 MiB are 413."""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import text

from ..api import Api
from ..api_support import deployment, hardware, named, post, rows
from ..examples import EXAMPLES

YAML = "application/yaml"
MIB = 1024 * 1024
HW_YAML = (EXAMPLES / "hw-h100-pool-a.yaml").read_text()


def _changed(
    change: Callable[[dict[str, Any]], object], doc: dict[str, Any] | None = None
) -> bytes:
    doc = doc if doc is not None else hardware("pool-a")
    change(doc)
    return json.dumps(doc).encode()


def _yaml(old: str, new: str) -> bytes:
    assert old in HW_YAML
    return HW_YAML.replace(old, new).encode()


def _evidence_at(at: str) -> bytes:
    doc = deployment("trial")
    doc["spec"]["evidence"] = {"build": {"status": "passed", "at": at}}
    return json.dumps(doc).encode()


def _nested_block(levels: int) -> bytes:
    return "".join("  " * level + "a:\n" for level in range(levels)).encode()


# id -> (Content-Type, body, status, field named in the answer)
BAD_BODIES: dict[str, tuple[str, bytes, int, str]] = {
    "json-syntax": ("application/json", b'{"apiVersion": "supportgate/v1", ', 400, "$"),
    "json-empty": ("application/json", b"", 400, "$"),
    "json-not-an-object": ("application/json", b"[]", 400, "$"),
    "json-nan": ("application/json", b'{"a": NaN}', 400, "$"),
    "json-duplicate-key": (
        "application/json",
        b'{"apiVersion": "supportgate/v1", "kind": "HardwareManifest", "kind": "x"}',
        400,
        "$.kind",
    ),
    "json-deep-nesting": ("application/json", b"[" * 100_000, 400, "$"),
    "json-deep-objects": ("application/json", b'{"a":' * 100_000, 400, "$"),
    "json-integer-of-5000-digits": (
        "application/json",
        json.dumps(hardware()).replace('"nodes": 8', '"nodes": ' + "9" * 5000).encode(),
        400,
        "$.spec.nodes",
    ),
    "json-version-as-number": (
        "application/json",
        _changed(lambda d: d["spec"]["toolkit"].update(version=12.8)),
        400,
        "$.spec.toolkit.version",
    ),
    "not-utf8": ("application/json", b"\xff\xfe{}", 400, "$"),
    "nul-character": (
        "application/json",
        _changed(lambda d: d["metadata"].update(owner="a\x00b")),
        400,
        "$.metadata.owner",
    ),
    "nul-in-a-key": (
        "application/json",
        _changed(lambda d: d["metadata"].update(labels={"a\x00": "b"})),
        400,
        "$.metadata.labels",
    ),
    "lone-surrogate": (
        "application/json",
        json.dumps(hardware()).replace('"infra"', '"\\ud800"').encode(),
        400,
        "$.metadata.owner",
    ),
    "yaml-syntax": (YAML, b"kind: [unclosed\n", 400, "$.kind[1]"),
    "yaml-empty": (YAML, b"", 400, "$"),
    "yaml-two-documents": (YAML, (HW_YAML + "---\n" + HW_YAML).encode(), 400, "$"),
    "yaml-python-tag": (YAML, b"!!python/object/apply:os.system ['true']\n", 400, "$"),
    "yaml-core-tag": (YAML, _yaml("nodes: 8", "nodes: !!int 8"), 400, "$.spec.nodes"),
    "yaml-custom-tag": (YAML, _yaml('driver: "', 'driver: !env "'), 400, "$.spec.driver"),
    "yaml-anchor": (YAML, _yaml("toolkit: {", "toolkit: &tk {"), 400, "$.spec.toolkit"),
    "yaml-alias": (YAML, b"spec: *undefined\n", 400, "$.spec"),
    "yaml-merge-key": (YAML, b"a: &a {x: 1}\nb:\n  <<: *a\n", 400, "$.a"),
    "yaml-billion-laughs": (
        YAML,
        b'a: &a ["lol","lol"]\nb: &b [*a,*a]\nc: &c [*b,*b]\nd: [*c,*c]\n',
        400,
        "$.a",
    ),
    "yaml-duplicate-key": (
        YAML,
        _yaml("  nodes: 8", "  nodes: 8\n  nodes: 9"),
        400,
        "$.spec.nodes",
    ),
    "yaml-deep-flow-nesting": (YAML, b"[" * 100_000, 400, "$"),
    "yaml-deep-block-nesting": (YAML, _nested_block(200), 400, "$" + ".a" * 64),
    "yaml-complex-key": (YAML, b"? [a]\n: b\n", 400, "$"),
    "yaml-1.1-boolean": (YAML, _yaml("nodes: 8", "nodes: yes"), 400, "$.spec.nodes"),
    "yaml-unquoted-date": (
        YAML,
        _yaml('driver: "570.86.15"', "driver: 2026-01-01"),
        400,
        "$.spec.driver",
    ),
    "unknown-field": (
        "application/json",
        _changed(lambda d: d["spec"].update(gpus=8)),
        400,
        "$.spec.gpus",
    ),
    "unknown-top-level-field": (
        "application/json",
        _changed(lambda d: d.update(status={})),
        400,
        "$.status",
    ),
    "wrong-type": (
        "application/json",
        _changed(lambda d: d["spec"].update(nodes="eight")),
        400,
        "$.spec.nodes",
    ),
    "boolean-for-integer": (
        "application/json",
        _changed(lambda d: d["spec"].update(nodes=True)),
        400,
        "$.spec.nodes",
    ),
    "out-of-range": (
        "application/json",
        _changed(lambda d: d["spec"]["accelerator"].update(per_node=0)),
        400,
        "$.spec.accelerator.per_node",
    ),
    "bad-dns-name": (
        "application/json",
        _changed(lambda d: d["metadata"].update(name="H100_Pool")),
        400,
        "$.metadata.name",
    ),
    "dns-name-of-64": (
        "application/json",
        _changed(lambda d: d["metadata"].update(name="a" * 64)),
        400,
        "$.metadata.name",
    ),
    "missing-name": (
        "application/json",
        _changed(lambda d: d["metadata"].pop("name")),
        400,
        "$.metadata.name",
    ),
    "bad-version": (
        "application/json",
        _changed(lambda d: d["spec"].update(python="3.x")),
        400,
        "$.spec.python",
    ),
    "bad-nvidia-arch": (
        "application/json",
        _changed(lambda d: d["spec"]["accelerator"].update(arch="hopper")),
        400,
        "$.spec.accelerator.arch",
    ),
    "unknown-kind": (
        "application/json",
        _changed(lambda d: d.update(kind="GpuManifest")),
        400,
        "$.kind",
    ),
    "unknown-api-version": (
        "application/json",
        _changed(lambda d: d.update(apiVersion="supportgate/v2")),
        400,
        "$.apiVersion",
    ),
    "bad-hardware-ref": (
        "application/json",
        json.dumps(deployment("trial", ref="Not_A_Label")).encode(),
        400,
        "$.spec.hardware.ref",
    ),
    "bad-time": ("application/json", _evidence_at("yesterday"), 400, "$.spec.evidence.build.at"),
    "time-without-zone": (
        "application/json",
        _evidence_at("2026-01-01T00:00:00"),
        400,
        "$.spec.evidence.build.at",
    ),
    "time-before-1678": (  # before int64 nanoseconds: the policies could not compare it
        "application/json",
        _evidence_at("1677-12-31T23:59:59Z"),
        400,
        "$.spec.evidence.build.at",
    ),
    "time-on-the-first-day-not-in-utc": (  # 1677-12-31T10:00:00Z
        "application/json",
        _evidence_at("1678-01-01T00:00:00+14:00"),
        400,
        "$.spec.evidence.build.at",
    ),
    "time-after-2261": (
        "application/json",
        _evidence_at("2262-01-01T00:00:00Z"),
        400,
        "$.spec.evidence.build.at",
    ),
    "yaml-integer-of-5000-digits": (
        YAML,
        _yaml("nodes: 8", "nodes: " + "9" * 5000),
        400,
        "$.spec.nodes",
    ),
    "yaml-hex-of-20000-digits": (
        YAML,
        _yaml("nodes: 8", "nodes: 0x" + "f" * 20_000),
        400,
        "$.spec.nodes",
    ),
    "integer-of-311-digits": (
        "application/json",
        _changed(lambda d: d["spec"].update(nodes=10**310)),
        400,
        "$.spec.nodes",
    ),
    "unsupported-content-type": ("text/plain", HW_YAML.encode(), 415, "Content-Type"),
    "form-content-type": ("application/x-www-form-urlencoded", b"a=b", 415, "Content-Type"),
}


def test_a_bad_body_is_a_4xx_naming_the_field_and_writes_nothing(api: Api) -> None:
    """One database for every case (a fresh one each would cost more than the cases)."""
    post(api, hardware("tracked"))
    before = rows(api)
    wrong: dict[str, Any] = {}
    for case, (content_type, body, status, field) in sorted(BAD_BODIES.items()):
        response = post(api, body, content_type=content_type, **{"Idempotency-Key": f"k-{case}"})
        answer = response.json()
        if (response.status_code, answer.get("field")) != (status, field) or "verdict" in answer:
            wrong[case] = (response.status_code, answer)
        elif answer["status_code"] != status or rows(api) != before:
            wrong[case] = ("wrote a row or misreported its status", answer)
    assert not wrong, json.dumps(wrong, indent=1, default=str)


LISTING_QUERIES = [
    ("limit=0", "limit"),
    ("limit=501", "limit"),
    ("limit=many", "limit"),
    ("limit=99999999999999999999999", "limit"),
    ("cursor=not-a-cursor", "cursor"),
    ("cursor=" + base64.urlsafe_b64encode(b'["a"]').decode(), "cursor"),
    ("cursor=" + base64.urlsafe_b64encode(b'["\\u0000", "x"]').decode(), "cursor"),
    ("kind=GpuManifest", "kind"),
    ("verdict=maybe", "verdict"),
    ("owner=a%00b", "owner"),
]
HISTORY_QUERIES = [
    ("limit=0", "limit"),
    ("cursor=%%%", "cursor"),
    ("cursor=" + base64.urlsafe_b64encode(b'["a", "b"]').decode(), "cursor"),
    ("cursor=" + base64.urlsafe_b64encode(b"[18446744073709551615]").decode(), "cursor"),
    ("cursor=" + base64.urlsafe_b64encode(b"[-9223372036854775809]").decode(), "cursor"),
]


def test_a_bad_query_is_400_naming_the_parameter(api: Api) -> None:
    post(api, hardware("pool-a"))
    paths = [("/v1/manifests", query) for query in LISTING_QUERIES] + [
        ("/v1/manifests/HardwareManifest/pool-a/history", query) for query in HISTORY_QUERIES
    ]
    for path, (query, field) in paths:
        response = api.client.get(f"{path}?{query}", headers=api.headers("procurement"))
        assert response.status_code == 400, (path, query, response.text)
        assert named(response.json()) == field, (path, query, response.text)


@pytest.mark.parametrize("path", ["/v1/manifests/HardwareManifest/a%00b", "/v1/manifests/a%00/b"])
def test_a_nul_in_a_path_is_400(api: Api, path: str) -> None:
    for method in ("GET", "DELETE"):
        response = api.client.request(method, path, headers=api.headers("admin"))
        assert response.status_code == 400, response.text


def test_an_unquoted_yaml_version_is_text_as_written(api: Api) -> None:
    body = _yaml('python: "3.12.3"', "python: 3.10").replace(b'version: "12.8"', b"version: 12.80")
    response = post(api, body, content_type=YAML)
    assert response.status_code == 201, response.text
    tracked = api.client.get(
        "/v1/manifests/HardwareManifest/h100-pool-a", headers=api.headers("procurement")
    ).json()
    assert tracked["content"]["spec"]["python"] == "3.10"
    assert tracked["content"]["spec"]["toolkit"]["version"] == "12.80"
    # Read as 3.1 it would be outside the matrix's python range too; as 3.10 it is below it.
    assert "host.python" in {v["rule"] for v in response.json()["violations"]}


@pytest.mark.parametrize(
    "at",
    [
        "1678-01-01T00:00:00Z",
        "1678-01-02T00:00:00+14:00",  # 1678-01-01T10:00:00Z
        "2261-12-31T23:59:59Z",
        "2026-11-20T10:00:00.123456789+05:30",
    ],
)
def test_extreme_but_valid_times_are_decided(api: Api, at: str) -> None:
    assert post(api, hardware("pool-a")).status_code == 201  # so that the evidence is judged
    response = post(api, _evidence_at(at))
    assert response.status_code == 201, response.text
    stale = "spec.evidence.build" in {
        v["path"] for v in response.json()["violations"] if v["rule"] == "evidence.stale"
    }
    assert stale == at.startswith("1678"), response.text


def test_a_body_of_exactly_1_mib_is_read_and_one_byte_more_is_413(api: Api) -> None:
    document = json.dumps(hardware("pool-a")).encode()
    padded = document + b" " * (MIB - len(document))
    assert len(padded) == MIB
    accepted = post(api, padded)
    assert accepted.status_code == 201, accepted.text
    before = rows(api)
    refused = post(api, padded + b" ")
    assert refused.status_code == 413, refused.text
    assert refused.json()["status_code"] == 413
    assert post(api, padded + b" " * MIB, content_type=YAML).status_code == 413
    assert rows(api) == before


def _mutations(seed: int, count: int) -> list[tuple[str, bytes]]:
    """Valid manifests, damaged at random: bytes flipped, cut, repeated, or spliced with text
    that parsers and databases find awkward."""
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    awkward = [
        *(b"\x00", b"\\u0000", b"\\ud800", b"\xff", b"\t", b"'", b'"', b"\r\n", "é".encode()),
        *(b"&a", b"*a", b"!!", b"- ", b": ", b"{", b"]", b"1e999", b"-0", b"9" * 30),
    ]
    sources = [
        ("application/json", json.dumps(hardware("pool-a")).encode()),
        ("application/json", json.dumps(deployment("trial")).encode()),
        (YAML, HW_YAML.encode()),
        (YAML, (EXAMPLES / "dep-b200-online.yaml").read_bytes()),
    ]
    cases: list[tuple[str, bytes]] = []
    for _ in range(count):
        content_type, body = rng.choice(sources)
        data = bytearray(body)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(data))
            action = rng.randrange(4)
            if action == 0:
                data[at] = rng.randrange(256)
            elif action == 1:
                del data[at : at + rng.randint(1, 20)]
            elif action == 2:
                data[at:at] = rng.choice(awkward)
            else:
                data[at:at] = data[at : at + rng.randint(1, 40)] * rng.randint(2, 5)
        cases.append((content_type, bytes(data)))
    return cases


def _swept(api: Api, after: int) -> int:
    """Decisions after the first `after` that sweeps recorded (a pool's deployments)."""
    with api.runtime.db.connect() as connection:
        return int(
            connection.execute(
                text("SELECT count(*) FROM decisions WHERE seq > :after AND cause <> 'submission'"),
                {"after": after},
            ).scalar_one()
        )


def test_no_input_is_a_server_error(api: Api) -> None:
    for content_type, body in _mutations(seed=20261130, count=150):
        assert api.runtime.reevaluation.wait_idle()  # a pool posted re-evaluates its deployments
        before = rows(api)
        response = post(api, body, content_type=content_type)
        assert response.status_code < 500, (body, response.text)
        if response.status_code == 201:
            assert api.runtime.reevaluation.wait_idle()
            assert rows(api).decisions == before.decisions + 1 + _swept(api, before.decisions)
        else:
            assert 400 <= response.status_code < 500, response.text
            assert rows(api) == before
            assert "detail" in response.json()
