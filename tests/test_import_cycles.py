"""Import circles inside each package of the library (issue 32, "circles 0").

The graph: one node per module of ``evidence_tool``; an edge A -> B when A imports B
(``import x.y``, ``from x import y``, ``from . import y``, ``from .y import z``; a
``from pkg import name`` counts as an edge to ``pkg.name`` when that is a module, else to
``pkg``).  Two graphs are built from the same parse:

- ``module``: the imports at module level, those under ``if TYPE_CHECKING:`` included
  (a type-only circle is still two modules that cannot be read one without the other);
- ``all``: those plus the imports inside functions (the lazy imports that start-up needs;
  a circle closed by one is still a circle in the design).

A circle is a strongly connected component of two or more modules, anywhere in the
library (between a package and its subpackages too; between top-level packages the
layering contracts already forbid them).  The library has none in either graph, and
the test keeps it so (``pytest -s`` prints what it found).
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "evidence_tool"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """(module-level import statements, function-level ones)."""
    top: list[ast.stmt] = []
    inner: list[ast.stmt] = []

    def visit(body: list[ast.stmt], nested: bool) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                (inner if nested else top).append(node)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                inner.extend(
                    n for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)
                )
            elif isinstance(node, ast.ClassDef):
                visit(node.body, nested)
            elif isinstance(node, ast.If | ast.Try | ast.With | ast.For | ast.While):
                for field in ("body", "orelse", "finalbody", "handlers"):
                    for child in getattr(node, field, []):
                        if isinstance(child, ast.ExceptHandler):
                            visit(child.body, nested)
                        else:
                            visit([child], nested)

    visit(tree.body, False)
    return top, inner


def _targets(name: str, node: ast.stmt, modules: dict[str, Path]) -> set[str]:
    """The library modules one import statement of module ``name`` loads."""
    out: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            out.add(alias.name)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            is_pkg = modules[name].name == "__init__.py"
            base = name.split(".")
            base = base if is_pkg else base[:-1]
            base = base[: len(base) - (node.level - 1)]
            origin = ".".join(base + ([node.module] if node.module else []))
        else:
            origin = node.module or ""
        for alias in node.names:
            sub = f"{origin}.{alias.name}"
            out.add(sub if sub in modules else origin)
    return {t for t in out if t in modules and t != name}


@functools.cache  # one parse of the library serves every test
def graphs() -> dict[str, dict[str, set[str]]]:
    modules = _modules()
    module_graph: dict[str, set[str]] = defaultdict(set)
    all_graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        top, inner = _imports(ast.parse(path.read_text(encoding="utf-8")))
        for node in top:
            module_graph[name] |= _targets(name, node, modules)
        all_graph[name] |= module_graph[name]
        for node in inner:
            all_graph[name] |= _targets(name, node, modules)
    return {"module": dict(module_graph), "all": dict(all_graph)}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan) of two or more modules, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def strong(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(out)


def _report() -> dict[str, list[list[str]]]:
    return {kind: circles(g) for kind, g in graphs().items()}


def test_the_detector_finds_a_circle_it_is_shown() -> None:
    graph = {
        "evidence_tool.archive.a": {"evidence_tool.archive.b"},
        "evidence_tool.archive.b": {"evidence_tool.archive.a", "evidence_tool.errors"},
        "evidence_tool.errors": set(),
    }
    assert circles(graph) == [["evidence_tool.archive.a", "evidence_tool.archive.b"]]
    # A package and its subpackage's module close a circle too.
    nested = {
        "evidence_tool.cli.output": {"evidence_tool.cli.reporters.json"},
        "evidence_tool.cli.reporters.json": {"evidence_tool.cli.output"},
    }
    assert len(circles(nested)) == 1
    assert circles({"evidence_tool.archive.a": {"evidence_tool.archive.b"}}) == []


def test_the_detector_reads_every_kind_of_import() -> None:
    g = graphs()
    assert len(g["all"]) > 100  # every module parsed
    # ``from . import x`` (relative), ``from pkg.mod import name`` and a function-level import.
    assert "evidence_tool.archive.local" in g["module"]["evidence_tool.archive"]
    assert g["module"]["evidence_tool.session"] >= {"evidence_tool.archive.local"}
    assert g["all"]["evidence_tool.session"] - g["module"]["evidence_tool.session"]


def test_no_circles_anywhere_in_the_library() -> None:
    found = _report()
    for kind, comps in found.items():
        print(f"{kind}-level circles: {len(comps)}")
        for comp in comps:
            print("  ", " <-> ".join(comp))
    assert found["module"] == [], found["module"]
    assert found["all"] == [], found["all"]
