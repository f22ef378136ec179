"""No import cycles between supportgate's domain packages.

The graph is read from the syntax trees, not from a running interpreter, so that every import
counts: at module level, inside functions (the lazy imports that keep `check` fast), and under
`if TYPE_CHECKING:`. A type-only import still couples two packages: each needs the other to be
read, renamed or moved, so a cycle through one is a cycle.

A node is a domain package (`supportgate/<package>/`) or a top-level module
(`supportgate/errors.py`); imports within one node are its own business. A cycle is fixed by
moving the shared piece down (a parameter type to http_paging, a query check to pagination),
never by hiding an import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

import supportgate

pytestmark = pytest.mark.fast

PACKAGE = Path(supportgate.__file__).parent

Graph = Mapping[str, frozenset[str]]


def _module_name(root: Path, path: Path) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The modules one import statement names (`from a import b` names `a` and `a.b`: `b`
    may be a module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        here = module.split(".")
        base = here if is_package else here[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    return [target, *(f"{target}.{alias.name}" for alias in node.names)]


def _unit(module: str, units: frozenset[str]) -> str | None:
    """The domain package or top-level module `module` belongs to (None: outside)."""
    parts = module.split(".")
    candidate = ".".join(parts[:2])
    return candidate if candidate in units else None


def import_graph(root: Path) -> dict[str, frozenset[str]]:
    """The package at `root` as a graph of its units: which unit imports which."""
    files = sorted(root.rglob("*.py"))
    units = frozenset(
        f"{root.name}.{path.relative_to(root).parts[0].removesuffix('.py')}"
        for path in files
        if path.relative_to(root).parts[0] != "__init__.py"
    )
    edges: dict[str, set[str]] = {unit: set() for unit in units}
    for path in files:
        module = _module_name(root, path)
        source = _unit(module, units)
        if source is None:  # the package's own __init__
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for name in _imported(node, module, path.name == "__init__.py"):
                    target = _unit(name, units)
                    if target is not None and target != source:
                        edges[source].add(target)
    return {unit: frozenset(targets) for unit, targets in edges.items()}


def find_cycle(graph: Graph) -> list[str] | None:
    """One cycle of `graph` as the path `[a, b, ..., a]`, or None when there is none."""
    done: set[str] = set()

    def visit(node: str, path: list[str], on_path: set[str]) -> list[str] | None:
        if node in on_path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        on_path.add(node)
        path.append(node)
        for target in sorted(graph.get(node, ())):
            found = visit(target, path, on_path)
            if found is not None:
                return found
        path.pop()
        on_path.discard(node)
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start, [], set())
        if found is not None:
            return found
    return None


def _write(root: Path, files: Iterable[tuple[str, str]]) -> None:
    for name, text in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_supportgate_has_no_import_cycle_between_its_domain_packages() -> None:
    graph = import_graph(PACKAGE)
    assert {"supportgate.errors", "supportgate.ledger", "supportgate.audit"} <= graph.keys()
    assert "supportgate.errors" in graph["supportgate.ledger"]  # the graph sees imports
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_a_cycle_through_a_function_or_a_type_only_import_is_found(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    _write(
        root,
        [
            ("__init__.py", ""),
            ("errors.py", "class ShopError(Exception): ...\n"),
            ("orders/__init__.py", ""),
            ("orders/services.py", "from shop.errors import ShopError\nfrom ..billing import x\n"),
            ("billing/__init__.py", "x = 1\n"),
            ("billing/invoice.py", "def f():\n    from shop.orders.services import g\n"),
            (
                "stock.py",
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import shop.tax\n",
            ),
            ("tax/__init__.py", "from . import rates\n"),
            ("tax/rates.py", "from shop import stock\n"),
        ],
    )
    graph = import_graph(root)
    assert graph == {
        "shop.errors": frozenset(),
        "shop.orders": {"shop.errors", "shop.billing"},
        "shop.billing": {"shop.orders"},
        "shop.stock": {"shop.tax"},
        "shop.tax": {"shop.stock"},
    }
    assert find_cycle(graph) == ["shop.billing", "shop.orders", "shop.billing"]
    assert find_cycle({**graph, "shop.billing": frozenset()}) == [
        "shop.stock",
        "shop.tax",
        "shop.stock",
    ]


def test_a_graph_without_a_cycle_passes(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    _write(
        root,
        [
            ("__init__.py", "from shop.orders import place\n"),  # the package itself is no node
            ("errors.py", ""),
            ("orders/__init__.py", "from shop import errors\n\ndef place(): ...\n"),
            ("orders/inner.py", "from . import place\nfrom .. import errors\n"),
        ],
    )
    graph = import_graph(root)
    assert graph == {"shop.errors": frozenset(), "shop.orders": {"shop.errors"}}
    assert find_cycle(graph) is None


# -- a package that stands alone -----------------------------------------------------------

STANDALONE = ("tlog",)
"""supportgate's packages that import nothing else of supportgate: libraries that could ship
on their own (supportgate/tlog, the transparency log)."""


def outside_imports(root: Path, package: str) -> list[str]:
    """`module -> imported` for each import, anywhere in `root/package`, of a module of `root`
    outside `package` (the root's own `__init__` included)."""
    inside = f"{root.name}.{package}"
    found = []
    for path in sorted((root / package).rglob("*.py")):
        module = _module_name(root, path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _imported(node, module, path.name == "__init__.py"):
                within = name == inside or name.startswith(f"{inside}.")
                if (name == root.name or name.startswith(f"{root.name}.")) and not within:
                    found.append(f"{module} -> {name}")
    return found


def test_the_standalone_packages_import_nothing_else_of_supportgate() -> None:
    for package in STANDALONE:
        assert (PACKAGE / package / "__init__.py").exists()
        assert outside_imports(PACKAGE, package) == []


def test_an_import_out_of_a_standalone_package_is_found(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    _write(
        root,
        [
            ("__init__.py", "VERSION = 1\n"),
            ("errors.py", ""),
            ("lib/__init__.py", "from .hashing import digest\n"),
            ("lib/hashing.py", "from shop.lib import errors\n\ndef digest(): ...\n"),
            ("lib/errors.py", "def f():\n    from .. import errors\n"),
            ("lib/version.py", "import shop\nfrom shop.lib.hashing import digest\n"),
        ],
    )
    assert outside_imports(root, "lib") == [
        "shop.lib.errors -> shop",
        "shop.lib.errors -> shop.errors",
        "shop.lib.version -> shop",
    ]
