"""Wiring you can see: only the composition roots know the Runtime.

supportgate/app.py gives each domain's routes, the API's guard, the console and the request
observer the services they use; supportgate/cli.py runs commands on the Runtime's parts. No
other module takes the whole Runtime, and nothing finds a service in an application's state
(`app.state`, `State({...})`): read from the syntax trees, type-only imports included.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterable
from pathlib import Path

import anyio
import pytest

import supportgate
from supportgate.threads import in_thread, thread_twin

pytestmark = pytest.mark.fast

PACKAGE = Path(supportgate.__file__).parent
COMPOSITION_ROOTS = frozenset(
    {"supportgate/app.py", "supportgate/cli.py", "supportgate/runtime.py"}
)
STATE_CACHES = frozenset({"supportgate/http_input.py"})
"""Modules that keep something of their own in an application's state: http_input its query
names per route, computed once (not a service)."""
THREAD_HOPS = frozenset({"supportgate/threads.py"})


def _sources() -> Iterable[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE.parent).as_posix(), ast.parse(path.read_text())


def _imported(tree: ast.Module) -> Iterable[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def knows_the_runtime(tree: ast.Module) -> bool:
    return "supportgate.runtime" in set(_imported(tree))


def _is_an_app(node: ast.expr) -> bool:
    """`app`, `x.app` or `scope["app"]`."""
    if isinstance(node, ast.Name | ast.Attribute):
        return (node.id if isinstance(node, ast.Name) else node.attr) == "app"
    return isinstance(node, ast.Subscript) and ast.literal_eval(node.slice) == "app"


def uses_application_state(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "state" and _is_an_app(node.value):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            if (func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)) == "State":
                return True
    return False


def hops_to_a_thread(tree: ast.Module) -> bool:
    """Runs something in a worker thread itself (anyio's run_sync, asyncio's to_thread)."""
    return any(
        isinstance(node, ast.Attribute) and node.attr in {"run_sync", "to_thread"}
        for node in ast.walk(tree)
    )


def test_only_the_composition_roots_know_the_runtime() -> None:
    knowing = {path for path, tree in _sources() if knows_the_runtime(tree)}
    assert knowing <= COMPOSITION_ROOTS, sorted(knowing - COMPOSITION_ROOTS)


def test_nothing_finds_a_service_in_an_applications_state() -> None:
    using = {path for path, tree in _sources() if uses_application_state(tree)}
    assert using <= STATE_CACHES, sorted(using - STATE_CACHES)


def test_a_thread_hop_is_written_beside_the_blocking_call() -> None:
    """Through supportgate.threads.in_thread, never at a call site."""
    hopping = {path for path, tree in _sources() if hops_to_a_thread(tree)}
    assert hopping <= THREAD_HOPS, sorted(hopping - THREAD_HOPS)


def test_the_checks_see_what_they_forbid() -> None:
    for source in (
        "from supportgate.runtime import Runtime",
        "if TYPE_CHECKING:\n    from supportgate.runtime import Runtime",
        "import supportgate.runtime",
    ):
        assert knows_the_runtime(ast.parse(source)), source
    for source in (
        "keys = connection.app.state.runtime.keys",
        "limits = app.state['runtime'].limits",
        'metrics = scope["app"].state.get("runtime")',
        "Litestar([], state=State({'logins': logins}))",
    ):
        assert uses_application_state(ast.parse(source)), source
    assert not uses_application_state(ast.parse("request.state['log'] = {}"))
    assert hops_to_a_thread(ast.parse("await anyio.to_thread.run_sync(keys.list_keys)"))
    assert hops_to_a_thread(ast.parse("await asyncio.to_thread(keys.list_keys)"))
    assert not hops_to_a_thread(ast.parse("await keys.list_keys_in_thread()"))
    assert not knows_the_runtime(ast.parse("from supportgate.runtime_parts import x"))


class _Pages:
    def page(self, number: int) -> tuple[int, int]:
        return number, threading.get_ident()

    page_in_thread = thread_twin(page)

    @in_thread
    def only_awaited(self) -> int:
        return threading.get_ident()


def test_a_twin_runs_the_instances_method_in_a_worker_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pages = _Pages()
    monkeypatch.setattr(pages, "page", lambda number: (number + 1, threading.get_ident()))

    async def awaited() -> tuple[int, tuple[int, int], int]:
        return threading.get_ident(), await pages.page_in_thread(1), await pages.only_awaited()

    loop, (number, twin), decorated = anyio.run(awaited)
    assert number == 2  # the stand-in ran, not the method the twin was declared beside
    assert loop not in {twin, decorated}
