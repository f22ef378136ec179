"""The OPA engine: one POST per decision to the signed bundle's entry rule, with the revision
expected and the matrix; no answer is a 503, never a verdict. Each call has one deadline, and no
lock is held across it (docs/opa.md, "Calls to OPA")."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec

from supportgate.config import DEFAULT_OPA_TIMEOUT_SECONDS
from supportgate.errors import PolicyEngineUnavailable, PolicyEvaluationError, UsageError
from supportgate.manifests.decision import PolicyResult

from .bundle import PolicyBundle
from .engine import LoadedMatrix, sparing_org, to_result
from .inputs import PolicyInput
from .opa_bundle import BUNDLE_NAME
from .opa_bundle import KEY_SETTING as KEY_FIELD

GATE_PATH = "/v1/data/supportgate/gate/result"
REVISION_PATH = f"/v1/data/system/bundles/{BUNDLE_NAME}/manifest/revision"
CONNECT_TIMEOUT_S = 1.0

_encode = msgspec.json.Encoder().encode


class OpaEngine:
    name = "opa"

    def __init__(
        self,
        url: str,
        policies: PolicyBundle,
        *,
        bundle_revision: str,
        token: str,
        timeout_s: float = DEFAULT_OPA_TIMEOUT_SECONDS,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise UsageError(
                f"must be http(s)://host:port, got {url!r}", field="SUPPORTGATE_OPA_URL"
            )
        self.url = url.rstrip("/")
        self._policies = policies
        self._bundle_revision = bundle_revision
        self._timeout_s = timeout_s
        connect = min(CONNECT_TIMEOUT_S, timeout_s)
        self._client = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            timeout=httpx.Timeout(timeout_s, connect=connect),
        )

    @property
    def policy_revision(self) -> str:
        return self._policies.revision

    def evaluate(self, matrix: LoadedMatrix, policy_input: PolicyInput) -> PolicyResult:
        def evaluate(item: PolicyInput) -> PolicyResult:
            return to_result(self._gate(matrix, item.canonical))

        return sparing_org(evaluate, policy_input)

    def evaluate_many(
        self, matrix: LoadedMatrix, inputs: Sequence[PolicyInput]
    ) -> list[PolicyResult]:
        return [self.evaluate(matrix, item) for item in inputs]

    def use(self, bundle: PolicyBundle, served_revision: str | None) -> None:
        """OPA answers 503 until its next poll downloads the new revision."""
        if served_revision is None:
            raise UsageError("OPA pulls only a bundle the service signs", field=KEY_FIELD)
        self._policies, self._bundle_revision = bundle, served_revision

    def check_ready(self) -> None:
        held = self.held_revision()
        if held != self._bundle_revision:
            raise PolicyEngineUnavailable(self._mismatch(held))

    def close(self) -> None:
        self._client.close()

    def _gate(self, matrix: LoadedMatrix, item: bytes) -> Any:
        response = self._call("POST", GATE_PATH, self._gate_body(matrix, item))
        if "result" in response:
            return response["result"]
        # Undefined: OPA lacks the expected revision, or the policies decided nothing.
        held = self.held_revision()
        if held != self._bundle_revision:
            raise PolicyEngineUnavailable(self._mismatch(held))
        return None  # to_result says the policy left the decision undefined

    def _gate_body(self, matrix: LoadedMatrix, item: bytes) -> bytes:
        return (
            b'{"input":{"revision":'
            + _encode(self._bundle_revision)
            + b',"matrix":'
            + matrix.canonical
            + b',"prepared":'
            + matrix.prepared
            + b',"item":'
            + item
            + b"}}"
        )

    def held_revision(self) -> Any:
        return self._call("GET", REVISION_PATH).get("result")

    def _mismatch(self, held: Any) -> str:
        if held is None:
            return f"OPA at {self.url} holds no {BUNDLE_NAME} bundle (not pulled or not verified)"
        return (
            f"OPA at {self.url} holds bundle revision {held!r}, not the service's "
            f"{self._bundle_revision!r}"
        )

    def _call(self, method: str, path: str, body: bytes | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + self._timeout_s
        try:
            with self._client.stream(method, path, content=body) as response:
                chunks: list[bytes] = []
                for chunk in response.iter_bytes():
                    if time.monotonic() > deadline:
                        raise httpx.ReadTimeout("the call's deadline passed")
                    chunks.append(chunk)
        except httpx.TimeoutException as exc:
            raise PolicyEngineUnavailable(
                f"OPA at {self.url} did not answer within {self._timeout_s:g} s"
            ) from exc
        except httpx.HTTPError as exc:
            raise PolicyEngineUnavailable(f"OPA at {self.url} is unreachable: {exc}") from exc
        if response.status_code == httpx.codes.UNAUTHORIZED:
            raise PolicyEngineUnavailable(
                f"OPA at {self.url} refused the service's token (SUPPORTGATE_OPA_TOKEN)"
            )
        if response.status_code == httpx.codes.INTERNAL_SERVER_ERROR:  # the policies failed
            raise PolicyEvaluationError(
                f"OPA at {self.url} could not evaluate: {b''.join(chunks)[:500]!r}"
            )
        if response.status_code != httpx.codes.OK:
            raise PolicyEngineUnavailable(
                f"OPA at {self.url} answered {response.status_code} to {method} {path}"
            )
        try:
            answer = msgspec.json.decode(b"".join(chunks))
        except msgspec.DecodeError as exc:
            raise PolicyEngineUnavailable(f"OPA at {self.url} answered no JSON") from exc
        if not isinstance(answer, dict):
            raise PolicyEngineUnavailable(f"OPA at {self.url} answered no JSON object")
        return answer
