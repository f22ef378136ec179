"""The in-process engine: regorus (PyPI `gordon-to-regorus`), compiled once per thread and matrix
(about 5 ms): an Engine is "unsendable", PyO3 panics when any other thread uses or drops it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

import regorus

from supportgate.errors import PolicyEngineUnavailable, PolicyEvaluationError
from supportgate.manifests.decision import PolicyResult

from .bundle import PolicyBundle
from .engine import RESULT_RULE, LoadedMatrix, sparing_org, to_result
from .inputs import PolicyInput
from .rego_parse import regorus_message

MAX_CACHED_ENGINES = 8

# Per thread: (policy revision, matrix key) -> compiled engine. Module-level and never
# replaced, because an engine may only be dropped by its own thread as well: the cache is
# emptied when its thread ends, or one entry at a time by eviction, in that thread.
_THREAD_ENGINES = threading.local()


class EmbeddedEngine:
    name = "embedded"

    def __init__(self, bundle: PolicyBundle) -> None:
        self._bundle = bundle

    @property
    def policy_revision(self) -> str:
        return self._bundle.revision

    def evaluate(self, matrix: LoadedMatrix, policy_input: PolicyInput) -> PolicyResult:
        return _evaluate_one(self._engine(matrix), policy_input)

    def evaluate_many(
        self, matrix: LoadedMatrix, inputs: Sequence[PolicyInput]
    ) -> list[PolicyResult]:
        return [self.evaluate(matrix, item) for item in inputs]

    def check_ready(self) -> None:
        self._compile(None)

    def use(self, bundle: PolicyBundle, served_revision: str | None) -> None:
        """The thread caches are keyed by revision: the old engines age out of them."""
        self._bundle = bundle

    def close(self) -> None:
        """Nothing to release: compiled engines belong to their threads (see above)."""

    def _engine(self, matrix: LoadedMatrix) -> Any:
        engines: dict[tuple[str, str], Any] | None = getattr(_THREAD_ENGINES, "engines", None)
        if engines is None:
            engines = _THREAD_ENGINES.engines = {}
        key = (self._bundle.revision, matrix.key)
        engine = engines.get(key)
        if engine is None:
            if len(engines) >= MAX_CACHED_ENGINES:
                engines.pop(next(iter(engines)))
            engine = engines[key] = self._compile(matrix)
        return engine

    def _compile(self, matrix: LoadedMatrix | None) -> Any:
        return compile_engine(self._bundle.modules, matrix.data_json() if matrix else None)


def compile_engine(modules: Iterable[tuple[str, str]], data_json: str | None) -> Any:
    engine = regorus.Engine()
    try:
        for name, text in modules:
            engine.add_policy(name, text)
        if data_json is not None:
            engine.add_data_json(data_json)
    except RuntimeError as exc:
        raise PolicyEngineUnavailable(
            f"the policies do not compile: {regorus_message(exc)}"
        ) from exc
    return engine


def evaluate_raw(engine: Any, canonical_input: bytes) -> str:
    """The decision document as regorus's JSON text."""
    try:
        engine.set_input_json(canonical_input.decode())
        return str(engine.eval_rule_as_json(RESULT_RULE))
    except RuntimeError as exc:
        raise PolicyEvaluationError(f"policy evaluation failed: {regorus_message(exc)}") from exc


def _evaluate_one(engine: Any, policy_input: PolicyInput) -> PolicyResult:
    return sparing_org(lambda item: to_result(evaluate_raw(engine, item.canonical)), policy_input)
