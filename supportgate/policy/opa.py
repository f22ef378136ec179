"""The OPA engine: an Open Policy Agent server reached through opa-python-client.

The engine uploads the policy modules and the matrix, records what it uploaded under
`data.supportgate_meta` (policy revision and matrix key) and evaluates through the data API.
Before evaluating under a matrix it checks that record, so an OPA that restarted or was
changed by someone else is loaded again. Every failure to get a decision from OPA becomes
PolicyEngineUnavailable: never a verdict.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import requests
from opa_client import OpaClient
from opa_client.errors import (
    ConnectionsError,
    PolicyNotFoundError,
    QueryExecuteError,
    RegoParseError,
    TypeException,
)

from supportgate.errors import PolicyEngineUnavailable, UsageError
from supportgate.manifests.decision import PolicyResult

from .bundle import PolicyBundle
from .engine import LoadedMatrix, convert_result
from .inputs import PolicyInput

DECISION_PACKAGE = "supportgate.decision"
META_PATH = "supportgate_meta"
DEFAULT_TIMEOUT_S = 30.0

_TRANSPORT_ERRORS = (
    requests.RequestException,
    ConnectionsError,
    PolicyNotFoundError,
    QueryExecuteError,
    RegoParseError,
    TypeException,
    ValueError,
)


class OpaEngine:
    name = "opa"

    def __init__(
        self, url: str, bundle: PolicyBundle, *, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise UsageError(
                f"must be http(s)://host:port, got {url!r}", field="SUPPORTGATE_OPA_URL"
            )
        self.url = url
        self._bundle = bundle
        self._client = OpaClient(
            host=parts.hostname,
            port=parts.port or (443 if parts.scheme == "https" else 80),
            ssl=parts.scheme == "https",
            timeout=timeout_s,
            retries=0,
        )
        self._lock = threading.Lock()
        self._loaded_key: str | None = None

    @property
    def policy_revision(self) -> str:
        return self._bundle.revision

    def evaluate(self, matrix: LoadedMatrix, policy_input: PolicyInput) -> PolicyResult:
        self._ensure_loaded(matrix)
        answer = self._query("result", dict(policy_input.document))
        return convert_result(answer)

    def evaluate_batch(
        self, matrix: LoadedMatrix, inputs: Sequence[PolicyInput]
    ) -> list[PolicyResult]:
        if not inputs:
            return []
        self._ensure_loaded(matrix)
        answer = self._query("batch", {"items": [dict(item.document) for item in inputs]})
        if not isinstance(answer, list) or len(answer) != len(inputs):
            raise PolicyEngineUnavailable("OPA answered a batch of the wrong shape")
        return [convert_result(item) for item in answer]

    def check_ready(self) -> None:
        try:
            self._client.check_connection()
        except _TRANSPORT_ERRORS as exc:
            raise PolicyEngineUnavailable(f"OPA at {self.url} is unreachable: {exc}") from exc

    def close(self) -> None:
        self._client.close_connection()

    def _ensure_loaded(self, matrix: LoadedMatrix) -> None:
        expected = {"policy_revision": self._bundle.revision, "matrix_key": matrix.key}
        with self._lock:
            if self._loaded_key == matrix.key and self._meta() == expected:
                return
            try:
                self._upload_modules()
                self._client.update_or_create_data(dict(matrix.document), "matrix")
                self._client.update_or_create_data(expected, META_PATH)
            except _TRANSPORT_ERRORS as exc:
                self._loaded_key = None
                raise PolicyEngineUnavailable(
                    f"OPA at {self.url} refused the policies: {exc}"
                ) from exc
            self._loaded_key = matrix.key

    def _upload_modules(self) -> None:
        """PUT every module; OPA compiles each against those already there, so a module whose
        imports are not uploaded yet is retried after the others, until no upload succeeds."""
        pending = list(self._bundle.modules)
        while pending:
            refused: list[tuple[str, str]] = []
            errors: list[RegoParseError] = []
            for name, text in pending:
                try:
                    self._client.update_policy_from_string(
                        text, _policy_id(name), rego_compat=False
                    )
                except RegoParseError as exc:
                    refused.append((name, text))
                    errors.append(exc)
            if len(refused) == len(pending):
                raise errors[-1]
            pending = refused

    def _meta(self) -> Any:
        try:
            return self._client.get_data(META_PATH).get("result")
        except PolicyNotFoundError:
            return None
        except _TRANSPORT_ERRORS as exc:
            raise PolicyEngineUnavailable(f"OPA at {self.url} is unreachable: {exc}") from exc

    def _query(self, rule: str, input_data: dict[str, Any]) -> Any:
        try:
            response = self._client.query_rule(input_data, DECISION_PACKAGE, rule)
        except _TRANSPORT_ERRORS as exc:
            raise PolicyEngineUnavailable(f"OPA at {self.url} did not answer: {exc}") from exc
        if "result" not in response:
            raise PolicyEngineUnavailable(f"OPA at {self.url} has no {DECISION_PACKAGE}.{rule}")
        return response["result"]


def _policy_id(name: str) -> str:
    return name.removesuffix(".rego")
