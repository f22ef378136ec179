"""The error tree: every InputError names its field in an attribute, and the one HTTP mapping
(supportgate.http_errors) reads it, for our errors and for Litestar's own validation 400s."""

from __future__ import annotations

import ast
import contextlib
import importlib
import pkgutil
import re
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from litestar.exceptions import HTTPException, ValidationException
from structlog.testing import capture_logs

import supportgate
from supportgate import errors, tlog
from supportgate.console.rendering import EXCEPTION_HANDLERS as CONSOLE_HANDLERS
from supportgate.errors import DocumentTooLargeError, InputError, ManifestError, SupportgateError
from supportgate.http_errors import (
    EXCEPTION_HANDLERS,
    handle_input_error,
    handle_unavailable,
    handle_validation_error,
    log_unexpected,
)
from supportgate.tlog import TlogInputError

pytestmark = pytest.mark.fast

PACKAGE = Path(supportgate.__file__).parent
NO_REQUEST: Any = None  # the handlers do not look at the request


def answer(exc: InputError | TlogInputError) -> tuple[int | None, dict[str, Any]]:
    response = handle_input_error(NO_REQUEST, exc)
    return response.status_code, response.content


@pytest.mark.parametrize(
    ("error", "status", "field"),
    [
        (errors.UsageError("must be between 1 and 100", field="limit"), 400, "limit"),
        (errors.ConflictError("already used", field="Idempotency-Key"), 409, "Idempotency-Key"),
        (errors.UnsupportedMediaType("send JSON", field="Content-Type"), 415, "Content-Type"),
        (tlog.OutOfRange("not a leaf", field="leaf_index"), 400, "leaf_index"),
        (tlog.InvalidProof("does not lead to the root", field="hashes"), 400, "hashes"),
        (tlog.InvalidKey("not a key", field="verifier_key"), 400, "verifier_key"),
        (tlog.InvalidNote("no signature", field="note"), 400, "note"),
        (errors.NotFound("no tracked DeploymentManifest named 'a'", field="name"), 404, "name"),
        (errors.NotFound("no sweep 'x'", field="sweep_id"), 404, "sweep_id"),
        (ManifestError("expected an int", path="$.spec.nodes"), 400, "$.spec.nodes"),
        (DocumentTooLargeError("the document is 2 MiB"), 413, "$"),
    ],
)
def test_each_input_error_maps_to_its_status_with_its_field(
    error: InputError | TlogInputError, status: int, field: str
) -> None:
    assert error.field == field
    code, body = answer(error)
    assert (code, body["status_code"], body["field"]) == (status, status, field)
    assert body["detail"] == str(error)


def test_the_message_says_field_then_what_and_the_field_is_not_read_back_from_it() -> None:
    error = errors.UsageError("not a valid date-time: 'x'", field="since")
    assert (str(error), error.message) == ("since: not a valid date-time: 'x'", error.message)
    # a message that looks like `word: ...` does not make `word` the field
    unnamed = errors.UsageError("cannot read matrix file m.yaml: No such file", field=None)
    assert answer(unnamed)[1].get("field") is None
    assert str(unnamed) == "cannot read matrix file m.yaml: No such file"


def test_a_manifest_error_keeps_its_path_as_its_field_when_a_source_is_attached() -> None:
    error = ManifestError("expected a DNS label", path="$.metadata.name").with_source("a.yaml")
    assert (error.field, error.path, error.source) == (
        "$.metadata.name",
        "$.metadata.name",
        "a.yaml",
    )
    assert str(error) == "a.yaml: expected a DNS label - at `$.metadata.name`"
    assert answer(error)[1]["field"] == "$.metadata.name"


@pytest.mark.parametrize(
    ("problem", "field"),
    [
        ({"message": "Expected `int`, got `str`", "key": "limit", "source": "query"}, "limit"),
        ({"message": "Expected `str`, got `int`", "key": "url", "source": "body"}, "$.url"),
        ({"message": "Expected `str`", "key": "a[0].b", "source": "body"}, "$.a[0].b"),
        (
            {"message": "Object missing required field `url`", "key": "data", "source": "body"},
            "$.url",
        ),
        ({"message": "Object contains unknown field `x`", "key": "data", "source": "body"}, "$.x"),
        ({"message": "Expected `object`, got `array`", "key": "data", "source": "body"}, "$"),
        ({"message": "no key"}, None),
    ],
)
def test_litestar_validation_errors_name_the_field_in_the_same_body_shape(
    problem: dict[str, str], field: str | None
) -> None:
    exc = ValidationException(detail="Validation failed for GET /v1/audit", extra=[problem])
    response = handle_validation_error(NO_REQUEST, exc)
    body = response.content
    assert response.status_code == 400
    assert body.get("field") == field
    assert body["extra"] == [problem]
    assert body["detail"] == "Validation failed for GET /v1/audit"


def _input_error_names() -> frozenset[str]:
    """The names of every InputError subclass the package defines, the log's own included."""
    for module in pkgutil.walk_packages([str(PACKAGE)], prefix="supportgate."):
        importlib.import_module(module.name)
    found: set[str] = set()
    pending: list[type[Exception]] = [InputError, TlogInputError]
    while pending:
        kind = pending.pop()
        found.add(kind.__name__)
        pending.extend(kind.__subclasses__())
    return frozenset(found)


def _manifest_error_names() -> frozenset[str]:
    return frozenset(
        name
        for name in _input_error_names()
        if issubclass(_find(name), ManifestError)  # `path` defaults to `$`: the document
    )


def _find(name: str) -> type[Any]:
    pending: list[type[Any]] = [InputError, TlogInputError]
    while pending:
        kind = pending.pop()
        if kind.__name__ == name:
            return kind
        pending.extend(kind.__subclasses__())
    raise LookupError(name)


def test_every_input_error_raised_in_the_package_is_given_its_field() -> None:
    """mypy already refuses an InputError without `field=` (it has no default); this also
    catches a raiser that still writes the field into the message (`"limit: ..."`) as the
    mapping used to read it, which would now say it twice."""
    names = _input_error_names()
    documents = _manifest_error_names()
    missing, doubled, seen = [], [], 0
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in names:
                continue
            seen += 1
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
            keywords = {keyword.arg for keyword in node.keywords}
            if node.func.id not in documents and "field" not in keywords:
                missing.append(where)
            first = _leading_text(node.args[0]) if node.args else ""
            prefix = first.partition(": ")[0]
            if prefix and prefix == _field_text(node) and " " not in prefix:
                doubled.append(where)
    assert (missing, doubled) == ([], [])
    assert seen > 100  # the scan found the raisers (about 120 today)
    assert {"UsageError", "NotFound", "CannotReplay", "InvalidNote"} <= names


def _leading_text(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        return _leading_text(node.values[0])
    return ""


def _field_text(call: ast.Call) -> str | None:
    for keyword in call.keywords:
        if keyword.arg in ("field", "path") and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    return None


def test_the_logs_errors_are_its_own_and_the_database_node_stores_is_both() -> None:
    """supportgate.tlog imports nothing of supportgate, so its errors are not SupportgateErrors
    (the mappings name them); the database's node store raises one that is both."""
    assert not (PACKAGE / "ledger" / "errors.py").exists()
    for kind in (tlog.OutOfRange, tlog.InvalidProof, tlog.InvalidKey, tlog.InvalidNote):
        assert issubclass(kind, tlog.TlogInputError)
        assert not issubclass(kind, errors.SupportgateError)
    assert issubclass(errors.NodeStoreError, errors.DatabaseError)
    assert issubclass(errors.NodeStoreError, tlog.NodeStoreError)


@pytest.mark.parametrize("handlers", [EXCEPTION_HANDLERS, CONSOLE_HANDLERS])
def test_the_api_and_the_console_answer_the_logs_errors_as_they_answer_ours(
    handlers: dict[Any, Any],
) -> None:
    """As Litestar picks a handler: the first class of the error's MRO that has one."""

    def handler(kind: type[Exception]) -> Any:
        return next(handlers[base] for base in kind.__mro__ if base in handlers)

    assert handler(tlog.InvalidNote) is handler(errors.UsageError)
    assert handler(tlog.NodeStoreError) is handler(errors.DatabaseError)
    assert handler(errors.NodeStoreError) is handler(errors.DatabaseError)


@pytest.mark.parametrize(
    "error",
    [
        tlog.NodeStoreError("node (level 0, index 3) is not stored"),
        errors.NodeStoreError("node (level 0, index 3) is not stored"),
    ],
)
def test_a_node_store_that_lacks_a_node_is_a_503_that_says_so(error: Exception) -> None:
    assert isinstance(error, tlog.NodeStoreError)
    response = handle_unavailable(NO_REQUEST, error)
    assert response.status_code == 503
    assert response.content["detail"].startswith("node (level 0, index 3) is not stored; ")


_ROOT = re.compile(r"^(?:supportgate\.tlog\.)?(?P<name>\w+)(?: |$)")
_DRAWN = re.compile(r"^(?P<indent>[│ ]*)[├└]── (?P<name>\S+)")


def _drawn_trees() -> dict[str, set[str]]:
    """Each class the docstring of supportgate.errors draws -> the classes drawn above it (a
    group in parentheses stands for the root it hangs from; a name may be drawn twice)."""
    parents: dict[str, set[str]] = {}
    above: list[str] = []
    for line in (errors.__doc__ or "").splitlines():
        drawn, root = _DRAWN.match(line), _ROOT.match(line)
        if drawn is None:
            if root is not None and root["name"].endswith("Error"):
                above = [root["name"]]
            continue
        name = drawn["name"]
        del above[len(drawn["indent"]) // 4 + 1 :]
        if not name.startswith("("):
            parents.setdefault(name, set()).add(above[-1])
        above.append(above[-1] if name.startswith("(") else name)
    return parents


def _defined_exceptions() -> list[type[Exception]]:
    """Every Exception class supportgate defines (an exit, SystemExit, is no error)."""
    for module in pkgutil.walk_packages([str(PACKAGE)], prefix="supportgate."):
        importlib.import_module(module.name)
    found: list[type[Exception]] = []
    pending: list[type[Exception]] = [Exception]
    while pending:
        kind = pending.pop()
        pending.extend(kind.__subclasses__())
        if kind.__module__.startswith("supportgate.") and kind not in found:
            found.append(kind)
    return found


def test_every_error_class_of_the_package_is_in_a_drawn_tree_under_its_parent() -> None:
    drawn = _drawn_trees()
    roots = (SupportgateError, tlog.TlogError)
    outside, undrawn, misplaced = [], [], []
    for kind in _defined_exceptions():
        where = f"{kind.__module__}.{kind.__qualname__}"
        if issubclass(kind, HTTPException) or kind in roots:  # Litestar's own; the roots
            continue
        if not issubclass(kind, roots):
            outside.append(where)
        elif kind.__name__ not in drawn:
            undrawn.append(where)
        elif kind.__mro__[1].__name__ not in drawn[kind.__name__]:
            misplaced.append(f"{where} drawn under {drawn[kind.__name__]}")
    assert (outside, undrawn, misplaced) == ([], [], [])
    assert len(drawn) > 35  # the parser read the drawing
    assert drawn["NodeStoreError"] == {"DatabaseError", "TlogError"}


def _complete(hook: Coroutine[Any, Any, None]) -> None:
    """Runs a hook that awaits nothing to its end, with no event loop: the test may run in a
    worker thread whose loop another test left running."""
    with contextlib.suppress(StopIteration):
        hook.send(None)
        raise AssertionError("the hook awaited something")


def test_only_the_errors_a_handler_answers_are_kept_out_of_the_unexpected_log() -> None:
    """An error meant to be caught where raised that escapes to a 500 is logged with its
    traceback, like any other surprise; the answered ones are not."""
    scope: Any = {"path": "/v1/x"}
    escaped = errors.SupportgateError("caught nowhere")
    answered = (errors.NotFound("no such", field="name"), tlog.InvalidNote("bad", field="note"))
    with capture_logs() as logs:
        for exc in (escaped, *answered):
            _complete(log_unexpected(exc, scope))
    assert [(event["event"], event["exc_info"]) for event in logs] == [
        ("unexpected_error", escaped)
    ]


def test_not_found_is_the_one_404_and_the_mapping_imports_no_domain_module() -> None:
    source = (PACKAGE / "http_errors.py").read_text(encoding="utf-8")
    imported = {
        node.module
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("supportgate")
    }
    assert imported <= {
        "supportgate.db.engine",
        "supportgate.errors",
        "supportgate.logging",
        "supportgate.manifests.decode",
        "supportgate.tlog",
    }
    assert not hasattr(importlib.import_module("supportgate.evaluations.tracking"), "NotTracked")
