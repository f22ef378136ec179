"""`supportgate check --server URL --token KEY`: the server evaluates, the CLI reports
(docs/ci.md: the dry run by default, `--record` on the default branch).

A recording post keeps its `Idempotency-Key` through retries, so a request the server did
record is not recorded twice. The key is `sha256(scope, body)`, the scope one CI job
execution (SUPPORTGATE_IDEMPOTENCY_SCOPE, else the GitHub run, attempt and job, else the
GitLab job, else random): a new run is judged afresh, so a manifest checked again after a
matrix change never gets a stale verdict. Failures are exit 2, never a verdict.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import msgspec

from supportgate import __version__
from supportgate.errors import PolicyEngineUnavailable, UsageError
from supportgate.manifests import DeploymentManifest
from supportgate.manifests.decision import Decision
from supportgate.policy.inputs import hardware_ref
from supportgate.reports import CheckedManifest

from .sourced import SourcedManifest
from .views import DryRunAnswer

TOKEN_ENV = "SUPPORTGATE_TOKEN"  # noqa: S105 - the variable's name, not a secret
SCOPE_ENV = "SUPPORTGATE_IDEMPOTENCY_SCOPE"
TIMEOUT_SECONDS = 30.0
EVALUATIONS_PATH = "v1/evaluations"
DRY_RUN_PATH = "v1/evaluations/dry-run"
DRY_RUN_LIMIT = 100  # supportgate.evaluations.dry_run.MAX_MANIFESTS
_CI_SCOPES: tuple[tuple[str, ...], ...] = (
    ("GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_JOB"),
    ("CI_JOB_ID",),
)
_REFUSED_KEY = frozenset({401, 403})
_RETRY_STATUS = frozenset({503})
_decision_decoder = msgspec.json.Decoder(Decision)
_dry_run_decoder = msgspec.json.Decoder(DryRunAnswer)


RETRY_ATTEMPTS = 3  # tries in all
RETRY_BACKOFF_S = 0.5
RETRY_MAX_DELAY_S = 10.0


def _retry_delay(attempt: int, retry_after: str | None) -> float:
    wait = RETRY_BACKOFF_S * float(2 ** (attempt - 1))
    if retry_after is not None and retry_after.strip().isdigit():
        wait = float(retry_after.strip())
    return min(wait, RETRY_MAX_DELAY_S)


@dataclass(frozen=True, slots=True)
class Server:
    url: str
    token: str
    idempotency_scope: str

    @classmethod
    def from_options(
        cls,
        url: str | None,
        token: str | None,
        environ: Mapping[str, str],
        *,
        in_process_only: Mapping[str, object] | None = None,
    ) -> Server:
        """`in_process_only`: the options that make no sense with a server, with their values."""
        if url is None:
            raise UsageError(
                "needs --server (without a server, check evaluates locally)", field="--token"
            )
        key = token or environ.get(TOKEN_ENV) or None
        if key is None:
            raise UsageError(
                f"needs an API key; give --token KEY or set {TOKEN_ENV}", field="--server"
            )
        for option, value in (in_process_only or {}).items():
            if value is not None:
                raise UsageError(
                    "applies to in-process checks only; the server evaluates "
                    "now, under its current matrix",
                    field=option,
                )
        return cls(url=_base_url(url), token=key, idempotency_scope=_scope(environ))


def check_remote(
    items: Sequence[SourcedManifest],
    server: Server,
    *,
    record: bool = False,
    transport: httpx.BaseTransport | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[CheckedManifest]:
    """In file order, each with its request's time (in a dry run, its share); a recording
    posts hardware first, so that deployments' `hardware.ref` resolve on the server."""
    order = sorted(
        range(len(items)), key=lambda i: isinstance(items[i].manifest, DeploymentManifest)
    )
    decisions: dict[int, tuple[Decision, float]] = {}
    headers = {
        "Authorization": f"Bearer {server.token}",
        "Accept": "application/json",
        "User-Agent": f"supportgate-check/{__version__}",
    }
    with httpx.Client(
        base_url=server.url, headers=headers, timeout=TIMEOUT_SECONDS, transport=transport
    ) as client:
        poster = _Poster(client, server.url, sleep)
        if record:
            for index in order:
                started = time.perf_counter()
                request = _recording(items[index], server.idempotency_scope)
                decision = poster.evaluate(items[index], request)
                decisions[index] = (decision, time.perf_counter() - started)
        else:
            for own, carried in dry_run_batches(items, order):
                started = time.perf_counter()
                answer = poster.dry_run([items[i] for i in [*own, *carried]])
                share = (time.perf_counter() - started) / len(own)
                decisions.update((i, (answer[n], share)) for n, i in enumerate(own))
    return [item.checked(*decisions[index]) for index, item in enumerate(items)]


def dry_run_batches(
    items: Sequence[SourcedManifest], order: Sequence[int], limit: int = DRY_RUN_LIMIT
) -> list[tuple[list[int], list[int]]]:
    """Each request's own manifests and the pools of earlier requests its deployments name."""
    pools = {
        item.manifest.metadata.name: index
        for index, item in enumerate(items)
        if not isinstance(item.manifest, DeploymentManifest)
    }
    batches: list[tuple[list[int], list[int]]] = []
    own: list[int] = []
    carried: list[int] = []
    for index in order:
        ref = hardware_ref(items[index].manifest)
        pool = pools.get(ref) if ref is not None else None
        needs = [pool] if pool is not None and pool not in own and pool not in carried else []
        if len(own) + len(carried) + 1 + len(needs) > limit:
            batches.append((own, carried))
            own, carried = [], []
            needs = [] if pool is None else [pool]
        own.append(index)
        carried += needs
    if own:
        batches.append((own, carried))
    return batches


@dataclass(frozen=True, slots=True)
class _Request:
    body: bytes
    idempotency_key: str | None
    path: str = EVALUATIONS_PATH


def _recording(item: SourcedManifest, scope: str) -> _Request:
    body = msgspec.json.encode(item.manifest)
    digest = hashlib.sha256(scope.encode() + b"\0" + body)
    return _Request(body, f"supportgate-check-{digest.hexdigest()}")


@dataclass(frozen=True, slots=True)
class _Poster:
    client: httpx.Client
    url: str
    sleep: Callable[[float], None]

    def evaluate(self, item: SourcedManifest, request: _Request) -> Decision:
        response = self._post(item, request)
        what = f"{item.source}: {item.manifest.kind} {item.manifest.metadata.name!r}"
        _refuse_4xx(response, f"{what}: the server refused it")
        if response.status_code not in (200, 201):
            raise PolicyEngineUnavailable(
                f"{what}: the server at {self.url} could not evaluate it "
                f"({response.status_code}): {_problem(response)}"
            )
        try:
            return _decision_decoder.decode(response.content)
        except msgspec.DecodeError as exc:
            raise PolicyEngineUnavailable(
                f"{what}: the answer from {self.url} is not a supportgate decision ({exc}); "
                "is --server the supportgate API?"
            ) from None

    def dry_run(self, items: Sequence[SourcedManifest]) -> list[Decision]:
        body = msgspec.json.encode({"manifests": [item.manifest for item in items]})
        request = _Request(body, idempotency_key=None, path=DRY_RUN_PATH)
        response = self._post(items[0], request)
        _refuse_4xx(response, f"{_named(items, response)}the server refused the dry run")
        if response.status_code != 200:  # noqa: PLR2004 - the dry run's answer
            raise PolicyEngineUnavailable(
                f"the server at {self.url} could not judge the manifests "
                f"({response.status_code}): {_problem(response)}"
            )
        try:
            decisions = _dry_run_decoder.decode(response.content).decisions
        except msgspec.DecodeError as exc:
            raise PolicyEngineUnavailable(
                f"the answer from {self.url} is not a supportgate dry run ({exc}); "
                "is --server the supportgate API (version 0.2 or later)?"
            ) from None
        if len(decisions) != len(items):
            raise PolicyEngineUnavailable(
                f"the server at {self.url} answered {len(decisions)} decisions "
                f"for {len(items)} manifests"
            )
        return list(decisions)

    def _post(self, item: SourcedManifest, request: _Request) -> httpx.Response:
        for attempt in range(1, RETRY_ATTEMPTS):
            try:
                response = self._send(request)
            except httpx.TransportError:
                self.sleep(_retry_delay(attempt, None))
                continue
            if response.status_code not in _RETRY_STATUS:
                return response
            self.sleep(_retry_delay(attempt, response.headers.get("retry-after")))
        try:
            return self._send(request)
        except httpx.TransportError as exc:
            raise PolicyEngineUnavailable(
                f"{item.source}: cannot reach the supportgate server at {self.url} "
                f"({type(exc).__name__}: {exc or 'no detail'}; {RETRY_ATTEMPTS} attempts)"
            ) from None

    def _send(self, request: _Request) -> httpx.Response:
        headers = {"Content-Type": "application/json"}
        if request.idempotency_key is not None:
            headers["Idempotency-Key"] = request.idempotency_key
        return self.client.post(request.path, content=request.body, headers=headers)


def _refuse_4xx(response: httpx.Response, refused: str) -> None:
    if response.status_code in _REFUSED_KEY:
        raise UsageError(f"the server refused the key: {_problem(response)}", field=None)
    if 400 <= response.status_code < 500:  # noqa: PLR2004 - the 4xx range
        raise UsageError(f"{refused} ({response.status_code}): {_problem(response)}", field=None)


_IN_BATCH = re.compile(r"\A\$\.manifests\[(?P<index>[0-9]+)\]")


def _named(items: Sequence[SourcedManifest], response: httpx.Response) -> str:
    """`<file>: <Kind> '<name>': ` of the manifest a dry run's error names by index."""
    try:
        field = response.json().get("field")
    except (ValueError, AttributeError):
        return ""
    found = _IN_BATCH.match(field) if isinstance(field, str) else None
    if found is None or int(found["index"]) >= len(items):
        return ""
    item = items[int(found["index"])]
    return f"{item.source}: {item.manifest.kind} {item.manifest.metadata.name!r}: "


def _problem(response: httpx.Response) -> str:
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or "detail" not in body:
        text = " ".join(response.text.split())
        return text[:300] or response.reason_phrase or "no detail"
    detail = str(body["detail"])
    field = body.get("field")
    return detail if not field or str(field) in detail else f"{detail} (field {field})"


def _base_url(url: str) -> str:
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise UsageError(f"not a URL: {url!r} ({exc})", field="--server") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise UsageError(f"expected an http:// or https:// URL, got {url!r}", field="--server")
    return url


def _scope(environ: Mapping[str, str]) -> str:
    explicit = environ.get(SCOPE_ENV)
    if explicit:
        return explicit
    for names in _CI_SCOPES:
        values = [environ.get(name) for name in names]
        if all(values):
            return ":".join([*names, *(v or "" for v in values)])
    return secrets.token_hex(16)
